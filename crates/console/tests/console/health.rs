//! HSS counters and statistics against lunasim with known activity, and the generic figures
//! on SoftHSM2 and Kryoptic (no `CA_*`). One test per process (nextest).

use console::views::GenerateRequest;
use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType, MlDsaSet};
use p11::sys::*;
use p11::Mechanism;
use testkit::Backend;

use crate::common;
use console::i18n::InLang;

fn count(s: &console::health::StatsSnapshot, bin: &str) -> u64 {
    s.luna
        .as_ref()
        .unwrap()
        .utilization
        .iter()
        .find(|b| b.bin == bin)
        .map(|b| b.count)
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_counters_follow_known_activity_and_the_busy_share_moves() {
    let common::Env { c, pid, .. } = &common::builtin().await;
    let ec = c
        .admin()
        .generate_key(
            pid,
            GenerateRequest {
                spec: KeySpec::Ec { curve: Curve::P256 },
                label: "stats_ec".into(),
                token: false,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    let ml = c
        .admin()
        .generate_key(
            pid,
            GenerateRequest {
                spec: KeySpec::MlDsa { set: MlDsaSet::P65 },
                label: "stats_ml".into(),
                token: false,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    let aes = c
        .admin()
        .generate_key(
            pid,
            GenerateRequest {
                spec: KeySpec::Aes { bits: 256 },
                label: "stats_aes".into(),
                token: false,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    let first = c.stats(pid).await.unwrap();
    let luna = first.luna.as_ref().expect("lunasim offers CA_GetHSMStats");
    assert!(luna.not_offered.is_empty(), "{:?}", luna.not_offered);
    assert_eq!(luna.firmware.as_deref(), Some("7.9.1"));
    assert!(
        luna.busy_percent.is_none(),
        "no busy share from a single sample"
    );
    let p = c.partition_ref(pid).await.unwrap();
    let (n_ec, n_ml, n_enc) = (7u64, 40u64, 4u64);
    let (hec, hml, haes) = (ec.private_handle, ml.private_handle, aes.private_handle);
    p.pool
        .run_async("test.activity", move |s| {
            for _ in 0..n_ec {
                s.sign(&Mechanism::new(CKM_ECDSA), hec, &[7u8; 32])?;
            }
            for _ in 0..n_ml {
                s.sign(&Mechanism::new(CKM_ML_DSA), hml, b"keep the HSM busy")?;
            }
            for i in 0..n_enc {
                let iv = [i as u8; 12];
                s.encrypt(
                    &Mechanism::aes_gcm(&iv, b"", 128),
                    haes,
                    b"sixteen byte msg",
                )?;
            }
            Ok(())
        })
        .await
        .unwrap();
    tokio::time::sleep(console::health::MIN_SAMPLE_GAP + std::time::Duration::from_millis(200))
        .await;
    let second = c.stats(pid).await.unwrap();
    assert_eq!(
        count(&second, "sign") - count(&first, "sign"),
        n_ec + n_ml,
        "sign bin"
    );
    assert_eq!(
        count(&second, "encrypt") - count(&first, "encrypt"),
        n_enc,
        "encrypt bin"
    );
    let l2 = second.luna.as_ref().unwrap();
    let busy = l2
        .busy_percent
        .expect("a busy share from two samples 5 s apart");
    assert!(busy > 0.0 && busy <= 100.0, "{busy}");
    assert!(
        l2.commands.unwrap() > luna.commands.unwrap(),
        "the command count moved"
    );
    let sign_rate = l2
        .utilization
        .iter()
        .find(|b| b.bin == "sign")
        .and_then(|b| b.per_second)
        .unwrap();
    assert!(sign_rate > 0.0);
    // The console's own figures and the chart of the history.
    assert!(second
        .metrics
        .ops
        .iter()
        .any(|o| o.op == "test.activity" && o.ok == 1));
    assert_eq!(c.observe().stats_history(pid).len(), 2);
    let svg = c
        .observe()
        .stats_chart(pid, console::health::StatsChart::Load)
        .unwrap();
    assert!(svg.contains("<svg") && svg.contains("busy %"));
    c.close().await;
}

/// The HSS key `id_hex` as the HSS view lists it.
async fn hss_key(c: &console::Console, id_hex: &str) -> console::health::HssKeyView {
    c.observe()
        .hss_keys()
        .await
        .unwrap()
        .into_iter()
        .find(|k| k.id_hex == id_hex)
        .expect("the HSS key is listed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hss_counters_burn_rate_and_a_signature_made_outside_the_console() {
    let e = common::builtin().await;
    let (c, pid) = (&e.c, &e.pid);
    let (g, r) = e.hss_key_with_a_batch_signed("fw_hss").await;
    assert_eq!(
        r.signatures_made, 4,
        "three CMS signatures and the certificate"
    );
    let k = hss_key(c, &g.id_hex).await;
    assert_eq!((k.capacity.as_str(), k.remaining), ("32", Some(28)));
    assert!((k.used_percent - 12.5).abs() < 1e-9);
    assert_eq!(k.audit_expected_remaining, Some(28));
    assert!(k.mismatch.is_none(), "{:?}", k.mismatch);
    assert!((k.per_day_7 - 4.0 / 7.0).abs() < 1e-9 && (k.per_day_30 - 4.0 / 30.0).abs() < 1e-9);
    let days = (28.0 / (4.0 / 30.0)) as i64;
    let want = time::OffsetDateTime::now_utc() + time::Duration::days(days);
    let got = k.projected_exhaustion.clone().unwrap();
    let want_str = format!(
        "{:04}-{:02}-{:02}",
        want.year(),
        u8::from(want.month()),
        want.day()
    );
    let next = want + time::Duration::days(1);
    assert!(
        got == want_str
            || got
                == format!(
                    "{:04}-{:02}-{:02}",
                    next.year(),
                    u8::from(next.month()),
                    next.day()
                ),
        "{got} vs {want_str}"
    );
    assert_eq!(k.status, console::health::HssStatus::Ok);
    // Signed outside the console (a direct PKCS#11 call, no audit record): flagged loudly.
    let p = c.partition_ref(pid).await.unwrap();
    let h = g.private_handle;
    p.pool
        .run_async("test.outside", move |s| {
            s.sign(&Mechanism::new(CKM_HSS), h, b"unaudited")
        })
        .await
        .unwrap();
    let k = hss_key(c, &g.id_hex).await;
    assert_eq!(k.remaining, Some(27));
    assert!(
        k.mismatch
            .as_deref()
            .unwrap_or_default()
            .contains("1 were made outside"),
        "{:?}",
        k.mismatch
    );
    // The same warning in the officer's language, with its figures.
    let t = k.mismatch_text.as_ref().unwrap();
    assert_eq!(t.key, "hss.mismatch_outside");
    assert_eq!(
        (t.args["now"].as_str(), t.args["outside"].as_str()),
        ("27", "1")
    );
    let zh = t.in_lang(console::i18n::Lang::ZhHant);
    assert!(zh.contains("有 1 次是在此主控台之外產生的"), "{zh}");
    // And on the Overview, nested in the item that names the key.
    let o = c.overview().await.unwrap();
    let item = o
        .keys
        .items
        .iter()
        .find(|i| i.message.key == "overview.items.hss_mismatch")
        .expect("the mismatch is on the overview");
    let zh = item.message.in_lang(console::i18n::Lang::ZhHans);
    assert!(zh.contains("有 1 次是在此控制台之外生成的"), "{zh}");
    assert!(!zh.contains("made outside"), "{zh}");
    c.close().await;
}

/// A trail longer than one page of browsing (100,000 records) is read whole: a key's
/// counters are worked from all of it, and `hsmc audit tail -n` gives as many records as
/// asked. The key is generated in the first page and signs after it; read from the first
/// page alone, the signatures were missing and the key was flagged as signed outside the
/// console.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trail_longer_than_a_page_is_read_whole_by_hss_counters_and_tail() {
    let e = common::builtin().await;
    let c = &e.c;
    let params = HssParams::new(vec![(LmsType::H5, LmotsType::W4)]).unwrap();
    let g = e.generate(KeySpec::Hss { params }, "long_trail_hss").await;
    let log = c.audit();
    let (epoch, key) = log
        .chain_keys()
        .await
        .expect("the trail is unlocked")
        .into_iter()
        .next_back()
        .expect("a key epoch");
    // Rows, not sealed blocks (the audit crate's paging test covers those): sealing 100,000
    // records would take as long again as writing them.
    audit::testing::fill_trail(log.store(), log.log_id(), epoch, &key, 100_200).await;
    let files: Vec<std::path::PathBuf> = (0..2)
        .map(|i| {
            let p = e.dir.path().join(format!("late-{i}.bin"));
            std::fs::write(&p, format!("late firmware {i}")).unwrap();
            p
        })
        .collect();
    let mut req = common::batch_request(
        &format!("id:{}", g.id_hex),
        &files,
        &[console::sign::SignFormat::Cms],
    );
    req.confirm_hss = true;
    let r = e.try_sign(req).await.unwrap();
    assert_eq!(
        r.signatures_made, 3,
        "two CMS signatures and the certificate"
    );
    let last = log.store().head(log.log_id()).await.unwrap().unwrap().0;
    assert!(
        last > 100_200,
        "the signatures are recorded after the first page: {last}"
    );
    let k = hss_key(c, &g.id_hex).await;
    assert_eq!((k.capacity.as_str(), k.remaining), ("32", Some(29)));
    assert_eq!(k.audit_expected_remaining, Some(29));
    assert!(k.mismatch.is_none(), "{:?}", k.mismatch);
    assert!((k.per_day_7 - 3.0 / 7.0).abs() < 1e-9, "{}", k.per_day_7);
    assert_eq!(k.history.last().map(|h| h.remaining), Some(29));
    // Past the 1,000 records one browse of the console answers (the cap `tail` had).
    let tail = c.trail().audit_tail(1_500).await.unwrap();
    assert_eq!(tail.len(), 1_500);
    assert_eq!(tail.last().unwrap().seq, last, "ends at the newest");
    assert!(
        tail.windows(2).all(|w| w[1].seq == w[0].seq + 1),
        "oldest first, none missing"
    );
    c.close().await;
}

async fn generic(backend: Backend) {
    let common::Env { c, pid, .. } = &common::token(backend).await;
    let s = c.stats(pid).await.unwrap();
    assert!(
        s.luna.is_none(),
        "no CA_* here: no Luna section, and no error"
    );
    assert_eq!(s.token.label, testkit::TOKEN_LABEL);
    assert!(s.mechanism_count > 10);
    assert!(s.pool.logged_in && !s.cryptoki_version.is_empty() && !s.manufacturer.is_empty());
    assert!(c.observe().hss_keys().await.unwrap().is_empty());
    assert!(c
        .observe()
        .stats_chart(pid, console::health::StatsChart::Console)
        .unwrap()
        .contains("<svg"));
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_statistics_are_generic_and_never_an_error() {
    generic(Backend::SoftHsm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_statistics_are_generic_and_never_an_error() {
    generic(Backend::Kryoptic).await;
}
