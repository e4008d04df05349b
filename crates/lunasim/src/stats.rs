//! The statistics the simulated HSM keeps: command counts, busy time, utilization per
//! bin, its boot time. Process-wide: an HSM's counters do not reset when a client
//! reinitializes.
//!
//! One simulated HSM by default; each HA group member is an HSM of its own
//! ([`new_hsm`]). A call served by a member counts on that member: the caller wraps it in
//! [`scoped`], and [`stats`] answers with the member's figures for the duration.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cryptoki_sys::*;
use parking_lot::Mutex;

/// The statistics the simulated HSM keeps.
pub struct Stats {
    pub started: Instant,
    pub boot_time_unix: AtomicU64,
    pub icd_commands: AtomicU64,
    busy: Mutex<BusyClock>,
    pub calls: Mutex<HashMap<&'static str, u64>>,
    /// Utilization request counters per bin (sign, verify, encrypt, decrypt, keygen, derive).
    pub utilization: [AtomicU64; 6],
    /// The last snapshot taken by `CA_ReadUtilizationMetrics`.
    pub utilization_snapshot: Mutex<Option<[u64; 6]>>,
}

/// Busy time as a single simulated CPU: time during which at least one request is being
/// served (overlapping requests are not double-counted, so idle time never goes backwards).
struct BusyClock {
    active: u32,
    since: Instant,
    busy: Duration,
}

/// Up and busy time read at one instant. Up time is the sum of whole idle and whole busy
/// milliseconds (within 1 ms of the clock), so that between any two readings up, busy and
/// idle time each only grow, and idle time never grows by more than up time did.
#[derive(Clone, Copy, Debug)]
pub struct Reading {
    pub up_ms: u64,
    pub busy_ms: u64,
}

impl Reading {
    pub fn idle_ms(&self) -> u64 {
        self.up_ms - self.busy_ms
    }
}

impl Stats {
    pub fn busy(&self) -> Duration {
        self.busy_at(Instant::now())
    }

    fn busy_at(&self, now: Instant) -> Duration {
        let b = self.busy.lock();
        if b.active > 0 {
            b.busy + now.saturating_duration_since(b.since)
        } else {
            b.busy
        }
    }

    /// Up and busy time at one instant.
    pub fn reading(&self) -> Reading {
        let now = Instant::now();
        let up = now.saturating_duration_since(self.started);
        let busy = self.busy_at(now).min(up);
        let busy_ms = busy.as_millis() as u64;
        let idle_ms = (up - busy).as_millis() as u64;
        Reading {
            up_ms: idle_ms + busy_ms,
            busy_ms,
        }
    }

    pub fn up(&self) -> Duration {
        self.started.elapsed()
    }

    /// A request starts being served.
    pub(crate) fn enter(&self) {
        let mut b = self.busy.lock();
        if b.active == 0 {
            b.since = Instant::now();
        }
        b.active += 1;
    }

    /// A request is done.
    pub(crate) fn leave(&self) {
        let mut b = self.busy.lock();
        b.active = b.active.saturating_sub(1);
        if b.active == 0 {
            let spent = b.since.elapsed();
            b.busy += spent;
        }
    }

    pub fn count_bin(&self, bin: u64) {
        if let Some(c) = self.utilization.get(bin as usize) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

thread_local! {
    static SCOPE: Cell<Option<&'static Stats>> = const { Cell::new(None) };
}

/// The statistics of the HSM serving the current call (the default one unless a caller
/// set a member's with [`scoped`]).
pub fn stats() -> &'static Stats {
    SCOPE.with(|c| c.get()).unwrap_or_else(default_hsm)
}

/// The default simulated HSM (every slot that is not an HA member).
pub fn default_hsm() -> &'static Stats {
    static S: OnceLock<Stats> = OnceLock::new();
    S.get_or_init(Stats::fresh)
}

/// Statistics for another simulated HSM (an HA member), kept for the process's lifetime.
pub fn new_hsm() -> &'static Stats {
    Box::leak(Box::new(Stats::fresh()))
}

/// Run `f` with `hsm` as the HSM whose statistics count (restored afterwards, also when
/// `f` panics).
pub fn scoped<R>(hsm: &'static Stats, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<&'static Stats>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(SCOPE.with(|c| c.replace(Some(hsm))));
    f()
}

impl Stats {
    fn fresh() -> Stats {
        Stats {
            started: Instant::now(),
            boot_time_unix: AtomicU64::new(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
            ),
            icd_commands: AtomicU64::new(0),
            busy: Mutex::new(BusyClock {
                active: 0,
                since: Instant::now(),
                busy: Duration::ZERO,
            }),
            calls: Mutex::new(HashMap::new()),
            utilization: Default::default(),
            utilization_snapshot: Mutex::new(None),
        }
    }

    /// Keep this HSM's boot time across client restarts (an HSM does not reboot when a
    /// client reconnects).
    pub fn load_boot_time(&self, store: &Path) {
        let path = store.join("hsm.json");
        let existing = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("boot_time").and_then(|b| b.as_u64()));
        match existing {
            Some(t) => self.boot_time_unix.store(t, Ordering::Relaxed),
            None => {
                let t = self.boot_time_unix.load(Ordering::Relaxed);
                let _ = std::fs::create_dir_all(store);
                let _ = std::fs::write(&path, serde_json::json!({ "boot_time": t }).to_string());
            }
        }
    }
}

/// Count a utilization request when an operation really ran (not a length query).
pub fn count_if(rv: CK_RV, produced: bool, bin: u64) -> CK_RV {
    if rv == CKR_OK && produced {
        stats().count_bin(bin);
    }
    rv
}

/// Keep the default HSM's boot time across client restarts.
pub fn load_boot_time(store: &Path) {
    default_hsm().load_boot_time(store)
}
