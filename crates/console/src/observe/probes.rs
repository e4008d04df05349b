//! Latency probes as a console service: what the partition offers, a run (or a sweep) with
//! live progress and cancel, the report stored in `probes.db` (SQLite, in the data folder)
//! with the module, firmware, slot and parameters, one audit record per run, history and
//! charts.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::Row;
use ts_rs::TS;

use audit::Event;
use bench::probe::{self, ProbeOp, ProbeProgress, ProbeRequest, RunResult, SweepPoint};

use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::core::i18n::Text;
use crate::observe::probe_verdict::verdict_text;
use crate::observe::Observe;
use crate::text;

#[derive(Debug, Clone, Serialize, TS)]
pub struct ProbeChoice {
    pub op: ProbeOp,
    pub name: String,
    pub mechanism: String,
    pub offered: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct ProbeReport {
    pub id: String,
    pub created_at: String,
    pub partition_id: String,
    pub module: String,
    pub firmware: String,
    pub slot: u64,
    pub op: ProbeOp,
    pub op_name: String,
    pub mechanism: String,
    pub payload_bytes: u32,
    pub request: ProbeRequest,
    pub console_version: String,
    pub runs: Vec<RunResult>,
    pub sweep: Vec<SweepPoint>,
    pub verdict: Option<String>,
    /// The verdict in a form each language translates (absent in reports kept before it).
    #[serde(default)]
    pub verdict_text: Option<Text>,
    /// The probe's own cost per timed call (two clock reads and a histogram record).
    pub overhead_ns: f64,
    pub cancelled: bool,
    /// Against an HA group's virtual slot: how the calls spread over its members.
    #[serde(default)]
    pub ha: Option<HaProbeShare>,
}

/// A probe's calls over an HA group's members, and the group's total.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct HaProbeShare {
    /// Timed calls per second of the whole group (all runs' calls ÷ their time).
    pub total_per_s: f64,
    pub members: Vec<MemberThroughput>,
    /// Where the shares come from.
    pub basis: String,
    /// The same in a form each language translates (absent in results stored before).
    #[serde(default)]
    pub basis_text: Option<Text>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct MemberThroughput {
    pub member: u32,
    pub serial: String,
    /// Commands the member served during the probe (set-up and warm-up included).
    #[ts(type = "number")]
    pub commands: u64,
    pub share_percent: f64,
    /// Its share of the group's throughput.
    pub per_s: f64,
}

/// Spread the group's throughput over the members by the commands each served.
pub fn ha_share(
    before: &[(u32, String, u64)],
    after: &[(u32, String, u64)],
    runs: &[bench::probe::RunResult],
) -> HaProbeShare {
    let basis = text!(
        "ha.probe_basis_counters",
        "each member's command counter (CA_GetHSMStats, or its utilization counters) before and after the probe"
    );
    let seconds: f64 = runs.iter().map(|r| r.seconds).sum();
    let calls: u64 = runs.iter().map(|r| r.calls).sum();
    let total_per_s = if seconds > 0.0 {
        calls as f64 / seconds
    } else {
        0.0
    };
    let served: Vec<(u32, String, u64)> = after
        .iter()
        .map(|(m, serial, n)| {
            let b = before.iter().find(|x| x.0 == *m).map(|x| x.2).unwrap_or(0);
            (*m, serial.clone(), n.saturating_sub(b))
        })
        .collect();
    let sum: u64 = served.iter().map(|x| x.2).sum();
    HaProbeShare {
        total_per_s,
        members: served
            .into_iter()
            .map(|(member, serial, commands)| {
                let share = if sum > 0 {
                    commands as f64 / sum as f64
                } else {
                    0.0
                };
                MemberThroughput {
                    member,
                    serial,
                    commands,
                    share_percent: 100.0 * share,
                    per_s: share * total_per_s,
                }
            })
            .collect(),
        basis: basis.text.clone(),
        basis_text: Some(basis),
    }
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ProbeSummary {
    pub id: String,
    pub created_at: String,
    pub op_name: String,
    pub partition_id: String,
    pub workers: String,
    pub throughput_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
}

fn store_error(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        ErrorCode::Io,
        text!(
            "errors.probe_history_cannot_used",
            "The probe history cannot be used: {{error}}",
            error = e
        ),
    )
}

impl Observe<'_> {
    async fn probe_db(self) -> ApiResult<SqlitePool> {
        if let Some(p) = self.state.probe_db.lock().clone() {
            return Ok(p);
        }
        let path = self.config().data_dir.join("probes.db");
        let opts = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(2)
            .connect_with(opts)
            .await
            .map_err(store_error)?;
        sqlx::query("CREATE TABLE IF NOT EXISTS probe_runs (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, op TEXT NOT NULL, partition_id TEXT NOT NULL, report TEXT NOT NULL)")
            .execute(&pool)
            .await
            .map_err(store_error)?;
        *self.state.probe_db.lock() = Some(pool.clone());
        Ok(pool)
    }

