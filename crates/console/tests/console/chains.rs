//! Certificate chains given at signing time (`SignRequest::chain`, `hsmc sign --chain`),
//! verified by tools of another lineage than the console: a CA made in the test (OpenSSL's
//! CLI for ECDSA/RSA, pyca/cryptography for ML-DSA/Ed25519, which Debian's OpenSSL 3.0
//! cannot verify in CMS) issues the key's certificate from the console's CSR; the
//! intermediate reaches the signature only through the chain file; `openssl cms -verify
//! -CAfile root.pem -purpose any` (no -noverify) accepts it, and refuses it without the
//! chain file; `tests/interop/verify_chain.py` validates the path (asn1crypto, pyca,
//! dilithium-py). Bad chain files are refused by name, nothing written. One test per
//! process (nextest).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use console::objects::ImportRequest;
use console::sign::{SignFormat, SignRequest};
use hsm::algo::{Curve, KeySpec, MlDsaSet};
use testkit::tools::text;
use testkit::Backend;

use crate::common;
use common::ca::{self, openssl};
use common::Env;

fn run(dir: &Path, program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn must(o: Output, what: &str) {
    assert!(o.status.success(), "{what}: {}", text(&o));
}

fn verify_chain_py(dir: &Path, args: &[&str]) -> Output {
    let script = testkit::repo_root().join("tests/interop/verify_chain.py");
    let mut a = vec![script.to_str().unwrap()];
    a.extend_from_slice(args);
    run(dir, &testkit::python(), &a)
}

fn request(key_id: &str, file: &Path, chain: &[&Path]) -> SignRequest {
    let mut r = common::sign_request(key_id, file, SignFormat::Cms);
    r.chain = chain.iter().map(|p| p.display().to_string()).collect();
    r
}

/// Sign `name` (made here) in CMS with the chain files; the `.p7s`.
async fn sign(e: &Env, key_id: &str, name: &str, chain: &[&Path]) -> (PathBuf, PathBuf) {
    let file = e.dir.path().join(name);
    std::fs::write(&file, format!("release {name}\n")).unwrap();
    let r = e
        .try_sign(request(key_id, &file, chain))
        .await
        .expect("the batch runs");
    assert!(r.files[0].error.is_none(), "{r:?}");
    (
        file.clone(),
        PathBuf::from(format!("{}.p7s", file.display())),
    )
}

fn cms_verify(dir: &Path, file: &Path, p7s: &Path) -> Output {
    openssl(
        dir,
        &[
            "cms",
            "-verify",
            "-binary",
            "-inform",
            "DER",
            "-in",
            p7s.to_str().unwrap(),
            "-content",
            file.to_str().unwrap(),
            "-CAfile",
            "root.pem",
            "-purpose",
            "any",
            "-out",
            "/dev/null",
        ],
    )
}

fn import(path: &Path) -> ImportRequest {
    ImportRequest {
        path: path.to_path_buf(),
        label: None,
        id_hex: None,
        data: false,
        application: None,
    }
}

/// ECDSA P-256: the issued certificate imported on the token, the intermediate only in
/// the chain file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecdsa_chain_file_verifies_in_openssl_and_is_needed() {
    let e = common::token(Backend::SoftHsm).await;
    let dir = e.dir.path();
    let (key, leaf) = ca::certified_p256(
        &e,
        "release_ec",
        "CN=Release signing,O=Example",
        "codeSigning",
    )
    .await;
    e.c.admin()
        .import_objects(&e.pid, import(&leaf))
        .await
        .unwrap();

    let int = dir.join("int.pem");
    let (file, p7s) = sign(&e, &key.id_hex, "with-chain.tar", &[&int]).await;
    must(
        cms_verify(dir, &file, &p7s),
        "openssl cms -verify with the chain",
    );
    let certs = openssl(
        dir,
        &[
            "pkcs7",
            "-inform",
            "DER",
            "-in",
            p7s.to_str().unwrap(),
            "-print_certs",
        ],
    );
    let certs = text(&certs);
    assert_eq!(
        certs.matches("subject=").count(),
        2,
        "leaf and intermediate: {certs}"
    );
    // The same path through pyca and asn1crypto.
    let (f, s) = (file.to_str().unwrap(), p7s.to_str().unwrap());
    must(
        verify_chain_py(dir, &["verify", f, s, "root.pem"]),
        "verify_chain.py",
    );

    // Without the chain file the intermediate is missing: OpenSSL refuses the path.
    let (file, p7s) = sign(&e, &key.id_hex, "without-chain.tar", &[]).await;
    let o = cms_verify(dir, &file, &p7s);
    assert!(!o.status.success(), "verified without the intermediate");
    assert!(
        text(&o).contains("unable to get local issuer certificate"),
        "{}",
        text(&o)
    );

    // The audit trail names the chain the batch used.
    let records =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 200,
                ascending: true,
                ..Default::default()
            })
            .await
            .unwrap();
    let meta: serde_json::Value = records
        .iter()
        .filter(|r| r.event.action == "sign.batch")
        .map(|r| serde_json::from_str::<serde_json::Value>(&r.event.metadata).unwrap())
        .find(|m| m.get("chain_files").is_some())
        .expect("the request with a chain is recorded");
    assert_eq!(meta["chain_files"][0], int.display().to_string(), "{meta}");
    let chain = meta["certificate_chain"].to_string();
    assert!(
        chain.contains("Release signing") && chain.contains("Test Intermediate CA"),
        "{chain}"
    );
}

