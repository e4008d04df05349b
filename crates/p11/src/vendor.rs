//! Luna `CA_*` extensions: C layouts, function types, and the optional table resolved by
//! name once at load time (the typed calls are `Module::ca_*` and `Session::ca_*`). A
//! missing symbol means "not offered by this module"; it is never an error at load time.
//!
//! Layouts follow the Luna SDK headers on Linux: natural alignment (the headers pack to 1
//! only on Windows) and 8-byte `CK_ULONG`. The `lunasim` crate implements these very types.

#![allow(non_camel_case_types, non_snake_case)]

use cryptoki_sys::*;
use libloading::os::unix::Library;

/// One `CA_GetHSMStats` entry; the 64-bit value is split into two 32-bit halves.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HSM_STATS_PARAMS {
    pub ulId: CK_ULONG,
    pub ulHighValue: CK_ULONG,
    pub ulLowValue: CK_ULONG,
}

impl HSM_STATS_PARAMS {
    pub fn value(&self) -> u64 {
        ((self.ulHighValue & 0xFFFF_FFFF) << 32) | (self.ulLowValue & 0xFFFF_FFFF)
    }
    pub fn new(id: u64, value: u64) -> Self {
        HSM_STATS_PARAMS {
            ulId: id,
            ulHighValue: value >> 32,
            ulLowValue: value & 0xFFFF_FFFF,
        }
    }
}

pub const CK_UTILIZATION_LABEL_LEN: usize = 66;

/// One utilization counter (`CK_UTILIZATION_COUNTER`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CK_UTILIZATION_COUNTER {
    pub ullSerialNumber: u64,
    pub label: [u8; CK_UTILIZATION_LABEL_LEN],
    pub ulBindId: CK_ULONG,
    pub ulCounterId: CK_ULONG,
    pub ullCount: u64,
}

impl Default for CK_UTILIZATION_COUNTER {
    fn default() -> Self {
        CK_UTILIZATION_COUNTER {
            ullSerialNumber: 0,
            label: [0; CK_UTILIZATION_LABEL_LEN],
            ulBindId: 0,
            ulCounterId: 0,
            ullCount: 0,
        }
    }
}

// Linux x86_64 sizes from the fact sheet (§1.3): label ends at 74, padded to 80.
const _: () = assert!(std::mem::size_of::<HSM_STATS_PARAMS>() == 24);
const _: () = assert!(std::mem::size_of::<CK_UTILIZATION_COUNTER>() == 104);

/// Serial numbers in the HA state: `CK_TOKEN_SERIAL_NUMBER_SIZE + 4` characters.
pub const CK_HA_SERIAL_LEN: usize = 20;
/// Members an HA state can list.
pub const CK_HA_MAX_MEMBERS: usize = 32;

/// One member in `CA_GetHAState` (Luna SDK 2018 and later): its serial as characters.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CK_HA_MEMBER {
    pub memberSerial: [u8; CK_HA_SERIAL_LEN],
    pub memberStatus: CK_RV,
}

/// `CK_HA_STATUS` (Luna SDK 2018 and later).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CK_HA_STATUS {
    pub groupSerial: [u8; CK_HA_SERIAL_LEN],
    pub memberList: [CK_HA_MEMBER; CK_HA_MAX_MEMBERS],
    pub listSize: CK_ULONG,
}

impl Default for CK_HA_STATUS {
    fn default() -> Self {
        CK_HA_STATUS {
            groupSerial: [0; CK_HA_SERIAL_LEN],
            memberList: [CK_HA_MEMBER::default(); CK_HA_MAX_MEMBERS],
            listSize: 0,
        }
    }
}

/// One member in the older SDKs' `CA_GetHAState`: the serial as a number.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CK_HA_MEMBER_V1 {
    pub memberSerial: CK_ULONG,
    pub memberStatus: CK_RV,
}

/// The older SDKs' `CK_HA_STATUS` (`listSize` is a `CK_USHORT`, which Luna defines as
/// `unsigned long`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CK_HA_STATUS_V1 {
    pub groupSerial: CK_ULONG,
    pub memberList: [CK_HA_MEMBER_V1; CK_HA_MAX_MEMBERS],
    pub listSize: CK_ULONG,
}

// Fact sheet §1.3, Linux x86_64.
const _: () = assert!(std::mem::size_of::<CK_HA_MEMBER>() == 32);
const _: () = assert!(std::mem::size_of::<CK_HA_STATUS>() == 1056);
const _: () = assert!(std::mem::size_of::<CK_HA_MEMBER_V1>() == 16);
const _: () = assert!(std::mem::size_of::<CK_HA_STATUS_V1>() == 528);

