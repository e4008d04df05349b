//! `signing` — release signing with HSM keys, and verification that does not trust the
//! signer.
//!
//! - [`input`]: what may be signed (regular, readable, non-empty files; everything else is
//!   refused with a reason).
//! - [`hashing`]: streaming SHA-256/384/512 with progress, cancel, and detection of a file
//!   that changed while it was read.
//! - [`alg`]: the signature schemes, how the HSM is asked to sign with each, and their
//!   software verifiers (RustCrypto and this project's RFC 8554 code — never the library
//!   that signed).
//! - [`whole`]: files signed as themselves (ML-DSA, HSS, Ed25519): single-part,
//!   multi-part or external μ, and the software check, both streaming the file.
//! - [`cms`]: detached CMS `SignedData` with signed attributes (RFC 5652; RFC 9882 ML-DSA,
//!   RFC 9708 HSS/LMS, RFC 8419 Ed25519, RFC 4056 RSA-PSS, RFC 5753 ECDSA).
//! - [`cert`]: self-signed certificates and CSRs signed by the HSM key.
//! - [`chain`]: certificate chain files given at signing time, checked link by link.
//! - [`formats`]: raw detached signatures, the signed `SHA256SUMS` manifest, JSON bundles.
//! - [`openpgp`]: OpenPGP v4 certificates, detached and cleartext signatures (gpg 2.2, sq).
//! - [`minisign`]: minisign `.minisig` files and `minisign.pub`.
//! - [`sshsig`]: OpenSSH public key and `allowed_signers` lines, SSHSIG signatures.
//! - [`tsp`]: RFC 3161 time-stamp requests, answers and tokens, and their check.
//! - [`reread`]: reading a file again for the formats with their own hash.
//! - [`restamp`]: RFC 3161 tokens added to CMS and bundle signatures made earlier.
//! - [`verify`]: offline verification of any of them.
//! - [`output`]: files written completely or not at all, never over an existing one.

pub mod alg;
pub mod cert;
pub mod chain;
pub mod cms;
pub mod formats;
pub mod hashing;
pub mod input;
pub mod minisign;
pub mod objects;
pub mod openpgp;
pub mod output;
pub mod reread;
pub mod restamp;
pub mod sshsig;
pub mod tsp;
pub mod verify;
pub mod whole;

pub use alg::SigAlg;

/// What went wrong, specifically enough to tell the officer what to do. The officer-facing
/// texts (`Input`'s, `Write`'s and `Timestamp`'s reasons, `Unsupported`, `Format`, `Invalid`,
/// `SelfCheck`) are [`hsm::Text`]s with keys
/// under `signing.` (and `errors.inputs.` for a path's refusal), so the console shows them
/// in the officer's language; `Display` is their English.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SignError {
    /// The file cannot be signed as it is (a directory, a FIFO, empty, unreadable, …).
    #[error("{path}: {reason}")]
    Input { path: String, reason: hsm::Text },
    /// The file changed while it was being read.
    #[error("{0} changed while it was being read; sign it again once it is complete")]
    Changed(String),
    /// The file is no longer the one that was hashed: `what` changed, seen at `stage`.
    #[error("{path} changed after it was hashed: {what}")]
    ChangedSinceHashed {
        path: String,
        what: hsm::Text,
        stage: input::ChangeSeen,
    },
    #[error("cancelled")]
    Cancelled,
    /// An output file already exists (nothing is overwritten).
    #[error("{0} already exists; nothing was overwritten")]
    Exists(String),
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: hsm::Text },
    #[error("{0}")]
    Unsupported(hsm::Text),
    /// The HSM's signature did not verify in software: it is not written.
    #[error("the HSM's signature does not verify ({0}); it was not written")]
    SelfCheck(hsm::Text),
    #[error("{0}")]
    Hsm(hsm::HsmError),
    #[error("{0}")]
    Format(hsm::Text),
    /// Verification: the signature does not match.
    #[error("{0}")]
    Invalid(hsm::Text),
    /// The time-stamp authority at `tsa` did not answer, or answered wrong.
    #[error("the time-stamp authority {tsa}: {reason}")]
    Timestamp { tsa: String, reason: hsm::Text },
}

impl SignError {
    /// This error as the reason the HSM's signature failed its check in software: a message
    /// with a key (the verifier's own refusal) keeps it, any other error is its English.
    pub fn into_self_check(self) -> SignError {
        SignError::SelfCheck(self.into_msg())
    }

    /// This error as a message to nest in another: a message with a key keeps it, any
    /// other error is its English.
    pub fn into_msg(self) -> hsm::Text {
        match self {
            SignError::Invalid(m) | SignError::Format(m) | SignError::Unsupported(m) => m,
            SignError::SelfCheck(m) => m,
            SignError::Hsm(hsm::HsmError::Refused(m) | hsm::HsmError::NotSupported(m)) => m,
            other => other.text(),
        }
    }

