//! Will a partition keep up after the migration? Today's signing volume (from the audit
//! trail: peak per minute and per day over a window, by key) costed at what each key moves
//! to — its successor, or its own algorithm when it is post-quantum already — against the
//! ceiling a latency probe measured for that operation on the same partition.
//!
//! The load of a minute on one HSM is the sum, over the signatures made in it, of the time
//! each takes at the measured ceiling: `count / 60 / ceiling`. The busiest minute decides.
//! A partition keeps up when that load stays within 80 % of the ceiling (the Probes view's
//! capacity plan keeps the same margin); otherwise it takes `⌈load / 0.8⌉` HSMs.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::assess::Assessed;
use crate::classify::Family;

/// The share of an HSM's measured ceiling a plan may use.
pub const USABLE_SHARE: f64 = 0.8;

/// Signatures the trail records for one key (a row of the readiness table) at one time.
#[derive(Debug, Clone)]
pub struct Signed {
    /// Index of the key's row in the table.
    pub row: usize,
    /// RFC 3339, UTC (`2026-12-06T14:03:22.123Z`).
    pub at: String,
    pub count: u64,
}

/// A probe's measured ceiling for an operation on the partition.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct Ceiling {
    /// The probe operation (`ml-dsa-65-sign`).
    pub op: String,
    /// The best throughput of the run (operations per second).
    pub per_s: f64,
    pub probe_id: String,
    /// When it was measured (RFC 3339).
    pub measured_at: String,
    /// The probe found the ceiling on the computer that ran it, not in the HSM (its own CPU
    /// was saturated): the HSM may do more.
    pub client_bound: bool,
}

/// One key's recorded load.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct KeyLoad {
    pub label: String,
    pub id_hex: String,
    pub algorithm: String,
    /// The probe operation its signatures are costed at (`None`: none fits, not costed).
    pub costed_as: Option<String>,
    pub signatures: u64,
    pub peak_per_minute: u64,
    pub peak_per_day: u64,
}

/// The load that moves to one operation.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct OperationLoad {
    /// The probe operation (`ml-dsa-65-sign`).
    pub op: String,
    /// The keys costed at it.
    pub keys: u32,
    /// Their signatures in their busiest minute together.
    pub peak_per_minute: u64,
    /// That minute's rate (operations per second).
    pub needed_per_s: f64,
    /// The latest probe of it on this partition (`None`: not probed yet).
    pub ceiling: Option<Ceiling>,
    /// `needed_per_s` as a share of the ceiling.
    pub share: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum CapacityVerdict {
    /// The trail records no signature in the window.
    NoUse,
    /// An operation the load moves to has not been probed on this partition.
    NeedsProbe,
    KeepsUp,
    DoesNotKeepUp,
}

/// A partition's signing volume and whether it keeps up with the successors.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct Capacity {
    pub window_days: u32,
    /// Signatures in the window.
    pub signatures: u64,
    pub peak_per_minute: u64,
    /// `YYYY-MM-DDTHH:MM` (UTC).
    pub peak_minute: Option<String>,
    pub peak_per_day: u64,
    /// `YYYY-MM-DD`.
    pub peak_day: Option<String>,
    /// Keys with signatures in the window, busiest first.
    pub keys: Vec<KeyLoad>,
    /// By the operation the load moves to.
    pub operations: Vec<OperationLoad>,
    /// Signatures no probe operation fits (not costed).
    pub uncosted_signatures: u64,
    /// The busiest minute's load on one HSM with the successors, as a share of its ceiling.
    pub peak_share: Option<f64>,
    /// How many times the busiest minute could grow within 80 % of the ceiling.
    pub headroom: Option<f64>,
    /// HSMs the busiest minute takes at 80 % of the ceiling.
    pub hsms: Option<u32>,
    pub verdict: CapacityVerdict,
}

/// The probe operation that costs a signature by a key of `preset` (a key-generation preset
/// as [`crate::Successor`] names it): its signing, or its decapsulation.
pub fn op_of_preset(preset: &str) -> Option<String> {
    if preset.starts_with("ml-dsa-") {
        Some(format!("{preset}-sign"))
    } else if preset.starts_with("ml-kem-") {
        Some(format!("{preset}-decaps"))
    } else {
        None
    }
}

