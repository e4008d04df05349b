//! Which return codes mean what for recovery. The lists are data, kept here in one place
//! and tested; the pool acts on the resulting [`ErrorClass`], never on raw codes.
//!
//! Sources: OASIS PKCS#11 3.2 return-value semantics and the Luna SDK headers (vendor codes
//! from `cryptoki_v2.h`), summarised in the project's Luna fact sheet §5.
//! Vendor codes (`0x8000_0000` and up) are only meaningful per module family: a Luna code
//! and a ProtectToolkit code may share a number, so they are classified only for the family
//! that defines them.

use cryptoki_sys::*;

use crate::names::{luna, ptk, Family};

/// What a caller (the session pool) should do about a failed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// The device or the connection to it is gone: close sessions, `C_Finalize` +
    /// `C_Initialize` on the same library handle, reopen.
    Disconnected,
    /// The session is gone but the module is fine: reopen the session and log in again.
    SessionInvalid,
    /// Retry the same call; no local recovery helps or is needed.
    RetryOnly,
    /// PIN or login problem. Never retried, never counted as a disconnect.
    Pin,
    /// The object handle does not (or no longer) refer to an object.
    KeyNotFound,
    /// The HSM (or our own backlog) is saturated; retry later.
    Busy,
    /// Any other failure of the operation itself. Not retried.
    Operation,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::Disconnected,
        ErrorClass::SessionInvalid,
        ErrorClass::RetryOnly,
        ErrorClass::Pin,
        ErrorClass::KeyNotFound,
        ErrorClass::Busy,
        ErrorClass::Operation,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Disconnected => "Disconnected",
            ErrorClass::SessionInvalid => "SessionInvalid",
            ErrorClass::RetryOnly => "RetryOnly",
            ErrorClass::Pin => "Pin",
            ErrorClass::KeyNotFound => "KeyNotFound",
            ErrorClass::Busy => "Busy",
            ErrorClass::Operation => "Operation",
        }
    }

    /// Whether a caller may usefully try the same request again.
    pub fn is_retriable(self) -> bool {
        matches!(
            self,
            ErrorClass::Disconnected
                | ErrorClass::SessionInvalid
                | ErrorClass::RetryOnly
                | ErrorClass::Busy
        )
    }
}

/// Standard codes that mean the device or the library state is gone: reinitialize.
pub const DISCONNECT_STANDARD: &[CK_RV] = &[
    CKR_DEVICE_ERROR,
    CKR_DEVICE_REMOVED,
    CKR_TOKEN_NOT_PRESENT,
    CKR_TOKEN_NOT_RECOGNIZED,
    CKR_CRYPTOKI_NOT_INITIALIZED,
    CKR_GENERAL_ERROR,
    CKR_SLOT_ID_INVALID,
];

/// Luna network/transport codes that mean the same. Together with the standard list these
/// are the 15 disconnect codes of the seed design. Deliberately absent:
/// `CKR_USER_NOT_AUTHORIZED` and context/authorization codes — reloading the library does not
/// fix an authorization problem.
pub const DISCONNECT_LUNA: &[CK_RV] = &[
    luna::CKR_UNABLE_TO_CONNECT,
    luna::CKR_TIMEOUT,
    luna::CKR_DEVICE_TIMEOUT,
    luna::CKR_HSM_RESTART_REQUIRED,
    luna::CKR_STC_NO_CHANNEL,
    luna::CKR_STC_NO_SESSION_KEY,
    luna::CKR_STC_RESPONSE_BAD_MAC,
    luna::CKR_STC_RESPONSE_DECRYPT_ERROR,
];

/// ProtectToolkit transport codes (not Luna: the same numbers mean other things there).
pub const DISCONNECT_PTK: &[CK_RV] = &[
    ptk::CKR_SMS_ERROR,
    ptk::CKR_DEVICE_RESET,
    ptk::CKR_NO_SESSION_KEYS,
];

/// The session is gone, the module is fine: reopen and log in again.
pub const SESSION_STANDARD: &[CK_RV] = &[
    CKR_SESSION_HANDLE_INVALID,
    CKR_SESSION_CLOSED,
    CKR_USER_NOT_LOGGED_IN,
];

pub const SESSION_LUNA: &[CK_RV] = &[
    luna::CKR_STC_SESSION_INVALID,
    luna::CKR_SESSION_HANDLE_INVALID_FOR_FP,
    luna::CKR_SESSION_ID_INVALID,
    luna::CKR_SESSION_ID_EXPIRED,
];

/// Retry the call as is; no local recovery.
pub const RETRY_ONLY_LUNA: &[CK_RV] = &[luna::CKR_CONTAINER_HANDLE_INVALID];

/// PIN and login failures: never retried (a retry burns an attempt), never a disconnect.
pub const PIN_STANDARD: &[CK_RV] = &[
    CKR_PIN_INCORRECT,
    CKR_PIN_INVALID,
    CKR_PIN_LEN_RANGE,
    CKR_PIN_EXPIRED,
    CKR_PIN_LOCKED,
    CKR_USER_PIN_NOT_INITIALIZED,
];

pub const PIN_LUNA: &[CK_RV] = &[
    luna::CKR_USER_LOCKED_OUT,
    luna::CKR_SO_LOGIN_FAILURE_THRESHOLD,
];

