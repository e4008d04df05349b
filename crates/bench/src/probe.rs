//! Latency probes, the seed's method: keys made outside the timed region, a warm-up, every
//! call timed into an HDR histogram, the first call reported apart, fixed count / duration /
//! rate (with coordinated-omission correction), a concurrency sweep with efficiency and a
//! verdict on where the ceiling is, and the probe's own overhead with every run.
//!
//! Each worker holds one session of a probe-only pool for the whole run. Sessions of one
//! application share its login, so the probe needs no PIN; its keys are session objects,
//! destroyed afterwards.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType, MlDsaSet, MlKemSet, SlhDsaSet};
use hsm::keys as hk;
use hsm::templates::KeyAttrs;
use hsm::{Pool, PoolConfig};
use p11::sys::*;
use p11::{Mechanism, ObjectHandle, Session, Template};

use crate::stats::{buckets, new_histogram, summarize, LatencySummary};

/// What a probe does on each call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum ProbeOp {
    Random32,
    /// `C_OpenSession` + `C_CloseSession` (a login cannot be timed while the console is
    /// logged in: the token answers `CKR_USER_ALREADY_LOGGED_IN` at once).
    SessionOpen,
    AesGcm {
        bytes: u32,
    },
    EcdsaP256Sign,
    Rsa2048Sign,
    Ed25519Sign,
    MlDsaSign {
        set: MlDsaSet,
    },
    MlDsaVerify {
        set: MlDsaSet,
    },
    MlKemEncaps {
        set: MlKemSet,
    },
    MlKemDecaps {
        set: MlKemSet,
    },
    /// On an ephemeral two-level tree (H10/H5, W4: 32,768 signatures), never an officer's key.
    HssSign,
    HssVerify,
    /// The same with RFC 9858's SHA-256/192 types (M24 H10/H5, N24 W4).
    HssM24Sign,
    HssM24Verify,
    /// Pure SLH-DSA, per FIPS 205 parameter set (runs stored before the set was named were
    /// SHA2-128f).
    SlhDsaSign {
        #[serde(default = "slh_dsa_probe_default")]
        set: SlhDsaSet,
    },
    SlhDsaVerify {
        set: SlhDsaSet,
    },
}

fn slh_dsa_probe_default() -> SlhDsaSet {
    SlhDsaSet::Sha2_128f
}

impl ProbeOp {
    /// Every probe, for listing.
    pub fn catalog() -> Vec<ProbeOp> {
        let mut v = vec![
            ProbeOp::Random32,
            ProbeOp::SessionOpen,
            ProbeOp::AesGcm { bytes: 1024 },
            ProbeOp::EcdsaP256Sign,
            ProbeOp::Rsa2048Sign,
            ProbeOp::Ed25519Sign,
        ];
        for set in [MlDsaSet::P44, MlDsaSet::P65, MlDsaSet::P87] {
            v.push(ProbeOp::MlDsaSign { set });
            v.push(ProbeOp::MlDsaVerify { set });
        }
        for set in MlKemSet::ALL {
            v.push(ProbeOp::MlKemEncaps { set });
            v.push(ProbeOp::MlKemDecaps { set });
        }
        v.extend([
            ProbeOp::HssSign,
            ProbeOp::HssVerify,
            ProbeOp::HssM24Sign,
            ProbeOp::HssM24Verify,
        ]);
        for set in SlhDsaSet::ALL {
            v.push(ProbeOp::SlhDsaSign { set });
            v.push(ProbeOp::SlhDsaVerify { set });
        }
        v
    }

    /// The CLI name: `random32`, `aes-gcm-1k`, `ml-dsa-65-sign`, `ml-kem-768-encaps`, …
    pub fn name(&self) -> String {
        let lower = |s: &str| s.to_ascii_lowercase();
        match self {
            ProbeOp::Random32 => "random32".into(),
            ProbeOp::SessionOpen => "session-open".into(),
            ProbeOp::AesGcm { bytes } if bytes % 1024 == 0 => format!("aes-gcm-{}k", bytes / 1024),
            ProbeOp::AesGcm { bytes } => format!("aes-gcm-{bytes}"),
            ProbeOp::EcdsaP256Sign => "ecdsa-p256-sign".into(),
            ProbeOp::Rsa2048Sign => "rsa-2048-sign".into(),
            ProbeOp::Ed25519Sign => "ed25519-sign".into(),
            ProbeOp::MlDsaSign { set } => format!("{}-sign", lower(set.name())),
            ProbeOp::MlDsaVerify { set } => format!("{}-verify", lower(set.name())),
            ProbeOp::MlKemEncaps { set } => format!("{}-encaps", lower(set.name())),
            ProbeOp::MlKemDecaps { set } => format!("{}-decaps", lower(set.name())),
            ProbeOp::HssSign => "hss-sign".into(),
            ProbeOp::HssVerify => "hss-verify".into(),
            ProbeOp::HssM24Sign => "hss-m24-sign".into(),
            ProbeOp::HssM24Verify => "hss-m24-verify".into(),
            ProbeOp::SlhDsaSign { set } => format!("{}-sign", lower(set.name())),
            ProbeOp::SlhDsaVerify { set } => format!("{}-verify", lower(set.name())),
        }
    }

    pub fn parse(s: &str) -> Option<ProbeOp> {
        let s = s.trim().to_ascii_lowercase();
        if let Some(size) = s.strip_prefix("aes-gcm-") {
            let bytes = match size.strip_suffix('k') {
                Some(k) => k.parse::<u32>().ok()?.checked_mul(1024)?,
                None => size.parse().ok()?,
            };
            return (1..=1 << 20)
                .contains(&bytes)
                .then_some(ProbeOp::AesGcm { bytes });
        }
        if s == "login" {
            return Some(ProbeOp::SessionOpen);
        }
        ProbeOp::catalog().into_iter().find(|o| o.name() == s)
    }

