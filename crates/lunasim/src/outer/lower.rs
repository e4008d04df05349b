//! What the outer layer adds on one partition before the table below: what the layer over
//! the core adds to the slot list and to a partition's token information
//! ([`crate::layer`]), the per-key usage limits ([`crate::usage`]) —
//! limits in creation templates, the usage attributes, a use counted per sign, verify,
//! encrypt and decrypt — and the trusted-wrapping marks ([`crate::trust`]).

#![allow(non_snake_case)]

use std::os::raw::c_void;

use cryptoki_sys::*;

use super::base;
use crate::layer;
use crate::raw;
use crate::trust;
use crate::usage::{self, Use};

pub fn C_Initialize(a0: *mut c_void) -> CK_RV {
    let rv = base!(C_Initialize, a0);
    if rv == CKR_OK {
        layer::get().initialized();
    }
    rv
}

pub fn C_Finalize(a0: *mut c_void) -> CK_RV {
    if crate::sim::current().is_some() && a0.is_null() {
        layer::get().finalizing();
    }
    base!(C_Finalize, a0)
}

pub fn C_GetSlotList(a0: CK_BBOOL, a1: *mut CK_SLOT_ID, a2: *mut CK_ULONG) -> CK_RV {
    layer::get().slot_list(a0, a1, a2)
}

pub fn C_GetTokenInfo(a0: CK_SLOT_ID, a1: *mut CK_TOKEN_INFO) -> CK_RV {
    let rv = base!(C_GetTokenInfo, a0, a1);
    if rv == CKR_OK && !a1.is_null() {
        // A partition with an HSM of its own (an HA member) reports that HSM's serial.
        if let Some(own) = layer::get().own_hsm(a0) {
            // SAFETY: a1 is non-null and was just filled by the table below.
            raw::pad(unsafe { &mut (*a1).serialNumber }, &own.serial);
        }
    }
    rv
}

pub fn C_InitToken(
    a0: CK_SLOT_ID,
    a1: *mut CK_UTF8CHAR,
    a2: CK_ULONG,
    a3: *mut CK_UTF8CHAR,
) -> CK_RV {
    let rv = base!(C_InitToken, a0, a1, a2, a3);
    // A new token has a new serial, so a new usage book.
    usage::forget_slot(a0);
    rv
}

pub fn C_CloseSession(a0: CK_SESSION_HANDLE) -> CK_RV {
    let rv = base!(C_CloseSession, a0);
    usage::session_closed(a0);
    rv
}

fn destroy(h: CK_SESSION_HANDLE) -> impl FnOnce(CK_OBJECT_HANDLE) {
    move |o| {
        let _ = base!(C_DestroyObject, h, o);
    }
}

/// Make an object with `make`, honouring a usage limit and the trusted-wrapping marks in
/// its template (each taken out of it and kept by lunasim).
fn creating(
    h: CK_SESSION_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
    make: impl FnOnce(*mut CK_ATTRIBUTE, CK_ULONG) -> CK_RV,
) -> CK_RV {
    usage::creating(
        h,
        t,
        n,
        out,
        |t, n| trust::creating(h, t, n, out, make, destroy(h)),
        destroy(h),
    )
}

pub fn C_CreateObject(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_ATTRIBUTE,
    a2: CK_ULONG,
    a3: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    creating(a0, a1, a2, a3, |t, n| base!(C_CreateObject, a0, t, n, a3))
}

pub fn C_CopyObject(
    a0: CK_SESSION_HANDLE,
    a1: CK_OBJECT_HANDLE,
    a2: *mut CK_ATTRIBUTE,
    a3: CK_ULONG,
    a4: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    creating(a0, a2, a3, a4, |t, n| base!(C_CopyObject, a0, a1, t, n, a4))
}

pub fn C_DestroyObject(a0: CK_SESSION_HANDLE, a1: CK_OBJECT_HANDLE) -> CK_RV {
    trust::destroying(a0, a1, || {
        usage::destroying(a0, a1, || base!(C_DestroyObject, a0, a1))
    })
}

pub fn C_GetAttributeValue(
    a0: CK_SESSION_HANDLE,
    a1: CK_OBJECT_HANDLE,
    a2: *mut CK_ATTRIBUTE,
    a3: CK_ULONG,
) -> CK_RV {
    trust::get_attribute_value(a0, a1, a2, a3, || {
        usage::get_attribute_value(a0, a1, a2, a3, || {
            base!(C_GetAttributeValue, a0, a1, a2, a3)
        })
    })
}

