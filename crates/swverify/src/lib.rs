//! Independent software verifiers.
//!
//! The tokens the console drives sign with OpenSSL (Kryoptic, SoftHSM2) or with lunasim's
//! own HSS signer. Checking a signature with the library that made it proves nothing, so
//! every signature the console writes is first checked here, with RustCrypto
//! implementations: `ml-dsa`, `slh-dsa`, `p256`/`p384`, `ed25519-dalek`, `rsa`, and `lms-signature` plus
//! the RFC 8554 §6.3 HSS layer written below (the crate verifies single LMS trees only; a
//! message streamed from a large file is checked by this crate's RFC 8554 code). Nothing
//! here shares code with lunasim.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    /// The public key bytes are not a key of the stated algorithm.
    #[error("the public key is malformed: {0}")]
    BadKey(String),
    /// The signature is not even well-formed for the algorithm.
    #[error("the signature is malformed: {0}")]
    BadSignature(String),
    /// Well-formed, and wrong: the artifact or the signature has been altered, or it was
    /// made by another key.
    #[error("the signature does not match the data and the public key")]
    Mismatch,
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A streamed message could not be read to its end.
    #[error("the message could not be read: {0}")]
    Read(String),
}

pub type Result<T> = std::result::Result<T, VerifyError>;

fn verdict(ok: bool) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}

/// ML-DSA (FIPS 204) parameter sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MlDsa {
    P44,
    P65,
    P87,
}

impl MlDsa {
    pub fn public_key_len(self) -> usize {
        match self {
            MlDsa::P44 => 1312,
            MlDsa::P65 => 1952,
            MlDsa::P87 => 2592,
        }
    }
    pub fn signature_len(self) -> usize {
        match self {
            MlDsa::P44 => 2420,
            MlDsa::P65 => 3309,
            MlDsa::P87 => 4627,
        }
    }
}

/// Pure ML-DSA over the message itself, with a context string (empty for none).
pub fn ml_dsa(
    set: MlDsa,
    public_key: &[u8],
    message: &[u8],
    context: &[u8],
    signature: &[u8],
) -> Result<()> {
    fn go<P: ml_dsa::MlDsaParams>(pk: &[u8], m: &[u8], ctx: &[u8], sig: &[u8]) -> Result<()> {
        let enc: ml_dsa::EncodedVerifyingKey<P> = pk
            .try_into()
            .map_err(|_| VerifyError::BadKey(format!("{} bytes", pk.len())))?;
        let vk = ml_dsa::VerifyingKey::<P>::decode(&enc);
        let es: ml_dsa::EncodedSignature<P> = sig
            .try_into()
            .map_err(|_| VerifyError::BadSignature(format!("{} bytes", sig.len())))?;
        let s = ml_dsa::Signature::<P>::decode(&es)
            .ok_or_else(|| VerifyError::BadSignature("does not decode".into()))?;
        if ctx.len() > 255 {
            return Err(VerifyError::Unsupported(
                "ML-DSA contexts are at most 255 bytes".into(),
            ));
        }
        verdict(vk.verify_with_context(m, ctx, &s))
    }
    match set {
        MlDsa::P44 => go::<ml_dsa::MlDsa44>(public_key, message, context, signature),
        MlDsa::P65 => go::<ml_dsa::MlDsa65>(public_key, message, context, signature),
        MlDsa::P87 => go::<ml_dsa::MlDsa87>(public_key, message, context, signature),
    }
}

