//! RFC 3161 time-stamps through the console against a real TSA on 127.0.0.1: OpenSSL's
//! `openssl ts -reply` behind a small HTTP handler this test starts, with a CA and a TSA
//! certificate (critical `timeStamping` EKU) the test makes with OpenSSL. `openssl ts
//! -verify` (another lineage than the console's TSP code) checks every token the console
//! kept, `openssl cms -verify` still accepts the CMS carrying it; a TSA that answers with a
//! wrong imprint, a bad signature, a `rejection`, from an unknown CA, or not at all fails
//! that file, naming the TSA, and writes nothing.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use console::settings::TimestampAuthority;
use console::sign::{OnError, OutputKind, SignFormat, SignReport, SignRequest};
use console::ErrorCode;
use hsm::algo::{Curve, KeySpec};
use testkit::tsa::{openssl_ts_verify, TestTsa};
use testkit::Backend;

use crate::common;
use common::{token, Env};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn run(cmd: &mut Command) -> (bool, String) {
    let o = cmd.output().unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// The test TSA's `mode` as the console is told of it.
fn authority(
    tsa: &TestTsa,
    mode: &str,
    ca: Option<&str>,
    timeout_seconds: u64,
) -> TimestampAuthority {
    TimestampAuthority {
        url: tsa.url(mode),
        ca_file: ca.map(|c| s(&tsa.dir.path().join(c)).to_string()),
        timeout_seconds,
        optional: None,
    }
}

impl Env {
    async fn p256(&self, label: &str) -> String {
        let g = self
            .generate(KeySpec::Ec { curve: Curve::P256 }, label)
            .await;
        format!("id:{}", g.id_hex)
    }

    fn release_files(&self, sub: &str, n: usize) -> Vec<PathBuf> {
        let d = self.dir.path().join(sub);
        std::fs::create_dir_all(&d).unwrap();
        (0..n)
            .map(|i| {
                let p = d.join(format!("release-{i}.tar"));
                std::fs::write(&p, format!("artifact {i} of {sub}").repeat(100)).unwrap();
                p
            })
            .collect()
    }

    async fn sign_stamped(
        &self,
        key: &str,
        files: &[PathBuf],
        formats: &[SignFormat],
        on_error: OnError,
        timestamp: Option<TimestampAuthority>,
    ) -> console::ApiResult<SignReport> {
        sign_on(&self.c, &self.pid, key, files, formats, on_error, timestamp).await
    }

    /// As [`Env::sign_stamped`], stopping at a failure; every file must be signed.
    async fn stamped_ok(
        &self,
        key: &str,
        files: &[PathBuf],
        formats: &[SignFormat],
        timestamp: Option<TimestampAuthority>,
    ) -> SignReport {
        let r = self
            .sign_stamped(key, files, formats, OnError::Stop, timestamp)
            .await
            .unwrap();
        assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
        r
    }
}

/// A batch on `pid` of `c`: `files` signed by `key` in `formats`, time-stamped when asked.
async fn sign_on(
    c: &console::Console,
    pid: &str,
    key: &str,
    files: &[PathBuf],
    formats: &[SignFormat],
    on_error: OnError,
    timestamp: Option<TimestampAuthority>,
) -> console::ApiResult<SignReport> {
    let mut req = common::batch_request(key, files, formats);
    req.on_error = on_error;
    req.timestamp = timestamp;
    common::sign_with(c, pid, req).await
}

/// `openssl cms -verify` of a detached CMS over `content` (the signature, not the path).
fn openssl_cms_verify(p7s: &Path, content: &Path) -> (bool, String) {
    run(Command::new("openssl").args([
        "cms",
        "-verify",
        "-binary",
        "-inform",
        "DER",
        "-in",
        s(p7s),
        "-content",
        s(content),
        "-noverify",
        "-out",
        "/dev/null",
    ]))
}

fn out(r: &SignReport, i: usize, kind: OutputKind) -> PathBuf {
    PathBuf::from(
        &r.files[i]
            .outputs
            .iter()
            .find(|o| o.format == kind)
            .unwrap_or_else(|| panic!("no {kind} output for file {i}: {:?}", r.files[i]))
            .path,
    )
}

/// CMS and bundle signatures carry tokens the console checked; `openssl ts -verify`
/// accepts each over its signature value (and refuses it against another CA, and over
/// other bytes); `openssl cms -verify` still accepts the CMS; the console's verifier
/// shows the time and the TSA, and refuses a bundle whose token stamps another signature.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cms_and_bundle_signatures_carry_tokens_openssl_accepts() {
    let tsa = TestTsa::start("ec");
    let e = token(Backend::SoftHsm).await;
    let key = e.p256("stamped_p256").await;
    let files = e.release_files("stamped", 2);
    let r = e
        .stamped_ok(
            &key,
            &files,
            &[SignFormat::Cms, SignFormat::Bundle, SignFormat::Raw],
            Some(authority(&tsa, "ok", Some("ca.pem"), 10)),
        )
        .await;
    for (i, f) in files.iter().enumerate() {
        let p7s = out(&r, i, OutputKind::Cms);
        let parsed = signing::cms::parse(&std::fs::read(&p7s).unwrap()).unwrap();
        let token = parsed
            .timestamp_token
            .clone()
            .expect("the CMS carries a token");
        let (ok, msg) = openssl_ts_verify(&token, &parsed.signature, &tsa.ca());
        assert!(ok, "openssl ts -verify (CMS token): {msg}");
        let (ok, _) = openssl_ts_verify(&token, b"other bytes", &tsa.ca());
        assert!(!ok, "openssl accepted the token over other bytes");
        let other = tsa.dir.path().join("other-ca.pem");
        let (ok, _) = openssl_ts_verify(&token, &parsed.signature, &other);
        assert!(!ok, "openssl accepted the token against another CA");
        let (ok, msg) = openssl_cms_verify(&p7s, f);
        assert!(ok, "openssl cms -verify with the token attribute: {msg}");

        let bundle_path = out(&r, i, OutputKind::Bundle);
        let bundle: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&bundle_path).unwrap()).unwrap();
        let b64 = base64::engine::general_purpose::STANDARD;
        let btoken = b64
            .decode(bundle["timestamp_token"].as_str().unwrap())
            .unwrap();
        let bsig = b64.decode(bundle["signature"].as_str().unwrap()).unwrap();
        let (ok, msg) = openssl_ts_verify(&btoken, &bsig, &tsa.ca());
        assert!(ok, "openssl ts -verify (bundle token): {msg}");

        for sig in [&p7s, &bundle_path] {
            let v =
                e.c.signing()
                    .verify_signature(s(f), s(sig), None, None)
                    .await
                    .unwrap();
            assert!(v.valid, "{}", v.detail);
            let t = v.timestamp.expect("the report shows the time-stamp");
            // RFC 4514 order, as the signer subject is shown.
            assert_eq!(t.tsa_subject, "O=Timestamps,CN=Test TSA");
            assert!(
                t.time.ends_with('Z') && t.time.starts_with("20"),
                "{}",
                t.time
            );
            assert!(v.detail.contains("time-stamped"), "{}", v.detail);
        }
        // A bundle whose token stamps another signature (the CMS one) is refused.
        let mut swapped = bundle.clone();
        swapped["timestamp_token"] = b64.encode(&token).into();
        let bad = e.dir.path().join(format!("swapped-{i}.sig.json"));
        std::fs::write(&bad, serde_json::to_vec(&swapped).unwrap()).unwrap();
        let v =
            e.c.signing()
                .verify_signature(s(f), s(&bad), None, None)
                .await
                .unwrap();
        assert!(!v.valid && v.detail.contains("imprint"), "{}", v.detail);
    }
    // The raw signature carries no token and is unchanged.
    assert!(out(&r, 0, OutputKind::Raw).exists());

    // The same from the settings: off by default, on once the officer sets it.
    assert!(!e.c.settings().timestamp.enabled);
    let mut st = e.c.settings();
    st.timestamp.enabled = true;
    st.timestamp.url = tsa.url("ok");
    st.timestamp.ca_file = Some(s(&tsa.ca()).to_string());
    e.c.update_settings(st).await.unwrap();
    let more = e.release_files("from_settings", 1);
    let r = e
        .sign_stamped(&key, &more, &[SignFormat::Bundle], OnError::Stop, None)
        .await
        .unwrap();
    let v =
        e.c.signing()
            .verify_signature(s(&more[0]), s(&out(&r, 0, OutputKind::Bundle)), None, None)
            .await
            .unwrap();
    assert!(v.valid && v.timestamp.is_some(), "{v:?}");
}

