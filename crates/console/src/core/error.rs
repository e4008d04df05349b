//! The one error type that crosses IPC (and `hsmc`'s exit codes): a stable code, a message
//! that names what happened, details, a suggestion of what to do, and the PKCS#11 function
//! and return value when one caused it.

use std::collections::BTreeMap;

use serde::Serialize;
use ts_rs::TS;

use signing::input::ChangeSeen;
use signing::SignError;

use crate::core::i18n::{Lang, Text};
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
    /// A file to be signed is no longer the one that was hashed (rewritten, truncated,
    /// replaced): refused before it was signed, or its signatures removed.
    FileChanged,
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

/// An error's message and suggestion as catalog keys (see [`crate::core::i18n`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
pub struct ErrorText {
    pub message: Option<String>,
    pub suggestion: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub details: Option<String>,
    /// The placeholders of all three.
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
                    details: None,
                    args: t.args,
                }));
            }
        }
        e
    }
    /// More on what happened (plain, or keyed for the officer's language).
    pub fn details(mut self, d: impl Into<Message>) -> Self {
        let (english, key) = self.keyed(d.into());
        self.details = Some(english);
        if let Some(k) = key {
            self.i18n.get_or_insert_with(Box::default).details = Some(k);
        }
        self
    }
    /// What the officer can do about it.
    pub fn suggest(mut self, s: impl Into<Message>) -> Self {
        let (english, key) = self.keyed(s.into());
        self.suggestion = Some(english);
        if let Some(k) = key {
            self.i18n.get_or_insert_with(Box::default).suggestion = Some(k);
        }
        self
    }
    /// A message's English and key; its arguments join the error's.
    fn keyed(&mut self, m: Message) -> (String, Option<String>) {
        match m {
            Message::Plain(s) => (s, None),
            Message::Keyed(t) => {
                let i = self.i18n.get_or_insert_with(Box::default);
                i.args.extend(t.args);
                (t.text, Some(t.key))
            }
        }
    }
    pub fn invalid(message: impl Into<Message>) -> Self {
        ApiError::new(ErrorCode::InvalidInput, message)
    }
    /// This refusal as `hsm`'s, for a check made inside a pool job: the message's key and
    /// arguments travel along (a plain message stays plain).
    pub fn into_refused(self) -> hsm::HsmError {
        match self.i18n.and_then(|i| Some((i.message?, i.args))) {
            Some((key, args)) => hsm::HsmError::Refused(hsm::Text {
                key,
                args: args.into_iter().collect(),
                text: self.message,
            }),
            None => hsm::HsmError::InvalidInput(self.message),
        }
    }
    /// The arguments of the message and suggestion, nested texts translated into `lang`.
    fn i18n_args(&self, lang: Lang) -> Option<std::collections::BTreeMap<String, String>> {
        Some(crate::core::i18n::with_nested(
            lang,
            &self.i18n.as_ref()?.args,
        ))
    }
    /// The message in `lang` (English when it has no key or the catalog lacks it).
    pub fn message_in(&self, lang: Lang) -> String {
        self.part_in(lang, &self.message, |i| i.message.as_deref())
            .unwrap_or_else(|| self.message.clone())
    }
    /// The suggestion in `lang`, likewise.
    pub fn suggestion_in(&self, lang: Lang) -> Option<String> {
        self.part_in(lang, self.suggestion.as_ref()?, |i| i.suggestion.as_deref())
    }
    /// The details in `lang`, likewise.
    pub fn details_in(&self, lang: Lang) -> Option<String> {
        self.part_in(lang, self.details.as_ref()?, |i| i.details.as_deref())
    }
    fn part_in(
        &self,
        lang: Lang,
        english: &str,
        key: impl Fn(&ErrorText) -> Option<&str>,
    ) -> Option<String> {
        Some(
            self.i18n
                .as_deref()
                .and_then(key)
                .and_then(|k| crate::core::i18n::translate(lang, k, &self.i18n_args(lang)?))
                .unwrap_or_else(|| english.to_string()),
        )
    }
    /// An I/O error: what the console was doing (a keyed text, "cannot read {{path}}") and
    /// the system's reason.
    pub fn io(what: Text, e: &std::io::Error) -> Self {
        ApiError::new(
            ErrorCode::Io,
            text!(
                "hsm.console.io_error",
                "{{what}}: {{error}}",
                what = &what,
                error = e
            )
            .nest("what", &what),
        )
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
                .details(text!("errors.not_pkcs11_details", "It exports neither C_GetInterface nor C_GetFunctionList."))
                .suggest(text!("errors.not_pkcs11_hint", "Choose the vendor's PKCS#11 library rather than another shared library.")),
            p11::Error::Malformed { function, detail } => ApiError::new(ErrorCode::ModuleMisbehaved, text!("errors.module_malformed", "The module answered {{function}} with data that cannot be right.", function = function))
                .details(detail.clone())
                .suggest(text!("errors.module_malformed_hint", "Check the vendor client's version and logs; the console stopped rather than guess.")),
            p11::Error::NotSupported { function } => ApiError::new(ErrorCode::Unsupported, text!("errors.function_not_offered", "{{function}} is not offered by this module.", function = function)),
            p11::Error::InvalidArgument(m) => ApiError::invalid(m.clone()),
            p11::Error::StaleHandle { .. } => ApiError::from(hsm::HsmError::from(e.clone())),
            p11::Error::Ck(ck) => {
                let base = |code: ErrorCode, msg: Text| ApiError { pkcs11: Some(Box::new(pkcs11(ck))), ..ApiError::new(code, msg) };
                match (ck.class, ck.rv) {
                    (_, CKR_PIN_INCORRECT) => base(ErrorCode::PinIncorrect, text!("errors.pin_incorrect", "The PIN is incorrect."))
                        .suggest(text!("errors.pin_incorrect_hint", "Check the PIN and try again. The console never retries a PIN by itself.")),
                    (_, CKR_PIN_LOCKED) => base(ErrorCode::PinLocked, text!("errors.pin_locked", "The PIN is locked after too many wrong attempts."))
                        .suggest(text!("errors.pin_locked_hint", "The security officer must unlock or reset the PIN.")),
                    (_, CKR_PIN_INVALID) | (_, CKR_PIN_LEN_RANGE) => base(ErrorCode::PinInvalid, text!("errors.pin_invalid", "The PIN does not have an acceptable form or length.")),
                    (_, CKR_PIN_EXPIRED) => base(ErrorCode::PinExpired, text!("errors.pin_expired", "The token wants the PIN changed before it does anything else (CKR_PIN_EXPIRED)."))
                        .details(text!("errors.pin_expired_details", "A Luna partition with policy 21 (“Force user PIN change after set/reset”) asks this after the security officer set or reset the PIN."))
                        .suggest(text!("errors.pin_expired_hint", "Change the PIN now: Partition → Change my PIN…, or `hsmc pin change`.")),
                    (_, luna::CKR_USER_NOT_AUTHORIZED) if ck.name == "CKR_USER_NOT_AUTHORIZED" => base(ErrorCode::NotAuthorized, text!("errors.user_not_authorized", "The role logged in is not allowed to do this (Luna's CKR_USER_NOT_AUTHORIZED)."))
                        .suggest(text!("errors.user_not_authorized_hint", "Log in as the Crypto Officer, or ask the partition's security officer about its roles and policies.")),
                    (_, CKR_USER_ANOTHER_ALREADY_LOGGED_IN) => base(ErrorCode::NotAuthorized, text!("errors.another_role_logged_in", "Another role is logged in to this token; one application logs in as one role at a time."))
                        .suggest(text!("errors.another_role_logged_in_hint", "Log out first, then log in as the other role.")),
                    (_, CKR_ATTRIBUTE_READ_ONLY) => base(ErrorCode::NotAuthorized, text!("errors.attribute_read_only", "The token does not allow changing this attribute (CKR_ATTRIBUTE_READ_ONLY)."))
                        .details(text!("errors.attribute_read_only_details", "The object is not modifiable (CKA_MODIFIABLE false), or PKCS#11 fixes the attribute once set."))
                        .suggest(text!("errors.attribute_read_only_hint", "Make a new object with the value you want instead.")),
                    (_, CKR_ACTION_PROHIBITED) => base(ErrorCode::NotAuthorized, text!("errors.action_prohibited", "The token prohibits this ({{name}}).", name = ck.name))
                        .details(text!("errors.action_prohibited_details", "The object's attributes or the partition's policies forbid the change (on Luna: partition policy 11, “Allow changing key attributes”, among others)."))
                        .suggest(text!("errors.action_prohibited_hint", "Check the object's CKA_MODIFIABLE and the partition's policies.")),
                    (_, CKR_KEY_NOT_WRAPPABLE) => base(ErrorCode::NotAuthorized, text!("errors.key_not_wrappable", "The token refused to wrap the key (CKR_KEY_NOT_WRAPPABLE)."))
                        .details(text!("errors.key_not_wrappable_details", "A key with CKA_WRAP_WITH_TRUSTED leaves the token only under a wrapping key the security officer marked trusted (CKA_TRUSTED); the token may also forbid wrapping this key at all."))
                        .suggest(text!("errors.key_not_wrappable_hint", "Wrap it under a trusted wrapping key, or ask the SO to mark the wrapping key trusted (Keys → Edit attributes… → trusted, or hsmc --so keys set KEY --set trusted=true).")),
                    (p11::ErrorClass::Pin, _) => base(ErrorCode::PinLocked, text!("errors.login_refused", "Login refused: {{name}}.", name = ck.name))
                        .suggest(text!("errors.login_refused_hint", "Contact the partition's security officer.")),
                    (p11::ErrorClass::KeyNotFound, CKR_OBJECT_HANDLE_INVALID | CKR_KEY_HANDLE_INVALID) => base(ErrorCode::KeyNotFound, text!("errors.handle_gone", "No object is at that handle any more: it was deleted, or the HSM reconnected and numbered its objects anew."))
                        .suggest(text!("errors.handle_gone_hint", "Refresh the key list; scripts should select keys by id:HEX, which survives reconnections.")),
                    (p11::ErrorClass::KeyNotFound, _) => base(ErrorCode::KeyNotFound, text!("errors.object_gone", "The key or object no longer exists on the token."))
                        .suggest(text!("errors.refresh_keys", "Refresh the key list.")),
                    (_, CKR_USER_NOT_LOGGED_IN) => base(ErrorCode::NotLoggedIn, text!("errors.not_logged_in", "Log in to the partition first.")),
                    _ if ck.name == "CKR_KEY_NOT_ACTIVE" => base(ErrorCode::KeyUsageExhausted, text!("errors.key_usage_exhausted", "The key has used all the uses its usage limit (CKA_USAGE_LIMIT) allows; the HSM refuses it now."))
                        .suggest(text!("errors.key_usage_exhausted_hint", "A security officer or the crypto officer can raise the limit (Keys → Usage limit…, or hsmc usage set KEY --limit N).")),
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
                    a = a
                        .details(text!(
                            "errors.reconnected_reply_lost",
                            "The console reconnected to the HSM; this attempt's answer was lost."
                        ))
                        .suggest(text!("errors.try_again", "Try again."));
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
            .details(text!(
                "errors.circuit_open_retry_in",
                "The console will try again in {{seconds}} s.",
                seconds = retry_after.as_secs().max(1)
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
            H::LoginLost(e) => ApiError::new(
                ErrorCode::NotLoggedIn,
                text!(
                    "errors.login_lost",
                    "After the HSM reconnected, the token refused the PIN the console had logged in with ({{rv}}); the console forgot it and will not try it again.",
                    rv = match &e {
                        p11::Error::Ck(ck) => ck.name.clone(),
                        other => other.to_string(),
                    }
                ),
            )
            .suggest(text!(
                "errors.login_lost_hint",
                "Log in again. If the PIN was just changed (here or with another tool), it is the new PIN."
            )),
            H::NotLoggedIn => ApiError::new(
                ErrorCode::NotLoggedIn,
                text!("errors.not_logged_in", "Log in to the partition first."),
            ),
            H::KeyNotFound(m) => ApiError::new(
                ErrorCode::KeyNotFound,
                {
                    let what = m;
                    text!("errors.key_not_found", "Key not found: {{what}}.", what = what)
                        .nest("what", &what)
                },
            )
            .suggest(text!(
                "errors.key_not_found_hint",
                "Select the key by label:NAME or id:HEX."
            )),
            H::InvalidInput(m) => ApiError::invalid(m),
            H::Unsupported(m) => ApiError::new(ErrorCode::Unsupported, m),
            H::Refused(m) => ApiError::invalid(m),
            H::NotSupported(m) => ApiError::new(ErrorCode::Unsupported, m),
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
            e @ A::Truncated { .. } => ApiError::new(ErrorCode::AuditBroken, text!("hsm.console.audit_truncated", "The audit trail cannot record this: {{error}}.", error = e))
                .suggest(text!("errors.audit_truncated_hint", "The action was refused because it could not be audited. Verify the trail (Audit → Verify, or hsmc audit verify) to see which records are missing, then restore the audit store from a backup or choose a new store in Settings.")),
            other => ApiError::new(ErrorCode::AuditUnavailable, text!("errors.audit_cannot_record", "The audit trail cannot record this: {{error}}", error = other))
                .suggest(text!("errors.audit_cannot_record_hint", "The action was refused because it could not be audited. Log in to the partition that holds the audit key, and check the audit store.")),
        }
    }
}

impl From<outfile::WriteError> for ApiError {
    fn from(e: outfile::WriteError) -> Self {
        match &e {
            outfile::WriteError::Exists(p) => ApiError::invalid(text!(
                "errors.already_exists_nothing_overwritten",
                "{{path}} already exists; nothing was overwritten.",
                path = p.display()
            )),
            outfile::WriteError::NotAFile(p) => ApiError::invalid(text!(
                "errors.output_not_a_file",
                "{{path}} exists and is not a regular file; nothing was written.",
                path = p.display()
            )),
            outfile::WriteError::Io { path, source } => ApiError::new(
                ErrorCode::Io,
                text!(
                    "errors.cannot_write",
                    "Cannot write {{path}}: {{reason}}.",
                    path = path.display(),
                    reason = outfile::reason(source)
                ),
            )
            .details(text!(
                "errors.nothing_half_written",
                "Nothing was half-written."
            )),
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// "PATH REASON." with the reason translatable.
pub fn input_problem(path: &str, reason: &hsm::Text) -> Text {
    text!(
        "errors.path_reason",
        "{{path}} {{reason}}.",
        path = path,
        reason = &reason.text
    )
    .nest("reason", &reason.clone())
}

/// A signing error as the officer reads it.
pub(crate) fn sign_error(e: SignError) -> ApiError {
    match e {
        SignError::Hsm(h) => h.into(),
        SignError::Cancelled => ApiError::new(
            ErrorCode::Cancelled,
            text!(
                "errors.cancelled_nothing_more_signed",
                "Cancelled; nothing more was signed."
            ),
        ),
        SignError::Exists(p) => ApiError::invalid(text!(
            "errors.already_exists_nothing_overwritten",
            "{{path}} already exists; nothing was overwritten.",
            path = p
        ))
        .suggest(text!(
            "errors.move_old_signature_away_choose",
            "Move the old signature away or choose another output folder."
        )),
        SignError::Input { path, reason } => ApiError::invalid(input_problem(&path, &reason)),
        SignError::Changed(p) => ApiError::invalid(text!(
            "errors.changed_while_being_read",
            "{{path}} changed while it was being read.",
            path = p
        ))
        .suggest(text!(
            "errors.sign_again_once_complete",
            "Sign it again once it is complete."
        )),
        SignError::ChangedSinceHashed { path, what, stage } => {
            let said = match stage {
                ChangeSeen::BeforeSigning => text!(
                    "errors.changed_before_signing",
                    "{{path}} changed after it was hashed: {{what}}. It was not signed; no signature was spent.",
                    path = &path,
                    what = &what
                ),
                ChangeSeen::WhileSigning => text!(
                    "errors.changed_during_signing",
                    "{{path}} changed while it was being signed: {{what}}. Nothing was written for it.",
                    path = &path,
                    what = &what
                ),
                ChangeSeen::AfterWriting => text!(
                    "errors.changed_while_signed",
                    "{{path}} changed while it was being signed: {{what}}. Its signatures cover the old content and were removed.",
                    path = &path,
                    what = &what
                ),
            };
            ApiError::new(ErrorCode::FileChanged, said.nest("what", &what)).suggest(text!(
                "errors.sign_when_nothing_writes",
                "Sign it again once nothing is writing to it (a build or a copy still running?)."
            ))
        }
        SignError::Write { path, reason } => ApiError::new(ErrorCode::Io, {
            text!(
                "errors.cannot_write",
                "Cannot write {{path}}: {{reason}}.",
                path = path,
                reason = &reason
            )
            .nest("reason", &reason)
        })
        .details(text!("errors.nothing_half_written", "Nothing was half-written.")),
        SignError::SelfCheck(detail) => ApiError::new(ErrorCode::SignatureInvalid, {
            text!(
                "errors.hsm_s_signature_did_not",
                "The HSM's signature did not verify in software ({{detail}}); it was not written.",
                detail = &detail
            )
            .nest("detail", &detail)
        })
        .suggest(text!(
            "errors.check_key_module_report_hsm",
            "Check the key and the module; report this to the HSM's administrator."
        )),
        SignError::Invalid(m) => ApiError::new(ErrorCode::SignatureInvalid, m),
        SignError::Unsupported(m) | SignError::Format(m) => {
            ApiError::new(ErrorCode::Unsupported, m)
        }
        SignError::Timestamp { tsa, reason } => ApiError::new(ErrorCode::TimestampFailed, {
            text!(
                "hsm.console.timestamp_failed",
                "The time-stamp authority {{tsa}}: {{reason}}. Nothing was written for this file.",
                tsa = tsa,
                reason = &reason
            )
            .nest("reason", &reason)
        })
        .suggest(text!(
            "hsm.console.timestamp_failed_hint",
            "Check the TSA's URL, CA file and timeout (Settings → Timestamp authority or hsmc sign --tsa), or sign without a time-stamp."
        )),
    }
}

/// A signing error inside a pool job, where errors are the pool's: the HSM's own stays
/// as it is, a refusal with its message (a subject the certificate builder refused…) is
/// refused with that message's key, anything else is refused as the officer reads it.
pub(crate) fn hsm_side(e: SignError) -> hsm::HsmError {
    match e {
        SignError::Hsm(h) => h,
        SignError::Format(m) | SignError::Invalid(m) | SignError::Unsupported(m) => {
            hsm::HsmError::Refused(m)
        }
        other => sign_error(other).into_refused(),
    }
}

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

    #[test]
    fn hsm_refusals_keep_their_code_and_read_in_every_language() {
        let e: ApiError = hsm::keys::KeySelector::parse("id:zz").unwrap_err().into();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert_eq!(e.message, "'zz' is not a hexadecimal key ID");
        assert_eq!(e.message_in(Lang::En), e.message);
        let zh = e.message_in(Lang::ZhHant);
        assert!(zh.contains("zz") && zh.contains("十六進位"), "{zh}");
        // A class word nested in the sentence is translated with it.
        let e: ApiError = hsm::HsmError::Refused(
            hsm::text!(
                "errors.object_has_no_public_key",
                "a {{class}} object has no public key",
                class = "certificate"
            )
            .nest(
                "class",
                &hsm::text!("errors.class_word.certificate", "certificate"),
            ),
        )
        .into();
        assert_eq!(e.message, "a certificate object has no public key");
        let zh = e.message_in(Lang::ZhHant);
        assert!(zh.starts_with("憑證物件"), "{zh}");
        let e: ApiError = hsm::HsmError::NotSupported(hsm::text!(
            "errors.key_curve_unsupported",
            "the key's curve is not one the console supports"
        ))
        .into();
        assert_eq!(e.code, ErrorCode::Unsupported);
        assert_ne!(e.message_in(Lang::ZhHans), e.message);
    }

    #[test]
    fn an_io_error_says_what_in_the_officers_language() {
        let e = ApiError::io(
            text!(
                "hsm.console.cannot_read",
                "cannot read {{path}}",
                path = "/a/b"
            ),
            &std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        assert_eq!(e.code, ErrorCode::Io);
        assert!(e.message.starts_with("cannot read /a/b: "), "{}", e.message);
        assert!(
            e.message_in(Lang::ZhHant).starts_with("無法讀取 /a/b："),
            "{}",
            e.message_in(Lang::ZhHant)
        );
        let t: ApiError = hsm::HsmError::TokenMisbehaved(hsm::text!(
            "hsm.parameter_set_unknown",
            "{{algorithm}} key without a known parameter set",
            algorithm = "ML-DSA"
        ))
        .into();
        assert_eq!(t.code, ErrorCode::TokenMisbehaved);
        assert_eq!(t.message, "ML-DSA key without a known parameter set");
        assert_eq!(t.message_in(Lang::ZhHans), "ML-DSA 密钥没有已知的参数集");
    }
}
