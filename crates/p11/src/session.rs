//! A PKCS#11 session and the typed calls made on it.
//!
//! A session is `Send` but not `Sync`: PKCS#11 sessions are not for concurrent use, so the
//! type system keeps one session on one thread at a time. Dropping it closes it, unless the
//! module was reinitialized since (then the handle is already dead and may even be reused).

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use cryptoki_sys::*;
use secrecy::ExposeSecret;

use crate::attr::{attr_kind, fixed_len, AttrValue, Template};
use crate::error::{Error, Result};
use crate::mechanism::Mechanism;
use crate::module::Module;
use crate::types::*;
use crate::Pin;

/// Objects fetched per `C_FindObjects` call.
const FIND_BATCH: usize = 256;
/// Largest attribute value we accept from a module (a certificate chain fits easily).
const MAX_ATTRIBUTE_LEN: u64 = 16 << 20;
/// First output buffer for sign/encrypt/wrap; large enough for every ML-DSA and HSS H5–H15
/// signature, so the common case is one round trip (a size query is a second trip to a
/// network HSM).
const OUTPUT_GUESS: usize = 8192;
/// Largest output we accept (SLH-DSA-256f signatures are ~50 KB).
const MAX_OUTPUT_LEN: u64 = 64 << 20;

pub struct Session {
    module: Arc<Module>,
    slot: SlotId,
    handle: CK_SESSION_HANDLE,
    generation: u64,
    open: bool,
    _not_sync: PhantomData<Cell<()>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("slot", &self.slot)
            .field("handle", &self.handle)
            .finish()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.open && self.module.generation() == self.generation && self.module.is_initialized()
        {
            if let Some(f) = self.module.functions().C_CloseSession {
                // SAFETY: the handle belongs to this module generation and is closed once.
                // Errors are irrelevant here: the session is being abandoned either way.
                let _ = unsafe { f(self.handle) };
            }
        }
    }
}

impl Session {
    pub(crate) fn new(
        module: Arc<Module>,
        slot: SlotId,
        handle: CK_SESSION_HANDLE,
        generation: u64,
    ) -> Self {
        Session {
            module,
            slot,
            handle,
            generation,
            open: true,
            _not_sync: PhantomData,
        }
    }

    pub fn module(&self) -> &Arc<Module> {
        &self.module
    }

    pub fn slot(&self) -> SlotId {
        self.slot
    }

    pub fn handle(&self) -> CK_SESSION_HANDLE {
        self.handle
    }

    /// The module generation this session was opened in.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// True when the module was reinitialized since this session was opened.
    pub fn is_stale(&self) -> bool {
        self.module.generation() != self.generation || !self.module.is_initialized()
    }

    fn ck(&self, function: &'static str, rv: CK_RV) -> Result<()> {
        self.module.ck(function, rv)
    }

    /// Close explicitly and report the result.
    pub fn close(mut self) -> Result<()> {
        self.open = false;
        if self.is_stale() {
            return Ok(());
        }
        let f = self
            .module
            .func(self.module.functions().C_CloseSession, "C_CloseSession")?;
        // SAFETY: closing our own handle once.
        let rv = unsafe { f(self.handle) };
        self.ck("C_CloseSession", rv)
    }

    /// Forget the session without calling the module (it is known to be dead).
    pub fn abandon(mut self) {
        self.open = false;
    }

    pub fn info(&self) -> Result<SessionInfo> {
        let f = self
            .module
            .func(self.module.functions().C_GetSessionInfo, "C_GetSessionInfo")?;
        // SAFETY: plain old data.
        let mut info: CK_SESSION_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { f(self.handle, &mut info) };
        self.ck("C_GetSessionInfo", rv)?;
        Ok(SessionInfo {
            slot: info.slotID,
            state: info.state,
            flags: info.flags,
            device_error: info.ulDeviceError,
        })
    }

