//! Signing and verifying, single- and multi-part.

use cryptoki_sys::*;

use super::{output_call, ContextAuth, Session, OUTPUT_GUESS};
use crate::error::Result;
use crate::mechanism::Mechanism;
use crate::module::func::{p11_fn, NamedFn};
use crate::types::*;

/// Room for any signature (SLH-DSA-256f's are ~50 KB), so ending an operation with a
/// refused `C_Sign` is never answered `CKR_BUFFER_TOO_SMALL` (which would keep it active).
const MAX_SIGNATURE_GUESS: usize = 64 << 10;

impl Session {
    pub fn sign(&self, mechanism: &Mechanism, key: ObjectHandle, data: &[u8]) -> Result<Vec<u8>> {
        self.sign_init(mechanism, key)?;
        let sign = p11_fn!(self.module, C_Sign)?;
        let h = self.handle;
        output_call(&sign, OUTPUT_GUESS, |out, len| {
            // SAFETY: data is a live slice; out has *len bytes.
            unsafe { (sign.f)(h, data.as_ptr() as *mut _, data.len() as CK_ULONG, out, len) }
        })
    }

    /// `C_SignInit`; then, while a [`ContextAuth`] is set and gives a PIN for `key`, the
    /// context-specific login that authorizes this one operation. When that login fails
    /// (a wrong PIN), the operation is ended and the error returned: never tried again.
    pub fn sign_init(&self, mechanism: &Mechanism, key: ObjectHandle) -> Result<()> {
        let given = key;
        let key = self.on_token(key)?;
        let sign_init = p11_fn!(self.module, C_SignInit)?;
        let mut m = mechanism.raw();
        // SAFETY: the mechanism and its parameter live for the call; the module copies them.
        let rv = unsafe { (sign_init.f)(self.handle, &mut m, key) };
        sign_init.check(rv)?;
        let pin = match self.context_auth.borrow_mut().as_mut() {
            Some(auth) => auth(given),
            None => None,
        };
        if let Some(pin) = pin {
            if let Err(e) = self.context_login(&pin) {
                self.end_unauthorized_sign();
                return Err(e);
            }
        }
        Ok(())
    }

    /// End a signing operation whose context login failed, so the session can sign again:
    /// `C_SignInit` with a NULL mechanism (PKCS#11 3.0), else — a 2.40 module such as
    /// SoftHSM2 — a `C_Sign` the token refuses (`CKR_USER_NOT_LOGGED_IN`: not
    /// authorized), which ends it too. No signature is made either way.
    fn end_unauthorized_sign(&self) {
        if let Ok(sign_init) = p11_fn!(self.module, C_SignInit) {
            // SAFETY: a NULL mechanism and no key: the call reads neither.
            let rv = unsafe { (sign_init.f)(self.handle, std::ptr::null_mut(), 0) };
            if rv == CKR_OK {
                return;
            }
        }
        if let Ok(sign) = p11_fn!(self.module, C_Sign) {
            let mut scratch = vec![0u8; MAX_SIGNATURE_GUESS];
            let mut len = scratch.len() as CK_ULONG;
            // Not NULL: some modules refuse a NULL input before they look at the operation.
            let mut nothing = [0u8; 1];
            // SAFETY: an input of 0 bytes at a valid pointer; the output is our own buffer
            // of `len` bytes.
            let _ = unsafe {
                (sign.f)(
                    self.handle,
                    nothing.as_mut_ptr(),
                    0,
                    scratch.as_mut_ptr(),
                    &mut len,
                )
            };
        }
    }

    /// Set (or clear, with `None`) where the PIN of a context-specific login comes from;
    /// returns the one set before.
    pub fn set_context_auth(&self, auth: Option<ContextAuth>) -> Option<ContextAuth> {
        std::mem::replace(&mut *self.context_auth.borrow_mut(), auth)
    }

    pub fn sign_update(&self, part: &[u8]) -> Result<()> {
        let sign_update = p11_fn!(self.module, C_SignUpdate)?;
        // SAFETY: part is a live slice.
        let rv = unsafe {
            (sign_update.f)(self.handle, part.as_ptr() as *mut _, part.len() as CK_ULONG)
        };
        sign_update.check(rv)
    }

    pub fn sign_final(&self) -> Result<Vec<u8>> {
        let sign_final = p11_fn!(self.module, C_SignFinal)?;
        let h = self.handle;
        output_call(&sign_final, OUTPUT_GUESS, |out, len| {
            // SAFETY: output_call passes a buffer of *len writable bytes.
            unsafe { (sign_final.f)(h, out, len) }
        })
    }

    /// Verify; an invalid signature is `Ok(false)`, not an error.
    pub fn verify(
        &self,
        mechanism: &Mechanism,
        key: ObjectHandle,
        data: &[u8],
        signature: &[u8],
    ) -> Result<bool> {
        self.verify_init(mechanism, key)?;
        let verify = p11_fn!(self.module, C_Verify)?;
        // SAFETY: data and signature are live slices.
        let rv = unsafe {
            (verify.f)(
                self.handle,
                data.as_ptr() as *mut _,
                data.len() as CK_ULONG,
                signature.as_ptr() as *mut _,
                signature.len() as CK_ULONG,
            )
        };
        verify_result(&verify, rv)
    }

    pub fn verify_init(&self, mechanism: &Mechanism, key: ObjectHandle) -> Result<()> {
        let key = self.on_token(key)?;
        let verify_init = p11_fn!(self.module, C_VerifyInit)?;
        let mut m = mechanism.raw();
        // SAFETY: mechanism lives for the call.
        let rv = unsafe { (verify_init.f)(self.handle, &mut m, key) };
        verify_init.check(rv)
    }

    pub fn verify_update(&self, part: &[u8]) -> Result<()> {
        let verify_update = p11_fn!(self.module, C_VerifyUpdate)?;
        // SAFETY: part is a live slice.
        let rv = unsafe {
            (verify_update.f)(self.handle, part.as_ptr() as *mut _, part.len() as CK_ULONG)
        };
        verify_update.check(rv)
    }

    pub fn verify_final(&self, signature: &[u8]) -> Result<bool> {
        let verify_final = p11_fn!(self.module, C_VerifyFinal)?;
        // SAFETY: signature is a live slice.
        let rv = unsafe {
            (verify_final.f)(
                self.handle,
                signature.as_ptr() as *mut _,
                signature.len() as CK_ULONG,
            )
        };
        verify_result(&verify_final, rv)
    }
}

/// A verification's answer: a bad signature (or one of the wrong length) is `false`.
fn verify_result<F>(verify: &NamedFn<'_, F>, rv: CK_RV) -> Result<bool> {
    match rv {
        CKR_OK => Ok(true),
        CKR_SIGNATURE_INVALID | CKR_SIGNATURE_LEN_RANGE => Ok(false),
        _ => verify.check(rv).map(|_| false),
    }
}
