//! Names for PKCS#11 numbers, for errors and for the UI.
//!
//! Standard names come from the PKCS#11 3.2 headers (table generated from `cryptoki-sys`,
//! see `tools/gen_names.py`). Vendor numbers (`0x8000_0000` and up) only have a meaning per
//! module family, so vendor names are looked up only for the family that defines them.
//! Unknown values are kept and shown as hex; they are never dropped.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use cryptoki_sys::CK_ULONG;

// Generated: CK_ULONG is u64 on this target but not on every one, so the casts stay.
#[allow(clippy::unnecessary_cast)]
#[path = "names_std.rs"]
mod std_names;

/// Module families whose vendor code spaces differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Any module we have no vendor table for.
    Generic,
    /// Thales/SafeNet Luna (libCryptoki2), and `lunasim`, which imitates it.
    Luna,
    /// SafeNet ProtectToolkit: also "SafeNet", different vendor codes.
    ProtectToolkit,
    SoftHsm,
    Kryoptic,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Generic => "generic",
            Family::Luna => "luna",
            Family::ProtectToolkit => "protecttoolkit",
            Family::SoftHsm => "softhsm",
            Family::Kryoptic => "kryoptic",
        }
    }

    /// Identify the family. Luna is recognised by its `CA_*` extension symbols (the
    /// manufacturer string alone is shared with ProtectToolkit).
    pub fn detect(manufacturer: &str, library_description: &str, has_luna_symbols: bool) -> Family {
        let m = manufacturer.to_ascii_lowercase();
        let d = library_description.to_ascii_lowercase();
        if has_luna_symbols {
            Family::Luna
        } else if m.contains("softhsm") || d.contains("softhsm") {
            Family::SoftHsm
        } else if m.contains("kryoptic") || d.contains("kryoptic") {
            Family::Kryoptic
        } else if d.contains("protect")
            || ((m.contains("safenet") || m.contains("thales")) && !has_luna_symbols)
        {
            Family::ProtectToolkit
        } else {
            Family::Generic
        }
    }
}

/// Which kind of number is being named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    ReturnValue,
    Mechanism,
    Attribute,
    KeyType,
    ObjectClass,
    CertificateType,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::ReturnValue => "CKR",
            Kind::Mechanism => "CKM",
            Kind::Attribute => "CKA",
            Kind::KeyType => "CKK",
            Kind::ObjectClass => "CKO",
            Kind::CertificateType => "CKC",
        }
    }

    fn standard(self) -> &'static [(u64, &'static str)] {
        match self {
            Kind::ReturnValue => std_names::CKR_NAMES,
            Kind::Mechanism => std_names::CKM_NAMES,
            Kind::Attribute => std_names::CKA_NAMES,
            Kind::KeyType => std_names::CKK_NAMES,
            Kind::ObjectClass => std_names::CKO_NAMES,
            Kind::CertificateType => std_names::CKC_NAMES,
        }
    }

    fn vendor(self, family: Family) -> &'static [(u64, &'static str)] {
        match (family, self) {
            (Family::Luna, Kind::ReturnValue) => luna::CKR_NAMES,
            (Family::Luna, Kind::Mechanism) => luna::CKM_NAMES,
            (Family::Luna, Kind::KeyType) => luna::CKK_NAMES,
            (Family::Luna, Kind::Attribute) => luna::CKA_NAMES,
            (Family::ProtectToolkit, Kind::ReturnValue) => ptk::CKR_NAMES,
            _ => &[],
        }
    }
}

const VENDOR_DEFINED: u64 = 0x8000_0000;

type Index = HashMap<(Kind, u64), &'static str>;

fn standard_index() -> &'static Index {
    static IDX: OnceLock<Index> = OnceLock::new();
    IDX.get_or_init(|| {
        let mut m = HashMap::new();
        for kind in [
            Kind::ReturnValue,
            Kind::Mechanism,
            Kind::Attribute,
            Kind::KeyType,
            Kind::ObjectClass,
            Kind::CertificateType,
        ] {
            for &(v, n) in kind.standard() {
                // First name in header order wins; later ones are deprecated aliases.
                m.entry((kind, v)).or_insert(n);
            }
        }
        m
    })
}

