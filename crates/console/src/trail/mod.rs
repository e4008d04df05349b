//! The audit trail as officers see it: its state, browsing with filters, verification with
//! progress and cancel, exports (verifiable JSON Lines, CSV for spreadsheets), offline
//! verification of an export, key rotation.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::Serialize;
use ts_rs::TS;

use audit::export::{ExportSummary, Range};
use audit::store::Query;
use audit::{Event, Verdict};

pub mod findings;

use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::core::views::*;
use crate::text;

/// What the trail's operations keep between calls: the last verification (the status, the
/// overview and the schedule read it), and the back-off after scheduled runs that failed.
#[derive(Default)]
pub struct State {
    pub(crate) last_verification: parking_lot::RwLock<Option<LastVerification>>,
    /// Scheduled verifications that could not run in a row, and when the next may try.
    pub(crate) verify_retry: parking_lot::Mutex<Option<(u32, std::time::Instant)>>,
}

crate::core::domain_service!(
    /// The audit trail's operations, as a service over the core (`Console::trail`).
    Trail, State
);

/// The last verification of the trail (manual or scheduled).
#[derive(Debug, Clone, Serialize, TS)]
pub struct LastVerification {
    pub at: String,
    pub intact: bool,
    /// Records checked (intact) or checked before the first bad one.
    pub records: i64,
    pub first_bad_seq: Option<i64>,
    /// What is wrong, in English (`finding` says it in a form each language translates).
    pub explanation: Option<String>,
    pub finding: Option<audit::verify::Finding>,
    pub trigger: VerifyTrigger,
}

impl LastVerification {
    /// A verification's verdict, made at `at`.
    pub fn from_verdict(v: &Verdict, at: String, trigger: VerifyTrigger) -> Self {
        match v {
            Verdict::Intact { records, .. } => LastVerification {
                at,
                intact: true,
                records: *records,
                first_bad_seq: None,
                explanation: None,
                finding: None,
                trigger,
            },
            Verdict::Broken {
                finding,
                first_bad_seq,
                explanation,
                records_checked,
            } => LastVerification {
                at,
                intact: false,
                records: *records_checked,
                first_bad_seq: Some(*first_bad_seq),
                explanation: Some(explanation.clone()),
                finding: Some(finding.clone()),
                trigger,
            },
        }
    }
}

/// Who asked for a verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum VerifyTrigger {
    /// The officer (Verify trail, `hsmc audit verify`).
    Manual,
    /// The schedule in the settings.
    Scheduled,
}

hsm::wire_display!(VerifyTrigger);

/// A checkpoint with its signature checked.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CheckpointView {
    pub checkpoint_no: i64,
    pub seq: i64,
    pub time: String,
    pub epoch: i64,
    pub algorithm: String,
    /// SHA-256 of the signing key's SPKI.
    pub key_fingerprint: String,
    /// The key is the one held by the HSM (when the holder is logged in).
    pub key_is_hsm_key: Option<bool>,
    pub signature_valid: bool,
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct AuditStatusView {
    pub log_id: String,
    pub location: String,
    pub store: AuditStoreKind,
    pub key: AuditKeyView,
    pub records: i64,
    /// Events waiting for the key (chained at the next unlock).
    pub pending: i64,
    pub last_seq: Option<i64>,
    pub checkpoints: i64,
    pub last_checkpoint_time: Option<String>,
    pub last_checkpoint_seq: Option<i64>,
    pub last_verification: Option<LastVerification>,
    /// As in the settings.
    pub auto_verify: crate::core::settings::AutoVerify,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    Jsonl,
    Csv,
}

/// Offline verification of an export file.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ExportVerdict {
    pub path: String,
    pub verdict: Verdict,
    /// Whether record MACs were checked (the trail's key was unlocked) or only the digest
    /// chain against the signed checkpoints.
    pub macs_checked: bool,
}

