/// The IPC commands the UI may call; each gets an `allow-<name>` permission, gathered in
/// the `allow-console-commands` set (permissions/console.toml).
const COMMANDS: &[&str] = &["app_info"];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build step");
}
