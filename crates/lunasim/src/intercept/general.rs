//! General-purpose and slot/token functions: initialization (configuration, the inner
//! module, the simulator), lunasim's identity (it reports itself as a Luna K7 partition),
//! the mechanism list (adds HSS and, from firmware 7.9.0, Luna's external-μ ML-DSA; hides
//! SLH-DSA as Luna 7.9 does), and `C_InitToken`
//! (which also wipes the slot's HSS keys).

use std::sync::Arc;

use cryptoki_sys::*;
use parking_lot::Mutex;

use super::keys::LUNA_AES_KWP;
use crate::config::Config;
use crate::control;
use crate::entry;
use crate::extmu;
use crate::objects::ObjectStore;
use crate::raw::pad;
use crate::sim::{self, Sim};
use crate::stats;

fn set_env(config: &Config) {
    for (k, v) in &config.inner_env {
        // The host process is about to load a module that reads this at C_Initialize;
        // there is no other way to hand a PKCS#11 module its configuration.
        std::env::set_var(k, v);
    }
}

/// The directory this shared object was loaded from.
fn own_dir() -> Option<std::path::PathBuf> {
    own_file().and_then(|f| f.parent().map(|p| p.to_path_buf()))
}

/// The file this shared object was loaded from.
fn own_file() -> Option<std::path::PathBuf> {
    // SAFETY: dladdr only reads the loader's tables for the given address; `info` is a
    // plain struct it fills in. The address is one of our own functions.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(own_file as *const libc::c_void, &mut info) == 0 || info.dli_fname.is_null()
        {
            return None;
        }
        let path = std::ffi::CStr::from_ptr(info.dli_fname)
            .to_string_lossy()
            .into_owned();
        Some(std::path::PathBuf::from(path))
    }
}

