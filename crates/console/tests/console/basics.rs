//! The console's services end to end on real modules: the built-in lunasim partition
//! (lunasim over Kryoptic) and SoftHSM2. One test per process (nextest): modules are
//! process-global.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use console::views::{GenerateRequest, UserKind};
use console::{Console, ConsoleConfig, ErrorCode};
use hsm::algo::{Curve, KeySpec, MlDsaSet};
use hsm::pubkey::PublicKeyFormat;

use crate::common;

fn config(dir: &std::path::Path) -> ConsoleConfig {
    // The built-in partition configures itself inside the data dir unless this is set.
    std::env::remove_var("LUNASIM_CONF");
    let mut c = ConsoleConfig::new(dir);
    c.lunasim_path = Some(testkit::lunasim_module());
    c.kryoptic_path = Some(testkit::kryoptic_module());
    c
}

async fn builtin_partition(c: &Console) -> String {
    let conns = c.connections().await;
    let m = conns
        .iter()
        .find(|m| m.module.builtin)
        .expect("the built-in module is loaded");
    assert!(m.error.is_none(), "{:?}", m.error);
    m.slots
        .iter()
        .find_map(|s| s.partition_id.clone())
        .expect("the built-in token is initialized")
}

async fn actions(c: &Console) -> Vec<(String, String)> {
    let mut q = audit::store::Query {
        limit: 1000,
        ascending: true,
        ..Default::default()
    };
    q.ascending = true;
    c.trail()
        .audit_records(q)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.event.action, r.event.status))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtin_partition_key_lifecycle_is_audited_and_verifiable() {
    let dir = tempfile::tempdir().unwrap();
    let c = Console::open(config(dir.path())).await.unwrap();
    let pid = builtin_partition_offers_the_luna_extras(&c).await;
    wrong_and_oversized_pins_are_refused_then_the_user_logs_in(&c, &pid).await;
    let (g, listed) = generate_ml_dsa_65_and_export_what_openssl_reads(&c, &pid, dir.path()).await;
    deleting_needs_the_label_typed(&c, &pid, &g, listed).await;
    trail_holds_the_lifecycle_in_order_and_verifies(&c, &g).await;
    c.logout(&pid).await.unwrap();
    c.close().await;
}

/// The built-in partition is there, labelled as ours, with lunasim's Luna firmware and
/// named policies: its id.
async fn builtin_partition_offers_the_luna_extras(c: &Console) -> String {
    let info = c.app_info();
    assert!(info.builtin_available, "{:?}", info.builtin_note);
    let pid = builtin_partition(c).await;
    let view = c.partition(&pid).await.unwrap();
    assert!(view.builtin);
    assert_eq!(view.token.label, console::builtin::TOKEN_LABEL);
    let luna = view.luna.expect("lunasim offers the Luna extras");
    assert_eq!(luna.firmware.as_deref(), Some("7.9.1"));
    assert!(
        luna.partition_policies
            .unwrap()
            .iter()
            .any(|p| p.name.is_some()),
        "policies carry their names"
    );
    pid
}

async fn wrong_and_oversized_pins_are_refused_then_the_user_logs_in(c: &Console, pid: &str) {
    // A wrong PIN: refused once, says so, and is recorded (spooled until the key is open).
    let e = c
        .login(pid, UserKind::User, p11::pin("not-the-pin"))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PinIncorrect, "{e:?}");
    assert!(
        e.details.is_some(),
        "the message says what the token reports about attempts"
    );
    assert_eq!(e.pkcs11.as_ref().unwrap().function, "C_Login");
    // A PIN longer than any token takes (a paste gone wrong, a hostile page) never reaches
    // C_Login, so it cannot use up an attempt.
    let e = c
        .login(pid, UserKind::User, p11::pin("7".repeat(1 << 20)))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PinInvalid, "{e:?}");
    assert!(e.pkcs11.is_none(), "sent to the token: {e:?}");
    assert!(e.message.len() < 300, "the message does not echo the PIN");

    let r = c
        .login(pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
        .await
        .unwrap();
    assert!(
        matches!(r.audit, console::views::AuditKeyView::Unlocked { .. }),
        "{:?}",
        r.audit
    );
}