/// What a key's signatures are costed at after the migration: its successor's operation, or
/// its own when it is an ML-DSA or ML-KEM key already.
pub fn costed_as(row: &Assessed) -> Option<String> {
    if let Some(s) = &row.successor {
        return op_of_preset(&s.preset);
    }
    match row.algorithm.family {
        Family::MlDsa | Family::MlKem => op_of_preset(&row.algorithm.name.to_ascii_lowercase()),
        _ => None,
    }
}

/// Counts by bucket, and the busiest bucket (the earliest of equals).
fn peak(buckets: &BTreeMap<String, u64>) -> (u64, Option<String>) {
    buckets.iter().fold((0, None), |(n, at), (k, v)| {
        if *v > n {
            (*v, Some(k.clone()))
        } else {
            (n, at)
        }
    })
}

fn minute(at: &str) -> String {
    at.get(..16).unwrap_or(at).to_string()
}

fn day(at: &str) -> String {
    at.get(..10).unwrap_or(at).to_string()
}

/// The capacity of a partition whose table is `rows`, from the signatures `signed` made since
/// `since` (RFC 3339; earlier ones are left out) over `window_days`, with the latest probe
/// ceiling of each operation (`ceiling_of(op)`).
pub fn capacity(
    rows: &[Assessed],
    signed: &[Signed],
    since: &str,
    window_days: u32,
    ceiling_of: &dyn Fn(&str) -> Option<Ceiling>,
) -> Capacity {
    let signed: Vec<&Signed> = signed
        .iter()
        .filter(|s| s.at.as_str() >= since && s.row < rows.len())
        .collect();
    let costed: Vec<Option<String>> = rows.iter().map(costed_as).collect();
    let (mut per_minute, mut per_day) = (BTreeMap::new(), BTreeMap::new());
    for s in &signed {
        *per_minute.entry(minute(&s.at)).or_insert(0u64) += s.count;
        *per_day.entry(day(&s.at)).or_insert(0u64) += s.count;
    }
    let (peak_per_minute, peak_minute) = peak(&per_minute);
    let (peak_per_day, peak_day) = peak(&per_day);
    let keys = key_loads(rows, &signed, &costed);
    let uncosted_signatures = signed
        .iter()
        .filter(|s| costed[s.row].is_none())
        .map(|s| s.count)
        .sum();
    let operations = operation_loads(&signed, &costed, ceiling_of);
    let mut c = Capacity {
        window_days,
        signatures: signed.iter().map(|s| s.count).sum(),
        peak_per_minute,
        peak_minute,
        peak_per_day,
        peak_day,
        keys,
        operations,
        uncosted_signatures,
        peak_share: None,
        headroom: None,
        hsms: None,
        verdict: CapacityVerdict::NoUse,
    };
    if c.signatures == 0 || c.operations.is_empty() {
        return c;
    }
    if c.operations.iter().any(|o| o.ceiling.is_none()) {
        c.verdict = CapacityVerdict::NeedsProbe;
        return c;
    }
    let share = peak_share(&signed, &costed, &c.operations);
    c.peak_share = Some(share);
    c.headroom = (share > 0.0).then(|| USABLE_SHARE / share);
    c.hsms = Some(((share / USABLE_SHARE).ceil() as u32).max(1));
    c.verdict = if share <= USABLE_SHARE {
        CapacityVerdict::KeepsUp
    } else {
        CapacityVerdict::DoesNotKeepUp
    };
    c
}

fn key_loads(rows: &[Assessed], signed: &[&Signed], costed: &[Option<String>]) -> Vec<KeyLoad> {
    // Per row: signatures by minute and by day.
    type Buckets = (BTreeMap<String, u64>, BTreeMap<String, u64>);
    let mut by_row: BTreeMap<usize, Buckets> = BTreeMap::new();
    for s in signed {
        let (m, d) = by_row.entry(s.row).or_default();
        *m.entry(minute(&s.at)).or_insert(0) += s.count;
        *d.entry(day(&s.at)).or_insert(0) += s.count;
    }
    let mut keys: Vec<KeyLoad> = by_row
        .into_iter()
        .map(|(i, (m, d))| KeyLoad {
            label: rows[i].label.clone(),
            id_hex: rows[i].id_hex.clone(),
            algorithm: rows[i].algorithm.name.clone(),
            costed_as: costed[i].clone(),
            signatures: d.values().sum(),
            peak_per_minute: peak(&m).0,
            peak_per_day: peak(&d).0,
        })
        .collect();
    keys.sort_by(|a, b| {
        b.peak_per_minute
            .cmp(&a.peak_per_minute)
            .then(b.signatures.cmp(&a.signatures))
            .then(a.label.cmp(&b.label))
    });
    keys
}

