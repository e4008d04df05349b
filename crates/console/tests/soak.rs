//! A soak: a mixed workload through the console's services on the built-in partition while
//! lunasim injects random faults (device errors, disconnects, all sessions dropped, slow
//! calls). Every operation ends, within a bound, either in success or in an error that says
//! what happened; nothing the console reported as done is missing (signatures on disk and
//! valid, keys on the token, one audit record each); the trail verifies at the end.
//!
//! Bounded by operations, not time: `SOAK_OPS` (default 150) and `SOAK_SEED` (default 7).
//! Prints one JSON line with the counts (the README's reliability table).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use console::sign::{OnError, SignFormat, SignRequest};
use console::views::{GenerateRequest, UserKind};
use console::{ApiError, ErrorCode};
use hsm::algo::{Curve, KeySpec};
use hsm::pubkey::PublicKeyFormat;

mod common;

/// xorshift64*: reproducible from the seed, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const FAULTS: &[&str] = &[
    r#"{"op":"fail","function":"C_Sign","rv":"CKR_DEVICE_ERROR","count":1}"#,
    r#"{"op":"fail","function":"C_GenerateKeyPair","rv":"CKR_DEVICE_ERROR","count":1}"#,
    r#"{"op":"fail","function":"*","rv":"CKR_DEVICE_REMOVED","count":2}"#,
    r#"{"op":"disconnect","count":3}"#,
    r#"{"op":"drop_sessions"}"#,
    r#"{"op":"slow","function":"C_Sign","ms":150}"#,
    r#"{"op":"fail","function":"C_FindObjects","rv":"CKR_SESSION_HANDLE_INVALID","count":3}"#,
];

#[derive(Default, Debug)]
struct Counts {
    attempted: u64,
    succeeded: u64,
    failed_clearly: u64,
    lost: u64,
    hung: u64,
    relogins: u64,
    faults: u64,
    by_code: BTreeMap<String, u64>,
}

