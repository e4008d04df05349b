//! `hsmc pqc` on the command line.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct PqcArgs {
    /// The policy: nist (NIST IR 8547), cnsa2 (CNSA 2.0), or a TOML policy file (a path,
    /// or the name of a file in the data folder's policies/).
    #[arg(long, default_value = "nist", value_name = "nist|cnsa2|FILE")]
    pub policy: String,
    /// Every partition the console has open, not only the one selected.
    #[arg(long)]
    pub all: bool,
    /// Write a CycloneDX 1.6 CBOM of the keys to FILE (never over an existing file)
    /// instead of printing the table.
    #[arg(long, value_name = "FILE")]
    pub cbom: Option<PathBuf>,
}
