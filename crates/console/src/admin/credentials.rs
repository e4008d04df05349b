//! Credentials and roles: changing one's PIN (`C_SetPIN`), the SO setting or resetting the
//! user PIN (`C_InitPIN`), the Crypto Officer setting a Luna role's PIN
//! (`CA_InitRolePIN`), initializing a token (`C_InitToken`), and the role checks every
//! service makes before it acts.
//!
//! PINs arrive as zeroizing secrets, are checked against the token's length range before
//! they are sent, are sent once (a wrong one is never retried; the answer says what the
//! token reports about the attempts left), and are never logged or stored.
//!
//! **The audit trail and policy 21.** Every action here is recorded before it runs, and
//! refused when the trail's store cannot take the record. Two situations would make that
//! impossible with the trail's key alone, so the record is *spooled* in the store instead
//! (durably, before the action; chained in order when the key next opens, as failed logins
//! are): the Crypto Officer of a Luna partition with policy 21 must change the PIN the SO
//! set before the token does anything else — including finding or creating the trail's
//! key on it — and the SO of the partition that holds the trail's key can never be logged
//! in together with its Crypto Officer. Spooling is allowed only for the partition that
//! holds (or, on a new trail, will hold) the key; an action on any other partition while
//! the key is locked is refused, as key generation is.

use audit::Event;
use hsm::keys as hk;
use hsm::roles::{self, Action};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::admin::Admin;
use crate::core::change::{Change, ChangeKind, Settled};
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::core::i18n::Text;
use crate::core::partitions::{blocking, Partition, MAX_PIN_BYTES};
use crate::core::role_texts;
use crate::core::views::{AuditKeyView, ConsoleEvent, UserKind};
use crate::core::Core;
use crate::text;
use std::sync::Arc;

/// After a PIN change.
#[derive(Debug, Clone, Serialize, TS)]
pub struct PinChanged {
    pub partition_id: String,
    pub user: UserKind,
    /// The trail's key, which a change of a PIN that was to be changed may just have opened.
    pub audit: AuditKeyView,
}

/// Which PIN a token takes after a change whose answer was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PinNow {
    New,
    Current,
    Unknown,
}

/// A lost PIN change, settled: which PIN is valid and how the console found out.
struct PinSettled {
    now: PinNow,
    by: &'static str,
}

impl PinSettled {
    fn unknown(why: &'static str) -> PinSettled {
        PinSettled {
            now: PinNow::Unknown,
            by: why,
        }
    }

    fn word(&self) -> &'static str {
        match self.now {
            PinNow::New => "new",
            PinNow::Current => "current",
            PinNow::Unknown => "unknown",
        }
    }

    /// What the officer is told: the change happened, did not, or cannot be known.
    fn result(&self, lost: ApiError) -> ApiResult<()> {
        let code = ErrorCode::HsmDisconnected;
        let keep = |mut e: ApiError| {
            e.pkcs11 = lost.pkcs11.clone();
            e
        };
        match self.now {
            PinNow::New => Ok(()),
            PinNow::Current => Err(keep(
                ApiError::new(
                    code,
                    text!(
                        "errors.pin_change_lost_not_changed",
                        "The HSM disconnected during the PIN change, and the change did not take effect: the current PIN is still valid."
                    ),
                )
                .suggest(text!("errors.try_again", "Try again.")),
            )),
            PinNow::Unknown => Err(keep(
                ApiError::new(
                    code,
                    text!(
                        "errors.pin_change_lost_unknown",
                        "The HSM disconnected during the PIN change; whether the new PIN took effect is not known."
                    ),
                )
                .details(match self.by {
                    "attempts_already_used" => text!(
                        "errors.pin_change_lost_not_tried",
                        "The token reports wrong attempts already, so the console tried neither PIN (a wrong one would use up another); it is logged out."
                    ),
                    "both_refused" => text!(
                        "errors.pin_change_lost_both_refused",
                        "The token refused the new PIN and then the current one; it is logged out."
                    ),
                    _ => text!(
                        "errors.pin_change_lost_hsm_silent",
                        "The HSM did not answer when the console checked; it is logged out."
                    ),
                })
                .suggest(text!(
                    "errors.pin_change_lost_unknown_hint",
                    "Log in with the new PIN first; if the token refuses it, with the current one."
                )),
            )),
        }
    }
}

