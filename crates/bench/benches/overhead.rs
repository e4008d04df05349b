//! The probe engine's own cost per call: the same `C_GenerateRandom(32)` calls on SoftHSM2,
//! untimed and timed the way probes time them (two clock reads and an HDR histogram
//! record), in alternating rounds; the median difference per call is the overhead.
//!
//! `cargo bench -p hsmc-bench --bench overhead` prints one JSON line. Target: < 1 µs per call.

use std::time::Instant;

use testkit::{Backend, TestToken};

const CALLS: u64 = 20_000;
const ROUNDS: usize = 11;

fn main() {
    let token = TestToken::new(Backend::SoftHsm);
    let s = token.user_session();
    let mut buf = [0u8; 32];
    for _ in 0..2_000 {
        s.generate_random(&mut buf).unwrap();
    }
    let untimed = |s: &p11::Session, buf: &mut [u8; 32]| {
        let t = Instant::now();
        for _ in 0..CALLS {
            s.generate_random(buf).unwrap();
        }
        t.elapsed().as_nanos() as f64 / CALLS as f64
    };
    let timed = |s: &p11::Session, buf: &mut [u8; 32]| {
        let mut h = bench::stats::new_histogram();
        let t = Instant::now();
        for _ in 0..CALLS {
            let a = Instant::now();
            s.generate_random(buf).unwrap();
            h.saturating_record(a.elapsed().as_nanos() as u64 + 1);
        }
        std::hint::black_box(h.len());
        t.elapsed().as_nanos() as f64 / CALLS as f64
    };
    let mut diffs = Vec::new();
    let (mut u, mut t) = (Vec::new(), Vec::new());
    for r in 0..ROUNDS {
        let (a, b) = if r % 2 == 0 {
            let a = untimed(&s, &mut buf);
            (a, timed(&s, &mut buf))
        } else {
            let b = timed(&s, &mut buf);
            (untimed(&s, &mut buf), b)
        };
        u.push(a);
        t.push(b);
        diffs.push(b - a);
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let overhead = med(diffs);
    println!(
        "{}",
        serde_json::json!({
            "bench": "probe_overhead",
            "call": "C_GenerateRandom(32) on SoftHSM2",
            "untimed_ns_per_call": med(u),
            "timed_ns_per_call": med(t),
            "overhead_ns_per_call": overhead,
            "noop_overhead_ns": bench::probe::overhead_ns(),
            "target": "< 1000 ns",
            "met": overhead < 1000.0,
        })
    );
}
