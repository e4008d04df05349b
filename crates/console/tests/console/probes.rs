//! Latency probes on real modules: lunasim's PQC service queue gives the ceiling and its
//! verdict; with the queue off (and a network round trip per call) throughput grows with
//! workers; SoftHSM2 and Kryoptic give complete reports. One test per process (nextest).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bench::probe::{ProbeMode, ProbeOp, ProbeRequest};
use console::Console;
use hsm::algo::{MlDsaSet, SlhDsaSet};
use testkit::Backend;

use crate::common;

fn req(op: ProbeOp, mode: ProbeMode, sweep: &[u32]) -> ProbeRequest {
    ProbeRequest {
        op,
        mode,
        workers: 1,
        sweep: sweep.to_vec(),
        warmup: 3,
        profile: Default::default(),
    }
}

async fn probe(c: &Console, pid: &str, r: ProbeRequest) -> console::probes::ProbeReport {
    c.observe()
        .run_probe(pid, r, Arc::new(|_| {}), Arc::new(AtomicBool::new(false)))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_pqc_queue_shows_the_hsm_ceiling_and_without_it_throughput_grows() {
    let common::Env { c, pid, .. } = &common::builtin().await;
    let p = c.partition_ref(pid).await.unwrap();
    let catalog = c.observe().probe_catalog(pid).await.unwrap();
    assert!(
        catalog.iter().any(|x| x.name == "hss-sign" && x.offered),
        "lunasim offers HSS"
    );
    assert!(
        catalog
            .iter()
            .any(|x| x.name.starts_with("slh-dsa") && !x.offered),
        "and hides SLH-DSA as a Luna does"
    );

    // One PQC service queue of 15 ms per signature: about 66 signatures/s however many push.
    p.module
        .module
        .sim_control(r#"{"op":"pqc_queue","enabled":true,"service_ms":15}"#)
        .unwrap();
    let r = probe(
        c,
        pid,
        req(
            ProbeOp::MlDsaSign { set: MlDsaSet::P65 },
            ProbeMode::Duration { seconds: 1.2 },
            &[1, 2, 4],
        ),
    )
    .await;
    assert_eq!(r.sweep.len(), 3);
    let top = r.sweep.last().unwrap();
    assert!(
        top.throughput_per_s < 80.0,
        "the queue caps throughput: {:?}",
        r.sweep
    );
    assert!(
        top.mean_us > 2.0 * r.sweep[0].mean_us,
        "latency grows with workers: {:?}",
        r.sweep
    );
    assert!(
        r.verdict
            .as_deref()
            .unwrap_or_default()
            .starts_with("Ceiling in the HSM"),
        "{:?}",
        r.verdict
    );

    // No queue, a 10 ms network round trip per call: workers overlap and throughput grows.
    p.module.module.sim_control(r#"{"op":"clear"}"#).unwrap();
    p.module
        .module
        .sim_control(r#"{"op":"latency","ms":10,"jitter_ms":0}"#)
        .unwrap();
    let r2 = probe(
        c,
        pid,
        req(
            ProbeOp::EcdsaP256Sign,
            ProbeMode::Duration { seconds: 1.0 },
            &[1, 2, 4],
        ),
    )
    .await;
    p.module.module.sim_control(r#"{"op":"clear"}"#).unwrap();
    let (one, four) = (r2.sweep[0].throughput_per_s, r2.sweep[2].throughput_per_s);
    // Four workers overlap their round trips (four times in theory); on two loaded cores
    // the signing itself competes, so the check asks for twice.
    assert!(
        four > 2.0 * one,
        "throughput grows with workers: {:?}",
        r2.sweep
    );
    assert!(
        r2.verdict
            .as_deref()
            .unwrap_or_default()
            .starts_with("Scales"),
        "{:?}",
        r2.verdict
    );

    // The verdicts carry their catalog key and the same English, and are kept with the run.
    for (x, key) in [
        (&r, "probes.verdicts.ceiling"),
        (&r2, "probes.verdicts.scales"),
    ] {
        let t = x.verdict_text.as_ref().expect("a sweep has a verdict text");
        assert_eq!((t.key.as_str(), Some(&t.text)), (key, x.verdict.as_ref()));
    }

    // Both stored, both audited (one record per run, not per call).
    let h = c.observe().probe_history().await.unwrap();
    assert_eq!(h.len(), 2);
    let stored = c.observe().probe_report(&r.id).await.unwrap();
    assert_eq!(stored.sweep.len(), 3);
    assert_eq!(stored.verdict_text, r.verdict_text);
    let recs: Vec<_> = c
        .trail()
        .audit_records(audit::store::Query {
            limit: 100,
            action: Some("probe.run".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        recs.iter()
            .filter(|x| x.event.action == "probe.run")
            .count(),
        2
    );
    assert!(
        console::probes::chart(&r, console::probes::ProbeChart::Sweep)
            .unwrap()
            .contains("concurrency sweep")
    );
    c.close().await;
}

async fn complete_report(backend: Backend, ops: &[ProbeOp]) {
    let common::Env { c, pid, .. } = &common::token(backend).await;
    let before = c.list_keys(pid).await.unwrap().len();
    for op in ops {
        let seen = Arc::new(std::sync::Mutex::new(0u32));
        let s2 = seen.clone();
        let r = c
            .observe()
            .run_probe(
                pid,
                req(*op, ProbeMode::Count { calls: 300 }, &[]),
                Arc::new(move |_| *s2.lock().unwrap() += 1),
                Arc::new(AtomicBool::new(false)),
            )
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}", op.name()));
        let run = &r.runs[0];
        assert_eq!(
            (run.calls, run.errors),
            (300, 0),
            "{}: {:?}",
            op.name(),
            run.first_error
        );
        assert_eq!(run.latency.count, 300);
        assert!(
            run.latency.min_us > 0.0
                && run.latency.p50_us <= run.latency.p99_us
                && run.latency.p99_us <= run.latency.max_us
        );
        assert!(run.first_call_us.is_some() && run.throughput_per_s > 0.0);
        assert!(!run.histogram.is_empty() && r.overhead_ns > 0.0);
        assert!(*seen.lock().unwrap() >= 1, "progress was reported");
        let csv = console::probes::report_csv(&r);
        assert_eq!(csv.lines().count(), 2);
        assert!(
            console::probes::chart(&r, console::probes::ProbeChart::Histogram)
                .unwrap()
                .contains("<svg")
        );
    }
    assert_eq!(
        c.list_keys(pid).await.unwrap().len(),
        before,
        "the probes' keys are gone"
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_probes_give_complete_reports() {
    complete_report(
        Backend::SoftHsm,
        &[
            ProbeOp::Random32,
            ProbeOp::EcdsaP256Sign,
            ProbeOp::AesGcm { bytes: 1024 },
            ProbeOp::SessionOpen,
            ProbeOp::Rsa2048Sign,
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_probes_give_complete_reports() {
    complete_report(
        Backend::Kryoptic,
        &[
            ProbeOp::MlDsaSign { set: MlDsaSet::P44 },
            ProbeOp::MlDsaVerify { set: MlDsaSet::P65 },
            ProbeOp::MlKemEncaps {
                set: hsm::algo::MlKemSet::P768,
            },
            ProbeOp::MlKemDecaps {
                set: hsm::algo::MlKemSet::P768,
            },
            ProbeOp::Ed25519Sign,
            ProbeOp::SlhDsaSign {
                set: SlhDsaSet::Sha2_128f,
            },
            ProbeOp::SlhDsaVerify {
                set: SlhDsaSet::Shake128f,
            },
        ],
    )
    .await;
}

/// The HSS probes on lunasim, SHA-256/192 beside SHA-256: offered, each makes its own
/// tree, signs (or verifies) without an error, and leaves no key behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_hss_probes_run_for_m24_beside_m32() {
    let common::Env { c, pid, .. } = &common::builtin().await;
    let catalog = c.observe().probe_catalog(pid).await.unwrap();
    for name in ["hss-sign", "hss-m24-sign", "hss-m24-verify"] {
        assert!(
            catalog.iter().any(|x| x.name == name && x.offered),
            "lunasim offers {name}"
        );
    }
    let before = c.list_keys(pid).await.unwrap().len();
    for op in [ProbeOp::HssSign, ProbeOp::HssM24Sign, ProbeOp::HssM24Verify] {
        let r = probe(c, pid, req(op, ProbeMode::Count { calls: 200 }, &[])).await;
        let run = &r.runs[0];
        assert_eq!(
            (run.calls, run.errors),
            (200, 0),
            "{}: {:?}",
            op.name(),
            run.first_error
        );
        assert!(run.latency.min_us > 0.0 && run.throughput_per_s > 0.0);
        assert_eq!(r.mechanism, "CKM_HSS");
    }
    assert_eq!(
        c.list_keys(pid).await.unwrap().len(),
        before,
        "the probes' keys are gone"
    );
    c.close().await;
}

/// The probes read the console's own CPU time: a sweep that keeps lunasim (in process, over
/// Kryoptic) signing uses far more of this machine than one that waits on lunasim's PQC
/// service queue, and the verdict says the ceiling is on this computer exactly when the
/// process kept the cores busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_cpu_bound_sweeps_are_told_from_the_hsms_ceiling() {
    let common::Env { c, pid, .. } = &common::builtin().await;
    let p = c.partition_ref(pid).await.unwrap();
    let sweep = |op| req(op, ProbeMode::Duration { seconds: 1.0 }, &[1, 2, 4]);
    let ml_dsa = ProbeOp::MlDsaSign { set: MlDsaSet::P65 };
    p.module
        .module
        .sim_control(r#"{"op":"pqc_queue","enabled":true,"service_ms":15}"#)
        .unwrap();
    let waiting = probe(c, pid, sweep(ml_dsa)).await;
    p.module
        .module
        .sim_control(r#"{"op":"pqc_queue","enabled":false}"#)
        .unwrap();
    let busy = probe(c, pid, sweep(ml_dsa)).await;
    let cpu = |r: &console::probes::ProbeReport| -> Vec<f64> {
        r.sweep
            .iter()
            .map(|s| s.client_cpu.expect("every run measures the console's CPU"))
            .collect()
    };
    let (w, b) = (cpu(&waiting), cpu(&busy));
    assert!(
        w.iter().chain(&b).all(|x| *x > 0.0 && *x <= 1.05),
        "{w:?} {b:?}"
    );
    assert!(
        w[2] < bench::probe::CLIENT_SATURATED,
        "waiting on the queue does not saturate the cores: {w:?}"
    );
    assert!(
        b[2] > 2.0 * w[2],
        "signing in process costs the console's CPU: busy {b:?}, waiting {w:?}"
    );
    for (r, top) in [(&waiting, w[2]), (&busy, b[2])] {
        let key = &r.verdict_text.as_ref().expect("a sweep has a verdict").key;
        let scales = key == "probes.verdicts.scales";
        assert_eq!(
            key == "probes.verdicts.client_ceiling",
            top >= bench::probe::CLIENT_SATURATED && !scales,
            "{key} at {top:.2} of the cores: {:?}",
            r.verdict
        );
    }
    c.close().await;
}

/// The integration profile on lunasim: the same ECDSA probe through the pool, with a
/// session per call and with a find per call. lunasim's own call counts show each profile
/// did what it says per call, and finding the key every time costs more than keeping its
/// handle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_integration_profile_opens_or_finds_per_call() {
    use bench::probe::CallProfile;
    let common::Env { c, pid, .. } = &common::builtin().await;
    let p = c.partition_ref(pid).await.unwrap();
    let calls_of = |name: &str| -> u64 {
        let st: serde_json::Value =
            serde_json::from_str(&p.module.module.sim_control(r#"{"op":"stats"}"#).unwrap())
                .unwrap();
        st["calls"][name].as_u64().unwrap_or(0)
    };
    let mut mean = Vec::new();
    for profile in CallProfile::ALL {
        let (opens, finds) = (calls_of("C_OpenSession"), calls_of("C_FindObjectsInit"));
        let mut r = req(ProbeOp::EcdsaP256Sign, ProbeMode::Count { calls: 400 }, &[]);
        r.profile = profile;
        let report = probe(c, pid, r).await;
        let run = &report.runs[0];
        assert_eq!(
            (run.calls, run.errors),
            (400, 0),
            "{profile:?}: {:?}",
            run.first_error
        );
        assert_eq!(report.request.profile, profile, "kept with the run");
        let (opened, found) = (
            calls_of("C_OpenSession") - opens,
            calls_of("C_FindObjectsInit") - finds,
        );
        // 400 timed calls and 3 warm-up calls; the set-up may open or find a few more.
        match profile {
            CallProfile::Pool => assert!(opened < 10 && found < 10, "{opened} {found}"),
            CallProfile::SessionPerCall => assert!(opened >= 403, "{opened}"),
            CallProfile::FindPerCall => assert!(found >= 403, "{found}"),
        }
        mean.push(run.latency.mean_us);
    }
    assert!(
        mean[2] > mean[0],
        "a find per call costs more than the kept handle: {mean:?}"
    );
    c.close().await;
}
