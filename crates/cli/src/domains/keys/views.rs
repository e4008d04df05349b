//! What `hsmc keys …` shows.

use std::path::PathBuf;

use console::keys::DestroyResult;
use console::sign::{CertificateView, MinisignPublicKey, OpenPgpCertificate, SshPublicKey};
use console::views::{ExportedPublicKey, GeneratedKey, KeyDetails};
use console::{ApiError, ApiResult};
use hsm::keys::ObjectSummary;
use hsm::pubkey::PublicKeyFormat;
use serde::Serialize;

use crate::render::{Page, Render};
use console::text;

/// `keys ls`: the objects visible (public ones only without a login).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct KeyList(pub Vec<ObjectSummary>);

impl Render for KeyList {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        if self.0.is_empty() {
            writeln!(page, "No objects visible. Log in (HSMC_PIN) to see private objects, or generate a key with `hsmc keys gen`.");
            return Ok(());
        }
        let rows: Vec<Vec<String>> = self.0.iter().map(key_row).collect();
        page.table(
            &[
                "HANDLE",
                "CLASS",
                "ALGORITHM",
                "LABEL",
                "ID",
                "FLAGS",
                "UID",
            ],
            &rows,
        );
        Ok(())
    }
}

fn key_row(o: &ObjectSummary) -> Vec<String> {
    let mut flags = Vec::new();
    if o.token {
        flags.push("token");
    }
    if o.sensitive == Some(true) {
        flags.push("sensitive");
    }
    if o.extractable == Some(false) {
        flags.push("non-extractable");
    }
    if o.always_authenticate == Some(true) {
        flags.push("PIN per signature");
    }
    if o.duplicate_label {
        flags.push("DUPLICATE LABEL");
    }
    vec![
        o.handle.to_string(),
        o.class.to_lowercase().replace('_', " "),
        o.algorithm.clone(),
        o.label.clone(),
        o.id_hex.clone(),
        flags.join(","),
        o.unique_id
            .as_deref()
            .map(|u| format!("uid:{u}"))
            .unwrap_or_default(),
    ]
}

/// `keys show`: every attribute of one key.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct KeyAttributes(pub KeyDetails);

impl Render for KeyAttributes {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let d = &self.0;
        for a in &d.attributes {
            let v = match a.status {
                hsm::keys::AttrStatus::Value => a.value.clone().unwrap_or_default(),
                other => format!("({other})"),
            };
            writeln!(page, "{:<28} {v}", a.attribute);
        }
        if let Some(pk) = &d.public_key {
            writeln!(page, "{:<28} {}", "fingerprint", pk.fingerprint);
        }
        Ok(())
    }
}

/// `keys set`: what changed, and what moved with a new ID.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct AttributesSet(pub console::attributes::AttributesChanged);

impl Render for AttributesSet {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let r = &self.0;
        writeln!(
            page,
            "changed {} on '{}' id:{}",
            r.changed.join(", "),
            r.summary.label,
            r.summary.id_hex
        );
        for m in &r.moved {
            writeln!(page, "  moved with it: {m}");
        }
        Ok(())
    }
}

/// `keys wrap`.
#[derive(Debug, Serialize)]
pub struct Wrapped {
    #[serde(flatten)]
    pub file: console::backup::WrapFile,
    pub path: String,
}

impl Render for Wrapped {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let f = &self.file;
        writeln!(
            page,
            "wrapped '{}' with {} under '{}' ({}) to {}",
            f.label, f.mechanism, f.wrapping_key_label, f.wrapping_key_fingerprint, self.path
        );
        if let Some(k) = &f.kcv {
            writeln!(page, "KCV {k}");
        }
        Ok(())
    }
}

/// `keys unwrap`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct UnwrappedView(pub console::backup::Unwrapped);

