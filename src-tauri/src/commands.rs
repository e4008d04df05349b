//! IPC commands: each validates its input's shape, calls one `console` service, and returns
//! its result or the `ApiError`. File locations come from native dialogs opened here, never
//! from the page.

use std::path::PathBuf;
use std::time::Instant;

use tauri::ipc::Channel;
use tauri::State;

use audit::export::{ExportSummary, Range};
use audit::store::Query;
use console::audit_ops::{AuditStatusView, ExportFormat};
use console::keys::DestroyResult;
use console::partitions::ConnectionView;
use console::settings::Settings;
use console::sign::{CertificateView, SignProgress, SignReport, SignRequest, SigningKeyView};
use console::views::*;
use console::{ApiError, ApiResult, ErrorCode};
use hsm::keys::ObjectSummary;
use hsm::pubkey::PublicKeyFormat;

use crate::state::AppState;

type Cmd<T> = Result<T, ApiError>;

#[tauri::command]
pub fn app_info(state: State<'_, AppState>) -> AppStatus {
    // The UI's first request: the window is up and the UI has mounted (scripts/measure-startup.sh).
    tracing::info!(target: "hsm_console::startup", "window ready");
    AppStatus {
        info: state.console.as_ref().map(|c| c.app_info()),
        startup_error: state.startup_error.clone(),
    }
}

#[tauri::command]
pub async fn connections(state: State<'_, AppState>) -> Cmd<Vec<ConnectionView>> {
    Ok(state.console()?.connections().await)
}

#[tauri::command]
pub async fn add_module(state: State<'_, AppState>, path: String) -> Cmd<ModuleView> {
    state.console()?.add_module(&path).await
}

/// The native file dialog for choosing a module; `None` when the officer cancels.
#[tauri::command]
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

#[tauri::command]
pub async fn remove_module(state: State<'_, AppState>, module_id: String) -> Cmd<()> {
    state.console()?.remove_module(&module_id).await
}

#[tauri::command]
pub async fn partition(state: State<'_, AppState>, partition_id: String) -> Cmd<PartitionView> {
    state.console()?.partition(&partition_id).await
}

