//! Every kind of change to a token (`console::change::ChangeKind::ALL`) under every fault
//! lunasim can inject into the call that makes it — the call never reaching the HSM, the
//! call run and its answer lost (`"after":true`), a device error, a slow call — and with the
//! audit trail's store turned read-only in the middle of the run. For each case the officer's
//! answer, the token (read back after the fault is cleared) and the trail must agree:
//!
//! - the officer is never told a change happened that did not;
//! - nothing is done twice (one key, one object, one certificate at most);
//! - the trail holds the request and one outcome (`success` only when the token shows the
//!   change, `failure` only when it does not, `unknown` when the console could not tell);
//! - with the trail unavailable the change is refused (`AUDIT_UNAVAILABLE`) and the token
//!   is untouched;
//! - the trail verifies at the end.
//!
//! The kinds are matched exhaustively: a kind added to the engine does not compile here
//! until it has its case. Token initialization, which takes the trail's key with it, runs
//! in its own test.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use console::change::ChangeKind;
use console::objects::ImportRequest;
use console::sign::{OnError, SignFormat, SignRequest};
use console::views::{GenerateRequest, UserKind};
use console::{ApiError, Console, ErrorCode};
use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType};
use p11::sys::*;
use p11::Mechanism;
use testkit::pg::PgCluster;
use testkit::tools::pkcs11_tool_logs_in;
use testkit::{Backend, TestToken, SO_PIN, TOKEN_LABEL, USER_PIN};

use crate::common;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    /// The call fails before it reaches the token (the device went away).
    NotReached,
    /// The call runs, and its answer is replaced by a device error: the answer is lost.
    AnswerLost,
    /// The token answers with a device error.
    DeviceError,
    /// The call takes 1.5 s.
    Slow,
    /// The trail's store takes no record (PostgreSQL turned read-only, connections cut).
    TrailUnavailable,
}

const FAULTS: [Fault; 5] = [
    Fault::NotReached,
    Fault::AnswerLost,
    Fault::DeviceError,
    Fault::Slow,
    Fault::TrailUnavailable,
];

struct Matrix {
    c: Arc<Console>,
    pid: String,
    t: TestToken,
    pg: PgCluster,
    dir: tempfile::TempDir,
    user_pin: String,
    /// A wrap file made before the faults (for the unwrap cases, by `matrix_wrapper`).
    wrap_file: std::path::PathBuf,
}

/// What the token shows after a case: whether the change is there, and how many times.
#[derive(Debug)]
struct Seen {
    done: bool,
    count: usize,
}

impl Seen {
    /// `count` objects the change makes are on the token.
    fn counted(count: usize) -> Seen {
        Seen {
            done: count > 0,
            count,
        }
    }

    /// The change's effect is there (once) or not.
    fn once(done: bool) -> Seen {
        Seen {
            done,
            count: usize::from(done),
        }
    }
}

impl Matrix {
    async fn control(&self, cmd: &str) {
        let p = self.c.partition_ref(&self.pid).await.unwrap();
        p.module.module.sim_control(cmd).unwrap();
    }

    /// How many times lunasim has been called at `function` in this process.
    async fn calls(&self, function: &str) -> u64 {
        calls_at(&self.c.partition_ref(&self.pid).await.unwrap(), function)
    }

    fn trail_available(&self, on: bool) {
        let ro = if on { "off" } else { "on" };
        self.pg.psql(
            "postgres",
            &format!("ALTER DATABASE matrix SET default_transaction_read_only = {ro}"),
        );
        self.pg.psql(
            "postgres",
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'matrix' AND pid <> pg_backend_pid()",
        );
    }

    async fn keys(&self) -> Vec<hsm::keys::ObjectSummary> {
        self.c.list_keys(&self.pid).await.unwrap()
    }

    async fn labelled(&self, label: &str, class: &str) -> usize {
        self.keys()
            .await
            .iter()
            .filter(|o| o.label == label && o.class == class)
            .count()
    }