/// An RSA TSA (PKCS #1 v1.5, as most public TSAs sign) is checked as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rsa_tsa_is_checked_and_accepted() {
    let tsa = TestTsa::start("rsa:2048");
    let e = token(Backend::SoftHsm).await;
    let key = e.p256("rsa_tsa").await;
    let files = e.release_files("rsa_tsa", 1);
    let r = e
        .stamped_ok(
            &key,
            &files,
            &[SignFormat::Cms],
            Some(authority(&tsa, "ok", Some("ca.pem"), 10)),
        )
        .await;
    let parsed = signing::cms::parse(&std::fs::read(out(&r, 0, OutputKind::Cms)).unwrap()).unwrap();
    let (ok, msg) = openssl_ts_verify(
        &parsed.timestamp_token.unwrap(),
        &parsed.signature,
        &tsa.ca(),
    );
    assert!(ok, "openssl ts -verify: {msg}");
}

/// Each wrong answer fails the file with the TSA's URL and the reason, writes nothing, and
/// the batch goes on or stops as asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tsa_that_answers_wrong_or_not_at_all_fails_the_file() {
    let tsa = TestTsa::start("ec");
    let e = token(Backend::SoftHsm).await;
    let key = e.p256("refusals").await;
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        TimestampAuthority {
            url: format!("http://127.0.0.1:{port}/"),
            ca_file: None,
            timeout_seconds: 5,
            optional: None,
        }
    };
    let cases = [
        (
            "wrong-imprint",
            authority(&tsa, "wrong-imprint", None, 10),
            "message imprint",
        ),
        (
            "bad-signature",
            authority(&tsa, "bad-signature", None, 10),
            "signature does not verify",
        ),
        (
            "reject",
            authority(&tsa, "reject", None, 10),
            "status rejection",
        ),
        (
            "other-ca",
            authority(&tsa, "ok", Some("other-ca.pem"), 10),
            "does not chain",
        ),
        (
            "silent",
            authority(&tsa, "silent", None, 1),
            "did not answer in time",
        ),
        ("closed", closed, "cannot be reached"),
    ];
    for (name, authority, reason) in cases {
        for format in [SignFormat::Cms, SignFormat::Bundle] {
            let files = e.release_files(&format!("{name}-{format}"), 2);
            let url = authority.url.clone();
            let r = e
                .sign_stamped(
                    &key,
                    &files,
                    &[format],
                    OnError::Continue,
                    Some(authority.clone()),
                )
                .await
                .unwrap();
            for (i, f) in r.files.iter().enumerate() {
                let err = f
                    .error
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name} {format}: file {i} was signed"));
                assert_eq!(
                    err.code,
                    ErrorCode::TimestampFailed,
                    "{name}: {}",
                    err.message
                );
                assert!(
                    err.message.contains(&url) && err.message.contains(reason),
                    "{name} {format}: {}",
                    err.message
                );
                assert!(f.outputs.is_empty());
            }
            // Nothing half-written: only the artifacts are in their folder.
            let left = testkit::files_under(files[0].parent().unwrap());
            assert_eq!(left.len(), 2, "{name} {format}: {left:?}");
            assert!(!r.stopped);
        }
    }
    // With "stop at the first failure", the second file is never signed.
    let files = e.release_files("stop", 2);
    let r = e
        .sign_stamped(
            &key,
            &files,
            &[SignFormat::Cms],
            OnError::Stop,
            Some(authority(&tsa, "reject", None, 10)),
        )
        .await
        .unwrap();
    assert!(r.stopped);
    assert!(r.files[0].error.is_some() && r.files[1].error.is_none());
    assert!(r.files[1].outputs.is_empty());
}

