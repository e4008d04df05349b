//! `hsmc sign` and `hsmc verify` on the command line.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use console::sign::SignFormat;

#[derive(Debug, Args)]
pub struct SignArgs {
    /// The artifacts.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The signing key: label:NAME, id:HEX or a pkcs11: URI.
    #[arg(long)]
    pub key: String,
    /// Output formats (repeat or comma-separate): cms (.p7s), raw (.sig + public key PEM), bundle (.sig.json).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "cms")]
    pub format: Vec<SigFormat>,
    /// Also write SHA256SUMS and SHA256SUMS.sig for the batch.
    #[arg(long)]
    pub manifest: bool,
    /// Write the outputs here instead of beside each file.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// ML-DSA context string (raw and bundle formats).
    #[arg(long)]
    pub context: Option<String>,
    /// Go on with the other files when one fails (default: stop at the first failure).
    #[arg(long)]
    pub continue_on_error: bool,
    /// Confirm signing with an HSS key (each signature uses up a one-time key for good).
    #[arg(long)]
    pub yes_hss: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SigFormat {
    Cms,
    Raw,
    Bundle,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The artifact (or SHA256SUMS, with its .sig and --pub).
    pub file: PathBuf,
    /// The signature: .p7s, .sig or .sig.json.
    #[arg(long)]
    pub sig: PathBuf,
    /// The signer's public key (PEM SPKI or certificate); required for raw signatures,
    /// pins the key for the others.
    #[arg(long = "pub", value_name = "PEM")]
    pub public_key: Option<PathBuf>,
    /// ML-DSA context string the signature was made with.
    #[arg(long)]
    pub context: Option<String>,
}

impl From<SigFormat> for SignFormat {
    fn from(f: SigFormat) -> Self {
        match f {
            SigFormat::Cms => SignFormat::Cms,
            SigFormat::Raw => SignFormat::Raw,
            SigFormat::Bundle => SignFormat::Bundle,
        }
    }
}
