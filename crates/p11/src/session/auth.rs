//! Logging in and out, and setting PINs.

use cryptoki_sys::*;
use secrecy::ExposeSecret;

use super::Session;
use crate::error::Result;
use crate::module::func::{p11_fn, vendor_fn};
use crate::types::UserType;
use crate::Pin;

impl Session {
    /// `C_Login`. `CKR_USER_ALREADY_LOGGED_IN` counts as success (login is per application
    /// on most modules, so a second session of a logged-in application already is).
    pub fn login(&self, user: UserType, pin: &Pin) -> Result<()> {
        let login = p11_fn!(self.module, C_Login)?;
        let p = pin.expose_secret().as_bytes();
        // SAFETY: the PIN bytes live for the call; the module copies what it needs.
        let rv = unsafe {
            (login.f)(
                self.handle,
                user.raw(),
                p.as_ptr() as *mut _,
                p.len() as CK_ULONG,
            )
        };
        if rv == CKR_USER_ALREADY_LOGGED_IN {
            return Ok(());
        }
        login.check(rv)
    }

    /// `C_Login` with `CKU_CONTEXT_SPECIFIC`: authorize the one operation just begun with a
    /// key that has `CKA_ALWAYS_AUTHENTICATE` (a signature: one `C_Sign`, or one
    /// `C_SignUpdate`…`C_SignFinal`). A wrong PIN is `CKR_PIN_INCORRECT`, and counts toward
    /// the user PIN's lockout as a failed login does.
    pub fn context_login(&self, pin: &Pin) -> Result<()> {
        let login = p11_fn!(self.module, C_Login)?;
        let p = pin.expose_secret().as_bytes();
        // SAFETY: the PIN bytes live for the call; the module copies what it needs.
        let rv = unsafe {
            (login.f)(
                self.handle,
                CKU_CONTEXT_SPECIFIC,
                p.as_ptr() as *mut _,
                p.len() as CK_ULONG,
            )
        };
        login.check(rv)
    }

    pub fn logout(&self) -> Result<()> {
        let logout = p11_fn!(self.module, C_Logout)?;
        // SAFETY: takes the handle only.
        let rv = unsafe { (logout.f)(self.handle) };
        if rv == CKR_USER_NOT_LOGGED_IN {
            return Ok(());
        }
        logout.check(rv)
    }

    /// `C_InitPIN` (SO session): set the user PIN.
    pub fn init_pin(&self, pin: &Pin) -> Result<()> {
        let init_pin = p11_fn!(self.module, C_InitPIN)?;
        let p = pin.expose_secret().as_bytes();
        // SAFETY: PIN bytes live for the call.
        let rv = unsafe { (init_pin.f)(self.handle, p.as_ptr() as *mut _, p.len() as CK_ULONG) };
        init_pin.check(rv)
    }

    /// `C_SetPIN`: change the logged-in user's PIN.
    pub fn set_pin(&self, old: &Pin, new: &Pin) -> Result<()> {
        let set_pin = p11_fn!(self.module, C_SetPIN)?;
        let o = old.expose_secret().as_bytes();
        let n = new.expose_secret().as_bytes();
        // SAFETY: both PINs live for the call.
        let rv = unsafe {
            (set_pin.f)(
                self.handle,
                o.as_ptr() as *mut _,
                o.len() as CK_ULONG,
                n.as_ptr() as *mut _,
                n.len() as CK_ULONG,
            )
        };
        set_pin.check(rv)
    }

    /// Luna's `CA_InitRolePIN` (a Crypto Officer session): set the PIN of another role,
    /// e.g. the Crypto User (`0x80000001`).
    pub fn ca_init_role_pin(&self, user: UserType, pin: &Pin) -> Result<()> {
        let init_role_pin = vendor_fn!(self.module, init_role_pin)?;
        let p = pin.expose_secret().as_bytes();
        // SAFETY: the PIN bytes live for the call; the module copies what it needs.
        let rv = unsafe {
            (init_role_pin.f)(
                self.handle,
                user.raw(),
                p.as_ptr() as *mut _,
                p.len() as CK_ULONG,
            )
        };
        init_role_pin.check(rv)
    }
}
