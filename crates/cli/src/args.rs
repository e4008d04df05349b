//! The command line, as clap sees it (also the source of the completions and man page):
//! the global options and the subcommands; each domain's own arguments live next to its
//! handlers (`domains/*/args.rs`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use console::views::UserKind;

pub use crate::domains::admin::args::{PinCommand, TokenCommand};
pub use crate::domains::audit::args::AuditCommand;
pub use crate::domains::git::args::GitSshArgs;
pub use crate::domains::git::gpg_args::GitGpgArgs;
pub use crate::domains::ha::args::HaArgs;
pub use crate::domains::keys::args::KeysCommand;
pub use crate::domains::objects::args::ObjectsCommand;
pub use crate::domains::pqc::args::PqcArgs;
pub use crate::domains::probe::args::ProbeArgs;
pub use crate::domains::sign::args::{SignArgs, TimestampArgs, VerifyArgs};
pub use crate::domains::status::StatusArgs;
pub use crate::domains::usage::args::UsageArgs;

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

/// `--role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    /// The user: Luna's Crypto Officer.
    Co,
    /// Luna's Crypto User.
    Cu,
    /// Luna's Limited Crypto Officer.
    Lco,
    /// The security officer.
    So,
}

impl RoleArg {
    pub fn user_kind(self) -> UserKind {
        match self {
            RoleArg::Co => UserKind::User,
            RoleArg::Cu => UserKind::CryptoUser,
            RoleArg::Lco => UserKind::LimitedCryptoOfficer,
            RoleArg::So => UserKind::So,
        }
    }
}

#[derive(Debug, Args)]
pub struct Global {
    /// PKCS#11 library path, a remembered module's name (e.g. softhsm), or `builtin`.
    #[arg(long, global = true, env = "HSMC_MODULE", default_value = "builtin")]
    pub module: String,
    /// Slot number.
    #[arg(long, global = true, env = "HSMC_SLOT")]
    pub slot: Option<u64>,
    /// Token label, or a PKCS#11 URI (`pkcs11:token=…;serial=…`, with `slot-id=` and
    /// `?module-path=`) — before the subcommand; `keys gen --token` means something else.
    #[arg(long = "token", env = "HSMC_TOKEN", value_name = "LABEL|URI")]
    pub token_label: Option<String>,
    /// Read the PIN from the first line of this file.
    #[arg(
        long,
        global = true,
        env = "HSMC_PIN_FILE",
        value_name = "PATH",
        conflicts_with = "pin_fd"
    )]
    pub pin_file: Option<PathBuf>,
    /// Read the PIN from this open file descriptor.
    #[arg(long, global = true, value_name = "N")]
    pub pin_fd: Option<u32>,
    /// Log in as the security officer instead of the user (the same as `--role so`).
    #[arg(long, global = true, conflicts_with = "role")]
    pub so: bool,
    /// Who logs in: co (the user; Luna's Crypto Officer), cu (Luna's Crypto User), lco
    /// (Luna's Limited Crypto Officer) or so.
    #[arg(
        long,
        global = true,
        env = "HSMC_ROLE",
        value_enum,
        value_name = "ROLE"
    )]
    pub role: Option<RoleArg>,
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
    /// Messages for people in this language: en, zh-Hant (繁體中文), zh-Hans (简体中文).
    /// Default: LC_ALL, LC_MESSAGES or LANG. Tables, JSON and error codes stay English.
    #[arg(long, global = true, value_name = "LANG")]
    pub lang: Option<String>,
}

impl Global {
    /// `--lang`, else the terminal's locale.
    pub fn language(&self) -> console::i18n::Lang {
        match &self.lang {
            Some(l) => console::i18n::Lang::parse(l),
            None => console::i18n::Lang::from_env(),
        }
    }
}

/// Every subcommand; the order here is the order of `hsmc --help`.
// Parsed once per process: the size of its largest variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Hsm(HsmCommand),
    #[command(flatten)]
    Shell(ShellCommand),
}

