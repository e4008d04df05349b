//! The audited-change engine: the one path every change to a token takes.
//!
//! [`ChangeEngine::apply`] runs a [`Change`] through the same steps, each a function here:
//!
//! 1. [`ChangeEngine::resolve`] — the partition, then the change's own targets: the objects
//!    it acts on found again on the token as the officer chose them (a handle from an earlier
//!    module generation is followed to the same object, or refused);
//! 2. [`ChangeEngine::check`] — the role logged in may do it (the console's rules);
//! 3. [`ChangeEngine::record_request`] — the request is in the audit trail before anything
//!    is sent, and the change is refused when the trail cannot record it;
//! 4. [`ChangeEngine::act`] — the call on the pool, with the pool's recovery budget;
//! 5. [`ChangeEngine::settle`] — when the HSM's answer was lost, the token is read to find
//!    out whether the change took effect;
//! 6. [`ChangeEngine::record_outcome`] — `success`, `failure`, or `unknown — check the
//!    token` when it could not be settled; the officer is told the same.
//!
//! A change supplies only what is its own: its targets and checks, the call, how to read
//! its effect back, and what its records say. [`ChangeKind::ALL`] lists every kind, so the
//! fault matrix (`tests/console/change_matrix.rs`) runs each of them under each fault.

use std::future::Future;
use std::sync::Arc;

use audit::{Event, KeyStatus};
use hsm::keys::{self as hk, ObjectSummary};
use hsm::roles::{self, Action};
use hsm::HsmError;
use p11::sys::{CKA_ID, CKA_LABEL};
use p11::{Session, Template};
use serde::Serialize;

use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::core::role_texts;
use crate::core::views::{ConsoleEvent, UserKind};
use crate::core::{partitions::Partition, Core};
use crate::text;

/// Every kind of change to a token. Each is its own audit action (`ACTION.request` before,
/// `ACTION` after).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    KeyGenerate,
    KeyDestroy,
    PinChange,
    PinInit,
    TokenInit,
    ObjectImport,
    AttributeSet,
    KeyWrap,
    KeyUnwrap,
    UsageLimit,
    CertificateIssue,
    OpenPgpCertificate,
    OpenPgpCreationTime,
    /// A file signed with a stateful (HSS) key: it spends one-time keys for good.
    HssSign,
    /// A batch's `SHA256SUMS` signed with a stateful (HSS) key.
    HssManifest,
}

impl ChangeKind {
    /// Every kind, in the order the fault matrix runs them.
    pub const ALL: [ChangeKind; 15] = [
        ChangeKind::KeyGenerate,
        ChangeKind::KeyDestroy,
        ChangeKind::PinChange,
        ChangeKind::PinInit,
        ChangeKind::TokenInit,
        ChangeKind::ObjectImport,
        ChangeKind::AttributeSet,
        ChangeKind::KeyWrap,
        ChangeKind::KeyUnwrap,
        ChangeKind::UsageLimit,
        ChangeKind::CertificateIssue,
        ChangeKind::OpenPgpCertificate,
        ChangeKind::OpenPgpCreationTime,
        ChangeKind::HssSign,
        ChangeKind::HssManifest,
    ];

    /// The audit action of the outcome record (the request's is this with `.request`).
    pub fn action(self) -> &'static str {
        match self {
            ChangeKind::KeyGenerate => "key.generate",
            ChangeKind::KeyDestroy => "key.destroy",
            ChangeKind::PinChange => "pin.change",
            ChangeKind::PinInit => "pin.init",
            ChangeKind::TokenInit => "token.init",
            ChangeKind::ObjectImport => "object.import",
            ChangeKind::AttributeSet => "object.set_attributes",
            ChangeKind::KeyWrap => "key.wrap",
            ChangeKind::KeyUnwrap => "key.unwrap",
            ChangeKind::UsageLimit => "key.usage_limit",
            ChangeKind::CertificateIssue => "cert.issue",
            ChangeKind::OpenPgpCertificate => "openpgp.cert",
            ChangeKind::OpenPgpCreationTime => "openpgp.key.created",
            ChangeKind::HssSign => "sign",
            ChangeKind::HssManifest => "sign.manifest",
        }
    }

    /// The kind whose outcome record is `action`, if any.
    pub fn of_action(action: &str) -> Option<ChangeKind> {
        ChangeKind::ALL.into_iter().find(|k| k.action() == action)
    }
}

