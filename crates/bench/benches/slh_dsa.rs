//! SLH-DSA signing and verification latency per FIPS 205 parameter set, on Kryoptic (Luna 7.9
//! offers no SLH-DSA), through the probe engine the Probes view uses — beside ML-DSA-65
//! signing measured in the same run, the baseline each set is compared with.
//!
//! `cargo bench -p hsmc-bench --bench slh_dsa` (or `scripts/bench.sh slh-dsa`) prints one JSON
//! line per parameter set and one for the baseline. No target: the figures say what a
//! successor in each set costs beside ML-DSA-65 on the same token.

use std::sync::atomic::AtomicBool;

use bench::probe::{run, ProbeMode, ProbeOp, ProbeRequest};
use hsm::algo::{MlDsaSet, SlhDsaSet};
use testkit::{Backend, TestToken};

/// p50 and mean latency (µs) of `calls` calls of `op` with one worker. (Not throughput: a
/// run of a few dozen calls is too short for the probe's rate to mean anything.)
fn measure(token: &TestToken, op: ProbeOp, calls: u64) -> (f64, f64) {
    let req = ProbeRequest {
        op,
        mode: ProbeMode::Count { calls },
        workers: 1,
        sweep: vec![],
        warmup: 2,
        profile: Default::default(),
    };
    let out = run(
        &token.module,
        token.slot,
        &req,
        &AtomicBool::new(false),
        &|_| {},
    )
    .unwrap_or_else(|e| panic!("{}: {e}", op.name()));
    let r = &out.runs[0];
    assert_eq!(r.errors, 0, "{}: {:?}", op.name(), r.first_error);
    (r.latency.p50_us, r.latency.mean_us)
}

fn main() {
    let token = TestToken::new(Backend::Kryoptic);
    let _login = token.user_session();
    let baseline = ProbeOp::MlDsaSign { set: MlDsaSet::P65 };
    let (base_p50, base_mean) = measure(&token, baseline, 200);
    println!(
        "{}",
        serde_json::json!({
            "bench": "slh_dsa_latency",
            "baseline": true,
            "probe": baseline.name(),
            "sign_p50_us": base_p50,
            "sign_mean_us": base_mean,
        })
    );
    for set in SlhDsaSet::ALL {
        // The small ("s") sets sign ~20–50× slower than the fast ("f") ones.
        let sign_calls = if set.name().ends_with('s') { 6 } else { 40 };
        let (p50, mean) = measure(&token, ProbeOp::SlhDsaSign { set }, sign_calls);
        let (vp50, _) = measure(&token, ProbeOp::SlhDsaVerify { set }, 60);
        println!(
            "{}",
            serde_json::json!({
                "bench": "slh_dsa_latency",
                "set": set.name(),
                "signature_bytes": set.signature_len(),
                "sign_calls": sign_calls,
                "sign_p50_us": p50,
                "sign_mean_us": mean,
                "verify_p50_us": vp50,
                "sign_p50_vs_ml_dsa_65": p50 / base_p50,
            })
        );
    }
}
