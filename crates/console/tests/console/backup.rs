//! Key backup by wrapping, on two real tokens of different lineage — A a SoftHSM2 test token,
//! B the built-in partition (lunasim over Kryoptic) in another console (one test token per
//! process, and the built-in one takes Kryoptic's): token B makes an RSA wrapping key pair, its
//! public key is exported and imported on token A, A wraps an AES data key with it, B
//! unwraps it; both show the same KCV and data encrypted on A decrypts on B. A wrap file
//! for another key, a non-extractable key and an HSS key are refused with the reason.
//! One test per process (nextest).

use console::attributes::{AttributeChanges, FlagChange};
use console::backup::OaepHash;
use console::objects::ImportRequest;
use console::views::GenerateRequest;
use hsm::algo::KeySpec;
use hsm::pubkey::PublicKeyFormat;
use p11::sys::*;
use p11::{Mechanism, Template};
use testkit::Backend;

use crate::common;

async fn wrap_on_a_unwrap_on_b(backend: Backend) {
    let b = common::builtin().await;
    let a = common::token(backend).await;
    // B: the wrapping pair (its private half may unwrap), its public key imported on A.
    let (b_private, b_pub_on_a) = rsa_wrapping_pair(&b, &a, "b_wrapping").await;
    // A: an extractable AES data key.
    let sa = a.token().user_session();
    let data_key = sa
        .generate_key(
            &Mechanism::new(CKM_AES_KEY_GEN),
            &mut testkit::setup::aes256_template("data_key", &[0xda, 0x7a], true)
                .bool(CKA_ENCRYPT, true)
                .bool(CKA_DECRYPT, true),
        )
        .unwrap();
    let kcv_a = a.c.admin().key_check_value(&a.pid, data_key).await.unwrap();
    assert_eq!(kcv_a.len(), 6);
    let file = a.dir.path().join("data_key.wrapped.json");
    let w =
        a.c.admin()
            .wrap_key(&a.pid, data_key, b_pub_on_a, &file, None, true)
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
        .admin()
        .wrap_key(&a.pid, data_key, b_pub_on_a, &file, None, true)
        .await
        .is_err());

    // B unwraps it: same KCV, attributes restored; data from A decrypts on B.
    let u =
        b.c.admin()
            .unwrap_key(&b.pid, &file, b_private, None)
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
        b.c.admin()
            .unwrap_key(&b.pid, &file, other.private_handle, None)
            .await
            .unwrap_err();
    assert!(
        err.message.contains("data_key.wrapped.json") && err.message.contains("another key"),
        "{}",
        err.message
    );
    // Non-extractable keys and HSS keys are not wrapped, with the reason.
    let fixed =
        a.c.admin()
            .generate_key(
                &a.pid,
                GenerateRequest {
                    spec: KeySpec::Aes { bits: 256 },
                    label: "fixed".into(),
                    token: true,
                    extractable: false,
                    always_authenticate: false,
                },
            )
            .await
            .unwrap();
    let err =
        a.c.admin()
            .wrap_key(
                &a.pid,
                fixed.private_handle,
                b_pub_on_a,
                &a.dir.path().join("x.json"),
                None,
                true,
            )
            .await
            .unwrap_err();
    assert!(err.message.contains("not extractable"), "{}", err.message);
    let err =
        a.c.admin()
            .key_check_value(&a.pid, b_pub_on_a)
            .await
            .unwrap_err();
    assert!(err.message.contains("AES"), "{}", err.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_wrap_on_a_unwrap_on_b() {
    wrap_on_a_unwrap_on_b(Backend::SoftHsm).await;
}

/// An RSA wrapping pair on `owner` whose private half may unwrap, and its public key
/// imported on `other`: (owner's private handle, its public key's handle on `other`).
async fn rsa_wrapping_pair(owner: &common::Env, other: &common::Env, label: &str) -> (u64, u64) {
    let k = owner.generate(KeySpec::Rsa { bits: 2048 }, label).await;
    owner
        .c
        .admin()
        .set_attributes(
            &owner.pid,
            k.private_handle,
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
    let file = other.dir.path().join(format!("{label}.pub.pem"));
    owner
        .c
        .admin()
        .save_public_key(&owner.pid, k.private_handle, PublicKeyFormat::Pem, &file)
        .await
        .unwrap();
    let imported = other
        .c
        .admin()
        .import_objects(
            &other.pid,
            ImportRequest {
                path: file,
                label: Some(format!("{label}_pub")),
                id_hex: None,
                data: false,
                application: None,
            },
        )
        .await
        .unwrap();
    (k.private_handle, imported.objects[0].handle)
}

/// A token secret key with a known value, extractable and sensitive.
fn secret_template(key_type: u64, value: &[u8], label: &str) -> Template {
    Template::new()
        .ulong(CKA_CLASS, CKO_SECRET_KEY)
        .ulong(CKA_KEY_TYPE, key_type)
        .bool(CKA_TOKEN, true)
        .bool(CKA_PRIVATE, true)
        .bool(CKA_SENSITIVE, true)
        .bool(CKA_EXTRACTABLE, true)
        .text(CKA_LABEL, label)
        .bytes(CKA_ID, label.as_bytes())
        .bytes(CKA_VALUE, value)
}

/// An extractable P-256 key pair (the console makes its own keys non-extractable).
fn extractable_p256(s: &p11::Session, softhsm: bool, label: &str) -> p11::Result<(u64, u64)> {
    s.generate_key_pair(
        &Mechanism::new(CKM_EC_KEY_PAIR_GEN),
        &mut Template::new()
            .bool(CKA_TOKEN, true)
            .bool(CKA_VERIFY, true)
            .bytes(CKA_EC_PARAMS, hsm::algo::Curve::P256.ec_params(softhsm))
            .text(CKA_LABEL, label)
            .bytes(CKA_ID, label.as_bytes()),
        &mut Template::new()
            .bool(CKA_TOKEN, true)
            .bool(CKA_PRIVATE, true)
            .bool(CKA_SENSITIVE, true)
            .bool(CKA_EXTRACTABLE, true)
            .bool(CKA_SIGN, true)
            .text(CKA_LABEL, label)
            .bytes(CKA_ID, label.as_bytes()),
    )
}

/// The KCV OpenSSL computes for `value`: AES-256-ECB of a zero block, or SHA-1 of a generic
/// secret (the two definitions of PKCS#11's CKA_CHECK_VALUE), first 3 bytes in hex.
fn openssl_kcv(aes: bool, value: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let args: Vec<String> = if aes {
        std::fs::write(&input, [0u8; 16]).unwrap();
        [
            "enc",
            "-aes-256-ecb",
            "-nopad",
            "-K",
            &hex::encode(value),
            "-in",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    } else {
        std::fs::write(&input, value).unwrap();
        ["dgst", "-sha1", "-binary"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let out = std::process::Command::new("openssl")
        .args(&args)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    hex::encode_upper(&out.stdout[..3])
}

/// KCVs: SoftHSM2 and the Luna side against OpenSSL, for AES keys and generic secrets; a
/// generic secret wrapped on SoftHSM2 arrives on the Luna side with the same KCV.
async fn kcvs_agree_with_openssl(
    soft: &common::Env,
    luna: &common::Env,
    luna_rsa: u64,
    luna_pub_on_soft: u64,
) {
    let aes_value = [0x3cu8; 32];
    let secret_value = [0x42u8; 32];
    let (aes, generic) = common::on(soft, move |s| {
        Ok((
            s.create_object(
                &mut secret_template(CKK_AES, &aes_value, "known_aes").bool(CKA_ENCRYPT, true),
            )?,
            s.create_object(&mut secret_template(
                CKK_GENERIC_SECRET,
                &secret_value,
                "known_secret",
            ))?,
        ))
    })
    .await;
    assert_eq!(
        soft.c
            .admin()
            .key_check_value(&soft.pid, aes)
            .await
            .unwrap(),
        openssl_kcv(true, &aes_value)
    );
    // SoftHSM2 keeps CKA_CHECK_VALUE: a key that may not encrypt still has its KCV.
    let no_encrypt = common::on(soft, move |s| {
        s.create_object(&mut secret_template(CKK_AES, &aes_value, "no_encrypt_aes"))
    })
    .await;
    assert_eq!(
        soft.c
            .admin()
            .key_check_value(&soft.pid, no_encrypt)
            .await
            .unwrap(),
        openssl_kcv(true, &aes_value)
    );
    let generic_kcv = soft
        .c
        .admin()
        .key_check_value(&soft.pid, generic)
        .await
        .unwrap();
    assert_eq!(generic_kcv, openssl_kcv(false, &secret_value));
    let file = soft.dir.path().join("known_secret.wrapped.json");
    let w = soft
        .c
        .admin()
        .wrap_key(&soft.pid, generic, luna_pub_on_soft, &file, None, true)
        .await
        .unwrap();
    assert_eq!(w.mechanism, "CKM_RSA_PKCS_OAEP(SHA-1)");
    let u = luna
        .c
        .admin()
        .unwrap_key(&luna.pid, &file, luna_rsa, None)
        .await
        .unwrap();
    assert_eq!(u.kcv.as_deref(), Some(generic_kcv.as_str()));
    let luna_aes = common::on(luna, move |s| {
        s.create_object(
            &mut secret_template(CKK_AES, &aes_value, "known_aes").bool(CKA_ENCRYPT, true),
        )
    })
    .await;
    assert_eq!(
        luna.c
            .admin()
            .key_check_value(&luna.pid, luna_aes)
            .await
            .unwrap(),
        openssl_kcv(true, &aes_value)
    );
    // Kryoptic keeps none: without CKA_ENCRYPT the KCV cannot be computed, and it says why.
    let luna_no_encrypt = common::on(luna, move |s| {
        s.create_object(&mut secret_template(CKK_AES, &aes_value, "no_encrypt_aes"))
    })
    .await;
    let e = luna
        .c
        .admin()
        .key_check_value(&luna.pid, luna_no_encrypt)
        .await
        .unwrap_err();
    assert!(
        e.message
            .contains("'no_encrypt_aes' has no check value on the token"),
        "{}",
        e.message
    );
}

/// Matrix, SoftHSM2 → Luna (lunasim over Kryoptic): a P-256 private key travels under the
/// Luna side's RSA public key (RSA-OAEP of an ephemeral AES key, then RFC 5649 — the layout
/// of CKM_RSA_AES_KEY_WRAP), with its public half; the Luna side signs with it and SoftHSM2
/// verifies with the original public key. A generic secret (RSA-OAEP) arrives with the same
/// KCV, and both tokens' KCVs for AES and generic secrets equal what OpenSSL computes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_keys_and_generic_secrets_travel_from_softhsm_to_luna() {
    let luna = common::builtin().await;
    let soft = common::token(Backend::SoftHsm).await;
    let (luna_rsa, luna_pub_on_soft) = rsa_wrapping_pair(&luna, &soft, "luna_wrapping").await;

    let (ec_pub, ec_priv) = common::on(&soft, |s| extractable_p256(s, true, "release_ec")).await;
    let file = soft.dir.path().join("release_ec.wrapped.json");
    let w = soft
        .c
        .admin()
        .wrap_key(&soft.pid, ec_priv, luna_pub_on_soft, &file, None, true)
        .await
        .unwrap();
    assert_eq!(w.mechanism, "CKM_RSA_AES_KEY_WRAP(SHA-1)");
    assert!(w.public_key.is_some());
    let u = luna
        .c
        .admin()
        .unwrap_key(&luna.pid, &file, luna_rsa, None)
        .await
        .unwrap();
    assert_eq!(u.summary.class, "PRIVATE_KEY");
    assert_eq!(u.summary.algorithm, "ECDSA P-256");
    assert_eq!(u.summary.id_hex, hex::encode("release_ec"));
    assert!(u.public_handle.is_some(), "the public half is restored");
    let digest = [0x5au8; 32];
    let h = u.summary.handle;
    let sig = common::on(&luna, move |s| {
        s.sign(&Mechanism::new(CKM_ECDSA), h, &digest)
    })
    .await;
    let ok = common::on(&soft, move |s| {
        s.verify(&Mechanism::new(CKM_ECDSA), ec_pub, &digest, &sig)
    })
    .await;
    assert!(
        ok,
        "SoftHSM2 verifies what the unwrapped key signed on the Luna side"
    );
    // The console lists it as a key pair there: the restored public half has its ID.
    let keys = luna.c.list_keys(&luna.pid).await.unwrap();
    let halves: Vec<_> = keys
        .iter()
        .filter(|k| k.id_hex == hex::encode("release_ec"))
        .map(|k| k.class.as_str())
        .collect();
    assert!(
        halves.contains(&"PUBLIC_KEY") && halves.contains(&"PRIVATE_KEY"),
        "{halves:?}"
    );

    kcvs_agree_with_openssl(&soft, &luna, luna_rsa, luna_pub_on_soft).await;
    // A public key is not wrapped (it is exported as it is).
    let err = soft
        .c
        .admin()
        .wrap_key(
            &soft.pid,
            ec_pub,
            luna_pub_on_soft,
            &soft.dir.path().join("p.json"),
            None,
            true,
        )
        .await
        .unwrap_err();
    assert!(
        err.message.contains("only secret and private keys"),
        "{}",
        err.message
    );
}

/// Matrix, Luna (lunasim) → SoftHSM2: Luna names RFC 5649 `CKM_AES_KWP` (its vendor
/// mechanism; lunasim offers it in place of the standard one, as Luna's table does) and the
/// file says so; an AES key travels to SoftHSM2 under SoftHSM2's RSA public key with OAEP
/// SHA-1 (SoftHSM2 unwraps no other). With the default (SHA-256) SoftHSM2 refuses the file
/// and nothing is left on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn luna_names_its_key_wrap_and_wraps_for_softhsm() {
    let luna = common::builtin().await;
    let soft = common::token(Backend::SoftHsm).await;
    let (soft_rsa, soft_pub_on_luna) = rsa_wrapping_pair(&soft, &luna, "soft_wrapping").await;
    let value = [0x17u8; 32];
    let (kek, data) = common::on(&luna, move |s| {
        let kek = s.create_object(
            &mut secret_template(CKK_AES, &[0x71; 32], "luna_kek")
                .bool(CKA_WRAP, true)
                .bool(CKA_UNWRAP, true)
                .bool(CKA_ENCRYPT, true),
        )?;
        let data = s.create_object(
            &mut secret_template(CKK_AES, &value, "luna_data")
                .bool(CKA_ENCRYPT, true)
                .bool(CKA_DECRYPT, true),
        )?;
        Ok((kek, data))
    })
    .await;
    let kcv = openssl_kcv(true, &value);

    // On the Luna side itself, under an AES key: Luna's name for RFC 5649.
    let file = luna.dir.path().join("luna_data.aes.json");
    let w = luna
        .c
        .admin()
        .wrap_key(&luna.pid, data, kek, &file, None, true)
        .await
        .unwrap();
    assert_eq!(w.mechanism, "CKM_AES_KWP");
    assert_eq!(w.kcv.as_deref(), Some(kcv.as_str()));
    let u = luna
        .c
        .admin()
        .unwrap_key(&luna.pid, &file, kek, Some("luna_data_copy".into()))
        .await
        .unwrap();
    assert_eq!(u.kcv.as_deref(), Some(kcv.as_str()));

    // To SoftHSM2: SHA-256 (the default off SoftHSM2) is refused there, nothing left behind.
    let sha256 = luna.dir.path().join("luna_data.sha256.json");
    let w = luna
        .c
        .admin()
        .wrap_key(&luna.pid, data, soft_pub_on_luna, &sha256, None, true)
        .await
        .unwrap();
    assert_eq!(w.mechanism, "CKM_RSA_PKCS_OAEP(SHA-256)");
    assert!(soft
        .c
        .admin()
        .unwrap_key(&soft.pid, &sha256, soft_rsa, None)
        .await
        .is_err());
    let before = soft.c.list_keys(&soft.pid).await.unwrap();
    assert!(
        !before.iter().any(|k| k.label == "luna_data"),
        "nothing unwrapped"
    );
    let sha1 = luna.dir.path().join("luna_data.sha1.json");
    let w = luna
        .c
        .admin()
        .wrap_key(
            &luna.pid,
            data,
            soft_pub_on_luna,
            &sha1,
            Some(OaepHash::Sha1),
            true,
        )
        .await
        .unwrap();
    assert_eq!(w.mechanism, "CKM_RSA_PKCS_OAEP(SHA-1)");
    let u = soft
        .c
        .admin()
        .unwrap_key(&soft.pid, &sha1, soft_rsa, None)
        .await
        .unwrap();
    assert_eq!(u.kcv.as_deref(), Some(kcv.as_str()));
    // Data encrypted on SoftHSM2 with the copy decrypts on the Luna side with the original.
    let h = u.summary.handle;
    let iv = [9u8; 16];
    let ct = common::on(&soft, move |s| {
        s.encrypt(
            &Mechanism::with_bytes(CKM_AES_CBC_PAD, &iv),
            h,
            b"release notes",
        )
    })
    .await;
    let pt = common::on(&luna, move |s| {
        s.decrypt(&Mechanism::with_bytes(CKM_AES_CBC_PAD, &iv), data, &ct)
    })
    .await;
    assert_eq!(pt, b"release notes");
}

/// Kryoptic: the standard CKM_AES_KEY_WRAP_KWP, and a private key wrapped under an AES key
/// (PKCS#8 inside RFC 5649) comes back under a new label and signs; a changed wrap file is
/// refused by the token and leaves nothing behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_wraps_a_private_key_under_aes() {
    let k = common::token(Backend::Kryoptic).await;
    let (_, ec_priv, kek) = common::on(&k, |s| {
        let (p, q) = extractable_p256(s, false, "kry_ec")?;
        let kek = s.create_object(
            &mut secret_template(CKK_AES, &[0x55; 32], "kry_kek")
                .bool(CKA_WRAP, true)
                .bool(CKA_UNWRAP, true)
                .bool(CKA_ENCRYPT, true),
        )?;
        Ok((p, q, kek))
    })
    .await;
    let file = k.dir.path().join("kry_ec.wrapped.json");
    let w =
        k.c.admin()
            .wrap_key(&k.pid, ec_priv, kek, &file, None, true)
            .await
            .unwrap();
    assert_eq!(w.mechanism, "CKM_AES_KEY_WRAP_KWP");
    // A flipped byte in the wrapped key: the token refuses it.
    let mut f: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut bytes = console::keys::base64_decode(f["wrapped"].as_str().unwrap()).unwrap();
    bytes[20] ^= 1;
    f["wrapped"] = console::keys::base64_encode(&bytes).into();
    let bad = k.dir.path().join("kry_ec.bad.json");
    std::fs::write(&bad, serde_json::to_vec(&f).unwrap()).unwrap();
    // Kryoptic 1.5.4 answers a damaged wrapped key with CKR_DEVICE_ERROR, which the console
    // takes for a lost connection: it reconnects, and the token renumbers its objects.
    let e =
        k.c.admin()
            .unwrap_key(&k.pid, &bad, kek, Some("kry_ec_bad".into()))
            .await
            .unwrap_err();
    assert_eq!(
        e.pkcs11.as_ref().map(|p| p.function.as_str()),
        Some("C_UnwrapKey"),
        "{e:?}"
    );
    let by_label = |keys: &[hsm::keys::ObjectSummary], label: &str, class: &str| {
        keys.iter()
            .find(|x| x.label == label && x.class == class)
            .unwrap_or_else(|| panic!("{label} {class}"))
            .handle
    };
    let keys = k.c.list_keys(&k.pid).await.unwrap();
    let kek = by_label(&keys, "kry_kek", "SECRET_KEY");
    let ec_pub = by_label(&keys, "kry_ec", "PUBLIC_KEY");
    let u =
        k.c.admin()
            .unwrap_key(&k.pid, &file, kek, Some("kry_ec_copy".into()))
            .await
            .unwrap();
    let keys = k.c.list_keys(&k.pid).await.unwrap();
    assert!(
        !keys.iter().any(|x| x.label == "kry_ec_bad"),
        "nothing left of the bad file"
    );
    assert_eq!(
        keys.iter().filter(|x| x.label == "kry_ec_copy").count(),
        2,
        "the copy and its public half"
    );
    let digest = [0x33u8; 32];
    let h = u.summary.handle;
    let ok = common::on(&k, move |s| {
        let sig = s.sign(&Mechanism::new(CKM_ECDSA), h, &digest)?;
        s.verify(&Mechanism::new(CKM_ECDSA), ec_pub, &digest, &sig)
    })
    .await;
    assert!(ok);
}