/// `CA_GetHSMStats` IDs.
pub mod stats_id {
    pub const BOOT_TIME: u64 = 1;
    pub const CPU_UP_TIME: u64 = 2;
    pub const CPU_IDLE_TIME: u64 = 3;
    pub const ICD_COMMANDS_COUNT: u64 = 4;
}

/// Utilization bins.
pub mod bin {
    pub const SIGN: u64 = 0;
    pub const VERIFY: u64 = 1;
    pub const ENCRYPT: u64 = 2;
    pub const DECRYPT: u64 = 3;
    pub const KEY_GENERATION: u64 = 4;
    pub const KEY_DERIVATION: u64 = 5;
    pub const COUNT: u64 = 6;
    pub fn name(b: u64) -> &'static str {
        match b {
            SIGN => "SIGN",
            VERIFY => "VERIFY",
            ENCRYPT => "ENCRYPT",
            DECRYPT => "DECRYPT",
            KEY_GENERATION => "KEY_GENERATION",
            KEY_DERIVATION => "KEY_DERIVATION",
            _ => "UNKNOWN",
        }
    }
}

pub type CA_GetFirmwareVersion =
    unsafe extern "C" fn(CK_SLOT_ID, *mut CK_ULONG, *mut CK_ULONG, *mut CK_ULONG) -> CK_RV;
pub type CA_GetHSMStats =
    unsafe extern "C" fn(CK_SLOT_ID, CK_ULONG, *mut CK_ULONG, *mut HSM_STATS_PARAMS) -> CK_RV;
pub type CA_ReadUtilizationMetrics = unsafe extern "C" fn(CK_SESSION_HANDLE) -> CK_RV;
pub type CA_ReadAllUtilizationCounters =
    unsafe extern "C" fn(CK_SESSION_HANDLE, *mut CK_UTILIZATION_COUNTER, *mut CK_ULONG) -> CK_RV;
pub type CA_GetHSMStorageInformation = unsafe extern "C" fn(
    CK_SLOT_ID,
    *mut CK_ULONG,
    *mut CK_ULONG,
    *mut CK_ULONG,
    *mut CK_ULONG,
) -> CK_RV;
pub type CA_GetTokenStorageInformation = unsafe extern "C" fn(
    CK_SLOT_ID,
    *mut CK_ULONG,
    *mut CK_ULONG,
    *mut CK_ULONG,
    *mut CK_ULONG,
    *mut CK_ULONG,
) -> CK_RV;
/// The shape shared by `CA_GetTokenPolicies`, `CA_GetTokenCapabilities`,
/// `CA_GetHSMCapabilitySet` and `CA_GetHSMPolicySet` (two-call: NULL arrays give counts).
pub type CA_GetIdValueSet = unsafe extern "C" fn(
    CK_SLOT_ID,
    *mut CK_ULONG,
    *mut CK_ULONG,
    *mut CK_ULONG,
    *mut CK_ULONG,
) -> CK_RV;
pub type CA_GetConfigurationElementDescription = unsafe extern "C" fn(
    CK_SLOT_ID,
    CK_ULONG,
    CK_ULONG,
    CK_ULONG,
    *mut CK_ULONG,
    *mut CK_ULONG,
    *mut CK_ULONG,
    *mut CK_CHAR,
    *mut CK_ULONG,
) -> CK_RV;
pub type CA_GetTokenStatus =
    unsafe extern "C" fn(CK_SLOT_ID, *mut CK_ULONG, *mut CK_ULONG, *mut CK_ULONG) -> CK_RV;
pub type CA_EncapsulateKey = unsafe extern "C" fn(
    CK_SESSION_HANDLE,
    *mut CK_MECHANISM,
    CK_OBJECT_HANDLE,
    *mut CK_ATTRIBUTE,
    CK_ULONG,
    *mut CK_BYTE,
    *mut CK_ULONG,
    *mut CK_OBJECT_HANDLE,
) -> CK_RV;
pub type CA_DecapsulateKey = unsafe extern "C" fn(
    CK_SESSION_HANDLE,
    *mut CK_MECHANISM,
    CK_OBJECT_HANDLE,
    *mut CK_ATTRIBUTE,
    CK_ULONG,
    *mut CK_BYTE,
    CK_ULONG,
    *mut CK_OBJECT_HANDLE,
) -> CK_RV;
/// `CA_InitRolePIN(hSession, userType, pPin, ulPinLen)` (Luna SDK `sfnt_extensions.h`): the
/// Crypto Officer sets the PIN of another partition role (Crypto User, Limited Crypto
/// Officer).
pub type CA_InitRolePIN =
    unsafe extern "C" fn(CK_SESSION_HANDLE, CK_USER_TYPE, *mut CK_CHAR, CK_ULONG) -> CK_RV;
