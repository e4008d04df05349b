//! SSH with HSM keys: OpenSSH public key lines, `allowed_signers` lines and SSHSIG
//! signatures (OpenSSH's PROTOCOL.sshsig, what `ssh-keygen -Y sign` writes and git uses for
//! `gpg.format ssh`), for Ed25519 and ECDSA P-256 keys.
//!
//! An SSHSIG signs `"SSHSIG" ‖ string(namespace) ‖ string("") ‖ string("sha512") ‖
//! string(SHA-512 of the message)`: the file's SHA-512 the batch already computed is all it
//! needs, so the file is not read again. The token signs that blob as the key's SSH
//! algorithm does: Ed25519 the blob itself (`CKM_EDDSA`), `ecdsa-sha2-nistp256` its SHA-256
//! (`CKM_ECDSA`), the signature carried as SSH's `mpint r ‖ mpint s`.
//!
//! The encodings are RustCrypto's `ssh-key`; the software check of the token's signature is
//! `ssh-key`'s verifier (ed25519-dalek, p256) over the signed blob, before anything is
//! written. The tests of record are OpenSSH's own `ssh-keygen -Y verify` and git's
//! `verify-commit` (crates/cli/tests/cli/hsmc.rs).

use der::asn1::UintRef;
use der::{Decode, Sequence};
use ssh_key::encoding::Encode;
use ssh_key::public::{EcdsaPublicKey, Ed25519PublicKey, KeyData};
use ssh_key::{Algorithm, EcdsaCurve, HashAlg, LineEnding, Mpint, Signature, SshSig};

use hsm::algo::Curve;
use hsm::pubkey::PublicKey;

use crate::{Result, SignError};

/// The namespace of file signatures (`ssh-keygen -Y sign -n file`).
pub const FILE_NAMESPACE: &str = "file";
/// The namespace git signs commits and tags in.
pub const GIT_NAMESPACE: &str = "git";

/// An HSM key as SSH knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshKey {
    data: KeyData,
}

fn format_error(e: impl std::fmt::Display) -> SignError {
    SignError::Format(hsm::text!(
        "signing.ssh.encoding",
        "SSH encoding: {{error}}",
        error = e
    ))
}

impl SshKey {
    /// Ed25519 and ECDSA P-256 keys only; any other is refused with the reason.
    pub fn new(pk: &PublicKey) -> Result<SshKey> {
        let data = match pk {
            PublicKey::Ec {
                curve: Curve::Ed25519,
                point,
            } => {
                let public: [u8; 32] = point.as_slice().try_into().map_err(|_| {
                    SignError::Format(hsm::text!(
                        "signing.ed25519_key_length",
                        "an Ed25519 key is 32 bytes"
                    ))
                })?;
                KeyData::Ed25519(Ed25519PublicKey(public))
            }
            PublicKey::Ec {
                curve: Curve::P256,
                point,
            } => KeyData::Ecdsa(EcdsaPublicKey::from_sec1_bytes(point).map_err(format_error)?),
            other => {
                return Err(SignError::Unsupported(hsm::text!(
                    "signing.ssh.unsupported_key",
                    "SSH signs with Ed25519 and ECDSA P-256 keys only; this is a {{key}} key",
                    key = other.algorithm()
                )))
            }
        };
        Ok(SshKey { data })
    }

    /// A public key as OpenSSH writes it (`ssh-ed25519 AAAA… comment`, a `key::` literal
    /// as git's `user.signingkey` takes it, or the first key line of a file), with any
    /// comment and options before it ignored.
    pub fn parse(text: &str) -> Result<SshKey> {
        let not_a_key = || {
            SignError::Format(hsm::text!(
                "signing.ssh.not_a_public_key",
                "not an OpenSSH public key (ssh-ed25519 or ecdsa-sha2-nistp256 AAAA…)"
            ))
        };
        for line in text.lines() {
            let line = line.trim();
            let line = line.strip_prefix("key::").unwrap_or(line);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            // `type base64 [comment]`, possibly after a principal and options
            // (an allowed_signers or authorized_keys line).
            let Some(i) = words
                .iter()
                .position(|w| *w == "ssh-ed25519" || w.starts_with("ecdsa-sha2-"))
            else {
                continue;
            };
            let candidate = words[i..]
                .iter()
                .take(2)
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            let k = ssh_key::PublicKey::from_openssh(&candidate).map_err(|_| not_a_key())?;
            return Ok(SshKey {
                data: k.key_data().clone(),
            });
        }
        Err(not_a_key())
    }

