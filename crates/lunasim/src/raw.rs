//! Reading and writing through the raw pointers PKCS#11 callers hand us. Every function
//! here is `unsafe`: its caller vouches that the pointers follow the PKCS#11 contract of
//! the exported function they came through.

use cryptoki_sys::*;

/// A template as a slice (empty for NULL/0).
///
/// # Safety
/// `p` must point to `n` valid `CK_ATTRIBUTE`s, or be NULL with `n == 0`.
pub unsafe fn template<'a>(p: *const CK_ATTRIBUTE, n: CK_ULONG) -> &'a [CK_ATTRIBUTE] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

/// A mutable template (for `C_GetAttributeValue`).
///
/// # Safety
/// As [`template`], and the memory must be writable.
pub unsafe fn template_mut<'a>(p: *mut CK_ATTRIBUTE, n: CK_ULONG) -> &'a mut [CK_ATTRIBUTE] {
    if p.is_null() || n == 0 {
        &mut []
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts_mut(p, n as usize) }
    }
}

/// The (type, value) pairs of a template; a NULL value with a length is an error.
///
/// # Safety
/// Each attribute's `pValue` must point to `ulValueLen` readable bytes (or be NULL with 0).
pub unsafe fn values(t: &[CK_ATTRIBUTE]) -> Result<Vec<(CK_ATTRIBUTE_TYPE, Vec<u8>)>, CK_RV> {
    t.iter()
        .map(|a| {
            if a.pValue.is_null() {
                if a.ulValueLen == 0 {
                    Ok((a.type_, Vec::new()))
                } else {
                    Err(CKR_ATTRIBUTE_VALUE_INVALID)
                }
            } else {
                // SAFETY: guaranteed by the caller.
                Ok((
                    a.type_,
                    unsafe {
                        std::slice::from_raw_parts(a.pValue as *const u8, a.ulValueLen as usize)
                    }
                    .to_vec(),
                ))
            }
        })
        .collect()
}

/// A byte buffer.
///
/// # Safety
/// `p` must point to `n` readable bytes, or be NULL with `n == 0`.
pub unsafe fn bytes<'a>(p: *const u8, n: CK_ULONG) -> &'a [u8] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

/// Store a `CK_ULONG` through an out pointer; NULL is `CKR_ARGUMENTS_BAD`.
///
/// # Safety
/// `p` must be NULL or valid for writing.
pub unsafe fn put(p: *mut CK_ULONG, v: CK_ULONG) -> Result<(), CK_RV> {
    if p.is_null() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: non-null and writable per the caller.
    unsafe { *p = v };
    Ok(())
}

/// PKCS#11 output convention: NULL buffer → report the length; too small →
/// `CKR_BUFFER_TOO_SMALL` with the length; else copy.
///
/// # Safety
/// `len` must be valid for reading and writing; `out`, when non-null, must have `*len`
/// writable bytes.
pub unsafe fn output(out: *mut u8, len: *mut CK_ULONG, data: &[u8]) -> CK_RV {
    if len.is_null() {
        return CKR_ARGUMENTS_BAD;
    }
    // SAFETY: len is valid per the caller.
    let room = unsafe { *len };
    // SAFETY: as above.
    unsafe { *len = data.len() as CK_ULONG };
    if out.is_null() {
        return CKR_OK;
    }
    if (room as usize) < data.len() {
        return CKR_BUFFER_TOO_SMALL;
    }
    // SAFETY: out has at least `room >= data.len()` writable bytes.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), out, data.len()) };
    CKR_OK
}

/// Find an attribute's value in parsed template values.
pub fn find(vals: &[(CK_ATTRIBUTE_TYPE, Vec<u8>)], ty: CK_ATTRIBUTE_TYPE) -> Option<&[u8]> {
    vals.iter()
        .find(|(t, _)| *t == ty)
        .map(|(_, v)| v.as_slice())
}

pub fn as_ulong(v: &[u8]) -> Option<u64> {
    let n = std::mem::size_of::<CK_ULONG>();
    (v.len() == n).then(|| CK_ULONG::from_ne_bytes(v.try_into().unwrap()))
}

pub fn as_ulongs(v: &[u8]) -> Option<Vec<u64>> {
    let n = std::mem::size_of::<CK_ULONG>();
    (v.len() % n == 0).then(|| {
        v.chunks_exact(n)
            .map(|c| CK_ULONG::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    })
}

pub fn as_bool(v: &[u8]) -> Option<bool> {
    (v.len() == 1).then(|| v[0] != CK_FALSE)
}

/// Fill a fixed-width PKCS#11 text field (`CK_UTF8CHAR` arrays: labels, serials,
/// descriptions) with `s`, blank-padded and cut to fit.
pub fn pad(dst: &mut [u8], s: &str) {
    dst.fill(b' ');
    let b = s.as_bytes();
    let n = b.len().min(dst.len());
    dst[..n].copy_from_slice(&b[..n]);
}
