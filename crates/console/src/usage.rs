//! Luna's per-key usage limits (`CKA_USAGE_LIMIT`, `CKA_USAGE_COUNT`; Luna modules only):
//! every key that has one, as "N of M uses left", with the burn rate from the audit trail
//! and the projected exhaustion the HSS view gives HSS keys; and setting or raising a
//! limit, which Luna allows the crypto officer and the security officer (audited first,
//! refused when the trail cannot record it).

use serde::Serialize;
use ts_rs::TS;

use audit::store::Query;
use audit::Event;
use hsm::keys::{self as hk, ObjectSummary};
use p11::names::luna::CKA_USAGE_LIMIT;
use p11::Template;

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::health::{hss_history, projected_exhaustion, status_of, HssStatus};
use crate::Console;

/// Luna's range for a limit.
pub const MAX_USAGE_LIMIT: u64 = 0xFFFF_FFFF;

#[derive(Debug, Clone, Serialize, TS)]
pub struct UsageKeyView {
    pub partition_id: String,
    pub partition_label: String,
    #[ts(type = "number")]
    pub handle: u64,
    pub class: String,
    pub label: String,
    pub id_hex: String,
    pub algorithm: String,
    #[ts(type = "number")]
    pub limit: u64,
    #[ts(type = "number")]
    pub used: u64,
    #[ts(type = "number")]
    pub left: u64,
    pub used_percent: f64,
    /// Against the same thresholds as HSS keys (Settings).
    pub status: HssStatus,
    /// Signatures per day over the last 7, 30 and 90 days, from the audit trail.
    pub per_day_7: f64,
    pub per_day_30: f64,
    pub per_day_90: f64,
    pub projected_exhaustion: Option<String>,
}

impl UsageKeyView {
    /// "3 of 10 uses left".
    pub fn uses_left(&self) -> String {
        format!("{} of {} uses left", self.left, self.limit)
    }
}

impl Console {
    /// Every key with a usage limit on the logged-in Luna partitions.
    pub async fn usage_keys(&self) -> ApiResult<Vec<UsageKeyView>> {
        let settings = self.settings();
        let records = self
            .audit()
            .store()
            .query(
                self.audit().log_id(),
                &Query {
                    limit: 1_000_000,
                    ascending: true,
                    ..Query::default()
                },
            )
            .await?;
        let mut out = Vec::new();
        for p in self.partitions() {
            if p.logged_in().is_none() || p.module.module.family() != p11::Family::Luna {
                continue;
            }
            let Ok(keys) = self.list_keys(&p.id).await else {
                continue;
            };
            for k in keys {
                let (Some(limit), Some(used)) = (k.usage_limit, k.usage_count) else {
                    continue;
                };
                let left = limit.saturating_sub(used);
                let used_percent = if limit > 0 {
                    100.0 * used.min(limit) as f64 / limit as f64
                } else {
                    100.0
                };
                let (d7, d30, d90, _, _) =
                    hss_history(&records, &k.id_hex, Some(limit as u128), Some(left));
                out.push(UsageKeyView {
                    partition_id: p.id.clone(),
                    partition_label: p.label.clone(),
                    handle: k.handle,
                    class: k.class.clone(),
                    label: k.label.clone(),
                    id_hex: k.id_hex.clone(),
                    algorithm: k.algorithm.clone(),
                    limit,
                    used,
                    left,
                    used_percent,
                    status: status_of(left, 100.0 - used_percent, &settings),
                    per_day_7: d7,
                    per_day_30: d30,
                    per_day_90: d90,
                    projected_exhaustion: projected_exhaustion(d7, d30, d90, left),
                });
            }
        }
        Ok(out)
    }

    /// Set or raise a key's usage limit (Luna: the crypto officer or the SO). A limit below
    /// what the key already used is refused.
    pub async fn set_usage_limit(
        &self,
        partition: &str,
        handle: u64,
        limit: u64,
    ) -> ApiResult<ObjectSummary> {
        if !(1..=MAX_USAGE_LIMIT).contains(&limit) {
            return Err(ApiError::invalid(format!(
                "A usage limit is 1 to {MAX_USAGE_LIMIT} uses (Luna's range)."
            )));
        }
        let p = self.partition_ref(partition).await?;
        if p.module.module.family() != p11::Family::Luna {
            return Err(ApiError::new(
                ErrorCode::Unsupported,
                "Per-key usage limits are a Luna feature; this module is not a Luna.",
            ));
        }
        if p.logged_in().is_none() {
            return Err(ApiError::new(
                ErrorCode::NotLoggedIn,
                "Log in as the crypto officer or the security officer to set a usage limit.",
            ));
        }
        let before = p
            .pool
            .run_service_idempotent_async("keys.usage.read", move |s| Ok(hk::summary(s, handle)?))
            .await?;
        if let Some(used) = before.usage_count.filter(|u| *u > limit) {
            return Err(ApiError::invalid(format!(
                "The key has already been used {used} times; a limit of {limit} would be below that."
            ))
            .suggest("Give a limit of at least the uses so far."));
        }
        let ev = Event::new("key.usage_limit", "key")
            .resource(&before.label)
            .meta("partition", &p.id)
            .meta("id", &before.id_hex)
            .meta("from", before.usage_limit)
            .meta("to", limit)
            .meta("used", before.usage_count);
        self.audit_first(
            Event::new("key.usage_limit.request", "key")
                .resource(&before.label)
                .meta("partition", &p.id)
                .meta("id", &before.id_hex)
                .meta("to", limit),
        )
        .await?;
        let r = p
            .pool
            .run_service_async("keys.usage.set", move |s| {
                s.set_attributes(handle, &mut Template::new().ulong(CKA_USAGE_LIMIT, limit))?;
                Ok(hk::summary(s, handle)?)
            })
            .await
            .map_err(ApiError::from);
        self.record_outcome(ev, &r).await;
        r
    }
}
