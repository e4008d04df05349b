//! Chain files given at signing time, against certificates OpenSSL makes (another lineage
//! than the RustCrypto verifiers that check each link): the path is built in any order,
//! token-held issuers are carried once, and what does not chain is refused by name.

use std::path::{Path, PathBuf};
use std::process::Command;

use signing::chain::{assemble, issued_by, parse_file, read_file, ChainError, GivenCertificate};
use x509_cert::der::{Decode, DecodePem};
use x509_cert::Certificate;

fn openssl(dir: &Path, args: &[&str]) {
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
}

/// How a key is made: `-newkey` arguments.
fn newkey(kind: &str) -> Vec<&'static str> {
    match kind {
        "ec" => vec!["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
        "rsa" => vec!["-newkey", "rsa:2048"],
        "ed25519" => vec!["-newkey", "ed25519"],
        other => panic!("{other}"),
    }
}

/// A root, an intermediate and a leaf made with OpenSSL (`{prefix}root.pem`, …), keys of
/// `kind`; the intermediate's and leaf's names given.
fn make(dir: &Path, prefix: &str, kind: &str, int_cn: &str) {
    std::fs::write(
        dir.join("ca.ext"),
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("leaf.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=codeSigning\n",
    )
    .unwrap();
    let f = |n: &str| format!("{prefix}{n}");
    let (root_key, root, int_key, int_csr, int) = (
        f("root.key"),
        f("root.pem"),
        f("int.key"),
        f("int.csr"),
        f("int.pem"),
    );
    let (leaf_key, leaf_csr, leaf) = (f("leaf.key"), f("leaf.csr"), f("leaf.pem"));
    let mut a = vec!["req", "-x509", "-nodes"];
    a.extend(newkey(kind));
    let root_subj = format!("/CN={prefix}Root CA");
    a.extend([
        "-keyout",
        &root_key,
        "-out",
        &root,
        "-subj",
        &root_subj,
        "-days",
        "30",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(dir, &a);
    let int_subj = format!("/CN={int_cn}");
    let leaf_subj = format!("/CN={prefix}Release signing");
    for (key, csr, subj) in [
        (&int_key, &int_csr, &int_subj),
        (&leaf_key, &leaf_csr, &leaf_subj),
    ] {
        let mut a = vec!["req", "-nodes"];
        a.extend(newkey(kind));
        a.extend(["-keyout", key, "-out", csr, "-subj", subj]);
        openssl(dir, &a);
    }
    for (csr, ca, ca_key, ext, out, serial) in [
        (&int_csr, &root, &root_key, "ca.ext", &int, "2"),
        (&leaf_csr, &int, &int_key, "leaf.ext", &leaf, "3"),
    ] {
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                csr,
                "-CA",
                ca,
                "-CAkey",
                ca_key,
                "-set_serial",
                serial,
                "-days",
                "30",
                "-extfile",
                ext,
                "-out",
                out,
            ],
        );
    }
}

fn der(dir: &Path, name: &str) -> Vec<u8> {
    let pem = std::fs::read(dir.join(name)).unwrap();
    x509_cert::der::Encode::to_der(&Certificate::from_pem(&pem).unwrap()).unwrap()
}

fn given(file: &str, ders: &[&Vec<u8>]) -> Vec<GivenCertificate> {
    ders.iter()
        .map(|d| GivenCertificate {
            file: file.into(),
            der: (*d).clone(),
        })
        .collect()
}

fn key_of(der: &[u8]) -> hsm::pubkey::PublicKey {
    signing::cert::public_key(der).unwrap().1
}

fn concat(dir: &Path, out: &str, names: &[&str]) -> PathBuf {
    let mut all = Vec::new();
    for n in names {
        all.extend(std::fs::read(dir.join(n)).unwrap());
    }
    std::fs::write(dir.join(out), all).unwrap();
    dir.join(out)
}

#[test]
fn each_link_verifies_for_openssl_made_chains() {
    let d = tempfile::tempdir().unwrap();
    for kind in ["ec", "rsa", "ed25519"] {
        make(d.path(), kind, kind, &format!("{kind}Intermediate CA"));
        let c = |n: &str| Certificate::from_der(&der(d.path(), &format!("{kind}{n}"))).unwrap();
        let (root, int, leaf) = (c("root.pem"), c("int.pem"), c("leaf.pem"));
        issued_by(&leaf, &int).unwrap_or_else(|e| panic!("{kind}: {e}"));
        issued_by(&int, &root).unwrap_or_else(|e| panic!("{kind}: {e}"));
        issued_by(&root, &root).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert!(issued_by(&leaf, &root).is_err(), "{kind}: the wrong key");
    }
}

#[test]
fn a_pem_file_in_any_order_builds_the_path_and_may_hold_the_signer() {
    let d = tempfile::tempdir().unwrap();
    make(d.path(), "", "ec", "Intermediate CA");
    let (root, int, leaf) = (
        der(d.path(), "root.pem"),
        der(d.path(), "int.pem"),
        der(d.path(), "leaf.pem"),
    );
    // Root first, the signer's own certificate last: sorted as OpenSSL would.
    let f = concat(d.path(), "all.pem", &["root.pem", "leaf.pem", "int.pem"]);
    let certs = read_file(&f).unwrap();
    assert_eq!(certs.len(), 3);
    let a = assemble(&key_of(&leaf), None, &[], &certs).unwrap();
    assert_eq!(a.certificate, leaf);
    assert!(a.certificate_from_file);
    assert_eq!(a.chain, vec![int.clone(), root.clone()]);

    // The signer's certificate on the token, only the intermediate given.
    let a = assemble(&key_of(&leaf), Some(&leaf), &[], &given("int.pem", &[&int])).unwrap();
    assert!(!a.certificate_from_file);
    assert_eq!(a.chain, vec![int.clone()]);

    // The intermediate on the token too: carried once; the given root is added.
    let a = assemble(
        &key_of(&leaf),
        Some(&leaf),
        std::slice::from_ref(&int),
        &given("x.pem", &[&root, &int, &int, &leaf]),
    )
    .unwrap();
    assert_eq!(a.chain, vec![int.clone(), root.clone()]);
    assert!(
        !a.certificate_from_file,
        "the token's certificate, given again"
    );

    // DER works as well.
    std::fs::write(d.path().join("int.der"), &int).unwrap();
    assert_eq!(
        read_file(&d.path().join("int.der")).unwrap(),
        given(&d.path().join("int.der").display().to_string(), &[&int])
    );
}

#[test]
fn what_does_not_chain_is_refused_by_file_and_subject() {
    let d = tempfile::tempdir().unwrap();
    make(d.path(), "", "ec", "Intermediate CA");
    // Another CA with the same intermediate name but other keys (a forged issuer), and
    // its root, which issued nothing of ours.
    make(d.path(), "other", "ec", "Intermediate CA");
    let (int, leaf) = (der(d.path(), "int.pem"), der(d.path(), "leaf.pem"));
    let (other_root, forged) = (
        der(d.path(), "otherroot.pem"),
        der(d.path(), "otherint.pem"),
    );
    let pk = key_of(&leaf);

    let e = assemble(
        &pk,
        Some(&leaf),
        &[],
        &given("unrelated.pem", &[&int, &other_root]),
    )
    .unwrap_err();
    match &e {
        ChainError::DoesNotChain {
            file,
            subject,
            last,
            expected,
        } => {
            assert_eq!(file, "unrelated.pem");
            assert_eq!(subject, "CN=otherRoot CA");
            assert_eq!(last, "CN=Intermediate CA");
            assert_eq!(expected, "CN=Root CA");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("unrelated.pem"), "{e}");

    let e = assemble(&pk, Some(&leaf), &[], &given("forged.pem", &[&forged])).unwrap_err();
    assert!(
        matches!(&e, ChainError::BadSignature { file, subject, child, .. }
            if file == "forged.pem" && subject == "CN=Intermediate CA"
                && child == "CN=Release signing"),
        "{e:?}"
    );
    // The genuine one beside the forged one: the signature decides.
    let a = assemble(&pk, Some(&leaf), &[], &given("both.pem", &[&forged, &int]));
    assert!(
        matches!(&a, Err(ChainError::DoesNotChain { subject, .. }) if subject == "CN=Intermediate CA"),
        "the forged one is left over: {a:?}"
    );

    // No certificate to start from.
    let e = assemble(&pk, None, &[], &given("int.pem", &[&int])).unwrap_err();
    assert_eq!(e, ChainError::NoSignerCertificate);
}

#[test]
fn files_that_are_not_certificates_are_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    make(d.path(), "", "ec", "Intermediate CA");
    let with_key = concat(d.path(), "with-key.pem", &["int.pem", "int.key"]);
    let e = read_file(&with_key).unwrap_err();
    assert!(
        matches!(&e, ChainError::PrivateKey { file } if file.ends_with("with-key.pem")),
        "{e:?}"
    );
    let e = parse_file(b"release notes\n", "notes.txt").unwrap_err();
    assert!(
        matches!(&e, ChainError::Unreadable { reason, .. } if reason.contains("notes.txt")),
        "{e:?}"
    );
    openssl(
        d.path(),
        &["pkey", "-in", "int.key", "-pubout", "-out", "int.pub"],
    );
    let e = read_file(&d.path().join("int.pub")).unwrap_err();
    assert!(matches!(&e, ChainError::PublicKey { .. }), "{e:?}");
    let e = read_file(&d.path().join("missing.pem")).unwrap_err();
    assert!(
        matches!(&e, ChainError::Unreadable { reason, .. } if reason.contains("missing.pem")),
        "{e:?}"
    );
}

/// Found by the certificate_files fuzz target: a `.p7b`'s certificates came out decoded and
/// encoded again (a certificate not in strict DER changed, and its signature with it) and
/// sorted as a DER SET OF sorts (a leaf-first chain out of order). They are the file's own
/// bytes, in the file's order.
#[test]
fn a_p7b_gives_its_certificates_byte_for_byte_in_the_files_order() {
    let d = tempfile::tempdir().unwrap();
    make(d.path(), "p7", "ec", "P7 Issuing CA");
    let (root, int, leaf) = (
        der(d.path(), "p7root.pem"),
        der(d.path(), "p7int.pem"),
        der(d.path(), "p7leaf.pem"),
    );
    let p7b = |out: &str, names: [&str; 3]| {
        let mut a = vec!["crl2pkcs7", "-nocrl", "-outform", "DER", "-out", out];
        for n in &names {
            a.extend(["-certfile", n]);
        }
        openssl(d.path(), &a);
        std::fs::read(d.path().join(out)).unwrap()
    };
    let leaf_first = p7b("leaf-first.p7b", ["p7leaf.pem", "p7int.pem", "p7root.pem"]);
    assert_eq!(
        parse_file(&leaf_first, "leaf-first.p7b").unwrap(),
        given("leaf-first.p7b", &[&leaf, &int, &root])
    );
    let root_first = p7b("root-first.p7b", ["p7root.pem", "p7int.pem", "p7leaf.pem"]);
    assert_eq!(
        parse_file(&root_first, "root-first.p7b").unwrap(),
        given("root-first.p7b", &[&root, &int, &leaf])
    );
    // The leaf with its version written as v1's default (BER, not DER): kept as it is.
    let v3 = [0xa0, 0x03, 0x02, 0x01, 0x02];
    let at = leaf.windows(5).position(|w| w == v3).unwrap();
    let mut odd = leaf.clone();
    odd[at + 4] = 0;
    let start = leaf_first
        .windows(leaf.len())
        .position(|w| w == leaf)
        .unwrap();
    let mut odd_p7b = leaf_first.clone();
    odd_p7b[start..start + leaf.len()].copy_from_slice(&odd);
    assert_eq!(
        parse_file(&odd_p7b, "odd.p7b").unwrap(),
        given("odd.p7b", &[&odd, &int, &root])
    );
}
