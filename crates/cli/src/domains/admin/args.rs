//! `hsmc pin …` and `hsmc token …` on the command line.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// Where the new PIN comes from (else `HSMC_NEW_PIN`, else a prompt asked twice).
#[derive(Debug, Args)]
pub struct NewPinArgs {
    /// Read the new PIN from the first line of this file.
    #[arg(long, value_name = "PATH", conflicts_with = "new_pin_fd")]
    pub new_pin_file: Option<PathBuf>,
    /// Read the new PIN from this open file descriptor.
    #[arg(long, value_name = "N")]
    pub new_pin_fd: Option<u32>,
}

#[derive(Debug, Subcommand)]
pub enum PinCommand {
    /// Change the PIN of the role you log in as (`--so`, `--role`).
    ///
    /// The current PIN from the usual sources, the new one from HSMC_NEW_PIN, --new-pin-file, --new-pin-fd or a
    /// prompt asked twice. Checked against the token's length range first.
    Change(NewPinArgs),
    /// Set another role's PIN (the user's as SO; a Luna CU's or LCO's as Crypto Officer).
    ///
    /// The user's, as the security officer (C_InitPIN; also unlocks
    /// a locked user PIN), or a Luna Crypto User's or Limited Crypto Officer's, as the
    /// Crypto Officer (CA_InitRolePIN). The logging-in PIN from the usual sources.
    Init {
        /// Whose PIN: user (logs in as SO), cu or lco (log in as the Crypto Officer).
        #[arg(long = "for", value_enum, default_value = "user")]
        target: PinTarget,
        #[command(flatten)]
        new_pin: NewPinArgs,
    },
}

/// Whose PIN `pin init` sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PinTarget {
    User,
    Cu,
    Lco,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Initialize the token (C_InitToken): every object on it is destroyed.
    ///
    /// The SO PIN from the usual sources (HSMC_PIN, --pin-file, --pin-fd, a prompt).
    Init {
        /// The new label (at most 32 bytes).
        #[arg(long)]
        label: String,
        /// Confirm that everything on the token is destroyed.
        #[arg(long)]
        yes: bool,
        /// Also confirm that the audit trail's key goes with it (the partition holding it).
        #[arg(long)]
        destroy_audit_key: bool,
    },
}
