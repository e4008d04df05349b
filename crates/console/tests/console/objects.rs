//! Certificates and other objects on real tokens: the CSR → CA → certificate loop (a CA made
//! with OpenSSL issues the certificate; the console imports it next to its key; CMS
//! signatures then carry it and its chain and `openssl cms -verify -CAfile root.pem`
//! accepts them), read back by `pkcs11-tool`; public keys and data objects; bad input
//! refused by name with nothing changed on the token. One test per process (nextest).

use std::path::{Path, PathBuf};

use console::objects::{ImportRequest, ObjectClass, ObjectFormat};
use console::sign::SignFormat;
use testkit::tools::{pkcs11_tool, text};
use testkit::{Backend, TOKEN_LABEL};

use crate::common;
use common::{ca, Env};

fn req(path: &Path) -> ImportRequest {
    ImportRequest {
        path: path.to_path_buf(),
        label: None,
        id_hex: None,
        data: false,
        application: None,
    }
}

async fn sign_cms(e: &Env, key_id: &str, file: &Path) -> PathBuf {
    let r = e
        .try_sign(common::sign_request(key_id, file, SignFormat::Cms))
        .await
        .expect("the batch runs");
    assert!(r.files.len() == 1 && r.files[0].error.is_none(), "{r:?}");
    PathBuf::from(format!("{}.p7s", file.display()))
}