/// What a token holds, for the Initialize dialog (and the audit record).
#[derive(Debug, Clone, Serialize, TS)]
pub struct TokenContents {
    pub partition_id: String,
    pub label: String,
    pub serial: String,
    /// Objects the console can see (public ones only when nobody is logged in).
    #[ts(type = "number")]
    pub objects: u64,
    pub by_class: Vec<ClassCount>,
    /// Luna's own count of the objects on the partition (`CA_GetTokenStorageInformation`),
    /// private ones included, where the module reports it.
    #[ts(type = "number | null")]
    pub reported_object_count: Option<u64>,
    /// Nobody is logged in: private objects are not counted.
    pub public_only: bool,
    /// This partition holds the audit trail's key (it goes with the token).
    pub holds_audit_key: bool,
    /// What the officer types to confirm: the token's label.
    pub confirmation: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ClassCount {
    pub class: String,
    #[ts(type = "number")]
    pub count: u64,
}

/// Initialize a token: its SO PIN, the new label, the current label typed as confirmation,
/// and — for the partition holding the audit trail's key — the second confirmation.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct InitTokenRequest {
    pub label: String,
    pub confirmation: String,
    #[serde(default)]
    pub destroy_audit_key: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct TokenInitialized {
    /// The token's partition after initialization (its serial may have changed).
    pub partition_id: Option<String>,
    pub label: String,
    #[ts(type = "number")]
    pub objects_destroyed: u64,
}

/// A label for `C_InitToken`: 1 to 32 bytes, no control characters.
pub fn validate_token_label(label: &str) -> ApiResult<()> {
    if label.trim().is_empty() {
        return Err(ApiError::invalid(text!(
            "errors.token_needs_label",
            "The token needs a label."
        )));
    }
    if label.len() > 32 {
        return Err(ApiError::invalid(text!(
            "errors.token_label_too_long",
            "Token labels are at most 32 bytes; “{{label}}” has {{bytes}}.",
            label = label,
            bytes = label.len()
        )));
    }
    if label.chars().any(char::is_control) {
        return Err(ApiError::invalid(text!(
            "errors.token_label_control_characters",
            "Token labels cannot contain control characters."
        )));
    }
    Ok(())
}

fn new_pin() -> Text {
    text!("credentials.what_new_pin", "new PIN")
}

fn secret_len(pin: &p11::Pin) -> usize {
    secrecy::ExposeSecret::expose_secret(pin).len()
}

/// A PIN no token accepts is refused before it is sent (it would count as an attempt).
/// `what` names the PIN: the new, the current or the SO PIN.
fn check_sendable(pin: &p11::Pin, what: Text) -> ApiResult<()> {
    let n = secret_len(pin);
    if n > MAX_PIN_BYTES {
        return Err(ApiError::new(
            ErrorCode::PinInvalid,
            text!("errors.pin_too_long_to_send", "The {{what}} is {{len}} bytes long; tokens accept at most {{max}}. It was not sent to the HSM.", what = &what.text, len = n, max = MAX_PIN_BYTES).nest("what", &what),
        ));
    }
    Ok(())
}

impl Admin<'_> {
    /// The new PIN against the token's limits (and the console's own), before anything is
    /// sent.
    async fn check_new_pin(self, p: &Partition, pin: &p11::Pin) -> ApiResult<()> {
        check_sendable(pin, new_pin())?;
        let (min, max) = self
            .token_view(p)
            .await
            .map(|t| (t.min_pin_len, t.max_pin_len))
            .unwrap_or((0, 0));
        roles::check_pin_length(secret_len(pin), min, max).map_err(|why| {
            ApiError::new(ErrorCode::PinInvalid, role_texts::pin_length(&why)).details(text!(
                "errors.nothing_sent_no_attempt",
                "Nothing was sent to the token; no attempt was used."
            ))
        })
    }