    /// Mechanisms the partition must list for this probe.
    pub fn mechanisms(&self) -> Vec<u64> {
        match self {
            ProbeOp::Random32 | ProbeOp::SessionOpen => vec![],
            ProbeOp::AesGcm { .. } => vec![CKM_AES_KEY_GEN, CKM_AES_GCM],
            ProbeOp::EcdsaP256Sign => vec![CKM_EC_KEY_PAIR_GEN, CKM_ECDSA],
            ProbeOp::Rsa2048Sign => vec![CKM_RSA_PKCS_KEY_PAIR_GEN, CKM_RSA_PKCS_PSS],
            ProbeOp::Ed25519Sign => vec![CKM_EC_EDWARDS_KEY_PAIR_GEN, CKM_EDDSA],
            ProbeOp::MlDsaSign { .. } | ProbeOp::MlDsaVerify { .. } => {
                vec![CKM_ML_DSA_KEY_PAIR_GEN, CKM_ML_DSA]
            }
            ProbeOp::MlKemEncaps { .. } | ProbeOp::MlKemDecaps { .. } => {
                vec![CKM_ML_KEM_KEY_PAIR_GEN, CKM_ML_KEM]
            }
            ProbeOp::HssSign | ProbeOp::HssVerify | ProbeOp::HssM24Sign | ProbeOp::HssM24Verify => {
                vec![CKM_HSS_KEY_PAIR_GEN, CKM_HSS]
            }
            ProbeOp::SlhDsaSign { .. } | ProbeOp::SlhDsaVerify { .. } => {
                vec![CKM_SLH_DSA_KEY_PAIR_GEN, CKM_SLH_DSA]
            }
        }
    }

    pub fn mechanism_name(&self) -> String {
        if *self == ProbeOp::SessionOpen {
            return "C_OpenSession".into();
        }
        self.mechanisms()
            .last()
            .map(|m| p11::names::mechanism_name(*m, p11::Family::Generic).into_owned())
            .unwrap_or_else(|| "C_GenerateRandom".into())
    }

    /// Payload bytes per call.
    pub fn payload(&self) -> u32 {
        match self {
            ProbeOp::Random32 => 32,
            ProbeOp::AesGcm { bytes } => *bytes,
            ProbeOp::SessionOpen | ProbeOp::MlKemEncaps { .. } | ProbeOp::MlKemDecaps { .. } => 0,
            _ => 32,
        }
    }

    /// How many calls the probe's key allows (HSS trees run out).
    pub fn call_limit(&self) -> Option<u64> {
        matches!(self, ProbeOp::HssSign | ProbeOp::HssM24Sign).then_some(32_768 - 16)
    }
}

/// How long a run goes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ProbeMode {
    /// This many calls in total (shared by the workers).
    Count {
        calls: u64,
    },
    Duration {
        seconds: f64,
    },
    /// A fixed arrival rate (calls per second, all workers together) for a duration; latency
    /// counts from each call's scheduled start (coordinated-omission correction).
    Rate {
        per_second: f64,
        seconds: f64,
    },
}

/// How each timed call reaches the token: the way the console does (a pooled session, the
/// key's handle kept), or the ways applications often do, which the seed's "10× gap between
/// client languages" usually comes from. (A login per call cannot be timed from a console
/// that is logged in: a token keeps one login per application, so `C_Login` answers at
/// once that it is already logged in.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
pub enum CallProfile {
    /// A session of the pool, the key's handle found once.
    #[default]
    Pool,
    /// `C_OpenSession` before and `C_CloseSession` after every call.
    SessionPerCall,
    /// `C_FindObjectsInit`/`C_FindObjects`/`C_FindObjectsFinal` for the key before every
    /// call, on the pooled session.
    FindPerCall,
}

