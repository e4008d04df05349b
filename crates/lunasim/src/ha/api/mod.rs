//! The PKCS#11 functions on a group's virtual slot and its sessions (the outer layer
//! sends every call on a virtual slot or session here): slot and token information from
//! the primary member, sessions and logins on every member, objects made everywhere and
//! read from the primary, operations spread over the members ([`ops`]).
//!
//! Every member call goes through lunasim's outer functions with the member's own
//! session, so it is counted, delayed and fault-injected as a call on that member.

#![allow(non_snake_case)]

mod keys;
mod ops;

use std::collections::VecDeque;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cryptoki_sys::*;
use zeroize::Zeroizing;

pub use keys::*;
pub use ops::*;

use super::call;
use super::group::{Group, Login};
use super::objects::{self, Identity};
use super::replicate;
use super::session::{self, OpKind, VSession};
use crate::outer;
use crate::raw::{self, pad};
use crate::sim;
use crate::tpl::Tpl;

const UNREACHABLE: CK_RV = p11::names::luna::CKR_UNABLE_TO_CONNECT;

/// The wrapper every virtual call runs in: a panic barrier, the control file, the
/// initialized check. (Counting, latency and faults happen on the member calls.)
fn call(f: impl FnOnce() -> CK_RV) -> CK_RV {
    catch_unwind(AssertUnwindSafe(|| {
        crate::control::poll_file();
        if sim::current().is_none() {
            return CKR_CRYPTOKI_NOT_INITIALIZED;
        }
        f()
    }))
    .unwrap_or(CKR_GENERAL_ERROR)
}

fn group_call(slot: CK_SLOT_ID, f: impl FnOnce(&Arc<Group>) -> CK_RV) -> CK_RV {
    call(|| match super::group_of_slot(slot) {
        Some(g) if g.refused.is_some() => CKR_TOKEN_NOT_PRESENT,
        Some(g) => f(&g),
        None => CKR_SLOT_ID_INVALID,
    })
}

pub(super) fn session_call(
    _name: &'static str,
    h: CK_SESSION_HANDLE,
    f: impl FnOnce(&Arc<VSession>) -> CK_RV,
) -> CK_RV {
    call(|| match session::get(h) {
        Ok(vs) => f(&vs),
        Err(rv) => rv,
    })
}

/// Start an operation on the member it belongs on.
pub(super) fn op_init(
    vs: &VSession,
    kind: OpKind,
    name: &'static str,
    key: Option<CK_OBJECT_HANDLE>,
    f: impl Fn(CK_SESSION_HANDLE, CK_OBJECT_HANDLE) -> CK_RV,
) -> CK_RV {
    if vs.state.lock().ops.contains_key(&kind) {
        return CKR_OPERATION_ACTIVE;
    }
    let Some(m) = vs.member_for_new_op() else {
        return UNREACHABLE;
    };
    let rv = match key {
        Some(k) => {
            let rv = match vs.inner(m) {
                Ok(ih) => vs.with_object(k, m, |mk| f(ih, mk)),
                Err(rv) => rv,
            };
            vs.group.record_served(m, name);
            // A key that is not on this member: PKCS#11 calls that a bad key handle.
            if rv == CKR_OBJECT_HANDLE_INVALID {
                CKR_KEY_HANDLE_INVALID
            } else {
                rv
            }
        }
        None => vs.on(m, name, |ih| f(ih, 0)),
    };
    if rv == CKR_OK {
        vs.state.lock().ops.insert(kind, m);
    }
    rv
}

/// Continue an operation on its member; `ends` says whether this answer ended it.
pub(super) fn op_step(
    vs: &VSession,
    kind: OpKind,
    name: &'static str,
    ends: impl Fn(CK_RV) -> bool,
    f: impl FnOnce(CK_SESSION_HANDLE) -> CK_RV,
) -> CK_RV {
    let Some(m) = vs.state.lock().ops.get(&kind).copied() else {
        return CKR_OPERATION_NOT_INITIALIZED;
    };
    let rv = vs.on(m, name, f);
    if ends(rv) {
        vs.state.lock().ops.remove(&kind);
    }
    rv
}

