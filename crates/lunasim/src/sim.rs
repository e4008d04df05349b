//! The initialized simulator: its configuration, the inner module, lunasim's own objects
//! and per-session state, and the PQC service queue. Installed by `C_Initialize`, removed
//! by `C_Finalize`; exported functions reach it through [`crate::entry`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cryptoki_sys::*;
use parking_lot::{Mutex, RwLock};

use crate::config::Config;
use crate::hss;
use crate::knobs::knobs;
use crate::objects::ObjectStore;

/// Per-session state lunasim keeps beside the inner module's.
#[derive(Default)]
pub struct SessionState {
    pub slot: CK_SLOT_ID,
    pub rw: bool,
    /// HSS handles still to be returned by the current search.
    pub find: Option<Vec<CK_OBJECT_HANDLE>>,
    pub op: Option<hss::Op>,
    /// An external-μ ML-DSA operation ([`crate::extmu`]).
    pub extmu: Option<crate::extmu::Op>,
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
    /// Luna's extra roles and policy 21, per slot.
    pub roles: Mutex<crate::roles::Roles>,
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

/// Is `m` a PQC signing mechanism served by the queue?
pub fn is_pqc_sign(m: CK_MECHANISM_TYPE) -> bool {
    matches!(
        m,
        CKM_ML_DSA
            | CKM_HASH_ML_DSA
            | CKM_HSS
            | CKM_SLH_DSA
            | CKM_HASH_SLH_DSA
            | crate::extmu::CKM_EXTMU_ML_DSA
    ) || (CKM_HASH_ML_DSA_SHA224..=CKM_HASH_ML_DSA_SHAKE256).contains(&m)
}
