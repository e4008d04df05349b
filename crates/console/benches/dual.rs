//! Dual signing against two single-key runs, in one run on the built-in partition (lunasim
//! over Kryoptic): N files of 4 KiB signed in CMS and raw by Ed25519 + ML-DSA-65 in one
//! batch (`also_keys`: the files hashed once, the second key's CMS signer joined to the
//! `.p7s` the first wrote, every output named for its key), against the same formats signed
//! by each key alone in a batch of its own (other copies of the files).
//!
//! `cargo bench -p hsmc-console --bench dual` prints one JSON line: ms per file for each
//! single-key run and for the dual run, and the ratio dual / (Ed25519 + ML-DSA-65), target
//! ≤ 1.1. `DUAL_BENCH_FILES` (default 1000) sets N; every file of every run must be signed,
//! and the last dual `.p7s` must hold both signers, or the bench fails.

#[path = "../tests/console/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::batch_request as request;
use common::bench::files;
use console::sign::SignFormat;
use hsm::algo::{Curve, KeySpec, MlDsaSet};

/// One batch by `keys` (the first, then the others as `also_keys`); its wall time.
async fn batch(e: &common::Env, keys: &[&str], files: &[PathBuf]) -> Duration {
    let mut req = request(
        &format!("label:{}", keys[0]),
        files,
        &[SignFormat::Cms, SignFormat::Raw],
    );
    req.also_keys = keys[1..].iter().map(|k| format!("label:{k}")).collect();
    common::bench::timed(&e.c, &e.pid, req).await
}

fn main() {
    let n = common::bench::count("DUAL_BENCH_FILES", 1000);
    let rt = common::bench::runtime();
    rt.block_on(async {
        let e = common::builtin().await;
        let (ed, ml) = ("bench_ed25519", "bench_mldsa65");
        e.generate(
            KeySpec::Ec {
                curve: Curve::Ed25519,
            },
            ed,
        )
        .await;
        e.generate(KeySpec::MlDsa { set: MlDsaSet::P65 }, ml).await;
        let dir = e.dir.path().to_path_buf();
        // Warm up: each key's certificate for CMS is issued here, the pool and the module
        // are warm, the page cache holds the code.
        batch(&e, &[ed, ml], &files(&dir.join("warm"), 5)).await;
        let one_ed = batch(&e, &[ed], &files(&dir.join("ed"), n)).await;
        let one_ml = batch(&e, &[ml], &files(&dir.join("ml"), n)).await;
        let dual_files = files(&dir.join("dual"), n);
        let dual = batch(&e, &[ed, ml], &dual_files).await;
        let last = std::fs::read(format!("{}.p7s", dual_files[n - 1].display())).unwrap();
        assert_eq!(signing::cms::parse_signers(&last).unwrap().len(), 2);

        let ms = |d: Duration| d.as_secs_f64() * 1000.0 / n as f64;
        let ratio = dual.as_secs_f64() / (one_ed + one_ml).as_secs_f64();
        println!(
            "{}",
            serde_json::json!({
                "bench": "dual_sign_vs_two_single_key_runs",
                "files": n,
                "file_bytes": 4096,
                "formats": ["cms", "raw"],
                "keys": ["Ed25519", "ML-DSA-65"],
                "token": "lunasim over Kryoptic (built-in partition)",
                "ed25519_ms_per_file": ms(one_ed),
                "ml_dsa_65_ms_per_file": ms(one_ml),
                "dual_ms_per_file": ms(dual),
                "ratio": ratio,
                "target": 1.1,
                "met": ratio <= 1.1,
            })
        );
    });
}
