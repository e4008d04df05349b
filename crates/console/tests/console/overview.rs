//! The overview on the built-in partition with known state: a key running out, a
//! certificate about to expire, a failed operation, an unverified trail; then the same
//! after the trail is verified. One test per process (nextest).

use std::sync::atomic::AtomicBool;

use console::overview::{AttentionKind, LinkView, Severity};
use console::sign::SignFormat;
use console::views::GenerateRequest;
use hsm::algo::{Curve, KeySpec};

use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_lists_what_needs_attention_across_the_partition() {
    let e = common::builtin().await;
    let hss = hss_key_below_its_warning_threshold(&e).await;
    // A certificate that expires in 5 days.
    let ec = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "tls_short_lived")
        .await;
    e.c.signing()
        .issue_certificate(&e.pid, ec.private_handle, "CN=Short lived", 5, true)
        .await
        .unwrap();
    // A failed operation: an export into a folder that does not exist.
    let missing = e.dir.path().join("no/such/folder/trail.jsonl");
    assert!(e
        .c
        .trail()
        .audit_export(
            console::trail::ExportFormat::Jsonl,
            audit::export::Range::default(),
            &missing
        )
        .await
        .is_err());

    let o = e.c.overview().await.unwrap();
    assert_eq!(o.partitions.len(), 1);
    let card = &o.partitions[0];
    assert_eq!(card.partition_id, e.pid);
    assert_eq!(card.login, Some(console::views::UserKind::User));
    assert!(card.load.is_some(), "lunasim is a Luna: its load is read");
    assert!(card.holds_audit_key);
    assert!(!card.user_pin.locked && !card.user_pin.final_try);
    hss_key_and_certificate_are_listed(&o, &hss.id_hex);
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
    let k =
        e.c.observe()
            .hss_keys()
            .await
            .unwrap()
            .into_iter()
            .find(|k| k.id_hex == hss.id_hex)
            .unwrap();
    assert_eq!(k.history.first().map(|p| p.remaining), Some(32));
    assert_eq!(k.history.last().map(|p| p.remaining), Some(28));

    once_verified_the_trail_leaves_the_list_and_the_day_is_counted(&e.c).await;
    e.c.close().await;
}

/// An HSS key of 32 signatures with 4 used: 87.5 % left, below a 90 % warning threshold.
async fn hss_key_below_its_warning_threshold(e: &common::Env) -> console::views::GeneratedKey {
    let (hss, _) = e.hss_key_with_a_batch_signed("fw_hss_overview").await;
    let c = &e.c;
    let mut s = c.settings();
    s.hss_warning_percent = 90.0;
    c.update_settings(s).await.unwrap();
    hss
}

/// The HSS key (`hss_id`) is a warning linking to the HSS view, the certificate expiring in
/// 5 days critical, each with its numbers.
fn hss_key_and_certificate_are_listed(o: &console::overview::Overview, hss_id: &str) {
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
    assert_eq!(key.link.search.as_deref(), Some(hss_id));
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
}

/// Once verified, the trail is no longer on the list; and the day's records are counted.
async fn once_verified_the_trail_leaves_the_list_and_the_day_is_counted(c: &console::Console) {
    c.trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    let o = c.overview().await.unwrap();
    assert!(o.audit.last_verification.as_ref().is_some_and(|v| v.intact));
    assert!(!o
        .audit
        .items
        .iter()
        .any(|i| i.severity >= Severity::Warning));
    let days = c.trail().audit_days(7).await.unwrap();
    assert_eq!(days.len(), 7);
    let today = days.last().unwrap();
    assert!(today.records > 10 && today.failures >= 1, "{today:?}");
    assert!(days[..6].iter().all(|d| d.records == 0));
}

