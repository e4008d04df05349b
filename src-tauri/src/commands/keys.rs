//! Keys and other objects: listing, details, generation, deletion, public keys,
//! certificates.

use std::time::Instant;

use tauri::ipc::Channel;
use tauri::State;

use console::keys::DestroyResult;
use console::sign::{
    CertificateView, OpenPgpCertificate, OpenPgpKeyView, SuccessionMade, SuccessionRequest,
};
use console::views::{
    ExportedPublicKey, GenerateRequest, GeneratedKey, JobEvent, KeyDetails, KeySpecInfo,
};
use hsm::keys::ObjectSummary;
use hsm::pubkey::PublicKeyFormat;

use super::{dialogs, Cmd};
use crate::state::AppState;

#[ipc_macros::command]
pub async fn list_keys(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Vec<ObjectSummary>> {
    state.console()?.list_keys(&partition_id).await
}

/// Every attribute of one object, decoded.
#[ipc_macros::command]
pub async fn key_details(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
) -> Cmd<KeyDetails> {
    state
        .console()?
        .admin()
        .key_details(&partition_id, handle)
        .await
}

/// What a key specification means: its name, a suggested label, a time warning.
#[ipc_macros::command]
pub fn describe_key_spec(spec: hsm::algo::KeySpec, purpose: String) -> Cmd<KeySpecInfo> {
    KeySpecInfo::describe(&spec, &purpose)
}

/// Key generation runs off the UI thread; the window gets, twice a second, the elapsed time
/// and — where the module reports it (lunasim's HSS trees) — how much is built.
#[ipc_macros::command]
pub async fn generate_key(
    state: State<'_, AppState>,
    partition_id: String,
    request: GenerateRequest,
    on_event: Channel<JobEvent>,
) -> Cmd<GeneratedKey> {
    let c = state.console()?;
    let started = Instant::now();
    let (progress, pid, label) = (c.clone(), partition_id.clone(), request.label.clone());
    let ticker = tauri::async_runtime::spawn(async move {
        let mut iv = tokio::time::interval(std::time::Duration::from_millis(500));
        loop {
            iv.tick().await;
            if let Some((done, total)) = progress.admin().keygen_progress(&pid, &label).await {
                let (done, total) = (done as i64, total as i64);
                if on_event.send(JobEvent::Progress { done, total }).is_err() {
                    break;
                }
            }
            let ms = started.elapsed().as_millis() as u64;
            if on_event.send(JobEvent::Elapsed { ms }).is_err() {
                break;
            }
        }
    });
    let r = c.admin().generate_key(&partition_id, request).await;
    ticker.abort();
    r
}

/// The words the officer types to confirm deleting these objects.
#[ipc_macros::command]
pub async fn deletion_phrase(
    state: State<'_, AppState>,
    partition_id: String,
    handles: Vec<u64>,
) -> Cmd<String> {
    let c = state.console()?;
    c.admin().deletion_phrase(&partition_id, &handles).await
}

#[ipc_macros::command]
pub async fn destroy_keys(
    state: State<'_, AppState>,
    partition_id: String,
    handles: Vec<u64>,
    confirmation: String,
) -> Cmd<DestroyResult> {
    let c = state.console()?;
    c.admin()
        .destroy_keys(&partition_id, &handles, &confirmation)
        .await
}

#[ipc_macros::command]
pub async fn export_public_key(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    format: PublicKeyFormat,
) -> Cmd<ExportedPublicKey> {
    let c = state.console()?;
    c.admin()
        .export_public_key(&partition_id, handle, format)
        .await
}

/// Ask where, then write; `None` when the officer cancels the dialog.
#[ipc_macros::command]
pub async fn save_public_key(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    format: PublicKeyFormat,
    file_name: String,
) -> Cmd<Option<String>> {
    let c = state.console()?;
    let ext: &[&str] = match format {
        PublicKeyFormat::Pem => &["pem"],
        PublicKeyFormat::Der => &["der"],
        PublicKeyFormat::Raw => &["raw", "bin"],
    };
    let Some(path) = dialogs::save("Save public key", &file_name, ("Public key", ext)).await else {
        return Ok(None);
    };
    c.admin()
        .save_public_key(&partition_id, handle, format, &path)
        .await?;
    Ok(Some(path.display().to_string()))
}

/// A self-signed certificate for a key, kept on the token beside it.
#[ipc_macros::command]
pub async fn issue_certificate(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    subject: String,
    days: u32,
) -> Cmd<CertificateView> {
    let c = state.console()?;
    c.signing()
        .issue_certificate(&partition_id, handle, &subject, days, true)
        .await
}

/// A PKCS#10 certificate request signed by the key (PEM).
#[ipc_macros::command]
pub async fn certificate_request(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    subject: String,
) -> Cmd<String> {
    let c = state.console()?;
    c.signing()
        .certificate_request(&partition_id, handle, &subject)
        .await
}

/// A signing key's OpenPGP algorithm and, once its creation time is fixed, its fingerprint.
#[ipc_macros::command]
pub async fn openpgp_key(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
) -> Cmd<OpenPgpKeyView> {
    state
        .console()?
        .signing()
        .openpgp_key(&partition_id, handle)
        .await
}

/// Ask where, then write the key's ASCII-armored OpenPGP certificate with this user ID;
/// `None` when the officer cancels the dialog. The first one fixes the key's creation time
/// on the token.
#[ipc_macros::command]
pub async fn save_openpgp_certificate(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    user_id: String,
    file_name: String,
) -> Cmd<Option<OpenPgpCertificate>> {
    let c = state.console()?;
    console::sign::check_openpgp_user_id(&user_id)?;
    let Some(path) = dialogs::save(
        "Save OpenPGP certificate",
        &file_name,
        ("OpenPGP certificate", &["asc"]),
    )
    .await
    else {
        return Ok(None);
    };
    c.signing()
        .save_openpgp_certificate(&partition_id, handle, &user_id, &path)
        .await
        .map(Some)
}

/// Ask where, then write a key succession statement from `old_key` to `new_key`, signed by
/// both (see `hsmc keys succession`); `None` when the officer cancels the dialog.
#[allow(clippy::too_many_arguments)]
#[ipc_macros::command]
pub async fn save_key_succession(
    state: State<'_, AppState>,
    partition_id: String,
    old_key: String,
    new_key: String,
    new_key_signs_from: Option<String>,
    transition_ends: Option<String>,
    confirm_hss: bool,
    file_name: String,
) -> Cmd<Option<SuccessionMade>> {
    let c = state.console()?;
    let Some(path) = dialogs::save(
        "Save key succession statement",
        &file_name,
        ("Key succession statement", &["json"]),
    )
    .await
    else {
        return Ok(None);
    };
    let req = SuccessionRequest {
        old_key,
        new_key,
        out: path.display().to_string(),
        new_key_signs_from,
        transition_ends,
        confirm_hss,
    };
    c.signing()
        .key_succession(&partition_id, req)
        .await
        .map(Some)
}

/// Ask where, then write an Ed25519 key's `minisign.pub`; `None` when cancelled.
#[ipc_macros::command]
pub async fn save_minisign_public_key(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
) -> Cmd<Option<String>> {
    let c = state.console()?;
    let k = c
        .signing()
        .minisign_public_key(&partition_id, handle)
        .await?;
    let Some(path) = dialogs::save(
        "Save minisign public key",
        "minisign.pub",
        ("minisign public key", &["pub"]),
    )
    .await
    else {
        return Ok(None);
    };
    outfile::write_replace(&path, k.text.as_bytes()).map_err(console::ApiError::from)?;
    Ok(Some(path.display().to_string()))
}
