//! What `pqc` shows.

use console::pqc::Readiness;
use console::ApiResult;
use hsmc_pqc::capacity::{Capacity, CapacityVerdict};
use hsmc_pqc::Status;
use serde::Serialize;

use crate::render::{Page, Render};

/// `pqc`: every key judged under the policy; exit 1 when anything is past due.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ReadinessView(pub Readiness);

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::DueWithinAYear => "DUE WITHIN A YEAR",
        Status::Deprecated => "DEPRECATED",
        Status::PastDue => "PAST DUE",
        Status::Unjudged => "CHECK BY HAND",
    }
}

/// The partition's signing volume and whether it keeps up with the successors.
fn capacity(page: &mut Page, c: &Capacity) {
    writeln!(page);
    if c.signatures == 0 {
        writeln!(
            page,
            "  Capacity: the trail records no signature on this partition in the last {} days.",
            c.window_days
        );
        return;
    }
    writeln!(
        page,
        "  Capacity over {} days: {} signature(s); peak {} per minute ({}), {} per day ({}).",
        c.window_days,
        c.signatures,
        c.peak_per_minute,
        c.peak_minute.as_deref().unwrap_or("-"),
        c.peak_per_day,
        c.peak_day.as_deref().unwrap_or("-")
    );
    for o in &c.operations {
        match &o.ceiling {
            Some(ceiling) => writeln!(
                page,
                "  As {}: {} keys, {:.2}/s at the peak minute against {:.1}/s measured by {} ({}){}.",
                o.op,
                o.keys,
                o.needed_per_s,
                ceiling.per_s,
                ceiling.probe_id,
                ceiling.measured_at.get(..10).unwrap_or(&ceiling.measured_at),
                if ceiling.client_bound {
                    "; that probe hit this computer's limit, not the HSM's"
                } else {
                    ""
                }
            ),
            None => writeln!(
                page,
                "  As {}: {} keys, {:.2}/s at the peak minute; not probed on this partition yet (hsmc probe --op {} --sweep 1,2,4,8,16 --duration 3).",
                o.op, o.keys, o.needed_per_s, o.op
            ),
        }
    }
    match c.verdict {
        CapacityVerdict::KeepsUp | CapacityVerdict::DoesNotKeepUp => writeln!(
            page,
            "  {}: the peak minute takes {:.1} % of one HSM; headroom ×{:.1}; {} HSM(s) at 80 % of the ceiling.",
            if c.verdict == CapacityVerdict::KeepsUp {
                "Keeps up"
            } else {
                "DOES NOT KEEP UP"
            },
            100.0 * c.peak_share.unwrap_or(0.0),
            c.headroom.unwrap_or(0.0),
            c.hsms.unwrap_or(1)
        ),
        CapacityVerdict::NeedsProbe => writeln!(
            page,
            "  Whether it keeps up: run the probes above first."
        ),
        CapacityVerdict::NoUse => {}
    }
    if c.uncosted_signatures > 0 {
        writeln!(
            page,
            "  {} signatures by keys no probe operation fits are not costed.",
            c.uncosted_signatures
        );
    }
}

impl Render for ReadinessView {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let r = &self.0;
        writeln!(
            page,
            "Policy: {} ({}), judged on {}",
            r.policy, r.source, r.date
        );
        for p in &r.partitions {
            let c = &p.counts;
            writeln!(page);
            writeln!(
                page,
                "{} (serial {}): {} quantum-vulnerable, {} post-quantum, {} not quantum-relevant, {} unknown; {} past due, {} deprecated, {} due within a year",
                p.partition_label, p.serial, c.quantum_vulnerable, c.post_quantum,
                c.not_quantum_relevant, c.unknown, c.past_due, c.deprecated, c.due_within_a_year
            );
            if p.objects.is_empty() {
                writeln!(
                    page,
                    "  No keys visible. Log in (HSMC_PIN) to see private and secret keys."
                );
                continue;
            }
            let rows: Vec<Vec<String>> = p
                .objects
                .iter()
                .map(|o| {
                    vec![
                        o.label.clone(),
                        o.object_class.to_lowercase().replace('_', " "),
                        o.algorithm.name.clone(),
                        o.algorithm.nist_category.to_string(),
                        serde_json::to_value(o.algorithm.class)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                            .unwrap_or_default(),
                        status_word(o.verdict.status).into(),
                        o.verdict
                            .disallowed_after
                            .clone()
                            .unwrap_or_else(|| "-".into()),
                        o.successor
                            .as_ref()
                            .map_or_else(|| "-".into(), |s| s.preset.clone()),
                        if o.evidence.seen {
                            o.evidence.uses_90_days.to_string()
                        } else {
                            "never".into()
                        },
                        o.evidence
                            .last_use
                            .as_deref()
                            .map(|t| t.get(..10).unwrap_or(t).to_string())
                            .unwrap_or_else(|| "-".into()),
                    ]
                })
                .collect();
            page.table(
                &[
                    "KEY",
                    "CLASS",
                    "ALGORITHM",
                    "CAT",
                    "QUANTUM",
                    "STATUS",
                    "DISALLOWED AFTER",
                    "SUCCESSOR",
                    "USED (90 D)",
                    "LAST USE",
                ],
                &rows,
            );
            capacity(page, &p.capacity);
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        u8::from(self.0.past_due())
    }
}

/// `pqc --cbom FILE`: what was written.
#[derive(Debug, Serialize)]
pub struct CbomWritten {
    pub path: String,
    pub algorithms: usize,
    pub keys: usize,
    pub tokens: usize,
}

impl CbomWritten {
    pub fn of(path: &std::path::Path, bytes: &[u8]) -> CbomWritten {
        let doc: serde_json::Value = serde_json::from_slice(bytes).unwrap_or_default();
        let components = doc["components"].as_array().cloned().unwrap_or_default();
        let tokens: Vec<&serde_json::Value> = components
            .iter()
            .filter(|c| c["type"] == "device")
            .collect();
        CbomWritten {
            path: path.display().to_string(),
            algorithms: components.len() - tokens.len(),
            keys: tokens
                .iter()
                .map(|t| t["components"].as_array().map_or(0, Vec::len))
                .sum(),
            tokens: tokens.len(),
        }
    }
}

impl Render for CbomWritten {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        writeln!(
            page,
            "CBOM (CycloneDX 1.6) written to {}: {} keys on {} token(s), {} algorithms.",
            self.path, self.keys, self.tokens, self.algorithms
        );
        Ok(())
    }
}
