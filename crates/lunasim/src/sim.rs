//! The simulator's state and the wrapper every exported function runs in: call counting,
//! control-file polling, injected faults, simulated network latency, busy-time accounting
//! for `CA_GetHSMStats`, and a panic barrier (nothing unwinds into C).
//!
//! Knobs and statistics live in process-wide statics that survive `C_Finalize`: an HSM's
//! counters do not reset when a client reinitializes, and a fault injected "for the next N
//! calls" must keep firing through the client's recovery attempts.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cryptoki_sys::*;
use parking_lot::{Mutex, RwLock};

use crate::config::Config;
use crate::objects::ObjectStore;

/// One injected fault: the next `remaining` calls matching `function` return `rv`.
#[derive(Debug, Clone)]
pub struct Fault {
    pub function: String,
    pub rv: CK_RV,
    /// `None` = until cleared.
    pub remaining: Option<u64>,
}

#[derive(Debug, Default)]
pub struct Knobs {
    pub latency_ms: f64,
    pub jitter_ms: f64,
    pub pqc_queue: bool,
    pub service_ms: f64,
    pub faults: Vec<Fault>,
    /// Extra delay for matching functions (slow calls).
    pub slow: Vec<(String, f64)>,
    rng: u64,
}

impl Knobs {
    pub fn take_fault(&mut self, name: &str) -> Option<CK_RV> {
        let i = self
            .faults
            .iter()
            .position(|f| f.function == "*" || f.function == name)?;
        let rv = self.faults[i].rv;
        if let Some(n) = self.faults[i].remaining.as_mut() {
            *n -= 1;
            if *n == 0 {
                self.faults.remove(i);
            }
        }
        Some(rv)
    }

    fn delay(&mut self, name: &str) -> Duration {
        let mut ms = self.latency_ms;
        if self.jitter_ms > 0.0 {
            // xorshift64*: enough randomness for jitter, no dependency.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            let u = (self.rng >> 11) as f64 / (1u64 << 53) as f64;
            ms += (u * 2.0 - 1.0) * self.jitter_ms;
        }
        for (f, extra) in &self.slow {
            if f == "*" || f == name {
                ms += extra;
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

impl Stats {
    pub fn busy(&self) -> Duration {
        let b = self.busy.lock();
        if b.active > 0 {
            b.busy + b.since.elapsed()
        } else {
            b.busy
        }
    }

    pub fn up(&self) -> Duration {
        self.started.elapsed()
    }

    fn enter(&self) {
        let mut b = self.busy.lock();
        if b.active == 0 {
            b.since = Instant::now();
        }
        b.active += 1;
    }

    fn leave(&self) {
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

pub fn stats() -> &'static Stats {
    static S: OnceLock<Stats> = OnceLock::new();
    S.get_or_init(|| Stats {
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
    })
}

/// Per-session state lunasim keeps beside the inner module's.
#[derive(Default)]
pub struct SessionState {
    pub slot: CK_SLOT_ID,
    pub rw: bool,
    /// HSS handles still to be returned by the current search.
    pub find: Option<Vec<CK_OBJECT_HANDLE>>,
    pub op: Option<crate::hss::Op>,
    /// The mechanism of the active forwarded sign operation (for the PQC queue).
    pub sign_mechanism: Option<CK_MECHANISM_TYPE>,
}

/// The initialized simulator.
pub struct Sim {
    pub config: Config,
    pub inner: Arc<p11::Module>,
    pub store: PathBuf,
    pub objects: Mutex<ObjectStore>,
    pub sessions: Mutex<HashMap<CK_SESSION_HANDLE, SessionState>>,
    /// The single PQC service queue.
    pub pqc_queue: Mutex<()>,
}

impl Sim {
    /// The inner module's function table.
    pub fn f(&self) -> &CK_FUNCTION_LIST_3_2 {
        self.inner.functions()
    }
}

static SIM: RwLock<Option<Arc<Sim>>> = RwLock::new(None);

pub fn current() -> Option<Arc<Sim>> {
    SIM.read().clone()
}

pub fn install(sim: Option<Arc<Sim>>) -> Option<Arc<Sim>> {
    std::mem::replace(&mut *SIM.write(), sim)
}

/// Run an exported function: counts, faults, latency, busy time, panic barrier. `f` gets
/// the initialized simulator; before `C_Initialize` the answer is
/// `CKR_CRYPTOKI_NOT_INITIALIZED`, as from any module.
pub fn call(name: &'static str, f: impl FnOnce(&Sim) -> CK_RV) -> CK_RV {
    call_cleanup(name, f, |_| {})
}

/// As [`call`]; when an injected fault answers instead, `cleanup` runs first. Operation
/// functions use it to finish the inner module's operation, as a real device error ends
/// the operation (the work was done, the reply was lost).
pub fn call_cleanup(
    name: &'static str,
    f: impl FnOnce(&Sim) -> CK_RV,
    cleanup: impl FnOnce(&Sim),
) -> CK_RV {
    catch_unwind(AssertUnwindSafe(|| {
        let st = stats();
        st.icd_commands.fetch_add(1, Ordering::Relaxed);
        *st.calls.lock().entry(name).or_insert(0) += 1;
        crate::control::poll_file();
        let (fault, delay) = {
            let mut k = knobs().lock();
            (k.take_fault(name), k.delay(name))
        };
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        if let Some(rv) = fault {
            if let Some(sim) = current() {
                cleanup(&sim);
            }
            return rv;
        }
        let Some(sim) = current() else {
            return CKR_CRYPTOKI_NOT_INITIALIZED;
        };
        st.enter();
        let rv = f(&sim);
        st.leave();
        rv
    }))
    .unwrap_or(CKR_GENERAL_ERROR)
}

/// As [`call`], for functions that work without `C_Initialize` (the entry points).
pub fn call_uninit(name: &'static str, f: impl FnOnce() -> CK_RV) -> CK_RV {
    catch_unwind(AssertUnwindSafe(|| {
        *stats().calls.lock().entry(name).or_insert(0) += 1;
        f()
    }))
    .unwrap_or(CKR_GENERAL_ERROR)
}

/// Hold the PQC service queue (when enabled) for one signature: the signature takes at
/// least the configured service time, and only one is served at a time.
pub fn pqc_service<T>(sim: &Sim, f: impl FnOnce() -> T) -> T {
    let (enabled, service) = {
        let k = knobs().lock();
        (
            k.pqc_queue,
            Duration::from_secs_f64(k.service_ms.max(0.0) / 1000.0),
        )
    };
    if !enabled {
        return f();
    }
    let _turn = sim.pqc_queue.lock();
    let t = Instant::now();
    let r = f();
    let spent = t.elapsed();
    if spent < service {
        std::thread::sleep(service - spent);
    }
    r
}

/// Run `f` on a thread with a large stack and wait for it. hbs-lms keeps its working
/// arrays (sized for 8 levels of H25 trees) on the stack — more than a caller's thread may
/// have; lunasim runs on its callers' threads.
pub fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("lunasim-hss".into())
            .stack_size(256 << 20)
            .spawn_scoped(scope, f)
            .expect("spawn HSS worker")
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// Is `m` a PQC signing mechanism served by the queue?
pub fn is_pqc_sign(m: CK_MECHANISM_TYPE) -> bool {
    matches!(
        m,
        CKM_ML_DSA | CKM_HASH_ML_DSA | CKM_HSS | CKM_SLH_DSA | CKM_HASH_SLH_DSA
    ) || (CKM_HASH_ML_DSA_SHA224..=CKM_HASH_ML_DSA_SHAKE256).contains(&m)
}
