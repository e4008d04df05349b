//! Luna's trusted wrapping (PKCS#11 §4.8, §4.9; thalesdocs Luna 7 "CKA_TRUSTED"): a key
//! with `CKA_WRAP_WITH_TRUSTED` true is wrapped only under a wrapping key whose
//! `CKA_TRUSTED` is true — otherwise `C_WrapKey` answers `CKR_KEY_NOT_WRAPPABLE`;
//! `CKA_TRUSTED` is set to true by the security officer only (a user setting it gets
//! `CKR_ATTRIBUTE_READ_ONLY`, as SoftHSM2 answers); `CKA_WRAP_WITH_TRUSTED` may be set,
//! never unset.
//!
//! The inner module (Kryoptic 1.5) knows both attributes, but lets nobody set
//! `CKA_TRUSTED` (it is "never settable" there) and refuses a wrap under an untrusted key
//! with `CKR_WRAPPING_KEY_HANDLE_INVALID`. So lunasim keeps both itself and the inner module
//! never sees them set: one book per token (`<store>/trust/<token serial>.json`, the
//! member's store for an HA member), keyed by the object's `CKA_UNIQUE_ID`, read from the
//! file at each use (another process — `pkcs11-tool`, a second client — sees the same
//! marks) and written durably (temporary file, rename).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use cryptoki_sys::*;
use serde::{Deserialize, Serialize};

use crate::raw;
use crate::sim::{self, Sim};
use crate::tpl::Tpl;

/// What the book says of one object (absent: both false).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Marks {
    #[serde(default)]
    trusted: bool,
    #[serde(default)]
    wrap_with_trusted: bool,
}

impl Marks {
    fn get(self, ty: CK_ATTRIBUTE_TYPE) -> bool {
        if ty == CKA_TRUSTED {
            self.trusted
        } else {
            self.wrap_with_trusted
        }
    }
    fn set(&mut self, ty: CK_ATTRIBUTE_TYPE, v: bool) {
        if ty == CKA_TRUSTED {
            self.trusted = v;
        } else {
            self.wrap_with_trusted = v;
        }
    }
}

type Book = BTreeMap<String, Marks>;

fn is_trust(ty: CK_ATTRIBUTE_TYPE) -> bool {
    ty == CKA_TRUSTED || ty == CKA_WRAP_WITH_TRUSTED
}

/// The template asks for (or sets) one of the two attributes.
fn concerns(t: *const CK_ATTRIBUTE, n: CK_ULONG) -> bool {
    // SAFETY: the caller's template, valid for reading per the PKCS#11 contract of the
    // function it came with.
    unsafe { raw::template(t, n) }
        .iter()
        .any(|a| is_trust(a.type_))
}

/// The book of the token in the session's slot.
fn book_path(s: &Sim, h: CK_SESSION_HANDLE) -> Option<PathBuf> {
    let slot = s.sessions.lock().get(&h).map(|st| st.slot)?;
    crate::books::path(s, slot, "trust")
}