/// The primary member, then the other alive ones: who answers reads.
fn readers(g: &Group) -> Vec<usize> {
    let mut v = Vec::new();
    if let Some(p) = g.primary() {
        v.push(p);
    }
    for m in g.alive() {
        if !v.contains(&m) {
            v.push(m);
        }
    }
    v
}

/// Run a read on the first member that has the object.
fn read_object(
    vs: &VSession,
    obj: CK_OBJECT_HANDLE,
    name: &'static str,
    f: impl Fn(CK_SESSION_HANDLE, CK_OBJECT_HANDLE) -> CK_RV,
) -> CK_RV {
    let mut rv = UNREACHABLE;
    for m in readers(&vs.group) {
        let ih = match vs.inner(m) {
            Ok(ih) => ih,
            Err(e) => {
                rv = e;
                continue;
            }
        };
        rv = vs.with_object(obj, m, |o| f(ih, o));
        vs.group.record_served(m, name);
        if rv != CKR_OBJECT_HANDLE_INVALID {
            return rv;
        }
    }
    rv
}

// ---- slots and tokens -------------------------------------------------------------------

pub fn C_GetSlotInfo(slot: CK_SLOT_ID, info: *mut CK_SLOT_INFO) -> CK_RV {
    call(|| {
        let Some(g) = super::group_of_slot(slot) else {
            return CKR_SLOT_ID_INVALID;
        };
        if info.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let (major, minor, _) = sim::current()
            .map(|s| s.config.firmware())
            .unwrap_or((7, 9, 1));
        // SAFETY: plain old data.
        let mut i: CK_SLOT_INFO = unsafe { std::mem::zeroed() };
        match &g.refused {
            Some(why) => pad(
                &mut i.slotDescription,
                &format!("HA group '{}' not started: {}", g.config.label, why.short),
            ),
            None => {
                pad(
                    &mut i.slotDescription,
                    &format!("HA group '{}' (virtual slot)", g.config.label),
                );
                i.flags = CKF_TOKEN_PRESENT;
            }
        }
        pad(&mut i.manufacturerID, "Thales (lunasim)");
        i.hardwareVersion = CK_VERSION { major: 7, minor: 0 };
        i.firmwareVersion = CK_VERSION {
            major: major as u8,
            minor: minor as u8,
        };
        // SAFETY: info is non-null and points to a CK_SLOT_INFO.
        unsafe { *info = i };
        CKR_OK
    })
}

pub fn C_GetTokenInfo(slot: CK_SLOT_ID, info: *mut CK_TOKEN_INFO) -> CK_RV {
    group_call(slot, |g| {
        let Some(p) = g.primary() else {
            return UNREACHABLE;
        };
        let rv = outer::C_GetTokenInfo(g.members[p].slot, info);
        if rv == CKR_OK {
            // SAFETY: filled by the member's C_GetTokenInfo above (info is non-null).
            let i = unsafe { &mut *info };
            pad(&mut i.label, &g.config.label);
            pad(&mut i.serialNumber, &g.config.serial);
            pad(&mut i.model, "LunaSim HA");
            let open = session::of_group(g);
            i.ulSessionCount = open.len() as CK_ULONG;
            i.ulRwSessionCount = open
                .iter()
                .filter(|s| s.flags & CKF_RW_SESSION != 0)
                .count() as CK_ULONG;
        }
        rv
    })
}

pub fn C_GetMechanismList(
    slot: CK_SLOT_ID,
    list: *mut CK_MECHANISM_TYPE,
    count: *mut CK_ULONG,
) -> CK_RV {
    group_call(slot, |g| match g.primary() {
        Some(p) => outer::C_GetMechanismList(g.members[p].slot, list, count),
        None => UNREACHABLE,
    })
}

pub fn C_GetMechanismInfo(
    slot: CK_SLOT_ID,
    m: CK_MECHANISM_TYPE,
    info: *mut CK_MECHANISM_INFO,
) -> CK_RV {
    group_call(slot, |g| match g.primary() {
        Some(p) => outer::C_GetMechanismInfo(g.members[p].slot, m, info),
        None => UNREACHABLE,
    })
}

/// A group is initialized member by member, never through its virtual slot.
pub fn C_InitToken(
    slot: CK_SLOT_ID,
    _pin: *mut CK_UTF8CHAR,
    _len: CK_ULONG,
    _label: *mut CK_UTF8CHAR,
) -> CK_RV {
    group_call(slot, |_| CKR_FUNCTION_NOT_SUPPORTED)
}