    /// Change the PIN of the role logged in (`C_SetPIN`): the old PIN is tried once; a wrong
    /// one says what the token reports about the attempts left. When the token wanted the
    /// PIN changed (Luna's policy 21), the change also opens the audit trail's key.
    pub async fn change_pin(
        self,
        partition: &str,
        old: p11::Pin,
        new: p11::Pin,
    ) -> ApiResult<PinChanged> {
        let p = self.partition_ref(partition).await?;
        let mut change = ChangePin {
            old,
            new,
            who: None,
            was_to_be_changed: false,
            settled: None,
        };
        self.changes().apply_on(&p, &mut change).await?;
        let who = change.who.expect("resolved before the change");
        let uses_keys =
            roles::check(Some(who.role()), Action::UseKeys, p.module.module.family()).is_ok();
        let audit = if change.was_to_be_changed && uses_keys {
            match self.attach_audit(&p).await {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(
                        "audit key not opened on {} after the PIN change: {}",
                        p.id,
                        e.message
                    );
                    self.audit_key_view().await
                }
            }
        } else {
            self.audit_key_view().await
        };
        self.emit(ConsoleEvent::AuditKey {
            state: audit.clone(),
        });
        Ok(PinChanged {
            partition_id: p.id.clone(),
            user: who,
            audit,
        })
    }

    /// After a PIN change whose answer was lost: which PIN the token takes now. The token's
    /// flags say it when the PIN was to be changed (a change clears the flag); otherwise
    /// one login with the new PIN, then (if refused) one with the current one — not tried
    /// when the token reports wrong attempts already, so that settling never locks a PIN.
    /// Either login that works leaves the partition logged in as before.
    async fn settle_pin_change(
        self,
        p: &Partition,
        who: UserKind,
        old: p11::Pin,
        new: p11::Pin,
        was_to_be_changed: bool,
    ) -> PinSettled {
        let Some(t) = self.token_view(p).await else {
            return PinSettled::unknown("token_unreadable");
        };
        let pool = p.pool.clone();
        let user = who.p11();
        let login = move |pin: p11::Pin| {
            let pool = pool.clone();
            async move { blocking(move || pool.login(user, pin)).await }
        };
        if was_to_be_changed {
            let now = if who.pin_to_be_changed(&t) {
                (PinNow::Current, old)
            } else {
                (PinNow::New, new)
            };
            // Logged in again with the PIN the flag names (a failure leaves it logged out).
            let _ = login(now.1).await;
            return PinSettled {
                now: now.0,
                by: "to_be_changed_flag",
            };
        }
        let risky = match who {
            UserKind::So => t.so_pin_count_low || t.so_pin_final_try || t.so_pin_locked,
            _ => t.user_pin_count_low || t.user_pin_final_try || t.user_pin_locked,
        };
        if risky {
            return PinSettled::unknown("attempts_already_used");
        }
        match login(new).await {
            Ok(Ok(())) => PinSettled {
                now: PinNow::New,
                by: "login_with_new_pin",
            },
            Ok(Err(e)) if e.class() == p11::ErrorClass::Pin => match login(old).await {
                Ok(Ok(())) => PinSettled {
                    now: PinNow::Current,
                    by: "login_with_current_pin",
                },
                _ => PinSettled::unknown("both_refused"),
            },
            _ => PinSettled::unknown("hsm_unavailable"),
        }
    }

    async fn audit_key_view(self) -> AuditKeyView {
        self.audit()
            .key_status()
            .await
            .map(Into::into)
            .unwrap_or(AuditKeyView::NoKeyYet)
    }

    /// The SO sets or resets the user's PIN (`C_InitPIN`): for a new token, or to unblock
    /// a locked PIN. On a Luna partition with policy 21 the user must change it at the
    /// next login.
    pub async fn set_user_pin(self, partition: &str, new: p11::Pin) -> ApiResult<()> {
        self.changes()
            .apply(
                partition,
                InitPin {
                    role: UserKind::User,
                    new,
                },
            )
            .await
    }

    /// The Crypto Officer sets the PIN of a Luna role (`CA_InitRolePIN`): the Crypto User
    /// or the Limited Crypto Officer.
    pub async fn set_role_pin(
        self,
        partition: &str,
        role: UserKind,
        new: p11::Pin,
    ) -> ApiResult<()> {
        if !matches!(role, UserKind::CryptoUser | UserKind::LimitedCryptoOfficer) {
            return Err(ApiError::invalid(text!(
                "errors.role_pin_roles",
                "The Crypto Officer sets the Crypto User's and the Limited Crypto Officer's PINs; the user PIN is the SO's to set."
            )));
        }
        self.changes().apply(partition, InitPin { role, new }).await
    }

    /// What the token holds (what initializing it would destroy).
    pub async fn token_contents(self, partition: &str) -> ApiResult<TokenContents> {
        let p = self.partition_ref(partition).await?;
        let listed = p
            .pool
            .run_idempotent_async("token.contents", |s| {
                hk::list_objects(s, &mut p11::Template::new())
            })
            .await;
        let list = match listed {
            Ok(l) => l,
            // A token that wants its PIN changed refuses to list; count nothing rather
            // than block the officer from initializing it.
            Err(e) if e.p11().and_then(|e| e.rv()) == Some(p11::sys::CKR_PIN_EXPIRED) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let mut by_class: Vec<ClassCount> = Vec::new();
        for o in list
            .iter()
            .filter(|o| o.class != "MECHANISM" && o.class != "PROFILE")
        {
            match by_class.iter_mut().find(|c| c.class == o.class) {
                Some(c) => c.count += 1,
                None => by_class.push(ClassCount {
                    class: o.class.clone(),
                    count: 1,
                }),
            }
        }
        let m = p.module.module.clone();
        let slot = p.slot();
        let reported =
            blocking(move || m.ca_token_storage(slot).ok().and_then(|s| s.object_count)).await?;
        Ok(TokenContents {
            partition_id: p.id.clone(),
            label: p.label.clone(),
            serial: p.serial.clone(),
            objects: by_class.iter().map(|c| c.count).sum(),
            by_class,
            reported_object_count: reported,
            public_only: p.logged_in().is_none(),
            holds_audit_key: self.holds_trail_key(&p).await,
            confirmation: p.label.clone(),
        })
    }

    /// Is this the partition the trail's key lives on (open here, or locked and named so)?
    async fn holds_trail_key(self, p: &Partition) -> bool {
        self.trail_keys_on(p).await
    }

    /// Initialize the token (`C_InitToken`): every object on it is destroyed. The officer
    /// types the token's label; for the partition holding the audit trail's key, confirms
    /// that the key goes with it. The partition's sessions are closed first (the token
    /// refuses while any is open) and the pool opens new ones afterwards.
    pub async fn init_token(
        self,
        partition: &str,
        so_pin: p11::Pin,
        req: InitTokenRequest,
    ) -> ApiResult<TokenInitialized> {
        self.changes()
            .apply(
                partition,
                InitToken {
                    so_pin,
                    req,
                    objects: 0,
                    retried: false,
                },
            )
            .await
    }
}

