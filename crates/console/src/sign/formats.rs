//! What each output format makes of one file: a [`Format`] renders its bytes from a
//! [`FileSigning`], which holds the file's digests and asks the HSM for signatures. The
//! signature over the file itself is made once per file and shared by every format that
//! carries it (raw and bundle spend one HSS one-time key, not two). A new format is a
//! type implementing [`Format`] and a [`SignFormat`] variant that names it.

use std::time::SystemTime;

use p11::Session;
use signing::formats::{Bundle, BundleFile, BundleKey, BUNDLE_FORMAT};
use signing::hashing::Digests;
use signing::input::InputFile;
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
    /// The output's bytes for one file.
    fn render(&self, file: &mut FileSigning<'_>) -> Result<Vec<u8>, SignError>;
}

impl SignFormat {
    pub fn format(self) -> &'static dyn Format {
        match self {
            SignFormat::Cms => &Cms,
            SignFormat::Raw => &Raw,
            SignFormat::Bundle => &JsonBundle,
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
    files * (own + shared) + u64::from(manifest) + u64::from(issue_cert)
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
        }
    }

    /// The file's digest for the key's scheme.
    pub fn digest(&self) -> Result<Vec<u8>, SignError> {
        self.digests
            .get(self.key.alg.digest())
            .ok_or_else(|| SignError::Format("digest missing".into()))
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
    /// must be the bytes that were hashed.
    fn sign_whole_file(&self) -> Result<Vec<u8>, SignError> {
        let (alg, input) = (self.key.alg, self.input);
        if input.size() > signing::MAX_WHOLE_MESSAGE {
            return Err(SignError::Unsupported(format!(
                "{} signs whole messages and tokens take at most {} MiB at once; {} is larger — choose the CMS format for it",
                alg.name(),
                signing::MAX_WHOLE_MESSAGE >> 20,
                input.name()
            )));
        }
        let bytes = std::fs::read(&input.path).map_err(|e| SignError::Input {
            path: input.path.display().to_string(),
            reason: format!("cannot be read: {e}"),
        })?;
        if hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)) != self.digests.sha256 {
            return Err(SignError::Changed(input.path.display().to_string()));
        }
        let ctx = &self.key.context;
        let sig = alg.sign(self.session, self.handle, &bytes, ctx)?;
        alg.verify(&self.key.pk, &bytes, ctx, &sig)
            .map_err(|e| SignError::SelfCheck(e.to_string()))?;
        Ok(sig)
    }

    /// Schemes that sign a digest (ECDSA, RSA-PSS).
    fn sign_file_digest(&self) -> Result<Vec<u8>, SignError> {
        let alg = self.key.alg;
        let digest = self.digest()?;
        let sig = alg.sign_digest(self.session, self.handle, &digest)?;
        alg.verify_digest(&self.key.pk, &digest, &sig)
            .map_err(|e| SignError::SelfCheck(e.to_string()))?;
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
        let cert = file
            .key
            .cert
            .as_ref()
            .ok_or_else(|| SignError::Format("no certificate for CMS".into()))?;
        let digest = file.digest()?;
        let chain = file.key.chain.clone();
        signing::cms::build_with_chain(
            file.key.alg,
            cert,
            &chain,
            &digest,
            SystemTime::now(),
            &mut |m| file.sign_bytes(m),
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
                sha512: d.sha512.clone(),
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
        };
        serde_json::to_vec_pretty(&b).map_err(|e| SignError::Format(e.to_string()))
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
    }

    #[test]
    fn suffixes_name_each_format() {
        assert_eq!(SignFormat::Cms.suffix(), ".p7s");
        assert_eq!(SignFormat::Raw.suffix(), ".sig");
        assert_eq!(SignFormat::Bundle.suffix(), ".sig.json");
    }
}
