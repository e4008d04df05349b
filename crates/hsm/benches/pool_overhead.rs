//! Pool overhead against the bare function pointer, on one SoftHSM2 token, in one run.
//!
//! `cargo bench -p hsmc-hsm --bench pool_overhead` prints one JSON object per case:
//! `{"case", "raw_ops_per_s", "pool_ops_per_s", "ratio", ...}`. Raw = a loop calling the
//! module's `C_GenerateRandom`/`C_Sign` pointer directly (`p11::baseline`); pool = the same
//! operation through `Pool::run` (checkout, breaker, metrics, checkin). Rounds alternate
//! raw and pool (and which of them goes first); each pool round is compared with the raw
//! round next to it, and `ratio` is the median of these paired ratios, so drift on a
//! shared machine hits both sides of every pair. `ratio_of_medians` (the median pool round
//! over the median raw round) is printed beside it; it moves with drift that lasts longer
//! than a round, and between runs it spread about twice as far as the paired median.
//! Targets: single-threaded ratio ≥ 0.95, two workers ≥ 0.90. A last line,
//! `{"case": "pool_noop_1w", "ns_per_call"}`, is the pool's own cost per call on a closure
//! that makes no token call (warm caches, one thread): what each ratio pays per operation.
//!
//! `POOL_OVERHEAD_CALLS=N` skips the timing: N raw calls then N pool calls of random (and
//! N/100 of ECDSA) on one thread, for an instruction profile (`valgrind --tool=callgrind`, then compare the
//! inclusive cost of `raw_ops` and `pool_ops`, which are never inlined for this reason).

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hsm::algo::{Curve, KeySpec};
use hsm::keys;
use hsm::templates::KeyAttrs;
use hsm::{Pool, PoolConfig};
use p11::sys::*;
use p11::{baseline, Mechanism, Session, UserType};
use testkit::stats::median;
use testkit::{Backend, TestToken, USER_PIN};

const ROUNDS: usize = 48;
const ROUND_TIME: Duration = Duration::from_millis(100);

#[derive(Clone, Copy)]
enum Op {
    Random32,
    EcdsaP256,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Random32 => "generate_random_32",
            Op::EcdsaP256 => "ecdsa_p256_sign",
        }
    }
}

/// The key label used for signing (each session finds it by label).
const KEY: &str = "bench-ecdsa";

fn key_handle(s: &Session) -> u64 {
    keys::find_one(
        s,
        &keys::KeySelector::Label(KEY.into()),
        Some(CKO_PRIVATE_KEY),
    )
    .unwrap()
}

#[inline(never)]
fn raw_ops(s: &Session, op: Op, key: u64, n: u64) {
    match op {
        Op::Random32 => baseline::generate_random_loop(s, n, 32).unwrap(),
        Op::EcdsaP256 => baseline::sign_loop(s, CKM_ECDSA, key, &[7u8; 32], n).unwrap(),
    }
}

#[inline(never)]
fn pool_ops(pool: &Pool, op: Op, key: u64, n: u64) {
    let mut out = [0u8; 32];
    let m = Mechanism::new(CKM_ECDSA);
    for _ in 0..n {
        match op {
            Op::Random32 => pool
                .run("C_GenerateRandom", |s| s.generate_random(&mut out))
                .unwrap(),
            Op::EcdsaP256 => {
                pool.run("CKM_ECDSA", |s| s.sign(&m, key, &[7u8; 32]))
                    .unwrap();
            }
        }
    }
}

/// Operations per call batch so that one round takes about ROUND_TIME.
fn calibrate(s: &Session, op: Op, key: u64) -> u64 {
    let mut n = 100;
    loop {
        let t = Instant::now();
        raw_ops(s, op, key, n);
        let e = t.elapsed();
        if e > Duration::from_millis(50) {
            return ((n as f64) * ROUND_TIME.as_secs_f64() / e.as_secs_f64()).max(100.0) as u64;
        }
        n *= 4;
    }
}

