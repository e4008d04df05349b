//! HSS counters and statistics.

use tauri::State;

use console::health::{HssKeyView, StatsChart, StatsPoint, StatsSnapshot};

use super::Cmd;
use crate::state::AppState;

/// Every HSS key on the logged-in partitions, with burn rates from the audit trail.
#[ipc_macros::command]
pub async fn hss_keys(state: State<'_, AppState>) -> Cmd<Vec<HssKeyView>> {
    state.console()?.observe().hss_keys().await
}

/// One statistics sample of a partition (kept for the charts).
#[ipc_macros::command]
pub async fn stats(state: State<'_, AppState>, partition_id: String) -> Cmd<StatsSnapshot> {
    state.console()?.stats(&partition_id).await
}

/// The samples taken so far.
#[ipc_macros::command]
pub fn stats_history(state: State<'_, AppState>, partition_id: String) -> Cmd<Vec<StatsPoint>> {
    Ok(state.console()?.observe().stats_history(&partition_id))
}

/// A statistics chart as SVG.
#[ipc_macros::command]
pub fn stats_chart(
    state: State<'_, AppState>,
    partition_id: String,
    which: StatsChart,
) -> Cmd<String> {
    state.console()?.observe().stats_chart(&partition_id, which)
}