/// What reading the token said about a change whose answer was lost.
pub(crate) enum Settled<T> {
    /// It took effect: this is what it made.
    Done(T),
    /// It did not: the officer is told nothing changed.
    NotDone(ApiError),
    /// The token cannot tell (or cannot be read): recorded `unknown`.
    Unknown(ApiError),
}

/// One change to a token, as the engine runs it. The methods are the change's own parts of
/// the steps in the module documentation.
pub(crate) trait Change: Send {
    type Output: Send;

    fn kind(&self) -> ChangeKind;

    /// What the role logged in must be allowed to do; `None` when the change decides that
    /// itself in [`Change::resolve`] (changing one's own PIN).
    fn permission(&self) -> Option<Action>;

    /// Find the objects the change acts on and check what is the change's own (a limit in
    /// range, a file that fits the key, the officer's confirmation); nothing is sent that
    /// changes anything. Gives the event both records describe.
    fn resolve<'a>(
        &'a mut self,
        c: &'a Core,
        p: &'a Arc<Partition>,
    ) -> impl Future<Output = ApiResult<Event>> + Send + 'a;

    /// The change itself, on the pool (which recovers and retries within its budget where
    /// the call is safe to repeat).
    fn act<'a>(
        &'a mut self,
        c: &'a Core,
        p: &'a Arc<Partition>,
    ) -> impl Future<Output = ApiResult<Self::Output>> + Send + 'a;

    /// The HSM's answer was lost (`lost`): read the token to find out what happened.
    fn settle<'a>(
        &'a mut self,
        _c: &'a Core,
        _p: &'a Arc<Partition>,
        lost: ApiError,
    ) -> impl Future<Output = Settled<Self::Output>> + Send + 'a {
        async move { Settled::Unknown(lost) }
    }

    /// The outcome record: the request's event with what the change learned.
    fn outcome(&self, ev: Event, _r: Result<&Self::Output, &ApiError>) -> Event {
        ev
    }
}

/// Runs changes (see the module documentation). Borrowed from the console for one change.
pub struct ChangeEngine<'c> {
    core: &'c Core,
}

impl Core {
    /// The engine every change to a token goes through.
    pub fn changes(&self) -> ChangeEngine<'_> {
        ChangeEngine { core: self }
    }
}

