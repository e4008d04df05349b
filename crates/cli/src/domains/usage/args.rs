//! `hsmc usage …` on the command line.

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct UsageArgs {
    #[command(subcommand)]
    pub command: Option<UsageCommand>,
}

#[derive(Debug, Subcommand)]
pub enum UsageCommand {
    /// Set or raise a key's usage limit (Luna; the crypto officer, or the SO with --so).
    Set {
        /// label:NAME, id:HEX or uid:UNIQUE-ID (`hsmc keys ls` shows them); not handle:N,
        /// which may name another object in another run
        key: String,
        /// The number of operations the key may perform in all (1 to 4294967295).
        #[arg(long)]
        limit: u64,
    },
}