async fn csr_to_ca_to_certificate(backend: Backend) {
    let e = common::token(backend).await;
    let dir = e.dir.path();
    let (key, leaf) = ca::certified_p256(
        &e,
        "release_ec_p256",
        "CN=Release signing,O=Example",
        "codeSigning,emailProtection",
    )
    .await;

    // The intermediate: stored as an authority, matching no key.
    let int =
        e.c.admin()
            .import_objects(&e.pid, req(&dir.join("int.pem")))
            .await
            .unwrap();
    assert!(int.objects[0].authority && int.objects[0].key_label.is_none());
    // The issued certificate: the key's ID and label.
    let r =
        e.c.admin()
            .import_objects(&e.pid, req(&leaf))
            .await
            .unwrap();
    let o = &r.objects[0];
    assert_eq!(o.kind, "certificate");
    assert_eq!(o.id_hex, key.id_hex, "the key's CKA_ID");
    assert_eq!(o.label, "release_ec_p256", "the key's label");
    assert_eq!(o.key_label.as_deref(), Some("release_ec_p256"));
    let info = o.certificate.as_ref().unwrap();
    assert!(info.key_usage.contains(&"digitalSignature".to_string()));
    assert!(info.extended_key_usage.contains(&"codeSigning".to_string()));
    assert!(!info.expired && info.days_left >= 29, "{info:?}");

    // The token shows it with its chain; the signing view names it, without warnings.
    let d =
        e.c.admin()
            .certificate_details(&e.pid, o.handle)
            .await
            .unwrap();
    // RFC 4514 order (OpenSSL's -subj /CN=…/O=… is printed last RDN first).
    assert_eq!(
        d.chain,
        vec!["O=Example,CN=Test Intermediate CA".to_string()]
    );
    assert!(!d.chain_complete, "the root is not on the token");
    let k = e.c.signing().signing_keys(&e.pid).await.unwrap();
    let k = k.iter().find(|k| k.id_hex == key.id_hex).unwrap();
    assert_eq!(
        k.certificate_subject.as_deref(),
        Some("CN=Release signing,O=Example")
    );
    assert!(
        k.certificate_warnings.is_empty(),
        "{:?}",
        k.certificate_warnings
    );

    // Another lineage lists the certificate under the key's ID.
    let t = e.token();
    let listed = pkcs11_tool(
        &t.module_path,
        t.env(),
        &[
            "--token-label",
            TOKEN_LABEL,
            "--list-objects",
            "--type",
            "cert",
        ],
    );
    let listed = text(&listed);
    assert!(listed.contains("Release signing"), "{listed}");
    assert!(listed.contains(&key.id_hex), "{listed}");

    // CMS now carries the issued certificate and the intermediate: OpenSSL builds the path
    // to the root it is given, without -noverify.
    let file = dir.join("release.tar");
    std::fs::write(&file, b"release bytes\n").unwrap();
    let p7s = sign_cms(&e, &key.id_hex, &file).await;
    let (p7s, file) = (p7s.display().to_string(), file.display().to_string());
    ca::openssl_ok(
        dir,
        &[
            "cms",
            "-verify",
            "-binary",
            "-inform",
            "DER",
            "-in",
            &p7s,
            "-content",
            &file,
            "-CAfile",
            "root.pem",
            "-out",
            "/dev/null",
        ],
    );
    let certs = ca::openssl_ok(
        dir,
        &["pkcs7", "-inform", "DER", "-in", &p7s, "-print_certs"],
    );
    assert!(certs.contains("Test Intermediate CA"), "{certs}");

    // Export round trip, and the audit trail saw the import before it ran.
    let out = dir.join("exported.der");
    e.c.admin()
        .save_object(&e.pid, o.handle, ObjectFormat::Der, &out)
        .await
        .unwrap();
    let pem_der = ca::openssl_ok(
        dir,
        &[
            "x509", "-in", "leaf.pem", "-outform", "DER", "-out", "leaf.der",
        ],
    );
    assert!(pem_der.is_empty());
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(dir.join("leaf.der")).unwrap()
    );
    common::request_before_outcome(&e.c, "object.import", None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_csr_ca_certificate_loop() {
    csr_to_ca_to_certificate(Backend::SoftHsm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_csr_ca_certificate_loop() {
    csr_to_ca_to_certificate(Backend::Kryoptic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_csr_ca_certificate_loop() {
    csr_to_ca_to_certificate(Backend::LunaSim).await;
}

async fn public_keys_and_data_objects(backend: Backend) {
    let e = common::token(backend).await;
    let dir = e.dir.path();
    ca::make(dir, ca::EC_P256);
    ca::openssl_ok(
        dir,
        &["pkey", "-in", "root.key", "-pubout", "-out", "root.pub.pem"],
    );
    ca::openssl_ok(
        dir,
        &[
            "pkey",
            "-pubin",
            "-in",
            "root.pub.pem",
            "-outform",
            "DER",
            "-out",
            "root.pub.der",
        ],
    );
    let mut r = req(&dir.join("root.pub.pem"));
    r.label = Some("partner_root_key".into());
    let imported = e.c.admin().import_objects(&e.pid, r).await.unwrap();
    assert_eq!(imported.objects[0].kind, "public_key");
    let found =
        e.c.admin()
            .find_exportable(&e.pid, "label:partner_root_key")
            .await
            .unwrap();
    assert_eq!(found.class, "PUBLIC_KEY");
    let (_, der_bytes) =
        e.c.admin()
            .export_object(&e.pid, found.handle, ObjectFormat::Der)
            .await
            .unwrap();
    assert_eq!(der_bytes, std::fs::read(dir.join("root.pub.der")).unwrap());

    let notes = dir.join("notes.bin");
    std::fs::write(&notes, b"\x00\x01 release notes \xff").unwrap();
    let mut r = req(&notes);
    r.data = true;
    r.application = Some("release-notes".into());
    let d = e.c.admin().import_objects(&e.pid, r.clone()).await.unwrap();
    assert_eq!(d.objects[0].kind, "data");
    let listed =
        e.c.admin()
            .list_objects(&e.pid, Some(ObjectClass::Data))
            .await
            .unwrap();
    assert!(listed.iter().any(|o| o.label == "notes"), "{listed:?}");
    let found =
        e.c.admin()
            .find_exportable(&e.pid, "label:notes")
            .await
            .unwrap();
    let (_, bytes) =
        e.c.admin()
            .export_object(&e.pid, found.handle, ObjectFormat::Pem)
            .await
            .unwrap();
    assert_eq!(bytes, std::fs::read(&notes).unwrap());
    let again = e.c.admin().import_objects(&e.pid, r).await.unwrap_err();
    assert!(
        again.message.contains("already on the token"),
        "{}",
        again.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn softhsm_public_keys_and_data_objects() {
    public_keys_and_data_objects(Backend::SoftHsm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kryoptic_public_keys_and_data_objects() {
    public_keys_and_data_objects(Backend::Kryoptic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lunasim_public_keys_and_data_objects() {
    public_keys_and_data_objects(Backend::LunaSim).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_by_name_and_changes_nothing() {
    let e = common::token(Backend::SoftHsm).await;
    let dir = e.dir.path();
    let (_key, leaf) = ca::certified_p256(
        &e,
        "bad_input_key",
        "CN=Bad input,O=Example",
        "codeSigning,emailProtection",
    )
    .await;
    let cat = |name: &str, parts: &[&str]| {
        let body: String = parts
            .iter()
            .map(|p| std::fs::read_to_string(dir.join(p)).unwrap())
            .collect();
        std::fs::write(dir.join(name), body).unwrap();
        dir.join(name)
    };
    std::fs::write(
        dir.join("not-a-cert.pem"),
        "hello, I am not a certificate\n",
    )
    .unwrap();
    let cases = [
        (dir.join("not-a-cert.pem"), "not a certificate"),
        (dir.join("root.key"), "private key"),
        (
            cat("with-key.pem", &["leaf.pem", "root.key"]),
            "private key",
        ),
        (
            cat("wrong-order.pem", &["int.pem", "leaf.pem"]),
            "not in order",
        ),
        (dir.join("missing.pem"), "cannot be read"),
    ];
    let before = e.c.list_keys(&e.pid).await.unwrap().len();
    for (path, why) in cases {
        let err =
            e.c.admin()
                .import_objects(&e.pid, req(&path))
                .await
                .unwrap_err();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(err.message.contains(&name), "{name}: {}", err.message);
        assert!(err.message.contains(why), "{name}: {}", err.message);
    }
    let mut bad_id = req(&leaf);
    bad_id.id_hex = Some("zz".into());
    let err =
        e.c.admin()
            .import_objects(&e.pid, bad_id)
            .await
            .unwrap_err();
    assert!(err.message.contains("--id"), "{}", err.message);
    assert_eq!(
        e.c.list_keys(&e.pid).await.unwrap().len(),
        before,
        "nothing changed"
    );
    // A chain leaf first is fine; the same certificate again is refused by name.
    let chain = cat("chain.pem", &["leaf.pem", "int.pem"]);
    let r =
        e.c.admin()
            .import_objects(&e.pid, req(&chain))
            .await
            .unwrap();
    assert_eq!(r.objects.len(), 2);
    assert!(!r.objects[0].authority && r.objects[1].authority);
    let err =
        e.c.admin()
            .import_objects(&e.pid, req(&leaf))
            .await
            .unwrap_err();
    assert!(
        err.message
            .contains("already on the token as 'bad_input_key'"),
        "{}",
        err.message
    );
}
