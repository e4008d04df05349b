//! Certificates, public keys and data objects: import from a file the officer picked,
//! certificate details with the chain, export through the save dialog; editing attributes.

use tauri::State;

use console::attributes::{AttributeChanges, AttributesChanged, EditableAttributes};
use console::backup::{OaepHash, Unwrapped, WrapFile};
use console::objects::{CertificateDetails, ImportRequest, ImportResult, ObjectFormat};
use console::uris::{ObjectUri, ToolVerdict};

use super::{dialogs, Cmd};
use crate::state::AppState;

/// Import a certificate (PEM, DER, a chain leaf first, `.p7b`), a public key, or a file as
/// a data object (`C_CreateObject`); a certificate of a key on the token gets its ID.
#[ipc_macros::command]
pub async fn import_objects(
    state: State<'_, AppState>,
    partition_id: String,
    request: ImportRequest,
) -> Cmd<ImportResult> {
    state
        .console()?
        .admin()
        .import_objects(&partition_id, request)
        .await
}

/// A certificate on the token: subject, issuer, validity, key usages, fingerprints, chain.
#[ipc_macros::command]
pub async fn certificate_details(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
) -> Cmd<CertificateDetails> {
    state
        .console()?
        .admin()
        .certificate_details(&partition_id, handle)
        .await
}

/// Export a certificate, public key or data object where the officer chooses (never over an
/// existing file); `null` when the dialog is cancelled.
#[ipc_macros::command]
pub async fn save_object(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    format: ObjectFormat,
    file_name: String,
) -> Cmd<Option<String>> {
    let c = state.console()?;
    let ext: &[&str] = match format {
        ObjectFormat::Pem => &["pem", "crt"],
        ObjectFormat::Der => &["der", "cer", "bin"],
    };
    let Some(path) = dialogs::save("Export object", &file_name, ("Object", ext)).await else {
        return Ok(None);
    };
    c.admin()
        .save_object(&partition_id, handle, format, &path)
        .await?;
    Ok(Some(path.display().to_string()))
}

/// What the attribute editor may offer for an object (by `CKA_MODIFIABLE` and PKCS#11's
/// rules), and the objects that move with a new ID.
#[ipc_macros::command]
pub async fn editable_attributes(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
) -> Cmd<EditableAttributes> {
    state
        .console()?
        .admin()
        .editable_attributes(&partition_id, handle)
        .await
}

/// Change label, ID, dates or flags (`C_SetAttributeValue`); a new ID moves the pair's other
/// half and its certificates along.
#[ipc_macros::command]
pub async fn set_attributes(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    changes: AttributeChanges,
) -> Cmd<AttributesChanged> {
    state
        .console()?
        .admin()
        .set_attributes(&partition_id, handle, changes)
        .await
}

/// The object's PKCS#11 URI (RFC 7512), its token's and module's, and for a private key the
/// command lines of other tools that use it.
#[ipc_macros::command]
pub async fn object_uri(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
) -> Cmd<ObjectUri> {
    state
        .console()?
        .signing()
        .object_uri(&partition_id, handle)
        .await
}

/// Test a key's tool line: run it as printed against a throwaway file, with the logged-in
/// session's PIN handed over in a private file (never shown), then the tool's own check.
/// Audited before it runs.
#[ipc_macros::command]
pub async fn try_tool_line(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    tool: String,
) -> Cmd<ToolVerdict> {
    state
        .console()?
        .signing()
        .try_tool_line(&partition_id, handle, &tool)
        .await
}

/// An AES or generic secret key's check value (first 3 bytes of its CKA_CHECK_VALUE).
#[ipc_macros::command]
pub async fn key_check_value(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
) -> Cmd<String> {
    state
        .console()?
        .admin()
        .key_check_value(&partition_id, handle)
        .await
}

/// Wrap an extractable key under another key on the token into a file the officer chooses
/// (never over an existing one); `null` when the dialog is cancelled. `anyWrappingKey`: the
/// officer confirmed wrapping a key without CKA_WRAP_WITH_TRUSTED.
#[ipc_macros::command]
pub async fn wrap_key(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    wrapping_handle: u64,
    file_name: String,
    oaep_hash: Option<OaepHash>,
    any_wrapping_key: bool,
) -> Cmd<Option<WrapFile>> {
    let c = state.console()?;
    let Some(path) = dialogs::save(
        "Save the wrapped key",
        &file_name,
        ("Wrapped key", &["json"]),
    )
    .await
    else {
        return Ok(None);
    };
    c.admin()
        .wrap_key(
            &partition_id,
            handle,
            wrapping_handle,
            &path,
            oaep_hash,
            any_wrapping_key,
        )
        .await
        .map(Some)
}

/// Unwrap a wrap file with the matching key, restoring its attributes.
#[ipc_macros::command]
pub async fn unwrap_key(
    state: State<'_, AppState>,
    partition_id: String,
    path: String,
    unwrapping_handle: u64,
    label: Option<String>,
) -> Cmd<Unwrapped> {
    state
        .console()?
        .admin()
        .unwrap_key(
            &partition_id,
            std::path::Path::new(&path),
            unwrapping_handle,
            label,
        )
        .await
}