/// A TSA that drops the connection halfway through some answers during a 100-file batch:
/// exactly those files fail, each naming the TSA and what it did, with nothing written for
/// them; the batch goes on; every other file carries a token OpenSSL accepts; the trail has
/// a record per signed file. A slow TSA fails the files when it outlasts the timeout and is
/// waited for when it does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tsa_dropping_answers_mid_batch_fails_those_files_only() {
    let tsa = TestTsa::start("ec");
    let e = token(Backend::SoftHsm).await;
    let key = e.p256("tsa_batch").await;
    let files = e.release_files("batch", 100);
    let url = tsa.url("drop-every-3rd");
    let r = e
        .sign_stamped(
            &key,
            &files,
            &[SignFormat::Cms],
            OnError::Continue,
            Some(authority(&tsa, "drop-every-3rd", Some("ca.pem"), 10)),
        )
        .await
        .unwrap();
    assert!(!r.stopped);
    let (failed, signed): (Vec<usize>, Vec<usize>) =
        (0..files.len()).partition(|i| r.files[*i].error.is_some());
    assert!(
        (25..=40).contains(&failed.len()),
        "about a third of the exchanges were cut: {failed:?}"
    );
    for i in &failed {
        let err = r.files[*i].error.as_ref().unwrap();
        assert_eq!(err.code, ErrorCode::TimestampFailed, "{}", err.message);
        assert!(
            err.message.contains(&url) && err.message.contains("answer"),
            "file {i}: {}",
            err.message
        );
        assert!(r.files[*i].outputs.is_empty());
        assert!(!PathBuf::from(format!("{}.p7s", s(&files[*i]))).exists());
    }
    for i in &signed {
        let parsed =
            signing::cms::parse(&std::fs::read(out(&r, *i, OutputKind::Cms)).unwrap()).unwrap();
        let token = parsed.timestamp_token.expect("a token");
        let (ok, msg) = openssl_ts_verify(&token, &parsed.signature, &tsa.ca());
        assert!(ok, "file {i}: {msg}");
    }
    // Nothing half-written: the artifacts and one signature per signed file.
    let left = testkit::files_under(files[0].parent().unwrap());
    assert_eq!(left.len(), files.len() + signed.len(), "{left:?}");
    let records =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 1000,
                action: Some("sign".into()),
                status: Some("success".into()),
                ..Default::default()
            })
            .await
            .unwrap();
    let signs = records.iter().filter(|r| r.event.action == "sign").count();
    assert_eq!(signs, signed.len());

    // A slow TSA: past the timeout each file fails saying so; within it, all are stamped.
    let few = e.release_files("slow", 2);
    let r = e
        .sign_stamped(
            &key,
            &few,
            &[SignFormat::Cms],
            OnError::Continue,
            Some(authority(&tsa, "slow", None, 1)),
        )
        .await
        .unwrap();
    for f in &r.files {
        let err = f.error.as_ref().expect("the TSA outlasted the timeout");
        assert!(err.message.contains("in time"), "{}", err.message);
    }
    let few = e.release_files("slow-ok", 2);
    let r = e
        .sign_stamped(
            &key,
            &few,
            &[SignFormat::Cms],
            OnError::Continue,
            Some(authority(&tsa, "slow", None, 10)),
        )
        .await
        .unwrap();
    assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
    assert!(r.files.iter().all(|f| f.unstamped.is_none()));

    // The officer chose to sign without a time-stamp when the TSA fails: the signatures are
    // kept (an HSS key's one-time keys are not wasted), written without a token, and the
    // outcome and the record say why.
    let kept = e.release_files("optional", 3);
    let mut optional = authority(&tsa, "drop", None, 10);
    optional.optional = Some(true);
    let drop_url = optional.url.clone();
    let r = e
        .stamped_ok(&key, &kept, &[SignFormat::Cms], Some(optional))
        .await;
    for (i, f) in kept.iter().enumerate() {
        let why = r.files[i].unstamped.as_ref().expect("says it is unstamped");
        assert!(why.text.contains(&drop_url), "{}", why.text);
        let p7s = out(&r, i, OutputKind::Cms);
        let parsed = signing::cms::parse(&std::fs::read(&p7s).unwrap()).unwrap();
        assert!(parsed.timestamp_token.is_none());
        let (ok, msg) = openssl_cms_verify(&p7s, f);
        assert!(ok, "{msg}");
    }
    let unstamped: Vec<_> =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 1000,
                action: Some("sign".into()),
                text: Some("timestamp_failed".into()),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.event.action == "sign")
            .collect();
    assert_eq!(unstamped.len(), kept.len());
}

