//! Typed errors of the binding. Every failed PKCS#11 call keeps the function it came from,
//! the return value, its name (vendor names resolved for the module's family) and a class
//! that tells the session pool what recovery, if any, makes sense ([`ErrorClass`], defined
//! beside the rules that assign it in [`crate::classify`]).

use cryptoki_sys::CK_RV;

use crate::classify;
pub use crate::classify::ErrorClass;
use crate::names::{self, Family};

/// A failed PKCS#11 call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CkError {
    pub function: &'static str,
    pub rv: CK_RV,
    pub name: String,
    pub class: ErrorClass,
}

impl CkError {
    pub fn new(function: &'static str, rv: CK_RV, family: Family) -> Self {
        CkError {
            function,
            rv,
            name: names::rv_name(rv, family).into_owned(),
            class: classify::classify(rv, family),
        }
    }
}

impl std::fmt::Display for CkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} returned {} (0x{:08X})",
            self.function, self.name, self.rv
        )
    }
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// dlopen failed: missing file, not a shared object, wrong architecture, missing deps.
    #[error("cannot load {path}: {reason}")]
    Load { path: String, reason: String },
    /// The library loaded but exports no PKCS#11 entry point.
    #[error(
        "{path} is not a PKCS#11 module: it exports neither C_GetInterface nor C_GetFunctionList"
    )]
    NotPkcs11 { path: String },
    #[error("{0}")]
    Ck(CkError),
    /// The module answered with something that cannot be right (a null table, a count
    /// larger than the buffer it was given, an absurd length).
    #[error("{function} returned malformed data: {detail}")]
    Malformed {
        function: &'static str,
        detail: String,
    },
    /// The function is absent from the module's tables.
    #[error("{function} is not offered by this module")]
    NotSupported { function: &'static str },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// An object handle from another initialization of the module: the token may have
    /// given its number to another object since, so it was not sent (see
    /// `session::handles`).
    #[error("object handle {handle} was given out before the module was reinitialized (generation {given_in}, now {now})")]
    StaleHandle {
        handle: u64,
        given_in: u64,
        now: u64,
    },
}

impl Error {
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Ck(e) => e.class,
            Error::StaleHandle { .. } => ErrorClass::KeyNotFound,
            _ => ErrorClass::Operation,
        }
    }

    /// The PKCS#11 return value, when a call produced one.
    pub fn rv(&self) -> Option<CK_RV> {
        match self {
            Error::Ck(e) => Some(e.rv),
            _ => None,
        }
    }

    pub fn ck(&self) -> Option<&CkError> {
        match self {
            Error::Ck(e) => Some(e),
            _ => None,
        }
    }

    pub fn function(&self) -> Option<&'static str> {
        match self {
            Error::Ck(e) => Some(e.function),
            Error::Malformed { function, .. } | Error::NotSupported { function } => Some(function),
            _ => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