/// Run `f` on `workers` threads at once; returns total ops per second.
fn timed(workers: usize, n: u64, f: impl Fn(usize) + Sync) -> f64 {
    let barrier = Barrier::new(workers + 1);
    let f = &f;
    let barrier = &barrier;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    barrier.wait();
                    f(w);
                })
            })
            .collect();
        barrier.wait();
        let t = Instant::now();
        for h in handles {
            h.join().unwrap();
        }
        (n * workers as u64) as f64 / t.elapsed().as_secs_f64()
    })
}

/// Nanoseconds per `Pool::run` of a closure that does nothing (median of ROUNDS).
fn noop_ns(pool: &Pool) -> f64 {
    const CALLS: u32 = 1_000_000;
    let runs = (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..CALLS {
                pool.run("noop", |_| Ok(())).unwrap();
            }
            t.elapsed().as_nanos() as f64 / f64::from(CALLS)
        })
        .collect();
    median(runs)
}

fn main() {
    let t = TestToken::new(Backend::SoftHsm);
    {
        let s = t.user_session();
        let attrs = KeyAttrs {
            label: KEY.into(),
            id: b"bench".to_vec(),
            token: true,
        };
        keys::generate(&s, &KeySpec::Ec { curve: Curve::P256 }, &attrs).unwrap();
    }
    let module = t.module.clone();
    // Raw sessions, one per worker, logged in (login state is shared by the application).
    let raw: Vec<Session> = (0..2).map(|_| t.user_session()).collect();
    let key = key_handle(&raw[0]);
    let pool = Pool::new(
        module.clone(),
        t.slot,
        PoolConfig {
            size: 2,
            ..PoolConfig::default()
        },
    );
    pool.login(UserType::User, p11::pin(USER_PIN)).unwrap();
    pool.warm_up().unwrap();
    let raw = Arc::new(
        raw.into_iter()
            .map(parking_lot::Mutex::new)
            .collect::<Vec<_>>(),
    );

    if let Some(n) = std::env::var("POOL_OVERHEAD_CALLS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        for (op, n) in [(Op::Random32, n), (Op::EcdsaP256, n / 100)] {
            raw_ops(&raw[0].lock(), op, key, n);
            pool_ops(&pool, op, key, n);
        }
        return;
    }

    for op in [Op::Random32, Op::EcdsaP256] {
        let n = calibrate(&raw[0].lock(), op, key);
        for workers in [1usize, 2] {
            let per_worker = n / workers as u64;
            let (mut raw_runs, mut pool_runs, mut paired) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..ROUNDS {
                // Alternate which side goes first, so drift and warm-up hit both alike.
                let run_raw = || {
                    timed(workers, per_worker, |w| {
                        raw_ops(&raw[w].lock(), op, key, per_worker)
                    })
                };
                let run_pool = || {
                    timed(workers, per_worker, |_| {
                        pool_ops(&pool, op, key, per_worker)
                    })
                };
                if round % 2 == 0 {
                    raw_runs.push(run_raw());
                    pool_runs.push(run_pool());
                } else {
                    pool_runs.push(run_pool());
                    raw_runs.push(run_raw());
                }
                paired.push(pool_runs[round] / raw_runs[round]);
            }
            let (r, p) = (median(raw_runs), median(pool_runs));
            let ratio = median(paired);
            let target = if workers == 1 { 0.95 } else { 0.90 };
            println!(
                "{}",
                serde_json::json!({
                    "case": format!("{}_{}w", op.name(), workers),
                    "module": "softhsm2",
                    "workers": workers,
                    "ops_per_round": per_worker * workers as u64,
                    "rounds": ROUNDS,
                    "raw_ops_per_s": r.round(),
                    "pool_ops_per_s": p.round(),
                    "ratio": (ratio * 1000.0).round() / 1000.0,
                    "ratio_of_medians": (p / r * 1000.0).round() / 1000.0,
                    "target": target,
                    "meets_target": ratio >= target,
                })
            );
        }
    }
    println!(
        "{}",
        serde_json::json!({
            "case": "pool_noop_1w",
            "module": "none",
            "workers": 1,
            "rounds": ROUNDS,
            "ns_per_call": (noop_ns(&pool) * 10.0).round() / 10.0,
        })
    );
}
