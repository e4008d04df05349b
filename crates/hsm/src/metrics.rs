//! The console's own figures for a pool: operations, errors by class, latency per
//! operation (HDR histograms), recoveries.
//!
//! On the hot path nothing is shared between workers: each pooled session carries its own
//! recorder (owned by whichever thread holds the session), time comes from the TSC through
//! `quanta` (a read is ≈9 ns on bare metal but ≈35 ns on the 2-core VMs we build on, where
//! `Instant::now` is ≈80 ns), and a snapshot merges the recorders of idle sessions with
//! those of sessions already retired.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use hdrhistogram::Histogram;
use p11::ErrorClass;
use parking_lot::Mutex;
use serde::Serialize;

/// The clock for latencies (raw TSC ticks; converted when read).
pub fn clock() -> &'static quanta::Clock {
    static C: OnceLock<quanta::Clock> = OnceLock::new();
    C.get_or_init(quanta::Clock::new)
}

static COARSE_START: OnceLock<std::time::Instant> = OnceLock::new();
static COARSE_NOW: AtomicU64 = AtomicU64::new(0);

/// A coarse monotonic clock in milliseconds: one atomic load, kept current by a ticker
/// thread (every 5 ms). Good enough for health-check TTLs measured in seconds.
#[inline]
pub fn coarse_ms() -> u64 {
    if COARSE_START.get().is_none() {
        start_coarse_clock();
    }
    COARSE_NOW.load(Ordering::Relaxed)
}

#[cold]
fn start_coarse_clock() {
    COARSE_START.get_or_init(|| {
        let start = std::time::Instant::now();
        std::thread::Builder::new()
            .name("hsm-coarse-clock".into())
            .spawn(move || loop {
                COARSE_NOW.store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(5));
            })
            .expect("spawn coarse clock");
        start
    });
}

/// Latency timing policy: every call of the first 1024 on a session, then one in 32.
/// Counts stay exact; percentiles come from the timed calls. On a ≈1 µs operation
/// (SoftHSM2's `C_GenerateRandom`) two clock reads per call would cost up to 7 % by
/// themselves where a TSC read is ≈35 ns, one in eight still ≈1 %; one in 32 is ≈0.2 %,
/// and a session busy enough for that to matter still yields thousands of samples a
/// second.
#[inline]
pub(crate) fn timed(calls: u64) -> bool {
    calls < 1024 || calls & 31 == 0
}

fn histogram() -> Histogram<u64> {
    // 10 ns .. 10 min at 2 significant figures: ~30 KB per operation and session.
    Histogram::new_with_bounds(10, 600_000_000_000, 2).expect("histogram bounds")
}

struct OpStats {
    name: &'static str,
    ok: u64,
    errors: u64,
    latency_ns: Histogram<u64>,
}

impl OpStats {
    /// Out of line: only sampled calls get here (see [`timed`]).
    #[inline(never)]
    fn record_latency(&mut self, ns: u64) {
        self.latency_ns.saturating_record(ns.max(10));
    }
}

/// Per-session recorder: owned by the session's current holder, so recording takes no lock.
#[derive(Default)]
pub(crate) struct Recorder {
    ops: Vec<OpStats>,
    /// Index of the operation recorded last: a session usually repeats one operation, so
    /// the name is compared once (by address) rather than searched for.
    last: usize,
}

impl Recorder {
    #[inline]
    pub(crate) fn record(&mut self, op: &'static str, ns: Option<u64>, ok: bool) {
        let i = match self.ops.get(self.last) {
            Some(s) if std::ptr::eq(s.name, op) => self.last,
            _ => self.index_of(op),
        };
        let s = &mut self.ops[i];
        if ok {
            s.ok += 1;
        } else {
            s.errors += 1;
        }
        if let Some(ns) = ns {
            s.record_latency(ns);
        }
    }

    /// The operation's slot, added when new; remembered as the last one used.
    #[cold]
    fn index_of(&mut self, op: &'static str) -> usize {
        let i = match self
            .ops
            .iter()
            .position(|s| std::ptr::eq(s.name, op) || s.name == op)
        {
            Some(i) => i,
            None => {
                self.ops.push(OpStats {
                    name: op,
                    ok: 0,
                    errors: 0,
                    latency_ns: histogram(),
                });
                self.ops.len() - 1
            }
        };
        self.last = i;
        i
    }

    /// Fold another recorder's figures into this one.
    pub(crate) fn merge(&mut self, other: &Recorder) {
        for o in &other.ops {
            let i = match self.ops.iter().position(|s| s.name == o.name) {
                Some(i) => i,
                None => {
                    self.ops.push(OpStats {
                        name: o.name,
                        ok: 0,
                        errors: 0,
                        latency_ns: histogram(),
                    });
                    self.ops.len() - 1
                }
            };
            let s = &mut self.ops[i];
            s.ok += o.ok;
            s.errors += o.errors;
            let _ = s.latency_ns.add(&o.latency_ns);
        }
    }
}