/// The name of a value, if anyone has one for it.
pub fn name(kind: Kind, value: u64, family: Family) -> Option<&'static str> {
    if value >= VENDOR_DEFINED {
        // Vendor values first: the standard headers define none in this range, except the
        // CK*_VENDOR_DEFINED markers themselves.
        if let Some((_, n)) = kind.vendor(family).iter().find(|(v, _)| *v == value) {
            return Some(n);
        }
    }
    standard_index().get(&(kind, value)).copied()
}

/// The name, or a hex rendering that says it is vendor-defined or unknown.
pub fn display(kind: Kind, value: u64, family: Family) -> Cow<'static, str> {
    match name(kind, value, family) {
        Some(n) => Cow::Borrowed(n),
        None if value >= VENDOR_DEFINED => Cow::Owned(format!(
            "{}_VENDOR_DEFINED+0x{:X}",
            kind.prefix(),
            value - VENDOR_DEFINED
        )),
        None => Cow::Owned(format!("{}_0x{:X}", kind.prefix(), value)),
    }
}

/// Parse a name (standard names, their aliases, the family's vendor names) or a hex/decimal
/// number.
pub fn parse(kind: Kind, text: &str, family: Family) -> Option<u64> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok();
    }
    if let Ok(v) = t.parse::<u64>() {
        return Some(v);
    }
    let upper = t.to_ascii_uppercase();
    let with_prefix = if upper.starts_with(kind.prefix()) {
        upper
    } else {
        format!("{}_{}", kind.prefix(), upper)
    };
    kind.standard()
        .iter()
        .chain(kind.vendor(family))
        .find(|(_, n)| *n == with_prefix)
        .map(|(v, _)| *v)
}

pub fn rv_name(rv: CK_ULONG, family: Family) -> Cow<'static, str> {
    display(Kind::ReturnValue, rv, family)
}

pub fn mechanism_name(m: CK_ULONG, family: Family) -> Cow<'static, str> {
    display(Kind::Mechanism, m, family)
}

pub fn attribute_name(a: CK_ULONG, family: Family) -> Cow<'static, str> {
    display(Kind::Attribute, a, family)
}

pub fn key_type_name(k: CK_ULONG, family: Family) -> Cow<'static, str> {
    display(Kind::KeyType, k, family)
}

pub fn object_class_name(o: CK_ULONG, family: Family) -> Cow<'static, str> {
    display(Kind::ObjectClass, o, family)
}

