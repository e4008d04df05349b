//! Release signing through the console on real modules, every output checked by verifiers
//! of other lineages (pyca/cryptography + asn1crypto, hsslms, Debian's OpenSSL 3.0) and
//! rejected by them once the artifact is tampered with. One test per process (nextest).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use console::sign::{OnError, OutputKind, SignFormat, SignReport, SignRequest};
use console::ErrorCode;
use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType, MlDsaSet, SlhDsaSet};
use testkit::Backend;

use crate::common;
use common::{builtin, builtin_with, token, Env};

impl Env {
    async fn sign(
        &self,
        key: &(String, u64),
        files: &[PathBuf],
        formats: &[SignFormat],
        manifest: bool,
        on_error: OnError,
        context: Option<&str>,
    ) -> SignReport {
        let mut req = common::batch_request(&key.0, files, formats);
        req.manifest = manifest;
        req.context = context.map(String::from);
        req.on_error = on_error;
        req.confirm_hss = true;
        self.try_sign(req).await.unwrap()
    }

    /// A new key of `spec` labelled `label`, and files of `sizes` (under `label`) signed by
    /// it in every format, stopping at a failure, with a manifest when asked: what
    /// [`check_all_formats`] then checks.
    async fn new_key_signs_all_formats(
        &self,
        spec: KeySpec,
        label: &str,
        sizes: &[usize],
        manifest: bool,
    ) -> ((String, u64), Vec<PathBuf>, SignReport) {
        let key = self.key(spec, label).await;
        let files = self.files(label, sizes);
        let r = self
            .sign(&key, &files, &ALL, manifest, OnError::Stop, None)
            .await;
        (key, files, r)
    }
}

