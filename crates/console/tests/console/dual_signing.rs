//! Dual signing: one batch signed by a classical and a post-quantum key at once — one
//! `.p7s` with a signer per key, every other output once per key (`FILE.<label>.sig`…),
//! `SHA256SUMS` signed by each key, and a verifier kit holding both keys. Every output is
//! checked by verifiers of other lineages than the console's: pyca/cryptography with
//! asn1crypto and dilithium-py's peers (`tests/interop/verify_release.py`, every CMS
//! signer), Debian's OpenSSL 3.0 (the ECDSA signer, and the raw ECDSA signatures), Sequoia
//! (`sq`) for OpenPGP, and the kit's `verify.sh` (gpg, minisign, ssh-keygen, openssl,
//! sha256sum, `hsmc verify`), which passes and then fails once a file changed. A batch one
//! of whose keys cannot sign is refused before anything is signed or written.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use console::sign::{KitRequest, OnError, OutputKind, SignFormat, SignReport, SignRequest};
use console::ErrorCode;
use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType, MlDsaSet};

use crate::common;
use common::{builtin, Env};

const UID: &str = "Release Signing <release@example.org>";

const EVERY_FORMAT: [SignFormat; 6] = [
    SignFormat::Cms,
    SignFormat::Raw,
    SignFormat::Bundle,
    SignFormat::Openpgp,
    SignFormat::Minisign,
    SignFormat::Sshsig,
];

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn request(keys: &[&str], files: &[PathBuf], formats: &[SignFormat]) -> SignRequest {
    SignRequest {
        key: format!("label:{}", keys[0]),
        also_keys: keys[1..].iter().map(|k| format!("label:{k}")).collect(),
        files: files.iter().map(|p| s(p).to_string()).collect(),
        formats: formats.to_vec(),
        manifest: true,
        out_dir: None,
        context: None,
        on_error: OnError::Stop,
        confirm_hss: true,
        timestamp: None,
        kit: None,
        chain: vec![],
        context_login: None,
    }
}

/// Three artifacts in a folder of their own.
fn artifacts(e: &Env, sub: &str) -> Vec<PathBuf> {
    let d = e.dir.path().join(sub);
    std::fs::create_dir_all(&d).unwrap();
    [1usize, 4096, 70_000]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let p = d.join(format!("app-{i}.bin"));
            std::fs::write(&p, (0..*n).map(|j| (j * 31 + i) as u8).collect::<Vec<u8>>()).unwrap();
            p
        })
        .collect()
}

