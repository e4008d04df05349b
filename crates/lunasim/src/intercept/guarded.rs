//! Standard functions lunasim passes through once the session's role may call them
//! ([`crate::roles`]): importing objects and unwrapping keys create objects (token objects;
//! a session object counts as using keys), encrypting and decrypting use keys.

use cryptoki_sys::*;

use crate::entry;

guarded!(C_CreateObject, super::auth::making(t, n), h, (h: CK_SESSION_HANDLE, t: *mut CK_ATTRIBUTE, n: CK_ULONG, out: *mut CK_OBJECT_HANDLE));
guarded!(C_EncryptInit, Use, h, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, key: CK_OBJECT_HANDLE));
guarded!(C_DecryptInit, Use, h, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, key: CK_OBJECT_HANDLE));
