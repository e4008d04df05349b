//! PINs never leave the login call: after a session with a known (distinctive) PIN and a
//! wrong one, neither appears in the logs (TRACE level), the data folder (settings, the
//! audit database and its WAL, anchors, exports), the audit records, or any response the
//! window would receive over IPC. A wrong PIN is tried exactly once.

use std::io::Write;
use std::sync::{Arc, Mutex};

use console::views::{GenerateRequest, UserKind};
use console::{Console, ConsoleConfig, ErrorCode};
use hsm::algo::{Curve, KeySpec};
use hsm::pubkey::PublicKeyFormat;

const WRONG_PIN: &str = "wrong-pin-97531";

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every encoding a careless line of code could write a PIN in.
fn forms(pin: &str) -> Vec<Vec<u8>> {
    vec![
        pin.as_bytes().to_vec(),
        hex::encode(pin).into_bytes(),
        pin.encode_utf16().flat_map(|u| u.to_le_bytes()).collect(),
    ]
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn assert_clean(what: &str, bytes: &[u8]) {
    for pin in [testkit::USER_PIN, WRONG_PIN] {
        for f in forms(pin) {
            assert!(!contains(bytes, &f), "a PIN ({pin}) is in {what}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pins_are_in_no_log_file_record_or_response() {
    let log = Captured::default();
    let sink = log.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .init();

    let token = testkit::TestToken::new(testkit::Backend::SoftHsm);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ConsoleConfig::new(dir.path());
    cfg.builtin = false; // the trail's key goes to the SoftHSM token: its PIN is the one under test
    let c = Console::open(cfg).await.unwrap();
    let mut responses: Vec<String> = Vec::new();
    let mut keep = |v: serde_json::Value| responses.push(v.to_string());

    let m = c
        .add_module(&token.module_path.display().to_string())
        .await
        .unwrap();
    keep(serde_json::to_value(&m).unwrap());
    let pid = c
        .slots(&m.id)
        .await
        .unwrap()
        .iter()
        .find_map(|s| s.partition_id.clone())
        .unwrap();

    let e = c
        .login(&pid, UserKind::User, p11::pin(WRONG_PIN))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PinIncorrect, "{e:?}");
    keep(serde_json::to_value(&e).unwrap());
    let r = c
        .login(&pid, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    keep(serde_json::to_value(&r).unwrap());
    let g = c
        .admin()
        .generate_key(
            &pid,
            GenerateRequest {
                spec: KeySpec::Ec { curve: Curve::P256 },
                label: "pin_probe".into(),
                token: true,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    keep(serde_json::to_value(&g).unwrap());
    keep(serde_json::to_value(c.list_keys(&pid).await.unwrap()).unwrap());
    keep(serde_json::to_value(c.partition(&pid).await.unwrap()).unwrap());
    keep(
        serde_json::to_value(
            c.admin()
                .export_public_key(&pid, g.public_handle.unwrap(), PublicKeyFormat::Pem)
                .await
                .unwrap(),
        )
        .unwrap(),
    );
    keep(serde_json::to_value(c.trail().audit_status().await.unwrap()).unwrap());
    let records = c
        .trail()
        .audit_records(audit::store::Query {
            limit: 1000,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        records
            .iter()
            .filter(|r| r.event.action == "login" && r.event.status == "failure")
            .count()
            == 1,
        "the wrong PIN was tried once and recorded once"
    );
    keep(serde_json::to_value(&records).unwrap());
    c.trail()
        .audit_export(
            console::trail::ExportFormat::Jsonl,
            Default::default(),
            &dir.path().join("trail.jsonl"),
        )
        .await
        .unwrap();
    c.trail()
        .audit_export(
            console::trail::ExportFormat::Csv,
            Default::default(),
            &dir.path().join("trail.csv"),
        )
        .await
        .unwrap();
    let mut s = c.settings();
    s.stats_poll_seconds = 7;
    c.update_settings(s).await.unwrap();
    c.logout(&pid).await.unwrap();
    c.close().await;

    // Debug output (what a panic or a careless `{:?}` would print) of a PIN is redacted.
    assert_clean(
        "Debug of a PIN",
        format!("{:?}", p11::pin(testkit::USER_PIN)).as_bytes(),
    );

    let log = log.0.lock().unwrap().clone();
    assert!(
        contains(&log, b"login"),
        "the log captured the session ({} bytes)",
        log.len()
    );
    assert_clean("the TRACE log", &log);
    for (i, r) in responses.iter().enumerate() {
        assert_clean(&format!("IPC response #{i}"), r.as_bytes());
    }
    let all = testkit::files_under(dir.path());
    let names: Vec<String> = all
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    for want in ["audit.db", "settings.json", "trail.jsonl", "trail.csv"] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    for p in &all {
        assert_clean(&p.display().to_string(), &std::fs::read(p).unwrap());
    }
}