/// Thales Luna vendor values (Luna SDK `cryptoki_v2.h`, pycryptoki `defines.py`, the 7.9
/// lunacm mechanism table; fact sheet §2).
pub mod luna {
    pub const CKR_RC_ERROR: u64 = 0x8000_0004;
    pub const CKR_CONTAINER_HANDLE_INVALID: u64 = 0x8000_0005;
    pub const CKR_TOO_MANY_CONTAINERS: u64 = 0x8000_0006;
    pub const CKR_USER_LOCKED_OUT: u64 = 0x8000_0007;
    pub const CKR_USER_NOT_AUTHORIZED: u64 = 0x8000_001A;
    pub const CKR_MAX_OBJECT_COUNT_EXCEEDED: u64 = 0x8000_001B;
    pub const CKR_SO_LOGIN_FAILURE_THRESHOLD: u64 = 0x8000_001C;
    pub const CKR_UNABLE_TO_CONNECT: u64 = 0x8000_001F;
    pub const CKR_PARTITION_DISABLED: u64 = 0x8000_0020;
    pub const CKR_TIMEOUT: u64 = 0x8000_0024;
    pub const CKR_MTK_ZEROIZED: u64 = 0x8000_0026;
    pub const CKR_HSM_STORAGE_FULL: u64 = 0x8000_002A;
    pub const CKR_DEVICE_TIMEOUT: u64 = 0x8000_002B;
    pub const CKR_OPERATION_NOT_ALLOWED: u64 = 0x8000_0030;
    pub const CKR_LICENSE_CAPACITY_EXCEEDED: u64 = 0x8000_0031;
    pub const CKR_AGAIN: u64 = 0x8000_0041;
    pub const CKR_STC_NO_SESSION_KEY: u64 = 0x8000_004F;
    pub const CKR_STC_RESPONSE_BAD_MAC: u64 = 0x8000_0050;
    pub const CKR_STC_SESSION_INVALID: u64 = 0x8000_0053;
    pub const CKR_STC_NO_CHANNEL: u64 = 0x8000_0056;
    pub const CKR_STC_RESPONSE_DECRYPT_ERROR: u64 = 0x8000_0057;
    pub const CKR_SESSION_HANDLE_INVALID_FOR_FP: u64 = 0x8000_006D;
    pub const CKR_HSM_TAMPERED: u64 = 0x8000_0076;
    pub const CKR_POLICY_ID_INVALID: u64 = 0x8000_007B;
    pub const CKR_INVALID_UTILIZATION_METRICS: u64 = 0x8000_007F;
    pub const CKR_UTILIZATION_BIN_ID_INVALID: u64 = 0x8000_0080;
    pub const CKR_UTILIZATION_COUNTER_ID_INVALID: u64 = 0x8000_0081;
    pub const CKR_INVALID_SERIAL_NUM: u64 = 0x8000_0082;
    pub const CKR_BIP32_CHILD_INDEX_INVALID: u64 = 0x8000_0083;
    pub const CKR_HSM_RESTART_REQUIRED: u64 = 0x8000_008D;
    pub const CKR_SESSION_ID_INVALID: u64 = 0x8000_010D;
    pub const CKR_SESSION_ID_EXPIRED: u64 = 0x8000_010F;
    /// A key past its `CKA_USAGE_LIMIT` (thalesdocs Luna 7 SDK, "Object Usage Count").
    pub const CKR_KEY_NOT_ACTIVE: u64 = 0x8000_0136;
    pub const CKR_BUSY: u64 = 0x8000_1604;

    pub const CKM_AES_KW: u64 = 0x8000_0170;
    pub const CKM_AES_KWP: u64 = 0x8000_0171;
    pub const CKM_EXTMU_ML_DSA: u64 = 0x8000_0175;
    pub const CKK_LMS: u64 = 0x8000_0046;
    pub const CKA_USAGE_COUNT: u64 = 0x8000_0101;
    pub const CKA_USAGE_LIMIT: u64 = 0x8000_0200;
    /// The object's unique ID, a byte array stable for the object's life (pycryptoki
    /// `defines.py`: `CKA_VENDOR_DEFINED | 0x5`).
    pub const CKA_OUID: u64 = 0x8000_0005;
    /// Luna user types (`cryptoki_v2.h`; pycryptoki `defines.py`): the Crypto Officer is
    /// the standard `CKU_USER`; the Crypto User (`CKU_LIMITED_USER`) and the Limited
    /// Crypto Officer are vendor user types. `CKU_CRYPTO_USER_LEGACY` is the old SDKs'
    /// spelling of the Crypto User (one zero fewer).
    pub const CKU_CRYPTO_USER: u64 = 0x8000_0001;
    pub const CKU_CRYPTO_USER_LEGACY: u64 = 0x0800_0001;
    pub const CKU_AUDIT: u64 = 0x8000_0002;
    pub const CKU_LIMITED_CRYPTO_OFFICER: u64 = 0x8000_0003;

