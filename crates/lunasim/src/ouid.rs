//! Luna's object unique ID, `CKA_OUID` (`CKA_VENDOR_DEFINED | 0x5`): 12 bytes a Luna gives
//! every object, stable for the object's life and across restarts, readable like any
//! attribute and usable in a search template. lunasim derives it from what already
//! identifies the object durably: the inner module's `CKA_UNIQUE_ID` (kept in its store)
//! for inner objects, the key file's name for lunasim's own HSS objects (one per half).

use cryptoki_sys::*;
use sha2::{Digest, Sha256};

use crate::sim::Sim;

pub use p11::names::luna::CKA_OUID;

/// Bytes in a Luna object unique ID.
pub const LEN: usize = 12;

/// The OUID of the object whose durable identity is `what`.
pub fn derive(what: &[u8]) -> Vec<u8> {
    Sha256::new()
        .chain_update(b"lunasim CKA_OUID\0")
        .chain_update(what)
        .finalize()[..LEN]
        .to_vec()
}

/// An inner object's OUID, from its `CKA_UNIQUE_ID` (read as lunasim's other books read it).
pub fn of_inner(s: &Sim, h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> Option<Vec<u8>> {
    crate::usage::unique_id(s, h, obj).map(|u| derive(u.as_bytes()))
}

/// The `CKA_OUID` entries of a caller's template with the buffer lengths the caller gave
/// (read before the inner module overwrites them with `CK_UNAVAILABLE_INFORMATION`).
pub fn asked(attrs: &[CK_ATTRIBUTE]) -> Vec<(usize, CK_ULONG)> {
    attrs
        .iter()
        .enumerate()
        .filter(|(_, a)| a.type_ == CKA_OUID)
        .map(|(i, a)| (i, a.ulValueLen))
        .collect()
}

/// After the inner module answered `C_GetAttributeValue` with `rv`: fill the `CKA_OUID`
/// entries `asked` found (under the PKCS#11 length rules) and give the return value the
/// call has then — `CKR_OK` when the OUID was the only attribute the inner module did not
/// know.
///
/// # Safety
/// Each attribute's `pValue` must be NULL or point to as many writable bytes as `asked`
/// recorded for it.
pub unsafe fn fill_inner(
    attrs: &mut [CK_ATTRIBUTE],
    asked: &[(usize, CK_ULONG)],
    rv: CK_RV,
    ouid: impl FnOnce() -> Option<Vec<u8>>,
) -> CK_RV {
    if asked.is_empty() || (rv != CKR_OK && rv != CKR_ATTRIBUTE_TYPE_INVALID) {
        return rv; // no OUID asked, or sensitive, too small, a real failure: as it is
    }
    let Some(v) = ouid() else { return rv };
    let mut too_small = false;
    for &(i, room) in asked {
        let a = &mut attrs[i];
        if a.pValue.is_null() {
            a.ulValueLen = v.len() as CK_ULONG;
        } else if (room as usize) < v.len() {
            a.ulValueLen = CK_UNAVAILABLE_INFORMATION;
            too_small = true;
        } else {
            // SAFETY: the caller's buffer has `room` >= v.len() writable bytes.
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), a.pValue as *mut u8, v.len()) };
            a.ulValueLen = v.len() as CK_ULONG;
        }
    }
    if too_small {
        CKR_BUFFER_TOO_SMALL
    } else if attrs
        .iter()
        .any(|a| a.ulValueLen == CK_UNAVAILABLE_INFORMATION)
    {
        rv
    } else {
        CKR_OK
    }
}
