//! Key backup by wrapping, on two real tokens of different lineage — A a SoftHSM2 test token,
//! B the built-in partition (lunasim over Kryoptic) in another console (one test token per
//! process, and the built-in one takes Kryoptic's): token B makes an RSA wrapping key pair, its
//! public key is exported and imported on token A, A wraps an AES data key with it, B
//! unwraps it; both show the same KCV and data encrypted on A decrypts on B. A wrap file
//! for another key, a non-extractable key and an HSS key are refused with the reason.
//! One test per process (nextest).

use console::attributes::{AttributeChanges, FlagChange};
use console::objects::ImportRequest;
use console::views::GenerateRequest;
use hsm::algo::KeySpec;
use hsm::pubkey::PublicKeyFormat;
use p11::sys::*;
use p11::{Mechanism, Template};
use testkit::Backend;

mod common;

async fn wrap_on_a_unwrap_on_b(backend: Backend) {
    let b = common::builtin().await;
    let a = common::token(backend).await;
    // B: the wrapping pair; its private half may unwrap.
    let bk = b.generate(KeySpec::Rsa { bits: 2048 }, "b_wrapping").await;
    b.c.set_attributes(
        &b.pid,
        bk.private_handle,
        AttributeChanges {
            flags: vec![FlagChange {
                name: "unwrap".into(),
                value: true,
            }],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let pub_file = a.dir.path().join("b_wrapping.pub.pem");
    b.c.save_public_key(&b.pid, bk.private_handle, PublicKeyFormat::Pem, &pub_file)
        .await
        .unwrap();
    // A: B's public key imported; an extractable AES data key.
    let imported =
        a.c.import_objects(
            &a.pid,
            ImportRequest {
                path: pub_file.clone(),
                label: Some("b_wrapping_pub".into()),
                id_hex: None,
                data: false,
                application: None,
            },
        )
        .await
        .unwrap();
    let b_pub_on_a = imported.objects[0].handle;
    let sa = a.token().user_session();
    let data_key = sa
        .generate_key(
            &Mechanism::new(CKM_AES_KEY_GEN),
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_AES)
                .ulong(CKA_VALUE_LEN, 32)
                .bool(CKA_TOKEN, true)
                .bool(CKA_PRIVATE, true)
                .bool(CKA_SENSITIVE, true)
                .bool(CKA_EXTRACTABLE, true)
                .bool(CKA_ENCRYPT, true)
                .bool(CKA_DECRYPT, true)
                .text(CKA_LABEL, "data_key")
                .bytes(CKA_ID, &[0xda, 0x7a]),
        )
        .unwrap();
    let kcv_a = a.c.key_check_value(&a.pid, data_key).await.unwrap();
    assert_eq!(kcv_a.len(), 6);
    let file = a.dir.path().join("data_key.wrapped.json");
    let w =
        a.c.wrap_key(&a.pid, data_key, b_pub_on_a, &file)
            .await
            .unwrap();
    assert!(
        w.mechanism.starts_with("CKM_RSA_PKCS_OAEP"),
        "{}",
        w.mechanism
    );
    assert_eq!(w.kcv.as_deref(), Some(kcv_a.as_str()));
    // Never over the file.
    assert!(a
        .c
        .wrap_key(&a.pid, data_key, b_pub_on_a, &file)
        .await
        .is_err());

    // B unwraps it: same KCV, attributes restored; data from A decrypts on B.
    let u =
        b.c.unwrap_key(&b.pid, &file, bk.private_handle, None)
            .await
            .unwrap();
    assert_eq!(u.kcv.as_deref(), Some(kcv_a.as_str()));
    assert_eq!(u.summary.label, "data_key");
    assert_eq!(u.summary.id_hex, "da7a");
    assert!(u.summary.capabilities.encrypt && u.summary.capabilities.decrypt);
    assert_eq!(u.summary.sensitive, Some(true));
    let iv = [7u8; 16];
    let ct = sa
        .encrypt(
            &Mechanism::with_bytes(CKM_AES_CBC_PAD, &iv),
            data_key,
            b"secret release notes",
        )
        .unwrap();
    let pb = b.c.partition_ref(&b.pid).await.unwrap();
    let pt = pb
        .pool
        .run_async("test.decrypt", move |s| {
            let on_b = s.find_objects(
                &mut Template::new()
                    .ulong(CKA_CLASS, CKO_SECRET_KEY)
                    .text(CKA_LABEL, "data_key"),
            )?;
            s.decrypt(&Mechanism::with_bytes(CKM_AES_CBC_PAD, &iv), on_b[0], &ct)
        })
        .await
        .unwrap();
    assert_eq!(pt, b"secret release notes");

    // A wrap file from another key: refused by name before the token is asked.
    let other = b.generate(KeySpec::Rsa { bits: 2048 }, "b_other").await;
    let err =
        b.c.unwrap_key(&b.pid, &file, other.private_handle, None)
            .await
            .unwrap_err();
    assert!(
        err.message.contains("data_key.wrapped.json") && err.message.contains("another key"),
        "{}",
        err.message
    );
    // Non-extractable keys and HSS keys are not wrapped, with the reason.
    let fixed =
        a.c.generate_key(
            &a.pid,
            GenerateRequest {
                spec: KeySpec::Aes { bits: 256 },
                label: "fixed".into(),
                token: true,
            },
        )
        .await
        .unwrap();
    let err =
        a.c.wrap_key(
            &a.pid,
            fixed.private_handle,
            b_pub_on_a,
            &a.dir.path().join("x.json"),
        )
        .await
        .unwrap_err();
    assert!(err.message.contains("not extractable"), "{}", err.message);
    let err = a.c.key_check_value(&a.pid, b_pub_on_a).await.unwrap_err();
    assert!(err.message.contains("AES"), "{}", err.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_wrap_on_a_unwrap_on_b() {
    wrap_on_a_unwrap_on_b(Backend::SoftHsm).await;
}