impl CallProfile {
    pub const ALL: [CallProfile; 3] = [
        CallProfile::Pool,
        CallProfile::SessionPerCall,
        CallProfile::FindPerCall,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CallProfile::Pool => "pool",
            CallProfile::SessionPerCall => "session-per-call",
            CallProfile::FindPerCall => "find-per-call",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct ProbeRequest {
    pub op: ProbeOp,
    pub mode: ProbeMode,
    /// One run with this many workers…
    pub workers: u32,
    /// …or a sweep over these worker counts (e.g. 1, 2, 4, 8).
    pub sweep: Vec<u32>,
    /// Untimed calls per worker before timing starts.
    pub warmup: u32,
    /// How each call reaches the token (requests stored before it was asked: the pool).
    #[serde(default)]
    pub profile: CallProfile,
}

/// A point of the live series: latency percentiles and throughput in one interval.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct SeriesPoint {
    pub t: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub ops_per_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct RunResult {
    pub workers: u32,
    pub calls: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub seconds: f64,
    pub throughput_per_s: f64,
    pub first_call_us: Option<f64>,
    pub latency: LatencySummary,
    pub series: Vec<SeriesPoint>,
    /// (upper bound µs, count), log-spaced.
    pub histogram: Vec<(f64, u64)>,
    /// The console process's CPU time during the run ÷ (the run's wall time × this machine's
    /// cores): 1.0 when it kept every core busy. It includes a module loaded into the
    /// process (lunasim, SoftHSM2, Kryoptic); absent in runs stored before it was measured.
    #[serde(default)]
    pub client_cpu: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct SweepPoint {
    pub workers: u32,
    pub throughput_per_s: f64,
    pub mean_us: f64,
    pub p99_us: f64,
    /// Throughput ÷ (one worker's throughput × workers).
    pub efficiency: f64,
    /// [`RunResult::client_cpu`] of the run.
    #[serde(default)]
    pub client_cpu: Option<f64>,
}

/// Live progress while a run goes.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ProbeProgress {
    pub workers: u32,
    pub run: u32,
    pub runs: u32,
    pub calls: u64,
    /// Calls planned (count mode) or the seconds planned, for the progress bar.
    pub fraction: f64,
    pub point: Option<SeriesPoint>,
}

/// Where the ceiling is, from a sweep.
pub fn verdict(points: &[SweepPoint]) -> Option<String> {
    sweep_verdict(points).map(|v| v.explain())
}

/// What a sweep says about the ceiling, with the figures the sentence quotes (so each
/// language can write it; [`SweepVerdict::explain`] is the English).
#[derive(Debug, Clone, PartialEq)]
pub enum SweepVerdict {
    /// Throughput flat while latency grows: the HSM is the limit.
    Ceiling {
        best_per_s: f64,
        from_workers: u32,
        to_workers: u32,
        from_per_s: f64,
        to_per_s: f64,
        latency_growth: f64,
    },
    /// Throughput grows with the workers (≥ 70 % efficiency).
    Scales {
        workers: u32,
        throughput_per_s: f64,
        efficiency: f64,
        one_worker_per_s: f64,
    },
    /// Between the two: the host shares the limit.
    Shared {
        efficiency: f64,
        workers: u32,
        host_cores: usize,
    },
    /// Throughput stopped growing while the console's own process kept (nearly) every core
    /// of this machine busy: the ceiling measured is this computer's, not the HSM's.
    ClientCeiling {
        best_per_s: f64,
        workers: u32,
        cpu_percent: f64,
        host_cores: usize,
    },
}

/// From this share of all cores used by the console's process, a sweep that stops scaling
/// is said to be limited by this computer.
pub const CLIENT_SATURATED: f64 = 0.85;

fn host_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Where the ceiling is, from a sweep of at least two points.
pub fn sweep_verdict(points: &[SweepPoint]) -> Option<SweepVerdict> {
    if points.len() < 2 {
        return None;
    }
    let first = &points[0];
    let last = &points[points.len() - 1];
    let best = points
        .iter()
        .map(|p| p.throughput_per_s)
        .fold(0.0, f64::max);
    let prev = &points[points.len() - 2];
    let flat = last.throughput_per_s < prev.throughput_per_s * 1.10;
    let latency_grows = last.mean_us > prev.mean_us * 1.5;
    let saturated = last.client_cpu.is_some_and(|c| c >= CLIENT_SATURATED);
    Some(if saturated && (flat || last.efficiency < 0.7) {
        SweepVerdict::ClientCeiling {
            best_per_s: best,
            workers: last.workers,
            cpu_percent: 100.0 * last.client_cpu.unwrap_or(0.0),
            host_cores: host_cores(),
        }
    } else if flat && latency_grows {
        SweepVerdict::Ceiling {
            best_per_s: best,
            from_workers: prev.workers,
            to_workers: last.workers,
            from_per_s: prev.throughput_per_s,
            to_per_s: last.throughput_per_s,
            latency_growth: last.mean_us / prev.mean_us,
        }
    } else if last.efficiency >= 0.7 {
        SweepVerdict::Scales {
            workers: last.workers,
            throughput_per_s: last.throughput_per_s,
            efficiency: last.efficiency,
            one_worker_per_s: first.throughput_per_s,
        }
    } else {
        SweepVerdict::Shared {
            efficiency: last.efficiency,
            workers: last.workers,
            host_cores: host_cores(),
        }
    })
}

impl SweepVerdict {
    /// The verdict in English (what `hsmc probe` prints and the report keeps).
    pub fn explain(&self) -> String {
        match *self {
            SweepVerdict::Ceiling {
                best_per_s,
                from_workers,
                to_workers,
                from_per_s,
                to_per_s,
                latency_growth,
            } => format!(
                "Ceiling in the HSM at about {best_per_s:.0} ops/s: from {from_workers} to {to_workers} workers throughput stayed flat ({from_per_s:.0} → {to_per_s:.0} ops/s) while mean latency grew {latency_growth:.1}× — more workers only queue. Add HSMs, not sessions."
            ),
            SweepVerdict::Scales {
                workers,
                throughput_per_s,
                efficiency,
                one_worker_per_s,
            } => format!(
                "Scales with workers: {workers} workers give {throughput_per_s:.0} ops/s, {:.0} % of {workers}× one worker ({one_worker_per_s:.0} ops/s). No ceiling reached in this sweep.",
                100.0 * efficiency
            ),
            SweepVerdict::Shared {
                efficiency,
                workers,
                host_cores,
            } => format!(
                "Throughput grows less than the workers ({:.0} % efficiency at {workers} workers); the limit is shared between the HSM and the host (CPU cores of this machine: {host_cores}).",
                100.0 * efficiency
            ),
            SweepVerdict::ClientCeiling {
                best_per_s,
                workers,
                cpu_percent,
                host_cores,
            } => format!(
                "Ceiling on this computer, not in the HSM: at {workers} workers the console's process (with any module loaded into it, such as lunasim) used {cpu_percent:.0} % of this machine's {host_cores} cores while throughput stopped at about {best_per_s:.0} ops/s. Probe from a machine with more cores, or with the module out of process, before sizing HSMs."
            ),
        }
    }
}

/// From a measured ceiling and a target rate: how many HSMs, then how many sessions per HSM
/// (Little's law on the measured latency, with 25 % headroom) — in that order.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct CapacityPlan {
    pub target_per_s: f64,
    pub ceiling_per_s: f64,
    pub hsms: u32,
    pub per_hsm_per_s: f64,
    pub pool_size_per_hsm: u32,
    pub explanation: String,
}

pub fn capacity(ceiling_per_s: f64, mean_latency_us: f64, target_per_s: f64) -> CapacityPlan {
    let usable = ceiling_per_s * 0.8;
    let hsms = if usable > 0.0 {
        (target_per_s / usable).ceil().max(1.0) as u32
    } else {
        1
    };
    let per = target_per_s / hsms as f64;
    let pool = ((per * mean_latency_us / 1e6) * 1.25).ceil().max(1.0) as u32;
    CapacityPlan {
        target_per_s,
        ceiling_per_s,
        hsms,
        per_hsm_per_s: per,
        pool_size_per_hsm: pool,
        explanation: format!(
            "{hsms} HSM{} (each kept at ≤ 80 % of its {ceiling_per_s:.0} ops/s ceiling), then {pool} session{} per HSM for {per:.0} ops/s at {:.2} ms per call. More sessions cannot lift an HSM's ceiling.",
            if hsms == 1 { "" } else { "s" },
            if pool == 1 { "" } else { "s" },
            mean_latency_us / 1000.0
        ),
    }
}

/// Nanoseconds one timed call costs the probe itself (two clock reads and a histogram
/// record), measured on a no-op.
pub fn overhead_ns() -> f64 {
    let n = 200_000u64;
    let mut h = new_histogram();
    let mut sink = 0u64;
    let t0 = Instant::now();
    for i in 0..n {
        sink = sink.wrapping_add(std::hint::black_box(i));
    }
    let untimed = t0.elapsed();
    let t1 = Instant::now();
    for i in 0..n {
        let a = Instant::now();
        sink = sink.wrapping_add(std::hint::black_box(i));
        h.saturating_record(a.elapsed().as_nanos() as u64 + 1);
    }
    let timed = t1.elapsed();
    std::hint::black_box(sink);
    (timed.saturating_sub(untimed)).as_nanos() as f64 / n as f64
}

/// Keys and inputs made before timing.
struct Fixture {
    key: ObjectHandle,
    public: Option<ObjectHandle>,
    /// The key's `CKA_ID` and class, for the find-per-call profile.
    key_id: Vec<u8>,
    key_class: CK_OBJECT_CLASS,
    data: Vec<u8>,
    signature: Vec<u8>,
    ciphertext: Vec<u8>,
    created: Vec<ObjectHandle>,
}

fn derived() -> Template {
    Template::new()
        .ulong(CKA_CLASS, CKO_SECRET_KEY)
        .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
        .bool(CKA_TOKEN, false)
        .bool(CKA_EXTRACTABLE, true)
        .bool(CKA_SENSITIVE, false)
}

fn generate(s: &Session, spec: KeySpec) -> hsm::Result<hk::Generated> {
    let id = hk::new_key_id(s)?;
    hk::generate(
        s,
        &spec,
        &KeyAttrs {
            label: format!("hsm-console probe {}", hex::encode(&id[..4])),
            id,
            token: false,
        },
    )
}

fn setup(s: &Session, op: ProbeOp) -> hsm::Result<Fixture> {
    let mut f = Fixture {
        key: 0,
        public: None,
        key_id: Vec::new(),
        key_class: CKO_PRIVATE_KEY,
        data: vec![0x5A; op.payload() as usize],
        signature: Vec::new(),
        ciphertext: Vec::new(),
        created: Vec::new(),
    };
    let keep = |g: &hk::Generated, f: &mut Fixture| {
        f.key = g.private;
        f.public = g.public;
        f.created.push(g.private);
        f.created.extend(g.public);
    };
    match op {
        ProbeOp::Random32 | ProbeOp::SessionOpen => {}
        ProbeOp::AesGcm { .. } => keep(&generate(s, KeySpec::Aes { bits: 256 })?, &mut f),
        ProbeOp::EcdsaP256Sign => keep(&generate(s, KeySpec::Ec { curve: Curve::P256 })?, &mut f),
        ProbeOp::Rsa2048Sign => keep(&generate(s, KeySpec::Rsa { bits: 2048 })?, &mut f),
        ProbeOp::Ed25519Sign => keep(
            &generate(
                s,
                KeySpec::Ec {
                    curve: Curve::Ed25519,
                },
            )?,
            &mut f,
        ),
        ProbeOp::MlDsaSign { set } | ProbeOp::MlDsaVerify { set } => {
            keep(&generate(s, KeySpec::MlDsa { set })?, &mut f);
            f.signature = s.sign(&Mechanism::new(CKM_ML_DSA), f.key, &f.data)?;
        }
        ProbeOp::MlKemEncaps { set } | ProbeOp::MlKemDecaps { set } => {
            keep(&generate(s, KeySpec::MlKem { set })?, &mut f);
            let (ct, k) = s.encapsulate(
                &Mechanism::new(CKM_ML_KEM),
                f.public.unwrap_or(f.key),
                &mut derived(),
            )?;
            f.ciphertext = ct;
            f.created.push(k);
        }
        ProbeOp::HssSign | ProbeOp::HssVerify | ProbeOp::HssM24Sign | ProbeOp::HssM24Verify => {
            let levels = if matches!(op, ProbeOp::HssM24Sign | ProbeOp::HssM24Verify) {
                vec![
                    (LmsType::M24H10, LmotsType::N24W4),
                    (LmsType::M24H5, LmotsType::N24W4),
                ]
            } else {
                vec![(LmsType::H10, LmotsType::W4), (LmsType::H5, LmotsType::W4)]
            };
            let params = HssParams::new(levels).map_err(|e| hsm::HsmError::InvalidInput(e.text))?;
            keep(&generate(s, KeySpec::Hss { params })?, &mut f);
            f.signature = s.sign(&Mechanism::new(CKM_HSS), f.key, &f.data)?;
        }
        ProbeOp::SlhDsaSign { set } | ProbeOp::SlhDsaVerify { set } => {
            keep(&generate(s, KeySpec::SlhDsa { set })?, &mut f);
            if matches!(op, ProbeOp::SlhDsaVerify { .. }) {
                f.signature = s.sign(&Mechanism::new(CKM_SLH_DSA), f.key, &f.data)?;
            }
        }
    }
    if f.key != 0 {
        let summary = hk::summary(s, f.key)?;
        f.key_id = hex::decode(&summary.id_hex).unwrap_or_default();
        f.key_class = if summary.class == "SECRET_KEY" {
            CKO_SECRET_KEY
        } else {
            CKO_PRIVATE_KEY
        };
    }
    Ok(f)
}

/// One call. Returns when the token answered; derived keys are destroyed after the caller
/// took the end time (`cleanup`).
fn call(
    s: &Session,
    op: ProbeOp,
    f: &Fixture,
    i: u64,
    module: &Arc<p11::Module>,
    slot: u64,
    cleanup: &mut Vec<ObjectHandle>,
) -> p11::Result<()> {
    match op {
        ProbeOp::Random32 => {
            let mut b = [0u8; 32];
            s.generate_random(&mut b)
        }
        ProbeOp::SessionOpen => {
            let x = module.open_session(slot, false)?;
            drop(x);
            Ok(())
        }
        ProbeOp::AesGcm { .. } => {
            let mut iv = [0u8; 12];
            iv[4..].copy_from_slice(&i.to_be_bytes());
            s.encrypt(&Mechanism::aes_gcm(&iv, b"", 128), f.key, &f.data)
                .map(|_| ())
        }
        ProbeOp::EcdsaP256Sign => s
            .sign(&Mechanism::new(CKM_ECDSA), f.key, &f.data)
            .map(|_| ()),
        ProbeOp::Rsa2048Sign => s
            .sign(
                &Mechanism::rsa_pss(CKM_RSA_PKCS_PSS, CKM_SHA256, CKG_MGF1_SHA256, 32),
                f.key,
                &f.data,
            )
            .map(|_| ()),
        ProbeOp::Ed25519Sign => s
            .sign(&Mechanism::new(CKM_EDDSA), f.key, &f.data)
            .map(|_| ()),
        ProbeOp::MlDsaSign { .. } => s
            .sign(&Mechanism::new(CKM_ML_DSA), f.key, &f.data)
            .map(|_| ()),
        ProbeOp::MlDsaVerify { .. } => s
            .verify(
                &Mechanism::new(CKM_ML_DSA),
                f.public.unwrap_or(f.key),
                &f.data,
                &f.signature,
            )
            .and_then(verified),
        ProbeOp::MlKemEncaps { .. } => s
            .encapsulate(
                &Mechanism::new(CKM_ML_KEM),
                f.public.unwrap_or(f.key),
                &mut derived(),
            )
            .map(|(_, k)| cleanup.push(k)),
        ProbeOp::MlKemDecaps { .. } => s
            .decapsulate(
                &Mechanism::new(CKM_ML_KEM),
                f.key,
                &mut derived(),
                &f.ciphertext,
            )
            .map(|k| cleanup.push(k)),
        ProbeOp::HssSign | ProbeOp::HssM24Sign => {
            s.sign(&Mechanism::new(CKM_HSS), f.key, &f.data).map(|_| ())
        }
        ProbeOp::HssVerify | ProbeOp::HssM24Verify => s
            .verify(
                &Mechanism::new(CKM_HSS),
                f.public.unwrap_or(f.key),
                &f.data,
                &f.signature,
            )
            .and_then(verified),
        ProbeOp::SlhDsaSign { .. } => s
            .sign(&Mechanism::new(CKM_SLH_DSA), f.key, &f.data)
            .map(|_| ()),
        ProbeOp::SlhDsaVerify { .. } => s
            .verify(
                &Mechanism::new(CKM_SLH_DSA),
                f.public.unwrap_or(f.key),
                &f.data,
                &f.signature,
            )
            .and_then(verified),
    }
}

/// A verify probe's call fails when the token says its own signature does not verify.
fn verified(ok: bool) -> p11::Result<()> {
    if ok {
        Ok(())
    } else {
        Err(p11::Error::InvalidArgument(
            "the probe's signature did not verify".into(),
        ))
    }
}

/// What the workers of one run share with each other and with the monitor.
struct Shared {
    /// Latencies since the monitor last looked (workers flush into it every 50 ms).
    interval: Mutex<Histogram<u64>>,
    /// Calls claimed from the run's budget.
    done: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
    first_call_ns: Mutex<Option<u64>>,
    /// When the last call of the run ended, in ns from the start: the run's length (the
    /// monitor notices the end only at its next 250 ms look).
    last_end_ns: AtomicU64,
    /// Set on cancel: workers stop after their current call.
    stop: AtomicBool,
    /// Everyone starts together, after warming up.
    barrier: Barrier,
    start: Mutex<Instant>,
}

impl Shared {
    fn note_error(&self, e: &impl std::fmt::Display) {
        self.first_error.lock().get_or_insert_with(|| e.to_string());
    }
}

/// One run of a sweep: what to call, how, with how many workers, and where it stands.
#[derive(Clone, Copy)]
struct RunPlan {
    op: ProbeOp,
    mode: ProbeMode,
    profile: CallProfile,
    workers: u32,
    warmup: u32,
    run: u32,
    runs: u32,
}

impl RunPlan {
    /// The run's budget: how many calls at most, and for how long.
    fn budget(&self) -> (u64, f64) {
        let limit = self.op.call_limit().unwrap_or(u64::MAX);
        match self.mode {
            ProbeMode::Count { calls } => (calls.min(limit), f64::INFINITY),
            ProbeMode::Duration { seconds } => (limit, seconds),
            ProbeMode::Rate {
                per_second,
                seconds,
            } => (((per_second * seconds).ceil() as u64).min(limit), seconds),
        }
    }
}

/// Run one worker count: start the workers, watch them, sum up.
fn run_once(
    pool: &Pool,
    plan: &RunPlan,
    f: &Arc<Fixture>,
    cancel: &AtomicBool,
    progress: &(dyn Fn(ProbeProgress) + Send + Sync),
) -> RunResult {
    let (total_calls, seconds) = plan.budget();
    let shared = Arc::new(Shared {
        interval: Mutex::new(new_histogram()),
        done: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        first_error: Mutex::new(None),
        first_call_ns: Mutex::new(None),
        last_end_ns: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        barrier: Barrier::new(plan.workers as usize + 1),
        start: Mutex::new(Instant::now()),
    });
    let handles: Vec<_> = (0..plan.workers)
        .map(|w| {
            let worker = Worker {
                index: w,
                plan: *plan,
                total_calls,
                seconds,
                shared: shared.clone(),
                fixture: f.clone(),
                module: pool.module().clone(),
                slot: pool.slot(),
            };
            let pool = pool.clone();
            std::thread::spawn(move || worker.run(&pool))
        })
        .collect();
    // Start everyone together.
    *shared.start.lock() = Instant::now() + Duration::from_millis(5);
    shared.barrier.wait();
    let start = *shared.start.lock();
    let cpu_at_start = cpu_time::ProcessTime::try_now().ok();
    let watch = Monitor {
        plan,
        shared: &shared,
        total_calls,
        seconds,
        start,
    };
    let (total, series) = watch.until_done(&handles, cancel, progress);
    for h in handles {
        let _ = h.join();
    }
    let cpu = cpu_at_start.and_then(|t| t.try_elapsed().ok());
    run_result(plan.workers, &shared, total, series, start, cpu)
}

/// One worker of a run, on its own pool session.
struct Worker {
    index: u32,
    plan: RunPlan,
    total_calls: u64,
    seconds: f64,
    shared: Arc<Shared>,
    fixture: Arc<Fixture>,
    module: Arc<p11::Module>,
    slot: u64,
}

impl Worker {
    fn run(self, pool: &Pool) {
        let r = pool.run("probe", |s| {
            self.warm_up(s);
            self.shared.barrier.wait();
            self.timed_calls(s)
        });
        if let Err(e) = r {
            self.shared.note_error(&e);
        }
    }

