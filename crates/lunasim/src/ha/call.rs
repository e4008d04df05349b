//! The calls the HA layer makes on a member, through lunasim's outer functions with the
//! member's own session (so they count on the member's statistics and honour its usage
//! limits, latency and faults), with owned templates instead of raw pointers.

use cryptoki_sys::*;

use crate::outer;
use crate::tpl::Tpl;

fn ok(rv: CK_RV) -> Result<(), CK_RV> {
    if rv == CKR_OK {
        Ok(())
    } else {
        Err(rv)
    }
}

pub fn open_session(slot: CK_SLOT_ID, flags: CK_FLAGS) -> Result<CK_SESSION_HANDLE, CK_RV> {
    let mut h: CK_SESSION_HANDLE = 0;
    ok(outer::C_OpenSession(
        slot,
        flags | CKF_SERIAL_SESSION,
        std::ptr::null_mut(),
        None,
        &mut h,
    ))?;
    Ok(h)
}

pub fn close_session(h: CK_SESSION_HANDLE) {
    let _ = outer::C_CloseSession(h);
}

/// Log a member session in; "already logged in" is success.
pub fn login(h: CK_SESSION_HANDLE, user: CK_USER_TYPE, pin: &[u8]) -> CK_RV {
    let mut pin = pin.to_vec();
    let rv = outer::C_Login(h, user, pin.as_mut_ptr(), pin.len() as CK_ULONG);
    zeroize::Zeroize::zeroize(&mut pin);
    if rv == CKR_USER_ALREADY_LOGGED_IN {
        CKR_OK
    } else {
        rv
    }
}

pub fn find(h: CK_SESSION_HANDLE, tpl: &mut Tpl) -> Result<Vec<CK_OBJECT_HANDLE>, CK_RV> {
    ok(tpl.with_raw(|t, n| outer::C_FindObjectsInit(h, t, n)))?;
    let mut out = Vec::new();
    let mut buf = [0 as CK_OBJECT_HANDLE; 64];
    let r = loop {
        let mut got: CK_ULONG = 0;
        let rv = outer::C_FindObjects(h, buf.as_mut_ptr(), buf.len() as CK_ULONG, &mut got);
        if rv != CKR_OK {
            break Err(rv);
        }
        out.extend_from_slice(&buf[..got as usize]);
        if (got as usize) < buf.len() {
            break Ok(());
        }
    };
    let _ = outer::C_FindObjectsFinal(h);
    r.map(|_| out)
}

/// One attribute's value; `None` when the object does not have it or keeps it secret.
pub fn attr(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    ty: CK_ATTRIBUTE_TYPE,
) -> Result<Option<Vec<u8>>, CK_RV> {
    let mut a = CK_ATTRIBUTE {
        type_: ty,
        pValue: std::ptr::null_mut(),
        ulValueLen: 0,
    };
    match outer::C_GetAttributeValue(h, obj, &mut a, 1) {
        CKR_OK => {}
        CKR_ATTRIBUTE_TYPE_INVALID | CKR_ATTRIBUTE_SENSITIVE => return Ok(None),
        rv => return Err(rv),
    }
    if a.ulValueLen == CK_UNAVAILABLE_INFORMATION {
        return Ok(None);
    }
    let mut v = vec![0u8; a.ulValueLen as usize];
    a.pValue = if v.is_empty() {
        std::ptr::null_mut()
    } else {
        v.as_mut_ptr() as *mut _
    };
    if v.is_empty() {
        return Ok(Some(v));
    }
    match outer::C_GetAttributeValue(h, obj, &mut a, 1) {
        CKR_OK => {
            v.truncate(a.ulValueLen as usize);
            Ok(Some(v))
        }
        CKR_ATTRIBUTE_TYPE_INVALID | CKR_ATTRIBUTE_SENSITIVE => Ok(None),
        rv => Err(rv),
    }
}

pub fn create(h: CK_SESSION_HANDLE, tpl: &Tpl) -> Result<CK_OBJECT_HANDLE, CK_RV> {
    let mut out: CK_OBJECT_HANDLE = 0;
    let mut t = tpl.clone();
    ok(t.with_raw(|p, n| outer::C_CreateObject(h, p, n, &mut out)))?;
    Ok(out)
}

pub fn destroy(h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> CK_RV {
    outer::C_DestroyObject(h, obj)
}

pub fn set(h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE, tpl: &Tpl) -> CK_RV {
    let mut t = tpl.clone();
    t.with_raw(|p, n| outer::C_SetAttributeValue(h, obj, p, n))
}

pub fn random(h: CK_SESSION_HANDLE, n: usize) -> Result<Vec<u8>, CK_RV> {
    let mut v = vec![0u8; n];
    ok(outer::C_GenerateRandom(h, v.as_mut_ptr(), n as CK_ULONG))?;
    Ok(v)
}
