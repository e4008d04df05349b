//! Operations on a virtual session: an `*Init` call picks the member (the next alive one
//! in turn, or the one already serving another operation of the session, so that
//! dual-function calls stay on one member), translates the key to that member's copy, and
//! every later call of the operation goes to the same member until the operation ends.
//! An operation already started on a member that is then taken down finishes there.
//!
//! Generated from the prototypes, one line per function.

#![allow(non_snake_case)]
// The PKCS#11 prototypes, as they are.
#![allow(clippy::too_many_arguments)]

use std::os::raw::c_void;

use cryptoki_sys::*;

use super::{op_init, op_step, session_call};
use crate::ha::session::OpKind;
use crate::outer;

pub fn C_EncryptInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE) -> CK_RV {
    session_call("C_EncryptInit", a0, |vs| {
        op_init(vs, OpKind::Encrypt, "C_EncryptInit", Some(a2), |ih, k| {
            outer::C_EncryptInit(ih, a1, k)
        })
    })
}

pub fn C_Encrypt(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_Encrypt", a0, |vs| {
        op_step(
            vs,
            OpKind::Encrypt,
            "C_Encrypt",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a3.is_null())),
            |ih| outer::C_Encrypt(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_EncryptUpdate(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_EncryptUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::Encrypt,
            "C_EncryptUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_EncryptUpdate(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_EncryptFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG) -> CK_RV {
    session_call("C_EncryptFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::Encrypt,
            "C_EncryptFinal",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a1.is_null())),
            |ih| outer::C_EncryptFinal(ih, a1, a2),
        )
    })
}

pub fn C_DecryptInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE) -> CK_RV {
    session_call("C_DecryptInit", a0, |vs| {
        op_init(vs, OpKind::Decrypt, "C_DecryptInit", Some(a2), |ih, k| {
            outer::C_DecryptInit(ih, a1, k)
        })
    })
}

pub fn C_Decrypt(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_Decrypt", a0, |vs| {
        op_step(
            vs,
            OpKind::Decrypt,
            "C_Decrypt",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a3.is_null())),
            |ih| outer::C_Decrypt(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_DecryptUpdate(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_DecryptUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::Decrypt,
            "C_DecryptUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_DecryptUpdate(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_DecryptFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG) -> CK_RV {
    session_call("C_DecryptFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::Decrypt,
            "C_DecryptFinal",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a1.is_null())),
            |ih| outer::C_DecryptFinal(ih, a1, a2),
        )
    })
}

pub fn C_DigestInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM) -> CK_RV {
    session_call("C_DigestInit", a0, |vs| {
        op_init(vs, OpKind::Digest, "C_DigestInit", None, |ih, _| {
            outer::C_DigestInit(ih, a1)
        })
    })
}

pub fn C_Digest(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_Digest", a0, |vs| {
        op_step(
            vs,
            OpKind::Digest,
            "C_Digest",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a3.is_null())),
            |ih| outer::C_Digest(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_DigestUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG) -> CK_RV {
    session_call("C_DigestUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::Digest,
            "C_DigestUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_DigestUpdate(ih, a1, a2),
        )
    })
}

pub fn C_DigestKey(a0: CK_SESSION_HANDLE, a1: CK_OBJECT_HANDLE) -> CK_RV {
    session_call("C_DigestKey", a0, |vs| {
        op_step(
            vs,
            OpKind::Digest,
            "C_DigestKey",
            |rv| rv != CKR_OK,
            |ih| {
                vs.with_object(a1, member_of(vs, OpKind::Digest), |k| {
                    outer::C_DigestKey(ih, k)
                })
            },
        )
    })
}

pub fn C_DigestFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG) -> CK_RV {
    session_call("C_DigestFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::Digest,
            "C_DigestFinal",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a1.is_null())),
            |ih| outer::C_DigestFinal(ih, a1, a2),
        )
    })
}

pub fn C_SignInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE) -> CK_RV {
    session_call("C_SignInit", a0, |vs| {
        op_init(vs, OpKind::Sign, "C_SignInit", Some(a2), |ih, k| {
            outer::C_SignInit(ih, a1, k)
        })
    })
}

