//! Keys that want the PIN for each signature (`CKA_ALWAYS_AUTHENTICATE`: qualified-signature
//! keys, Luna per-key authorization set-ups). After each `C_SignInit` with such a key the
//! token wants a context-specific login (`C_Login` with `CKU_CONTEXT_SPECIFIC`), which
//! authorizes that one signature. A batch with such a key says how it logs in
//! ([`ContextLogin`]), or is refused before anything is signed:
//!
//! - [`ContextLogin::PerSignature`]: the PIN is asked for each signature, from a
//!   [`ContextPins`] that can ask each time (an officer at a terminal);
//! - [`ContextLogin::OncePerBatch`]: the PIN is asked once, before hashing, and used for
//!   every signature of the batch with the officer's consent, which the trail records
//!   (`sign.consent`, with the key and the count) before the first signature.
//!
//! The PIN the officer logged in with is not reused: a key that wants a login per use
//! wants the officer to say yes at signing time. A PIN error is never tried again: it
//! stops the batch at the file it happened on (see `SignBatch::sign_each`).

use std::sync::Arc;

use audit::Event;
use p11::Pin;
use secrecy::ExposeSecret;

use super::{SignBatch, Signer};
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::sign::formats::signatures_needed;
use crate::sign::ContextLogin;
use crate::text;

/// What a PIN is asked for.
#[derive(Debug, Clone)]
pub struct ContextPinAsk {
    /// The key's label.
    pub key: String,
    /// Once per batch: the signatures the PIN is given for. `None`: one signature.
    pub signatures: Option<u64>,
    /// For one signature: the file it signs.
    pub file: Option<String>,
}

/// Asks for a PIN (`None`: none was given).
type AskPin = dyn Fn(&ContextPinAsk) -> Option<Pin> + Send + Sync;

/// Where a batch gets the PINs of its per-use keys' context logins.
#[derive(Clone)]
pub struct ContextPins {
    ask: Arc<AskPin>,
    per_signature: bool,
}

impl ContextPins {
    /// The PIN the request came with (the Sign view): for a once-per-batch consent only.
    pub fn given(pin: Pin) -> ContextPins {
        let pin = Arc::new(pin);
        ContextPins {
            ask: Arc::new(move |_| Some(p11::pin(pin.expose_secret()))),
            per_signature: false,
        }
    }

    /// A source that asks (`None`: the officer gave no PIN): for the once-per-batch PIN,
    /// and with `per_signature` (an officer at a terminal) for each signature too.
    pub fn new(
        ask: impl Fn(&ContextPinAsk) -> Option<Pin> + Send + Sync + 'static,
        per_signature: bool,
    ) -> ContextPins {
        ContextPins {
            ask: Arc::new(ask),
            per_signature,
        }
    }
}

/// How the pool jobs of one per-use key log in.
#[derive(Clone)]
pub(super) enum PerUse {
    /// The PIN given once, with the officer's consent, for every signature of the batch.
    Once(Arc<Pin>),
    /// Asked for each signature.
    Each { pins: ContextPins, label: String },
}

impl PerUse {
    pub fn mode(&self) -> ContextLogin {
        match self {
            PerUse::Once(_) => ContextLogin::OncePerBatch,
            PerUse::Each { .. } => ContextLogin::PerSignature,
        }
    }

    /// The session hook of one pool job, signing `file`.
    pub fn hook(&self, file: &str) -> p11::ContextAuth {
        match self.clone() {
            PerUse::Once(pin) => Box::new(move |_| Some(p11::pin(pin.expose_secret()))),
            PerUse::Each { pins, label } => {
                let ask = ContextPinAsk {
                    key: label,
                    signatures: None,
                    file: Some(file.to_string()),
                };
                Box::new(move |_| (pins.ask)(&ask))
            }
        }
    }
}

/// Does this key want a context login per signature?
pub(super) fn wants_context_login(s: &Signer) -> bool {
    s.key().summary.always_authenticate == Some(true)
}

/// A PIN error of a context login (or none given: the token says not logged in): it
/// stops the batch, never tried again.
pub(super) fn is_pin_error(e: &ApiError) -> bool {
    matches!(
        e.code,
        ErrorCode::PinIncorrect
            | ErrorCode::PinLocked
            | ErrorCode::PinInvalid
            | ErrorCode::NotLoggedIn
    )
}

