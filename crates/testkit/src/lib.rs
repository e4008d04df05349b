//! The test rig: every test gets its own real token in its own temporary directory.
//!
//! PKCS#11 modules read their configuration (`SOFTHSM2_CONF`, `KRYOPTIC_CONF`,
//! `LUNASIM_CONF`) once, at `C_Initialize`, and a module is loaded once per process. So one
//! token per test means one process per test: the suite runs under `cargo nextest`, which
//! does exactly that. Asking for a second token in one process is a usage error and says so.
//!
//! A module that is missing fails the test with the command that builds it; nothing is
//! skipped silently.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use p11::{Module, Session, SlotId, UserType};

pub mod cpu;
pub mod pg;
pub mod setup;
pub mod stats;
pub mod tools;
pub mod tsa;

pub const SO_PIN: &str = "so-pin-8642";
pub const USER_PIN: &str = "user-pin-1357";
pub const TOKEN_LABEL: &str = "console-test";

/// The real modules the rig knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    SoftHsm,
    Kryoptic,
    /// `lunasim` forwarding to Kryoptic.
    LunaSim,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::SoftHsm => "softhsm2",
            Backend::Kryoptic => "kryoptic",
            Backend::LunaSim => "lunasim",
        }
    }

    pub fn module_path(self) -> PathBuf {
        match self {
            Backend::SoftHsm => softhsm_module(),
            Backend::Kryoptic => kryoptic_module(),
            Backend::LunaSim => lunasim_module(),
        }
    }
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

fn require(path: PathBuf, how: &str) -> PathBuf {
    assert!(
        path.is_file(),
        "required test module {} is missing; {how}",
        path.display()
    );
    path
}

pub fn softhsm_module() -> PathBuf {
    require(
        PathBuf::from("/usr/lib/softhsm/libsofthsm2.so"),
        "install Debian's softhsm2 (make setup)",
    )
}

pub fn kryoptic_module() -> PathBuf {
    require(
        repo_root().join("target/pkcs11/libkryoptic_pkcs11.so"),
        "build it with scripts/build-kryoptic.sh (make setup)",
    )
}

/// The cargo target profile directory this test binary was built into
/// (`target/debug`), where the workspace's cdylibs land.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let mut dir = exe.parent().expect("deps dir").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir
}

pub fn lunasim_module() -> PathBuf {
    require(
        profile_dir().join("liblunasim.so"),
        "build it with `cargo build -p hsmc-lunasim` (make test does)",
    )
}

/// The `hsmc` binary next to the test binaries.
pub fn hsmc_binary() -> PathBuf {
    require(
        profile_dir().join("hsmc"),
        "build it with `cargo build -p hsmc-cli` (make test does)",
    )
}

/// Python with the independent verifiers (pyca/cryptography, hsslms, dilithium-py).
pub fn python() -> PathBuf {
    require(
        repo_root().join("target/pyenv/bin/python3"),
        "create it with scripts/setup-python.sh (make setup)",
    )
}

/// OpenSSL 3.5's `openssl` program, built for the tests only: `openssl cms -verify` and
/// `pkeyutl -verify` of ML-DSA and SLH-DSA, which Debian 12's OpenSSL 3.0 cannot read.
pub fn openssl35() -> PathBuf {
    require(
        repo_root().join("target/tools/openssl-3.5/bin/openssl"),
        "build it with scripts/build-openssl35.sh (make setup)",
    )
}

static CLAIMED: AtomicBool = AtomicBool::new(false);

