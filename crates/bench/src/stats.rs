//! Latency statistics: an HDR histogram (3 significant digits, 1 ns – 1 h) per run, and the
//! summary the reports show.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Summary of a latency distribution, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct LatencySummary {
    pub count: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub stddev_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

pub fn summarize(h: &Histogram<u64>) -> LatencySummary {
    let us = |ns: u64| ns as f64 / 1000.0;
    if h.is_empty() {
        return LatencySummary {
            count: 0,
            min_us: 0.0,
            mean_us: 0.0,
            stddev_us: 0.0,
            p50_us: 0.0,
            p90_us: 0.0,
            p95_us: 0.0,
            p99_us: 0.0,
            p999_us: 0.0,
            max_us: 0.0,
        };
    }
    LatencySummary {
        count: h.len(),
        min_us: us(h.min()),
        mean_us: h.mean() / 1000.0,
        stddev_us: h.stdev() / 1000.0,
        p50_us: us(h.value_at_quantile(0.50)),
        p90_us: us(h.value_at_quantile(0.90)),
        p95_us: us(h.value_at_quantile(0.95)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
    }
}

/// Buckets for a histogram chart: `n` log-spaced ranges between min and max (µs, count).
pub fn buckets(h: &Histogram<u64>, n: usize) -> Vec<(f64, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let (lo, hi) = (h.min().max(1) as f64, h.max().max(2) as f64);
    let ratio = (hi / lo).powf(1.0 / n as f64).max(1.0001);
    let mut out = Vec::with_capacity(n);
    let mut from = lo;
    for _ in 0..n {
        let to = from * ratio;
        let c = h.count_between(from as u64, (to as u64).max(from as u64));
        out.push((to / 1000.0, c));
        from = to + 1.0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest-rank percentile over the sorted samples: an independent computation.
    fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    fn check(samples: &[u64]) {
        let mut h = new_histogram();
        for s in samples {
            h.record(*s).unwrap();
        }
        let got = summarize(&h);
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let n = sorted.len() as f64;
        let mean = sorted.iter().map(|&x| x as f64).sum::<f64>() / n;
        let sd = (sorted
            .iter()
            .map(|&x| (x as f64 - mean).powi(2))
            .sum::<f64>()
            / n)
            .sqrt();
        let close = |a: f64, b: f64, what: &str| {
            assert!((a - b).abs() <= b.abs() * 1e-3 + 1e-3, "{what}: {a} vs {b}")
        };
        close(got.mean_us, mean / 1000.0, "mean");
        close(got.stddev_us, sd / 1000.0, "stddev");
        for (q, v) in [
            (0.5, got.p50_us),
            (0.9, got.p90_us),
            (0.95, got.p95_us),
            (0.99, got.p99_us),
            (0.999, got.p999_us),
        ] {
            close(
                v,
                nearest_rank(&sorted, q) as f64 / 1000.0,
                &format!("p{q}"),
            );
        }
        close(got.min_us, sorted[0] as f64 / 1000.0, "min");
        close(got.max_us, *sorted.last().unwrap() as f64 / 1000.0, "max");
        assert_eq!(got.count, samples.len() as u64);
    }

    #[test]
    fn percentiles_match_an_independent_computation() {
        // Uniform, bimodal (the PQC queue's shape), and heavy-tailed sequences.
        let uniform: Vec<u64> = (1..=10_000).map(|i| i * 1_000).collect();
        check(&uniform);
        let bimodal: Vec<u64> = (0..20_000u64)
            .map(|i| {
                if i % 10 == 0 {
                    15_000_000 + i
                } else {
                    80_000 + i % 97
                }
            })
            .collect();
        check(&bimodal);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let tailed: Vec<u64> = (0..50_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x % 1_000_000) as f64 / 1_000_000.0;
                (50_000.0 / (1.0 - u).max(1e-6).powf(0.5)) as u64
            })
            .collect();
        check(&tailed);
    }

    #[test]
    fn buckets_cover_every_sample() {
        let mut h = new_histogram();
        for i in 1..=1000u64 {
            h.record(i * 997).unwrap();
        }
        let b = buckets(&h, 20);
        assert_eq!(b.len(), 20);
        assert!(b.iter().map(|x| x.1).sum::<u64>() >= 990, "{b:?}");
    }
}
