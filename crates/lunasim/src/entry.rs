//! The wrapper every exported function runs in: call counting, control-file polling,
//! injected faults, simulated network latency, busy-time accounting for `CA_GetHSMStats`,
//! and a panic barrier (nothing unwinds into C).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use cryptoki_sys::*;

use crate::knobs::knobs;
use crate::sim::{self, Sim};
use crate::stats::stats;

/// Run an exported function: counts, faults, latency, busy time, panic barrier. `f` gets
/// the initialized simulator; before `C_Initialize` the answer is
/// `CKR_CRYPTOKI_NOT_INITIALIZED`, as from any module.
pub fn call(name: &'static str, f: impl FnOnce(&Sim) -> CK_RV) -> CK_RV {
    call_cleanup(name, f, |_| {})
}

/// As [`call`]; when an injected fault answers instead, `cleanup` runs first. Operation
/// functions use it to finish the inner module's operation, as a real device error ends
/// the operation (the work was done, the reply was lost).
pub fn call_cleanup(
    name: &'static str,
    f: impl FnOnce(&Sim) -> CK_RV,
    cleanup: impl FnOnce(&Sim),
) -> CK_RV {
    catch_unwind(AssertUnwindSafe(|| {
        let st = stats();
        st.icd_commands.fetch_add(1, Ordering::Relaxed);
        *st.calls.lock().entry(name).or_insert(0) += 1;
        crate::control::poll_file();
        let (fault, delay) = {
            let mut k = knobs().lock();
            (k.take_fault(name), k.delay(name))
        };
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        if let Some(a) = fault.filter(|a| !a.after) {
            if let Some(sim) = sim::current() {
                cleanup(&sim);
            }
            return a.rv;
        }
        let Some(sim) = sim::current() else {
            return CKR_CRYPTOKI_NOT_INITIALIZED;
        };
        st.enter();
        let rv = f(&sim);
        st.leave();
        match fault {
            Some(lost) => lost.rv, // the work is done; the reply is lost
            None => rv,
        }
    }))
    .unwrap_or(CKR_GENERAL_ERROR)
}

/// As [`call`], for functions that work without `C_Initialize` (the entry points).
pub fn call_uninit(name: &'static str, f: impl FnOnce() -> CK_RV) -> CK_RV {
    catch_unwind(AssertUnwindSafe(|| {
        *stats().calls.lock().entry(name).or_insert(0) += 1;
        f()
    }))
    .unwrap_or(CKR_GENERAL_ERROR)
}