// ---- sessions ---------------------------------------------------------------------------

pub fn C_OpenSession(
    slot: CK_SLOT_ID,
    flags: CK_FLAGS,
    _app: *mut c_void,
    _notify: CK_NOTIFY,
    out: *mut CK_SESSION_HANDLE,
) -> CK_RV {
    group_call(slot, |g| {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        if flags & CKF_SERIAL_SESSION == 0 {
            return CKR_SESSION_PARALLEL_NOT_SUPPORTED;
        }
        match session::open(g, flags) {
            Ok(h) => {
                // SAFETY: out is non-null.
                unsafe { *out = h };
                CKR_OK
            }
            Err(rv) => rv,
        }
    })
}

pub fn C_CloseAllSessions(slot: CK_SLOT_ID) -> CK_RV {
    group_call(slot, |g| {
        for s in session::of_group(g) {
            let _ = session::close(s.handle);
        }
        CKR_OK
    })
}

pub fn C_CloseSession(h: CK_SESSION_HANDLE) -> CK_RV {
    call(|| session::close(h).err().unwrap_or(CKR_OK))
}

pub fn C_GetSessionInfo(h: CK_SESSION_HANDLE, info: *mut CK_SESSION_INFO) -> CK_RV {
    session_call("C_GetSessionInfo", h, |vs| {
        let Some(p) = vs.group.primary() else {
            return UNREACHABLE;
        };
        let rv = vs.on(p, "C_GetSessionInfo", |ih| {
            outer::C_GetSessionInfo(ih, info)
        });
        if rv == CKR_OK {
            // SAFETY: filled by the member above.
            let i = unsafe { &mut *info };
            i.slotID = vs.group.slot;
            i.flags = vs.flags | CKF_SERIAL_SESSION;
        }
        rv
    })
}

/// Log in on the primary first (a wrong PIN costs one attempt on one member), then on the
/// other alive members; the credential is kept for members that join later.
pub fn C_Login(
    h: CK_SESSION_HANDLE,
    user: CK_USER_TYPE,
    pin: *mut CK_UTF8CHAR,
    len: CK_ULONG,
) -> CK_RV {
    session_call("C_Login", h, |vs| {
        let Some(p) = vs.group.primary() else {
            return UNREACHABLE;
        };
        let rv = vs.on(p, "C_Login", |ih| outer::C_Login(ih, user, pin, len));
        if rv != CKR_OK {
            return rv;
        }
        // SAFETY: pin has len readable bytes per contract.
        let secret = Zeroizing::new(unsafe { raw::bytes(pin, len) }.to_vec());
        *vs.group.login.lock() = Some(Login { user, pin: secret });
        for m in vs.group.alive() {
            if m != p {
                if let Err(rv) = vs.inner(m) {
                    eprintln!(
                        "lunasim: {}: member {} refused the group's login ({rv:#x})",
                        vs.group.name(),
                        m + 1
                    );
                }
            }
        }
        if vs.group.config.auto_resync {
            super::control::resync_waiting(&vs.group);
        }
        rv
    })
}

pub fn C_LoginUser(
    h: CK_SESSION_HANDLE,
    _user: CK_USER_TYPE,
    _pin: *mut CK_UTF8CHAR,
    _len: CK_ULONG,
    _name: *mut CK_UTF8CHAR,
    _name_len: CK_ULONG,
) -> CK_RV {
    session_call("C_LoginUser", h, |_| CKR_FUNCTION_NOT_SUPPORTED)
}

pub fn C_Logout(h: CK_SESSION_HANDLE) -> CK_RV {
    session_call("C_Logout", h, |vs| {
        let mut rv = CKR_USER_NOT_LOGGED_IN;
        for (m, ih) in vs.members() {
            let r = outer::C_Logout(ih);
            vs.group.record_served(m, "C_Logout");
            if Some(m) == vs.group.primary() || rv != CKR_OK {
                rv = r;
            }
        }
        *vs.group.login.lock() = None;
        rv
    })
}

