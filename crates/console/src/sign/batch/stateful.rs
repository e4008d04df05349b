//! A file signed with a stateful (HSS) key, as a change to the token: the counter checked
//! and `sign.request` recorded before the HSM is asked, `sign` after with the one-time keys
//! the token spent (see [`crate::sign::stateful`]).

use std::sync::Arc;

use audit::Event;
use hsm::roles::Action;

use super::{signatures_needed, FileJob, Outputs, SignBatch};
use crate::core::change::{Change, ChangeKind, Settled};
use crate::core::error::{ApiError, ApiResult};
use crate::core::{partitions::Partition, Core};
use crate::sign::key::SigningKey;
use crate::sign::sign_error;
use crate::sign::stateful::Spending;

/// One file of a batch, signed with an HSS key.
pub(super) struct StatefulFile<'b, 'c> {
    batch: &'b SignBatch<'c>,
    key: Arc<SigningKey>,
    /// The key's place in the batch, and the file's.
    signer: usize,
    index: usize,
    file: Option<FileJob>,
    spending: Spending,
}

impl<'b, 'c> StatefulFile<'b, 'c> {
    pub(super) fn new(batch: &'b SignBatch<'c>, key: &Arc<SigningKey>, file: FileJob) -> Self {
        StatefulFile {
            batch,
            key: key.clone(),
            signer: file.signer,
            index: file.index,
            file: Some(file),
            spending: Spending::new(key),
        }
    }
}

impl Change for StatefulFile<'_, '_> {
    type Output = Outputs;

    fn kind(&self) -> ChangeKind {
        ChangeKind::HssSign
    }

    fn permission(&self) -> Option<Action> {
        Some(Action::UseKeys)
    }

    /// The counter now, enough for the file's formats.
    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let formats = &self.batch.signers[self.signer].formats;
        let needed = signatures_needed(1, formats, false, false);
        let name = &self.batch.outcomes[self.index].name;
        let left = self.spending.before(p, needed, name).await?;
        Ok(self
            .batch
            .file_event(&self.key, self.signer, self.index)
            .meta("hss_remaining", left))
    }

    /// Sign in every format, time-stamp, write; then read the counter again.
    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Outputs> {
        let file = self.file.take().expect("a file is signed once per change");
        let r = self
            .batch
            .sign_and_write(&self.key, file)
            .await
            .map_err(sign_error);
        self.spending.after(p).await;
        r
    }

    async fn settle(&mut self, _c: &Core, p: &Arc<Partition>, lost: ApiError) -> Settled<Outputs> {
        self.spending.settle(p, lost).await
    }

    fn outcome(&self, ev: Event, r: Result<&Outputs, &ApiError>) -> Event {
        let ev = match r {
            Ok(outs) => self.batch.signed_event(ev, &self.key, self.signer, outs),
            Err(_) => ev,
        };
        self.spending.record(ev)
    }
}
