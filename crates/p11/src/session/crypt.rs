//! Encrypting, decrypting and digesting (single-part).

use cryptoki_sys::*;

use super::{output_call, Session};
use crate::error::Result;
use crate::mechanism::Mechanism;
use crate::module::func::p11_fn;
use crate::types::*;

impl Session {
    pub fn encrypt(
        &self,
        mechanism: &Mechanism,
        key: ObjectHandle,
        data: &[u8],
    ) -> Result<Vec<u8>> {
        let key = self.on_token(key)?;
        let encrypt_init = p11_fn!(self.module, C_EncryptInit)?;
        let encrypt = p11_fn!(self.module, C_Encrypt)?;
        let mut m = mechanism.raw();
        // SAFETY: mechanism lives for the call.
        let rv = unsafe { (encrypt_init.f)(self.handle, &mut m, key) };
        encrypt_init.check(rv)?;
        let h = self.handle;
        output_call(&encrypt, data.len() + 64, |out, len| {
            // SAFETY: data is a live slice; out has *len bytes.
            unsafe { (encrypt.f)(h, data.as_ptr() as *mut _, data.len() as CK_ULONG, out, len) }
        })
    }

    pub fn decrypt(
        &self,
        mechanism: &Mechanism,
        key: ObjectHandle,
        data: &[u8],
    ) -> Result<Vec<u8>> {
        let key = self.on_token(key)?;
        let decrypt_init = p11_fn!(self.module, C_DecryptInit)?;
        let decrypt = p11_fn!(self.module, C_Decrypt)?;
        let mut m = mechanism.raw();
        // SAFETY: mechanism lives for the call.
        let rv = unsafe { (decrypt_init.f)(self.handle, &mut m, key) };
        decrypt_init.check(rv)?;
        let h = self.handle;
        output_call(&decrypt, data.len() + 64, |out, len| {
            // SAFETY: data is a live slice; out has *len bytes.
            unsafe { (decrypt.f)(h, data.as_ptr() as *mut _, data.len() as CK_ULONG, out, len) }
        })
    }

    pub fn digest(&self, mechanism: &Mechanism, data: &[u8]) -> Result<Vec<u8>> {
        let digest_init = p11_fn!(self.module, C_DigestInit)?;
        let digest = p11_fn!(self.module, C_Digest)?;
        let mut m = mechanism.raw();
        // SAFETY: mechanism lives for the call.
        let rv = unsafe { (digest_init.f)(self.handle, &mut m) };
        digest_init.check(rv)?;
        let h = self.handle;
        output_call(&digest, 64, |out, len| {
            // SAFETY: data is a live slice; out has *len bytes.
            unsafe { (digest.f)(h, data.as_ptr() as *mut _, data.len() as CK_ULONG, out, len) }
        })
    }

    /// The digest of a secret key's value, computed inside the token (`C_DigestInit`,
    /// `C_DigestKey`, `C_DigestFinal`): the value itself never leaves it.
    pub fn digest_key(&self, mechanism: &Mechanism, key: ObjectHandle) -> Result<Vec<u8>> {
        let digest_init = p11_fn!(self.module, C_DigestInit)?;
        let key = self.on_token(key)?;
        let digest_key = p11_fn!(self.module, C_DigestKey)?;
        let digest_final = p11_fn!(self.module, C_DigestFinal)?;
        let mut m = mechanism.raw();
        // SAFETY: mechanism lives for the call.
        let rv = unsafe { (digest_init.f)(self.handle, &mut m) };
        digest_init.check(rv)?;
        // SAFETY: plain handles; the token reads the key's value itself.
        let rv = unsafe { (digest_key.f)(self.handle, key) };
        // An error ends the digest operation (PKCS#11 §5.12), so nothing is left open.
        digest_key.check(rv)?;
        let h = self.handle;
        output_call(&digest_final, 64, |out, len| {
            // SAFETY: out has *len bytes.
            unsafe { (digest_final.f)(h, out, len) }
        })
    }
}