/// Apply a PIN call to every alive member, the primary first (which decides).
fn every_member(
    vs: &VSession,
    name: &'static str,
    f: impl Fn(CK_SESSION_HANDLE) -> CK_RV,
) -> CK_RV {
    let Some(p) = vs.group.primary() else {
        return UNREACHABLE;
    };
    let rv = vs.on(p, name, &f);
    if rv != CKR_OK {
        return rv;
    }
    for m in vs.group.alive() {
        if m != p {
            let r = vs.on(m, name, &f);
            if r != CKR_OK {
                eprintln!(
                    "lunasim: {}: {name} failed on member {} ({r:#x})",
                    vs.group.name(),
                    m + 1
                );
            }
        }
    }
    rv
}

pub fn C_InitPIN(h: CK_SESSION_HANDLE, pin: *mut CK_UTF8CHAR, len: CK_ULONG) -> CK_RV {
    session_call("C_InitPIN", h, |vs| {
        every_member(vs, "C_InitPIN", |ih| outer::C_InitPIN(ih, pin, len))
    })
}

pub fn C_SetPIN(
    h: CK_SESSION_HANDLE,
    old: *mut CK_UTF8CHAR,
    old_len: CK_ULONG,
    new: *mut CK_UTF8CHAR,
    new_len: CK_ULONG,
) -> CK_RV {
    session_call("C_SetPIN", h, |vs| {
        let rv = every_member(vs, "C_SetPIN", |ih| {
            outer::C_SetPIN(ih, old, old_len, new, new_len)
        });
        if rv == CKR_OK {
            if let Some(l) = vs.group.login.lock().as_mut() {
                // SAFETY: new has new_len readable bytes per contract.
                l.pin = Zeroizing::new(unsafe { raw::bytes(new, new_len) }.to_vec());
            }
        }
        rv
    })
}

pub fn C_GetOperationState(h: CK_SESSION_HANDLE, _s: *mut CK_BYTE, _l: *mut CK_ULONG) -> CK_RV {
    session_call("C_GetOperationState", h, |_| CKR_FUNCTION_NOT_SUPPORTED)
}

pub fn C_SetOperationState(
    h: CK_SESSION_HANDLE,
    _s: *mut CK_BYTE,
    _l: CK_ULONG,
    _e: CK_OBJECT_HANDLE,
    _a: CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_SetOperationState", h, |_| CKR_FUNCTION_NOT_SUPPORTED)
}

pub fn C_SessionCancel(h: CK_SESSION_HANDLE, flags: CK_FLAGS) -> CK_RV {
    session_call("C_SessionCancel", h, |vs| {
        let mut rv = CKR_OK;
        for (_, ih) in vs.members() {
            let r = outer::C_SessionCancel(ih, flags);
            if r != CKR_OK {
                rv = r;
            }
        }
        vs.state.lock().ops.clear();
        rv
    })
}

pub fn C_GetFunctionStatus(h: CK_SESSION_HANDLE) -> CK_RV {
    session_call("C_GetFunctionStatus", h, |_| CKR_FUNCTION_NOT_PARALLEL)
}

pub fn C_CancelFunction(h: CK_SESSION_HANDLE) -> CK_RV {
    session_call("C_CancelFunction", h, |_| CKR_FUNCTION_NOT_PARALLEL)
}

pub fn C_GetSessionValidationFlags(
    h: CK_SESSION_HANDLE,
    ty: CK_SESSION_VALIDATION_FLAGS_TYPE,
    flags: *mut CK_FLAGS,
) -> CK_RV {
    session_call("C_GetSessionValidationFlags", h, |vs| {
        match vs.group.primary() {
            Some(p) => vs.on(p, "C_GetSessionValidationFlags", |ih| {
                outer::C_GetSessionValidationFlags(ih, ty, flags)
            }),
            None => UNREACHABLE,
        }
    })
}

pub fn C_AsyncComplete(
    h: CK_SESSION_HANDLE,
    _n: *mut CK_UTF8CHAR,
    _d: *mut CK_ASYNC_DATA,
) -> CK_RV {
    session_call("C_AsyncComplete", h, |_| CKR_FUNCTION_NOT_SUPPORTED)
}