pub fn C_Sign(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_Sign", a0, |vs| {
        op_step(
            vs,
            OpKind::Sign,
            "C_Sign",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a3.is_null())),
            |ih| outer::C_Sign(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_SignUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG) -> CK_RV {
    session_call("C_SignUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::Sign,
            "C_SignUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_SignUpdate(ih, a1, a2),
        )
    })
}

pub fn C_SignFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: *mut CK_ULONG) -> CK_RV {
    session_call("C_SignFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::Sign,
            "C_SignFinal",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a1.is_null())),
            |ih| outer::C_SignFinal(ih, a1, a2),
        )
    })
}

pub fn C_SignRecoverInit(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_SignRecoverInit", a0, |vs| {
        op_init(
            vs,
            OpKind::SignRecover,
            "C_SignRecoverInit",
            Some(a2),
            |ih, k| outer::C_SignRecoverInit(ih, a1, k),
        )
    })
}

pub fn C_SignRecover(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_SignRecover", a0, |vs| {
        op_step(
            vs,
            OpKind::SignRecover,
            "C_SignRecover",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a3.is_null())),
            |ih| outer::C_SignRecover(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_VerifyInit(a0: CK_SESSION_HANDLE, a1: *mut CK_MECHANISM, a2: CK_OBJECT_HANDLE) -> CK_RV {
    session_call("C_VerifyInit", a0, |vs| {
        op_init(vs, OpKind::Verify, "C_VerifyInit", Some(a2), |ih, k| {
            outer::C_VerifyInit(ih, a1, k)
        })
    })
}

pub fn C_Verify(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
) -> CK_RV {
    session_call("C_Verify", a0, |vs| {
        op_step(
            vs,
            OpKind::Verify,
            "C_Verify",
            |_| true,
            |ih| outer::C_Verify(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_VerifyUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG) -> CK_RV {
    session_call("C_VerifyUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::Verify,
            "C_VerifyUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_VerifyUpdate(ih, a1, a2),
        )
    })
}

pub fn C_VerifyFinal(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG) -> CK_RV {
    session_call("C_VerifyFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::Verify,
            "C_VerifyFinal",
            |_| true,
            |ih| outer::C_VerifyFinal(ih, a1, a2),
        )
    })
}

pub fn C_VerifyRecoverInit(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_VerifyRecoverInit", a0, |vs| {
        op_init(
            vs,
            OpKind::VerifyRecover,
            "C_VerifyRecoverInit",
            Some(a2),
            |ih, k| outer::C_VerifyRecoverInit(ih, a1, k),
        )
    })
}

pub fn C_VerifyRecover(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_VerifyRecover", a0, |vs| {
        op_step(
            vs,
            OpKind::VerifyRecover,
            "C_VerifyRecover",
            |rv| !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && a3.is_null())),
            |ih| outer::C_VerifyRecover(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_DigestEncryptUpdate(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_DigestEncryptUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::Digest,
            "C_DigestEncryptUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_DigestEncryptUpdate(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_DecryptDigestUpdate(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_DecryptDigestUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::Decrypt,
            "C_DecryptDigestUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_DecryptDigestUpdate(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_SignEncryptUpdate(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_SignEncryptUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::Sign,
            "C_SignEncryptUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_SignEncryptUpdate(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_DecryptVerifyUpdate(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_BYTE,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_DecryptVerifyUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::Decrypt,
            "C_DecryptVerifyUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_DecryptVerifyUpdate(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_MessageEncryptInit(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_MessageEncryptInit", a0, |vs| {
        op_init(
            vs,
            OpKind::MessageEncrypt,
            "C_MessageEncryptInit",
            Some(a2),
            |ih, k| outer::C_MessageEncryptInit(ih, a1, k),
        )
    })
}

pub fn C_EncryptMessage(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
    a5: *mut CK_BYTE,
    a6: CK_ULONG,
    a7: *mut CK_BYTE,
    a8: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_EncryptMessage", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageEncrypt,
            "C_EncryptMessage",
            |_| false,
            |ih| outer::C_EncryptMessage(ih, a1, a2, a3, a4, a5, a6, a7, a8),
        )
    })
}

