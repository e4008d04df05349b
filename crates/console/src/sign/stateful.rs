//! What signing with a stateful (HSS) key adds to the change engine's steps, for a file
//! (`batch::stateful`) and for a batch's `SHA256SUMS` (`manifest`) alike. Every signature
//! spends one-time keys for good, so each is a change to the token: the key's counter is
//! read first and the signing refused, nothing recorded or spent, when too few are left;
//! read again after (or, when the HSM's answer was lost, when settling); and the outcome
//! record says how many the counter moved — also when the signing failed after the HSM
//! signed — so the trail and the token's counter agree whatever happened.

use std::sync::Arc;

use audit::Event;
use hsm::keys as hk;

use super::key::{resolve, SigningKey};
use crate::core::change::Settled;
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::core::partitions::Partition;
use crate::text;

/// The one-time keys a signing spends, as the token's counter tells it.
pub(super) struct Spending {
    key: Arc<SigningKey>,
    before: Option<u64>,
    after: Option<u64>,
}

impl Spending {
    pub(super) fn new(key: &Arc<SigningKey>) -> Spending {
        Spending {
            key: key.clone(),
            before: None,
            after: None,
        }
    }

    /// The counter before signing `what`, which needs `needed` signatures: refused when
    /// fewer are left (another process may have used them since the batch was checked).
    pub(super) async fn before(
        &mut self,
        p: &Arc<Partition>,
        needed: u64,
        what: &str,
    ) -> ApiResult<Option<u64>> {
        let left = remaining(p, &self.key).await?;
        if let Some(left) = left.filter(|l| *l < needed) {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                text!(
                    "errors.hss_left_for_file",
                    "'{{label}}' has {{left}} signatures left; {{file}} needs {{needed}}.",
                    label = &self.key.summary.label,
                    left = left,
                    file = what,
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
        Ok(left)
    }

    /// The counter after signing (unread when the token cannot be read now).
    pub(super) async fn after(&mut self, p: &Arc<Partition>) {
        self.after = remaining(p, &self.key).await.ok().flatten();
    }

    /// The HSM's answer was lost: the counter tells whether one-time keys were spent. The
    /// signature is gone with the answer, so nothing was signed either way.
    pub(super) async fn settle<T>(&mut self, p: &Arc<Partition>, lost: ApiError) -> Settled<T> {
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

    /// The outcome record with what the counter moved (`signatures`, what the HSS views
    /// compare the token against) and where it stands.
    pub(super) fn record(&self, ev: Event) -> Event {
        match self.spent() {
            Some(spent) => ev
                .meta("signatures", spent)
                .meta("hss_remaining_after", self.after),
            None => ev,
        }
    }

    fn spent(&self) -> Option<u64> {
        Some(self.before?.saturating_sub(self.after?))
    }
}

/// The signatures the key has left, as the token says now.
pub(super) async fn remaining(p: &Arc<Partition>, key: &Arc<SigningKey>) -> ApiResult<Option<u64>> {
    let k = key.clone();
    Ok(p.pool
        .run_service_idempotent_async("sign.hss_left", move |s| {
            Ok(hk::summary(s, resolve(s, &k.summary)?)?.hss_keys_remaining)
        })
        .await?)
}
