//! Key management: generating keys and key pairs, wrapping and unwrapping, and KEM
//! encapsulation and decapsulation (the 3.2 functions, or Luna's `CA_` ones).

use cryptoki_sys::*;

use super::{output_call, Session};
use crate::attr::Template;
use crate::error::Result;
use crate::mechanism::Mechanism;
use crate::module::func::{p11_fn, vendor_fn};
use crate::types::*;

impl Session {
    pub fn generate_key(
        &self,
        mechanism: &Mechanism,
        template: &mut Template,
    ) -> Result<ObjectHandle> {
        let generate_key = p11_fn!(self.module, C_GenerateKey)?;
        let mut m = mechanism.raw();
        let mut h: CK_OBJECT_HANDLE = 0;
        // SAFETY: mechanism and template point into live owned buffers.
        let rv = unsafe {
            (generate_key.f)(
                self.handle,
                &mut m,
                template.as_mut_ptr(),
                template.count(),
                &mut h,
            )
        };
        generate_key.check(rv)?;
        self.given_out("C_GenerateKey", h)
    }

    /// Returns (public, private).
    pub fn generate_key_pair(
        &self,
        mechanism: &Mechanism,
        public: &mut Template,
        private: &mut Template,
    ) -> Result<(ObjectHandle, ObjectHandle)> {
        let generate_key_pair = p11_fn!(self.module, C_GenerateKeyPair)?;
        let mut m = mechanism.raw();
        let (mut hp, mut hs) = (0, 0);
        // SAFETY: mechanism and both templates point into live owned buffers.
        let rv = unsafe {
            (generate_key_pair.f)(
                self.handle,
                &mut m,
                public.as_mut_ptr(),
                public.count(),
                private.as_mut_ptr(),
                private.count(),
                &mut hp,
                &mut hs,
            )
        };
        generate_key_pair.check(rv)?;
        Ok((
            self.given_out("C_GenerateKeyPair", hp)?,
            self.given_out("C_GenerateKeyPair", hs)?,
        ))
    }

    pub fn wrap_key(
        &self,
        mechanism: &Mechanism,
        wrapping_key: ObjectHandle,
        key: ObjectHandle,
    ) -> Result<Vec<u8>> {
        let (wrapping_key, key) = (self.on_token(wrapping_key)?, self.on_token(key)?);
        let wrap_key = p11_fn!(self.module, C_WrapKey)?;
        let h = self.handle;
        output_call(&wrap_key, 4096, |out, len| {
            let mut m = mechanism.raw();
            // SAFETY: mechanism lives for the call; out has *len bytes.
            unsafe { (wrap_key.f)(h, &mut m, wrapping_key, key, out, len) }
        })
    }

    pub fn unwrap_key(
        &self,
        mechanism: &Mechanism,
        unwrapping_key: ObjectHandle,
        wrapped: &[u8],
        template: &mut Template,
    ) -> Result<ObjectHandle> {
        let unwrapping_key = self.on_token(unwrapping_key)?;
        let unwrap_key = p11_fn!(self.module, C_UnwrapKey)?;
        let mut m = mechanism.raw();
        let mut h: CK_OBJECT_HANDLE = 0;
        // SAFETY: all buffers live for the call; h is a valid out pointer.
        let rv = unsafe {
            (unwrap_key.f)(
                self.handle,
                &mut m,
                unwrapping_key,
                wrapped.as_ptr() as *mut _,
                wrapped.len() as CK_ULONG,
                template.as_mut_ptr(),
                template.count(),
                &mut h,
            )
        };
        unwrap_key.check(rv)?;
        self.given_out("C_UnwrapKey", h)
    }

    /// KEM encapsulation: the 3.2 `C_EncapsulateKey` when the module's table has it, else
    /// Luna's `CA_EncapsulateKey` (same argument order). Returns (ciphertext, secret key).
    pub fn encapsulate(
        &self,
        mechanism: &Mechanism,
        public_key: ObjectHandle,
        template: &mut Template,
    ) -> Result<(Vec<u8>, ObjectHandle)> {
        let public_key = self.on_token(public_key)?;
        // With neither, the error names the standard function.
        let encapsulate = p11_fn!(self.module, C_EncapsulateKey)
            .or_else(|missing| vendor_fn!(self.module, encapsulate_key).map_err(|_| missing))?;
        let mut key: CK_OBJECT_HANDLE = 0;
        let h = self.handle;
        let ct = output_call(&encapsulate, 2048, |out, len| {
            let mut m = mechanism.raw();
            // SAFETY: mechanism and template live for the call; out has *len bytes.
            unsafe {
                (encapsulate.f)(
                    h,
                    &mut m,
                    public_key,
                    template.as_mut_ptr(),
                    template.count(),
                    out,
                    len,
                    &mut key,
                )
            }
        })?;
        Ok((ct, self.given_out("C_EncapsulateKey", key)?))
    }

    /// KEM decapsulation (`C_DecapsulateKey` or Luna's `CA_DecapsulateKey`).
    pub fn decapsulate(
        &self,
        mechanism: &Mechanism,
        private_key: ObjectHandle,
        template: &mut Template,
        ciphertext: &[u8],
    ) -> Result<ObjectHandle> {
        let private_key = self.on_token(private_key)?;
        // With neither, the error names the standard function.
        let decapsulate = p11_fn!(self.module, C_DecapsulateKey)
            .or_else(|missing| vendor_fn!(self.module, decapsulate_key).map_err(|_| missing))?;
        let mut m = mechanism.raw();
        let mut key: CK_OBJECT_HANDLE = 0;
        // SAFETY: mechanism, template and ciphertext live for the call.
        let rv = unsafe {
            (decapsulate.f)(
                self.handle,
                &mut m,
                private_key,
                template.as_mut_ptr(),
                template.count(),
                ciphertext.as_ptr() as *mut _,
                ciphertext.len() as CK_ULONG,
                &mut key,
            )
        };
        decapsulate.check(rv)?;
        self.given_out("C_DecapsulateKey", key)
    }
}
