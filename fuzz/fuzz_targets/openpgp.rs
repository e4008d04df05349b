//! OpenPGP signatures and certificates as `hsmc verify` and the Verify view read them back
//! (`kind` routes the signature file, `report::verify_file` gives the verdict): the input
//! as a signature over the fixture file with each fixture certificate, and as a certificate
//! with each fixture signature. The fixtures are gpg 2.2's: an Ed25519, a P-256 and an RSA
//! key, their certificates and binary detached signatures over `openpgp-artifact`.
//! - A verdict never panics, whatever the signature or the certificate.
//! - A signature that verifies (a cleartext message too, when it signs the file's text) does
//!   not verify the file with one bit changed, and names the certificate's key and the user
//!   ID its owner bound.
//! - A binary signature and the same bytes armored give the same verdict; an armored one
//!   that verifies verifies as the binary it armors. The same for a certificate.
//! - A certificate that verifies a fixture signature is that key's, with its user ID.
#![no_main]
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use signing::openpgp::armor::{armor, Block};
use signing::openpgp::report::verify_file;
use signing::openpgp::verify::{kind, Kind};
use signing::verify::VerifyReport;

const ARTIFACT: &[u8] = include_bytes!("../fixtures/openpgp-artifact");

struct Fixture {
    cert: &'static [u8],
    sig: &'static [u8],
    fingerprint: &'static str,
    uid: &'static str,
}

/// `gpg --quick-gen-key UID ALG sign never`, `--export --armor`, `--detach-sign`.
const FIXTURES: [Fixture; 3] = [
    Fixture {
        cert: include_bytes!("../fixtures/openpgp-ed25519.asc"),
        sig: include_bytes!("../fixtures/openpgp-ed25519.sig"),
        fingerprint: "9CBA2C86E7662F9613A0E1BD645829E582E5ADB9",
        uid: "Fuzz Ed25519 <ed@example.org>",
    },
    Fixture {
        cert: include_bytes!("../fixtures/openpgp-p256.asc"),
        sig: include_bytes!("../fixtures/openpgp-p256.sig"),
        fingerprint: "6971A8016241F8889D946A8FD7EB06B84F642F7C",
        uid: "Fuzz P256 <p256@example.org>",
    },
    Fixture {
        cert: include_bytes!("../fixtures/openpgp-rsa.asc"),
        sig: include_bytes!("../fixtures/openpgp-rsa.sig"),
        fingerprint: "705333E40D9AA8A5601FD2AC3A53756814EB57CB",
        uid: "Fuzz RSA <rsa@example.org>",
    },
];

/// The fixture file and the same file with its last bit flipped, in a folder of their own
/// (a cleartext manifest's entries are looked for beside the file).
fn files() -> &'static (PathBuf, PathBuf) {
    static FILES: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    FILES.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("hsmc-fuzz-openpgp-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a folder for the fuzz files");
        let (good, bad) = (d.join("artifact"), d.join("artifact-flipped"));
        let mut flipped = ARTIFACT.to_vec();
        *flipped.last_mut().expect("the artifact is not empty") ^= 1;
        std::fs::write(&good, ARTIFACT).expect("write the fuzz artifact");
        std::fs::write(&bad, flipped).expect("write the flipped artifact");
        (good, bad)
    })
}

/// The bytes an ASCII-armored block carries, when it is plainly one (headers, a blank
/// line, base64, an optional checksum line, the footer); `None` for anything else.
fn dearmor(data: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(data).ok()?;
    let mut lines = text.trim_start().lines().map(str::trim_end);
    lines.next()?.strip_prefix("-----BEGIN ")?;
    for l in lines.by_ref() {
        if l.is_empty() {
            break;
        }
        l.split_once(": ")?;
    }
    let mut body = String::new();
    for l in lines {
        if l.starts_with("-----END ") {
            return console::keys::base64_decode(&body).ok();
        }
        if !l.starts_with('=') {
            body.push_str(l);
        }
    }
    None
}

/// What a verdict says (its detail aside: rpgp's words differ between forms).
fn verdict(r: &VerifyReport) -> (bool, &Option<String>, &Option<String>, &Option<String>) {
    (r.valid, &r.key_fingerprint, &r.signer, &r.signing_time)
}

/// The input as the signature, with each fixture certificate.
fn as_signature(data: &[u8]) {
    let Some(k) = kind(data) else { return };
    let (file, flipped) = files();
    let binary = match k {
        Kind::Binary => Some(data.to_vec()),
        Kind::Armored => dearmor(data),
        Kind::Cleartext => None,
    };
    for f in &FIXTURES {
        let Ok(r) = verify_file(file, data, k, Some(f.cert)) else {
            continue;
        };
        if r.valid {
            // A cleartext message verifies a file only when it signs that file's text (apt's
            // InRelease over Release): the flipped file below must not verify.
            assert_eq!(r.key_fingerprint.as_deref(), Some(f.fingerprint));
            assert_eq!(r.signer.as_deref(), Some(f.uid));
            let other = verify_file(flipped, data, k, Some(f.cert)).expect("a report");
            assert!(
                !other.valid,
                "the signature verifies another file too: {}",
                other.detail
            );
        }
        match (k, &binary) {
            (Kind::Binary, _) => {
                let asc = armor(Block::Signature, data);
                assert_eq!(kind(asc.as_bytes()), Some(Kind::Armored));
                let a = verify_file(file, asc.as_bytes(), Kind::Armored, Some(f.cert))
                    .expect("a report");
                assert_eq!(
                    verdict(&a),
                    verdict(&r),
                    "armored: {}; binary: {}",
                    a.detail,
                    r.detail
                );
            }
            (Kind::Armored, Some(bin)) if r.valid => {
                assert_eq!(
                    kind(bin),
                    Some(Kind::Binary),
                    "an armored signature that verifies is not one once dearmored"
                );
                let b = verify_file(file, bin, Kind::Binary, Some(f.cert)).expect("a report");
                assert_eq!(verdict(&b), verdict(&r), "binary: {}", b.detail);
            }
            _ => {}
        }
    }
}

/// The input as the certificate, with each fixture signature.
fn as_certificate(data: &[u8]) {
    let (file, _) = files();
    let binary = dearmor(data);
    for f in &FIXTURES {
        let r = verify_file(file, f.sig, Kind::Binary, Some(data));
        if let Ok(r) = &r {
            if r.valid {
                assert_eq!(r.key_fingerprint.as_deref(), Some(f.fingerprint));
                assert_eq!(
                    r.signer.as_deref(),
                    Some(f.uid),
                    "verified naming a user ID the key never bound"
                );
            }
        }
        let other = match &binary {
            Some(bin) => verify_file(file, f.sig, Kind::Binary, Some(bin)),
            None if !data.starts_with(b"-----") => {
                let asc = armor(Block::PublicKey, data);
                verify_file(file, f.sig, Kind::Binary, Some(asc.as_bytes()))
            }
            None => continue,
        };
        match (&r, &other) {
            (Ok(a), Ok(b)) if binary.is_none() || a.valid => {
                assert_eq!(verdict(a), verdict(b), "{} / {}", a.detail, b.detail)
            }
            (Ok(a), Err(e)) if binary.is_none() || a.valid => {
                panic!("{} as given, refused in the other form: {e}", a.detail)
            }
            (Err(e), Ok(b)) if binary.is_none() => {
                panic!("refused as given ({e}), {} in the other form", b.detail)
            }
            _ => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    as_signature(data);
    as_certificate(data);
});