impl ChangeEngine<'_> {
    /// Run `change` on `partition` through every step.
    pub(crate) async fn apply<C: Change>(
        &self,
        partition: &str,
        mut change: C,
    ) -> ApiResult<C::Output> {
        let p = self.core.partition_ref(partition).await?;
        self.apply_on(&p, &mut change).await
    }

    /// As [`ChangeEngine::apply`] on a partition already looked up.
    pub(crate) async fn apply_on<C: Change>(
        &self,
        p: &Arc<Partition>,
        change: &mut C,
    ) -> ApiResult<C::Output> {
        self.check(p, change)?;
        let ev = self.resolve(p, change).await?;
        self.record_request(p, &ev).await?;
        let r = self.act(p, change).await;
        let (r, settled) = self.settle(p, change, r).await;
        // What the change adds to its record is read before the record is written: the
        // change (which may hold what is not `Sync`, a template) is not held across it.
        let ev = change.outcome(ev, r.as_ref().map_err(|o| &o.error));
        self.record_outcome(ev, &r, settled).await;
        self.core.emit(ConsoleEvent::PartitionChanged {
            partition_id: p.id.clone(),
        });
        r.map_err(|e| e.error)
    }

    /// Step 1: the change's targets and own checks (the partition is looked up by
    /// [`ChangeEngine::apply`]). The request's event carries the change's action.
    async fn resolve<C: Change>(&self, p: &Arc<Partition>, change: &mut C) -> ApiResult<Event> {
        let mut ev = change.resolve(self.core, p).await?;
        ev.action = change.kind().action().to_string();
        Ok(ev)
    }

    /// Step 2: the role logged in may do it.
    fn check<C: Change>(&self, p: &Partition, change: &C) -> ApiResult<()> {
        match change.permission() {
            Some(action) => self.core.require(p, action),
            None => Ok(()),
        }
    }

    /// Step 3: the request in the trail first; refused when it cannot be recorded.
    async fn record_request(&self, p: &Partition, ev: &Event) -> ApiResult<()> {
        let mut request = ev.clone();
        request.action.push_str(".request");
        self.core
            .admin_audit_first(p, request)
            .await
            .map_err(|e| {
                if e.code == ErrorCode::AuditUnavailable || e.code == ErrorCode::AuditBroken {
                    e.details(text!(
                        "errors.change_not_recorded",
                        "Nothing was sent to the HSM: every change is recorded in the audit trail before it is made."
                    ))
                } else {
                    e
                }
            })
    }

    /// Step 4: the change on the pool.
    async fn act<C: Change>(&self, p: &Arc<Partition>, change: &mut C) -> ApiResult<C::Output> {
        change.act(self.core, p).await
    }

    /// Step 5: a lost answer (the HSM disconnected during the call and the pool could not
    /// repeat it) is settled by reading the token.
    async fn settle<C: Change>(
        &self,
        p: &Arc<Partition>,
        change: &mut C,
        r: ApiResult<C::Output>,
    ) -> (Result<C::Output, Outcome>, Option<bool>) {
        match r {
            Ok(v) => (Ok(v), None),
            Err(e) if e.code == ErrorCode::HsmDisconnected => {
                match change.settle(self.core, p, e).await {
                    Settled::Done(v) => (Ok(v), Some(true)),
                    Settled::NotDone(e) => (Err(Outcome::failed(e)), Some(false)),
                    Settled::Unknown(e) => (Err(Outcome::unknown(e)), None),
                }
            }
            Err(e) => (Err(Outcome::failed(e)), None),
        }
    }

    /// Step 6: the outcome record.
    async fn record_outcome<T>(&self, ev: Event, r: &Result<T, Outcome>, settled: Option<bool>) {
        let mut ev = match r {
            Ok(_) => ev,
            Err(o) => ev
                .failed(o.error.code.to_string())
                .meta("error", &o.error.message),
        };
        if let Some(took_effect) = settled {
            ev = ev
                .meta("settled_after_reconnect", true)
                .meta("took_effect", took_effect);
        }
        if matches!(r, Err(o) if o.unknown) {
            ev = ev
                .status(audit::Status::Unknown)
                .meta("outcome", "unknown — check the token");
        }
        self.core.record(ev).await;
    }
}

/// A change that did not end in success, as the engine reports it.
pub(crate) struct Outcome {
    error: ApiError,
    unknown: bool,
}

impl Outcome {
    fn failed(error: ApiError) -> Outcome {
        Outcome {
            error,
            unknown: false,
        }
    }

    /// The officer is told the outcome is not known and what to do.
    fn unknown(error: ApiError) -> Outcome {
        let error = if error.suggestion.is_none() {
            error.suggest(text!(
                "errors.change_outcome_unknown",
                "The HSM's answer was lost and the console could not tell whether the change was made: check the token before doing it again."
            ))
        } else {
            error
        };
        Outcome {
            error,
            unknown: true,
        }
    }
}

/// The handle that names `target` — an object as it was read for the officer — on `s` now.
/// The handle it was read under is followed through reconnects, then its identity (unique
/// ID where the token gives one, class, `CKA_ID`, label) is read again: a handle that now
/// names another object is never acted on; the chosen object is found by its identity
/// instead, or the change is refused, naming what the handle names now.
pub(crate) fn locate(s: &Session, p: &Partition, target: &ObjectSummary) -> hsm::Result<u64> {
    let named_now = match p.key_refs.resolve(s, target.handle) {
        Ok(h) => match hk::summary(s, h) {
            Ok(now) if same_object(&now, target) => return Ok(h),
            Ok(now) => Some(now),
            Err(e) if e.class() == p11::ErrorClass::KeyNotFound => None,
            Err(e) => return Err(e.into()),
        },
        Err(HsmError::KeyNotFound(_)) => None,
        Err(e) => return Err(e),
    };
    let found = find_by_identity(s, target)?;
    match found[..] {
        [one] => Ok(one),
        _ => {
            let what = hk::class_msg_named(&target.class);
            let now = match &named_now {
                Some(o) => hsm::text!(
                    "errors.handle_now_names_another",
                    "handle {{handle}} now names '{{label}}' (ID {{id}})",
                    handle = target.handle,
                    label = &o.label,
                    id = &o.id_hex
                ),
                None => hsm::text!(
                    "errors.handle_now_names_nothing",
                    "handle {{handle}} names nothing now",
                    handle = target.handle
                ),
            };
            Err(HsmError::KeyNotFound(
                hsm::text!(
                    "errors.chosen_object_not_found",
                    "the {{what}} '{{label}}' (ID {{id}}) you chose: {{n}} such objects on the token, and {{now}}; nothing was changed — refresh the list and choose again",
                    what = &what,
                    label = &target.label,
                    id = &target.id_hex,
                    n = found.len(),
                    now = &now
                )
                .nest("what", &what)
                .nest("now", &now),
            ))
        }
    }
}

