//! lunasim's function table for one partition (what it does around or instead of the
//! inner module), its interfaces ("PKCS 11" 3.2, 3.0 and 2.40; each list a prefix of the
//! next, as the standard lays them out), and the three exported entry points that hand
//! them out: `C_GetFunctionList`, `C_GetInterfaceList`, `C_GetInterface`. What they hand
//! out are [`crate::outer`]'s tables, which route HA virtual slots and per-key usage
//! limits and then call this one.

#![allow(non_snake_case)]

use cryptoki_sys::*;

use crate::entry;
use crate::{forward, intercept};

static LIST_32: CK_FUNCTION_LIST_3_2 = CK_FUNCTION_LIST_3_2 {
    version: CK_VERSION { major: 3, minor: 2 },
    C_Initialize: Some(intercept::C_Initialize),
    C_Finalize: Some(intercept::C_Finalize),
    C_GetInfo: Some(intercept::C_GetInfo),
    C_GetFunctionList: Some(C_GetFunctionList),
    C_GetSlotList: Some(forward::C_GetSlotList),
    C_GetSlotInfo: Some(forward::C_GetSlotInfo),
    C_GetTokenInfo: Some(intercept::C_GetTokenInfo),
    C_GetMechanismList: Some(intercept::C_GetMechanismList),
    C_GetMechanismInfo: Some(intercept::C_GetMechanismInfo),
    C_InitToken: Some(intercept::C_InitToken),
    C_InitPIN: Some(intercept::C_InitPIN),
    C_SetPIN: Some(intercept::C_SetPIN),
    C_OpenSession: Some(intercept::C_OpenSession),
    C_CloseSession: Some(intercept::C_CloseSession),
    C_CloseAllSessions: Some(intercept::C_CloseAllSessions),
    C_GetSessionInfo: Some(forward::C_GetSessionInfo),
    C_GetOperationState: Some(forward::C_GetOperationState),
    C_SetOperationState: Some(forward::C_SetOperationState),
    C_Login: Some(intercept::C_Login),
    C_Logout: Some(intercept::C_Logout),
    C_CreateObject: Some(intercept::C_CreateObject),
    C_CopyObject: Some(intercept::C_CopyObject),
    C_DestroyObject: Some(intercept::C_DestroyObject),
    C_GetObjectSize: Some(intercept::C_GetObjectSize),
    C_GetAttributeValue: Some(intercept::C_GetAttributeValue),
    C_SetAttributeValue: Some(intercept::C_SetAttributeValue),
    C_FindObjectsInit: Some(intercept::C_FindObjectsInit),
    C_FindObjects: Some(intercept::C_FindObjects),
    C_FindObjectsFinal: Some(intercept::C_FindObjectsFinal),
    C_EncryptInit: Some(intercept::C_EncryptInit),
    C_Encrypt: Some(intercept::C_Encrypt),
    C_EncryptUpdate: Some(forward::C_EncryptUpdate),
    C_EncryptFinal: Some(intercept::C_EncryptFinal),
    C_DecryptInit: Some(intercept::C_DecryptInit),
    C_Decrypt: Some(intercept::C_Decrypt),
    C_DecryptUpdate: Some(forward::C_DecryptUpdate),
    C_DecryptFinal: Some(intercept::C_DecryptFinal),
    C_DigestInit: Some(forward::C_DigestInit),
    C_Digest: Some(forward::C_Digest),
    C_DigestUpdate: Some(forward::C_DigestUpdate),
    C_DigestKey: Some(forward::C_DigestKey),
    C_DigestFinal: Some(forward::C_DigestFinal),
    C_SignInit: Some(intercept::C_SignInit),
    C_Sign: Some(intercept::C_Sign),
    C_SignUpdate: Some(intercept::C_SignUpdate),
    C_SignFinal: Some(intercept::C_SignFinal),
    C_SignRecoverInit: Some(forward::C_SignRecoverInit),
    C_SignRecover: Some(forward::C_SignRecover),
    C_VerifyInit: Some(intercept::C_VerifyInit),
    C_Verify: Some(intercept::C_Verify),
    C_VerifyUpdate: Some(intercept::C_VerifyUpdate),
    C_VerifyFinal: Some(intercept::C_VerifyFinal),
    C_VerifyRecoverInit: Some(forward::C_VerifyRecoverInit),
    C_VerifyRecover: Some(forward::C_VerifyRecover),
    C_DigestEncryptUpdate: Some(forward::C_DigestEncryptUpdate),
    C_DecryptDigestUpdate: Some(forward::C_DecryptDigestUpdate),
    C_SignEncryptUpdate: Some(forward::C_SignEncryptUpdate),
    C_DecryptVerifyUpdate: Some(forward::C_DecryptVerifyUpdate),
    C_GenerateKey: Some(intercept::C_GenerateKey),
    C_GenerateKeyPair: Some(intercept::C_GenerateKeyPair),
    C_WrapKey: Some(intercept::C_WrapKey),
    C_UnwrapKey: Some(intercept::C_UnwrapKey),
    C_DeriveKey: Some(intercept::C_DeriveKey),
    C_SeedRandom: Some(forward::C_SeedRandom),
    C_GenerateRandom: Some(forward::C_GenerateRandom),
    C_GetFunctionStatus: Some(forward::C_GetFunctionStatus),
    C_CancelFunction: Some(forward::C_CancelFunction),
    C_WaitForSlotEvent: Some(forward::C_WaitForSlotEvent),
    C_GetInterfaceList: Some(C_GetInterfaceList),
    C_GetInterface: Some(C_GetInterface),
    C_LoginUser: Some(forward::C_LoginUser),
    C_SessionCancel: Some(forward::C_SessionCancel),
    C_MessageEncryptInit: Some(forward::C_MessageEncryptInit),
    C_EncryptMessage: Some(forward::C_EncryptMessage),
    C_EncryptMessageBegin: Some(forward::C_EncryptMessageBegin),
    C_EncryptMessageNext: Some(forward::C_EncryptMessageNext),
    C_MessageEncryptFinal: Some(forward::C_MessageEncryptFinal),
    C_MessageDecryptInit: Some(forward::C_MessageDecryptInit),
    C_DecryptMessage: Some(forward::C_DecryptMessage),
    C_DecryptMessageBegin: Some(forward::C_DecryptMessageBegin),
    C_DecryptMessageNext: Some(forward::C_DecryptMessageNext),
    C_MessageDecryptFinal: Some(forward::C_MessageDecryptFinal),
    C_MessageSignInit: Some(forward::C_MessageSignInit),
    C_SignMessage: Some(forward::C_SignMessage),
    C_SignMessageBegin: Some(forward::C_SignMessageBegin),
    C_SignMessageNext: Some(forward::C_SignMessageNext),
    C_MessageSignFinal: Some(forward::C_MessageSignFinal),
    C_MessageVerifyInit: Some(forward::C_MessageVerifyInit),
    C_VerifyMessage: Some(forward::C_VerifyMessage),
    C_VerifyMessageBegin: Some(forward::C_VerifyMessageBegin),
    C_VerifyMessageNext: Some(forward::C_VerifyMessageNext),
    C_MessageVerifyFinal: Some(forward::C_MessageVerifyFinal),
    C_EncapsulateKey: Some(intercept::C_EncapsulateKey),
    C_DecapsulateKey: Some(intercept::C_DecapsulateKey),
    C_VerifySignatureInit: Some(forward::C_VerifySignatureInit),
    C_VerifySignature: Some(forward::C_VerifySignature),
    C_VerifySignatureUpdate: Some(forward::C_VerifySignatureUpdate),
    C_VerifySignatureFinal: Some(forward::C_VerifySignatureFinal),
    C_GetSessionValidationFlags: Some(forward::C_GetSessionValidationFlags),
    C_AsyncComplete: Some(forward::C_AsyncComplete),
    C_AsyncGetID: Some(forward::C_AsyncGetID),
    C_AsyncJoin: Some(forward::C_AsyncJoin),
    C_WrapKeyAuthenticated: Some(forward::C_WrapKeyAuthenticated),
    C_UnwrapKeyAuthenticated: Some(forward::C_UnwrapKeyAuthenticated),
};

