//! Signing release artifacts and verifying signatures.

use std::path::PathBuf;

use tauri::ipc::Channel;
use tauri::State;

use console::sign::{SignProgress, SignReport, SignRequest, SigningKeyView};
use console::views::FileCheck;

use super::Cmd;
use crate::state::AppState;

/// Private keys on the partition that can sign in the formats the console writes.
#[ipc_macros::command]
pub async fn signing_keys(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Vec<SigningKeyView>> {
    state.console()?.signing().signing_keys(&partition_id).await
}

/// What the drop list shows at once: name, size, or why a path cannot be signed.
#[ipc_macros::command]
pub fn inspect_files(paths: Vec<String>) -> Vec<FileCheck> {
    let ps: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    signing::input::check_all(&ps)
        .into_iter()
        .zip(&ps)
        .map(|(r, p)| FileCheck {
            path: p.display().to_string(),
            name: p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            size: r.as_ref().ok().map(|f| f.size()),
            problem_text: match &r {
                Err(signing::SignError::Input { path, reason }) => {
                    Some(console::sign::input_problem(path, reason))
                }
                _ => None,
            },
            problem: r.err().map(|e| e.to_string()),
        })
        .collect()
}

/// The native dialog for choosing files (one or several).
#[ipc_macros::command]
pub async fn pick_files(title: String, multiple: bool) -> Cmd<Vec<String>> {
    let d = rfd::AsyncFileDialog::new().set_title(title);
    let picked = if multiple {
        d.pick_files().await.unwrap_or_default()
    } else {
        d.pick_file().await.into_iter().collect()
    };
    Ok(picked
        .iter()
        .map(|f| f.path().display().to_string())
        .collect())
}

/// The native dialog for choosing a folder; `None` when cancelled.
#[ipc_macros::command]
pub async fn pick_folder(title: String) -> Cmd<Option<String>> {
    Ok(rfd::AsyncFileDialog::new()
        .set_title(title)
        .pick_folder()
        .await
        .map(|f| f.path().display().to_string()))
}

/// Sign a batch with progress per file; `cancel_job(job_id)` stops it between files.
/// `context_pin`: the PIN for a key that wants one for each signature, given once with the
/// officer's consent for the batch (`SignRequest::context_login`).
#[ipc_macros::command]
pub async fn sign_files(
    state: State<'_, AppState>,
    partition_id: String,
    job_id: String,
    request: SignRequest,
    context_pin: Option<String>,
    on_event: Channel<SignProgress>,
) -> Cmd<SignReport> {
    let c = state.console()?;
    let cancel = state.job(&job_id);
    let progress = std::sync::Arc::new(move |p: SignProgress| {
        let _ = on_event.send(p);
    });
    // A key that wants the PIN for each signature: the PIN the officer gave with the
    // batch's consent, straight into zeroizing memory (never stored).
    let r = match context_pin {
        Some(pin) => {
            let pins = console::sign::ContextPins::given(p11::pin(pin));
            c.signing()
                .sign_files_with_pins(&partition_id, request, progress, cancel, pins)
                .await
        }
        None => {
            c.signing()
                .sign_files(&partition_id, request, progress, cancel)
                .await
        }
    };
    state.finish_job(&job_id);
    r
}

/// Verify a file against a signature offline, with the software verifiers only.
#[ipc_macros::command]
pub async fn verify_signature(
    state: State<'_, AppState>,
    file: String,
    signature: String,
    public_key: Option<String>,
    context: Option<String>,
) -> Cmd<signing::verify::VerifyReport> {
    let c = state.console()?;
    c.signing()
        .verify_signature(&file, &signature, public_key.as_deref(), context.as_deref())
        .await
}