pub fn C_EncryptMessageBegin(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
) -> CK_RV {
    session_call("C_EncryptMessageBegin", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageEncrypt,
            "C_EncryptMessageBegin",
            |_| false,
            |ih| outer::C_EncryptMessageBegin(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_EncryptMessageNext(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
    a5: *mut CK_BYTE,
    a6: *mut CK_ULONG,
    a7: CK_FLAGS,
) -> CK_RV {
    session_call("C_EncryptMessageNext", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageEncrypt,
            "C_EncryptMessageNext",
            |_| false,
            |ih| outer::C_EncryptMessageNext(ih, a1, a2, a3, a4, a5, a6, a7),
        )
    })
}

pub fn C_MessageEncryptFinal(a0: CK_SESSION_HANDLE) -> CK_RV {
    session_call("C_MessageEncryptFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageEncrypt,
            "C_MessageEncryptFinal",
            |_| true,
            |ih| outer::C_MessageEncryptFinal(ih),
        )
    })
}

pub fn C_MessageDecryptInit(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_MessageDecryptInit", a0, |vs| {
        op_init(
            vs,
            OpKind::MessageDecrypt,
            "C_MessageDecryptInit",
            Some(a2),
            |ih, k| outer::C_MessageDecryptInit(ih, a1, k),
        )
    })
}

pub fn C_DecryptMessage(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
    a5: *mut CK_BYTE,
    a6: CK_ULONG,
    a7: *mut CK_BYTE,
    a8: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_DecryptMessage", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageDecrypt,
            "C_DecryptMessage",
            |_| false,
            |ih| outer::C_DecryptMessage(ih, a1, a2, a3, a4, a5, a6, a7, a8),
        )
    })
}

pub fn C_DecryptMessageBegin(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
) -> CK_RV {
    session_call("C_DecryptMessageBegin", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageDecrypt,
            "C_DecryptMessageBegin",
            |_| false,
            |ih| outer::C_DecryptMessageBegin(ih, a1, a2, a3, a4),
        )
    })
}

pub fn C_DecryptMessageNext(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
    a5: *mut CK_BYTE,
    a6: *mut CK_ULONG,
    a7: CK_FLAGS,
) -> CK_RV {
    session_call("C_DecryptMessageNext", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageDecrypt,
            "C_DecryptMessageNext",
            |_| false,
            |ih| outer::C_DecryptMessageNext(ih, a1, a2, a3, a4, a5, a6, a7),
        )
    })
}

pub fn C_MessageDecryptFinal(a0: CK_SESSION_HANDLE) -> CK_RV {
    session_call("C_MessageDecryptFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageDecrypt,
            "C_MessageDecryptFinal",
            |_| true,
            |ih| outer::C_MessageDecryptFinal(ih),
        )
    })
}

pub fn C_MessageSignInit(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_MessageSignInit", a0, |vs| {
        op_init(
            vs,
            OpKind::MessageSign,
            "C_MessageSignInit",
            Some(a2),
            |ih, k| outer::C_MessageSignInit(ih, a1, k),
        )
    })
}

pub fn C_SignMessage(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
    a5: *mut CK_BYTE,
    a6: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_SignMessage", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageSign,
            "C_SignMessage",
            |_| false,
            |ih| outer::C_SignMessage(ih, a1, a2, a3, a4, a5, a6),
        )
    })
}

pub fn C_SignMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG) -> CK_RV {
    session_call("C_SignMessageBegin", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageSign,
            "C_SignMessageBegin",
            |_| false,
            |ih| outer::C_SignMessageBegin(ih, a1, a2),
        )
    })
}

pub fn C_SignMessageNext(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
    a5: *mut CK_BYTE,
    a6: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_SignMessageNext", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageSign,
            "C_SignMessageNext",
            |_| false,
            |ih| outer::C_SignMessageNext(ih, a1, a2, a3, a4, a5, a6),
        )
    })
}