/// `C_SetPIN` by the role logged in.
struct ChangePin {
    old: p11::Pin,
    new: p11::Pin,
    /// Who is logged in (resolved).
    who: Option<UserKind>,
    was_to_be_changed: bool,
    /// How a lost answer was settled.
    settled: Option<PinSettled>,
}

impl Change for ChangePin {
    type Output = ();

    fn kind(&self) -> ChangeKind {
        ChangeKind::PinChange
    }

    fn permission(&self) -> Option<Action> {
        None // any role changes its own PIN
    }

    async fn resolve(&mut self, c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let who = p.logged_in().ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotLoggedIn,
                text!(
                    "errors.log_in_to_change_pin",
                    "Log in as the role whose PIN you change."
                ),
            )
        })?;
        check_sendable(
            &self.old,
            text!("credentials.what_current_pin", "current PIN"),
        )?;
        Admin::new(c).check_new_pin(p, &self.new).await?;
        self.was_to_be_changed = c
            .token_view(p)
            .await
            .is_some_and(|t| who.pin_to_be_changed(&t));
        self.who = Some(who);
        Ok(Event::new("pin.change", "partition")
            .resource(&p.id)
            .meta("user", who)
            .meta("token", &p.label)
            .meta("was_to_be_changed", self.was_to_be_changed))
    }

    async fn act(&mut self, c: &Core, p: &Arc<Partition>) -> ApiResult<()> {
        let pool = p.pool.clone();
        let (old, new) = (self.old.clone(), self.new.clone());
        let r = blocking(move || pool.set_pin(&old, new))
            .await?
            .map_err(ApiError::from);
        match r {
            Err(e) => Err(pin_refused(
                c,
                p,
                self.who.expect("resolved"),
                e,
                text!(
                    "errors.current_pin_incorrect",
                    "The current PIN is incorrect; the PIN was not changed."
                ),
            )
            .await),
            ok => ok,
        }
    }

    /// The reply is lost: `C_SetPIN` may have changed the PIN or not. Find out, and say
    /// which PIN is valid now.
    async fn settle(&mut self, c: &Core, p: &Arc<Partition>, lost: ApiError) -> Settled<()> {
        let settled = Admin::new(c)
            .settle_pin_change(
                p,
                self.who.expect("resolved"),
                self.old.clone(),
                self.new.clone(),
                self.was_to_be_changed,
            )
            .await;
        let now = settled.now;
        let r = settled.result(lost);
        self.settled = Some(settled);
        match (now, r) {
            (PinNow::New, _) => Settled::Done(()),
            (PinNow::Current, Err(e)) => Settled::NotDone(e),
            (_, Err(e)) => Settled::Unknown(e),
            (_, Ok(())) => Settled::Done(()),
        }
    }

    fn outcome(&self, ev: Event, _r: Result<&(), &ApiError>) -> Event {
        match &self.settled {
            Some(s) => ev.meta("pin_now", s.word()).meta("settled_by", s.by),
            None => ev,
        }
    }
}

