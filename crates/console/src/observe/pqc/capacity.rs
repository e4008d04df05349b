//! Will each partition keep up after the migration: the trail's signatures on it (see
//! `hsmc_pqc::capacity`), costed at the latest probe of each operation they move to, and
//! the probe to run where none was run yet.

use std::collections::HashMap;

use bench::probe::{sweep_verdict, CallProfile, ProbeMode, ProbeOp, ProbeRequest, SweepVerdict};
use hsmc_pqc::capacity::{Capacity, Ceiling, Signed};
use hsmc_pqc::Assessed;
use serde::Serialize;

use super::UsesByKey;
use crate::observe::probes::ProbeReport;
use crate::observe::Observe;

/// The window the volume is read over.
pub const WINDOW_DAYS: u32 = 90;

/// A probe the readiness view offers to run: the operation a partition's load moves to.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct SuggestedProbe {
    /// `ml-dsa-65-sign`.
    pub op_name: String,
    /// A sweep over 1–16 workers, 3 s each, through the pool.
    pub request: ProbeRequest,
}

impl SuggestedProbe {
    fn of(op_name: &str) -> Option<SuggestedProbe> {
        Some(SuggestedProbe {
            op_name: op_name.to_string(),
            request: ProbeRequest {
                op: ProbeOp::parse(op_name)?,
                mode: ProbeMode::Duration { seconds: 3.0 },
                workers: 1,
                sweep: vec![1, 2, 4, 8, 16],
                warmup: 20,
                profile: CallProfile::Pool,
            },
        })
    }
}

/// The ceiling a stored probe run measured: its best throughput, and whether its sweep found
/// the limit on the computer rather than in the HSM.
pub(crate) fn ceiling_of(r: &ProbeReport) -> Option<Ceiling> {
    let best = r
        .runs
        .iter()
        .map(|x| x.throughput_per_s)
        .fold(0.0, f64::max);
    (best > 0.0).then(|| Ceiling {
        op: r.op_name.clone(),
        per_s: best,
        probe_id: r.id.clone(),
        measured_at: r.created_at.clone(),
        client_bound: matches!(
            sweep_verdict(&r.sweep),
            Some(SweepVerdict::ClientCeiling { .. })
        ),
    })
}

/// The trail's signatures by the row of the key that made them: one row per key — the
/// private key where there is one, as its public half names the same uses.
fn signed_rows(uses: &UsesByKey<'_>, rows: &[Assessed]) -> Vec<Signed> {
    let mut by_key: HashMap<(&str, &str), usize> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        if r.object_class == "CERTIFICATE" {
            continue;
        }
        // A key is named by its CKA_ID, or by its label when it has none.
        let key = if r.id_hex.is_empty() {
            ("", r.label.as_str())
        } else {
            (r.id_hex.as_str(), "")
        };
        match by_key.get(&key) {
            Some(&j)
                if rows[j].object_class == "PRIVATE_KEY" || r.object_class != "PRIVATE_KEY" => {}
            _ => {
                by_key.insert(key, i);
            }
        }
    }
    by_key
        .into_values()
        .flat_map(|i| {
            uses.of_row(&rows[i]).iter().map(move |u| Signed {
                row: i,
                at: u.at.clone(),
                count: u.signatures,
            })
        })
        .collect()
}

impl Observe<'_> {
    /// The capacity of `partition` whose table is `rows`, and the probes to run for the
    /// operations it moves to that no probe measured yet.
    pub(super) async fn capacity_of(
        self,
        partition: &str,
        rows: &[Assessed],
        uses: &UsesByKey<'_>,
    ) -> (Capacity, Vec<SuggestedProbe>) {
        let signed = signed_rows(uses, rows);
        let mut ops: Vec<String> = rows
            .iter()
            .filter_map(hsmc_pqc::capacity::costed_as)
            .collect();
        ops.sort();
        ops.dedup();
        let mut ceilings = HashMap::new();
        for op in &ops {
            // A probe history that cannot be read leaves the operation unprobed: the view
            // then offers to probe it, and the Probes view says why the history failed.
            if let Ok(Some(r)) = self.latest_probe(partition, op).await {
                if let Some(c) = ceiling_of(&r) {
                    ceilings.insert(op.clone(), c);
                }
            }
        }
        let since = crate::observe::health::days_ago(WINDOW_DAYS as i64);
        let capacity = hsmc_pqc::capacity::capacity(rows, &signed, &since, WINDOW_DAYS, &|op| {
            ceilings.get(op).cloned()
        });
        let probes = capacity
            .operations
            .iter()
            .filter(|o| o.ceiling.is_none())
            .filter_map(|o| SuggestedProbe::of(&o.op))
            .collect();
        (capacity, probes)
    }
}
