//! The one error type that crosses IPC (and `hsmc`'s exit codes): a stable code, a message
//! that names what happened, details, a suggestion of what to do, and the PKCS#11 function
//! and return value when one caused it.

use serde::Serialize;
use ts_rs::TS;

/// Stable error codes the UI and scripts can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    KeyNotFound,
    HsmDisconnected,
    HsmUnavailable,
    HsmError,
    PinIncorrect,
    PinLocked,
    PinInvalid,
    /// The token wants the PIN changed before anything else (`CKR_PIN_EXPIRED`).
    PinExpired,
    NotLoggedIn,
    /// The role logged in may not do this (the console's rules or the token's answer).
    NotAuthorized,
    InvalidAlgorithm,
    InvalidInput,
    SignatureInvalid,
    Busy,
    AuditUnavailable,
    AuditBroken,
    ModuleLoadFailed,
    NotPkcs11,
    ModuleMisbehaved,
    TokenMisbehaved,
    Unsupported,
    PartitionNotFound,
    Io,
    Cancelled,
    Internal,
}

// One spelling per code: `PIN_INCORRECT` in IPC, `hsmc` text and JSON, and audit records.
hsm::wire_display!(ErrorCode);

/// The PKCS#11 call behind an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct Pkcs11Error {
    pub function: String,
    #[ts(type = "number")]
    pub code: u64,
    pub name: String,
    pub class: ErrorClass,
}

/// How the console recovers from a PKCS#11 error (see `p11::ErrorClass`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
pub enum ErrorClass {
    Disconnected,
    SessionInvalid,
    RetryOnly,
    Pin,
    KeyNotFound,
    Busy,
    Operation,
}

impl From<p11::ErrorClass> for ErrorClass {
    fn from(c: p11::ErrorClass) -> Self {
        match c {
            p11::ErrorClass::Disconnected => ErrorClass::Disconnected,
            p11::ErrorClass::SessionInvalid => ErrorClass::SessionInvalid,
            p11::ErrorClass::RetryOnly => ErrorClass::RetryOnly,
            p11::ErrorClass::Pin => ErrorClass::Pin,
            p11::ErrorClass::KeyNotFound => ErrorClass::KeyNotFound,
            p11::ErrorClass::Busy => ErrorClass::Busy,
            p11::ErrorClass::Operation => ErrorClass::Operation,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Option<String>,
    pub suggestion: Option<String>,
    pub pkcs11: Option<Box<Pkcs11Error>>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            details: None,
            suggestion: None,
            pkcs11: None,
        }
    }
    pub fn details(mut self, d: impl Into<String>) -> Self {
        self.details = Some(d.into());
        self
    }
    pub fn suggest(mut self, s: impl Into<String>) -> Self {
        self.suggestion = Some(s.into());
        self
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::InvalidInput, message)
    }
    pub fn io(what: &str, e: &std::io::Error) -> Self {
        ApiError::new(ErrorCode::Io, format!("{what}: {e}"))
    }

    /// `hsmc` exit codes: 1 failure, 2 usage, 3 verification failed, 4 HSM unavailable,
    /// 5 audit unavailable.
    pub fn exit_code(&self) -> i32 {
        match self.code {
            ErrorCode::InvalidInput | ErrorCode::InvalidAlgorithm => 2,
            ErrorCode::SignatureInvalid | ErrorCode::AuditBroken => 3,
            ErrorCode::HsmDisconnected
            | ErrorCode::HsmUnavailable
            | ErrorCode::Busy
            | ErrorCode::ModuleLoadFailed
            | ErrorCode::NotPkcs11 => 4,
            ErrorCode::AuditUnavailable => 5,
            _ => 1,
        }
    }
}

fn pkcs11(e: &p11::CkError) -> Pkcs11Error {
    Pkcs11Error {
        function: e.function.to_string(),
        code: e.rv,
        name: e.name.clone(),
        class: e.class.into(),
    }
}

