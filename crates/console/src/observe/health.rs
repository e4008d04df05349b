//! HSS counters and the partition's health: every HSS key with what is left, its burn rate
//! from the audit trail and the projected exhaustion date, a cross-check of the trail
//! against the token's counter; and statistics — generic for any module, Luna's `CA_*`
//! figures where the module offers them, and the console's own call metrics — with a short
//! history per partition for the live charts.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use hsm::keys as hk;
use p11::sys::*;
use p11::vendor::{bin, stats_id};
use p11::Template;

use crate::core::error::{ApiError, ApiResult};
use crate::core::i18n::Text;
use crate::core::partitions::Partition;
use crate::core::views::{StorageView, TokenView};
use crate::observe::history::{self, KeyHistories, KeyRecord};
use crate::observe::Observe;
use crate::text;

/// Busy share and rates need two samples at least this far apart.
pub const MIN_SAMPLE_GAP: Duration = Duration::from_secs(5);
const HISTORY: usize = 720;

/// How much of an HSS key is left, against the settings' thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum HssStatus {
    Ok,
    Warning,
    Critical,
    Exhausted,
}

hsm::wire_display!(HssStatus);

#[derive(Debug, Clone, Serialize, TS)]
pub struct HssKeyView {
    pub partition_id: String,
    pub partition_label: String,
    pub handle: u64,
    pub label: String,
    pub id_hex: String,
    /// "HSS/LMS H5/W8 + H5/W8" — levels with their LMS and LM-OTS types.
    pub algorithm: String,
    /// Signatures in total (decimal; can exceed 2^53).
    pub capacity: String,
    pub remaining: Option<u64>,
    pub used_percent: f64,
    /// Against the thresholds in the settings.
    pub status: HssStatus,
    /// Signatures per day over the last 7, 30 and 90 days, from the audit trail.
    pub per_day_7: f64,
    pub per_day_30: f64,
    pub per_day_90: f64,
    /// At the 30-day rate (or the 7- or 90-day one when that is all there is).
    pub projected_exhaustion: Option<String>,
    /// What the trail says should be left (its baseline minus the signatures it recorded).
    pub audit_expected_remaining: Option<u64>,
    /// Set when the token's counter and the trail disagree, saying which way.
    pub mismatch: Option<String>,
    /// The same in a form each language translates.
    pub mismatch_text: Option<Text>,
    /// Signatures left over time, from the trail's records (its baseline, then after each
    /// signing record) and the token's count now; for the chart.
    pub history: Vec<HssPoint>,
}

