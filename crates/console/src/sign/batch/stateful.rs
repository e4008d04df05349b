//! Signing a file with a stateful (HSS) key, as a change to the token. Every signature
//! spends one-time keys for good, so the engine's steps apply as to any change: the
//! counter is read and the key's budget checked (resolve), `sign.request` is in the trail
//! before the HSM is asked (and the file is refused when it cannot be recorded), the
//! signing runs with the pool's recovery, a lost answer is settled by reading the counter
//! again, and the `sign` outcome says how many one-time keys the token spent — also when
//! the file failed after the HSM signed it — so the trail and the token's counter agree.

use std::sync::Arc;

use audit::Event;
use hsm::keys as hk;
use hsm::roles::Action;
use parking_lot::Mutex;
use signing::hashing::Digests;
use signing::input::InputFile;

use super::{signatures_needed, Outputs, SignBatch};
use crate::change::{Change, ChangeKind, Settled};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::sign::key::{resolve, SigningKey};
use crate::sign::sign_error;
use crate::{text, Console, Partition};

/// One file signed with an HSS key.
pub(super) struct StatefulFile<'b, 'c> {
    batch: &'b SignBatch<'c>,
    key: Arc<SigningKey>,
    handle: Arc<Mutex<Option<(u64, u64)>>>,
    index: usize,
    input: InputFile,
    digests: Option<Digests>,
    /// The signatures the token had left before, and after, as read from it.
    before: Option<u64>,
    after: Option<u64>,
}

impl<'b, 'c> StatefulFile<'b, 'c> {
    pub(super) fn new(
        batch: &'b SignBatch<'c>,
        key: &Arc<SigningKey>,
        handle: &Arc<Mutex<Option<(u64, u64)>>>,
        index: usize,
        input: InputFile,
        digests: Digests,
    ) -> Self {
        StatefulFile {
            batch,
            key: key.clone(),
            handle: handle.clone(),
            index,
            input,
            digests: Some(digests),
            before: None,
            after: None,
        }
    }

    /// The one-time keys the signing spent, when the counter was read before and after.
    fn spent(&self) -> Option<u64> {
        Some(self.before?.saturating_sub(self.after?))
    }
}

/// The signatures the key has left, as the token says now.
async fn remaining(p: &Arc<Partition>, key: &Arc<SigningKey>) -> ApiResult<Option<u64>> {
    let k = key.clone();
    Ok(p.pool
        .run_service_idempotent_async("sign.hss_left", move |s| {
            Ok(hk::summary(s, resolve(s, &k.summary)?)?.hss_keys_remaining)
        })
        .await?)
}

impl Change for StatefulFile<'_, '_> {
    type Output = Outputs;

    fn kind(&self) -> ChangeKind {
        ChangeKind::HssSign
    }

    fn permission(&self) -> Option<Action> {
        Some(Action::UseKeys)
    }

    /// The counter now: the file is refused, before anything is recorded or spent, when
    /// the key has not enough one-time keys left for its formats (another process may have
    /// used them since the batch was checked).
    async fn resolve(&mut self, _c: &Console, p: &Arc<Partition>) -> ApiResult<Event> {
        let needed = signatures_needed(1, &self.batch.formats, false, false);
        let left = remaining(p, &self.key).await?;
        if let Some(left) = left.filter(|l| *l < needed) {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                text!(
                    "errors.hss_left_for_file",
                    "'{{label}}' has {{left}} signatures left; {{file}} needs {{needed}}.",
                    label = &self.key.summary.label,
                    left = left,
                    file = &self.batch.outcomes[self.index].name,
                    needed = needed
                ),
            )
            .details(text!(
                "errors.file_not_signed",
                "The file was not signed; nothing was spent."
            ))
            .suggest(text!(
                "errors.sign_fewer_files_formats_use",
                "Sign fewer files or formats, or use another key."
            )));
        }
        self.before = left;
        Ok(self
            .batch
            .file_event(&self.key, self.index)
            .meta("hss_remaining", left))
    }

    /// Sign in every format, time-stamp, write; then read the counter again.
    async fn act(&mut self, _c: &Console, p: &Arc<Partition>) -> ApiResult<Outputs> {
        let digests = self
            .digests
            .take()
            .expect("a file is signed once per change");
        let r = self
            .batch
            .sign_and_write(
                &self.key,
                &self.handle,
                self.index,
                self.input.clone(),
                digests,
            )
            .await
            .map_err(sign_error);
        self.after = remaining(p, &self.key).await.ok().flatten();
        r
    }

    /// The HSM's answer was lost: the counter tells whether one-time keys were spent. The
    /// signature itself is gone with the answer, so the file is not signed either way.
    async fn settle(
        &mut self,
        _c: &Console,
        p: &Arc<Partition>,
        lost: ApiError,
    ) -> Settled<Outputs> {
        match remaining(p, &self.key).await {
            Ok(Some(now)) if self.before.is_some() => {
                self.after = Some(now);
                match self.spent() {
                    Some(spent) if spent > 0 => Settled::NotDone(lost.details(text!(
                        "errors.hss_spent_answer_lost",
                        "The HSM used {{spent}} one-time signature(s) for this file, but its answer was lost: no signature was written. Sign the file again.",
                        spent = spent
                    ))),
                    _ => Settled::NotDone(lost),
                }
            }
            _ => Settled::Unknown(lost),
        }
    }

    /// The one-time keys the token spent, as its counter moved — what the HSS views
    /// compare the trail against.
    fn outcome(&self, ev: Event, r: Result<&Outputs, &ApiError>) -> Event {
        let ev = match r {
            Ok(outs) => self.batch.signed_event(ev, &self.key, outs),
            Err(_) => ev,
        };
        match self.spent() {
            Some(spent) => ev
                .meta("signatures", spent)
                .meta("hss_remaining_after", self.after),
            None => ev,
        }
    }
}
