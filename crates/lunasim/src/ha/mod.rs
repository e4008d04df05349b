//! HA groups, as Luna's client presents them: several member partitions — each a slot of
//! the inner module with its own token, and a simulated HSM of its own with its own
//! statistics and store — behind one virtual slot.
//!
//! - Objects made in the group are made on every alive member with the same attributes
//!   and `CKA_ID`; keys are made on one member and replicated ([`replicate`]).
//! - Operations are spread over the alive members in turn; a member taken down
//!   (`member_down`) is skipped without an error to the caller; a member that comes back
//!   "needs sync" until what it missed is replicated (`resync`, or at once with
//!   `auto_resync`).
//! - HSS keys cannot be cloned, so generating one in a group is refused.
//! - `CA_GetHAState` / `CA_GetCurrentHAState` report the group ([`state`]).
//!
//! The groups' state is process-wide, like the fault knobs: a client's `C_Finalize` +
//! `C_Initialize` does not bring a member back.
//!
//! HA is a layer over the single-partition core: it uses the core (its member calls go
//! through [`crate::outer`] with each member's own session), and the core knows it only as
//! a [`crate::layer::Layer`] ([`Groups`], wired in by the crate root) — apart from the
//! outer dispatch, which sends calls on a virtual slot or session to [`api`].

pub mod api;
pub mod call;
pub mod config;
pub mod control;
pub mod group;
pub mod objects;
pub mod replicate;
pub mod session;
pub mod state;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use cryptoki_sys::*;
use parking_lot::RwLock;
use serde_json::Value;

use crate::layer::{self, Hsm, Layer, OwnHsm};
use crate::sim::{self, Sim};
use crate::stats::{self, Stats};
use group::{Group, Member, MemberState};

static ENABLED: AtomicBool = AtomicBool::new(false);

fn groups() -> &'static RwLock<Vec<Arc<Group>>> {
    static G: OnceLock<RwLock<Vec<Arc<Group>>>> = OnceLock::new();
    G.get_or_init(Default::default)
}

/// Whether any HA group is configured (the routing checks cost nothing otherwise).
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}

pub fn all() -> Vec<Arc<Group>> {
    groups().read().clone()
}

pub fn group_of_slot(slot: CK_SLOT_ID) -> Option<Arc<Group>> {
    if !enabled() {
        return None;
    }
    groups().read().iter().find(|g| g.slot == slot).cloned()
}

pub fn is_virtual_slot(slot: CK_SLOT_ID) -> bool {
    enabled() && groups().read().iter().any(|g| g.slot == slot)
}

pub fn is_virtual_session(h: CK_SESSION_HANDLE) -> bool {
    enabled() && session::is_virtual(h)
}

/// The member whose own slot this is.
fn member_of_slot(slot: CK_SLOT_ID) -> Option<(Arc<Group>, usize)> {
    if !enabled() {
        return None;
    }
    groups().read().iter().find_map(|g| {
        g.members
            .iter()
            .find(|m| m.slot == slot)
            .map(|m| (g.clone(), m.index))
    })
}

fn member_stats(slot: CK_SLOT_ID) -> Option<&'static Stats> {
    member_of_slot(slot).map(|(g, m)| g.members[m].stats)
}

/// Run a call on `slot` counted on the member's HSM when the slot is a member's.
pub fn as_member_of_slot<R>(slot: CK_SLOT_ID, f: impl FnOnce() -> R) -> R {
    match member_stats(slot) {
        Some(st) => stats::scoped(st, f),
        None => f(),
    }
}

/// Run a call on session `h` counted on the member's HSM when it is a member's session.
pub fn as_member_of_session<R>(h: CK_SESSION_HANDLE, f: impl FnOnce() -> R) -> R {
    if !enabled() {
        return f();
    }
    match sim::current()
        .and_then(|s| layer::slot_of_session(&s, h))
        .and_then(member_stats)
    {
        Some(st) => stats::scoped(st, f),
        None => f(),
    }
}

/// The slot whose HSM answers for `slot`: a virtual slot's primary member (or first
/// member when none is alive).
fn physical_slot(slot: CK_SLOT_ID) -> CK_SLOT_ID {
    match group_of_slot(slot) {
        Some(g) if g.refused.is_none() => {
            let m = g.primary().unwrap_or(0);
            g.members.get(m).map(|m| m.slot).unwrap_or(slot)
        }
        _ => slot,
    }
}

struct InnerSlots<'a>(&'a Sim, Vec<CK_SLOT_ID>);

impl config::InnerSlots for InnerSlots<'_> {
    fn token_initialized(&self, slot: u64) -> Option<bool> {
        if !self.1.contains(&slot) {
            return None;
        }
        Some(
            self.0
                .inner
                .token_info(slot)
                .map(|t| t.initialized())
                .unwrap_or(false),
        )
    }
}