/// Signatures left at a time.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct HssPoint {
    pub at: String,
    #[ts(type = "number")]
    pub remaining: u64,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct BinRate {
    pub bin: String,
    pub count: u64,
    /// Per second since the previous sample (≥ 5 s before).
    pub per_second: Option<f64>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct LunaStats {
    pub firmware: Option<String>,
    pub boot_time: Option<u64>,
    pub cpu_up_time: Option<u64>,
    pub cpu_idle_time: Option<u64>,
    /// Share of CPU time busy between two samples ≥ 5 s apart.
    pub busy_percent: Option<f64>,
    pub commands: Option<u64>,
    pub commands_per_second: Option<f64>,
    pub utilization: Vec<BinRate>,
    pub hsm_storage: Option<StorageView>,
    pub token_storage: Option<StorageView>,
    /// Luna functions this module does not offer (shown as such, never as errors).
    pub not_offered: Vec<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct StatsSnapshot {
    pub partition_id: String,
    pub taken_at: String,
    pub manufacturer: String,
    pub library: String,
    pub cryptoki_version: String,
    pub token: TokenView,
    pub mechanism_count: u64,
    pub luna: Option<LunaStats>,
    pub pool: hsm::PoolStatus,
    pub metrics: hsm::MetricsSnapshot,
    /// For an HA group's virtual slot: the group, its members' statistics side by side.
    pub ha: Option<crate::core::ha_views::HaGroupView>,
}

/// One point of the history the charts draw.
#[derive(Debug, Clone, Serialize, TS)]
pub struct StatsPoint {
    /// Seconds since the console started watching this partition.
    pub t: f64,
    pub busy_percent: Option<f64>,
    pub commands_per_second: Option<f64>,
    pub sign_per_second: Option<f64>,
    pub sessions: Option<u64>,
    pub console_ops: u64,
    pub console_errors: u64,
}

#[derive(Default)]
pub(crate) struct StatsState {
    prev: HashMap<String, Prev>,
    history: HashMap<String, (Instant, VecDeque<StatsPoint>)>,
}

struct Prev {
    at: Instant,
    up: u64,
    idle: u64,
    cmds: u64,
    bins: HashMap<u64, u64>,
    busy: Option<f64>,
    cmd_rate: Option<f64>,
    bin_rates: HashMap<u64, f64>,
}

/// What a module reports about itself and a slot, read off the async threads.
struct ModuleReading {
    info: p11::Info,
    token: p11::TokenInfo,
    mechanisms: usize,
    luna: Option<LunaReading>,
}

/// Luna's own figures, where the module offers the `CA_*` calls.
struct LunaReading {
    offered: Vec<&'static str>,
    stats: Option<Vec<(u64, u64)>>,
    firmware: Option<String>,
    hsm_storage: Option<p11::vendor::StorageInfo>,
    token_storage: Option<p11::vendor::StorageInfo>,
}

impl LunaReading {
    fn stat(&self, id: u64) -> Option<u64> {
        self.stats
            .as_ref()
            .and_then(|v| v.iter().find(|(i, _)| *i == id).map(|(_, x)| *x))
    }
}

/// The functions the statistics view uses; those a module lacks are listed as not offered.
const LUNA_STATS_FUNCTIONS: [&str; 6] = [
    "CA_GetHSMStats",
    "CA_ReadUtilizationMetrics",
    "CA_ReadAllUtilizationCounters",
    "CA_GetHSMStorageInformation",
    "CA_GetTokenStorageInformation",
    "CA_GetFirmwareVersion",
];

impl ModuleReading {
    fn take(m: &p11::Module, slot: u64) -> ApiResult<ModuleReading> {
        let luna = m.vendor().is_luna().then(|| LunaReading {
            offered: m.vendor().offered(),
            stats: m
                .ca_hsm_stats(
                    slot,
                    &[
                        stats_id::BOOT_TIME,
                        stats_id::CPU_UP_TIME,
                        stats_id::CPU_IDLE_TIME,
                        stats_id::ICD_COMMANDS_COUNT,
                    ],
                )
                .ok(),
            firmware: m
                .ca_firmware_version(slot)
                .ok()
                .map(|(a, b, c)| format!("{a}.{b}.{c}")),
            hsm_storage: m.ca_hsm_storage(slot).ok(),
            token_storage: m.ca_token_storage(slot).ok(),
        });
        Ok(ModuleReading {
            info: m.info()?,
            token: m.token_info(slot)?,
            mechanisms: m.mechanisms(slot).map(|v| v.len()).unwrap_or(0),
            luna,
        })
    }
}

/// Rates between two samples at least `MIN_SAMPLE_GAP` apart (Luna's monitor uses 5 s):
/// busy share from CPU up and idle time, commands per second, requests per second per bin.
struct Rates {
    busy: Option<f64>,
    commands: Option<f64>,
    bins: HashMap<u64, f64>,
}

impl Rates {
    fn between(prev: &Prev, now: Instant, current: &Prev) -> Rates {
        let dt = now.duration_since(prev.at).as_secs_f64();
        let busy = (current.up > prev.up).then(|| {
            let du = (current.up - prev.up) as f64;
            let di = current.idle.saturating_sub(prev.idle) as f64;
            (100.0 * (1.0 - di / du)).clamp(0.0, 100.0)
        });
        let bins = current
            .bins
            .iter()
            .map(|(b, c)| {
                let before = *prev.bins.get(b).unwrap_or(&0);
                (*b, c.saturating_sub(before) as f64 / dt)
            })
            .collect();
        Rates {
            busy,
            commands: Some(current.cmds.saturating_sub(prev.cmds) as f64 / dt),
            bins,
        }
    }
}

impl StatsState {
    /// Luna's figures with rates against the partition's previous sample (kept when this
    /// one is too close to it to give a rate).
    fn luna_stats(
        &mut self,
        partition: &str,
        now: Instant,
        l: LunaReading,
        util: &[p11::vendor::UtilizationCounter],
    ) -> LunaStats {
        let (up, idle, cmds) = (
            l.stat(stats_id::CPU_UP_TIME),
            l.stat(stats_id::CPU_IDLE_TIME),
            l.stat(stats_id::ICD_COMMANDS_COUNT),
        );
        let mut bins: HashMap<u64, u64> = HashMap::new();
        for c in util {
            *bins.entry(c.bin).or_default() += c.count;
        }
        let mut current = Prev {
            at: now,
            up: up.unwrap_or(0),
            idle: idle.unwrap_or(0),
            cmds: cmds.unwrap_or(0),
            bins,
            busy: None,
            cmd_rate: None,
            bin_rates: HashMap::new(),
        };
        let prev = self.prev.get(partition);
        let fresh = prev.is_none_or(|e| now.duration_since(e.at) >= MIN_SAMPLE_GAP);
        let (busy, cmd_rate, bin_rates) = match prev {
            Some(e) if fresh => {
                let r = Rates::between(e, now, &current);
                let busy = r.busy.filter(|_| up.is_some() && idle.is_some());
                (busy, r.commands.filter(|_| cmds.is_some()), r.bins)
            }
            Some(e) => (e.busy, e.cmd_rate, e.bin_rates.clone()),
            None => (None, None, HashMap::new()),
        };
        let mut utilization: Vec<BinRate> = current
            .bins
            .iter()
            .map(|(b, c)| BinRate {
                bin: bin_name(*b),
                count: *c,
                per_second: bin_rates.get(b).copied(),
            })
            .collect();
        utilization.sort_by(|a, b| a.bin.cmp(&b.bin));
        if fresh {
            current.busy = busy;
            current.cmd_rate = cmd_rate;
            current.bin_rates = bin_rates;
            self.prev.insert(partition.to_string(), current);
        }
        LunaStats {
            firmware: l.firmware.clone(),
            boot_time: l.stat(stats_id::BOOT_TIME),
            cpu_up_time: up,
            cpu_idle_time: idle,
            busy_percent: busy,
            commands: cmds,
            commands_per_second: cmd_rate,
            utilization,
            hsm_storage: l.hsm_storage.map(Into::into),
            token_storage: l.token_storage.map(Into::into),
            not_offered: LUNA_STATS_FUNCTIONS
                .iter()
                .filter(|w| !l.offered.contains(w))
                .map(|w| w.to_string())
                .collect(),
        }
    }

    /// Keep the sample's chart point (the last `HISTORY` per partition).
    fn remember_point(
        &mut self,
        partition: &str,
        now: Instant,
        luna: Option<&LunaStats>,
        token: &p11::TokenInfo,
        metrics: &hsm::MetricsSnapshot,
    ) {
        let (since, points) = self
            .history
            .entry(partition.to_string())
            .or_insert_with(|| (now, VecDeque::new()));
        points.push_back(StatsPoint {
            t: now.duration_since(*since).as_secs_f64(),
            busy_percent: luna.and_then(|l| l.busy_percent),
            commands_per_second: luna.and_then(|l| l.commands_per_second),
            sign_per_second: luna.and_then(|l| {
                l.utilization
                    .iter()
                    .find(|b| b.bin == "sign")
                    .and_then(|b| b.per_second)
            }),
            sessions: token.session_count,
            console_ops: metrics.ops.iter().map(|o| o.ok).sum(),
            console_errors: metrics.ops.iter().map(|o| o.errors).sum(),
        });
        while points.len() > HISTORY {
            points.pop_front();
        }
    }
}

fn bin_name(b: u64) -> String {
    match b {
        bin::SIGN => "sign".into(),
        bin::VERIFY => "verify".into(),
        bin::ENCRYPT => "encrypt".into(),
        bin::DECRYPT => "decrypt".into(),
        bin::KEY_GENERATION => "key generation".into(),
        bin::KEY_DERIVATION => "key derivation".into(),
        other => format!("bin {other}"),
    }
}

pub(crate) fn days_ago(days: i64) -> String {
    let t = time::OffsetDateTime::now_utc() - time::Duration::days(days);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.000Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// The audit-trail side of an HSS key: burn rates, the expected counter, mismatch.
pub(crate) fn hss_history(
    mine: &[KeyRecord],
    capacity: Option<u128>,
    remaining: Option<u64>,
) -> (f64, f64, f64, Option<u64>, Option<Text>) {
    let used = signatures_used;
    let rate = |days: i64| {
        let since = days_ago(days);
        mine.iter()
            .filter(|k| k.record.event.timestamp >= since)
            .map(used)
            .sum::<u64>() as f64
            / days as f64
    };
    // Baseline: the key's generation (full capacity) or the first batch's count before it.
    let mut baseline: Option<(i64, u64)> = None;
    for k in mine {
        let r = &k.record;
        if k.is_generation() {
            if let Some(c) = capacity.and_then(|c| u64::try_from(c).ok()) {
                baseline = Some((r.seq, c));
                break;
            }
        }
        if is_signing_request(&r.event.action) {
            if let Some(v) = k.hss_remaining {
                baseline = Some((r.seq - 1, v));
                break;
            }
        }
    }
    let (expected, mismatch) = match (baseline, remaining) {
        (Some((seq, base)), Some(now)) => {
            let recorded: u64 = mine.iter().filter(|k| k.record.seq > seq).map(used).sum();
            let expected = base.saturating_sub(recorded);
            let m = if now < expected {
                Some(text!(
                    "hss.mismatch_outside",
                    "The token has {{now}} signatures left but the audit trail accounts for {{expected}}: {{outside}} were made outside this console (another tool or another trail).",
                    now = now,
                    expected = expected,
                    outside = expected - now
                ))
            } else if now > expected {
                Some(text!(
                    "hss.mismatch_backwards",
                    "The token reports {{now}} signatures left, more than the {{expected}} the audit trail allows: the counter went backwards (a restored or cloned key?). Signing again may reuse one-time keys.",
                    now = now,
                    expected = expected
                ))
            } else {
                None
            };
            (Some(expected), m)
        }
        _ => (None, None),
    };
    (rate(7), rate(30), rate(90), expected, mismatch)
}

/// The one-time signatures a record says were spent: by a certificate that was issued, and
/// by every signing record that counts them — a file or manifest whose signing failed after
/// the HSM signed counts what the token's counter moved.
fn signatures_used(k: &KeyRecord) -> u64 {
    let counts = match k.record.event.action.as_str() {
        "sign" | "sign.manifest" => true,
        "cert.issue" => k.record.event.status == "success",
        _ => false,
    };
    if counts {
        k.subject_u64("signatures").unwrap_or(0)
    } else {
        0
    }
}

/// A record written before signing that carries the counter the key had then: a file's
/// request (stateful keys), a batch's, or a batch's as earlier versions named it.
fn is_signing_request(action: &str) -> bool {
    matches!(action, "sign.request" | "sign.batch")
}

/// When a key runs out at its burn rate: the 30-day rate, or the 7- or 90-day one when
/// that is all there is (`None` without any use in 90 days).
pub(crate) fn projected_exhaustion(d7: f64, d30: f64, d90: f64, left: u64) -> Option<String> {
    let r = [d30, d7, d90].into_iter().find(|r| *r > 0.0)?;
    let days = (left as f64 / r).min(365.0 * 1000.0);
    let d = time::OffsetDateTime::now_utc() + time::Duration::seconds_f64(days * 86_400.0);
    Some(format!(
        "{:04}-{:02}-{:02}",
        d.year(),
        u8::from(d.month()),
        d.day()
    ))
}

/// A key's status against the settings' thresholds, from its share left; `left` is its count
/// of signatures (or uses) left when the token tells it, so none left is exhausted.
pub(crate) fn status_of(
    left: Option<u64>,
    left_percent: f64,
    settings: &crate::core::settings::Settings,
) -> HssStatus {
    if left == Some(0) {
        HssStatus::Exhausted
    } else if left_percent <= settings.hss_critical_percent {
        HssStatus::Critical
    } else if left_percent <= settings.hss_warning_percent {
        HssStatus::Warning
    } else {
        HssStatus::Ok
    }
}

/// Signatures left over time as the trail tells it: the baseline (full capacity at the
/// key's generation, or the count the first signing request saw), then after each
/// signing record; the token's count now last.
pub(crate) fn hss_points(
    mine: &[KeyRecord],
    capacity: Option<u128>,
    remaining: Option<u64>,
) -> Vec<HssPoint> {
    let mut out: Vec<HssPoint> = Vec::new();
    let mut left: Option<u64> = None;
    for k in mine {
        let r = &k.record;
        if left.is_none() {
            if k.is_generation() {
                left = capacity.and_then(|c| u64::try_from(c).ok());
            } else if is_signing_request(&r.event.action) {
                left = k.hss_remaining;
            }
            if let Some(l) = left {
                out.push(HssPoint {
                    at: r.event.timestamp.clone(),
                    remaining: l,
                });
            }
            continue;
        }
        let used = signatures_used(k);
        if used > 0 {
            let l = left.unwrap_or(0).saturating_sub(used);
            left = Some(l);
            out.push(HssPoint {
                at: r.event.timestamp.clone(),
                remaining: l,
            });
        }
    }
    if let Some(now) = remaining {
        out.push(HssPoint {
            at: audit::now_rfc3339(),
            remaining: now,
        });
    }
    out
}

/// HSS private keys by the partition they are on.
pub(crate) type HssListed = Vec<(Arc<Partition>, Vec<hk::ObjectSummary>)>;

impl Observe<'_> {
    /// Every HSS private key on every logged-in partition.
    pub async fn hss_keys(self) -> ApiResult<Vec<HssKeyView>> {
        let listed = self.hss_listed().await;
        let histories = self.key_histories(history::names(&listed, |k| k)).await?;
        Ok(self.hss_views(&listed, &histories))
    }

    /// The HSS private keys of every logged-in partition (a partition that cannot be read
    /// is left out).
    pub(crate) async fn hss_listed(self) -> HssListed {
        let mut listed = Vec::new();
        for p in self.partitions() {
            if p.logged_in().is_none() {
                continue;
            }
            let keys = p
                .pool
                .run_idempotent_async("hss.list", |s| {
                    hk::list_objects(
                        s,
                        &mut Template::new()
                            .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
                            .ulong(CKA_KEY_TYPE, CKK_HSS),
                    )
                })
                .await;
            if let Ok(keys) = keys {
                listed.push((p, keys));
            }
        }
        listed
    }

    /// The HSS keys' views, with their histories from `histories`.
    pub(crate) fn hss_views(self, listed: &HssListed, histories: &KeyHistories) -> Vec<HssKeyView> {
        let settings = self.settings();
        let mut out = Vec::new();
        for (p, keys) in listed {
            for k in keys {
                let capacity: Option<u128> = k.hss_capacity.as_deref().and_then(|c| c.parse().ok());
                let used_percent = match (capacity, k.hss_keys_remaining) {
                    (Some(c), Some(r)) if c > 0 => {
                        100.0 * (c.saturating_sub(r as u128)) as f64 / c as f64
                    }
                    _ => 0.0,
                };
                let left_percent = 100.0 - used_percent;
                let status = status_of(k.hss_keys_remaining, left_percent, &settings);
                let mine = histories.of(p.token_name(), &k.id_hex);
                let (d7, d30, d90, expected, mismatch) =
                    hss_history(mine, capacity, k.hss_keys_remaining);
                let projected = k
                    .hss_keys_remaining
                    .and_then(|left| projected_exhaustion(d7, d30, d90, left));
                out.push(HssKeyView {
                    partition_id: p.id.clone(),
                    partition_label: p.label.clone(),
                    handle: k.handle,
                    label: k.label.clone(),
                    id_hex: k.id_hex.clone(),
                    algorithm: k.algorithm.clone(),
                    capacity: k.hss_capacity.clone().unwrap_or_default(),
                    remaining: k.hss_keys_remaining,
                    used_percent,
                    status,
                    per_day_7: d7,
                    per_day_30: d30,
                    per_day_90: d90,
                    projected_exhaustion: projected,
                    audit_expected_remaining: expected,
                    mismatch: mismatch.as_ref().map(|m| m.text.clone()),
                    mismatch_text: mismatch,
                    history: hss_points(mine, capacity, k.hss_keys_remaining),
                });
            }
        }
        out
    }

    /// One statistics sample of a partition: what the module reports (Luna's `CA_*`
    /// figures where offered), rates since the previous sample, the pool's metrics; kept in
    /// the partition's history for the charts.
    pub async fn stats(self, partition: &str) -> ApiResult<StatsSnapshot> {
        let p = self.partition_ref(partition).await?;
        let (m, slot) = (p.module.module.clone(), p.slot());
        let reading = tokio::task::spawn_blocking(move || ModuleReading::take(&m, slot))
            .await
            .map_err(|e| ApiError::new(crate::core::error::ErrorCode::Internal, e.to_string()))??;
        // Utilization counters are read on a session (Luna: per-partition bins).
        let util = match reading.luna {
            Some(_) => p
                .pool
                .run_idempotent_async("stats.utilization", |s| s.ca_utilization(false))
                .await
                .ok(),
            None => None,
        };
        let now = Instant::now();
        let metrics = p.pool.metrics();
        let mut st = self.state.stats.lock();
        let luna = reading
            .luna
            .map(|l| st.luna_stats(&p.id, now, l, util.as_deref().unwrap_or(&[])));
        st.remember_point(&p.id, now, luna.as_ref(), &reading.token, &metrics);
        drop(st);
        let info = reading.info;
        Ok(StatsSnapshot {
            partition_id: p.id.clone(),
            taken_at: audit::now_rfc3339(),
            manufacturer: info.manufacturer,
            library: format!("{} {}", info.library_description, info.library_version),
            cryptoki_version: info.cryptoki_version.to_string(),
            token: TokenView::from(&reading.token),
            mechanism_count: reading.mechanisms as u64,
            luna,
            pool: p.pool.status(),
            metrics,
            // The console adds the HA group (`observe::Observe::stats`): observation does not read HA.
            ha: None,
        })
    }

    /// The samples taken so far for a partition (oldest first).
    pub fn stats_history(self, partition: &str) -> Vec<StatsPoint> {
        self.state
            .stats
            .lock()
            .history
            .get(partition)
            .map(|(_, v)| v.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// A chart of the history as SVG.
    pub fn stats_chart(self, partition: &str, which: StatsChart) -> ApiResult<String> {
        let h = self.stats_history(partition);
        let series = |name: &str, f: &dyn Fn(&StatsPoint) -> Option<f64>| bench::charts::Series {
            name: name.into(),
            points: h.iter().filter_map(|p| f(p).map(|v| (p.t, v))).collect(),
        };
        Ok(match which {
            StatsChart::Load => bench::charts::line_chart(
                "HSM load",
                "seconds",
                "value",
                &[
                    series("busy %", &|p| p.busy_percent),
                    series("commands/s", &|p| p.commands_per_second),
                    series("sign/s", &|p| p.sign_per_second),
                ],
                720,
                300,
            ),
            StatsChart::Console => bench::charts::line_chart(
                "Console calls (cumulative)",
                "seconds",
                "calls",
                &[
                    series("succeeded", &|p| Some(p.console_ops as f64)),
                    series("failed", &|p| Some(p.console_errors as f64)),
                ],
                720,
                300,
            ),
        })
    }
}

/// The statistics charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum StatsChart {
    /// Busy %, commands/s, sign/s.
    Load,
    /// The console's own operations and errors.
    Console,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::history::tests::{histories, rec};

    #[test]
    fn burn_rate_projection_and_cross_check_come_from_the_trail() {
        let id = "00ff";
        let records = vec![
            rec(1, "key.generate", 60, serde_json::json!({ "id": id })),
            rec(
                2,
                "sign",
                40,
                serde_json::json!({ "key_id": id, "signatures": 30 }),
            ),
            rec(
                3,
                "sign",
                20,
                serde_json::json!({ "key_id": id, "signatures": 9 }),
            ),
            rec(
                4,
                "sign",
                3,
                serde_json::json!({ "key_id": id, "signatures": 14 }),
            ),
            rec(
                5,
                "sign.manifest",
                1,
                serde_json::json!({ "key_id": id, "signatures": 1 }),
            ),
            rec(
                6,
                "sign",
                1,
                serde_json::json!({ "key_id": "another", "signatures": 500 }),
            ),
        ];
        let h = histories(&[("AA", id)], &records);
        let mine = h.of("AA", id);
        let (d7, d30, d90, expected, mismatch) = hss_history(mine, Some(1024), Some(1024 - 54));
        assert!((d7 - 15.0 / 7.0).abs() < 1e-9);
        assert!((d30 - 24.0 / 30.0).abs() < 1e-9);
        assert!((d90 - 54.0 / 90.0).abs() < 1e-9);
        assert_eq!(expected, Some(970));
        assert!(mismatch.is_none());
        // Two signatures made outside the console.
        let (.., mismatch) = hss_history(mine, Some(1024), Some(968));
        let m = mismatch.unwrap();
        assert_eq!(m.key, "hss.mismatch_outside");
        assert!(m.text.contains("2 were made outside"));
        // A counter that went backwards.
        let (.., mismatch) = hss_history(mine, Some(1024), Some(1000));
        let m = mismatch.unwrap();
        assert_eq!(m.key, "hss.mismatch_backwards");
        assert!(m.text.contains("went backwards"));
    }

    #[test]
    fn signatures_left_over_time_start_at_the_generation_and_end_at_the_token() {
        let id = "00ff";
        let records = vec![
            rec(1, "key.generate", 60, serde_json::json!({ "id": id })),
            rec(
                2,
                "sign",
                40,
                serde_json::json!({ "key_id": id, "signatures": 30 }),
            ),
            rec(
                3,
                "sign",
                20,
                serde_json::json!({ "key_id": "other", "signatures": 9 }),
            ),
            rec(
                4,
                "sign.manifest",
                3,
                serde_json::json!({ "key_id": id, "signatures": 4 }),
            ),
        ];
        let left: Vec<u64> = hss_points(
            histories(&[("AA", id)], &records).of("AA", id),
            Some(1024),
            Some(990),
        )
        .iter()
        .map(|p| p.remaining)
        .collect();
        assert_eq!(left, vec![1024, 994, 990, 990]);
        // A key made outside the console: the first request's count is the baseline.
        let records = vec![
            rec(
                1,
                "sign.request",
                5,
                serde_json::json!({ "key_id": id, "hss_remaining": 100 }),
            ),
            rec(
                2,
                "sign",
                5,
                serde_json::json!({ "key_id": id, "signatures": 2 }),
            ),
        ];
        let left: Vec<u64> =
            hss_points(histories(&[("AA", id)], &records).of("AA", id), None, None)
                .iter()
                .map(|p| p.remaining)
                .collect();
        assert_eq!(left, vec![100, 98]);
    }

    /// A batch signed by two keys lists the second beside the first with its own count: the
    /// second key's check starts from that count, not the first key's.
    #[test]
    fn a_batchs_second_signer_is_checked_against_its_own_count() {
        let records = vec![
            rec(
                1,
                "sign.batch",
                2,
                serde_json::json!({
                    "partition": "m-1:AA",
                    "key": { "id": "0a" },
                    "hss_remaining": 100,
                    "also": [{ "key": { "id": "0b" }, "hss_remaining": 40 }],
                }),
            ),
            rec(
                2,
                "sign",
                2,
                serde_json::json!({ "partition": "m-1:AA", "key_id": "0a", "signatures": 1 }),
            ),
            rec(
                3,
                "sign",
                2,
                serde_json::json!({ "partition": "m-1:AA", "key_id": "0b", "signatures": 1 }),
            ),
        ];
        let h = histories(&[("AA", "0a"), ("AA", "0b")], &records);
        let (.., expected, mismatch) = hss_history(h.of("AA", "0b"), Some(1024), Some(39));
        assert_eq!(expected, Some(39));
        assert!(mismatch.is_none());
        let (.., expected, mismatch) = hss_history(h.of("AA", "0a"), Some(1024), Some(99));
        assert_eq!(expected, Some(99));
        assert!(mismatch.is_none());
    }
}