/// A TSA URL that is not HTTP(S) is refused before anything is signed; so is a setting with
/// one, and a TSA asked for with no format that carries a token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tsa_url_that_is_not_http_is_refused_before_signing() {
    let e = token(Backend::SoftHsm).await;
    let key = e.p256("bad_url").await;
    let files = e.release_files("bad_url", 1);
    for url in [
        "ftp://tsa.example/",
        "tsa.example:318",
        "file:///etc/passwd",
    ] {
        let a = TimestampAuthority {
            url: url.into(),
            ca_file: None,
            timeout_seconds: 10,
            optional: None,
        };
        let err = e
            .sign_stamped(&key, &files, &[SignFormat::Cms], OnError::Stop, Some(a))
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert!(
            err.message.contains(url) && err.message.contains("http:// or https://"),
            "{}",
            err.message
        );
    }
    assert_eq!(testkit::files_under(files[0].parent().unwrap()).len(), 1);
    let mut st = e.c.settings();
    st.timestamp.enabled = true;
    st.timestamp.url = "ldap://tsa.example/".into();
    let err = e.c.update_settings(st).await.unwrap_err();
    assert!(
        err.message.contains("ldap://tsa.example/"),
        "{}",
        err.message
    );
    let raw_only = TimestampAuthority {
        url: "http://127.0.0.1:9/".into(),
        ca_file: None,
        timeout_seconds: 10,
        optional: None,
    };
    let err = e
        .sign_stamped(
            &key,
            &files,
            &[SignFormat::Raw],
            OnError::Stop,
            Some(raw_only),
        )
        .await
        .unwrap_err();
    assert!(err.message.contains("CMS and bundle"), "{}", err.message);
}

