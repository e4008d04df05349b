//! PKCS#11 URIs on real tokens: the console's URI selects the key it names (and a URI that
//! matches several is an error listing them); the "use this key from…" lines run as printed:
//! OpenSSL with Debian's libengine-pkcs11-openssl signs (and the console's software verifier
//! accepts the signature) where libp11 can read the token, and fails as its caveat says where
//! it cannot; GnuTLS's p11tool lists the key. On SoftHSM2, with RSA-2048 and ECDSA P-256
//! keys and their certificates, the engine, osslsigncode and sbsign lines sign as printed and
//! the tools' own checks (`openssl dgst -verify`, `osslsigncode verify`, `sbverify`) accept
//! what they made and refuse it changed; "Test this line" gives the same verdicts, and on a
//! token the caveat names it fails in the tool's words. One test per process.

use std::path::Path;
use std::process::{Command, Output};

use hsm::algo::{Curve, KeySpec};
use hsm::pubkey::PublicKey;
use testkit::tools::{p11tool, text};
use testkit::{Backend, USER_PIN};

use crate::common;

async fn uris_select_and_other_tools_use_them(backend: Backend) {
    let e = common::token(backend).await;
    let key = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "uri key; release/1")
        .await;
    let u =
        e.c.signing()
            .object_uri(&e.pid, key.private_handle)
            .await
            .unwrap();
    assert!(u.uri.starts_with("pkcs11:token="), "{}", u.uri);
    assert!(
        u.uri.contains("object=uri%20key%3B%20release%2F1"),
        "{}",
        u.uri
    );
    assert!(u.uri.ends_with(";type=private"), "{}", u.uri);
    assert_eq!(u.commands.len(), 5);

    the_uri_selects_its_key(&e, &u.uri, key.private_handle).await;

    // The printed lines run as printed, in a folder holding the files they name (`FILE`,
    // `PIN-FILE`). Debian 12's libp11 0.4.12 gives up enumerating a token that holds a key
    // type it does not know ("Unable to enumerate private keys"): on Kryoptic and lunasim
    // the audit trail's ML-DSA checkpoint key is one, and the lines through libp11 say so.
    let t = e.token();
    let dir = e.dir.path().join("tools");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("PIN-FILE"), USER_PIN).unwrap();
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
            e.c.admin()
                .key_details(&e.pid, key.private_handle)
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
        let u =
            e.c.signing()
                .object_uri(&e.pid, key.private_handle)
                .await
                .unwrap();
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

