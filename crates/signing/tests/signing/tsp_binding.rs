//! A time-stamp token must be bound to the certificate that verifies it (RFC 3161 §2.4.1,
//! RFC 5816, RFC 5035): its signed attributes name that certificate by hash. Every token
//! here is made by OpenSSL — `openssl ts -reply` (a `signingCertificateV2` with SHA-256, or
//! a `signingCertificate` with SHA-1 when the TSA is set to `ess_cert_id_alg = sha1`) and
//! `openssl cms -sign` over a real TSTInfo (with `-cades`: a `signingCertificateV2` with
//! issuer and serial; without: no attribute at all) — and `openssl ts -verify` (another
//! lineage than the console's) judges the same tokens where it can read them.
//!
//! The unbound token is the attack the attribute is there for: a TSA key with two
//! certificates. The token is signed with the key and names one certificate (from another
//! CA) in its signed attributes, but carries the other (from the trusted CA) and points at
//! it through the key identifier both share — the signature verifies with either.

use std::path::Path;
use std::process::Command;

use der::{Decode, Encode};
use signing::alg::DigestAlg;
use signing::tsp::{
    check_response, load_ca, request, verify_token, verify_token_for, SigningCertificateV2,
    TspError, OID_SIGNING_CERTIFICATE_V2,
};
use testkit::tsa::{openssl_ts_verify, TestTsa};