/// The 3.2 table for one partition, which [`crate::outer`] calls.
pub fn list_32() -> &'static CK_FUNCTION_LIST_3_2 {
    &LIST_32
}

static NAME: &[u8] = b"PKCS 11\0";

/// A `CK_INTERFACE` in static storage (raw pointers to static data, never written).
pub struct Iface(CK_INTERFACE, CK_VERSION);

// SAFETY: the pointers inside refer to immutable statics (the name and the tables).
unsafe impl Sync for Iface {}

impl Iface {
    pub fn get(&self) -> CK_INTERFACE {
        self.0
    }
    pub fn version(&self) -> CK_VERSION {
        self.1
    }
    /// PKCS#11 hands interfaces out as `*mut`; callers only read them.
    pub fn ptr(&self) -> *mut CK_INTERFACE {
        &self.0 as *const CK_INTERFACE as *mut CK_INTERFACE
    }
}

static INTERFACES: [Iface; 3] = [
    Iface(
        CK_INTERFACE {
            pInterfaceName: NAME.as_ptr() as *mut _,
            pFunctionList: &crate::outer::LIST_32 as *const _ as *mut _,
            flags: 0,
        },
        CK_VERSION { major: 3, minor: 2 },
    ),
    Iface(
        CK_INTERFACE {
            pInterfaceName: NAME.as_ptr() as *mut _,
            pFunctionList: &crate::outer::LIST_30 as *const _ as *mut _,
            flags: 0,
        },
        CK_VERSION { major: 3, minor: 0 },
    ),
    Iface(
        CK_INTERFACE {
            pInterfaceName: NAME.as_ptr() as *mut _,
            pFunctionList: &crate::outer::LIST_240 as *const _ as *mut _,
            flags: 0,
        },
        CK_VERSION {
            major: 2,
            minor: 40,
        },
    ),
];

