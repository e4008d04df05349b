//! Baseline loops that call the module's function pointers directly with no wrapping
//! beyond the return-value check, for benchmarks that compare the pool against them.

use cryptoki_sys::*;

use super::{Session, OUTPUT_GUESS};
use crate::error::Result;
use crate::module::func::p11_fn;
use crate::types::*;

/// `n` × `C_GenerateRandom(len)` on one session.
pub fn generate_random_loop(s: &Session, n: u64, len: usize) -> Result<()> {
    let generate_random = p11_fn!(s.module, C_GenerateRandom)?;
    let mut buf = vec![0u8; len];
    for _ in 0..n {
        // SAFETY: buf is a live slice of `len` bytes.
        let rv = unsafe { (generate_random.f)(s.handle, buf.as_mut_ptr(), len as CK_ULONG) };
        if rv != CKR_OK {
            return generate_random.check(rv);
        }
    }
    Ok(())
}

/// `n` × (`C_SignInit` + `C_Sign`) with a parameterless mechanism.
pub fn sign_loop(
    s: &Session,
    mechanism: MechanismType,
    key: ObjectHandle,
    data: &[u8],
    n: u64,
) -> Result<()> {
    let key = s.on_token(key)?;
    let sign_init = p11_fn!(s.module, C_SignInit)?;
    let sign = p11_fn!(s.module, C_Sign)?;
    let mut out = vec![0u8; OUTPUT_GUESS];
    for _ in 0..n {
        let mut m = CK_MECHANISM {
            mechanism,
            pParameter: std::ptr::null_mut(),
            ulParameterLen: 0,
        };
        // SAFETY: m lives for the call.
        let rv = unsafe { (sign_init.f)(s.handle, &mut m, key) };
        if rv != CKR_OK {
            return sign_init.check(rv);
        }
        let mut len = out.len() as CK_ULONG;
        // SAFETY: data is live; out has `len` bytes.
        let rv = unsafe {
            (sign.f)(
                s.handle,
                data.as_ptr() as *mut _,
                data.len() as CK_ULONG,
                out.as_mut_ptr(),
                &mut len,
            )
        };
        if rv != CKR_OK {
            return sign.check(rv);
        }
    }
    Ok(())
}
