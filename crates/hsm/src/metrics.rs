//! The console's own figures for a pool: operations, errors by class, latency per
//! operation (HDR histogram), recoveries. Cheap on the hot path: one uncontended lock and a
//! histogram record per call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use p11::ErrorClass;
use parking_lot::Mutex;
use serde::Serialize;

struct OpStats {
    name: &'static str,
    ok: u64,
    errors: u64,
    latency_ns: Histogram<u64>,
}

impl OpStats {
    fn new(name: &'static str) -> Self {
        OpStats {
            name,
            ok: 0,
            errors: 0,
            // 1 ns .. 10 min, 3 significant figures.
            latency_ns: Histogram::new_with_bounds(1, 600_000_000_000, 3)
                .expect("histogram bounds"),
        }
    }
}

#[derive(Default)]
pub struct Metrics {
    ops: Mutex<Vec<OpStats>>,
    errors_by_class: [AtomicU64; 7],
    pub(crate) module_recoveries: AtomicU64,
    pub(crate) session_reopens: AtomicU64,
    pub(crate) health_checks: AtomicU64,
    pub(crate) busy_rejections: AtomicU64,
    pub(crate) breaker_rejections: AtomicU64,
}

fn class_index(c: ErrorClass) -> usize {
    ErrorClass::ALL.iter().position(|x| *x == c).unwrap_or(6)
}

impl Metrics {
    pub(crate) fn record(&self, op: &'static str, elapsed: Duration, ok: bool) {
        let ns = (elapsed.as_nanos() as u64).max(1);
        let mut ops = self.ops.lock();
        let idx = match ops
            .iter()
            .position(|s| std::ptr::eq(s.name, op) || s.name == op)
        {
            Some(i) => i,
            None => {
                ops.push(OpStats::new(op));
                ops.len() - 1
            }
        };
        let s = &mut ops[idx];
        if ok {
            s.ok += 1;
        } else {
            s.errors += 1;
        }
        s.latency_ns.saturating_record(ns);
    }

    pub(crate) fn error(&self, class: ErrorClass) {
        self.errors_by_class[class_index(class)].fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> MetricsSnapshot {
        let ops = self.ops.lock();
        let mut list: Vec<OpSnapshot> = ops
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
            health_checks: self.health_checks.load(Ordering::Relaxed),
            busy_rejections: self.busy_rejections.load(Ordering::Relaxed),
            breaker_rejections: self.breaker_rejections.load(Ordering::Relaxed),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
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

#[derive(Debug, Clone, Serialize)]
pub struct MetricsSnapshot {
    pub ops: Vec<OpSnapshot>,
    pub errors_by_class: Vec<(String, u64)>,
    pub module_recoveries: u64,
    pub session_reopens: u64,
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
