//! Luna's session-level `CA_*` extensions: the utilization counters.

use cryptoki_sys::*;

use super::Session;
use crate::error::Result;
use crate::module::func::vendor_fn;
use crate::vendor::{UtilizationCounter, CK_UTILIZATION_COUNTER};

impl Session {
    /// `CA_ReadUtilizationMetrics` (or the read-and-reset variant) followed by
    /// `CA_ReadAllUtilizationCounters`.
    pub fn ca_utilization(&self, reset: bool) -> Result<Vec<UtilizationCounter>> {
        let snapshot = if reset {
            vendor_fn!(self.module, read_and_reset_utilization_metrics)
        } else {
            vendor_fn!(self.module, read_utilization_metrics)
        }?;
        let read = vendor_fn!(self.module, read_all_utilization_counters)?;
        // SAFETY: takes the session handle only.
        let rv = unsafe { (snapshot.f)(self.handle) };
        snapshot.check(rv)?;
        let mut n: CK_ULONG = 0;
        // SAFETY: NULL buffer asks for the count.
        let rv = unsafe { (read.f)(self.handle, std::ptr::null_mut(), &mut n) };
        read.check(rv)?;
        if n > 65_536 {
            return Err(read.malformed(format!("{n} counters")));
        }
        let mut buf = vec![CK_UTILIZATION_COUNTER::default(); n as usize];
        let mut m = n;
        // SAFETY: buf has room for `m` counters.
        let rv = unsafe { (read.f)(self.handle, buf.as_mut_ptr(), &mut m) };
        read.check(rv)?;
        buf.truncate((m as usize).min(buf.len()));
        Ok(buf.iter().map(Into::into).collect())
    }
}
