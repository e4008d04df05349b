//! HSS on lunasim: time per signature at several tree sizes against H5/H5 in the same run,
//! and key generation time per configuration — with SHA-256 (M32/N32) and RFC 9858's
//! SHA-256/192 (M24/N24) side by side.
//!
//! `cargo bench -p hsmc-lunasim --bench hss` (or `scripts/bench.sh hss`) prints one JSON object
//! per line (`"hash"`: `"M32"` or `"M24"`; an M24 configuration is named `M24 H10/H10`):
//! - `{"bench":"hss","kind":"keygen","config":"H10/H10","hash":"M32","lmots":"W4","leaves":2048,"seconds":…}`
//!   for every configuration, and for one H10 tree of each LM-OTS type and hash
//!   (`"per_leaf_ms"`: what the console's key-generation estimate is calibrated from);
//! - `{"kind":"sign","config":…,"signatures":…,"mean_ms","p50_ms","p99_ms","max_ms","first_ms"}`:
//!   `C_Sign` of a 30 kB message (the whole call, persistence included), the keys taking
//!   turns in ten rounds;
//! - `{"kind":"summary","baseline":"H5/H5","ratio_mean":{…},"target":2.0,"met":…,
//!   "m24":{"baseline":"M24 H5/H5","ratio_mean":{…},"met":…,"vs_m32":{…}}}` — `vs_m32`: each
//!   M24 configuration's mean over the M32 one of the same heights.
//!
//! Target (issue 20): the mean time per signature at H10/H10, H15/H10, H10/H15 and H20/H10
//! within 2× of H5/H5 (for M24, of M24 H5/H5).
//!
//! Environment: `HSS_BENCH_MODULE` — another lunasim build to measure (an earlier version,
//! for a before/after); `HSS_BENCH_SIGNATURES` — signatures per configuration (default
//! 300); `HSS_BENCH_CONFIGS` — a subset, e.g. `5/5,10/10`; `HSS_BENCH_HASHES` — `M32`,
//! `M24` or both (default `M32,M24`); `HSS_BENCH_LMOTS` — W1, W2, W4 or W8 (default W4; key
//! generation scales with it, see the per-leaf lines); `HSS_BENCH_PER_LEAF=0` skips the
//! per-LM-OTS-type key generations.

use std::path::PathBuf;
use std::time::Instant;

use hsm::algo::{HssParams, KeySpec, LmotsType, LmsType};
use hsm::keys;
use hsm::templates::KeyAttrs;
use p11::sys::*;
use p11::{Mechanism, Module, Session, UserType};
use serde_json::json;

/// The LMS type of height `h` with `m`-byte nodes (32: SHA-256, 24: SHA-256/192).
fn lms(h: u32, m: usize) -> LmsType {
    let t = match h {
        5 => LmsType::H5,
        10 => LmsType::H10,
        15 => LmsType::H15,
        20 => LmsType::H20,
        _ => panic!("no LMS type of height {h}"),
    };
    t.with_m(m)
}

/// "M32" → 32, "M24" → 24.
fn hash_bytes(name: &str) -> usize {
    match name {
        "M32" => 32,
        "M24" => 24,
        _ => panic!("hash {name}: M32 or M24"),
    }
}