    fn call(&self, s: &Session, i: u64, cleanup: &mut Vec<ObjectHandle>) -> p11::Result<()> {
        let f = &self.fixture;
        let (op, module, slot) = (self.plan.op, &self.module, self.slot);
        match self.plan.profile {
            CallProfile::Pool => call(s, op, f, i, module, slot, cleanup),
            CallProfile::SessionPerCall => {
                // Derived keys are session objects of this session: gone when it closes.
                let own = module.open_session(slot, true)?;
                let r = call(&own, op, f, i, module, slot, &mut Vec::new());
                drop(own);
                r
            }
            // A probe without a key (random, session open) has nothing to find.
            CallProfile::FindPerCall if f.key == 0 => call(s, op, f, i, module, slot, cleanup),
            CallProfile::FindPerCall => {
                let found = s.find_objects(
                    &mut Template::new()
                        .ulong(CKA_CLASS, f.key_class)
                        .bytes(CKA_ID, &f.key_id),
                )?;
                match found.first() {
                    Some(h) if *h == f.key => call(s, op, f, i, module, slot, cleanup),
                    _ => Err(p11::Error::InvalidArgument(
                        "the probe's key was not found by its CKA_ID".into(),
                    )),
                }
            }
        }
    }

    /// Untimed calls first (caches, sessions, lazily loaded code paths).
    fn warm_up(&self, s: &Session) {
        let mut cleanup = Vec::new();
        for i in 0..self.plan.warmup {
            let _ = self.call(
                s,
                u64::from(i) + (u64::from(self.index) << 40),
                &mut cleanup,
            );
            for k in cleanup.drain(..) {
                let _ = s.destroy_object(k);
            }
        }
    }

