//! PINs, roles and initializing a token. PINs cross IPC once, go straight into zeroizing
//! memory and are never stored; the page checks that a new PIN was typed twice alike, the
//! console checks it against the token's length range before it is sent.

use tauri::State;

use console::credentials::{InitTokenRequest, PinChanged, TokenContents, TokenInitialized};
use console::views::UserKind;

use super::Cmd;
use crate::state::AppState;

/// Change the PIN of the role logged in (`C_SetPIN`); a wrong current PIN is tried once.
#[ipc_macros::command]
pub async fn change_pin(
    state: State<'_, AppState>,
    partition_id: String,
    old_pin: String,
    new_pin: String,
) -> Cmd<PinChanged> {
    let (old, new) = (p11::pin(old_pin), p11::pin(new_pin));
    state
        .console()?
        .admin()
        .change_pin(&partition_id, old, new)
        .await
}

/// The SO sets or resets the user PIN (`C_InitPIN`).
#[ipc_macros::command]
pub async fn set_user_pin(
    state: State<'_, AppState>,
    partition_id: String,
    new_pin: String,
) -> Cmd<()> {
    let new = p11::pin(new_pin);
    state
        .console()?
        .admin()
        .set_user_pin(&partition_id, new)
        .await
}

/// The Crypto Officer sets a Luna role's PIN (`CA_InitRolePIN`).
#[ipc_macros::command]
pub async fn set_role_pin(
    state: State<'_, AppState>,
    partition_id: String,
    role: UserKind,
    new_pin: String,
) -> Cmd<()> {
    let new = p11::pin(new_pin);
    state
        .console()?
        .admin()
        .set_role_pin(&partition_id, role, new)
        .await
}

/// What the token holds, for the Initialize dialog.
#[ipc_macros::command]
pub async fn token_contents(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<TokenContents> {
    state.console()?.admin().token_contents(&partition_id).await
}

/// Initialize the token (`C_InitToken`): the label typed as confirmation, and for the
/// partition holding the audit trail's key, the second confirmation.
#[ipc_macros::command]
pub async fn init_token(
    state: State<'_, AppState>,
    partition_id: String,
    so_pin: String,
    request: InitTokenRequest,
) -> Cmd<TokenInitialized> {
    let so_pin = p11::pin(so_pin);
    state
        .console()?
        .admin()
        .init_token(&partition_id, so_pin, request)
        .await
}
