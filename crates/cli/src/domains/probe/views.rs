//! What `hsmc probe` shows.

use bench::probe::CapacityPlan;
use console::probes::{ProbeChoice, ProbeReport};
use console::ApiResult;
use serde::Serialize;

use crate::render::{Page, Render};

/// `probe --list`: what the partition offers.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ProbeCatalog(pub Vec<ProbeChoice>);

impl Render for ProbeCatalog {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let rows: Vec<Vec<String>> = self
            .0
            .iter()
            .map(|x| {
                vec![
                    x.name.clone(),
                    x.mechanism.clone(),
                    if x.offered {
                        "yes".into()
                    } else {
                        "not offered".into()
                    },
                ]
            })
            .collect();
        page.table(&["PROBE", "MECHANISM", "OFFERED"], &rows);
        Ok(())
    }
}

/// One probe's report and, with `--capacity-target`, the plan (exit 1 if calls failed).
#[derive(Debug, Serialize)]
pub struct ProbeOutcome {
    pub report: ProbeReport,
    pub capacity: Option<CapacityPlan>,
}

impl Render for ProbeOutcome {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let r = &self.report;
        writeln!(
            page,
            "{} on {} ({}, firmware {}), {} payload bytes, probe overhead {:.0} ns/call",
            r.op_name, r.partition_id, r.mechanism, r.firmware, r.payload_bytes, r.overhead_ns
        );
        let rows: Vec<Vec<String>> = r
            .runs
            .iter()
            .map(|x| {
                let l = &x.latency;
                vec![
                    x.workers.to_string(),
                    x.calls.to_string(),
                    x.errors.to_string(),
                    format!("{:.1}", x.throughput_per_s),
                    x.first_call_us
                        .map(|v| format!("{v:.0}"))
                        .unwrap_or_default(),
                    format!("{:.0}", l.mean_us),
                    format!("{:.0}", l.p50_us),
                    format!("{:.0}", l.p95_us),
                    format!("{:.0}", l.p99_us),
                    format!("{:.0}", l.p999_us),
                    format!("{:.0}", l.max_us),
                    x.client_cpu
                        .map(|c| format!("{:.0} %", 100.0 * c))
                        .unwrap_or_default(),
                ]
            })
            .collect();
        page.table(
            &[
                "WORKERS",
                "CALLS",
                "ERRORS",
                "OPS/S",
                "FIRST µs",
                "MEAN µs",
                "P50",
                "P95",
                "P99",
                "P99.9",
                "MAX",
                "CONSOLE CPU",
            ],
            &rows,
        );
        for s in &r.sweep {
            if s.workers > 1 {
                writeln!(
                    page,
                    "  {} workers: efficiency {:.0} %",
                    s.workers,
                    100.0 * s.efficiency
                );
            }
        }
        if let Some(v) = &r.verdict {
            writeln!(page, "{v}");
        }
        if let Some(ha) = &r.ha {
            writeln!(page, "HA group: {:.1} calls/s in all", ha.total_per_s);
            for m in &ha.members {
                writeln!(
                    page,
                    "  member {} ({}): {:.1} % of the calls, {:.1}/s",
                    m.member, m.serial, m.share_percent, m.per_s
                );
            }
        }
        if let Some(e) = r.runs.iter().find_map(|x| x.first_error.clone()) {
            writeln!(page, "first error: {e}");
        }
        if let Some(p) = &self.capacity {
            writeln!(page, "capacity: {}", p.explanation);
        }
        Ok(())
    }

    fn json(&self, page: &mut Page) {
        page.sorted_document(self);
    }

    fn exit_code(&self) -> u8 {
        if self.report.runs.iter().any(|x| x.errors > 0) {
            1
        } else {
            0
        }
    }
}

/// `probe --integration`: the same probe per call profile, side by side, with each
/// profile's mean latency against the pool's.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct IntegrationProfile(pub Vec<ProbeReport>);

impl Render for IntegrationProfile {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let Some(first) = self.0.first() else {
            return Ok(());
        };
        writeln!(
            page,
            "{} on {} ({}), one run per call profile",
            first.op_name, first.partition_id, first.mechanism
        );
        let pool_mean = first.runs.first().map(|r| r.latency.mean_us).unwrap_or(0.0);
        let rows: Vec<Vec<String>> = self
            .0
            .iter()
            .filter_map(|r| r.runs.first().map(|run| (r, run)))
            .map(|(r, run)| {
                vec![
                    r.request.profile.name().to_string(),
                    run.calls.to_string(),
                    run.errors.to_string(),
                    format!("{:.1}", run.throughput_per_s),
                    format!("{:.0}", run.latency.mean_us),
                    format!("{:.0}", run.latency.p50_us),
                    format!("{:.0}", run.latency.p99_us),
                    if pool_mean > 0.0 {
                        format!("{:.2}×", run.latency.mean_us / pool_mean)
                    } else {
                        String::new()
                    },
                ]
            })
            .collect();
        page.table(
            &[
                "PROFILE",
                "CALLS",
                "ERRORS",
                "OPS/S",
                "MEAN µs",
                "P50",
                "P99",
                "MEAN VS POOL",
            ],
            &rows,
        );
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        u8::from(self.0.iter().any(|r| r.runs.iter().any(|x| x.errors > 0)))
    }
}