    /// For a fixed rate: when this worker's next call is due (each worker takes its share
    /// of the arrivals, offset from the others).
    fn pacing(&self) -> Option<Duration> {
        match self.plan.mode {
            ProbeMode::Rate { per_second, .. } => Some(Duration::from_secs_f64(
                f64::from(self.plan.workers) / per_second,
            )),
            _ => None,
        }
    }

    /// The timed loop: claim a call from the shared budget, wait for its slot at a fixed
    /// rate, call, record the latency (from the scheduled start at a fixed rate, so
    /// coordinated omission is corrected).
    fn timed_calls(&self, s: &Session) -> p11::Result<()> {
        let shared = &*self.shared;
        let (w, workers) = (self.index, self.plan.workers);
        let start = *shared.start.lock();
        let pacing = self.pacing();
        let mut local = new_histogram();
        let mut cleanup = Vec::new();
        let mut n: u64 = 0;
        let mut last_flush = Instant::now();
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                break;
            }
            let k = shared.done.fetch_add(1, Ordering::Relaxed);
            if k >= self.total_calls {
                shared.done.fetch_sub(1, Ordering::Relaxed);
                break;
            }
            let scheduled = match pacing {
                Some(iv) => {
                    let at = start + iv * n as u32 + iv * w / workers;
                    let now = Instant::now();
                    if at > now {
                        std::thread::sleep(at - now);
                    }
                    at
                }
                None => Instant::now(),
            };
            if start.elapsed().as_secs_f64() >= self.seconds {
                shared.done.fetch_sub(1, Ordering::Relaxed);
                break;
            }
            let t = if pacing.is_some() {
                scheduled
            } else {
                Instant::now()
            };
            let r = self.call(
                s,
                (u64::from(w) << 40) | (u64::from(self.plan.warmup) + n),
                &mut cleanup,
            );
            let ns = t.elapsed().as_nanos() as u64 + 1;
            shared
                .last_end_ns
                .fetch_max(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
            for k in cleanup.drain(..) {
                let _ = s.destroy_object(k);
            }
            n += 1;
            match r {
                Ok(()) => {
                    if k == 0 {
                        *shared.first_call_ns.lock() = Some(ns);
                    }
                    // Beyond the histogram's hour-long range a call counts as an hour,
                    // never dropped.
                    local.saturating_record(ns);
                }
                Err(e) => {
                    shared.errors.fetch_add(1, Ordering::Relaxed);
                    shared.note_error(&e);
                    if matches!(
                        e.class(),
                        p11::ErrorClass::Disconnected | p11::ErrorClass::SessionInvalid
                    ) {
                        return Err(e);
                    }
                }
            }
            if last_flush.elapsed() >= Duration::from_millis(50) {
                shared.interval.lock().add(&local).ok();
                local.reset();
                last_flush = Instant::now();
            }
        }
        shared.interval.lock().add(&local).ok();
        Ok(())
    }
}

