//! Signing and verifying, single- and multi-part: with HSS keys here (stateful signing,
//! through the PQC service queue), with the inner module's keys passed through and
//! counted. When an injected fault answers a sign call, the operation is ended as a real
//! device error ends it.

use cryptoki_sys::*;
use p11::vendor::bin;

use super::objects::visible;
use crate::entry;
use crate::extmu;
use crate::hss;
use crate::hss::Stream;
use crate::objects::{self, HssKey, Part};
use crate::raw;
use crate::sim::{self, Sim};
use crate::stats::{count_if, stats};
use sha2::digest::Digest;

fn mechanism_of(m: *mut CK_MECHANISM) -> Option<CK_MECHANISM_TYPE> {
    // SAFETY: a non-null mechanism pointer refers to a CK_MECHANISM per contract.
    (!m.is_null()).then(|| unsafe { (*m).mechanism })
}

pub extern "C" fn C_SignInit(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> CK_RV {
    entry::call("C_SignInit", |s| {
        let Some(mech) = mechanism_of(m) else {
            // A NULL mechanism ends the active operation (PKCS#11 3.0): ours, or the inner
            // module's.
            if end_hss_op(s, h) | end_extmu_op(s, h, true) {
                return CKR_OK;
            }
            return match s.f().C_SignInit {
                // SAFETY: pass-through.
                Some(f) => unsafe { f(h, m, key) },
                None => CKR_FUNCTION_NOT_SUPPORTED,
            };
        };
        if let Some(rv) = super::auth::refusal(s, h, crate::roles::Action::Use) {
            return rv;
        }
        if let Some(rv) = extmu_init(s, h, m, key, true) {
            return rv;
        }
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
                multipart: false,
                stream: None,
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

/// Finish an HSS signature: length query, buffer check, then sign and end the operation.
/// A single-part call (or a final one without updates) reserves its one-time key here —
/// the advanced position reaches the disk first; a multi-part one reserved it at its first
/// update.
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
        multipart,
        stream,
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
    let stream = stream.take();
    st.op = None;
    drop(sessions);
    let store = s.store.clone();
    let result = sim::pqc_service(s, || {
        let stream = match stream {
            Some(stream) => stream,
            None => {
                let mut stream = reserve(&mut objects.keys[i], &store)?;
                stream.hasher.update(single_part.unwrap_or_default());
                stream
            }
        };
        drop(objects);
        let Stream {
            reservation,
            hasher,
        } = *stream;
        Ok::<_, CK_RV>(reservation.finish(hasher))
    });
    match result {
        Ok(sig) => {
            debug_assert_eq!(sig.len(), need);
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

/// Reserve the key's next one-time key for a signature whose message comes next.
fn reserve(key: &mut HssKey, store: &std::path::Path) -> Result<Box<Stream>, CK_RV> {
    if key.remaining() == 0 {
        return Err(CKR_KEY_EXHAUSTED);
    }
    let reservation = key.reserve(store)?;
    let hasher = reservation.hasher();
    Ok(Box::new(Stream {
        reservation,
        hasher,
    }))
}

/// One part of a multi-part HSS signature: the first reserves the one-time key, every
/// part goes into the message hash and is not kept.
fn hss_sign_update(s: &Sim, h: CK_SESSION_HANDLE, part: &[u8]) -> CK_RV {
    // The operation is taken out of the session while the part is hashed, so other
    // sessions are not held up by it (a session is used by one thread at a time).
    let op = s.sessions.lock().get_mut(&h).and_then(|st| st.op.take());
    let Some(hss::Op::Sign { handle, stream, .. }) = op else {
        return CKR_OPERATION_NOT_INITIALIZED;
    };
    let mut stream = match stream {
        Some(stream) => stream,
        None => {
            let mut objects = s.objects.lock();
            let Some((i, _)) = objects.live(handle) else {
                return CKR_KEY_HANDLE_INVALID;
            };
            match reserve(&mut objects.keys[i], &s.store) {
                Ok(stream) => stream,
                Err(rv) => return rv,
            }
        }
    };
    stream.hasher.update(part);
    match s.sessions.lock().get_mut(&h) {
        Some(st) => {
            st.op = Some(hss::Op::Sign {
                handle,
                multipart: true,
                stream: Some(stream),
            });
            CKR_OK
        }
        None => CKR_SESSION_HANDLE_INVALID,
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
    entry::call_cleanup(
        "C_Sign",
        |s| {
            if has_hss_op(s, h, true) {
                // SAFETY: d has dl readable bytes per contract.
                let data = unsafe { raw::bytes(d, dl) };
                return hss_sign_out(s, h, out, ol, Some(data));
            }
            if has_extmu_op(s, h, true) {
                // SAFETY: d has dl readable bytes per contract.
                let data = unsafe { raw::bytes(d, dl) };
                return extmu_sign_out(s, h, Some(data), out, ol);
            }
            let Some(f) = s.f().C_Sign else {
                return CKR_FUNCTION_NOT_SUPPORTED;
            };
            // SAFETY: pass-through.
            sign_forward(s, h, out, || unsafe { f(h, d, dl, out, ol) })
        },
        |s| {
            if !end_hss_op(s, h) && !end_extmu_op(s, h, true) {
                finish_inner(s.f().C_Sign, h, d, dl);
            }
        },
    )
}

pub extern "C" fn C_SignUpdate(h: CK_SESSION_HANDLE, d: *mut CK_BYTE, dl: CK_ULONG) -> CK_RV {
    entry::call("C_SignUpdate", |s| {
        if has_hss_op(s, h, true) {
            // SAFETY: d has dl readable bytes.
            return hss_sign_update(s, h, unsafe { raw::bytes(d, dl) });
        }
        if has_extmu_op(s, h, true) {
            // SAFETY: d has dl readable bytes.
            return extmu_update(s, h, unsafe { raw::bytes(d, dl) });
        }
        match s.f().C_SignUpdate {
            // SAFETY: pass-through.
            Some(f) => unsafe { f(h, d, dl) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

pub extern "C" fn C_SignFinal(h: CK_SESSION_HANDLE, out: *mut CK_BYTE, ol: *mut CK_ULONG) -> CK_RV {
    entry::call_cleanup(
        "C_SignFinal",
        |s| {
            if has_hss_op(s, h, true) {
                return hss_sign_out(s, h, out, ol, None);
            }
            if has_extmu_op(s, h, true) {
                return extmu_sign_out(s, h, None, out, ol);
            }
            let Some(f) = s.f().C_SignFinal else {
                return CKR_FUNCTION_NOT_SUPPORTED;
            };
            // SAFETY: pass-through.
            sign_forward(s, h, out, || unsafe { f(h, out, ol) })
        },
        |s| {
            if !end_hss_op(s, h) && !end_extmu_op(s, h, true) {
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
    entry::call("C_VerifyInit", |s| {
        let Some(mech) = mechanism_of(m) else {
            return CKR_ARGUMENTS_BAD;
        };
        if let Some(rv) = super::auth::refusal(s, h, crate::roles::Action::Use) {
            return rv;
        }
        if let Some(rv) = extmu_init(s, h, m, key, false) {
            return rv;
        }
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
    entry::call("C_Verify", |s| {
        if has_hss_op(s, h, false) {
            // SAFETY: both buffers are readable for their lengths.
            let (data, sig) = unsafe { (raw::bytes(d, dl), raw::bytes(sig, sl)) };
            return hss_verify_end(s, h, Some(data), sig);
        }
        if has_extmu_op(s, h, false) {
            // SAFETY: both buffers are readable for their lengths.
            let (data, sig) = unsafe { (raw::bytes(d, dl), raw::bytes(sig, sl)) };
            return extmu_verify_end(s, h, Some(data), sig);
        }
        match s.f().C_Verify {
            // SAFETY: pass-through.
            Some(f) => count_if(unsafe { f(h, d, dl, sig, sl) }, true, bin::VERIFY),
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

pub extern "C" fn C_VerifyUpdate(h: CK_SESSION_HANDLE, d: *mut CK_BYTE, dl: CK_ULONG) -> CK_RV {
    entry::call("C_VerifyUpdate", |s| {
        if has_extmu_op(s, h, false) {
            // SAFETY: d has dl readable bytes.
            return extmu_update(s, h, unsafe { raw::bytes(d, dl) });
        }
        if has_hss_op(s, h, false) {
            let mut sessions = s.sessions.lock();
            if let Some(hss::Op::Verify {
                data, multipart, ..
            }) = sessions.get_mut(&h).and_then(|st| st.op.as_mut())
            {
                if data.len() + dl as usize > hss::MAX_MULTI_PART_VERIFY {
                    sessions.get_mut(&h).expect("present").op = None;
                    return CKR_DATA_LEN_RANGE;
                }
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
    entry::call("C_VerifyFinal", |s| {
        if has_hss_op(s, h, false) {
            // SAFETY: sig has sl readable bytes.
            let sig = unsafe { raw::bytes(sig, sl) };
            return hss_verify_end(s, h, None, sig);
        }
        if has_extmu_op(s, h, false) {
            // SAFETY: sig has sl readable bytes.
            let sig = unsafe { raw::bytes(sig, sl) };
            return extmu_verify_end(s, h, None, sig);
        }
        match s.f().C_VerifyFinal {
            // SAFETY: pass-through.
            Some(f) => count_if(unsafe { f(h, sig, sl) }, true, bin::VERIFY),
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

/// Scratch room for finishing an inner operation after an injected fault.
const SCRATCH: usize = 1 << 16;

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

/// Is an external-μ operation of this kind (sign or verify) active on the session?
fn has_extmu_op(s: &Sim, h: CK_SESSION_HANDLE, sign: bool) -> bool {
    match s.sessions.lock().get(&h).and_then(|st| st.extmu.as_ref()) {
        Some(extmu::Op::Sign { .. }) => sign,
        Some(extmu::Op::Verify { .. }) => !sign,
        None => false,
    }
}

fn end_extmu_op(s: &Sim, h: CK_SESSION_HANDLE, sign: bool) -> bool {
    has_extmu_op(s, h, sign)
        && s.sessions
            .lock()
            .get_mut(&h)
            .and_then(|st| st.extmu.take())
            .is_some()
}

/// `C_SignInit` / `C_VerifyInit` with Luna's `CKM_EXTMU_ML_DSA`, done here: `None` for
/// other mechanisms (unless an external-μ operation of the kind is active, which they may
/// not start over). Absent below firmware 7.9.0, as from a Luna.
fn extmu_init(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
    sign: bool,
) -> Option<CK_RV> {
    let active = has_extmu_op(s, h, sign);
    // SAFETY: the callers checked `m` is non-null; per contract a CK_MECHANISM.
    let mech = unsafe { &*m };
    if mech.mechanism != extmu::CKM_EXTMU_ML_DSA {
        return active.then_some(CKR_OPERATION_ACTIVE);
    }
    if !extmu::offered(s) {
        return Some(CKR_MECHANISM_INVALID);
    }
    if objects::is_ours(key) {
        return Some(CKR_KEY_TYPE_INCONSISTENT);
    }
    if active || has_hss_op(s, h, sign) {
        return Some(CKR_OPERATION_ACTIVE);
    }
    let op = if sign {
        extmu::sign_init(s, h, mech, key)
    } else {
        extmu::verify_init(s, h, mech, key)
    };
    Some(match op {
        Ok(op) => match s.sessions.lock().get_mut(&h) {
            Some(st) => {
                st.extmu = Some(op);
                CKR_OK
            }
            None => CKR_SESSION_HANDLE_INVALID,
        },
        Err(rv) => rv,
    })
}

/// A part of μ (`C_SignUpdate` / `C_VerifyUpdate`): kept until the final call; more than
/// μ's 64 bytes ends the operation with `CKR_DATA_LEN_RANGE`.
fn extmu_update(s: &Sim, h: CK_SESSION_HANDLE, part: &[u8]) -> CK_RV {
    let mut sessions = s.sessions.lock();
    let Some(st) = sessions.get_mut(&h) else {
        return CKR_SESSION_HANDLE_INVALID;
    };
    let data = match st.extmu.as_mut() {
        Some(extmu::Op::Sign { data, .. } | extmu::Op::Verify { data, .. }) => data,
        None => return CKR_OPERATION_NOT_INITIALIZED,
    };
    if data.len() + part.len() > extmu::MU_LEN {
        st.extmu = None;
        return CKR_DATA_LEN_RANGE;
    }
    data.extend_from_slice(part);
    CKR_OK
}

/// 32 bytes from the token's RNG, for a hedged signature.
fn token_random(s: &Sim, h: CK_SESSION_HANDLE) -> Result<zeroize::Zeroizing<[u8; 32]>, CK_RV> {
    let mut r = zeroize::Zeroizing::new([0u8; 32]);
    let f = s.f().C_GenerateRandom.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
    // SAFETY: `r` has 32 writable bytes.
    match unsafe { f(h, r.as_mut_ptr(), 32) } {
        CKR_OK => Ok(r),
        rv => Err(rv),
    }
}

/// Finish an external-μ signature (`single`: `C_Sign`'s data; else the parts given):
/// μ of another length than 64 bytes ends it with `CKR_DATA_LEN_RANGE`; a length query or
/// a short buffer keeps it; else the signature, and the operation ends.
fn extmu_sign_out(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    single: Option<&[u8]>,
    out: *mut CK_BYTE,
    len: *mut CK_ULONG,
) -> CK_RV {
    let mut sessions = s.sessions.lock();
    let Some(st) = sessions.get_mut(&h) else {
        return CKR_SESSION_HANDLE_INVALID;
    };
    let Some(extmu::Op::Sign { set, data, .. }) = st.extmu.as_ref() else {
        return CKR_OPERATION_NOT_INITIALIZED;
    };
    let set = *set;
    let Ok(mu) = <[u8; extmu::MU_LEN]>::try_from(single.unwrap_or(data)) else {
        st.extmu = None;
        return CKR_DATA_LEN_RANGE;
    };
    let need = extmu::signature_len(set).unwrap_or(0);
    if len.is_null() {
        return CKR_ARGUMENTS_BAD;
    }
    // SAFETY: len is non-null and readable/writable per contract.
    let room = unsafe { std::mem::replace(&mut *len, need as CK_ULONG) };
    if out.is_null() {
        return CKR_OK;
    }
    if (room as usize) < need {
        return CKR_BUFFER_TOO_SMALL;
    }
    let Some(extmu::Op::Sign { seed, hedged, .. }) = st.extmu.take() else {
        return CKR_OPERATION_NOT_INITIALIZED;
    };
    drop(sessions);
    let rnd = if hedged {
        match token_random(s, h) {
            Ok(r) => Some(r),
            Err(rv) => return rv,
        }
    } else {
        None
    };
    let Some(sig) = sim::pqc_service(s, || extmu::sign_mu(set, &seed, &mu, rnd)) else {
        return CKR_GENERAL_ERROR;
    };
    debug_assert_eq!(sig.len(), need);
    // SAFETY: out has room >= need == sig.len() bytes.
    unsafe { std::ptr::copy_nonoverlapping(sig.as_ptr(), out, sig.len()) };
    stats().count_bin(bin::SIGN);
    CKR_OK
}

/// Finish an external-μ verification (`single`: `C_Verify`'s data; else the parts given).
fn extmu_verify_end(s: &Sim, h: CK_SESSION_HANDLE, single: Option<&[u8]>, sig: &[u8]) -> CK_RV {
    if !has_extmu_op(s, h, false) {
        return CKR_OPERATION_NOT_INITIALIZED;
    }
    let op = s.sessions.lock().get_mut(&h).and_then(|st| st.extmu.take());
    let Some(extmu::Op::Verify {
        set,
        public_key,
        data,
    }) = op
    else {
        return CKR_OPERATION_NOT_INITIALIZED;
    };
    let Ok(mu) = <[u8; extmu::MU_LEN]>::try_from(single.unwrap_or(&data)) else {
        return CKR_DATA_LEN_RANGE;
    };
    if extmu::signature_len(set) != Some(sig.len()) {
        return CKR_SIGNATURE_LEN_RANGE;
    }
    stats().count_bin(bin::VERIFY);
    if extmu::verify_mu(set, &public_key, &mu, sig) {
        CKR_OK
    } else {
        CKR_SIGNATURE_INVALID
    }
}
