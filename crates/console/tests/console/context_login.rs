//! Signing with a key that wants the PIN for each signature (`CKA_ALWAYS_AUTHENTICATE`),
//! through the console's signing service on Kryoptic (not our code): a batch needs the
//! officer's choice of how the PIN is given, is refused before anything is signed without
//! it, records the consent before the first signature, and stops at a wrong PIN with the
//! files signed before it complete and the rest untouched. Signatures checked by OpenSSL.
//! One test per process (nextest).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use console::sign::{
    ContextLogin, ContextPins, OnError, OutputKind, SignFormat, SignReport, SignRequest,
};
use console::views::GenerateRequest;
use console::ErrorCode;
use hsm::algo::{Curve, KeySpec};
use testkit::{Backend, USER_PIN};

use crate::common;
use common::{all_records, sign_request, token, Env};

/// A P-256 key that wants the PIN for each signature, made through the console.
async fn per_use_key(e: &Env) -> String {
    let g =
        e.c.admin()
            .generate_key(
                &e.pid,
                GenerateRequest {
                    spec: KeySpec::Ec { curve: Curve::P256 },
                    label: "qualified".into(),
                    token: true,
                    extractable: false,
                    always_authenticate: true,
                },
            )
            .await
            .unwrap();
    g.id_hex
}

fn files(e: &Env, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let p = e.dir.path().join(format!("release-{i}.tar"));
            std::fs::write(&p, format!("release {i} contents").repeat(100 + i)).unwrap();
            p
        })
        .collect()
}

fn request(id_hex: &str, files: &[PathBuf], mode: Option<ContextLogin>) -> SignRequest {
    let mut req = sign_request(id_hex, &files[0], SignFormat::Raw);
    req.files = files.iter().map(|p| p.display().to_string()).collect();
    req.context_login = mode;
    req
}

async fn sign(e: &Env, req: SignRequest, pins: ContextPins) -> console::ApiResult<SignReport> {
    e.c.signing()
        .sign_files_with_pins(
            &e.pid,
            req,
            Arc::new(|_| {}),
            Arc::new(AtomicBool::new(false)),
            pins,
        )
        .await
}

/// `openssl dgst -sha256 -verify` of a raw (DER) ECDSA signature.
fn openssl_verifies(pk: &Path, sig: &Path, file: &Path) -> bool {
    let o = Command::new("openssl")
        .args(["dgst", "-sha256", "-verify"])
        .arg(pk)
        .arg("-signature")
        .arg(sig)
        .arg(file)
        .output()
        .unwrap();
    o.status.success()
}

fn raw_output(r: &SignReport, i: usize) -> PathBuf {
    PathBuf::from(
        &r.files[i]
            .outputs
            .iter()
            .find(|o| o.format == OutputKind::Raw)
            .unwrap_or_else(|| panic!("file {i} has no raw signature: {:?}", r.files[i]))
            .path,
    )
}

fn sig_path(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.sig", file.display()))
}

async fn actions(e: &Env) -> Vec<(String, serde_json::Value)> {
    all_records(&e.c)
        .await
        .into_iter()
        .map(|r| {
            let meta = serde_json::from_str(&r.event.metadata).unwrap_or_default();
            (r.event.action, meta)
        })
        .collect()
}

/// Without a choice the batch is refused naming the key; with the once-per-batch consent
/// all three files are signed (OpenSSL checks each), the consent is in the trail before
/// the signatures, and each signature record says how it was logged in for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_per_batch_consent_signs_the_batch_and_is_recorded_first() {
    let e = token(Backend::Kryoptic).await;
    let id = per_use_key(&e).await;
    let keys = e.c.signing().signing_keys(&e.pid).await.unwrap();
    assert!(keys.iter().any(|k| k.id_hex == id && k.always_authenticate));
    let files = files(&e, 3);

    // No choice: refused, nothing signed or recorded as signed.
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let pins = ContextPins::new(
        move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            Some(p11::pin(USER_PIN))
        },
        false,
    );
    let err = sign(&e, request(&id, &files, None), pins.clone())
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(err.message.contains("'qualified'"), "{}", err.message);
    assert!(err.suggestion.unwrap().contains("all 3 signatures"));
    // Per signature without a way to ask each time (no terminal): refused too.
    let mode = Some(ContextLogin::PerSignature);
    let err = sign(&e, request(&id, &files, mode), pins.clone())
        .await
        .unwrap_err();
    assert!(err.message.contains("terminal"), "{}", err.message);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "no PIN asked for");
    assert!(files.iter().all(|f| !sig_path(f).exists()));
    let before = actions(&e).await;
    assert!(!before.iter().any(|(a, _)| a.starts_with("sign")));

    // Once for the batch: asked once, three signatures.
    let mode = Some(ContextLogin::OncePerBatch);
    let r = sign(&e, request(&id, &files, mode), pins).await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let pk = PathBuf::from(
        &r.manifest
            .iter()
            .find(|o| o.format == OutputKind::PublicKey)
            .expect("the public key beside raw signatures")
            .path,
    );
    for (i, f) in files.iter().enumerate() {
        assert!(r.files[i].error.is_none(), "{:?}", r.files[i].error);
        assert!(openssl_verifies(&pk, &raw_output(&r, i), f), "file {i}");
    }
    // Tampered: OpenSSL says no.
    std::fs::write(&files[1], b"not the release").unwrap();
    assert!(!openssl_verifies(&pk, &raw_output(&r, 1), &files[1]));

    let trail = actions(&e).await;
    let consent = trail
        .iter()
        .position(|(a, _)| a == "sign.consent")
        .expect("the consent is recorded");
    let meta = &trail[consent].1;
    assert_eq!(meta["context_login"], "once-per-batch");
    assert_eq!(meta["signatures"], 3);
    assert_eq!(meta["key"]["id"], id.as_str());
    let signs: Vec<usize> = (0..trail.len()).filter(|&i| trail[i].0 == "sign").collect();
    assert_eq!(signs.len(), 3);
    assert!(
        signs.iter().all(|&i| i > consent),
        "consent before signatures"
    );
    for &i in &signs {
        assert_eq!(trail[i].1["context_login"], "once-per-batch");
    }
}