/// Two signers (OpenSSL's own CMS): each gains a token over its own signature value, and
/// OpenSSL still verifies the signature.
async fn two_signers_each_gain_a_token(
    e: &common::Env,
    tsa: &TestTsa,
    ok_tsa: &TimestampAuthority,
) {
    let d = tsa.dir.path();
    let art = d.join("two.bin");
    std::fs::write(&art, b"signed twice").unwrap();
    let two = d.join("two.p7s");
    let (ok, msg) = run(Command::new("openssl").current_dir(d).args([
        "cms",
        "-sign",
        "-binary",
        "-outform",
        "DER",
        "-in",
        s(&art),
        "-out",
        s(&two),
        "-signer",
        "ca.pem",
        "-inkey",
        "ca.key",
        "-signer",
        "other-ca.pem",
        "-inkey",
        "other-ca.key",
    ]));
    assert!(ok, "openssl cms -sign: {msg}");
    let rep =
        e.c.signing()
            .timestamp_signature(s(&two), ok_tsa)
            .await
            .unwrap();
    assert_eq!(rep.timestamps.len(), 2);
    let ci =
        <cms::content_info::ContentInfo as der::Decode>::from_der(&std::fs::read(&two).unwrap())
            .unwrap();
    let sd: cms::signed_data::SignedData = ci.content.decode_as().unwrap();
    for si in sd.signer_infos.0.iter() {
        let attr = si
            .unsigned_attrs
            .as_ref()
            .and_then(|a| {
                a.iter()
                    .find(|a| a.oid == signing::tsp::OID_SIGNATURE_TIME_STAMP_TOKEN)
            })
            .expect("each signer gained a token");
        let token = der::Encode::to_der(&attr.values.as_slice()[0]).unwrap();
        let (ok, msg) = openssl_ts_verify(&token, si.signature.as_bytes(), &tsa.ca());
        assert!(ok, "openssl ts -verify (signer): {msg}");
    }
    let (ok, msg) = run(Command::new("openssl").args([
        "cms",
        "-verify",
        "-binary",
        "-inform",
        "DER",
        "-in",
        s(&two),
        "-content",
        s(&art),
        "-noverify",
        "-out",
        "/dev/null",
    ]));
    assert!(ok, "openssl cms -verify (two signers): {msg}");
}

