//! Latency probes: what a partition offers, runs with live progress, kept reports.

use tauri::ipc::Channel;
use tauri::State;

use bench::probe::{CapacityPlan, ProbeProgress, ProbeRequest, SeriesPoint};
use console::probes::{ProbeChart, ProbeChoice, ProbeReport, ProbeSummary};
use console::ApiError;

use super::Cmd;
use crate::state::AppState;
use console::text;

/// The probes this partition offers (and why others are not).
#[ipc_macros::command]
pub async fn probe_catalog(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Vec<ProbeChoice>> {
    state
        .console()?
        .observe()
        .probe_catalog(&partition_id)
        .await
}

/// Run a probe with live progress; `cancel_job(job_id)` stops it.
#[ipc_macros::command]
pub async fn run_probe(
    state: State<'_, AppState>,
    partition_id: String,
    job_id: String,
    request: ProbeRequest,
    on_event: Channel<ProbeProgress>,
) -> Cmd<ProbeReport> {
    let c = state.console()?;
    let cancel = state.job(&job_id);
    let progress = std::sync::Arc::new(move |p: ProbeProgress| {
        let _ = on_event.send(p);
    });
    let r = c
        .observe()
        .run_probe(&partition_id, request, progress, cancel)
        .await;
    state.finish_job(&job_id);
    r
}

/// The kept runs, newest first.
#[ipc_macros::command]
pub async fn probe_history(state: State<'_, AppState>) -> Cmd<Vec<ProbeSummary>> {
    state.console()?.observe().probe_history().await
}

#[ipc_macros::command]
pub async fn probe_report(state: State<'_, AppState>, id: String) -> Cmd<ProbeReport> {
    state.console()?.observe().probe_report(&id).await
}

/// One of a kept run's charts as SVG.
#[ipc_macros::command]
pub async fn probe_chart(state: State<'_, AppState>, id: String, which: ProbeChart) -> Cmd<String> {
    let r = state.console()?.observe().probe_report(&id).await?;
    console::probes::chart(&r, which)
}

/// A kept run's figures as CSV.
#[ipc_macros::command]
pub async fn probe_csv(state: State<'_, AppState>, id: String) -> Cmd<String> {
    let r = state.console()?.observe().probe_report(&id).await?;
    Ok(console::probes::report_csv(&r))
}

/// The live latency chart from the points the window has received so far.
#[ipc_macros::command]
pub fn probe_live_chart(title: String, points: Vec<SeriesPoint>) -> Cmd<String> {
    if points.len() > 100_000 {
        return Err(ApiError::invalid(text!(
            "errors.too_many_points",
            "too many points"
        )));
    }
    Ok(console::probes::live_chart(&title, &points))
}

/// How many HSMs and sessions a target rate needs, from a measured ceiling.
#[ipc_macros::command]
pub fn probe_capacity(
    ceiling_per_s: f64,
    mean_latency_us: f64,
    target_per_s: f64,
) -> Cmd<CapacityPlan> {
    let valid = ceiling_per_s > 0.0
        && mean_latency_us >= 0.0
        && target_per_s > 0.0
        && target_per_s.is_finite();
    if !valid {
        return Err(ApiError::invalid(text!(
            "errors.capacity_needs_measured_ceiling_positive",
            "capacity needs a measured ceiling and a positive target"
        )));
    }
    Ok(bench::probe::capacity(
        ceiling_per_s,
        mean_latency_us,
        target_per_s,
    ))
}
