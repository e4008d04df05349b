//! Functions lunasim passes straight to the inner module (through the common wrapper:
//! counting, faults, latency, busy time). The list is every PKCS#11 3.2 function that
//! `intercept` does not implement itself.

#![allow(non_snake_case)]

use cryptoki_sys::*;

use crate::entry;

macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            pub extern "C" fn $name($($arg: $ty),*) -> CK_RV {
                entry::call(stringify!($name), |s| match s.f().$name {
                    // SAFETY: the arguments are passed through unchanged; our caller is held
                    // to the same PKCS#11 contract for them as the inner module expects.
                    Some(f) => unsafe { f($($arg),*) },
                    None => CKR_FUNCTION_NOT_SUPPORTED,
                })
            }
        )*
    };
}

forward! {
    C_GetSlotList(a0: CK_BBOOL, a1: *mut CK_SLOT_ID, a2: *mut CK_ULONG);
    C_GetSlotInfo(a0: CK_SLOT_ID, a1: *mut CK_SLOT_INFO);
    C_GetSessionInfo(a0: CK_SESSION_HANDLE, a1: *mut CK_SESSION_INFO);
    C_GetOperationState(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG);
    C_SetOperationState(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: CK_OBJECT_HANDLE, a4: CK_OBJECT_HANDLE);
    C_EncryptUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
    C_DecryptUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
    C_DigestInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM);
    C_Digest(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
    C_DigestUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
    C_DigestKey(a0: CK_SESSION_HANDLE, a1: CK_OBJECT_HANDLE);
    C_DigestFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG);
    C_SignRecoverInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
    C_SignRecover(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
    C_VerifyRecoverInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
    C_VerifyRecover(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
    C_DigestEncryptUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
    C_DecryptDigestUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
    C_SignEncryptUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
    C_DecryptVerifyUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG, a3: *mut CK_BYTE, a4: *mut CK_ULONG);
    C_SeedRandom(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
    C_GenerateRandom(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
    C_GetFunctionStatus(a0: CK_SESSION_HANDLE);
    C_CancelFunction(a0: CK_SESSION_HANDLE);
    C_WaitForSlotEvent(a0: CK_FLAGS, a1: *mut CK_SLOT_ID, a2: *mut std::os::raw::c_void);
    C_LoginUser(a0: CK_SESSION_HANDLE, a1: CK_USER_TYPE, a2: *mut CK_UTF8CHAR, a3: CK_ULONG, a4: *mut CK_UTF8CHAR, a5: CK_ULONG);
    C_SessionCancel(a0: CK_SESSION_HANDLE, a1: CK_FLAGS);
    C_MessageEncryptInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
    C_EncryptMessage(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: CK_ULONG, a7: *mut CK_BYTE, a8: *mut CK_ULONG);
    C_EncryptMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG);
    C_EncryptMessageNext(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: *mut CK_ULONG, a7: CK_FLAGS);
    C_MessageEncryptFinal(a0: CK_SESSION_HANDLE);
    C_MessageDecryptInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
    C_DecryptMessage(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: CK_ULONG, a7: *mut CK_BYTE, a8: *mut CK_ULONG);
    C_DecryptMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG);
    C_DecryptMessageNext(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: *mut CK_ULONG, a7: CK_FLAGS);
    C_MessageDecryptFinal(a0: CK_SESSION_HANDLE);
    C_MessageSignInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
    C_SignMessage(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: *mut CK_ULONG);
    C_SignMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG);
    C_SignMessageNext(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: *mut CK_ULONG);
    C_MessageSignFinal(a0: CK_SESSION_HANDLE);
    C_MessageVerifyInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE);
    C_VerifyMessage(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: CK_ULONG);
    C_VerifyMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG);
    C_VerifyMessageNext(a0: CK_SESSION_HANDLE, a1: *mut std::os::raw::c_void, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_BYTE, a6: CK_ULONG);
    C_MessageVerifyFinal(a0: CK_SESSION_HANDLE);
    C_VerifySignatureInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: *mut CK_BYTE, a4: CK_ULONG);
    C_VerifySignature(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
    C_VerifySignatureUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG);
    C_VerifySignatureFinal(a0: CK_SESSION_HANDLE);
    C_GetSessionValidationFlags(a0: CK_SESSION_HANDLE, a1: CK_SESSION_VALIDATION_FLAGS_TYPE, a2: *mut CK_FLAGS);
    C_AsyncComplete(a0: CK_SESSION_HANDLE, a1: *mut CK_UTF8CHAR, a2: *mut CK_ASYNC_DATA);
    C_AsyncGetID(a0: CK_SESSION_HANDLE, a1: *mut CK_UTF8CHAR, a2: *mut CK_ULONG);
    C_AsyncJoin(a0: CK_SESSION_HANDLE, a1: *mut CK_UTF8CHAR, a2: CK_ULONG, a3: *mut CK_BYTE, a4: CK_ULONG);
    C_WrapKeyAuthenticated(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: CK_OBJECT_HANDLE, a4: *mut CK_BYTE, a5: CK_ULONG, a6: *mut CK_BYTE, a7: *mut CK_ULONG);
    C_UnwrapKeyAuthenticated(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE, a3: *mut CK_BYTE, a4: CK_ULONG, a5: *mut CK_ATTRIBUTE, a6: CK_ULONG, a7: *mut CK_BYTE, a8: CK_ULONG, a9: *mut CK_OBJECT_HANDLE);
}
