//! Signing release artifacts: the console against the loop a user writes instead, in one
//! run, on one fresh SoftHSM2 token with one ECDSA P-256 key.
//!
//! - console: one batch of N files of 4 KiB in the raw format — each file hashed, signed by
//!   the HSM through the pool, verified in software, written (never half), its audit record
//!   written first.
//! - baseline: per file, `openssl dgst -sha256 -binary FILE | pkcs11-tool --sign -m ECDSA
//!   --signature-format openssl` on the same token (`sh -c`, as a script would run it): a
//!   process pair per file, each loading the module and logging in.
//!
//! `cargo bench -p hsmc-console --bench signing` prints one JSON line: ms per file for
//! both and the ratio (baseline / console; target ≥ 3). `SIGN_BENCH_FILES` (default 1000)
//! sets N; the baseline checks its last signature with `openssl dgst -verify`, so both
//! sides produce a signature a user can check.

#[path = "../tests/console/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::batch_request as request;
use common::bench::files;
use console::sign::SignFormat;
use console::Console;
use testkit::TestToken;

async fn console_batch(c: &Console, pid: &str, key: &str, files: &[PathBuf]) -> Duration {
    common::bench::timed(c, pid, request(key, files, &[SignFormat::Raw])).await
}

/// The user's loop, one `sh -c 'openssl dgst … | pkcs11-tool …'` per file.
fn baseline(token: &TestToken, id_hex: &str, files: &[PathBuf]) -> Duration {
    let t = Instant::now();
    for f in files {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(
                "openssl dgst -sha256 -binary \"$1\" | pkcs11-tool --module \"$2\" --login --pin \"$3\" \
                 --sign -m ECDSA --id \"$4\" --signature-format openssl -o \"$1.tool.sig\" 2>/dev/null",
            )
            .arg("sh")
            .arg(f)
            .arg(&token.module_path)
            .arg(testkit::USER_PIN)
            .arg(id_hex);
        for (k, v) in token.env() {
            c.env(k, v);
        }
        let o = c
            .output()
            .expect("sh, openssl, pkcs11-tool (package opensc)");
        assert!(
            o.status.success(),
            "the baseline loop failed on {}",
            f.display()
        );
    }
    t.elapsed()
}

fn main() {
    let n = common::bench::count("SIGN_BENCH_FILES", 1000);
    let rt = common::bench::runtime();
    rt.block_on(async {
        let (e, g) = common::softhsm_p256("bench_p256").await;
        let (c, pid, dir, token) = (&e.c, e.pid.as_str(), &e.dir, e.token());
        let key = format!("id:{}", g.id_hex);
        // Warm both (page cache, the module, the console's key lookup).
        console_batch(c, pid, &key, &files(&dir.path().join("warm"), 3)).await;
        baseline(token, &g.id_hex, &files(&dir.path().join("warm-tool"), 3));

        let ours = console_batch(c, pid, &key, &files(&dir.path().join("console"), n)).await;
        let tool_files = files(&dir.path().join("tool"), n);
        let theirs = baseline(token, &g.id_hex, &tool_files);
        // The baseline's output is a real signature: check the last one.
        let pem = dir.path().join("console").join("bench_p256.pub.pem");
        let pem = if pem.exists() {
            pem
        } else {
            std::fs::read_dir(dir.path().join("console"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|x| x == "pem"))
                .expect("the raw format writes the public key")
        };
        let last = tool_files.last().unwrap();
        let o = Command::new("openssl")
            .args(["dgst", "-sha256", "-verify"])
            .arg(&pem)
            .arg("-signature")
            .arg(format!("{}.tool.sig", last.display()))
            .arg(last)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "the baseline's signature does not verify"
        );

        let ms = |d: Duration| d.as_secs_f64() * 1000.0 / n as f64;
        let ratio = theirs.as_secs_f64() / ours.as_secs_f64();
        println!(
            "{}",
            serde_json::json!({
                "bench": "sign_files_vs_openssl_pkcs11_tool",
                "files": n,
                "file_bytes": 4096,
                "console_ms_per_file": ms(ours),
                "baseline_ms_per_file": ms(theirs),
                "ratio": ratio,
                "target": 3.0,
                "met": ratio >= 3.0,
            })
        );
    });
}