fn lmots(name: &str) -> LmotsType {
    match name {
        "W1" => LmotsType::W1,
        "W2" => LmotsType::W2,
        "W4" => LmotsType::W4,
        "W8" => LmotsType::W8,
        _ => panic!("LM-OTS type {name}: W1, W2, W4 or W8"),
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// "H10/H10", or "M24 H10/H10" for SHA-256/192.
fn config_name(heights: &[u32], m: usize) -> String {
    let name = heights
        .iter()
        .map(|h| format!("H{h}"))
        .collect::<Vec<_>>()
        .join("/");
    if m == 24 {
        format!("M24 {name}")
    } else {
        name
    }
}

/// Generate a key (timed), returning its private handle and the seconds it took.
fn generate(s: &Session, heights: &[u32], m: usize, ots: LmotsType, label: &str) -> (u64, f64) {
    let ots = ots.with_n(m);
    let spec = KeySpec::Hss {
        params: HssParams::new(heights.iter().map(|h| (lms(*h, m), ots)).collect()).unwrap(),
    };
    let attrs = KeyAttrs {
        label: label.into(),
        id: label.as_bytes().to_vec(),
        token: true,
    };
    let t = Instant::now();
    let g = keys::generate(s, &spec, &attrs).unwrap();
    (g.private, t.elapsed().as_secs_f64())
}

fn destroy(s: &Session, private: u64) {
    if let Ok(public) = keys::public_for_private(s, private) {
        let _ = s.destroy_object(public);
    }
    let _ = s.destroy_object(private);
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct Token {
    module: std::sync::Arc<Module>,
    slot: u64,
    _dir: tempfile::TempDir,
}

/// A fresh lunasim token (over Kryoptic) from the module under test.
fn token(module_path: &PathBuf) -> Token {
    let dir = tempfile::tempdir().unwrap();
    for (k, v) in testkit::write_config(testkit::Backend::LunaSim, dir.path(), "") {
        std::env::set_var(k, v);
    }
    let module = Module::load(module_path).unwrap();
    module.initialize().unwrap();
    let slot = testkit::init_token(&module, testkit::TOKEN_LABEL);
    Token {
        module,
        slot,
        _dir: dir,
    }
}

fn main() {
    let module_path = std::env::var_os("HSS_BENCH_MODULE")
        .map(PathBuf::from)
        .unwrap_or_else(testkit::lunasim_module);
    let signatures: usize = env_or("HSS_BENCH_SIGNATURES", "300").parse().unwrap();
    let ots_name = env_or("HSS_BENCH_LMOTS", "W4");
    let ots = lmots(&ots_name);
    let configs: Vec<Vec<u32>> = env_or("HSS_BENCH_CONFIGS", "5/5,10/10,15/10,10/15,20/10")
        .split(',')
        .map(|c| c.split('/').map(|h| h.trim().parse().unwrap()).collect())
        .collect();
    let hashes: Vec<String> = env_or("HSS_BENCH_HASHES", "M32,M24")
        .split(',')
        .map(|h| h.trim().to_string())
        .collect();
    let t = token(&module_path);
    let s = t.module.open_session(t.slot, true).unwrap();
    s.login(UserType::User, &p11::pin(testkit::USER_PIN))
        .unwrap();
    let module = module_path.display().to_string();

    if env_or("HSS_BENCH_PER_LEAF", "1") != "0" {
        for hash in &hashes {
            let m = hash_bytes(hash);
            for w in ["W1", "W2", "W4", "W8"] {
                let (key, secs) = generate(&s, &[10], m, lmots(w), &format!("leaf-{hash}-{w}"));
                println!(
                    "{}",
                    json!({"bench": "hss", "kind": "keygen", "config": config_name(&[10], m),
                           "hash": hash, "lmots": w, "leaves": 1024, "seconds": secs,
                           "per_leaf_ms": secs * 1000.0 / 1024.0, "module": module})
                );
                destroy(&s, key);
            }
        }
    }

    // Every key first (key generation timed), then the signatures in rounds that take
    // turns between the configurations, so a busy moment of the shared machine (fsync
    // times vary most) falls on all of them alike.
    let mut keys = Vec::new();
    for hash in &hashes {
        let m = hash_bytes(hash);
        for heights in &configs {
            let name = config_name(heights, m);
            let label = format!("bench-{}", name.replace(' ', "-"));
            let (key, secs) = generate(&s, heights, m, ots, &label);
            let leaves: u64 = heights.iter().map(|h| 1u64 << h).sum();
            println!(
                "{}",
                json!({"bench": "hss", "kind": "keygen", "config": name, "hash": hash,
                       "lmots": ots_name, "leaves": leaves, "seconds": secs, "module": module})
            );
            keys.push((name, hash.clone(), key, Vec::<f64>::new(), None::<f64>));
        }
    }
    sign_rounds(&s, &mut keys, signatures);
    let means = report_signatures(&s, keys, signatures, &ots_name, &module);
    summarize(&means, &module);
}

type BenchKey = (String, String, u64, Vec<f64>, Option<f64>);

/// `signatures` per key in ten rounds, the keys taking turns.
fn sign_rounds(s: &Session, keys: &mut [BenchKey], signatures: usize) {
    let message = vec![0x5Au8; 30_000];
    let rounds = signatures.clamp(1, 10);
    for round in 0..rounds {
        let per_round = signatures / rounds + usize::from(round < signatures % rounds);
        for (_, _, key, times, first) in keys.iter_mut() {
            for _ in 0..per_round {
                let t0 = Instant::now();
                let sig = s.sign(&Mechanism::new(CKM_HSS), *key, &message).unwrap();
                let ms = t0.elapsed().as_secs_f64() * 1000.0;
                assert!(!sig.is_empty());
                if first.is_none() {
                    *first = Some(ms);
                } else {
                    times.push(ms);
                }
            }
        }
    }
}

/// One `sign` line per key (the key destroyed after); the mean per configuration name.
fn report_signatures(
    s: &Session,
    keys: Vec<BenchKey>,
    signatures: usize,
    ots_name: &str,
    module: &str,
) -> serde_json::Map<String, serde_json::Value> {
    let mut means = serde_json::Map::new();
    for (name, hash, key, mut times, first) in keys {
        let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
        times.sort_by(f64::total_cmp);
        let (p50, p99, max) = if times.is_empty() {
            (0.0, 0.0, 0.0)
        } else {
            (
                percentile(&times, 0.5),
                percentile(&times, 0.99),
                *times.last().unwrap(),
            )
        };
        println!(
            "{}",
            json!({"bench": "hss", "kind": "sign", "config": name, "hash": hash,
                   "lmots": ots_name, "message_bytes": 30_000, "signatures": signatures,
                   "first_ms": first, "mean_ms": mean, "p50_ms": p50, "p99_ms": p99,
                   "max_ms": max, "module": module})
        );
        means.insert(name, json!(mean));
        destroy(s, key);
    }
    means
}

/// The configurations' means against H5/H5 of their hash (target 2×), and each M24 one
/// against the M32 one of the same heights.
fn summarize(means: &serde_json::Map<String, serde_json::Value>, module: &str) {
    let mean = |k: &str| means.get(k).and_then(|v| v.as_f64());
    let ratios = |prefix: &str, base: f64| -> serde_json::Map<String, serde_json::Value> {
        means
            .iter()
            .filter(|(k, _)| k.starts_with(prefix) && !k.ends_with("H5/H5"))
            .map(|(k, v)| (k.clone(), json!(v.as_f64().unwrap() / base)))
            .collect()
    };
    let met = |r: &serde_json::Map<String, serde_json::Value>| {
        r.values().all(|x| x.as_f64().unwrap() <= 2.0)
    };
    let Some(base) = mean("H5/H5") else {
        return;
    };
    let m32: serde_json::Map<_, _> = ratios("H", base);
    let m24 = mean("M24 H5/H5").map(|b24| {
        let r = ratios("M24 ", b24);
        let vs_m32: serde_json::Map<_, _> = means
            .iter()
            .filter_map(|(k, v)| {
                let m32_mean = mean(k.strip_prefix("M24 ")?)?;
                Some((k.clone(), json!(v.as_f64()? / m32_mean)))
            })
            .collect();
        json!({"baseline": "M24 H5/H5", "baseline_mean_ms": b24, "met": met(&r),
               "ratio_mean": r, "vs_m32": vs_m32})
    });
    println!(
        "{}",
        json!({"bench": "hss", "kind": "summary", "baseline": "H5/H5",
               "baseline_mean_ms": base, "ratio_mean": m32, "target": 2.0, "met": met(&m32),
               "m24": m24, "module": module})
    );
}
