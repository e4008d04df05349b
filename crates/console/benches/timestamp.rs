//! CMS with an RFC 3161 timestamp per file against the local TSA (`openssl ts -reply` behind
//! the test handler on 127.0.0.1, testkit::tsa), compared with CMS alone, in one run, on a
//! fresh SoftHSM2 token with an ECDSA P-256 key: each file signed, its token asked for and
//! checked (status, imprint, nonce, the TSA's signature, EKU, chain to the CA), verified
//! and written, with the audit record.
//!
//! `cargo bench -p hsmc-console --bench timestamp` prints one JSON line: ms per file with and
//! without the TSA and what the timestamp adds. `TSA_BENCH_FILES` (default 100) sets the
//! batch size. Most of the added time is the TSA itself: one `openssl ts -reply` process per
//! request (it is measured alone, too, as `tsa_ms_per_request`).

#[path = "../tests/console/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::batch_request as request;
use common::bench::files;
use console::settings::TimestampAuthority;
use console::sign::SignFormat;
use console::Console;
use testkit::tsa::TestTsa;

async fn batch(
    c: &Console,
    pid: &str,
    key: &str,
    files: Vec<PathBuf>,
    tsa: Option<TimestampAuthority>,
) -> Duration {
    let mut req = request(key, &files, &[SignFormat::Cms]);
    req.timestamp = tsa;
    common::bench::timed(c, pid, req).await
}

/// One `openssl ts -reply` for a fixed query: the TSA's own cost per request.
fn tsa_alone(tsa: &TestTsa, rounds: usize) -> Duration {
    let d = tsa.dir.path();
    let q: PathBuf = d.join("bench.tsq");
    let data = d.join("bench.data");
    std::fs::write(&data, b"bench").unwrap();
    let o = Command::new("openssl")
        .args(["ts", "-query", "-data"])
        .arg(&data)
        .args(["-sha256", "-cert", "-out"])
        .arg(&q)
        .output()
        .unwrap();
    assert!(o.status.success());
    let t = Instant::now();
    for _ in 0..rounds {
        let o = Command::new("openssl")
            .args(["ts", "-reply", "-config"])
            .arg(d.join("tsa.cnf"))
            .args(["-section", "tsa_ok", "-queryfile"])
            .arg(&q)
            .args(["-out", "/dev/null"])
            .output()
            .unwrap();
        assert!(o.status.success());
    }
    t.elapsed() / rounds as u32
}

fn main() {
    let n = common::bench::count("TSA_BENCH_FILES", 100);
    let rt = common::bench::runtime();
    rt.block_on(async {
        let tsa = TestTsa::start("ec");
        let (e, g) = common::softhsm_p256("bench_p256").await;
        let (c, pid, dir) = (&e.c, e.pid.as_str(), &e.dir);
        let key = format!("id:{}", g.id_hex);
        // Warm up: the certificate for CMS is issued on first use.
        batch(c, pid, &key, files(&dir.path().join("warm"), 2), None).await;
        let authority = TimestampAuthority {
            url: tsa.url("ok"),
            ca_file: Some(tsa.ca().display().to_string()),
            timeout_seconds: 30,
            optional: None,
        };
        let plain = batch(c, pid, &key, files(&dir.path().join("plain"), n), None).await;
        let stamped = batch(
            c,
            pid,
            &key,
            files(&dir.path().join("stamped"), n),
            Some(authority),
        )
        .await;
        let alone = tsa_alone(&tsa, 20);
        let ms = |d: Duration| d.as_secs_f64() * 1000.0 / n as f64;
        println!(
            "{}",
            serde_json::json!({
                "bench": "cms_timestamp_per_file",
                "files": n,
                "file_bytes": 4096,
                "cms_ms_per_file": ms(plain),
                "cms_tsa_ms_per_file": ms(stamped),
                "added_ms_per_file": ms(stamped) - ms(plain),
                "tsa_ms_per_request": alone.as_secs_f64() * 1000.0,
            })
        );
    });
}