    pub(crate) const CKR_NAMES: &[(u64, &str)] = &[
        (0x8000_0004, "CKR_RC_ERROR"),
        (0x8000_0005, "CKR_CONTAINER_HANDLE_INVALID"),
        (0x8000_0006, "CKR_TOO_MANY_CONTAINERS"),
        (0x8000_0007, "CKR_USER_LOCKED_OUT"),
        (0x8000_0008, "CKR_CLONING_PARAMETER_ALREADY_EXISTS"),
        (0x8000_0009, "CKR_CLONING_PARAMETER_MISSING"),
        (0x8000_000C, "CKR_ACCEL_DEVICE_ERROR"),
        (0x8000_000D, "CKR_WRAPPING_ERROR"),
        (0x8000_000E, "CKR_UNWRAPPING_ERROR"),
        (0x8000_001A, "CKR_USER_NOT_AUTHORIZED"),
        (0x8000_001B, "CKR_MAX_OBJECT_COUNT_EXCEEDED"),
        (0x8000_001C, "CKR_SO_LOGIN_FAILURE_THRESHOLD"),
        (0x8000_001F, "CKR_UNABLE_TO_CONNECT"),
        (0x8000_0020, "CKR_PARTITION_DISABLED"),
        (0x8000_0021, "CKR_CALLBACK_ERROR"),
        (0x8000_0022, "CKR_SECURITY_PARAMETER_MISSING"),
        (0x8000_0023, "CKR_SP_TIMEOUT"),
        (0x8000_0024, "CKR_TIMEOUT"),
        (0x8000_0025, "CKR_ECC_UNKNOWN_CURVE"),
        (0x8000_0026, "CKR_MTK_ZEROIZED"),
        (0x8000_0027, "CKR_MTK_STATE_INVALID"),
        (0x8000_002A, "CKR_HSM_STORAGE_FULL"),
        (0x8000_002B, "CKR_DEVICE_TIMEOUT"),
        (0x8000_002C, "CKR_CONTAINER_OBJECT_STORAGE_FULL"),
        (0x8000_002D, "CKR_PED_CLIENT_NOT_RUNNING"),
        (0x8000_002E, "CKR_PED_UNPLUGGED"),
        (0x8000_002F, "CKR_ECC_POINT_INVALID"),
        (0x8000_0030, "CKR_OPERATION_NOT_ALLOWED"),
        (0x8000_0031, "CKR_LICENSE_CAPACITY_EXCEEDED"),
        (0x8000_003B, "CKR_AUDIT_LOGIN_TIMEOUT_IN_PROGRESS"),
        (0x8000_003C, "CKR_AUDIT_LOGIN_FAILURE_THRESHOLD"),
        (0x8000_0041, "CKR_AGAIN"),
        (0x8000_0042, "CKR_TOKEN_COPIED"),
        (0x8000_0043, "CKR_SLOT_NOT_EMPTY"),
        (0x8000_0044, "CKR_USER_ALREADY_ACTIVATED"),
        (0x8000_004F, "CKR_STC_NO_SESSION_KEY"),
        (0x8000_0050, "CKR_STC_RESPONSE_BAD_MAC"),
        (0x8000_0051, "CKR_STC_NOT_ENABLED"),
        (0x8000_0053, "CKR_STC_SESSION_INVALID"),
        (0x8000_0056, "CKR_STC_NO_CHANNEL"),
        (0x8000_0057, "CKR_STC_RESPONSE_DECRYPT_ERROR"),
        (0x8000_0067, "CKR_CHALLENGE_INCORRECT"),
        (0x8000_0068, "CKR_ACCESS_ID_INVALID"),
        (0x8000_0069, "CKR_ACCESS_ID_ALREADY_EXISTS"),
        (0x8000_006B, "CKR_MECHANISM_INVALID_FOR_FP"),
        (0x8000_006C, "CKR_OPERATION_INVALID_FOR_FP"),
        (0x8000_006D, "CKR_SESSION_HANDLE_INVALID_FOR_FP"),
        (0x8000_006E, "CKR_CMD_NOT_ALLOWED_HSM_IN_TRANSPORT"),
        (0x8000_006F, "CKR_OBJECT_ALREADY_EXISTS"),
        (0x8000_0073, "CKR_REKEK_KEY"),
        (0x8000_0074, "CKR_KEK_RETRY_FAILURE"),
        (0x8000_0075, "CKR_RNG_RESEED_TOO_EARLY"),
        (0x8000_0076, "CKR_HSM_TAMPERED"),
        (0x8000_0077, "CKR_CONFIG_CHANGE_ILLEGAL"),
        (0x8000_0078, "CKR_SESSION_CONTEXT_NOT_ALLOCATED"),
        (0x8000_0079, "CKR_SESSION_CONTEXT_ALREADY_ALLOCATED"),
        (0x8000_007A, "CKR_INVALID_BL_ITB_AUTH_HEADER"),
        (0x8000_007B, "CKR_POLICY_ID_INVALID"),
        (0x8000_007C, "CKR_CONFIG_ILLEGAL"),
        (0x8000_007D, "CKR_CONFIG_FAILS_DEPENDENCIES"),
        (0x8000_007E, "CKR_CERTIFICATE_TYPE_INVALID"),
        (0x8000_007F, "CKR_INVALID_UTILIZATION_METRICS"),
        (0x8000_0080, "CKR_UTILIZATION_BIN_ID_INVALID"),
        (0x8000_0081, "CKR_UTILIZATION_COUNTER_ID_INVALID"),
        (0x8000_0082, "CKR_INVALID_SERIAL_NUM"),
        (0x8000_0083, "CKR_BIP32_CHILD_INDEX_INVALID"),
        (0x8000_0084, "CKR_BIP32_INVALID_HARDENED_DERIVATION"),
        (0x8000_0085, "CKR_BIP32_MASTER_SEED_LEN_INVALID"),
        (0x8000_0086, "CKR_BIP32_MASTER_SEED_INVALID"),
        (0x8000_0087, "CKR_BIP32_INVALID_KEY_PATH_LEN"),
        (0x8000_0088, "CKR_FM_ID_INVALID"),
        (0x8000_0089, "CKR_FM_NOT_SUPPORTED"),
        (0x8000_008A, "CKR_FM_NEVER_ENABLED"),
        (0x8000_008B, "CKR_FM_DISABLED"),
        (0x8000_008C, "CKR_FM_SMFS_INACTIVE"),
        (0x8000_008D, "CKR_HSM_RESTART_REQUIRED"),
        (0x8000_008E, "CKR_FM_CFG_ALLOWEDFLAG_DISABLED"),
        (0x8000_0097, "CKR_KEY_NOT_AUTHORIZED"),
        (0x8000_0098, "CKR_AUTH_DATA_INCORRECT"),
        (0x8000_009D, "CKR_PED_UNSUPPORTED"),
        (0x8000_009E, "CKR_PED_ERROR"),
        (0x8000_009F, "CKR_ACCESS_ID_CONFLICT"),
        (0x8000_0100, "CKR_KEY_INVALID_FOR_HA_LOGIN"),
        (0x8000_0101, "CKR_KEY_EXTRACTABLE"),
        (0x8000_0102, "CKR_AUTH_DATA_NOT_ALLOWED"),
        (0x8000_0103, "CKR_ASSIGNED_KEY_NOT_ALLOWED"),
        (0x8000_0104, "CKR_INTEGER_OVERFLOW"),
        (0x8000_0105, "CKR_ECC_CURVE_NOT_ALLOWED"),
        (0x8000_010D, "CKR_SESSION_ID_INVALID"),
        (0x8000_010E, "CKR_SESSION_ID_EXISTS"),
        (0x8000_010F, "CKR_SESSION_ID_EXPIRED"),
        (0x8000_0110, "CKR_ATTESTATION_EXPIRED"),
        (0x8000_0111, "CKR_PROTOCOL_DISABLED"),
        (0x8000_0112, "CKR_OBJECT_TYPE_INVALID"),
        (0x8000_0114, "CKR_OBJECT_READ_ONLY"),
        (0x8000_0136, "CKR_KEY_NOT_ACTIVE"),
        (0x8000_0305, "CKR_OBJECT_NOT_KEYRING"),
        (0x8000_0306, "CKR_KEYRING_NOT_FOUND"),
        (0x8000_0307, "CKR_KEYRING_NOT_AUTHORIZED"),
        (0x8000_1604, "CKR_BUSY"),
    ];