impl Render for UnwrappedView {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let s = &self.0.summary;
        writeln!(
            page,
            "unwrapped '{}' id:{} ({})",
            s.label, s.id_hex, s.algorithm
        );
        if let Some(k) = &self.0.kcv {
            writeln!(page, "KCV {k}");
        }
        if self.0.public_handle.is_some() {
            writeln!(page, "its public key is restored beside it");
        }
        Ok(())
    }
}

/// `keys kcv`.
#[derive(Debug, Serialize)]
pub struct Kcv {
    pub label: String,
    pub kcv: String,
}

impl Render for Kcv {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        writeln!(page, "{}  {}", self.kcv, self.label);
        Ok(())
    }
}

/// `keys gen`: the key made, and whether it outlives `hsmc`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct NewKey {
    pub key: GeneratedKey,
    #[serde(skip)]
    pub token_object: bool,
}

impl Render for NewKey {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let r = &self.key;
        writeln!(
            page,
            "generated {} '{}' id:{} in {} ms",
            r.algorithm, r.label, r.id_hex, r.elapsed_ms
        );
        if let Some(pk) = &r.public_key {
            writeln!(page, "public key {} ({} bytes)", pk.fingerprint, pk.raw_len);
        }
        if r.extractable {
            if r.wrap_with_trusted == Some(true) {
                writeln!(
                    page,
                    "extractable for backup: it leaves the token only wrapped under a key the security officer marked trusted (CKA_WRAP_WITH_TRUSTED)"
                );
            } else {
                writeln!(
                    page,
                    "extractable for backup: the token has no CKA_WRAP_WITH_TRUSTED, so it could be wrapped under any wrapping key"
                );
            }
        }
        if !self.token_object {
            writeln!(
                page,
                "note: a session object, gone when hsmc exits; add --persistent to keep it"
            );
        }
        Ok(())
    }
}

/// `keys rm`: what was deleted and what was not (exit 1 if anything was not).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Deleted(pub DestroyResult);

impl Render for Deleted {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        writeln!(page, "deleted {} object(s)", self.0.destroyed.len());
        for f in &self.0.failed {
            writeln!(
                page,
                "not deleted: {} ({}): {}",
                f.label, f.handle, f.error.message
            );
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        if self.0.failed.is_empty() {
            0
        } else {
            1
        }
    }
}

/// `keys cert`: a certificate or a signing request, shown or written to a file.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum CertificateOutput {
    /// A self-signed certificate, not written to a file: its details, or its PEM as text.
    Issued(CertificateView),
    /// A certificate signing request, not written to a file.
    Request { pem: String },
    /// Either, written to `path`.
    Written {
        /// `certificate` or `csr`.
        kind: &'static str,
        path: PathBuf,
    },
}

impl Render for CertificateOutput {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        match self {
            CertificateOutput::Issued(v) => page.verbatim(&v.pem),
            CertificateOutput::Request { pem } => page.verbatim(pem),
            CertificateOutput::Written { path, .. } => writeln!(page, "wrote {}", path.display()),
        }
        Ok(())
    }

    fn json(&self, page: &mut Page) {
        match self {
            CertificateOutput::Issued(v) => page.document(v),
            _ => page.sorted_document(self),
        }
    }
}

/// `keys export-pub`: a public key shown, or written to a file.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum PublicKeyOutput {
    /// The key itself (text only for PEM; DER and raw are base64 in JSON).
    Shown(ExportedPublicKey),
    /// A DER or raw key whose text form is its bytes: standard output is a pipe or a file
    /// (as `openssl … -outform DER` and `gpg --output -` write), not a terminal.
    Bytes(ExportedPublicKey),
    Written {
        fingerprint: String,
        format: PublicKeyFormat,
        path: PathBuf,
    },
}