/// [`ml_dsa`] over a message read from `message` to its end (a file of any size, none of it
/// kept): μ from RustCrypto's `compute_mu`, then its `verify_mu`.
pub fn ml_dsa_reader(
    set: MlDsa,
    public_key: &[u8],
    message: &mut dyn std::io::Read,
    context: &[u8],
    signature: &[u8],
) -> Result<()> {
    fn go<P: ml_dsa::MlDsaParams>(
        pk: &[u8],
        m: &mut dyn std::io::Read,
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<()> {
        let enc: ml_dsa::EncodedVerifyingKey<P> = pk
            .try_into()
            .map_err(|_| VerifyError::BadKey(format!("{} bytes", pk.len())))?;
        let vk = ml_dsa::VerifyingKey::<P>::decode(&enc);
        let es: ml_dsa::EncodedSignature<P> = sig
            .try_into()
            .map_err(|_| VerifyError::BadSignature(format!("{} bytes", sig.len())))?;
        let s = ml_dsa::Signature::<P>::decode(&es)
            .ok_or_else(|| VerifyError::BadSignature("does not decode".into()))?;
        if ctx.len() > 255 {
            return Err(VerifyError::Unsupported(
                "ML-DSA contexts are at most 255 bytes".into(),
            ));
        }
        let mut read_error = None;
        let mu = vk
            .compute_mu(
                |shake| {
                    let mut buf = vec![0u8; 1 << 20];
                    loop {
                        match m.read(&mut buf) {
                            Ok(0) => return Ok(()),
                            Ok(n) => ml_dsa::signature::digest::Update::update(shake, &buf[..n]),
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(e) => {
                                read_error = Some(e.to_string());
                                return Err(ml_dsa::Error::new());
                            }
                        }
                    }
                },
                ctx,
            )
            .map_err(|_| match read_error.take() {
                Some(e) => VerifyError::Read(e),
                None => VerifyError::Unsupported("ML-DSA context".into()),
            })?;
        verdict(vk.verify_mu(&mu, &s))
    }
    match set {
        MlDsa::P44 => go::<ml_dsa::MlDsa44>(public_key, message, context, signature),
        MlDsa::P65 => go::<ml_dsa::MlDsa65>(public_key, message, context, signature),
        MlDsa::P87 => go::<ml_dsa::MlDsa87>(public_key, message, context, signature),
    }
}

/// [`ed25519`] over a message read from `message` to its end (PureEdDSA's hash of R, A and
/// the message, streamed: none of the message kept). Keys of small order are refused, as
/// `verify_strict` refuses them.
pub fn ed25519_reader(
    public_key: &[u8],
    message: &mut dyn std::io::Read,
    signature: &[u8],
) -> Result<()> {
    let (vk, sig) = ed25519_parts(public_key, signature)?;
    if vk.is_weak() {
        return Err(VerifyError::BadKey("a key of small order".into()));
    }
    let Ok(mut v) = vk.verify_stream(&sig) else {
        return Err(VerifyError::Mismatch);
    };
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match message.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => v.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(VerifyError::Read(e.to_string())),
        }
    }
    verdict(v.finalize_and_verify().is_ok())
}

/// ECDSA signature encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EcdsaEncoding {
    /// `r ‖ s`, as PKCS#11 returns it.
    Raw,
    /// DER `SEQUENCE { r INTEGER, s INTEGER }`, as OpenSSL and X.509/CMS expect.
    Der,
}

/// ECDSA P-256 with SHA-256 over the message. `public_key` is a SEC1 point.
pub fn ecdsa_p256_sha256(
    public_key: &[u8],
    message: &[u8],
    signature: &[u8],
    enc: EcdsaEncoding,
) -> Result<()> {
    use p256::ecdsa::signature::Verifier;
    let vk = p256::ecdsa::VerifyingKey::from_sec1_bytes(public_key)
        .map_err(|e| VerifyError::BadKey(e.to_string()))?;
    let sig = match enc {
        EcdsaEncoding::Raw => p256::ecdsa::Signature::from_slice(signature),
        EcdsaEncoding::Der => p256::ecdsa::Signature::from_der(signature),
    }
    .map_err(|e| VerifyError::BadSignature(e.to_string()))?;
    verdict(vk.verify(message, &sig).is_ok())
}

/// ECDSA P-256 over a SHA-256 digest the caller computed (`CKM_ECDSA` on the token).
pub fn ecdsa_p256_prehash(
    public_key: &[u8],
    digest: &[u8],
    signature: &[u8],
    enc: EcdsaEncoding,
) -> Result<()> {
    use p256::ecdsa::signature::hazmat::PrehashVerifier;
    let vk = p256::ecdsa::VerifyingKey::from_sec1_bytes(public_key)
        .map_err(|e| VerifyError::BadKey(e.to_string()))?;
    let sig = match enc {
        EcdsaEncoding::Raw => p256::ecdsa::Signature::from_slice(signature),
        EcdsaEncoding::Der => p256::ecdsa::Signature::from_der(signature),
    }
    .map_err(|e| VerifyError::BadSignature(e.to_string()))?;
    verdict(vk.verify_prehash(digest, &sig).is_ok())
}

/// ECDSA P-384 with SHA-384 over the message.
pub fn ecdsa_p384_sha384(
    public_key: &[u8],
    message: &[u8],
    signature: &[u8],
    enc: EcdsaEncoding,
) -> Result<()> {
    use p384::ecdsa::signature::Verifier;
    let vk = p384::ecdsa::VerifyingKey::from_sec1_bytes(public_key)
        .map_err(|e| VerifyError::BadKey(e.to_string()))?;
    let sig = match enc {
        EcdsaEncoding::Raw => p384::ecdsa::Signature::from_slice(signature),
        EcdsaEncoding::Der => p384::ecdsa::Signature::from_der(signature),
    }
    .map_err(|e| VerifyError::BadSignature(e.to_string()))?;
    verdict(vk.verify(message, &sig).is_ok())
}