fn init() -> CK_RV {
    let (config, conf_path) = match Config::load_beside(own_file().as_deref()) {
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
    let shift = renumber(&inner);
    extmu::reset();
    control::configure(&config, conf_path);
    let store = config.store_dir();
    let _ = std::fs::create_dir_all(&store);
    stats::load_boot_time(&store);
    sim::install(Some(Arc::new(Sim {
        config,
        inner,
        store,
        objects: Mutex::new(ObjectStore::starting_after(shift)),
        sessions: Mutex::new(Default::default()),
        pqc_queue: Mutex::new(()),
        roles: Mutex::new(Default::default()),
    })));
    CKR_OK
}

/// With the `renumber` knob on, this initialization's objects get other numbers than the
/// last one's: the inner module numbers objects as it first meets them, from one counter
/// per token, so using up `shift` numbers on a throwaway session object first moves every
/// object along; lunasim's own HSS objects move by as much. Returns `shift` (0 when off).
fn renumber(inner: &Arc<p11::Module>) -> u64 {
    let shift = {
        let mut k = crate::knobs::knobs().lock();
        match k.renumber.as_mut() {
            Some(n) => {
                *n += 1;
                *n
            }
            None => return 0,
        }
    };
    for slot in inner.slots(true).unwrap_or_default() {
        let Ok(session) = inner.open_session(slot, false) else {
            continue;
        };
        for _ in 0..shift {
            let mut t = p11::Template::new()
                .ulong(CKA_CLASS, CKO_DATA)
                .bool(CKA_TOKEN, false)
                .bool(CKA_PRIVATE, false);
            if let Ok(o) = session.create_object(&mut t) {
                let _ = session.destroy_object(o);
            }
        }
    }
    shift
}

pub extern "C" fn C_Initialize(_args: *mut std::os::raw::c_void) -> CK_RV {
    entry::call_uninit("C_Initialize", || {
        if let Some(rv) = control::take_fault("C_Initialize") {
            return rv;
        }
        if sim::current().is_some() {
            return CKR_CRYPTOKI_ALREADY_INITIALIZED;
        }
        init()
    })
}

pub extern "C" fn C_Finalize(reserved: *mut std::os::raw::c_void) -> CK_RV {
    entry::call_uninit("C_Finalize", || {
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

pub extern "C" fn C_GetInfo(info: *mut CK_INFO) -> CK_RV {
    entry::call("C_GetInfo", |s| {
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
    entry::call("C_GetTokenInfo", |s| {
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
            if s.roles.lock().co_pin_to_be_changed(&s.store, slot) {
                i.flags |= CKF_USER_PIN_TO_BE_CHANGED;
            }
        }
        rv
    })
}

/// SLH-DSA is absent from Luna 7.9's mechanism table; the padded AES key wrap (RFC 5649) is
/// there as Luna's vendor `CKM_AES_KWP`, not as PKCS#11 3.0's `CKM_AES_KEY_WRAP_KWP` /
/// `_PKCS7` (see [`super::keys::luna_kwp`]).
fn hidden(m: CK_MECHANISM_TYPE) -> bool {
    matches!(
        m,
        CKM_SLH_DSA_KEY_PAIR_GEN
            | CKM_SLH_DSA
            | CKM_HASH_SLH_DSA
            | CKM_AES_KEY_WRAP_KWP
            | CKM_AES_KEY_WRAP_PKCS7
    ) || (CKM_HASH_SLH_DSA_SHA224..=CKM_HASH_SLH_DSA_SHAKE256).contains(&m)
}

pub extern "C" fn C_GetMechanismList(
    slot: CK_SLOT_ID,
    list: *mut CK_MECHANISM_TYPE,
    count: *mut CK_ULONG,
) -> CK_RV {
    entry::call("C_GetMechanismList", |s| {
        if count.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let mut all = match s.inner.mechanisms(slot) {
            Ok(v) => v,
            Err(e) => return e.rv().unwrap_or(CKR_GENERAL_ERROR),
        };
        let kwp = all.contains(&CKM_AES_KEY_WRAP_KWP);
        all.retain(|m| !hidden(*m));
        all.extend([CKM_HSS_KEY_PAIR_GEN, CKM_HSS]);
        if kwp {
            all.push(LUNA_AES_KWP);
        }
        if extmu::offered(s) && all.contains(&CKM_ML_DSA) {
            all.push(extmu::CKM_EXTMU_ML_DSA);
        }
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
    entry::call("C_GetMechanismInfo", |s| {
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
            extmu::CKM_EXTMU_ML_DSA if !extmu::offered(s) => return CKR_MECHANISM_INVALID,
            extmu::CKM_EXTMU_ML_DSA => {
                let Some(f) = s.f().C_GetMechanismInfo else {
                    return CKR_FUNCTION_NOT_SUPPORTED;
                };
                let mut i = CK_MECHANISM_INFO::default();
                // SAFETY: `i` is a local CK_MECHANISM_INFO the inner module fills.
                let rv = unsafe { f(slot, CKM_ML_DSA, &mut i) };
                if rv != CKR_OK {
                    return rv;
                }
                // The key sizes of ML-DSA's; signing and verifying from μ only.
                i.flags &= CKF_HW | CKF_SIGN | CKF_VERIFY;
                Some(i)
            }
            LUNA_AES_KWP => {
                let Some(f) = s.f().C_GetMechanismInfo else {
                    return CKR_FUNCTION_NOT_SUPPORTED;
                };
                let mut i = CK_MECHANISM_INFO::default();
                // SAFETY: `i` is a local CK_MECHANISM_INFO the inner module fills.
                let rv = unsafe { f(slot, CKM_AES_KEY_WRAP_KWP, &mut i) };
                if rv != CKR_OK {
                    return rv;
                }
                // lunasim translates the vendor mechanism for wrapping only.
                i.flags &= CKF_HW | CKF_WRAP | CKF_UNWRAP;
                Some(i)
            }
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
    entry::call("C_InitToken", |s| {
        let Some(f) = s.f().C_InitToken else {
            return CKR_FUNCTION_NOT_SUPPORTED;
        };
        // SAFETY: pass-through of the caller's arguments.
        let rv = unsafe { f(slot, pin, len, label) };
        if rv == CKR_OK {
            s.objects.lock().wipe_slot(&s.store, slot);
            extmu::forget_slot(s, slot);
            s.roles.lock().wipe(&s.store, slot);
        }
        rv
    })
}
