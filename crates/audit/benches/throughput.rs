//! Audit throughput against baselines measured in the same run.
//!
//! `cargo bench -p hsmc-audit --bench throughput` prints JSON lines:
//! - `append_<store>`: chained appends per second (each its own durable transaction, with
//!   the head read and the HMAC, and the sealing of the two blocks whose ends the appends
//!   pass) vs raw inserts of the same rows without HMAC, each also its own durable
//!   transaction. Target ratio ≥ 0.8.
//! - `verify_<store>`: records verified per second over a 1,000,000-record trail (sealed
//!   into blocks as the console seals them, all but the last records) vs raw HMAC-SHA256
//!   over the same encoded bytes in memory. Target ratio ≥ 0.5. `seal_ms_per_block` is
//!   what sealing one block of the trail took (the cost an append pays once per block).
//!
//!   Each of `AUDIT_BENCH_ROUNDS` rounds (default 5) measures the baseline and then a
//!   verification; the JSON reports the medians (the upper middle for an even count) and
//!   the ratio's median, and the first round's rate (store pages not yet read since they
//!   were written) on its own.
//!
//!   Each also reports the CPU a verification used per record (median over the rounds):
//!   `client_cpu_us_per_record` in this process, and for PostgreSQL
//!   `server_cpu_us_per_record` in the server (postmaster and backends, from `/proc`) with
//!   `ratio_bound_by_server_cpu`, the ratio verification could reach if this process used
//!   no CPU and the server had all `cores` to itself, and `ratio_bound_with_the_hmac` if
//!   this process did nothing but the HMAC itself: on one machine the server's own work
//!   bounds the result.
//!
//! Set `AUDIT_BENCH_RECORDS` to verify a smaller trail (the default is 1,000,000).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use audit::encode::{ChainKey, GENESIS};
use audit::store::Store;
use audit::testing::{SoftSigner, SoftWrapper};
use audit::{AuditConfig, AuditLog, Context, Event, Record};
use testkit::stats::median;

/// Past two block ends (1,024 records a block), so the appends include two seals.
const APPENDS: usize = 2_100;

fn record(log_id: &str, seq: i64, key: &ChainKey, prev: &[u8; 32]) -> Record {
    audit::testing::sample_record(log_id, seq, 0, key, prev)
}

async fn open(location: &str) -> AuditLog {
    let mut cfg = AuditConfig::new(location);
    cfg.checkpoint_every = u64::MAX; // measure appends, not checkpoint signing
    let log = AuditLog::open(cfg, Context::local()).await.unwrap();
    log.unlock(
        Arc::new(SoftWrapper::new([7; 32], b"kek")),
        Arc::new(SoftSigner::new([9; 32])),
    )
    .await
    .unwrap();
    log
}

/// Raw inserts: the same row shape, autocommitted one by one, no chain (the store's own
/// single INSERT, without reading a head or computing a MAC).
async fn raw_inserts(store: &Store, n: usize) -> f64 {
    let key = ChainKey::new(&[1u8; 32]);
    let rows: Vec<Record> = (1..=n as i64)
        .map(|s| record("raw", s, &key, &GENESIS))
        .collect();
    let t = Instant::now();
    for r in &rows {
        let inserted = store
            .insert_optimistic(r, std::time::Duration::from_secs(5))
            .await
            .unwrap();
        assert!(inserted, "no other writer in the bench");
    }
    n as f64 / t.elapsed().as_secs_f64()
}

async fn chained_appends(log: &AuditLog, n: usize) -> f64 {
    let t = Instant::now();
    for i in 0..n {
        log.append(
            Event::new("file.sign", "artifact")
                .resource(format!("release-{i}.tar.gz"))
                .algorithm("ML-DSA-65")
                .meta("size", i * 1000)
                .meta("sha256", format!("{i:064x}"))
                .meta("format", "cms"),
        )
        .await
        .unwrap();
    }
    n as f64 / t.elapsed().as_secs_f64()
}

/// Fill a trail with `n` chained records in large transactions (setup, not measured).
async fn fill(log: &AuditLog, n: i64) -> Vec<Vec<u8>> {
    audit::testing::fill_trail(log.store(), log.log_id(), 0, &epoch0_key(), n).await
}

/// The trail's epoch-0 MAC key, recovered the way the console does: unwrap the stored key.
fn epoch0_key() -> ChainKey {
    EPOCH0.with(|k| k.borrow().clone().expect("epoch 0 key set"))
}

thread_local! {
    static EPOCH0: std::cell::RefCell<Option<ChainKey>> = const { std::cell::RefCell::new(None) };
}

async fn set_epoch0(log: &AuditLog) {
    use audit::KeyWrapper;
    let rows = log.store().keys(log.log_id()).await.unwrap();
    let wrapped = hex::decode(&rows[0].wrapped_key).unwrap();
    let key = SoftWrapper::new([7; 32], b"kek").unwrap(&wrapped).unwrap();
    EPOCH0.with(|k| *k.borrow_mut() = Some(ChainKey::new(&key)));
}

fn raw_hmac(encoded: &[Vec<u8>]) -> f64 {
    audit::testing::raw_hmac_per_s(&epoch0_key(), encoded)
}