    pub(crate) const CKM_NAMES: &[(u64, &str)] = &[
        (0x8000_0170, "CKM_AES_KW"),
        (0x8000_0171, "CKM_AES_KWP"),
        (0x8000_0174, "CKM_AES_CBC_CMAC_WRAP"),
        (0x8000_0175, "CKM_EXTMU_ML_DSA"),
        (0x8000_0A00, "CKM_ECIES"),
        (0x8000_0A02, "CKM_NIST_PRF_KDF"),
        (0x8000_0C01, "CKM_EC_EDWARDS_KEY_PAIR_GEN_LEGACY"),
        (0x8000_0C03, "CKM_EDDSA_LEGACY"),
        (0x8000_0E00, "CKM_BIP32_MASTER_DERIVE"),
        (0x8000_0E01, "CKM_BIP32_CHILD_DERIVE"),
        (0xC000_0013, "CKM_ML_KEM_KEY_PAIR_GEN_FM"),
        (0xC000_0014, "CKM_ML_KEM_KEY_ENCAP_FM"),
        (0xC000_0015, "CKM_ML_KEM_KEY_DECAP_FM"),
        (0xC000_0065, "CKM_ML_DSA_KEY_PAIR_GEN_FM"),
        (0xC000_0066, "CKM_ML_DSA_FM"),
    ];