pub fn C_AsyncGetID(h: CK_SESSION_HANDLE, _n: *mut CK_UTF8CHAR, _i: *mut CK_ULONG) -> CK_RV {
    session_call("C_AsyncGetID", h, |_| CKR_FUNCTION_NOT_SUPPORTED)
}

pub fn C_AsyncJoin(
    h: CK_SESSION_HANDLE,
    _n: *mut CK_UTF8CHAR,
    _i: CK_ULONG,
    _d: *mut CK_BYTE,
    _l: CK_ULONG,
) -> CK_RV {
    session_call("C_AsyncJoin", h, |_| CKR_FUNCTION_NOT_SUPPORTED)
}

// ---- objects ----------------------------------------------------------------------------

pub fn C_CreateObject(
    h: CK_SESSION_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_CreateObject", h, |vs| {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        // SAFETY: the caller's template is valid for reading.
        let mut tpl = match unsafe { Tpl::from_raw(t, n) } {
            Ok(t) => t,
            Err(rv) => return rv,
        };
        if let Err(rv) = give_id(vs, &mut tpl) {
            return rv;
        }
        put_handle(out, replicate::create_everywhere(vs, &tpl))
    })
}

/// A random `CKA_ID` for a key or certificate the caller gave none.
fn give_id(vs: &VSession, tpl: &mut Tpl) -> Result<(), CK_RV> {
    let p = vs.group.primary().ok_or(UNREACHABLE)?;
    let id = replicate::random(vs, p, 16)?;
    replicate::ensure_id(tpl, &id);
    Ok(())
}

fn put_handle(out: *mut CK_OBJECT_HANDLE, r: Result<CK_OBJECT_HANDLE, CK_RV>) -> CK_RV {
    match r {
        Ok(h) => {
            // SAFETY: out was checked non-null by the caller function.
            unsafe { *out = h };
            CKR_OK
        }
        Err(rv) => rv,
    }
}

pub fn C_CopyObject(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_CopyObject", h, |vs| {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        // SAFETY: the caller's template is valid for reading.
        let mut overrides = match unsafe { Tpl::from_raw(t, n) } {
            Ok(t) => t,
            Err(rv) => return rv,
        };
        let Some(source) = vs.group.objects.lock().get(obj).cloned() else {
            return CKR_OBJECT_HANDLE_INVALID;
        };
        let record = source
            .uid
            .as_deref()
            .and_then(|u| replicate::load(&vs.group.store, u));
        let Some((_, mut tpl)) = record else {
            // Not made in the group: lunasim has no record to copy it from everywhere.
            return CKR_ACTION_PROHIBITED;
        };
        if overrides.get(CKA_ID).is_none() && objects::has_id(source.identity.class) {
            match vs.group.primary().map(|p| replicate::random(vs, p, 16)) {
                Some(Ok(id)) => overrides.set(CKA_ID, id),
                Some(Err(rv)) => return rv,
                None => return UNREACHABLE,
            }
        }
        tpl.merge(&overrides);
        put_handle(out, replicate::create_everywhere(vs, &tpl))
    })
}

