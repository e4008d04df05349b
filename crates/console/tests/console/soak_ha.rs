//! The soak on an HA group: signing, key generation and listing through the group's virtual
//! slot of a three-member lunasim group while members fail and come back (at most two down
//! at once; `auto_resync` replicates what a member missed when it is back). Every operation
//! ends in success or a clear error; every signature the console reported verifies, every
//! key it reported made is on the group's slot and, once all members are back and resynced,
//! on every member; one audit record each; the trail verifies.
//!
//! `SOAK_HA_OPS` (default 60), `SOAK_SEED` (default 5). Writes its JSON to
//! `target/soak/soak-ha-<seed>.json`. One test per process (nextest).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use console::sign::SignFormat;
use console::views::{GenerateRequest, UserKind};
use console::{ApiError, Console, ConsoleConfig, ErrorCode};
use hsm::algo::{Curve, KeySpec};
use hsm::pubkey::PublicKeyFormat;
use p11::sys::*;
use p11::Template;
use testkit::{HaRig, HA_SLOT};

use crate::common;

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

const MEMBERS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ha_soak_with_members_failing_loses_nothing() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (ops, seed) = (env("SOAK_HA_OPS", 60), env("SOAK_SEED", 5));
    let started = Instant::now();
    let g = Group::open().await;
    let mut t = Tally::default();
    g.run(ops, seed, &mut t).await;
    let lost = g.lost(&t).await;
    let missing_on_members = g.keys_missing_on_members(&t.made);
    let records = common::all_records(&g.c).await;
    let ok = |action: &str| {
        records
            .iter()
            .filter(|r| r.event.action == action && r.event.status == "success")
            .count()
    };
    let v =
        g.c.trail()
            .audit_verify(&|_, _| {}, &AtomicBool::new(false))
            .await
            .unwrap();
    let report = serde_json::json!({"soak_ha": {
        "seed": seed, "seconds": started.elapsed().as_secs(), "members": MEMBERS,
        "operations": t.attempted, "succeeded": t.succeeded, "failed_with_clear_error": t.failed,
        "errors": t.by_code, "lost": lost, "hung": t.hung, "member_downs": t.downs,
        "member_ups": t.ups, "signatures": t.signed.len(), "audit_sign_records": ok("sign"),
        "keys_made": t.made.len(), "audit_key_records": ok("key.generate") - 1,
        "keys_missing_on_members": missing_on_members, "trail_intact": v.is_intact(),
    }});
    eprintln!("{report}");
    let out = testkit::repo_root().join("target/soak");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(
        out.join(format!("soak-ha-{seed}.json")),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
    assert_eq!(t.attempted, t.succeeded + t.failed + t.hung);
    assert_eq!(t.hung, 0);
    assert_eq!(lost, 0);
    assert_eq!(
        missing_on_members, 0,
        "resync leaves every member with every key"
    );
    assert_eq!(ok("sign"), t.signed.len());
    assert_eq!(ok("key.generate") - 1, t.made.len());
    assert!(v.is_intact(), "{v:?}");
    assert!(t.downs > 0 && t.succeeded > t.attempted / 2, "{report}");
    g.c.close().await;
}

/// A console logged in on the virtual slot of a three-member lunasim group that resyncs
/// on its own, with the soak's signing key (its public key in `pub_pem`) and a folder for
/// the artifacts.
struct Group {
    rig: HaRig,
    c: Arc<Console>,
    pid: String,
    signer_id: String,
    pub_pem: std::path::PathBuf,
    files: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

/// What the soak did and what became of it.
#[derive(Default)]
struct Tally {
    attempted: u64,
    succeeded: u64,
    failed: u64,
    hung: u64,
    downs: u64,
    ups: u64,
    by_code: BTreeMap<String, u64>,
    /// (artifact, signature) for each signature the console reported made.
    signed: Vec<(std::path::PathBuf, String)>,
    /// The label of each key the console reported made.
    made: Vec<String>,
}

fn ec_request(label: String) -> GenerateRequest {
    GenerateRequest {
        spec: KeySpec::Ec { curve: Curve::P256 },
        label,
        token: true,
        extractable: false,
        always_authenticate: false,
    }
}

impl Group {
    async fn open() -> Group {
        let rig = HaRig::group(MEMBERS, "auto_resync = true\n", "");
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = ConsoleConfig::new(dir.path().join("data"));
        cfg.builtin = false;
        let c: Arc<Console> = Console::open(cfg).await.unwrap();
        let m = c
            .add_module(&rig.module_path.display().to_string())
            .await
            .unwrap();
        let pid = c
            .slots(&m.id)
            .await
            .unwrap()
            .into_iter()
            .find(|s| s.slot_id == HA_SLOT)
            .and_then(|s| s.partition_id)
            .expect("the virtual slot is a partition");
        c.login(&pid, UserKind::User, p11::pin(testkit::USER_PIN))
            .await
            .unwrap();
        let signer = c
            .admin()
            .generate_key(&pid, ec_request("ha_soak_signer".into()))
            .await
            .unwrap();
        let pub_pem = dir.path().join("ha_soak_signer.pub.pem");
        let pk = c
            .admin()
            .export_public_key(&pid, signer.public_handle.unwrap(), PublicKeyFormat::Pem)
            .await
            .unwrap();
        std::fs::write(&pub_pem, pk.text.unwrap()).unwrap();
        let files = dir.path().join("artifacts");
        std::fs::create_dir_all(&files).unwrap();
        Group {
            rig,
            c,
            pid,
            signer_id: signer.id_hex,
            pub_pem,
            files,
            _dir: dir,
        }
    }