    pub(crate) const CKK_NAMES: &[(u64, &str)] = &[
        (0x8000_0010, "CKK_KCDSA"),
        (0x8000_0011, "CKK_SEED"),
        (0x8000_0012, "CKK_EC_EDWARDS_LEGACY"),
        (0x8000_0013, "CKK_EC_MONTGOMERY_LEGACY"),
        (0x8000_0014, "CKK_BIP32"),
        (0x8000_0046, "CKK_LMS"),
        (0xC000_0008, "CKK_ML_DSA_FM"),
        (0xC000_0009, "CKK_ML_KEM_FM"),
    ];

    pub(crate) const CKA_NAMES: &[(u64, &str)] = &[
        (0x8000_0005, "CKA_OUID"),
        (0x8000_0101, "CKA_USAGE_COUNT"),
        (0x8000_0200, "CKA_USAGE_LIMIT"),
        (0x8000_1100, "CKA_BIP32_CHAIN_CODE"),
        (0x8000_1101, "CKA_BIP32_VERSION_BYTES"),
        (0x8000_1102, "CKA_BIP32_CHILD_INDEX"),
        (0x8000_1103, "CKA_BIP32_CHILD_DEPTH"),
        (0x8000_1104, "CKA_BIP32_ID"),
        (0x8000_1105, "CKA_BIP32_FINGERPRINT"),
        (0x8000_1106, "CKA_BIP32_PARENT_FINGERPRINT"),
        (0xC000_0001, "CKA_KEY_PARAMS_FM"),
    ];
}

/// SafeNet ProtectToolkit vendor codes (`ctvdef.h`): not Luna, listed so the two are never
/// confused.
pub mod ptk {
    pub const CKR_SMS_ERROR: u64 = 0x8000_0384;
    pub const CKR_DEVICE_RESET: u64 = 0x8000_0386;
    pub const CKR_NO_SESSION_KEYS: u64 = 0x8000_0387;

