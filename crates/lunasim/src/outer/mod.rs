//! lunasim's outer layer: every PKCS#11 function it hands out, exported by name (as Luna's
//! `libCryptoki2_64.so` exports them, so clients that `dlsym("C_Initialize")` — pycryptoki,
//! C samples — load it) and collected into the 3.2, 3.0 and 2.40 tables that
//! `C_GetInterface` and `C_GetFunctionList` hand out. One list below says, once per
//! function, its prototype, which table it first belongs to and how it is routed:
//!
//! - `slot` / `session`: a call on an HA group's virtual slot or session goes to
//!   [`crate::ha::api`]; any other call runs as the one partition it names (counted on its
//!   HSM's statistics when that is an HA member) through the table below it. This is the
//!   one place outside the crate root that names the HA layer: the core's other modules
//!   reach it through [`crate::layer`] only;
//! - `base`: the table below is [`crate::tables`] (`intercept` and `forward`);
//! - `custom`: [`lower`] adds something first (the per-key usage limits, the HA slot list,
//!   a member's serial) and then calls the same table.
//!
//! The tables are struct literals, so a function missing from the list, or exported with
//! another prototype than the standard's, does not compile.

#![allow(non_snake_case)]

use std::os::raw::c_void;

use cryptoki_sys::*;

pub mod lower;

