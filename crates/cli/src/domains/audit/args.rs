//! `hsmc audit …` on the command line.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};

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
    /// The newest records, oldest first.
    Tail {
        /// How many records.
        #[arg(short = 'n', long, default_value_t = 20)]
        lines: u64,
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

impl From<ExportFormat> for console::trail::ExportFormat {
    fn from(f: ExportFormat) -> Self {
        match f {
            ExportFormat::Jsonl => console::trail::ExportFormat::Jsonl,
            ExportFormat::Csv => console::trail::ExportFormat::Csv,
        }
    }
}
