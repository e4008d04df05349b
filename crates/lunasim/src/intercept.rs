//! The PKCS#11 functions lunasim implements itself, around or instead of the inner module:
//! initialization, identity (it reports itself as a Luna K7 partition), the mechanism list
//! (adds HSS, hides SLH-DSA as Luna 7.9 does), object functions merged with the HSS store,
//! signing/verification with HSS keys, the PQC service queue, utilization counting, and
//! Luna's template rules (HSS attributes only in the private template; the ML-DSA default
//! parameter-set trap).

#![allow(non_snake_case)]

use std::sync::Arc;

use cryptoki_sys::*;
use parking_lot::Mutex;
use zeroize::Zeroizing;

use crate::config::Config;
use crate::hss;
use crate::objects::{self, HssKey, ObjectStore, Part};
use crate::raw;
use crate::sim::{self, stats, Sim};
use crate::templates;
use p11::vendor::bin;

fn set_env(config: &Config) {
    for (k, v) in &config.inner_env {
        // The host process is about to load a module that reads this at C_Initialize;
        // there is no other way to hand a PKCS#11 module its configuration.
        std::env::set_var(k, v);
    }
}

/// The directory this shared object was loaded from.
fn own_dir() -> Option<std::path::PathBuf> {
    // SAFETY: dladdr only reads the loader's tables for the given address; `info` is a
    // plain struct it fills in. The address is one of our own functions.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(own_dir as *const libc::c_void, &mut info) == 0 || info.dli_fname.is_null()
        {
            return None;
        }
        let path = std::ffi::CStr::from_ptr(info.dli_fname)
            .to_string_lossy()
            .into_owned();
        std::path::Path::new(&path)
            .parent()
            .map(|p| p.to_path_buf())
    }
}

fn init() -> CK_RV {
    let (config, conf_path) = match Config::load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("lunasim: {e}");
            return CKR_GENERAL_ERROR;
        }
    };
    set_env(&config);
    let inner_path = match config.inner_module(own_dir().as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("lunasim: {e}");
            return CKR_GENERAL_ERROR;
        }
    };
    let inner = match p11::Module::load(&inner_path) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("lunasim: inner module: {e}");
            return CKR_GENERAL_ERROR;
        }
    };
    if let Err(e) = inner.initialize() {
        return e.rv().unwrap_or(CKR_GENERAL_ERROR);
    }
    crate::control::configure(&config, conf_path);
    let store = config.store_dir();
    let _ = std::fs::create_dir_all(&store);
    crate::luna::load_boot_time(&store);
    sim::install(Some(Arc::new(Sim {
        config,
        inner,
        store,
        objects: Mutex::new(ObjectStore::default()),
        sessions: Mutex::new(Default::default()),
        pqc_queue: Mutex::new(()),
    })));
    CKR_OK
}

pub extern "C" fn C_Initialize(_args: *mut std::os::raw::c_void) -> CK_RV {
    sim::call_uninit("C_Initialize", || {
        if let Some(rv) = crate::control::take_fault("C_Initialize") {
            return rv;
        }
        if sim::current().is_some() {
            return CKR_CRYPTOKI_ALREADY_INITIALIZED;
        }
        init()
    })
}

pub extern "C" fn C_Finalize(reserved: *mut std::os::raw::c_void) -> CK_RV {
    sim::call_uninit("C_Finalize", || {
        if !reserved.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let Some(sim) = sim::install(None) else {
            return CKR_CRYPTOKI_NOT_INITIALIZED;
        };
        match sim.inner.finalize() {
            Ok(()) => CKR_OK,
            Err(e) => e.rv().unwrap_or(CKR_GENERAL_ERROR),
        }
    })
}

fn pad(dst: &mut [u8], s: &str) {
    dst.fill(b' ');
    let b = s.as_bytes();
    let n = b.len().min(dst.len());
    dst[..n].copy_from_slice(&b[..n]);
}

pub extern "C" fn C_GetInfo(info: *mut CK_INFO) -> CK_RV {
    sim::call("C_GetInfo", |s| {
        let Some(f) = s.f().C_GetInfo else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        if info.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        // SAFETY: info is non-null and points to a CK_INFO per the caller's contract.
        let rv = unsafe { f(info) };
        if rv == CKR_OK {
            // SAFETY: as above; the inner module filled it.
            let i = unsafe { &mut *info };
            i.cryptokiVersion = CK_VERSION { major: 3, minor: 2 };
            pad(&mut i.manufacturerID, "lunasim (Luna emulation)");
            pad(&mut i.libraryDescription, "lunasim Luna-compatible module");
            i.libraryVersion = CK_VERSION {
                major: 10,
                minor: 9,
            };
        }
        rv
    })
}

pub extern "C" fn C_GetTokenInfo(slot: CK_SLOT_ID, info: *mut CK_TOKEN_INFO) -> CK_RV {
    sim::call("C_GetTokenInfo", |s| {
        let Some(f) = s.f().C_GetTokenInfo else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        if info.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        // SAFETY: info is non-null, per contract a CK_TOKEN_INFO.
        let rv = unsafe { f(slot, info) };
        if rv == CKR_OK {
            // SAFETY: filled by the inner module above.
            let i = unsafe { &mut *info };
            let (major, minor, _) = s.config.firmware();
            pad(&mut i.manufacturerID, "Thales (lunasim)");
            pad(&mut i.model, "LunaSim K7");
            i.firmwareVersion = CK_VERSION {
                major: major as u8,
                minor: minor as u8,
            };
            i.hardwareVersion = CK_VERSION { major: 7, minor: 0 };
        }
        rv
    })
}