/// `CA_GetHAState` / `CA_GetCurrentHAState`: the library writes the `CK_HA_STATUS` of its
/// SDK generation (see [`decode_ha_state`]).
pub type CA_GetHAState = unsafe extern "C" fn(CK_SLOT_ID, *mut CK_HA_STATUS) -> CK_RV;
/// `lunasim`'s test-control entry point (not a Luna function): a UTF-8 command in, a UTF-8
/// answer out, in one call (the answer is truncated to the buffer and its full length is
/// returned; `CKR_BUFFER_TOO_SMALL` if it did not fit — the command has run either way).
pub type LUNASIM_Control =
    unsafe extern "C" fn(*const CK_BYTE, CK_ULONG, *mut CK_BYTE, *mut CK_ULONG) -> CK_RV;

/// Declares the vendor table once: each entry's field, prototype and symbol. From that one
/// list come the table, its resolution by name at load time, the "offered" list and the
/// names errors carry ([`symbol`]). `unlisted` entries are resolved the same way but are
/// not Luna functions, so they are never listed as offered.
macro_rules! vendor_table {
    (
        offered { $($field:ident: $ty:ty = $symbol:literal,)* }
        unlisted { $($ufield:ident: $uty:ty = $usymbol:literal,)* }
    ) => {
        /// The vendor entry points a module exports, each resolved by name once.
        #[derive(Debug, Clone, Copy, Default)]
        pub struct VendorTable {
            $(pub $field: Option<$ty>,)*
            $(pub $ufield: Option<$uty>,)*
        }

        impl VendorTable {
            /// Look every entry up in a loaded library; an absent symbol stays `None`.
            pub(crate) fn resolve(lib: &Library) -> VendorTable {
                VendorTable {
                    $($field: {
                        // SAFETY: the symbol, when present, has the Luna SDK prototype
                        // `$ty` (fact sheet §1.2); an absent symbol yields None.
                        unsafe { lib.get::<$ty>(concat!($symbol, "\0").as_bytes()) }
                            .ok()
                            .map(|s| *s)
                    },)*
                    $($ufield: {
                        // SAFETY: as above, with the prototype `$uty` this crate defines.
                        unsafe { lib.get::<$uty>(concat!($usymbol, "\0").as_bytes()) }
                            .ok()
                            .map(|s| *s)
                    },)*
                }
            }

            /// Names of the `CA_*` functions present, for the UI's "offered by this module"
            /// list.
            pub fn offered(&self) -> Vec<&'static str> {
                let mut v = Vec::new();
                $(if self.$field.is_some() {
                    v.push($symbol);
                })*
                v
            }
        }

        /// The symbol each vendor table entry is resolved by: the function's name in errors.
        #[allow(non_upper_case_globals)]
        pub(crate) mod symbol {
            $(pub(crate) const $field: &str = $symbol;)*
            $(pub(crate) const $ufield: &str = $usymbol;)*
        }
    };
}

vendor_table! {
    offered {
        get_firmware_version: CA_GetFirmwareVersion = "CA_GetFirmwareVersion",
        get_hsm_stats: CA_GetHSMStats = "CA_GetHSMStats",
        read_utilization_metrics: CA_ReadUtilizationMetrics = "CA_ReadUtilizationMetrics",
        read_and_reset_utilization_metrics: CA_ReadUtilizationMetrics =
            "CA_ReadAndResetUtilizationMetrics",
        read_all_utilization_counters: CA_ReadAllUtilizationCounters =
            "CA_ReadAllUtilizationCounters",
        get_hsm_storage_information: CA_GetHSMStorageInformation = "CA_GetHSMStorageInformation",
        get_token_storage_information: CA_GetTokenStorageInformation =
            "CA_GetTokenStorageInformation",
        get_token_policies: CA_GetIdValueSet = "CA_GetTokenPolicies",
        get_token_capabilities: CA_GetIdValueSet = "CA_GetTokenCapabilities",
        get_hsm_capability_set: CA_GetIdValueSet = "CA_GetHSMCapabilitySet",
        get_hsm_policy_set: CA_GetIdValueSet = "CA_GetHSMPolicySet",
        get_configuration_element_description: CA_GetConfigurationElementDescription =
            "CA_GetConfigurationElementDescription",
        get_token_status: CA_GetTokenStatus = "CA_GetTokenStatus",
        encapsulate_key: CA_EncapsulateKey = "CA_EncapsulateKey",
        decapsulate_key: CA_DecapsulateKey = "CA_DecapsulateKey",
        init_role_pin: CA_InitRolePIN = "CA_InitRolePIN",
        get_ha_state: CA_GetHAState = "CA_GetHAState",
        get_current_ha_state: CA_GetHAState = "CA_GetCurrentHAState",
    }
    unlisted {
        sim_control: LUNASIM_Control = "LUNASIM_Control",
    }
}

