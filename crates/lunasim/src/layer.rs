//! The seam between lunasim's single-partition core and the layer over it, the HA groups:
//! what the core asks of that layer, as a trait, so that no core module names it. The
//! layer implements [`Layer`]; the crate root wires it in ([`get`]). The one other place
//! that names the layer is the outer dispatch (`outer::outer_fn!`), which sends a call on
//! a virtual slot or session to the layer's own functions.
//!
//! Without a group configured the layer answers as if it were not there: every slot is its
//! own partition on lunasim's default simulated HSM.

use std::path::PathBuf;

use cryptoki_sys::*;
use serde_json::Value;

use crate::sim::Sim;
use crate::stats::{self, Stats};

/// What a layer over the single-partition core adds to it.
pub trait Layer: Sync {
    /// `C_Initialize` succeeded: build what the configuration asks for.
    fn initialized(&self);
    /// `C_Finalize(NULL)` on an initialized module, before the core finalizes: the
    /// sessions the layer holds on partitions are about to go.
    fn finalizing(&self);
    /// Every session was dropped (a token removal, a disconnect).
    fn sessions_dropped(&self);
    /// A control command the core does not know; `None` when the layer does not know it
    /// either.
    fn control(&self, op: &str, v: &Value) -> Option<Result<String, String>>;
    /// `C_GetSlotList`, whole (the layer may hide slots and add its own).
    fn slot_list(&self, present: CK_BBOOL, list: *mut CK_SLOT_ID, count: *mut CK_ULONG) -> CK_RV;
    /// The partition whose HSM answers for `slot` (itself unless the layer owns it).
    fn physical_slot(&self, slot: CK_SLOT_ID) -> CK_SLOT_ID;
    /// The simulated HSM of a partition that has one of its own (an HA member's slot);
    /// `None`: lunasim's default HSM.
    fn own_hsm(&self, slot: CK_SLOT_ID) -> Option<OwnHsm>;
    /// Whether `h` is one of the layer's own session handles (open or not).
    fn owns_session(&self, h: CK_SESSION_HANDLE) -> bool;
    /// The HSMs behind one of the layer's sessions; `None`: no such session is open.
    fn session_hsms(&self, h: CK_SESSION_HANDLE) -> Option<Vec<Hsm>>;
}

/// A partition's own simulated HSM (see [`Layer::own_hsm`]).
pub struct OwnHsm {
    pub stats: &'static Stats,
    pub serial: String,
    pub store: PathBuf,
}

/// One simulated HSM a utilization read covers: its statistics, serial and partition.
pub struct Hsm {
    pub stats: &'static Stats,
    pub serial: u64,
    pub slot: CK_SLOT_ID,
}

/// The layer lunasim runs with.
pub fn get() -> &'static dyn Layer {
    crate::LAYER
}

/// The statistics of the HSM behind a slot.
pub fn stats_of_slot(slot: CK_SLOT_ID) -> &'static Stats {
    get()
        .own_hsm(get().physical_slot(slot))
        .map(|h| h.stats)
        .unwrap_or_else(stats::default_hsm)
}

/// The store of the HSM behind a slot (a partition's own, else lunasim's).
pub fn store_of_slot(s: &Sim, slot: CK_SLOT_ID) -> PathBuf {
    match get().own_hsm(slot) {
        Some(h) => h.store,
        None => s.store.clone(),
    }
}

/// The slot a session of the core is on.
pub fn slot_of_session(s: &Sim, h: CK_SESSION_HANDLE) -> Option<CK_SLOT_ID> {
    s.sessions.lock().get(&h).map(|st| st.slot)
}

/// The HSMs behind a session for `CA_Read*Utilization*`: one for a partition's session,
/// every member for a virtual session. `None`: not a session lunasim knows.
pub fn hsms_of_session(s: &Sim, h: CK_SESSION_HANDLE) -> Option<Vec<Hsm>> {
    if get().owns_session(h) {
        return get().session_hsms(h);
    }
    let slot = slot_of_session(s, h)?;
    Some(vec![match get().own_hsm(slot) {
        Some(own) => Hsm {
            stats: own.stats,
            serial: own.serial.parse().unwrap_or(0),
            slot,
        },
        None => Hsm {
            stats: stats::default_hsm(),
            serial: s.config.hsm_serial.unwrap_or(0x4C53_0001),
            slot,
        },
    }])
}
