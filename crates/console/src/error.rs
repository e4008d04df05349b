//! The one error type that crosses IPC (and `hsmc`'s exit codes): a stable code, a message
//! that names what happened, details, a suggestion of what to do, and the PKCS#11 function
//! and return value when one caused it.

use std::collections::BTreeMap;

use serde::Serialize;
use ts_rs::TS;

use crate::i18n::{Lang, Text};
use crate::text;

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
    /// A key past its usage limit (Luna's `CKA_USAGE_LIMIT`).
    KeyUsageExhausted,
    /// The time-stamp authority did not answer, or its answer did not check.
    TimestampFailed,
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
    /// English (what `hsmc` and the logs show).
    pub message: String,
    pub details: Option<String>,
    pub suggestion: Option<String>,
    pub pkcs11: Option<Box<Pkcs11Error>>,
    /// The message and suggestion as catalog keys with their arguments, so the UI can show
    /// them in the officer's language (absent for texts that have no key yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub i18n: Option<Box<ErrorText>>,
}

/// An error's message and suggestion as catalog keys (see [`crate::i18n`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
pub struct ErrorText {
    pub message: Option<String>,
    pub suggestion: Option<String>,
    /// The placeholders of both.
    pub args: BTreeMap<String, String>,
}

/// What an error's message or suggestion is made from: plain English, or a [`Text`] with a
/// catalog key (`text!(…)`).
pub enum Message {
    Plain(String),
    Keyed(Text),
}

