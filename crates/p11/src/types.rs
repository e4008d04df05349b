//! Owned, Rust-shaped copies of the PKCS#11 info structures.

use cryptoki_sys::*;

pub type SlotId = CK_SLOT_ID;
pub type ObjectHandle = CK_OBJECT_HANDLE;
pub type MechanismType = CK_MECHANISM_TYPE;
pub type AttributeType = CK_ATTRIBUTE_TYPE;

/// A `(major, minor)` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Version {
    pub major: u8,
    pub minor: u8,
}

impl From<CK_VERSION> for Version {
    fn from(v: CK_VERSION) -> Self {
        Version {
            major: v.major,
            minor: v.minor,
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Decode a blank-padded fixed-size PKCS#11 string (not NUL-terminated).
pub fn padded_str(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end])
        .trim_end()
        .to_string()
}

/// `CK_UNAVAILABLE_INFORMATION` becomes `None`.
pub fn available(v: CK_ULONG) -> Option<u64> {
    if v == CK_UNAVAILABLE_INFORMATION {
        None
    } else {
        Some(v)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    pub cryptoki_version: Version,
    pub manufacturer: String,
    pub flags: u64,
    pub library_description: String,
    pub library_version: Version,
}

impl From<&CK_INFO> for Info {
    fn from(i: &CK_INFO) -> Self {
        Info {
            cryptoki_version: i.cryptokiVersion.into(),
            manufacturer: padded_str(&i.manufacturerID),
            flags: i.flags,
            library_description: padded_str(&i.libraryDescription),
            library_version: i.libraryVersion.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotInfo {
    pub description: String,
    pub manufacturer: String,
    pub flags: u64,
    pub hardware_version: Version,
    pub firmware_version: Version,
}

impl SlotInfo {
    pub fn token_present(&self) -> bool {
        self.flags & CKF_TOKEN_PRESENT != 0
    }
    pub fn removable(&self) -> bool {
        self.flags & CKF_REMOVABLE_DEVICE != 0
    }
    pub fn hardware(&self) -> bool {
        self.flags & CKF_HW_SLOT != 0
    }
}

impl From<&CK_SLOT_INFO> for SlotInfo {
    fn from(i: &CK_SLOT_INFO) -> Self {
        SlotInfo {
            description: padded_str(&i.slotDescription),
            manufacturer: padded_str(&i.manufacturerID),
            flags: i.flags,
            hardware_version: i.hardwareVersion.into(),
            firmware_version: i.firmwareVersion.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub label: String,
    pub manufacturer: String,
    pub model: String,
    pub serial_number: String,
    pub flags: u64,
    pub max_session_count: Option<u64>,
    pub session_count: Option<u64>,
    pub max_rw_session_count: Option<u64>,
    pub rw_session_count: Option<u64>,
    pub max_pin_len: u64,
    pub min_pin_len: u64,
    pub total_public_memory: Option<u64>,
    pub free_public_memory: Option<u64>,
    pub total_private_memory: Option<u64>,
    pub free_private_memory: Option<u64>,
    pub hardware_version: Version,
    pub firmware_version: Version,
    pub utc_time: String,
}

impl TokenInfo {
    pub fn has(&self, flag: CK_FLAGS) -> bool {
        self.flags & flag != 0
    }
    pub fn initialized(&self) -> bool {
        self.has(CKF_TOKEN_INITIALIZED)
    }
    pub fn login_required(&self) -> bool {
        self.has(CKF_LOGIN_REQUIRED)
    }
    pub fn user_pin_initialized(&self) -> bool {
        self.has(CKF_USER_PIN_INITIALIZED)
    }
}

impl From<&CK_TOKEN_INFO> for TokenInfo {
    fn from(i: &CK_TOKEN_INFO) -> Self {
        TokenInfo {
            label: padded_str(&i.label),
            manufacturer: padded_str(&i.manufacturerID),
            model: padded_str(&i.model),
            serial_number: padded_str(&i.serialNumber),
            flags: i.flags,
            max_session_count: available(i.ulMaxSessionCount),
            session_count: available(i.ulSessionCount),
            max_rw_session_count: available(i.ulMaxRwSessionCount),
            rw_session_count: available(i.ulRwSessionCount),
            max_pin_len: i.ulMaxPinLen,
            min_pin_len: i.ulMinPinLen,
            total_public_memory: available(i.ulTotalPublicMemory),
            free_public_memory: available(i.ulFreePublicMemory),
            total_private_memory: available(i.ulTotalPrivateMemory),
            free_private_memory: available(i.ulFreePrivateMemory),
            hardware_version: i.hardwareVersion.into(),
            firmware_version: i.firmwareVersion.into(),
            utc_time: padded_str(&i.utcTime),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MechanismInfo {
    pub min_key_size: u64,
    pub max_key_size: u64,
    pub flags: u64,
}

impl MechanismInfo {
    pub fn has(&self, flag: CK_FLAGS) -> bool {
        self.flags & flag != 0
    }
}

impl From<&CK_MECHANISM_INFO> for MechanismInfo {
    fn from(i: &CK_MECHANISM_INFO) -> Self {
        MechanismInfo {
            min_key_size: i.ulMinKeySize,
            max_key_size: i.ulMaxKeySize,
            flags: i.flags,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionInfo {
    pub slot: SlotId,
    pub state: u64,
    pub flags: u64,
    pub device_error: u64,
}

impl SessionInfo {
    pub fn rw(&self) -> bool {
        self.flags & CKF_RW_SESSION != 0
    }
    /// Logged in as user or SO (read-only or read-write).
    pub fn logged_in(&self) -> bool {
        matches!(
            self.state,
            CKS_RO_USER_FUNCTIONS | CKS_RW_USER_FUNCTIONS | CKS_RW_SO_FUNCTIONS
        )
    }
}

/// Who logs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UserType {
    User,
    SecurityOfficer,
    /// A vendor user type, e.g. Luna's crypto user `0x80000001`.
    Vendor(u64),
}

impl UserType {
    pub fn raw(self) -> CK_USER_TYPE {
        match self {
            UserType::User => CKU_USER,
            UserType::SecurityOfficer => CKU_SO,
            UserType::Vendor(v) => v,
        }
    }
}
