//! Encrypting and decrypting: passed through to the inner module, counted in their
//! utilization bins.

use cryptoki_sys::*;
use p11::vendor::bin;

use crate::entry;
use crate::stats::count_if;

counted!(C_Encrypt, bin::ENCRYPT, (h: CK_SESSION_HANDLE, d: *mut CK_BYTE, dl: CK_ULONG, out: *mut CK_BYTE, ol: *mut CK_ULONG), out);
counted!(C_EncryptFinal, bin::ENCRYPT, (h: CK_SESSION_HANDLE, out: *mut CK_BYTE, ol: *mut CK_ULONG), out);
counted!(C_Decrypt, bin::DECRYPT, (h: CK_SESSION_HANDLE, d: *mut CK_BYTE, dl: CK_ULONG, out: *mut CK_BYTE, ol: *mut CK_ULONG), out);
counted!(C_DecryptFinal, bin::DECRYPT, (h: CK_SESSION_HANDLE, out: *mut CK_BYTE, ol: *mut CK_ULONG), out);