/// ECDSA P-384 over a SHA-384 digest.
pub fn ecdsa_p384_prehash(
    public_key: &[u8],
    digest: &[u8],
    signature: &[u8],
    enc: EcdsaEncoding,
) -> Result<()> {
    use p384::ecdsa::signature::hazmat::PrehashVerifier;
    let vk = p384::ecdsa::VerifyingKey::from_sec1_bytes(public_key)
        .map_err(|e| VerifyError::BadKey(e.to_string()))?;
    let sig = match enc {
        EcdsaEncoding::Raw => p384::ecdsa::Signature::from_slice(signature),
        EcdsaEncoding::Der => p384::ecdsa::Signature::from_der(signature),
    }
    .map_err(|e| VerifyError::BadSignature(e.to_string()))?;
    verdict(vk.verify_prehash(digest, &sig).is_ok())
}

/// Convert a raw `r ‖ s` ECDSA signature to DER.
pub fn ecdsa_raw_to_der(curve_bytes: usize, raw: &[u8]) -> Result<Vec<u8>> {
    match curve_bytes {
        32 => p256::ecdsa::Signature::from_slice(raw)
            .map(|s| s.to_der().as_bytes().to_vec())
            .map_err(|e| VerifyError::BadSignature(e.to_string())),
        48 => p384::ecdsa::Signature::from_slice(raw)
            .map(|s| s.to_der().as_bytes().to_vec())
            .map_err(|e| VerifyError::BadSignature(e.to_string())),
        n => Err(VerifyError::Unsupported(format!(
            "ECDSA with {n}-byte scalars"
        ))),
    }
}

/// Pure Ed25519 (RFC 8032), strict verification. An Ed25519ph signature fails here.
pub fn ed25519(public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<()> {
    let (vk, sig) = ed25519_parts(public_key, signature)?;
    verdict(vk.verify_strict(message, &sig).is_ok())
}

/// An Ed25519 public key (32 bytes) and signature (64 bytes), decoded.
fn ed25519_parts(
    public_key: &[u8],
    signature: &[u8],
) -> Result<(ed25519_dalek::VerifyingKey, ed25519_dalek::Signature)> {
    let pk: [u8; 32] = public_key
        .try_into()
        .map_err(|_| VerifyError::BadKey(format!("{} bytes", public_key.len())))?;
    let vk = ed25519_dalek::VerifyingKey::from_bytes(&pk)
        .map_err(|e| VerifyError::BadKey(e.to_string()))?;
    let sig: [u8; 64] = signature
        .try_into()
        .map_err(|_| VerifyError::BadSignature(format!("{} bytes", signature.len())))?;
    Ok((vk, ed25519_dalek::Signature::from_bytes(&sig)))
}

/// Hash functions for RSA-PSS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PssHash {
    Sha256,
    Sha384,
    Sha512,
}

/// RSA-PSS (RFC 8017) with MGF1 over the same hash, over the message: the message's
/// digest checked by [`rsa_pss_prehash`], which is what PSS verification is.
pub fn rsa_pss(
    modulus: &[u8],
    exponent: &[u8],
    hash: PssHash,
    salt_len: usize,
    message: &[u8],
    signature: &[u8],
) -> Result<()> {
    use sha2::Digest;
    let digest = match hash {
        PssHash::Sha256 => sha2::Sha256::digest(message).to_vec(),
        PssHash::Sha384 => sha2::Sha384::digest(message).to_vec(),
        PssHash::Sha512 => sha2::Sha512::digest(message).to_vec(),
    };
    rsa_pss_prehash(modulus, exponent, hash, salt_len, &digest, signature)
}

pub mod hss;
pub mod mlkem;
pub mod slh_dsa;

