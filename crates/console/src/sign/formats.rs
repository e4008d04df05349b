//! What each output format makes of one file: a [`Format`] renders its bytes from a
//! [`FileSigning`], which holds the file's digests and asks the HSM for signatures. The
//! signature over the file itself is made once per file and shared by every format that
//! carries it (raw and bundle spend one HSS one-time key, not two). A new format is a
//! type implementing [`Format`] and a [`SignFormat`] variant that names it.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use p11::Session;
use signing::alg::DigestAlg;
use signing::formats::{Bundle, BundleFile, BundleKey, BUNDLE_FORMAT};
use signing::hashing::Digests;
use signing::input::InputFile;
use signing::output::beside;
use signing::whole::{FileSigner, SignPath};
use signing::SignError;

use super::key::SigningKey;
use super::SignFormat;

/// One output format.
pub trait Format: Sync {
    /// What the output's name adds to the artifact's.
    fn suffix(&self) -> &'static str;
    /// HSM signatures the format makes itself for each file.
    fn own_signatures(&self) -> u64;
    /// Whether it carries the shared signature over the file.
    fn uses_message_signature(&self) -> bool;
    /// The file's digests it needs besides SHA-256 and the key's own (each is computed only
    /// when a format or a key asks for it).
    fn digests(&self) -> &'static [DigestAlg] {
        &[]
    }
    /// The output's bytes for one file.
    fn render(&self, file: &mut FileSigning<'_>) -> Result<Vec<u8>, SignError>;
    /// Whether the format can sign with this key (asked before anything is signed).
    fn accepts(&self, _key: &SigningKey) -> Result<(), SignError> {
        Ok(())
    }
    /// Where the output for `input` goes: its name with the suffix added, beside it or in
    /// `out_dir`. Asked for every format before the HSM signs anything for the file; an
    /// `Err` refuses the file (a name whose output the format cannot make as it should be).
    fn output_path(&self, input: &InputFile, out_dir: Option<&Path>) -> Result<PathBuf, SignError> {
        Ok(beside(&input.path, out_dir, self.suffix()))
    }
    /// Whether this file can be signed in this format (cleartext needs text), asked for
    /// every format before the HSM signs anything for the file.
    fn check_file(&self, _file: &FileSigning<'_>) -> Result<(), SignError> {
        Ok(())
    }
}

impl SignFormat {
    pub fn format(self) -> &'static dyn Format {
        match self {
            SignFormat::Cms => &Cms,
            SignFormat::Raw => &Raw,
            SignFormat::Bundle => &JsonBundle,
            SignFormat::Openpgp => &super::openpgp::OpenPgp { armored: true },
            SignFormat::OpenpgpBinary => &super::openpgp::OpenPgp { armored: false },
            SignFormat::Minisign => &super::minisign::Minisign,
            SignFormat::Sshsig => &super::ssh::Sshsig,
            SignFormat::OpenpgpCleartext => &super::openpgp::Cleartext,
        }
    }
}

/// How many signatures a batch will use (the HSS budget check).
pub(crate) fn signatures_needed(
    files: u64,
    formats: &[SignFormat],
    manifest: bool,
    issue_cert: bool,
) -> u64 {
    let own: u64 = formats.iter().map(|f| f.format().own_signatures()).sum();
    let shared = u64::from(formats.iter().any(|f| f.format().uses_message_signature()));
    // With OpenPGP the manifest is also cleartext-signed (`SHA256SUMS.asc`).
    let manifest = u64::from(manifest) * (1 + u64::from(super::openpgp::wanted(formats)));
    files * (own + shared) + manifest + u64::from(issue_cert)
}

/// One file being signed on one session.
pub struct FileSigning<'a> {
    pub key: &'a SigningKey,
    pub session: &'a Session,
    /// The private key's handle in this session's module generation.
    pub handle: u64,
    pub input: &'a InputFile,
    pub digests: &'a Digests,
    message_signature: Option<Vec<u8>>,
    /// How the token was given the file for the message signature (whole-message schemes).
    pub message_path: Option<SignPath>,
}

impl<'a> FileSigning<'a> {
    pub fn new(
        key: &'a SigningKey,
        session: &'a Session,
        handle: u64,
        input: &'a InputFile,
        digests: &'a Digests,
    ) -> Self {
        FileSigning {
            key,
            session,
            handle,
            input,
            digests,
            message_signature: None,
            message_path: None,
        }
    }