/// Watches a run from the calling thread: a progress report (with a live series point)
/// every 250 ms until every worker has finished; cancel stops the workers.
struct Monitor<'a> {
    plan: &'a RunPlan,
    shared: &'a Shared,
    total_calls: u64,
    seconds: f64,
    start: Instant,
}

impl Monitor<'_> {
    fn until_done(
        &self,
        handles: &[std::thread::JoinHandle<()>],
        cancel: &AtomicBool,
        progress: &(dyn Fn(ProbeProgress) + Send + Sync),
    ) -> (Histogram<u64>, Vec<SeriesPoint>) {
        let mut total = new_histogram();
        let mut series = Vec::new();
        let mut last = (Instant::now(), 0u64);
        loop {
            std::thread::sleep(Duration::from_millis(250));
            let finished = handles.iter().all(|h| h.is_finished());
            if cancel.load(Ordering::Relaxed) {
                self.shared.stop.store(true, Ordering::Relaxed);
            }
            let interval = std::mem::replace(&mut *self.shared.interval.lock(), new_histogram());
            let done = self.shared.done.load(Ordering::Relaxed);
            let now = Instant::now();
            let point = (!interval.is_empty()).then(|| SeriesPoint {
                t: now.duration_since(self.start).as_secs_f64(),
                p50_us: interval.value_at_quantile(0.5) as f64 / 1000.0,
                p99_us: interval.value_at_quantile(0.99) as f64 / 1000.0,
                ops_per_s: (done - last.1) as f64 / now.duration_since(last.0).as_secs_f64(),
            });
            total.add(&interval).ok();
            if let Some(p) = &point {
                series.push(p.clone());
            }
            last = (now, done);
            progress(ProbeProgress {
                workers: self.plan.workers,
                run: self.plan.run,
                runs: self.plan.runs,
                calls: done,
                fraction: self.fraction(now, done),
                point,
            });
            if finished {
                return (total, series);
            }
        }
    }

    /// How far the run is: by time for a duration, by calls for a count.
    fn fraction(&self, now: Instant, done: u64) -> f64 {
        if self.seconds.is_finite() {
            (now.duration_since(self.start).as_secs_f64() / self.seconds).min(1.0)
        } else {
            done as f64 / self.total_calls.max(1) as f64
        }
    }
}