    /// Every probe, and whether this partition's mechanism list offers it.
    pub async fn probe_catalog(self, partition: &str) -> ApiResult<Vec<ProbeChoice>> {
        let p = self.partition_ref(partition).await?;
        let (m, slot) = (p.module.module.clone(), p.slot());
        let offered = tokio::task::spawn_blocking(move || m.mechanisms(slot))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))??;
        Ok(ProbeOp::catalog()
            .into_iter()
            .map(|op| ProbeChoice {
                name: op.name(),
                mechanism: op.mechanism_name(),
                offered: op.mechanisms().iter().all(|x| offered.contains(x)),
                op,
            })
            .collect())
    }

    /// Run a probe. Needs a logged-in partition (keys are session objects made for the
    /// run and destroyed after it). Recorded once, with its parameters and summary.
    pub async fn run_probe(
        self,
        partition: &str,
        req: ProbeRequest,
        progress: Arc<dyn Fn(ProbeProgress) + Send + Sync>,
        cancel: Arc<AtomicBool>,
    ) -> ApiResult<ProbeReport> {
        check_probe_request(&req)?;
        let p = self.partition_ref(partition).await?;
        if p.logged_in().is_none() {
            return Err(ApiError::new(
                ErrorCode::NotLoggedIn,
                text!(
                    "errors.log_partition_run_probes_they",
                    "Log in to the partition to run probes (they make temporary keys)."
                ),
            ));
        }
        let ha_before = self.groups.member_counters(&p).await;
        let (m, slot) = (p.module.module.clone(), p.slot());
        let r2 = req.clone();
        let outcome =
            tokio::task::spawn_blocking(move || probe::run(&m, slot, &r2, &cancel, &*progress))
                .await
                .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
                .map_err(ApiError::from);
        let (info, fw) = module_and_firmware(&p).await?;
        let ev = Event::new("probe.run", "partition")
            .resource(&p.id)
            .algorithm(req.op.mechanism_name())
            .meta("op", req.op.name())
            .meta("mode", req.mode)
            .meta(
                "workers",
                if req.sweep.is_empty() {
                    vec![req.workers]
                } else {
                    req.sweep.clone()
                },
            );
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                self.record(ev.failed(e.code.to_string()).meta("error", &e.message))
                    .await;
                return Err(e);
            }
        };
        let ha = match (ha_before, self.groups.member_counters(&p).await) {
            (Some(b), Some(a)) => Some(ha_share(&b, &a, &outcome.runs)),
            _ => None,
        };
        let report = ProbeReport {
            id: format!("probe_{}", audit::log::random_hex(8)),
            created_at: audit::now_rfc3339(),
            partition_id: p.id.clone(),
            module: info
                .map(|i| {
                    format!(
                        "{} {} {}",
                        i.manufacturer, i.library_description, i.library_version
                    )
                })
                .unwrap_or_default(),
            firmware: fw.unwrap_or_default(),
            slot,
            op: req.op,
            op_name: req.op.name(),
            mechanism: req.op.mechanism_name(),
            payload_bytes: req.op.payload(),
            console_version: env!("CARGO_PKG_VERSION").into(),
            runs: outcome.runs,
            verdict_text: probe::sweep_verdict(&outcome.sweep).map(|v| verdict_text(&v)),
            sweep: outcome.sweep,
            verdict: outcome.verdict,
            overhead_ns: outcome.overhead_ns,
            cancelled: outcome.cancelled,
            request: req,
            ha,
        };
        let summary: Vec<_> = report.runs.iter().map(|r| serde_json::json!({ "workers": r.workers, "calls": r.calls, "errors": r.errors, "ops_per_s": r.throughput_per_s, "p50_us": r.latency.p50_us, "p99_us": r.latency.p99_us })).collect();
        let ha_summary = report.ha.as_ref().map(|h| {
            h.members
                .iter()
                .map(|m| serde_json::json!({"member": m.member, "serial": m.serial, "share_percent": m.share_percent}))
                .collect::<Vec<_>>()
        });
        self.record(
            ev.meta("probe_id", &report.id)
                .meta("results", summary)
                .meta("ha_members", ha_summary)
                .meta("verdict", &report.verdict)
                .meta("cancelled", report.cancelled),
        )
        .await;
        let db = self.probe_db().await?;
        sqlx::query("INSERT INTO probe_runs (id, created_at, op, partition_id, report) VALUES (?, ?, ?, ?, ?)")
            .bind(&report.id)
            .bind(&report.created_at)
            .bind(&report.op_name)
            .bind(&report.partition_id)
            .bind(serde_json::to_string(&report).map_err(store_error)?)
            .execute(&db)
            .await
            .map_err(store_error)?;
        Ok(report)
    }

    /// Stored runs, newest first.
    pub async fn probe_history(self) -> ApiResult<Vec<ProbeSummary>> {
        let db = self.probe_db().await?;
        let rows = sqlx::query("SELECT report FROM probe_runs ORDER BY created_at DESC LIMIT 500")
            .fetch_all(&db)
            .await
            .map_err(store_error)?;
        let mut out = Vec::new();
        for row in rows {
            let text: String = row.try_get("report").map_err(store_error)?;
            let Ok(r) = serde_json::from_str::<ProbeReport>(&text) else {
                continue;
            };
            let best = r
                .runs
                .iter()
                .max_by(|a, b| a.throughput_per_s.total_cmp(&b.throughput_per_s));
            out.push(ProbeSummary {
                id: r.id.clone(),
                created_at: r.created_at.clone(),
                op_name: r.op_name.clone(),
                partition_id: r.partition_id.clone(),
                workers: r
                    .runs
                    .iter()
                    .map(|x| x.workers.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                throughput_per_s: best.map(|b| b.throughput_per_s).unwrap_or(0.0),
                p50_us: r.runs.first().map(|b| b.latency.p50_us).unwrap_or(0.0),
                p99_us: r.runs.first().map(|b| b.latency.p99_us).unwrap_or(0.0),
            });
        }
        Ok(out)
    }

    /// The latest finished run of the operation `op_name` on `partition` through the pool
    /// (the integration profile's runs measure something else).
    pub async fn latest_probe(
        self,
        partition: &str,
        op_name: &str,
    ) -> ApiResult<Option<ProbeReport>> {
        let db = self.probe_db().await?;
        let rows = sqlx::query(
            "SELECT report FROM probe_runs WHERE partition_id = ? AND op = ? ORDER BY created_at DESC LIMIT 50",
        )
        .bind(partition)
        .bind(op_name)
        .fetch_all(&db)
        .await
        .map_err(store_error)?;
        Ok(rows
            .iter()
            .filter_map(|row| row.try_get::<String, _>("report").ok())
            .filter_map(|text| serde_json::from_str::<ProbeReport>(&text).ok())
            .find(|r| {
                !r.cancelled
                    && r.request.profile == bench::probe::CallProfile::Pool
                    && !r.runs.is_empty()
            }))
    }

    pub async fn probe_report(self, id: &str) -> ApiResult<ProbeReport> {
        let db = self.probe_db().await?;
        let row = sqlx::query("SELECT report FROM probe_runs WHERE id = ?")
            .bind(id)
            .fetch_optional(&db)
            .await
            .map_err(store_error)?;
        let row = row.ok_or_else(|| {
            ApiError::invalid(text!(
                "errors.no_probe_run",
                "No probe run {{id}}.",
                id = id
            ))
        })?;
        let text: String = row.try_get("report").map_err(store_error)?;
        serde_json::from_str(&text).map_err(store_error)
    }
}