/// What a verification cost in CPU, this process and the database server apart.
#[derive(Clone, Copy)]
struct Cpu {
    client: f64,
    server: f64,
}

/// CPU seconds so far: this process, and the PostgreSQL server when there is one (SQLite
/// runs inside this process).
fn cpu_now(server: Option<&testkit::pg::PgCluster>) -> Cpu {
    Cpu {
        client: testkit::cpu::this_process_seconds(),
        server: server.map_or(0.0, |s| s.server_cpu_seconds()),
    }
}

async fn run(
    store_name: &str,
    location: &str,
    raw_location: &str,
    n_verify: i64,
    server: Option<&testkit::pg::PgCluster>,
) {
    // Appends. The raw baseline writes to its own database (rows of another trail in this
    // one would rightly be reported as grafted).
    let log = open(location).await;
    set_epoch0(&log).await;
    let raw_store = Store::connect(raw_location, std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let raw = raw_inserts(&raw_store, APPENDS).await;
    let chained = chained_appends(&log, APPENDS).await;
    let ratio = chained / raw;
    println!(
        "{}",
        serde_json::json!({"case": format!("append_{store_name}"), "records": APPENDS, "raw_inserts_per_s": raw.round(), "appends_per_s": chained.round(), "ratio": (ratio * 1000.0).round() / 1000.0, "target": 0.8, "meets_target": ratio >= 0.8})
    );
    // Verification of a large trail, sealed as appends would have sealed it.
    let encoded = fill(&log, n_verify).await;
    let block_size = log.config().block_size;
    let t = Instant::now();
    let blocks = log
        .store()
        .seal(log.log_id(), block_size, usize::MAX)
        .await
        .unwrap()
        / block_size;
    let seal_ms_per_block = t.elapsed().as_secs_f64() * 1000.0 / blocks.max(1) as f64;
    let sealed_to = log.store().sealed_to(log.log_id()).await.unwrap();
    // A maintained database (PostgreSQL would otherwise set hint bits on every fresh tuple
    // during the first read, writing while verifying).
    audit::testing::maintain(log.store()).await;
    // Rounds of baseline then verification, so both see the same machine state; the
    // medians are compared. The first round also shows a verification whose store pages
    // have not been read since they were written.
    let rounds: usize = std::env::var("AUDIT_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let (mut baselines, mut verifies, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut client_cpu, mut server_cpu) = (Vec::new(), Vec::new());
    let mut records = 0;
    for _ in 0..rounds {
        let baseline = raw_hmac(&encoded);
        let cpu = cpu_now(server);
        let t = Instant::now();
        let v = log
            .verify(None, &|_, _| {}, &AtomicBool::new(false))
            .await
            .unwrap();
        let secs = t.elapsed().as_secs_f64();
        let used = cpu_now(server);
        client_cpu.push(used.client - cpu.client);
        server_cpu.push(used.server - cpu.server);
        records = match &v {
            audit::Verdict::Intact { records, .. } => *records,
            other => panic!("the bench trail must verify: {other:?}"),
        };
        let verified = records as f64 / secs;
        baselines.push(baseline);
        verifies.push(verified);
        ratios.push(verified / baseline);
    }
    let first = verifies[0];
    let (baseline, verified, ratio) = (median(baselines), median(verifies), median(ratios));
    // Where the time went: CPU per record in this process (scan, decode, MAC) and in the
    // database server. With the server on the same cores, its share bounds the ratio: if
    // this process used no CPU at all and the server had every core, verification could
    // not beat `records / (server CPU / cores)`.
    let per_record_us = |secs: f64| (secs / records as f64 * 1e7).round() / 10.0;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let server_secs = median(server_cpu);
    let mut json = serde_json::json!({"case": format!("verify_{store_name}"), "records": records, "sealed_records": sealed_to, "seal_ms_per_block": (seal_ms_per_block * 10.0).round() / 10.0, "rounds": rounds, "raw_hmac_per_s": baseline.round(), "verified_per_s": verified.round(), "first_round_verified_per_s": first.round(), "ratio": (ratio * 1000.0).round() / 1000.0, "target": 0.5, "meets_target": ratio >= 0.5, "client_cpu_us_per_record": per_record_us(median(client_cpu))});
    if server.is_some() {
        // Both bounds: the client doing nothing, and the client doing only the HMAC
        // itself (at the baseline's rate), the least any verifier must do.
        let bound = |client_secs: f64| {
            let secs = (server_secs + client_secs) / cores;
            ((records as f64 / secs / baseline) * 1000.0).round() / 1000.0
        };
        json["server_cpu_us_per_record"] = per_record_us(server_secs).into();
        json["cores"] = cores.into();
        json["ratio_bound_by_server_cpu"] = bound(0.0).into();
        json["ratio_bound_with_the_hmac"] = bound(records as f64 / baseline).into();
    }
    println!("{json}");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: i64 = std::env::var("AUDIT_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("bench.db").display().to_string();
    let sqlite_raw = dir.path().join("raw.db").display().to_string();
    run("sqlite", &sqlite, &sqlite_raw, n, None).await;
    let pg = testkit::pg::PgCluster::start();
    let url = pg.create_db("bench");
    let raw_url = pg.create_db("raw");
    run("postgresql", &url, &raw_url, n, Some(&pg)).await;
}
