//! `hsmc sign`, `hsmc verify` and `hsmc timestamp` on the command line.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use console::sign::SignFormat;

#[derive(Debug, Args)]
pub struct SignArgs {
    /// The artifacts.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The signing key: label:NAME, id:HEX or a pkcs11: URI. Repeat it to sign with
    /// several keys at once (dual signing, e.g. a classical and a post-quantum key): one
    /// .p7s with a signer per key; every other output once per key, named for it:
    /// FILE.LABEL.sig, FILE.LABEL.sig.json… (LABEL keeps letters, digits, - and _; anything
    /// else becomes _).
    #[arg(long, required = true)]
    pub key: Vec<String>,
    /// Output formats (repeat or comma-separate; default cms, none with --clearsign alone):
    /// cms (.p7s), raw (.sig + public key PEM), bundle (.sig.json), openpgp (.asc; Ed25519,
    /// ECDSA, RSA keys; for a file named Release, Release.gpg as apt reads it),
    /// openpgp-cleartext (what --clearsign writes), minisign (.minisig; Ed25519 keys), sshsig
    /// (.sshsig, what ssh-keygen -Y verify -n file checks; Ed25519 and ECDSA P-256 keys).
    /// An apt repository's Release: --format openpgp --clearsign writes Release.gpg and
    /// InRelease.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub format: Vec<SigFormat>,
    /// Write OpenPGP signatures in binary as FILE.gpg instead of armored FILE.asc (.sig is
    /// the raw format's; refused for apt's Release, whose Release.gpg apt reads armored only).
    #[arg(long)]
    pub openpgp_binary: bool,
    /// Also cleartext-sign each file with OpenPGP, as gpg --clearsign does (the format
    /// openpgp-cleartext): a file named Release gets InRelease (apt), any other
    /// FILE.clearsigned. Text files only: UTF-8, LF line endings, no line ending in a space
    /// or tab.
    #[arg(long)]
    pub clearsign: bool,
    /// Also write SHA256SUMS and SHA256SUMS.sig for the batch (and, with openpgp, the
    /// cleartext-signed SHA256SUMS.asc).
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
    /// For a key that wants the PIN for each signature (CKA_ALWAYS_AUTHENTICATE): `each`
    /// asks for it at the terminal before every signature; `once` asks once (or takes it
    /// from HSMC_PIN, --pin-file or --pin-fd) and uses it for every signature of this
    /// batch: your consent, recorded in the audit trail before anything is signed.
    #[arg(long, value_name = "WHEN", value_enum)]
    pub context_login: Option<ContextLoginArg>,
    /// Time-stamp CMS and bundle signatures with this RFC 3161 authority (http:// or
    /// https://); without it, the one in the settings when that is on.
    #[arg(long, value_name = "URL")]
    pub tsa: Option<String>,
    /// PEM file of the CA the TSA's certificate must chain to (with --tsa).
    #[arg(long, value_name = "FILE", requires = "tsa")]
    pub tsa_ca: Option<PathBuf>,
    /// Seconds to wait for the TSA's answer (with --tsa).
    #[arg(long, value_name = "SECS", default_value_t = 10, requires = "tsa")]
    pub tsa_timeout: u64,
    /// When the TSA fails, write the signature without a time-stamp (and say so) instead
    /// of failing the file (with --tsa).
    #[arg(long, requires = "tsa")]
    pub tsa_optional: bool,
    /// Certificate chain for CMS signatures (repeatable): a PEM file with one or more
    /// certificates (as `openssl cms -certfile` takes), DER or PKCS#7, in any order — the
    /// issuers of the key's certificate, and optionally that certificate itself (then used
    /// instead of the token's). Each link is checked before anything is signed.
    #[arg(long, value_name = "FILE")]
    pub chain: Vec<PathBuf>,
    /// Also write a verifier kit into this new folder: the public key in every format, the
    /// certificate, the signatures, VERIFY.md with the command that checks each, verify.sh.
    #[arg(long, value_name = "DIR")]
    pub kit: Option<PathBuf>,
    /// The user ID of the OpenPGP certificate in the kit (e.g. "Release Signing <release@example.org>"; with --kit).
    #[arg(long, value_name = "UID", requires = "kit")]
    pub uid: Option<String>,
    /// A key succession statement (`hsmc keys succession`) naming the signing key, copied
    /// into the kit with its signatures and checked by verify.sh (with --kit).
    #[arg(long, value_name = "FILE", requires = "kit")]
    pub succession: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SigFormat {
    Cms,
    Raw,
    Bundle,
    Openpgp,
    OpenpgpCleartext,
    Minisign,
    Sshsig,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The artifact (or SHA256SUMS, with its .sig and --pub), or a key succession
    /// statement (`hsmc keys succession`), whose two signatures are found beside it.
    pub file: PathBuf,
    /// The signature: .p7s, .sig, .sig.json, OpenPGP .asc/.gpg, a cleartext-signed message
    /// (SHA256SUMS.asc, apt's InRelease, FILE.clearsigned), .minisig, .sshsig. Not needed for
    /// a key succession statement.
    #[arg(long)]
    pub sig: Option<PathBuf>,
    /// The signer's public key: PEM SPKI or certificate (required for raw signatures, pins
    /// the key for CMS and bundles), the OpenPGP certificate (.asc) for OpenPGP, the
    /// minisign.pub for minisign, the OpenSSH public key line (or allowed_signers line, or
    /// PEM) for SSH signatures; for a key succession statement, the old key you trust (PEM
    /// or certificate).
    #[arg(long = "pub", value_name = "KEY")]
    pub public_key: Option<PathBuf>,
    /// ML-DSA context string the signature was made with.
    #[arg(long)]
    pub context: Option<String>,
    /// With a SHA256SUMS (and --sig, --pub): the folder of the files it lists, when they are
    /// not beside it (a verifier kit's copy of the manifest).
    #[arg(long, value_name = "DIR", requires_all = ["sig", "public_key"])]
    pub files: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TimestampArgs {
    /// The signature: a CMS .p7s (every signer without a token gains one) or a .sig.json
    /// bundle. Rewritten in place (a new file, then a rename); refused if it already has a
    /// token.
    pub sig: PathBuf,
    /// The RFC 3161 time-stamp authority (http:// or https://); without it, the one in the
    /// settings.
    #[arg(long, value_name = "URL")]
    pub tsa: Option<String>,
    /// PEM file of the CA the TSA's certificate must chain to (default: the settings' when
    /// --tsa is not given).
    #[arg(long, value_name = "FILE")]
    pub tsa_ca: Option<PathBuf>,
    /// Seconds to wait for the TSA's answer (default: the settings').
    #[arg(long, value_name = "SECS")]
    pub tsa_timeout: Option<u64>,
}

impl SignArgs {
    /// The console's formats: `--format` (cms when neither it nor `--clearsign` is given),
    /// `--openpgp-binary` choosing OpenPGP's binary form, `--clearsign` adding the cleartext.
    pub fn formats(&self) -> console::ApiResult<Vec<SignFormat>> {
        if self.openpgp_binary && !self.format.contains(&SigFormat::Openpgp) {
            return Err(console::ApiError::invalid(console::text!(
                "hsm.console.openpgp_binary_needs_openpgp",
                "--openpgp-binary goes with --format openpgp."
            )));
        }
        let mut given = self.format.clone();
        if given.is_empty() && !self.clearsign {
            given.push(SigFormat::Cms);
        }
        if self.clearsign {
            given.push(SigFormat::OpenpgpCleartext);
        }
        let mut formats: Vec<SignFormat> = Vec::new();
        for f in given {
            let f = match f {
                SigFormat::Cms => SignFormat::Cms,
                SigFormat::Raw => SignFormat::Raw,
                SigFormat::Bundle => SignFormat::Bundle,
                SigFormat::Openpgp if self.openpgp_binary => SignFormat::OpenpgpBinary,
                SigFormat::Openpgp => SignFormat::Openpgp,
                SigFormat::OpenpgpCleartext => SignFormat::OpenpgpCleartext,
                SigFormat::Minisign => SignFormat::Minisign,
                SigFormat::Sshsig => SignFormat::Sshsig,
            };
            if !formats.contains(&f) {
                formats.push(f);
            }
        }
        Ok(formats)
    }
}

/// `--context-login`: how a key that wants the PIN for each signature logs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ContextLoginArg {
    /// The PIN once, for every signature of this batch.
    Once,
    /// The PIN asked at the terminal before each signature.
    Each,
}
