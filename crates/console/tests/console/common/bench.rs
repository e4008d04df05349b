//! What the console's benches (`benches/*.rs`, which include this folder) share: the batch
//! size from the environment, the runtime, files of 4 KiB, one timed batch.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use console::sign::SignRequest;
use console::Console;

/// `var` from the environment as a count, else `default`.
pub fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The runtime the app gives the console: two workers.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// `n` files of 4 KiB in `dir`, each with its own bytes (its index in the first eight).
pub fn files(dir: &Path, n: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    (0..n)
        .map(|i| {
            let p = dir.join(format!("f{i}.bin"));
            let mut data = vec![(i % 251) as u8; 4096];
            data[..8].copy_from_slice(&(i as u64).to_le_bytes());
            std::fs::write(&p, data).unwrap();
            p
        })
        .collect()
}

/// The wall time of one batch on `pid` of `c`, every file of which must be signed.
pub async fn timed(c: &Console, pid: &str, req: SignRequest) -> Duration {
    let n = req.files.len();
    let t = Instant::now();
    let r = super::sign_with(c, pid, req).await.unwrap();
    let took = t.elapsed();
    let signed = r.files.iter().filter(|f| f.error.is_none()).count();
    assert_eq!(
        signed,
        n,
        "{:?}",
        r.files.iter().find_map(|f| f.error.clone())
    );
    took
}
