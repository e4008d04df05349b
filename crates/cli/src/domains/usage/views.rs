//! What `usage` and `usage set` show.

use console::usage::UsageKeyView;
use console::ApiResult;
use hsm::keys::ObjectSummary;
use serde::Serialize;

use crate::render::{Page, Render};

/// `usage`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct UsageKeys(pub Vec<UsageKeyView>);

impl Render for UsageKeys {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        if self.0.is_empty() {
            writeln!(page, "No key with a usage limit is visible (Luna modules only; log in with HSMC_PIN to see private keys).");
            return Ok(());
        }
        let rows: Vec<Vec<String>> = self
            .0
            .iter()
            .map(|k| {
                vec![
                    k.label.clone(),
                    k.partition_label.clone(),
                    k.uses_left(),
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
                "PARTITION",
                "USES",
                "USED",
                "PER DAY (30 D)",
                "EXHAUSTED BY",
                "STATUS",
            ],
            &rows,
        );
        Ok(())
    }
}

/// `usage set`: the key as it is now.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct UsageSet(pub ObjectSummary);

impl Render for UsageSet {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let k = &self.0;
        match (k.usage_limit, k.usage_count) {
            (Some(limit), Some(used)) => writeln!(
                page,
                "{}: {} of {limit} uses left",
                k.label,
                limit.saturating_sub(used)
            ),
            _ => writeln!(page, "{}: the token does not report a usage limit", k.label),
        }
        Ok(())
    }
}