impl Trail<'_> {
    pub async fn audit_status(self) -> ApiResult<AuditStatusView> {
        let log = self.audit();
        let store = log.store();
        let head = store.head(log.log_id()).await?;
        let cps = log.checkpoints().await?;
        // Sequence numbers start at 1 and have no gaps in an intact trail.
        let records = head.as_ref().map(|h| h.0).unwrap_or(0);
        Ok(AuditStatusView {
            log_id: log.log_id().to_string(),
            location: crate::core::redact_url(&log.config().location),
            store: AuditStoreKind::of(log),
            key: log.key_status().await?.into(),
            records,
            pending: store.pending_count(log.log_id()).await?,
            last_seq: head.map(|h| h.0),
            checkpoints: cps.len() as i64,
            last_checkpoint_time: cps.last().map(|c| c.time.clone()),
            last_checkpoint_seq: cps.last().map(|c| c.seq),
            last_verification: self.state.last_verification.read().clone(),
            auto_verify: self.settings().audit.auto_verify,
        })
    }

    /// Records, newest first unless `q.ascending`; at most 1,000 per page.
    pub async fn audit_records(self, mut q: Query) -> ApiResult<Vec<RecordView>> {
        q.limit = q.limit.clamp(1, 1000);
        Ok(self
            .audit()
            .records(&q)
            .await?
            .into_iter()
            .map(RecordView::from)
            .collect())
    }

    /// The newest `n` records, oldest first (`hsmc audit tail -n`): all `n`, however many,
    /// where a browse answers at most 1,000.
    pub async fn audit_tail(self, n: u64) -> ApiResult<Vec<RecordView>> {
        Ok(self
            .audit()
            .newest(n)
            .await?
            .into_iter()
            .map(RecordView::from)
            .collect())
    }

    /// Records and failures per day for the last `days` days (UTC, today included), one
    /// entry per day, oldest first (days without records count 0).
    pub async fn audit_days(self, days: u32) -> ApiResult<Vec<audit::store::DayCount>> {
        let days = days.clamp(1, 366) as i64;
        let today = time::OffsetDateTime::now_utc().date();
        let first = today - time::Duration::days(days - 1);
        let day =
            |d: time::Date| format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day());
        let counts = self
            .audit()
            .store()
            .daily_counts(
                self.audit().log_id(),
                &format!("{}T00:00:00.000Z", day(first)),
            )
            .await?;
        Ok((0..days)
            .map(|i| {
                let d = day(first + time::Duration::days(i));
                counts
                    .iter()
                    .find(|c| c.day == d)
                    .cloned()
                    .unwrap_or(audit::store::DayCount {
                        day: d,
                        records: 0,
                        failures: 0,
                    })
            })
            .collect())
    }

    /// Verify the whole trail (MACs with the HSM-held key, checkpoints against the key
    /// pinned from the HSM, anchors). Recorded, whatever the verdict.
    pub async fn audit_verify(
        self,
        progress: &(dyn Fn(i64, i64) + Send + Sync),
        cancel: &AtomicBool,
    ) -> ApiResult<Verdict> {
        self.audit_verify_as(progress, cancel, VerifyTrigger::Manual)
            .await
    }

    pub(crate) async fn audit_verify_as(
        self,
        progress: &(dyn Fn(i64, i64) + Send + Sync),
        cancel: &AtomicBool,
        trigger: VerifyTrigger,
    ) -> ApiResult<Verdict> {
        let pinned = self.audit_signer_spki();
        let v = self.audit().verify(pinned, progress, cancel).await?;
        *self.state.last_verification.write() = Some(LastVerification::from_verdict(
            &v,
            audit::now_rfc3339(),
            trigger,
        ));
        let ev = Event::new("audit.verify", "audit_trail")
            .resource(self.audit().log_id().to_string())
            .meta("verdict", &v)
            .meta("trigger", trigger);
        let ev = if v.is_intact() {
            ev
        } else {
            ev.failed(crate::core::error::ErrorCode::AuditBroken.to_string())
        };
        self.record(ev).await;
        Ok(v)
    }

    /// Export to `out` (written completely or not at all). Recorded.
    pub async fn audit_export(
        self,
        format: ExportFormat,
        range: Range,
        out: &Path,
    ) -> ApiResult<ExportSummary> {
        if out.is_dir() {
            return Err(ApiError::invalid(text!(
                "errors.folder_choose_file_name",
                "{{out}} is a folder; choose a file name.",
                out = out.display()
            )));
        }
        let r = match format {
            ExportFormat::Jsonl => {
                let pk = self.audit_signer_spki().map(|k| (String::new(), k));
                let pk = match pk {
                    Some((_, k)) => self
                        .audit()
                        .checkpoints()
                        .await?
                        .last()
                        .map(|c| (c.algorithm.clone(), k.clone()))
                        .or(Some(("".into(), k))),
                    None => None,
                };
                audit::export::export_jsonl(self.audit(), &range, out, pk).await
            }
            ExportFormat::Csv => audit::export::export_csv(self.audit(), &range, out).await,
        }
        .map_err(ApiError::from);
        let ev = Event::new("audit.export", "audit_trail")
            .resource(out.display().to_string())
            .meta("format", format)
            .meta("range", &range);
        let ev = match &r {
            Ok(s) => ev.meta("records", s.records),
            Err(_) => ev,
        };
        self.record_outcome(ev, &r).await;
        r
    }

    /// Verify an exported JSON Lines file. With the trail unlocked the record MACs are
    /// checked too; the checkpoint key is pinned from the HSM when this console has it.
    pub async fn audit_verify_export(self, path: &Path) -> ApiResult<ExportVerdict> {
        let p = path.to_path_buf();
        let parsed = tokio::task::spawn_blocking(move || audit::export::read_jsonl(&p))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
            .map_err(|e| {
                ApiError::new(
                    ErrorCode::AuditBroken,
                    text!(
                        "errors.not_readable_audit_export",
                        "{{path}} is not a readable audit export: {{error}}",
                        path = path.display(),
                        error = e
                    ),
                )
            })?;
        let keys = if parsed.log_id == self.audit().log_id() {
            self.audit().chain_keys().await
        } else {
            None
        };
        let macs = keys.is_some();
        let verdict = audit::export::verify_export(&parsed, keys, self.audit_signer_spki());
        Ok(ExportVerdict {
            path: path.display().to_string(),
            verdict,
            macs_checked: macs,
        })
    }

    /// Start a new key epoch on the partition holding the key.
    pub async fn audit_rotate_key(self) -> ApiResult<i64> {
        let holder = self
            .partitions()
            .into_iter()
            .find(|p| p.holds_audit_key())
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::AuditUnavailable,
                    text!("errors.audit_key_locked", "The audit key is locked."),
                )
                .suggest(text!(
                    "errors.log_partition_holds_audit_key",
                    "Log in to the partition that holds the audit key."
                ))
            })?;
        let log_id = self.audit().log_id().to_string();
        let (pool, holder_name) = self.trail_pool_for(&holder);
        let kek = crate::core::audit_hsm::kek_id(&log_id);
        let label = format!("hsm-console audit key {log_id}");
        let on = pool.clone();
        let wrapper =
            tokio::task::spawn_blocking(move || hsm::vault::Wrapper::ensure(&on, &kek, &label))
                .await
                .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))??;
        let w = Arc::new(crate::core::audit_hsm::HsmKeyWrapper {
            pool,
            wrapper,
            holder: holder_name,
        });
        let epoch = self.audit().rotate_key(w).await?;
        self.emit(ConsoleEvent::AuditChanged {});
        Ok(epoch)
    }

    /// Every checkpoint with its signature checked, and whether it was made by the HSM's key.
    pub async fn audit_checkpoints(self) -> ApiResult<Vec<CheckpointView>> {
        // The HSM's key, and the keys it succeeded as the trail recorded (upgrades).
        let trusted = match self.audit_signer_spki() {
            Some(k) => Some(audit::verify::trusted_keys(
                &k,
                &self.audit().key_moves().await?,
            )),
            None => None,
        };
        Ok(self
            .audit()
            .checkpoints()
            .await?
            .into_iter()
            .map(|c| {
                let check = audit::verify::check_checkpoint_signature(&c);
                let fp = hex::decode(&c.public_key)
                    .map(|k| {
                        format!(
                            "SHA256:{}",
                            hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&k))
                        )
                    })
                    .unwrap_or_default();
                CheckpointView {
                    checkpoint_no: c.checkpoint_no,
                    seq: c.seq,
                    time: c.time.clone(),
                    epoch: c.epoch,
                    algorithm: c.algorithm.clone(),
                    key_fingerprint: fp,
                    key_is_hsm_key: trusted.as_ref().map(|t| t.contains(&c.public_key)),
                    signature_valid: check.is_ok(),
                    problem: check.err(),
                }
            })
            .collect())
    }

    /// The checkpoint public key as PEM, so an outsider can check checkpoints without the
    /// console: the HSM's key when its holder is logged in, else the newest checkpoint's.
    pub async fn audit_public_key_pem(self) -> ApiResult<String> {
        let spki = match self.audit_signer_spki() {
            Some(k) => k,
            None => {
                let cps = self.audit().checkpoints().await?;
                let last = cps.last().ok_or_else(|| ApiError::invalid(text!("errors.there_no_checkpoint_yet_log", "There is no checkpoint yet; log in to the partition that holds the audit key.")))?;
                hex::decode(&last.public_key).map_err(|e| ApiError::invalid(e.to_string()))?
            }
        };
        der::pem::encode_string("PUBLIC KEY", der::pem::LineEnding::LF, &spki)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
    }

    /// Write a checkpoint now.
    pub async fn audit_checkpoint(self) -> ApiResult<audit::Checkpoint> {
        let c = self.audit().checkpoint().await?;
        self.emit(ConsoleEvent::AuditChanged {});
        Ok(c)
    }
}