/// RSA-PSS over a digest the caller computed (for files too large to hold in memory).
pub fn rsa_pss_prehash(
    modulus: &[u8],
    exponent: &[u8],
    hash: PssHash,
    salt_len: usize,
    digest: &[u8],
    signature: &[u8],
) -> Result<()> {
    use rsa::signature::hazmat::PrehashVerifier;
    let bits = (modulus.len() * 8) as u32;
    let n = crypto_bigint::BoxedUint::from_be_slice(modulus, bits)
        .map_err(|e| VerifyError::BadKey(format!("{e:?}")))?;
    let e = crypto_bigint::BoxedUint::from_be_slice(exponent, (exponent.len() * 8).max(64) as u32)
        .map_err(|e| VerifyError::BadKey(format!("{e:?}")))?;
    let pk = rsa::PublicKey::new(n, e).map_err(|e| VerifyError::BadKey(e.to_string()))?;
    let sig = rsa::pss::Signature::try_from(signature)
        .map_err(|e| VerifyError::BadSignature(e.to_string()))?;
    let ok = match hash {
        PssHash::Sha256 => rsa::pss::VerifyingKey::<sha2::Sha256>::new_with_salt_len(pk, salt_len)
            .verify_prehash(digest, &sig)
            .is_ok(),
        PssHash::Sha384 => rsa::pss::VerifyingKey::<sha2::Sha384>::new_with_salt_len(pk, salt_len)
            .verify_prehash(digest, &sig)
            .is_ok(),
        PssHash::Sha512 => rsa::pss::VerifyingKey::<sha2::Sha512>::new_with_salt_len(pk, salt_len)
            .verify_prehash(digest, &sig)
            .is_ok(),
    };
    verdict(ok)
}

/// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2) over a digest the caller computed: how most
/// time-stamp authorities and CAs sign (`sha256WithRSAEncryption`).
pub fn rsa_pkcs1v15_prehash(
    modulus: &[u8],
    exponent: &[u8],
    hash: PssHash,
    digest: &[u8],
    signature: &[u8],
) -> Result<()> {
    use rsa::signature::hazmat::PrehashVerifier;
    let bits = (modulus.len() * 8) as u32;
    let n = crypto_bigint::BoxedUint::from_be_slice(modulus, bits)
        .map_err(|e| VerifyError::BadKey(format!("{e:?}")))?;
    let e = crypto_bigint::BoxedUint::from_be_slice(exponent, (exponent.len() * 8).max(64) as u32)
        .map_err(|e| VerifyError::BadKey(format!("{e:?}")))?;
    let pk = rsa::PublicKey::new(n, e).map_err(|e| VerifyError::BadKey(e.to_string()))?;
    let sig = rsa::pkcs1v15::Signature::try_from(signature)
        .map_err(|e| VerifyError::BadSignature(e.to_string()))?;
    let ok = match hash {
        PssHash::Sha256 => rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(pk)
            .verify_prehash(digest, &sig)
            .is_ok(),
        PssHash::Sha384 => rsa::pkcs1v15::VerifyingKey::<sha2::Sha384>::new(pk)
            .verify_prehash(digest, &sig)
            .is_ok(),
        PssHash::Sha512 => rsa::pkcs1v15::VerifyingKey::<sha2::Sha512>::new(pk)
            .verify_prehash(digest, &sig)
            .is_ok(),
    };
    verdict(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_rejected_not_panicking() {
        assert!(matches!(
            ml_dsa(MlDsa::P65, &[0u8; 10], b"m", b"", &[0u8; 3309]),
            Err(VerifyError::BadKey(_))
        ));
        assert!(matches!(
            ed25519(&[0u8; 31], b"m", &[0u8; 64]),
            Err(VerifyError::BadKey(_))
        ));
        assert!(ecdsa_p256_sha256(&[4u8; 65], b"m", &[0u8; 64], EcdsaEncoding::Raw).is_err());
        assert!(rsa_pss(
            &[0xFF; 256],
            &[1, 0, 1],
            PssHash::Sha256,
            32,
            b"m",
            &[0u8; 256]
        )
        .is_err());
    }

    #[test]
    fn ed25519_rfc8032_test_vector_1() {
        // RFC 8032 §7.1, TEST 1 (empty message).
        let pk = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        let sig = hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
        assert_eq!(ed25519(&pk, b"", &sig), Ok(()));
        assert_eq!(ed25519(&pk, b"x", &sig), Err(VerifyError::Mismatch));
        assert_eq!(ed25519_reader(&pk, &mut &b""[..], &sig), Ok(()));
        // TEST 3 (message af82), the message read in two parts.
        let pk3 = hex("fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025");
        let sig3 = hex("6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a");
        assert_eq!(ed25519(&pk3, &[0xaf, 0x82], &sig3), Ok(()));
        let mut parts = std::io::Read::chain(&[0xafu8][..], &[0x82u8][..]);
        assert_eq!(ed25519_reader(&pk3, &mut parts, &sig3), Ok(()));
        let mut other = std::io::Read::chain(&[0xafu8][..], &[0x83u8][..]);
        assert_eq!(
            ed25519_reader(&pk3, &mut other, &sig3),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            ed25519_reader(&pk, &mut &b"x"[..], &sig),
            Err(VerifyError::Mismatch)
        );
    }

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
