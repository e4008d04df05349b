//! Loading a PKCS#11 module and the calls that need no session.
//!
//! A module is opened with `RTLD_NOW | RTLD_NODELETE` and never unloaded: the Luna client
//! registers thread-local destructors and unloading it crashes later (glibc bug 21032, seen
//! with rust-cryptoki on Luna). "Reloading" is `C_Finalize` + `C_Initialize` on the same
//! handle. The function table is copied once into the 3.2 shape (each list is a strict
//! prefix of the next; absent tail entries stay `None`) and every call goes straight
//! through it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use cryptoki_sys::*;
use libloading::os::unix::{Library, RTLD_NOW};
use parking_lot::{Mutex, RwLock};

use crate::error::{CkError, Error, Result};
use crate::names::Family;
use crate::session::Session;
use crate::types::*;
use crate::vendor::*;

/// glibc's `RTLD_NODELETE` (not re-exported by libloading).
const RTLD_NODELETE: i32 = 0x1000;

/// Upper bounds on counts a module reports; anything larger is garbage, not data.
pub(crate) const MAX_SLOTS: u64 = 4096;
pub(crate) const MAX_MECHANISMS: u64 = 65_536;

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

fn registry() -> &'static Mutex<HashMap<PathBuf, Arc<Module>>> {
    static REG: OnceLock<Mutex<HashMap<PathBuf, Arc<Module>>>> = OnceLock::new();
    REG.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Turn a dlopen error into words an officer can act on, keeping the loader's own text.
fn explain_load_error(path: &Path, raw: &str) -> String {
    let hint = if raw.contains("invalid ELF header") || raw.contains("file too short") {
        "this file is not a shared library; choose the vendor's PKCS#11 .so (e.g. libCryptoki2_64.so)"
    } else if raw.contains("wrong ELF class") {
        "the library is built for another architecture (32/64-bit)"
    } else if raw.contains("cannot open shared object file") && path.exists() {
        "a library it depends on is missing; check the vendor client installation (ldd shows which)"
    } else if raw.contains("No such file") {
        "no file at that path"
    } else if raw.contains("Is a directory") || path.is_dir() {
        "that path is a directory; choose the module file inside it"
    } else {
        "the dynamic loader refused it"
    };
    format!("{hint} ({raw})")
}

/// Largest file read to check its symbols: vendor modules are a few MB.
const MAX_MODULE_BYTES: u64 = 1 << 30;

/// Check, without loading it, that a file is a shared library exporting a PKCS#11 entry
/// point. Loading runs a library's constructors; a file that is not a PKCS#11 module — a
/// wrong path, or a path a compromised page sends — must never get that far.
fn exports_entry_point(path: &Path, display: &str) -> Result<()> {
    use object::{Object, ObjectSymbol};
    let load_error = |raw: &str| Error::Load {
        path: display.to_string(),
        reason: explain_load_error(path, raw),
    };
    let len = std::fs::metadata(path)
        .map_err(|e| load_error(&e.to_string()))?
        .len();
    if len > MAX_MODULE_BYTES {
        return Err(load_error(&format!(
            "{len} bytes: far larger than any PKCS#11 module; not loaded"
        )));
    }
    // Only the headers and the dynamic symbol table are read, not the whole library: this
    // runs for every module at start-up, before dlopen maps it (lazily) anyway.
    let file = std::fs::File::open(path).map_err(|e| load_error(&e.to_string()))?;
    let cache = object::ReadCache::new(file);
    let file = object::File::parse(&cache)
        .map_err(|e| load_error(&format!("invalid ELF header: {e}; not loaded")))?;
    let exported = file.dynamic_symbols().any(|s| {
        s.is_definition()
            && s.is_global()
            && matches!(s.name(), Ok("C_GetFunctionList" | "C_GetInterface"))
    });
    if exported {
        Ok(())
    } else {
        Err(Error::NotPkcs11 {
            path: display.to_string(),
        })
    }
}

