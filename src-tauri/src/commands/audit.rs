//! The audit trail: status, records, verification, exports, checkpoints, the key.

use tauri::ipc::Channel;
use tauri::State;

use audit::export::{ExportSummary, Range};
use audit::store::Query;
use console::trail::{AuditStatusView, CheckpointView, ExportFormat};
use console::views::{JobEvent, RecordView};

use super::{dialogs, Cmd};
use crate::state::AppState;

#[ipc_macros::command]
pub async fn audit_status(state: State<'_, AppState>) -> Cmd<AuditStatusView> {
    state.console()?.trail().audit_status().await
}

/// A page of records matching the filter, newest first.
#[ipc_macros::command]
pub async fn audit_records(state: State<'_, AppState>, query: Query) -> Cmd<Vec<RecordView>> {
    state.console()?.trail().audit_records(query).await
}

/// Verify the whole trail with progress; `cancel_job(job_id)` stops it.
#[ipc_macros::command]
pub async fn audit_verify(
    state: State<'_, AppState>,
    job_id: String,
    on_event: Channel<JobEvent>,
) -> Cmd<audit::Verdict> {
    let c = state.console()?;
    let cancel = state.job(&job_id);
    let progress = move |done: i64, total: i64| {
        let _ = on_event.send(JobEvent::Progress { done, total });
    };
    let r = c.trail().audit_verify(&progress, &cancel).await;
    state.finish_job(&job_id);
    r
}

/// Export the records in the range where the officer chooses; `None` when cancelled.
#[ipc_macros::command]
pub async fn audit_export(
    state: State<'_, AppState>,
    format: ExportFormat,
    range: Range,
) -> Cmd<Option<ExportSummary>> {
    let c = state.console()?;
    let (name, filter): (&str, (&str, &[&str])) = match format {
        ExportFormat::Jsonl => ("audit-trail.jsonl", ("JSON Lines (verifiable)", &["jsonl"])),
        ExportFormat::Csv => ("audit-trail.csv", ("CSV", &["csv"])),
    };
    let Some(path) = dialogs::save("Export the audit trail", name, filter).await else {
        return Ok(None);
    };
    c.trail().audit_export(format, range, &path).await.map(Some)
}

/// Write a signed checkpoint now.
#[ipc_macros::command]
pub async fn audit_checkpoint(state: State<'_, AppState>) -> Cmd<audit::Checkpoint> {
    state.console()?.trail().audit_checkpoint().await
}

/// Every checkpoint with its signature checked.
#[ipc_macros::command]
pub async fn audit_checkpoints(state: State<'_, AppState>) -> Cmd<Vec<CheckpointView>> {
    state.console()?.trail().audit_checkpoints().await
}

/// The checkpoint signing key's public half (PEM).
#[ipc_macros::command]
pub async fn audit_public_key(state: State<'_, AppState>) -> Cmd<String> {
    state.console()?.trail().audit_public_key_pem().await
}

/// Start a new key epoch (the window asks for confirmation first).
#[ipc_macros::command]
pub async fn audit_rotate_key(state: State<'_, AppState>) -> Cmd<i64> {
    state.console()?.trail().audit_rotate_key().await
}

/// Records and failures per day for the last `days` days (the Audit view's bar chart).
#[ipc_macros::command]
pub async fn audit_days(state: State<'_, AppState>, days: u32) -> Cmd<Vec<audit::store::DayCount>> {
    state.console()?.trail().audit_days(days).await
}
