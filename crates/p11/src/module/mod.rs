//! A loaded PKCS#11 module and the calls that need no session, by PKCS#11 chapter:
//! `load` (dlopen and the function table), `general` (initialize, finalize, info),
//! `slots` (slots, tokens, mechanisms) and `luna` (Luna's slot-level `CA_*` calls).
//! Opening a session is in [`crate::session`].
//!
//! A module is opened with `RTLD_NOW | RTLD_NODELETE` and never unloaded: the Luna client
//! registers thread-local destructors and unloading it crashes later (glibc bug 21032, seen
//! with rust-cryptoki on Luna). "Reloading" is `C_Finalize` + `C_Initialize` on the same
//! handle. The function table is copied once into the 3.2 shape (each list is a strict
//! prefix of the next; absent tail entries stay `None`) and every call goes straight
//! through it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use cryptoki_sys::*;
use parking_lot::{Mutex, RwLock};

use crate::names::Family;
use crate::types::Version;
use crate::vendor::VendorTable;

pub(crate) mod func;
mod general;
mod load;
mod luna;
mod slots;

/// Which entry point gave us the function table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryPoint {
    /// `C_GetInterface("PKCS 11", {3,2})`
    Interface32,
    /// `C_GetInterface("PKCS 11", {3,0})`
    Interface30,
    /// `C_GetFunctionList` (2.x table)
    FunctionList,
}

/// A loaded PKCS#11 module. Shared (`Arc`) and thread-safe: modules are initialized with
/// `CKF_OS_LOCKING_OK`. Sessions, not modules, are single-threaded.
pub struct Module {
    path: PathBuf,
    fl: CK_FUNCTION_LIST_3_2,
    api_version: Version,
    entry: EntryPoint,
    vendor: VendorTable,
    family: RwLock<Family>,
    init_lock: Mutex<()>,
    initialized: AtomicBool,
    generation: AtomicU64,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("path", &self.path)
            .field("api_version", &self.api_version)
            .field("entry", &self.entry)
            .field("family", &self.family())
            .finish()
    }
}

impl Module {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The version of the function table in use (2.x, 3.0 or 3.2).
    pub fn api_version(&self) -> Version {
        self.api_version
    }

    pub fn entry_point(&self) -> EntryPoint {
        self.entry
    }

    pub fn family(&self) -> Family {
        *self.family.read()
    }

    pub fn vendor(&self) -> &VendorTable {
        &self.vendor
    }

    /// The raw function table, for baselines and for `lunasim`'s forwarding. Calling through
    /// it is `unsafe` and bypasses all error handling.
    pub fn functions(&self) -> &CK_FUNCTION_LIST_3_2 {
        &self.fl
    }

    /// Incremented by every successful `C_Initialize`; sessions from an older generation
    /// are dead.
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    #[inline]
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }
}
