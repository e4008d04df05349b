//! Luna's slot-level `CA_*` extensions (firmware, statistics, storage, policies and
//! capabilities, token status, HA state) and `lunasim`'s control entry point. Each is
//! `NotSupported` on a module that does not export it.

use cryptoki_sys::*;

use super::func::{vendor_fn, NamedFn};
use super::Module;
use crate::error::Result;
use crate::types::*;
use crate::vendor::*;

impl Module {
    /// `CA_GetFirmwareVersion`: (major, minor, sub-minor).
    pub fn ca_firmware_version(&self, slot: SlotId) -> Result<(u64, u64, u64)> {
        let firmware_version = vendor_fn!(self, get_firmware_version)?;
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: three valid out pointers.
        let rv = unsafe { (firmware_version.f)(slot, &mut a, &mut b, &mut c) };
        firmware_version.check(rv)?;
        Ok((a, b, c))
    }

    /// `CA_GetHSMStats` for the given IDs: (id, 64-bit value) pairs.
    pub fn ca_hsm_stats(&self, slot: SlotId, ids: &[u64]) -> Result<Vec<(u64, u64)>> {
        let hsm_stats = vendor_fn!(self, get_hsm_stats)?;
        let mut ids: Vec<CK_ULONG> = ids.to_vec();
        let mut out = vec![HSM_STATS_PARAMS::default(); ids.len()];
        // SAFETY: ids and out both have ids.len() elements.
        let rv = unsafe {
            (hsm_stats.f)(
                slot,
                ids.len() as CK_ULONG,
                ids.as_mut_ptr(),
                out.as_mut_ptr(),
            )
        };
        hsm_stats.check(rv)?;
        Ok(out.iter().map(|p| (p.ulId, p.value())).collect())
    }

    pub fn ca_hsm_storage(&self, slot: SlotId) -> Result<StorageInfo> {
        let storage = vendor_fn!(self, get_hsm_storage_information)?;
        let mut s = StorageInfo::default();
        // SAFETY: four valid out pointers into `s`.
        let rv = unsafe {
            (storage.f)(
                slot,
                &mut s.container_overhead,
                &mut s.total,
                &mut s.used,
                &mut s.free,
            )
        };
        storage.check(rv)?;
        Ok(s)
    }

    pub fn ca_token_storage(&self, slot: SlotId) -> Result<StorageInfo> {
        let storage = vendor_fn!(self, get_token_storage_information)?;
        let mut s = StorageInfo::default();
        let mut objects: CK_ULONG = 0;
        // SAFETY: five valid out pointers.
        let rv = unsafe {
            (storage.f)(
                slot,
                &mut s.container_overhead,
                &mut s.total,
                &mut s.used,
                &mut s.free,
                &mut objects,
            )
        };
        storage.check(rv)?;
        s.object_count = Some(objects);
        Ok(s)
    }

    /// The two-call read shared by the policy and capability functions.
    fn id_value_set(
        &self,
        set: NamedFn<'_, CA_GetIdValueSet>,
        slot: SlotId,
    ) -> Result<Vec<(u64, u64)>> {
        let (mut nids, mut nvals): (CK_ULONG, CK_ULONG) = (0, 0);
        // SAFETY: NULL arrays ask for the counts; the counts are valid out pointers.
        let rv = unsafe {
            (set.f)(
                slot,
                std::ptr::null_mut(),
                &mut nids,
                std::ptr::null_mut(),
                &mut nvals,
            )
        };
        set.check(rv)?;
        if nids > 65_536 || nvals != nids {
            return Err(set.malformed(format!("{nids} IDs and {nvals} values")));
        }
        let mut ids = vec![0 as CK_ULONG; nids as usize];
        let mut vals = vec![0 as CK_ULONG; nvals as usize];
        let (mut a, mut b) = (nids, nvals);
        // SAFETY: both arrays have the room the counts say.
        let rv = unsafe { (set.f)(slot, ids.as_mut_ptr(), &mut a, vals.as_mut_ptr(), &mut b) };
        set.check(rv)?;
        if a > nids || b > nvals || a != b {
            return Err(set.malformed(format!("wrote {a} IDs and {b} values")));
        }
        ids.truncate(a as usize);
        vals.truncate(b as usize);
        Ok(ids.into_iter().zip(vals).collect())
    }

    /// Partition policies (`CA_GetTokenPolicies`): (policy ID, value).
    pub fn ca_token_policies(&self, slot: SlotId) -> Result<Vec<(u64, u64)>> {
        self.id_value_set(vendor_fn!(self, get_token_policies)?, slot)
    }

    /// Partition capabilities (`CA_GetTokenCapabilities`).
    pub fn ca_token_capabilities(&self, slot: SlotId) -> Result<Vec<(u64, u64)>> {
        self.id_value_set(vendor_fn!(self, get_token_capabilities)?, slot)
    }