#[derive(Default)]
pub struct Metrics {
    /// Figures of sessions that were closed or discarded.
    retired: Mutex<Recorder>,
    errors_by_class: [AtomicU64; 7],
    pub(crate) module_recoveries: AtomicU64,
    pub(crate) session_reopens: AtomicU64,
    /// Calls that succeeded after a recovery, so their caller never saw the fault.
    pub(crate) recovered_calls: AtomicU64,
    pub(crate) health_checks: AtomicU64,
    pub(crate) busy_rejections: AtomicU64,
    pub(crate) breaker_rejections: AtomicU64,
}

fn class_index(c: ErrorClass) -> usize {
    ErrorClass::ALL.iter().position(|x| *x == c).unwrap_or(6)
}

impl Metrics {
    pub(crate) fn error(&self, class: ErrorClass) {
        self.errors_by_class[class_index(class)].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn retire(&self, r: &Recorder) {
        if !r.ops.is_empty() {
            self.retired.lock().merge(r);
        }
    }

    /// Merge the retired figures with the live recorders handed in.
    pub(crate) fn snapshot<'a>(&self, live: impl Iterator<Item = &'a Recorder>) -> MetricsSnapshot {
        let mut all = Recorder::default();
        all.merge(&self.retired.lock());
        for r in live {
            all.merge(r);
        }
        let mut list: Vec<OpSnapshot> = all
            .ops
            .iter()
            .map(|s| {
                let h = &s.latency_ns;
                let us = |v: u64| v as f64 / 1000.0;
                OpSnapshot {
                    op: s.name.to_string(),
                    ok: s.ok,
                    errors: s.errors,
                    mean_us: h.mean() / 1000.0,
                    p50_us: us(h.value_at_quantile(0.50)),
                    p90_us: us(h.value_at_quantile(0.90)),
                    p95_us: us(h.value_at_quantile(0.95)),
                    p99_us: us(h.value_at_quantile(0.99)),
                    max_us: us(h.max()),
                }
            })
            .collect();
        list.sort_by(|a, b| a.op.cmp(&b.op));
        MetricsSnapshot {
            ops: list,
            errors_by_class: ErrorClass::ALL
                .iter()
                .map(|c| {
                    (
                        c.as_str().to_string(),
                        self.errors_by_class[class_index(*c)].load(Ordering::Relaxed),
                    )
                })
                .collect(),
            module_recoveries: self.module_recoveries.load(Ordering::Relaxed),
            session_reopens: self.session_reopens.load(Ordering::Relaxed),
            recovered_calls: self.recovered_calls.load(Ordering::Relaxed),
            health_checks: self.health_checks.load(Ordering::Relaxed),
            busy_rejections: self.busy_rejections.load(Ordering::Relaxed),
            breaker_rejections: self.breaker_rejections.load(Ordering::Relaxed),
        }
    }
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct OpSnapshot {
    pub op: String,
    pub ok: u64,
    pub errors: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct MetricsSnapshot {
    pub ops: Vec<OpSnapshot>,
    pub errors_by_class: Vec<(String, u64)>,
    pub module_recoveries: u64,
    pub session_reopens: u64,
    /// Calls that succeeded after a recovery (the fault never reached their caller).
    pub recovered_calls: u64,
    pub health_checks: u64,
    pub busy_rejections: u64,
    pub breaker_rejections: u64,
}

impl MetricsSnapshot {
    pub fn errors_of(&self, class: ErrorClass) -> u64 {
        self.errors_by_class
            .iter()
            .find(|(c, _)| c == class.as_str())
            .map(|(_, n)| *n)
            .unwrap_or(0)
    }
    pub fn op(&self, name: &str) -> Option<&OpSnapshot> {
        self.ops.iter().find(|o| o.op == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorders_merge() {
        let m = Metrics::default();
        let mut a = Recorder::default();
        let mut b = Recorder::default();
        for i in 1..=100u64 {
            a.record("sign", Some(i * 1000), true);
        }
        a.record("sign", None, true);
        b.record("sign", Some(5_000_000), false);
        b.record("random", Some(900), true);
        m.retire(&a);
        let s = m.snapshot(std::iter::once(&b));
        let sign = s.op("sign").unwrap();
        assert_eq!(
            (sign.ok, sign.errors),
            (101, 1),
            "untimed calls still count"
        );
        assert!((sign.p50_us - 51.0).abs() < 1.5, "p50 {}", sign.p50_us);
        assert!(sign.max_us >= 4900.0);
        assert_eq!(s.op("random").unwrap().ok, 1);
    }

    #[test]
    fn interleaved_and_equal_names_count_apart_and_together() {
        let mut r = Recorder::default();
        // The same name at another address (e.g. built at run time) is the same operation.
        let sign_again: &'static str = Box::leak(String::from("sign").into_boxed_str());
        for _ in 0..3 {
            r.record("sign", Some(1_000), true);
            r.record("verify", None, true);
            r.record(sign_again, None, false);
        }
        r.record("verify", Some(2_000), false);
        let s = Metrics::default().snapshot(std::iter::once(&r));
        assert_eq!(s.ops.len(), 2);
        let sign = s.op("sign").unwrap();
        assert_eq!((sign.ok, sign.errors), (3, 3));
        let verify = s.op("verify").unwrap();
        assert_eq!((verify.ok, verify.errors), (3, 1));
        assert!(
            (verify.p50_us - 2.0).abs() < 0.1,
            "only the timed call: {}",
            verify.p50_us
        );
    }
}