fn load(path: &Path) -> Book {
    fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// An object's place in its token's book (`None` for lunasim's own HSS objects, which are
/// never extractable, and for an object the inner module cannot name).
fn key_ref(s: &Sim, h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> Option<(PathBuf, String)> {
    if crate::objects::is_ours(obj) {
        return None;
    }
    Some((book_path(s, h)?, crate::usage::unique_id(s, h, obj)?))
}

fn marks_of(s: &Sim, h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> Marks {
    key_ref(s, h, obj)
        .and_then(|(path, uid)| load(&path).get(&uid).copied())
        .unwrap_or_default()
}

fn record(k: &(PathBuf, String), m: Marks) -> Result<(), CK_RV> {
    let mut book = load(&k.0);
    if m == Marks::default() {
        if book.remove(&k.1).is_none() {
            return Ok(());
        }
    } else {
        book.insert(k.1.clone(), m);
    }
    crate::books::save(&k.0, &book).map_err(|e| {
        eprintln!("lunasim: trust book {} not written: {e}", k.0.display());
        CKR_DEVICE_ERROR
    })
}

/// The session's state as the inner module says it.
fn session_state(s: &Sim, h: CK_SESSION_HANDLE) -> Result<CK_STATE, CK_RV> {
    let f = s.f().C_GetSessionInfo.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
    // SAFETY: plain old data.
    let mut info: CK_SESSION_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out pointer.
    let rv = unsafe { f(h, &mut info) };
    if rv == CKR_OK {
        Ok(info.state)
    } else {
        Err(rv)
    }
}

/// One boolean attribute as the inner module answers it: `Err` when the object has no such
/// attribute (or cannot be read).
fn inner_bool(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    ty: CK_ATTRIBUTE_TYPE,
) -> Result<bool, CK_RV> {
    let f = s
        .f()
        .C_GetAttributeValue
        .ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
    let mut v: CK_BBOOL = CK_FALSE;
    let mut a = CK_ATTRIBUTE {
        type_: ty,
        pValue: &mut v as *mut CK_BBOOL as *mut _,
        ulValueLen: 1,
    };
    // SAFETY: one attribute pointing to our own one-byte buffer.
    let rv = unsafe { f(h, obj, &mut a, 1) };
    if rv == CKR_OK {
        Ok(v != CK_FALSE)
    } else {
        Err(rv)
    }
}

/// `C_GetAttributeValue`: the inner module answers, then lunasim's marks replace its values
/// of the two attributes (where the object has them at all).
pub fn get_attribute_value(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    call: impl FnOnce() -> CK_RV,
) -> CK_RV {
    let asks = concerns(t, n);
    let rv = call();
    if !asks || !matches!(rv, CKR_OK | CKR_ATTRIBUTE_TYPE_INVALID) {
        return rv;
    }
    let Some(s) = sim::current() else { return rv };
    let m = marks_of(&s, h, obj);
    // SAFETY: the caller's template is valid and writable per contract.
    let attrs = unsafe { raw::template_mut(t, n) };
    for a in attrs.iter_mut().filter(|a| is_trust(a.type_)) {
        if a.ulValueLen == CK_UNAVAILABLE_INFORMATION || a.pValue.is_null() || a.ulValueLen < 1 {
            continue;
        }
        // SAFETY: pValue has ulValueLen (>= 1) writable bytes, where the inner module just
        // wrote this attribute's one-byte value.
        unsafe { *(a.pValue as *mut CK_BBOOL) = if m.get(a.type_) { CK_TRUE } else { CK_FALSE } };
        a.ulValueLen = 1;
    }
    rv
}

/// `C_SetAttributeValue` of `CKA_TRUSTED` / `CKA_WRAP_WITH_TRUSTED`: lunasim's, by the
/// standard's rules; the rest of the template goes to the inner module first (nothing
/// changes when it refuses).
pub fn set_attribute_value(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    call: impl FnOnce(*mut CK_ATTRIBUTE, CK_ULONG) -> CK_RV,
) -> CK_RV {
    if !concerns(t, n) {
        return call(t, n);
    }
    crate::entry::call("C_SetAttributeValue", |s| {
        // SAFETY: the caller's template is valid for reading.
        let mut rest = match unsafe { Tpl::from_raw(t, n) } {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        let state = match session_state(s, h) {
            Ok(st) => st,
            Err(rv) => return rv,
        };
        let so = state == CKS_RW_SO_FUNCTIONS;
        if !so {
            if let Some(rv) = crate::intercept::auth::refusal(s, h, crate::roles::Action::Modify) {
                return rv;
            }
        }
        if !matches!(
            state,
            CKS_RW_SO_FUNCTIONS | CKS_RW_USER_FUNCTIONS | CKS_RW_PUBLIC_SESSION
        ) {
            return CKR_SESSION_READ_ONLY;
        }
        if crate::objects::is_ours(obj) {
            return CKR_ATTRIBUTE_READ_ONLY; // HSS keys: never extractable, never wrapping
        }
        if inner_bool(s, h, obj, CKA_MODIFIABLE) == Ok(false) {
            return CKR_ACTION_PROHIBITED;
        }
        let Some(k) = key_ref(s, h, obj) else {
            return CKR_OBJECT_HANDLE_INVALID;
        };
        let mut m = load(&k.0).get(&k.1).copied().unwrap_or_default();
        for ty in [CKA_TRUSTED, CKA_WRAP_WITH_TRUSTED] {
            let Some(v) = rest.get(ty) else { continue };
            let Some(v) = raw::as_bool(v) else {
                return CKR_ATTRIBUTE_VALUE_INVALID;
            };
            // The object must have the attribute (CKA_TRUSTED: public and secret keys).
            if let Err(rv) = inner_bool(s, h, obj, ty) {
                return rv;
            }
            match (ty, v) {
                (CKA_TRUSTED, true) if !so => return CKR_ATTRIBUTE_READ_ONLY,
                (CKA_WRAP_WITH_TRUSTED, false) if m.wrap_with_trusted => {
                    return CKR_ATTRIBUTE_READ_ONLY
                }
                _ => m.set(ty, v),
            }
            rest.remove(ty);
        }
        if !rest.0.is_empty() {
            let rv = rest.with_raw(call);
            if rv != CKR_OK {
                return rv;
            }
        }
        record(&k, m).err().unwrap_or(CKR_OK)
    })
}

/// Make an object with `make(template, count)`: `CKA_TRUSTED` and `CKA_WRAP_WITH_TRUSTED`
/// are taken out of the template and recorded on the object made (which is destroyed again
/// if the record cannot be written). Only the security officer makes a trusted object.
pub fn creating(
    h: CK_SESSION_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
    make: impl FnOnce(*mut CK_ATTRIBUTE, CK_ULONG) -> CK_RV,
    destroy: impl FnOnce(CK_OBJECT_HANDLE),
) -> CK_RV {
    if !concerns(t, n) {
        return make(t, n);
    }
    // SAFETY: the caller's template is valid for reading.
    let mut tpl = match unsafe { Tpl::from_raw(t, n) } {
        Ok(v) => v,
        Err(rv) => return rv,
    };
    let mut m = Marks::default();
    for ty in [CKA_TRUSTED, CKA_WRAP_WITH_TRUSTED] {
        if let Some(v) = tpl.get(ty) {
            match raw::as_bool(v) {
                Some(v) => m.set(ty, v),
                None => return CKR_ATTRIBUTE_VALUE_INVALID,
            }
            tpl.remove(ty);
        }
    }
    let Some(s) = sim::current() else {
        return CKR_CRYPTOKI_NOT_INITIALIZED;
    };
    if m.trusted && session_state(&s, h) != Ok(CKS_RW_SO_FUNCTIONS) {
        return CKR_ATTRIBUTE_READ_ONLY;
    }
    let rv = tpl.with_raw(make);
    if rv != CKR_OK || out.is_null() || m == Marks::default() {
        return rv;
    }
    // SAFETY: out is non-null and was written by a successful call.
    let obj = unsafe { *out };
    let r = match key_ref(&s, h, obj) {
        Some(k) => record(&k, m).err().unwrap_or(CKR_OK),
        None => CKR_DEVICE_ERROR,
    };
    if r != CKR_OK {
        destroy(obj);
    }
    r
}

/// `C_WrapKey`'s check: a key that leaves only under a trusted key, under an untrusted one,
/// is refused with `CKR_KEY_NOT_WRAPPABLE`.
pub fn may_wrap(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    wrapping: CK_OBJECT_HANDLE,
    key: CK_OBJECT_HANDLE,
) -> Result<(), CK_RV> {
    if marks_of(s, h, key).wrap_with_trusted && !marks_of(s, h, wrapping).trusted {
        eprintln!(
            "lunasim: C_WrapKey of a key with CKA_WRAP_WITH_TRUSTED under a wrapping key without CKA_TRUSTED: CKR_KEY_NOT_WRAPPABLE"
        );
        return Err(CKR_KEY_NOT_WRAPPABLE);
    }
    Ok(())
}

/// `C_DestroyObject`: a destroyed object leaves the book.
pub fn destroying(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    call: impl FnOnce() -> CK_RV,
) -> CK_RV {
    let k = sim::current().and_then(|s| key_ref(&s, h, obj));
    let rv = call();
    if let (CKR_OK, Some(k)) = (rv, k) {
        let _ = record(&k, Marks::default());
    }
    rv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_book_keeps_marks_and_forgets_cleared_ones() {
        let dir = std::env::temp_dir().join(format!("lunasim-trust-{}", std::process::id()));
        let k = (dir.join("trust/t.json"), "uid-1".to_string());
        let mut m = Marks::default();
        m.set(CKA_TRUSTED, true);
        record(&k, m).unwrap();
        assert!(load(&k.0)["uid-1"].get(CKA_TRUSTED));
        assert!(!load(&k.0)["uid-1"].get(CKA_WRAP_WITH_TRUSTED));
        record(&k, Marks::default()).unwrap();
        assert!(load(&k.0).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