impl SignBatch<'_> {
    /// Step 2c: how each per-use key logs in, decided (and a once-per-batch PIN asked for)
    /// before anything is hashed or signed; refused naming the key when it cannot be.
    pub(super) fn prepare_context_logins(
        &mut self,
        mode: Option<ContextLogin>,
        pins: Option<&ContextPins>,
    ) -> ApiResult<()> {
        let mut per_use = Vec::new();
        for s in &self.signers {
            if !wants_context_login(s) {
                per_use.push(None);
                continue;
            }
            let label = s.key().summary.label.clone();
            let count = signatures_needed(self.good_inputs(), &s.formats, false, false);
            if self.manifest_requested || Self::needs_certificate(s) {
                return Err(extra_signature_refused(&label));
            }
            let Some(mode) = mode else {
                return Err(consent_needed(&label, count));
            };
            per_use.push(Some(match (mode, pins) {
                (ContextLogin::PerSignature, Some(p)) if p.per_signature => PerUse::Each {
                    pins: p.clone(),
                    label,
                },
                (ContextLogin::PerSignature, _) => return Err(cannot_ask_each(&label)),
                (ContextLogin::OncePerBatch, Some(p)) => {
                    let ask = ContextPinAsk {
                        key: label.clone(),
                        signatures: Some(count),
                        file: None,
                    };
                    match (p.ask)(&ask) {
                        Some(pin) => PerUse::Once(Arc::new(pin)),
                        None => return Err(no_pin(&label)),
                    }
                }
                (ContextLogin::OncePerBatch, None) => return Err(no_pin(&label)),
            }));
        }
        self.per_use = per_use;
        Ok(())
    }

    /// Step 4b: each per-use key's consent, recorded before the first signature (refused,
    /// and nothing signed, when the trail cannot record it).
    pub(super) async fn record_consents(&self) -> ApiResult<()> {
        for (s, per_use) in self.signers.iter().zip(&self.per_use) {
            let Some(per_use) = per_use else { continue };
            let k = s.key();
            let ev = Event::new("sign.consent", "artifact")
                .resource(&k.summary.label)
                .algorithm(k.alg.name())
                .meta("partition", &self.partition.id)
                .meta("key", k.audit_json())
                .meta("context_login", per_use.mode().as_str())
                .meta("files", self.good_inputs())
                .meta(
                    "signatures",
                    signatures_needed(self.good_inputs(), &s.formats, false, false),
                )
                .meta(
                    "consent",
                    match per_use.mode() {
                        ContextLogin::OncePerBatch => {
                            "the officer gave the PIN once for every signature of this batch"
                        }
                        ContextLogin::PerSignature => "the PIN is asked for each signature",
                    },
                );
            self.console.audit_first(ev).await?;
        }
        Ok(())
    }
}

fn consent_needed(label: &str, count: u64) -> ApiError {
    ApiError::invalid(text!(
        "errors.context_login_needed",
        "'{{label}}' wants the PIN for each signature it makes (CKA_ALWAYS_AUTHENTICATE). Nothing was signed.",
        label = label
    ))
    .suggest(text!(
        "errors.context_login_choose",
        "Have the PIN asked for each signature, or give it once and consent that it is used for all {{count}} signatures of this batch.",
        count = count
    ))
}

fn cannot_ask_each(label: &str) -> ApiError {
    ApiError::invalid(text!(
        "errors.context_login_cannot_ask",
        "The PIN for each signature of '{{label}}' can only be asked of an officer at a terminal. Nothing was signed.",
        label = label
    ))
    .suggest(text!(
        "errors.context_login_give_once",
        "Give the PIN once for this batch instead."
    ))
}

fn no_pin(label: &str) -> ApiError {
    ApiError::invalid(text!(
        "errors.context_login_no_pin",
        "No PIN was given for the signatures of '{{label}}'. Nothing was signed.",
        label = label
    ))
}

fn extra_signature_refused(label: &str) -> ApiError {
    ApiError::invalid(text!(
        "errors.context_login_extra_signature",
        "'{{label}}' wants the PIN for each signature: a batch signs only the files with it, not a SHA256SUMS manifest or a self-signed certificate. Nothing was signed.",
        label = label
    ))
    .suggest(text!(
        "errors.context_login_extra_signature_hint",
        "Sign without the manifest, and keep the key's certificate on the token for CMS."
    ))
}

/// The message of the file a PIN error stopped the batch at.
pub(super) fn stopped_by_pin(e: ApiError, label: &str, signed: usize) -> ApiError {
    if e.code == ErrorCode::NotLoggedIn {
        return e.details(text!(
            "errors.context_login_stopped_no_pin",
            "No PIN was given for a signature of '{{label}}'; the batch stopped here. The {{signed}} file(s) signed before stay signed and recorded; this file and the rest were not signed.",
            label = label,
            signed = signed
        ));
    }
    e.details(text!(
        "errors.context_login_stopped",
        "The PIN for '{{label}}' was refused; the batch stopped here. The {{signed}} file(s) signed before stay signed and recorded; this file and the rest were not signed.",
        label = label,
        signed = signed
    ))
}
