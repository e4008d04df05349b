//! The desktop shell: Tauri builder, thin `#[tauri::command]` adapters over the `console`
//! services, events. No business logic lives here.

#[tauri::command]
fn app_info() -> String {
    format!("HSM Console {}", env!("CARGO_PKG_VERSION"))
}

pub fn run() {
    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![app_info])
        .run(tauri::generate_context!())
        .expect("error while running the HSM Console");
}