    /// The file's digest for the key's scheme.
    pub fn digest(&self) -> Result<Vec<u8>, SignError> {
        self.digests.get(self.key.alg.digest()).ok_or_else(|| {
            SignError::Format(hsm::text!("signing.digest_missing", "digest missing"))
        })
    }

    /// The HSM signs `message` (no context), as a format's own signature.
    pub fn sign_bytes(&self, message: &[u8]) -> Result<Vec<u8>, SignError> {
        Ok(self.key.alg.sign(self.session, self.handle, message, &[])?)
    }

    /// The signature over the file itself, made once and checked in software first.
    pub fn message_signature(&mut self) -> Result<Vec<u8>, SignError> {
        if let Some(sig) = &self.message_signature {
            return Ok(sig.clone());
        }
        let sig = if self.key.alg.whole_message() {
            self.sign_whole_file()?
        } else {
            self.sign_file_digest()?
        };
        self.message_signature = Some(sig.clone());
        Ok(sig)
    }

    /// Schemes that sign the message itself (ML-DSA, HSS, Ed25519): the file's bytes, which
    /// must be the bytes that were hashed — in one call, in parts or as external μ,
    /// whatever the file's size and the token allow (`signing::whole`), checked in software
    /// over the file.
    fn sign_whole_file(&mut self) -> Result<Vec<u8>, SignError> {
        let signer = FileSigner {
            alg: self.key.alg,
            session: self.session,
            key: self.handle,
            pk: &self.key.pk,
            context: &self.key.context,
        };
        let signed = signer.sign(self.input, &self.digests.sha256)?;
        self.message_path = Some(signed.path);
        Ok(signed.signature)
    }

    /// Schemes that sign a digest (ECDSA, RSA-PSS).
    fn sign_file_digest(&self) -> Result<Vec<u8>, SignError> {
        let alg = self.key.alg;
        let digest = self.digest()?;
        let sig = alg.sign_digest(self.session, self.handle, &digest)?;
        alg.verify_digest(&self.key.pk, &digest, &sig)
            .map_err(SignError::into_self_check)?;
        Ok(sig)
    }
}

/// Detached CMS (RFC 5652) with signed attributes and the signer's certificate: the HSM
/// signs the signed attributes, which carry the file's digest.
struct Cms;

impl Format for Cms {
    fn suffix(&self) -> &'static str {
        ".p7s"
    }
    fn own_signatures(&self) -> u64 {
        1
    }
    fn uses_message_signature(&self) -> bool {
        false
    }
    fn render(&self, file: &mut FileSigning<'_>) -> Result<Vec<u8>, SignError> {
        let cert = file.key.cert.as_ref().ok_or_else(|| {
            SignError::Format(hsm::text!(
                "signing.cms.no_certificate_for_key",
                "no certificate for CMS"
            ))
        })?;
        let digest = file.digest()?;
        let file = &*file;
        // Time-stamped afterwards, off the HSM's session (`stamping`).
        signing::cms::build_with_chain(
            file.key.alg,
            cert,
            &file.key.chain,
            &digest,
            SystemTime::now(),
            &mut |m| file.sign_bytes(m),
            None,
        )
    }
}

/// The raw signature over the file (ECDSA as DER, as OpenSSL expects).
struct Raw;

impl Format for Raw {
    fn suffix(&self) -> &'static str {
        ".sig"
    }
    fn own_signatures(&self) -> u64 {
        0
    }
    fn uses_message_signature(&self) -> bool {
        true
    }
    fn render(&self, file: &mut FileSigning<'_>) -> Result<Vec<u8>, SignError> {
        file.message_signature()
    }
}

/// A JSON bundle: the signature over the file with everything needed to check it.
struct JsonBundle;

