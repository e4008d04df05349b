//! HA groups (members, drift check, header warnings) and Luna's per-key usage limits.

use tauri::State;

use console::ha::{DriftReport, HaGroupView, HaWarning};
use console::usage::UsageKeyView;
use hsm::keys::ObjectSummary;

use super::Cmd;
use crate::state::AppState;

/// Every HA group of the loaded modules (their members, without statistics).
#[ipc_macros::command]
pub async fn ha_groups(state: State<'_, AppState>) -> Cmd<Vec<HaGroupView>> {
    state.console()?.ha().ha_groups().await
}

/// One HA group, with its members' statistics side by side; null when the partition is
/// not an HA group's virtual slot.
#[ipc_macros::command]
pub async fn ha_group(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Option<HaGroupView>> {
    state.console()?.ha().ha_group(&partition_id).await
}

/// Compare the group's members object by object now (recorded when the state changes).
#[ipc_macros::command]
pub async fn ha_drift(state: State<'_, AppState>, partition_id: String) -> Cmd<DriftReport> {
    state.console()?.ha().ha_drift(&partition_id).await
}

/// The header's HA warnings: groups with a drift or a member down.
#[ipc_macros::command]
pub async fn ha_warnings(state: State<'_, AppState>) -> Cmd<Vec<HaWarning>> {
    Ok(state.console()?.ha().ha_warnings().await)
}

/// Every key with a Luna usage limit on the logged-in partitions: uses left, burn rate.
#[ipc_macros::command]
pub async fn usage_keys(state: State<'_, AppState>) -> Cmd<Vec<UsageKeyView>> {
    state.console()?.observe().usage_keys().await
}

/// Set or raise a key's usage limit (Luna: the crypto officer or the SO).
#[ipc_macros::command]
pub async fn set_usage_limit(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    limit: u64,
) -> Cmd<ObjectSummary> {
    state
        .console()?
        .observe()
        .set_usage_limit(&partition_id, handle, limit)
        .await
}
