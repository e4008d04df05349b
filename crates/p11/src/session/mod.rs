//! A PKCS#11 session and the typed calls made on it, by PKCS#11 chapter: session
//! management here (open, close, info), then `auth` (login, logout, PINs), `objects`
//! (find, attributes, create, destroy), `sign` (sign and verify), `crypt` (encrypt,
//! decrypt, digest), `keys` (generate, wrap, unwrap, encapsulate, decapsulate), `random`,
//! `luna` (Luna's session-level `CA_*` calls) and [`baseline`] (bare loops for benchmarks).
//!
//! A session is `Send` but not `Sync`: PKCS#11 sessions are not for concurrent use, so the
//! type system keeps one session on one thread at a time. Dropping it closes it, unless the
//! module was reinitialized since (then the handle is already dead and may even be reused).

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::Arc;

use cryptoki_sys::*;

use crate::error::Result;
use crate::module::func::{p11_fn, NamedFn};
use crate::module::Module;
use crate::types::*;

mod auth;
pub mod baseline;
mod crypt;
mod handles;
mod keys;
mod luna;
mod objects;
mod random;
mod sign;

pub use handles::{handle_generation, token_handle};

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
    /// Where [`Session::sign_init`] gets the PIN of a context-specific login from, while
    /// set ([`Session::set_context_auth`]).
    context_auth: RefCell<Option<ContextAuth>>,
    _not_sync: PhantomData<Cell<()>>,
}

/// The PIN for the context-specific login (`C_Login` with `CKU_CONTEXT_SPECIFIC`) a key
/// with `CKA_ALWAYS_AUTHENTICATE` needs after each `C_SignInit`: asked with the key's
/// handle; `None` when that key needs none (or no PIN can be had: the token then refuses
/// the signature with `CKR_USER_NOT_LOGGED_IN`).
pub type ContextAuth = Box<dyn FnMut(ObjectHandle) -> Option<crate::Pin> + Send>;

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
            if let Ok(close_session) = p11_fn!(self.module, C_CloseSession) {
                // SAFETY: the handle belongs to this module generation and is closed once.
                // Errors are irrelevant here: the session is being abandoned either way.
                let _ = unsafe { (close_session.f)(self.handle) };
            }
        }
    }
}

impl Module {
    /// Open a session (always `CKF_SERIAL_SESSION`; `rw` adds `CKF_RW_SESSION`).
    pub fn open_session(self: &Arc<Self>, slot: SlotId, rw: bool) -> Result<Session> {
        let open_session = p11_fn!(self, C_OpenSession)?;
        let flags = CKF_SERIAL_SESSION | if rw { CKF_RW_SESSION } else { 0 };
        let mut handle: CK_SESSION_HANDLE = 0;
        let generation = self.generation();
        // SAFETY: no application callback (pApplication NULL, Notify None); handle is a
        // valid out pointer.
        let rv = unsafe { (open_session.f)(slot, flags, std::ptr::null_mut(), None, &mut handle) };
        open_session.check(rv)?;
        Ok(Session {
            module: self.clone(),
            slot,
            handle,
            generation,
            open: true,
            context_auth: RefCell::new(None),
            _not_sync: PhantomData,
        })
    }

    pub fn close_all_sessions(&self, slot: SlotId) -> Result<()> {
        let close_all = p11_fn!(self, C_CloseAllSessions)?;
        // SAFETY: takes a slot ID only.
        let rv = unsafe { (close_all.f)(slot) };
        close_all.check(rv)
    }
}

impl Session {
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
    #[inline]
    pub fn is_stale(&self) -> bool {
        self.module.generation() != self.generation || !self.module.is_initialized()
    }

    /// Close explicitly and report the result.
    pub fn close(mut self) -> Result<()> {
        self.open = false;
        if self.is_stale() {
            return Ok(());
        }
        let close_session = p11_fn!(self.module, C_CloseSession)?;
        // SAFETY: closing our own handle once.
        let rv = unsafe { (close_session.f)(self.handle) };
        close_session.check(rv)
    }

    /// Forget the session without calling the module (it is known to be dead).
    pub fn abandon(mut self) {
        self.open = false;
    }

    pub fn info(&self) -> Result<SessionInfo> {
        let get_session_info = p11_fn!(self.module, C_GetSessionInfo)?;
        // SAFETY: plain old data.
        let mut info: CK_SESSION_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { (get_session_info.f)(self.handle, &mut info) };
        get_session_info.check(rv)?;
        Ok(SessionInfo {
            slot: info.slotID,
            state: info.state,
            flags: info.flags,
            device_error: info.ulDeviceError,
        })
    }
}

/// Run a call that writes a variable-length output, starting with a buffer of `guess`
/// bytes and growing once on `CKR_BUFFER_TOO_SMALL` (PKCS#11 keeps the operation active
/// in that case, so the retry does not redo the work on the token). `function` names the
/// call in errors.
fn output_call<F>(
    function: &NamedFn<'_, F>,
    guess: usize,
    mut call: impl FnMut(*mut u8, *mut CK_ULONG) -> CK_RV,
) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; guess.max(1)];
    let mut len = buf.len() as CK_ULONG;
    let rv = call(buf.as_mut_ptr(), &mut len);
    if rv == CKR_BUFFER_TOO_SMALL {
        if len > MAX_OUTPUT_LEN || (len as usize) <= buf.len() {
            return Err(function.malformed(format!("asks for an output buffer of {len} bytes")));
        }
        buf = vec![0u8; len as usize];
        let rv = call(buf.as_mut_ptr(), &mut len);
        function.check(rv)?;
    } else {
        function.check(rv)?;
    }
    if len as usize > buf.len() {
        return Err(function.malformed(format!("wrote {len} bytes into {}", buf.len())));
    }
    buf.truncate(len as usize);
    Ok(buf)
}
