//! Key succession statements: how a project moves its users from one signing key to the
//! next (typically a classical key to a post-quantum one). The statement is a small JSON
//! document naming both keys — label, algorithm, SHA-256 fingerprint and public key — the
//! date from which the new key signs and, optionally, the end of the transition. Both keys
//! sign it, each with a detached raw signature beside it (`STATEMENT.<label>.sig`, the
//! format `hsmc sign --format raw` writes for that key), so a user who trusts the old key
//! can check that its holder vouches for the new one, and that the new key's holder made
//! the statement too.
//!
//! A check here verifies both signatures with the public keys the statement carries, that
//! each carried key has the fingerprint the statement states, and — when the user names the
//! old key they already trust — that it is the statement's old key. Without that pin the
//! check only shows the statement is consistent, not that it comes from a key they trust.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use hsm::pubkey::PublicKey;

use hsm::{text, Text};

use super::{report, verify_raw, ManifestEntry, SignatureFormat, VerifyReport};
use crate::{Result, SignError};

/// The statement's `format` field.
pub const FORMAT: &str = "hsm-console/key-succession";
/// The statement's `version` field this code writes and reads.
pub const VERSION: u32 = 1;

/// One of the two keys, as the statement names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct SuccessionKey {
    pub label: String,
    pub algorithm: String,
    /// `SHA256:` and the hex of the SHA-256 of the DER SubjectPublicKeyInfo.
    pub fingerprint: String,
    /// PEM SubjectPublicKeyInfo.
    pub public_key: String,
}

/// A key succession statement (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Statement {
    pub format: String,
    pub version: u32,
    pub old: SuccessionKey,
    pub new: SuccessionKey,
    /// `YYYY-MM-DD`: releases from this day on are signed by the new key.
    pub new_key_signs_from: String,
    /// `YYYY-MM-DD`: until this day releases carry both signatures; none when open.
    pub transition_ends: Option<String>,
    /// When the statement was made (RFC 3339, UTC).
    pub made: String,
}

impl Statement {
    /// The bytes written to the statement file (and signed): pretty JSON, a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = serde_json::to_vec_pretty(self).expect("a statement serializes");
        b.push(b'\n');
        b
    }

    /// A statement file's content, if it is one (`None` for any other file).
    pub fn parse(bytes: &[u8]) -> Option<Statement> {
        let s: Statement = serde_json::from_slice(bytes).ok()?;
        (s.format == FORMAT).then_some(s)
    }
}

/// The file name part a key's label gives its outputs: letters, digits, `-` and `_` kept,
/// anything else `_`.
pub fn label_stem(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Where the signature of the key labelled `label` over `statement` is: beside it,
/// `STATEMENT.<label>.sig`.
pub fn signature_path(statement: &Path, label: &str) -> PathBuf {
    let mut name = statement.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.sig", label_stem(label)));
    statement.with_file_name(name)
}

/// Check the statement at `path` and both its signatures; `trusted_old` is the old key the
/// user already trusts (pins it). `Ok(None)` when the file is not a statement.
pub fn verify(path: &Path, trusted_old: Option<&PublicKey>) -> Result<Option<VerifyReport>> {
    let bytes = std::fs::read(path).map_err(|e| SignError::Input {
        path: path.display().to_string(),
        reason: hsm::text!(
            "errors.inputs.unreadable",
            "cannot be read: {{error}}",
            error = e
        ),
    })?;
    if bytes.len() > 1 << 20 {
        return Ok(None);
    }
    let Some(st) = Statement::parse(&bytes) else {
        return Ok(None);
    };
    let mut r = report(path, SignatureFormat::Succession);
    r.algorithm = Some(format!("{} → {}", st.old.algorithm, st.new.algorithm));
    r.signer = Some(format!("{} → {}", st.old.label, st.new.label));
    r.key_fingerprint = Some(st.new.fingerprint.clone());
    if st.version != VERSION {
        r.say(text!(
            "verify.details.succession_version",
            "a key succession statement of version {{version}}; this console reads version {{known}}",
            version = st.version,
            known = VERSION
        ));
        return Ok(Some(r));
    }
    r.entries = vec![
        signed_by(
            path,
            &st.old,
            &text!("verify.details.succession_role_old", "old"),
        ),
        signed_by(
            path,
            &st.new,
            &text!("verify.details.succession_role_new", "new"),
        ),
    ];
    let pinned = trusted_old.map(|k| k.fingerprint() == st.old.fingerprint);
    r.valid = r.entries.iter().all(|e| e.ok) && pinned != Some(false);
    r.say(match (r.valid, pinned) {
        (true, Some(true)) => text!(
            "verify.details.succession_ok_pinned",
            "the key you trust ({{old}}) and its successor {{new}} both signed this statement; the new key signs from {{from}}",
            old = &st.old.fingerprint,
            new = &st.new.fingerprint,
            from = &st.new_key_signs_from
        ),
        (true, _) => text!(
            "verify.details.succession_ok_unpinned",
            "both keys signed this statement; the new key {{new}} signs from {{from}}. Name the old key you trust (--pub) to know it comes from that key",
            new = &st.new.fingerprint,
            from = &st.new_key_signs_from
        ),
        (false, Some(false)) => text!(
            "verify.details.succession_not_your_key",
            "the statement's old key is {{old}}, not the key you named",
            old = &st.old.fingerprint
        ),
        (false, _) => text!(
            "verify.details.succession_bad",
            "not every signature of the statement verifies (see each below)"
        ),
    });
    Ok(Some(r))
}

/// The signature of `key` (the statement's `role` key) over the statement, checked with
/// the public key the statement carries, which must have the stated fingerprint.
fn signed_by(path: &Path, key: &SuccessionKey, role: &Text) -> ManifestEntry {
    let sig_path = signature_path(path, &key.label);
    let name = sig_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let checked = PublicKey::from_spki_pem(&key.public_key)
        .map_err(|e| {
            text!(
                "verify.details.succession_key_unreadable",
                "the {{role}} key in the statement cannot be read: {{error}}",
                role = &role.text,
                error = e
            )
            .nest("role", role)
        })
        .and_then(|pk| {
            if pk.fingerprint() != key.fingerprint {
                return Err(text!(
                    "verify.details.succession_fingerprint_mismatch",
                    "the {{role}} key in the statement has the fingerprint {{actual}}, not the {{stated}} it states",
                    role = &role.text,
                    actual = pk.fingerprint(),
                    stated = &key.fingerprint
                )
                .nest("role", role));
            }
            let sig = std::fs::read(&sig_path).map_err(|e| {
                text!(
                    "verify.details.succession_signature_missing",
                    "{{file}} cannot be read: {{error}}",
                    file = &name,
                    error = e
                )
            })?;
            verify_raw(path, &sig, &pk, &[]).map_err(|e| {
                text!(
                    "verify.details.succession_signature_bad",
                    "the {{role}} key's signature does not verify: {{error}}",
                    role = &role.text,
                    error = e
                )
                .nest("role", role)
            })
        });
    let t = match checked {
        Ok(alg) => text!(
            "verify.details.succession_signed",
            "signed by the {{role}} key '{{label}}' ({{algorithm}})",
            role = &role.text,
            label = &key.label,
            algorithm = alg.name()
        )
        .nest("role", role),
        Err(t) => t,
    };
    ManifestEntry {
        name,
        ok: t.key == "verify.details.succession_signed",
        detail: t.text.clone(),
        detail_text: Some(t),
    }
}