pub const KEY_NOT_FOUND_STANDARD: &[CK_RV] = &[CKR_OBJECT_HANDLE_INVALID, CKR_KEY_HANDLE_INVALID];

pub const BUSY_LUNA: &[CK_RV] = &[luna::CKR_AGAIN, luna::CKR_BUSY];

/// Classify a return value for a module of the given family.
pub fn classify(rv: CK_RV, family: Family) -> ErrorClass {
    let is = |list: &[CK_RV]| list.contains(&rv);
    if is(DISCONNECT_STANDARD) {
        return ErrorClass::Disconnected;
    }
    if is(SESSION_STANDARD) {
        return ErrorClass::SessionInvalid;
    }
    if is(PIN_STANDARD) {
        return ErrorClass::Pin;
    }
    if is(KEY_NOT_FOUND_STANDARD) {
        return ErrorClass::KeyNotFound;
    }
    match family {
        Family::Luna => {
            if is(DISCONNECT_LUNA) {
                ErrorClass::Disconnected
            } else if is(SESSION_LUNA) {
                ErrorClass::SessionInvalid
            } else if is(RETRY_ONLY_LUNA) {
                ErrorClass::RetryOnly
            } else if is(PIN_LUNA) {
                ErrorClass::Pin
            } else if is(BUSY_LUNA) {
                ErrorClass::Busy
            } else {
                ErrorClass::Operation
            }
        }
        Family::ProtectToolkit if is(DISCONNECT_PTK) => ErrorClass::Disconnected,
        _ => ErrorClass::Operation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifteen_disconnect_codes_for_luna() {
        let mut all: Vec<CK_RV> = DISCONNECT_STANDARD
            .iter()
            .chain(DISCONNECT_LUNA)
            .copied()
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 15, "the seed design's 15 disconnect codes");
        for rv in all {
            assert_eq!(
                classify(rv, Family::Luna),
                ErrorClass::Disconnected,
                "0x{rv:08X}"
            );
        }
    }

    #[test]
    fn lists_do_not_overlap() {
        let lists: [(&str, &[CK_RV]); 9] = [
            ("disconnect", DISCONNECT_STANDARD),
            ("disconnect-luna", DISCONNECT_LUNA),
            ("session", SESSION_STANDARD),
            ("session-luna", SESSION_LUNA),
            ("retry", RETRY_ONLY_LUNA),
            ("pin", PIN_STANDARD),
            ("pin-luna", PIN_LUNA),
            ("key", KEY_NOT_FOUND_STANDARD),
            ("busy", BUSY_LUNA),
        ];
        for (i, (a, la)) in lists.iter().enumerate() {
            for (b, lb) in lists.iter().skip(i + 1) {
                for rv in la.iter() {
                    assert!(!lb.contains(rv), "0x{rv:08X} is in both {a} and {b}");
                }
            }
        }
    }

    #[test]
    fn vendor_codes_depend_on_family() {
        // 0x8000001F is Luna's CKR_UNABLE_TO_CONNECT; for an unknown module it is just a
        // vendor code and must not trigger a reinitialize.
        assert_eq!(
            classify(luna::CKR_UNABLE_TO_CONNECT, Family::Luna),
            ErrorClass::Disconnected
        );
        assert_eq!(
            classify(luna::CKR_UNABLE_TO_CONNECT, Family::Generic),
            ErrorClass::Operation
        );
        // 0x80000386 is ProtectToolkit's CKR_DEVICE_RESET; Luna has no such code.
        assert_eq!(
            classify(ptk::CKR_DEVICE_RESET, Family::ProtectToolkit),
            ErrorClass::Disconnected
        );
        assert_eq!(
            classify(ptk::CKR_DEVICE_RESET, Family::Luna),
            ErrorClass::Operation
        );
    }

    #[test]
    fn authorization_is_not_a_disconnect() {
        assert_eq!(
            classify(luna::CKR_USER_NOT_AUTHORIZED, Family::Luna),
            ErrorClass::Operation
        );
        assert_eq!(classify(CKR_PIN_INCORRECT, Family::Luna), ErrorClass::Pin);
        assert_eq!(classify(CKR_PIN_LOCKED, Family::SoftHsm), ErrorClass::Pin);
        assert_eq!(
            classify(luna::CKR_USER_LOCKED_OUT, Family::Luna),
            ErrorClass::Pin
        );
    }

    #[test]
    fn session_and_retry_classes() {
        assert_eq!(
            classify(CKR_SESSION_HANDLE_INVALID, Family::Kryoptic),
            ErrorClass::SessionInvalid
        );
        assert_eq!(
            classify(CKR_USER_NOT_LOGGED_IN, Family::Generic),
            ErrorClass::SessionInvalid
        );
        assert_eq!(
            classify(luna::CKR_CONTAINER_HANDLE_INVALID, Family::Luna),
            ErrorClass::RetryOnly
        );
        assert_eq!(classify(luna::CKR_AGAIN, Family::Luna), ErrorClass::Busy);
        assert_eq!(
            classify(CKR_OBJECT_HANDLE_INVALID, Family::Generic),
            ErrorClass::KeyNotFound
        );
        assert_eq!(
            classify(CKR_MECHANISM_INVALID, Family::Luna),
            ErrorClass::Operation
        );
        assert_eq!(
            classify(CKR_KEY_EXHAUSTED, Family::Luna),
            ErrorClass::Operation
        );
    }
}
