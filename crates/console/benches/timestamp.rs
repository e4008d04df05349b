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

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use console::settings::TimestampAuthority;
use console::sign::{OnError, SignFormat, SignRequest};
use console::views::{GenerateRequest, UserKind};
use console::Console;
use hsm::algo::{Curve, KeySpec};
use testkit::tsa::TestTsa;
use testkit::{Backend, TestToken};

fn files(dir: &Path, n: usize) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    (0..n)
        .map(|i| {
            let p = dir.join(format!("f{i}.bin"));
            std::fs::write(&p, vec![(i % 251) as u8; 4096]).unwrap();
            p.display().to_string()
        })
        .collect()
}

async fn batch(
    c: &Console,
    pid: &str,
    key: &str,
    files: Vec<String>,
    tsa: Option<TimestampAuthority>,
) -> Duration {
    let n = files.len();
    let req = SignRequest {
        key: key.into(),
        also_keys: vec![],
        files,
        formats: vec![SignFormat::Cms],
        manifest: false,
        out_dir: None,
        context: None,
        on_error: OnError::Stop,
        confirm_hss: false,
        timestamp: tsa,
        kit: None,
        chain: vec![],
        context_login: None,
    };
    let t = Instant::now();
    let r = c
        .signing()
        .sign_files(pid, req, Arc::new(|_| {}), Arc::new(AtomicBool::new(false)))
        .await
        .unwrap();
    let took = t.elapsed();
    assert_eq!(
        r.files.iter().filter(|f| f.error.is_none()).count(),
        n,
        "{:?}",
        r.files.iter().find_map(|f| f.error.clone())
    );
    took
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
    let n: usize = std::env::var("TSA_BENCH_FILES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let tsa = TestTsa::start("ec");
        let token = TestToken::new(Backend::SoftHsm);
        let (c, pid, dir) = common::console_on_module(&token.module_path, None).await;
        c.login(&pid, UserKind::User, p11::pin(testkit::USER_PIN))
            .await
            .unwrap();
        let g = c
            .admin()
            .generate_key(
                &pid,
                GenerateRequest {
                    spec: KeySpec::Ec { curve: Curve::P256 },
                    label: "bench_p256".into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
            .unwrap();
        let key = format!("id:{}", g.id_hex);
        // Warm up: the certificate for CMS is issued on first use.
        batch(&c, &pid, &key, files(&dir.path().join("warm"), 2), None).await;
        let authority = TimestampAuthority {
            url: tsa.url("ok"),
            ca_file: Some(tsa.ca().display().to_string()),
            timeout_seconds: 30,
            optional: None,
        };
        let plain = batch(&c, &pid, &key, files(&dir.path().join("plain"), n), None).await;
        let stamped = batch(
            &c,
            &pid,
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
