/// The IPC commands the UI may call; each gets an `allow-<name>` permission, gathered in
/// the `allow-console-commands` set (permissions/console.toml).
const COMMANDS: &[&str] = &[
    "app_info",
    "connections",
    "add_module",
    "pick_module_file",
    "remove_module",
    "partition",
    "mechanisms",
    "save_mechanisms_csv",
    "login",
    "logout",
    "list_keys",
    "key_details",
    "describe_key_spec",
    "generate_key",
    "deletion_phrase",
    "destroy_keys",
    "export_public_key",
    "save_public_key",
    "get_settings",
    "update_settings",
    "audit_status",
    "audit_records",
    "audit_verify",
    "audit_export",
    "audit_checkpoint",
    "cancel_job",
    "signing_keys",
    "inspect_files",
    "pick_files",
    "pick_folder",
    "sign_files",
    "verify_signature",
    "issue_certificate",
    "certificate_request",
    "hss_keys",
    "stats",
    "stats_history",
    "stats_chart",
    "save_export",
    "probe_catalog",
    "run_probe",
    "probe_history",
    "probe_report",
    "probe_chart",
    "probe_csv",
    "probe_live_chart",
    "probe_capacity",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build step");
}