/// A signature made without a time-stamp gains one later, without the HSM: a CMS (every
/// signer, also a two-signer CMS OpenSSL made) and a bundle are rewritten in place with a
/// token `openssl ts -verify` accepts over each signature value, the CMS still passes
/// `openssl cms -verify`, and the console's verifier shows the time; a second time is
/// refused and leaves the file as it is, and so is a TSA that answers wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signature_made_earlier_gains_a_time_stamp() {
    let tsa = TestTsa::start("ec");
    let e = token(Backend::SoftHsm).await;
    let key = e.p256("later").await;
    let files = e.release_files("later", 1);
    let r = e
        .sign_stamped(
            &key,
            &files,
            &[SignFormat::Cms, SignFormat::Bundle],
            OnError::Stop,
            None,
        )
        .await
        .unwrap();
    let (p7s, bundle_path) = (out(&r, 0, OutputKind::Cms), out(&r, 0, OutputKind::Bundle));
    let before = signing::cms::parse(&std::fs::read(&p7s).unwrap()).unwrap();
    assert!(before.timestamp_token.is_none());
    let ok_tsa = authority(&tsa, "ok", Some("ca.pem"), 10);

    let rep =
        e.c.signing()
            .timestamp_signature(s(&p7s), &ok_tsa)
            .await
            .unwrap();
    assert_eq!((rep.format.as_str(), rep.timestamps.len()), ("cms", 1));
    let after = signing::cms::parse(&std::fs::read(&p7s).unwrap()).unwrap();
    assert_eq!(after.signature, before.signature);
    assert_eq!(after.signed_attrs_der, before.signed_attrs_der);
    let token = after.timestamp_token.expect("the CMS gained a token");
    let (ok, msg) = openssl_ts_verify(&token, &after.signature, &tsa.ca());
    assert!(ok, "openssl ts -verify: {msg}");
    let (ok, msg) = openssl_cms_verify(&p7s, &files[0]);
    assert!(ok, "openssl cms -verify: {msg}");

    let rep =
        e.c.signing()
            .timestamp_signature(s(&bundle_path), &ok_tsa)
            .await
            .unwrap();
    assert_eq!((rep.format.as_str(), rep.timestamps.len()), ("bundle", 1));
    let bundle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&bundle_path).unwrap()).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    let btoken = b64
        .decode(
            bundle["timestamp_token"]
                .as_str()
                .expect("the bundle gained a token"),
        )
        .unwrap();
    let bsig = b64.decode(bundle["signature"].as_str().unwrap()).unwrap();
    let (ok, msg) = openssl_ts_verify(&btoken, &bsig, &tsa.ca());
    assert!(ok, "openssl ts -verify (bundle): {msg}");

    for sig in [&p7s, &bundle_path] {
        let v =
            e.c.signing()
                .verify_signature(s(&files[0]), s(sig), None, None)
                .await
                .unwrap();
        assert!(v.valid && v.timestamp.is_some(), "{v:?}");
        // A second time: refused, the file untouched.
        let kept = std::fs::read(sig).unwrap();
        let err =
            e.c.signing()
                .timestamp_signature(s(sig), &ok_tsa)
                .await
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert!(err.message.contains("already carries"), "{}", err.message);
        assert_eq!(std::fs::read(sig).unwrap(), kept);
    }

    // A TSA that answers wrong: nothing is written.
    let r = e
        .sign_stamped(
            &key,
            &e.release_files("later-bad", 1),
            &[SignFormat::Cms],
            OnError::Stop,
            None,
        )
        .await
        .unwrap();
    let p7s = out(&r, 0, OutputKind::Cms);
    let kept = std::fs::read(&p7s).unwrap();
    let err =
        e.c.signing()
            .timestamp_signature(s(&p7s), &authority(&tsa, "wrong-imprint", None, 10))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::TimestampFailed, "{}", err.message);
    assert_eq!(std::fs::read(&p7s).unwrap(), kept);

    two_signers_each_gain_a_token(&e, &tsa, &ok_tsa).await;
}

