//! The pool recovers by itself from faults a network HSM shows (a device error, a reply
//! lost after the work was done), and the console finishes what it was doing without
//! telling the officer about it — never twice: a key is made once, deleted once, a file
//! signed with its record saying it was signed again. lunasim injects the faults; Kryoptic
//! behind it numbers its objects anew when the module is initialized again.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use console::sign::SignFormat;
use console::views::{GenerateRequest, RecordView};
use hsm::algo::{Curve, KeySpec};
use hsm::pubkey::PublicKeyFormat;

mod common;

async fn control(e: &common::Env, cmd: &str) {
    let p = e.c.partition_ref(&e.pid).await.unwrap();
    p.module.module.sim_control(cmd).unwrap();
}

/// The records of exactly `action` (the query also matches `action.request`).
async fn records(e: &common::Env, action: &str) -> Vec<RecordView> {
    e.c.audit_records(audit::store::Query {
        limit: 1000,
        action: Some(action.into()),
        ..Default::default()
    })
    .await
    .unwrap()
    .into_iter()
    .filter(|r| r.event.action == action)
    .collect()
}

fn meta(r: &RecordView) -> serde_json::Value {
    serde_json::from_str(&r.event.metadata).unwrap()
}

async fn recovered_calls(e: &common::Env) -> u64 {
    e.c.partition_ref(&e.pid)
        .await
        .unwrap()
        .pool
        .metrics()
        .recovered_calls
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_shown_by_handle_is_found_again_after_the_hsm_reconnects() {
    let e = common::builtin().await;
    let k = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "rec_shown")
        .await;
    let shown = k.public_handle.unwrap();
    let before =
        e.c.export_public_key(&e.pid, shown, PublicKeyFormat::Pem)
            .await
            .unwrap();
    let recovered = recovered_calls(&e).await;

    // The next call meets a removed device: the pool initializes the module again.
    control(
        &e,
        r#"{"op":"fail","function":"*","rv":"CKR_DEVICE_REMOVED","count":1}"#,
    )
    .await;
    let after =
        e.c.export_public_key(&e.pid, shown, PublicKeyFormat::Pem)
            .await
            .unwrap();
    assert_eq!(after.fingerprint, before.fingerprint);
    assert_eq!(after.text, before.text);
    assert_eq!(recovered_calls(&e).await, recovered + 1);

    // The handle the window holds named the key before; the token numbers it anew now.
    let listed = e.c.list_keys(&e.pid).await.unwrap();
    let now = listed
        .iter()
        .find(|o| o.id_hex == k.id_hex && o.class == "PUBLIC_KEY")
        .unwrap();
    assert_ne!(
        now.handle, shown,
        "Kryoptic kept its numbering across C_Initialize: this test no longer shows a lookup by CKA_ID"
    );
    let details = e.c.key_details(&e.pid, shown).await.unwrap();
    assert_eq!(details.summary.handle, now.handle);
    assert_eq!(details.summary.label, "rec_shown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_deletion_deletes_once() {
    let e = common::builtin().await;
    for (case, after) in [("rec_del_reply_lost", true), ("rec_del_not_reached", false)] {
        let k = e.generate(KeySpec::Ec { curve: Curve::P256 }, case).await;
        let hs = [k.private_handle];
        let phrase = e.c.deletion_phrase(&e.pid, &hs).await.unwrap();
        control(&e,
            &format!(
                r#"{{"op":"fail","function":"C_DestroyObject","rv":"CKR_DEVICE_ERROR","after":{after}}}"#
            ),
        ).await;
        let r = e.c.destroy_keys(&e.pid, &hs, &phrase).await.unwrap();
        assert!(r.failed.is_empty(), "{case}: {:?}", r.failed);
        assert_eq!(r.destroyed, hs);
        let left: Vec<_> =
            e.c.list_keys(&e.pid)
                .await
                .unwrap()
                .into_iter()
                .filter(|o| o.id_hex == k.id_hex)
                .map(|o| o.class)
                .collect();
        assert_eq!(left, ["PUBLIC_KEY"], "{case}: only the public half is left");
        let done: Vec<_> = records(&e, "key.destroy")
            .await
            .into_iter()
            .filter(|r| r.event.resource_id.as_deref() == Some(case))
            .collect();
        assert_eq!(done.len(), 1, "{case}: one record");
        assert_eq!(done[0].event.status, "success");
        // Settled by reading the token exactly when the first attempt had done the work.
        assert_eq!(
            meta(&done[0])["settled_after_reconnect"]
                .as_bool()
                .unwrap_or(false),
            after,
            "{case}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_generation_makes_one_key() {
    let e = common::builtin().await;
    for (case, after) in [("rec_gen_reply_lost", true), ("rec_gen_not_reached", false)] {
        control(&e,
            &format!(
                r#"{{"op":"fail","function":"C_GenerateKeyPair","rv":"CKR_DEVICE_ERROR","after":{after}}}"#
            ),
        ).await;
        let g =
            e.c.generate_key(
                &e.pid,
                GenerateRequest {
                    spec: KeySpec::Ec { curve: Curve::P256 },
                    label: case.into(),
                    token: true,
                    extractable: false,
                },
            )
            .await
            .unwrap();
        let mut made: Vec<String> =
            e.c.list_keys(&e.pid)
                .await
                .unwrap()
                .into_iter()
                .filter(|o| o.label == case)
                .map(|o| format!("{} {}", o.class, o.id_hex))
                .collect();
        made.sort();
        assert_eq!(
            made,
            [
                format!("PRIVATE_KEY {}", g.id_hex),
                format!("PUBLIC_KEY {}", g.id_hex)
            ],
            "{case}: one pair, under the ID the console reported"
        );
        assert!(g.public_key.is_some(), "{case}");
        let done: Vec<_> = records(&e, "key.generate")
            .await
            .into_iter()
            .filter(|r| r.event.resource_id.as_deref() == Some(case))
            .collect();
        assert_eq!(done.len(), 1, "{case}");
        assert_eq!(
            meta(&done[0])["settled_after_reconnect"]
                .as_bool()
                .unwrap_or(false),
            after,
            "{case}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signature_interrupted_by_a_device_error_is_made_again_and_says_so() {
    let e = common::builtin().await;
    let k = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "rec_signer")
        .await;
    let pem = e.dir.path().join("rec_signer.pem");
    let pk =
        e.c.export_public_key(&e.pid, k.public_handle.unwrap(), PublicKeyFormat::Pem)
            .await
            .unwrap();
    std::fs::write(&pem, pk.text.unwrap()).unwrap();
    let f = e.dir.path().join("release.tar");
    std::fs::write(&f, b"release contents").unwrap();
    control(
        &e,
        r#"{"op":"fail","function":"C_Sign","rv":"CKR_DEVICE_ERROR","count":1}"#,
    )
    .await;
    let r =
        e.c.sign_files(
            &e.pid,
            common::sign_request(&k.id_hex, &f, SignFormat::Raw),
            Arc::new(|_| {}),
            Arc::new(AtomicBool::new(false)),
        )
        .await
        .unwrap();
    assert!(r.files[0].error.is_none(), "{:?}", r.files[0].error);
    // Checked by OpenSSL, not by the code that signed (raw ECDSA is DER).
    let sig = &r.files[0].outputs[0].path;
    let out = std::process::Command::new("openssl")
        .args(["dgst", "-sha256", "-verify"])
        .arg(&pem)
        .arg("-signature")
        .arg(sig)
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let signed = records(&e, "sign").await;
    assert_eq!(signed.len(), 1);
    assert_eq!(meta(&signed[0])["retried_after_recovery"], true);
}

/// minisign signs twice per file (the signature and the global signature over the trusted
/// comment): a device error before either, or a reply lost after one, makes the file's
/// signatures again, and Debian's minisign accepts what was written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minisign_signature_interrupted_by_a_device_error_is_made_again_and_minisign_accepts_it()
{
    let e = common::builtin().await;
    let k = e
        .generate(
            KeySpec::Ec {
                curve: Curve::Ed25519,
            },
            "rec_minisign",
        )
        .await;
    let pubkey =
        e.c.minisign_public_key(&e.pid, k.private_handle)
            .await
            .unwrap();
    let pubf = e.dir.path().join("rec_minisign.pub");
    std::fs::write(&pubf, &pubkey.text).unwrap();
    for (case, fault) in [
        (
            "before",
            r#"{"op":"fail","function":"C_Sign","rv":"CKR_DEVICE_ERROR","count":1}"#,
        ),
        (
            "reply_lost",
            r#"{"op":"fail","function":"C_Sign","rv":"CKR_DEVICE_ERROR","count":1,"after":true}"#,
        ),
    ] {
        let f = e.dir.path().join(format!("release-{case}.tar"));
        std::fs::write(&f, format!("release contents {case}")).unwrap();
        control(&e, fault).await;
        let r =
            e.c.sign_files(
                &e.pid,
                common::sign_request(&k.id_hex, &f, SignFormat::Minisign),
                Arc::new(|_| {}),
                Arc::new(AtomicBool::new(false)),
            )
            .await
            .unwrap();
        assert!(r.files[0].error.is_none(), "{case}: {:?}", r.files[0].error);
        let out = std::process::Command::new("minisign")
            .arg("-V")
            .arg("-m")
            .arg(&f)
            .arg("-p")
            .arg(&pubf)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{case}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let signed: Vec<_> = records(&e, "sign")
            .await
            .into_iter()
            .filter(|r| {
                r.event
                    .resource_id
                    .as_deref()
                    .is_some_and(|n| n.ends_with(&format!("release-{case}.tar")))
            })
            .collect();
        assert_eq!(signed.len(), 1, "{case}");
        assert_eq!(meta(&signed[0])["retried_after_recovery"], true, "{case}");
    }
}
