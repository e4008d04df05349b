//! A root and an intermediate CA run with OpenSSL's command line in a test's folder: the
//! outside issuer of the certificates that the console's CSRs ask for (`chains`, `objects`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `openssl req -newkey` arguments for an ECDSA P-256 key.
pub const EC_P256: &[&str] = &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];

/// `openssl ARGS` in `dir`, whatever its outcome.
pub fn openssl(dir: &Path, args: &[&str]) -> Output {
    Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// `openssl ARGS` in `dir`, which must succeed: its standard output.
pub fn openssl_ok(dir: &Path, args: &[&str]) -> String {
    let o = openssl(dir, args);
    assert!(
        o.status.success(),
        "openssl {args:?}: {}",
        testkit::tools::text(&o)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A root CA and an intermediate CA it certifies, made in `dir` (root.pem, root.key,
/// int.pem, int.key): `newkey` as `openssl req` takes it ([`EC_P256`], `-newkey rsa:2048`).
pub fn make(dir: &Path, newkey: &[&str]) {
    std::fs::write(
        dir.join("ca.ext"),
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n",
    )
    .unwrap();
    let mut a = vec!["req", "-x509", "-nodes"];
    a.extend_from_slice(newkey);
    a.extend_from_slice(&[
        "-keyout",
        "root.key",
        "-out",
        "root.pem",
        "-subj",
        "/CN=Test Root CA/O=Example",
        "-days",
        "30",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl_ok(dir, &a);
    let mut a = vec!["req", "-nodes"];
    a.extend_from_slice(newkey);
    a.extend_from_slice(&[
        "-keyout",
        "int.key",
        "-out",
        "int.csr",
        "-subj",
        "/CN=Test Intermediate CA/O=Example",
    ]);
    openssl_ok(dir, &a);
    openssl_ok(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "int.csr",
            "-CA",
            "root.pem",
            "-CAkey",
            "root.key",
            "-set_serial",
            "2",
            "-days",
            "30",
            "-extfile",
            "ca.ext",
            "-out",
            "int.pem",
        ],
    );
}

/// The intermediate of [`make`] issues an end-entity certificate for the request `csr_pem`
/// with the extended key usages `eku` (`codeSigning`, …): leaf.pem.
pub fn issue(dir: &Path, csr_pem: &str, eku: &str) -> PathBuf {
    std::fs::write(dir.join("leaf.csr"), csr_pem).unwrap();
    std::fs::write(
        dir.join("leaf.ext"),
        format!(
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage={eku}\n"
        ),
    )
    .unwrap();
    openssl_ok(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "int.pem",
            "-CAkey",
            "int.key",
            "-set_serial",
            "77",
            "-days",
            "30",
            "-extfile",
            "leaf.ext",
            "-out",
            "leaf.pem",
        ],
    );
    dir.join("leaf.pem")
}

/// The certificate loop's set-up on `e`'s partition: a CA of [`make`] (ECDSA P-256) in the
/// test's folder, a new token P-256 key labelled `label`, and the certificate the CA issued
/// for the key's CSR with `subject` and the extended key usages `eku` (leaf.pem, not
/// imported).
pub async fn certified_p256(
    e: &super::Env,
    label: &str,
    subject: &str,
    eku: &str,
) -> (console::views::GeneratedKey, PathBuf) {
    let dir = e.dir.path();
    make(dir, EC_P256);
    let key = e
        .generate(
            hsm::algo::KeySpec::Ec {
                curve: hsm::algo::Curve::P256,
            },
            label,
        )
        .await;
    let csr =
        e.c.signing()
            .certificate_request(&e.pid, key.private_handle, subject)
            .await
            .unwrap();
    let leaf = issue(dir, &csr, eku);
    (key, leaf)
}