/// A freshly initialized token with a user PIN, in its own directory.
pub struct TestToken {
    pub backend: Backend,
    pub module_path: PathBuf,
    pub module: Arc<Module>,
    pub slot: SlotId,
    pub dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl TestToken {
    /// Create the token directory and configuration, point this process at it, load and
    /// initialize the module, initialize the token and its user PIN.
    pub fn new(backend: Backend) -> TestToken {
        Self::with_lunasim_extra(backend, "")
    }

    /// As [`TestToken::new`]; for lunasim, `extra` is added to its TOML configuration
    /// (latency, PQC queue, control file, …) before any table header, so top-level keys
    /// stay top-level.
    pub fn with_lunasim_extra(backend: Backend, extra: &str) -> TestToken {
        assert!(
            !CLAIMED.swap(true, Ordering::SeqCst),
            "one test token per process: module configuration is process-global; run the suite with `cargo nextest run`"
        );
        let dir = tempfile::Builder::new()
            .prefix(&format!("hsmc-{}-", backend.name()))
            .tempdir()
            .expect("temp dir");
        let env = write_config(backend, dir.path(), extra);
        for (k, v) in &env {
            // Single-threaded at this point of a nextest test process.
            std::env::set_var(k, v);
        }
        let module_path = backend.module_path();
        let module = Module::load(&module_path).expect("load module");
        module.initialize().expect("C_Initialize");
        let slot = init_token(&module, TOKEN_LABEL);
        TestToken {
            backend,
            module_path,
            module,
            slot,
            dir,
            env,
        }
    }

    /// Environment a child process needs to see the same token.
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// A read-write session logged in as the user.
    pub fn user_session(&self) -> Session {
        let s = self
            .module
            .open_session(self.slot, true)
            .expect("open session");
        s.login(UserType::User, &p11::pin(USER_PIN)).expect("login");
        s
    }
}

/// Write the module configuration for a backend under `dir`; returns the environment
/// variables that select it.
pub fn write_config(backend: Backend, dir: &Path, lunasim_extra: &str) -> Vec<(String, String)> {
    match backend {
        Backend::SoftHsm => {
            let tokens = dir.join("tokens");
            std::fs::create_dir_all(&tokens).unwrap();
            let conf = dir.join("softhsm2.conf");
            std::fs::write(
                &conf,
                format!(
                    "directories.tokendir = {}\nobjectstore.backend = file\nlog.level = ERROR\n",
                    tokens.display()
                ),
            )
            .unwrap();
            vec![("SOFTHSM2_CONF".into(), conf.display().to_string())]
        }
        Backend::Kryoptic => vec![(
            "KRYOPTIC_CONF".into(),
            kryoptic_conf(dir).display().to_string(),
        )],
        Backend::LunaSim => {
            let kconf = kryoptic_conf(dir);
            let store = dir.join("lunasim");
            std::fs::create_dir_all(&store).unwrap();
            let conf = dir.join("lunasim.toml");
            std::fs::write(
                &conf,
                format!(
                    "inner_module = \"{}\"\nstore_dir = \"{}\"\n{}\n\n[inner_env]\nKRYOPTIC_CONF = \"{}\"\n",
                    kryoptic_module().display(),
                    store.display(),
                    lunasim_extra,
                    kconf.display(),
                ),
            )
            .unwrap();
            vec![("LUNASIM_CONF".into(), conf.display().to_string())]
        }
    }
}

fn kryoptic_conf(dir: &Path) -> PathBuf {
    let conf = dir.join("kryoptic.conf");
    std::fs::write(
        &conf,
        format!(
            "[[slots]]\nslot = 1\ndbtype = \"sqlite\"\ndbargs = \"{}\"\n",
            dir.join("token.sql").display()
        ),
    )
    .unwrap();
    conf
}

/// Initialize the first slot whose token is not initialized yet; returns the slot that now
/// holds a token labelled `label` with `USER_PIN` set.
pub fn init_token(module: &Arc<Module>, label: &str) -> SlotId {
    let slots = module.slots(true).expect("C_GetSlotList");
    let slot = slots
        .iter()
        .copied()
        .find(|s| !module.token_info(*s).expect("C_GetTokenInfo").initialized())
        .or_else(|| slots.first().copied())
        .expect("module reports no slot with a token");
    module
        .init_token(slot, &p11::pin(SO_PIN), label)
        .expect("C_InitToken");
    // SoftHSM moves an initialized token to a new slot ID; find it by label.
    let slot = module
        .slots(true)
        .expect("C_GetSlotList")
        .into_iter()
        .find(|s| {
            module
                .token_info(*s)
                .map(|t| t.label == label)
                .unwrap_or(false)
        })
        .expect("initialized token not found by label");
    let so = module.open_session(slot, true).expect("open SO session");
    so.login(UserType::SecurityOfficer, &p11::pin(SO_PIN))
        .expect("SO login");
    so.init_pin(&p11::pin(USER_PIN)).expect("C_InitPIN");
    so.logout().expect("logout");
    drop(so);
    slot
}

/// The rig's HA group: label, serial, and its members' serials (`1280000101`, …).
pub const HA_LABEL: &str = "ha-test";
pub const HA_SERIAL: &str = "1280000100";
/// The virtual slot lunasim gives the first group.
pub const HA_SLOT: SlotId = 100;

pub fn ha_member_serial(member: usize) -> String {
    format!("12800001{member:02}")
}

/// One `[[ha_group]]` with `members` (serial, inner slot) and extra keys for the group.
pub fn ha_group_toml(label: &str, serial: &str, members: &[(String, u64)], extra: &str) -> String {
    let mut t = format!("[[ha_group]]\nlabel = \"{label}\"\nserial = \"{serial}\"\n{extra}\n");
    for (s, slot) in members {
        t.push_str(&format!(
            "[[ha_group.member]]\nserial = \"{s}\"\nslot = {slot}\n"
        ));
    }
    t
}

/// lunasim over a Kryoptic with several slots, each its own token, and HA groups.
pub struct HaRig {
    pub module_path: PathBuf,
    pub module: Arc<Module>,
    /// The inner slots whose tokens were initialized (label `member-N`, the rig's PINs).
    pub members: Vec<SlotId>,
    pub dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl HaRig {
    /// The usual group: `members` members on inner slots 1…N, all initialized; `group_extra`
    /// goes into the group's table, `top_extra` to the top of the file.
    pub fn group(members: usize, group_extra: &str, top_extra: &str) -> HaRig {
        let list: Vec<(String, u64)> = (1..=members)
            .map(|i| (ha_member_serial(i), i as u64))
            .collect();
        let groups = ha_group_toml(HA_LABEL, HA_SERIAL, &list, group_extra);
        HaRig::new(
            members,
            &(1..=members as u64).collect::<Vec<_>>(),
            top_extra,
            &groups,
        )
    }

    /// `inner_slots` Kryoptic slots, of which `initialize` get a token; then lunasim with
    /// `top_extra` and the `groups` tables. The module is initialized twice, as an
    /// officer's first start would: once to make the tokens, once with them there.
    pub fn new(inner_slots: usize, initialize: &[SlotId], top_extra: &str, groups: &str) -> HaRig {
        assert!(
            !CLAIMED.swap(true, Ordering::SeqCst),
            "one test token per process: module configuration is process-global; run the suite with `cargo nextest run`"
        );
        let dir = tempfile::Builder::new()
            .prefix("hsmc-lunasim-ha-")
            .tempdir()
            .expect("temp dir");
        let kconf = dir.path().join("kryoptic.conf");
        let mut slots = String::new();
        for i in 1..=inner_slots {
            slots.push_str(&format!(
                "[[slots]]\nslot = {i}\ndbtype = \"sqlite\"\ndbargs = \"{}\"\n",
                dir.path().join(format!("member-{i}.sql")).display()
            ));
        }
        std::fs::write(&kconf, slots).unwrap();
        let store = dir.path().join("lunasim");
        std::fs::create_dir_all(&store).unwrap();
        let conf = dir.path().join("lunasim.toml");
        std::fs::write(
            &conf,
            format!(
                "inner_module = \"{}\"\nstore_dir = \"{}\"\n{top_extra}\n\n{groups}\n[inner_env]\nKRYOPTIC_CONF = \"{}\"\n",
                kryoptic_module().display(),
                store.display(),
                kconf.display(),
            ),
        )
        .unwrap();
        let env = vec![("LUNASIM_CONF".to_string(), conf.display().to_string())];
        for (k, v) in &env {
            // Single-threaded at this point of a nextest test process.
            std::env::set_var(k, v);
        }
        let module_path = lunasim_module();
        let module = Module::load(&module_path).expect("load module");
        module.initialize().expect("C_Initialize");
        for slot in initialize {
            module
                .init_token(*slot, &p11::pin(SO_PIN), &format!("member-{slot}"))
                .expect("C_InitToken");
            let so = module.open_session(*slot, true).expect("open SO session");
            so.login(UserType::SecurityOfficer, &p11::pin(SO_PIN))
                .expect("SO login");
            so.init_pin(&p11::pin(USER_PIN)).expect("C_InitPIN");
            so.logout().expect("logout");
        }
        module.finalize().expect("C_Finalize");
        module.initialize().expect("C_Initialize with the tokens");
        HaRig {
            module_path,
            module,
            members: initialize.to_vec(),
            dir,
            env,
        }
    }

    /// Environment a child process needs to see the same tokens.
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// A read-write session on `slot` (a member's or the virtual one) logged in as the user.
    pub fn user_session(&self, slot: SlotId) -> Session {
        let s = self.module.open_session(slot, true).expect("open session");
        s.login(UserType::User, &p11::pin(USER_PIN)).expect("login");
        s
    }

    /// A `LUNASIM_Control` command; its JSON answer.
    pub fn control(&self, command: &str) -> serde_json::Value {
        let answer = self.module.sim_control(command).expect("LUNASIM_Control");
        serde_json::from_str(&answer).expect("a JSON answer")
    }
}

/// Every file under `dir`, recursively (what a test greps or checks after a run).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read the folder") {
            let p = e.expect("a folder entry").path();
            if p.is_dir() {
                stack.push(p)
            } else {
                out.push(p)
            }
        }
    }
    out
}

/// Ask the Python verifiers (`tests/interop/verify.py`) whether a signature is valid.
/// Panics when the verifier cannot run at all; returns the verdict otherwise.
pub fn python_verify(
    alg: &str,
    public_key: &[u8],
    message: &[u8],
    signature: &[u8],
    context: &[u8],
) -> bool {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |name: &str, data: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, data).expect("write");
        path
    };
    let (pk, m, s) = (p("pub", public_key), p("msg", message), p("sig", signature));
    let mut cmd = std::process::Command::new(python());
    cmd.arg(repo_root().join("tests/interop/verify.py"))
        .arg(alg)
        .arg(&pk)
        .arg(&m)
        .arg(&s);
    if !context.is_empty() {
        cmd.arg(
            context
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
        );
    }
    let out = cmd.output().expect("run verify.py");
    match out.status.code() {
        Some(0) => true,
        Some(1) => false,
        _ => panic!(
            "verify.py {alg} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}