impl From<p11::Error> for ApiError {
    fn from(e: p11::Error) -> Self {
        use p11::names::luna;
        use p11::sys::*;
        match &e {
            p11::Error::Load { path, reason } => ApiError::new(ErrorCode::ModuleLoadFailed, format!("The module {path} could not be loaded."))
                .details(reason.clone())
                .suggest("Choose the vendor's PKCS#11 library file (a .so), e.g. /usr/safenet/lunaclient/lib/libCryptoki2_64.so for Luna."),
            p11::Error::NotPkcs11 { path } => ApiError::new(ErrorCode::NotPkcs11, format!("{path} is not a PKCS#11 module."))
                .details("It exports neither C_GetInterface nor C_GetFunctionList.")
                .suggest("Choose the vendor's PKCS#11 library rather than another shared library."),
            p11::Error::Malformed { function, detail } => ApiError::new(ErrorCode::ModuleMisbehaved, format!("The module answered {function} with data that cannot be right."))
                .details(detail.clone())
                .suggest("Check the vendor client's version and logs; the console stopped rather than guess."),
            p11::Error::NotSupported { function } => ApiError::new(ErrorCode::Unsupported, format!("{function} is not offered by this module.")),
            p11::Error::InvalidArgument(m) => ApiError::invalid(m.clone()),
            p11::Error::Ck(ck) => {
                let base = |code: ErrorCode, msg: String| ApiError { code, message: msg, details: None, suggestion: None, pkcs11: Some(Box::new(pkcs11(ck))) };
                match (ck.class, ck.rv) {
                    (_, CKR_PIN_INCORRECT) => base(ErrorCode::PinIncorrect, "The PIN is incorrect.".into())
                        .suggest("Check the PIN and try again. The console never retries a PIN by itself."),
                    (_, CKR_PIN_LOCKED) => base(ErrorCode::PinLocked, "The PIN is locked after too many wrong attempts.".into())
                        .suggest("The security officer must unlock or reset the PIN."),
                    (_, CKR_PIN_INVALID) | (_, CKR_PIN_LEN_RANGE) => base(ErrorCode::PinInvalid, "The PIN does not have an acceptable form or length.".into()),
                    (_, CKR_PIN_EXPIRED) => base(ErrorCode::PinExpired, "The token wants the PIN changed before it does anything else (CKR_PIN_EXPIRED).".into())
                        .details("A Luna partition with policy 21 (\u{201c}Force user PIN change after set/reset\u{201d}) asks this after the security officer set or reset the PIN.")
                        .suggest("Change the PIN now: Partition \u{2192} Change my PIN\u{2026}, or `hsmc pin change`."),
                    (_, luna::CKR_USER_NOT_AUTHORIZED) if ck.name == "CKR_USER_NOT_AUTHORIZED" => base(ErrorCode::NotAuthorized, "The role logged in is not allowed to do this (Luna's CKR_USER_NOT_AUTHORIZED).".into())
                        .suggest("Log in as the Crypto Officer, or ask the partition's security officer about its roles and policies."),
                    (_, CKR_USER_ANOTHER_ALREADY_LOGGED_IN) => base(ErrorCode::NotAuthorized, "Another role is logged in to this token; one application logs in as one role at a time.".into())
                        .suggest("Log out first, then log in as the other role."),
                    (_, CKR_ATTRIBUTE_READ_ONLY) => base(ErrorCode::NotAuthorized, "The token does not allow changing this attribute (CKR_ATTRIBUTE_READ_ONLY).".into())
                        .details("The object is not modifiable (CKA_MODIFIABLE false), or PKCS#11 fixes the attribute once set.")
                        .suggest("Make a new object with the value you want instead."),
                    (_, CKR_ACTION_PROHIBITED) => base(ErrorCode::NotAuthorized, format!("The token prohibits this ({}).", ck.name))
                        .details("The object's attributes or the partition's policies forbid the change (on Luna: partition policy 11, \u{201c}Allow changing key attributes\u{201d}, among others).")
                        .suggest("Check the object's CKA_MODIFIABLE and the partition's policies."),
                    (p11::ErrorClass::Pin, _) => base(ErrorCode::PinLocked, format!("Login refused: {}.", ck.name))
                        .suggest("Contact the partition's security officer."),
                    (p11::ErrorClass::KeyNotFound, CKR_OBJECT_HANDLE_INVALID | CKR_KEY_HANDLE_INVALID) => base(ErrorCode::KeyNotFound, "No object is at that handle any more: it was deleted, or the HSM reconnected and numbered its objects anew.".into())
                        .suggest("Refresh the key list; scripts should select keys by id:HEX, which survives reconnections."),
                    (p11::ErrorClass::KeyNotFound, _) => base(ErrorCode::KeyNotFound, "The key or object no longer exists on the token.".into())
                        .suggest("Refresh the key list."),
                    (_, CKR_USER_NOT_LOGGED_IN) => base(ErrorCode::NotLoggedIn, "Log in to the partition first.".into()),
                    (_, CKR_MECHANISM_INVALID) | (_, CKR_MECHANISM_PARAM_INVALID) | (_, CKR_KEY_TYPE_INCONSISTENT) => {
                        base(ErrorCode::InvalidAlgorithm, format!("The token does not accept this algorithm here ({}).", ck.name))
                            .suggest("Check the partition's mechanism list.")
                    }
                    (p11::ErrorClass::Disconnected, _) => base(ErrorCode::HsmDisconnected, format!("The HSM connection failed ({}).", ck.name))
                        .suggest("Check the HSM and its network; the console reconnects automatically."),
                    (p11::ErrorClass::Busy, _) => base(ErrorCode::Busy, "The HSM is busy.".into()).suggest("Try again in a moment."),
                    _ => base(ErrorCode::HsmError, format!("The HSM refused the operation: {} in {}.", ck.name, ck.function)),
                }
            }
        }
    }
}

