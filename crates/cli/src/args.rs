//! The command line, as clap sees it (also the source of the completions and man page).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "hsmc",
    version,
    about = "The HSM console's services on the command line",
    long_about = "The HSM console's services on the command line: inspect partitions, manage keys, sign artifacts, read statistics, run latency probes and check the audit trail.\n\nPINs come from HSMC_PIN, --pin-file, --pin-fd or a prompt on a terminal; never from an argument.\n\nExit codes: 0 ok, 1 failure, 2 usage, 3 verification failed (a signature or the audit trail), 4 HSM unavailable, 5 audit unavailable."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// PKCS#11 library path, a remembered module's name (e.g. softhsm), or `builtin`.
    #[arg(long, global = true, env = "HSMC_MODULE", default_value = "builtin")]
    pub module: String,
    /// Slot number.
    #[arg(long, global = true, env = "HSMC_SLOT")]
    pub slot: Option<u64>,
    /// Token label (before the subcommand; `keys gen --token` means something else).
    #[arg(long = "token", env = "HSMC_TOKEN", value_name = "LABEL")]
    pub token_label: Option<String>,
    /// Read the PIN from the first line of this file.
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "pin_fd")]
    pub pin_file: Option<PathBuf>,
    /// Read the PIN from this open file descriptor.
    #[arg(long, global = true, value_name = "N")]
    pub pin_fd: Option<u32>,
    /// Log in as the security officer instead of the user.
    #[arg(long, global = true)]
    pub so: bool,
    /// Audit store: a SQLite file or a postgres:// URL (default: the app's).
    #[arg(long, global = true, env = "HSMC_AUDIT_DB", value_name = "PATH|URL")]
    pub audit_db: Option<String>,
    /// Settings file (the same file the app uses).
    #[arg(long, global = true, env = "HSMC_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Data folder (default: the app's, ~/.local/share/hsm-console).
    #[arg(
        long,
        global = true,
        env = "HSMC_DATA_DIR",
        value_name = "PATH",
        hide = true
    )]
    pub data_dir: Option<PathBuf>,
    /// One JSON document on stdout instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The module: library, version, interface, Luna functions.
    Info,
    /// Slots and their tokens, with PIN state flags.
    Slots,
    /// Every mechanism the token lists, named or as hex.
    Mechanisms,
    /// Keys and other objects.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Sign release artifacts with an HSM key; every signature is verified in software
    /// before it is written.
    Sign(SignArgs),
    /// Verify a file against a signature offline (software verifiers only).
    Verify(VerifyArgs),
    /// Every HSS key: total, remaining, burn rate, projected exhaustion, audit cross-check.
    Hss,
    /// HSM statistics (Luna CA_GetHSMStats and utilization counters where offered).
    Stats {
        /// Sample every N seconds until interrupted (JSON Lines with --json).
        #[arg(long, value_name = "SECONDS")]
        watch: Option<u64>,
    },
    /// Latency probe: percentiles, throughput, a concurrency sweep with a verdict.
    Probe(ProbeArgs),
    /// The audit trail.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Print shell completions.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// List objects (public ones only unless a PIN is available).
    Ls,
    /// Every attribute of one key.
    Show {
        /// label:NAME, id:HEX or handle:N
        key: String,
    },
    /// Generate a key.
    Gen(GenArgs),
    /// Delete a key (with --yes; a pair's public half is deleted with its private key).
    Rm {
        key: String,
        /// Confirm the deletion.
        #[arg(long)]
        yes: bool,
    },
    /// Issue a self-signed certificate for a key, or a certificate signing request.
    Cert(CertArgs),
    /// Write a key's public half.
    ExportPub {
        key: String,
        #[arg(long, value_enum, default_value = "pem")]
        format: PubFormat,
        /// Output file (default: stdout; DER and raw need a file).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct GenArgs {
    /// ml-dsa-44|65|87, ml-kem-512|768|1024, slh-dsa-…, hss, ec-p256, ec-p384, ed25519,
    /// rsa-2048|3072|4096, aes-128|256, generic-secret
    #[arg(long, short)]
    pub algorithm: String,
    #[arg(long, short)]
    pub label: String,
    /// Token object (persistent); otherwise a session object that ends with hsmc.
    #[arg(long)]
    pub token: bool,
    /// HSS: LMS type per level, e.g. LMS_SHA256_M32_H5,LMS_SHA256_M32_H5
    #[arg(long, value_delimiter = ',')]
    pub hss_lms: Vec<String>,
    /// HSS: LM-OTS type per level, e.g. LMOTS_SHA256_N32_W8,LMOTS_SHA256_N32_W8
    #[arg(long, value_delimiter = ',')]
    pub hss_lmots: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CertArgs {
    /// label:NAME, id:HEX or handle:N
    pub key: String,
    /// Issue a self-signed certificate (kept on the token next to the key unless --no-store).
    #[arg(long, conflicts_with = "csr", required_unless_present = "csr")]
    pub self_signed: bool,
    /// Create a PKCS#10 certificate signing request instead.
    #[arg(long)]
    pub csr: bool,
    /// Distinguished name, e.g. "CN=Release signing,O=Example".
    #[arg(long)]
    pub subject: String,
    /// Validity of a self-signed certificate, days.
    #[arg(long, default_value_t = 1095)]
    pub days: u32,
    /// Do not keep the certificate on the token.
    #[arg(long)]
    pub no_store: bool,
    /// Write the PEM here (default: stdout).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SignArgs {
    /// The artifacts.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The signing key: label:NAME or id:HEX.
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

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// random32, session-open, aes-gcm-1k, ecdsa-p256-sign, rsa-2048-sign, ed25519-sign,
    /// ml-dsa-65-sign, ml-dsa-65-verify, ml-kem-768-encaps, ml-kem-768-decaps, hss-sign, …
    #[arg(long, required_unless_present = "list")]
    pub op: Option<String>,
    /// What this partition offers.
    #[arg(long)]
    pub list: bool,
    /// Fixed number of calls (default 1000).
    #[arg(long, conflicts_with_all = ["duration", "rate"])]
    pub iterations: Option<u64>,
    /// Fixed duration, seconds.
    #[arg(long)]
    pub duration: Option<f64>,
    /// Fixed arrival rate, calls per second (with --duration, default 10 s), latency from each
    /// call's scheduled start.
    #[arg(long)]
    pub rate: Option<f64>,
    #[arg(long, default_value_t = 1, conflicts_with = "sweep")]
    pub workers: u32,
    /// Worker counts to sweep, e.g. 1,2,4,8.
    #[arg(long, value_delimiter = ',')]
    pub sweep: Vec<u32>,
    /// Untimed calls per worker first.
    #[arg(long, default_value_t = 10)]
    pub warmup: u32,
    /// Write the JSON report here (the documented schema; --json prints it instead).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Write the results as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write a chart as SVG (the sweep for a sweep, else latency over time).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Plan capacity for this many operations per second from the measured ceiling.
    #[arg(long, value_name = "OPS_PER_S")]
    pub capacity_target: Option<f64>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PubFormat {
    Pem,
    Der,
    Raw,
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Verify the trail (or an exported file) and name the first bad record.
    Verify {
        /// Verify this JSON Lines export instead of the store.
        #[arg(long, value_name = "FILE")]
        export: Option<PathBuf>,
    },
    /// Export the trail.
    Export {
        #[arg(long, short)]
        out: PathBuf,
        #[arg(long, value_enum, default_value = "jsonl")]
        format: ExportFormat,
        /// From this time (RFC 3339).
        #[arg(long)]
        from: Option<String>,
        /// Up to this time (RFC 3339).
        #[arg(long)]
        to: Option<String>,
    },
    /// The newest records.
    Tail {
        #[arg(short = 'n', long, default_value_t = 20)]
        lines: i64,
    },
    /// The trail's state: store, key, records, checkpoints.
    Status,
    /// The signed checkpoints, each with its signature checked.
    Checkpoints,
    /// The checkpoint public key (PEM), for checking checkpoints without the console.
    PublicKey {
        /// Write it to this file (else standard output).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Jsonl,
    Csv,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