pub fn C_SetAttributeValue(
    a0: CK_SESSION_HANDLE,
    a1: CK_OBJECT_HANDLE,
    a2: *mut CK_ATTRIBUTE,
    a3: CK_ULONG,
) -> CK_RV {
    trust::set_attribute_value(a0, a1, a2, a3, |t, n| {
        usage::set_attribute_value(a0, a1, t, n, |t, n| {
            base!(C_SetAttributeValue, a0, a1, t, n)
        })
    })
}

pub fn C_GenerateKey(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: *mut CK_ATTRIBUTE,
    a3: CK_ULONG,
    a4: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    creating(a0, a2, a3, a4, |t, n| {
        base!(C_GenerateKey, a0, a1, t, n, a4)
    })
}

#[allow(clippy::too_many_arguments)]
pub fn C_GenerateKeyPair(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: *mut CK_ATTRIBUTE,
    a3: CK_ULONG,
    a4: *mut CK_ATTRIBUTE,
    a5: CK_ULONG,
    a6: *mut CK_OBJECT_HANDLE,
    a7: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    // A limit on the private key (the usual place), and on the public one if asked.
    creating(a0, a4, a5, a7, |st, sn| {
        creating(a0, a2, a3, a6, |pt, pn| {
            base!(C_GenerateKeyPair, a0, a1, pt, pn, st, sn, a6, a7)
        })
    })
}

#[allow(clippy::too_many_arguments)]
pub fn C_UnwrapKey(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: CK_OBJECT_HANDLE,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
    a5: *mut CK_ATTRIBUTE,
    a6: CK_ULONG,
    a7: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    creating(a0, a5, a6, a7, |t, n| {
        base!(C_UnwrapKey, a0, a1, a2, a3, a4, t, n, a7)
    })
}

pub fn C_DeriveKey(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: CK_OBJECT_HANDLE,
    a3: *mut CK_ATTRIBUTE,
    a4: CK_ULONG,
    a5: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    creating(a0, a3, a4, a5, |t, n| {
        base!(C_DeriveKey, a0, a1, a2, t, n, a5)
    })
}

/// `*Init` with a key: refused at the key's limit, else a use is reserved.
macro_rules! counted_init {
    ($name:ident, $use:expr) => {
        pub fn $name(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE) -> CK_RV {
            usage::op_init(a0, a2, $use, || base!($name, a0, a1, a2))
        }
    };
}

counted_init!(C_SignInit, Use::Sign);
counted_init!(C_VerifyInit, Use::Verify);
counted_init!(C_EncryptInit, Use::Encrypt);
counted_init!(C_DecryptInit, Use::Decrypt);

/// A single-part call (or a `*Final`) that ends a counted operation.
macro_rules! counted_single {
    ($name:ident, $use:expr) => {
        pub fn $name(
            a0: CK_SESSION_HANDLE,
            a1: *mut CK_BYTE,
            a2: CK_ULONG,
            a3: *mut CK_BYTE,
            a4: *mut CK_ULONG,
        ) -> CK_RV {
            usage::op_step(a0, $use, a3.is_null(), || base!($name, a0, a1, a2, a3, a4))
        }
    };
}

macro_rules! counted_final {
    ($name:ident, $use:expr) => {
        pub fn $name(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG) -> CK_RV {
            usage::op_step(a0, $use, a1.is_null(), || base!($name, a0, a1, a2))
        }
    };
}

counted_single!(C_Sign, Use::Sign);
counted_final!(C_SignFinal, Use::Sign);
counted_single!(C_Encrypt, Use::Encrypt);
counted_final!(C_EncryptFinal, Use::Encrypt);
counted_single!(C_Decrypt, Use::Decrypt);
counted_final!(C_DecryptFinal, Use::Decrypt);

pub fn C_Verify(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
) -> CK_RV {
    usage::op_step(a0, Use::Verify, false, || {
        base!(C_Verify, a0, a1, a2, a3, a4)
    })
}

pub fn C_VerifyFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG) -> CK_RV {
    usage::op_step(a0, Use::Verify, false, || base!(C_VerifyFinal, a0, a1, a2))
}
