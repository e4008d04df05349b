//! minisign (jedisct1/minisign) signatures made with an HSM Ed25519 key.
//!
//! - `minisign.pub`: an untrusted comment, then base64 of `"Ed" ‖ key ID (8) ‖ public key`.
//! - `FILE.minisig`: an untrusted comment; base64 of `"ED" ‖ key ID ‖ signature`, the
//!   prehashed form — Ed25519 over BLAKE2b-512 of the file; a trusted comment; base64 of
//!   the global signature, Ed25519 over `signature ‖ trusted comment`. Both by the HSM.
//!
//! minisign's own signer needs the secret key, so the files are written here; the check is
//! `minisign-verify` (its own BLAKE2b and Ed25519), another lineage than `blake2` and the
//! token. minisign compares only key IDs between the two files; the ID is derived from the
//! public key (the first 8 bytes of its SHA-256) so it never changes.

use base64::Engine;
use blake2::{Blake2b512, Digest};
use sha2::Sha256;

use hsm::algo::Curve;
use hsm::pubkey::PublicKey;

use crate::input::InputFile;
use crate::{Result, SignError};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// An HSM Ed25519 key as minisign knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinisignKey {
    pub public: [u8; 32],
    pub key_id: [u8; 8],
}

impl MinisignKey {
    /// Ed25519 keys only; any other is refused with the reason.
    pub fn new(pk: &PublicKey) -> Result<MinisignKey> {
        match pk {
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
                let h = Sha256::digest(public);
                Ok(MinisignKey {
                    public,
                    key_id: h[..8].try_into().expect("8 bytes"),
                })
            }
            other => Err(SignError::Unsupported(hsm::text!(
                "signing.minisign.ed25519_only",
                "minisign signs with Ed25519 keys only; this is a {{key}} key",
                key = other.algorithm()
            ))),
        }
    }

    /// The key ID as minisign prints it (the 8 bytes as a little-endian number, hex).
    pub fn key_id_hex(&self) -> String {
        format!("{:016X}", u64::from_le_bytes(self.key_id))
    }

    /// The `minisign.pub` file.
    pub fn public_key_file(&self) -> String {
        let mut bin = b"Ed".to_vec();
        bin.extend_from_slice(&self.key_id);
        bin.extend_from_slice(&self.public);
        format!(
            "untrusted comment: minisign public key {}\n{}\n",
            self.key_id_hex(),
            B64.encode(bin)
        )
    }
}

/// The trusted comment for a file signed at `time` (seconds since 1970), as minisign
/// writes it. A name with a control character (a newline would end the comment) is refused.
pub fn trusted_comment(file_name: &str, time: u64) -> Result<String> {
    if file_name.chars().any(char::is_control) {
        return Err(SignError::Unsupported(hsm::text!(
            "signing.minisign.control_character",
            "{{file}}: a minisign trusted comment is one line; the file name has a control character",
            file = format!("{file_name:?}")
        )));
    }
    Ok(format!("timestamp:{time}\tfile:{file_name}\thashed"))
}

/// BLAKE2b-512 of the file, read again and checked to be the file hashed before.
pub fn prehash(input: &InputFile, expected_sha256: &str) -> Result<[u8; 64]> {
    let mut h = Blake2b512::new();
    crate::reread::stream_same(input, expected_sha256, &mut |b| h.update(b))?;
    Ok(h.finalize().into())
}

/// The `.minisig` file for a file whose BLAKE2b-512 is `hash`. `sign` is the HSM's Ed25519
/// over a message (called twice: the hash, then signature ‖ trusted comment).
pub fn signature_file(
    key: &MinisignKey,
    hash: &[u8; 64],
    trusted: &str,
    sign: &mut dyn FnMut(&[u8]) -> Result<Vec<u8>>,
) -> Result<String> {
    if trusted.contains('\n') || trusted.contains('\r') {
        return Err(SignError::Format(hsm::text!(
            "signing.minisign.comment_one_line",
            "a trusted comment is one line"
        )));
    }
    let sig = sign(hash)?;
    if sig.len() != 64 {
        return Err(SignError::Format(hsm::text!(
            "signing.minisign.signature_length",
            "the token's Ed25519 signature has {{bytes}} bytes",
            bytes = sig.len()
        )));
    }
    let mut global_msg = sig.clone();
    global_msg.extend_from_slice(trusted.as_bytes());
    let global = sign(&global_msg)?;
    let mut bin = b"ED".to_vec();
    bin.extend_from_slice(&key.key_id);
    bin.extend_from_slice(&sig);
    Ok(format!(
        "untrusted comment: signature from an HSM key ({})\n{}\ntrusted comment: {trusted}\n{}\n",
        key.key_id_hex(),
        B64.encode(bin),
        B64.encode(global)
    ))
}

