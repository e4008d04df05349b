//! Verifying a large audit trail the way the app does: `Console::audit_verify` on the
//! console's own trail (its MAC key unwrapped by the HSM at login, the checkpoint key pinned
//! from the HSM), with the progress callback the app's `audit_verify` command gives it,
//! each event serialized to JSON as the app's IPC channel does, and the verification's own
//! audit record written at the end.
//!
//! `cargo bench -p hsmc-console --bench audit_verify` prints one JSON line per store
//! (SQLite in the data folder, then a PostgreSQL database): the wall time from the call to
//! the verdict, records per second, the progress events sent, and raw HMAC-SHA256 over the
//! same encoded records in the same run (the ratio is the one `audit throughput` reports
//! for the store alone); twice: right after the fill (`first_wall_s`, `first_ratio`), then
//! with the database vacuumed and analyzed as autovacuum keeps a long-lived trail.
//! `AUDIT_APP_RECORDS` (default 1,000,000) sets the trail's size; the trail is filled in
//! large transactions and sealed into blocks before the clock starts.
//!
//! Then what a checkpoint costs on that trail (the console signs one every 100 records):
//! the first, with no earlier checkpoint to carry its digest chain on from, reads every
//! record (`first_checkpoint_s`, what every checkpoint cost while the chain was computed
//! from record 1); the next, one record later, carries on from it (`next_checkpoint_s`).

#[path = "../tests/console/common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use audit::testing::{fill_trail, raw_hmac_per_s};
use console::views::{JobEvent, UserKind};
use testkit::{Backend, TestToken};

/// One verification as the app's command runs it.
struct Timed {
    records: i64,
    secs: f64,
    per_s: f64,
    events: u64,
}

async fn verify_once(c: &console::Console) -> Timed {
    // What the app's command does with each progress report: a JSON message on its channel.
    let events = AtomicU64::new(0);
    let progress = |done: i64, total: i64| {
        let msg = serde_json::to_vec(&JobEvent::Progress { done, total }).unwrap();
        std::hint::black_box(msg);
        events.fetch_add(1, Ordering::Relaxed);
    };
    let t = Instant::now();
    let v = c
        .trail()
        .audit_verify(&progress, &AtomicBool::new(false))
        .await
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let records = match &v {
        audit::Verdict::Intact { records, .. } => *records,
        other => panic!("the bench trail must verify: {other:?}"),
    };
    Timed {
        records,
        secs,
        per_s: records as f64 / secs,
        events: events.load(Ordering::Relaxed),
    }
}

async fn run(token: &TestToken, store: &str, audit_location: Option<String>, n: i64) {
    let (c, pid, _dir) = common::console_on_module(&token.module_path, audit_location).await;
    c.login(&pid, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    // The key of the trail's current epoch, as the console unwrapped it at login.
    let log = c.audit();
    let keys = log.chain_keys().await.expect("the trail is unlocked");
    let (epoch, key) = keys.into_iter().next_back().expect("a key epoch");
    let encoded = fill_trail(log.store(), log.log_id(), epoch, &key, n).await;
    // Sealed into blocks as the console's appends would have sealed it.
    log.store()
        .seal(log.log_id(), log.config().block_size, usize::MAX)
        .await
        .unwrap();
    let baseline = raw_hmac_per_s(&key, &encoded);
    drop(encoded);

    // Twice: right after the fill, when PostgreSQL sets hint bits on every tuple it reads
    // for the first time (writing while it verifies) and autovacuum may start on the fresh
    // million rows beside it; and again once the database is maintained, as a trail
    // written over weeks has long been by autovacuum.
    let first = verify_once(&c).await;
    audit::testing::maintain(log.store()).await;
    let again = verify_once(&c).await;
    assert!(first.records >= n, "verified {} of {n}", first.records);

    let t = Instant::now();
    let cp1 = log.checkpoint().await.unwrap();
    let first_checkpoint = t.elapsed().as_secs_f64();
    log.append(audit::Event::new("key.sign", "private_key"))
        .await
        .unwrap();
    let t = Instant::now();
    let cp2 = log.checkpoint().await.unwrap();
    let next_checkpoint = t.elapsed().as_secs_f64();
    assert_eq!(
        cp2.seq,
        cp1.seq + 1,
        "one record between the two checkpoints"
    );
    let ratio = |v: &Timed| (v.per_s / baseline * 1000.0).round() / 1000.0;
    println!(
        "{}",
        serde_json::json!({
            "case": format!("app_verify_{store}"),
            "records": again.records,
            "first_wall_s": (first.secs * 1000.0).round() / 1000.0,
            "first_ratio": ratio(&first),
            "wall_s": (again.secs * 1000.0).round() / 1000.0,
            "verified_per_s": again.per_s.round(),
            "progress_events": again.events,
            "raw_hmac_per_s": baseline.round(),
            "ratio": ratio(&again),
            "target": 0.5,
            "meets_target": ratio(&again) >= 0.5,
            "first_checkpoint_s": (first_checkpoint * 1e4).round() / 1e4,
            "next_checkpoint_s": (next_checkpoint * 1e4).round() / 1e4,
        })
    );
    c.close().await;
}

fn main() {
    let n = common::bench::count("AUDIT_APP_RECORDS", 1_000_000) as i64;
    let rt = common::bench::runtime();
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