/// RSA: nothing imported; one PEM file with the issued certificate and the intermediate
/// (as `openssl cms -certfile` takes it) — the signer's certificate comes from the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rsa_signer_certificate_and_chain_from_one_pem_file() {
    let e = common::token(Backend::SoftHsm).await;
    let dir = e.dir.path();
    ca::make(dir, &["-newkey", "rsa:2048"]);
    let key = e.generate(KeySpec::Rsa { bits: 2048 }, "release_rsa").await;
    let csr =
        e.c.signing()
            .certificate_request(
                &e.pid,
                key.private_handle,
                "CN=Release signing RSA,O=Example",
            )
            .await
            .unwrap();
    let leaf = ca::issue(dir, &csr, "codeSigning");
    // Intermediate first, then the leaf: any order.
    let bundle = dir.join("bundle.pem");
    let mut all = std::fs::read(dir.join("int.pem")).unwrap();
    all.extend(std::fs::read(&leaf).unwrap());
    std::fs::write(&bundle, all).unwrap();

    let (file, p7s) = sign(&e, &key.id_hex, "rsa.tar", &[&bundle]).await;
    must(cms_verify(dir, &file, &p7s), "openssl cms -verify, RSA");

    // Without it the console issues its self-signed certificate: no path to the root.
    let (file, p7s) = sign(&e, &key.id_hex, "rsa-self.tar", &[]).await;
    assert!(!cms_verify(dir, &file, &p7s).status.success());
}