/// A report's charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProbeChart {
    /// p50/p99 over time of the last run.
    Latency,
    /// The last run's latency distribution.
    Histogram,
    /// Throughput against workers.
    Sweep,
}

/// One of a report's charts as SVG.
pub fn chart(r: &ProbeReport, which: ProbeChart) -> ApiResult<String> {
    use bench::charts::{histogram, line_chart, Series};
    let last = r.runs.last();
    Ok(match which {
        ProbeChart::Latency => line_chart(
            &format!("{} latency", r.op_name),
            "seconds",
            "µs",
            &[
                Series {
                    name: "p50".into(),
                    points: last
                        .map(|l| l.series.iter().map(|p| (p.t, p.p50_us)).collect())
                        .unwrap_or_default(),
                },
                Series {
                    name: "p99".into(),
                    points: last
                        .map(|l| l.series.iter().map(|p| (p.t, p.p99_us)).collect())
                        .unwrap_or_default(),
                },
            ],
            720,
            300,
        ),
        ProbeChart::Histogram => histogram(
            &format!("{} latency distribution", r.op_name),
            "µs (upper bound)",
            last.map(|l| l.histogram.as_slice()).unwrap_or(&[]),
            720,
            300,
        ),
        ProbeChart::Sweep => line_chart(
            &format!("{} concurrency sweep", r.op_name),
            "workers",
            "ops/s",
            &[Series {
                name: "throughput".into(),
                points: r
                    .runs
                    .iter()
                    .map(|x| (f64::from(x.workers), x.throughput_per_s))
                    .collect(),
            }],
            720,
            300,
        ),
    })
}

