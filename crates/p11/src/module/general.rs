//! General-purpose functions: `C_Initialize`, `C_Finalize`, `C_GetInfo`, and the
//! finalize-and-initialize "reload" on the same handle.

use std::sync::atomic::Ordering;

use cryptoki_sys::*;

use super::func::p11_fn;
use super::Module;
use crate::error::Result;
use crate::names::Family;
use crate::types::Info;

impl Module {
    /// `C_Initialize` with `CKF_OS_LOCKING_OK`. Idempotent.
    pub fn initialize(&self) -> Result<()> {
        let _g = self.init_lock.lock();
        if self.is_initialized() {
            return Ok(());
        }
        self.initialize_locked()
    }

    fn initialize_locked(&self) -> Result<()> {
        let initialize = p11_fn!(self, C_Initialize)?;
        let mut args = CK_C_INITIALIZE_ARGS {
            CreateMutex: None,
            DestroyMutex: None,
            LockMutex: None,
            UnlockMutex: None,
            flags: CKF_OS_LOCKING_OK,
            pReserved: std::ptr::null_mut(),
        };
        // SAFETY: args is a valid CK_C_INITIALIZE_ARGS for the duration of the call.
        let rv = unsafe { (initialize.f)(&mut args as *mut _ as *mut _) };
        if rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED {
            return Err(initialize.error(rv));
        }
        self.initialized.store(true, Ordering::Release);
        self.generation.fetch_add(1, Ordering::AcqRel);
        let info = self.info()?;
        *self.family.write() = Family::detect(
            &info.manufacturer,
            &info.library_description,
            self.vendor.is_luna(),
        );
        Ok(())
    }

    /// `C_Finalize`. A module that was already finalized (by someone else) is fine.
    pub fn finalize(&self) -> Result<()> {
        let _g = self.init_lock.lock();
        self.finalize_locked()
    }

    fn finalize_locked(&self) -> Result<()> {
        let finalize = p11_fn!(self, C_Finalize)?;
        // SAFETY: pReserved must be NULL.
        let rv = unsafe { (finalize.f)(std::ptr::null_mut()) };
        self.initialized.store(false, Ordering::Release);
        if rv == CKR_CRYPTOKI_NOT_INITIALIZED {
            return Ok(());
        }
        finalize.check(rv)
    }

    /// Call `C_Finalize` without updating this handle's state: what happens when another
    /// component of the process finalizes the library. For fault-injection tests and drills;
    /// the pool must notice on its next call and recover.
    pub fn finalize_untracked(&self) -> Result<()> {
        let finalize = p11_fn!(self, C_Finalize)?;
        // SAFETY: pReserved must be NULL.
        let rv = unsafe { (finalize.f)(std::ptr::null_mut()) };
        finalize.check(rv)
    }

    /// `C_Finalize` + `C_Initialize` on the same handle: the only "reload" that is safe.
    /// All sessions of earlier generations are dead afterwards.
    pub fn reinitialize(&self) -> Result<()> {
        let _g = self.init_lock.lock();
        // A finalize error (device gone) must not prevent the attempt to initialize.
        let _ = self.finalize_locked();
        self.initialize_locked()
    }

    pub fn info(&self) -> Result<Info> {
        let get_info = p11_fn!(self, C_GetInfo)?;
        // SAFETY: CK_INFO is plain old data; all-zero is a valid value.
        let mut info: CK_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { (get_info.f)(&mut info) };
        get_info.check(rv)?;
        Ok(Info::from(&info))
    }
}