    /// `ops` operations (sign, generate, list) chosen by `seed`, a member failing or coming
    /// back before about one in three (at most two down); then all back and resynced.
    async fn run(&self, ops: u64, seed: u64, t: &mut Tally) {
        let mut rng = Rng(seed.max(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut down: Vec<usize> = Vec::new();
        let limit = Duration::from_secs(90);
        for i in 0..ops {
            // A member fails or comes back before about one operation in three.
            if rng.below(3) == 0 {
                let member = rng.below(MEMBERS as u64) as usize + 1;
                if let Some(at) = down.iter().position(|m| *m == member) {
                    self.rig
                        .control(&format!(r#"{{"op":"member_up","member":{member}}}"#));
                    down.remove(at);
                    t.ups += 1;
                } else if down.len() < MEMBERS - 1 {
                    self.rig
                        .control(&format!(r#"{{"op":"member_down","member":{member}}}"#));
                    down.push(member);
                    t.downs += 1;
                }
            }
            t.attempted += 1;
            let op = rng.below(5);
            let outcome: Result<(), ApiError> =
                match tokio::time::timeout(limit, self.operation(i, op, t)).await {
                    Ok(r) => r,
                    Err(_) => {
                        t.hung += 1;
                        Ok(())
                    }
                };
            match outcome {
                Ok(()) => t.succeeded += 1,
                Err(e) => {
                    assert!(
                        !e.message.trim().is_empty() && e.code != ErrorCode::Internal,
                        "an error that does not say what happened: {e:?}"
                    );
                    eprintln!(
                        "op {i} (kind {op}, down {down:?}): {:?}: {}",
                        e.code, e.message
                    );
                    t.failed += 1;
                    *t.by_code.entry(e.code.to_string()).or_default() += 1;
                    if e.code == ErrorCode::NotLoggedIn {
                        self.c
                            .login(&self.pid, UserKind::User, p11::pin(testkit::USER_PIN))
                            .await
                            .unwrap();
                    }
                }
            }
        }
        for member in down.drain(..) {
            self.rig
                .control(&format!(r#"{{"op":"member_up","member":{member}}}"#));
        }
        self.rig.control(r#"{"op":"resync"}"#);
    }

    /// Operation `i` of kind `op`: 0–2 sign a new artifact, 3 generates a key, else list;
    /// what the console reported made goes into `t`.
    async fn operation(&self, i: u64, op: u64, t: &mut Tally) -> Result<(), ApiError> {
        let (c, pid) = (&self.c, &self.pid);
        match op {
            0..=2 => {
                let f = self.files.join(format!("ha-{i:04}.bin"));
                std::fs::write(&f, format!("artifact {i} on the group")).unwrap();
                let req = common::sign_request(&self.signer_id, &f, SignFormat::Raw);
                let r = common::sign_with(c, pid, req).await?;
                match &r.files[0].error {
                    Some(e) => Err(e.clone()),
                    None => {
                        t.signed
                            .push((f.clone(), r.files[0].outputs[0].path.clone()));
                        Ok(())
                    }
                }
            }
            3 => {
                let label = format!("ha_soak_key_{i:04}");
                c.admin()
                    .generate_key(pid, ec_request(label.clone()))
                    .await?;
                t.made.push(label);
                Ok(())
            }
            _ => c.list_keys(pid).await.map(|_| ()),
        }
    }

    /// How many of the reported signatures do not verify and reported keys are not on the
    /// group, each said on stderr.
    async fn lost(&self, t: &Tally) -> u64 {
        let mut lost = 0u64;
        for (f, sig) in &t.signed {
            let v = self
                .c
                .signing()
                .verify_signature(
                    &f.display().to_string(),
                    sig,
                    Some(&self.pub_pem.display().to_string()),
                    None,
                )
                .await;
            if !matches!(v, Ok(ref v) if v.valid) {
                eprintln!("lost: the signature {sig} does not verify: {v:?}");
                lost += 1;
            }
        }
        let labels: Vec<String> = self
            .c
            .list_keys(&self.pid)
            .await
            .unwrap()
            .into_iter()
            .map(|k| k.label)
            .collect();
        for l in &t.made {
            if !labels.contains(l) {
                eprintln!("lost: the key {l} was reported made and is not on the group");
                lost += 1;
            }
        }
        lost
    }

    /// Every member holds every key once all are back and resynced (read on the members' own
    /// slots, not through the group): how many (member, key) pairs are not there once.
    fn keys_missing_on_members(&self, made: &[String]) -> u64 {
        let mut missing_on_members = 0u64;
        for (n, slot) in self.rig.members.iter().enumerate() {
            let s = self.rig.module.open_session(*slot, false).unwrap();
            s.login(p11::UserType::User, &p11::pin(testkit::USER_PIN))
                .unwrap();
            for l in made {
                let found = s
                    .find_objects(
                        &mut Template::new()
                            .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
                            .text(CKA_LABEL, l),
                    )
                    .unwrap();
                if found.len() != 1 {
                    eprintln!(
                        "member {}: the key {l} is there {} times",
                        n + 1,
                        found.len()
                    );
                    missing_on_members += 1;
                }
            }
        }
        missing_on_members
    }
}