/// A wrong or locked PIN of `who`, told as `said` (what was not done) with what the token
/// reports about the attempts left; any other error as it is.
async fn pin_refused(c: &Core, p: &Partition, who: UserKind, e: ApiError, said: Text) -> ApiError {
    if !matches!(e.code, ErrorCode::PinIncorrect | ErrorCode::PinLocked) {
        return e;
    }
    let mut n = ApiError::new(e.code, said);
    n.pkcs11 = e.pkcs11;
    match c.pin_attempts_note(p, who).await {
        Some(note) => n.details(note),
        None => n,
    }
}

/// `C_InitPIN` by the SO (the user's PIN) or `CA_InitRolePIN` by the Crypto Officer (a
/// Luna role's).
struct InitPin {
    role: UserKind,
    new: p11::Pin,
}

impl Change for InitPin {
    type Output = ();

    fn kind(&self) -> ChangeKind {
        ChangeKind::PinInit
    }

    fn permission(&self) -> Option<Action> {
        Some(match self.role {
            UserKind::User => Action::SetUserPin,
            _ => Action::SetRolePin,
        })
    }

    async fn resolve(&mut self, c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        Admin::new(c).check_new_pin(p, &self.new).await?;
        Ok(Event::new("pin.init", "partition")
            .resource(&p.id)
            .meta("for", self.role)
            .meta("token", &p.label))
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<()> {
        let new = self.new.clone();
        // Setting a PIN to a value ends the same however often it is done: after a
        // reconnection (an answer lost) the pool sets it again.
        let r = match self.role {
            UserKind::User => {
                p.pool
                    .run_idempotent_async("pin.init", move |s| s.init_pin(&new))
                    .await
            }
            role => {
                let user = role.p11();
                p.pool
                    .run_idempotent_async("pin.init_role", move |s| s.ca_init_role_pin(user, &new))
                    .await
            }
        };
        r.map_err(ApiError::from)
    }
}

/// `C_InitToken`: everything on the token is destroyed.
struct InitToken {
    so_pin: p11::Pin,
    req: InitTokenRequest,
    /// The objects it destroys (resolved).
    objects: u64,
    /// Initialized again after the first call's answer was lost.
    retried: bool,
}

impl Change for InitToken {
    type Output = TokenInitialized;

    fn kind(&self) -> ChangeKind {
        ChangeKind::TokenInit
    }

    fn permission(&self) -> Option<Action> {
        None // the SO PIN given is the authority
    }

