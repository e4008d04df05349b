//! SLH-DSA (FIPS 205), pure mode, with RustCrypto's `slh-dsa`: the software check of what a
//! token signed, of another lineage than the OpenSSL inside Kryoptic.

use crate::{verdict, Result, VerifyError};

/// The twelve parameter sets of FIPS 205 Table 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlhDsa {
    Sha2_128s,
    Shake128s,
    Sha2_128f,
    Shake128f,
    Sha2_192s,
    Shake192s,
    Sha2_192f,
    Shake192f,
    Sha2_256s,
    Shake256s,
    Sha2_256f,
    Shake256f,
}

/// Pure SLH-DSA over the message itself, with a context string (empty for none).
pub fn verify(
    set: SlhDsa,
    public_key: &[u8],
    message: &[u8],
    context: &[u8],
    signature: &[u8],
) -> Result<()> {
    fn go<P: ParameterSet>(pk: &[u8], m: &[u8], ctx: &[u8], sig: &[u8]) -> Result<()> {
        let vk = VerifyingKey::<P>::try_from(pk)
            .map_err(|_| VerifyError::BadKey(format!("{} bytes", pk.len())))?;
        let s = Signature::<P>::try_from(sig)
            .map_err(|_| VerifyError::BadSignature(format!("{} bytes", sig.len())))?;
        if ctx.len() > 255 {
            return Err(VerifyError::Unsupported(
                "SLH-DSA contexts are at most 255 bytes".into(),
            ));
        }
        verdict(vk.try_verify_with_context(m, ctx, &s).is_ok())
    }
    use slh_dsa::*;
    let (pk, m, c, s) = (public_key, message, context, signature);
    match set {
        SlhDsa::Sha2_128s => go::<Sha2_128s>(pk, m, c, s),
        SlhDsa::Shake128s => go::<Shake128s>(pk, m, c, s),
        SlhDsa::Sha2_128f => go::<Sha2_128f>(pk, m, c, s),
        SlhDsa::Shake128f => go::<Shake128f>(pk, m, c, s),
        SlhDsa::Sha2_192s => go::<Sha2_192s>(pk, m, c, s),
        SlhDsa::Shake192s => go::<Shake192s>(pk, m, c, s),
        SlhDsa::Sha2_192f => go::<Sha2_192f>(pk, m, c, s),
        SlhDsa::Shake192f => go::<Shake192f>(pk, m, c, s),
        SlhDsa::Sha2_256s => go::<Sha2_256s>(pk, m, c, s),
        SlhDsa::Shake256s => go::<Shake256s>(pk, m, c, s),
        SlhDsa::Sha2_256f => go::<Sha2_256f>(pk, m, c, s),
        SlhDsa::Shake256f => go::<Shake256f>(pk, m, c, s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slh_dsa::signature::{Keypair, Signer};

    /// A signature made by the crate's own signer verifies, and fails on another message,
    /// another context, a flipped signature bit and a key of the wrong length. (The
    /// signatures the console checks come from tokens; this pins the wiring per set.)
    #[test]
    fn verdicts_follow_the_message_context_and_key() {
        let sk = slh_dsa::SigningKey::<slh_dsa::Shake128f>::slh_keygen_internal(
            &[1; 16], &[2; 16], &[3; 16],
        );
        let pk = sk.verifying_key().to_vec();
        let sig = sk.try_sign(b"release").unwrap().to_vec();
        verify(SlhDsa::Shake128f, &pk, b"release", b"", &sig).unwrap();
        assert_eq!(
            verify(SlhDsa::Shake128f, &pk, b"releasE", b"", &sig),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            verify(SlhDsa::Shake128f, &pk, b"release", b"ctx", &sig),
            Err(VerifyError::Mismatch)
        );
        let mut bad = sig.clone();
        bad[100] ^= 1;
        assert_eq!(
            verify(SlhDsa::Shake128f, &pk, b"release", b"", &bad),
            Err(VerifyError::Mismatch)
        );
        assert!(matches!(
            verify(SlhDsa::Sha2_192f, &pk, b"release", b"", &sig),
            Err(VerifyError::BadKey(_))
        ));
    }
}
