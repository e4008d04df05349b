//! The TypeScript types of everything that crosses IPC, generated from the Rust types.
//! `ui/src/bindings.ts` is this text; a test fails when it is stale
//! (`UPDATE_BINDINGS=1 cargo test -p console --test bindings` rewrites it).

use ts_rs::{Config, TS};

macro_rules! decls {
    ($cfg:expr; $($t:ty),* $(,)?) => {{
        let v: Vec<(String, String)> = vec![$( (<$t as TS>::name($cfg), <$t as TS>::decl($cfg)) ),*];
        v
    }};
}

/// The whole file.
pub fn typescript() -> String {
    // JavaScript numbers hold every integer the console sends (handles, counters, sizes)
    // exactly up to 2^53; none comes close.
    let cfg = &Config::new().with_large_int("number");
    use crate::audit_ops::*;
    use crate::error::*;
    use crate::keys::*;
    use crate::partitions::ConnectionView;
    use crate::settings::*;
    use crate::views::*;
    let mut all = decls!(cfg;
        ApiError, ErrorCode, Pkcs11Error,
        AppInfo, ModuleView, TokenView, SlotView, ConnectionView, UserKind, NamedSetting, StorageView, LunaView,
        PartitionView, MechanismView, AuditKeyView, LoginResult, GenerateRequest, PublicKeyView, GeneratedKey,
        KeyDetails, ExportedPublicKey, RecordView, ConsoleEvent, DestroyResult, DestroyFailure, JobEvent, AppStatus, KeySpecInfo, FileCheck,
        AuditStatusView, LastVerification, CheckpointView, ExportFormat, ExportVerdict, Settings, AuditSettings, AutoVerify, Theme,
        hsm::PoolStatus, hsm::BreakerState, hsm::keys::ObjectSummary, hsm::keys::Capabilities,
        hsm::keys::AttrDisplay, hsm::keys::AttributeView, hsm::algo::KeySpec, hsm::algo::MlDsaSet,
        hsm::algo::MlKemSet, hsm::algo::SlhDsaSet, hsm::algo::Curve, hsm::algo::LmsType, hsm::algo::LmotsType,
        hsm::algo::HssParams, hsm::pubkey::PublicKeyFormat, hsm::MetricsSnapshot, hsm::OpSnapshot,
        audit::Verdict, audit::Finding, audit::verify::CheckpointSummary, audit::export::ExportSummary,
        audit::export::Range, audit::store::Query, audit::Checkpoint,
        crate::sign::SignFormat, crate::sign::OnError, crate::sign::SignRequest, crate::sign::SigningKeyView,
        crate::sign::OutputView, crate::sign::FileOutcome, crate::sign::SignReport, crate::sign::SignProgress,
        crate::sign::CertificateView, signing::verify::VerifyReport, signing::verify::ManifestEntry,
        signing::alg::SigAlg, signing::alg::DigestAlg,
        crate::health::HssKeyView, crate::health::BinRate, crate::health::LunaStats, crate::health::StatsSnapshot,
        crate::health::StatsPoint, crate::probes::ProbeChoice, crate::probes::ProbeReport, crate::probes::ProbeSummary,
        bench::probe::ProbeOp, bench::probe::ProbeMode, bench::probe::ProbeRequest, bench::probe::SeriesPoint,
        bench::probe::RunResult, bench::probe::SweepPoint, bench::probe::ProbeProgress, bench::probe::CapacityPlan,
        bench::stats::LatencySummary, bench::charts::Series,
    );
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::from("// Generated from the Rust types by `crates/console/src/bindings.rs`. Do not edit:\n// run `make bindings` after changing a type that crosses IPC.\n\n");
    for (_, d) in all {
        out.push_str("export ");
        out.push_str(&d);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}
