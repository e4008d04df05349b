//! The pool recovers by itself from faults a network HSM shows (a device error, a reply
//! lost after the work was done), and the console finishes what it was doing without
//! telling the officer about it — never twice: a key is made once, deleted once, a file
//! signed with its record saying it was signed again. lunasim injects the faults; Kryoptic
//! behind it numbers its objects anew when the module is initialized again.

use console::sign::SignFormat;
use console::views::{GenerateRequest, RecordView};
use hsm::algo::{Curve, KeySpec};
use hsm::pubkey::PublicKeyFormat;

use crate::common;

async fn control(e: &common::Env, cmd: &str) {
    let p = e.c.partition_ref(&e.pid).await.unwrap();
    p.module.module.sim_control(cmd).unwrap();
}

/// The records of exactly `action` (the query also matches `action.request`).
async fn records(e: &common::Env, action: &str) -> Vec<RecordView> {
    e.c.trail()
        .audit_records(audit::store::Query {
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
        e.c.admin()
            .export_public_key(&e.pid, shown, PublicKeyFormat::Pem)
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
        e.c.admin()
            .export_public_key(&e.pid, shown, PublicKeyFormat::Pem)
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
        p11::handle_generation(now.handle),
        p11::handle_generation(shown),
        "the listing after the reconnect hands out handles of the new module generation"
    );
    let details = e.c.admin().key_details(&e.pid, shown).await.unwrap();
    assert_eq!(details.summary.handle, now.handle);
    assert_eq!(details.summary.label, "rec_shown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_deletion_deletes_once() {
    let e = common::builtin().await;
    for (case, after) in [("rec_del_reply_lost", true), ("rec_del_not_reached", false)] {
        let k = e.generate(KeySpec::Ec { curve: Curve::P256 }, case).await;
        let hs = [k.private_handle];
        let phrase = e.c.admin().deletion_phrase(&e.pid, &hs).await.unwrap();
        control(&e,
            &format!(
                r#"{{"op":"fail","function":"C_DestroyObject","rv":"CKR_DEVICE_ERROR","after":{after}}}"#
            ),
        ).await;
        let r =
            e.c.admin()
                .destroy_keys(&e.pid, &hs, &phrase)
                .await
                .unwrap();
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
            e.c.admin()
                .generate_key(
                    &e.pid,
                    GenerateRequest {
                        spec: KeySpec::Ec { curve: Curve::P256 },
                        label: case.into(),
                        token: true,
                        extractable: false,
                        always_authenticate: false,
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
        e.c.admin()
            .export_public_key(&e.pid, k.public_handle.unwrap(), PublicKeyFormat::Pem)
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
    let r = e
        .try_sign(common::sign_request(&k.id_hex, &f, SignFormat::Raw))
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
        e.c.signing()
            .minisign_public_key(&e.pid, k.private_handle)
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
        let r = e
            .try_sign(common::sign_request(&k.id_hex, &f, SignFormat::Minisign))
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

/// Between the listing the officer chose from and the change, the HSM reconnects and the
/// token numbers its objects anew (lunasim's `renumber`), so the number each chosen handle
/// carried now belongs to another object. Every change — an edit, a deletion, a wrap, a
/// signature — reaches the object chosen (found again by its Luna OUID), never the one now
/// carrying its number; a handle the console never handed out is refused, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_after_a_renumbering_reconnect_reach_the_chosen_object() {
    use console::attributes::AttributeChanges;
    use p11::sys::*;
    let e = common::builtin().await;
    for label in ["rn_edit", "rn_delete", "rn_sign"] {
        e.generate(KeySpec::Ec { curve: Curve::P256 }, label).await;
    }
    e.generate(KeySpec::Aes { bits: 256 }, "rn_wrapper").await;
    common::on(&e, |s| {
        s.generate_key(
            &p11::Mechanism::new(CKM_AES_KEY_GEN),
            &mut p11::Template::new()
                .ulong(CKA_VALUE_LEN, 32)
                .bool(CKA_TOKEN, true)
                .bool(CKA_PRIVATE, true)
                .bool(CKA_SENSITIVE, true)
                .bool(CKA_EXTRACTABLE, true)
                .bool(CKA_ENCRYPT, true)
                .text(CKA_LABEL, "rn_data")
                .bytes(CKA_ID, b"rn_data"),
        )
    })
    .await;
    // Made last, so that the renumbering moves another object onto each number above.
    e.generate(KeySpec::Aes { bits: 128 }, "rn_pad").await;
    let listed = e.c.list_keys(&e.pid).await.unwrap();
    let chosen = |label: &str, class: &str| {
        listed
            .iter()
            .find(|o| o.label == label && o.class == class)
            .unwrap()
            .clone()
    };
    let (edit, delete, sign, wrapper, data) = (
        chosen("rn_edit", "PRIVATE_KEY"),
        chosen("rn_delete", "PRIVATE_KEY"),
        chosen("rn_sign", "PRIVATE_KEY"),
        chosen("rn_wrapper", "SECRET_KEY"),
        chosen("rn_data", "SECRET_KEY"),
    );
    let kcv =
        e.c.admin()
            .key_check_value(&e.pid, data.handle)
            .await
            .unwrap();

    control(&e, r#"{"op":"renumber","enabled":true}"#).await;
    control(
        &e,
        r#"{"op":"fail","function":"*","rv":"CKR_DEVICE_REMOVED","count":1}"#,
    )
    .await;
    let relisted = e.c.list_keys(&e.pid).await.unwrap();
    // What carries each chosen handle's number now: another object, every time.
    let holder = |o: &hsm::keys::ObjectSummary| {
        let h = relisted
            .iter()
            .find(|n| p11::token_handle(n.handle) == p11::token_handle(o.handle))
            .unwrap_or_else(|| panic!("{}'s old number names no object now", o.label))
            .clone();
        assert!(o.unique_id.is_some(), "lunasim gives {} an OUID", o.label);
        assert_ne!(h.unique_id, o.unique_id, "{} kept its number", o.label);
        h
    };
    let by_uid = |list: &[hsm::keys::ObjectSummary], o: &hsm::keys::ObjectSummary| {
        list.iter().find(|n| n.unique_id == o.unique_id).cloned()
    };

    // An edit by the old handle renames the chosen key, not the holder of its number.
    let edit_holder = holder(&edit);
    e.c.admin()
        .set_attributes(
            &e.pid,
            edit.handle,
            AttributeChanges {
                label: Some("rn_edited".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let now = e.c.list_keys(&e.pid).await.unwrap();
    assert_eq!(by_uid(&now, &edit).unwrap().label, "rn_edited");
    assert_eq!(by_uid(&now, &edit_holder).unwrap().label, edit_holder.label);

    // A deletion by the old handle: the phrase names the chosen key; it alone goes.
    let delete_holder = holder(&delete);
    let phrase =
        e.c.admin()
            .deletion_phrase(&e.pid, &[delete.handle])
            .await
            .unwrap();
    assert!(phrase.contains("rn_delete"), "{phrase}");
    let r =
        e.c.admin()
            .destroy_keys(&e.pid, &[delete.handle], &phrase)
            .await
            .unwrap();
    assert_eq!((r.destroyed.len(), r.failed.len()), (1, 0), "{r:?}");
    let now = e.c.list_keys(&e.pid).await.unwrap();
    assert!(by_uid(&now, &delete).is_none(), "the chosen key is gone");
    assert!(
        by_uid(&now, &delete_holder).is_some(),
        "the holder of its number stays"
    );

    // A wrap by the old handles wraps the chosen key under the chosen wrapping key.
    holder(&data);
    holder(&wrapper);
    let file = e.dir.path().join("rn_data.wrapped.json");
    let w =
        e.c.admin()
            .wrap_key(&e.pid, data.handle, wrapper.handle, &file, None, true)
            .await
            .unwrap();
    assert_eq!(w.kcv.as_deref(), Some(kcv.as_str()));
    let wrapped: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(wrapped["label"], "rn_data", "{wrapped}");

    // A signature by the old handle is made with the chosen key.
    holder(&sign);
    let doc = e.dir.path().join("rn.txt");
    std::fs::write(&doc, b"renumbered").unwrap();
    let mut req = common::sign_request(&sign.id_hex, &doc, SignFormat::Raw);
    req.key = format!("handle:{}", sign.handle);
    let report = e.try_sign(req).await.unwrap();
    assert_eq!(report.key.label, "rn_sign", "{report:?}");
    assert_eq!(report.signatures_made, 1, "{report:?}");

    // A number the console never handed out, from before the reconnect: refused, named.
    let never = 0xFFFF_FFF0_u64;
    let err = e.c.admin().key_details(&e.pid, never).await.unwrap_err();
    assert_eq!(err.code, console::ErrorCode::KeyNotFound, "{err:?}");
    assert!(err.message.contains(&never.to_string()), "{}", err.message);
}
