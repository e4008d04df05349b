//! HSS on lunasim: time per signature at several tree sizes against H5/H5 in the same run,
//! and key generation time per configuration.
//!
//! `cargo bench -p lunasim --bench hss` (or `scripts/bench.sh hss`) prints one JSON object
//! per line:
//! - `{"bench":"hss","kind":"keygen","config":"H10/H10","lmots":"W4","leaves":2048,"seconds":…}`
//!   for every configuration, and for one H10 tree of each LM-OTS type (`"per_leaf_ms"`:
//!   what the console's key-generation estimate is calibrated from);
//! - `{"kind":"sign","config":…,"signatures":…,"mean_ms","p50_ms","p99_ms","max_ms","first_ms"}`:
//!   `C_Sign` of a 30 kB message (the whole call, persistence included), the keys taking
//!   turns in ten rounds;
//! - `{"kind":"summary","baseline":"H5/H5","ratio_mean":{…},"target":2.0,"met":…}`.
//!
//! Target (issue 20): the mean time per signature at H10/H10, H15/H10, H10/H15 and H20/H10
//! within 2× of H5/H5.
//!
//! Environment: `HSS_BENCH_MODULE` — another lunasim build to measure (an earlier version,
//! for a before/after); `HSS_BENCH_SIGNATURES` — signatures per configuration (default
//! 300); `HSS_BENCH_CONFIGS` — a subset, e.g. `5/5,10/10`; `HSS_BENCH_LMOTS` — W1, W2, W4
//! or W8 (default W4; key generation scales with it, see the per-leaf lines);
//! `HSS_BENCH_PER_LEAF=0` skips the per-LM-OTS-type key generations.

use std::path::PathBuf;
use std::time::Instant;

use hsm::algo::{HssParams, KeySpec, LmotsType, LmsType};
use hsm::keys;
use hsm::templates::KeyAttrs;
use p11::sys::*;
use p11::{Mechanism, Module, Session, UserType};
use serde_json::json;

fn lms(h: u32) -> LmsType {
    match h {
        5 => LmsType::H5,
        10 => LmsType::H10,
        15 => LmsType::H15,
        20 => LmsType::H20,
        _ => panic!("no LMS type of height {h}"),
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

fn config_name(heights: &[u32]) -> String {
    heights
        .iter()
        .map(|h| format!("H{h}"))
        .collect::<Vec<_>>()
        .join("/")
}

/// Generate a key (timed), returning its private handle and the seconds it took.
fn generate(s: &Session, heights: &[u32], ots: LmotsType, label: &str) -> (u64, f64) {
    let spec = KeySpec::Hss {
        params: HssParams::new(heights.iter().map(|h| (lms(*h), ots)).collect()).unwrap(),
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
    let t = token(&module_path);
    let s = t.module.open_session(t.slot, true).unwrap();
    s.login(UserType::User, &p11::pin(testkit::USER_PIN))
        .unwrap();
    let module = module_path.display().to_string();
    let message = vec![0x5Au8; 30_000];

    if env_or("HSS_BENCH_PER_LEAF", "1") != "0" {
        for w in ["W1", "W2", "W4", "W8"] {
            let (key, secs) = generate(&s, &[10], lmots(w), &format!("leaf-{w}"));
            println!(
                "{}",
                json!({"bench": "hss", "kind": "keygen", "config": "H10", "lmots": w,
                       "leaves": 1024, "seconds": secs, "per_leaf_ms": secs * 1000.0 / 1024.0,
                       "module": module})
            );
            destroy(&s, key);
        }
    }

    // Every key first (key generation timed), then the signatures in rounds that take
    // turns between the configurations, so a busy moment of the shared machine (fsync
    // times vary most) falls on all of them alike.
    let mut keys = Vec::new();
    for heights in &configs {
        let name = config_name(heights);
        let (key, secs) = generate(&s, heights, ots, &format!("bench-{name}"));
        let leaves: u64 = heights.iter().map(|h| 1u64 << h).sum();
        println!(
            "{}",
            json!({"bench": "hss", "kind": "keygen", "config": name, "lmots": ots_name,
                   "leaves": leaves, "seconds": secs, "module": module})
        );
        keys.push((name, key, Vec::<f64>::new(), None::<f64>));
    }
    let rounds = signatures.clamp(1, 10);
    for round in 0..rounds {
        let per_round = signatures / rounds + usize::from(round < signatures % rounds);
        for (_, key, times, first) in keys.iter_mut() {
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
    let mut means = serde_json::Map::new();
    for (name, key, mut times, first) in keys {
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
            json!({"bench": "hss", "kind": "sign", "config": name, "lmots": ots_name,
                   "message_bytes": message.len(), "signatures": signatures,
                   "first_ms": first, "mean_ms": mean, "p50_ms": p50, "p99_ms": p99,
                   "max_ms": max, "module": module})
        );
        means.insert(name, json!(mean));
        destroy(&s, key);
    }

    let baseline = means.get("H5/H5").and_then(|v| v.as_f64());
    if let Some(base) = baseline {
        let ratios: serde_json::Map<_, _> = means
            .iter()
            .filter(|(k, _)| k.as_str() != "H5/H5")
            .map(|(k, v)| (k.clone(), json!(v.as_f64().unwrap() / base)))
            .collect();
        let met = ratios.values().all(|r| r.as_f64().unwrap() <= 2.0);
        println!(
            "{}",
            json!({"bench": "hss", "kind": "summary", "baseline": "H5/H5",
                   "baseline_mean_ms": base, "ratio_mean": ratios, "target": 2.0, "met": met,
                   "module": module})
        );
    }
}