/// Whether a signature file looks like minisign's. Read as [`report`] reads it: minisign
/// takes any bytes in a comment (a Latin-1 untrusted comment verifies), so invalid UTF-8
/// does not make a minisign file something else.
pub fn is_signature(bytes: &[u8]) -> bool {
    let t = String::from_utf8_lossy(bytes);
    t.starts_with("untrusted comment:")
        && t.lines()
            .nth(2)
            .is_some_and(|l| l.starts_with("trusted comment: "))
}

/// Whether a key file looks like a `minisign.pub` (read as [`is_signature`] reads).
pub fn is_public_key(bytes: &[u8]) -> bool {
    let t = String::from_utf8_lossy(bytes);
    t.starts_with("untrusted comment:")
        && t.lines()
            .nth(1)
            .and_then(|l| B64.decode(l.trim()).ok())
            .is_some_and(|b| b.len() == 42 && b.starts_with(b"Ed"))
}

/// What a minisign signature that verified says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub key_id: String,
    pub trusted_comment: String,
}

/// Verify a `.minisig` over the file at `path` with a `minisign.pub`'s text, streaming
/// the file through `minisign-verify`.
pub fn verify_file(path: &std::path::Path, signature: &str, public_key: &str) -> Result<Verdict> {
    use std::io::Read;
    let pk = minisign_verify::PublicKey::decode(public_key).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.minisign.not_public_key",
            "not a minisign public key: {{error}}",
            error = e
        ))
    })?;
    let sig = minisign_verify::Signature::decode(signature).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.minisign.not_signature",
            "not a minisign signature: {{error}}",
            error = e
        ))
    })?;
    let mut v = pk.verify_stream(&sig).map_err(|e| {
        SignError::Invalid(hsm::text!(
            "signing.minisign.does_not_verify",
            "the minisign signature does not verify: {{error}}",
            error = e
        ))
    })?;
    let mut f = std::fs::File::open(path).map_err(|e| SignError::Input {
        path: path.display().to_string(),
        reason: hsm::text!(
            "signing.input_unopenable",
            "cannot be opened: {{error}}",
            error = e
        ),
    })?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| SignError::Input {
            path: path.display().to_string(),
            reason: hsm::text!(
                "errors.inputs.unreadable",
                "cannot be read: {{error}}",
                error = e
            ),
        })?;
        if n == 0 {
            break;
        }
        v.update(&buf[..n]);
    }
    v.finalize().map_err(|e| {
        SignError::Invalid(hsm::text!(
            "signing.minisign.does_not_verify",
            "the minisign signature does not verify: {{error}}",
            error = e
        ))
    })?;
    let key_id = signature
        .lines()
        .nth(1)
        .and_then(|l| B64.decode(l.trim()).ok())
        .filter(|b| b.len() == 74)
        .map(|b| {
            format!(
                "{:016X}",
                u64::from_le_bytes(b[2..10].try_into().expect("8"))
            )
        })
        .unwrap_or_default();
    Ok(Verdict {
        key_id,
        trusted_comment: sig.trusted_comment().to_string(),
    })
}

