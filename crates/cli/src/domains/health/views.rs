//! What `hss` and `stats` show.

use console::health::{HssKeyView, StatsSnapshot};
use console::ApiResult;
use serde::Serialize;

use crate::render::{Page, Render};

/// `hss` (exit 3 when a key's counter and the audit trail disagree).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct HssKeys(pub Vec<HssKeyView>);

impl Render for HssKeys {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let keys = &self.0;
        if keys.is_empty() {
            writeln!(page, "No HSS keys visible. Log in (HSMC_PIN) to see private keys, or generate one with `hsmc keys gen -a hss`.");
            return Ok(());
        }
        let rows: Vec<Vec<String>> = keys
            .iter()
            .map(|k| {
                vec![
                    k.label.clone(),
                    k.algorithm.clone(),
                    k.remaining
                        .map(|r| r.to_string())
                        .unwrap_or_else(|| "?".into()),
                    k.capacity.clone(),
                    format!("{:.1}%", k.used_percent),
                    format!("{:.2}", k.per_day_30),
                    k.projected_exhaustion.clone().unwrap_or_else(|| "-".into()),
                    k.status.to_string().to_uppercase(),
                ]
            })
            .collect();
        page.table(
            &[
                "KEY",
                "TYPES",
                "LEFT",
                "TOTAL",
                "USED",
                "PER DAY (30 D)",
                "EXHAUSTED BY",
                "STATUS",
            ],
            &rows,
        );
        for k in keys.iter().filter(|k| k.mismatch.is_some()) {
            writeln!(
                page,
                "\nWARNING {}: {}",
                k.label,
                k.mismatch.as_deref().unwrap_or_default()
            );
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        if self.0.iter().any(|k| k.mismatch.is_some()) {
            3
        } else {
            0
        }
    }
}

/// `stats`: one sample, one line in either form (JSON Lines with `--json`, so that
/// `--watch` is a stream).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct StatsSample(pub StatsSnapshot);

impl Render for StatsSample {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let s = &self.0;
        let t = &s.token;
        write!(
            page,
            "{}  {}  sessions {}/{}",
            s.taken_at,
            t.label,
            t.session_count.map(|v| v.to_string()).unwrap_or("?".into()),
            t.max_session_count
                .map(|v| v.to_string())
                .unwrap_or("-".into())
        );
        if let Some(l) = &s.luna {
            write!(
                page,
                "  busy {}  commands {}",
                l.busy_percent
                    .map(|b| format!("{b:.1}%"))
                    .unwrap_or("…".into()),
                l.commands.map(|c| c.to_string()).unwrap_or("?".into())
            );
            for b in &l.utilization {
                write!(page, "  {} {}", b.bin, b.count);
            }
        }
        writeln!(
            page,
            "  console ops {}, recovered {} (module recoveries {}, session reopens {})",
            s.metrics.ops.iter().map(|o| o.ok).sum::<u64>(),
            s.metrics.recovered_calls,
            s.metrics.module_recoveries,
            s.metrics.session_reopens
        );
        if let Some(g) = &s.ha {
            crate::domains::ha::group_text(page, g);
        }
        Ok(())
    }

    fn json(&self, page: &mut Page) {
        page.json_line(self);
    }
}
