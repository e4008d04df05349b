//! Logging in and out and setting PINs, with Luna's extra roles and policy 21 (the rules
//! are in [`crate::roles`]): `C_Login` for the Crypto User and Limited Crypto Officer,
//! `C_SetPIN` for any role, `C_InitPIN` flagging the Crypto Officer's PIN to be changed,
//! Luna's `CA_InitRolePIN`, the context-specific login of keys with
//! `CKA_ALWAYS_AUTHENTICATE`, and [`refusal`], the check the object and key functions make
//! before they act.

use cryptoki_sys::*;

use crate::entry;
use crate::roles::{Action, Role};
use crate::sim::Sim;

/// The session's slot and the inner module's login state (`None`: a public session).
fn inner_state(s: &Sim, h: CK_SESSION_HANDLE) -> Result<(CK_SLOT_ID, Option<Role>), CK_RV> {
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
    let role = match info.state {
        CKS_RW_SO_FUNCTIONS => Some(Role::SecurityOfficer),
        CKS_RO_USER_FUNCTIONS | CKS_RW_USER_FUNCTIONS => Some(Role::CryptoOfficer),
        _ => None,
    };
    Ok((info.slotID, role))
}

/// The role logged in on the session's slot.
fn role_of(s: &Sim, h: CK_SESSION_HANDLE) -> Result<(CK_SLOT_ID, Option<Role>), CK_RV> {
    let (slot, inner) = inner_state(s, h)?;
    Ok((slot, s.roles.lock().current(&s.store, slot, inner)))
}

/// Whether the session's role may do `action`: `None` to go on, else the answer (Luna's
/// `CKR_USER_NOT_AUTHORIZED`, or `CKR_PIN_EXPIRED` while the Crypto Officer's PIN is to be
/// changed). A session the inner module does not know is left to it to refuse.
pub(crate) fn refusal(s: &Sim, h: CK_SESSION_HANDLE, action: Action) -> Option<CK_RV> {
    let (slot, role) = role_of(s, h).ok()?;
    s.roles.lock().refusal(&s.store, slot, role, action)
}

/// What making an object from template `t` is: a token object is created (`Create`); a
/// session object, gone with the session, counts as using keys (`Use`) — the Crypto User
/// may unwrap or derive one to work with, as the console's audit key does.
pub(crate) fn making(t: *const CK_ATTRIBUTE, n: CK_ULONG) -> Action {
    // SAFETY: the caller's template, per the PKCS#11 contract of the function it came with.
    let attrs = unsafe { crate::raw::template(t, n) };
    let token = attrs.iter().any(|a| {
        a.type_ == CKA_TOKEN
            && !a.pValue.is_null()
            && a.ulValueLen as usize == std::mem::size_of::<CK_BBOOL>()
            // SAFETY: pValue points to ulValueLen (= 1) readable bytes.
            && unsafe { *(a.pValue as *const CK_BBOOL) } != 0
    });
    if token {
        Action::Create
    } else {
        Action::Use
    }
}

/// What destroying `obj` is: a token object's destruction (`Destroy`), or the end of a
/// session object (`Use`).
pub(crate) fn destroying(s: &Sim, h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> Action {
    if crate::objects::is_ours(obj) {
        let objects = s.objects.lock();
        let token = objects.find(obj).map(|(i, _)| objects.keys[i].token);
        return if token == Some(false) {
            Action::Use
        } else {
            Action::Destroy
        };
    }
    let Some(get) = s.f().C_GetAttributeValue else {
        return Action::Destroy;
    };
    let mut v: CK_BBOOL = CK_TRUE;
    let mut a = CK_ATTRIBUTE {
        type_: CKA_TOKEN,
        pValue: &mut v as *mut CK_BBOOL as *mut _,
        ulValueLen: 1,
    };
    // SAFETY: one attribute with a one-byte buffer of our own.
    let rv = unsafe { get(h, obj, &mut a, 1) };
    if rv == CKR_OK && v == CK_FALSE {
        Action::Use
    } else {
        Action::Destroy
    }
}

/// The bytes of a PIN argument.
fn pin_bytes<'a>(pin: *mut CK_UTF8CHAR, len: CK_ULONG) -> Result<&'a [u8], CK_RV> {
    if pin.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(CKR_ARGUMENTS_BAD)
        };
    }
    // SAFETY: per the PKCS#11 contract the PIN has `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(pin as *const u8, len as usize) })
}