/// An HSS key's signature is never thrown away when the TSA fails (its one-time key is
/// spent): the bundle is written without a token, the report and the trail say why, and
/// the counter dropped by exactly that signature; a token is added afterwards, and
/// `openssl ts -verify` accepts it over the signature.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hss_signature_is_kept_unstamped_when_the_tsa_fails_and_stamped_later() {
    use hsm::algo::{HssParams, LmotsType, LmsType};
    let tsa = TestTsa::start("ec");
    let e = common::builtin().await;
    let params = HssParams::new(vec![(LmsType::H5, LmotsType::W8)]).unwrap();
    let g = e.generate(KeySpec::Hss { params }, "fw_hss_tsa").await;
    let remaining = || async {
        e.c.signing()
            .signing_keys(&e.pid)
            .await
            .unwrap()
            .into_iter()
            .find(|k| k.handle == g.private_handle)
            .unwrap()
            .hss_remaining
            .unwrap()
    };
    let before = remaining().await;
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        TimestampAuthority {
            url: format!("http://127.0.0.1:{port}/"),
            ca_file: None,
            timeout_seconds: 5,
            optional: None,
        }
    };
    let files = e.release_files("hss_tsa", 1);
    let req = SignRequest {
        key: format!("id:{}", g.id_hex),
        also_keys: vec![],
        files: files.iter().map(|p| s(p).to_string()).collect(),
        formats: vec![SignFormat::Bundle],
        manifest: false,
        out_dir: None,
        context: None,
        on_error: OnError::Stop,
        confirm_hss: true,
        timestamp: Some(closed.clone()),
        kit: None,
        chain: vec![],
        context_login: None,
    };
    let r = e.try_sign(req).await.unwrap();
    assert!(r.files[0].error.is_none(), "{:?}", r.files[0]);
    let why = r.files[0].unstamped.as_ref().expect("the report says why");
    assert!(why.text.contains(&closed.url), "{}", why.text);
    assert_eq!(before - remaining().await, 1, "one one-time key, kept");
    let bundle = PathBuf::from(
        &r.files[0]
            .outputs
            .iter()
            .find(|o| o.format == OutputKind::Bundle)
            .unwrap()
            .path,
    );
    let b: serde_json::Value = serde_json::from_slice(&std::fs::read(&bundle).unwrap()).unwrap();
    assert!(b.get("timestamp_token").is_none_or(|t| t.is_null()), "{b}");
    let recs =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 20,
                action: Some("sign".into()),
                ..Default::default()
            })
            .await
            .unwrap();
    let rec = recs
        .iter()
        .find(|r| r.event.resource_id.as_deref() == Some("release-0.tar"))
        .expect("the file's record");
    assert!(
        rec.event.metadata.contains("timestamp_failed"),
        "{}",
        rec.event.metadata
    );
    // Later, with the TSA back: the token is added over the same signature.
    e.c.signing()
        .timestamp_signature(s(&bundle), &authority(&tsa, "ok", None, 10))
        .await
        .unwrap();
    let b: serde_json::Value = serde_json::from_slice(&std::fs::read(&bundle).unwrap()).unwrap();
    let token = base64::engine::general_purpose::STANDARD
        .decode(b["timestamp_token"].as_str().expect("a token now"))
        .unwrap();
    let signature = base64::engine::general_purpose::STANDARD
        .decode(b["signature"].as_str().unwrap())
        .unwrap();
    let (ok, log) = openssl_ts_verify(&token, &signature, &tsa.ca());
    assert!(ok, "{log}");
    let (ok, _) = openssl_ts_verify(&token, b"other bytes", &tsa.ca());
    assert!(!ok, "the token is bound to this signature");
}