impl VendorTable {
    /// Whether the module carries Luna's extension API at all.
    pub fn is_luna(&self) -> bool {
        self.get_firmware_version.is_some() || self.get_hsm_stats.is_some()
    }
}

/// Storage figures from `CA_GetHSMStorageInformation` / `CA_GetTokenStorageInformation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StorageInfo {
    pub container_overhead: u64,
    pub total: u64,
    pub used: u64,
    pub free: u64,
    /// Token storage only.
    pub object_count: Option<u64>,
}

/// One utilization counter, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UtilizationCounter {
    pub serial_number: u64,
    pub label: String,
    pub bin: u64,
    pub counter: u64,
    pub count: u64,
}

impl From<&CK_UTILIZATION_COUNTER> for UtilizationCounter {
    fn from(c: &CK_UTILIZATION_COUNTER) -> Self {
        UtilizationCounter {
            serial_number: c.ullSerialNumber,
            label: crate::types::padded_str(&c.label),
            bin: c.ulBindId,
            counter: c.ulCounterId,
            count: c.ullCount,
        }
    }
}

/// `CA_GetConfigurationElementDescription` result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementDescription {
    pub bit_length: u64,
    pub destructive: bool,
    pub write_restricted: bool,
    pub description: String,
}

/// `CA_GetTokenStatus` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenStatus {
    pub flags: u64,
    pub sessions: u64,
    pub rw_sessions: u64,
}

/// Which `CK_HA_STATUS` a library wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HaLayout {
    /// Luna SDK 2018 and later: 20-character serials (1056 bytes).
    Current,
    /// Older SDKs: `CK_ULONG` serials (528 bytes).
    Legacy,
}

/// One member of an HA group as `CA_GetHAState` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaMember {
    pub serial: String,
    /// `CKR_OK` when the member is alive; otherwise why not.
    pub status: CK_RV,
}

/// `CA_GetHAState`, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaState {
    pub group_serial: String,
    pub members: Vec<HaMember>,
    pub layout: HaLayout,
}

/// The byte a caller fills its buffer with before the call: what the library did not
/// write still holds it.
pub const HA_STATE_FILL: u8 = 0xA5;

fn serial_chars(b: &[u8]) -> Option<String> {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let s = std::str::from_utf8(&b[..end]).ok()?.trim().to_string();
    s.bytes().all(|c| c.is_ascii_graphic()).then_some(s)
}

