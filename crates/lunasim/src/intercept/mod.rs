//! The PKCS#11 functions lunasim implements itself, around or instead of the inner module,
//! by PKCS#11 chapter: `general` (initialization, identity — it reports itself as a Luna K7
//! partition —, the mechanism list: adds HSS, hides SLH-DSA as Luna 7.9 does), `session`,
//! `objects` (merged with the HSS store), `sign` (signing and verification with HSS keys,
//! the PQC service queue), `crypt` and `keys` (utilization counting; Luna's template
//! rules: HSS attributes only in the private template, the ML-DSA default parameter-set
//! trap). Also `control`: lunasim's own `LUNASIM_Control` for tests.
//!
//! `auth` (logins and PINs with Luna's extra roles and policy 21) and `guarded` (the
//! standard functions that only check the session's role before passing through).
//!
//! Every function here is reachable as `intercept::C_*` (the function tables take them
//! from here); the standard functions lunasim passes straight through are in
//! [`crate::forward`], the table getters in [`crate::tables`].

#![allow(non_snake_case)]

/// A function passed through to the inner module and counted in its utilization bin
/// when it really ran (`$out` non-null: not a length query).
macro_rules! counted {
    ($name:ident, $bin:expr, ($($arg:ident: $ty:ty),*), $out:ident) => {
        pub extern "C" fn $name($($arg: $ty),*) -> CK_RV {
            entry::call(stringify!($name), |s| match s.f().$name {
                // SAFETY: pass-through of the caller's arguments.
                Some(f) => count_if(unsafe { f($($arg),*) }, !$out.is_null(), $bin),
                None => CKR_FUNCTION_NOT_SUPPORTED,
            })
        }
    };
}

/// A function the session's role must be allowed to call ([`crate::roles`]): refused with
/// Luna's answer when it is not, else passed through to the inner module (and counted in
/// `$bin` when it really ran: `$out` non-null).
macro_rules! guarded {
    ($name:ident, $action:expr, $session:ident, ($($arg:ident: $ty:ty),*) $(, $bin:expr, $out:ident)?) => {
        pub extern "C" fn $name($($arg: $ty),*) -> CK_RV {
            entry::call(stringify!($name), |s| {
                #[allow(unused_imports)]
                use crate::roles::Action::*;
                if let Some(rv) = crate::intercept::auth::refusal(s, $session, $action) {
                    return rv;
                }
                match s.f().$name {
                    Some(f) => {
                        // SAFETY: pass-through of the caller's arguments.
                        let rv = unsafe { f($($arg),*) };
                        $(let rv = crate::stats::count_if(rv, !$out.is_null(), $bin);)?
                        rv
                    }
                    None => CKR_FUNCTION_NOT_SUPPORTED,
                }
            })
        }
    };
}

pub(crate) mod auth;
mod control;
mod crypt;
mod general;
mod guarded;
mod keys;
mod objects;
mod session;
mod sign;

pub use auth::*;
pub use control::*;
pub use crypt::*;
pub use general::*;
pub use guarded::*;
pub use keys::*;
pub use objects::*;
pub use session::*;
pub use sign::*;