/// `verify_release.py`: (exit 0, stdout, stderr).
fn py(args: &[&str]) -> (bool, String, String) {
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
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn run(c: &mut Command) -> (bool, String) {
    let o = c.output().unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// The one output of `format` of file `i` that `label` signed.
fn output(r: &SignReport, i: usize, format: OutputKind, label: &str) -> PathBuf {
    let o = r.files[i]
        .outputs
        .iter()
        .find(|o| o.format == format && o.signed_by.iter().any(|l| l == label))
        .unwrap_or_else(|| panic!("no {format} of {label} for file {i}: {:?}", r.files[i]));
    PathBuf::from(&o.path)
}

/// The names of file `i`'s outputs with two keys: one shared `.p7s`, the rest per key; a
/// format a key cannot make is made by the other only.
fn expected_names(file: &Path, labels: [&str; 2], per_key: [&[&str]; 2]) -> BTreeSet<String> {
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let mut want = BTreeSet::from([format!("{name}.p7s")]);
    for (label, suffixes) in labels.iter().zip(per_key) {
        for suffix in suffixes {
            want.insert(format!("{name}.{label}{suffix}"));
        }
    }
    want
}

/// Each CMS signer with pyca/asn1crypto; the console's verifier on the `.p7s` without a
/// pinned key (every signer) and pinned to each key; raw and bundle of each key with pyca.
async fn cms_raw_bundle_verify(e: &Env, r: &SignReport, f: &Path, i: usize, labels: [&str; 2]) {
    let p7s = output(r, i, OutputKind::Cms, labels[0]);
    assert_eq!(
        r.files[i]
            .outputs
            .iter()
            .find(|o| o.format == OutputKind::Cms)
            .unwrap()
            .signed_by,
        labels,
        "one .p7s signed by both"
    );
    let (ok, out, err) = py(&["cms", s(f), s(&p7s)]);
    assert!(ok, "cms {i}: {err}");
    assert_eq!(out.matches("signer ok").count(), 2, "{out}");
    let v =
        e.c.signing()
            .verify_signature(s(f), s(&p7s), None, None)
            .await
            .unwrap();
    assert!(v.valid, "{}", v.detail);
    assert_eq!(v.detail_text.unwrap().key, "verify.details.cms_signers_ok");
    let dir = f.parent().unwrap();
    for label in labels {
        let pem = dir.join(format!("{label}.pub.pem"));
        let v =
            e.c.signing()
                .verify_signature(s(f), s(&p7s), Some(s(&pem)), None)
                .await
                .unwrap();
        assert!(v.valid, "{label}: {}", v.detail);
        let sig = output(r, i, OutputKind::Raw, label);
        let (ok, _, err) = py(&["raw", s(f), s(&sig), s(&pem)]);
        assert!(ok, "raw {label} {i}: {err}");
        let bundle = output(r, i, OutputKind::Bundle, label);
        let (ok, _, err) = py(&["bundle", s(f), s(&bundle)]);
        assert!(ok, "bundle {label} {i}: {err}");
    }
}

/// `SHA256SUMS` once, its raw signature by each key (pyca), `sha256sum -c` in its folder.
fn manifest_signed_by_each(r: &SignReport, dir: &Path, labels: [&str; 2]) {
    let sums = dir.join("SHA256SUMS");
    let manifests: Vec<_> = r
        .manifest
        .iter()
        .filter(|o| o.format == OutputKind::Manifest)
        .collect();
    assert_eq!(manifests.len(), 1, "{:?}", r.manifest);
    for label in labels {
        let sig = dir.join(format!("SHA256SUMS.{label}.sig"));
        assert!(r
            .manifest
            .iter()
            .any(|o| o.path == s(&sig) && o.signed_by == [label]));
        let pem = dir.join(format!("{label}.pub.pem"));
        let (ok, _, err) = py(&["manifest", s(&sums), s(&sig), s(&pem)]);
        assert!(ok, "manifest {label}: {err}");
    }
    let (ok, out) = run(Command::new("sha256sum")
        .args(["-c", "SHA256SUMS"])
        .current_dir(dir));
    assert!(ok, "{out}");
}

/// The kit's `verify.sh`: passes, with every check run; fails naming a file once it changed.
fn kit_passes_then_fails_on_a_change(e: &Env, r: &SignReport, f: &Path) {
    let kit = r
        .kit
        .as_ref()
        .unwrap_or_else(|| panic!("a kit: {:?}", r.kit_error));
    let verify_sh = || {
        let data = e.dir.path().join("hsmc-data");
        Command::new(Path::new(&kit.dir).join("verify.sh"))
            .env("HSMC", testkit::hsmc_binary())
            .env("HSMC_DATA_DIR", data)
            .env_remove("GNUPGHOME")
            .output()
            .unwrap()
    };
    let o = verify_sh();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "verify.sh: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let imports = kit
        .files
        .iter()
        .filter(|f| f.ends_with("openpgp.asc"))
        .count();
    assert_eq!(
        out.lines().filter(|l| l.starts_with("ok ")).count(),
        kit.checks.len() + imports,
        "{out}"
    );
    let mut bytes = std::fs::read(f).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(f, &bytes).unwrap();
    let o = verify_sh();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{out}");
    let name = f.file_name().unwrap().to_string_lossy().into_owned();
    assert!(out.contains(&format!("FAIL  {name}")), "{out}");
    bytes[mid] ^= 1;
    std::fs::write(f, &bytes).unwrap();
}

/// Ed25519 + ML-DSA-65: every format. Ed25519 makes OpenPGP, minisign and SSHSIG too;
/// ML-DSA-65 has none of those forms, and makes the CMS, raw and bundle signatures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ed25519_and_ml_dsa_65_sign_one_batch_in_every_format() {
    let e = builtin().await;
    let labels = ["rel_ed25519", "rel_mldsa65"];
    let ed = KeySpec::Ec {
        curve: Curve::Ed25519,
    };
    e.generate(ed, labels[0]).await;
    e.generate(KeySpec::MlDsa { set: MlDsaSet::P65 }, labels[1])
        .await;
    let files = artifacts(&e, "ed-mldsa");
    let dir = files[0].parent().unwrap().to_path_buf();
    let mut req = request(&labels, &files, &EVERY_FORMAT);
    req.kit = Some(KitRequest {
        dir: s(&dir.join("kit")).into(),
        user_id: Some(UID.into()),
        ..Default::default()
    });
    let r = e.try_sign(req).await.unwrap();
    assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
    assert_eq!(r.keys.len(), 2);
    assert_eq!(r.keys[0].formats, EVERY_FORMAT);
    assert_eq!(
        r.keys[1].formats,
        [SignFormat::Cms, SignFormat::Raw, SignFormat::Bundle]
    );
    assert_eq!(r.keys[1].name_stem.as_deref(), Some(labels[1]));
    // Ed25519: CMS, the raw/bundle signature, OpenPGP, minisign (2), SSHSIG per file; the
    // manifest and its cleartext form; the certificate CMS needs. ML-DSA: CMS, raw/bundle
    // per file, the manifest, the certificate.
    assert_eq!(r.keys[0].signatures_made, 3 * 6 + 2 + 1, "{:?}", r.keys[0]);
    assert_eq!(r.keys[1].signatures_made, 3 * 2 + 1 + 1, "{:?}", r.keys[1]);
    assert_eq!(r.signatures_made, 21 + 8);
    let ed_suffixes: &[&str] = &[".sig", ".sig.json", ".asc", ".minisig", ".sshsig"];
    for (i, f) in files.iter().enumerate() {
        let names: BTreeSet<String> = r.files[i]
            .outputs
            .iter()
            .map(|o| {
                Path::new(&o.path)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(
            names,
            expected_names(f, labels, [ed_suffixes, &[".sig", ".sig.json"]])
        );
        cms_raw_bundle_verify(&e, &r, f, i, labels).await;
        // Sequoia checks the OpenPGP signature with the kit's certificate.
        let cert = dir.join("kit/keys/rel_ed25519/openpgp.asc");
        let asc = output(&r, i, OutputKind::Openpgp, labels[0]);
        let (ok, msg) = run(Command::new("sq").args([
            "verify",
            "--signer-cert",
            s(&cert),
            "--detached",
            s(&asc),
            s(f),
        ]));
        assert!(ok, "sq verify {}: {msg}", asc.display());
    }
    manifest_signed_by_each(&r, &dir, labels);
    assert!(dir.join("SHA256SUMS.rel_ed25519.asc").is_file());
    assert!(!dir.join("SHA256SUMS.rel_mldsa65.asc").exists());
    let kit = r.kit.as_ref().unwrap();
    for f in [
        "keys/rel_ed25519/public.pem",
        "keys/rel_ed25519/certificate.pem",
        "keys/rel_ed25519/openpgp.asc",
        "keys/rel_ed25519/minisign.pub",
        "keys/rel_ed25519/allowed_signers",
        "keys/rel_mldsa65/public.pem",
        "keys/rel_mldsa65/certificate.pem",
    ] {
        assert!(kit.files.iter().any(|k| k == f), "{f} in {:?}", kit.files);
    }
    let tools: BTreeSet<&str> = kit.checks.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(
        tools.into_iter().collect::<Vec<_>>(),
        [
            "gpg",
            "hsmc",
            "minisign",
            "openssl",
            "sha256sum",
            "ssh-keygen"
        ]
    );
    kit_passes_then_fails_on_a_change(&e, &r, &files[1]);
    dual_outputs_fail_on_a_changed_file(&e, &r, &files[2], 2, labels).await;
}

/// One byte of the artifact changed: no signer of the `.p7s`, no raw signature of either
/// key passes the outside verifier or the console's.
async fn dual_outputs_fail_on_a_changed_file(
    e: &Env,
    r: &SignReport,
    f: &Path,
    i: usize,
    labels: [&str; 2],
) {
    let mut bytes = std::fs::read(f).unwrap();
    bytes[0] ^= 1;
    std::fs::write(f, &bytes).unwrap();
    let p7s = output(r, i, OutputKind::Cms, labels[0]);
    assert!(!py(&["cms", s(f), s(&p7s)]).0);
    assert!(
        !e.c.signing()
            .verify_signature(s(f), s(&p7s), None, None)
            .await
            .unwrap()
            .valid
    );
    for label in labels {
        let pem = f.parent().unwrap().join(format!("{label}.pub.pem"));
        let sig = output(r, i, OutputKind::Raw, label);
        assert!(!py(&["raw", s(f), s(&sig), s(&pem)]).0, "{label}");
        let v =
            e.c.signing()
                .verify_signature(s(f), s(&p7s), Some(s(&pem)), None)
                .await
                .unwrap();
        assert!(!v.valid, "{label}");
    }
}

/// ECDSA P-256 + ML-DSA-87: every format each can make. Debian's OpenSSL 3.0 checks the
/// ECDSA signer of the two-signer `.p7s` (cut down to that signer: `openssl cms -verify`
/// checks every signer and knows no ML-DSA — on the whole file it fails) and the raw ECDSA
/// signatures; OpenSSL 3.5 checks both signers of the whole file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecdsa_p256_and_ml_dsa_87_sign_one_batch_and_openssl_checks_each_signer() {
    let e = builtin().await;
    let labels = ["rel_p256", "rel_mldsa87"];
    e.generate(KeySpec::Ec { curve: Curve::P256 }, labels[0])
        .await;
    e.generate(KeySpec::MlDsa { set: MlDsaSet::P87 }, labels[1])
        .await;
    let files = artifacts(&e, "p256-mldsa");
    let dir = files[0].parent().unwrap().to_path_buf();
    let formats = [
        SignFormat::Cms,
        SignFormat::Raw,
        SignFormat::Bundle,
        SignFormat::Openpgp,
        SignFormat::Sshsig,
    ];
    let mut req = request(&labels, &files, &formats);
    req.kit = Some(KitRequest {
        dir: s(&dir.join("kit")).into(),
        user_id: Some(UID.into()),
        ..Default::default()
    });
    let r = e.try_sign(req).await.unwrap();
    assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
    assert_eq!(r.keys[0].formats, formats);
    let p256_suffixes: &[&str] = &[".sig", ".sig.json", ".asc", ".sshsig"];
    for (i, f) in files.iter().enumerate() {
        let names: BTreeSet<String> = r.files[i]
            .outputs
            .iter()
            .map(|o| {
                Path::new(&o.path)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(
            names,
            expected_names(f, labels, [p256_suffixes, &[".sig", ".sig.json"]])
        );
        cms_raw_bundle_verify(&e, &r, f, i, labels).await;
        let p7s = output(&r, i, OutputKind::Cms, labels[0]);
        let cms_verify = common::openssl_cms_verify;
        let openssl_cms = |p: &Path| cms_verify(Path::new("openssl"), p, f);
        let (ok, _) = openssl_cms(&p7s);
        assert!(
            !ok,
            "OpenSSL 3.0 knows no ML-DSA: the two-signer file fails as a whole"
        );
        // OpenSSL 3.5 knows both, and checks every signer of the file.
        let (ok, msg) = cms_verify(&testkit::openssl35(), &p7s, f);
        assert!(ok, "OpenSSL 3.5 cms -verify, both signers: {msg}");
        let other = &files[(i + 1) % files.len()];
        let (ok, _) = cms_verify(&testkit::openssl35(), &p7s, other);
        assert!(!ok, "OpenSSL 3.5 accepted the .p7s over another file");
        let only = dir.join(format!("app-{i}.ecdsa-only.p7s"));
        let (ok, _, err) = py(&["cms-only", s(&p7s), "1.2.840.10045", s(&only)]);
        assert!(ok, "{err}");
        let (ok, msg) = openssl_cms(&only);
        assert!(ok, "openssl cms -verify, the ECDSA signer: {msg}");
        let pem = dir.join("rel_p256.pub.pem");
        let sig = output(&r, i, OutputKind::Raw, labels[0]);
        let (ok, msg) = run(Command::new("openssl").args([
            "dgst",
            "-sha256",
            "-verify",
            s(&pem),
            "-signature",
            s(&sig),
            s(f),
        ]));
        assert!(ok, "openssl dgst: {msg}");
        std::fs::remove_file(&only).unwrap();
    }
    manifest_signed_by_each(&r, &dir, labels);
    kit_passes_then_fails_on_a_change(&e, &r, &files[0]);
}

/// The files of a folder (to see that nothing was written).
fn listing(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

async fn records(e: &Env, action: &str) -> usize {
    common::all_records(&e.c)
        .await
        .iter()
        .filter(|r| r.event.action == action)
        .count()
}

/// A set with an HSS key that has fewer one-time signatures left than the batch needs is
/// refused naming that key, before anything is signed: no file written, no `sign` record,
/// the counter untouched. So are a key named twice, two labels with one file name stem, a
/// format no key of the set can make, an unconfirmed HSS key, and chain files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_set_with_a_key_that_cannot_sign_is_refused_before_anything_is_signed() {
    let e = builtin().await;
    e.generate(KeySpec::Ec { curve: Curve::P256 }, "rel_p256")
        .await;
    e.generate(KeySpec::MlDsa { set: MlDsaSet::P65 }, "rel.mldsa")
        .await;
    e.generate(KeySpec::MlDsa { set: MlDsaSet::P44 }, "rel_mldsa")
        .await;
    let params = HssParams::new(vec![(LmsType::H5, LmotsType::W8)]).unwrap();
    let hss = KeySpec::Hss { params };
    let hss_key = e.generate(hss, "rel_hss").await;
    let files = artifacts(&e, "refused");
    let dir = files[0].parent().unwrap().to_path_buf();
    let before = listing(&dir);
    let left = |c: Arc<console::Console>, pid: String| async move {
        c.signing()
            .signing_keys(&pid)
            .await
            .unwrap()
            .into_iter()
            .find(|k| k.label == "rel_hss")
            .and_then(|k| k.hss_remaining)
    };
    let hss_before = left(e.c.clone(), e.pid.clone()).await;
    assert_eq!(hss_before, Some(32), "{hss_key:?}");

    // 3 files × (CMS + the shared raw/bundle signature), the manifest, the certificate:
    // 9 of 32 — fine; 12 files: 12 × 2 + 1 + 1 = 26; 16 files: 34 > 32.
    let many: Vec<PathBuf> = (0..16)
        .map(|i| {
            let p = dir.join(format!("many-{i}.bin"));
            std::fs::write(&p, [i as u8; 100]).unwrap();
            p
        })
        .collect();
    let before_many = listing(&dir);
    let formats = [SignFormat::Cms, SignFormat::Raw, SignFormat::Bundle];
    let err = e
        .try_sign(request(&["rel_p256", "rel_hss"], &many, &formats))
        .await
        .unwrap_err();
    assert!(
        err.message.contains("'rel_hss' has 32 signatures left"),
        "{err:?}"
    );
    assert!(err.message.contains("needs 34"), "{err:?}");
    assert_eq!(listing(&dir), before_many, "nothing written");
    assert_eq!(records(&e, "sign").await, 0, "nothing signed");
    assert_eq!(
        records(&e, "sign.batch").await,
        0,
        "not even the write-ahead record"
    );
    assert_eq!(left(e.c.clone(), e.pid.clone()).await, Some(32));
    for f in &many {
        std::fs::remove_file(f).unwrap();
    }

    let refused = [
        (vec!["rel_p256", "rel_p256"], &formats[..], "named twice"),
        (
            vec!["rel.mldsa", "rel_mldsa"],
            &formats[..],
            "the same name",
        ),
        (
            vec!["rel_p256", "rel_mldsa"],
            &[SignFormat::Minisign][..],
            "None of the keys",
        ),
        (
            vec!["rel_mldsa", "rel_p256"],
            &[SignFormat::Openpgp][..],
            "'rel_mldsa'",
        ),
    ];
    for (keys, formats, says) in refused {
        let err = e
            .try_sign(request(&keys, &files, formats))
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{keys:?}: {err:?}");
        assert!(err.message.contains(says), "{keys:?}: {}", err.message);
    }
    let mut unconfirmed = request(&["rel_p256", "rel_hss"], &files, &formats);
    unconfirmed.confirm_hss = false;
    let err = e.try_sign(unconfirmed).await.unwrap_err();
    assert!(
        err.message.starts_with("'rel_hss' is an HSS key"),
        "{}",
        err.message
    );
    // A chain file (a certificate OpenSSL makes) goes with one key.
    let elsewhere = e.dir.path().join("ca");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let (ok, msg) = run(Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args([
            "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=CA", "-days", "1",
        ])
        .current_dir(&elsewhere));
    assert!(ok, "{msg}");
    let mut chained = request(&["rel_p256", "rel_mldsa"], &files, &formats);
    chained.chain = vec![s(&elsewhere.join("ca.pem")).into()];
    let err = e.try_sign(chained).await.unwrap_err();
    assert!(
        err.message.contains("go with one signing key"),
        "{}",
        err.message
    );
    assert_eq!(listing(&dir), before, "nothing written");
    assert_eq!(records(&e, "sign").await, 0);
    assert_eq!(left(e.c.clone(), e.pid.clone()).await, Some(32));
}

/// A file is signed by every key of the set or by none: when the second key cannot sign
/// file 1 (its signature exists already), what the first key wrote for it is removed (and
/// recorded as removed) and the file is reported failed naming that key; the other files
/// are signed by both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_one_key_cannot_sign_keeps_no_signature_of_the_others() {
    let e = builtin().await;
    let labels = ["rel_p256", "rel_mldsa65"];
    e.generate(KeySpec::Ec { curve: Curve::P256 }, labels[0])
        .await;
    e.generate(KeySpec::MlDsa { set: MlDsaSet::P65 }, labels[1])
        .await;
    let files = artifacts(&e, "partial");
    let dir = files[0].parent().unwrap().to_path_buf();
    let in_the_way = dir.join("app-1.bin.rel_mldsa65.sig");
    std::fs::write(&in_the_way, b"an older signature").unwrap();
    let mut req = request(&labels, &files, &[SignFormat::Cms, SignFormat::Raw]);
    req.manifest = false;
    req.on_error = OnError::Continue;
    let r = e.try_sign(req).await.unwrap();
    let failed = &r.files[1];
    assert_eq!(failed.failed_key.as_deref(), Some(labels[1]));
    assert!(failed.outputs.is_empty());
    assert!(failed
        .error
        .as_ref()
        .unwrap()
        .message
        .contains("already exists"));
    assert_eq!(std::fs::read(&in_the_way).unwrap(), b"an older signature");
    for gone in ["app-1.bin.p7s", "app-1.bin.rel_p256.sig"] {
        assert!(!dir.join(gone).exists(), "{gone} removed");
    }
    let withdrawn: Vec<_> = common::all_records(&e.c)
        .await
        .into_iter()
        .filter(|r| r.event.action == "sign.withdrawn")
        .collect();
    assert_eq!(withdrawn.len(), 1, "{withdrawn:?}");
    for i in [0, 2] {
        cms_raw_bundle_verify_cms_raw(&r, &files[i], i, labels);
    }
}

/// The CMS (both signers) and raw signatures (each key) of file `i` with pyca.
fn cms_raw_bundle_verify_cms_raw(r: &SignReport, f: &Path, i: usize, labels: [&str; 2]) {
    let p7s = output(r, i, OutputKind::Cms, labels[0]);
    let (ok, out, err) = py(&["cms", s(f), s(&p7s)]);
    assert!(ok && out.matches("signer ok").count() == 2, "{out}{err}");
    for label in labels {
        let pem = f.parent().unwrap().join(format!("{label}.pub.pem"));
        let (ok, _, err) = py(&[
            "raw",
            s(f),
            s(&output(r, i, OutputKind::Raw, label)),
            s(&pem),
        ]);
        assert!(ok, "{label}: {err}");
    }
}

/// ECDSA P-256 + an HSS key, time-stamped: each HSS rule holds for the HSS key of the set
/// (its budget spent exactly, its counter in the report), each CMS signer carries a token
/// of its own over its own signature (checked by `openssl ts -verify`), and both signers
/// verify outside (pyca; `hsslms` for HSS) and in the console.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hss_key_beside_ecdsa_spends_what_it_signs_and_each_signer_is_time_stamped() {
    use console::settings::TimestampAuthority;
    use testkit::tsa::{openssl_ts_verify, TestTsa};
    let tsa = TestTsa::start("ec");
    let e = builtin().await;
    let labels = ["rel_p256", "rel_hss"];
    e.generate(KeySpec::Ec { curve: Curve::P256 }, labels[0])
        .await;
    let params = HssParams::new(vec![(LmsType::H5, LmotsType::W8)]).unwrap();
    e.generate(KeySpec::Hss { params }, labels[1]).await;
    let files: Vec<PathBuf> = artifacts(&e, "hss-tsa").into_iter().take(2).collect();
    let mut req = request(&labels, &files, &[SignFormat::Cms, SignFormat::Raw]);
    req.timestamp = Some(TimestampAuthority {
        url: tsa.url("ok"),
        ca_file: Some(s(&tsa.ca()).into()),
        timeout_seconds: 10,
        optional: None,
    });
    let r = e.try_sign(req).await.unwrap();
    assert!(r.files.iter().all(|f| f.error.is_none()), "{:?}", r.files);
    // HSS: CMS and raw per file, the manifest, the certificate CMS needs.
    let hss = &r.keys[1];
    assert_eq!(hss.signatures_made, 2 * 2 + 1 + 1, "{hss:?}");
    assert_eq!(hss.hss_remaining_after, Some(32 - 6), "{hss:?}");
    for (i, f) in files.iter().enumerate() {
        let p7s = output(&r, i, OutputKind::Cms, labels[0]);
        let signers = signing::cms::parse_signers(&std::fs::read(&p7s).unwrap()).unwrap();
        assert_eq!(signers.len(), 2);
        for p in &signers {
            let token = p.timestamp_token.as_ref().expect("each signer has a token");
            let (ok, msg) = openssl_ts_verify(token, &p.signature, &tsa.ca());
            assert!(ok, "openssl ts -verify: {msg}");
        }
        let (ok, out, err) = py(&["cms", s(f), s(&p7s)]);
        assert!(ok && out.matches("signer ok").count() == 2, "{out}{err}");
        let v =
            e.c.signing()
                .verify_signature(s(f), s(&p7s), None, None)
                .await
                .unwrap();
        assert!(v.valid, "{}", v.detail);
        assert!(v.timestamp.is_some());
        let pem = f.parent().unwrap().join("rel_hss.pub.pem");
        let sig = output(&r, i, OutputKind::Raw, labels[1]);
        let (ok, _, err) = py(&["raw", s(f), s(&sig), s(&pem)]);
        assert!(ok, "hsslms: {err}");
    }
}