/// Asked for each signature: the second PIN is wrong. The first file stays signed and
/// recorded; the second fails with the PIN error and says the batch stopped; the third is
/// not signed — even with "continue on error", as a PIN error is never tried again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_pin_stops_the_batch_with_nothing_half_written() {
    let e = token(Backend::Kryoptic).await;
    let id = per_use_key(&e).await;
    let files = files(&e, 3);
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let pins = ContextPins::new(
        move |ask| {
            assert!(ask.signatures.is_none(), "asked per signature");
            match counter.fetch_add(1, Ordering::SeqCst) {
                0 => Some(p11::pin(USER_PIN)),
                _ => Some(p11::pin("not-the-pin")),
            }
        },
        true,
    );
    let mut req = request(&id, &files, Some(ContextLogin::PerSignature));
    req.on_error = OnError::Continue;
    let r = sign(&e, req, pins).await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 2, "never asked again");
    assert!(r.stopped);
    assert!(r.files[0].error.is_none());
    assert!(sig_path(&files[0]).exists());
    let err = r.files[1].error.clone().expect("the wrong PIN");
    assert_eq!(err.code, ErrorCode::PinIncorrect);
    let details = err.details.unwrap();
    assert!(details.contains("1 file(s) signed before"), "{details}");
    assert!(r.files[1].outputs.is_empty() && r.files[2].outputs.is_empty());
    assert!(r.files[2].error.is_none());
    assert!(!sig_path(&files[1]).exists() && !sig_path(&files[2]).exists());

    let trail = actions(&e).await;
    let consent: Vec<_> = trail.iter().filter(|(a, _)| a == "sign.consent").collect();
    assert_eq!(consent.len(), 1);
    assert_eq!(consent[0].1["context_login"], "per-signature");
    let signs: Vec<_> = trail.iter().filter(|(a, _)| a == "sign").collect();
    assert_eq!(signs.len(), 2, "the signed file and the failed one");
    assert!(signs
        .iter()
        .all(|(_, m)| m["context_login"] == "per-signature"));

    // No PIN given at the prompt: the token says "not logged in" — a PIN error too, not a
    // lost session the pool would log in again for and sign again.
    let more: Vec<PathBuf> = files
        .iter()
        .map(|f| PathBuf::from(format!("{}.again", f.display())))
        .collect();
    for (f, g) in files.iter().zip(&more) {
        std::fs::copy(f, g).unwrap();
    }
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let none = ContextPins::new(
        move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            None
        },
        true,
    );
    let r = sign(
        &e,
        request(&id, &more, Some(ContextLogin::PerSignature)),
        none,
    )
    .await
    .unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 1, "asked once, not again");
    assert!(r.stopped);
    let err = r.files[0].error.clone().expect("no PIN");
    assert!(matches!(err.code, ErrorCode::NotLoggedIn), "{err:?}");
    assert!(err.details.unwrap().contains("No PIN was given"));
    assert!(more.iter().all(|f| !sig_path(f).exists()));
}

/// A key made with the option on a token that refuses it (lunasim's HSS keys): refused in
/// words, nothing made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_cannot_make_such_a_key_says_so() {
    let e = token(Backend::LunaSim).await;
    let spec = KeySpec::Hss {
        params: hsm::algo::HssParams::new(vec![(hsm::algo::LmsType::H5, hsm::algo::LmotsType::W8)])
            .unwrap(),
    };
    let err =
        e.c.admin()
            .generate_key(
                &e.pid,
                GenerateRequest {
                    spec,
                    label: "hss_per_use".into(),
                    token: true,
                    extractable: false,
                    always_authenticate: true,
                },
            )
            .await
            .unwrap_err();
    let details = err.details.clone().unwrap_or_default();
    assert!(details.contains("CKA_ALWAYS_AUTHENTICATE"), "{err:?}");
    let trail = actions(&e).await;
    let gen = trail
        .iter()
        .rfind(|(a, _)| a == "key.generate")
        .expect("the attempt is recorded");
    assert_eq!(gen.1["always_authenticate"], true);
}