/// ML-DSA-65 (Kryoptic) and Ed25519: CAs made with pyca/cryptography, the path validated
/// by verify_chain.py; without the chain file the same check fails.
async fn pqc_and_eddsa_chain(spec: KeySpec, ca_alg: &str, label: &str) {
    let e = common::token(Backend::Kryoptic).await;
    let dir = e.dir.path();
    must(verify_chain_py(dir, &["make-ca", ".", ca_alg]), "make-ca");
    let key = e.generate(spec, label).await;
    let csr =
        e.c.signing()
            .certificate_request(&e.pid, key.private_handle, "CN=Release signing,O=Example")
            .await
            .unwrap();
    std::fs::write(dir.join("leaf.csr"), &csr).unwrap();
    must(
        verify_chain_py(dir, &["issue", ".", "leaf.csr", "leaf.pem"]),
        "issue",
    );
    e.c.admin()
        .import_objects(&e.pid, import(&dir.join("leaf.pem")))
        .await
        .unwrap();
    let int = dir.join("int.pem");
    let (file, p7s) = sign(&e, &key.id_hex, "pq.tar", &[&int]).await;
    let (f, s) = (file.to_str().unwrap(), p7s.to_str().unwrap());
    must(
        verify_chain_py(dir, &["verify", f, s, "root.pem"]),
        "path validation",
    );

    let (file, p7s) = sign(&e, &key.id_hex, "pq-alone.tar", &[]).await;
    let (f, s) = (file.to_str().unwrap(), p7s.to_str().unwrap());
    let o = verify_chain_py(dir, &["verify", f, s, "root.pem"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("Test Intermediate CA"), "{}", text(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ml_dsa_chain_file_validates_in_pyca_and_asn1crypto() {
    pqc_and_eddsa_chain(
        KeySpec::MlDsa { set: MlDsaSet::P65 },
        "ml-dsa-65",
        "release_ml_dsa",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ed25519_chain_file_validates_in_pyca_and_asn1crypto() {
    pqc_and_eddsa_chain(
        KeySpec::Ec {
            curve: Curve::Ed25519,
        },
        "ed25519",
        "release_ed25519",
    )
    .await;
}

/// A chain file with an unrelated certificate, a file that is no certificate, a PEM with
/// a private key: each refused naming the file before anything is signed; nothing
/// written, no signature spent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_chain_files_are_refused_and_nothing_is_written() {
    let e = common::token(Backend::SoftHsm).await;
    let dir = e.dir.path();
    let (key, leaf) = ca::certified_p256(
        &e,
        "release_ec",
        "CN=Release signing,O=Example",
        "codeSigning",
    )
    .await;
    e.c.admin()
        .import_objects(&e.pid, import(&leaf))
        .await
        .unwrap();
    // An unrelated self-signed certificate.
    must(
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-nodes",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-keyout",
                "other.key",
                "-out",
                "other.pem",
                "-subj",
                "/CN=Unrelated CA",
                "-days",
                "30",
            ],
        ),
        "unrelated",
    );
    let unrelated = dir.join("unrelated.pem");
    let mut all = std::fs::read(dir.join("int.pem")).unwrap();
    all.extend(std::fs::read(dir.join("other.pem")).unwrap());
    std::fs::write(&unrelated, all).unwrap();
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "not a certificate\n").unwrap();
    let with_key = dir.join("with-key.pem");
    let mut all = std::fs::read(dir.join("int.pem")).unwrap();
    all.extend(std::fs::read(dir.join("int.key")).unwrap());
    std::fs::write(&with_key, all).unwrap();

    let file = dir.join("artifact.tar");
    std::fs::write(&file, b"artifact\n").unwrap();
    let before =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 500,
                ..Default::default()
            })
            .await
            .unwrap()
            .len();
    for (chain, must_say) in [
        (
            &unrelated,
            vec!["unrelated.pem", "CN=Unrelated CA", "does not chain"],
        ),
        (&notes, vec!["notes.txt", "not a certificate"]),
        (&with_key, vec!["with-key.pem", "private key"]),
    ] {
        let err = e
            .try_sign(request(&key.id_hex, &file, &[chain]))
            .await
            .expect_err("refused");
        assert_eq!(err.code, console::ErrorCode::InvalidInput, "{err:?}");
        for s in must_say {
            assert!(err.message.contains(s), "{s}: {}", err.message);
        }
        assert!(
            !dir.join("artifact.tar.p7s").exists(),
            "nothing is written for {}",
            chain.display()
        );
    }
    // The chain needs a format that carries it.
    let mut req = request(&key.id_hex, &file, &[&dir.join("int.pem")]);
    req.formats = vec![SignFormat::Raw];
    let err = e.try_sign(req).await.expect_err("refused");
    assert!(err.message.contains("CMS"), "{}", err.message);
    let after =
        e.c.trail()
            .audit_records(audit::store::Query {
                limit: 500,
                ..Default::default()
            })
            .await
            .unwrap();
    assert_eq!(after.len(), before, "nothing was requested of the token");
    assert!(!after.iter().any(|r| r.event.action.starts_with("sign")));
}
