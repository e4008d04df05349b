//! The app itself: its status, settings, running jobs, and saving what the window produced.

use serde::Deserialize;
use tauri::State;
use ts_rs::TS;

use console::settings::Settings;
use console::views::AppStatus;
use console::ApiError;

use super::{dialogs, Cmd};
use crate::state::AppState;
use console::text;

/// The window's first request: whether the console started, and if not, why.
#[ipc_macros::command]
pub fn app_info(state: State<'_, AppState>) -> AppStatus {
    // The UI has mounted and the window is up (scripts/measure-startup.sh).
    tracing::info!(target: "hsm_console::startup", "window ready");
    AppStatus {
        info: state.console.as_ref().map(|c| c.app_info()),
        startup_error: state.startup_error.clone(),
    }
}

#[ipc_macros::command]
pub fn get_settings(state: State<'_, AppState>) -> Cmd<Settings> {
    Ok(state.console()?.settings())
}

/// Validate, store and audit new settings.
#[ipc_macros::command]
pub async fn update_settings(state: State<'_, AppState>, settings: Settings) -> Cmd<Settings> {
    state.console()?.update_settings(settings).await
}

/// Stop a running job (verification, signing batch, probe); false if none has that ID.
#[ipc_macros::command]
pub fn cancel_job(state: State<'_, AppState>, job_id: String) -> Cmd<bool> {
    if job_id.is_empty() {
        return Err(ApiError::invalid(text!("errors.no_job_id", "no job ID")));
    }
    Ok(state.cancel(&job_id))
}

/// What the window can export: a chart, numbers, a key.
#[derive(Debug, Clone, Copy, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ExportKind {
    Svg,
    Png,
    Csv,
    Json,
    Pem,
}

impl ExportKind {
    fn filter(self) -> (&'static str, &'static [&'static str]) {
        match self {
            ExportKind::Svg => ("SVG image", &["svg"]),
            ExportKind::Png => ("PNG image", &["png"]),
            ExportKind::Csv => ("CSV", &["csv"]),
            ExportKind::Json => ("JSON", &["json"]),
            ExportKind::Pem => ("PEM", &["pem"]),
        }
    }
}

/// An export's bytes: text as it is, or binary (a PNG) as base64.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ExportContent {
    Text(String),
    Base64(String),
}

/// Exports are small; a page sending more is refused before a dialog opens.
const MAX_EXPORT: usize = 32 << 20;

/// Save an export the window produced (a chart as SVG or PNG, numbers as CSV or JSON)
/// where the officer chooses; `None` when the dialog is cancelled.
#[ipc_macros::command]
pub async fn save_export(
    file_name: String,
    kind: ExportKind,
    content: ExportContent,
) -> Cmd<Option<String>> {
    let bytes = match content {
        ExportContent::Text(t) => t.into_bytes(),
        ExportContent::Base64(b) => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|e| {
                    ApiError::invalid(text!(
                        "errors.not_base64",
                        "not base64: {{error}}",
                        error = e
                    ))
                })?
        }
    };
    if bytes.len() > MAX_EXPORT {
        return Err(ApiError::invalid(text!(
            "errors.exports_limited_mib",
            "exports are limited to 32 MiB"
        )));
    }
    let Some(path) = dialogs::save("Export", &file_name, kind.filter()).await else {
        return Ok(None);
    };
    outfile::write_replace(&path, &bytes).map_err(ApiError::from)?;
    Ok(Some(path.display().to_string()))
}