    async fn aes(&self, label: &str) -> u64 {
        self.c
            .admin()
            .generate_key(
                &self.pid,
                GenerateRequest {
                    spec: KeySpec::Aes { bits: 256 },
                    label: label.into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
            .unwrap()
            .private_handle
    }

    async fn p256(&self, label: &str) -> u64 {
        self.c
            .admin()
            .generate_key(
                &self.pid,
                GenerateRequest {
                    spec: KeySpec::Ec { curve: Curve::P256 },
                    label: label.into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
            .unwrap()
            .private_handle
    }

    async fn wrapper_now(&self) -> u64 {
        // As a window does: the key's handle from a listing (handles last one module
        // generation; the faults make new ones).
        self.keys()
            .await
            .into_iter()
            .find(|o| o.label == "matrix_wrapper")
            .unwrap()
            .handle
    }

    fn logs_in(&self, pin: &str) -> bool {
        pkcs11_tool_logs_in(&self.t.module_path, self.t.env(), TOKEN_LABEL, pin)
    }

    /// Logged in as the user again if a case left the partition logged out.
    async fn logged_in(&self) {
        let p = self.c.partition_ref(&self.pid).await.unwrap();
        if p.logged_in().is_none() {
            self.c
                .login(&self.pid, UserKind::User, p11::pin(&self.user_pin))
                .await
                .unwrap();
        }
    }

    /// The records of `kind` after `seq`: requests and outcomes (status).
    async fn records_after(&self, kind: ChangeKind, seq: i64) -> (usize, Vec<String>) {
        let request = format!("{}.request", kind.action());
        let mut requests = 0;
        let mut outcomes = Vec::new();
        for r in self
            .c
            .audit()
            .records(&audit::store::Query {
                limit: 1000,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.seq > seq)
        {
            if r.event.action == request {
                requests += 1;
            } else if r.event.action == kind.action() {
                outcomes.push(r.event.status.clone());
            }
        }
        (requests, outcomes)
    }

    /// The outcome records of `kind` after `seq`.
    async fn outcome_records_after(&self, kind: ChangeKind, seq: i64) -> Vec<audit::Record> {
        self.c
            .audit()
            .records(&audit::store::Query {
                action: Some(kind.action().into()),
                limit: 1000,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.seq > seq && r.event.action == kind.action())
            .collect()
    }

    /// The one-time keys the HSS key spent since `head` (it had `left_before`), checked
    /// against what the trail's signing records say were spent.
    async fn spent_as_recorded(&self, fault: Fault, left_before: u64, head: i64) -> u64 {
        let spent = left_before - self.hss_left().await;
        let mut recorded = 0;
        for kind in [ChangeKind::HssSign, ChangeKind::HssManifest] {
            for r in self.outcome_records_after(kind, head).await {
                let meta: serde_json::Value = serde_json::from_str(&r.event.metadata).unwrap();
                recorded += meta["signatures"].as_u64().unwrap_or(0);
            }
        }
        assert_eq!(
            spent, recorded,
            "{fault:?}: the token spent {spent} one-time keys, the trail records {recorded}"
        );
        spent
    }

    /// The signatures the matrix's HSS key has left, as the token says.
    async fn hss_left(&self) -> u64 {
        self.keys()
            .await
            .into_iter()
            .find(|o| o.label == "matrix_hss" && o.class == "PRIVATE_KEY")
            .and_then(|o| o.hss_keys_remaining)
            .expect("the HSS key and its counter")
    }

    async fn head(&self) -> i64 {
        self.c
            .audit()
            .records(&audit::store::Query {
                limit: 1,
                ..Default::default()
            })
            .await
            .unwrap()
            .first()
            .map(|r| r.seq)
            .unwrap_or(0)
    }
}

/// How many times lunasim, behind `p`, has been called at `function` in this process.
fn calls_at(p: &console::Partition, function: &str) -> u64 {
    let v: serde_json::Value =
        serde_json::from_str(&p.module.module.sim_control(r#"{"op":"stats"}"#).unwrap()).unwrap();
    v["calls"][function].as_u64().unwrap_or(0)
}

/// The PKCS#11 function that makes each kind's change (the one the fault is put on).
fn function(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::KeyGenerate => "C_GenerateKeyPair",
        ChangeKind::KeyDestroy => "C_DestroyObject",
        ChangeKind::PinChange => "C_SetPIN",
        ChangeKind::PinInit => "C_InitPIN",
        ChangeKind::TokenInit => "C_InitToken",
        ChangeKind::ObjectImport => "C_CreateObject",
        ChangeKind::AttributeSet => "C_SetAttributeValue",
        ChangeKind::KeyWrap => "C_WrapKey",
        ChangeKind::KeyUnwrap => "C_UnwrapKey",
        ChangeKind::UsageLimit => "C_SetAttributeValue",
        ChangeKind::CertificateIssue => "C_CreateObject",
        ChangeKind::OpenPgpCertificate => "C_CreateObject",
        ChangeKind::OpenPgpCreationTime => "C_CreateObject",
        ChangeKind::HssSign => "C_Sign",
        ChangeKind::HssManifest => "C_Sign",
    }
}

/// The calls of `function(kind)` let through before the fault: the manifest's signature is
/// the batch's second (its file's is the first).
fn skipped(kind: ChangeKind) -> u64 {
    match kind {
        ChangeKind::HssManifest => 1,
        _ => 0,
    }
}

fn fault_command(kind: ChangeKind, fault: Fault) -> Option<String> {
    let (f, n) = (function(kind), skipped(kind));
    match fault {
        Fault::NotReached => Some(format!(
            r#"{{"op":"fail","function":"{f}","rv":"CKR_DEVICE_REMOVED","skip":{n}}}"#
        )),
        Fault::AnswerLost => Some(format!(
            r#"{{"op":"fail","function":"{f}","rv":"CKR_DEVICE_ERROR","after":true,"skip":{n}}}"#
        )),
        Fault::DeviceError => Some(format!(
            r#"{{"op":"fail","function":"{f}","rv":"CKR_DEVICE_ERROR","skip":{n}}}"#
        )),
        Fault::Slow => Some(format!(
            r#"{{"op":"slow","function":"{f}","ms":1500,"skip":{n}}}"#
        )),
        Fault::TrailUnavailable => None,
    }
}

/// One case: set up what the change needs (before the fault), put the fault on, make the
/// change, clear the fault, and read the token.
async fn run_case(
    m: &mut Matrix,
    kind: ChangeKind,
    fault: Fault,
    i: usize,
) -> (Result<(), ApiError>, Seen) {
    let name = format!("{}_{i}", kind.action().replace('.', "_"));
    match kind {
        ChangeKind::KeyGenerate => key_generate(m, fault, &name).await,
        ChangeKind::KeyDestroy => key_destroy(m, fault, &name).await,
        ChangeKind::PinChange => pin_change(m, fault, i).await,
        ChangeKind::PinInit => pin_init(m, fault, i).await,
        ChangeKind::TokenInit => unreachable!("token initialization has its own test"),
        ChangeKind::ObjectImport => object_import(m, fault, &name, i).await,
        ChangeKind::AttributeSet => attribute_set(m, fault, &name).await,
        ChangeKind::KeyWrap => key_wrap(m, fault, &name).await,
        ChangeKind::KeyUnwrap => key_unwrap(m, fault, &name).await,
        ChangeKind::UsageLimit => usage_limit(m, fault, &name, i).await,
        ChangeKind::CertificateIssue => certificate_issue(m, fault, &name).await,
        ChangeKind::OpenPgpCertificate => openpgp_certificate(m, fault, &name).await,
        ChangeKind::OpenPgpCreationTime => openpgp_creation_time(m, fault, &name).await,
        ChangeKind::HssSign => hss_sign(m, fault, &name, i).await,
        ChangeKind::HssManifest => hss_manifest(m, fault, &name, i).await,
    }
}

/// `call` made with `fault` on the function that makes `kind`'s change; the fault met and
/// cleared after.
async fn faulted<T>(
    m: &Matrix,
    kind: ChangeKind,
    fault: Fault,
    call: impl std::future::Future<Output = Result<T, ApiError>>,
) -> Result<(), ApiError> {
    let calls = m.calls(function(kind)).await;
    arm(m, kind, fault).await;
    let r = call.await.map(|_| ());
    met(m, kind, fault, calls).await;
    clear(m).await;
    r
}

async fn key_generate(m: &mut Matrix, fault: Fault, name: &str) -> (Result<(), ApiError>, Seen) {
    let call = m.c.admin().generate_key(
        &m.pid,
        GenerateRequest {
            spec: KeySpec::Ec { curve: Curve::P256 },
            label: name.into(),
            token: true,
            extractable: false,
            always_authenticate: false,
        },
    );
    let r = faulted(m, ChangeKind::KeyGenerate, fault, call).await;
    (r, Seen::counted(m.labelled(name, "PRIVATE_KEY").await))
}

async fn key_destroy(m: &mut Matrix, fault: Fault, name: &str) -> (Result<(), ApiError>, Seen) {
    let h = m.aes(name).await;
    let phrase = m.c.admin().deletion_phrase(&m.pid, &[h]).await.unwrap();
    let call = async {
        match m.c.admin().destroy_keys(&m.pid, &[h], &phrase).await {
            Ok(d) if d.failed.is_empty() => Ok(()),
            Ok(mut d) => Err(d.failed.remove(0).error),
            Err(e) => Err(e),
        }
    };
    let r = faulted(m, ChangeKind::KeyDestroy, fault, call).await;
    let left = m.labelled(name, "SECRET_KEY").await;
    (r, Seen::once(left == 0))
}

async fn pin_change(m: &mut Matrix, fault: Fault, i: usize) -> (Result<(), ApiError>, Seen) {
    let new = format!("pin-{i}-{}", 1000 + i);
    let call =
        m.c.admin()
            .change_pin(&m.pid, p11::pin(&m.user_pin), p11::pin(&new));
    let r = faulted(m, ChangeKind::PinChange, fault, call).await;
    let done = m.logs_in(&new);
    if done {
        m.user_pin = new;
    } else {
        assert!(
            m.logs_in(&m.user_pin),
            "PinChange/{fault:?}: neither PIN opens the token"
        );
    }
    (r, Seen::once(done))
}

/// The SO sets the user's PIN: the SO logs in for it, the user again after.
async fn pin_init(m: &mut Matrix, fault: Fault, i: usize) -> (Result<(), ApiError>, Seen) {
    m.c.logout(&m.pid).await.unwrap();
    m.c.login(&m.pid, UserKind::So, p11::pin(SO_PIN))
        .await
        .unwrap();
    let new = format!("init-{i}-{}", 2000 + i);
    let call = m.c.admin().set_user_pin(&m.pid, p11::pin(&new));
    let r = faulted(m, ChangeKind::PinInit, fault, call).await;
    m.c.logout(&m.pid).await.unwrap();
    let done = m.logs_in(&new);
    if done {
        m.user_pin = new;
    }
    (r, Seen::once(done))
}

async fn object_import(
    m: &mut Matrix,
    fault: Fault,
    name: &str,
    i: usize,
) -> (Result<(), ApiError>, Seen) {
    let file = m.dir.path().join(format!("{name}.txt"));
    std::fs::write(&file, format!("release notes {i}")).unwrap();
    let call = m.c.admin().import_objects(
        &m.pid,
        ImportRequest {
            path: file,
            label: Some(name.into()),
            id_hex: None,
            data: true,
            application: Some("matrix".into()),
        },
    );
    let r = faulted(m, ChangeKind::ObjectImport, fault, call).await;
    (r, Seen::counted(m.labelled(name, "DATA").await))
}

async fn attribute_set(m: &mut Matrix, fault: Fault, name: &str) -> (Result<(), ApiError>, Seen) {
    let h = m.aes(name).await;
    let renamed = format!("{name}_renamed");
    let others = |keys: Vec<hsm::keys::ObjectSummary>| {
        let mut labels: Vec<String> = keys
            .into_iter()
            .map(|o| o.label)
            .filter(|l| *l != name && *l != renamed)
            .collect();
        labels.sort();
        labels
    };
    let before = others(m.keys().await);
    let call = m.c.admin().set_attributes(
        &m.pid,
        h,
        console::attributes::AttributeChanges {
            label: Some(renamed.clone()),
            ..Default::default()
        },
    );
    let r = faulted(m, ChangeKind::AttributeSet, fault, call).await;
    let count = m.labelled(&renamed, "SECRET_KEY").await;
    assert_eq!(
        others(m.keys().await),
        before,
        "AttributeSet/{fault:?}: another object changed"
    );
    (r, Seen::counted(count))
}

async fn key_wrap(m: &mut Matrix, fault: Fault, name: &str) -> (Result<(), ApiError>, Seen) {
    let key = extractable_aes(m, name).await;
    let out = m.dir.path().join(format!("{name}.wrapped.json"));
    let wrapper = m.wrapper_now().await;
    let call = m.c.admin().wrap_key(&m.pid, key, wrapper, &out, None, true);
    let r = faulted(m, ChangeKind::KeyWrap, fault, call).await;
    (r, Seen::once(out.exists()))
}

async fn key_unwrap(m: &mut Matrix, fault: Fault, name: &str) -> (Result<(), ApiError>, Seen) {
    let wrapper = m.wrapper_now().await;
    let call =
        m.c.admin()
            .unwrap_key(&m.pid, &m.wrap_file, wrapper, Some(name.into()));
    let r = faulted(m, ChangeKind::KeyUnwrap, fault, call).await;
    (r, Seen::counted(m.labelled(name, "SECRET_KEY").await))
}

async fn usage_limit(
    m: &mut Matrix,
    fault: Fault,
    name: &str,
    i: usize,
) -> (Result<(), ApiError>, Seen) {
    let h = m.p256(name).await;
    let limit = 5000 + i as u64;
    let call = m.c.observe().set_usage_limit(&m.pid, h, limit);
    let r = faulted(m, ChangeKind::UsageLimit, fault, call).await;
    let now = m
        .keys()
        .await
        .into_iter()
        .find(|o| o.label == name && o.class == "PRIVATE_KEY")
        .and_then(|o| o.usage_limit);
    (r, Seen::once(now == Some(limit)))
}

async fn certificate_issue(
    m: &mut Matrix,
    fault: Fault,
    name: &str,
) -> (Result<(), ApiError>, Seen) {
    let h = m.p256(name).await;
    let subject = format!("CN={name}");
    let call =
        m.c.signing()
            .issue_certificate(&m.pid, h, &subject, 30, true);
    let r = faulted(m, ChangeKind::CertificateIssue, fault, call).await;
    (r, Seen::counted(m.labelled(name, "CERTIFICATE").await))
}

async fn openpgp_certificate(
    m: &mut Matrix,
    fault: Fault,
    name: &str,
) -> (Result<(), ApiError>, Seen) {
    let h = m.p256(name).await;
    let call =
        m.c.signing()
            .openpgp_certificate(&m.pid, h, "Release Officer <officer@example.org>");
    let r = faulted(m, ChangeKind::OpenPgpCertificate, fault, call).await;
    let stored = format!("OpenPGP creation time of {name}");
    (r, Seen::counted(m.labelled(&stored, "DATA").await))
}

/// A batch of one file in `format` with `key`; the file's error is the batch's.
async fn sign_one_file(
    m: &Matrix,
    key: String,
    file: &std::path::Path,
    format: SignFormat,
) -> Result<(), ApiError> {
    sign_batch(m, key, file, format, false).await.map(|_| ())
}

/// A batch of one file in `format` with `key`, and its manifest when asked; the file's
/// error is the batch's, and so is the manifest's.
async fn sign_batch(
    m: &Matrix,
    key: String,
    file: &std::path::Path,
    format: SignFormat,
    manifest: bool,
) -> Result<console::sign::SignReport, ApiError> {
    let report =
        m.c.signing()
            .sign_files(
                &m.pid,
                SignRequest {
                    key,
                    also_keys: vec![],
                    files: vec![file.display().to_string()],
                    formats: vec![format],
                    manifest,
                    out_dir: None,
                    context: None,
                    on_error: OnError::Stop,
                    confirm_hss: true,
                    timestamp: None,
                    kit: None,
                    chain: vec![],
                    context_login: None,
                },
                Arc::new(|_| {}),
                Arc::new(AtomicBool::new(false)),
            )
            .await?;
    if let Some(e) = report.files.first().and_then(|f| f.error.clone()) {
        return Err(e);
    }
    match &report.manifest_error {
        Some(e) => Err(e.clone()),
        None => Ok(report),
    }
}

async fn openpgp_creation_time(
    m: &mut Matrix,
    fault: Fault,
    name: &str,
) -> (Result<(), ApiError>, Seen) {
    let h = m.p256(name).await;
    let id = m
        .keys()
        .await
        .into_iter()
        .find(|o| o.handle == h)
        .unwrap()
        .id_hex;
    let file = m.dir.path().join(format!("{name}.bin"));
    std::fs::write(&file, b"artifact").unwrap();
    let call = sign_one_file(m, format!("id:{id}"), &file, SignFormat::Openpgp);
    let r = faulted(m, ChangeKind::OpenPgpCreationTime, fault, call).await;
    let stored = format!("OpenPGP creation time of {name}");
    (r, Seen::counted(m.labelled(&stored, "DATA").await))
}

/// A file signed with the HSS key: the signature is written once or not at all, and the
/// one-time keys the token's counter says were spent are the ones the trail records.
async fn hss_sign(
    m: &mut Matrix,
    fault: Fault,
    name: &str,
    i: usize,
) -> (Result<(), ApiError>, Seen) {
    let file = m.dir.path().join(format!("{name}.bin"));
    std::fs::write(&file, format!("firmware {i}")).unwrap();
    let (left_before, head) = (m.hss_left().await, m.head().await);
    let call = sign_one_file(m, "label:matrix_hss".into(), &file, SignFormat::Raw);
    let r = faulted(m, ChangeKind::HssSign, fault, call).await;
    let spent = m.spent_as_recorded(fault, left_before, head).await;
    assert!(
        fault == Fault::TrailUnavailable || spent >= 1,
        "HssSign/{fault:?}: the HSM was asked, yet no one-time key was spent"
    );
    let signature = file.with_extension(format!("bin{}", SignFormat::Raw.suffix()));
    let written = std::fs::read_dir(m.dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}.bin."))
        })
        .count();
    assert!(
        written <= 1,
        "HssSign/{fault:?}: {written} signatures of one file"
    );
    (r, Seen::once(signature.exists()))
}

/// A batch's `SHA256SUMS` signed with the HSS key, the fault on its signature (the file's
/// comes first and is let through): written whole or not at all, and what the token spent
/// is what the trail records.
async fn hss_manifest(
    m: &mut Matrix,
    fault: Fault,
    name: &str,
    i: usize,
) -> (Result<(), ApiError>, Seen) {
    let dir = m.dir.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("firmware.bin");
    std::fs::write(&file, format!("firmware {i}")).unwrap();
    let (left_before, head) = (m.hss_left().await, m.head().await);
    let call = sign_batch(m, "label:matrix_hss".into(), &file, SignFormat::Raw, true);
    let r = faulted(m, ChangeKind::HssManifest, fault, call).await;
    m.spent_as_recorded(fault, left_before, head).await;
    let (sums, sig) = (dir.join("SHA256SUMS"), dir.join("SHA256SUMS.sig"));
    assert_eq!(
        sums.exists(),
        sig.exists(),
        "HssManifest/{fault:?}: half a manifest written"
    );
    (r, Seen::once(sig.exists()))
}

async fn arm(m: &Matrix, kind: ChangeKind, fault: Fault) {
    match fault_command(kind, fault) {
        Some(c) => m.control(&c).await,
        None => m.trail_available(false),
    }
}

/// The fault was met: the call it was put on was made (a fault nobody met proves nothing).
async fn met(m: &Matrix, kind: ChangeKind, fault: Fault, before: u64) {
    if fault != Fault::TrailUnavailable {
        let after = m.calls(function(kind)).await;
        assert!(
            after > before,
            "{kind:?}/{fault:?}: {} was never called",
            function(kind)
        );
    }
}

async fn clear(m: &Matrix) {
    m.control(r#"{"op":"clear"}"#).await;
    m.trail_available(true);
}

/// An extractable AES key made outside the console (which makes its own keys
/// non-extractable), for the wrap cases.
async fn extractable_aes(m: &Matrix, label: &str) -> u64 {
    let p = m.c.partition_ref(&m.pid).await.unwrap();
    let label = label.to_string();
    let h = p
        .pool
        .run_async("test.extractable", move |s| {
            s.generate_key(
                &Mechanism::new(CKM_AES_KEY_GEN),
                &mut testkit::setup::aes256_template(&label, label.as_bytes(), true)
                    .bool(CKA_ENCRYPT, true),
            )
        })
        .await
        .unwrap();
    // Listed, as the window lists what it shows: handles are the console's to hand out.
    m.keys().await;
    h
}

async fn matrix() -> Matrix {
    let pg = PgCluster::start();
    let url = pg.create_db("matrix");
    let t = TestToken::new(Backend::LunaSim);
    let (c, pid, dir) = common::console_on_module(&t.module_path, Some(url)).await;
    c.login(&pid, UserKind::User, p11::pin(USER_PIN))
        .await
        .unwrap();
    let mut m = Matrix {
        c,
        pid,
        t,
        pg,
        dir,
        user_pin: USER_PIN.into(),
        wrap_file: Default::default(),
    };
    // The wrapping key (an AES key the console makes may wrap and unwrap) and one wrap file
    // for the unwrap cases.
    let wrapper = m.aes("matrix_wrapper").await;
    let key = extractable_aes(&m, "matrix_wrapped").await;
    m.wrap_file = m.dir.path().join("matrix_wrapped.json");
    m.c.admin()
        .wrap_key(&m.pid, key, wrapper, &m.wrap_file, None, true)
        .await
        .unwrap();
    // The HSS key the stateful-signing cases spend (32 one-time keys; they use at most 20).
    let params = HssParams::new(vec![(LmsType::H5, LmotsType::W4)]).unwrap();
    m.c.admin()
        .generate_key(
            &m.pid,
            GenerateRequest {
                spec: KeySpec::Hss { params },
                label: "matrix_hss".into(),
                token: true,
                extractable: false,
                always_authenticate: false,
            },
        )
        .await
        .unwrap();
    m
}

/// Check one case's invariants; the case's line for the table printed at the end.
async fn check(
    m: &Matrix,
    kind: ChangeKind,
    fault: Fault,
    head: i64,
    r: &Result<(), ApiError>,
    seen: &Seen,
) -> String {
    let case = format!("{kind:?}/{fault:?}");
    assert!(seen.count <= 1, "{case}: done {} times", seen.count);
    let (requests, outcomes) = m.records_after(kind, head).await;
    if fault == Fault::TrailUnavailable {
        let e = r
            .as_ref()
            .expect_err(&format!("{case}: made without a record"));
        assert_eq!(e.code, ErrorCode::AuditUnavailable, "{case}: {e:?}");
        assert!(
            !seen.done,
            "{case}: the token changed though nothing was recorded"
        );
        assert_eq!((requests, outcomes.len()), (0, 0), "{case}: {outcomes:?}");
        return format!("{case}: refused ({})", e.code);
    }
    assert_eq!(requests, 1, "{case}: one request record ({r:?})");
    assert_eq!(
        outcomes.len(),
        1,
        "{case}: one outcome record: {outcomes:?}"
    );
    let status = outcomes[0].as_str();
    match r {
        Ok(()) => {
            assert!(
                seen.done,
                "{case}: the officer was told it happened; the token disagrees"
            );
            assert_eq!(status, "success", "{case}");
        }
        Err(e) => {
            assert!(
                matches!(status, "failure" | "unknown"),
                "{case}: {status} but the officer was told {e:?}"
            );
            if status == "failure" {
                assert!(
                    !seen.done,
                    "{case}: recorded failed ({}) but the token shows the change",
                    e.message
                );
            }
        }
    }
    if status == "success" {
        assert!(seen.done, "{case}: recorded success, the token disagrees");
    }
    format!(
        "{case}: {} — {status}, token {}",
        match r {
            Ok(()) => "done".to_string(),
            Err(e) => e.code.to_string(),
        },
        if seen.done { "changed" } else { "unchanged" }
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_change_under_every_fault_agrees_with_the_token_and_the_trail() {
    let mut m = matrix().await;
    let mut lines = Vec::new();
    let mut i = 0;
    // The SO's PIN setting last: it logs the user out and in again.
    let kinds = ChangeKind::ALL
        .into_iter()
        .filter(|k| !matches!(k, ChangeKind::TokenInit | ChangeKind::PinInit))
        .chain([ChangeKind::PinInit]);
    for kind in kinds {
        for fault in FAULTS {
            i += 1;
            m.logged_in().await;
            let head = m.head().await;
            let (r, seen) = run_case(&mut m, kind, fault, i).await;
            m.logged_in().await;
            lines.push(check(&m, kind, fault, head, &r, &seen).await);
        }
    }
    println!("{}", lines.join("\n"));
    let v =
        m.c.trail()
            .audit_verify(&|_, _| {}, &AtomicBool::new(false))
            .await
            .unwrap();
    assert_eq!(
        serde_json::to_value(&v).unwrap()["verdict"],
        "intact",
        "{v:?}"
    );
    assert_eq!(lines.len(), (ChangeKind::ALL.len() - 1) * FAULTS.len());
}

/// Token initialization under every fault. It destroys everything on the token — the
/// trail's key with it when it lives there — so the trail's key lives on another token here
/// (a SoftHSM2 one, logged in first) and the token initialized again and again is the
/// built-in lunasim partition, where the faults are injected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_initialization_under_every_fault_agrees_with_the_token_and_the_trail() {
    std::env::remove_var("LUNASIM_CONF");
    let pg = PgCluster::start();
    let url = pg.create_db("matrix");
    let soft = TestToken::new(Backend::SoftHsm);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = console::ConsoleConfig::new(dir.path().join("data"));
    cfg.lunasim_path = Some(testkit::lunasim_module());
    cfg.kryoptic_path = Some(testkit::kryoptic_module());
    cfg.audit_location = Some(url);
    let c = Console::open(cfg).await.unwrap();
    let holder = c
        .add_module(&soft.module_path.display().to_string())
        .await
        .unwrap();
    let holder_pid = c
        .slots(&holder.id)
        .await
        .unwrap()
        .into_iter()
        .find_map(|s| s.partition_id)
        .unwrap();
    c.login(&holder_pid, UserKind::User, p11::pin(USER_PIN))
        .await
        .unwrap();
    let builtin = c
        .connections()
        .await
        .into_iter()
        .find(|m| m.module.builtin)
        .expect("the built-in module");
    let module_id = builtin.module.id.clone();
    let mut pid = builtin
        .slots
        .iter()
        .find_map(|s| s.partition_id.clone())
        .unwrap();
    let mut label = console::builtin::TOKEN_LABEL.to_string();
    let m = Matrix {
        c: c.clone(),
        pid: holder_pid.clone(),
        t: soft,
        pg,
        dir,
        user_pin: USER_PIN.into(),
        wrap_file: Default::default(),
    };
    let kind = ChangeKind::TokenInit;
    let mut lines = Vec::new();
    for (i, fault) in FAULTS.into_iter().enumerate() {
        let head = m.head().await;
        let new_label = format!("matrix-init-{i}");
        let p = c.partition_ref(&pid).await.unwrap();
        let calls = || calls_at(&p, "C_InitToken");
        let calls_before = calls();
        match fault_command(kind, fault) {
            Some(cmd) => {
                p.module.module.sim_control(&cmd).unwrap();
            }
            None => m.trail_available(false),
        }
        let r = c
            .admin()
            .init_token(
                &pid,
                p11::pin(console::builtin::SO_PIN),
                console::credentials::InitTokenRequest {
                    label: new_label.clone(),
                    confirmation: label.clone(),
                    destroy_audit_key: false,
                },
            )
            .await;
        if fault != Fault::TrailUnavailable {
            assert!(
                calls() > calls_before,
                "{fault:?}: C_InitToken was never called"
            );
        }
        p.module.module.sim_control(r#"{"op":"clear"}"#).unwrap();
        m.trail_available(true);
        let slot = c
            .slots(&module_id)
            .await
            .unwrap()
            .into_iter()
            .find(|s| s.token.is_some())
            .unwrap();
        let now = slot.token.as_ref().unwrap().label.trim().to_string();
        let done = now == new_label;
        if done {
            label = new_label;
        }
        pid = slot.partition_id.clone().unwrap();
        let seen = Seen::once(done);
        let r = r.map(|_| ());
        lines.push(check(&m, kind, fault, head, &r, &seen).await);
    }
    println!("{}", lines.join("\n"));
    let v = c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&v).unwrap()["verdict"],
        "intact",
        "{v:?}"
    );
    assert_eq!(lines.len(), FAULTS.len());
}
