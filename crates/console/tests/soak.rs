//! A soak: a mixed workload through the console's services on the built-in partition while
//! lunasim injects random faults (device errors, disconnects, all sessions dropped, slow
//! calls). Every operation ends, within a bound, either in success or in an error that says
//! what happened; nothing the console reported as done is missing (signatures on disk and
//! valid, keys and imported objects on the token once each, one audit record each); a PIN
//! change's outcome is what the console said it was (the PIN it names logs in); the trail
//! verifies at the end.
//!
//! The pool recovers what it can by itself (a session reopened, the module reinitialized,
//! the call retried; a key shown by handle found again by its `CKA_ID`): the failures left
//! are faults that outlast its recovery budget, counted by code apart from the recovered
//! calls.
//!
//! Bounded by operations and, when `SOAK_SECONDS` is set, by time: `SOAK_OPS` (default 150),
//! `SOAK_SEED` (default 7). Prints one JSON line with the counts (the book's reliability
//! table) and writes it to `target/soak/soak-<seed>.json`. Long runs: the nextest profile
//! `soak` (`--profile soak`) lets the test run for hours.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use console::attributes::AttributeChanges;
use console::objects::ImportRequest;
use console::sign::SignFormat;
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
    let seconds: Option<u64> = std::env::var("SOAK_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok());
    let ops = if seconds.is_some() && std::env::var("SOAK_OPS").is_err() {
        u64::MAX // the time bound alone
    } else {
        ops
    };
    let started = Instant::now();
    let common::Env { c, pid, dir, .. } = &common::builtin().await;
    // What an officer does after the HSM dropped the sessions: log in again, with the PIN
    // the console last said is valid (PIN changes move it between these two).
    const OTHER_PIN: &str = "soak-other-pin-8642";
    let mut pin = console::builtin::USER_PIN.to_string();
    let login = |pin: &str| c.login(pid, UserKind::User, p11::pin(pin.to_string()));
    let sim = c.partition_ref(pid).await.unwrap();
    let control = |cmd: &str| sim.module.module.sim_control(cmd).unwrap();
    let signer = c
        .generate_key(
            pid,
            GenerateRequest {
                spec: KeySpec::Ec { curve: Curve::P256 },
                label: "soak_signer".into(),
                token: true,
                extractable: false,
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
    let mut imported: Vec<String> = Vec::new(); // data objects the console said it made
    let (mut pin_changes, mut pin_unknown) = (0u64, 0u64);
    let mut destroyed: Vec<String> = Vec::new();
    let limit = Duration::from_secs(90);
    let mut slowest = Duration::ZERO;
    for i in 0..ops {
        if seconds.is_some_and(|s| started.elapsed() >= Duration::from_secs(s)) {
            break;
        }
        if rng.below(4) == 0 {
            control(FAULTS[rng.below(FAULTS.len() as u64) as usize]);
            n.faults += 1;
        }
        n.attempted += 1;
        let op = rng.below(14);
        let op_started = Instant::now();
        let outcome: Result<(), ApiError> = match tokio::time::timeout(limit, async {
            match op {
                0..=4 => {
                    let f = files.join(format!("release-{i:04}.bin"));
                    std::fs::write(&f, format!("artifact {i} {}", rng_bytes(i))).unwrap();
                    let req = common::sign_request(&signer.id_hex, &f, SignFormat::Raw);
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
                                extractable: false,
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
                9 => c
                    .export_public_key(pid, signer_pub, PublicKeyFormat::Pem)
                    .await
                    .map(|_| ()),
                10 => c.key_details(pid, signer_pub).await.map(|_| ()),
                12 => {
                    let label = format!("soak_data_{i:04}");
                    let f = files.join(format!("{label}.txt"));
                    std::fs::write(&f, format!("notes {i} {}", rng_bytes(i))).unwrap();
                    c.import_objects(
                        pid,
                        ImportRequest {
                            path: f,
                            label: Some(label.clone()),
                            id_hex: None,
                            data: true,
                            application: Some("soak".into()),
                        },
                    )
                    .await?;
                    imported.push(label);
                    Ok(())
                }
                // A PIN change, back and forth: the PIN the console says is valid afterwards
                // is the one the next login uses — a wrong word here fails the soak.
                13 => {
                    let new = if pin == OTHER_PIN {
                        console::builtin::USER_PIN
                    } else {
                        OTHER_PIN
                    };
                    match c
                        .change_pin(pid, p11::pin(pin.clone()), p11::pin(new.to_string()))
                        .await
                    {
                        Ok(_) => {
                            pin = new.to_string();
                            pin_changes += 1;
                            Ok(())
                        }
                        Err(e) => {
                            let said = c
                                .audit_records(audit::store::Query {
                                    action: Some("pin.change".into()),
                                    limit: 5,
                                    ..Default::default()
                                })
                                .await
                                .unwrap()
                                .into_iter()
                                .find(|r| r.event.action == "pin.change")
                                .and_then(|r| {
                                    serde_json::from_str::<serde_json::Value>(&r.event.metadata)
                                        .ok()?
                                        .get("pin_now")?
                                        .as_str()
                                        .map(String::from)
                                });
                            match said.as_deref() {
                                Some("new") => pin = new.to_string(),
                                Some("unknown") => {
                                    // The console's advice: the new PIN first, then the old.
                                    pin_unknown += 1;
                                    control(r#"{"op":"clear"}"#);
                                    if login(new).await.is_ok() {
                                        pin = new.to_string();
                                    } else {
                                        login(&pin).await.unwrap();
                                    }
                                }
                                _ => {}
                            }
                            Err(e)
                        }
                    }
                }
                // An attribute edit on the signer's public half (label unchanged, so the
                // other operations keep finding it), through a handle from a fresh listing
                // as the window's edit dialog has it: a number held across reconnects may
                // name another object by now (see the recovery paragraph in docs/src/reliability.md).
                _ => {
                    let keys = c.list_keys(pid).await?;
                    let Some(k) = keys
                        .iter()
                        .find(|k| k.id_hex == signer.id_hex && k.class == "PUBLIC_KEY")
                    else {
                        return Err(ApiError::new(ErrorCode::KeyNotFound, "signer not listed"));
                    };
                    c.set_attributes(
                        pid,
                        k.handle,
                        AttributeChanges {
                            label: Some("soak_signer".into()),
                            ..Default::default()
                        },
                    )
                    .await
                    .map(|_| ())
                }
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
        slowest = slowest.max(op_started.elapsed());
        match outcome {
            Ok(()) => n.succeeded += 1,
            Err(e) => {
                eprintln!("op {i} (kind {op}): {:?}: {}", e.code, e.message);
                n.failed(&e);
                if e.code == ErrorCode::KeyNotFound && op >= 9 {
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
                    login(&pin).await.unwrap();
                    n.relogins += 1;
                }
            }
        }
    }
    control(r#"{"op":"clear"}"#);
    if c.list_keys(pid).await.is_err() {
        login(&pin).await.unwrap();
    }
    // Every data object the console said it imported is on the token, once.
    let objects = c.list_objects(pid, None).await.unwrap();
    let mut duplicated = 0u64;
    for l in &imported {
        match objects.iter().filter(|o| &o.label == l).count() {
            0 => {
                eprintln!(
                    "lost: the data object {l} was reported imported and is not on the token"
                );
                n.lost += 1;
            }
            1 => {}
            k => {
                eprintln!("duplicated: the data object {l} is on the token {k} times");
                duplicated += 1;
            }
        }
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
            eprintln!(
                "lost: the signature {} does not verify: {v:?}",
                sig.display()
            );
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
            eprintln!("lost: the key {l} was reported made and is not on the token");
            n.lost += 1;
        }
    }
    for l in &destroyed {
        assert!(
            !labels.contains(l),
            "{l} was reported destroyed but is on the token"
        );
    }
    // Every record, a page at a time (the console answers at most 1,000 per query).
    let mut records = Vec::new();
    loop {
        let page = c
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
    let ok = |action: &str| {
        records
            .iter()
            .filter(|r| r.event.action == action && r.event.status == "success")
            .count()
    };
    let audit_signs = ok("sign");
    let audit_keys = ok("key.generate") - 1; // the signer
    let mut records_by_action: BTreeMap<String, u64> = BTreeMap::new();
    for r in &records {
        *records_by_action
            .entry(format!("{} {}", r.event.action, r.event.status))
            .or_default() += 1;
    }
    let v = c
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap();
    let pool = sim.pool.metrics();
    let report = serde_json::json!({"soak": {
        "seed": seed, "seconds": started.elapsed().as_secs(), "operations": n.attempted,
        "succeeded": n.succeeded, "failed_with_clear_error": n.failed_clearly, "lost": n.lost,
        "hung": n.hung, "faults_injected": n.faults, "relogins": n.relogins,
        "handle_refreshes": refreshes, "errors": n.by_code,
        "recovered_calls": pool.recovered_calls, "module_recoveries": pool.module_recoveries,
        "session_reopens": pool.session_reopens, "max_latency_ms": slowest.as_millis() as u64,
        "signatures": signed.len(), "audit_sign_records": audit_signs,
        "keys_made": made.len(), "audit_key_records": audit_keys,
        "objects_imported": imported.len(), "objects_duplicated": duplicated,
        "pin_changes": pin_changes, "pin_changes_unknown": pin_unknown,
        "audit_records": records.len(), "audit_records_by_action": records_by_action,
        "trail_intact": v.is_intact(),
    }});
    eprintln!("{report}");
    let out = testkit::repo_root().join("target/soak");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(
        out.join(format!("soak-{seed}.json")),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
    assert_eq!(n.attempted, n.succeeded + n.failed_clearly + n.hung);
    assert_eq!(n.hung, 0, "an operation did not end within {limit:?}");
    assert_eq!(n.lost, 0, "{n:?}");
    assert_eq!(duplicated, 0, "an import made its object twice");
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
    // The faults happened, and the pool recovered calls the officer never saw fail.
    assert!(
        n.faults > n.attempted / 8 && n.succeeded > n.attempted / 2,
        "{n:?}"
    );
    assert!(pool.recovered_calls > 0, "{pool:?}");
    c.close().await;
}

fn rng_bytes(i: u64) -> String {
    format!("{:x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}