    pub(crate) const CKR_NAMES: &[(u64, &str)] = &[
        (0x8000_0384, "CKR_SMS_ERROR"),
        (0x8000_0386, "CKR_DEVICE_RESET"),
        (0x8000_0387, "CKR_NO_SESSION_KEYS"),
        (0x8000_0388, "CKR_BAD_REPLY"),
        (0x8000_1000, "CKR_HOST_ERROR"),
        (0x8000_3000, "CKR_HA_ERROR"),
        (0x8000_3006, "CKR_HA_NO_HSM"),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use cryptoki_sys::*;

    #[test]
    fn standard_names() {
        assert_eq!(
            rv_name(CKR_PIN_INCORRECT, Family::Generic),
            "CKR_PIN_INCORRECT"
        );
        assert_eq!(mechanism_name(CKM_ML_DSA, Family::Generic), "CKM_ML_DSA");
        assert_eq!(
            mechanism_name(CKM_HSS_KEY_PAIR_GEN, Family::Generic),
            "CKM_HSS_KEY_PAIR_GEN"
        );
        assert_eq!(
            attribute_name(CKA_HSS_KEYS_REMAINING, Family::Generic),
            "CKA_HSS_KEYS_REMAINING"
        );
        assert_eq!(key_type_name(CKK_ML_KEM, Family::Generic), "CKK_ML_KEM");
        assert_eq!(
            object_class_name(CKO_PRIVATE_KEY, Family::Generic),
            "CKO_PRIVATE_KEY"
        );
    }

    #[test]
    fn deprecated_aliases_lose() {
        assert_eq!(
            mechanism_name(CKM_EC_KEY_PAIR_GEN, Family::Generic),
            "CKM_EC_KEY_PAIR_GEN"
        );
        assert_eq!(key_type_name(CKK_EC, Family::Generic), "CKK_EC");
        assert_eq!(
            attribute_name(CKA_EC_PARAMS, Family::Generic),
            "CKA_EC_PARAMS"
        );
        // Aliases still parse.
        assert_eq!(
            parse(Kind::Mechanism, "CKM_ECDSA_KEY_PAIR_GEN", Family::Generic),
            Some(CKM_EC_KEY_PAIR_GEN)
        );
    }

    #[test]
    fn vendor_names_per_family() {
        assert_eq!(rv_name(0x8000_001F, Family::Luna), "CKR_UNABLE_TO_CONNECT");
        assert_eq!(
            rv_name(0x8000_001F, Family::Generic),
            "CKR_VENDOR_DEFINED+0x1F"
        );
        assert_eq!(
            rv_name(0x8000_0386, Family::ProtectToolkit),
            "CKR_DEVICE_RESET"
        );
        assert_eq!(
            rv_name(0x8000_0386, Family::Luna),
            "CKR_VENDOR_DEFINED+0x386"
        );
        assert_eq!(
            mechanism_name(0x8000_0175, Family::Luna),
            "CKM_EXTMU_ML_DSA"
        );
        assert_eq!(key_type_name(0x8000_0046, Family::Luna), "CKK_LMS");
    }

    #[test]
    fn unknown_values_are_kept_as_hex() {
        assert_eq!(mechanism_name(0x7777, Family::Generic), "CKM_0x7777");
        assert_eq!(parse(Kind::Mechanism, "0x1d", Family::Generic), Some(0x1D));
        assert_eq!(
            parse(Kind::Mechanism, "ml_dsa", Family::Generic),
            Some(CKM_ML_DSA)
        );
        assert_eq!(parse(Kind::Mechanism, "nonsense", Family::Generic), None);
    }

    #[test]
    fn tables_cover_the_fact_sheet() {
        // Fact sheet §3.1 constants must all have names.
        for m in [0x0F, 0x17, 0x1C, 0x1D, 0x1F, 0x2D, 0x2E, 0x4032, 0x4033] {
            assert!(
                name(Kind::Mechanism, m, Family::Generic).is_some(),
                "CKM 0x{m:X}"
            );
        }
        for a in [
            0x617, 0x618, 0x619, 0x61A, 0x61B, 0x61C, 0x61D, 0x633, 0x634,
        ] {
            assert!(
                name(Kind::Attribute, a, Family::Generic).is_some(),
                "CKA 0x{a:X}"
            );
        }
        for k in [0x46, 0x49, 0x4A, 0x4B] {
            assert!(
                name(Kind::KeyType, k, Family::Generic).is_some(),
                "CKK 0x{k:X}"
            );
        }
        assert_eq!(rv_name(0x203, Family::Generic), "CKR_KEY_EXHAUSTED");
    }

    #[test]
    fn family_detection() {
        assert_eq!(Family::detect("SafeNet", "Chrystoki", true), Family::Luna);
        assert_eq!(
            Family::detect("SafeNet", "Cryptoki Runtime", false),
            Family::ProtectToolkit
        );
        assert_eq!(
            Family::detect("SoftHSM", "Implementation of PKCS11", false),
            Family::SoftHsm
        );
        assert_eq!(
            Family::detect("Kryoptic Project", "Kryoptic PKCS11 Module", false),
            Family::Kryoptic
        );
        assert_eq!(Family::detect("Acme", "Acme token", false), Family::Generic);
    }
}