    /// `ssh-ed25519` or `ecdsa-sha2-nistp256`.
    pub fn algorithm_name(&self) -> String {
        self.data.algorithm().to_string()
    }

    /// `SHA256:…`, as `ssh-keygen -l` prints it.
    pub fn fingerprint(&self) -> String {
        self.data.fingerprint(HashAlg::Sha256).to_string()
    }

    /// The OpenSSH public key line: `ssh-ed25519 AAAA… comment` (no comment when empty).
    pub fn public_key_line(&self, comment: &str) -> Result<String> {
        if comment.chars().any(char::is_control) {
            return Err(SignError::Unsupported(hsm::text!(
                "signing.ssh.comment_one_line",
                "an SSH key's comment is one line of text"
            )));
        }
        ssh_key::PublicKey::new(self.data.clone(), comment.trim())
            .to_openssh()
            .map_err(format_error)
    }

    /// An `allowed_signers` line (ssh-keygen(1), ALLOWED SIGNERS): `PRINCIPAL
    /// namespaces="…" KEY`. The principal (an e-mail address, by convention) and the
    /// namespaces (comma-separated) are refused when they would not read back as one field.
    pub fn allowed_signers_line(&self, principal: &str, namespaces: &str) -> Result<String> {
        let bad = |s: &str| {
            s.is_empty()
                || s.chars()
                    .any(|c| c.is_whitespace() || c.is_control() || c == '"')
        };
        if bad(principal) || principal.starts_with('#') {
            return Err(SignError::Unsupported(hsm::text!(
                "signing.ssh.bad_principal",
                "'{{principal}}' cannot be an allowed_signers principal: one word, without spaces or quotes, e.g. release@example.org",
                principal = principal
            )));
        }
        if bad(namespaces) {
            return Err(SignError::Unsupported(hsm::text!(
                "signing.ssh.bad_namespaces",
                "'{{namespaces}}' cannot be a list of namespaces: names separated by commas, without spaces or quotes, e.g. git,file",
                namespaces = namespaces
            )));
        }
        Ok(format!(
            "{principal} namespaces=\"{namespaces}\" {}",
            self.public_key_line("")?
        ))
    }

    /// The hash the token signs for this key's SSH algorithm: none for Ed25519 (the blob
    /// itself), SHA-256 for `ecdsa-sha2-nistp256`.
    pub fn is_ecdsa(&self) -> bool {
        matches!(self.data, KeyData::Ecdsa(_))
    }
}

/// The blob an SSHSIG signs, for a message whose SHA-512 is `sha512`.
pub fn signed_data(namespace: &str, sha512: &[u8]) -> Result<Vec<u8>> {
    SshSig::signed_data_for_prehash(namespace, HashAlg::Sha512, sha512).map_err(format_error)
}

#[derive(Sequence)]
struct DerSignature<'a> {
    r: UintRef<'a>,
    s: UintRef<'a>,
}

/// The token's signature as SSH carries it: Ed25519's 64 bytes as they are; ECDSA (DER, as
/// `SigAlg::sign` returns it) as `mpint r ‖ mpint s`.
fn ssh_signature(key: &SshKey, token_signature: &[u8]) -> Result<Signature> {
    match &key.data {
        KeyData::Ed25519(_) => {
            Signature::new(Algorithm::Ed25519, token_signature).map_err(format_error)
        }
        _ => {
            let d = DerSignature::from_der(token_signature).map_err(format_error)?;
            let mut blob = Vec::new();
            for part in [d.r, d.s] {
                Mpint::from_positive_bytes(part.as_bytes())
                    .encode(&mut blob)
                    .map_err(format_error)?;
            }
            Signature::new(
                Algorithm::Ecdsa {
                    curve: EcdsaCurve::NistP256,
                },
                blob,
            )
            .map_err(format_error)
        }
    }
}

/// The armored SSHSIG (`-----BEGIN SSH SIGNATURE-----`) for a message whose SHA-512 is
/// `sha512`. `sign` is the HSM signing the blob from [`signed_data`] with the key's
/// scheme (Ed25519: the blob; ECDSA P-256: its SHA-256, DER out). The signature is checked
/// in software before it is returned.
pub fn signature_file(
    key: &SshKey,
    namespace: &str,
    sha512: &[u8],
    sign: &mut dyn FnMut(&[u8]) -> Result<Vec<u8>>,
) -> Result<String> {
    let blob = signed_data(namespace, sha512)?;
    let sig = ssh_signature(key, &sign(&blob)?)?;
    let sshsig =
        SshSig::new(key.data.clone(), namespace, HashAlg::Sha512, sig).map_err(format_error)?;
    verify_prehash(key, namespace, sha512, &sshsig).map_err(SignError::into_self_check)?;
    sshsig.to_pem(LineEnding::LF).map_err(format_error)
}