/// The TSA is asked after the HSM signed, with the session back in the pool: while a TSA
/// holds its answer, no HSM session is in use and other work on the partition goes on;
/// once it answers, the signature carries its token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tsa_exchange_holds_no_hsm_session() {
    let tsa = TestTsa::start("ec");
    let e = token(Backend::SoftHsm).await;
    let key = e.p256("tsa_gate").await;
    let files = e.release_files("gate", 1);
    let c = e.c.clone();
    let (pid, key2, files2) = (e.pid.clone(), key.clone(), files.clone());
    let auth = authority(&tsa, "gate", Some("ca.pem"), 60);
    let signing = tokio::spawn(async move {
        let formats = [SignFormat::Cms, SignFormat::Bundle];
        sign_on(
            &c,
            &pid,
            &key2,
            &files2,
            &formats,
            OnError::Stop,
            Some(auth),
        )
        .await
    });
    let pool = e.c.partition_ref(&e.pid).await.unwrap().pool.clone();
    let mut held_idle = false;
    for _ in 0..3000 {
        if tsa.waiting_at_gate() == 1 && pool.status().in_use == 0 {
            held_idle = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(
        held_idle,
        "the TSA holds the query ({} waiting) and no HSM session is in use ({} in use)",
        tsa.waiting_at_gate(),
        pool.status().in_use
    );
    assert!(!signing.is_finished());
    // Other work on the partition goes on meanwhile.
    let listed = e.c.list_keys(&e.pid).await.unwrap();
    assert!(listed.iter().any(|o| o.label == "tsa_gate"));
    assert!(!signing.is_finished(), "the batch waits for the TSA");
    tsa.open_gate();
    let r = signing.await.unwrap().unwrap();
    assert!(r.files[0].error.is_none(), "{:?}", r.files[0]);
    let p7s = out(&r, 0, OutputKind::Cms);
    let parsed = signing::cms::parse(&std::fs::read(&p7s).unwrap()).unwrap();
    let token = parsed.timestamp_token.expect("a token");
    let (ok, msg) = openssl_ts_verify(&token, &parsed.signature, &tsa.ca());
    assert!(ok, "{msg}");
    let (ok, msg) = openssl_cms_verify(&p7s, &files[0]);
    assert!(ok, "{msg}");
    let bundle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out(&r, 0, OutputKind::Bundle)).unwrap()).unwrap();
    assert!(bundle["timestamp_token"].is_string(), "{bundle}");
}