/// An ML-DSA-65 pair, listed and detailed as one; its exported PEM is the SPKI an outside
/// parser reads as ML-DSA-65, same fingerprint. The pair, and how many keys were listed.
async fn generate_ml_dsa_65_and_export_what_openssl_reads(
    c: &Console,
    pid: &str,
    dir: &std::path::Path,
) -> (console::views::GeneratedKey, usize) {
    let g = c
        .admin()
        .generate_key(
            pid,
            GenerateRequest {
                spec: KeySpec::MlDsa { set: MlDsaSet::P65 },
                label: "release_ml_dsa_65_2026_11".into(),
                token: true,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(g.expected_public_key_len, Some(1952));
    let keys = c.list_keys(pid).await.unwrap();
    let private = keys
        .iter()
        .find(|k| k.handle == g.private_handle)
        .expect("the new key is listed");
    assert_eq!(private.algorithm, "ML-DSA-65");
    assert!(private.capabilities.sign);
    let details = c.admin().key_details(pid, g.private_handle).await.unwrap();
    assert!(
        details
            .attributes
            .iter()
            .any(|a| a.attribute == "CKA_PARAMETER_SET" && a.value.as_deref() == Some("ML-DSA-65")),
        "{:?}",
        details.attributes
    );
    assert!(details
        .attributes
        .iter()
        .any(|a| a.attribute == "CKA_SENSITIVE" && a.value.as_deref() == Some("true")));
    let pk = details.public_key.expect("the pair's public key is found");

    // The exported PEM is the SPKI an outside parser reads as ML-DSA-65, same fingerprint.
    let exp = c
        .admin()
        .export_public_key(pid, g.private_handle, PublicKeyFormat::Pem)
        .await
        .unwrap();
    assert_eq!(exp.fingerprint, pk.fingerprint);
    let pem_path = dir.join(&exp.file_name);
    std::fs::write(&pem_path, exp.text.as_ref().unwrap()).unwrap();
    let out = std::process::Command::new("openssl")
        .args(["pkey", "-pubin", "-in"])
        .arg(&pem_path)
        .arg("-text")
        .arg("-noout")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // Debian 12's OpenSSL 3.0 does not know ML-DSA; it still parses the SPKI structure.
    let asn1 = std::process::Command::new("openssl")
        .args(["asn1parse", "-in"])
        .arg(&pem_path)
        .output()
        .unwrap();
    let asn1 = String::from_utf8_lossy(&asn1.stdout);
    assert!(
        asn1.contains("2.16.840.1.101.3.4.3.18") || text.contains("ML-DSA-65"),
        "{asn1}"
    );
    (g, keys.len())
}

/// Deleting needs the label typed; a wrong confirmation deletes nothing (`listed` keys
/// stay).
async fn deleting_needs_the_label_typed(
    c: &Console,
    pid: &str,
    g: &console::views::GeneratedKey,
    listed: usize,
) {
    let both = [g.private_handle, g.public_handle.unwrap()];
    let e = c.admin().destroy_keys(pid, &both, "yes").await.unwrap_err();
    assert!(
        e.message.contains("release_ml_dsa_65_2026_11"),
        "{}",
        e.message
    );
    assert_eq!(c.list_keys(pid).await.unwrap().len(), listed);
    let d = c
        .admin()
        .destroy_keys(pid, &both, "release_ml_dsa_65_2026_11")
        .await
        .unwrap();
    assert_eq!(d.destroyed.len(), 2);
    assert!(c
        .list_keys(pid)
        .await
        .unwrap()
        .iter()
        .all(|k| k.label != "release_ml_dsa_65_2026_11"));
}

/// Every step is in the trail, found by the key's CKA_ID too; the failed login spooled
/// before the key was open comes before the good one; the trail verifies.
async fn trail_holds_the_lifecycle_in_order_and_verifies(
    c: &Console,
    g: &console::views::GeneratedKey,
) {
    let acts = actions(c).await;
    let names: Vec<&str> = acts.iter().map(|(a, _)| a.as_str()).collect();
    for want in [
        "login",
        "key.generate.request",
        "key.generate",
        "key.export_public",
        "key.destroy.request",
        "key.destroy",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    // "Audit records of this key" searches the trail for the key's CKA_ID: every
    // lifecycle record of the key carries it.
    let of_key: Vec<String> = c
        .trail()
        .audit_records(audit::store::Query {
            text: Some(g.id_hex.clone()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.event.action)
        .collect();
    for want in ["key.generate", "key.export_public", "key.destroy"] {
        assert!(
            of_key.iter().any(|a| a == want),
            "{want} not found by id: {of_key:?}"
        );
    }
    assert!(
        acts.iter().any(|(a, s)| a == "login" && s == "failure"),
        "the failed login is in the trail: {acts:?}"
    );
    let failed_at = acts
        .iter()
        .position(|(a, s)| a == "login" && s == "failure")
        .unwrap();
    let ok_at = acts
        .iter()
        .position(|(a, s)| a == "login" && s == "success")
        .unwrap();
    assert!(failed_at < ok_at, "spooled records are chained in order");

    let v = c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    assert!(v.is_intact(), "{v:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopened_console_unlocks_its_trail_at_login_and_refuses_privileged_work_before() {
    let dir = tempfile::tempdir().unwrap();
    {
        let c = Console::open(config(dir.path())).await.unwrap();
        let pid = builtin_partition(&c).await;
        c.login(&pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
            .await
            .unwrap();
        c.admin()
            .generate_key(
                &pid,
                GenerateRequest {
                    spec: KeySpec::Aes { bits: 256 },
                    label: "first".into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
            .unwrap();
        c.logout(&pid).await.unwrap();
        c.close().await;
    }
    let c = Console::open(config(dir.path())).await.unwrap();
    let st = c.trail().audit_status().await.unwrap();
    assert!(
        matches!(st.key, console::views::AuditKeyView::Locked { .. }),
        "{:?}",
        st.key
    );
    let pid = builtin_partition(&c).await;
    // Not logged in: refused before touching the token.
    let e = c
        .admin()
        .generate_key(
            &pid,
            GenerateRequest {
                spec: KeySpec::Aes { bits: 256 },
                label: "second".into(),
                token: true,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::NotLoggedIn);
    // Verification needs the key.
    let e = c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::AuditUnavailable);
    let r = c
        .login(&pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
        .await
        .unwrap();
    assert!(
        matches!(r.audit, console::views::AuditKeyView::Unlocked { .. }),
        "the same partition opens the existing key: {:?}",
        r.audit
    );
    c.admin()
        .generate_key(
            &pid,
            GenerateRequest {
                spec: KeySpec::Ec { curve: Curve::P256 },
                label: "second".into(),
                token: true,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    let v = c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    assert!(v.is_intact(), "{v:?}");
    let acts = actions(&c).await;
    assert_eq!(
        acts.iter().filter(|(a, _)| a == "key.generate").count(),
        2,
        "{acts:?}"
    );

    // Rotation starts a new epoch; the trail still verifies across it.
    let epoch = c.trail().audit_rotate_key().await.unwrap();
    assert_eq!(epoch, 1);
    c.admin()
        .generate_key(
            &pid,
            GenerateRequest {
                spec: KeySpec::Aes { bits: 128 },
                label: "third".into(),
                token: false,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    let v = c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    assert!(v.is_intact(), "{v:?}");

    // Export, verify the export offline, then tamper with a copy.
    let out = dir.path().join("trail.jsonl");
    let s = c
        .trail()
        .audit_export(
            console::trail::ExportFormat::Jsonl,
            Default::default(),
            &out,
        )
        .await
        .unwrap();
    assert!(s.records >= 6);
    let ev = c.trail().audit_verify_export(&out).await.unwrap();
    assert!(ev.verdict.is_intact() && ev.macs_checked, "{ev:?}");
    let text = std::fs::read_to_string(&out)
        .unwrap()
        .replacen("\"first\"", "\"forged\"", 1);
    let bad = dir.path().join("tampered.jsonl");
    std::fs::write(&bad, text).unwrap();
    let ev = c.trail().audit_verify_export(&bad).await.unwrap();
    assert!(!ev.verdict.is_intact(), "{ev:?}");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_module_paths_get_clear_messages_and_nothing_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.builtin = false;
    let c = Console::open(cfg).await.unwrap();
    let cases: Vec<(String, ErrorCode)> = vec![
        ("relative/libfoo.so".into(), ErrorCode::InvalidInput),
        (
            "/nonexistent/libpkcs11.so".into(),
            ErrorCode::ModuleLoadFailed,
        ),
        (dir.path().display().to_string(), ErrorCode::NotPkcs11),
        (
            testkit::repo_root()
                .join("Cargo.toml")
                .display()
                .to_string(),
            ErrorCode::ModuleLoadFailed,
        ),
    ];
    for (path, code) in cases {
        let e = c.add_module(&path).await.unwrap_err();
        assert_eq!(e.code, code, "{path}: {e:?}");
        assert!(e.suggestion.is_some(), "{path}: {e:?}");
    }
    // A FIFO must not block the console.
    let fifo = dir.path().join("fifo.so");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let e = c.add_module(&fifo.display().to_string()).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::NotPkcs11);
    // A real shared library that is not PKCS#11.
    let libz = [
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
        "/lib/x86_64-linux-gnu/libz.so.1",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .expect("libz");
    let e = c.add_module(libz).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::NotPkcs11, "{e:?}");
    // A library that is not PKCS#11 is refused from its symbol table, before it is loaded:
    // its constructor never runs. The same library with an entry point is loaded (and its
    // constructor leaves the mark), so the mark is a fair witness.
    for (name, entry_point) in [("libctor.so", false), ("libctor-p11.so", true)] {
        let marker = dir.path().join(format!("{name}.constructor-ran"));
        let src = dir.path().join(format!("{name}.c"));
        let mut code = format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void ran(void) {{ FILE *f = fopen(\"{}\", \"w\"); if (f) fclose(f); }}\nint not_pkcs11(void) {{ return 1; }}\n",
            marker.display()
        );
        if entry_point {
            code += "unsigned long C_GetFunctionList(void **list) { (void)list; return 5; }\n";
        }
        std::fs::write(&src, code).unwrap();
        let lib = dir.path().join(name);
        assert!(std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&lib)
            .arg(&src)
            .status()
            .unwrap()
            .success());
        let e = c.add_module(&lib.display().to_string()).await.unwrap_err();
        if entry_point {
            assert!(
                marker.exists(),
                "a PKCS#11-looking library is loaded: {e:?}"
            );
        } else {
            assert_eq!(e.code, ErrorCode::NotPkcs11, "{e:?}");
            assert!(
                !marker.exists(),
                "the constructor ran: the library was loaded"
            );
        }
    }
    assert!(
        c.settings().modules.is_empty(),
        "failed modules are not remembered"
    );
    assert!(c.list_modules().is_empty());
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_partition_cannot_act_while_the_audit_key_is_elsewhere() {
    let token = testkit::TestToken::new(testkit::Backend::SoftHsm);
    let dir = tempfile::tempdir().unwrap();
    // First the built-in partition creates the trail's key.
    {
        let c = Console::open(config(dir.path())).await.unwrap();
        let pid = builtin_partition(&c).await;
        c.login(&pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
            .await
            .unwrap();
        c.logout(&pid).await.unwrap();
        c.close().await;
    }
    let c = Console::open(config(dir.path())).await.unwrap();
    let m = c
        .add_module(&token.module_path.display().to_string())
        .await
        .unwrap();
    assert_eq!(c.settings().modules.len(), 1, "the module is remembered");
    let slots = c.slots(&m.id).await.unwrap();
    let pid = slots.iter().find_map(|s| s.partition_id.clone()).unwrap();
    let r = c
        .login(&pid, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    match &r.audit {
        // The built-in partition's trail keys live in its module's audit slot.
        console::views::AuditKeyView::Locked { holder } => {
            assert!(
                holder.contains(console::builtin::AUDIT_TOKEN_LABEL),
                "{holder}"
            )
        }
        other => panic!("the key is held by the built-in module: {other:?}"),
    }
    let before = c.list_keys(&pid).await.unwrap().len();
    let e = c
        .admin()
        .generate_key(
            &pid,
            GenerateRequest {
                spec: KeySpec::Ec { curve: Curve::P256 },
                label: "unaudited".into(),
                token: true,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::AuditUnavailable, "{e:?}");
    assert_eq!(
        c.list_keys(&pid).await.unwrap().len(),
        before,
        "fail closed: no key was made"
    );
    // Log in to the holder: now it works, on the SoftHSM partition too.
    let bid = builtin_partition(&c).await;
    c.login(&bid, UserKind::User, p11::pin(console::builtin::USER_PIN))
        .await
        .unwrap();
    c.admin()
        .generate_key(
            &pid,
            GenerateRequest {
                spec: KeySpec::Ec { curve: Curve::P256 },
                label: "audited".into(),
                token: true,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    let v = c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    assert!(v.is_intact(), "{v:?}");
    c.close().await;
    drop(token);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_hsm_is_reported_and_the_console_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let c = Console::open(config(dir.path())).await.unwrap();
    let pid = builtin_partition(&c).await;
    c.login(&pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
        .await
        .unwrap();
    let before = c.list_keys(&pid).await.unwrap().len();
    let p = c.partition_ref(&pid).await.unwrap();
    // Every call fails as if the token were pulled, until cleared.
    p.module
        .module
        .sim_control(r#"{"op":"fail","function":"*","rv":"CKR_TOKEN_NOT_PRESENT","count":null}"#)
        .unwrap();
    let e = c.list_keys(&pid).await.unwrap_err();
    assert!(
        matches!(
            e.code,
            ErrorCode::HsmDisconnected | ErrorCode::HsmUnavailable
        ),
        "{e:?}"
    );
    assert!(e.suggestion.is_some());
    p.module.module.sim_control(r#"{"op":"clear"}"#).unwrap();
    // The pool reconnects and logs in again by itself (breaker permitting).
    let mut ok = None;
    for _ in 0..40 {
        match c.list_keys(&pid).await {
            Ok(v) => {
                ok = Some(v);
                break;
            }
            Err(e)
                if e.code == ErrorCode::HsmUnavailable || e.code == ErrorCode::HsmDisconnected =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(250)).await
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(ok.expect("recovered").len(), before);
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_are_validated_remembered_and_audited() {
    let dir = tempfile::tempdir().unwrap();
    let c: Arc<Console> = Console::open(config(dir.path())).await.unwrap();
    let mut s = c.settings();
    s.hss_critical_percent = 50.0;
    assert_eq!(
        c.update_settings(s).await.unwrap_err().code,
        ErrorCode::InvalidInput
    );
    // An audit store that cannot be reached is refused before anything changes.
    let mut s = c.settings();
    s.audit.location = Some("postgres://officer:secret@127.0.0.1:1/audit".into());
    let e = c.update_settings(s).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::AuditUnavailable, "{e:?}");
    assert!(!e.message.contains("secret"), "{}", e.message);
    assert_eq!(c.settings().audit.location, None);
    let mut s = c.settings();
    s.stats_poll_seconds = 10;
    c.update_settings(s).await.unwrap();
    c.close().await;
    let c = Console::open(config(dir.path())).await.unwrap();
    assert_eq!(c.settings().stats_poll_seconds, 10);
    let pid = builtin_partition(&c).await;
    c.login(&pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
        .await
        .unwrap();
    assert!(actions(&c)
        .await
        .iter()
        .any(|(a, _)| a == "settings.update"));
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_view_checkpoints_public_key_last_and_scheduled_verification() {
    let dir = tempfile::tempdir().unwrap();
    let c = Console::open(config(dir.path())).await.unwrap();
    let pid = builtin_partition(&c).await;
    // Before the key is open nothing is verified on schedule.
    assert!(!c.trail().scheduled_verification().await);
    c.login(&pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
        .await
        .unwrap();
    let cp = c.trail().audit_checkpoint().await.unwrap();

    let cps = c.trail().audit_checkpoints().await.unwrap();
    let last = cps.last().expect("a checkpoint");
    assert_eq!(last.checkpoint_no, cp.checkpoint_no);
    assert!(cps.iter().all(|v| v.signature_valid), "{cps:?}");
    assert_eq!(last.key_is_hsm_key, Some(true));
    assert_eq!(last.algorithm, "ML-DSA-65");

    // The exported public key lets an outsider (Python, another lineage) check a
    // checkpoint without the console, and a changed checkpoint fails.
    let pem = c.trail().audit_public_key_pem().await.unwrap();
    assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"), "{pem}");
    let msg = audit::verify::checkpoint_message(&cp).unwrap();
    let sig = hex::decode(&cp.signature).unwrap();
    assert!(testkit::python_verify(
        "ml-dsa-65",
        pem.as_bytes(),
        &msg,
        &sig,
        b""
    ));
    let mut later = cp.clone();
    later.seq += 1;
    let forged = audit::verify::checkpoint_message(&later).unwrap();
    assert!(!testkit::python_verify(
        "ml-dsa-65",
        pem.as_bytes(),
        &forged,
        &sig,
        b""
    ));

    // Manual, then scheduled verification; the last one is shown with its trigger.
    assert!(c
        .trail()
        .audit_status()
        .await
        .unwrap()
        .last_verification
        .is_none());
    c.trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    let lv = c
        .trail()
        .audit_status()
        .await
        .unwrap()
        .last_verification
        .unwrap();
    assert!(lv.intact);
    assert_eq!(lv.trigger, console::trail::VerifyTrigger::Manual);
    assert!(
        !c.trail().scheduled_verification().await,
        "a verification a moment ago is not due again"
    );
    let mut s = c.settings();
    s.audit.auto_verify = console::settings::AutoVerify::Off;
    c.update_settings(s).await.unwrap();
    assert!(!c.trail().scheduled_verification().await);

    // A fresh console (nothing verified yet) with the default daily schedule runs one.
    c.close().await;
    let c = Console::open(config(dir.path())).await.unwrap();
    let mut s = c.settings();
    s.audit.auto_verify = console::settings::AutoVerify::Hourly;
    c.update_settings(s).await.unwrap();
    c.login(&pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
        .await
        .unwrap();
    assert!(c.trail().scheduled_verification().await);
    let lv = c
        .trail()
        .audit_status()
        .await
        .unwrap()
        .last_verification
        .unwrap();
    assert!(lv.intact, "{lv:?}");
    assert_eq!(lv.trigger, console::trail::VerifyTrigger::Scheduled);
    assert!(!c.trail().scheduled_verification().await);
    let verifies: Vec<_> = c
        .trail()
        .audit_records(audit::store::Query {
            action: Some("audit.verify".into()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        verifies
            .iter()
            .any(|r| r.event.metadata.contains("scheduled")),
        "{verifies:?}"
    );

    // Rotation starts a new epoch; the trail stays intact across it.
    let epoch = c.trail().audit_rotate_key().await.unwrap();
    assert_eq!(epoch, 1);
    let v = c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    assert!(v.is_intact(), "{v:?}");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_verification_that_cannot_run_backs_off() {
    let e = common::builtin().await;
    let c = &e.c;
    let mut s = c.settings();
    s.audit.auto_verify = console::settings::AutoVerify::Hourly;
    c.update_settings(s).await.unwrap();
    // The store stops answering verification queries (another SQLite client moves the
    // table away): the run fails — an error, not a broken trail.
    let db = e.dir.path().join("data").join("audit.db");
    testkit::pg::sqlite3(&db, "ALTER TABLE audit_log RENAME TO audit_log_away");
    assert!(c.trail().scheduled_verification().await, "due, so it ran");
    assert!(
        c.trail()
            .audit_status()
            .await
            .map_or(true, |s| s.last_verification.is_none()),
        "a run that could not finish is not a verdict"
    );
    // The next ticks do not hammer the store; they wait (1 minute, then 2, 4 …).
    assert!(
        !c.trail().scheduled_verification().await,
        "tried again at once"
    );
    assert!(
        !c.trail().scheduled_verification().await,
        "tried again at once"
    );
    // An officer can still verify by hand once the store is back.
    testkit::pg::sqlite3(&db, "ALTER TABLE audit_log_away RENAME TO audit_log");
    let v = c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    assert!(v.is_intact(), "{v:?}");
    c.close().await;
}

/// A tall HSS tree on lunasim reports how far it is while `C_GenerateKeyPair` runs: the
/// leaves built of all it builds, rising, for that label only; nothing once it is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hss_key_generation_reports_its_progress_on_lunasim() {
    use hsm::algo::{HssParams, LmotsType, LmsType};
    let e = common::builtin().await;
    let params = HssParams::new(vec![
        (LmsType::H15, LmotsType::W4),
        (LmsType::H5, LmotsType::W4),
    ])
    .unwrap();
    let total = params.keygen_leaves();
    let (c, pid) = (e.c.clone(), e.pid.clone());
    let job = tokio::spawn(async move {
        c.admin()
            .generate_key(
                &pid,
                GenerateRequest {
                    spec: KeySpec::Hss { params },
                    label: "fw_hss_progress".into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
    });
    let mut seen = Vec::new();
    while !job.is_finished() {
        if let Some(p) = e.c.admin().keygen_progress(&e.pid, "fw_hss_progress").await {
            seen.push(p);
        }
        assert_eq!(
            e.c.admin().keygen_progress(&e.pid, "another_key").await,
            None
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    job.await.unwrap().unwrap();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(seen.iter().all(|(_, t)| *t == total), "{seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0].0 <= w[1].0),
        "rising: {seen:?}"
    );
    assert!(seen.last().unwrap().0 > seen[0].0, "{seen:?}");
    assert_eq!(
        e.c.admin().keygen_progress(&e.pid, "fw_hss_progress").await,
        None
    );
}