impl From<String> for Message {
    fn from(s: String) -> Self {
        Message::Plain(s)
    }
}
impl From<&String> for Message {
    fn from(s: &String) -> Self {
        Message::Plain(s.clone())
    }
}
impl From<&str> for Message {
    fn from(s: &str) -> Self {
        Message::Plain(s.to_string())
    }
}
impl From<Text> for Message {
    fn from(t: Text) -> Self {
        Message::Keyed(t)
    }
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<Message>) -> Self {
        let mut e = ApiError {
            code,
            message: String::new(),
            details: None,
            suggestion: None,
            pkcs11: None,
            i18n: None,
        };
        match message.into() {
            Message::Plain(s) => e.message = s,
            Message::Keyed(t) => {
                e.message = t.text;
                e.i18n = Some(Box::new(ErrorText {
                    message: Some(t.key),
                    suggestion: None,
                    args: t.args,
                }));
            }
        }
        e
    }
    pub fn details(mut self, d: impl Into<String>) -> Self {
        self.details = Some(d.into());
        self
    }
    pub fn suggest(mut self, s: impl Into<Message>) -> Self {
        match s.into() {
            Message::Plain(s) => self.suggestion = Some(s),
            Message::Keyed(t) => {
                self.suggestion = Some(t.text);
                let i = self.i18n.get_or_insert_with(Box::default);
                i.suggestion = Some(t.key);
                i.args.extend(t.args);
            }
        }
        self
    }
    pub fn invalid(message: impl Into<Message>) -> Self {
        ApiError::new(ErrorCode::InvalidInput, message)
    }
    /// The arguments of the message and suggestion, nested texts translated into `lang`.
    fn i18n_args(&self, lang: Lang) -> Option<std::collections::BTreeMap<String, String>> {
        Some(crate::i18n::with_nested(lang, &self.i18n.as_ref()?.args))
    }
    /// The message in `lang` (English when it has no key or the catalog lacks it).
    pub fn message_in(&self, lang: Lang) -> String {
        self.i18n
            .as_ref()
            .and_then(|i| i.message.as_deref())
            .and_then(|k| crate::i18n::translate(lang, k, &self.i18n_args(lang)?))
            .unwrap_or_else(|| self.message.clone())
    }
    /// The suggestion in `lang`, likewise.
    pub fn suggestion_in(&self, lang: Lang) -> Option<String> {
        let english = self.suggestion.clone()?;
        Some(
            self.i18n
                .as_ref()
                .and_then(|i| i.suggestion.as_deref())
                .and_then(|k| crate::i18n::translate(lang, k, &self.i18n_args(lang)?))
                .unwrap_or(english),
        )
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
            p11::Error::Load { path, reason } => ApiError::new(ErrorCode::ModuleLoadFailed, text!("errors.module_load_failed", "The module {{path}} could not be loaded.", path = path))
                .details(reason.clone())
                .suggest(text!("errors.module_load_failed_hint", "Choose the vendor's PKCS#11 library file (a .so), e.g. /usr/safenet/lunaclient/lib/libCryptoki2_64.so for Luna.")),
            p11::Error::NotPkcs11 { path } => ApiError::new(ErrorCode::NotPkcs11, text!("errors.not_pkcs11", "{{path}} is not a PKCS#11 module.", path = path))
                .details("It exports neither C_GetInterface nor C_GetFunctionList.")
                .suggest(text!("errors.not_pkcs11_hint", "Choose the vendor's PKCS#11 library rather than another shared library.")),
            p11::Error::Malformed { function, detail } => ApiError::new(ErrorCode::ModuleMisbehaved, text!("errors.module_malformed", "The module answered {{function}} with data that cannot be right.", function = function))
                .details(detail.clone())
                .suggest(text!("errors.module_malformed_hint", "Check the vendor client's version and logs; the console stopped rather than guess.")),
            p11::Error::NotSupported { function } => ApiError::new(ErrorCode::Unsupported, text!("errors.function_not_offered", "{{function}} is not offered by this module.", function = function)),
            p11::Error::InvalidArgument(m) => ApiError::invalid(m.clone()),
            p11::Error::Ck(ck) => {
                let base = |code: ErrorCode, msg: Text| ApiError { pkcs11: Some(Box::new(pkcs11(ck))), ..ApiError::new(code, msg) };
                match (ck.class, ck.rv) {
                    (_, CKR_PIN_INCORRECT) => base(ErrorCode::PinIncorrect, text!("errors.pin_incorrect", "The PIN is incorrect."))
                        .suggest(text!("errors.pin_incorrect_hint", "Check the PIN and try again. The console never retries a PIN by itself.")),
                    (_, CKR_PIN_LOCKED) => base(ErrorCode::PinLocked, text!("errors.pin_locked", "The PIN is locked after too many wrong attempts."))
                        .suggest(text!("errors.pin_locked_hint", "The security officer must unlock or reset the PIN.")),
                    (_, CKR_PIN_INVALID) | (_, CKR_PIN_LEN_RANGE) => base(ErrorCode::PinInvalid, text!("errors.pin_invalid", "The PIN does not have an acceptable form or length.")),
                    (_, CKR_PIN_EXPIRED) => base(ErrorCode::PinExpired, text!("errors.pin_expired", "The token wants the PIN changed before it does anything else (CKR_PIN_EXPIRED)."))
                        .details("A Luna partition with policy 21 (\u{201c}Force user PIN change after set/reset\u{201d}) asks this after the security officer set or reset the PIN.")
                        .suggest(text!("errors.pin_expired_hint", "Change the PIN now: Partition → Change my PIN…, or `hsmc pin change`.")),
                    (_, luna::CKR_USER_NOT_AUTHORIZED) if ck.name == "CKR_USER_NOT_AUTHORIZED" => base(ErrorCode::NotAuthorized, text!("errors.user_not_authorized", "The role logged in is not allowed to do this (Luna's CKR_USER_NOT_AUTHORIZED)."))
                        .suggest(text!("errors.user_not_authorized_hint", "Log in as the Crypto Officer, or ask the partition's security officer about its roles and policies.")),
                    (_, CKR_USER_ANOTHER_ALREADY_LOGGED_IN) => base(ErrorCode::NotAuthorized, text!("errors.another_role_logged_in", "Another role is logged in to this token; one application logs in as one role at a time."))
                        .suggest(text!("errors.another_role_logged_in_hint", "Log out first, then log in as the other role.")),
                    (_, CKR_ATTRIBUTE_READ_ONLY) => base(ErrorCode::NotAuthorized, text!("errors.attribute_read_only", "The token does not allow changing this attribute (CKR_ATTRIBUTE_READ_ONLY)."))
                        .details("The object is not modifiable (CKA_MODIFIABLE false), or PKCS#11 fixes the attribute once set.")
                        .suggest(text!("errors.attribute_read_only_hint", "Make a new object with the value you want instead.")),
                    (_, CKR_ACTION_PROHIBITED) => base(ErrorCode::NotAuthorized, text!("errors.action_prohibited", "The token prohibits this ({{name}}).", name = ck.name))
                        .details("The object's attributes or the partition's policies forbid the change (on Luna: partition policy 11, \u{201c}Allow changing key attributes\u{201d}, among others).")
                        .suggest(text!("errors.action_prohibited_hint", "Check the object's CKA_MODIFIABLE and the partition's policies.")),
                    (p11::ErrorClass::Pin, _) => base(ErrorCode::PinLocked, text!("errors.login_refused", "Login refused: {{name}}.", name = ck.name))
                        .suggest(text!("errors.login_refused_hint", "Contact the partition's security officer.")),
                    (p11::ErrorClass::KeyNotFound, CKR_OBJECT_HANDLE_INVALID | CKR_KEY_HANDLE_INVALID) => base(ErrorCode::KeyNotFound, text!("errors.handle_gone", "No object is at that handle any more: it was deleted, or the HSM reconnected and numbered its objects anew."))
                        .suggest(text!("errors.handle_gone_hint", "Refresh the key list; scripts should select keys by id:HEX, which survives reconnections.")),
                    (p11::ErrorClass::KeyNotFound, _) => base(ErrorCode::KeyNotFound, text!("errors.object_gone", "The key or object no longer exists on the token."))
                        .suggest(text!("errors.refresh_keys", "Refresh the key list.")),
                    (_, CKR_USER_NOT_LOGGED_IN) => base(ErrorCode::NotLoggedIn, text!("errors.not_logged_in", "Log in to the partition first.")),
                    _ if ck.name == "CKR_KEY_NOT_ACTIVE" => base(ErrorCode::KeyUsageExhausted, text!("errors.key_usage_exhausted", "The key has used all the uses its usage limit (CKA_USAGE_LIMIT) allows; the HSM refuses it now."))
                        .suggest(text!("errors.key_usage_exhausted_hint", "A security officer or the crypto officer can raise the limit (Keys → Usage limit…, or hsmc keys limit).")),
                    (_, CKR_MECHANISM_INVALID) | (_, CKR_MECHANISM_PARAM_INVALID) | (_, CKR_KEY_TYPE_INCONSISTENT) => {
                        base(ErrorCode::InvalidAlgorithm, text!("errors.algorithm_refused", "The token does not accept this algorithm here ({{name}}).", name = ck.name))
                            .suggest(text!("errors.algorithm_refused_hint", "Check the partition's mechanism list."))
                    }
                    (p11::ErrorClass::Disconnected, _) => base(ErrorCode::HsmDisconnected, text!("errors.hsm_connection_failed", "The HSM connection failed ({{name}}).", name = ck.name))
                        .suggest(text!("errors.hsm_connection_failed_hint", "Check the HSM and its network; the console reconnects automatically.")),
                    (p11::ErrorClass::Busy, _) => base(ErrorCode::Busy, text!("errors.hsm_busy", "The HSM is busy.")).suggest(text!("errors.try_again_soon", "Try again in a moment.")),
                    _ => base(ErrorCode::HsmError, text!("errors.hsm_refused", "The HSM refused the operation: {{name}} in {{function}}.", name = ck.name, function = ck.function)),
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
                    a = a.suggest(text!("errors.try_again", "Try again."));
                }
                a
            }
            H::CircuitOpen { retry_after } => ApiError::new(
                ErrorCode::HsmUnavailable,
                text!(
                    "errors.circuit_open",
                    "The HSM is failing repeatedly; calls are paused."
                ),
            )
            .details(format!(
                "The console will try again in {} s.",
                retry_after.as_secs().max(1)
            ))
            .suggest(text!(
                "errors.circuit_open_hint",
                "Check the HSM's health and network."
            )),
            H::Busy { size, waiting } => ApiError::new(
                ErrorCode::Busy,
                text!(
                    "errors.sessions_busy",
                    "All {{size}} sessions are busy and {{waiting}} requests are waiting.",
                    size = size,
                    waiting = waiting
                ),
            )
            .suggest(text!("errors.try_again_soon", "Try again in a moment.")),
            H::Timeout(d) => ApiError::new(
                ErrorCode::Busy,
                text!(
                    "errors.session_timeout",
                    "No HSM session became free within {{seconds}} s.",
                    seconds = d.as_secs()
                ),
            ),
            H::NotLoggedIn => ApiError::new(
                ErrorCode::NotLoggedIn,
                text!("errors.not_logged_in", "Log in to the partition first."),
            ),
            H::KeyNotFound(m) => ApiError::new(
                ErrorCode::KeyNotFound,
                text!("errors.key_not_found", "Key not found: {{what}}.", what = m),
            )
            .suggest(text!(
                "errors.key_not_found_hint",
                "Select the key by label:NAME or id:HEX."
            )),
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
            A::Cancelled => ApiError::new(ErrorCode::Cancelled, text!("errors.cancelled", "Cancelled.")),
            A::Invalid(m) => ApiError::invalid(m),
            e @ A::Truncated { .. } => ApiError::new(ErrorCode::AuditBroken, format!("The audit trail cannot record this: {e}."))
                .suggest("The action was refused because it could not be audited. Verify the trail (Audit → Verify, or hsmc audit verify) to see which records are missing, then restore the audit store from a backup or choose a new store in Settings."),
            other => ApiError::new(ErrorCode::AuditUnavailable, text!("errors.audit_cannot_record", "The audit trail cannot record this: {{error}}", error = other))
                .suggest(text!("errors.audit_cannot_record_hint", "The action was refused because it could not be audited. Log in to the partition that holds the audit key, and check the audit store.")),
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