/// SLH-DSA is absent from Luna 7.9's mechanism table.
fn hidden(m: CK_MECHANISM_TYPE) -> bool {
    matches!(m, CKM_SLH_DSA_KEY_PAIR_GEN | CKM_SLH_DSA | CKM_HASH_SLH_DSA)
        || (CKM_HASH_SLH_DSA_SHA224..=CKM_HASH_SLH_DSA_SHAKE256).contains(&m)
}

pub extern "C" fn C_GetMechanismList(
    slot: CK_SLOT_ID,
    list: *mut CK_MECHANISM_TYPE,
    count: *mut CK_ULONG,
) -> CK_RV {
    sim::call("C_GetMechanismList", |s| {
        if count.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let mut all = match s.inner.mechanisms(slot) {
            Ok(v) => v,
            Err(e) => return e.rv().unwrap_or(CKR_GENERAL_ERROR),
        };
        all.retain(|m| !hidden(*m));
        all.extend([CKM_HSS_KEY_PAIR_GEN, CKM_HSS]);
        // SAFETY: count is non-null and readable/writable.
        let room = unsafe { *count };
        // SAFETY: as above.
        unsafe { *count = all.len() as CK_ULONG };
        if list.is_null() {
            return CKR_OK;
        }
        if (room as usize) < all.len() {
            return CKR_BUFFER_TOO_SMALL;
        }
        // SAFETY: list has room for `room >= all.len()` entries.
        unsafe { std::ptr::copy_nonoverlapping(all.as_ptr(), list, all.len()) };
        CKR_OK
    })
}

pub extern "C" fn C_GetMechanismInfo(
    slot: CK_SLOT_ID,
    m: CK_MECHANISM_TYPE,
    info: *mut CK_MECHANISM_INFO,
) -> CK_RV {
    sim::call("C_GetMechanismInfo", |s| {
        if info.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let ours = match m {
            CKM_HSS_KEY_PAIR_GEN => Some(CK_MECHANISM_INFO {
                ulMinKeySize: 5,
                ulMaxKeySize: 20,
                flags: CKF_HW | CKF_GENERATE_KEY_PAIR,
            }),
            CKM_HSS => Some(CK_MECHANISM_INFO {
                ulMinKeySize: 5,
                ulMaxKeySize: 20,
                flags: CKF_HW | CKF_SIGN | CKF_VERIFY,
            }),
            _ if hidden(m) => return CKR_MECHANISM_INVALID,
            _ => None,
        };
        match ours {
            Some(i) => {
                // SAFETY: info is non-null and writable.
                unsafe { *info = i };
                CKR_OK
            }
            None => match s.f().C_GetMechanismInfo {
                // SAFETY: pass-through of the caller's valid pointer.
                Some(f) => unsafe { f(slot, m, info) },
                None => CKR_FUNCTION_NOT_SUPPORTED,
            },
        }
    })
}

pub extern "C" fn C_InitToken(
    slot: CK_SLOT_ID,
    pin: *mut CK_UTF8CHAR,
    len: CK_ULONG,
    label: *mut CK_UTF8CHAR,
) -> CK_RV {
    sim::call("C_InitToken", |s| {
        let Some(f) = s.f().C_InitToken else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        // SAFETY: pass-through of the caller's arguments.
        let rv = unsafe { f(slot, pin, len, label) };
        if rv == CKR_OK {
            s.objects.lock().wipe_slot(&s.store, slot);
        }
        rv
    })
}

