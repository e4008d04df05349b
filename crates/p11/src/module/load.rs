//! Loading a module: check the file, dlopen it once, find and copy its function table,
//! resolve the vendor table. Each file is loaded once per process (a registry by path).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, OnceLock};

use cryptoki_sys::*;
use libloading::os::unix::{Library, RTLD_NOW};
use parking_lot::{Mutex, RwLock};

use super::{EntryPoint, Module};
use crate::error::{CkError, Error, Result};
use crate::names::Family;
use crate::types::Version;
use crate::vendor::VendorTable;

/// glibc's `RTLD_NODELETE` (not re-exported by libloading).
const RTLD_NODELETE: i32 = 0x1000;

/// Largest file read to check its symbols: vendor modules are a few MB.
const MAX_MODULE_BYTES: u64 = 1 << 30;

/// The two symbols through which a module hands out its function table.
const GET_INTERFACE: &str = "C_GetInterface";
const GET_FUNCTION_LIST: &str = "C_GetFunctionList";

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
            && matches!(s.name(), Ok(n) if n == GET_FUNCTION_LIST || n == GET_INTERFACE)
    });
    if exported {
        Ok(())
    } else {
        Err(Error::NotPkcs11 {
            path: display.to_string(),
        })
    }
}

/// Entries every table must have: without them a module cannot even be initialized.
macro_rules! require {
    ($fl:expr, $($name:ident),*) => {
        $(
            if $fl.$name.is_none() {
                return Err(Error::Malformed {
                    function: GET_FUNCTION_LIST,
                    detail: format!("the function list has no {}", stringify!($name)),
                });
            }
        )*
    };
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

        let (list, entry) = function_list(lib, display)?;
        // SAFETY: `list` is the non-null function list the module itself handed out.
        let (fl, version) = unsafe { copy_table(list) }?;
        require!(
            fl,
            C_Initialize,
            C_Finalize,
            C_GetInfo,
            C_GetSlotList,
            C_OpenSession
        );

        let vendor = VendorTable::resolve(lib);
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
}

/// The module's own function list, from the newest entry point it answers:
/// `C_GetInterface("PKCS 11", 3.2)`, then 3.0, then `C_GetFunctionList`.
fn function_list(lib: &Library, display: String) -> Result<(*const CK_VERSION, EntryPoint)> {
    // SAFETY: the symbol types are the PKCS#11 3.2 prototypes of these entry points.
    let get_interface = unsafe { lib.get::<CK_C_GetInterface>(GET_INTERFACE.as_bytes()) }
        .ok()
        .and_then(|s| *s);
    // SAFETY: as above, the 2.x/3.x `C_GetFunctionList` prototype.
    let get_function_list =
        unsafe { lib.get::<CK_C_GetFunctionList>(GET_FUNCTION_LIST.as_bytes()) }
            .ok()
            .and_then(|s| *s);
    if get_interface.is_none() && get_function_list.is_none() {
        return Err(Error::NotPkcs11 { path: display });
    }

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
                    return Ok((fl as *const CK_VERSION, entry));
                }
            }
        }
    }
    if let Some(gfl) = get_function_list {
        let mut fl: *mut CK_FUNCTION_LIST = std::ptr::null_mut();
        // SAFETY: fl is a valid out pointer.
        let rv = unsafe { gfl(&mut fl) };
        if rv != CKR_OK {
            return Err(Error::Ck(CkError::new(
                GET_FUNCTION_LIST,
                rv,
                Family::Generic,
            )));
        }
        if fl.is_null() {
            return Err(Error::Malformed {
                function: GET_FUNCTION_LIST,
                detail: "returned CKR_OK and a null function list".into(),
            });
        }
        return Ok((fl as *const CK_VERSION, EntryPoint::FunctionList));
    }
    Err(Error::Malformed {
        function: GET_INTERFACE,
        detail: "no PKCS 11 interface of version 3.2 or 3.0, and no C_GetFunctionList".into(),
    })
}

/// Copy a module's function list into the 3.2 shape: the fields its version has, and
/// `None` for the rest.
///
/// # Safety
/// `list` must point to a function list of the version it reports in its first field.
unsafe fn copy_table(list: *const CK_VERSION) -> Result<(CK_FUNCTION_LIST_3_2, Version)> {
    // SAFETY: every function list starts with a CK_VERSION.
    let version: Version = unsafe { *list }.into();
    let size = match (version.major, version.minor) {
        (2, _) => std::mem::size_of::<CK_FUNCTION_LIST>(),
        (3, 0) | (3, 1) => std::mem::size_of::<CK_FUNCTION_LIST_3_0>(),
        (3, _) => std::mem::size_of::<CK_FUNCTION_LIST_3_2>(),
        _ => {
            return Err(Error::Malformed {
                function: GET_FUNCTION_LIST,
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
    Ok((fl, version))
}