/// A Luna key with a usage limit: listed with its uses left and days at the trail's rate
/// when below the thresholds, critical once used up; its history told from the trail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_limited_keys_run_out_beside_the_hss_keys() {
    let common::Env { c, pid, dir, .. } = &common::builtin().await;
    let ec = c
        .admin()
        .generate_key(
            pid,
            GenerateRequest {
                spec: KeySpec::Ec { curve: Curve::P256 },
                label: "limited_overview".into(),
                token: true,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    c.observe()
        .set_usage_limit(pid, ec.private_handle, 8)
        .await
        .unwrap();
    let file = dir.path().join("release.bin");
    std::fs::write(&file, b"release").unwrap();
    let req = common::sign_request(&ec.id_hex, &file, SignFormat::Cms);
    common::sign_with(c, pid, req).await.unwrap();
    let usage = |keys: Vec<console::usage::UsageKeyView>| {
        keys.into_iter()
            .find(|k| k.id_hex == ec.id_hex && k.class.contains("PRIVATE"))
            .expect("the limited key is listed")
    };
    let u = usage(c.observe().usage_keys().await.unwrap());
    // Two uses: the self-signed certificate CMS needs (the key has none), and the signature.
    assert_eq!((u.used, u.left), (2, 6), "{u:?}");
    // The trail's story: 8 left when the limit was set, then what the signing left.
    let left: Vec<u64> = u.history.iter().map(|p| p.remaining).collect();
    assert_eq!(left.first(), Some(&8), "{left:?}");
    assert_eq!(left.last(), Some(&u.left), "{left:?}");

    // Above the thresholds (75 % left against 10 %) and months away (6 left at 2 in 30
    // days): not listed.
    let o = c.overview().await.unwrap();
    assert!(!o
        .keys
        .items
        .iter()
        .any(|i| i.kind == AttentionKind::UsageLimit));
    assert!(o.keys.checked >= 1);

    let mut s = c.settings();
    s.hss_warning_percent = 80.0;
    c.update_settings(s).await.unwrap();
    let o = c.overview().await.unwrap();
    let item = o
        .keys
        .items
        .iter()
        .find(|i| {
            i.kind == AttentionKind::UsageLimit && i.subject.as_deref() == Some("limited_overview")
        })
        .expect("below the warning threshold: listed");
    assert_eq!(item.severity, Severity::Warning);
    assert_eq!(item.remaining, Some(u.left));
    assert_eq!(item.total.as_deref(), Some("8"));
    assert_eq!(item.message.key, "overview.items.usage_days_left");
    let days = item.days_left.expect("the trail gives a rate");
    assert!(days > 30.0, "{days}");
    assert_eq!(item.link.view, LinkView::Keys);
    assert_eq!(item.link.search.as_deref(), Some(ec.id_hex.as_str()));
    assert!(o.needs_attention());

    // Used up: critical.
    c.observe()
        .set_usage_limit(pid, ec.private_handle, u.used)
        .await
        .unwrap();
    let o = c.overview().await.unwrap();
    let item = o
        .keys
        .items
        .iter()
        .find(|i| {
            i.kind == AttentionKind::UsageLimit && i.subject.as_deref() == Some("limited_overview")
        })
        .unwrap();
    assert_eq!(item.severity, Severity::Critical);
    assert_eq!(item.message.key, "overview.items.usage_exhausted");
    assert_eq!(item.remaining, Some(0));
    assert_eq!(
        o.keys.items[0].severity,
        Severity::Critical,
        "most urgent first"
    );
    c.close().await;
}

/// The Overview names the keys the post-quantum policy of the settings dates: under NIST
/// IR 8547 an RSA-1024 key is disallowed already (critical) and P-256 has no date before
/// 2035 (nothing); under CNSA 2.0 the P-256 key is deprecated (a warning) and ML-DSA-87 is
/// in the suite (nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_names_keys_the_post_quantum_policy_dates() {
    use p11::sys::*;
    let e = common::token(testkit::Backend::Kryoptic).await;
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "pq_ec")
        .await;
    e.generate(
        KeySpec::MlDsa {
            set: hsm::algo::MlDsaSet::P87,
        },
        "pq_mldsa87",
    )
    .await;
    let p = e.c.partition_ref(&e.pid).await.unwrap();
    p.pool
        .run_async("test.rsa1024", |s| {
            s.generate_key_pair(
                &p11::Mechanism::new(CKM_RSA_PKCS_KEY_PAIR_GEN),
                &mut p11::Template::new()
                    .ulong(CKA_MODULUS_BITS, 1024)
                    .bool(CKA_TOKEN, true)
                    .bool(CKA_VERIFY, true)
                    .text(CKA_LABEL, "pq_rsa1024")
                    .bytes(CKA_ID, b"pq1024"),
                &mut p11::Template::new()
                    .bool(CKA_TOKEN, true)
                    .bool(CKA_PRIVATE, true)
                    .bool(CKA_SENSITIVE, true)
                    .bool(CKA_SIGN, true)
                    .text(CKA_LABEL, "pq_rsa1024")
                    .bytes(CKA_ID, b"pq1024"),
            )
        })
        .await
        .unwrap();
    let pqc_items = |o: &console::overview::Overview| {
        o.partitions
            .iter()
            .flat_map(|p| p.items.iter())
            .filter(|i| i.kind == AttentionKind::Pqc)
            .map(|i| (i.severity, i.message.text.clone()))
            .collect::<Vec<_>>()
    };
    let o = e.c.overview().await.unwrap();
    // Each leads to the readiness view of its partition.
    for i in o.partitions.iter().flat_map(|p| p.items.iter()) {
        if i.kind == AttentionKind::Pqc {
            assert_eq!(i.link.view, LinkView::Pqc);
            assert_eq!(i.link.partition_id.as_deref(), Some(e.pid.as_str()));
        }
    }
    let items = pqc_items(&o);
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].0, Severity::Critical);
    assert!(
        items[0].1.contains("pq_rsa1024 (RSA-1024; 0)") && items[0].1.contains("NIST IR 8547"),
        "{items:?}"
    );
    assert!(!items[0].1.contains("pq_ec"), "{items:?}");
    assert!(o.needs_attention());

    // pq_ec signs a file: the item says how much it is used.
    let file = e.dir.path().join("release.bin");
    std::fs::write(&file, b"release").unwrap();
    let key_id = e.c.list_keys(&e.pid).await.unwrap();
    let key_id = &key_id.iter().find(|k| k.label == "pq_ec").unwrap().id_hex;
    let r = e
        .try_sign(common::sign_request(key_id, &file, SignFormat::Raw))
        .await
        .unwrap();
    assert!(r.files[0].error.is_none(), "{r:?}");
    let mut s = e.c.settings();
    s.pqc_policy = "cnsa2".into();
    e.c.update_settings(s).await.unwrap();
    let items = pqc_items(&e.c.overview().await.unwrap());
    let warning = items
        .iter()
        .find(|(sev, _)| *sev == Severity::Warning)
        .expect("a warning under CNSA 2.0");
    assert!(warning.1.contains("pq_ec (ECDSA P-256; 1)"), "{items:?}");
    assert!(!warning.1.contains("pq_mldsa87"), "{items:?}");
}

/// Every failure of the last 24 hours is counted, however many (`hsmc status` prints the
/// count beside the newest few): the count once stopped at the 1,000 records one query gave.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_of_the_day_are_all_counted_and_the_newest_listed() {
    let e = common::builtin().await;
    let failed = 1_005;
    for i in 0..failed {
        e.c.audit()
            .append(
                audit::Event::new("key.sign", "key")
                    .status(audit::Status::Failure)
                    .meta("i", i),
            )
            .await
            .unwrap();
    }
    let o = e.c.overview().await.unwrap();
    assert!(o.failures.checked >= failed, "{}", o.failures.checked);
    let listed: Vec<i64> = o
        .failures
        .items
        .iter()
        .filter(|i| i.message.key == "overview.items.failed_operation")
        .filter_map(|i| i.link.seq)
        .collect();
    assert_eq!(listed.len(), console::overview::FAILURES_SHOWN);
    assert!(
        listed.windows(2).all(|w| w[0] > w[1]),
        "newest first: {listed:?}"
    );
}
