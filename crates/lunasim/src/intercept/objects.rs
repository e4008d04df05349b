//! Object management, merged with lunasim's HSS store: searches return both, attribute
//! reads and writes, destroy, copy and size answer for HSS objects here and pass the rest
//! to the inner module.

use cryptoki_sys::*;

use super::session::session_info;
use crate::entry;
use crate::extmu;
use crate::objects::{self, ObjectStore, Part};
use crate::ouid;
use crate::raw;
use crate::roles::Action;
use crate::sim::Sim;
use crate::templates;
use crate::tpl::Tpl;

/// Find a live HSS object visible to this session: same slot; private parts need a user
/// login. Returns the key index and part.
pub(super) fn visible(
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
    entry::call("C_FindObjectsInit", |s| {
        if let Some(rv) = super::auth::refusal(s, h, Action::Use) {
            return rv;
        }
        // SAFETY: the caller's template is valid for reading.
        let vals = match unsafe { raw::values(raw::template(t, n)) } {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        let inner_found = match vals.iter().find(|(ty, _)| *ty == ouid::CKA_OUID) {
            // The inner module knows no OUID: the search runs here, whole.
            Some((_, want)) => match inner_find_by_ouid(s, h, &vals, want) {
                Ok(found) => found,
                Err(rv) => return rv,
            },
            None => {
                let Some(f) = s.f().C_FindObjectsInit else {
                    return CKR_FUNCTION_NOT_SUPPORTED;
                };
                // SAFETY: pass-through of the caller's template.
                let rv = unsafe { f(h, t, n) };
                if rv != CKR_OK {
                    return rv;
                }
                Vec::new()
            }
        };
        let Ok((slot, user, _)) = session_info(s, h) else {
            return CKR_OK;
        };
        let mut objects = s.objects.lock();
        objects.ensure_loaded(&s.store, slot);
        let mut ours = inner_found;
        for k in objects.keys.iter().filter(|k| k.slot == slot) {
            if k.private.is_some() && user && objects::matches(k, Part::Private, &vals) {
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

/// A search whose template names a `CKA_OUID`: the inner module's objects matching the
/// rest of the template, kept when their OUID is `want`. The inner module is left with a
/// search that finds nothing, so `C_FindObjects` returns only these (and lunasim's own).
fn inner_find_by_ouid(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    vals: &[(CK_ATTRIBUTE_TYPE, Vec<u8>)],
    want: &[u8],
) -> Result<Vec<CK_OBJECT_HANDLE>, CK_RV> {
    let f = s.f();
    let (Some(find), Some(fin)) = (f.C_FindObjects, f.C_FindObjectsFinal) else {
        return Err(CKR_FUNCTION_NOT_SUPPORTED);
    };
    let rest: Vec<_> = vals
        .iter()
        .filter(|(ty, _)| *ty != ouid::CKA_OUID)
        .cloned()
        .collect();
    inner_find_init(s, h, rest)?;
    let mut found = Vec::new();
    let mut batch = [0 as CK_OBJECT_HANDLE; 64];
    let rv = loop {
        let mut got: CK_ULONG = 0;
        // SAFETY: `batch` has room for 64 handles, as we say.
        let rv = unsafe { find(h, batch.as_mut_ptr(), 64, &mut got) };
        if rv != CKR_OK || got == 0 {
            break rv;
        }
        found.extend_from_slice(&batch[..got as usize]);
    };
    // SAFETY: ends the search begun above.
    unsafe { fin(h) };
    if rv != CKR_OK {
        return Err(rv);
    }
    found.retain(|&o| ouid::of_inner(s, h, o).as_deref() == Some(want));
    // A search the inner module answers with nothing, left active for C_FindObjects.
    inner_find_init(s, h, vec![(CKA_CLASS, NO_CLASS.to_ne_bytes().to_vec())])?;
    Ok(found)
}

/// `C_FindObjectsInit` on the inner module with a template of our own.
fn inner_find_init(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    tpl: Vec<(CK_ATTRIBUTE_TYPE, Vec<u8>)>,
) -> Result<(), CK_RV> {
    let init = s.f().C_FindObjectsInit.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
    // SAFETY: the attributes point into the template, alive for the call.
    match Tpl(tpl).with_raw(|t, n| unsafe { init(h, t, n) }) {
        CKR_OK => Ok(()),
        rv => Err(rv),
    }
}

/// A vendor object class no module has: a search for it finds nothing.
const NO_CLASS: CK_OBJECT_CLASS = CKO_VENDOR_DEFINED | 0x4C53_0D1D;

pub extern "C" fn C_FindObjects(
    h: CK_SESSION_HANDLE,
    out: *mut CK_OBJECT_HANDLE,
    max: CK_ULONG,
    count: *mut CK_ULONG,
) -> CK_RV {
    entry::call("C_FindObjects", |s| {
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
    entry::call("C_FindObjectsFinal", |s| {
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
    entry::call("C_GetAttributeValue", |s| {
        if !objects::is_ours(obj) {
            let Some(f) = s.f().C_GetAttributeValue else {
                return CKR_FUNCTION_NOT_SUPPORTED;
            };
            // SAFETY: the caller's template is valid (read only here).
            let (asked, generated) = unsafe {
                let attrs = raw::template(t, n);
                (ouid::asked(attrs), extmu::asked(attrs))
            };
            // SAFETY: pass-through.
            let rv = unsafe { f(h, obj, t, n) };
            // An ML-DSA key lunasim made answers as a generated key ([`extmu`]).
            let rv = match generated.is_empty() {
                true => rv,
                false => match extmu::made(s, h, obj) {
                    // SAFETY: the caller's template is valid and writable, each buffer as
                    // long as `generated` recorded before the call.
                    Some(m) => unsafe {
                        extmu::fill_generated(&m, raw::template_mut(t, n), &generated, rv)
                    },
                    None => rv,
                },
            };
            // SAFETY: the caller's template is valid and writable, each buffer as long as
            // `asked` recorded before the call.
            return unsafe {
                ouid::fill_inner(raw::template_mut(t, n), &asked, rv, || {
                    ouid::of_inner(s, h, obj)
                })
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
    entry::call("C_SetAttributeValue", |s| {
        if let Some(rv) = super::auth::refusal(s, h, Action::Modify) {
            return rv;
        }
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
    entry::call("C_DestroyObject", |s| {
        if let Some(rv) = super::auth::refusal(s, h, super::auth::destroying(s, h, obj)) {
            return rv;
        }
        if !objects::is_ours(obj) {
            let uid = crate::usage::unique_id(s, h, obj);
            let rv = match s.f().C_DestroyObject {
                // SAFETY: pass-through.
                Some(f) => unsafe { f(h, obj) },
                None => CKR_FUNCTION_NOT_SUPPORTED,
            };
            if let (CKR_OK, Some(uid)) = (rv, uid) {
                // A seed lunasim kept for external μ goes with its key.
                let slot = s.sessions.lock().get(&h).map(|st| st.slot);
                extmu::forget(s, slot, &uid);
            }
            return rv;
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
            Part::Private => key.private = None,
            Part::Public => key.public_present = false,
        }
        if key.persist(&s.store).is_err() {
            return CKR_DEVICE_ERROR;
        }
        if key.private.is_none() && !key.public_present {
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
    entry::call("C_CopyObject", |s| {
        if let Some(rv) = super::auth::refusal(s, h, Action::Create) {
            return rv;
        }
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
    entry::call("C_GetObjectSize", |s| {
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
