//! What the HSM signs for an OpenPGP signature, per algorithm: the digest itself for
//! EdDSALegacy (`CKM_EDDSA` — the digest is the Ed25519 message) and ECDSA (`CKM_ECDSA`),
//! the DigestInfo for RSA (`CKM_RSA_PKCS`, PKCS#1 v1.5).

use p11::sys::*;
use p11::{Mechanism, ObjectHandle, Session};

use super::{PgpAlgorithm, PgpHash};

/// RFC 8017 §9.2 note 1: the DER of `DigestInfo` up to the digest.
fn digest_info_prefix(d: PgpHash) -> &'static [u8] {
    match d {
        PgpHash::Sha256 => &[
            0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x01, 0x05, 0x00, 0x04, 0x20,
        ],
        PgpHash::Sha384 => &[
            0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x02, 0x05, 0x00, 0x04, 0x30,
        ],
        PgpHash::Sha512 => &[
            0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x03, 0x05, 0x00, 0x04, 0x40,
        ],
    }
}

/// The token signs `digest` (made with `hash`) as `alg` needs. EdDSA and ECDSA return
/// `r ‖ s`, RSA the signature.
pub fn sign_digest(
    s: &Session,
    key: ObjectHandle,
    alg: PgpAlgorithm,
    hash: PgpHash,
    digest: &[u8],
) -> hsm::Result<Vec<u8>> {
    Ok(match alg {
        PgpAlgorithm::EddsaLegacy => s.sign(&Mechanism::new(CKM_EDDSA), key, digest)?,
        PgpAlgorithm::EcdsaP256 | PgpAlgorithm::EcdsaP384 => {
            s.sign(&Mechanism::new(CKM_ECDSA), key, digest)?
        }
        PgpAlgorithm::Rsa => {
            let mut info = digest_info_prefix(hash).to_vec();
            info.extend_from_slice(digest);
            s.sign(&Mechanism::new(CKM_RSA_PKCS), key, &info)?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_info_prefixes_end_with_the_digest_length() {
        for (d, n) in [
            (PgpHash::Sha256, 32),
            (PgpHash::Sha384, 48),
            (PgpHash::Sha512, 64),
        ] {
            let p = digest_info_prefix(d);
            assert_eq!(*p.last().unwrap() as usize, n);
            assert_eq!(p[1] as usize, p.len() - 2 + n);
            // The hash OID inside matches the one the CMS code uses.
            let oid = der::Encode::to_der(&d.digest().oid()).unwrap();
            assert!(p.windows(oid.len()).any(|w| w == oid.as_slice()));
        }
    }
}
