//! What `hsmc audit …` shows.

use std::path::PathBuf;

use audit::export::ExportSummary;
use audit::Verdict;
use console::trail::{AuditStatusView, CheckpointView, ExportVerdict};
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
                r.event.timestamp,
                r.event.status,
                r.event.action,
                r.event.resource_id.clone().unwrap_or_default(),
                r.event.actor_id.clone().unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use audit::Finding;

    use super::*;
    use crate::render::testing::{json, text};

    fn intact() -> Verdict {
        Verdict::Intact {
            records: 5,
            last_seq: 5,
            checkpoints: 2,
            last_checkpoint: None,
            key_pinned: false,
            macs_checked: true,
        }
    }

    fn checkpoint(key_is_hsm_key: Option<bool>, problem: Option<&str>) -> CheckpointView {
        CheckpointView {
            checkpoint_no: 1,
            seq: 100,
            time: "2026-01-02T03:04:05Z".into(),
            epoch: 0,
            algorithm: "ML-DSA-65".into(),
            key_fingerprint: "SHA256:ab".into(),
            key_is_hsm_key,
            signature_valid: problem.is_none(),
            problem: problem.map(String::from),
        }
    }

    #[test]
    fn a_verified_store_is_one_sorted_document_with_an_empty_export() {
        let v = TrailCheck::of_store(intact());
        assert_eq!(
            json(&v).0,
            r#"{
  "export": {},
  "verdict": {
    "checkpoints": 2,
    "key_pinned": false,
    "last_checkpoint": null,
    "last_seq": 5,
    "macs_checked": true,
    "records": 5,
    "verdict": "intact"
  }
}
"#
        );
        assert_eq!(
            text(&v).0,
            "intact: 5 records, 2 checkpoints (MACs checked: yes, checkpoint key pinned from the HSM: no)\n"
        );
        assert_eq!(v.exit_code(), 0);
    }

    #[test]
    fn a_broken_export_names_the_record_and_exits_3() {
        let v = TrailCheck::of_export(ExportVerdict {
            path: "/tmp/trail.jsonl".into(),
            verdict: Verdict::broken(Finding::Modified { seq: 3 }, 2),
            macs_checked: false,
        });
        let (out, _) = json(&v);
        assert!(
            out.starts_with(
                "{\n  \"export\": {\n    \"macs_checked\": false,\n    \"path\": \"/tmp/trail.jsonl\"\n  },\n"
            ),
            "{out}"
        );
        assert!(text(&v).0.starts_with("BROKEN at record 3: "));
        assert_eq!(v.exit_code(), 3);
    }

    #[test]
    fn checkpoints_fail_on_a_bad_signature_or_a_foreign_key() {
        let none = Checkpoints(Vec::new());
        assert!(text(&none).0.starts_with("no checkpoints yet"));
        assert_eq!(none.exit_code(), 0);
        assert_eq!(json(&none).0, "[]\n");

        let unchecked = Checkpoints(vec![checkpoint(None, None)]);
        assert_eq!(
            text(&unchecked).0,
            "#1     seq 100      2026-01-02T03:04:05Z  epoch 0  ML-DSA-65  SHA256:ab  key not compared (not logged in); signature valid\n"
        );
        assert_eq!(unchecked.exit_code(), 0);

        let foreign = Checkpoints(vec![checkpoint(Some(false), None)]);
        assert!(text(&foreign).0.contains("NOT the HSM's key"));
        assert_eq!(foreign.exit_code(), 3);

        let forged = Checkpoints(vec![checkpoint(Some(true), Some("bad signature"))]);
        assert!(text(&forged)
            .0
            .contains("HSM key; SIGNATURE INVALID: bad signature"));
        assert_eq!(forged.exit_code(), 3);
    }

    #[test]
    fn the_checkpoint_key_is_a_pem_in_either_form_and_a_file_is_said_on_stderr() {
        let pem = "-----BEGIN PUBLIC KEY-----\nAA==\n-----END PUBLIC KEY-----\n";
        let shown = CheckpointKey::Shown { pem: pem.into() };
        assert_eq!(text(&shown), (pem.to_string(), String::new()));
        assert_eq!(json(&shown), (pem.to_string(), String::new()));

        let written = CheckpointKey::Written {
            path: "/tmp/cp.pem".into(),
        };
        assert_eq!(
            text(&written),
            (String::new(), "wrote /tmp/cp.pem\n".to_string())
        );
        assert_eq!(json(&written), (String::new(), String::new()));
    }
}
