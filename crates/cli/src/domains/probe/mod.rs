//! `hsmc probe`: the console's probe engine on the command line.

pub mod args;
mod views;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bench::probe::{capacity, CallProfile, ProbeMode, ProbeOp, ProbeProgress, ProbeRequest};
use console::probes::ProbeReport;
use console::{ApiError, ApiResult, ErrorCode, Partition};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use self::args::ProbeArgs;
use self::views::{IntegrationProfile, ProbeCatalog, ProbeOutcome};
use crate::context::{Ctx, Login};
use console::text;

pub async fn run(ctx: &Ctx<'_>, a: &ProbeArgs) -> ApiResult<u8> {
    let p = ctx.partition().await?;
    if a.list {
        let catalog = ctx.console().observe().probe_catalog(&p.id).await?;
        return ctx.out.show(&ProbeCatalog(catalog));
    }
    if a.integration {
        let mut reports = Vec::new();
        for profile in CallProfile::ALL {
            let mut req = request(a)?;
            req.profile = profile;
            reports.push(run_one(ctx, &p, req).await?);
        }
        return ctx.out.show(&IntegrationProfile(reports));
    }
    ctx.out.show(&probe(ctx, &p, a).await?)
}

/// Run one probe, write the files asked for, plan capacity when asked.
async fn probe(ctx: &Ctx<'_>, p: &Partition, a: &ProbeArgs) -> ApiResult<ProbeOutcome> {
    let report = run_one(ctx, p, request(a)?).await?;
    write_files(a, &report)?;
    let capacity = a.capacity_target.map(|t| {
        let best = report
            .runs
            .iter()
            .max_by(|x, y| x.throughput_per_s.total_cmp(&y.throughput_per_s))
            .expect("one run");
        capacity(best.throughput_per_s, best.latency.mean_us, t)
    });
    Ok(ProbeOutcome { report, capacity })
}

/// One probe run with a progress bar.
async fn run_one(ctx: &Ctx<'_>, p: &Partition, req: ProbeRequest) -> ApiResult<ProbeReport> {
    ctx.login(p, Login::Required).await?;
    let bar = progress_bar(ctx.out.draws_progress());
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
    let report = ctx
        .console()
        .observe()
        .run_probe(&p.id, req, progress, Arc::new(AtomicBool::new(false)))
        .await?;
    bar.finish_and_clear();
    Ok(report)
}

/// The probe the arguments name: operation, count/duration/rate, workers.
fn request(a: &ProbeArgs) -> ApiResult<ProbeRequest> {
    let name = a.op.clone().unwrap_or_default();
    let op = ProbeOp::parse(&name).ok_or_else(|| {
        ApiError::invalid(text!(
            "errors.unknown_probe",
            "Unknown probe '{{name}}'.",
            name = name
        ))
        .suggest(text!(
            "errors.see_hsmc_probe_list",
            "See `hsmc probe --list`."
        ))
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
    Ok(ProbeRequest {
        op,
        mode,
        workers: a.workers,
        sweep: a.sweep.clone(),
        warmup: a.warmup,
        profile: CallProfile::ALL
            .into_iter()
            .find(|c| c.name() == a.profile)
            .unwrap_or_default(),
    })
}

fn progress_bar(visible: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(1000),
        if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{prefix} {bar:30} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// `--out` (the report), `--csv`, `--svg`.
fn write_files(a: &ProbeArgs, r: &ProbeReport) -> ApiResult<()> {
    if let Some(path) = &a.out {
        outfile::write_replace(
            path,
            &serde_json::to_vec_pretty(r)
                .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?,
        )
        .map_err(ApiError::from)?;
    }
    if let Some(path) = &a.csv {
        outfile::write_replace(path, console::probes::report_csv(r).as_bytes())
            .map_err(ApiError::from)?;
    }
    if let Some(path) = &a.svg {
        let which = if r.sweep.is_empty() {
            console::probes::ProbeChart::Latency
        } else {
            console::probes::ProbeChart::Sweep
        };
        outfile::write_replace(path, console::probes::chart(r, which)?.as_bytes())
            .map_err(ApiError::from)?;
    }
    Ok(())
}
