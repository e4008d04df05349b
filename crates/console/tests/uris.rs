//! PKCS#11 URIs on real tokens: the console's URI selects the key it names (and a URI that
//! matches several is an error listing them); OpenSSL with Debian's libengine-pkcs11-openssl
//! signs with the URI the console printed and the console's software verifier accepts the
//! signature; GnuTLS's p11tool finds the key with the token URI. One test per process.

use std::process::Command;

use hsm::algo::{Curve, KeySpec};
use hsm::pubkey::PublicKey;
use testkit::tools::{p11tool, text};
use testkit::{Backend, USER_PIN};

mod common;

async fn uris_select_and_other_tools_use_them(backend: Backend) {
    let e = common::token(backend).await;
    let key = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "uri key; release/1")
        .await;
    let u = e.c.object_uri(&e.pid, key.private_handle).await.unwrap();
    assert!(u.uri.starts_with("pkcs11:token="), "{}", u.uri);
    assert!(
        u.uri.contains("object=uri%20key%3B%20release%2F1"),
        "{}",
        u.uri
    );
    assert!(u.uri.ends_with(";type=private"), "{}", u.uri);
    assert_eq!(u.commands.len(), 6);

    // The URI selects the key; a URI without id or type matches the pair: listed.
    let found = e.c.find_key(&e.pid, &u.uri).await.unwrap();
    assert_eq!(found.handle, key.private_handle);
    let public_uri = u.uri.replace(";type=private", ";type=public");
    let found = e.c.find_key(&e.pid, &public_uri).await.unwrap();
    assert_eq!(found.class, "PUBLIC_KEY");
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "twin").await;
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "twin").await;
    let err =
        e.c.find_key(&e.pid, "pkcs11:object=twin;type=private")
            .await
            .unwrap_err();
    assert!(err.message.contains("matches 2 objects"), "{}", err.message);
    assert!(
        err.message.matches("'twin' id:").count() == 2,
        "{}",
        err.message
    );
    let err =
        e.c.find_key(&e.pid, "pkcs11:object=nobody")
            .await
            .unwrap_err();
    assert!(
        err.message.contains("pkcs11:object=nobody"),
        "{}",
        err.message
    );
    let err =
        e.c.find_key(&e.pid, "pkcs11:object=bad%2")
            .await
            .unwrap_err();
    assert!(
        err.message.contains("bad percent-encoding"),
        "{}",
        err.message
    );

    // OpenSSL's pkcs11 engine signs with the URI as the console printed it. Debian 12's
    // libp11 0.4.12 gives up enumerating a token that holds a key type it does not know
    // ("Unable to enumerate private keys"): on Kryoptic and lunasim the audit trail's
    // ML-DSA checkpoint key is one, so the engine runs where every private key is classic.
    let classic =
        e.c.list_keys(&e.pid)
            .await
            .unwrap()
            .iter()
            .filter(|k| k.class == "PRIVATE_KEY")
            .all(|k| k.algorithm.starts_with("ECDSA") || k.algorithm.starts_with("RSA"));
    assert_eq!(
        classic,
        backend == Backend::SoftHsm,
        "which tokens the engine can read"
    );
    let t = e.token();
    if classic {
        let dir = e.dir.path();
        std::fs::write(
            dir.join("engine.cnf"),
            format!(
                "openssl_conf = init\n[init]\nengines = engines\n[engines]\npkcs11 = pkcs11\n[pkcs11]\nengine_id = pkcs11\nMODULE_PATH = {}\ninit = 0\n",
                t.module_path.display()
            ),
        )
        .unwrap();
        let file = dir.join("release.bin");
        std::fs::write(&file, b"signed by OpenSSL through the console's URI\n").unwrap();
        let mut cmd = Command::new("openssl");
        cmd.current_dir(dir)
            .env("OPENSSL_CONF", dir.join("engine.cnf"))
            .args([
                "dgst", "-sha256", "-engine", "pkcs11", "-keyform", "engine", "-passin",
            ])
            .arg(format!("pass:{USER_PIN}"))
            .args(["-sign", &u.uri, "-out", "release.sig", "release.bin"]);
        for (k, v) in t.env() {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "openssl with the engine: {}", text(&o));
        let pem =
            e.c.key_details(&e.pid, key.private_handle)
                .await
                .unwrap()
                .public_key
                .unwrap()
                .pem;
        let pk = PublicKey::from_spki_pem(&pem).unwrap();
        let alg = signing::SigAlg::for_key(&pk).unwrap();
        let sig = std::fs::read(dir.join("release.sig")).unwrap();
        alg.verify(&pk, &std::fs::read(&file).unwrap(), &[], &sig)
            .expect("the console's verifier accepts OpenSSL's signature");
    }

    // p11tool lists the key under the token URI.
    let listed = p11tool(
        &t.module_path,
        t.env(),
        &[
            "--login",
            &format!("--set-pin={USER_PIN}"),
            "--list-privkeys",
            &u.token_uri,
        ],
    );
    assert!(
        text(&listed).contains("uri key; release/1"),
        "{}",
        text(&listed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_uris_select_and_openssl_signs_with_them() {
    uris_select_and_other_tools_use_them(Backend::SoftHsm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_uris_select_and_openssl_signs_with_them() {
    uris_select_and_other_tools_use_them(Backend::Kryoptic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_uris_select_and_openssl_signs_with_them() {
    uris_select_and_other_tools_use_them(Backend::LunaSim).await;
}