pub extern "C" fn C_OpenSession(
    slot: CK_SLOT_ID,
    flags: CK_FLAGS,
    app: *mut std::os::raw::c_void,
    notify: CK_NOTIFY,
    out: *mut CK_SESSION_HANDLE,
) -> CK_RV {
    sim::call("C_OpenSession", |s| {
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
    sim::call("C_CloseSession", |s| {
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
    sim::call("C_CloseAllSessions", |s| {
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
fn session_info(s: &Sim, h: CK_SESSION_HANDLE) -> Result<(CK_SLOT_ID, bool, bool), CK_RV> {
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

/// Find a live HSS object visible to this session: same slot; private parts need a user
/// login. Returns the key index and part.
fn visible(
    s: &Sim,
    objects: &mut ObjectStore,
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
) -> Result<(usize, Part, bool), CK_RV> {
    let (slot, user, rw) = session_info(s, h)?;
    objects.ensure_loaded(&s.store, slot);
    let (i, part) = objects.live(obj).ok_or(CKR_OBJECT_HANDLE_INVALID)?;
    if objects.keys[i].slot != slot {
        return Err(CKR_OBJECT_HANDLE_INVALID);
    }
    if part == Part::Private && !user {
        return Err(CKR_USER_NOT_LOGGED_IN);
    }
    Ok((i, part, rw))
}

pub extern "C" fn C_FindObjectsInit(
    h: CK_SESSION_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    sim::call("C_FindObjectsInit", |s| {
        let Some(f) = s.f().C_FindObjectsInit else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        // SAFETY: pass-through of the caller's template.
        let rv = unsafe { f(h, t, n) };
        if rv != CKR_OK {
            return rv;
        }
        // SAFETY: the caller's template is valid for reading.
        let vals = match unsafe { raw::values(raw::template(t, n)) } {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        let Ok((slot, user, _)) = session_info(s, h) else {
            return CKR_OK;
        };
        let mut objects = s.objects.lock();
        objects.ensure_loaded(&s.store, slot);
        let mut ours = Vec::new();
        for k in objects.keys.iter().filter(|k| k.slot == slot) {
            if k.private_state.is_some() && user && objects::matches(k, Part::Private, &vals) {
                ours.push(k.private_handle());
            }
            if k.public_present && objects::matches(k, Part::Public, &vals) {
                ours.push(k.public_handle());
            }
        }
        drop(objects);
        if let Some(st) = s.sessions.lock().get_mut(&h) {
            st.find = Some(ours);
        }
        CKR_OK
    })
}

pub extern "C" fn C_FindObjects(
    h: CK_SESSION_HANDLE,
    out: *mut CK_OBJECT_HANDLE,
    max: CK_ULONG,
    count: *mut CK_ULONG,
) -> CK_RV {
    sim::call("C_FindObjects", |s| {
        let Some(f) = s.f().C_FindObjects else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        if count.is_null() || (out.is_null() && max > 0) {
            return CKR_ARGUMENTS_BAD;
        }
        // SAFETY: pass-through; out has room for `max` handles.
        let rv = unsafe { f(h, out, max, count) };
        if rv != CKR_OK {
            return rv;
        }
        // SAFETY: count was written by the inner module.
        let got = unsafe { *count };
        if got < max {
            let mut sessions = s.sessions.lock();
            if let Some(pending) = sessions.get_mut(&h).and_then(|st| st.find.as_mut()) {
                let take = ((max - got) as usize).min(pending.len());
                for (k, handle) in pending.drain(..take).enumerate() {
                    // SAFETY: index got + k < max, within the caller's buffer.
                    unsafe { *out.add(got as usize + k) = handle };
                }
                // SAFETY: count is writable.
                unsafe { *count = got + take as CK_ULONG };
            }
        }
        CKR_OK
    })
}

pub extern "C" fn C_FindObjectsFinal(h: CK_SESSION_HANDLE) -> CK_RV {
    sim::call("C_FindObjectsFinal", |s| {
        if let Some(st) = s.sessions.lock().get_mut(&h) {
            st.find = None;
        }
        match s.f().C_FindObjectsFinal {
            // SAFETY: takes the handle only.
            Some(f) => unsafe { f(h) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

pub extern "C" fn C_GetAttributeValue(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    sim::call("C_GetAttributeValue", |s| {
        if !objects::is_ours(obj) {
            return match s.f().C_GetAttributeValue {
                // SAFETY: pass-through.
                Some(f) => unsafe { f(h, obj, t, n) },
                None => CKR_FUNCTION_NOT_SUPPORTED,
            };
        }
        let mut objects = s.objects.lock();
        let (i, part, _) = match visible(s, &mut objects, h, obj) {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        let key = &objects.keys[i];
        // SAFETY: the caller's template is valid and writable.
        let attrs = unsafe { raw::template_mut(t, n) };
        // SAFETY: as above: each pValue has ulValueLen writable bytes or is NULL.
        unsafe { templates::fill(key, part, attrs) }
    })
}

pub extern "C" fn C_SetAttributeValue(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    sim::call("C_SetAttributeValue", |s| {
        if !objects::is_ours(obj) {
            return match s.f().C_SetAttributeValue {
                // SAFETY: pass-through.
                Some(f) => unsafe { f(h, obj, t, n) },
                None => CKR_FUNCTION_NOT_SUPPORTED,
            };
        }
        // SAFETY: the caller's template is valid.
        let vals = match unsafe { raw::values(raw::template(t, n)) } {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        let mut objects = s.objects.lock();
        let (i, _, rw) = match visible(s, &mut objects, h, obj) {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        if objects.keys[i].token && !rw {
            return CKR_SESSION_READ_ONLY;
        }
        for (ty, _) in &vals {
            if *ty != CKA_LABEL && *ty != CKA_ID {
                return CKR_ATTRIBUTE_READ_ONLY;
            }
        }
        let key = &mut objects.keys[i];
        for (ty, v) in vals {
            match ty {
                CKA_LABEL => key.label = v,
                _ => key.id = v,
            }
        }
        if key.persist(&s.store).is_err() {
            return CKR_DEVICE_ERROR;
        }
        CKR_OK
    })
}

pub extern "C" fn C_DestroyObject(h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> CK_RV {
    sim::call("C_DestroyObject", |s| {
        if !objects::is_ours(obj) {
            return match s.f().C_DestroyObject {
                // SAFETY: pass-through.
                Some(f) => unsafe { f(h, obj) },
                None => CKR_FUNCTION_NOT_SUPPORTED,
            };
        }
        let mut objects = s.objects.lock();
        let (i, part, rw) = match visible(s, &mut objects, h, obj) {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        if objects.keys[i].token && !rw {
            return CKR_SESSION_READ_ONLY;
        }
        let key = &mut objects.keys[i];
        match part {
            Part::Private => key.private_state = None,
            Part::Public => key.public_present = false,
        }
        if key.persist(&s.store).is_err() {
            return CKR_DEVICE_ERROR;
        }
        if key.private_state.is_none() && !key.public_present {
            objects.keys.remove(i);
        }
        CKR_OK
    })
}

pub extern "C" fn C_CopyObject(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    sim::call("C_CopyObject", |s| {
        if objects::is_ours(obj) {
            // HSS keys cannot be cloned: a copy would reuse one-time keys.
            return CKR_ACTION_PROHIBITED;
        }
        match s.f().C_CopyObject {
            // SAFETY: pass-through.
            Some(f) => unsafe { f(h, obj, t, n, out) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

pub extern "C" fn C_GetObjectSize(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    size: *mut CK_ULONG,
) -> CK_RV {
    sim::call("C_GetObjectSize", |s| {
        if objects::is_ours(obj) {
            let mut objects = s.objects.lock();
            return match visible(s, &mut objects, h, obj) {
                // SAFETY: size must be writable per contract.
                Ok((i, _, _)) => match unsafe {
                    raw::put(size, 512 + objects.keys[i].public_key.len() as CK_ULONG)
                } {
                    Ok(()) => CKR_OK,
                    Err(rv) => rv,
                },
                Err(rv) => rv,
            };
        }
        match s.f().C_GetObjectSize {
            // SAFETY: pass-through.
            Some(f) => unsafe { f(h, obj, size) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

pub extern "C" fn C_WrapKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    wrapping: CK_OBJECT_HANDLE,
    key: CK_OBJECT_HANDLE,
    out: *mut CK_BYTE,
    len: *mut CK_ULONG,
) -> CK_RV {
    sim::call("C_WrapKey", |s| {
        if objects::is_ours(key) {
            return CKR_KEY_UNEXTRACTABLE;
        }
        if objects::is_ours(wrapping) {
            return CKR_WRAPPING_KEY_TYPE_INCONSISTENT;
        }
        match s.f().C_WrapKey {
            // SAFETY: pass-through.
            Some(f) => unsafe { f(h, m, wrapping, key, out, len) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

/// Count a utilization request when an operation really ran (not a length query).
fn count_if(rv: CK_RV, produced: bool, b: u64) -> CK_RV {
    if rv == CKR_OK && produced {
        stats().count_bin(b);
    }
    rv
}

/// Scratch room for finishing an inner operation after an injected fault.
const SCRATCH: usize = 1 << 16;

macro_rules! counted {
    ($name:ident, $bin:expr, ($($arg:ident: $ty:ty),*), $out:ident) => {
        pub extern "C" fn $name($($arg: $ty),*) -> CK_RV {
            sim::call(stringify!($name), |s| match s.f().$name {
                // SAFETY: pass-through of the caller's arguments.
                Some(f) => count_if(unsafe { f($($arg),*) }, !$out.is_null(), $bin),
                None => CKR_FUNCTION_NOT_SUPPORTED,
            })
        }
    };
}

/// Finish the inner module's single-part operation into scratch space.
fn finish_inner(
    f: Option<
        unsafe extern "C" fn(
            CK_SESSION_HANDLE,
            *mut CK_BYTE,
            CK_ULONG,
            *mut CK_BYTE,
            *mut CK_ULONG,
        ) -> CK_RV,
    >,
    h: CK_SESSION_HANDLE,
    d: *mut CK_BYTE,
    dl: CK_ULONG,
) {
    if let Some(f) = f {
        let mut scratch = vec![0u8; SCRATCH];
        let mut n = SCRATCH as CK_ULONG;
        // SAFETY: the caller's input is passed through; the output is our own buffer.
        let _ = unsafe { f(h, d, dl, scratch.as_mut_ptr(), &mut n) };
    }
}

/// Finish the inner module's multi-part operation into scratch space.
fn finish_inner_final(
    f: Option<unsafe extern "C" fn(CK_SESSION_HANDLE, *mut CK_BYTE, *mut CK_ULONG) -> CK_RV>,
    h: CK_SESSION_HANDLE,
) {
    if let Some(f) = f {
        let mut scratch = vec![0u8; SCRATCH];
        let mut n = SCRATCH as CK_ULONG;
        // SAFETY: our own output buffer.
        let _ = unsafe { f(h, scratch.as_mut_ptr(), &mut n) };
    }
}

fn end_hss_op(s: &Sim, h: CK_SESSION_HANDLE) -> bool {
    s.sessions
        .lock()
        .get_mut(&h)
        .and_then(|st| st.op.take())
        .is_some()
}

counted!(C_Encrypt, bin::ENCRYPT, (h: CK_SESSION_HANDLE, d: *mut CK_BYTE, dl: CK_ULONG, out: *mut CK_BYTE, ol: *mut CK_ULONG), out);
counted!(C_EncryptFinal, bin::ENCRYPT, (h: CK_SESSION_HANDLE, out: *mut CK_BYTE, ol: *mut CK_ULONG), out);
counted!(C_Decrypt, bin::DECRYPT, (h: CK_SESSION_HANDLE, d: *mut CK_BYTE, dl: CK_ULONG, out: *mut CK_BYTE, ol: *mut CK_ULONG), out);
counted!(C_DecryptFinal, bin::DECRYPT, (h: CK_SESSION_HANDLE, out: *mut CK_BYTE, ol: *mut CK_ULONG), out);
counted!(C_GenerateKey, bin::KEY_GENERATION, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, t: *mut CK_ATTRIBUTE, n: CK_ULONG, out: *mut CK_OBJECT_HANDLE), out);
counted!(C_DeriveKey, bin::KEY_DERIVATION, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, base: CK_OBJECT_HANDLE, t: *mut CK_ATTRIBUTE, n: CK_ULONG, out: *mut CK_OBJECT_HANDLE), out);
counted!(C_EncapsulateKey, bin::KEY_DERIVATION, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, pk: CK_OBJECT_HANDLE, t: *mut CK_ATTRIBUTE, n: CK_ULONG, ct: *mut CK_BYTE, ctl: *mut CK_ULONG, out: *mut CK_OBJECT_HANDLE), ct);
counted!(C_DecapsulateKey, bin::KEY_DERIVATION, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, sk: CK_OBJECT_HANDLE, t: *mut CK_ATTRIBUTE, n: CK_ULONG, ct: *mut CK_BYTE, ctl: CK_ULONG, out: *mut CK_OBJECT_HANDLE), out);

/// Run `f` with a raw template built from owned values.
fn with_template<R>(
    vals: &mut [(CK_ATTRIBUTE_TYPE, Vec<u8>)],
    f: impl FnOnce(*mut CK_ATTRIBUTE, CK_ULONG) -> R,
) -> R {
    let mut raw: Vec<CK_ATTRIBUTE> = vals
        .iter_mut()
        .map(|(ty, v)| CK_ATTRIBUTE {
            type_: *ty,
            pValue: if v.is_empty() {
                std::ptr::null_mut()
            } else {
                v.as_mut_ptr() as *mut _
            },
            ulValueLen: v.len() as CK_ULONG,
        })
        .collect();
    f(
        if raw.is_empty() {
            std::ptr::null_mut()
        } else {
            raw.as_mut_ptr()
        },
        raw.len() as CK_ULONG,
    )
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn C_GenerateKeyPair(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    pt: *mut CK_ATTRIBUTE,
    pn: CK_ULONG,
    st: *mut CK_ATTRIBUTE,
    sn: CK_ULONG,
    ph: *mut CK_OBJECT_HANDLE,
    sh: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    sim::call("C_GenerateKeyPair", |s| {
        if m.is_null() || ph.is_null() || sh.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        // SAFETY: m is non-null and points to a CK_MECHANISM.
        let mech = unsafe { (*m).mechanism };
        // SAFETY: the caller's templates are valid for reading.
        let (mut pubv, mut privv) = match unsafe {
            (
                raw::values(raw::template(pt, pn)),
                raw::values(raw::template(st, sn)),
            )
        } {
            (Ok(a), Ok(b)) => (a, b),
            (Err(rv), _) | (_, Err(rv)) => return rv,
        };
        let rv = if mech == CKM_HSS_KEY_PAIR_GEN {
            hss_keygen(s, h, &pubv, &privv, ph, sh)
        } else if mech == CKM_ML_DSA_KEY_PAIR_GEN
            && templates::apply_ml_dsa_default(&mut pubv, &mut privv)
        {
            let Some(f) = s.f().C_GenerateKeyPair else {
                return CKR_FUNCTION_NOT_SUPPORTED;
            };
            with_template(&mut pubv, |p, pn| {
                with_template(&mut privv, |q, qn| {
                    // SAFETY: templates built from owned values alive for the call; the
                    // mechanism and out pointers are the caller's.
                    unsafe { f(h, m, p, pn, q, qn, ph, sh) }
                })
            })
        } else {
            match s.f().C_GenerateKeyPair {
                // SAFETY: pass-through.
                Some(f) => unsafe { f(h, m, pt, pn, st, sn, ph, sh) },
                None => CKR_FUNCTION_NOT_SUPPORTED,
            }
        };
        count_if(rv, true, bin::KEY_GENERATION)
    })
}

fn hss_keygen(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    pubv: &[(CK_ATTRIBUTE_TYPE, Vec<u8>)],
    privv: &[(CK_ATTRIBUTE_TYPE, Vec<u8>)],
    ph: *mut CK_OBJECT_HANDLE,
    sh: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    let req = match templates::hss_request(pubv, privv) {
        Ok(r) => r,
        Err(rv) => return rv,
    };
    let (slot, user, rw) = match session_info(s, h) {
        Ok(v) => v,
        Err(rv) => return rv,
    };
    if !user {
        return CKR_USER_NOT_LOGGED_IN;
    }
    if req.token && !rw {
        return CKR_SESSION_READ_ONLY;
    }
    // The seed comes from the token's own RNG.
    let mut seed = Zeroizing::new(vec![0u8; 32]);
    let Some(rng) = s.f().C_GenerateRandom else {
        return CKR_FUNCTION_NOT_SUPPORTED;
    };
    // SAFETY: seed has 32 writable bytes.
    let rv = unsafe { rng(h, seed.as_mut_ptr(), 32) };
    if rv != CKR_OK {
        return rv;
    }
    let (state, public_key, aux) = match hss::keygen(&req.levels, &seed) {
        Ok(v) => v,
        Err(rv) => return rv,
    };
    let mut objects = s.objects.lock();
    objects.ensure_loaded(&s.store, slot);
    let handle = objects.next_handle();
    let uid = hex::encode(&seed[..8]) + &format!("{handle:x}");
    let key = HssKey {
        uid,
        slot,
        token: req.token,
        owner: (!req.token).then_some(h),
        label: req.label,
        id: req.id,
        levels: req.levels,
        public_key,
        private_state: Some(state),
        public_present: true,
        aux,
        handle,
    };
    if key.persist(&s.store).is_err() {
        return CKR_DEVICE_ERROR;
    }
    let (p, q) = (key.public_handle(), key.private_handle());
    objects.keys.push(key);
    // SAFETY: both out pointers were checked non-null by the caller function.
    unsafe {
        *ph = p;
        *sh = q;
    }
    CKR_OK
}

// ---- signing and verification -------------------------------------------------------

fn mechanism_of(m: *mut CK_MECHANISM) -> Option<CK_MECHANISM_TYPE> {
    // SAFETY: a non-null mechanism pointer refers to a CK_MECHANISM per contract.
    (!m.is_null()).then(|| unsafe { (*m).mechanism })
}

pub extern "C" fn C_SignInit(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> CK_RV {
    sim::call("C_SignInit", |s| {
        let Some(mech) = mechanism_of(m) else {
            return CKR_ARGUMENTS_BAD;
        };
        if objects::is_ours(key) {
            let mut objects = s.objects.lock();
            let (_, part, _) = match visible(s, &mut objects, h, key) {
                Ok(v) => v,
                Err(rv) => return rv,
            };
            drop(objects);
            if part != Part::Private {
                return CKR_KEY_FUNCTION_NOT_PERMITTED;
            }
            if mech != CKM_HSS {
                return CKR_MECHANISM_INVALID;
            }
            let mut sessions = s.sessions.lock();
            let Some(st) = sessions.get_mut(&h) else {
                return CKR_SESSION_HANDLE_INVALID;
            };
            if st.op.is_some() {
                return CKR_OPERATION_ACTIVE;
            }
            st.op = Some(hss::Op::Sign {
                handle: key,
                data: Vec::new(),
                multipart: false,
            });
            return CKR_OK;
        }
        if mech == CKM_HSS {
            return CKR_KEY_TYPE_INCONSISTENT;
        }
        let Some(f) = s.f().C_SignInit else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        // SAFETY: pass-through.
        let rv = unsafe { f(h, m, key) };
        if rv == CKR_OK {
            if let Some(st) = s.sessions.lock().get_mut(&h) {
                st.sign_mechanism = Some(mech);
            }
        }
        rv
    })
}

/// Finish an HSS signature: length query, buffer check, then sign (which advances and
/// persists the key) and end the operation.
fn hss_sign_out(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    out: *mut CK_BYTE,
    len: *mut CK_ULONG,
    single_part: Option<&[u8]>,
) -> CK_RV {
    let mut sessions = s.sessions.lock();
    let Some(st) = sessions.get_mut(&h) else {
        return CKR_SESSION_HANDLE_INVALID;
    };
    let Some(hss::Op::Sign {
        handle,
        data,
        multipart,
    }) = st.op.as_mut()
    else {
        return CKR_OPERATION_NOT_INITIALIZED;
    };
    let handle = *handle;
    if single_part.is_some() && *multipart {
        return CKR_OPERATION_ACTIVE;
    }
    if let Some(d) = single_part {
        if d.len() > hss::MAX_SINGLE_PART {
            st.op = None;
            return CKR_DATA_LEN_RANGE;
        }
    }
    let mut objects = s.objects.lock();
    let Some((i, _)) = objects.live(handle) else {
        st.op = None;
        return CKR_KEY_HANDLE_INVALID;
    };
    let need = hss::signature_len(&objects.keys[i].levels);
    if len.is_null() {
        return CKR_ARGUMENTS_BAD;
    }
    // SAFETY: len is non-null and readable/writable.
    let room = unsafe { *len };
    // SAFETY: as above.
    unsafe { *len = need as CK_ULONG };
    if out.is_null() {
        return CKR_OK; // length query: no one-time key is used
    }
    if (room as usize) < need {
        return CKR_BUFFER_TOO_SMALL;
    }
    let message = match single_part {
        Some(d) => d.to_vec(),
        None => std::mem::take(data),
    };
    st.op = None;
    drop(sessions);
    if objects.keys[i].remaining() == 0 {
        return CKR_KEY_EXHAUSTED;
    }
    let store = s.store.clone();
    let result = sim::pqc_service(s, || hss::sign(&mut objects.keys[i], &store, &message));
    match result {
        Ok(sig) => {
            // SAFETY: out has room >= need == sig.len() bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(sig.as_ptr(), out, sig.len());
                *len = sig.len() as CK_ULONG;
            }
            stats().count_bin(bin::SIGN);
            CKR_OK
        }
        Err(rv) => rv,
    }
}

fn sign_forward(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    out: *mut CK_BYTE,
    call: impl FnOnce() -> CK_RV,
) -> CK_RV {
    let mech = s.sessions.lock().get(&h).and_then(|st| st.sign_mechanism);
    let rv = if !out.is_null() && mech.map(sim::is_pqc_sign).unwrap_or(false) {
        sim::pqc_service(s, call)
    } else {
        call()
    };
    count_if(rv, !out.is_null(), bin::SIGN)
}

fn has_hss_op(s: &Sim, h: CK_SESSION_HANDLE, sign: bool) -> bool {
    match s.sessions.lock().get(&h).and_then(|st| st.op.as_ref()) {
        Some(hss::Op::Sign { .. }) => sign,
        Some(hss::Op::Verify { .. }) => !sign,
        None => false,
    }
}

pub extern "C" fn C_Sign(
    h: CK_SESSION_HANDLE,
    d: *mut CK_BYTE,
    dl: CK_ULONG,
    out: *mut CK_BYTE,
    ol: *mut CK_ULONG,
) -> CK_RV {
    sim::call_cleanup(
        "C_Sign",
        |s| {
            if has_hss_op(s, h, true) {
                // SAFETY: d has dl readable bytes per contract.
                let data = unsafe { raw::bytes(d, dl) };
                return hss_sign_out(s, h, out, ol, Some(data));
            }
            let Some(f) = s.f().C_Sign else {
                return CKR_FUNCTION_NOT_SUPPORTED;
            };
            // SAFETY: pass-through.
            sign_forward(s, h, out, || unsafe { f(h, d, dl, out, ol) })
        },
        |s| {
            if !end_hss_op(s, h) {
                finish_inner(s.f().C_Sign, h, d, dl);
            }
        },
    )
}

pub extern "C" fn C_SignUpdate(h: CK_SESSION_HANDLE, d: *mut CK_BYTE, dl: CK_ULONG) -> CK_RV {
    sim::call("C_SignUpdate", |s| {
        if has_hss_op(s, h, true) {
            let mut sessions = s.sessions.lock();
            if let Some(hss::Op::Sign {
                data, multipart, ..
            }) = sessions.get_mut(&h).and_then(|st| st.op.as_mut())
            {
                if data.len() + dl as usize > hss::MAX_MULTI_PART {
                    sessions.get_mut(&h).unwrap().op = None;
                    return CKR_DATA_LEN_RANGE;
                }
                *multipart = true;
                // SAFETY: d has dl readable bytes.
                data.extend_from_slice(unsafe { raw::bytes(d, dl) });
                return CKR_OK;
            }
        }
        match s.f().C_SignUpdate {
            // SAFETY: pass-through.
            Some(f) => unsafe { f(h, d, dl) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

pub extern "C" fn C_SignFinal(h: CK_SESSION_HANDLE, out: *mut CK_BYTE, ol: *mut CK_ULONG) -> CK_RV {
    sim::call_cleanup(
        "C_SignFinal",
        |s| {
            if has_hss_op(s, h, true) {
                return hss_sign_out(s, h, out, ol, None);
            }
            let Some(f) = s.f().C_SignFinal else {
                return CKR_FUNCTION_NOT_SUPPORTED;
            };
            // SAFETY: pass-through.
            sign_forward(s, h, out, || unsafe { f(h, out, ol) })
        },
        |s| {
            if !end_hss_op(s, h) {
                finish_inner_final(s.f().C_SignFinal, h);
            }
        },
    )
}

pub extern "C" fn C_VerifyInit(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> CK_RV {
    sim::call("C_VerifyInit", |s| {
        let Some(mech) = mechanism_of(m) else {
            return CKR_ARGUMENTS_BAD;
        };
        if objects::is_ours(key) {
            let mut objects = s.objects.lock();
            let (i, part, _) = match visible(s, &mut objects, h, key) {
                Ok(v) => v,
                Err(rv) => return rv,
            };
            if part != Part::Public {
                return CKR_KEY_FUNCTION_NOT_PERMITTED;
            }
            if mech != CKM_HSS {
                return CKR_MECHANISM_INVALID;
            }
            let public_key = objects.keys[i].public_key.clone();
            drop(objects);
            let mut sessions = s.sessions.lock();
            let Some(st) = sessions.get_mut(&h) else {
                return CKR_SESSION_HANDLE_INVALID;
            };
            st.op = Some(hss::Op::Verify {
                public_key,
                data: Vec::new(),
                multipart: false,
            });
            return CKR_OK;
        }
        match s.f().C_VerifyInit {
            // SAFETY: pass-through.
            Some(f) => unsafe { f(h, m, key) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

fn hss_verify_end(s: &Sim, h: CK_SESSION_HANDLE, single: Option<&[u8]>, sig: &[u8]) -> CK_RV {
    let op = s.sessions.lock().get_mut(&h).and_then(|st| st.op.take());
    let Some(hss::Op::Verify {
        public_key, data, ..
    }) = op
    else {
        return CKR_OPERATION_NOT_INITIALIZED;
    };
    let message = single.unwrap_or(&data);
    stats().count_bin(bin::VERIFY);
    if hss::verify(&public_key, message, sig) {
        CKR_OK
    } else {
        CKR_SIGNATURE_INVALID
    }
}

pub extern "C" fn C_Verify(
    h: CK_SESSION_HANDLE,
    d: *mut CK_BYTE,
    dl: CK_ULONG,
    sig: *mut CK_BYTE,
    sl: CK_ULONG,
) -> CK_RV {
    sim::call("C_Verify", |s| {
        if has_hss_op(s, h, false) {
            // SAFETY: both buffers are readable for their lengths.
            let (data, sig) = unsafe { (raw::bytes(d, dl), raw::bytes(sig, sl)) };
            return hss_verify_end(s, h, Some(data), sig);
        }
        match s.f().C_Verify {
            // SAFETY: pass-through.
            Some(f) => count_if(unsafe { f(h, d, dl, sig, sl) }, true, bin::VERIFY),
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

pub extern "C" fn C_VerifyUpdate(h: CK_SESSION_HANDLE, d: *mut CK_BYTE, dl: CK_ULONG) -> CK_RV {
    sim::call("C_VerifyUpdate", |s| {
        if has_hss_op(s, h, false) {
            let mut sessions = s.sessions.lock();
            if let Some(hss::Op::Verify {
                data, multipart, ..
            }) = sessions.get_mut(&h).and_then(|st| st.op.as_mut())
            {
                *multipart = true;
                // SAFETY: d has dl readable bytes.
                data.extend_from_slice(unsafe { raw::bytes(d, dl) });
                return CKR_OK;
            }
        }
        match s.f().C_VerifyUpdate {
            // SAFETY: pass-through.
            Some(f) => unsafe { f(h, d, dl) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

pub extern "C" fn C_VerifyFinal(h: CK_SESSION_HANDLE, sig: *mut CK_BYTE, sl: CK_ULONG) -> CK_RV {
    sim::call("C_VerifyFinal", |s| {
        if has_hss_op(s, h, false) {
            // SAFETY: sig has sl readable bytes.
            let sig = unsafe { raw::bytes(sig, sl) };
            return hss_verify_end(s, h, None, sig);
        }
        match s.f().C_VerifyFinal {
            // SAFETY: pass-through.
            Some(f) => count_if(unsafe { f(h, sig, sl) }, true, bin::VERIFY),
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

// ---- entry points ---------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn C_GetFunctionList(out: *mut *mut CK_FUNCTION_LIST) -> CK_RV {
    sim::call_uninit("C_GetFunctionList", || {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        // SAFETY: out is non-null; the table is a static with the 2.40 layout.
        unsafe { *out = crate::tables::list_240() as *const _ as *mut _ };
        CKR_OK
    })
}

#[no_mangle]
pub extern "C" fn C_GetInterfaceList(list: *mut CK_INTERFACE, count: *mut CK_ULONG) -> CK_RV {
    sim::call_uninit("C_GetInterfaceList", || {
        if count.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let ifaces = crate::tables::interfaces();
        // SAFETY: count is non-null.
        let room = unsafe { *count };
        // SAFETY: as above.
        unsafe { *count = ifaces.len() as CK_ULONG };
        if list.is_null() {
            return CKR_OK;
        }
        if (room as usize) < ifaces.len() {
            return CKR_BUFFER_TOO_SMALL;
        }
        for (i, iface) in ifaces.iter().enumerate() {
            // SAFETY: list has room for `room >= len` interfaces.
            unsafe { *list.add(i) = iface.get() };
        }
        CKR_OK
    })
}

#[no_mangle]
pub extern "C" fn C_GetInterface(
    name: *mut CK_UTF8CHAR,
    version: *mut CK_VERSION,
    out: *mut *mut CK_INTERFACE,
    flags: CK_FLAGS,
) -> CK_RV {
    sim::call_uninit("C_GetInterface", || {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        if !name.is_null() {
            // SAFETY: a non-null name is a NUL-terminated string per contract.
            let n = unsafe { std::ffi::CStr::from_ptr(name as *const std::os::raw::c_char) };
            if n.to_bytes() != b"PKCS 11" {
                return CKR_ARGUMENTS_BAD;
            }
        }
        // SAFETY: a non-null version points to a CK_VERSION.
        let want = (!version.is_null()).then(|| unsafe { *version });
        if flags & !CKF_INTERFACE_FORK_SAFE != 0 {
            return CKR_ARGUMENTS_BAD;
        }
        for iface in crate::tables::interfaces() {
            let v = iface.version();
            if want
                .map(|w| w.major == v.major && w.minor == v.minor)
                .unwrap_or(true)
            {
                // SAFETY: out is non-null; the interface is a static.
                unsafe { *out = iface.ptr() };
                return CKR_OK;
            }
        }
        CKR_ARGUMENTS_BAD
    })
}