impl Render for PublicKeyOutput {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        match self {
            PublicKeyOutput::Shown(e) => match &e.text {
                Some(t) => page.verbatim(t),
                None => {
                    return Err(ApiError::invalid(
                        text!("errors.der_raw_keys_binary_give", "DER and raw keys are binary; give --out FILE or redirect standard output (> key.der, | …)."),
                    ))
                }
            },
            PublicKeyOutput::Bytes(e) => {
                page.binary(&console::keys::base64_decode(e.base64.as_deref().unwrap_or(""))?)
            }
            PublicKeyOutput::Written {
                fingerprint, path, ..
            } => writeln!(page, "wrote {} ({fingerprint})", path.display()),
        }
        Ok(())
    }

    fn json(&self, page: &mut Page) {
        match self {
            PublicKeyOutput::Shown(e) | PublicKeyOutput::Bytes(e) => page.document(e),
            PublicKeyOutput::Written { .. } => page.sorted_document(self),
        }
    }
}

/// `keys openpgp`: the armored certificate, or where it was written and its fingerprint.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum OpenPgpOutput {
    Shown(OpenPgpCertificate),
    Written {
        #[serde(flatten)]
        certificate: OpenPgpCertificate,
        path: PathBuf,
    },
}

impl Render for OpenPgpOutput {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        match self {
            OpenPgpOutput::Shown(c) => page.verbatim(&c.armored),
            OpenPgpOutput::Written {
                certificate: c,
                path,
            } => {
                writeln!(page, "wrote {}", path.display());
                writeln!(page, "fingerprint {}", c.fingerprint);
                writeln!(page, "user ID     {}", c.user_id);
                writeln!(page, "created     {}", c.created);
                if c.creation_time_stored {
                    writeln!(
                        page,
                        "note: the key's OpenPGP creation time is now fixed on the token"
                    );
                }
            }
        }
        Ok(())
    }
}

/// `keys minisign-pub`: the `minisign.pub`, or where it was written.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum MinisignOutput {
    Shown(MinisignPublicKey),
    Written { key_id: String, path: PathBuf },
}

impl Render for MinisignOutput {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        match self {
            MinisignOutput::Shown(k) => page.verbatim(&k.text),
            MinisignOutput::Written { key_id, path } => {
                writeln!(page, "wrote {} (minisign key {key_id})", path.display())
            }
        }
        Ok(())
    }
}

/// `keys ssh-pub`: the public key line (or the allowed_signers line), or where it was
/// written.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum SshOutput {
    Shown(SshPublicKey),
    Written {
        #[serde(flatten)]
        key: SshPublicKey,
        path: PathBuf,
    },
}

impl Render for SshOutput {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        match self {
            SshOutput::Shown(k) => {
                writeln!(page, "{}", k.allowed_signers.as_deref().unwrap_or(&k.line))
            }
            SshOutput::Written { key, path } => {
                writeln!(page, "wrote {} ({})", path.display(), key.fingerprint)
            }
        }
        Ok(())
    }
}

/// `keys succession`: the statement written and who signed it.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Succession(pub console::sign::SuccessionMade);