/// Build the groups from the configuration at `C_Initialize`. A group that started keeps
/// its state across later initializations (a real group outlives a client's reconnect);
/// a refused one is checked again (its member's token may be there now).
fn on_initialize() {
    let Some(s) = sim::current() else { return };
    if s.config.ha_groups.is_empty() {
        return;
    }
    let before = all();
    if !before.is_empty() && before.iter().all(|g| g.refused.is_none()) {
        return;
    }
    let inner = s.inner.slots(false).unwrap_or_default();
    let checker = InnerSlots(&s, inner.clone());
    let mut taken = inner.clone();
    let mut built = Vec::new();
    for (i, cfg) in s.config.ha_groups.iter().enumerate() {
        let slot = cfg.virtual_slot(i);
        if let Some(g) = before.get(i).filter(|g| g.refused.is_none()) {
            taken.push(slot);
            built.push(g.clone());
            continue;
        }
        let refused = cfg.refusal(i, &checker, &taken);
        taken.push(slot);
        let store = cfg.group_store(&s.store);
        let members = if refused.is_some() {
            Vec::new()
        } else {
            cfg.members
                .iter()
                .enumerate()
                .map(|(j, m)| {
                    let store = cfg.member_store(&s.store, m);
                    let st = stats::new_hsm();
                    st.load_boot_time(&store);
                    Member {
                        index: j,
                        serial: m.serial.clone(),
                        slot: m.slot,
                        store,
                        stats: st,
                        state: parking_lot::Mutex::new(MemberState::default()),
                    }
                })
                .collect()
        };
        if let Some(why) = &refused {
            eprintln!(
                "lunasim: {}; the group is not started, the other slots work",
                why.message
            );
        }
        built.push(Arc::new(Group::new(
            i,
            cfg.clone(),
            slot,
            refused,
            store,
            members,
        )));
    }
    *groups().write() = built;
    ENABLED.store(true, Ordering::Release);
}

/// `C_Finalize`: the member sessions are about to go.
fn on_finalize() {
    session::forget_all();
    for g in all() {
        for m in 0..g.members.len() {
            g.objects.lock().forget_member(m);
        }
    }
}

/// Sessions were dropped (a token removal, a disconnect): virtual sessions are invalid.
fn drop_sessions() {
    session::drop_all();
    for g in all() {
        for m in 0..g.members.len() {
            g.objects.lock().forget_member(m);
        }
    }
}

/// `C_GetSlotList`: the inner module's slots without the members of `ha_only` groups,
/// then the virtual slots (a refused group's slot has no token).
fn slot_list(present: CK_BBOOL, list: *mut CK_SLOT_ID, count: *mut CK_ULONG) -> CK_RV {
    if !enabled() {
        return crate::outer::base!(C_GetSlotList, present, list, count);
    }
    crate::entry::call("C_GetSlotList", |s| {
        if count.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let mut slots = match s.inner.slots(present != CK_FALSE) {
            Ok(v) => v,
            Err(e) => return e.rv().unwrap_or(CKR_GENERAL_ERROR),
        };
        let groups = all();
        slots.retain(|slot| {
            !groups.iter().any(|g| {
                g.config.ha_only && g.refused.is_none() && g.members.iter().any(|m| m.slot == *slot)
            })
        });
        for g in &groups {
            if present == CK_FALSE || g.refused.is_none() {
                slots.push(g.slot);
            }
        }
        // SAFETY: count is non-null; list, when non-null, has *count entries.
        unsafe {
            let room = *count;
            *count = slots.len() as CK_ULONG;
            if list.is_null() {
                return CKR_OK;
            }
            if (room as usize) < slots.len() {
                return CKR_BUFFER_TOO_SMALL;
            }
            std::ptr::copy_nonoverlapping(slots.as_ptr(), list, slots.len());
        }
        CKR_OK
    })
}

/// The HA groups as the core sees them ([`Layer`]; wired in by the crate root).
pub struct Groups;

impl Layer for Groups {
    fn initialized(&self) {
        on_initialize();
    }

    fn finalizing(&self) {
        on_finalize();
    }

    fn sessions_dropped(&self) {
        drop_sessions();
    }

    fn control(&self, op: &str, v: &Value) -> Option<Result<String, String>> {
        control::execute(op, v)
    }

    fn slot_list(&self, present: CK_BBOOL, list: *mut CK_SLOT_ID, count: *mut CK_ULONG) -> CK_RV {
        slot_list(present, list, count)
    }

    fn physical_slot(&self, slot: CK_SLOT_ID) -> CK_SLOT_ID {
        physical_slot(slot)
    }

    /// A member's own slot is its own HSM.
    fn own_hsm(&self, slot: CK_SLOT_ID) -> Option<OwnHsm> {
        member_of_slot(slot).map(|(g, m)| OwnHsm {
            stats: g.members[m].stats,
            serial: g.members[m].serial.clone(),
            store: g.members[m].store.clone(),
        })
    }

    fn owns_session(&self, h: CK_SESSION_HANDLE) -> bool {
        is_virtual_session(h)
    }

    /// Every member of the session's group.
    fn session_hsms(&self, h: CK_SESSION_HANDLE) -> Option<Vec<Hsm>> {
        let vs = session::get(h).ok()?;
        Some(
            vs.group
                .members
                .iter()
                .map(|m| Hsm {
                    stats: m.stats,
                    serial: m.serial.parse().unwrap_or(0),
                    slot: m.slot,
                })
                .collect(),
        )
    }
}
