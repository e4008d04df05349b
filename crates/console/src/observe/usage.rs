//! Luna's per-key usage limits (`CKA_USAGE_LIMIT`, `CKA_USAGE_COUNT`; Luna modules only):
//! every key that has one, as "N of M uses left", with the burn rate from the audit trail
//! and the projected exhaustion the HSS view gives HSS keys; and setting or raising a
//! limit, which Luna allows the crypto officer and the security officer (audited first,
//! refused when the trail cannot record it).

use serde::Serialize;
use ts_rs::TS;

use audit::Event;
use hsm::keys::{self as hk, ObjectSummary};
use p11::names::luna::CKA_USAGE_LIMIT;
use p11::Template;

use crate::core::change::{Change, ChangeKind};
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::core::{partitions::Partition, Core};
use crate::observe::health::{hss_history, projected_exhaustion, status_of, HssPoint, HssStatus};
use crate::observe::history::{self, KeyHistories, KeyRecord};
use crate::observe::Observe;
use crate::text;
use std::sync::Arc;

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
    /// Uses left over time, from the trail's records (after each signing record and each
    /// change of the limit) and the token's count now; for the chart, as HSS keys have.
    pub history: Vec<HssPoint>,
}

impl UsageKeyView {
    /// "3 of 10 uses left".
    pub fn uses_left(&self) -> String {
        format!("{} of {} uses left", self.left, self.limit)
    }
}

/// Uses consumed by a record: the signatures a successful signing record counts.
fn uses(k: &KeyRecord) -> u64 {
    let r = &k.record;
    if r.event.status == "success"
        && matches!(
            r.event.action.as_str(),
            "sign" | "sign.manifest" | "cert.issue"
        )
    {
        k.subject_u64("signatures").unwrap_or(0)
    } else {
        0
    }
}

/// Uses left over time, told backwards from the token's count now: before a signing
/// record there were its uses more; before a change of the limit, the old limit less the
/// uses then (the record's `from` and `used`). It starts at the key's generation, at a
/// limit set where there was none, or at the oldest record of the key. (`records` oldest
/// first; those of other keys are skipped.)
pub(crate) fn usage_points(mine: &[KeyRecord], left_now: u64) -> Vec<HssPoint> {
    let mut out = vec![HssPoint {
        at: audit::now_rfc3339(),
        remaining: left_now,
    }];
    let mut left = left_now;
    for k in mine.iter().rev() {
        let r = &k.record;
        let n = uses(k);
        if n > 0 {
            out.push(HssPoint {
                at: r.event.timestamp.clone(),
                remaining: left,
            });
            left = left.saturating_add(n);
            continue;
        }
        if r.event.status != "success" {
            continue;
        }
        match r.event.action.as_str() {
            "key.usage_limit" => {
                out.push(HssPoint {
                    at: r.event.timestamp.clone(),
                    remaining: left,
                });
                match (k.subject_u64("from"), k.subject_u64("used")) {
                    (Some(from), Some(used)) => left = from.saturating_sub(used),
                    _ => break,
                }
            }
            "key.generate" => {
                out.push(HssPoint {
                    at: r.event.timestamp.clone(),
                    remaining: left,
                });
                break;
            }
            _ => {}
        }
    }
    out.reverse();
    out
}

/// Keys with a usage limit, with the limit and the count of uses each has, by the
/// partition they are on.
pub(crate) type UsageListed = Vec<(Arc<Partition>, Vec<(ObjectSummary, u64, u64)>)>;

impl Observe<'_> {
    /// Every key with a usage limit on the logged-in Luna partitions.
    pub async fn usage_keys(self) -> ApiResult<Vec<UsageKeyView>> {
        let listed = self.usage_listed().await;
        let histories = self
            .key_histories(history::names(&listed, |(k, ..)| k))
            .await?;
        Ok(self.usage_views(&listed, &histories))
    }

    /// The keys with a usage limit on the logged-in Luna partitions (a partition that
    /// cannot be read is left out).
    pub(crate) async fn usage_listed(self) -> UsageListed {
        let mut listed = Vec::new();
        for p in self.partitions() {
            if p.logged_in().is_none() || p.module.module.family() != p11::Family::Luna {
                continue;
            }
            if let Ok(keys) = self.list_keys(&p.id).await {
                // Each key with a limit, with the limit and the count of uses it has.
                let limited: Vec<(ObjectSummary, u64, u64)> = keys
                    .into_iter()
                    .filter_map(|k| {
                        let (limit, used) = (k.usage_limit?, k.usage_count?);
                        Some((k, limit, used))
                    })
                    .collect();
                listed.push((p, limited));
            }
        }
        listed
    }

    /// The usage-limited keys' views, with their histories from `histories`.
    pub(crate) fn usage_views(
        self,
        listed: &UsageListed,
        histories: &KeyHistories,
    ) -> Vec<UsageKeyView> {
        let settings = self.settings();
        let mut out = Vec::new();
        for (p, keys) in listed {
            for &(ref k, limit, used) in keys {
                let left = limit.saturating_sub(used);
                let used_percent = if limit > 0 {
                    100.0 * used.min(limit) as f64 / limit as f64
                } else {
                    100.0
                };
                let mine = histories.of(p.token_name(), &k.id_hex);
                let (d7, d30, d90, _, _) = hss_history(mine, Some(limit as u128), Some(left));
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
                    status: status_of(Some(left), 100.0 - used_percent, &settings),
                    per_day_7: d7,
                    per_day_30: d30,
                    per_day_90: d90,
                    projected_exhaustion: projected_exhaustion(d7, d30, d90, left),
                    history: usage_points(mine, left),
                });
            }
        }
        out
    }

    /// Set or raise a key's usage limit (Luna: the crypto officer or the SO). A limit below
    /// what the key already used is refused.
    pub async fn set_usage_limit(
        self,
        partition: &str,
        handle: u64,
        limit: u64,
    ) -> ApiResult<ObjectSummary> {
        self.changes()
            .apply(
                partition,
                SetUsageLimit {
                    handle,
                    limit,
                    target: None,
                },
            )
            .await
    }
}

