//! `hsmc probe` on the command line.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// random32, session-open, aes-gcm-1k, ecdsa-p256-sign, rsa-2048-sign, ed25519-sign,
    /// ml-dsa-65-sign, ml-dsa-65-verify, ml-kem-768-encaps, ml-kem-768-decaps, hss-sign,
    /// hss-m24-sign (SHA-256/192), slh-dsa-sha2-128f-sign, slh-dsa-shake-256s-verify (every
    /// SLH-DSA set), … (--list shows them all)
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
    /// How each call reaches the token: pool (as the console does), session-per-call
    /// (C_OpenSession/C_CloseSession around every call) or find-per-call (C_FindObjects for
    /// the key before every call).
    #[arg(long, default_value = "pool", value_parser = ["pool", "session-per-call", "find-per-call"], conflicts_with = "integration")]
    pub profile: String,
    /// The integration profile: the same probe through the pool, with a session per call
    /// and with a find per call, side by side (where gaps between applications come from).
    #[arg(long, conflicts_with_all = ["sweep", "out", "csv", "svg", "capacity_target"])]
    pub integration: bool,
}