impl Render for Succession {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let m = &self.0;
        let s = &m.statement;
        writeln!(page, "wrote {}", m.statement_path);
        for (k, sig) in [&s.old, &s.new].into_iter().zip(&m.signatures) {
            writeln!(
                page,
                "  signed by {} ({}, {}): {sig}",
                k.label, k.algorithm, k.fingerprint
            );
        }
        match &s.transition_ends {
            Some(until) => writeln!(
                page,
                "  the new key signs from {}; both sign until {until}",
                s.new_key_signs_from
            ),
            None => writeln!(page, "  the new key signs from {}", s.new_key_signs_from),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use console::keys::DestroyFailure;
    use console::views::PublicKeyView;
    use console::ErrorCode;

    use super::*;
    use crate::render::testing::{json, text};

    #[test]
    fn a_partial_deletion_lists_what_stayed_and_exits_1() {
        let all = Deleted(DestroyResult {
            destroyed: vec![7, 8],
            failed: Vec::new(),
        });
        assert_eq!(text(&all).0, "deleted 2 object(s)\n");
        assert_eq!(all.exit_code(), 0);

        let partial = Deleted(DestroyResult {
            destroyed: vec![7],
            failed: vec![DestroyFailure {
                handle: 8,
                label: "pub".into(),
                error: ApiError::invalid("read-only"),
            }],
        });
        assert_eq!(
            text(&partial).0,
            "deleted 1 object(s)\nnot deleted: pub (8): read-only\n"
        );
        assert_eq!(partial.exit_code(), 1);
    }

    #[test]
    fn a_written_certificate_or_key_is_a_sorted_document() {
        let cert = CertificateOutput::Written {
            kind: "csr",
            path: "/tmp/req.pem".into(),
        };
        assert_eq!(
            json(&cert).0,
            "{\n  \"kind\": \"csr\",\n  \"path\": \"/tmp/req.pem\"\n}\n"
        );
        assert_eq!(text(&cert).0, "wrote /tmp/req.pem\n");

        let key = PublicKeyOutput::Written {
            fingerprint: "SHA256:ab".into(),
            format: PublicKeyFormat::Der,
            path: "/tmp/k.der".into(),
        };
        assert_eq!(
            json(&key).0,
            "{\n  \"fingerprint\": \"SHA256:ab\",\n  \"format\": \"der\",\n  \"path\": \"/tmp/k.der\"\n}\n"
        );
        assert_eq!(text(&key).0, "wrote /tmp/k.der (SHA256:ab)\n");
    }

    #[test]
    fn a_shown_request_is_its_pem_as_text_and_in_a_document() {
        let pem = "-----BEGIN CERTIFICATE REQUEST-----\nAA==\n-----END CERTIFICATE REQUEST-----\n";
        let csr = CertificateOutput::Request { pem: pem.into() };
        assert_eq!(text(&csr).0, pem);
        assert_eq!(
            json(&csr).0,
            format!(
                "{{\n  \"pem\": {}\n}}\n",
                serde_json::to_string(pem).unwrap()
            )
        );
    }

    #[test]
    fn a_binary_public_key_has_no_text_form() {
        let der = PublicKeyOutput::Shown(ExportedPublicKey {
            format: PublicKeyFormat::Der,
            file_name: "k.pub.der".into(),
            text: None,
            base64: Some("AA==".into()),
            fingerprint: "SHA256:ab".into(),
        });
        let mut page = Page::default();
        let e = der.text(&mut page).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.contains("give --out FILE"));
        assert!(json(&der).0.contains("\"base64\": \"AA==\""));
        // Into a pipe or a file: the bytes themselves; JSON is the same document.
        let PublicKeyOutput::Shown(e) = der else {
            unreachable!()
        };
        let bytes = PublicKeyOutput::Bytes(e);
        let mut page = Page::default();
        bytes.text(&mut page).unwrap();
        assert_eq!(page.into_bytes(), vec![0u8]);
        assert!(json(&bytes).0.contains("\"base64\": \"AA==\""));
    }

    #[test]
    fn a_session_key_says_it_ends_with_hsmc_in_text_only() {
        let key = |token_object| NewKey {
            key: GeneratedKey {
                private_handle: 2,
                public_handle: Some(1),
                label: "k".into(),
                id_hex: "0a".into(),
                algorithm: "EC P-256".into(),
                public_key: Some(PublicKeyView {
                    algorithm: "ECDSA P-256".into(),
                    fingerprint: "SHA256:ab".into(),
                    pem: String::new(),
                    raw_len: 65,
                }),
                expected_public_key_len: Some(65),
                elapsed_ms: 3,
                extractable: false,
                wrap_with_trusted: None,
            },
            token_object,
        };
        assert_eq!(
            text(&key(true)).0,
            "generated EC P-256 'k' id:0a in 3 ms\npublic key SHA256:ab (65 bytes)\n"
        );
        assert!(text(&key(false)).0.ends_with(
            "note: a session object, gone when hsmc exits; add --persistent to keep it\n"
        ));
        let (doc, _) = json(&key(false));
        assert!(doc.starts_with("{\n  \"private_handle\": 2,"), "{doc}");
        assert!(!doc.contains("token_object"), "{doc}");
    }
}
