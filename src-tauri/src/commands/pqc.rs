//! Post-quantum readiness: every key of one partition (or of all the logged-in ones)
//! judged under a policy, and the CycloneDX CBOM of the same keys saved where the officer
//! chooses (as `hsmc pqc --cbom` writes it).

use tauri::State;

use console::pqc::Readiness;
use console::{ApiError, Console};

use super::{dialogs, Cmd};
use crate::state::AppState;

/// The partitions a readiness covers: the one named, or every logged-in partition.
fn scope(c: &Console, partition_id: Option<String>) -> Vec<String> {
    match partition_id {
        Some(id) => vec![id],
        None => c
            .partitions()
            .iter()
            .filter(|p| p.logged_in().is_some())
            .map(|p| p.id.clone())
            .collect(),
    }
}

/// The readiness of `partition_id` (every logged-in partition when `None`) under `policy`
/// (`nist`, `cnsa2`, or a policy file: see `observe::Observe::pqc_policy`), judged today.
#[ipc_macros::command]
pub async fn pqc_readiness(
    state: State<'_, AppState>,
    partition_id: Option<String>,
    policy: String,
) -> Cmd<Readiness> {
    let c = state.console()?;
    let ids = scope(&c, partition_id);
    c.observe().pqc_readiness(&ids, &policy).await
}

/// Save a CycloneDX 1.6 CBOM of the same keys where the officer chooses, never over an
/// existing file; the path written, or `None` when the dialog is cancelled.
#[ipc_macros::command]
pub async fn pqc_export_cbom(
    state: State<'_, AppState>,
    partition_id: Option<String>,
    policy: String,
) -> Cmd<Option<String>> {
    let c = state.console()?;
    // The policy first: a bad file is refused before a dialog opens.
    c.observe().pqc_policy(&policy)?;
    let ids = scope(&c, partition_id);
    let Some(path) = dialogs::save(
        "Export a CBOM",
        "cbom.cdx.json",
        ("CycloneDX JSON", &["json"]),
    )
    .await
    else {
        return Ok(None);
    };
    let bytes = c.observe().pqc_cbom(&ids, &policy).await?;
    outfile::write_new(&path, &bytes).map_err(ApiError::from)?;
    Ok(Some(path.display().to_string()))
}