pub extern "C" fn C_Login(
    h: CK_SESSION_HANDLE,
    user: CK_USER_TYPE,
    pin: *mut CK_UTF8CHAR,
    len: CK_ULONG,
) -> CK_RV {
    entry::call("C_Login", |s| {
        let Some(login) = s.f().C_Login else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        if user == CKU_CONTEXT_SPECIFIC {
            return context_login(s, login, h, pin, len);
        }
        let Some(wanted) = Role::from_user_type(user) else {
            return CKR_USER_TYPE_INVALID;
        };
        let pin = match pin_bytes(pin, len) {
            Ok(p) => p,
            Err(rv) => return rv,
        };
        let (slot, current) = match role_of(s, h) {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        match current {
            Some(r) if r == wanted => return CKR_USER_ALREADY_LOGGED_IN,
            Some(_) => return CKR_USER_ANOTHER_ALREADY_LOGGED_IN,
            None => {}
        }
        if matches!(wanted, Role::CryptoUser | Role::LimitedCryptoOfficer) {
            let co_pin = match s.roles.lock().open_extra(&s.store, slot, wanted, pin) {
                Ok(p) => p,
                Err(rv) => return rv,
            };
            // SAFETY: the sealed PIN copy lives for the call; the module copies it.
            let rv = unsafe {
                login(
                    h,
                    CKU_USER,
                    co_pin.as_ptr() as *mut _,
                    co_pin.len() as CK_ULONG,
                )
            };
            if rv == CKR_OK {
                s.roles.lock().extra_logged_in(&s.store, slot, wanted);
            }
            return rv;
        }
        // SAFETY: pass-through of the caller's PIN buffer.
        let rv = unsafe { login(h, user, pin.as_ptr() as *mut _, len) };
        if rv == CKR_OK {
            s.roles.lock().logged_in(&s.store, slot, wanted, pin);
        }
        rv
    })
}

/// `C_Login` with `CKU_CONTEXT_SPECIFIC`: the login a key with `CKA_ALWAYS_AUTHENTICATE`
/// wants after each `C_SignInit`, with the PIN of the role logged in. The Crypto Officer's
/// (and the SO's) goes to the inner module, which checks it against the user PIN, counts
/// a wrong one toward the lockout as a failed login, and authorizes the one operation; an
/// extra role's PIN is checked (and counted) here and the inner module gets the Crypto
/// Officer's. A public session has no one to authenticate: `CKR_USER_NOT_LOGGED_IN`.
fn context_login(
    s: &Sim,
    login: unsafe extern "C" fn(
        CK_SESSION_HANDLE,
        CK_USER_TYPE,
        *mut CK_UTF8CHAR,
        CK_ULONG,
    ) -> CK_RV,
    h: CK_SESSION_HANDLE,
    pin: *mut CK_UTF8CHAR,
    len: CK_ULONG,
) -> CK_RV {
    let bytes = match pin_bytes(pin, len) {
        Ok(p) => p,
        Err(rv) => return rv,
    };
    let (slot, role) = match role_of(s, h) {
        Ok(v) => v,
        Err(rv) => return rv,
    };
    match role {
        None => CKR_USER_NOT_LOGGED_IN,
        Some(r @ (Role::CryptoUser | Role::LimitedCryptoOfficer)) => {
            let co_pin = match s.roles.lock().open_extra(&s.store, slot, r, bytes) {
                Ok(p) => p,
                Err(rv) => return rv,
            };
            // SAFETY: the sealed PIN copy lives for the call; the module copies it.
            unsafe {
                login(
                    h,
                    CKU_CONTEXT_SPECIFIC,
                    co_pin.as_ptr() as *mut _,
                    co_pin.len() as CK_ULONG,
                )
            }
        }
        // SAFETY: pass-through of the caller's PIN buffer.
        Some(_) => unsafe { login(h, CKU_CONTEXT_SPECIFIC, pin, len) },
    }
}

pub extern "C" fn C_Logout(h: CK_SESSION_HANDLE) -> CK_RV {
    entry::call("C_Logout", |s| {
        let Some(f) = s.f().C_Logout else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        let slot = inner_state(s, h).map(|(slot, _)| slot);
        // SAFETY: takes the handle only.
        let rv = unsafe { f(h) };
        if let (Ok(slot), CKR_OK | CKR_USER_NOT_LOGGED_IN) = (slot, rv) {
            s.roles.lock().logged_out(&s.store, slot);
        }
        rv
    })
}

/// `C_InitPIN` in an SO session sets the Crypto Officer's PIN; with policy 21 on, the
/// token then wants it changed before anything else.
pub extern "C" fn C_InitPIN(h: CK_SESSION_HANDLE, pin: *mut CK_UTF8CHAR, len: CK_ULONG) -> CK_RV {
    entry::call("C_InitPIN", |s| {
        let Some(f) = s.f().C_InitPIN else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        let bytes = match pin_bytes(pin, len) {
            Ok(p) => p,
            Err(rv) => return rv,
        };
        let state = inner_state(s, h);
        // SAFETY: pass-through of the caller's arguments.
        let rv = unsafe { f(h, pin, len) };
        match (rv, state) {
            (CKR_OK, Ok((slot, Some(Role::SecurityOfficer)))) => {
                let policy_21 = s.config.force_user_pin_change;
                s.roles
                    .lock()
                    .co_pin_set(&s.store, slot, bytes, true, policy_21)
            }
            _ => rv,
        }
    })
}

pub extern "C" fn C_SetPIN(
    h: CK_SESSION_HANDLE,
    old: *mut CK_UTF8CHAR,
    old_len: CK_ULONG,
    new: *mut CK_UTF8CHAR,
    new_len: CK_ULONG,
) -> CK_RV {
    entry::call("C_SetPIN", |s| {
        let Some(f) = s.f().C_SetPIN else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        let (old_b, new_b) = match (pin_bytes(old, old_len), pin_bytes(new, new_len)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(rv), _) | (_, Err(rv)) => return rv,
        };
        let (slot, role) = match role_of(s, h) {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        match role {
            Some(r @ (Role::CryptoUser | Role::LimitedCryptoOfficer)) => {
                s.roles.lock().set_extra(&s.store, slot, r, old_b, new_b)
            }
            Some(Role::SecurityOfficer) => {
                // SAFETY: pass-through of the caller's arguments.
                unsafe { f(h, old, old_len, new, new_len) }
            }
            // The Crypto Officer, logged in or not (a public session changes the user PIN).
            _ => {
                // SAFETY: pass-through of the caller's arguments.
                let rv = unsafe { f(h, old, old_len, new, new_len) };
                if rv == CKR_OK {
                    s.roles
                        .lock()
                        .co_pin_set(&s.store, slot, new_b, false, false)
                } else {
                    rv
                }
            }
        }
    })
}

/// Luna's `CA_InitRolePIN`: the Crypto Officer sets the Crypto User's or the Limited Crypto
/// Officer's PIN.
#[no_mangle]
pub extern "C" fn CA_InitRolePIN(
    h: CK_SESSION_HANDLE,
    user: CK_USER_TYPE,
    pin: *mut CK_CHAR,
    len: CK_ULONG,
) -> CK_RV {
    entry::call("CA_InitRolePIN", |s| {
        let bytes = match pin_bytes(pin, len) {
            Ok(p) => p,
            Err(rv) => return rv,
        };
        if bytes.is_empty() {
            return CKR_PIN_LEN_RANGE;
        }
        let target = match Role::from_user_type(user) {
            Some(r @ (Role::CryptoUser | Role::LimitedCryptoOfficer)) => r,
            _ => return CKR_USER_TYPE_INVALID,
        };
        let (slot, role) = match role_of(s, h) {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        if role != Some(Role::CryptoOfficer) {
            return if role.is_none() {
                CKR_USER_NOT_LOGGED_IN
            } else {
                p11::names::luna::CKR_USER_NOT_AUTHORIZED
            };
        }
        let mut roles = s.roles.lock();
        if roles.co_pin_to_be_changed(&s.store, slot) {
            return CKR_PIN_EXPIRED;
        }
        roles.init_extra(&s.store, slot, target, bytes)
    })
}
