//! Verifying a large audit trail the way the app does: `Console::audit_verify` on the
//! console's own trail (its MAC key unwrapped by the HSM at login, the checkpoint key pinned
//! from the HSM), with the progress callback the app's `audit_verify` command gives it,
//! each event serialized to JSON as the app's IPC channel does, and the verification's own
//! audit record written at the end.
//!
//! `cargo bench -p console@0.1.0 --bench audit_verify` prints one JSON line per store
//! (SQLite in the data folder, then a PostgreSQL database): the wall time from the call to
//! the verdict, records per second, the progress events sent, and raw HMAC-SHA256 over the
//! same encoded records in the same run (the ratio is the one `audit throughput` reports
//! for the store alone). `AUDIT_APP_RECORDS` (default 1,000,000) sets the trail's size; the
//! trail is filled in large transactions before the clock starts.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use audit::encode::{self, GENESIS};
use audit::testing::{raw_hmac_per_s, sample_record};
use console::views::{JobEvent, UserKind};
use console::{Console, ConsoleConfig};
use testkit::{Backend, TestToken};

/// Append chained records after the trail's head until it holds `n`, with the key of the
/// current epoch; returns the encoded records (for the raw HMAC baseline).
async fn fill(c: &Console, n: i64) -> Vec<Vec<u8>> {
    let log = c.audit();
    let keys = log.chain_keys().await.expect("the trail is unlocked");
    let (epoch, key) = keys.into_iter().next_back().expect("a key epoch");
    let mut encoded = Vec::with_capacity(n as usize);
    loop {
        let head = log.store().head(log.log_id()).await.unwrap();
        let done = head.as_ref().map(|h| h.0).unwrap_or(0);
        if done >= n {
            return encoded;
        }
        let batch = 10_000.min(n - done);
        let (log_id, k) = (log.log_id().to_string(), key.clone());
        let recs = log
            .store()
            .append_with(
                log.log_id(),
                Duration::from_secs(30),
                false,
                move |head, _| {
                    let (mut seq, mut prev) = match head {
                        Some((s, h)) => (s, encode::hex32(&h).unwrap()),
                        None => (0, GENESIS),
                    };
                    let mut out = Vec::with_capacity(batch as usize);
                    for _ in 0..batch {
                        seq += 1;
                        let r = sample_record(&log_id, seq, epoch, &k, &prev);
                        prev = encode::hex32(&r.hmac_chain).unwrap();
                        out.push(r);
                    }
                    Ok(out)
                },
            )
            .await
            .unwrap()
            .expect("no other writer during the fill");
        encoded.extend(recs.iter().map(encode::encode));
    }
}

async fn run(token: &TestToken, store: &str, audit_location: Option<String>, n: i64) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ConsoleConfig::new(dir.path().join("data"));
    cfg.builtin = false;
    cfg.audit_location = audit_location;
    let c = Console::open(cfg).await.unwrap();
    let m = c
        .add_module(&token.module_path.display().to_string())
        .await
        .unwrap();
    let pid = c
        .slots(&m.id)
        .await
        .unwrap()
        .into_iter()
        .find_map(|s| s.partition_id)
        .unwrap();
    c.login(&pid, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    let encoded = fill(&c, n).await;
    let key = c
        .audit()
        .chain_keys()
        .await
        .unwrap()
        .into_values()
        .next_back()
        .unwrap();
    let baseline = raw_hmac_per_s(&key, &encoded);
    drop(encoded);

    // What the app's command does with each progress report: a JSON message on its channel.
    let events = AtomicU64::new(0);
    let bytes = AtomicU64::new(0);
    let progress = |done: i64, total: i64| {
        let msg = serde_json::to_vec(&JobEvent::Progress { done, total }).unwrap();
        events.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(msg.len() as u64, Ordering::Relaxed);
    };
    let t = Instant::now();
    let v = c
        .audit_verify(&progress, &AtomicBool::new(false))
        .await
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let records = match &v {
        audit::Verdict::Intact { records, .. } => *records,
        other => panic!("the bench trail must verify: {other:?}"),
    };
    assert!(records >= n, "verified {records} of {n}");
    let per_s = records as f64 / secs;
    println!(
        "{}",
        serde_json::json!({
            "case": format!("app_verify_{store}"),
            "records": records,
            "wall_s": (secs * 1000.0).round() / 1000.0,
            "verified_per_s": per_s.round(),
            "progress_events": events.load(Ordering::Relaxed),
            "raw_hmac_per_s": baseline.round(),
            "ratio": (per_s / baseline * 1000.0).round() / 1000.0,
            "target": 0.5,
            "meets_target": per_s / baseline >= 0.5,
        })
    );
    c.close().await;
}

fn main() {
    let n: i64 = std::env::var("AUDIT_APP_RECORDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // One token per process (its module configuration is process-global); each console
    // makes its own trail key on it.
    let token = TestToken::new(Backend::SoftHsm);
    rt.block_on(async {
        run(&token, "sqlite", None, n).await;
        let pg = testkit::pg::PgCluster::start();
        let url = pg.create_db("app_verify");
        run(&token, "postgresql", Some(url), n).await;
    });
}
