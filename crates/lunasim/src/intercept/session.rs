//! Session management: lunasim keeps its own state beside each inner session (slot,
//! read-write, an HSS search or operation), and forgets a closed session's HSS session
//! objects.

use cryptoki_sys::*;

use crate::entry;
use crate::sim::{self, Sim};

pub extern "C" fn C_OpenSession(
    slot: CK_SLOT_ID,
    flags: CK_FLAGS,
    app: *mut std::os::raw::c_void,
    notify: CK_NOTIFY,
    out: *mut CK_SESSION_HANDLE,
) -> CK_RV {
    entry::call("C_OpenSession", |s| {
        let Some(f) = s.f().C_OpenSession else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        // SAFETY: pass-through; out is non-null.
        let rv = unsafe { f(slot, flags, app, notify, out) };
        if rv == CKR_OK {
            // SAFETY: the inner module wrote the handle.
            let h = unsafe { *out };
            s.sessions.lock().insert(
                h,
                sim::SessionState {
                    slot,
                    rw: flags & CKF_RW_SESSION != 0,
                    ..Default::default()
                },
            );
        }
        rv
    })
}

fn forget_sessions(s: &Sim, which: impl Fn(CK_SESSION_HANDLE, CK_SLOT_ID) -> bool) {
    let gone: Vec<CK_SESSION_HANDLE> = {
        let mut sessions = s.sessions.lock();
        let gone: Vec<_> = sessions
            .iter()
            .filter(|(h, st)| which(**h, st.slot))
            .map(|(h, _)| *h)
            .collect();
        for h in &gone {
            sessions.remove(h);
        }
        gone
    };
    s.objects
        .lock()
        .keys
        .retain(|k| k.token || !k.owner.map(|o| gone.contains(&o)).unwrap_or(false));
}

pub extern "C" fn C_CloseSession(h: CK_SESSION_HANDLE) -> CK_RV {
    entry::call("C_CloseSession", |s| {
        let Some(f) = s.f().C_CloseSession else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        // SAFETY: takes a handle only.
        let rv = unsafe { f(h) };
        if rv == CKR_OK {
            forget_sessions(s, |x, _| x == h);
        }
        rv
    })
}

pub extern "C" fn C_CloseAllSessions(slot: CK_SLOT_ID) -> CK_RV {
    entry::call("C_CloseAllSessions", |s| {
        let Some(f) = s.f().C_CloseAllSessions else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        // SAFETY: takes a slot ID only.
        let rv = unsafe { f(slot) };
        if rv == CKR_OK {
            forget_sessions(s, |_, sl| sl == slot);
        }
        rv
    })
}

/// The inner module's view of a session: (slot, logged in as user, read-write).
pub(super) fn session_info(
    s: &Sim,
    h: CK_SESSION_HANDLE,
) -> Result<(CK_SLOT_ID, bool, bool), CK_RV> {
    let Some(f) = s.f().C_GetSessionInfo else {
        return Err(CKR_FUNCTION_NOT_SUPPORTED);
    };
    // SAFETY: plain old data.
    let mut info: CK_SESSION_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: info is a valid out pointer.
    let rv = unsafe { f(h, &mut info) };
    if rv != CKR_OK {
        return Err(rv);
    }
    let user = matches!(info.state, CKS_RO_USER_FUNCTIONS | CKS_RW_USER_FUNCTIONS);
    Ok((info.slotID, user, info.flags & CKF_RW_SESSION != 0))
}
