//! What `hsmc audit …` shows.

use std::path::PathBuf;

use audit::export::ExportSummary;
use audit::Verdict;
use console::audit_ops::{AuditStatusView, CheckpointView, ExportVerdict};
use console::views::RecordView;
use console::ApiResult;
use serde::Serialize;

use crate::render::{yes_no, Page, Render};

/// `audit tail`: records, oldest first.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Records(pub Vec<RecordView>);

impl Render for Records {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        for r in &self.0 {
            writeln!(
                page,
                "{:>6}  {}  {:<8} {:<24} {} {}",
                r.seq,
                r.timestamp,
                r.status,
                r.action,
                r.resource_id.clone().unwrap_or_default(),
                r.actor_id.clone().unwrap_or_default()
            );
        }
        Ok(())
    }
}

/// `audit status`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct TrailStatus(pub AuditStatusView);

impl Render for TrailStatus {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let s = &self.0;
        writeln!(page, "trail        {}", s.log_id);
        writeln!(page, "store        {} ({})", s.location, s.store);
        writeln!(
            page,
            "key          {}",
            serde_json::to_string(&s.key).unwrap_or_default()
        );
        writeln!(
            page,
            "records      {} (+{} waiting for the key)",
            s.records, s.pending
        );
        writeln!(
            page,
            "checkpoints  {} (last: {})",
            s.checkpoints,
            s.last_checkpoint_time.as_deref().unwrap_or("none")
        );
        Ok(())
    }
}

/// `audit verify`: the verdict on the store or on an export (exit 3 if broken).
#[derive(Debug, Serialize)]
pub struct TrailCheck {
    pub verdict: Verdict,
    /// The export file checked, and how; empty for the store.
    pub export: ExportChecked,
}

#[derive(Debug, Default, Serialize)]
pub struct ExportChecked {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub macs_checked: Option<bool>,
}

impl TrailCheck {
    pub fn of_store(verdict: Verdict) -> TrailCheck {
        TrailCheck {
            verdict,
            export: ExportChecked::default(),
        }
    }

    pub fn of_export(v: ExportVerdict) -> TrailCheck {
        TrailCheck {
            verdict: v.verdict,
            export: ExportChecked {
                path: Some(v.path),
                macs_checked: Some(v.macs_checked),
            },
        }
    }
}

impl Render for TrailCheck {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        match &self.verdict {
            Verdict::Intact {
                records,
                checkpoints,
                key_pinned,
                macs_checked,
                ..
            } => {
                writeln!(page, "intact: {records} records, {checkpoints} checkpoints (MACs checked: {}, checkpoint key pinned from the HSM: {})", yes_no(*macs_checked), yes_no(*key_pinned));
            }
            Verdict::Broken {
                first_bad_seq,
                explanation,
                ..
            } => {
                writeln!(page, "BROKEN at record {first_bad_seq}: {explanation}");
            }
        }
        Ok(())
    }

    fn json(&self, page: &mut Page) {
        page.sorted_document(self);
    }

    fn exit_code(&self) -> u8 {
        if self.verdict.is_intact() {
            0
        } else {
            3
        }
    }
}

/// `audit checkpoints`: each with its signature checked (exit 3 if one does not hold or
/// was not made by the HSM's key).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Checkpoints(pub Vec<CheckpointView>);

impl Render for Checkpoints {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        if self.0.is_empty() {
            writeln!(
                page,
                "no checkpoints yet (one is written every 100 records, 10 minutes, and at exit)"
            );
        }
        for cp in &self.0 {
            let hsm = match cp.key_is_hsm_key {
                Some(true) => "HSM key",
                Some(false) => "NOT the HSM's key",
                None => "key not compared (not logged in)",
            };
            let sig = match &cp.problem {
                None => "signature valid".to_string(),
                Some(p) => format!("SIGNATURE INVALID: {p}"),
            };
            writeln!(
                page,
                "#{:<5} seq {:<8} {}  epoch {}  {}  {}  {}; {}",
                cp.checkpoint_no,
                cp.seq,
                cp.time,
                cp.epoch,
                cp.algorithm,
                cp.key_fingerprint,
                hsm,
                sig
            );
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        if self
            .0
            .iter()
            .all(|c| c.signature_valid && c.key_is_hsm_key != Some(false))
        {
            0
        } else {
            3
        }
    }
}

/// `audit public-key`: the checkpoint key's PEM, shown (in either form: a PEM is what a
/// program reads) or written to a file (said on stderr, nothing in JSON).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum CheckpointKey {
    Shown { pem: String },
    Written { path: PathBuf },
}

impl Render for CheckpointKey {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        match self {
            CheckpointKey::Shown { pem } => page.verbatim(pem),
            CheckpointKey::Written { path } => {
                writeln!(page.err(), "wrote {}", path.display());
            }
        }
        Ok(())
    }

    fn json(&self, page: &mut Page) {
        if let CheckpointKey::Shown { pem } = self {
            page.verbatim(pem);
        }
    }
}

/// `audit export`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Exported(pub ExportSummary);

impl Render for Exported {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let s = &self.0;
        writeln!(
            page,
            "wrote {} records and {} checkpoints to {}",
            s.records, s.checkpoints, s.path
        );
        Ok(())
    }
}