/// Luna's `CKA_USAGE_LIMIT` set on the key the officer chose.
struct SetUsageLimit {
    handle: u64,
    limit: u64,
    target: Option<ObjectSummary>,
}

impl Change for SetUsageLimit {
    type Output = ObjectSummary;

    fn kind(&self) -> ChangeKind {
        ChangeKind::UsageLimit
    }

    fn permission(&self) -> Option<hsm::roles::Action> {
        None // the crypto officer or the SO: any login that reaches the key
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let limit = self.limit;
        if !(1..=MAX_USAGE_LIMIT).contains(&limit) {
            return Err(ApiError::invalid(text!(
                "errors.usage_limit_range",
                "A usage limit is 1 to {{max}} uses (Luna's range).",
                max = MAX_USAGE_LIMIT
            )));
        }
        if p.module.module.family() != p11::Family::Luna {
            return Err(ApiError::new(
                ErrorCode::Unsupported,
                text!(
                    "hsm.console.usage_limit_luna_only",
                    "Per-key usage limits are a Luna feature; this module is not a Luna."
                ),
            ));
        }
        if p.logged_in().is_none() {
            return Err(ApiError::new(
                ErrorCode::NotLoggedIn,
                text!(
                    "hsm.console.usage_limit_log_in",
                    "Log in as the crypto officer or the security officer to set a usage limit."
                ),
            ));
        }
        let before = crate::core::change::read_target(p, "keys.usage.read", self.handle).await?;
        if let Some(used) = before.usage_count.filter(|u| *u > limit) {
            return Err(ApiError::invalid(text!(
                "errors.usage_limit_below_uses",
                "The key has already been used {{used}} times; a limit of {{limit}} would be below that.",
                used = used,
                limit = limit
            ))
            .suggest(text!(
                "errors.usage_limit_below_uses_hint",
                "Give a limit of at least the uses so far."
            )));
        }
        let ev = Event::new("key.usage_limit", "key")
            .resource(&before.label)
            .meta("partition", &p.id)
            .meta("id", &before.id_hex)
            .meta("from", before.usage_limit)
            .meta("to", limit)
            .meta("used", before.usage_count);
        self.target = Some(before);
        Ok(ev)
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<ObjectSummary> {
        let (limit, refs) = (self.limit, p.clone());
        let target = self.target.clone().expect("resolved");
        // Setting a limit to a value ends the same however often it is done.
        Ok(p.pool
            .run_service_idempotent_async("keys.usage.set", move |s| {
                let handle = crate::core::change::locate(s, &refs, &target)?;
                s.set_attributes(handle, &mut Template::new().ulong(CKA_USAGE_LIMIT, limit))?;
                Ok(hk::summary(s, handle)?)
            })
            .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::history::tests::{histories, rec};

    #[test]
    fn uses_left_are_told_back_from_the_count_now() {
        let id = "0a0b";
        let records = vec![
            rec(1, "key.generate", 6, serde_json::json!({ "id": id })),
            rec(
                2,
                "key.usage_limit",
                5,
                serde_json::json!({ "id": id, "from": null, "to": 10, "used": 0 }),
            ),
            rec(
                3,
                "sign",
                4,
                serde_json::json!({ "key_id": id, "signatures": 3 }),
            ),
            rec(
                4,
                "sign",
                4,
                serde_json::json!({ "key_id": "ffff", "signatures": 5 }),
            ),
            rec(
                5,
                "key.usage_limit",
                3,
                serde_json::json!({ "id": id, "from": 10, "to": 20, "used": 3 }),
            ),
            rec(
                6,
                "sign",
                2,
                serde_json::json!({ "key_id": id, "signatures": 2 }),
            ),
        ];
        let left: Vec<u64> = usage_points(histories(&[("AA", id)], &records).of("AA", id), 15)
            .iter()
            .map(|p| p.remaining)
            .collect();
        // Limit 10 set (10 left), 3 used (7), raised to 20 (17), 2 used (15), now 15.
        assert_eq!(left, vec![10, 7, 17, 15, 15]);
    }

    /// A key without `CKA_ID` is named by no record: its history is its count now, and
    /// the HSS check has nothing to compare (not every key's signatures credited to it).
    #[test]
    fn a_key_without_an_id_is_credited_with_no_record() {
        let records = vec![
            rec(1, "key.generate", 6, serde_json::json!({ "id": "0a0b" })),
            rec(
                2,
                "sign",
                4,
                serde_json::json!({ "key_id": "0a0b", "signatures": 3 }),
            ),
        ];
        let h = histories(&[("AA", "0a0b"), ("AA", "")], &records);
        let left: Vec<u64> = usage_points(h.of("AA", ""), 15)
            .iter()
            .map(|p| p.remaining)
            .collect();
        assert_eq!(left, vec![15]);
        let (d7, d30, d90, expected, mismatch) = hss_history(h.of("AA", ""), Some(32), Some(28));
        assert_eq!((d7, d30, d90), (0.0, 0.0, 0.0));
        assert_eq!(expected, None);
        assert!(mismatch.is_none());
        // The same records do count for the key they name.
        let (_, _, _, expected, _) = hss_history(h.of("AA", "0a0b"), Some(32), Some(29));
        assert_eq!(expected, Some(29));
    }
}
