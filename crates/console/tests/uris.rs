//! PKCS#11 URIs on real tokens: the console's URI selects the key it names (and a URI that
//! matches several is an error listing them); the "use this key from…" lines run as printed:
//! OpenSSL with Debian's libengine-pkcs11-openssl signs (and the console's software verifier
//! accepts the signature) where libp11 can read the token, and fails as its caveat says where
//! it cannot; GnuTLS's p11tool lists the key. One test per process.

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

    // The printed lines run as printed, in a folder holding the files they name (`FILE`,
    // `PIN-FILE`). Debian 12's libp11 0.4.12 gives up enumerating a token that holds a key
    // type it does not know ("Unable to enumerate private keys"): on Kryoptic and lunasim
    // the audit trail's ML-DSA checkpoint key is one, and the lines through libp11 say so.
    let t = e.token();
    let dir = e.dir.path().join("tools");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("PIN-FILE"), format!("{USER_PIN}\n")).unwrap();
    std::fs::write(
        dir.join("FILE"),
        b"signed by OpenSSL through the console's URI\n",
    )
    .unwrap();
    // The line of `tool` among `u`'s, and what running it as printed gave.
    let run_printed = |u: &console::uris::ObjectUri, tool: &str| {
        let c = u.commands.iter().find(|c| c.tool == tool).unwrap();
        let mut cmd = Command::new("sh");
        cmd.current_dir(&dir).arg("-c").arg(&c.command);
        for (k, v) in t.env() {
            cmd.env(k, v);
        }
        (c.clone(), cmd.output().unwrap())
    };
    let (engine, o) = run_printed(&u, "OpenSSL 3 (pkcs11 engine)");
    let classic = backend == Backend::SoftHsm;
    assert_eq!(
        engine.caveat.is_none(),
        classic,
        "which tokens the engine can read: {:?}",
        engine.caveat
    );
    if classic {
        assert!(o.status.success(), "the printed engine line: {}", text(&o));
        let pem =
            e.c.key_details(&e.pid, key.private_handle)
                .await
                .unwrap()
                .public_key
                .unwrap()
                .pem;
        let pk = PublicKey::from_spki_pem(&pem).unwrap();
        let alg = signing::SigAlg::for_key(&pk).unwrap();
        let sig = std::fs::read(dir.join("FILE.sig")).unwrap();
        alg.verify(&pk, &std::fs::read(dir.join("FILE")).unwrap(), &[], &sig)
            .expect("the console's verifier accepts OpenSSL's signature");
        // An Ed25519 key beside it is one libp11 0.4.12 does not know either: now the
        // line carries the caveat, and fails as it says.
        e.generate(
            KeySpec::Ec {
                curve: Curve::Ed25519,
            },
            "ed beside",
        )
        .await;
        let u = e.c.object_uri(&e.pid, key.private_handle).await.unwrap();
        let (engine, o) = run_printed(&u, &engine.tool);
        let caveat = engine.caveat.as_ref().expect("an EdDSA key on the token");
        assert!(caveat.text.contains("Ed25519"), "{}", caveat.text);
        assert!(!o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("enumerate"), "{}", text(&o));
    } else {
        // The caveat is true: the line as printed fails on this token, and says why.
        assert!(!o.status.success(), "{}", text(&o));
        let caveat = engine.caveat.unwrap();
        assert!(caveat.text.contains("ML-DSA"), "{}", caveat.text);
        assert!(text(&o).contains("enumerate"), "{}", text(&o));
    }

    // p11tool, as printed, lists the key under the token URI on every token.
    let (p11, o) = run_printed(&u, "p11tool");
    assert!(p11.caveat.is_none());
    assert!(o.status.success(), "the printed p11tool line: {}", text(&o));
    assert!(text(&o).contains("uri key; release/1"), "{}", text(&o));
    // And the helper the other tests use agrees.
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