    /// This error as a message with a catalog key, its English the error's own (what
    /// `Display` writes); a lower crate's error keeps its English inside it.
    pub fn text(&self) -> hsm::Text {
        match self {
            SignError::Input { path, reason } => hsm::text!(
                "signing.errors.input",
                "{{path}}: {{reason}}",
                path = path,
                reason = reason
            )
            .nest("reason", reason),
            SignError::Changed(path) => hsm::text!(
                "signing.errors.changed",
                "{{path}} changed while it was being read; sign it again once it is complete",
                path = path
            ),
            SignError::ChangedSinceHashed { path, what, .. } => hsm::text!(
                "signing.errors.changed_since_hashed",
                "{{path}} changed after it was hashed: {{what}}",
                path = path,
                what = what
            )
            .nest("what", what),
            SignError::Cancelled => hsm::text!("signing.errors.cancelled", "cancelled"),
            SignError::Exists(path) => hsm::text!(
                "signing.errors.exists",
                "{{path}} already exists; nothing was overwritten",
                path = path
            ),
            SignError::Write { path, reason } => hsm::text!(
                "signing.errors.write",
                "cannot write {{path}}: {{reason}}",
                path = path,
                reason = reason
            )
            .nest("reason", reason),
            SignError::SelfCheck(m) => hsm::text!(
                "signing.errors.self_check",
                "the HSM's signature does not verify ({{reason}}); it was not written",
                reason = m
            )
            .nest("reason", m),
            SignError::Timestamp { tsa, reason } => hsm::text!(
                "signing.errors.timestamp",
                "the time-stamp authority {{tsa}}: {{reason}}",
                tsa = tsa,
                reason = reason
            )
            .nest("reason", reason),
            SignError::Unsupported(m) | SignError::Format(m) | SignError::Invalid(m) => m.clone(),
            SignError::Hsm(hsm::HsmError::Refused(m) | hsm::HsmError::NotSupported(m)) => m.clone(),
            SignError::Hsm(other) => hsm::text!("signing.error", "{{error}}", error = other),
        }
    }
}

impl From<hsm::HsmError> for SignError {
    fn from(e: hsm::HsmError) -> Self {
        SignError::Hsm(e)
    }
}

impl From<p11::Error> for SignError {
    fn from(e: p11::Error) -> Self {
        SignError::Hsm(e.into())
    }
}

pub type Result<T> = std::result::Result<T, SignError>;

/// A public key `hsm` could not read (its reason is `hsm`'s English).
pub(crate) fn unusable_key(reason: String) -> SignError {
    SignError::Format(hsm::text!(
        "signing.public_key_unusable",
        "{{error}}",
        error = reason
    ))
}

/// Files up to this size are read whole (signed in one call where the scheme allows, and
/// verified from memory). Larger ones are streamed ([`whole`]): HSS through multi-part
/// signing, ML-DSA through multi-part or external μ where the token offers either; Ed25519
/// stops here (PureEdDSA reads the message twice; tokens buffer it — Kryoptic, and lunasim
/// over it, refuses more than 1 MiB), and such files are signed through CMS signed
/// attributes (which carry the file's digest — the standard way, RFC 9882/9708/8419).
pub const MAX_WHOLE_MESSAGE: u64 = 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every error's keyed text says in English what `Display` says (`hsmc` prints that).
    #[test]
    fn an_errors_text_is_its_english() {
        let reason = hsm::text!("signing.disk_full", "the disk is full");
        let errors = [
            SignError::Input {
                path: "a.bin".into(),
                reason: reason.clone(),
            },
            SignError::Changed("a.bin".into()),
            SignError::ChangedSinceHashed {
                path: "a.bin".into(),
                what: reason.clone(),
                stage: input::ChangeSeen::WhileSigning,
            },
            SignError::Cancelled,
            SignError::Exists("a.bin.sig".into()),
            SignError::Write {
                path: "a.bin.sig".into(),
                reason: reason.clone(),
            },
            SignError::SelfCheck(reason.clone()),
            SignError::Timestamp {
                tsa: "http://127.0.0.1:1".into(),
                reason: reason.clone(),
            },
            SignError::Format(reason.clone()),
            SignError::Hsm(hsm::HsmError::NotLoggedIn),
        ];
        for e in errors {
            let t = e.text();
            assert_eq!(t.text, e.to_string());
            assert!(!t.key.is_empty(), "{e} has a key");
            if !matches!(
                e,
                SignError::Format(_)
                    | SignError::Hsm(_)
                    | SignError::Changed(_)
                    | SignError::Exists(_)
                    | SignError::Cancelled
            ) {
                assert!(
                    t.args.values().any(|v| v == "signing.disk_full"),
                    "{e}: the inner text travels with its key"
                );
            }
        }
    }
}