pub fn C_MessageSignFinal(a0: CK_SESSION_HANDLE) -> CK_RV {
    session_call("C_MessageSignFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageSign,
            "C_MessageSignFinal",
            |_| true,
            |ih| outer::C_MessageSignFinal(ih),
        )
    })
}

pub fn C_MessageVerifyInit(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_MessageVerifyInit", a0, |vs| {
        op_init(
            vs,
            OpKind::MessageVerify,
            "C_MessageVerifyInit",
            Some(a2),
            |ih, k| outer::C_MessageVerifyInit(ih, a1, k),
        )
    })
}

pub fn C_VerifyMessage(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
    a5: *mut CK_BYTE,
    a6: CK_ULONG,
) -> CK_RV {
    session_call("C_VerifyMessage", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageVerify,
            "C_VerifyMessage",
            |_| false,
            |ih| outer::C_VerifyMessage(ih, a1, a2, a3, a4, a5, a6),
        )
    })
}

pub fn C_VerifyMessageBegin(a0: CK_SESSION_HANDLE, a1: *mut c_void, a2: CK_ULONG) -> CK_RV {
    session_call("C_VerifyMessageBegin", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageVerify,
            "C_VerifyMessageBegin",
            |_| false,
            |ih| outer::C_VerifyMessageBegin(ih, a1, a2),
        )
    })
}

pub fn C_VerifyMessageNext(
    a0: CK_SESSION_HANDLE,
    a1: *mut c_void,
    a2: CK_ULONG,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
    a5: *mut CK_BYTE,
    a6: CK_ULONG,
) -> CK_RV {
    session_call("C_VerifyMessageNext", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageVerify,
            "C_VerifyMessageNext",
            |_| false,
            |ih| outer::C_VerifyMessageNext(ih, a1, a2, a3, a4, a5, a6),
        )
    })
}

pub fn C_MessageVerifyFinal(a0: CK_SESSION_HANDLE) -> CK_RV {
    session_call("C_MessageVerifyFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::MessageVerify,
            "C_MessageVerifyFinal",
            |_| true,
            |ih| outer::C_MessageVerifyFinal(ih),
        )
    })
}

pub fn C_VerifySignatureInit(
    a0: CK_SESSION_HANDLE,
    a1: *mut CK_MECHANISM,
    a2: CK_OBJECT_HANDLE,
    a3: *mut CK_BYTE,
    a4: CK_ULONG,
) -> CK_RV {
    session_call("C_VerifySignatureInit", a0, |vs| {
        op_init(
            vs,
            OpKind::VerifySignature,
            "C_VerifySignatureInit",
            Some(a2),
            |ih, k| outer::C_VerifySignatureInit(ih, a1, k, a3, a4),
        )
    })
}

pub fn C_VerifySignature(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG) -> CK_RV {
    session_call("C_VerifySignature", a0, |vs| {
        op_step(
            vs,
            OpKind::VerifySignature,
            "C_VerifySignature",
            |_| true,
            |ih| outer::C_VerifySignature(ih, a1, a2),
        )
    })
}

pub fn C_VerifySignatureUpdate(a0: CK_SESSION_HANDLE, a1: *mut CK_BYTE, a2: CK_ULONG) -> CK_RV {
    session_call("C_VerifySignatureUpdate", a0, |vs| {
        op_step(
            vs,
            OpKind::VerifySignature,
            "C_VerifySignatureUpdate",
            |rv| rv != CKR_OK,
            |ih| outer::C_VerifySignatureUpdate(ih, a1, a2),
        )
    })
}

pub fn C_VerifySignatureFinal(a0: CK_SESSION_HANDLE) -> CK_RV {
    session_call("C_VerifySignatureFinal", a0, |vs| {
        op_step(
            vs,
            OpKind::VerifySignature,
            "C_VerifySignatureFinal",
            |_| true,
            |ih| outer::C_VerifySignatureFinal(ih),
        )
    })
}

/// The member serving an operation (for calls that also name a key).
fn member_of(vs: &crate::ha::session::VSession, kind: OpKind) -> usize {
    vs.state.lock().ops.get(&kind).copied().unwrap_or(0)
}