fn verify_prehash(key: &SshKey, namespace: &str, sha512: &[u8], sig: &SshSig) -> Result<()> {
    ssh_key::PublicKey::new(key.data.clone(), "")
        .verify_prehash(namespace, sha512, sig)
        .map_err(|e| {
            SignError::Invalid(hsm::text!(
                "signing.ssh.does_not_verify",
                "the SSH signature does not verify: {{error}}",
                error = e
            ))
        })
}

/// Check an armored SSHSIG over a message whose SHA-512 is `sha512` with `key`, in
/// `namespace`.
pub fn verify(key: &SshKey, namespace: &str, sha512: &[u8], armored: &str) -> Result<()> {
    let sig = SshSig::from_pem(armored).map_err(format_error)?;
    verify_prehash(key, namespace, sha512, &sig)
}

/// Whether a signature file is an armored SSHSIG.
pub fn is_signature(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes)
        .trim_start()
        .starts_with("-----BEGIN SSH SIGNATURE-----")
}

/// The signer's key from a `--pub` file: an OpenSSH public key line, an `allowed_signers`
/// line, or a PEM public key.
fn key_from_file(bytes: &[u8]) -> Result<SshKey> {
    let text = String::from_utf8_lossy(bytes);
    if text.contains("-----BEGIN PUBLIC KEY-----") {
        let pk = PublicKey::from_spki_pem(&text).map_err(crate::unusable_key)?;
        return SshKey::new(&pk);
    }
    SshKey::parse(&text)
}

