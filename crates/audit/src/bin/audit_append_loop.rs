//! Test helper (feature `test-support`): append records to a trail from another process,
//! printing `ACK <seq>` after each committed append. Used to check that two processes keep
//! one linear chain and that `kill -9` loses no acknowledged record.
//!
//!     audit_append_loop LOCATION COUNT TAG
//!
//! `AUDIT_BLOCK_SIZE` sets the records per sealed block (small ones make the processes
//! seal while the others append).

use std::io::Write;
use std::sync::Arc;

use audit::testing::{SoftSigner, SoftWrapper};
use audit::{AuditConfig, AuditLog, Context, Event};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let location = args.next().expect("LOCATION");
    let count: u64 = args.next().and_then(|c| c.parse().ok()).unwrap_or(u64::MAX);
    let tag = args.next().unwrap_or_else(|| "child".into());
    let mut cfg = AuditConfig::new(location);
    cfg.checkpoint_every = 50;
    cfg.lock_timeout = std::time::Duration::from_secs(30);
    if let Some(size) = std::env::var("AUDIT_BLOCK_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        cfg.block_size = size;
    }
    let log = AuditLog::open(cfg, Context::local()).await.expect("open");
    log.unlock(
        Arc::new(SoftWrapper::new([7; 32], b"kek")),
        Arc::new(SoftSigner::new([9; 32])),
    )
    .await
    .expect("unlock");
    let mut out = std::io::stdout().lock();
    for i in 0..count {
        let r = log
            .append(
                Event::new("test.append", "test")
                    .resource(format!("{tag}-{i}"))
                    .meta("i", i),
            )
            .await
            .expect("append");
        writeln!(out, "ACK {}", r.seq).unwrap();
        out.flush().unwrap();
    }
}
