//! The Overview: every partition at a glance and what needs attention across them.

use tauri::State;

use console::overview::Overview;

use super::Cmd;
use crate::state::AppState;

/// Every connected partition (login, PIN state, load, pool, HA) and the lists that need
/// attention across them: keys running out, certificates expiring, the audit trail's
/// verification, failed operations of the last 24 hours.
#[ipc_macros::command]
pub async fn overview(state: State<'_, AppState>) -> Cmd<Overview> {
    state.console()?.overview().await
}
