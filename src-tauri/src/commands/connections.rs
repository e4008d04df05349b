//! Modules, their partitions, logging in and out.

use tauri::State;

use console::partitions::ConnectionView;
use console::views::{
    mechanisms_csv, LoginResult, MechanismView, ModuleView, PartitionView, UserKind,
};
use console::ApiError;

use super::{dialogs, Cmd};
use crate::state::AppState;

/// Every loaded module with its slots and tokens.
#[ipc_macros::command]
pub async fn connections(state: State<'_, AppState>) -> Cmd<Vec<ConnectionView>> {
    Ok(state.console()?.connections().await)
}

/// Load a PKCS#11 module by path (checked for a PKCS#11 entry point before it is loaded).
#[ipc_macros::command]
pub async fn add_module(state: State<'_, AppState>, path: String) -> Cmd<ModuleView> {
    state.console()?.add_module(&path).await
}

/// The native file dialog for choosing a module; `None` when the officer cancels.
#[ipc_macros::command]
pub async fn pick_module_file() -> Cmd<Option<String>> {
    let f = rfd::AsyncFileDialog::new()
        .set_title("Choose a PKCS#11 module")
        .add_filter("PKCS#11 module", &["so"])
        .add_filter("All files", &["*"])
        .set_directory("/usr/lib")
        .pick_file()
        .await;
    Ok(f.map(|f| f.path().display().to_string()))
}

/// Forget a module (its partitions log out).
#[ipc_macros::command]
pub async fn remove_module(state: State<'_, AppState>, module_id: String) -> Cmd<()> {
    state.console()?.remove_module(&module_id).await
}

#[ipc_macros::command]
pub async fn partition(state: State<'_, AppState>, partition_id: String) -> Cmd<PartitionView> {
    state.console()?.partition(&partition_id).await
}

#[ipc_macros::command]
pub async fn mechanisms(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Vec<MechanismView>> {
    state.console()?.mechanisms(&partition_id).await
}

/// The mechanism table as CSV where the officer chooses; `None` when cancelled.
#[ipc_macros::command]
pub async fn save_mechanisms_csv(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Option<String>> {
    let c = state.console()?;
    let list = c.mechanisms(&partition_id).await?;
    let Some(path) = dialogs::save("Export mechanisms", "mechanisms.csv", ("CSV", &["csv"])).await
    else {
        return Ok(None);
    };
    outfile::write_replace(&path, mechanisms_csv(&list).as_bytes()).map_err(ApiError::from)?;
    Ok(Some(path.display().to_string()))
}

/// The PIN crosses IPC once, goes straight into zeroizing memory, and is never stored.
#[ipc_macros::command]
pub async fn login(
    state: State<'_, AppState>,
    partition_id: String,
    user: UserKind,
    pin: String,
) -> Cmd<LoginResult> {
    let pin = p11::pin(pin);
    state.console()?.login(&partition_id, user, pin).await
}

#[ipc_macros::command]
pub async fn logout(state: State<'_, AppState>, partition_id: String) -> Cmd<()> {
    state.console()?.logout(&partition_id).await
}