#[tauri::command]
pub async fn mechanisms(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Vec<MechanismView>> {
    state.console()?.mechanisms(&partition_id).await
}

async fn save_dialog(title: &str, file_name: &str, filter: (&str, &[&str])) -> Option<PathBuf> {
    rfd::AsyncFileDialog::new()
        .set_title(title)
        .set_file_name(file_name)
        .add_filter(filter.0, filter.1)
        .save_file()
        .await
        .map(|f| f.path().to_path_buf())
}

#[tauri::command]
pub async fn save_mechanisms_csv(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Option<String>> {
    let c = state.console()?;
    let list = c.mechanisms(&partition_id).await?;
    let Some(path) = save_dialog("Export mechanisms", "mechanisms.csv", ("CSV", &["csv"])).await
    else {
        return Ok(None);
    };
    console::keys::write_atomic(&path, mechanisms_csv(&list).as_bytes())?;
    Ok(Some(path.display().to_string()))
}

/// The PIN crosses IPC once, goes straight into zeroizing memory, and is never stored.
#[tauri::command]
pub async fn login(
    state: State<'_, AppState>,
    partition_id: String,
    user: UserKind,
    pin: String,
) -> Cmd<LoginResult> {
    let pin = p11::pin(pin);
    state.console()?.login(&partition_id, user, pin).await
}

#[tauri::command]
pub async fn logout(state: State<'_, AppState>, partition_id: String) -> Cmd<()> {
    state.console()?.logout(&partition_id).await
}

#[tauri::command]
pub async fn list_keys(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Vec<ObjectSummary>> {
    state.console()?.list_keys(&partition_id).await
}

#[tauri::command]
pub async fn key_details(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
) -> Cmd<KeyDetails> {
    state.console()?.key_details(&partition_id, handle).await
}

/// Key generation runs off the UI thread; the window gets the elapsed time twice a second.
#[tauri::command]
pub async fn generate_key(
    state: State<'_, AppState>,
    partition_id: String,
    request: GenerateRequest,
    on_event: Channel<JobEvent>,
) -> Cmd<GeneratedKey> {
    let c = state.console()?;
    let started = Instant::now();
    let ticker = tauri::async_runtime::spawn(async move {
        let mut iv = tokio::time::interval(std::time::Duration::from_millis(500));
        loop {
            iv.tick().await;
            if on_event
                .send(JobEvent::Elapsed {
                    ms: started.elapsed().as_millis() as u64,
                })
                .is_err()
            {
                break;
            }
        }
    });
    let r = c.generate_key(&partition_id, request).await;
    ticker.abort();
    r
}

#[tauri::command]
pub fn describe_key_spec(spec: hsm::algo::KeySpec, purpose: String) -> Cmd<KeySpecInfo> {
    KeySpecInfo::describe(&spec, &purpose)
}

#[tauri::command]
pub async fn deletion_phrase(
    state: State<'_, AppState>,
    partition_id: String,
    handles: Vec<u64>,
) -> Cmd<String> {
    state
        .console()?
        .deletion_phrase(&partition_id, &handles)
        .await
}

#[tauri::command]
pub async fn destroy_keys(
    state: State<'_, AppState>,
    partition_id: String,
    handles: Vec<u64>,
    confirmation: String,
) -> Cmd<DestroyResult> {
    state
        .console()?
        .destroy_keys(&partition_id, &handles, &confirmation)
        .await
}

#[tauri::command]
pub async fn export_public_key(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    format: PublicKeyFormat,
) -> Cmd<ExportedPublicKey> {
    state
        .console()?
        .export_public_key(&partition_id, handle, format)
        .await
}

/// Ask where, then write; `None` when the officer cancels the dialog.
#[tauri::command]
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
    let Some(path) = save_dialog("Save public key", &file_name, ("Public key", ext)).await else {
        return Ok(None);
    };
    c.save_public_key(&partition_id, handle, format, &path)
        .await?;
    Ok(Some(path.display().to_string()))
}

#[tauri::command]
pub fn get_settings(state: State<'_, AppState>) -> Cmd<Settings> {
    Ok(state.console()?.settings())
}

#[tauri::command]
pub async fn update_settings(state: State<'_, AppState>, settings: Settings) -> Cmd<Settings> {
    state.console()?.update_settings(settings).await
}

#[tauri::command]
pub async fn audit_status(state: State<'_, AppState>) -> Cmd<AuditStatusView> {
    state.console()?.audit_status().await
}

#[tauri::command]
pub async fn audit_records(state: State<'_, AppState>, query: Query) -> Cmd<Vec<RecordView>> {
    state.console()?.audit_records(query).await
}

/// Verify the whole trail with progress; `cancel_job(job_id)` stops it.
#[tauri::command]
pub async fn audit_verify(
    state: State<'_, AppState>,
    job_id: String,
    on_event: Channel<JobEvent>,
) -> Cmd<audit::Verdict> {
    let c = state.console()?;
    let cancel = state.job(&job_id);
    let progress = move |done: i64, total: i64| {
        let _ = on_event.send(JobEvent::Progress { done, total });
    };
    let r = c.audit_verify(&progress, &cancel).await;
    state.finish_job(&job_id);
    r
}

#[tauri::command]
pub async fn audit_export(
    state: State<'_, AppState>,
    format: ExportFormat,
    range: Range,
) -> Cmd<Option<ExportSummary>> {
    let c = state.console()?;
    let (name, filter): (&str, (&str, &[&str])) = match format {
        ExportFormat::Jsonl => ("audit-trail.jsonl", ("JSON Lines (verifiable)", &["jsonl"])),
        ExportFormat::Csv => ("audit-trail.csv", ("CSV", &["csv"])),
    };
    let Some(path) = save_dialog("Export the audit trail", name, filter).await else {
        return Ok(None);
    };
    c.audit_export(format, range, &path).await.map(Some)
}

#[tauri::command]
pub async fn audit_checkpoint(state: State<'_, AppState>) -> Cmd<audit::Checkpoint> {
    state.console()?.audit_checkpoint().await
}

#[tauri::command]
pub fn cancel_job(state: State<'_, AppState>, job_id: String) -> ApiResult<bool> {
    if job_id.is_empty() {
        return Err(ApiError::new(ErrorCode::InvalidInput, "no job ID"));
    }
    Ok(state.cancel(&job_id))
}

#[tauri::command]
pub async fn signing_keys(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Vec<SigningKeyView>> {
    state.console()?.signing_keys(&partition_id).await
}

/// What the drop list shows at once: name, size, or why a path cannot be signed.
#[tauri::command]
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
            problem: r.err().map(|e| e.to_string()),
        })
        .collect()
}