fn py(args: &[&Path]) -> (bool, String) {
    let o = Command::new(testkit::python())
        .arg(testkit::repo_root().join("tests/interop/verify_release.py"))
        .args(args)
        .output()
        .unwrap();
    assert_ne!(
        o.status.code(),
        Some(2),
        "verifier usage/unsupported: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn openssl(args: &[&str]) -> (bool, String) {
    run_openssl(Path::new("openssl"), args)
}

/// The post-quantum kinds are read by OpenSSL 3.5 (built for the tests), the others by
/// Debian's OpenSSL 3.0.
fn openssl_for(kind: &str) -> PathBuf {
    if matches!(kind, "ml-dsa" | "slh-dsa") {
        testkit::openssl35()
    } else {
        PathBuf::from("openssl")
    }
}

fn run_openssl(program: &Path, args: &[&str]) -> (bool, String) {
    let o = Command::new(program).args(args).output().unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

fn out(r: &SignReport, i: usize, format: &str) -> PathBuf {
    PathBuf::from(
        &r.files[i]
            .outputs
            .iter()
            .find(|o| o.format.to_string() == format)
            .unwrap_or_else(|| panic!("no {format} output for file {i}: {:?}", r.files[i]))
            .path,
    )
}

fn pubkey(r: &SignReport) -> PathBuf {
    PathBuf::from(
        &r.manifest
            .iter()
            .find(|o| o.format == OutputKind::PublicKey)
            .expect("public key written")
            .path,
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every output of every file passes the outside verifier; after tampering with each file
/// none does. `openssl_too` adds Debian's OpenSSL 3.0 (classical algorithms only).
async fn check_all_formats(e: &Env, r: &SignReport, files: &[PathBuf], openssl_too: Option<&str>) {
    assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
    let pk = pubkey(r);
    for (i, f) in files.iter().enumerate() {
        outputs_pass_the_outside_and_the_console_verifier(e, r, i, f, &pk).await;
        if let Some(kind) = openssl_too {
            openssl_verifies_the_cms_and_raw_outputs(
                kind,
                &out(r, i, "cms"),
                &out(r, i, "raw"),
                f,
                &pk,
            );
        }
    }
    if let Some(m) = r.manifest.iter().find(|o| o.format == OutputKind::Manifest) {
        manifest_verifies_and_sha256sum_accepts_it(r, Path::new(&m.path), &pk);
    }
    tampered_artifacts_fail_every_verifier(e, r, files, &pk, openssl_too).await;
}

/// The CMS, raw and bundle outputs of file `i` (`f`) pass the outside verifier and the
/// console's, whose verdict also travels as a catalog text.
async fn outputs_pass_the_outside_and_the_console_verifier(
    e: &Env,
    r: &SignReport,
    i: usize,
    f: &Path,
    pk: &Path,
) {
    let (p7s, sig, bundle) = (out(r, i, "cms"), out(r, i, "raw"), out(r, i, "bundle"));
    assert_eq!(
        py(&[Path::new("cms"), f, &p7s]),
        (true, String::new()),
        "cms {i}"
    );
    assert!(py(&[Path::new("raw"), f, &sig, pk]).0, "raw {i}");
    assert!(py(&[Path::new("bundle"), f, &bundle]).0, "bundle {i}");
    for (sigfile, key) in [
        (&p7s, "verify.details.cms_ok"),
        (&sig, "verify.details.raw_ok"),
        (&bundle, "verify.details.bundle_ok"),
    ] {
        let v =
            e.c.signing()
                .verify_signature(s(f), s(sigfile), Some(s(pk)), None)
                .await
                .unwrap();
        assert!(
            v.valid,
            "console verifier on {}: {}",
            sigfile.display(),
            v.detail
        );
        // The verdict's sentence also travels as a catalog text, the same English.
        let t = v
            .detail_text
            .as_ref()
            .expect("a verdict has a catalog text");
        assert_eq!((t.key.as_str(), &t.text), (key, &v.detail));
    }
}

/// `openssl cms -verify` of the detached CMS signature `p7s` over `f` (the signer's
/// certificate not checked).
fn openssl_cms_verify(kind: &str, p7s: &Path, f: &Path) -> (bool, String) {
    common::openssl_cms_verify(&openssl_for(kind), p7s, f)
}

/// OpenSSL verifies the CMS signature `p7s` and the raw signature `sig` of `f` by a key of
/// `kind`: Debian's 3.0 the classical kinds, 3.5 ML-DSA and SLH-DSA.
fn openssl_verifies_the_cms_and_raw_outputs(
    kind: &str,
    p7s: &Path,
    sig: &Path,
    f: &Path,
    pk: &Path,
) {
    // Debian 12's OpenSSL 3.0 cannot verify Ed25519 in CMS (it hands EdDSA the
    // SHA-512 digest algorithm and fails with "invalid digest"); pyca checks those.
    let (ok, msg) = if kind == "ed25519" {
        (true, String::new())
    } else {
        openssl_cms_verify(kind, p7s, f)
    };
    assert!(ok, "openssl cms -verify: {msg}");
    let (ok, msg) = match kind {
        "ecdsa-p256" => openssl(&[
            "dgst",
            "-sha256",
            "-verify",
            s(pk),
            "-signature",
            s(sig),
            s(f),
        ]),
        "ecdsa-p384" => openssl(&[
            "dgst",
            "-sha384",
            "-verify",
            s(pk),
            "-signature",
            s(sig),
            s(f),
        ]),
        "rsa-pss" => openssl(&[
            "dgst",
            "-sha256",
            "-sigopt",
            "rsa_padding_mode:pss",
            "-sigopt",
            "rsa_pss_saltlen:32",
            "-verify",
            s(pk),
            "-signature",
            s(sig),
            s(f),
        ]),
        "ed25519" => openssl(&[
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            s(pk),
            "-rawin",
            "-in",
            s(f),
            "-sigfile",
            s(sig),
        ]),
        "ml-dsa" | "slh-dsa" => run_openssl(
            &openssl_for(kind),
            &[
                "pkeyutl",
                "-verify",
                "-pubin",
                "-inkey",
                s(pk),
                "-rawin",
                "-in",
                s(f),
                "-sigfile",
                s(sig),
            ],
        ),
        other => panic!("{other}"),
    };
    assert!(ok, "openssl raw {kind}: {msg}");
}

/// The signed manifest `m` passes the outside verifier and `sha256sum -c` in its folder.
fn manifest_verifies_and_sha256sum_accepts_it(r: &SignReport, m: &Path, pk: &Path) {
    let sig = r
        .manifest
        .iter()
        .find(|o| o.format == OutputKind::ManifestSignature)
        .unwrap();
    assert!(
        py(&[Path::new("manifest"), m, Path::new(&sig.path), pk]).0,
        "manifest"
    );
    let dir = m.parent().unwrap();
    let o = Command::new("sha256sum")
        .arg("-c")
        .arg("SHA256SUMS")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "sha256sum -c: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Tamper: one byte of each artifact; then neither the outside verifier, nor the
/// console's, nor OpenSSL (where asked) accepts any of its signatures.
async fn tampered_artifacts_fail_every_verifier(
    e: &Env,
    r: &SignReport,
    files: &[PathBuf],
    pk: &Path,
    openssl_too: Option<&str>,
) {
    for (i, f) in files.iter().enumerate() {
        let mut data = std::fs::read(f).unwrap();
        let mid = data.len() / 2;
        data[mid] ^= 0x01;
        std::fs::write(f, &data).unwrap();
        for kind in ["cms", "raw", "bundle"] {
            let sigf = out(r, i, kind);
            let args: Vec<&Path> = if kind == "raw" {
                vec![Path::new(kind), f, &sigf, pk]
            } else {
                vec![Path::new(kind), f, &sigf]
            };
            let (ok, why) = py(&args);
            assert!(
                !ok,
                "the outside verifier accepted a tampered file ({kind} {i})"
            );
            assert!(why.contains("invalid"), "{why}");
            let v =
                e.c.signing()
                    .verify_signature(s(f), s(&sigf), Some(s(pk)), None)
                    .await
                    .unwrap();
            assert!(
                !v.valid,
                "the console accepted a tampered file ({kind} {i})"
            );
        }
        if let Some(kind) = openssl_too.filter(|k| *k != "ed25519") {
            let (ok, _) = openssl_cms_verify(kind, &out(r, i, "cms"), f);
            assert!(!ok, "openssl accepted a tampered file");
        }
    }
}

const ALL: [SignFormat; 3] = [SignFormat::Cms, SignFormat::Raw, SignFormat::Bundle];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_ml_dsa_65_in_every_format_with_outside_verifiers() {
    let e = builtin().await;
    let (key, files, r) = e
        .new_key_signs_all_formats(
            KeySpec::MlDsa { set: MlDsaSet::P65 },
            "release_ml_dsa_65",
            &[1, 4096, 1024 * 1024],
            true,
        )
        .await;
    assert_eq!(
        r.signatures_made,
        3 * 2 + 1 + 1,
        "CMS + shared raw/bundle per file, the manifest, the certificate: {r:?}"
    );
    // The certificate issued for CMS is on the token now, next to the key.
    assert!(e
        .c
        .signing()
        .signing_keys(&e.pid)
        .await
        .unwrap()
        .iter()
        .any(|k| k.handle == key.1 && k.has_certificate));
    check_all_formats(&e, &r, &files, None).await;
    // Each signature is in the audit trail, which verifies.
    let recs: Vec<_> =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 100,
                action: Some("sign".into()),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.event.action == "sign")
            .collect();
    assert_eq!(recs.len(), 3);
    assert!(recs
        .iter()
        .all(|r| r.event.status == "success" && r.event.metadata.contains("sha256")));
    assert!(e
        .c
        .trail()
        .audit_verify(&|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap()
        .is_intact());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ml_dsa_context_is_carried_and_required() {
    let e = builtin().await;
    let key = e
        .key(KeySpec::MlDsa { set: MlDsaSet::P44 }, "ctx_ml_dsa_44")
        .await;
    let files = e.files("ctx", &[1000]);
    let r = e
        .sign(
            &key,
            &files,
            &[SignFormat::Raw, SignFormat::Bundle],
            false,
            OnError::Stop,
            Some("release-2026"),
        )
        .await;
    let pk = pubkey(&r);
    let ctx_hex = hex::encode("release-2026");
    assert!(
        py(&[
            Path::new("raw"),
            &files[0],
            &out(&r, 0, "raw"),
            &pk,
            Path::new(&ctx_hex)
        ])
        .0
    );
    assert!(
        !py(&[Path::new("raw"), &files[0], &out(&r, 0, "raw"), &pk]).0,
        "without the context the signature does not verify"
    );
    assert!(
        py(&[Path::new("bundle"), &files[0], &out(&r, 0, "bundle")]).0,
        "the bundle carries its context"
    );
    // CMS takes no context (RFC 9882).
    let req = SignRequest {
        key: key.0.clone(),
        also_keys: vec![],
        files: vec![s(&files[0]).into()],
        formats: vec![SignFormat::Cms],
        manifest: false,
        out_dir: None,
        context: Some("x".into()),
        on_error: OnError::Stop,
        confirm_hss: false,
        timestamp: None,
        kit: None,
        chain: vec![],
        context_login: None,
    };
    let err = e.try_sign(req).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hss_signatures_verify_outside_and_the_budget_is_enforced() {
    let e = builtin().await;
    let params = HssParams::new(vec![(LmsType::H5, LmotsType::W8)]).unwrap();
    let key = e.key(KeySpec::Hss { params }, "fw_hss_h5").await;
    let before =
        e.c.signing()
            .signing_keys(&e.pid)
            .await
            .unwrap()
            .into_iter()
            .find(|k| k.handle == key.1)
            .unwrap();
    assert_eq!(
        (before.hss_remaining, before.hss_capacity.as_deref()),
        (Some(32), Some("32"))
    );
    // Confirmation is required.
    let files = e.files("hss", &[10, 20]);
    let mut req = SignRequest {
        key: key.0.clone(),
        also_keys: vec![],
        files: files.iter().map(|p| s(p).to_string()).collect(),
        formats: ALL.to_vec(),
        manifest: true,
        out_dir: None,
        context: None,
        on_error: OnError::Stop,
        confirm_hss: false,
        timestamp: None,
        kit: None,
        chain: vec![],
        context_login: None,
    };
    let err = e.try_sign(req.clone()).await.unwrap_err();
    assert!(err.message.contains("confirm"), "{err:?}");
    // Too many for what is left: refused before anything is signed.
    let many = e.files("many", &[5; 16]);
    let mut big = req.clone();
    big.files = many.iter().map(|p| s(p).to_string()).collect();
    big.confirm_hss = true;
    let err = e.try_sign(big).await.unwrap_err();
    assert!(
        err.message.contains("32 signatures left") && err.message.contains("needs 34"),
        "{err:?}"
    );
    assert!(
        many.iter()
            .all(|f| !PathBuf::from(format!("{}.p7s", f.display())).exists()),
        "nothing was written"
    );
    assert_eq!(
        e.c.signing()
            .signing_keys(&e.pid)
            .await
            .unwrap()
            .into_iter()
            .find(|k| k.handle == key.1)
            .unwrap()
            .hss_remaining,
        Some(32),
        "nothing was signed"
    );
    req.confirm_hss = true;
    let r = e.try_sign(req).await.unwrap();
    assert_eq!(r.signatures_made, 2 * 2 + 1 + 1);
    assert_eq!(
        r.hss_remaining_after,
        Some(32 - r.signatures_made),
        "the counter dropped by exactly the signatures made"
    );
    check_all_formats(&e, &r, &files, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_classical_keys_verify_with_openssl_and_python() {
    let e = token(Backend::SoftHsm).await;
    for (spec, label, kind) in [
        (KeySpec::Ec { curve: Curve::P256 }, "rel_p256", "ecdsa-p256"),
        (KeySpec::Ec { curve: Curve::P384 }, "rel_p384", "ecdsa-p384"),
        (KeySpec::Rsa { bits: 2048 }, "rel_rsa", "rsa-pss"),
        (
            KeySpec::Ec {
                curve: Curve::Ed25519,
            },
            "rel_ed25519",
            "ed25519",
        ),
    ] {
        let (_, files, r) = e
            .new_key_signs_all_formats(spec, label, &[100, 70_000], true)
            .await;
        if kind == "ecdsa-p256" {
            every_signed_byte_matters(&e, &r, &files[0]).await;
        }
        check_all_formats(&e, &r, &files, Some(kind)).await;
    }
}

/// Flip each byte the signature protects, one at a time, and ask the console's verifier:
/// all of the raw signature; all of the CMS file except the certificate (CMS leaves the
/// certificates outside what is signed; the key is pinned here); the bundle's file size,
/// digests, public key and signature. Every single change must be rejected (or the file
/// refused as malformed).
async fn every_signed_byte_matters(e: &Env, r: &SignReport, f: &Path) {
    let pk = pubkey(r);
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("tampered.sig");
    let mut tried = 0usize;
    let mut check = |bytes: Vec<u8>, what: String| {
        std::fs::write(&bad, &bytes).unwrap();
        tried += 1;
        let bad = bad.clone();
        let pk = pk.clone();
        async move {
            let v =
                e.c.signing()
                    .verify_signature(s(f), s(&bad), Some(s(&pk)), None)
                    .await;
            assert!(
                !matches!(v, Ok(ref v) if v.valid),
                "accepted with {what} changed"
            );
        }
    };
    let raw = std::fs::read(out(r, 0, "raw")).unwrap();
    for i in 0..raw.len() {
        let mut b = raw.clone();
        b[i] ^= 0x01;
        check(b, format!("raw signature byte {i}")).await;
    }
    let p7s = std::fs::read(out(r, 0, "cms")).unwrap();
    let cert = signing::cms::certificate(&signing::cms::parse(&p7s).unwrap())
        .map(|c| der::Encode::to_der(&c).unwrap())
        .expect("the CMS carries the certificate");
    let at = p7s
        .windows(cert.len())
        .position(|w| w == cert.as_slice())
        .expect("the certificate inside the CMS");
    for i in (0..p7s.len()).filter(|i| !(at..at + cert.len()).contains(i)) {
        let mut b = p7s.clone();
        b[i] ^= 0x01;
        check(b, format!("CMS byte {i}")).await;
    }
    let bundle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out(r, 0, "bundle")).unwrap()).unwrap();
    let fields: [&[&str]; 5] = [
        &["file", "size"],
        &["file", "sha256"],
        &["file", "sha512"],
        &["key", "public_key"],
        &["signature"],
    ];
    for path in fields {
        let original = path.iter().fold(&bundle, |v, k| &v[*k]).clone();
        let text = match &original {
            serde_json::Value::String(t) => t.clone(),
            other => other.to_string(),
        };
        for i in 0..text.len() {
            let mut t = text.clone().into_bytes();
            // Another character of the same alphabet, so the field still parses.
            t[i] = match t[i] {
                b'0' => b'1',
                b'a' => b'b',
                b'A' => b'B',
                b'-' | b'\n' | b' ' | b'=' => continue,
                c => c ^ 0x01,
            };
            let Ok(t) = String::from_utf8(t) else {
                continue;
            };
            let mut b = bundle.clone();
            let slot = path.iter().fold(&mut b, |v, k| &mut v[*k]);
            *slot = match &original {
                serde_json::Value::String(_) => serde_json::Value::String(t),
                _ => match t.parse::<u64>() {
                    Ok(n) => serde_json::json!(n),
                    Err(_) => continue,
                },
            };
            check(
                serde_json::to_vec(&b).unwrap(),
                format!("bundle {} char {i}", path.join(".")),
            )
            .await;
        }
    }
    assert!(tried > 500, "{tried} variants tried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_ml_dsa_44_and_87() {
    let e = token(Backend::Kryoptic).await;
    for (set, label) in [(MlDsaSet::P44, "k44"), (MlDsaSet::P87, "k87")] {
        let (_, files, r) = e
            .new_key_signs_all_formats(KeySpec::MlDsa { set }, label, &[333, 5000], false)
            .await;
        check_all_formats(&e, &r, &files, Some("ml-dsa")).await;
    }
}

/// SLH-DSA, one parameter set per CMS digest of RFC 9814 (SHA-256, SHAKE128, SHA-512,
/// SHAKE256), on Kryoptic (Luna 7.9, and so lunasim, offers no SLH-DSA): CMS, raw and
/// bundle checked by the `slh-dsa` Python package (FIPS 205, pure Python) over the file and
/// over the CMS signed attributes, by OpenSSL 3.5's `cms -verify` and `pkeyutl -verify`,
/// and by the console's verifier; all of them refuse the files once changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_slh_dsa_in_every_format_with_outside_verifiers() {
    let e = token(Backend::Kryoptic).await;
    for (set, label, digest) in [
        (
            SlhDsaSet::Sha2_128s,
            "slh_sha2_128s",
            "2.16.840.1.101.3.4.2.1",
        ),
        (
            SlhDsaSet::Shake128f,
            "slh_shake_128f",
            "2.16.840.1.101.3.4.2.11",
        ),
        (
            SlhDsaSet::Sha2_256f,
            "slh_sha2_256f",
            "2.16.840.1.101.3.4.2.3",
        ),
        (
            SlhDsaSet::Shake192f,
            "slh_shake_192f",
            "2.16.840.1.101.3.4.2.12",
        ),
    ] {
        let (_, files, r) = e
            .new_key_signs_all_formats(KeySpec::SlhDsa { set }, label, &[1, 70_000], false)
            .await;
        for i in 0..files.len() {
            let p7s = std::fs::read(out(&r, i, "cms")).unwrap();
            let (sig_oid, digest_oid) = cms_signer_algorithms(&p7s);
            assert_eq!(
                sig_oid,
                hsm::pubkey::slh_dsa_oid(set).to_string(),
                "{label}"
            );
            assert_eq!(digest_oid, digest, "{label}: RFC 9814's digest");
        }
        check_all_formats(&e, &r, &files, Some("slh-dsa")).await;
    }
}

/// The one SignerInfo's signature and digest algorithm OIDs.
fn cms_signer_algorithms(p7s: &[u8]) -> (String, String) {
    use cms::content_info::ContentInfo;
    use cms::signed_data::SignedData;
    use der::{Decode, Encode};
    let ci = ContentInfo::from_der(p7s).unwrap();
    let sd = SignedData::from_der(&ci.content.to_der().unwrap()).unwrap();
    let si = sd.signer_infos.0.get(0).unwrap();
    (
        si.signature_algorithm.oid.to_string(),
        si.digest_alg.oid.to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_inputs_are_refused_by_name_and_nothing_is_half_written() {
    let e = builtin().await;
    let key = e
        .key(KeySpec::Ec { curve: Curve::P256 }, "bad_inputs")
        .await;
    let d = e.dir.path().join("bad");
    std::fs::create_dir_all(d.join("folder")).unwrap();
    let good = d.join("good.bin");
    std::fs::write(&good, b"a release").unwrap();
    let empty = d.join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let fifo = d.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let dangling = d.join("dangling");
    std::os::unix::fs::symlink(d.join("nowhere"), &dangling).unwrap();
    let taken = d.join("taken.bin");
    std::fs::write(&taken, b"another release").unwrap();
    std::fs::write(d.join("taken.bin.p7s"), b"an older signature").unwrap();
    let files = [
        good.clone(),
        d.join("folder"),
        empty,
        fifo,
        PathBuf::from("/dev/null"),
        dangling,
        good.clone(),
        taken.clone(),
    ];
    // Stop: the bad inputs are found before anything is signed.
    let r = e
        .sign(
            &key,
            &files,
            &[SignFormat::Cms, SignFormat::Raw],
            false,
            OnError::Stop,
            None,
        )
        .await;
    assert!(r.stopped && r.signatures_made == 0);
    assert!(!PathBuf::from(format!("{}.p7s", good.display())).exists());
    // Continue: the good file is signed; each other one says what is wrong.
    let r = e
        .sign(
            &key,
            &files,
            &[SignFormat::Cms, SignFormat::Raw],
            false,
            OnError::Continue,
            None,
        )
        .await;
    let msg = |i: usize| {
        r.files[i]
            .error
            .as_ref()
            .map(|e| e.message.clone())
            .unwrap_or_default()
    };
    assert!(
        r.files[0].error.is_none() && r.files[0].outputs.len() == 2,
        "{:?}",
        r.files[0]
    );
    assert!(msg(1).contains("folder"), "{}", msg(1));
    assert!(msg(2).contains("empty"), "{}", msg(2));
    assert!(msg(3).contains("FIFO"), "{}", msg(3));
    assert!(msg(4).contains("device"), "{}", msg(4));
    assert!(msg(5).contains("symbolic link"), "{}", msg(5));
    assert!(msg(6).contains("twice"), "{}", msg(6));
    assert!(msg(7).contains("already exists"), "{}", msg(7));
    assert_eq!(
        std::fs::read(d.join("taken.bin.p7s")).unwrap(),
        b"an older signature",
        "never overwritten"
    );
    assert!(
        !d.join("taken.bin.sig").exists(),
        "all of a file's outputs or none"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|x| x.ok())
        .filter(|x| x.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let failures =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 100,
                action: Some("sign".into()),
                status: Some("failure".into()),
                ..Default::default()
            })
            .await
            .unwrap();
    assert!(
        failures
            .iter()
            .any(|r| r.event.resource_id.as_deref() == Some("taken.bin")),
        "the refusal is in the trail"
    );
}

/// CMS signs a file of any size; raw ML-DSA beyond what the token takes in parts is refused
/// naming CMS where the token has no external μ (lunasim as a Luna before firmware 7.9.0),
/// and nothing of the set is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_files_go_through_cms_and_whole_message_formats_say_why_not() {
    let e = builtin_with(Some("7.8.4")).await;
    let key = e.key(KeySpec::MlDsa { set: MlDsaSet::P65 }, "large").await;
    let big = e.sparse("large/image.iso", signing::MAX_WHOLE_MESSAGE + 4096);
    let r = e
        .sign(
            &key,
            std::slice::from_ref(&big),
            &[SignFormat::Cms],
            false,
            OnError::Continue,
            None,
        )
        .await;
    assert!(r.files[0].error.is_none(), "{:?}", r.files[0].error);
    assert!(py(&[Path::new("cms"), &big, &out(&r, 0, "cms")]).0);
    std::fs::remove_file(out(&r, 0, "cms")).unwrap();
    let r = e
        .sign(
            &key,
            std::slice::from_ref(&big),
            &[SignFormat::Cms, SignFormat::Raw],
            false,
            OnError::Continue,
            None,
        )
        .await;
    let err = r.files[0]
        .error
        .as_ref()
        .expect("raw ML-DSA over 1 MiB is refused");
    assert!(err.message.contains("CMS"), "{}", err.message);
    assert!(
        !PathBuf::from(format!("{}.p7s", big.display())).exists(),
        "no partial set of outputs"
    );
}

/// Ed25519 beyond 1 MiB: Kryoptic takes PureEdDSA in parts but keeps at most 1 MiB of it
/// (`CKR_TOKEN_RESOURCE_EXCEEDED`), so the raw format refuses a 3 MiB file naming the limit,
/// the token's answer and CMS, and writes nothing of it. The console's verifier reads such a
/// file in parts: a signature OpenSSL made over it verifies, and fails once the file changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_ed25519_over_one_mib_is_refused_and_verified_in_parts() {
    let e = token(Backend::Kryoptic).await;
    let spec = KeySpec::Ec {
        curve: Curve::Ed25519,
    };
    let key = e.key(spec, "big_ed25519").await;
    let files = e.files("big_ed25519", &[3 << 20]);
    let r = e
        .sign(
            &key,
            &files,
            &[SignFormat::Raw],
            false,
            OnError::Continue,
            None,
        )
        .await;
    let err = r.files[0].error.as_ref().expect("refused");
    assert!(
        err.message.contains("at most 1 MiB")
            && err.message.contains("CKR_TOKEN_RESOURCE_EXCEEDED")
            && err.message.contains("CMS"),
        "{}",
        err.message
    );
    assert!(!PathBuf::from(format!("{}.sig", files[0].display())).exists());
    let d = e.dir.path();
    let (k, pk, sig) = (d.join("ed.pem"), d.join("ed.pub.pem"), d.join("big.sig"));
    for args in [
        vec!["genpkey", "-algorithm", "ed25519", "-out", s(&k)],
        vec!["pkey", "-in", s(&k), "-pubout", "-out", s(&pk)],
        vec![
            "pkeyutl",
            "-sign",
            "-inkey",
            s(&k),
            "-rawin",
            "-in",
            s(&files[0]),
            "-out",
            s(&sig),
        ],
    ] {
        let (ok, msg) = openssl(&args);
        assert!(ok, "openssl {args:?}: {msg}");
    }
    let v =
        e.c.signing()
            .verify_signature(s(&files[0]), s(&sig), Some(s(&pk)), None)
            .await
            .unwrap();
    assert!(v.valid, "{}", v.detail);
    let mut bytes = std::fs::read(&files[0]).unwrap();
    bytes[2 << 20] ^= 1;
    std::fs::write(&files[0], &bytes).unwrap();
    let v =
        e.c.signing()
            .verify_signature(s(&files[0]), s(&sig), Some(s(&pk)), None)
            .await
            .unwrap();
    assert!(!v.valid, "a changed 3 MiB file");
}

/// Where the token does not take PureEdDSA in parts (SoftHSM2), a file over 1 MiB is refused
/// in the raw format with the limit and CMS named, and nothing of it is written; CMS signs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_ed25519_over_one_mib_names_the_limit_and_cms() {
    let e = token(Backend::SoftHsm).await;
    let spec = KeySpec::Ec {
        curve: Curve::Ed25519,
    };
    let key = e.key(spec, "big_ed25519").await;
    let files = e.files("big_ed25519", &[(1 << 20) + 1]);
    let r = e
        .sign(
            &key,
            &files,
            &[SignFormat::Cms, SignFormat::Raw],
            false,
            OnError::Continue,
            None,
        )
        .await;
    let err = r.files[0].error.as_ref().expect("refused in parts");
    assert!(
        err.message.contains("1 MiB") && err.message.contains("CMS"),
        "{}",
        err.message
    );
    assert!(r.files[0].outputs.is_empty(), "{:?}", r.files[0].outputs);
    assert!(!PathBuf::from(format!("{}.sig", files[0].display())).exists());
    assert!(!PathBuf::from(format!("{}.p7s", files[0].display())).exists());
    let r = e
        .sign(&key, &files, &[SignFormat::Cms], false, OnError::Stop, None)
        .await;
    assert!(r.files[0].error.is_none(), "{:?}", r.files[0].error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hsm_failing_mid_batch_fails_one_file_and_the_batch_goes_on_or_stops() {
    let e = builtin().await;
    let key = e.key(KeySpec::Ec { curve: Curve::P256 }, "mid_batch").await;
    let p = e.c.partition_ref(&e.pid).await.unwrap();
    let files = e.files("mid", &[10, 20, 30]);
    // A fault the pool cannot outlast: one more than its recoveries per call (one fault it
    // recovers from by itself; tests/recovery.rs).
    let lasting = format!(
        r#"{{"op":"fail","function":"C_Sign","rv":"CKR_DEVICE_REMOVED","count":{}}}"#,
        hsm::PoolConfig::default().recovery_budget + 1
    );
    p.module.module.sim_control(&lasting).unwrap();
    let r = e
        .sign(
            &key,
            &files,
            &[SignFormat::Raw],
            false,
            OnError::Continue,
            None,
        )
        .await;
    assert!(
        r.files[0].error.as_ref().map(|e| e.code) == Some(ErrorCode::HsmDisconnected),
        "{:?}",
        r.files[0]
    );
    assert!(
        r.files[1].error.is_none() && r.files[2].error.is_none(),
        "{:?}",
        r.files
    );
    let files = e.files("mid2", &[10, 20, 30]);
    p.module.module.sim_control(&lasting).unwrap();
    let r = e
        .sign(&key, &files, &[SignFormat::Raw], false, OnError::Stop, None)
        .await;
    assert!(r.stopped);
    assert!(
        r.files.iter().all(|f| f.outputs.is_empty()),
        "{:?}",
        r.files
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_and_requests_parse_and_verify_with_openssl() {
    let e = token(Backend::SoftHsm).await;
    let key = e.key(KeySpec::Ec { curve: Curve::P256 }, "cert_p256").await;
    let c =
        e.c.signing()
            .issue_certificate(&e.pid, key.1, "CN=Release signing,O=Example", 365, true)
            .await
            .unwrap();
    let cert = e.dir.path().join("cert.pem");
    std::fs::write(&cert, &c.pem).unwrap();
    let (ok, text) = openssl(&[
        "x509",
        "-in",
        s(&cert),
        "-noout",
        "-subject",
        "-ext",
        "keyUsage,basicConstraints",
    ]);
    assert!(
        ok && text.contains("Release signing") && text.contains("Digital Signature"),
        "{text}"
    );
    let (ok, text) = openssl(&["verify", "-CAfile", s(&cert), "-check_ss_sig", s(&cert)]);
    assert!(ok, "self-signature: {text}");
    let csr =
        e.c.signing()
            .certificate_request(&e.pid, key.1, "CN=Release signing")
            .await
            .unwrap();
    let req = e.dir.path().join("req.pem");
    std::fs::write(&req, csr).unwrap();
    let (ok, text) = openssl(&["req", "-in", s(&req), "-noout", "-verify"]);
    assert!(ok, "{text}");
    assert!(e
        .c
        .signing()
        .signing_keys(&e.pid)
        .await
        .unwrap()
        .iter()
        .any(|k| k.handle == key.1 && k.has_certificate));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_10_gib_artifact_streams_through_cms_without_being_read_into_memory() {
    let e = builtin().await;
    let key = e.key(KeySpec::Ec { curve: Curve::P256 }, "huge").await;
    let big = e.sparse("huge/disk-image.raw", 10 << 30);
    let rss_before = rss_kib();
    let r = e
        .sign(
            &key,
            std::slice::from_ref(&big),
            &[SignFormat::Cms],
            false,
            OnError::Stop,
            None,
        )
        .await;
    assert!(r.files[0].error.is_none(), "{:?}", r.files[0].error);
    assert!(
        rss_kib() < rss_before + 256 * 1024,
        "hashing streams: peak resident memory grew by less than 256 MiB"
    );
    assert!(
        py(&[Path::new("cms"), &big, &out(&r, 0, "cms")]).0,
        "outside verifier on the 10 GiB file"
    );
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The `sign` audit records of a file, newest first, with their metadata.
/// The `sign` outcome records of the file `name`.
async fn sign_records(e: &Env, name: &str) -> Vec<serde_json::Value> {
    records_of(e, "sign", name).await
}

/// The records of `action` (exactly) on the file `name`.
async fn records_of(e: &Env, action: &str, name: &str) -> Vec<serde_json::Value> {
    e.c.trail()
        .audit_records(audit::store::Query {
            limit: 100,
            action: Some(action.into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.event.action == action && r.event.resource_id.as_deref() == Some(name))
        .map(|r| serde_json::from_str(&r.event.metadata).unwrap())
        .collect()
}

fn bundle_json(r: &SignReport, i: usize) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out(r, i, "bundle")).unwrap()).unwrap()
}

/// HSS files beyond the token's single-part limit (48,108 bytes) — 100 kB, 10 MB and 1 GB
/// (sparse) — go to the token in parts; the raw signature and the bundle verify with
/// hsslms over the file itself; the bundle and the audit record say which way they went.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hss_signs_files_of_any_size_in_parts() {
    let e = builtin().await;
    let params = HssParams::new(vec![(LmsType::H5, LmotsType::W4); 2]).unwrap();
    let key = e.key(KeySpec::Hss { params }, "fw_hss_large").await;
    let mut files = e.files("hss-any", &[40_000, 100_000, 10_000_000]);
    files.push(e.sparse("hss-any/disk.img", 1 << 30));
    let r = e
        .sign(
            &key,
            &files,
            &[SignFormat::Raw, SignFormat::Bundle],
            false,
            OnError::Stop,
            None,
        )
        .await;
    assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
    assert_eq!(
        r.signatures_made, 4,
        "raw and bundle share one signature per file"
    );
    let pk = pubkey(&r);
    for (i, f) in files.iter().enumerate() {
        let (sig, bundle) = (out(&r, i, "raw"), out(&r, i, "bundle"));
        let (ok, why) = py(&[Path::new("raw"), f, &sig, &pk]);
        assert!(ok, "hsslms, raw, file {i}: {why}");
        let (ok, why) = py(&[Path::new("bundle"), f, &bundle]);
        assert!(ok, "hsslms, bundle, file {i}: {why}");
        let way = if i == 0 { "single-part" } else { "multi-part" };
        assert_eq!(bundle_json(&r, i)["signing_path"], way, "file {i}");
        let name = f.file_name().unwrap().to_str().unwrap();
        assert_eq!(
            sign_records(&e, name).await[0]["signing_path"],
            way,
            "file {i}"
        );
        if i == 3 {
            continue; // the signing step checked it already; 1 GB read once less
        }
        // The console's own check reads the file again, whatever its size.
        let v =
            e.c.signing()
                .verify_signature(s(f), s(&sig), Some(s(&pk)), None)
                .await;
        assert!(v.as_ref().is_ok_and(|v| v.valid), "file {i}: {v:?}");
        let v =
            e.c.signing()
                .verify_signature(s(f), s(&bundle), None, None)
                .await;
        assert!(v.as_ref().is_ok_and(|v| v.valid), "file {i}, bundle: {v:?}");
    }
    // One byte changed in the middle of the 10 MB file: no verifier accepts it.
    let mut data = std::fs::read(&files[2]).unwrap();
    data[5_000_000] ^= 1;
    std::fs::write(&files[2], &data).unwrap();
    assert!(!py(&[Path::new("raw"), &files[2], &out(&r, 2, "raw"), &pk]).0);
    assert!(!py(&[Path::new("bundle"), &files[2], &out(&r, 2, "bundle")]).0);
}

/// ML-DSA files above 64 KiB go to the token in parts where it takes them (Kryoptic does
/// up to 1 MiB); a larger one it refuses in parts, and with no external-μ mechanism on the
/// token (lunasim as a Luna before firmware 7.9.0) the console refuses it with the reason,
/// signing nothing and writing nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ml_dsa_streams_where_the_token_takes_it_and_says_why_not() {
    let e = builtin_with(Some("7.8.4")).await;
    let key = e
        .key(KeySpec::MlDsa { set: MlDsaSet::P65 }, "rel_mldsa_parts")
        .await;
    let files = e.files("mldsa-parts", &[100_000, 3_000_000]);
    let r = e
        .sign(
            &key,
            &files,
            &[SignFormat::Raw, SignFormat::Bundle],
            false,
            OnError::Continue,
            Some("release"),
        )
        .await;
    assert!(r.files[0].error.is_none(), "{:?}", r.files[0]);
    let pk = pubkey(&r);
    let ctx = hex::encode("release");
    let (ok, why) = py(&[
        Path::new("raw"),
        &files[0],
        &out(&r, 0, "raw"),
        &pk,
        Path::new(&ctx),
    ]);
    assert!(ok, "pyca, raw: {why}");
    assert!(py(&[Path::new("bundle"), &files[0], &out(&r, 0, "bundle")]).0);
    assert_eq!(bundle_json(&r, 0)["signing_path"], "multi-part");
    assert_eq!(
        sign_records(&e, "artifact-0.bin").await[0]["signing_path"],
        "multi-part"
    );
    let err = r.files[1]
        .error
        .as_ref()
        .expect("3 MB refused on this token");
    assert!(
        err.message.contains("multi-part") && err.message.contains("external-μ"),
        "{}",
        err.message
    );
    assert!(r.files[1].outputs.is_empty());
    assert!(!PathBuf::from(format!("{}.sig", files[1].display())).exists());
    let failed = sign_records(&e, "artifact-1.bin").await;
    assert!(failed[0]["error"].as_str().unwrap().contains("external-μ"));
    // The session that saw the refusal signs the next file as usual.
    let again = e
        .sign(
            &key,
            &e.files("mldsa-after", &[200_000]),
            &[SignFormat::Raw],
            false,
            OnError::Stop,
            None,
        )
        .await;
    assert!(again.files[0].error.is_none(), "{:?}", again.files[0]);
}

/// On the built-in partition (lunasim as a Luna with firmware 7.9.1), an ML-DSA file the
/// token refuses in parts goes through Luna's external μ: the raw signature and the bundle
/// verify with pyca over the file, with and without a context; the bundle and the audit
/// record say `external-mu`. (The 100 MB and 1 GiB files are `hsmc`'s tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ml_dsa_beyond_the_tokens_parts_goes_through_external_mu() {
    let e = builtin().await;
    let key = e
        .key(KeySpec::MlDsa { set: MlDsaSet::P65 }, "rel_mldsa_mu")
        .await;
    for (sub, context) in [("mu-plain", None), ("mu-ctx", Some("release"))] {
        let files = e.files(sub, &[3_000_000]);
        let r = e
            .sign(
                &key,
                &files,
                &[SignFormat::Raw, SignFormat::Bundle],
                false,
                OnError::Stop,
                context,
            )
            .await;
        assert!(r.files[0].error.is_none(), "{:?}", r.files[0]);
        let pk = pubkey(&r);
        let ctx = hex::encode(context.unwrap_or_default());
        let (raw, ctx_arg) = (out(&r, 0, "raw"), PathBuf::from(&ctx));
        let mut raw_args = vec![Path::new("raw"), &files[0], &raw, &pk];
        if context.is_some() {
            raw_args.push(&ctx_arg);
        }
        let (ok, why) = py(&raw_args);
        assert!(ok, "pyca, raw, {sub}: {why}");
        let (ok, why) = py(&[Path::new("bundle"), &files[0], &out(&r, 0, "bundle")]);
        assert!(ok, "pyca, bundle, {sub}: {why}");
        assert_eq!(bundle_json(&r, 0)["signing_path"], "external-mu");
        let records = sign_records(&e, "artifact-0.bin").await;
        assert_eq!(records[0]["signing_path"], "external-mu", "{records:?}");
    }
}

/// The sign requests of a batch with a progress callback of the test's own.
async fn sign_watched(
    e: &Env,
    key: &(String, u64),
    files: &[PathBuf],
    formats: &[SignFormat],
    manifest: bool,
    progress: Arc<dyn Fn(console::sign::SignProgress) + Send + Sync>,
) -> SignReport {
    let req = SignRequest {
        key: key.0.clone(),
        also_keys: vec![],
        files: files.iter().map(|p| p.display().to_string()).collect(),
        formats: formats.to_vec(),
        manifest,
        out_dir: None,
        context: None,
        on_error: OnError::Continue,
        confirm_hss: true,
        timestamp: None,
        kit: None,
        chain: vec![],
        context_login: None,
    };
    e.c.signing()
        .sign_files(&e.pid, req, progress, Arc::new(AtomicBool::new(false)))
        .await
        .unwrap()
}

fn outputs_of(f: &Path) -> Vec<PathBuf> {
    ["p7s", "sig", "sig.json", "asc", "minisig"]
        .iter()
        .map(|s| PathBuf::from(format!("{}.{s}", f.display())))
        .filter(|p| p.exists())
        .collect()
}

/// A file rewritten, truncated or replaced by rename after the batch hashed it — right as
/// the HSM is about to sign it — is refused by name with what changed, before the HSM is
/// asked: no output is written and no HSS one-time key is spent (the token's counter
/// drops by exactly the signatures of the file left alone). The trail records each
/// refusal, and the manifest is not signed over a digest the disk no longer has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_after_hashing_is_refused_before_the_hsm_signs_it() {
    let e = builtin().await;
    let params = HssParams::new(vec![(LmsType::H5, LmotsType::W8)]).unwrap();
    let key = e.key(KeySpec::Hss { params }, "changed_hss").await;
    let remaining = || async {
        e.c.signing()
            .signing_keys(&e.pid)
            .await
            .unwrap()
            .into_iter()
            .find(|k| k.handle == key.1)
            .unwrap()
            .hss_remaining
            .unwrap()
    };
    let before = remaining().await;
    let files = e.files("changed", &[100, 200, 300, 400]);
    let targets = files.clone();
    let changed = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = changed.clone();
    let progress = Arc::new(move |p: console::sign::SignProgress| {
        let console::sign::SignProgress::Signing { index } = p else {
            return;
        };
        let f = &targets[index];
        if seen.lock().unwrap().contains(&index) {
            return;
        }
        seen.lock().unwrap().push(index);
        match index {
            // Rewritten in place, same size.
            0 => std::fs::write(f, vec![b'x'; 100]).unwrap(),
            // Truncated.
            1 => std::fs::OpenOptions::new()
                .write(true)
                .open(f)
                .unwrap()
                .set_len(50)
                .unwrap(),
            // Replaced by rename, as an editor or `cp` to a temporary name does.
            2 => {
                let tmp = f.with_extension("new");
                std::fs::write(&tmp, vec![b'y'; 300]).unwrap();
                std::fs::rename(&tmp, f).unwrap();
            }
            _ => {}
        }
    });
    let r = sign_watched(
        &e,
        &key,
        &files,
        &[SignFormat::Raw, SignFormat::Bundle],
        false,
        progress,
    )
    .await;
    assert_eq!(
        changed.lock().unwrap().len(),
        4,
        "every file reached signing"
    );
    for (i, what) in [
        (0, "was written to"),
        (1, "size went from 200 to 50 bytes"),
        (2, "another file was put in its place"),
    ] {
        let err = r.files[i]
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("file {i} was signed although it changed: {:?}", r.files[i]));
        assert_eq!(err.code, ErrorCode::FileChanged, "{err:?}");
        assert!(
            err.message.contains(&format!("artifact-{i}.bin"))
                && err.message.contains(what)
                && err.message.contains("no signature was spent"),
            "{}",
            err.message
        );
        assert!(
            outputs_of(&files[i]).is_empty(),
            "{:?}",
            outputs_of(&files[i])
        );
        let recs = sign_records(&e, &format!("artifact-{i}.bin")).await;
        assert_eq!(recs.len(), 1, "{recs:?}");
        assert!(
            recs[0]["error"].as_str().unwrap_or("").contains(what),
            "{recs:?}"
        );
        // A stateful key's signing is a change: requested first, and nothing spent.
        let requests = records_of(&e, "sign.request", &format!("artifact-{i}.bin")).await;
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(recs[0]["signatures"], 0, "{recs:?}");
    }
    assert!(r.files[3].error.is_none(), "{:?}", r.files[3]);
    assert_eq!(outputs_of(&files[3]).len(), 2);
    // Only the untouched file cost signatures (raw and bundle share the token's one).
    let spent = before - remaining().await;
    assert_eq!(spent, r.signatures_made, "{r:?}");
    assert!(spent > 0, "{spent}");
    check_untouched_verifies(&files[3], &r, 3);

    // The manifest lists the digests hashed at the start: a signed file changed before
    // the manifest is signed leaves it unsigned, by name.
    let key = e
        .key(KeySpec::Ec { curve: Curve::P256 }, "changed_p256")
        .await;
    let files = e.files("manifest", &[10, 20]);
    let first = files[0].clone();
    let progress = Arc::new(move |p: console::sign::SignProgress| {
        if let console::sign::SignProgress::Done { index: 1 } = p {
            std::fs::write(&first, b"changed after its signature was written").unwrap();
        }
    });
    let r = sign_watched(&e, &key, &files, &[SignFormat::Raw], true, progress).await;
    assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
    let err = r.manifest_error.as_ref().expect("the manifest is refused");
    assert_eq!(err.code, ErrorCode::FileChanged, "{err:?}");
    assert!(err.message.contains("artifact-0.bin"), "{}", err.message);
    assert!(
        r.manifest.iter().all(|o| !o.path.contains("SHA256SUMS")),
        "{:?}",
        r.manifest
    );
}

/// The untouched file's raw HSS signature verifies with hsslms over the file.
fn check_untouched_verifies(f: &Path, r: &SignReport, i: usize) {
    let sig = out(r, i, "raw");
    let pubkey = pubkey(r);
    let (ok, log) = py(&[Path::new("raw"), f, &sig, &pubkey]);
    assert!(ok, "{log}");
}

/// A file changed while the HSM signs it (lunasim holds `C_Sign` back 1.5 s) is caught when
/// the outputs are written: they are removed again, the refusal names the file and what
/// changed, and the next file of the batch is signed as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_while_the_hsm_signs_it_keeps_no_signature() {
    let e = builtin().await;
    let key = e.key(KeySpec::Ec { curve: Curve::P256 }, "slow_p256").await;
    let p = e.c.partition_ref(&e.pid).await.unwrap();
    p.module
        .module
        .sim_control(r#"{"op":"slow","function":"C_Sign","ms":1500}"#)
        .unwrap();
    let files = e.files("during", &[1000, 2000]);
    let target = files[0].clone();
    let progress = Arc::new(move |p: console::sign::SignProgress| {
        if let console::sign::SignProgress::Signing { index: 0 } = p {
            let f = target.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                use std::io::Write;
                let mut w = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
                w.write_all(b" and a line more").unwrap();
            });
        }
    });
    let r = sign_watched(
        &e,
        &key,
        &files,
        &[SignFormat::Cms, SignFormat::Raw, SignFormat::Bundle],
        false,
        progress,
    )
    .await;
    p.module.module.sim_control(r#"{"op":"clear"}"#).unwrap();
    let err = r.files[0]
        .error
        .as_ref()
        .expect("the changed file is refused");
    assert_eq!(err.code, ErrorCode::FileChanged, "{err:?}");
    assert!(
        err.message.contains("artifact-0.bin")
            && err.message.contains("changed while it was being signed")
            && err.message.contains("size went from 1000 to 1016 bytes"),
        "{}",
        err.message
    );
    assert!(
        outputs_of(&files[0]).is_empty(),
        "{:?}",
        outputs_of(&files[0])
    );
    assert!(r.files[1].error.is_none(), "{:?}", r.files[1]);
    assert_eq!(outputs_of(&files[1]).len(), 3);
    let (ok, log) = openssl(&[
        "cms",
        "-verify",
        "-binary",
        "-inform",
        "DER",
        "-noverify",
        "-in",
        s(&out(&r, 1, "cms")),
        "-content",
        s(&files[1]),
        "-out",
        "/dev/null",
    ]);
    assert!(ok, "{log}");
}

/// A key succession statement from an Ed25519 key to an ML-DSA-65 key: written once, signed
/// by both keys (each raw signature named for its key and checked by the outside
/// verifiers, pyca and dilithium-py), checked by the console with and without the old key
/// pinned, and refused when changed, pinned to another key, or asked for badly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_succession_statement_is_signed_by_both_keys() {
    use console::sign::SuccessionRequest;
    let e = builtin().await;
    e.key(
        KeySpec::Ec {
            curve: Curve::Ed25519,
        },
        "rel_ed25519",
    )
    .await;
    e.key(KeySpec::MlDsa { set: MlDsaSet::P65 }, "rel_mldsa65")
        .await;
    let dir = e.dir.path().join("succession");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("succession.json");
    let req = |old: &str, new: &str, from: Option<&str>, until: Option<&str>| SuccessionRequest {
        old_key: format!("label:{old}"),
        new_key: format!("label:{new}"),
        out: out.display().to_string(),
        new_key_signs_from: from.map(String::from),
        transition_ends: until.map(String::from),
        confirm_hss: false,
    };
    let made =
        e.c.signing()
            .key_succession(
                &e.pid,
                req(
                    "rel_ed25519",
                    "rel_mldsa65",
                    Some("2027-01-01"),
                    Some("2027-06-30"),
                ),
            )
            .await
            .unwrap();
    let st: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(st["format"], "hsm-console/key-succession", "{st}");
    assert_eq!(
        (
            st["old"]["algorithm"].as_str(),
            st["new"]["algorithm"].as_str()
        ),
        (Some("Ed25519"), Some("ML-DSA-65")),
        "{st}"
    );
    assert_eq!(st["new_key_signs_from"], "2027-01-01");
    assert_eq!(st["transition_ends"], "2027-06-30");
    let sigs = [
        dir.join("succession.json.rel_ed25519.sig"),
        dir.join("succession.json.rel_mldsa65.sig"),
    ];
    assert_eq!(
        made.signatures,
        sigs.iter().map(|p| s(p).to_string()).collect::<Vec<_>>()
    );
    // Outside lineages: each raw signature over the statement's bytes.
    for (sig, label) in sigs.iter().zip(["rel_ed25519", "rel_mldsa65"]) {
        let pem = dir.join(format!("{label}.pub.pem"));
        let (ok, why) = py(&[Path::new("raw"), &out, sig, &pem]);
        assert!(ok, "{label}: {why}");
    }
    // The console's check, pinned to the old key the user trusts.
    let old_pem = dir.join("rel_ed25519.pub.pem");
    let check = |pin: Option<PathBuf>| {
        let (c, f) = (e.c.clone(), s(&out).to_string());
        async move {
            let pin = pin.map(|p| s(&p).to_string());
            c.signing()
                .verify_succession(&f, pin.as_deref())
                .await
                .unwrap()
                .expect("a statement")
        }
    };
    let r = check(Some(old_pem.clone())).await;
    assert!(r.valid, "{r:?}");
    assert!(
        r.entries.iter().all(|x| x.ok) && r.entries.len() == 2,
        "{r:?}"
    );
    assert_eq!(
        r.detail_text.unwrap().key,
        "verify.details.succession_ok_pinned"
    );
    let unpinned = check(None).await;
    assert!(unpinned.valid);
    assert_eq!(
        unpinned.detail_text.unwrap().key,
        "verify.details.succession_ok_unpinned"
    );
    // Pinned to another key (the new one): not the key the user trusts.
    let r = check(Some(dir.join("rel_mldsa65.pub.pem"))).await;
    assert!(!r.valid);
    assert_eq!(
        r.detail_text.unwrap().key,
        "verify.details.succession_not_your_key"
    );
    // A statement changed after signing: both signatures fail, outside and here.
    let original = std::fs::read(&out).unwrap();
    std::fs::write(
        &out,
        String::from_utf8(original.clone())
            .unwrap()
            .replace("2027-01-01", "2026-01-01"),
    )
    .unwrap();
    let r = check(Some(old_pem.clone())).await;
    assert!(!r.valid && r.entries.iter().all(|x| !x.ok), "{r:?}");
    assert!(!py(&[Path::new("raw"), &out, &sigs[0], &old_pem]).0);
    std::fs::write(&out, &original).unwrap();
    // Refused before anything is written: the statement exists; the same key twice; a bad
    // date; a transition that ends before it starts.
    let bad = [
        req("rel_ed25519", "rel_mldsa65", None, None),
        req("rel_ed25519", "rel_ed25519", None, None),
        req("rel_ed25519", "rel_mldsa65", Some("2027-02-30"), None),
        req(
            "rel_ed25519",
            "rel_mldsa65",
            Some("2027-03-01"),
            Some("2027-02-01"),
        ),
    ];
    for (i, r) in bad.into_iter().enumerate() {
        if i > 0 {
            std::fs::remove_file(&out).unwrap();
        }
        let err = e.c.signing().key_succession(&e.pid, r).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{i}: {err:?}");
        if i > 0 {
            assert!(!out.exists(), "{i}: nothing written");
            std::fs::write(&out, &original).unwrap();
        }
    }
    // Not a statement: the console says so (`None`), for hsmc to ask for --sig.
    assert!(e
        .c
        .signing()
        .verify_succession(s(&old_pem), None)
        .await
        .unwrap()
        .is_none());
}

/// RFC 9858's SHA-256/192 HSS keys through the console: one M24 level, and M24 over M32
/// (RFC 8554 gives each level its own types). Every HSS format verifies with hsslms and the
/// console's verifier and fails once the file changes; the counter drops by exactly the
/// signatures made, as with M32.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hss_sha256_192_keys_sign_every_format_alone_and_over_m32() {
    let e = builtin().await;
    for (name, levels) in [
        ("m24", vec![(LmsType::M24H5, LmotsType::N24W8)]),
        (
            "m24_over_m32",
            vec![
                (LmsType::M24H5, LmotsType::N24W4),
                (LmsType::H5, LmotsType::W4),
            ],
        ),
    ] {
        let params = HssParams::new(levels).unwrap();
        let capacity = params.capacity() as u64;
        let key = e
            .key(KeySpec::Hss { params }, &format!("fw_hss_{name}"))
            .await;
        let remaining = || async {
            e.c.signing()
                .signing_keys(&e.pid)
                .await
                .unwrap()
                .into_iter()
                .find(|k| k.handle == key.1)
                .unwrap()
                .hss_remaining
        };
        assert_eq!(remaining().await, Some(capacity), "{name}");
        let files = e.files(name, &[10, 70_000]);
        let r = e.sign(&key, &files, &ALL, true, OnError::Stop, None).await;
        assert!(r.signatures_made >= 5, "{name}: {r:?}");
        assert_eq!(
            r.hss_remaining_after,
            Some(capacity - r.signatures_made),
            "{name}: the counter dropped by exactly the signatures made"
        );
        assert_eq!(remaining().await, Some(capacity - r.signatures_made));
        check_all_formats(&e, &r, &files, None).await;
    }
}