const OID_TST_INFO: &str = "1.2.840.113549.1.9.16.1.4";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn openssl(dir: &Path, args: &[&str]) -> Vec<u8> {
    let o = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// What `openssl cms -cmsout -print` shows of a token (to see which attributes OpenSSL
/// wrote, by its own reading).
fn printed(dir: &Path, token: &[u8]) -> String {
    let p = dir.join("printed.der");
    std::fs::write(&p, token).unwrap();
    String::from_utf8(openssl(
        dir,
        &["cms", "-cmsout", "-print", "-inform", "DER", "-in", s(&p)],
    ))
    .unwrap()
}

/// The hash of a PEM certificate's DER, by OpenSSL.
fn cert_hash(dir: &Path, pem: &str, alg: &str) -> String {
    let der = dir.join(format!("{pem}.der"));
    openssl(
        dir,
        &["x509", "-in", pem, "-outform", "DER", "-out", s(&der)],
    );
    let out = openssl(dir, &["dgst", &format!("-{alg}"), "-r", s(&der)]);
    String::from_utf8(out)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// A token from `openssl ts -reply` (TSA section of `mode`) over `data`, checked as the
/// console checks a TSA's answer.
fn reply_token(tsa: &TestTsa, mode: &str, data: &[u8]) -> signing::tsp::Result<Vec<u8>> {
    let ca = load_ca(&std::fs::read(tsa.ca()).unwrap()).unwrap();
    let req = request(DigestAlg::Sha256, data).unwrap();
    let resp = tsa.reply(mode, &req.der);
    check_response(&resp, &req, Some(&ca)).map(|(token, _)| token)
}

/// A token `openssl cms -sign` makes over the TSTInfo `tst` (DER), signed with the TSA's
/// key, `extra` giving the signer certificate and what else.
fn cms_token(dir: &Path, name: &str, tst: &[u8], extra: &[&str]) -> Vec<u8> {
    let (input, out) = (
        dir.join(format!("{name}.tst")),
        dir.join(format!("{name}.tok")),
    );
    std::fs::write(&input, tst).unwrap();
    let mut args = vec![
        "cms",
        "-sign",
        "-binary",
        "-nodetach",
        "-nosmimecap",
        "-econtent_type",
        OID_TST_INFO,
        "-inkey",
        "tsa.key",
        "-md",
        "sha256",
        "-outform",
        "DER",
        "-in",
        s(&input),
        "-out",
        s(&out),
    ];
    args.extend(extra);
    openssl(dir, &args);
    std::fs::read(out).unwrap()
}

/// The TSTInfo inside a token, as OpenSSL takes it out.
fn tst_info(dir: &Path, token: &[u8]) -> Vec<u8> {
    let (t, out) = (dir.join("source.tok"), dir.join("source.tst"));
    std::fs::write(&t, token).unwrap();
    openssl(
        dir,
        &[
            "cms",
            "-verify",
            "-noverify",
            "-binary",
            "-inform",
            "DER",
            "-in",
            s(&t),
            "-out",
            s(&out),
        ],
    );
    std::fs::read(out).unwrap()
}

fn unbound_key(e: &TspError) -> &str {
    match e {
        TspError::Unbound(m) => &m.key,
        other => panic!("refused for another reason than the binding: {other}"),
    }
}

/// `openssl ts -reply` tokens, with either attribute, are taken (and OpenSSL agrees).
#[test]
fn tokens_naming_their_certificate_either_way_are_taken() {
    for key in ["ec", "rsa:2048"] {
        let tsa = TestTsa::start(key);
        let d = tsa.dir.path();
        for (mode, attribute) in [
            ("ok", "id-smime-aa-signingCertificateV2 "),
            ("ess-sha1", "id-smime-aa-signingCertificate "),
        ] {
            let data = format!("signature value {key} {mode}");
            let token = reply_token(&tsa, mode, data.as_bytes())
                .unwrap_or_else(|e| panic!("{key} {mode}: {e}"));
            // OpenSSL wrote the attribute this case is about (and only that one).
            let shown = printed(d, &token);
            assert!(shown.contains(attribute), "{key} {mode}: {shown}");
            assert_eq!(
                shown.matches("id-smime-aa-signingCertificate").count(),
                1,
                "{key} {mode}: {shown}"
            );
            let (ok, msg) = openssl_ts_verify(&token, data.as_bytes(), &tsa.ca());
            assert!(ok, "{key} {mode}: openssl ts -verify: {msg}");
            verify_token_for(&token, data.as_bytes(), None).unwrap();
        }
    }
}

/// An ESSCertIDv2 that gives the issuer and serial too (`openssl cms -sign -cades`) is
/// taken; a token without any signing-certificate attribute is refused, by OpenSSL too.
#[test]
fn issuer_and_serial_are_taken_and_a_token_without_the_attribute_is_refused() {
    let tsa = TestTsa::start("ec");
    let d = tsa.dir.path();
    let ca = load_ca(&std::fs::read(tsa.ca()).unwrap()).unwrap();
    let data = b"a signature value";
    let source = reply_token(&tsa, "ok", data).unwrap();
    let tst = tst_info(d, &source);

    let cades = cms_token(d, "cades", &tst, &["-cades", "-signer", "tsa.pem"]);
    // The attribute OpenSSL wrote gives the issuer and serial (what this case is about).
    let ci = cms::content_info::ContentInfo::from_der(&cades).unwrap();
    let sd: cms::signed_data::SignedData = ci.content.decode_as().unwrap();
    let attrs = sd.signer_infos.0.as_slice()[0]
        .signed_attrs
        .clone()
        .unwrap();
    let ess = attrs
        .iter()
        .find(|a| a.oid == OID_SIGNING_CERTIFICATE_V2)
        .expect("-cades writes signingCertificateV2");
    let v2 = SigningCertificateV2::from_der(&ess.values.as_slice()[0].to_der().unwrap()).unwrap();
    assert!(v2.certs[0].issuer_serial.is_some());
    let (ok, msg) = openssl_ts_verify(&cades, data, &tsa.ca());
    assert!(ok, "openssl ts -verify: {msg}");
    let (_, info) = verify_token(&cades, Some(&ca)).unwrap();
    assert!(info.ca_checked);
    verify_token_for(&cades, data, Some(&ca)).unwrap();

    let bare = cms_token(d, "bare", &tst, &["-signer", "tsa.pem"]);
    assert!(!printed(d, &bare).contains("signingCertificate"));
    let (ok, msg) = openssl_ts_verify(&bare, data, &tsa.ca());
    assert!(
        !ok && msg.contains("missing signing certificate attribute"),
        "openssl ts -verify: {msg}"
    );
    for ca in [None, Some(ca.as_slice())] {
        let e = verify_token(&bare, ca).unwrap_err();
        assert_eq!(unbound_key(&e), "signing.tsp_unbound_missing", "{e}");
        assert!(
            e.to_string().contains("signingCertificateV2")
                && e.to_string().contains("RFC 3161 2.4.1"),
            "{e}"
        );
        assert_eq!(e.msg().key, "signing.tsp_unbound");
    }
}

/// The same key certified twice: a token whose signed attributes name the one certificate
/// but which carries the other is refused as unbound (its signature verifies), naming both
/// hashes; made the same way but naming the certificate it carries, it is taken.
#[test]
fn a_token_naming_another_certificate_of_the_same_key_is_refused() {
    let tsa = TestTsa::start("ec");
    let d = tsa.dir.path();
    let ca = load_ca(&std::fs::read(tsa.ca()).unwrap()).unwrap();
    // The twin: the TSA's key and request, certified by the other CA.
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "tsa.csr",
            "-CA",
            "other-ca.pem",
            "-CAkey",
            "other-ca.key",
            "-set_serial",
            "4242",
            "-days",
            "30",
            "-extfile",
            "tsa-ext.cnf",
            "-out",
            "twin.pem",
        ],
    );
    let data = b"the signature value";
    let tst = tst_info(d, &reply_token(&tsa, "ok", data).unwrap());
    // The signer is found by the key identifier both certificates have; only tsa.pem is
    // carried. OpenSSL's `ts -verify` (PKCS #7) cannot read a key-identifier signer.
    let carried = ["-cades", "-keyid", "-nocerts", "-certfile", "tsa.pem"];
    let mut bound_args = vec!["-signer", "tsa.pem"];
    bound_args.extend(carried);
    let bound = cms_token(d, "bound", &tst, &bound_args);
    verify_token(&bound, Some(&ca)).unwrap();
    verify_token_for(&bound, data, Some(&ca)).unwrap();

    let mut swapped_args = vec!["-signer", "twin.pem"];
    swapped_args.extend(carried);
    let swapped = cms_token(d, "swapped", &tst, &swapped_args);
    let (tsa_hash, twin_hash) = (
        cert_hash(d, "tsa.pem", "sha256"),
        cert_hash(d, "twin.pem", "sha256"),
    );
    assert_ne!(tsa_hash, twin_hash);
    for ca in [None, Some(ca.as_slice())] {
        let e = verify_token(&swapped, ca).unwrap_err();
        assert_eq!(unbound_key(&e), "signing.tsp_unbound_hash", "{e}");
        let text = e.msg().text;
        assert!(
            text.starts_with("the token is not bound to the TSA's certificate")
                && text.contains("signingCertificateV2")
                && text.contains(&format!("SHA-256 {twin_hash}"))
                && text.contains(&tsa_hash)
                && text.contains("CN=Test TSA"),
            "{text}"
        );
        let e = verify_token_for(&swapped, data, ca).unwrap_err();
        assert_eq!(unbound_key(&e), "signing.tsp_unbound_hash", "{e}");
    }
}
