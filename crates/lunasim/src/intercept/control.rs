//! `LUNASIM_Control`: the in-process way into [`crate::control`]'s commands, exported
//! beside `CA_*` for tests (not a Luna function).

use cryptoki_sys::*;

use crate::control;
use crate::entry;
use crate::raw;

/// `LUNASIM_Control(command, length, answer, answer_length)`: one call, the answer
/// truncated to the buffer, its full length returned.
#[no_mangle]
pub extern "C" fn LUNASIM_Control(
    cmd: *const CK_BYTE,
    len: CK_ULONG,
    out: *mut CK_BYTE,
    out_len: *mut CK_ULONG,
) -> CK_RV {
    entry::call_uninit("LUNASIM_Control", || {
        // SAFETY: cmd has `len` readable bytes per this function's contract.
        let cmd = unsafe { raw::bytes(cmd, len) };
        let answer = match control::execute(&String::from_utf8_lossy(cmd)) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("lunasim: control: {e}");
                return CKR_ARGUMENTS_BAD;
            }
        };
        if out_len.is_null() {
            return CKR_OK;
        }
        // SAFETY: out_len is non-null; out has *out_len bytes when non-null.
        unsafe {
            let room = *out_len as usize;
            *out_len = answer.len() as CK_ULONG;
            if out.is_null() {
                return CKR_OK;
            }
            let n = room.min(answer.len());
            std::ptr::copy_nonoverlapping(answer.as_ptr(), out, n);
            if n < answer.len() {
                return CKR_BUFFER_TOO_SMALL;
            }
        }
        CKR_OK
    })
}