/// A finished run's figures.
fn run_result(
    workers: u32,
    shared: &Shared,
    mut total: Histogram<u64>,
    series: Vec<SeriesPoint>,
    start: Instant,
    cpu: Option<Duration>,
) -> RunResult {
    let leftover = std::mem::replace(&mut *shared.interval.lock(), new_histogram());
    total.add(&leftover).ok();
    let last_end = shared.last_end_ns.load(Ordering::Relaxed);
    let elapsed = if last_end > 0 {
        last_end as f64 / 1e9
    } else {
        start.elapsed().as_secs_f64().max(1e-9)
    };
    let calls = total.len();
    RunResult {
        workers,
        calls,
        errors: shared.errors.load(Ordering::Relaxed),
        first_error: shared.first_error.lock().clone(),
        seconds: elapsed,
        throughput_per_s: calls as f64 / elapsed,
        first_call_us: shared.first_call_ns.lock().map(|n| n as f64 / 1000.0),
        latency: summarize(&total),
        series,
        histogram: buckets(&total, 30),
        client_cpu: cpu.map(|c| c.as_secs_f64() / (elapsed * host_cores() as f64)),
    }
}

/// The whole probe: setup (untimed), one run or a sweep, teardown.
pub struct ProbeOutcome {
    pub runs: Vec<RunResult>,
    pub sweep: Vec<SweepPoint>,
    pub verdict: Option<String>,
    pub overhead_ns: f64,
    pub cancelled: bool,
}