#[tauri::command]
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

#[tauri::command]
pub async fn pick_folder(title: String) -> Cmd<Option<String>> {
    Ok(rfd::AsyncFileDialog::new()
        .set_title(title)
        .pick_folder()
        .await
        .map(|f| f.path().display().to_string()))
}

/// Sign a batch with progress per file; `cancel_job(job_id)` stops it between files.
#[tauri::command]
pub async fn sign_files(
    state: State<'_, AppState>,
    partition_id: String,
    job_id: String,
    request: SignRequest,
    on_event: Channel<SignProgress>,
) -> Cmd<SignReport> {
    let c = state.console()?;
    let cancel = state.job(&job_id);
    let progress = std::sync::Arc::new(move |p: SignProgress| {
        let _ = on_event.send(p);
    });
    let r = c.sign_files(&partition_id, request, progress, cancel).await;
    state.finish_job(&job_id);
    r
}

#[tauri::command]
pub async fn verify_signature(
    state: State<'_, AppState>,
    file: String,
    signature: String,
    public_key: Option<String>,
    context: Option<String>,
) -> Cmd<signing::verify::VerifyReport> {
    state
        .console()?
        .verify_signature(&file, &signature, public_key.as_deref(), context.as_deref())
        .await
}

#[tauri::command]
pub async fn issue_certificate(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    subject: String,
    days: u32,
) -> Cmd<CertificateView> {
    state
        .console()?
        .issue_certificate(&partition_id, handle, &subject, days, true)
        .await
}

#[tauri::command]
pub async fn certificate_request(
    state: State<'_, AppState>,
    partition_id: String,
    handle: u64,
    subject: String,
) -> Cmd<String> {
    state
        .console()?
        .certificate_request(&partition_id, handle, &subject)
        .await
}

#[tauri::command]
pub async fn hss_keys(state: State<'_, AppState>) -> Cmd<Vec<console::health::HssKeyView>> {
    state.console()?.hss_keys().await
}

#[tauri::command]
pub async fn stats(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<console::health::StatsSnapshot> {
    state.console()?.stats(&partition_id).await
}

#[tauri::command]
pub fn stats_history(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Vec<console::health::StatsPoint>> {
    Ok(state.console()?.stats_history(&partition_id))
}

#[tauri::command]
pub fn stats_chart(state: State<'_, AppState>, partition_id: String, which: String) -> Cmd<String> {
    state.console()?.stats_chart(&partition_id, &which)
}

/// Save an export the window produced (a chart as SVG or PNG, numbers as CSV or JSON) where
/// the officer chooses; `None` when the dialog is cancelled.
#[tauri::command]
pub async fn save_export(
    file_name: String,
    kind: String,
    text: Option<String>,
    base64: Option<String>,
) -> Cmd<Option<String>> {
    let (label, ext): (&str, &[&str]) = match kind.as_str() {
        "svg" => ("SVG image", &["svg"]),
        "png" => ("PNG image", &["png"]),
        "csv" => ("CSV", &["csv"]),
        "json" => ("JSON", &["json"]),
        "pem" => ("PEM", &["pem"]),
        other => return Err(ApiError::invalid(format!("unknown export kind '{other}'"))),
    };
    let bytes = match (text, base64) {
        (Some(t), None) => t.into_bytes(),
        (None, Some(b)) => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|e| ApiError::invalid(format!("not base64: {e}")))?
        }
        _ => return Err(ApiError::invalid("give either text or base64")),
    };
    if bytes.len() > 32 << 20 {
        return Err(ApiError::invalid("exports are limited to 32 MiB"));
    }
    let Some(path) = save_dialog("Export", &file_name, (label, ext)).await else {
        return Ok(None);
    };
    console::keys::write_atomic(&path, &bytes)?;
    Ok(Some(path.display().to_string()))
}