impl Counts {
    fn failed(&mut self, e: &ApiError) {
        assert!(
            !e.message.trim().is_empty() && e.code != ErrorCode::Internal,
            "an error that does not say what happened: {e:?}"
        );
        self.failed_clearly += 1;
        *self.by_code.entry(e.code.to_string()).or_default() += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_with_random_faults_loses_nothing() {
    let ops: u64 = std::env::var("SOAK_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let seed: u64 = std::env::var("SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let common::Env { c, pid, dir, .. } = &common::builtin().await;
    // What an officer does after the HSM dropped the sessions: log in again.
    let login = || c.login(pid, UserKind::User, p11::pin(console::builtin::USER_PIN));
    let sim = c.partition_ref(pid).await.unwrap();
    let control = |cmd: &str| sim.module.module.sim_control(cmd).unwrap();
    let signer = c
        .generate_key(
            pid,
            GenerateRequest {
                spec: KeySpec::Ec { curve: Curve::P256 },
                label: "soak_signer".into(),
                token: true,
            },
        )
        .await
        .unwrap();
    let pub_pem = dir.path().join("soak_signer.pub.pem");
    let pk = c
        .export_public_key(pid, signer.public_handle.unwrap(), PublicKeyFormat::Pem)
        .await
        .unwrap();
    std::fs::write(&pub_pem, pk.text.unwrap()).unwrap();
    let files = dir.path().join("artifacts");
    std::fs::create_dir_all(&files).unwrap();

    let mut signer_pub = signer.public_handle.unwrap();
    let mut refreshes = 0u64;
    let mut rng = Rng(seed.max(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut n = Counts::default();
    let mut signed: Vec<(std::path::PathBuf, std::path::PathBuf)> = Vec::new();
    let mut made: Vec<String> = Vec::new(); // labels of keys the console said it made
    let mut destroyed: Vec<String> = Vec::new();
    let limit = Duration::from_secs(90);
    for i in 0..ops {
        if rng.below(4) == 0 {
            control(FAULTS[rng.below(FAULTS.len() as u64) as usize]);
            n.faults += 1;
        }
        n.attempted += 1;
        let op = rng.below(10);
        let outcome: Result<(), ApiError> = match tokio::time::timeout(limit, async {
            match op {
                0..=4 => {
                    let f = files.join(format!("release-{i:04}.bin"));
                    std::fs::write(&f, format!("artifact {i} {}", rng_bytes(i))).unwrap();
                    let req = SignRequest {
                        key: format!("id:{}", signer.id_hex),
                        files: vec![f.display().to_string()],
                        formats: vec![SignFormat::Raw],
                        manifest: false,
                        out_dir: None,
                        context: None,
                        on_error: OnError::Stop,
                        confirm_hss: false,
                        timestamp: None,
                    };
                    let r = c
                        .sign_files(pid, req, Arc::new(|_| {}), Arc::new(AtomicBool::new(false)))
                        .await?;
                    match &r.files[0].error {
                        Some(e) => Err(e.clone()),
                        None => {
                            signed.push((
                                f.clone(),
                                std::path::PathBuf::from(&r.files[0].outputs[0].path),
                            ));
                            Ok(())
                        }
                    }
                }
                5..=6 => {
                    let label = format!("soak_key_{i:04}");
                    let g = c
                        .generate_key(
                            pid,
                            GenerateRequest {
                                spec: KeySpec::Ec { curve: Curve::P256 },
                                label: label.clone(),
                                token: true,
                            },
                        )
                        .await?;
                    made.push(label.clone());
                    if i % 2 == 0 {
                        let hs = [g.private_handle, g.public_handle.unwrap()];
                        c.destroy_keys(pid, &hs, &label).await?;
                        destroyed.push(label);
                    }
                    Ok(())
                }
                7..=8 => c.list_keys(pid).await.map(|_| ()),
                _ => c
                    .export_public_key(pid, signer_pub, PublicKeyFormat::Pem)
                    .await
                    .map(|_| ()),
            }
        })
        .await
        {
            Ok(r) => r,
            Err(_) => {
                n.hung += 1;
                Ok(())
            }
        };
        match outcome {
            Ok(()) => n.succeeded += 1,
            Err(e) => {
                eprintln!("op {i} (kind {op}): {:?}: {}", e.code, e.message);
                n.failed(&e);
                if e.code == ErrorCode::KeyNotFound && op == 9 {
                    // The HSM reconnected and numbered its objects anew; the window refreshes
                    // its key list (by CKA_ID) and so does the officer here.
                    if let Ok(keys) = c.list_keys(pid).await {
                        if let Some(k) = keys
                            .iter()
                            .find(|k| k.id_hex == signer.id_hex && k.class.contains("PUBLIC"))
                        {
                            signer_pub = k.handle;
                            refreshes += 1;
                        }
                    }
                }
                if e.code == ErrorCode::NotLoggedIn {
                    control(r#"{"op":"clear"}"#);
                    login().await.unwrap();
                    n.relogins += 1;
                }
            }
        }
    }
    control(r#"{"op":"clear"}"#);
    if c.list_keys(pid).await.is_err() {
        login().await.unwrap();
    }

    // Nothing the console reported as done is missing.
    for (f, sig) in &signed {
        let v = c
            .verify_signature(
                &f.display().to_string(),
                &sig.display().to_string(),
                Some(&pub_pem.display().to_string()),
                None,
            )
            .await;
        if !matches!(v, Ok(ref v) if v.valid) {
            n.lost += 1;
        }
    }
    let labels: Vec<String> = c
        .list_keys(pid)
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.label)
        .collect();
    for l in made.iter().filter(|l| !destroyed.contains(l)) {
        if !labels.contains(l) {
            n.lost += 1;
        }
    }
    for l in &destroyed {
        assert!(
            !labels.contains(l),
            "{l} was reported destroyed but is on the token"
        );
    }
    let records = c
        .audit_records(audit::store::Query {
            limit: 100_000,
            ..Default::default()
        })
        .await
        .unwrap();
    let ok = |action: &str| {
        records
            .iter()
            .filter(|r| r.event.action == action && r.event.status == "success")
            .count()
    };
    let audit_signs = ok("sign");
    let audit_keys = ok("key.generate") - 1; // the signer
    let v = c
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    eprintln!(
        "{}",
        serde_json::json!({"soak": {
            "seed": seed, "operations": n.attempted, "succeeded": n.succeeded,
            "failed_with_clear_error": n.failed_clearly, "lost": n.lost, "hung": n.hung,
            "faults_injected": n.faults, "relogins": n.relogins, "handle_refreshes": refreshes, "errors": n.by_code,
            "signatures": signed.len(), "audit_sign_records": audit_signs,
            "keys_made": made.len(), "audit_key_records": audit_keys,
            "audit_records": records.len(), "trail_intact": v.is_intact(),
        }})
    );
    assert_eq!(n.attempted, n.succeeded + n.failed_clearly + n.hung);
    assert_eq!(n.hung, 0, "an operation did not end within {limit:?}");
    assert_eq!(n.lost, 0, "{n:?}");
    assert_eq!(
        audit_signs,
        signed.len(),
        "one audit record per signature reported done"
    );
    assert_eq!(
        audit_keys,
        made.len(),
        "one audit record per key reported made"
    );
    assert!(v.is_intact(), "{v:?}");
    assert!(
        n.faults > ops / 8 && n.failed_clearly > 0 && n.succeeded > ops / 2,
        "{n:?}"
    );
    c.close().await;
}

fn rng_bytes(i: u64) -> String {
    format!("{:x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}