    /// `C_Login`. `CKR_USER_ALREADY_LOGGED_IN` counts as success (login is per application
    /// on most modules, so a second session of a logged-in application already is).
    pub fn login(&self, user: UserType, pin: &Pin) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_Login, "C_Login")?;
        let p = pin.expose_secret().as_bytes();
        // SAFETY: the PIN bytes live for the call; the module copies what it needs.
        let rv = unsafe {
            f(
                self.handle,
                user.raw(),
                p.as_ptr() as *mut _,
                p.len() as CK_ULONG,
            )
        };
        if rv == CKR_USER_ALREADY_LOGGED_IN {
            return Ok(());
        }
        self.ck("C_Login", rv)
    }

    pub fn logout(&self) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_Logout, "C_Logout")?;
        // SAFETY: takes the handle only.
        let rv = unsafe { f(self.handle) };
        if rv == CKR_USER_NOT_LOGGED_IN {
            return Ok(());
        }
        self.ck("C_Logout", rv)
    }

    /// `C_InitPIN` (SO session): set the user PIN.
    pub fn init_pin(&self, pin: &Pin) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_InitPIN, "C_InitPIN")?;
        let p = pin.expose_secret().as_bytes();
        // SAFETY: PIN bytes live for the call.
        let rv = unsafe { f(self.handle, p.as_ptr() as *mut _, p.len() as CK_ULONG) };
        self.ck("C_InitPIN", rv)
    }

    /// `C_SetPIN`: change the logged-in user's PIN.
    pub fn set_pin(&self, old: &Pin, new: &Pin) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_SetPIN, "C_SetPIN")?;
        let o = old.expose_secret().as_bytes();
        let n = new.expose_secret().as_bytes();
        // SAFETY: both PINs live for the call.
        let rv = unsafe {
            f(
                self.handle,
                o.as_ptr() as *mut _,
                o.len() as CK_ULONG,
                n.as_ptr() as *mut _,
                n.len() as CK_ULONG,
            )
        };
        self.ck("C_SetPIN", rv)
    }

    /// All objects matching the template, fetched in batches.
    pub fn find_objects(&self, template: &mut Template) -> Result<Vec<ObjectHandle>> {
        let fl = self.module.functions();
        let init = self
            .module
            .func(fl.C_FindObjectsInit, "C_FindObjectsInit")?;
        let find = self.module.func(fl.C_FindObjects, "C_FindObjects")?;
        let fin = self
            .module
            .func(fl.C_FindObjectsFinal, "C_FindObjectsFinal")?;
        // SAFETY: the template's raw array and values live as long as `template`.
        let rv = unsafe { init(self.handle, template.as_mut_ptr(), template.count()) };
        self.ck("C_FindObjectsInit", rv)?;
        let mut out = Vec::new();
        let mut batch = [0 as CK_OBJECT_HANDLE; FIND_BATCH];
        let result = loop {
            let mut n: CK_ULONG = 0;
            // SAFETY: batch has FIND_BATCH entries, as we tell the module.
            let rv = unsafe {
                find(
                    self.handle,
                    batch.as_mut_ptr(),
                    FIND_BATCH as CK_ULONG,
                    &mut n,
                )
            };
            if let Err(e) = self.ck("C_FindObjects", rv) {
                break Err(e);
            }
            if n as usize > FIND_BATCH {
                break Err(Error::Malformed {
                    function: "C_FindObjects",
                    detail: format!("returned {n} objects for room of {FIND_BATCH}"),
                });
            }
            if n == 0 {
                break Ok(());
            }
            out.extend_from_slice(&batch[..n as usize]);
        };
        // SAFETY: ends the search started above; always called so the session stays usable.
        let rv = unsafe { fin(self.handle) };
        result?;
        self.ck("C_FindObjectsFinal", rv)?;
        Ok(out)
    }

    /// Read several attributes of one object. Fixed-size attributes get a buffer in the
    /// first call; only variable-length ones need a second. Per attribute, "sensitive",
    /// "no such attribute" and "unavailable" stay distinct.
    pub fn get_attributes(
        &self,
        object: ObjectHandle,
        types: &[AttributeType],
    ) -> Result<Vec<AttrValue>> {
        self.get_attributes_with(object, types, true)
    }

    /// As [`Session::get_attributes`]; with `probe` false, unavailable attributes are not
    /// asked about one by one (a listing does not need to know why), so the cost stays at
    /// one or two calls per object whatever the object lacks.
    pub fn get_attributes_with(
        &self,
        object: ObjectHandle,
        types: &[AttributeType],
        probe: bool,
    ) -> Result<Vec<AttrValue>> {
        let f = self.module.func(
            self.module.functions().C_GetAttributeValue,
            "C_GetAttributeValue",
        )?;
        let mut bufs: Vec<Vec<u8>> = types
            .iter()
            .map(|t| {
                fixed_len(attr_kind(*t))
                    .map(|n| vec![0u8; n])
                    .unwrap_or_default()
            })
            .collect();
        let mut raw: Vec<CK_ATTRIBUTE> = types
            .iter()
            .zip(bufs.iter_mut())
            .map(|(t, b)| CK_ATTRIBUTE {
                type_: *t,
                pValue: if b.is_empty() {
                    std::ptr::null_mut()
                } else {
                    b.as_mut_ptr() as *mut _
                },
                ulValueLen: b.len() as CK_ULONG,
            })
            .collect();
        // SAFETY: every non-null pValue points to a buffer of ulValueLen bytes.
        let rv = unsafe { f(self.handle, object, raw.as_mut_ptr(), raw.len() as CK_ULONG) };
        let first_rv = rv;
        match rv {
            CKR_OK
            | CKR_ATTRIBUTE_SENSITIVE
            | CKR_ATTRIBUTE_TYPE_INVALID
            | CKR_BUFFER_TOO_SMALL => {}
            _ => {
                return Err(crate::error::Error::Ck(crate::error::CkError::new(
                    "C_GetAttributeValue",
                    rv,
                    self.module.family(),
                )))
            }
        }

        // Second round: the variable-length attributes (and any fixed one that did not fit).
        let mut again: Vec<usize> = Vec::new();
        for (i, a) in raw.iter().enumerate() {
            if a.ulValueLen == CK_UNAVAILABLE_INFORMATION {
                continue;
            }
            if a.ulValueLen > MAX_ATTRIBUTE_LEN {
                return Err(Error::Malformed {
                    function: "C_GetAttributeValue",
                    detail: format!("attribute 0x{:X} claims {} bytes", a.type_, a.ulValueLen),
                });
            }
            let have = bufs[i].len() as u64;
            if a.pValue.is_null() || a.ulValueLen > have {
                again.push(i);
            }
        }
        if !again.is_empty() {
            let mut raw2: Vec<CK_ATTRIBUTE> = Vec::with_capacity(again.len());
            for &i in &again {
                bufs[i] = vec![0u8; raw[i].ulValueLen as usize];
                raw2.push(CK_ATTRIBUTE {
                    type_: raw[i].type_,
                    pValue: if bufs[i].is_empty() {
                        std::ptr::null_mut()
                    } else {
                        bufs[i].as_mut_ptr() as *mut _
                    },
                    ulValueLen: bufs[i].len() as CK_ULONG,
                });
            }
            // SAFETY: as above, buffers sized from the module's own length report.
            let rv = unsafe {
                f(
                    self.handle,
                    object,
                    raw2.as_mut_ptr(),
                    raw2.len() as CK_ULONG,
                )
            };
            match rv {
                CKR_OK | CKR_ATTRIBUTE_SENSITIVE | CKR_ATTRIBUTE_TYPE_INVALID => {}
                _ => self.ck("C_GetAttributeValue", rv)?,
            }
            for (k, &i) in again.iter().enumerate() {
                raw[i].ulValueLen = raw2[k].ulValueLen;
            }
        }

        // Attributes reported unavailable: find out why, one by one, unless the call's own
        // return value already says (only one unavailable attribute).
        let unavailable: Vec<usize> = raw
            .iter()
            .enumerate()
            .filter(|(_, a)| a.ulValueLen == CK_UNAVAILABLE_INFORMATION)
            .map(|(i, _)| i)
            .collect();
        let mut out = Vec::with_capacity(types.len());
        for (i, a) in raw.iter().enumerate() {
            if a.ulValueLen == CK_UNAVAILABLE_INFORMATION {
                let why = if unavailable.len() == 1
                    && first_rv != CKR_OK
                    && first_rv != CKR_BUFFER_TOO_SMALL
                {
                    first_rv
                } else if probe {
                    self.probe_attribute(object, a.type_)?
                } else {
                    CKR_GENERAL_ERROR
                };
                out.push(match why {
                    CKR_ATTRIBUTE_SENSITIVE => AttrValue::Sensitive,
                    CKR_ATTRIBUTE_TYPE_INVALID => AttrValue::Invalid,
                    _ => AttrValue::Unavailable,
                });
            } else {
                let mut b = std::mem::take(&mut bufs[i]);
                b.truncate(a.ulValueLen as usize);
                out.push(AttrValue::Value(b));
            }
        }
        Ok(out)
    }

    fn probe_attribute(&self, object: ObjectHandle, ty: AttributeType) -> Result<CK_RV> {
        let f = self.module.func(
            self.module.functions().C_GetAttributeValue,
            "C_GetAttributeValue",
        )?;
        let mut a = CK_ATTRIBUTE {
            type_: ty,
            pValue: std::ptr::null_mut(),
            ulValueLen: 0,
        };
        // SAFETY: a NULL value asks for the length only.
        let rv = unsafe { f(self.handle, object, &mut a, 1) };
        Ok(rv)
    }

    pub fn get_attribute(&self, object: ObjectHandle, ty: AttributeType) -> Result<AttrValue> {
        Ok(self.get_attributes(object, &[ty])?.remove(0))
    }

    pub fn set_attributes(&self, object: ObjectHandle, template: &mut Template) -> Result<()> {
        let f = self.module.func(
            self.module.functions().C_SetAttributeValue,
            "C_SetAttributeValue",
        )?;
        // SAFETY: template buffers live for the call.
        let rv = unsafe { f(self.handle, object, template.as_mut_ptr(), template.count()) };
        self.ck("C_SetAttributeValue", rv)
    }

    pub fn create_object(&self, template: &mut Template) -> Result<ObjectHandle> {
        let f = self
            .module
            .func(self.module.functions().C_CreateObject, "C_CreateObject")?;
        let mut h: CK_OBJECT_HANDLE = 0;
        // SAFETY: template buffers live for the call; h is a valid out pointer.
        let rv = unsafe { f(self.handle, template.as_mut_ptr(), template.count(), &mut h) };
        self.ck("C_CreateObject", rv)?;
        Ok(h)
    }

    pub fn destroy_object(&self, object: ObjectHandle) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_DestroyObject, "C_DestroyObject")?;
        // SAFETY: handles are integers.
        let rv = unsafe { f(self.handle, object) };
        self.ck("C_DestroyObject", rv)
    }

    pub fn generate_key(
        &self,
        mechanism: &Mechanism,
        template: &mut Template,
    ) -> Result<ObjectHandle> {
        let f = self
            .module
            .func(self.module.functions().C_GenerateKey, "C_GenerateKey")?;
        let mut m = mechanism.raw();
        let mut h: CK_OBJECT_HANDLE = 0;
        // SAFETY: mechanism and template point into live owned buffers.
        let rv = unsafe {
            f(
                self.handle,
                &mut m,
                template.as_mut_ptr(),
                template.count(),
                &mut h,
            )
        };
        self.ck("C_GenerateKey", rv)?;
        Ok(h)
    }

    /// Returns (public, private).
    pub fn generate_key_pair(
        &self,
        mechanism: &Mechanism,
        public: &mut Template,
        private: &mut Template,
    ) -> Result<(ObjectHandle, ObjectHandle)> {
        let f = self.module.func(
            self.module.functions().C_GenerateKeyPair,
            "C_GenerateKeyPair",
        )?;
        let mut m = mechanism.raw();
        let (mut hp, mut hs) = (0, 0);
        // SAFETY: mechanism and both templates point into live owned buffers.
        let rv = unsafe {
            f(
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
        self.ck("C_GenerateKeyPair", rv)?;
        Ok((hp, hs))
    }

    /// Run a call that writes a variable-length output, starting with a buffer of `guess`
    /// bytes and growing once on `CKR_BUFFER_TOO_SMALL` (PKCS#11 keeps the operation active
    /// in that case, so the retry does not redo the work on the token).
    fn output_call(
        &self,
        function: &'static str,
        guess: usize,
        mut call: impl FnMut(*mut u8, *mut CK_ULONG) -> CK_RV,
    ) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; guess.max(1)];
        let mut len = buf.len() as CK_ULONG;
        let rv = call(buf.as_mut_ptr(), &mut len);
        if rv == CKR_BUFFER_TOO_SMALL {
            if len > MAX_OUTPUT_LEN || (len as usize) <= buf.len() {
                return Err(Error::Malformed {
                    function,
                    detail: format!("asks for an output buffer of {len} bytes"),
                });
            }
            buf = vec![0u8; len as usize];
            let rv = call(buf.as_mut_ptr(), &mut len);
            self.ck(function, rv)?;
        } else {
            self.ck(function, rv)?;
        }
        if len as usize > buf.len() {
            return Err(Error::Malformed {
                function,
                detail: format!("wrote {len} bytes into {}", buf.len()),
            });
        }
        buf.truncate(len as usize);
        Ok(buf)
    }

    pub fn sign(&self, mechanism: &Mechanism, key: ObjectHandle, data: &[u8]) -> Result<Vec<u8>> {
        self.sign_init(mechanism, key)?;
        let f = self.module.func(self.module.functions().C_Sign, "C_Sign")?;
        let h = self.handle;
        self.output_call("C_Sign", OUTPUT_GUESS, |out, len| {
            // SAFETY: data is a live slice; out has *len bytes.
            unsafe { f(h, data.as_ptr() as *mut _, data.len() as CK_ULONG, out, len) }
        })
    }

    pub fn sign_init(&self, mechanism: &Mechanism, key: ObjectHandle) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_SignInit, "C_SignInit")?;
        let mut m = mechanism.raw();
        // SAFETY: the mechanism and its parameter live for the call; the module copies them.
        let rv = unsafe { f(self.handle, &mut m, key) };
        self.ck("C_SignInit", rv)
    }

    pub fn sign_update(&self, part: &[u8]) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_SignUpdate, "C_SignUpdate")?;
        // SAFETY: part is a live slice.
        let rv = unsafe { f(self.handle, part.as_ptr() as *mut _, part.len() as CK_ULONG) };
        self.ck("C_SignUpdate", rv)
    }

    pub fn sign_final(&self) -> Result<Vec<u8>> {
        let f = self
            .module
            .func(self.module.functions().C_SignFinal, "C_SignFinal")?;
        let h = self.handle;
        self.output_call("C_SignFinal", OUTPUT_GUESS, |out, len| {
            // SAFETY: output_call passes a buffer of *len writable bytes.
            unsafe { f(h, out, len) }
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
        let f = self
            .module
            .func(self.module.functions().C_Verify, "C_Verify")?;
        // SAFETY: data and signature are live slices.
        let rv = unsafe {
            f(
                self.handle,
                data.as_ptr() as *mut _,
                data.len() as CK_ULONG,
                signature.as_ptr() as *mut _,
                signature.len() as CK_ULONG,
            )
        };
        verify_result(self, "C_Verify", rv)
    }

    pub fn verify_init(&self, mechanism: &Mechanism, key: ObjectHandle) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_VerifyInit, "C_VerifyInit")?;
        let mut m = mechanism.raw();
        // SAFETY: mechanism lives for the call.
        let rv = unsafe { f(self.handle, &mut m, key) };
        self.ck("C_VerifyInit", rv)
    }

    pub fn verify_update(&self, part: &[u8]) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_VerifyUpdate, "C_VerifyUpdate")?;
        // SAFETY: part is a live slice.
        let rv = unsafe { f(self.handle, part.as_ptr() as *mut _, part.len() as CK_ULONG) };
        self.ck("C_VerifyUpdate", rv)
    }

    pub fn verify_final(&self, signature: &[u8]) -> Result<bool> {
        let f = self
            .module
            .func(self.module.functions().C_VerifyFinal, "C_VerifyFinal")?;
        // SAFETY: signature is a live slice.
        let rv = unsafe {
            f(
                self.handle,
                signature.as_ptr() as *mut _,
                signature.len() as CK_ULONG,
            )
        };
        verify_result(self, "C_VerifyFinal", rv)
    }

    pub fn encrypt(
        &self,
        mechanism: &Mechanism,
        key: ObjectHandle,
        data: &[u8],
    ) -> Result<Vec<u8>> {
        let fl = self.module.functions();
        let init = self.module.func(fl.C_EncryptInit, "C_EncryptInit")?;
        let f = self.module.func(fl.C_Encrypt, "C_Encrypt")?;
        let mut m = mechanism.raw();
        // SAFETY: mechanism lives for the call.
        let rv = unsafe { init(self.handle, &mut m, key) };
        self.ck("C_EncryptInit", rv)?;
        let h = self.handle;
        self.output_call("C_Encrypt", data.len() + 64, |out, len| {
            // SAFETY: data is a live slice; out has *len bytes.
            unsafe { f(h, data.as_ptr() as *mut _, data.len() as CK_ULONG, out, len) }
        })
    }

    pub fn decrypt(
        &self,
        mechanism: &Mechanism,
        key: ObjectHandle,
        data: &[u8],
    ) -> Result<Vec<u8>> {
        let fl = self.module.functions();
        let init = self.module.func(fl.C_DecryptInit, "C_DecryptInit")?;
        let f = self.module.func(fl.C_Decrypt, "C_Decrypt")?;
        let mut m = mechanism.raw();
        // SAFETY: mechanism lives for the call.
        let rv = unsafe { init(self.handle, &mut m, key) };
        self.ck("C_DecryptInit", rv)?;
        let h = self.handle;
        self.output_call("C_Decrypt", data.len() + 64, |out, len| {
            // SAFETY: data is a live slice; out has *len bytes.
            unsafe { f(h, data.as_ptr() as *mut _, data.len() as CK_ULONG, out, len) }
        })
    }

    pub fn digest(&self, mechanism: &Mechanism, data: &[u8]) -> Result<Vec<u8>> {
        let fl = self.module.functions();
        let init = self.module.func(fl.C_DigestInit, "C_DigestInit")?;
        let f = self.module.func(fl.C_Digest, "C_Digest")?;
        let mut m = mechanism.raw();
        // SAFETY: mechanism lives for the call.
        let rv = unsafe { init(self.handle, &mut m) };
        self.ck("C_DigestInit", rv)?;
        let h = self.handle;
        self.output_call("C_Digest", 64, |out, len| {
            // SAFETY: data is a live slice; out has *len bytes.
            unsafe { f(h, data.as_ptr() as *mut _, data.len() as CK_ULONG, out, len) }
        })
    }

    pub fn generate_random(&self, buf: &mut [u8]) -> Result<()> {
        let f = self
            .module
            .func(self.module.functions().C_GenerateRandom, "C_GenerateRandom")?;
        // SAFETY: buf is a live mutable slice of the length we pass.
        let rv = unsafe { f(self.handle, buf.as_mut_ptr(), buf.len() as CK_ULONG) };
        self.ck("C_GenerateRandom", rv)
    }

    pub fn wrap_key(
        &self,
        mechanism: &Mechanism,
        wrapping_key: ObjectHandle,
        key: ObjectHandle,
    ) -> Result<Vec<u8>> {
        let f = self
            .module
            .func(self.module.functions().C_WrapKey, "C_WrapKey")?;
        let h = self.handle;
        self.output_call("C_WrapKey", 4096, |out, len| {
            let mut m = mechanism.raw();
            // SAFETY: mechanism lives for the call; out has *len bytes.
            unsafe { f(h, &mut m, wrapping_key, key, out, len) }
        })
    }

    pub fn unwrap_key(
        &self,
        mechanism: &Mechanism,
        unwrapping_key: ObjectHandle,
        wrapped: &[u8],
        template: &mut Template,
    ) -> Result<ObjectHandle> {
        let f = self
            .module
            .func(self.module.functions().C_UnwrapKey, "C_UnwrapKey")?;
        let mut m = mechanism.raw();
        let mut h: CK_OBJECT_HANDLE = 0;
        // SAFETY: all buffers live for the call; h is a valid out pointer.
        let rv = unsafe {
            f(
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
        self.ck("C_UnwrapKey", rv)?;
        Ok(h)
    }

    /// KEM encapsulation: the 3.2 `C_EncapsulateKey` when the module's table has it, else
    /// Luna's `CA_EncapsulateKey` (same argument order). Returns (ciphertext, secret key).
    pub fn encapsulate(
        &self,
        mechanism: &Mechanism,
        public_key: ObjectHandle,
        template: &mut Template,
    ) -> Result<(Vec<u8>, ObjectHandle)> {
        let (f, function) = match (
            self.module.functions().C_EncapsulateKey,
            self.module.vendor().encapsulate_key,
        ) {
            (Some(f), _) => (f, "C_EncapsulateKey"),
            (None, Some(f)) => (f, "CA_EncapsulateKey"),
            (None, None) => {
                return Err(Error::NotSupported {
                    function: "C_EncapsulateKey",
                })
            }
        };
        let mut key: CK_OBJECT_HANDLE = 0;
        let h = self.handle;
        let ct = self.output_call(function, 2048, |out, len| {
            let mut m = mechanism.raw();
            // SAFETY: mechanism and template live for the call; out has *len bytes.
            unsafe {
                f(
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
        Ok((ct, key))
    }

    /// KEM decapsulation (`C_DecapsulateKey` or Luna's `CA_DecapsulateKey`).
    pub fn decapsulate(
        &self,
        mechanism: &Mechanism,
        private_key: ObjectHandle,
        template: &mut Template,
        ciphertext: &[u8],
    ) -> Result<ObjectHandle> {
        let (f, function) = match (
            self.module.functions().C_DecapsulateKey,
            self.module.vendor().decapsulate_key,
        ) {
            (Some(f), _) => (f, "C_DecapsulateKey"),
            (None, Some(f)) => (f, "CA_DecapsulateKey"),
            (None, None) => {
                return Err(Error::NotSupported {
                    function: "C_DecapsulateKey",
                })
            }
        };
        let mut m = mechanism.raw();
        let mut key: CK_OBJECT_HANDLE = 0;
        // SAFETY: mechanism, template and ciphertext live for the call.
        let rv = unsafe {
            f(
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
        self.ck(function, rv)?;
        Ok(key)
    }

    // ---- Luna session-level extensions ------------------------------------------------

    /// `CA_ReadUtilizationMetrics` (or the read-and-reset variant) followed by
    /// `CA_ReadAllUtilizationCounters`.
    pub fn ca_utilization(&self, reset: bool) -> Result<Vec<crate::vendor::UtilizationCounter>> {
        let v = self.module.vendor();
        let (snap, name) = if reset {
            (
                v.read_and_reset_utilization_metrics,
                "CA_ReadAndResetUtilizationMetrics",
            )
        } else {
            (v.read_utilization_metrics, "CA_ReadUtilizationMetrics")
        };
        let snap = snap.ok_or(Error::NotSupported { function: name })?;
        let read = v.read_all_utilization_counters.ok_or(Error::NotSupported {
            function: "CA_ReadAllUtilizationCounters",
        })?;
        // SAFETY: takes the session handle only.
        let rv = unsafe { snap(self.handle) };
        self.ck(name, rv)?;
        let mut n: CK_ULONG = 0;
        // SAFETY: NULL buffer asks for the count.
        let rv = unsafe { read(self.handle, std::ptr::null_mut(), &mut n) };
        self.ck("CA_ReadAllUtilizationCounters", rv)?;
        if n > 65_536 {
            return Err(Error::Malformed {
                function: "CA_ReadAllUtilizationCounters",
                detail: format!("{n} counters"),
            });
        }
        let mut buf = vec![crate::vendor::CK_UTILIZATION_COUNTER::default(); n as usize];
        let mut m = n;
        // SAFETY: buf has room for `m` counters.
        let rv = unsafe { read(self.handle, buf.as_mut_ptr(), &mut m) };
        self.ck("CA_ReadAllUtilizationCounters", rv)?;
        buf.truncate((m as usize).min(buf.len()));
        Ok(buf.iter().map(Into::into).collect())
    }
}

fn verify_result(s: &Session, function: &'static str, rv: CK_RV) -> Result<bool> {
    match rv {
        CKR_OK => Ok(true),
        CKR_SIGNATURE_INVALID | CKR_SIGNATURE_LEN_RANGE => Ok(false),
        _ => s.ck(function, rv).map(|_| false),
    }
}

/// Baseline loops that call the module's function pointers directly with no wrapping
/// beyond the return-value check, for benchmarks that compare the pool against them.
pub mod baseline {
    use super::*;

    /// `n` × `C_GenerateRandom(len)` on one session.
    pub fn generate_random_loop(s: &Session, n: u64, len: usize) -> Result<()> {
        let f = s
            .module
            .func(s.module.functions().C_GenerateRandom, "C_GenerateRandom")?;
        let mut buf = vec![0u8; len];
        for _ in 0..n {
            // SAFETY: buf is a live slice of `len` bytes.
            let rv = unsafe { f(s.handle, buf.as_mut_ptr(), len as CK_ULONG) };
            if rv != CKR_OK {
                return s.ck("C_GenerateRandom", rv);
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
        let fl = s.module.functions();
        let init = s.module.func(fl.C_SignInit, "C_SignInit")?;
        let sign = s.module.func(fl.C_Sign, "C_Sign")?;
        let mut out = vec![0u8; OUTPUT_GUESS];
        for _ in 0..n {
            let mut m = CK_MECHANISM {
                mechanism,
                pParameter: std::ptr::null_mut(),
                ulParameterLen: 0,
            };
            // SAFETY: m lives for the call.
            let rv = unsafe { init(s.handle, &mut m, key) };
            if rv != CKR_OK {
                return s.ck("C_SignInit", rv);
            }
            let mut len = out.len() as CK_ULONG;
            // SAFETY: data is live; out has `len` bytes.
            let rv = unsafe {
                sign(
                    s.handle,
                    data.as_ptr() as *mut _,
                    data.len() as CK_ULONG,
                    out.as_mut_ptr(),
                    &mut len,
                )
            };
            if rv != CKR_OK {
                return s.ck("C_Sign", rv);
            }
        }
        Ok(())
    }
}
