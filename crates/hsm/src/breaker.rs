//! Circuit breaker: closed → open after `threshold` consecutive connection failures →
//! half-open after `open_for` (one probe call allowed) → closed on success, open again on
//! failure. The closed state is checked with one atomic load on the hot path.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    Closed,
    Open,
    HalfOpen,
}

const CLOSED: u8 = 0;
const OPEN: u8 = 1;
const HALF_OPEN: u8 = 2;

#[derive(Debug)]
struct Inner {
    failures: u32,
    open_until: Option<Instant>,
    probe_in_flight: bool,
}

#[derive(Debug)]
pub struct Breaker {
    state: AtomicU8,
    /// Mirror of `inner.failures` for the lock-free success path.
    failing: AtomicU8,
    inner: Mutex<Inner>,
    threshold: u32,
    open_for: Duration,
    opened: AtomicU64,
}

impl Breaker {
    pub fn new(threshold: u32, open_for: Duration) -> Self {
        Breaker {
            state: AtomicU8::new(CLOSED),
            failing: AtomicU8::new(0),
            inner: Mutex::new(Inner {
                failures: 0,
                open_until: None,
                probe_in_flight: false,
            }),
            threshold: threshold.max(1),
            open_for,
            opened: AtomicU64::new(0),
        }
    }

    pub fn state(&self) -> BreakerState {
        match self.state.load(Ordering::Acquire) {
            CLOSED => BreakerState::Closed,
            OPEN => BreakerState::Open,
            _ => BreakerState::HalfOpen,
        }
    }

    /// How many times the breaker has opened.
    pub fn times_opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// May a call go ahead? `Err(retry_after)` when open.
    #[inline]
    pub fn admit(&self) -> Result<(), Duration> {
        if self.state.load(Ordering::Acquire) == CLOSED {
            return Ok(());
        }
        self.admit_not_closed()
    }

    #[cold]
    fn admit_not_closed(&self) -> Result<(), Duration> {
        let mut g = self.inner.lock();
        let now = Instant::now();
        match self.state.load(Ordering::Acquire) {
            CLOSED => Ok(()),
            OPEN => {
                let until = g.open_until.unwrap_or(now);
                if now >= until {
                    self.state.store(HALF_OPEN, Ordering::Release);
                    g.probe_in_flight = true;
                    Ok(())
                } else {
                    Err(until - now)
                }
            }
            _ => {
                if g.probe_in_flight {
                    Err(Duration::from_millis(100))
                } else {
                    g.probe_in_flight = true;
                    Ok(())
                }
            }
        }
    }

    #[inline]
    pub fn on_success(&self) {
        if self.state.load(Ordering::Acquire) == CLOSED && self.failing.load(Ordering::Acquire) == 0
        {
            return;
        }
        self.close();
    }

    /// Back to closed with no failures counted.
    #[cold]
    fn close(&self) {
        let mut g = self.inner.lock();
        g.failures = 0;
        self.failing.store(0, Ordering::Release);
        g.open_until = None;
        g.probe_in_flight = false;
        self.state.store(CLOSED, Ordering::Release);
    }

    pub fn on_failure(&self) {
        let mut g = self.inner.lock();
        g.failures = g.failures.saturating_add(1);
        self.failing.store(1, Ordering::Release);
        let state = self.state.load(Ordering::Acquire);
        if state == HALF_OPEN || (state == CLOSED && g.failures >= self.threshold) {
            g.open_until = Some(Instant::now() + self.open_for);
            g.probe_in_flight = false;
            self.state.store(OPEN, Ordering::Release);
            self.opened.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A call that was admitted did not reach a verdict (e.g. it was refused locally):
    /// release the half-open probe slot without changing state.
    pub fn release_probe(&self) {
        if self.state.load(Ordering::Acquire) == HALF_OPEN {
            self.inner.lock().probe_in_flight = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_threshold_and_half_opens_after_timeout() {
        let b = Breaker::new(3, Duration::from_millis(50));
        assert!(b.admit().is_ok());
        b.on_failure();
        b.on_failure();
        assert_eq!(b.state(), BreakerState::Closed);
        b.on_failure();
        assert_eq!(b.state(), BreakerState::Open);
        assert!(b.admit().is_err());
        std::thread::sleep(Duration::from_millis(60));
        assert!(b.admit().is_ok(), "half-open admits one probe");
        assert_eq!(b.state(), BreakerState::HalfOpen);
        assert!(b.admit().is_err(), "only one probe at a time");
        b.on_success();
        assert_eq!(b.state(), BreakerState::Closed);
        assert_eq!(b.times_opened(), 1);
    }

    #[test]
    fn failed_probe_reopens() {
        let b = Breaker::new(1, Duration::from_millis(20));
        b.on_failure();
        assert_eq!(b.state(), BreakerState::Open);
        std::thread::sleep(Duration::from_millis(30));
        assert!(b.admit().is_ok());
        b.on_failure();
        assert_eq!(b.state(), BreakerState::Open);
        assert_eq!(b.times_opened(), 2);
    }

    #[test]
    fn success_resets_the_failure_count() {
        let b = Breaker::new(2, Duration::from_secs(10));
        b.on_failure();
        b.on_success();
        b.on_failure();
        assert_eq!(b.state(), BreakerState::Closed);
    }
}
