// The IPC surface: every command the window may call, by domain. This one list becomes the
// handler Tauri dispatches to (commands/mod.rs), the build script's command list (build.rs)
// and, through each command's description, the permission set and the UI's TypeScript
// (src-tauri/src/ipc.rs). Add a command here and run `make bindings`.
surface! {
    overview::{overview},
    app::{app_info, get_settings, update_settings, cancel_job, save_export},
    connections::{connections, add_module, pick_module_file, remove_module, partition, mechanisms, save_mechanisms_csv, login, logout},
    credentials::{change_pin, set_user_pin, set_role_pin, token_contents, init_token},
    keys::{list_keys, key_details, describe_key_spec, generate_key, deletion_phrase, destroy_keys, export_public_key, save_public_key, issue_certificate, certificate_request, openpgp_key, save_openpgp_certificate, save_minisign_public_key, save_key_succession},
    objects::{import_objects, certificate_details, save_object, editable_attributes, set_attributes, object_uri, try_tool_line, key_check_value, wrap_key, unwrap_key},
    sign::{signing_keys, inspect_files, pick_files, pick_folder, sign_files, verify_signature},
    audit::{audit_status, audit_records, audit_verify, audit_export, audit_checkpoint, audit_checkpoints, audit_public_key, audit_rotate_key, audit_days},
    health::{hss_keys, stats, stats_history, stats_chart},
    ha::{ha_groups, ha_group, ha_drift, ha_warnings, usage_keys, set_usage_limit},
    pqc::{pqc_readiness, pqc_export_cbom},
    probes::{probe_catalog, run_probe, probe_history, probe_report, probe_chart, probe_csv, probe_live_chart, probe_capacity},
}