impl Module {
    /// Load a module (or return the already loaded one for the same file). Does not call
    /// `C_Initialize`; see [`Module::initialize`].
    pub fn load(path: impl AsRef<Path>) -> Result<Arc<Module>> {
        let path = path.as_ref();
        let display = path.display().to_string();
        let canonical = path.canonicalize().map_err(|e| Error::Load {
            path: display.clone(),
            reason: explain_load_error(path, &e.to_string()),
        })?;
        if !canonical.is_file() {
            return Err(Error::Load {
                path: display,
                reason: explain_load_error(&canonical, "not a regular file"),
            });
        }
        let mut reg = registry().lock();
        if let Some(m) = reg.get(&canonical) {
            return Ok(m.clone());
        }
        exports_entry_point(&canonical, &display)?;
        let m = Arc::new(Self::open(&canonical)?);
        reg.insert(canonical, m.clone());
        Ok(m)
    }

    fn open(path: &Path) -> Result<Module> {
        let display = path.display().to_string();
        // SAFETY: loading a library runs its initializers; that is inherent to using a
        // PKCS#11 module at all. RTLD_NODELETE keeps it mapped for the process lifetime.
        let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_NODELETE) }.map_err(|e| {
            Error::Load {
                path: display.clone(),
                reason: explain_load_error(path, &e.to_string()),
            }
        })?;
        // Never dlclose: leak the handle on purpose (see the module docs).
        let lib: &'static Library = Box::leak(Box::new(lib));

        // SAFETY: the symbol types are the PKCS#11 3.2 prototypes of these entry points.
        let get_interface = unsafe { lib.get::<CK_C_GetInterface>(b"C_GetInterface\0") }
            .ok()
            .and_then(|s| *s);
        // SAFETY: as above, the 2.x/3.x `C_GetFunctionList` prototype.
        let get_function_list = unsafe { lib.get::<CK_C_GetFunctionList>(b"C_GetFunctionList\0") }
            .ok()
            .and_then(|s| *s);
        if get_interface.is_none() && get_function_list.is_none() {
            return Err(Error::NotPkcs11 { path: display });
        }

        let mut table: Option<(*const CK_VERSION, EntryPoint)> = None;
        if let Some(gi) = get_interface {
            for (minor, entry) in [
                (2u8, EntryPoint::Interface32),
                (0u8, EntryPoint::Interface30),
            ] {
                let name = b"PKCS 11\0";
                let mut version = CK_VERSION { major: 3, minor };
                let mut iface: *mut CK_INTERFACE = std::ptr::null_mut();
                // SAFETY: name is NUL-terminated, version and iface are valid out/in
                // pointers on our stack; flags 0 (Kryoptic rejects any non-zero flag).
                let rv = unsafe { gi(name.as_ptr() as *mut _, &mut version, &mut iface, 0) };
                if rv == CKR_OK && !iface.is_null() {
                    // SAFETY: the module returned a non-null CK_INTERFACE pointer to its own
                    // static data.
                    let fl = unsafe { (*iface).pFunctionList };
                    if !fl.is_null() {
                        table = Some((fl as *const CK_VERSION, entry));
                        break;
                    }
                }
            }
        }
        if table.is_none() {
            if let Some(gfl) = get_function_list {
                let mut fl: *mut CK_FUNCTION_LIST = std::ptr::null_mut();
                // SAFETY: fl is a valid out pointer.
                let rv = unsafe { gfl(&mut fl) };
                if rv != CKR_OK {
                    return Err(Error::Ck(CkError::new(
                        "C_GetFunctionList",
                        rv,
                        Family::Generic,
                    )));
                }
                if fl.is_null() {
                    return Err(Error::Malformed {
                        function: "C_GetFunctionList",
                        detail: "returned CKR_OK and a null function list".into(),
                    });
                }
                table = Some((fl as *const CK_VERSION, EntryPoint::FunctionList));
            }
        }
        let Some((list, entry)) = table else {
            return Err(Error::Malformed {
                function: "C_GetInterface",
                detail: "no PKCS 11 interface of version 3.2 or 3.0, and no C_GetFunctionList"
                    .into(),
            });
        };

        // SAFETY: every function list starts with a CK_VERSION.
        let version: Version = unsafe { *list }.into();
        let size = match (version.major, version.minor) {
            (2, _) => std::mem::size_of::<CK_FUNCTION_LIST>(),
            (3, 0) | (3, 1) => std::mem::size_of::<CK_FUNCTION_LIST_3_0>(),
            (3, _) => std::mem::size_of::<CK_FUNCTION_LIST_3_2>(),
            _ => {
                return Err(Error::Malformed {
                    function: "C_GetFunctionList",
                    detail: format!("function list reports version {version}"),
                })
            }
        };
        // SAFETY: an all-zero CK_FUNCTION_LIST_3_2 is a version 0.0 and all-`None` function
        // pointers (Option<fn> uses the null niche).
        let mut fl: CK_FUNCTION_LIST_3_2 = unsafe { std::mem::zeroed() };
        // SAFETY: the module's list is at least `size` bytes for the version it reports, and
        // each list layout is a strict prefix of the 3.2 one, so copying `size` bytes fills
        // the fields the module has and leaves the rest `None`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                list as *const u8,
                &mut fl as *mut CK_FUNCTION_LIST_3_2 as *mut u8,
                size,
            )
        };
        for (present, name) in [
            (fl.C_Initialize.is_some(), "C_Initialize"),
            (fl.C_Finalize.is_some(), "C_Finalize"),
            (fl.C_GetInfo.is_some(), "C_GetInfo"),
            (fl.C_GetSlotList.is_some(), "C_GetSlotList"),
            (fl.C_OpenSession.is_some(), "C_OpenSession"),
        ] {
            if !present {
                return Err(Error::Malformed {
                    function: "C_GetFunctionList",
                    detail: format!("the function list has no {name}"),
                });
            }
        }

        let vendor = resolve_vendor(lib);
        let family = if vendor.is_luna() {
            Family::Luna
        } else {
            Family::Generic
        };
        Ok(Module {
            path: path.to_path_buf(),
            fl,
            api_version: version,
            entry,
            vendor,
            family: RwLock::new(family),
            init_lock: Mutex::new(()),
            initialized: AtomicBool::new(false),
            generation: AtomicU64::new(0),
        })
    }

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
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    pub(crate) fn ck(&self, function: &'static str, rv: CK_RV) -> Result<()> {
        if rv == CKR_OK {
            Ok(())
        } else {
            Err(Error::Ck(CkError::new(function, rv, self.family())))
        }
    }

    pub(crate) fn func<F>(&self, f: Option<F>, function: &'static str) -> Result<F> {
        f.ok_or(Error::NotSupported { function })
    }

    /// `C_Initialize` with `CKF_OS_LOCKING_OK`. Idempotent.
    pub fn initialize(&self) -> Result<()> {
        let _g = self.init_lock.lock();
        if self.is_initialized() {
            return Ok(());
        }
        self.initialize_locked()
    }

    fn initialize_locked(&self) -> Result<()> {
        let init = self.func(self.fl.C_Initialize, "C_Initialize")?;
        let mut args = CK_C_INITIALIZE_ARGS {
            CreateMutex: None,
            DestroyMutex: None,
            LockMutex: None,
            UnlockMutex: None,
            flags: CKF_OS_LOCKING_OK,
            pReserved: std::ptr::null_mut(),
        };
        // SAFETY: args is a valid CK_C_INITIALIZE_ARGS for the duration of the call.
        let rv = unsafe { init(&mut args as *mut _ as *mut _) };
        if rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED {
            return Err(Error::Ck(CkError::new("C_Initialize", rv, self.family())));
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
        let fin = self.func(self.fl.C_Finalize, "C_Finalize")?;
        // SAFETY: pReserved must be NULL.
        let rv = unsafe { fin(std::ptr::null_mut()) };
        self.initialized.store(false, Ordering::Release);
        if rv == CKR_OK || rv == CKR_CRYPTOKI_NOT_INITIALIZED {
            Ok(())
        } else {
            self.ck("C_Finalize", rv)
        }
    }

    /// Call `C_Finalize` without updating this handle's state: what happens when another
    /// component of the process finalizes the library. For fault-injection tests and drills;
    /// the pool must notice on its next call and recover.
    pub fn finalize_untracked(&self) -> Result<()> {
        let fin = self.func(self.fl.C_Finalize, "C_Finalize")?;
        // SAFETY: pReserved must be NULL.
        let rv = unsafe { fin(std::ptr::null_mut()) };
        self.ck("C_Finalize", rv)
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
        let f = self.func(self.fl.C_GetInfo, "C_GetInfo")?;
        // SAFETY: CK_INFO is plain old data; all-zero is a valid value.
        let mut info: CK_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { f(&mut info) };
        self.ck("C_GetInfo", rv)?;
        Ok(Info::from(&info))
    }

    /// Slot IDs (`token_present` = only slots with a token).
    pub fn slots(&self, token_present: bool) -> Result<Vec<SlotId>> {
        let f = self.func(self.fl.C_GetSlotList, "C_GetSlotList")?;
        let present = if token_present { CK_TRUE } else { CK_FALSE };
        loop {
            let mut count: CK_ULONG = 0;
            // SAFETY: NULL list asks for the count only; count is a valid out pointer.
            let rv = unsafe { f(present, std::ptr::null_mut(), &mut count) };
            self.ck("C_GetSlotList", rv)?;
            if count > MAX_SLOTS {
                return Err(Error::Malformed {
                    function: "C_GetSlotList",
                    detail: format!("reports {count} slots"),
                });
            }
            let mut slots = vec![0 as CK_SLOT_ID; count as usize];
            let mut n = count;
            // SAFETY: slots has room for `n` IDs.
            let rv = unsafe { f(present, slots.as_mut_ptr(), &mut n) };
            if rv == CKR_BUFFER_TOO_SMALL {
                continue; // a slot appeared between the two calls
            }
            self.ck("C_GetSlotList", rv)?;
            if n > count {
                return Err(Error::Malformed {
                    function: "C_GetSlotList",
                    detail: format!("wrote {n} slots into room for {count}"),
                });
            }
            slots.truncate(n as usize);
            return Ok(slots);
        }
    }

    pub fn slot_info(&self, slot: SlotId) -> Result<SlotInfo> {
        let f = self.func(self.fl.C_GetSlotInfo, "C_GetSlotInfo")?;
        // SAFETY: plain old data.
        let mut info: CK_SLOT_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { f(slot, &mut info) };
        self.ck("C_GetSlotInfo", rv)?;
        Ok(SlotInfo::from(&info))
    }

    pub fn token_info(&self, slot: SlotId) -> Result<TokenInfo> {
        let f = self.func(self.fl.C_GetTokenInfo, "C_GetTokenInfo")?;
        // SAFETY: plain old data.
        let mut info: CK_TOKEN_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { f(slot, &mut info) };
        self.ck("C_GetTokenInfo", rv)?;
        Ok(TokenInfo::from(&info))
    }

    /// Every mechanism the slot lists, including ones nobody has a name for.
    pub fn mechanisms(&self, slot: SlotId) -> Result<Vec<MechanismType>> {
        let f = self.func(self.fl.C_GetMechanismList, "C_GetMechanismList")?;
        loop {
            let mut count: CK_ULONG = 0;
            // SAFETY: NULL list asks for the count.
            let rv = unsafe { f(slot, std::ptr::null_mut(), &mut count) };
            self.ck("C_GetMechanismList", rv)?;
            if count > MAX_MECHANISMS {
                return Err(Error::Malformed {
                    function: "C_GetMechanismList",
                    detail: format!("reports {count} mechanisms"),
                });
            }
            let mut list = vec![0 as CK_MECHANISM_TYPE; count as usize];
            let mut n = count;
            // SAFETY: list has room for `n` entries.
            let rv = unsafe { f(slot, list.as_mut_ptr(), &mut n) };
            if rv == CKR_BUFFER_TOO_SMALL {
                continue;
            }
            self.ck("C_GetMechanismList", rv)?;
            if n > count {
                return Err(Error::Malformed {
                    function: "C_GetMechanismList",
                    detail: format!("wrote {n} mechanisms into room for {count}"),
                });
            }
            list.truncate(n as usize);
            return Ok(list);
        }
    }

    pub fn mechanism_info(&self, slot: SlotId, mechanism: MechanismType) -> Result<MechanismInfo> {
        let f = self.func(self.fl.C_GetMechanismInfo, "C_GetMechanismInfo")?;
        // SAFETY: plain old data.
        let mut info: CK_MECHANISM_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { f(slot, mechanism, &mut info) };
        self.ck("C_GetMechanismInfo", rv)?;
        Ok(MechanismInfo::from(&info))
    }

    /// Open a session (always `CKF_SERIAL_SESSION`; `rw` adds `CKF_RW_SESSION`).
    pub fn open_session(self: &Arc<Self>, slot: SlotId, rw: bool) -> Result<Session> {
        let f = self.func(self.fl.C_OpenSession, "C_OpenSession")?;
        let flags = CKF_SERIAL_SESSION | if rw { CKF_RW_SESSION } else { 0 };
        let mut handle: CK_SESSION_HANDLE = 0;
        let generation = self.generation();
        // SAFETY: no application callback (pApplication NULL, Notify None); handle is a
        // valid out pointer.
        let rv = unsafe { f(slot, flags, std::ptr::null_mut(), None, &mut handle) };
        self.ck("C_OpenSession", rv)?;
        Ok(Session::new(self.clone(), slot, handle, generation))
    }

    pub fn close_all_sessions(&self, slot: SlotId) -> Result<()> {
        let f = self.func(self.fl.C_CloseAllSessions, "C_CloseAllSessions")?;
        // SAFETY: takes a slot ID only.
        let rv = unsafe { f(slot) };
        self.ck("C_CloseAllSessions", rv)
    }

    /// `C_InitToken`: (re)initialize the token in `slot` with an SO PIN and a label
    /// (blank-padded to 32 bytes).
    pub fn init_token(&self, slot: SlotId, so_pin: &crate::Pin, label: &str) -> Result<()> {
        use secrecy::ExposeSecret;
        let f = self.func(self.fl.C_InitToken, "C_InitToken")?;
        let mut padded = [b' '; 32];
        let l = label.as_bytes();
        if l.len() > 32 {
            return Err(Error::InvalidArgument(format!(
                "token label longer than 32 bytes: {label}"
            )));
        }
        padded[..l.len()].copy_from_slice(l);
        let pin = so_pin.expose_secret().as_bytes();
        // SAFETY: the PIN slice and the 32-byte label live for the call.
        let rv = unsafe {
            f(
                slot,
                pin.as_ptr() as *mut _,
                pin.len() as CK_ULONG,
                padded.as_mut_ptr(),
            )
        };
        self.ck("C_InitToken", rv)
    }

    // ---- Luna extensions -------------------------------------------------------------

    fn vendor_fn<F: Copy>(&self, f: Option<F>, function: &'static str) -> Result<F> {
        f.ok_or(Error::NotSupported { function })
    }

    /// `CA_GetFirmwareVersion`: (major, minor, sub-minor).
    pub fn ca_firmware_version(&self, slot: SlotId) -> Result<(u64, u64, u64)> {
        let f = self.vendor_fn(self.vendor.get_firmware_version, "CA_GetFirmwareVersion")?;
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: three valid out pointers.
        let rv = unsafe { f(slot, &mut a, &mut b, &mut c) };
        self.ck("CA_GetFirmwareVersion", rv)?;
        Ok((a, b, c))
    }

    /// `CA_GetHSMStats` for the given IDs: (id, 64-bit value) pairs.
    pub fn ca_hsm_stats(&self, slot: SlotId, ids: &[u64]) -> Result<Vec<(u64, u64)>> {
        let f = self.vendor_fn(self.vendor.get_hsm_stats, "CA_GetHSMStats")?;
        let mut ids: Vec<CK_ULONG> = ids.to_vec();
        let mut out = vec![HSM_STATS_PARAMS::default(); ids.len()];
        // SAFETY: ids and out both have ids.len() elements.
        let rv = unsafe {
            f(
                slot,
                ids.len() as CK_ULONG,
                ids.as_mut_ptr(),
                out.as_mut_ptr(),
            )
        };
        self.ck("CA_GetHSMStats", rv)?;
        Ok(out.iter().map(|p| (p.ulId, p.value())).collect())
    }

    pub fn ca_hsm_storage(&self, slot: SlotId) -> Result<StorageInfo> {
        let f = self.vendor_fn(
            self.vendor.get_hsm_storage_information,
            "CA_GetHSMStorageInformation",
        )?;
        let mut s = StorageInfo::default();
        // SAFETY: four valid out pointers into `s`.
        let rv = unsafe {
            f(
                slot,
                &mut s.container_overhead,
                &mut s.total,
                &mut s.used,
                &mut s.free,
            )
        };
        self.ck("CA_GetHSMStorageInformation", rv)?;
        Ok(s)
    }

    pub fn ca_token_storage(&self, slot: SlotId) -> Result<StorageInfo> {
        let f = self.vendor_fn(
            self.vendor.get_token_storage_information,
            "CA_GetTokenStorageInformation",
        )?;
        let mut s = StorageInfo::default();
        let mut objects: CK_ULONG = 0;
        // SAFETY: five valid out pointers.
        let rv = unsafe {
            f(
                slot,
                &mut s.container_overhead,
                &mut s.total,
                &mut s.used,
                &mut s.free,
                &mut objects,
            )
        };
        self.ck("CA_GetTokenStorageInformation", rv)?;
        s.object_count = Some(objects);
        Ok(s)
    }

    fn id_value_set(
        &self,
        f: Option<CA_GetIdValueSet>,
        function: &'static str,
        slot: SlotId,
    ) -> Result<Vec<(u64, u64)>> {
        let f = self.vendor_fn(f, function)?;
        let (mut nids, mut nvals): (CK_ULONG, CK_ULONG) = (0, 0);
        // SAFETY: NULL arrays ask for the counts; the counts are valid out pointers.
        let rv = unsafe {
            f(
                slot,
                std::ptr::null_mut(),
                &mut nids,
                std::ptr::null_mut(),
                &mut nvals,
            )
        };
        self.ck(function, rv)?;
        if nids > 65_536 || nvals != nids {
            return Err(Error::Malformed {
                function,
                detail: format!("{nids} IDs and {nvals} values"),
            });
        }
        let mut ids = vec![0 as CK_ULONG; nids as usize];
        let mut vals = vec![0 as CK_ULONG; nvals as usize];
        let (mut a, mut b) = (nids, nvals);
        // SAFETY: both arrays have the room the counts say.
        let rv = unsafe { f(slot, ids.as_mut_ptr(), &mut a, vals.as_mut_ptr(), &mut b) };
        self.ck(function, rv)?;
        if a > nids || b > nvals || a != b {
            return Err(Error::Malformed {
                function,
                detail: format!("wrote {a} IDs and {b} values"),
            });
        }
        ids.truncate(a as usize);
        vals.truncate(b as usize);
        Ok(ids.into_iter().zip(vals).collect())
    }

    /// Partition policies (`CA_GetTokenPolicies`): (policy ID, value).
    pub fn ca_token_policies(&self, slot: SlotId) -> Result<Vec<(u64, u64)>> {
        self.id_value_set(self.vendor.get_token_policies, "CA_GetTokenPolicies", slot)
    }

    /// Partition capabilities (`CA_GetTokenCapabilities`).
    pub fn ca_token_capabilities(&self, slot: SlotId) -> Result<Vec<(u64, u64)>> {
        self.id_value_set(
            self.vendor.get_token_capabilities,
            "CA_GetTokenCapabilities",
            slot,
        )
    }

    /// HSM capabilities (`CA_GetHSMCapabilitySet`).
    pub fn ca_hsm_capabilities(&self, slot: SlotId) -> Result<Vec<(u64, u64)>> {
        self.id_value_set(
            self.vendor.get_hsm_capability_set,
            "CA_GetHSMCapabilitySet",
            slot,
        )
    }

    /// HSM policies (`CA_GetHSMPolicySet`).
    pub fn ca_hsm_policies(&self, slot: SlotId) -> Result<Vec<(u64, u64)>> {
        self.id_value_set(self.vendor.get_hsm_policy_set, "CA_GetHSMPolicySet", slot)
    }

    /// `CA_GetConfigurationElementDescription`: the name of a capability/policy ID.
    pub fn ca_element_description(
        &self,
        slot: SlotId,
        is_container: bool,
        is_capability: bool,
        id: u64,
    ) -> Result<ElementDescription> {
        let function = "CA_GetConfigurationElementDescription";
        let f = self.vendor_fn(self.vendor.get_configuration_element_description, function)?;
        let (mut bits, mut destructive, mut restricted) = (0, 0, 0);
        let mut size: CK_ULONG = 0;
        // SAFETY: NULL description asks for its size; all other pointers are valid.
        let rv = unsafe {
            f(
                slot,
                is_container as CK_ULONG,
                is_capability as CK_ULONG,
                id,
                &mut bits,
                &mut destructive,
                &mut restricted,
                std::ptr::null_mut(),
                &mut size,
            )
        };
        self.ck(function, rv)?;
        if size > 4096 {
            return Err(Error::Malformed {
                function,
                detail: format!("description of {size} bytes"),
            });
        }
        let mut buf = vec![0u8; size as usize];
        let mut n = size;
        // SAFETY: buf has `n` bytes.
        let rv = unsafe {
            f(
                slot,
                is_container as CK_ULONG,
                is_capability as CK_ULONG,
                id,
                &mut bits,
                &mut destructive,
                &mut restricted,
                buf.as_mut_ptr(),
                &mut n,
            )
        };
        self.ck(function, rv)?;
        buf.truncate((n as usize).min(buf.len()));
        Ok(ElementDescription {
            bit_length: bits,
            destructive: destructive != 0,
            write_restricted: restricted != 0,
            description: padded_str(&buf),
        })
    }

    pub fn ca_token_status(&self, slot: SlotId) -> Result<TokenStatus> {
        let f = self.vendor_fn(self.vendor.get_token_status, "CA_GetTokenStatus")?;
        let (mut flags, mut s, mut rw) = (0, 0, 0);
        // SAFETY: three valid out pointers.
        let rv = unsafe { f(slot, &mut flags, &mut s, &mut rw) };
        self.ck("CA_GetTokenStatus", rv)?;
        Ok(TokenStatus {
            flags,
            sessions: s,
            rw_sessions: rw,
        })
    }

    /// Send a command to `lunasim`'s control entry point and return its answer. One call:
    /// commands have effects, so they must not run twice to learn the answer's length.
    pub fn sim_control(&self, command: &str) -> Result<String> {
        let function = "LUNASIM_Control";
        let f = self.vendor_fn(self.vendor.sim_control, function)?;
        let cmd = command.as_bytes();
        let mut out = vec![0u8; 1 << 20];
        let mut len = out.len() as CK_ULONG;
        // SAFETY: cmd is a live slice; out has `len` bytes.
        let rv = unsafe {
            f(
                cmd.as_ptr(),
                cmd.len() as CK_ULONG,
                out.as_mut_ptr(),
                &mut len,
            )
        };
        self.ck(function, rv)?;
        out.truncate((len as usize).min(out.len()));
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

fn resolve_vendor(lib: &'static Library) -> VendorTable {
    macro_rules! sym {
        ($name:literal, $ty:ty) => {{
            // SAFETY: the symbol, when present, has the Luna SDK prototype `$ty`
            // (fact sheet §1.2); an absent symbol yields None.
            unsafe { lib.get::<$ty>(concat!($name, "\0").as_bytes()) }
                .ok()
                .map(|s| *s)
        }};
    }
    VendorTable {
        get_firmware_version: sym!("CA_GetFirmwareVersion", CA_GetFirmwareVersion),
        get_hsm_stats: sym!("CA_GetHSMStats", CA_GetHSMStats),
        read_utilization_metrics: sym!("CA_ReadUtilizationMetrics", CA_ReadUtilizationMetrics),
        read_and_reset_utilization_metrics: sym!(
            "CA_ReadAndResetUtilizationMetrics",
            CA_ReadUtilizationMetrics
        ),
        read_all_utilization_counters: sym!(
            "CA_ReadAllUtilizationCounters",
            CA_ReadAllUtilizationCounters
        ),
        get_hsm_storage_information: sym!(
            "CA_GetHSMStorageInformation",
            CA_GetHSMStorageInformation
        ),
        get_token_storage_information: sym!(
            "CA_GetTokenStorageInformation",
            CA_GetTokenStorageInformation
        ),
        get_token_policies: sym!("CA_GetTokenPolicies", CA_GetIdValueSet),
        get_token_capabilities: sym!("CA_GetTokenCapabilities", CA_GetIdValueSet),
        get_hsm_capability_set: sym!("CA_GetHSMCapabilitySet", CA_GetIdValueSet),
        get_hsm_policy_set: sym!("CA_GetHSMPolicySet", CA_GetIdValueSet),
        get_configuration_element_description: sym!(
            "CA_GetConfigurationElementDescription",
            CA_GetConfigurationElementDescription
        ),
        get_token_status: sym!("CA_GetTokenStatus", CA_GetTokenStatus),
        encapsulate_key: sym!("CA_EncapsulateKey", CA_EncapsulateKey),
        decapsulate_key: sym!("CA_DecapsulateKey", CA_DecapsulateKey),
        sim_control: sym!("LUNASIM_Control", LUNASIM_Control),
    }
}
