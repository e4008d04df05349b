//! `p11` — the console's PKCS#11 binding.
//!
//! Loads any PKCS#11 module (Luna's libCryptoki2, SoftHSM2, Kryoptic, `lunasim`) with
//! `RTLD_NOW | RTLD_NODELETE`, probes `C_GetInterface("PKCS 11", 3.2)`, then 3.0, then
//! `C_GetFunctionList`, caches the function table once, resolves Luna's `CA_*` symbols into
//! an optional vendor table, and wraps the calls the console makes in safe, typed
//! functions. Every error carries the function, the return value, its name and a recovery
//! class.
//!
//! This crate and `lunasim` are the only places with `unsafe`; each block says why it holds.

pub mod attr;
pub mod classify;
pub mod error;
#[cfg(feature = "heapwatch")]
pub mod heapwatch;
pub mod mechanism;
pub mod module;
pub mod names;
pub mod session;
pub mod types;
pub mod vendor;

pub use attr::{attr_kind, AttrKind, AttrValue, Template};
pub use error::{CkError, Error, ErrorClass, Result};
pub use mechanism::{Hedge, Mechanism};
pub use module::{EntryPoint, Module};
pub use names::Family;
pub use session::{baseline, handle_generation, token_handle, ContextAuth, Session};
pub use types::*;

/// Raw PKCS#11 types and constants (PKCS#11 3.2 headers).
pub use cryptoki_sys as sys;

/// A PIN: zeroized when dropped, never printed by `Debug`.
pub type Pin = secrecy::SecretString;

/// Make a [`Pin`] from a string.
pub fn pin(s: impl Into<String>) -> Pin {
    secrecy::SecretString::from(s.into())
}
