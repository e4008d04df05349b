//! `CA_GetHAState` and `CA_GetCurrentHAState` on a group's virtual slot, in the layout of
//! the Luna SDK (2018 and later: 20-character serials; `ha_state_layout = "legacy"` in
//! the configuration answers as the older SDKs did, with `CK_ULONG` serials), and the
//! group's state as JSON for the `ha_state` control command.

#![allow(non_snake_case)]

use cryptoki_sys::*;
use p11::vendor::{CK_HA_MEMBER, CK_HA_SERIAL_LEN, CK_HA_STATUS, CK_HA_STATUS_V1};
use serde_json::{json, Value};

use super::group::Group;
use crate::config::HaStateLayout as Layout;
use crate::entry;

/// A member's status: alive, or unreachable as a lost network HSM is.
pub fn member_status(g: &Group, m: usize) -> CK_RV {
    if g.members[m].alive() {
        CKR_OK
    } else {
        p11::names::luna::CKR_UNABLE_TO_CONNECT
    }
}

fn chars(s: &str) -> [u8; CK_HA_SERIAL_LEN] {
    let mut out = [0u8; CK_HA_SERIAL_LEN];
    let b = s.as_bytes();
    let n = b.len().min(CK_HA_SERIAL_LEN);
    out[..n].copy_from_slice(&b[..n]);
    out
}

pub fn current(g: &Group) -> CK_HA_STATUS {
    let mut s = CK_HA_STATUS {
        groupSerial: chars(&g.config.serial),
        listSize: g.members.len() as CK_ULONG,
        ..Default::default()
    };
    for (i, m) in g.members.iter().enumerate() {
        s.memberList[i] = CK_HA_MEMBER {
            memberSerial: chars(&m.serial),
            memberStatus: member_status(g, i),
        };
    }
    s
}

pub fn legacy(g: &Group) -> CK_HA_STATUS_V1 {
    let mut s = CK_HA_STATUS_V1 {
        groupSerial: g.config.serial.parse().unwrap_or(0),
        listSize: g.members.len() as CK_ULONG,
        ..Default::default()
    };
    for (i, m) in g.members.iter().enumerate() {
        s.memberList[i].memberSerial = m.serial.parse().unwrap_or(0);
        s.memberList[i].memberStatus = member_status(g, i);
    }
    s
}

fn write_state(name: &'static str, slot: CK_SLOT_ID, out: *mut CK_HA_STATUS) -> CK_RV {
    entry::call(name, |s| {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let Some(g) = super::group_of_slot(slot) else {
            return CKR_SLOT_ID_INVALID;
        };
        if g.refused.is_some() {
            return CKR_TOKEN_NOT_PRESENT;
        }
        match s.config.ha_state_layout.unwrap_or_default() {
            // SAFETY: the caller passes a CK_HA_STATUS of its SDK, per the prototype.
            Layout::Current => unsafe { *out = current(&g) },
            // SAFETY: an older SDK's caller passes the older (smaller) struct; we write
            // exactly that struct's size.
            Layout::Legacy => unsafe { *(out as *mut CK_HA_STATUS_V1) = legacy(&g) },
        }
        CKR_OK
    })
}

#[no_mangle]
pub extern "C" fn CA_GetHAState(slot: CK_SLOT_ID, out: *mut CK_HA_STATUS) -> CK_RV {
    write_state("CA_GetHAState", slot, out)
}

/// Client 10.7's near-real-time variant; lunasim's view is always current.
#[no_mangle]
pub extern "C" fn CA_GetCurrentHAState(slot: CK_SLOT_ID, out: *mut CK_HA_STATUS) -> CK_RV {
    write_state("CA_GetCurrentHAState", slot, out)
}

const _: p11::vendor::CA_GetHAState = CA_GetHAState;
const _: p11::vendor::CA_GetHAState = CA_GetCurrentHAState;

fn since_epoch(t: std::time::SystemTime) -> f64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The group as the `ha_state` control command reports it.
pub fn to_json(g: &Group) -> Value {
    let served = g.served.lock();
    let members: Vec<Value> = g
        .members
        .iter()
        .map(|m| {
            let st = m.state.lock();
            json!({
                "member": m.index + 1,
                "serial": m.serial,
                "slot": m.slot,
                "alive": !st.down,
                "needs_sync": !st.missed.is_empty(),
                "missing": st.missed.iter().filter(|x| matches!(x, super::group::Missed::Created { .. })).map(|x| x.identity().describe()).collect::<Vec<_>>(),
                "missed": st.missed.iter().map(|x| json!({"kind": x.kind(), "object": x.identity().describe()})).collect::<Vec<_>>(),
                "resync_error": st.resync_error,
                "served": served.iter().filter(|s| s.member == m.index).count(),
                "commands": m.stats.icd_commands.load(std::sync::atomic::Ordering::Relaxed),
            })
        })
        .collect();
    json!({
        "label": g.config.label,
        "serial": g.config.serial,
        "slot": g.slot,
        "ha_only": g.config.ha_only,
        "auto_resync": g.config.auto_resync,
        "refused": g.refused.as_ref().map(|r| &r.message),
        "members": members,
        "last_served": served.iter().rev().take(16).map(|s| json!({
            "member": s.member + 1,
            "function": s.function,
            "at": since_epoch(s.at),
        })).collect::<Vec<_>>(),
    })
}
