//! The overview on the built-in partition with known state: a key running out, a
//! certificate about to expire, a failed operation, an unverified trail; then the same
//! after the trail is verified. One test per process (nextest).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use console::overview::{AttentionKind, LinkView, Severity};
use console::sign::{OnError, SignFormat, SignRequest};
use console::views::GenerateRequest;
use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType};

mod common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_lists_what_needs_attention_across_the_partition() {
    let common::Env { c, pid, dir, .. } = &common::builtin().await;
    // An HSS key of 32 signatures with 4 used: 87.5 % left, below a 90 % warning threshold.
    let hss = c
        .generate_key(
            pid,
            GenerateRequest {
                spec: KeySpec::Hss {
                    params: HssParams::new(vec![(LmsType::H5, LmotsType::W4)]).unwrap(),
                },
                label: "fw_hss_overview".into(),
                token: true,
            },
        )
        .await
        .unwrap();
    let files: Vec<String> = (0..3)
        .map(|i| {
            let p = dir.path().join(format!("fw-{i}.bin"));
            std::fs::write(&p, format!("firmware {i}")).unwrap();
            p.display().to_string()
        })
        .collect();
    let req = SignRequest {
        key: format!("id:{}", hss.id_hex),
        files,
        formats: vec![SignFormat::Cms],
        manifest: false,
        out_dir: None,
        context: None,
        on_error: OnError::Stop,
        confirm_hss: true,
        timestamp: None,
    };
    c.sign_files(pid, req, Arc::new(|_| {}), Arc::new(AtomicBool::new(false)))
        .await
        .unwrap();
    let mut s = c.settings();
    s.hss_warning_percent = 90.0;
    c.update_settings(s).await.unwrap();
    // A certificate that expires in 5 days.
    let ec = c
        .generate_key(
            pid,
            GenerateRequest {
                spec: KeySpec::Ec { curve: Curve::P256 },
                label: "tls_short_lived".into(),
                token: true,
            },
        )
        .await
        .unwrap();
    c.issue_certificate(pid, ec.private_handle, "CN=Short lived", 5, true)
        .await
        .unwrap();
    // A failed operation: an export into a folder that does not exist.
    let missing = dir.path().join("no/such/folder/trail.jsonl");
    assert!(c
        .audit_export(
            console::audit_ops::ExportFormat::Jsonl,
            audit::export::Range::default(),
            &missing
        )
        .await
        .is_err());

    let o = c.overview().await.unwrap();
    assert_eq!(o.partitions.len(), 1);
    let card = &o.partitions[0];
    assert_eq!(card.partition_id, *pid);
    assert_eq!(card.login, Some(console::views::UserKind::User));
    assert!(card.load.is_some(), "lunasim is a Luna: its load is read");
    assert!(card.holds_audit_key);
    assert!(!card.user_pin.locked && !card.user_pin.final_try);

    let key = o
        .keys
        .items
        .iter()
        .find(|i| i.subject.as_deref() == Some("fw_hss_overview"))
        .expect("the HSS key below its threshold is listed");
    assert_eq!(
        (key.kind, key.severity, key.remaining),
        (AttentionKind::HssKey, Severity::Warning, Some(28))
    );
    assert_eq!(key.link.view, LinkView::Hss);
    assert_eq!(key.link.search.as_deref(), Some(hss.id_hex.as_str()));
    assert!(key.days_left.is_some_and(|d| d > 30.0));
    assert!(o.keys.checked >= 1);

    let cert = o
        .certificates
        .items
        .iter()
        .find(|i| i.subject.as_deref() == Some("tls_short_lived"))
        .expect("the certificate expiring in 5 days is listed");
    assert_eq!(cert.severity, Severity::Critical);
    let days = cert.days_left.unwrap();
    assert!((4.0..=5.01).contains(&days), "{days}");
    assert_eq!(cert.message.key, "overview.items.certificate_expires");
    assert_eq!(cert.message.args["days"], format!("{}", days.floor()));

    assert!(
        o.failures
            .items
            .iter()
            .any(|i| i.subject.as_deref() == Some("audit.export")
                && i.message.args["error"] == "AUDIT_UNAVAILABLE"),
        "{:?}",
        o.failures.items
    );
    assert!(o
        .audit
        .items
        .iter()
        .any(|i| i.message.key == "overview.items.audit_never_verified"));
    assert!(o.needs_attention());
    assert_eq!(o.worst, Some(Severity::Critical));

    // The HSS key's history: full at generation, 28 left after the batch.
    let k = c
        .hss_keys()
        .await
        .unwrap()
        .into_iter()
        .find(|k| k.id_hex == hss.id_hex)
        .unwrap();
    assert_eq!(k.history.first().map(|p| p.remaining), Some(32));
    assert_eq!(k.history.last().map(|p| p.remaining), Some(28));

    // Once verified, the trail is no longer on the list; and the day's records are counted.
    c.audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    let o = c.overview().await.unwrap();
    assert!(o.audit.last_verification.as_ref().is_some_and(|v| v.intact));
    assert!(!o
        .audit
        .items
        .iter()
        .any(|i| i.severity >= Severity::Warning));
    let days = c.audit_days(7).await.unwrap();
    assert_eq!(days.len(), 7);
    let today = days.last().unwrap();
    assert!(today.records > 10 && today.failures >= 1, "{today:?}");
    assert!(days[..6].iter().all(|d| d.records == 0));
    c.close().await;
}