/// `hsmc verify` and the Verify view: `file` against a `.minisig` with a `minisign.pub`.
pub fn report(
    file: &std::path::Path,
    signature: &[u8],
    public_key: Option<&[u8]>,
) -> Result<crate::verify::VerifyReport> {
    let pk = public_key.ok_or_else(|| {
        SignError::Format(hsm::text!(
            "signing.minisign.needs_public_key",
            "a minisign signature needs the signer's minisign.pub (--pub minisign.pub)"
        ))
    })?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut r = crate::verify::report(file, crate::verify::SignatureFormat::Minisign);
    r.algorithm = Some("Ed25519 (minisign, BLAKE2b-512 prehashed)".into());
    crate::input::check(file)?;
    match verify_file(file, &text(signature), &text(pk)) {
        Ok(v) => {
            r.valid = true;
            r.key_fingerprint = Some(format!("minisign key {}", v.key_id));
            r.signing_time = v
                .trusted_comment
                .split('\t')
                .find_map(|f| f.strip_prefix("timestamp:"))
                .and_then(|t| t.parse::<i64>().ok())
                .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
                .and_then(|t| {
                    t.format(&time::format_description::well_known::Rfc3339)
                        .ok()
                });
            r.detail = format!(
                "minisign signature and global signature verify; trusted comment: {}",
                v.trusted_comment
            );
        }
        Err(e) => r.detail = e.to_string(),
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::Signer;

    fn key() -> (ed25519_dalek::SigningKey, MinisignKey) {
        let sk = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
        let pk = PublicKey::Ec {
            curve: Curve::Ed25519,
            point: sk.verifying_key().to_bytes().to_vec(),
        };
        (sk, MinisignKey::new(&pk).unwrap())
    }

    #[test]
    fn a_signature_verifies_and_a_changed_file_or_comment_does_not() {
        let (sk, k) = key();
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("app.tar.gz");
        std::fs::write(&p, b"release bytes").unwrap();
        let input = crate::input::check(&p).unwrap();
        let sha = hex::encode(Sha256::digest(b"release bytes"));
        let hash = prehash(&input, &sha).unwrap();
        let tc = trusted_comment("app.tar.gz", 1_790_000_000).unwrap();
        let mut calls = 0;
        let text = signature_file(&k, &hash, &tc, &mut |m| {
            calls += 1;
            Ok(sk.sign(m).to_bytes().to_vec())
        })
        .unwrap();
        assert_eq!(calls, 2, "the signature and the global signature");
        let pubf = k.public_key_file();
        assert!(is_signature(text.as_bytes()) && is_public_key(pubf.as_bytes()));
        assert!(!is_public_key(text.as_bytes()));
        let v = verify_file(&p, &text, &pubf).unwrap();
        assert_eq!(v.trusted_comment, tc);
        assert_eq!(v.key_id, k.key_id_hex());
        assert!(pubf.starts_with(&format!(
            "untrusted comment: minisign public key {}\n",
            k.key_id_hex()
        )));
        // A changed trusted comment breaks the global signature.
        let forged = text.replace("file:app.tar.gz", "file:app.tar.gx");
        assert!(verify_file(&p, &forged, &pubf).is_err());
        std::fs::write(&p, b"release bytez").unwrap();
        assert!(verify_file(&p, &text, &pubf).is_err());
    }

    /// Found by the minisign fuzz target: a signature whose untrusted comment is not UTF-8
    /// verified but was not recognised as minisign's, so `hsmc verify` sent it elsewhere.
    #[test]
    fn a_comment_that_is_not_utf8_is_still_minisign() {
        let (sk, k) = key();
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("app.bin");
        std::fs::write(&p, b"release bytes").unwrap();
        let input = crate::input::check(&p).unwrap();
        let hash = prehash(&input, &hex::encode(Sha256::digest(b"release bytes"))).unwrap();
        let tc = trusted_comment("app.bin", 1_790_000_000).unwrap();
        let text =
            signature_file(&k, &hash, &tc, &mut |m| Ok(sk.sign(m).to_bytes().to_vec())).unwrap();
        let (_, rest) = text.split_once('\n').unwrap();
        let mut latin1 = b"untrusted comment: sign\xe9 par le HSM\n".to_vec();
        latin1.extend_from_slice(rest.as_bytes());
        assert!(is_signature(&latin1));
        let r = report(&p, &latin1, Some(k.public_key_file().as_bytes())).unwrap();
        assert!(r.valid, "{}", r.detail);
        let mut key_file = b"untrusted comment: cl\xe9\n".to_vec();
        key_file.extend_from_slice(k.public_key_file().split_once('\n').unwrap().1.as_bytes());
        assert!(is_public_key(&key_file));
    }

    #[test]
    fn only_ed25519_keys_and_one_line_names() {
        let e = MinisignKey::new(&PublicKey::Ec {
            curve: Curve::P256,
            point: vec![4; 65],
        })
        .unwrap_err();
        assert!(e.to_string().contains("Ed25519 keys only"), "{e}");
        assert!(trusted_comment("a\nb", 1).is_err());
        // The ID comes from the key: the same key, the same ID.
        assert_eq!(key().1, key().1);
    }
}
