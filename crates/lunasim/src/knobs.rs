//! What tests have asked the simulator to do: injected faults, per-call latency and slow
//! calls, and the PQC service queue's settings. Process-wide: the knobs survive
//! `C_Finalize`, because a fault injected "for the next N calls" must keep firing through
//! a client's recovery attempts. Set by [`crate::control`], read by every exported call.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cryptoki_sys::*;
use parking_lot::Mutex;

/// One injected fault: the next `remaining` calls matching `function` return `rv`.
#[derive(Debug, Clone)]
pub struct Fault {
    pub function: String,
    pub rv: CK_RV,
    /// `None` = until cleared.
    pub remaining: Option<u64>,
    /// The call runs and only its answer is replaced: the work was done, the reply lost
    /// (what a network HSM does when the link drops mid-reply).
    pub after: bool,
    /// Matching calls let through untouched before the fault fires.
    pub skip: u64,
}

/// An extra delay for the calls of one function (`"*"` = any), after `skip` of them.
#[derive(Debug, Clone)]
pub struct Slow {
    pub function: String,
    pub ms: f64,
    pub skip: u64,
}

/// A fault to answer with now, or after the call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub rv: CK_RV,
    pub after: bool,
}

#[derive(Debug, Default)]
pub struct Knobs {
    pub latency_ms: f64,
    pub jitter_ms: f64,
    pub pqc_queue: bool,
    pub service_ms: f64,
    pub faults: Vec<Fault>,
    /// Extra delay for matching functions (slow calls).
    pub slow: Vec<Slow>,
    /// `Some(n)`: every `C_Initialize` numbers the objects anew (the `renumber` command);
    /// `n` initializations have done so.
    pub renumber: Option<u64>,
    rng: u64,
}

impl Knobs {
    pub fn take_fault(&mut self, name: &str) -> Option<Answer> {
        let i = self
            .faults
            .iter()
            .position(|f| f.function == "*" || f.function == name)?;
        if self.faults[i].skip > 0 {
            self.faults[i].skip -= 1;
            return None;
        }
        let answer = Answer {
            rv: self.faults[i].rv,
            after: self.faults[i].after,
        };
        if let Some(n) = self.faults[i].remaining.as_mut() {
            *n -= 1;
            if *n == 0 {
                self.faults.remove(i);
            }
        }
        Some(answer)
    }

    /// This call's delay: the latency, its jitter, and any slow-call extra for `name`.
    pub fn delay(&mut self, name: &str) -> Duration {
        let mut ms = self.latency_ms;
        if self.jitter_ms > 0.0 {
            // xorshift64*: enough randomness for jitter, no dependency.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            let u = (self.rng >> 11) as f64 / (1u64 << 53) as f64;
            ms += (u * 2.0 - 1.0) * self.jitter_ms;
        }
        for slow in &mut self.slow {
            if slow.function == "*" || slow.function == name {
                if slow.skip > 0 {
                    slow.skip -= 1;
                } else {
                    ms += slow.ms;
                }
            }
        }
        Duration::from_secs_f64(ms.max(0.0) / 1000.0)
    }
}

pub fn knobs() -> &'static Mutex<Knobs> {
    static K: OnceLock<Mutex<Knobs>> = OnceLock::new();
    K.get_or_init(|| {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            | 1;
        Mutex::new(Knobs {
            service_ms: 15.0,
            rng: seed,
            ..Knobs::default()
        })
    })
}