/// The object a handle the officer chose names now (followed through reconnects), read
/// for a change's resolve step: what its request records and what `locate` compares.
pub(crate) async fn read_target(
    p: &Arc<Partition>,
    op: &'static str,
    handle: u64,
) -> ApiResult<ObjectSummary> {
    let refs = p.clone();
    Ok(p.pool
        .run_service_idempotent_async(op, move |s| {
            Ok(hk::summary(s, refs.key_refs.resolve(s, handle)?)?)
        })
        .await?)
}

/// Whether the object the officer chose is on the token (by its unique ID where it has
/// one, class, `CKA_ID` and label).
pub(crate) fn still_there(s: &Session, target: &ObjectSummary) -> hsm::Result<bool> {
    Ok(!find_by_identity(s, target)?.is_empty())
}

/// The same object: the same unique ID where the token gives one, and the same class,
/// `CKA_ID` and label.
fn same_object(now: &ObjectSummary, chosen: &ObjectSummary) -> bool {
    let same_uid = match (&now.unique_id, &chosen.unique_id) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    same_uid
        && now.class == chosen.class
        && now.id_hex == chosen.id_hex
        && now.label == chosen.label
}

fn find_by_identity(s: &Session, target: &ObjectSummary) -> hsm::Result<Vec<u64>> {
    let id = hex::decode(&target.id_hex).unwrap_or_default();
    let mut t = Template::new().text(CKA_LABEL, &target.label);
    if !id.is_empty() {
        t = t.bytes(CKA_ID, &id);
    }
    if let Some((attr, value)) = target
        .unique_id
        .as_deref()
        .and_then(|u| hk::unique_id_attribute(s.module().family(), u))
    {
        t = t.bytes(attr, &value);
    }
    Ok(hk::list_objects(s, &mut t)?
        .into_iter()
        .filter(|o| same_object(o, target))
        .map(|o| o.handle)
        .collect())
}

impl Core {
    /// Refuse what the role logged in on `p` may not do, with the reason.
    pub(crate) fn require(&self, p: &Partition, action: Action) -> ApiResult<()> {
        let role = p.logged_in();
        roles::check(role.map(UserKind::role), action, p.module.module.family()).map_err(|why| {
            ApiError::new(
                if role.is_none() {
                    ErrorCode::NotLoggedIn
                } else {
                    ErrorCode::NotAuthorized
                },
                role_texts::refusal(&why),
            )
        })
    }

    /// Record an administrative action before it runs: chained when the trail's key is
    /// open; spooled in the store when the key is locked and this partition holds (or will
    /// hold) it — see the module documentation; refused otherwise, and whenever the store
    /// cannot take the record.
    pub(crate) async fn admin_audit_first(&self, p: &Partition, e: Event) -> ApiResult<()> {
        let spool = match self.audit().key_status().await? {
            KeyStatus::Unlocked { .. } => false,
            KeyStatus::NoKeyYet => true,
            KeyStatus::Locked { holder } => holder == self.trail_holder_for(p),
        };
        if !spool {
            return self.audit_first(e).await;
        }
        self.audit()
            .record(e.meta("spooled_before_unlock", true))
            .await?;
        self.emit(ConsoleEvent::AuditChanged {});
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::ChangeKind;

    #[test]
    fn every_kind_has_its_own_action() {
        let mut seen = std::collections::HashSet::new();
        for k in ChangeKind::ALL {
            assert!(seen.insert(k.action()), "{k:?} repeats {}", k.action());
            assert_eq!(ChangeKind::of_action(k.action()), Some(k));
        }
    }
}
