//! Hashing a 1 GiB artifact: the console's streaming digests (SHA-256, as a CMS or OpenPGP
//! signature with a P-256 key and SHA256SUMS need; a bundle adds SHA-512 in parallel) against
//! `sha256sum` on the same file, in one run.
//!
//! `cargo bench -p hsmc-signing --bench hashing` prints one JSON line. Rounds alternate which
//! goes first; medians are compared; the file is read once beforehand so both see a warm
//! page cache. Target: ratio (console throughput / sha256sum throughput) ≥ 0.9.
//! `HASH_BENCH_MIB` changes the size (default 1024).

use std::io::Write;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mib: u64 = std::env::var("HASH_BENCH_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("artifact-{mib}MiB.bin"));
    if std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) != mib << 20 {
        let mut f = std::fs::File::create(&path).unwrap();
        let mut block = vec![0u8; 1 << 20];
        for i in 0..mib {
            for (j, b) in block.iter_mut().enumerate() {
                *b = (i as usize * 131 + j * 7) as u8;
            }
            f.write_all(&block).unwrap();
        }
        f.sync_all().unwrap();
    }
    let input = signing::input::check(&path).unwrap();
    let ours = || {
        let t = Instant::now();
        let d = signing::hashing::hash_file(&input, &[], &|_| {}, &AtomicBool::new(false)).unwrap();
        (t.elapsed(), d.sha256)
    };
    let theirs = || {
        let t = Instant::now();
        let o = Command::new("sha256sum")
            .arg(&path)
            .output()
            .expect("sha256sum");
        assert!(o.status.success());
        (
            t.elapsed(),
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string(),
        )
    };
    // Warm the page cache, and check both compute the same digest.
    let (_, a) = ours();
    let (_, b) = theirs();
    assert_eq!(a, b, "the console and sha256sum disagree");
    let (mut o, mut t) = (Vec::new(), Vec::new());
    for r in 0..ROUNDS {
        if r % 2 == 0 {
            o.push(ours().0);
            t.push(theirs().0);
        } else {
            t.push(theirs().0);
            o.push(ours().0);
        }
    }
    let (o, t) = (median(o), median(t));
    let size = (mib << 20) as f64;
    let ratio = t.as_secs_f64() / o.as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "bench": "hashing",
            "mib": mib,
            "console_mib_per_s": size / o.as_secs_f64() / 1048576.0,
            "sha256sum_mib_per_s": size / t.as_secs_f64() / 1048576.0,
            "console_digests": "SHA-256 (what a CMS or OpenPGP signature with a P-256 key needs)",
            "ratio": ratio,
            "target": ">= 0.9",
            "met": ratio >= 0.9,
        })
    );
}
