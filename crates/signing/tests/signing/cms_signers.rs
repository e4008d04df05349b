//! Dual signing in one `.p7s`: a signer added to a detached CMS signature made earlier
//! (`signing::cms::add_signer`). Checked by verifiers of other lineages than the encoder:
//! Debian's OpenSSL 3.0 (`openssl cms -verify` checks every signer; it knows ECDSA, not
//! ML-DSA) and pyca/cryptography with asn1crypto (`tests/interop/verify_release.py`, every
//! signer, ML-DSA included); what would change signed bytes or mix contents is refused.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use hsm::algo::{Curve, MlDsaSet};
use hsm::pubkey::PublicKey;
use sha2::{Digest, Sha256, Sha512};
use signing::alg::{DigestAlg, SigAlg};
use signing::{cms, SignError};

/// A software key that signs as the HSM would for `alg` (ECDSA as DER).
enum Key {
    P256(p256::ecdsa::SigningKey),
    Ed25519(ed25519_dalek::SigningKey),
    MlDsa65(Box<ml_dsa::SigningKey<ml_dsa::MlDsa65>>),
}

impl Key {
    fn alg(&self) -> SigAlg {
        match self {
            Key::P256(_) => SigAlg::Ecdsa { curve: Curve::P256 },
            Key::Ed25519(_) => SigAlg::Ed25519,
            Key::MlDsa65(_) => SigAlg::MlDsa { set: MlDsaSet::P65 },
        }
    }

    fn public(&self) -> PublicKey {
        match self {
            Key::P256(k) => PublicKey::Ec {
                curve: Curve::P256,
                point: k.verifying_key().to_sec1_point(false).as_bytes().to_vec(),
            },
            Key::Ed25519(k) => PublicKey::Ec {
                curve: Curve::Ed25519,
                point: k.verifying_key().to_bytes().to_vec(),
            },
            Key::MlDsa65(k) => {
                use ml_dsa::Keypair;
                PublicKey::MlDsa {
                    set: MlDsaSet::P65,
                    key: k.verifying_key().encode().to_vec(),
                }
            }
        }
    }

    fn sign(&self, m: &[u8]) -> Vec<u8> {
        match self {
            Key::P256(k) => {
                use p256::ecdsa::signature::Signer;
                let s: p256::ecdsa::Signature = k.sign(m);
                s.to_der().as_bytes().to_vec()
            }
            Key::Ed25519(k) => {
                use ed25519_dalek::Signer;
                k.sign(m).to_bytes().to_vec()
            }
            Key::MlDsa65(k) => k
                .expanded_key()
                .sign_deterministic(m, &[])
                .unwrap()
                .encode()
                .to_vec(),
        }
    }

    /// A self-signed certificate of the key, and a `.p7s` over `content` signed by it.
    fn p7s(&self, cn: &str, content: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let alg = self.alg();
        let cert =
            signing::cert::self_signed(&self.public(), alg, cn, 30, &mut |m| Ok(self.sign(m)))
                .unwrap();
        let digest = alg.digest().digest(content);
        let p7s = cms::build(alg, &cert, &digest, SystemTime::now(), &mut |m| {
            Ok(self.sign(m))
        })
        .unwrap();
        (cert, p7s)
    }
}

fn p256(seed: u8) -> Key {
    Key::P256(p256::ecdsa::SigningKey::from_slice(&[seed; 32]).unwrap())
}

fn ed25519() -> Key {
    Key::Ed25519(ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]))
}

fn ml_dsa_65() -> Key {
    Key::MlDsa65(Box::new(ml_dsa::SigningKey::from_seed(&[5u8; 32].into())))
}

/// The content's digest in any algorithm, as the batch has it.
fn digests_of(content: &[u8]) -> impl Fn(DigestAlg) -> Option<Vec<u8>> + '_ {
    move |alg| Some(alg.digest(content))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `openssl cms -verify` of `p7s` over `content`, the signers' certificates trusted as
