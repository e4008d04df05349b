//! Set-up shared by the console's integration tests: a console on the built-in partition
//! (lunasim over Kryoptic) or on a fresh SoftHSM2/Kryoptic test token, logged in as user.
// Each test binary uses the part it needs.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use console::sign::{OnError, SignFormat, SignReport, SignRequest};
use console::views::{GenerateRequest, GeneratedKey, UserKind};
use console::{Console, ConsoleConfig};
use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType};
use testkit::{Backend, TestToken};

/// What the benches share (they include this folder).
pub mod bench;

/// The CA made with OpenSSL that issues the console's certificates in the tests.
pub mod ca;

pub struct Env {
    pub c: Arc<Console>,
    pub pid: String,
    /// Holds the console's data (`data/`) and whatever the test writes beside it.
    pub dir: tempfile::TempDir,
    _token: Option<TestToken>,
}

/// A batch of `files` signed by `key` (`id:HEX`, `label:NAME`) in `formats`, stopping at a
/// failure; the other choices (manifest, context, time-stamp, kit, chain) left out.
pub fn batch_request(key: &str, files: &[PathBuf], formats: &[SignFormat]) -> SignRequest {
    SignRequest {
        key: key.into(),
        also_keys: vec![],
        files: files.iter().map(|p| p.display().to_string()).collect(),
        formats: formats.to_vec(),
        manifest: false,
        out_dir: None,
        context: None,
        on_error: OnError::Stop,
        confirm_hss: false,
        timestamp: None,
        kit: None,
        chain: vec![],
        context_login: None,
    }
}

/// One file signed by the key with `id_hex` in `format`, as [`batch_request`].
pub fn sign_request(id_hex: &str, file: &std::path::Path, format: SignFormat) -> SignRequest {
    batch_request(&format!("id:{id_hex}"), &[file.to_path_buf()], &[format])
}

/// The built-in partition, configured inside the data folder.
pub async fn builtin() -> Env {
    builtin_with(None).await
}

/// As [`builtin`], with lunasim's `firmware` set as an officer would set it (below the
/// marker the console keeps in the partition's `lunasim.toml`).
pub async fn builtin_with(firmware: Option<&str>) -> Env {
    std::env::remove_var("LUNASIM_CONF");
    let dir = tempfile::tempdir().unwrap();
    if let Some(f) = firmware {
        let b = dir.path().join("data/builtin");
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(
            b.join("lunasim.toml"),
            format!("{}\nfirmware = \"{f}\"\n", console::builtin::KEPT_MARKER),
        )
        .unwrap();
    }
    let mut cfg = ConsoleConfig::new(dir.path().join("data"));
    cfg.lunasim_path = Some(testkit::lunasim_module());
    cfg.kryoptic_path = Some(testkit::kryoptic_module());
    let c = Console::open(cfg).await.unwrap();
    let pid = c
        .connections()
        .await
        .iter()
        .find(|m| m.module.builtin)
        .expect("the built-in module is loaded")
        .slots
        .iter()
        .find_map(|s| s.partition_id.clone())
        .expect("the built-in token is initialized");
    c.login(&pid, UserKind::User, p11::pin(console::builtin::USER_PIN))
        .await
        .unwrap();
    Env {
        c,
        pid,
        dir,
        _token: None,
    }
}

/// A fresh token of `backend`, added as a module (the built-in partition off), logged in.
pub async fn token(backend: Backend) -> Env {
    let e = token_logged_out(backend).await;
    e.c.login(&e.pid, UserKind::User, p11::pin(testkit::USER_PIN))
        .await
        .unwrap();
    e
}

/// A fresh SoftHSM2 token, the console logged in as user, and one token ECDSA P-256 key
/// labelled `label`: the set-up of the signing benches and of the tests that want any
/// classical signing key on a token of their own.
pub async fn softhsm_p256(label: &str) -> (Env, GeneratedKey) {
    let e = token(Backend::SoftHsm).await;
    let g = e.generate(KeySpec::Ec { curve: Curve::P256 }, label).await;
    (e, g)
}

/// As [`token`], before anyone logs in (for tests of the login itself).
pub async fn token_logged_out(backend: Backend) -> Env {
    token_logged_out_with(backend, "").await
}

/// As [`token_logged_out`], with `lunasim_extra` added to lunasim's configuration.
pub async fn token_logged_out_with(backend: Backend, lunasim_extra: &str) -> Env {
    let t = TestToken::with_lunasim_extra(backend, lunasim_extra);
    let (c, pid, dir) = console_on_module(&t.module_path, None).await;
    Env {
        c,
        pid,
        dir,
        _token: Some(t),
    }
}

/// A console in a fresh data folder (`DIR/data`, without the built-in partition; its audit
/// trail at `audit_location`, else in the folder) with the module at `module` added: the
/// console, the partition of the module's first slot that has one, and the folder.
pub async fn console_on_module(
    module: &std::path::Path,
    audit_location: Option<String>,
) -> (Arc<Console>, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ConsoleConfig::new(dir.path().join("data"));
    cfg.builtin = false;
    cfg.audit_location = audit_location;
    let c = Console::open(cfg).await.unwrap();
    let m = c.add_module(&module.display().to_string()).await.unwrap();
    let pid = c
        .slots(&m.id)
        .await
        .unwrap()
        .into_iter()
        .find_map(|s| s.partition_id)
        .unwrap();
    (c, pid, dir)
}

