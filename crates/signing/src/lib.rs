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
//! - [`cms`]: detached CMS `SignedData` with signed attributes (RFC 5652; RFC 9882 ML-DSA,
//!   RFC 9708 HSS/LMS, RFC 8419 Ed25519, RFC 4056 RSA-PSS, RFC 5753 ECDSA).
//! - [`cert`]: self-signed certificates and CSRs signed by the HSM key.
//! - [`formats`]: raw detached signatures, the signed `SHA256SUMS` manifest, JSON bundles.
//! - [`verify`]: offline verification of any of them.
//! - [`output`]: files written completely or not at all, never over an existing one.

pub mod alg;
pub mod cert;
pub mod cms;
pub mod formats;
pub mod hashing;
pub mod input;
pub mod objects;
pub mod output;
pub mod verify;

pub use alg::SigAlg;

/// What went wrong, specifically enough to tell the officer what to do.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SignError {
    /// The file cannot be signed as it is (a directory, a FIFO, empty, unreadable, …).
    #[error("{path}: {reason}")]
    Input { path: String, reason: String },
    /// The file changed while it was being read.
    #[error("{0} changed while it was being read; sign it again once it is complete")]
    Changed(String),
    #[error("cancelled")]
    Cancelled,
    /// An output file already exists (nothing is overwritten).
    #[error("{0} already exists; nothing was overwritten")]
    Exists(String),
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    #[error("{0}")]
    Unsupported(String),
    /// The HSM's signature did not verify in software: it is not written.
    #[error("the HSM's signature does not verify ({0}); it was not written")]
    SelfCheck(String),
    #[error("{0}")]
    Hsm(hsm::HsmError),
    #[error("{0}")]
    Format(String),
    /// Verification: the signature does not match.
    #[error("{0}")]
    Invalid(String),
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

/// Files up to this size are signed as themselves by the schemes that sign whole messages
/// (ML-DSA, HSS, Ed25519) in the raw and bundle formats; larger ones are signed through CMS
/// signed attributes (which carry the file's digest — the standard way, RFC 9882/9708/8419).
/// Tokens buffer such messages whole: Kryoptic (and lunasim over it) refuses more than
/// 1 MiB with `CKR_DEVICE_ERROR`, and HSMs have similar limits.
pub const MAX_WHOLE_MESSAGE: u64 = 1024 * 1024;
