//! The build step: Tauri's code generation, told the IPC commands the UI may call. The list
//! is `src/commands/surface.rs`, the same one the app registers; each command gets an
//! `allow-<name>` permission, gathered in the `allow-console-commands` set of
//! permissions/console.toml (generated from the same list; a test checks it).

macro_rules! surface {
    ($($module:ident::{$($command:ident),* $(,)?}),* $(,)?) => {
        const COMMANDS: &[&str] = &[$($(stringify!($command)),*),*];
    };
}

include!("src/commands/surface.rs");

fn main() {
    println!("cargo:rerun-if-changed=src-tauri/src/commands/surface.rs");
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build step");
}