/// The URI selects the key; a URI without id or type matches the pair: listed. A URI that
/// names nothing, or is not one, says so.
async fn the_uri_selects_its_key(e: &common::Env, uri: &str, private_handle: u64) {
    let found = e.c.admin().find_key(&e.pid, uri).await.unwrap();
    assert_eq!(found.handle, private_handle);
    let public_uri = uri.replace(";type=private", ";type=public");
    let found = e.c.admin().find_key(&e.pid, &public_uri).await.unwrap();
    assert_eq!(found.class, "PUBLIC_KEY");
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "twin").await;
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "twin").await;
    let err =
        e.c.admin()
            .find_key(&e.pid, "pkcs11:object=twin;type=private")
            .await
            .unwrap_err();
    assert!(err.message.contains("matches 2 objects"), "{}", err.message);
    assert!(
        err.message.matches("'twin' id:").count() == 2,
        "{}",
        err.message
    );
    let err =
        e.c.admin()
            .find_key(&e.pid, "pkcs11:object=nobody")
            .await
            .unwrap_err();
    assert!(
        err.message.contains("pkcs11:object=nobody"),
        "{}",
        err.message
    );
    let err =
        e.c.admin()
            .find_key(&e.pid, "pkcs11:object=bad%2")
            .await
            .unwrap_err();
    assert!(
        err.message.contains("bad percent-encoding"),
        "{}",
        err.message
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

/// `line` run with `sh -c` in `dir`, as a user would paste it (the token's configuration is
/// in this process's environment).
fn sh_in(dir: &Path, line: &str) -> Output {
    Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(line)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The file a tool line made (or, for OpenSSL, signed), that its check reads.
fn made_by(tool: &str) -> &'static str {
    match tool {
        "osslsigncode" => "app-signed.exe",
        "sbsign" => "grubx64.efi.signed",
        _ => "FILE",
    }
}

/// Run `tool`'s line and its check as printed in `dir`; both succeed, and the check refuses
/// the file with one byte changed.
fn signs_and_checks(dir: &Path, u: &console::uris::ObjectUri, tool: &str) {
    let c = u.commands.iter().find(|c| c.tool == tool).unwrap();
    assert!(c.caveat.is_none(), "{tool}: {:?}", c.caveat);
    // osslsigncode does not write over a file: the last key's output goes first.
    for made in ["app-signed.exe", "grubx64.efi.signed", "FILE.sig"] {
        let _ = std::fs::remove_file(dir.join(made));
    }
    let o = sh_in(dir, &c.command);
    assert!(o.status.success(), "{tool} as printed: {}", text(&o));
    let verify = c.verify.as_deref().expect("a check");
    let o = sh_in(dir, verify);
    assert!(o.status.success(), "{tool}'s check: {}", text(&o));
    let made = dir.join(made_by(tool));
    let good = std::fs::read(&made).unwrap();
    let mut bad = good.clone();
    let at = (bad.len() / 2).min(0x1000);
    bad[at] ^= 1;
    std::fs::write(&made, &bad).unwrap();
    let o = sh_in(dir, verify);
    assert!(
        !o.status.success(),
        "{tool}'s check took a changed file: {}",
        text(&o)
    );
    std::fs::write(&made, &good).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_signing_tools_run_as_printed_and_test_this_line_agrees() {
    let e = common::token(Backend::SoftHsm).await;
    let dir = e.dir.path().join("tools");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("PIN-FILE"), USER_PIN).unwrap();
    std::fs::write(dir.join("FILE"), b"signed through the console's URI\n").unwrap();
    for name in ["app.exe", "grubx64.efi"] {
        std::fs::copy(console::uris::EFI_SAMPLE, dir.join(name)).unwrap();
    }
    // A key without a certificate first: testing a line that needs one is refused.
    let bare = e
        .generate(KeySpec::Rsa { bits: 2048 }, "no certificate")
        .await;
    let err =
        e.c.signing()
            .try_tool_line(&e.pid, bare.private_handle, "sbsign")
            .await
            .unwrap_err();
    assert!(err.message.contains("certificate"), "{}", err.message);
    let specs = [
        (KeySpec::Rsa { bits: 2048 }, "secure boot rsa"),
        (KeySpec::Ec { curve: Curve::P256 }, "authenticode p-256"),
    ];
    for (spec, label) in specs {
        // Secure Boot is RSA: sbsign is run with the RSA key only.
        let rsa = matches!(spec, KeySpec::Rsa { .. });
        let key = e.generate(spec, label).await;
        let h = key.private_handle;
        let cert =
            e.c.signing()
                .issue_certificate(&e.pid, h, &format!("CN={label}"), 30, true)
                .await
                .unwrap();
        std::fs::write(dir.join("CERT.pem"), &cert.pem).unwrap();
        let pem =
            e.c.admin()
                .key_details(&e.pid, h)
                .await
                .unwrap()
                .public_key
                .unwrap()
                .pem;
        std::fs::write(dir.join("PUBLIC.pem"), &pem).unwrap();
        let u = e.c.signing().object_uri(&e.pid, h).await.unwrap();
        let tools: &[&str] = if rsa {
            &["OpenSSL 3 (pkcs11 engine)", "osslsigncode", "sbsign"]
        } else {
            &["OpenSSL 3 (pkcs11 engine)", "osslsigncode"]
        };
        for tool in tools {
            signs_and_checks(&dir, &u, tool);
            // The console's trial runs the same line and check, in its own folder.
            let v = e.c.signing().try_tool_line(&e.pid, h, tool).await.unwrap();
            assert!(v.ok, "{tool}: {v:?}");
            assert_eq!(v.steps.len(), 2, "{tool}: the line and its check");
            let said = &v.steps[1].output;
            assert!(
                said.contains("Verified OK")
                    || said.contains("verification: ok")
                    || said.contains("verification OK"),
                "{tool}'s check: {said}"
            );
            assert!(v.steps.iter().all(|s| !s.output.contains(USER_PIN)));
        }
    }
    // p11tool makes nothing to check: its verdict is its listing.
    let v =
        e.c.signing()
            .try_tool_line(&e.pid, bare.private_handle, "p11tool")
            .await
            .unwrap();
    assert!(v.ok && v.steps.len() == 1, "{v:?}");
    assert!(v.steps[0].output.contains("no certificate"), "{v:?}");
    // Each trial is in the audit trail, with the tool and the key; the PIN is not.
    let records =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 500,
                ascending: true,
                ..Default::default()
            })
            .await
            .unwrap();
    let trials: Vec<_> = records
        .iter()
        .filter(|r| r.event.action == "uri.trial")
        .collect();
    assert_eq!(
        trials.len(),
        6,
        "5 trials with a certificate and the p11tool one"
    );
    assert!(!format!("{records:?}").contains(USER_PIN));
    // Logged out, there is no PIN to hand over: refused.
    e.c.logout(&e.pid).await.unwrap();
    let err =
        e.c.signing()
            .try_tool_line(&e.pid, bare.private_handle, "p11tool")
            .await
            .unwrap_err();
    assert_eq!(err.code, console::ErrorCode::NotLoggedIn, "{}", err.message);
}

/// On a token whose caveat says libp11 cannot read it, the trial runs and fails in the
/// engine's own words.
async fn a_trial_where_the_caveat_applies_fails_in_the_tools_words(backend: Backend) {
    let e = common::token(backend).await;
    let key = e
        .generate(KeySpec::Ec { curve: Curve::P256 }, "classic")
        .await;
    let tool = "OpenSSL 3 (pkcs11 engine)";
    let u =
        e.c.signing()
            .object_uri(&e.pid, key.private_handle)
            .await
            .unwrap();
    let c = u.commands.iter().find(|c| c.tool == tool).unwrap();
    assert!(
        c.caveat.is_some(),
        "the audit trail's ML-DSA key is on this token"
    );
    let v =
        e.c.signing()
            .try_tool_line(&e.pid, key.private_handle, tool)
            .await
            .unwrap();
    assert!(!v.ok, "{v:?}");
    assert_eq!(
        v.steps.len(),
        1,
        "no check of a signature never made: {v:?}"
    );
    assert_ne!(v.steps[0].exit_code, Some(0));
    assert!(v.steps[0].output.contains("enumerate"), "{v:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_a_trial_where_the_caveat_applies_fails_in_the_tools_words() {
    a_trial_where_the_caveat_applies_fails_in_the_tools_words(Backend::Kryoptic).await;
}