pub fn run(
    module: &Arc<p11::Module>,
    slot: u64,
    req: &ProbeRequest,
    cancel: &AtomicBool,
    progress: &(dyn Fn(ProbeProgress) + Send + Sync),
) -> hsm::Result<ProbeOutcome> {
    let counts: Vec<u32> = if req.sweep.is_empty() {
        vec![req.workers.max(1)]
    } else {
        req.sweep.clone()
    };
    if counts.iter().any(|w| *w == 0 || *w > 64) {
        return Err(hsm::HsmError::InvalidInput(
            "workers must be between 1 and 64".into(),
        ));
    }
    let offered = module.mechanisms(slot)?;
    if let Some(m) = req
        .op
        .mechanisms()
        .into_iter()
        .find(|m| !offered.contains(m))
    {
        return Err(hsm::HsmError::Unsupported(format!(
            "this partition does not offer {} (needed by {})",
            p11::names::mechanism_name(m, module.family()),
            req.op.name()
        )));
    }
    let max = *counts.iter().max().unwrap_or(&1);
    let pool = Pool::new(
        module.clone(),
        slot,
        PoolConfig {
            size: max as usize,
            ..PoolConfig::default()
        },
    );
    let fixture = Arc::new(pool.run_service("probe.setup", |s| setup(s, req.op))?);
    let mut runs = Vec::new();
    for (i, w) in counts.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let plan = RunPlan {
            op: req.op,
            mode: req.mode,
            profile: req.profile,
            workers: *w,
            warmup: req.warmup,
            run: i as u32 + 1,
            runs: counts.len() as u32,
        };
        runs.push(run_once(&pool, &plan, &fixture, cancel, progress));
    }
    let created = fixture.created.clone();
    let _ = pool.run("probe.teardown", |s| {
        for h in &created {
            let _ = s.destroy_object(*h);
        }
        Ok(())
    });
    let base = runs.first().map(|r| r.throughput_per_s).unwrap_or(0.0);
    let sweep: Vec<SweepPoint> = if runs.len() > 1 {
        runs.iter()
            .map(|r| SweepPoint {
                workers: r.workers,
                throughput_per_s: r.throughput_per_s,
                mean_us: r.latency.mean_us,
                p99_us: r.latency.p99_us,
                efficiency: if base > 0.0 {
                    r.throughput_per_s / (base * f64::from(r.workers))
                } else {
                    0.0
                },
                client_cpu: r.client_cpu,
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(ProbeOutcome {
        verdict: verdict(&sweep),
        sweep,
        runs,
        overhead_ns: overhead_ns(),
        cancelled: cancel.load(Ordering::Relaxed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for op in ProbeOp::catalog() {
            assert_eq!(ProbeOp::parse(&op.name()), Some(op), "{}", op.name());
        }
        assert_eq!(
            ProbeOp::parse("aes-gcm-4k"),
            Some(ProbeOp::AesGcm { bytes: 4096 })
        );
        assert_eq!(
            ProbeOp::parse("ml-kem-768-encaps"),
            Some(ProbeOp::MlKemEncaps {
                set: MlKemSet::P768
            })
        );
        assert!(ProbeOp::parse("frobnicate").is_none());
        assert_eq!(ProbeOp::parse("hss-m24-sign"), Some(ProbeOp::HssM24Sign));
        assert_eq!(
            ProbeOp::HssM24Sign.call_limit(),
            ProbeOp::HssSign.call_limit()
        );
        assert_eq!(
            ProbeOp::parse("slh-dsa-shake-256s-verify"),
            Some(ProbeOp::SlhDsaVerify {
                set: SlhDsaSet::Shake256s
            })
        );
    }

    /// A run stored before SLH-DSA probes named their set reads back as the one probe
    /// there was (SHA2-128f); new runs keep their set.
    #[test]
    fn stored_slh_dsa_runs_keep_their_set() {
        let old: ProbeOp = serde_json::from_str(r#"{"op":"slh-dsa-sign"}"#).unwrap();
        assert_eq!(
            old,
            ProbeOp::SlhDsaSign {
                set: SlhDsaSet::Sha2_128f
            }
        );
        let new = ProbeOp::SlhDsaSign {
            set: SlhDsaSet::Shake192s,
        };
        let json = serde_json::to_string(&new).unwrap();
        assert_eq!(json, r#"{"op":"slh-dsa-sign","set":"Shake192s"}"#);
        assert_eq!(serde_json::from_str::<ProbeOp>(&json).unwrap(), new);
    }

    #[test]
    fn verdicts_tell_an_hsm_ceiling_from_scaling() {
        let p = |w: u32, t: f64, m: f64, e: f64| SweepPoint {
            workers: w,
            throughput_per_s: t,
            mean_us: m,
            p99_us: m * 2.0,
            efficiency: e,
            client_cpu: Some(0.1),
        };
        // The seed's Luna PQC table: flat at ~65 ops/s while latency doubles.
        let flat = [
            p(1, 64.0, 15_000.0, 1.0),
            p(2, 65.0, 30_000.0, 0.51),
            p(4, 65.5, 61_000.0, 0.26),
        ];
        assert!(verdict(&flat)
            .unwrap()
            .starts_with("Ceiling in the HSM at about 66 ops/s"));
        let scaling = [p(1, 1000.0, 1000.0, 1.0), p(2, 1950.0, 1020.0, 0.975)];
        assert!(verdict(&scaling)
            .unwrap()
            .starts_with("Scales with workers"));
        let shared = [p(1, 1000.0, 1000.0, 1.0), p(4, 2000.0, 1800.0, 0.5)];
        assert!(verdict(&shared)
            .unwrap()
            .starts_with("Throughput grows less than the workers (50 % efficiency at 4 workers)"));
        // The same flat table with the console's process keeping 95 % of the cores busy:
        // the ceiling is this computer's; below the threshold it stays the HSM's.
        let cpu = |pts: &[SweepPoint], c: f64| -> Vec<SweepPoint> {
            pts.iter()
                .map(|x| SweepPoint {
                    client_cpu: Some(c),
                    ..x.clone()
                })
                .collect()
        };
        assert_eq!(
            sweep_verdict(&cpu(&flat, 0.95)),
            Some(SweepVerdict::ClientCeiling {
                best_per_s: 65.5,
                workers: 4,
                cpu_percent: 95.0,
                host_cores: host_cores(),
            })
        );
        assert!(matches!(
            sweep_verdict(&cpu(&flat, 0.80)),
            Some(SweepVerdict::Ceiling { .. })
        ));
        assert!(matches!(
            sweep_verdict(&cpu(&shared, 0.90)),
            Some(SweepVerdict::ClientCeiling { workers: 4, .. })
        ));
        // Scaling well is scaling, however busy the process is.
        assert!(matches!(
            sweep_verdict(&cpu(&scaling, 0.97)),
            Some(SweepVerdict::Scales { .. })
        ));
    }

    #[test]
    fn capacity_decides_hsms_before_sessions() {
        let c = capacity(65.0, 15_000.0, 200.0);
        assert_eq!(c.hsms, 4, "200 ops/s at ≤ 52 ops/s each");
        assert_eq!(
            c.pool_size_per_hsm, 1,
            "50 ops/s × 15 ms × 1.25 = 0.94 → 1 session"
        );
        let c = capacity(10_000.0, 2_000.0, 3_000.0);
        assert_eq!((c.hsms, c.pool_size_per_hsm), (1, 8));
    }
}
