//! Slot and token management: the slot list, slot and token information, the mechanisms a
//! slot offers, and `C_InitToken`.

use cryptoki_sys::*;

use super::func::p11_fn;
use super::Module;
use crate::error::{Error, Result};
use crate::types::*;

/// Upper bounds on counts a module reports; anything larger is garbage, not data.
const MAX_SLOTS: u64 = 4096;
const MAX_MECHANISMS: u64 = 65_536;

impl Module {
    /// Slot IDs (`token_present` = only slots with a token).
    pub fn slots(&self, token_present: bool) -> Result<Vec<SlotId>> {
        let get_slot_list = p11_fn!(self, C_GetSlotList)?;
        let present = if token_present { CK_TRUE } else { CK_FALSE };
        loop {
            let mut count: CK_ULONG = 0;
            // SAFETY: NULL list asks for the count only; count is a valid out pointer.
            let rv = unsafe { (get_slot_list.f)(present, std::ptr::null_mut(), &mut count) };
            get_slot_list.check(rv)?;
            if count > MAX_SLOTS {
                return Err(get_slot_list.malformed(format!("reports {count} slots")));
            }
            let mut slots = vec![0 as CK_SLOT_ID; count as usize];
            let mut n = count;
            // SAFETY: slots has room for `n` IDs.
            let rv = unsafe { (get_slot_list.f)(present, slots.as_mut_ptr(), &mut n) };
            if rv == CKR_BUFFER_TOO_SMALL {
                continue; // a slot appeared between the two calls
            }
            get_slot_list.check(rv)?;
            if n > count {
                return Err(
                    get_slot_list.malformed(format!("wrote {n} slots into room for {count}"))
                );
            }
            slots.truncate(n as usize);
            return Ok(slots);
        }
    }

    pub fn slot_info(&self, slot: SlotId) -> Result<SlotInfo> {
        let get_slot_info = p11_fn!(self, C_GetSlotInfo)?;
        // SAFETY: plain old data.
        let mut info: CK_SLOT_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { (get_slot_info.f)(slot, &mut info) };
        get_slot_info.check(rv)?;
        Ok(SlotInfo::from(&info))
    }

    pub fn token_info(&self, slot: SlotId) -> Result<TokenInfo> {
        let get_token_info = p11_fn!(self, C_GetTokenInfo)?;
        // SAFETY: plain old data.
        let mut info: CK_TOKEN_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { (get_token_info.f)(slot, &mut info) };
        get_token_info.check(rv)?;
        Ok(TokenInfo::from(&info))
    }

    /// Every mechanism the slot lists, including ones nobody has a name for.
    pub fn mechanisms(&self, slot: SlotId) -> Result<Vec<MechanismType>> {
        let get_mechanism_list = p11_fn!(self, C_GetMechanismList)?;
        loop {
            let mut count: CK_ULONG = 0;
            // SAFETY: NULL list asks for the count.
            let rv = unsafe { (get_mechanism_list.f)(slot, std::ptr::null_mut(), &mut count) };
            get_mechanism_list.check(rv)?;
            if count > MAX_MECHANISMS {
                return Err(get_mechanism_list.malformed(format!("reports {count} mechanisms")));
            }
            let mut list = vec![0 as CK_MECHANISM_TYPE; count as usize];
            let mut n = count;
            // SAFETY: list has room for `n` entries.
            let rv = unsafe { (get_mechanism_list.f)(slot, list.as_mut_ptr(), &mut n) };
            if rv == CKR_BUFFER_TOO_SMALL {
                continue;
            }
            get_mechanism_list.check(rv)?;
            if n > count {
                return Err(get_mechanism_list
                    .malformed(format!("wrote {n} mechanisms into room for {count}")));
            }
            list.truncate(n as usize);
            return Ok(list);
        }
    }

    pub fn mechanism_info(&self, slot: SlotId, mechanism: MechanismType) -> Result<MechanismInfo> {
        let get_mechanism_info = p11_fn!(self, C_GetMechanismInfo)?;
        // SAFETY: plain old data.
        let mut info: CK_MECHANISM_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out pointer.
        let rv = unsafe { (get_mechanism_info.f)(slot, mechanism, &mut info) };
        get_mechanism_info.check(rv)?;
        Ok(MechanismInfo::from(&info))
    }

    /// `C_InitToken`: (re)initialize the token in `slot` with an SO PIN and a label
    /// (blank-padded to 32 bytes).
    pub fn init_token(&self, slot: SlotId, so_pin: &crate::Pin, label: &str) -> Result<()> {
        use secrecy::ExposeSecret;
        let init_token = p11_fn!(self, C_InitToken)?;
        let mut padded = [b' '; 32];
        let l = label.as_bytes();
        if l.len() > 32 {
            return Err(Error::InvalidArgument(format!(
                "token label longer than 32 bytes: {label}"
            )));
        }
        padded[..l.len()].copy_from_slice(l);
        let pin = so_pin.expose_secret().as_bytes();
        // SAFETY: the PIN slice and the 32-byte label live for the call.
        let rv = unsafe {
            (init_token.f)(
                slot,
                pin.as_ptr() as *mut _,
                pin.len() as CK_ULONG,
                padded.as_mut_ptr(),
            )
        };
        init_token.check(rv)
    }
}