impl Format for JsonBundle {
    fn suffix(&self) -> &'static str {
        ".sig.json"
    }
    fn own_signatures(&self) -> u64 {
        0
    }
    fn uses_message_signature(&self) -> bool {
        true
    }
    /// The bundle names the file by its SHA-256 and SHA-512.
    fn digests(&self) -> &'static [DigestAlg] {
        &[DigestAlg::Sha512]
    }
    fn render(&self, file: &mut FileSigning<'_>) -> Result<Vec<u8>, SignError> {
        use base64::Engine;
        let sig = file.message_signature()?;
        let (k, d) = (file.key, file.digests);
        let b = Bundle {
            format: BUNDLE_FORMAT.into(),
            file: BundleFile {
                name: file.input.name(),
                size: d.size,
                sha256: d.sha256.clone(),
                sha512: d.sha512.clone().ok_or_else(|| {
                    SignError::Format(hsm::text!("signing.digest_missing", "digest missing"))
                })?,
            },
            algorithm: k.alg.name(),
            scheme: k.alg,
            parameters: Bundle::parameters_for(k.alg, &k.context),
            signed: "file".into(),
            key: BundleKey {
                label: k.summary.label.clone(),
                id: k.summary.id_hex.clone(),
                fingerprint: k.pk.fingerprint(),
                public_key: k.pk.spki_pem(),
            },
            signature: base64::engine::general_purpose::STANDARD.encode(&sig),
            signed_at: audit::now_rfc3339(),
            console_version: env!("CARGO_PKG_VERSION").into(),
            token_serial: k.token_serial.clone(),
            signing_path: file.message_path,
            // Added afterwards, off the HSM's session (`stamping`).
            timestamp_token: None,
        };
        serde_json::to_vec_pretty(&b).map_err(|e| {
            SignError::Format(hsm::text!(
                "signing.bundle_not_written",
                "{{error}}",
                error = e
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hss_budget_counts_every_signature() {
        let f = [SignFormat::Cms, SignFormat::Raw, SignFormat::Bundle];
        // CMS one per file, raw and bundle one shared per file; manifest and certificate one each.
        assert_eq!(signatures_needed(3, &f, true, true), 3 * 2 + 2);
        assert_eq!(signatures_needed(3, &[SignFormat::Raw], false, false), 3);
        assert_eq!(signatures_needed(2, &[SignFormat::Cms], false, false), 2);
        // OpenPGP one per file and one more for SHA256SUMS.asc; minisign two per file.
        let f = [SignFormat::Openpgp, SignFormat::Minisign];
        assert_eq!(signatures_needed(2, &f, true, false), 2 * 3 + 2);
        // SSHSIG one per file; apt's pair (Release.gpg and InRelease) two.
        assert_eq!(signatures_needed(2, &[SignFormat::Sshsig], false, false), 2);
        let apt = [SignFormat::Openpgp, SignFormat::OpenpgpCleartext];
        assert_eq!(signatures_needed(1, &apt, false, false), 2);
        // The cleartext format is OpenPGP: with the manifest, SHA256SUMS.asc too.
        assert_eq!(
            signatures_needed(1, &[SignFormat::OpenpgpCleartext], true, false),
            1 + 2
        );
        assert_eq!(
            signatures_needed(1, &[SignFormat::OpenpgpBinary], false, false),
            1
        );
    }

    #[test]
    fn suffixes_name_each_format() {
        assert_eq!(SignFormat::Cms.suffix(), ".p7s");
        assert_eq!(SignFormat::Raw.suffix(), ".sig");
        assert_eq!(SignFormat::Bundle.suffix(), ".sig.json");
        assert_eq!(SignFormat::Openpgp.suffix(), ".asc");
        assert_eq!(SignFormat::OpenpgpBinary.suffix(), ".gpg");
        assert_eq!(SignFormat::Minisign.suffix(), ".minisig");
        assert_eq!(SignFormat::Sshsig.suffix(), ".sshsig");
        assert_eq!(SignFormat::OpenpgpCleartext.suffix(), ".clearsigned");
    }

    /// Outputs are the artifact's name plus a suffix: two formats' outputs of two files in
    /// one folder could share a name only if one suffix ended another (`.pgp.sig` would be
    /// the raw signature of `X.pgp`). None does.
    #[test]
    fn no_suffix_ends_another() {
        let all = [
            SignFormat::Cms,
            SignFormat::Raw,
            SignFormat::Bundle,
            SignFormat::Openpgp,
            SignFormat::OpenpgpBinary,
            SignFormat::Minisign,
            SignFormat::Sshsig,
            SignFormat::OpenpgpCleartext,
        ];
        for a in all {
            for b in all {
                if a != b {
                    assert!(
                        !a.suffix().ends_with(b.suffix()),
                        "{} ends with {}",
                        a.suffix(),
                        b.suffix()
                    );
                }
            }
        }
    }
}