/// given in `ca` (self-signed).
fn openssl_verify(p7s: &Path, content: &Path, ca: &Path) -> (bool, String) {
    let o = Command::new("openssl")
        .args(["cms", "-verify", "-binary", "-inform", "DER", "-in"])
        .arg(p7s)
        .arg("-content")
        .arg(content)
        .args(["-CAfile", s(ca), "-purpose", "any", "-out", "/dev/null"])
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// tests/interop/verify_release.py: (exit 0, stdout, stderr).
fn py(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(testkit::python())
        .arg(testkit::repo_root().join("tests/interop/verify_release.py"))
        .args(args)
        .output()
        .unwrap();
    assert_ne!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn pem(der: &[u8]) -> String {
    signing::cert::to_pem("CERTIFICATE", der)
}

#[test]
fn two_ecdsa_signers_in_one_p7s_both_verify_with_openssl() {
    let d = tempfile::tempdir().unwrap();
    let content = b"release 1.0\n".repeat(100);
    let file = write(d.path(), "app.tar", &content);
    let (a, b) = (p256(3), p256(4));
    let (cert_a, first) = a.p7s("CN=Release A", &content);
    let (cert_b, second) = b.p7s("CN=Release B", &content);
    let merged = cms::add_signer(&first, &second, &digests_of(&content)).unwrap();
    let p7s = write(d.path(), "app.tar.p7s", &merged);
    let ca = write(
        d.path(),
        "ca.pem",
        format!("{}{}", pem(&cert_a), pem(&cert_b)).as_bytes(),
    );
    let (ok, err) = openssl_verify(&p7s, &file, &ca);
    assert!(ok, "openssl cms -verify: {err}");
    let (ok, out, err) = py(&["cms", s(&file), s(&p7s)]);
    assert!(ok, "{err}");
    assert_eq!(out.matches("signer ok").count(), 2, "{out}");
    // With only one signer's certificate trusted, OpenSSL refuses: it checked both.
    let only_a = write(d.path(), "a.pem", pem(&cert_a).as_bytes());
    assert!(!openssl_verify(&p7s, &file, &only_a).0);
    // The first signer's bytes are unchanged inside the merged file.
    let before = cms::parse(&first).unwrap();
    let after = cms::parse_signers(&merged).unwrap();
    assert_eq!(after.len(), 2);
    assert!(after
        .iter()
        .any(|p| p.signature == before.signature && p.signed_attrs_der == before.signed_attrs_der));
    // A changed byte of the content: neither verifier accepts it.
    let mut changed = content.clone();
    changed[10] ^= 1;
    let file2 = write(d.path(), "changed.tar", &changed);
    assert!(!openssl_verify(&p7s, &file2, &ca).0);
    assert!(!py(&["cms", s(&file2), s(&p7s)]).0);
}

#[test]
fn ecdsa_ed25519_and_ml_dsa_signers_each_verify_outside_and_in_the_console() {
    let d = tempfile::tempdir().unwrap();
    let content: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let file = write(d.path(), "fw.bin", &content);
    let (ec, ed, ml) = (p256(9), ed25519(), ml_dsa_65());
    let (cert_ec, p_ec) = ec.p7s("CN=Classical", &content);
    let (_, p_ed) = ed.p7s("CN=Edwards", &content);
    let (cert_ml, p_ml) = ml.p7s("CN=Post-quantum", &content);
    let two = cms::add_signer(&p_ec, &p_ml, &digests_of(&content)).unwrap();
    let three = cms::add_signer(&two, &p_ed, &digests_of(&content)).unwrap();
    let p7s = write(d.path(), "fw.bin.p7s", &three);
    // pyca/cryptography + asn1crypto: every signer, ML-DSA and Ed25519 included.
    let (ok, out, err) = py(&["cms", s(&file), s(&p7s)]);
    assert!(ok, "{err}");
    assert_eq!(out.matches("signer ok").count(), 3, "{out}");
    assert!(out.contains("2.16.840.1.101.3.4.3.18"), "{out}");
    // Debian's OpenSSL 3.0 knows no ML-DSA: the two-signer file fails as a whole, and its
    // ECDSA signer, alone in a .p7s of its own, verifies.
    let ca = write(d.path(), "ec.pem", pem(&cert_ec).as_bytes());
    let p7s_two = write(d.path(), "two.p7s", &two);
    assert!(!openssl_verify(&p7s_two, &file, &ca).0);
    let only_ec = d.path().join("ec-only.p7s");
    let (ok, _, err) = py(&["cms-only", s(&p7s_two), "1.2.840.10045", s(&only_ec)]);
    assert!(ok, "{err}");
    let (ok, err) = openssl_verify(&only_ec, &file, &ca);
    assert!(ok, "openssl cms -verify of the ECDSA signer: {err}");
    // The console's verifier: every signer without a pin; the pinned signer with one.
    let r = signing::verify::verify_file(&file, &p7s, None, b"").unwrap();
    assert!(r.valid, "{}", r.detail);
    assert_eq!(
        r.detail_text.as_ref().unwrap().key,
        "verify.details.cms_signers_ok"
    );
    let alg = r.algorithm.unwrap();
    assert!(
        alg.contains("ML-DSA-65") && alg.contains("Ed25519"),
        "{alg}"
    );
    let (_, ml_pk) = signing::cert::public_key(&cert_ml).unwrap();
    let r = signing::verify::verify_file(&file, &p7s, Some(&ml_pk), b"").unwrap();
    assert!(r.valid, "{}", r.detail);
    assert_eq!(r.key_fingerprint, Some(ml_pk.fingerprint()));
    let stranger = p256(10).public();
    let r = signing::verify::verify_file(&file, &p7s, Some(&stranger), b"").unwrap();
    assert!(!r.valid);
    // A changed file fails every signer.
    let mut changed = content.clone();
    changed[0] ^= 1;
    let file2 = write(d.path(), "other.bin", &changed);
    assert!(
        !signing::verify::verify_file(&file2, &p7s, None, b"")
            .unwrap()
            .valid
    );
    assert!(!py(&["cms", s(&file2), s(&p7s)]).0);
}

#[test]
fn a_signer_over_other_content_the_same_signer_or_non_der_is_refused() {
    let content = b"one".to_vec();
    let (a, b) = (p256(3), ed25519());
    let (_, first) = a.p7s("CN=A", &content);
    let (_, other) = b.p7s("CN=B", b"two");
    match cms::add_signer(&first, &other, &digests_of(&content)) {
        Err(SignError::Invalid(m)) => assert!(m.text.contains("different content"), "{m:?}"),
        other => panic!("{other:?}"),
    }
    // The file's digests must match the first signature's too.
    let (_, second) = b.p7s("CN=B", &content);
    assert!(cms::add_signer(&first, &second, &digests_of(b"three")).is_err());
    // The same certificate twice.
    let twice = cms::add_signer(&first, &first, &digests_of(&content)).unwrap_err();
    assert!(twice.to_string().contains("signs it already"), "{twice}");
    // Two signers to add at once.
    let two = cms::add_signer(&first, &second, &digests_of(&content)).unwrap();
    let (_, third) = p256(5).p7s("CN=C", &content);
    assert!(cms::add_signer(&third, &two, &digests_of(&content)).is_err());
    // A long-form length with a leading zero (BER, not DER) is not opened.
    let mut padded = vec![first[0], 0x83, 0];
    assert_eq!(first[1], 0x82, "a .p7s this size has a two-byte length");
    padded.extend_from_slice(&first[2..]);
    assert!(cms::add_signer(&padded, &second, &digests_of(&content)).is_err());
    // Sanity of the helpers: SHA-256 and SHA-512 are what the signers carry.
    assert_eq!(
        digests_of(&content)(DigestAlg::Sha512).unwrap(),
        Sha512::digest(&content).to_vec()
    );
    assert_eq!(
        digests_of(&content)(DigestAlg::Sha256).unwrap(),
        Sha256::digest(&content).to_vec()
    );
}