    async fn resolve(&mut self, c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let req = &self.req;
        validate_token_label(&req.label)?;
        check_sendable(&self.so_pin, text!("credentials.what_so_pin", "SO PIN"))?;
        let contents = Admin::new(c).token_contents(&p.id).await?;
        if req.confirmation.trim() != contents.confirmation.trim() {
            return Err(ApiError::invalid(text!(
                "errors.init_confirm_label",
                "Type the token's label, “{{label}}”, to confirm that everything on it is destroyed.",
                label = contents.confirmation
            ))
            .details(text!("errors.nothing_changed", "Nothing was changed.")));
        }
        if contents.holds_audit_key && !req.destroy_audit_key {
            return Err(ApiError::invalid(text!(
                "errors.init_destroys_audit_key",
                "This partition holds the audit trail's key: initializing it destroys the key, and the trail cannot be extended or checked with it afterwards."
            ))
            .details(text!("errors.nothing_changed", "Nothing was changed."))
            .suggest(text!(
                "errors.init_destroys_audit_key_hint",
                "Confirm that the trail's key goes with the token (the second confirmation), or keep the token."
            )));
        }
        self.objects = contents.reported_object_count.unwrap_or(contents.objects);
        Ok(Event::new("token.init", "partition")
            .resource(&p.id)
            .meta("token", &p.label)
            .meta("new_label", &req.label)
            .meta("objects", self.objects)
            .meta(
                "objects_by_class",
                contents
                    .by_class
                    .iter()
                    .map(|c| (c.class.clone(), c.count))
                    .collect::<std::collections::BTreeMap<_, _>>(),
            )
            .meta("destroys_audit_key", contents.holds_audit_key))
    }

    async fn act(&mut self, c: &Core, p: &Arc<Partition>) -> ApiResult<TokenInitialized> {
        if p.logged_in().is_some() {
            // Seals and checkpoints the trail while its key is still here.
            let _ = c.logout(&p.id).await;
        }
        let (pool, m, slot, label, so_pin) = (
            p.pool.clone(),
            p.module.module.clone(),
            p.slot(),
            self.req.label.clone(),
            self.so_pin.clone(),
        );
        let r = blocking(move || -> ApiResult<bool> {
            pool.shut();
            let _ = m.close_all_sessions(slot);
            match m.init_token(slot, &so_pin, &label) {
                Ok(()) => Ok(false),
                // The answer is lost. Initializing again with the same SO PIN and label ends
                // in the same state whether or not the first call took effect.
                Err(e) if e.class() == p11::ErrorClass::Disconnected => {
                    m.reinitialize()?;
                    m.init_token(slot, &so_pin, &label)?;
                    Ok(true)
                }
                Err(e) => Err(e.into()),
            }
        })
        .await?;
        p.set_logged_in(None);
        match r {
            Ok(retried) => {
                self.retried = retried;
                c.partitions.write().remove(&p.id);
                let slots = c.slots(&p.module.id).await.unwrap_or_default();
                let new_id = slots
                    .iter()
                    .find(|s| {
                        s.token
                            .as_ref()
                            .is_some_and(|t| t.label.trim() == self.req.label.trim())
                    })
                    .and_then(|s| s.partition_id.clone());
                Ok(TokenInitialized {
                    partition_id: new_id,
                    label: self.req.label.clone(),
                    objects_destroyed: self.objects,
                })
            }
            Err(e) => Err(pin_refused(
                c,
                p,
                UserKind::So,
                e,
                text!(
                    "errors.so_pin_incorrect_not_initialized",
                    "The SO PIN is incorrect; the token was not initialized."
                ),
            )
            .await),
        }
    }

    fn outcome(&self, ev: Event, r: Result<&TokenInitialized, &ApiError>) -> Event {
        let ev = if self.retried {
            ev.meta("retried_after_reconnect", true)
        } else {
            ev
        };
        match r {
            Ok(t) => ev.meta("new_partition", &t.partition_id),
            Err(_) => ev,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_labels() {
        assert!(validate_token_label("officer").is_ok());
        assert!(validate_token_label("").is_err());
        assert!(validate_token_label(&"x".repeat(33)).is_err());
        assert!(validate_token_label("a\tb").is_err());
    }

    #[test]
    fn oversized_pins_are_not_sent() {
        let e = check_sendable(&p11::pin("x".repeat(MAX_PIN_BYTES + 1)), new_pin()).unwrap_err();
        assert_eq!(e.code, ErrorCode::PinInvalid);
        assert!(check_sendable(&p11::pin("12345678"), new_pin()).is_ok());
    }
}