impl Env {
    /// The test token behind the console (not for the built-in partition).
    pub fn token(&self) -> &TestToken {
        self._token
            .as_ref()
            .expect("a test token, not the built-in partition")
    }

    /// A token key pair made through the console.
    pub async fn generate(&self, spec: KeySpec, label: &str) -> GeneratedKey {
        self.c
            .admin()
            .generate_key(
                &self.pid,
                GenerateRequest {
                    spec,
                    label: label.into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
            .unwrap()
    }
}

/// One batch on `pid` of `c`, no progress wanted and never cancelled.
pub async fn sign_with(c: &Console, pid: &str, req: SignRequest) -> console::ApiResult<SignReport> {
    c.signing()
        .sign_files(pid, req, Arc::new(|_| {}), Arc::new(AtomicBool::new(false)))
        .await
}

impl Env {
    /// One batch on the partition, as [`sign_with`].
    pub async fn try_sign(&self, req: SignRequest) -> console::ApiResult<SignReport> {
        sign_with(&self.c, &self.pid, req).await
    }

    /// An HSS key of 32 signatures (LMS H5, LM-OTS W4) labelled `label`, and the batch that
    /// signed three small files with it in CMS (three signatures and the certificate's): the
    /// fixture of the HSS counters (`health`) and the overview's key running out.
    pub async fn hss_key_with_a_batch_signed(&self, label: &str) -> (GeneratedKey, SignReport) {
        let params = HssParams::new(vec![(LmsType::H5, LmotsType::W4)]).unwrap();
        let g = self.generate(KeySpec::Hss { params }, label).await;
        let files: Vec<PathBuf> = (0..3)
            .map(|i| {
                let p = self.dir.path().join(format!("fw-{i}.bin"));
                std::fs::write(&p, format!("firmware {i}")).unwrap();
                p
            })
            .collect();
        let mut req = batch_request(&format!("id:{}", g.id_hex), &files, &[SignFormat::Cms]);
        req.confirm_hss = true;
        let r = self.try_sign(req).await.unwrap();
        (g, r)
    }
}

/// The trail holds `ACTION.request` before the outcome `ACTION` whose status `done_status`
/// is, when given (a change is recorded as asked before the token is asked).
pub async fn request_before_outcome(c: &Console, action: &str, done_status: Option<&str>) {
    let actions: Vec<_> = all_records(c)
        .await
        .into_iter()
        .map(|r| (r.event.action, r.event.status))
        .collect();
    let request = format!("{action}.request");
    let req = actions
        .iter()
        .position(|(a, _)| *a == request)
        .expect("request recorded");
    let done = actions
        .iter()
        .position(|(a, s)| a == action && done_status.is_none_or(|d| s == d))
        .expect("outcome recorded");
    assert!(req < done, "{actions:?}");
}

/// Every record of the trail, a page at a time (the console answers at most 1,000 per
/// query).
pub async fn all_records(c: &Console) -> Vec<console::views::RecordView> {
    let mut records = Vec::new();
    loop {
        let page = c
            .trail()
            .audit_records(audit::store::Query {
                limit: 1000,
                ascending: true,
                after_seq: records.last().map(|r: &console::views::RecordView| r.seq),
                ..Default::default()
            })
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        records.extend(page);
    }
    records
}

/// Run `f` in a session of `e`'s partition (test tokens and the built-in one alike): what
/// another program holding the token would do, or a set-up the console does not offer.
pub async fn on<T: Send + 'static>(
    e: &Env,
    f: impl FnMut(&p11::Session) -> p11::Result<T> + Send + 'static,
) -> T {
    let p = e.c.partition_ref(&e.pid).await.unwrap();
    p.pool.run_async("test.session", f).await.unwrap()
}

/// `PROGRAM cms -verify` of the detached `p7s` over `content`, the signer's certificate not
/// checked (`-noverify`): every signer's signature and digest are. (exit 0, stdout+stderr).
/// `PROGRAM` is Debian's `openssl` or `testkit::openssl35()`.
pub fn openssl_cms_verify(
    program: &std::path::Path,
    p7s: &std::path::Path,
    content: &std::path::Path,
) -> (bool, String) {
    let o = std::process::Command::new(program)
        .args(["cms", "-verify", "-binary", "-inform", "DER", "-in"])
        .arg(p7s)
        .arg("-content")
        .arg(content)
        .args(["-noverify", "-out", "/dev/null"])
        .output()
        .unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// The signing tests' shared set-ups: a key by ID, files to sign.
impl Env {
    /// The new key as `id:HEX`, and its current handle.
    pub async fn key(&self, spec: KeySpec, label: &str) -> (String, u64) {
        let g = self.generate(spec, label).await;
        (format!("id:{}", g.id_hex), g.private_handle)
    }

    /// A sparse file of `len` zero bytes (no disk used), at `rel` under the test's folder.
    pub fn sparse(&self, rel: &str, len: u64) -> PathBuf {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::File::create(&p).unwrap().set_len(len).unwrap();
        p
    }

    /// Files of the given sizes under `sub`, each with its own bytes.
    pub fn files(&self, sub: &str, sizes: &[usize]) -> Vec<PathBuf> {
        let d = self.dir.path().join(sub);
        std::fs::create_dir_all(&d).unwrap();
        sizes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let p = d.join(format!("artifact-{i}.bin"));
                std::fs::write(&p, (0..*n).map(|j| (j * 31 + i) as u8).collect::<Vec<u8>>())
                    .unwrap();
                p
            })
            .collect()
    }
}