/// The subcommands that open the console (its settings, audit trail, modules).
#[derive(Debug, Subcommand)]
pub enum HsmCommand {
    /// The module: library, version, interface, Luna functions.
    Info,
    /// Slots and their tokens, with PIN state flags.
    Slots,
    /// Every mechanism the token lists, named or as hex.
    Mechanisms,
    /// Keys and other objects.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Sign release artifacts with an HSM key.
    ///
    /// Every signature is verified in software before it is written.
    Sign(SignArgs),
    /// Verify a file against a signature offline (software verifiers only).
    Verify(VerifyArgs),
    /// git's SSH signing program (gpg.format ssh).
    ///
    /// `-Y sign -n git -f KEYFILE FILE` signs with the HSM key whose public key KEYFILE holds (user.signingkey, from `keys
    /// ssh-pub`) and writes FILE.sig; verification is ssh-keygen's, run unchanged.
    ///
    /// git runs gpg.ssh.program without arguments of its own: point it at a script that
    /// runs `exec hsmc git-ssh "$@"` (see the git SSH signing chapter of the guide).
    GitSsh(GitSshArgs),
    /// git's OpenPGP signing program (gpg.format openpgp, gpg.program `hsmc-gpg`).
    ///
    /// `--status-fd=2 -bsau KEYID` signs the payload on standard input with the HSM key whose OpenPGP
    /// certificate (`keys openpgp`) has that fingerprint or key ID (user.signingkey), writing
    /// the armored signature and gpg's SIG_CREATED status line; `--verify` is gpg's, run
    /// unchanged.
    ///
    /// `hsmc-gpg`, installed beside `hsmc`, runs this with gpg's arguments; options come from
    /// HSMC_* variables (HSMC_MODULE, HSMC_TOKEN, HSMC_PIN or HSMC_PIN_FILE).
    GitGpg(GitGpgArgs),
    /// Add an RFC 3161 time-stamp to a signature made earlier, in place.
    ///
    /// The signature is a CMS (.p7s) or bundle (.sig.json); the HSM is not used.
    Timestamp(TimestampArgs),
    /// Everything at a glance: each partition and what needs attention.
    ///
    /// Each partition (login, PIN state, load, breaker) and what needs attention across them
    /// (keys running out, certificates expiring, the audit trail, failed operations of the
    /// last 24 h). Exit 1 when anything does — also on a new partition, whose audit trail
    /// was never verified: `hsmc audit verify` clears that. The app calls this view the
    /// Overview; `hsmc overview` is the same command.
    #[command(visible_alias = "overview")]
    Status(StatusArgs),
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
    /// PINs: change the one you log in with, or set another role's.
    #[command(subcommand)]
    Pin(PinCommand),
    /// The token itself: initialize it.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Certificates, public keys and data objects: import, list, export.
    #[command(subcommand)]
    Objects(ObjectsCommand),
    /// The PKCS#11 URI (RFC 7512) of a key or object, for other tools.
    Uri {
        /// label:NAME, id:HEX, uid:UNIQUE-ID, handle:N or a pkcs11: URI
        key: String,
        /// Also print command lines of other tools using the key (OpenSSL, osslsigncode,
        /// sbsign, p11tool), each with the tool's check of what it made.
        #[arg(long)]
        commands: bool,
        /// Test the line of TOOL (its name as --commands prints it, or the start of it:
        /// osslsigncode, sbsign, p11tool): run it as printed against a throwaway file with
        /// this session's PIN, then the tool's check; exit status 1 when either fails
        #[arg(long, value_name = "TOOL")]
        test: Option<String>,
    },
    /// The audit trail.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// HA groups: members, alive/down, needs sync, statistics.
    ///
    /// `ha drift` compares the members object by object.
    Ha(HaArgs),
    /// Luna keys with a usage limit (uses left, burn rate); `usage set` sets or raises one.
    Usage(UsageArgs),
    /// Post-quantum readiness of every key under a policy.
    ///
    /// Each key's algorithm, category and quantum class under a policy (exit 1 when anything
    /// is past due).
    Pqc(PqcArgs),
}

/// The subcommands that only print what the command line is.
#[derive(Debug, Subcommand)]
pub enum ShellCommand {
    /// Print shell completions.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
    /// Write the command reference as Markdown, a page per command, into DIR.
    Reference {
        #[arg(long, value_name = "DIR")]
        out: std::path::PathBuf,
    },
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