fn operation_loads(
    signed: &[&Signed],
    costed: &[Option<String>],
    ceiling_of: &dyn Fn(&str) -> Option<Ceiling>,
) -> Vec<OperationLoad> {
    let mut by_op: BTreeMap<&str, (BTreeMap<String, u64>, Vec<usize>)> = BTreeMap::new();
    for s in signed {
        if let Some(op) = costed[s.row].as_deref() {
            let (m, rows) = by_op.entry(op).or_default();
            *m.entry(minute(&s.at)).or_insert(0) += s.count;
            if !rows.contains(&s.row) {
                rows.push(s.row);
            }
        }
    }
    by_op
        .into_iter()
        .map(|(op, (m, rows))| {
            let peak_per_minute = peak(&m).0;
            let needed_per_s = peak_per_minute as f64 / 60.0;
            let ceiling = ceiling_of(op).filter(|c| c.per_s > 0.0);
            OperationLoad {
                op: op.to_string(),
                keys: rows.len() as u32,
                peak_per_minute,
                needed_per_s,
                share: ceiling.as_ref().map(|c| needed_per_s / c.per_s),
                ceiling,
            }
        })
        .collect()
}

/// The busiest minute's load on one HSM: over each minute, the sum of each operation's
/// signatures in it at its ceiling.
fn peak_share(signed: &[&Signed], costed: &[Option<String>], ops: &[OperationLoad]) -> f64 {
    let per_s: BTreeMap<&str, f64> = ops
        .iter()
        .filter_map(|o| Some((o.op.as_str(), o.ceiling.as_ref()?.per_s)))
        .collect();
    let mut load: BTreeMap<String, f64> = BTreeMap::new();
    for s in signed {
        let Some(op) = costed[s.row].as_deref() else {
            continue;
        };
        if let Some(c) = per_s.get(op) {
            *load.entry(minute(&s.at)).or_insert(0.0) += s.count as f64 / 60.0 / c;
        }
    }
    load.values().copied().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{assess, Policy};
    use hsm::keys::{Capabilities, ObjectSummary};

    fn key(label: &str, key_type: &str, algorithm: &str) -> ObjectSummary {
        ObjectSummary {
            class: "PRIVATE_KEY".into(),
            key_type: Some(key_type.into()),
            label: label.into(),
            id_hex: label.bytes().map(|b| format!("{b:02x}")).collect(),
            algorithm: algorithm.into(),
            capabilities: Capabilities {
                sign: true,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn rows() -> Vec<Assessed> {
        let objects = [
            key("release_p256", "EC", "ECDSA P-256"),
            key("ca_root", "RSA", "RSA-4096"),
            key("already_pq", "ML_DSA", "ML-DSA-65"),
        ];
        let today = time::macros::date!(2026 - 12 - 06);
        assess(&objects, &Policy::builtin("nist").unwrap(), today)
    }

    fn at(row: usize, at: &str, count: u64) -> Signed {
        Signed {
            row,
            at: at.into(),
            count,
        }
    }

    fn probed<'a>(per: &'a [(&'a str, f64)]) -> impl Fn(&str) -> Option<Ceiling> + 'a {
        move |op| {
            per.iter()
                .find(|(o, _)| *o == op)
                .map(|(o, per_s)| Ceiling {
                    op: o.to_string(),
                    per_s: *per_s,
                    probe_id: "probe_1".into(),
                    measured_at: "2026-12-01T00:00:00.000Z".into(),
                    client_bound: false,
                })
        }
    }

    /// The release key (P-256 → ML-DSA-65) signs 600 in one minute and 120 in another; the
    /// CA key (RSA-4096 → ML-DSA-87) 30 in the busy minute; the ML-DSA-65 key 60 on another
    /// day. A use before the window is left out.
    fn signed() -> Vec<Signed> {
        vec![
            at(0, "2026-12-01T10:00:05.000Z", 400),
            at(0, "2026-12-01T10:00:40.000Z", 200),
            at(1, "2026-12-01T10:00:50.000Z", 30),
            at(0, "2026-12-01T11:30:00.000Z", 120),
            at(2, "2026-12-02T09:00:00.000Z", 60),
            at(0, "2026-08-01T10:00:00.000Z", 100_000),
        ]
    }

    #[test]
    fn peaks_by_minute_and_day_within_the_window() {
        let c = capacity(&rows(), &signed(), "2026-09-07", 90, &|_| None);
        assert_eq!(c.signatures, 810);
        assert_eq!(
            (c.peak_per_minute, c.peak_minute.as_deref()),
            (630, Some("2026-12-01T10:00"))
        );
        assert_eq!(
            (c.peak_per_day, c.peak_day.as_deref()),
            (750, Some("2026-12-01"))
        );
        let release = &c.keys[0];
        assert_eq!(
            (
                release.label.as_str(),
                release.signatures,
                release.peak_per_minute,
                release.peak_per_day
            ),
            ("release_p256", 720, 600, 720)
        );
        assert_eq!(release.costed_as.as_deref(), Some("ml-dsa-65-sign"));
        assert_eq!(
            c.keys[1].costed_as.as_deref(),
            Some("ml-dsa-65-sign"),
            "{:?}",
            c.keys
        );
        assert_eq!(
            c.keys[2].costed_as.as_deref(),
            Some("ml-dsa-87-sign"),
            "the CA key"
        );
        assert_eq!(c.verdict, CapacityVerdict::NeedsProbe);
        assert_eq!((c.peak_share, c.hsms), (None, None));
    }

    /// 600 ML-DSA-65 signatures in a minute are 10/s; at 65/s that is 0.154 of the HSM, and
    /// the CA's 30 ML-DSA-87 at 30/s add 0.5/30: 0.171 in all, within 80 %.
    #[test]
    fn the_busiest_minute_at_the_probed_ceilings_keeps_up() {
        let probes = [("ml-dsa-65-sign", 65.0), ("ml-dsa-87-sign", 30.0)];
        let c = capacity(&rows(), &signed(), "2026-09-07", 90, &probed(&probes));
        let want = 600.0 / 60.0 / 65.0 + 30.0 / 60.0 / 30.0;
        assert!((c.peak_share.unwrap() - want).abs() < 1e-9, "{c:?}");
        assert!((c.headroom.unwrap() - 0.8 / want).abs() < 1e-9);
        assert_eq!((c.hsms, c.verdict), (Some(1), CapacityVerdict::KeepsUp));
        let op65 = c
            .operations
            .iter()
            .find(|o| o.op == "ml-dsa-65-sign")
            .unwrap();
        assert_eq!((op65.keys, op65.peak_per_minute), (2, 600));
        assert!((op65.needed_per_s - 10.0).abs() < 1e-9);
    }

    /// At 8 signatures per second the same minute takes 10/8 + 0.5/30 of an HSM: two HSMs.
    #[test]
    fn a_slow_ceiling_does_not_keep_up_and_names_the_hsms() {
        let probes = [("ml-dsa-65-sign", 8.0), ("ml-dsa-87-sign", 30.0)];
        let c = capacity(&rows(), &signed(), "2026-09-07", 90, &probed(&probes));
        assert_eq!(c.verdict, CapacityVerdict::DoesNotKeepUp);
        assert_eq!(c.hsms, Some(2));
        assert!(c.headroom.unwrap() < 1.0);
    }

    #[test]
    fn no_signature_in_the_window_is_no_use() {
        let old = [at(0, "2026-08-01T10:00:00.000Z", 5)];
        let c = capacity(&rows(), &old, "2026-09-07", 90, &|_| None);
        assert_eq!((c.signatures, c.verdict), (0, CapacityVerdict::NoUse));
        assert!(c.keys.is_empty() && c.operations.is_empty());
    }
}
