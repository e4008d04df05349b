//! `hsmc ha …` on the command line.

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct HaArgs {
    #[command(subcommand)]
    pub command: Option<HaCommand>,
}

#[derive(Debug, Subcommand)]
pub enum HaCommand {
    /// Compare the members object by object.
    ///
    /// The objects' class, key type, label, CKA_ID, public-key
    /// fingerprint, KCV, modifiable/extractable/sensitive and the partition policies.
    /// Exit 3 when they differ or a member is down.
    Drift,
}