pub fn interfaces() -> &'static [Iface] {
    &INTERFACES
}

// ---- entry points ----------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn C_GetFunctionList(out: *mut *mut CK_FUNCTION_LIST) -> CK_RV {
    entry::call_uninit("C_GetFunctionList", || {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        // SAFETY: out is non-null; the table is a static with the 2.40 layout.
        unsafe { *out = &crate::outer::LIST_240 as *const _ as *mut _ };
        CKR_OK
    })
}

#[no_mangle]
pub extern "C" fn C_GetInterfaceList(list: *mut CK_INTERFACE, count: *mut CK_ULONG) -> CK_RV {
    entry::call_uninit("C_GetInterfaceList", || {
        if count.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let ifaces = interfaces();
        // SAFETY: count is non-null.
        let room = unsafe { *count };
        // SAFETY: as above.
        unsafe { *count = ifaces.len() as CK_ULONG };
        if list.is_null() {
            return CKR_OK;
        }
        if (room as usize) < ifaces.len() {
            return CKR_BUFFER_TOO_SMALL;
        }
        for (i, iface) in ifaces.iter().enumerate() {
            // SAFETY: list has room for `room >= len` interfaces.
            unsafe { *list.add(i) = iface.get() };
        }
        CKR_OK
    })
}

#[no_mangle]
pub extern "C" fn C_GetInterface(
    name: *mut CK_UTF8CHAR,
    version: *mut CK_VERSION,
    out: *mut *mut CK_INTERFACE,
    flags: CK_FLAGS,
) -> CK_RV {
    entry::call_uninit("C_GetInterface", || {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        if !name.is_null() {
            // SAFETY: a non-null name is a NUL-terminated string per contract.
            let n = unsafe { std::ffi::CStr::from_ptr(name as *const std::os::raw::c_char) };
            if n.to_bytes() != b"PKCS 11" {
                return CKR_ARGUMENTS_BAD;
            }
        }
        // SAFETY: a non-null version points to a CK_VERSION.
        let want = (!version.is_null()).then(|| unsafe { *version });
        if flags & !CKF_INTERFACE_FORK_SAFE != 0 {
            return CKR_ARGUMENTS_BAD;
        }
        for iface in interfaces() {
            let v = iface.version();
            if want
                .map(|w| w.major == v.major && w.minor == v.minor)
                .unwrap_or(true)
            {
                // SAFETY: out is non-null; the interface is a static.
                unsafe { *out = iface.ptr() };
                return CKR_OK;
            }
        }
        CKR_ARGUMENTS_BAD
    })
}