impl Trail<'_> {
    /// Verify the trail on the schedule in the settings (hourly, daily) when a verification
    /// is due and the trail's key is open. The ticker calls this every 30 s; returns whether
    /// a verification ran.
    pub async fn scheduled_verification(self) -> bool {
        let every = match self.settings().audit.auto_verify {
            crate::core::settings::AutoVerify::Off => return false,
            crate::core::settings::AutoVerify::Hourly => time::Duration::hours(1),
            crate::core::settings::AutoVerify::Daily => time::Duration::days(1),
        };
        // The in-memory check first: most ticks end here without asking the store.
        let due = match self.state.last_verification.read().as_ref() {
            None => true,
            Some(v) => {
                time::OffsetDateTime::parse(&v.at, &time::format_description::well_known::Rfc3339)
                    .map(|t| time::OffsetDateTime::now_utc() - t >= every)
                    .unwrap_or(true)
            }
        };
        // After a run that could not finish (the store unreachable…), wait 1, 2, 4… minutes,
        // at most the schedule's interval, instead of trying again on every 30 s tick.
        let backing_off = self
            .state
            .verify_retry
            .lock()
            .is_some_and(|(_, at)| std::time::Instant::now() < at);
        if !due
            || backing_off
            || !matches!(
                self.audit().key_status().await,
                Ok(audit::KeyStatus::Unlocked { .. })
            )
        {
            return false;
        }
        let r = self
            .audit_verify_as(
                &|_, _| {},
                &std::sync::atomic::AtomicBool::new(false),
                VerifyTrigger::Scheduled,
            )
            .await;
        let mut retry = self.state.verify_retry.lock();
        match r {
            Ok(_) => *retry = None,
            Err(e) => {
                let failures = retry.map_or(1, |(n, _)| n + 1);
                let wait = std::time::Duration::from_secs(60 << (failures - 1).min(10)).min(
                    std::time::Duration::from_secs(every.whole_seconds().max(60) as u64),
                );
                *retry = Some((failures, std::time::Instant::now() + wait));
                tracing::warn!(
                    "scheduled audit verification failed ({failures} in a row; next try in {} s): {}",
                    wait.as_secs(),
                    e.message
                );
            }
        }
        drop(retry);
        self.emit(ConsoleEvent::AuditChanged {});
        true
    }
}
