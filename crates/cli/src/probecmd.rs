//! `hsmc probe`: the console's probe engine on the command line.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bench::probe::{capacity, ProbeMode, ProbeOp, ProbeProgress, ProbeRequest};
use console::{ApiError, ApiResult, Console, ErrorCode};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::args::{Global, ProbeArgs};
use crate::commands::{login, partition};
use crate::output::{self, table};

pub async fn probe(c: &Console, g: &Global, a: &ProbeArgs) -> ApiResult<u8> {
    let p = partition(c, g).await?;
    if a.list {
        let cat = c.probe_catalog(&p.id).await?;
        if g.json {
            output::json(&cat);
        } else {
            let rows: Vec<Vec<String>> = cat
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
            table(&["PROBE", "MECHANISM", "OFFERED"], &rows);
        }
        return Ok(0);
    }
    let name = a.op.clone().unwrap_or_default();
    let op = ProbeOp::parse(&name).ok_or_else(|| {
        ApiError::invalid(format!("Unknown probe '{name}'.")).suggest("See `hsmc probe --list`.")
    })?;
    let mode = match (a.iterations, a.duration, a.rate) {
        (_, d, Some(r)) => ProbeMode::Rate {
            per_second: r,
            seconds: d.unwrap_or(10.0),
        },
        (_, Some(d), None) => ProbeMode::Duration { seconds: d },
        (n, None, None) => ProbeMode::Count {
            calls: n.unwrap_or(1000),
        },
    };
    login(c, g, &p, true).await?;
    let req = ProbeRequest {
        op,
        mode,
        workers: a.workers,
        sweep: a.sweep.clone(),
        warmup: a.warmup,
    };
    let bar = ProgressBar::with_draw_target(
        Some(1000),
        if std::io::stderr().is_terminal() && !g.json {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{prefix} {bar:30} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let b2 = bar.clone();
    let progress = Arc::new(move |pr: ProbeProgress| {
        b2.set_prefix(format!(
            "{} worker(s), run {}/{}",
            pr.workers, pr.run, pr.runs
        ));
        b2.set_position((pr.fraction * 1000.0) as u64);
        if let Some(pt) = pr.point {
            b2.set_message(format!(
                "{} calls  p50 {:.0} µs  p99 {:.0} µs  {:.0}/s",
                pr.calls, pt.p50_us, pt.p99_us, pt.ops_per_s
            ));
        }
    });
    let r = c
        .run_probe(&p.id, req, progress, Arc::new(AtomicBool::new(false)))
        .await?;
    bar.finish_and_clear();
    if let Some(path) = &a.out {
        console::keys::write_atomic(
            path,
            &serde_json::to_vec_pretty(&r)
                .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?,
        )?;
    }
    if let Some(path) = &a.csv {
        console::keys::write_atomic(path, console::probes::report_csv(&r).as_bytes())?;
    }
    if let Some(path) = &a.svg {
        let which = if r.sweep.is_empty() {
            console::probes::ProbeChart::Latency
        } else {
            console::probes::ProbeChart::Sweep
        };
        console::keys::write_atomic(path, console::probes::chart(&r, which)?.as_bytes())?;
    }
    let plan = a.capacity_target.map(|t| {
        let best = r
            .runs
            .iter()
            .max_by(|x, y| x.throughput_per_s.total_cmp(&y.throughput_per_s))
            .expect("one run");
        capacity(best.throughput_per_s, best.latency.mean_us, t)
    });
    if g.json {
        output::json(&serde_json::json!({ "report": r, "capacity": plan }));
    } else {
        println!(
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
                ]
            })
            .collect();
        table(
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
            ],
            &rows,
        );
        for s in &r.sweep {
            if s.workers > 1 {
                println!(
                    "  {} workers: efficiency {:.0} %",
                    s.workers,
                    100.0 * s.efficiency
                );
            }
        }
        if let Some(v) = &r.verdict {
            println!("{v}");
        }
        if let Some(e) = r.runs.iter().find_map(|x| x.first_error.clone()) {
            println!("first error: {e}");
        }
        if let Some(p) = &plan {
            println!("capacity: {}", p.explanation);
        }
    }
    Ok(if r.runs.iter().any(|x| x.errors > 0) {
        1
    } else {
        0
    })
}