pub fn C_DestroyObject(h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> CK_RV {
    session_call("C_DestroyObject", h, |vs| {
        replicate::destroy_everywhere(vs, obj)
    })
}

pub fn C_GetObjectSize(h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE, size: *mut CK_ULONG) -> CK_RV {
    session_call("C_GetObjectSize", h, |vs| {
        read_object(vs, obj, "C_GetObjectSize", |ih, o| {
            outer::C_GetObjectSize(ih, o, size)
        })
    })
}

pub fn C_GetAttributeValue(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    session_call("C_GetAttributeValue", h, |vs| {
        // SAFETY: the caller's template is valid (read only here).
        let asked = crate::ouid::asked(unsafe { crate::raw::template(t, n) });
        let rv = read_object(vs, obj, "C_GetAttributeValue", |ih, o| {
            outer::C_GetAttributeValue(ih, o, t, n)
        });
        // The copies of an object share one OUID, as cloned objects do on a Luna: the
        // member's own answer is replaced by one derived from the group's identity.
        let identity = vs.group.objects.lock().get(obj).map(|v| v.identity.clone());
        // SAFETY: the caller's template is valid and writable, each buffer as long as
        // `asked` recorded before the call.
        unsafe {
            crate::ouid::fill_inner(crate::raw::template_mut(t, n), &asked, rv, || {
                Some(group_ouid(&vs.group.config.serial, &identity?))
            })
        }
    })
}

pub fn C_SetAttributeValue(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    session_call("C_SetAttributeValue", h, |vs| {
        // SAFETY: the caller's template is valid for reading.
        match unsafe { Tpl::from_raw(t, n) } {
            Ok(changes) => replicate::set_everywhere(vs, obj, &changes),
            Err(rv) => rv,
        }
    })
}

/// The OUID every copy of a group's object answers with: from the group and the object's
/// class and `CKA_ID` (unique in a group, see [`super::objects`]).
fn group_ouid(group_serial: &str, i: &Identity) -> Vec<u8> {
    let what = format!("ha/{group_serial}/{}/{}", i.class, hex::encode(&i.id));
    crate::ouid::derive(what.as_bytes())
}

/// Searches run on the primary member; what they find becomes virtual handles. lunasim's
/// own HSS objects never belong to a group (they cannot be cloned) and are left out.
pub fn C_FindObjectsInit(h: CK_SESSION_HANDLE, t: *mut CK_ATTRIBUTE, n: CK_ULONG) -> CK_RV {
    session_call("C_FindObjectsInit", h, |vs| {
        if vs.state.lock().find.is_some() {
            return CKR_OPERATION_ACTIVE;
        }
        // SAFETY: the caller's template is valid for reading.
        let mut tpl = match unsafe { Tpl::from_raw(t, n) } {
            Ok(t) => t,
            Err(rv) => return rv,
        };
        let Some(p) = vs.group.primary() else {
            return UNREACHABLE;
        };
        let ih = match vs.inner(p) {
            Ok(ih) => ih,
            Err(rv) => return rv,
        };
        // The group's OUIDs are its own (see C_GetAttributeValue): matched here, not on
        // the member.
        let ouid = tpl.get(crate::ouid::CKA_OUID).map(<[u8]>::to_vec);
        tpl.remove(crate::ouid::CKA_OUID);
        let found = match call::find(ih, &mut tpl) {
            Ok(f) => f,
            Err(rv) => return rv,
        };
        vs.group.record_served(p, "C_FindObjects");
        let mut handles = VecDeque::new();
        for o in found.into_iter().filter(|o| !crate::objects::is_ours(*o)) {
            let (identity, token): (Identity, bool) = match Identity::read(ih, o) {
                Ok(x) => x,
                Err(CKR_OBJECT_HANDLE_INVALID) => continue,
                Err(rv) => return rv,
            };
            if ouid
                .as_ref()
                .is_some_and(|want| *want != group_ouid(&vs.group.config.serial, &identity))
            {
                continue;
            }
            let mut table = vs.group.objects.lock();
            let vh = table.handle_for(&identity, token);
            if let Some(v) = table.get_mut(vh) {
                v.on.insert(p, o);
            }
            if !handles.contains(&vh) {
                handles.push_back(vh);
            }
        }
        vs.state.lock().find = Some(handles);
        CKR_OK
    })
}

pub fn C_FindObjects(
    h: CK_SESSION_HANDLE,
    out: *mut CK_OBJECT_HANDLE,
    max: CK_ULONG,
    count: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_FindObjects", h, |vs| {
        if count.is_null() || (out.is_null() && max > 0) {
            return CKR_ARGUMENTS_BAD;
        }
        let mut st = vs.state.lock();
        let Some(pending) = st.find.as_mut() else {
            return CKR_OPERATION_NOT_INITIALIZED;
        };
        let take = (max as usize).min(pending.len());
        for (i, vh) in pending.drain(..take).enumerate() {
            // SAFETY: i < take <= max, within the caller's buffer.
            unsafe { *out.add(i) = vh };
        }
        // SAFETY: count is non-null.
        unsafe { *count = take as CK_ULONG };
        CKR_OK
    })
}

pub fn C_FindObjectsFinal(h: CK_SESSION_HANDLE) -> CK_RV {
    session_call("C_FindObjectsFinal", h, |vs| {
        match vs.state.lock().find.take() {
            Some(_) => CKR_OK,
            None => CKR_OPERATION_NOT_INITIALIZED,
        }
    })
}