/// `hsmc verify` and the Verify view: `file` against an SSHSIG made in the namespace `file`
/// (as `hsmc sign --format sshsig` writes it), with the signer's public key.
pub fn report(
    file: &std::path::Path,
    signature: &[u8],
    public_key: Option<&[u8]>,
) -> Result<crate::verify::VerifyReport> {
    let pk = public_key.ok_or_else(|| {
        SignError::Format(hsm::text!(
            "signing.ssh.needs_public_key",
            "an SSH signature needs the signer's public key (--pub KEY.pub: its OpenSSH line, allowed_signers line or PEM)"
        ))
    })?;
    let key = key_from_file(pk)?;
    let mut r = crate::verify::report(file, crate::verify::SignatureFormat::Sshsig);
    r.algorithm = Some(format!("{} (SSHSIG, SHA-512)", key.algorithm_name()));
    r.key_fingerprint = Some(key.fingerprint());
    let input = crate::input::check(file)?;
    let digests = crate::hashing::hash_file(
        &input,
        &[crate::alg::DigestAlg::Sha512],
        &|_| {},
        &std::sync::atomic::AtomicBool::new(false),
    )?;
    let sha512 = digests
        .get(crate::alg::DigestAlg::Sha512)
        .unwrap_or_default();
    match verify(
        &key,
        FILE_NAMESPACE,
        &sha512,
        &String::from_utf8_lossy(signature),
    ) {
        Ok(()) => {
            r.valid = true;
            r.detail = format!(
                "SSH signature in the namespace \"file\" verifies with {}",
                key.fingerprint()
            );
        }
        Err(e) => r.detail = e.to_string(),
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256, Sha512};

    fn ed25519() -> (ed25519_dalek::SigningKey, SshKey) {
        let sk = ed25519_dalek::SigningKey::from_bytes(&[9u8; 32]);
        let pk = PublicKey::Ec {
            curve: Curve::Ed25519,
            point: sk.verifying_key().to_bytes().to_vec(),
        };
        (sk, SshKey::new(&pk).unwrap())
    }

    fn p256() -> (p256::ecdsa::SigningKey, SshKey) {
        let sk = p256::ecdsa::SigningKey::from_slice(&[5u8; 32]).unwrap();
        let point = sk.verifying_key().to_sec1_point(false).as_bytes().to_vec();
        let pk = PublicKey::Ec {
            curve: Curve::P256,
            point,
        };
        (sk, SshKey::new(&pk).unwrap())
    }

    #[test]
    fn ed25519_and_p256_signatures_verify_and_a_changed_message_does_not() {
        let msg = b"release bytes";
        let h = Sha512::digest(msg);
        let (sk, k) = ed25519();
        let mut calls = 0;
        let text = signature_file(&k, FILE_NAMESPACE, &h, &mut |m| {
            calls += 1;
            use ed25519_dalek::Signer;
            Ok(sk.sign(m).to_bytes().to_vec())
        })
        .unwrap();
        assert_eq!(calls, 1);
        assert!(
            text.starts_with("-----BEGIN SSH SIGNATURE-----\n"),
            "{text}"
        );
        verify(&k, FILE_NAMESPACE, &h, &text).unwrap();
        assert!(verify(&k, GIT_NAMESPACE, &h, &text).is_err());
        assert!(verify(&k, FILE_NAMESPACE, &Sha512::digest(b"other"), &text).is_err());

        // As hsmc verify reads it: the file, the .sshsig and the key's line.
        assert!(is_signature(text.as_bytes()));
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("app.bin");
        std::fs::write(&f, msg).unwrap();
        let line = k.public_key_line("k").unwrap();
        let r = report(&f, text.as_bytes(), Some(line.as_bytes())).unwrap();
        assert!(r.valid, "{}", r.detail);
        let (_, other) = p256();
        let other_line = other.public_key_line("").unwrap();
        assert!(
            !report(&f, text.as_bytes(), Some(other_line.as_bytes()))
                .unwrap()
                .valid
        );
        std::fs::write(&f, b"release bytez").unwrap();
        assert!(
            !report(&f, text.as_bytes(), Some(line.as_bytes()))
                .unwrap()
                .valid
        );
        assert!(report(&f, text.as_bytes(), None).is_err());

        let (sk, k) = p256();
        let text = signature_file(&k, GIT_NAMESPACE, &h, &mut |m| {
            use p256::ecdsa::signature::hazmat::PrehashSigner;
            let s: p256::ecdsa::Signature = sk.sign_prehash(&Sha256::digest(m)).unwrap();
            Ok(swverify::ecdsa_raw_to_der(32, &s.to_bytes()).unwrap())
        })
        .unwrap();
        verify(&k, GIT_NAMESPACE, &h, &text).unwrap();
        assert!(verify(&k, GIT_NAMESPACE, &Sha512::digest(b"other"), &text).is_err());
        // A signature from another key is caught before anything is written.
        let (other, _) = ed25519();
        let (_, k) = p256();
        let e = signature_file(&k, FILE_NAMESPACE, &h, &mut |m| {
            use ed25519_dalek::Signer;
            Ok(other.sign(m).to_bytes().to_vec())
        });
        assert!(e.is_err());
    }

    #[test]
    fn key_lines_round_trip_and_other_keys_are_refused() {
        let (_, k) = ed25519();
        let line = k.public_key_line("release key").unwrap();
        assert!(
            line.starts_with("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5"),
            "{line}"
        );
        assert!(line.ends_with(" release key"));
        assert_eq!(SshKey::parse(&line).unwrap(), k);
        assert_eq!(SshKey::parse(&format!("key::{line}")).unwrap(), k);
        let signers = k.allowed_signers_line("rel@example.org", "git").unwrap();
        assert!(signers.starts_with("rel@example.org namespaces=\"git\" ssh-ed25519 AAAA"));
        assert_eq!(SshKey::parse(&signers).unwrap(), k);
        assert!(k.allowed_signers_line("two words", "git").is_err());
        assert!(k.allowed_signers_line("a@b", "git file").is_err());
        assert!(k.public_key_line("a\nb").is_err());
        let (_, e) = p256();
        assert!(e
            .public_key_line("")
            .unwrap()
            .starts_with("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY"));
        assert_eq!(e.algorithm_name(), "ecdsa-sha2-nistp256");
        assert!(e.fingerprint().starts_with("SHA256:"));
        assert_ne!(SshKey::parse(&e.public_key_line("").unwrap()).unwrap(), k);
        assert!(SshKey::parse("not a key").is_err());
        let r = SshKey::new(&PublicKey::Ec {
            curve: Curve::P384,
            point: vec![4; 97],
        })
        .unwrap_err();
        assert!(
            r.to_string().contains("Ed25519 and ECDSA P-256 keys only"),
            "{r}"
        );
    }
}