#[tauri::command]
pub async fn probe_catalog(
    state: State<'_, AppState>,
    partition_id: String,
) -> Cmd<Vec<console::probes::ProbeChoice>> {
    state.console()?.probe_catalog(&partition_id).await
}

/// Run a probe with live progress; `cancel_job(job_id)` stops it.
#[tauri::command]
pub async fn run_probe(
    state: State<'_, AppState>,
    partition_id: String,
    job_id: String,
    request: bench::probe::ProbeRequest,
    on_event: Channel<bench::probe::ProbeProgress>,
) -> Cmd<console::probes::ProbeReport> {
    let c = state.console()?;
    let cancel = state.job(&job_id);
    let progress = std::sync::Arc::new(move |p: bench::probe::ProbeProgress| {
        let _ = on_event.send(p);
    });
    let r = c.run_probe(&partition_id, request, progress, cancel).await;
    state.finish_job(&job_id);
    r
}

#[tauri::command]
pub async fn probe_history(state: State<'_, AppState>) -> Cmd<Vec<console::probes::ProbeSummary>> {
    state.console()?.probe_history().await
}

#[tauri::command]
pub async fn probe_report(
    state: State<'_, AppState>,
    id: String,
) -> Cmd<console::probes::ProbeReport> {
    state.console()?.probe_report(&id).await
}

#[tauri::command]
pub async fn probe_chart(state: State<'_, AppState>, id: String, which: String) -> Cmd<String> {
    let r = state.console()?.probe_report(&id).await?;
    console::probes::chart(&r, &which)
}

#[tauri::command]
pub async fn probe_csv(state: State<'_, AppState>, id: String) -> Cmd<String> {
    Ok(console::probes::report_csv(
        &state.console()?.probe_report(&id).await?,
    ))
}

/// The live latency chart from the points the window has received so far.
#[tauri::command]
pub fn probe_live_chart(title: String, points: Vec<bench::probe::SeriesPoint>) -> Cmd<String> {
    if points.len() > 100_000 {
        return Err(ApiError::invalid("too many points"));
    }
    Ok(console::probes::live_chart(&title, &points))
}

#[tauri::command]
pub fn probe_capacity(
    ceiling_per_s: f64,
    mean_latency_us: f64,
    target_per_s: f64,
) -> Cmd<bench::probe::CapacityPlan> {
    if !(ceiling_per_s > 0.0
        && mean_latency_us >= 0.0
        && target_per_s > 0.0
        && target_per_s.is_finite())
    {
        return Err(ApiError::invalid(
            "capacity needs a measured ceiling and a positive target",
        ));
    }
    Ok(bench::probe::capacity(
        ceiling_per_s,
        mean_latency_us,
        target_per_s,
    ))
}

#[tauri::command]
pub async fn audit_checkpoints(
    state: State<'_, AppState>,
) -> Cmd<Vec<console::audit_ops::CheckpointView>> {
    state.console()?.audit_checkpoints().await
}

#[tauri::command]
pub async fn audit_public_key(state: State<'_, AppState>) -> Cmd<String> {
    state.console()?.audit_public_key_pem().await
}

/// Start a new key epoch (the window asks for confirmation first).
#[tauri::command]
pub async fn audit_rotate_key(state: State<'_, AppState>) -> Cmd<i64> {
    state.console()?.audit_rotate_key().await
}