impl From<hsm::HsmError> for ApiError {
    fn from(e: hsm::HsmError) -> Self {
        use hsm::HsmError as H;
        match e {
            H::P11(e) => e.into(),
            H::Disconnected { error, recovered } => {
                let mut a: ApiError = error.into();
                a.code = ErrorCode::HsmDisconnected;
                if recovered {
                    a.details = Some(
                        "The console reconnected to the HSM; nothing was done on this attempt."
                            .into(),
                    );
                    a.suggestion = Some("Try again.".into());
                }
                a
            }
            H::CircuitOpen { retry_after } => ApiError::new(
                ErrorCode::HsmUnavailable,
                "The HSM is failing repeatedly; calls are paused.",
            )
            .details(format!(
                "The console will try again in {} s.",
                retry_after.as_secs().max(1)
            ))
            .suggest("Check the HSM's health and network."),
            H::Busy { size, waiting } => ApiError::new(
                ErrorCode::Busy,
                format!("All {size} sessions are busy and {waiting} requests are waiting."),
            )
            .suggest("Try again in a moment."),
            H::Timeout(d) => ApiError::new(
                ErrorCode::Busy,
                format!("No HSM session became free within {} s.", d.as_secs()),
            ),
            H::NotLoggedIn => {
                ApiError::new(ErrorCode::NotLoggedIn, "Log in to the partition first.")
            }
            H::KeyNotFound(m) => {
                ApiError::new(ErrorCode::KeyNotFound, format!("Key not found: {m}."))
                    .suggest("Select the key by label:NAME or id:HEX.")
            }
            H::InvalidInput(m) => ApiError::invalid(m),
            H::Unsupported(m) => ApiError::new(ErrorCode::Unsupported, m),
            H::TokenMisbehaved(m) => ApiError::new(ErrorCode::TokenMisbehaved, m),
        }
    }
}

impl From<audit::AuditError> for ApiError {
    fn from(e: audit::AuditError) -> Self {
        use audit::AuditError as A;
        match e {
            A::Cancelled => ApiError::new(ErrorCode::Cancelled, "Cancelled."),
            A::Invalid(m) => ApiError::invalid(m),
            other => ApiError::new(ErrorCode::AuditUnavailable, format!("The audit trail cannot record this: {other}"))
                .suggest("The action was refused because it could not be audited. Log in to the partition that holds the audit key, and check the audit store."),
        }
    }
}

impl From<outfile::WriteError> for ApiError {
    fn from(e: outfile::WriteError) -> Self {
        match &e {
            outfile::WriteError::Exists(_) | outfile::WriteError::NotAFile(_) => {
                ApiError::invalid(format!("{e}."))
            }
            outfile::WriteError::Io { .. } => {
                ApiError::new(ErrorCode::Io, format!("{e}.")).details("Nothing was half-written.")
            }
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_errors_name_the_problem() {
        let e: ApiError = p11::Error::Ck(p11::CkError::new(
            "C_Login",
            p11::sys::CKR_PIN_INCORRECT,
            p11::Family::Generic,
        ))
        .into();
        assert_eq!(e.code, ErrorCode::PinIncorrect);
        assert_eq!(e.pkcs11.as_ref().unwrap().name, "CKR_PIN_INCORRECT");
        assert_eq!(e.exit_code(), 1);
        let e: ApiError =
            p11::Error::Ck(p11::CkError::new("C_Sign", 0x8000_001F, p11::Family::Luna)).into();
        assert_eq!(e.code, ErrorCode::HsmDisconnected);
        assert_eq!(e.exit_code(), 4);
        let e: ApiError = audit::AuditError::KeyUnavailable("locked".into()).into();
        assert_eq!((e.code, e.exit_code()), (ErrorCode::AuditUnavailable, 5));
    }

    #[test]
    fn codes_and_classes_have_one_spelling() {
        // Text (audit records, hsmc) and JSON (IPC, --json) spell a code the same way.
        assert_eq!(ErrorCode::PinIncorrect.to_string(), "PIN_INCORRECT");
        let json = serde_json::to_value(ErrorCode::AuditUnavailable).unwrap();
        assert_eq!(json, ErrorCode::AuditUnavailable.to_string().as_str());
        for c in p11::ErrorClass::ALL {
            assert_eq!(hsm::wire::wire_name(&ErrorClass::from(c)), c.as_str());
        }
    }

    #[test]
    fn serializes_for_the_ui() {
        let e = ApiError::new(ErrorCode::KeyNotFound, "gone").suggest("refresh");
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["code"], "KEY_NOT_FOUND");
        assert_eq!(v["suggestion"], "refresh");
    }
}