/// A live chart from progress points (the window sends what it has received).
pub fn live_chart(title: &str, points: &[bench::probe::SeriesPoint]) -> String {
    use bench::charts::{line_chart, Series};
    line_chart(
        title,
        "seconds",
        "µs",
        &[
            Series {
                name: "p50".into(),
                points: points.iter().map(|p| (p.t, p.p50_us)).collect(),
            },
            Series {
                name: "p99".into(),
                points: points.iter().map(|p| (p.t, p.p99_us)).collect(),
            },
        ],
        720,
        300,
    )
}

/// The report as CSV: one line per run.
pub fn report_csv(r: &ProbeReport) -> String {
    let mut s = String::from("op,workers,calls,errors,seconds,ops_per_s,first_call_us,min_us,mean_us,stddev_us,p50_us,p90_us,p95_us,p99_us,p999_us,max_us\n");
    for x in &r.runs {
        let l = &x.latency;
        s.push_str(&format!(
            "{},{},{},{},{:.3},{:.2},{},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1}\n",
            r.op_name,
            x.workers,
            x.calls,
            x.errors,
            x.seconds,
            x.throughput_per_s,
            x.first_call_us
                .map(|v| format!("{v:.1}"))
                .unwrap_or_default(),
            l.min_us,
            l.mean_us,
            l.stddev_us,
            l.p50_us,
            l.p90_us,
            l.p95_us,
            l.p99_us,
            l.p999_us,
            l.max_us
        ));
    }
    s
}

/// The request's bounds, checked before anything runs.
fn check_probe_request(req: &ProbeRequest) -> ApiResult<()> {
    match req.mode {
        probe::ProbeMode::Count { calls } if calls == 0 || calls > 10_000_000 => {
            return Err(ApiError::invalid(text!(
                "errors.count_probe_makes_calls",
                "A count probe makes 1 to 10,000,000 calls."
            )))
        }
        probe::ProbeMode::Duration { seconds } if !(0.1..=3600.0).contains(&seconds) => {
            return Err(ApiError::invalid(text!(
                "errors.probe_runs_s_h",
                "A probe runs 0.1 s to 1 h."
            )))
        }
        probe::ProbeMode::Rate {
            per_second,
            seconds,
        } if !(0.1..=3600.0).contains(&seconds) || !(0.1..=1_000_000.0).contains(&per_second) => {
            return Err(ApiError::invalid(text!(
                "errors.rate_probe_runs_s_h",
                "A rate probe runs 0.1 s to 1 h at 0.1 to 1,000,000 calls per second."
            )))
        }
        _ => {}
    }
    if req.warmup > 100_000 {
        return Err(ApiError::invalid(text!(
            "errors.at_most_warm_up_calls",
            "At most 100,000 warm-up calls."
        )));
    }
    Ok(())
}

/// The module's description and the token's firmware (Luna's with its sub-minor), for the
/// report.
async fn module_and_firmware(
    p: &crate::core::partitions::Partition,
) -> ApiResult<(Option<p11::Info>, Option<String>)> {
    let (m, slot) = (p.module.module.clone(), p.slot());
    tokio::task::spawn_blocking(move || {
        (
            m.info().ok(),
            m.ca_firmware_version(slot)
                .ok()
                .map(|(a, b, c)| format!("{a}.{b}.{c}"))
                .or_else(|| {
                    m.token_info(slot)
                        .ok()
                        .map(|t| t.firmware_version.to_string())
                }),
        )
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}