    /// HSM capabilities (`CA_GetHSMCapabilitySet`).
    pub fn ca_hsm_capabilities(&self, slot: SlotId) -> Result<Vec<(u64, u64)>> {
        self.id_value_set(vendor_fn!(self, get_hsm_capability_set)?, slot)
    }

    /// HSM policies (`CA_GetHSMPolicySet`).
    pub fn ca_hsm_policies(&self, slot: SlotId) -> Result<Vec<(u64, u64)>> {
        self.id_value_set(vendor_fn!(self, get_hsm_policy_set)?, slot)
    }

    /// `CA_GetConfigurationElementDescription`: the name of a capability/policy ID.
    pub fn ca_element_description(
        &self,
        slot: SlotId,
        is_container: bool,
        is_capability: bool,
        id: u64,
    ) -> Result<ElementDescription> {
        let describe = vendor_fn!(self, get_configuration_element_description)?;
        let (mut bits, mut destructive, mut restricted) = (0, 0, 0);
        let mut size: CK_ULONG = 0;
        // SAFETY: NULL description asks for its size; all other pointers are valid.
        let rv = unsafe {
            (describe.f)(
                slot,
                is_container as CK_ULONG,
                is_capability as CK_ULONG,
                id,
                &mut bits,
                &mut destructive,
                &mut restricted,
                std::ptr::null_mut(),
                &mut size,
            )
        };
        describe.check(rv)?;
        if size > 4096 {
            return Err(describe.malformed(format!("description of {size} bytes")));
        }
        let mut buf = vec![0u8; size as usize];
        let mut n = size;
        // SAFETY: buf has `n` bytes.
        let rv = unsafe {
            (describe.f)(
                slot,
                is_container as CK_ULONG,
                is_capability as CK_ULONG,
                id,
                &mut bits,
                &mut destructive,
                &mut restricted,
                buf.as_mut_ptr(),
                &mut n,
            )
        };
        describe.check(rv)?;
        buf.truncate((n as usize).min(buf.len()));
        Ok(ElementDescription {
            bit_length: bits,
            destructive: destructive != 0,
            write_restricted: restricted != 0,
            description: padded_str(&buf),
        })
    }

    pub fn ca_token_status(&self, slot: SlotId) -> Result<TokenStatus> {
        let token_status = vendor_fn!(self, get_token_status)?;
        let (mut flags, mut s, mut rw) = (0, 0, 0);
        // SAFETY: three valid out pointers.
        let rv = unsafe { (token_status.f)(slot, &mut flags, &mut s, &mut rw) };
        token_status.check(rv)?;
        Ok(TokenStatus {
            flags,
            sessions: s,
            rw_sessions: rw,
        })
    }

    /// `CA_GetHAState` (or, with `current`, Client 10.7's `CA_GetCurrentHAState`, which
    /// asks the members now instead of answering from the client's last view): the HA
    /// group behind a virtual slot, in the layout of either SDK generation.
    pub fn ca_ha_state(&self, slot: SlotId, current: bool) -> Result<HaState> {
        let ha_state = if current {
            vendor_fn!(self, get_current_ha_state)
        } else {
            vendor_fn!(self, get_ha_state)
        }?;
        // Room for the larger layout and then some, 8-byte aligned, filled so that what the
        // library did not write can be told apart.
        let words = std::mem::size_of::<CK_HA_STATUS>() / 8 + 8;
        let mut buf = vec![u64::from_ne_bytes([HA_STATE_FILL; 8]); words];
        // SAFETY: the buffer is 8-byte aligned and larger than either SDK's CK_HA_STATUS.
        let rv = unsafe { (ha_state.f)(slot, buf.as_mut_ptr() as *mut CK_HA_STATUS) };
        ha_state.check(rv)?;
        let bytes: Vec<u8> = buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
        decode_ha_state(&bytes).map_err(|e| ha_state.malformed(e))
    }

    /// Send a command to `lunasim`'s control entry point and return its answer. One call:
    /// commands have effects, so they must not run twice to learn the answer's length.
    pub fn sim_control(&self, command: &str) -> Result<String> {
        let control = vendor_fn!(self, sim_control)?;
        let cmd = command.as_bytes();
        let mut out = vec![0u8; 1 << 20];
        let mut len = out.len() as CK_ULONG;
        // SAFETY: cmd is a live slice; out has `len` bytes.
        let rv = unsafe {
            (control.f)(
                cmd.as_ptr(),
                cmd.len() as CK_ULONG,
                out.as_mut_ptr(),
                &mut len,
            )
        };
        control.check(rv)?;
        out.truncate((len as usize).min(out.len()));
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}