/// Decode what a library wrote into a buffer of at least `size_of::<CK_HA_STATUS>()`
/// bytes that was filled with [`HA_STATE_FILL`] before the call. The two SDK generations
/// differ in size: a library of the current one writes `listSize` at the end of the
/// 1056-byte struct, an older one writes no further than byte 528 — so the untouched tail
/// tells which layout to read. Either way the counts and serials must make sense.
pub fn decode_ha_state(buf: &[u8]) -> Result<HaState, String> {
    let size = std::mem::size_of::<CK_HA_STATUS>();
    let legacy_size = std::mem::size_of::<CK_HA_STATUS_V1>();
    if buf.len() < size {
        return Err(format!("buffer of {} bytes; {size} needed", buf.len()));
    }
    let ulong = |at: usize| CK_ULONG::from_ne_bytes(buf[at..at + 8].try_into().unwrap());
    let tail_untouched = buf[legacy_size..size].iter().all(|&b| b == HA_STATE_FILL);
    let (layout, count) = if tail_untouched {
        (HaLayout::Legacy, ulong(legacy_size - 8))
    } else {
        (HaLayout::Current, ulong(size - 8))
    };
    if count as usize > CK_HA_MAX_MEMBERS {
        return Err(format!(
            "{count} members listed; the structure holds at most {CK_HA_MAX_MEMBERS}"
        ));
    }
    let mut members = Vec::new();
    let group_serial = match layout {
        HaLayout::Current => {
            for i in 0..count as usize {
                let at = 24 + i * 32;
                let serial = serial_chars(&buf[at..at + CK_HA_SERIAL_LEN])
                    .ok_or_else(|| format!("member {} has an unreadable serial", i + 1))?;
                members.push(HaMember {
                    serial,
                    status: ulong(at + 24),
                });
            }
            serial_chars(&buf[..CK_HA_SERIAL_LEN]).ok_or("the group serial is unreadable")?
        }
        HaLayout::Legacy => {
            for i in 0..count as usize {
                let at = 8 + i * 16;
                members.push(HaMember {
                    serial: ulong(at).to_string(),
                    status: ulong(at + 8),
                });
            }
            ulong(0).to_string()
        }
    };
    Ok(HaState {
        group_serial,
        members,
        layout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled() -> Vec<u8> {
        vec![HA_STATE_FILL; std::mem::size_of::<CK_HA_STATUS>() + 64]
    }

    fn write<T: Copy>(buf: &mut [u8], v: &T) {
        let n = std::mem::size_of::<T>();
        // SAFETY: T is a plain repr(C) struct of integers and byte arrays.
        let bytes = unsafe { std::slice::from_raw_parts(v as *const T as *const u8, n) };
        buf[..n].copy_from_slice(bytes);
    }

    #[test]
    fn ha_state_of_either_sdk_generation() {
        let mut s = CK_HA_STATUS::default();
        s.groupSerial[..10].copy_from_slice(b"1280000100");
        s.memberList[0].memberSerial[..10].copy_from_slice(b"1280000101");
        s.memberList[1].memberSerial[..10].copy_from_slice(b"1280000102");
        s.memberList[1].memberStatus = 0x8000_001F;
        s.listSize = 2;
        let mut buf = filled();
        write(&mut buf, &s);
        let d = decode_ha_state(&buf).unwrap();
        assert_eq!(d.layout, HaLayout::Current);
        assert_eq!(d.group_serial, "1280000100");
        assert_eq!(d.members[1].serial, "1280000102");
        assert_eq!(d.members[1].status, 0x8000_001F);

        let mut old = CK_HA_STATUS_V1 {
            groupSerial: 1_280_000_100,
            listSize: 2,
            ..Default::default()
        };
        old.memberList[0].memberSerial = 1_280_000_101;
        old.memberList[1].memberSerial = 1_280_000_102;
        old.memberList[0].memberStatus = CKR_OK;
        let mut buf = filled();
        write(&mut buf, &old);
        let d = decode_ha_state(&buf).unwrap();
        assert_eq!(d.layout, HaLayout::Legacy);
        assert_eq!(d.group_serial, "1280000100");
        assert_eq!(d.members.len(), 2);
        assert_eq!(d.members[0].serial, "1280000101");

        // Garbage is refused, not shown.
        let mut buf = filled();
        buf[..1056].fill(0x41);
        assert!(decode_ha_state(&buf).is_err());
        assert!(decode_ha_state(&buf[..100]).is_err());
    }

    #[test]
    fn ha_layout_offsets() {
        assert_eq!(std::mem::offset_of!(CK_HA_STATUS, memberList), 24);
        assert_eq!(std::mem::offset_of!(CK_HA_STATUS, listSize), 1048);
        assert_eq!(std::mem::offset_of!(CK_HA_MEMBER, memberStatus), 24);
        assert_eq!(std::mem::offset_of!(CK_HA_STATUS_V1, listSize), 520);
    }

    #[test]
    fn stats_value_halves() {
        let p = HSM_STATS_PARAMS::new(2, 0x1_2345_6789);
        assert_eq!(p.ulHighValue, 1);
        assert_eq!(p.ulLowValue, 0x2345_6789);
        assert_eq!(p.value(), 0x1_2345_6789);
    }

    #[test]
    fn counter_layout_offsets() {
        assert_eq!(std::mem::offset_of!(CK_UTILIZATION_COUNTER, label), 8);
        assert_eq!(std::mem::offset_of!(CK_UTILIZATION_COUNTER, ulBindId), 80);
        assert_eq!(
            std::mem::offset_of!(CK_UTILIZATION_COUNTER, ulCounterId),
            88
        );
        assert_eq!(std::mem::offset_of!(CK_UTILIZATION_COUNTER, ullCount), 96);
    }
}
