//! The desktop shell: Tauri builder, thin `#[tauri::command]` adapters over the `console`
//! services, the event bridge. No business logic lives here.

mod commands;
mod ipc;
mod state;

use std::sync::Arc;

use tauri::{Emitter, Manager};

use console::{Console, ConsoleConfig};
use state::AppState;

/// Where the app keeps its settings and audit trail: `HSMC_DATA_DIR`, else the same folder
/// `hsmc` uses, so both see one trail and one set of remembered modules.
fn data_dir() -> std::path::PathBuf {
    std::env::var_os("HSMC_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(ConsoleConfig::default_data_dir)
}

/// The log of this run in `<data>/logs/hsm-console.log` (the previous run's is kept as
/// `hsm-console.1.log`), so an officer can attach it to a report; `None` if the folder
/// cannot be written, and the app logs to stderr only.
fn log_file(data: &std::path::Path) -> Option<std::fs::File> {
    let dir = data.join("logs");
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("hsm-console.log");
    let _ = std::fs::rename(&path, dir.join("hsm-console.1.log"));
    std::fs::File::create(path).ok()
}

fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("HSMC_LOG").unwrap_or_else(|_| "info".into());
    let file = log_file(&data_dir()).map(|f| {
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(f))
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(tracing_subscriber::fmt::layer())
        .with(file)
        .init();
    // A panic anywhere (a background task, a command) goes to the log file too, which is
    // what an officer attaches to a report; stderr alone is often nowhere.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        tracing::error!(
            "panic in thread {}: {info}",
            thread.name().unwrap_or("unnamed")
        );
        default_hook(info);
    }));
}

pub fn run() {
    init_logging();
    tauri::Builder::default()
        .setup(|app| {
            let mut cfg = ConsoleConfig::new(data_dir());
            cfg.resource_dir = app.path().resource_dir().ok();
            cfg.settings_path = std::env::var_os("HSMC_CONFIG").map(Into::into);
            let opened = tauri::async_runtime::block_on(Console::open(cfg));
            let state = match opened {
                Ok(c) => {
                    bridge_events(app.handle().clone(), c.clone());
                    // HA groups are checked on the statistics interval while the app runs.
                    let watched = c.clone();
                    tauri::async_runtime::spawn(async move { watched.start_ha_watch() });
                    AppState::new(Some(c), None)
                }
                // The window still opens and says what is wrong (damaged settings, an
                // unreachable audit store) instead of the app vanishing.
                Err(e) => {
                    tracing::error!("console not started: {}", e.message);
                    AppState::new(None, Some(e))
                }
            };
            app.manage(state);
            Ok(())
        })
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::CloseRequested { .. } = event {
                if let Some(c) = window.state::<AppState>().console.clone() {
                    // The final checkpoint is written before the window goes.
                    tauri::async_runtime::block_on(c.close());
                }
            }
        })
        .invoke_handler(commands::handler())
        .run(tauri::generate_context!())
        .expect("error while running the HSM Console");
}

/// Forward the console's events to the window.
fn bridge_events(app: tauri::AppHandle, c: Arc<Console>) {
    let mut rx = c.subscribe();
    tauri::async_runtime::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(ev) => {
                    let _ = app.emit(ipc::CONSOLE_EVENT, ev);
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => break,
            }
        }
    });
}
