//! One function of a module's tables, taken for a call together with its name, so a call
//! site names each C function once: the name the pointer is looked up by is the name its
//! errors report.
//!
//! `p11_fn!(module, C_Sign)` takes the pointer from the cached function table,
//! `vendor_fn!(module, get_hsm_stats)` from the vendor table (named by the symbol it was
//! resolved from, `CA_GetHSMStats`). Either is `Err(NotSupported)` when the module does not
//! offer the function. The `unsafe` call itself stays at the call site, with its reason:
//!
//! ```ignore
//! let sign_init = p11_fn!(self.module, C_SignInit)?;
//! // SAFETY: the mechanism lives for the call.
//! let rv = unsafe { (sign_init.f)(self.handle, &mut m, key) };
//! sign_init.check(rv)
//! ```

use cryptoki_sys::{CKR_OK, CK_RV};

use super::Module;
use crate::error::{CkError, Error, Result};

/// A function pointer from one of a module's tables and the PKCS#11 name it goes by.
#[derive(Clone, Copy)]
pub(crate) struct NamedFn<'m, F> {
    pub(crate) f: F,
    pub(crate) name: &'static str,
    module: &'m Module,
}

impl<'m, F> NamedFn<'m, F> {
    /// The entry as the table holds it; a missing one is "not offered by this module".
    pub(crate) fn resolve(module: &'m Module, f: Option<F>, name: &'static str) -> Result<Self> {
        match f {
            Some(f) => Ok(NamedFn { f, name, module }),
            None => Err(Error::NotSupported { function: name }),
        }
    }

    /// `Ok` for `CKR_OK`, else [`NamedFn::error`].
    #[inline]
    pub(crate) fn check(&self, rv: CK_RV) -> Result<()> {
        if rv == CKR_OK {
            Ok(())
        } else {
            Err(self.error(rv))
        }
    }

    /// The typed error for a return value of this function: named, and classified for the
    /// module's family as it is at the time of the error. Out of line: every call site's
    /// success path stays short.
    #[cold]
    #[inline(never)]
    pub(crate) fn error(&self, rv: CK_RV) -> Error {
        Error::Ck(CkError::new(self.name, rv, self.module.family()))
    }

    /// The function answered with something that cannot be right.
    pub(crate) fn malformed(&self, detail: String) -> Error {
        Error::Malformed {
            function: self.name,
            detail,
        }
    }
}

/// `p11_fn!(module, C_Name)`: the entry `C_Name` of the module's cached function table, as
/// a [`NamedFn`] named `"C_Name"`. `module` is anything that derefs to a [`Module`].
macro_rules! p11_fn {
    ($module:expr, $name:ident) => {{
        let module: &$crate::module::Module = &$module;
        $crate::module::func::NamedFn::resolve(module, module.functions().$name, stringify!($name))
    }};
}

/// `vendor_fn!(module, field)`: the entry `field` of the module's vendor table, as a
/// [`NamedFn`] named by the symbol it was resolved from (`vendor::symbol::field`).
macro_rules! vendor_fn {
    ($module:expr, $field:ident) => {{
        let module: &$crate::module::Module = &$module;
        $crate::module::func::NamedFn::resolve(
            module,
            module.vendor().$field,
            $crate::vendor::symbol::$field,
        )
    }};
}

pub(crate) use {p11_fn, vendor_fn};