/// Call the function of the table below (lunasim's own, one partition at a time).
macro_rules! base {
    ($name:ident, $($a:ident),*) => {
        match crate::tables::list_32().$name {
            // SAFETY: the arguments are passed through unchanged; our caller is held to the
            // same PKCS#11 contract for them as the table below expects.
            Some(f) => unsafe { f($($a),*) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    };
}
pub(crate) use base;

macro_rules! lower_call {
    (base $name:ident ($($a:ident),*)) => { base!($name, $($a),*) };
    (custom $name:ident ($($a:ident),*)) => { lower::$name($($a),*) };
}

macro_rules! outer_fn {
    (getter $impl:ident $name:ident ($($a:ident: $t:ty),*)) => {};
    (none $impl:ident $name:ident ($($a:ident: $t:ty),*)) => {
        #[no_mangle]
        pub extern "C" fn $name($($a: $t),*) -> CK_RV {
            lower_call!($impl $name ($($a),*))
        }
    };
    (slot $impl:ident $name:ident ($a0:ident: $t0:ty $(, $a:ident: $t:ty)*)) => {
        #[no_mangle]
        pub extern "C" fn $name($a0: $t0 $(, $a: $t)*) -> CK_RV {
            if crate::ha::is_virtual_slot($a0) {
                return crate::ha::api::$name($a0 $(, $a)*);
            }
            crate::ha::as_member_of_slot($a0, || lower_call!($impl $name ($a0 $(, $a)*)))
        }
    };
    (session $impl:ident $name:ident ($a0:ident: $t0:ty $(, $a:ident: $t:ty)*)) => {
        #[no_mangle]
        pub extern "C" fn $name($a0: $t0 $(, $a: $t)*) -> CK_RV {
            if crate::ha::is_virtual_session($a0) {
                return crate::ha::api::$name($a0 $(, $a)*);
            }
            crate::ha::as_member_of_session($a0, || lower_call!($impl $name ($a0 $(, $a)*)))
        }
    };
}

macro_rules! entry {
    (getter $name:ident) => {
        Some(crate::tables::$name)
    };
    ($route:ident $name:ident) => {
        Some($name)
    };
}

macro_rules! outer {
    (
        v2 { $($r2:ident $i2:ident $n2:ident ($($a2:ident: $t2:ty),*);)* }
        v3_0 { $($r3:ident $i3:ident $n3:ident ($($a3:ident: $t3:ty),*);)* }
        v3_2 { $($r4:ident $i4:ident $n4:ident ($($a4:ident: $t4:ty),*);)* }
    ) => {
        $(outer_fn!($r2 $i2 $n2 ($($a2: $t2),*));)*
        $(outer_fn!($r3 $i3 $n3 ($($a3: $t3),*));)*
        $(outer_fn!($r4 $i4 $n4 ($($a4: $t4),*));)*

        /// The 2.40 table `C_GetFunctionList` hands out.
        pub static LIST_240: CK_FUNCTION_LIST = CK_FUNCTION_LIST {
            version: CK_VERSION { major: 2, minor: 40 },
            $($n2: entry!($r2 $n2),)*
        };

        /// The "PKCS 11" 3.0 interface's table.
        pub static LIST_30: CK_FUNCTION_LIST_3_0 = CK_FUNCTION_LIST_3_0 {
            version: CK_VERSION { major: 3, minor: 0 },
            $($n2: entry!($r2 $n2),)*
            $($n3: entry!($r3 $n3),)*
        };

        /// The "PKCS 11" 3.2 interface's table.
        pub static LIST_32: CK_FUNCTION_LIST_3_2 = CK_FUNCTION_LIST_3_2 {
            version: CK_VERSION { major: 3, minor: 2 },
            $($n2: entry!($r2 $n2),)*
            $($n3: entry!($r3 $n3),)*
            $($n4: entry!($r4 $n4),)*
        };

        /// The names exported here (the three table getters are exported by
        /// [`crate::tables`]).
        pub const EXPORTED: &[&str] = &[
            $(stringify!($n2),)*
            $(stringify!($n3),)*
            $(stringify!($n4),)*
        ];
    };
}

outer! {
    v2 {
        none custom C_Initialize(a0: *mut c_void);
        none custom C_Finalize(a0: *mut c_void);
        none base C_GetInfo(a0: *mut CK_INFO);
        getter base C_GetFunctionList(a0: *mut *mut CK_FUNCTION_LIST);
        none custom C_GetSlotList(a0: CK_BBOOL, a1: *mut CK_SLOT_ID, a2: *mut CK_ULONG);
        slot base C_GetSlotInfo(a0: CK_SLOT_ID, a1: *mut CK_SLOT_INFO);
        slot custom C_GetTokenInfo(a0: CK_SLOT_ID, a1: *mut CK_TOKEN_INFO);
        slot base C_GetMechanismList(a0: CK_SLOT_ID, a1: *mut CK_MECHANISM_TYPE, a2: *mut CK_ULONG);
        slot base C_GetMechanismInfo(a0: CK_SLOT_ID, a1: CK_MECHANISM_TYPE, a2: *mut CK_MECHANISM_INFO);
        slot custom C_InitToken(a0: CK_SLOT_ID, a1: *mut CK_UTF8CHAR, a2: CK_ULONG, a3: *mut CK_UTF8CHAR);
        session base C_InitPIN(a0: CK_SESSION_HANDLE, a1: *mut CK_UTF8CHAR, a2: CK_ULONG);
        session base C_SetPIN(a0: CK_SESSION_HANDLE, a1: *mut CK_UTF8CHAR, a2: CK_ULONG, a3: *mut CK_UTF8CHAR, a4: CK_ULONG);
        slot base C_OpenSession(a0: CK_SLOT_ID, a1: CK_FLAGS, a2: *mut c_void, a3: CK_NOTIFY, a4: *mut CK_SESSION_HANDLE);
        session custom C_CloseSession(a0: CK_SESSION_HANDLE);
        slot base C_CloseAllSessions(a0: CK_SLOT_ID);
        session base C_GetSessionInfo(a0: CK_SESSION_HANDLE, a1: *mut CK_SESSION_INFO);
        session base C_GetOperationState(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG);
        session base C_SetOperationState(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: CK_OBJECT_HANDLE, a4: CK_OBJECT_HANDLE);
        session base C_Login(a0: CK_SESSION_HANDLE, a1: CK_USER_TYPE, a2: *mut CK_UTF8CHAR, a3: CK_ULONG);
        session base C_Logout(a0: CK_SESSION_HANDLE);
        session custom C_CreateObject(a0: CK_SESSION_HANDLE, a1: *mut CK_ATTRIBUTE, a2: CK_ULONG, a3: *mut CK_OBJECT_HANDLE);
        session custom C_CopyObject(a0: CK_SESSION_HANDLE, a1: CK_OBJECT_HANDLE, a2: *mut CK_ATTRIBUTE, a3: CK_ULONG, a4: *mut CK_OBJECT_HANDLE);
        session custom C_DestroyObject(a0: CK_SESSION_HANDLE, a1: CK_OBJECT_HANDLE);
        session base C_GetObjectSize(a0: CK_SESSION_HANDLE, a1: CK_OBJECT_HANDLE, a2: *mut CK_ULONG);
        session custom C_GetAttributeValue(a0: CK_SESSION_HANDLE, a1: CK_OBJECT_HANDLE, a2: *mut CK_ATTRIBUTE, a3: CK_ULONG);
        session custom C_SetAttributeValue(a0: CK_SESSION_HANDLE, a1: CK_OBJECT_HANDLE, a2: *mut CK_ATTRIBUTE, a3: CK_ULONG);
        session base C_FindObjectsInit(a0: CK_SESSION_HANDLE, a1: *mut CK_ATTRIBUTE, a2: CK_ULONG);
        session base C_FindObjects(a0: CK_SESSION_HANDLE, a1: *mut CK_OBJECT_HANDLE, a2: CK_ULONG, a3: *mut CK_ULONG);
        session base C_FindObjectsFinal(a0: CK_SESSION_HANDLE);
        session custom C_EncryptInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session custom C_Encrypt(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session base C_EncryptUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session custom C_EncryptFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG);
        session custom C_DecryptInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session custom C_Decrypt(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session base C_DecryptUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session custom C_DecryptFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG);
        session base C_DigestInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM);
        session base C_Digest(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session base C_DigestUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
        session base C_DigestKey(a0: CK_SESSION_HANDLE, a1: CK_OBJECT_HANDLE);
        session base C_DigestFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG);
        session custom C_SignInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session custom C_Sign(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session base C_SignUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
        session custom C_SignFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG);
        session base C_SignRecoverInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session base C_SignRecover(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session custom C_VerifyInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session custom C_Verify(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG);
        session base C_VerifyUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
        session custom C_VerifyFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
        session base C_VerifyRecoverInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session base C_VerifyRecover(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session base C_DigestEncryptUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session base C_DecryptDigestUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session base C_SignEncryptUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session base C_DecryptVerifyUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
        session custom C_GenerateKey(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: *mut CK_ATTRIBUTE, a3: CK_ULONG, a4: *mut CK_OBJECT_HANDLE);
        session custom C_GenerateKeyPair(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: *mut CK_ATTRIBUTE, a3: CK_ULONG, a4: *mut CK_ATTRIBUTE, a5: CK_ULONG, a6: *mut CK_OBJECT_HANDLE, a7: *mut CK_OBJECT_HANDLE);
        session base C_WrapKey(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: CK_OBJECT_HANDLE, a4: *mut CK_BYTE, a5: *mut CK_ULONG);
        session custom C_UnwrapKey(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_ATTRIBUTE, a6: CK_ULONG, a7: *mut CK_OBJECT_HANDLE);
        session custom C_DeriveKey(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: *mut CK_ATTRIBUTE, a4: CK_ULONG, a5: *mut CK_OBJECT_HANDLE);
        session base C_SeedRandom(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
        session base C_GenerateRandom(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
        session base C_GetFunctionStatus(a0: CK_SESSION_HANDLE);
        session base C_CancelFunction(a0: CK_SESSION_HANDLE);
        none base C_WaitForSlotEvent(a0: CK_FLAGS, a1: *mut CK_SLOT_ID, a2: *mut c_void);
    }
    v3_0 {
        getter base C_GetInterfaceList(a0: *mut CK_INTERFACE, a1: *mut CK_ULONG);
        getter base C_GetInterface(a0: *mut CK_UTF8CHAR, a1: *mut CK_VERSION, a2: *mut *mut CK_INTERFACE, a3: CK_FLAGS);
        session base C_LoginUser(a0: CK_SESSION_HANDLE, a1: CK_USER_TYPE, a2: *mut CK_UTF8CHAR, a3: CK_ULONG, a4: *mut CK_UTF8CHAR, a5: CK_ULONG);
        session base C_SessionCancel(a0: CK_SESSION_HANDLE, a1: CK_FLAGS);
        session base C_MessageEncryptInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session base C_EncryptMessage(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: CK_ULONG, a7: *mut CK_BYTE, a8: *mut CK_ULONG);
        session base C_EncryptMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG);
        session base C_EncryptMessageNext(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: *mut CK_ULONG, a7: CK_FLAGS);
        session base C_MessageEncryptFinal(a0: CK_SESSION_HANDLE);
        session base C_MessageDecryptInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session base C_DecryptMessage(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: CK_ULONG, a7: *mut CK_BYTE, a8: *mut CK_ULONG);
        session base C_DecryptMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG);
        session base C_DecryptMessageNext(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: *mut CK_ULONG, a7: CK_FLAGS);
        session base C_MessageDecryptFinal(a0: CK_SESSION_HANDLE);
        session base C_MessageSignInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session base C_SignMessage(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: *mut CK_ULONG);
        session base C_SignMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG);
        session base C_SignMessageNext(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: *mut CK_ULONG);
        session base C_MessageSignFinal(a0: CK_SESSION_HANDLE);
        session base C_MessageVerifyInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
        session base C_VerifyMessage(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: CK_ULONG);
        session base C_VerifyMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG);
        session base C_VerifyMessageNext(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: CK_ULONG);
        session base C_MessageVerifyFinal(a0: CK_SESSION_HANDLE);
    }
    v3_2 {
        session base C_EncapsulateKey(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: *mut CK_ATTRIBUTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: *mut CK_ULONG, a7: *mut CK_OBJECT_HANDLE);
        session base C_DecapsulateKey(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: *mut CK_ATTRIBUTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: CK_ULONG, a7: *mut CK_OBJECT_HANDLE);
        session base C_VerifySignatureInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: *mut CK_BYTE, a4: CK_ULONG);
        session base C_VerifySignature(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
        session base C_VerifySignatureUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
        session base C_VerifySignatureFinal(a0: CK_SESSION_HANDLE);
        session base C_GetSessionValidationFlags(a0: CK_SESSION_HANDLE, a1: CK_SESSION_VALIDATION_FLAGS_TYPE, a2: *mut CK_FLAGS);
        session base C_AsyncComplete(a0: CK_SESSION_HANDLE, a1: *mut CK_UTF8CHAR, a2: *mut CK_ASYNC_DATA);
        session base C_AsyncGetID(a0: CK_SESSION_HANDLE, a1: *mut CK_UTF8CHAR, a2: *mut CK_ULONG);
        session base C_AsyncJoin(a0: CK_SESSION_HANDLE, a1: *mut CK_UTF8CHAR, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG);
        session base C_WrapKeyAuthenticated(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: CK_OBJECT_HANDLE, a4: *mut CK_BYTE, a5: CK_ULONG, a6: *mut CK_BYTE, a7: *mut CK_ULONG);
        session base C_UnwrapKeyAuthenticated(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_ATTRIBUTE, a6: CK_ULONG, a7: *mut CK_BYTE, a8: CK_ULONG, a9: *mut CK_OBJECT_HANDLE);
    }
}
