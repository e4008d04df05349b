//! Signature schemes: how the HSM is asked to sign with each, their algorithm identifiers,
//! and their software verifiers.
//!
//! ML-DSA, HSS/LMS and Ed25519 sign the message itself — never a digest passed off as the
//! message. ECDSA signs a digest by definition (ECDSA-with-SHA-256/384), and RSA-PSS is
//! computed over a digest with the hash named in its parameters; for those two a large file
//! is hashed here and the token signs the digest with the matching raw mechanism.

use der::asn1::ObjectIdentifier;
use der::{Any, Decode, Encode, Sequence};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256, Sha384, Sha512};
use spki::AlgorithmIdentifierOwned;

use hsm::algo::{Curve, MlDsaSet, SlhDsaSet};
use hsm::pubkey::PublicKey;
use p11::sys::*;
use p11::{Mechanism, ObjectHandle, Session};

use crate::{Result, SignError};

pub const OID_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
pub const OID_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
pub const OID_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");
/// RFC 8702 §2: SHAKE128 with a 256-bit output, SHAKE256 with a 512-bit output in CMS.
pub const OID_SHAKE128: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.11");
pub const OID_SHAKE256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.12");
pub const OID_ECDSA_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
pub const OID_ECDSA_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
pub const OID_RSASSA_PSS: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.10");
pub const OID_MGF1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.8");

/// RSA-PSS salt length (bytes): the hash length of SHA-256.
pub const PSS_SALT: usize = 32;

/// Digests used by the formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub enum DigestAlg {
    #[serde(rename = "SHA-256")]
    Sha256,
    #[serde(rename = "SHA-384")]
    Sha384,
    #[serde(rename = "SHA-512")]
    Sha512,
    /// SHAKE128 with 32 bytes of output (RFC 8702), the CMS digest of SLH-DSA-SHAKE-128*.
    #[serde(rename = "SHAKE128")]
    Shake128,
    /// SHAKE256 with 64 bytes of output (RFC 8702), the CMS digest of SLH-DSA-SHAKE-192/256*.
    #[serde(rename = "SHAKE256")]
    Shake256,
}

hsm::wire_display!(DigestAlg);

impl DigestAlg {
    pub fn oid(self) -> ObjectIdentifier {
        match self {
            DigestAlg::Sha256 => OID_SHA256,
            DigestAlg::Sha384 => OID_SHA384,
            DigestAlg::Sha512 => OID_SHA512,
            DigestAlg::Shake128 => OID_SHAKE128,
            DigestAlg::Shake256 => OID_SHAKE256,
        }
    }

    pub const ALL: [DigestAlg; 5] = [
        DigestAlg::Sha256,
        DigestAlg::Sha384,
        DigestAlg::Sha512,
        DigestAlg::Shake128,
        DigestAlg::Shake256,
    ];

    pub fn from_oid(oid: ObjectIdentifier) -> Option<DigestAlg> {
        DigestAlg::ALL.into_iter().find(|d| d.oid() == oid)
    }

    /// RFC 5754 and RFC 8702: parameters absent.
    pub fn identifier(self) -> AlgorithmIdentifierOwned {
        AlgorithmIdentifierOwned {
            oid: self.oid(),
            parameters: None,
        }
    }

    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            DigestAlg::Sha256 => Sha256::digest(data).to_vec(),
            DigestAlg::Sha384 => Sha384::digest(data).to_vec(),
            DigestAlg::Sha512 => Sha512::digest(data).to_vec(),
            DigestAlg::Shake128 => xof::<sha3::Shake128>(data, 32),
            DigestAlg::Shake256 => xof::<sha3::Shake256>(data, 64),
        }
    }
}

fn xof<X: Default + sha3::digest::Update + sha3::digest::ExtendableOutput>(
    data: &[u8],
    len: usize,
) -> Vec<u8> {
    let mut x = X::default();
    x.update(data);
    let mut out = vec![0u8; len];
    sha3::digest::XofReader::read(&mut x.finalize_xof(), &mut out);
    out
}

/// A signature scheme, as determined by the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "scheme", rename_all = "kebab-case")]
pub enum SigAlg {
    MlDsa {
        set: MlDsaSet,
    },
    /// SLH-DSA (FIPS 205), pure mode.
    SlhDsa {
        set: SlhDsaSet,
    },
    Hss,
    /// ECDSA P-256 with SHA-256, or P-384 with SHA-384.
    Ecdsa {
        curve: Curve,
    },
    /// RSASSA-PSS, SHA-256, MGF1-SHA-256, salt 32.
    RsaPss,
    Ed25519,
}

/// RSASSA-PSS-params with every field explicit except the default trailer.
#[derive(Sequence)]
struct PssParams {
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
    hash: AlgorithmIdentifierOwned,
    #[asn1(context_specific = "1", tag_mode = "EXPLICIT")]
    mgf: AlgorithmIdentifierOwned,
    #[asn1(context_specific = "2", tag_mode = "EXPLICIT")]
    salt_len: u32,
}

impl SigAlg {
    /// The scheme a key signs with. KEM keys are refused with the reason.
    pub fn for_key(pk: &PublicKey) -> Result<SigAlg> {
        Ok(match pk {
            PublicKey::MlDsa { set, .. } => SigAlg::MlDsa { set: *set },
            PublicKey::Hss { .. } => SigAlg::Hss,
            PublicKey::Ec {
                curve: Curve::Ed25519,
                ..
            } => SigAlg::Ed25519,
            PublicKey::Ec { curve, .. } => SigAlg::Ecdsa { curve: *curve },
            PublicKey::Rsa { .. } => SigAlg::RsaPss,
            PublicKey::MlKem { .. } => {
                return Err(SignError::Unsupported(hsm::text!(
                    "signing.ml_kem_cannot_sign",
                    "ML-KEM keys encapsulate; they cannot sign"
                )))
            }
            PublicKey::SlhDsa { set, .. } => SigAlg::SlhDsa { set: *set },
        })
    }

    pub fn name(&self) -> String {
        match self {
            SigAlg::MlDsa { set } => set.name().to_string(),
            SigAlg::SlhDsa { set } => set.name().to_string(),
            SigAlg::Hss => "HSS/LMS".into(),
            SigAlg::Ecdsa { curve: Curve::P384 } => "ECDSA P-384 SHA-384".into(),
            SigAlg::Ecdsa { .. } => "ECDSA P-256 SHA-256".into(),
            SigAlg::RsaPss => "RSA-PSS SHA-256".into(),
            SigAlg::Ed25519 => "Ed25519".into(),
        }
    }

    /// The digest of the content in CMS (and the hash of ECDSA/RSA-PSS).
    pub fn digest(&self) -> DigestAlg {
        match self {
            // RFC 9882 §3.3: SHA-512 with every ML-DSA parameter set.
            SigAlg::MlDsa { .. } => DigestAlg::Sha512,
            // RFC 9814 §4: SHA-256 / SHA-512 with the SHA2 sets of category 1 / 3 and 5,
            // SHAKE128 / SHAKE256 with the SHAKE sets of category 1 / 3 and 5.
            SigAlg::SlhDsa { set } => slh_dsa_digest(*set),
            // RFC 9708 §4: the hash of the LMS parameter set (SHA-256 here).
            SigAlg::Hss => DigestAlg::Sha256,
            // RFC 8419 §3.1: SHA-512.
            SigAlg::Ed25519 => DigestAlg::Sha512,
            SigAlg::Ecdsa { curve: Curve::P384 } => DigestAlg::Sha384,
            SigAlg::Ecdsa { .. } | SigAlg::RsaPss => DigestAlg::Sha256,
        }
    }

    /// Signs the whole message (true) or a digest of it (false).
    pub fn whole_message(&self) -> bool {
        matches!(
            self,
            SigAlg::MlDsa { .. } | SigAlg::SlhDsa { .. } | SigAlg::Hss | SigAlg::Ed25519
        )
    }

    pub fn signature_algorithm(&self) -> AlgorithmIdentifierOwned {
        match self {
            SigAlg::MlDsa { set } => AlgorithmIdentifierOwned {
                oid: hsm::pubkey::ml_dsa_oid(*set),
                parameters: None,
            },
            // RFC 9814 §3: parameters absent.
            SigAlg::SlhDsa { set } => AlgorithmIdentifierOwned {
                oid: hsm::pubkey::slh_dsa_oid(*set),
                parameters: None,
            },
            SigAlg::Hss => AlgorithmIdentifierOwned {
                oid: hsm::pubkey::OID_HSS_LMS,
                parameters: None,
            },
            SigAlg::Ed25519 => AlgorithmIdentifierOwned {
                oid: hsm::pubkey::OID_ED25519,
                parameters: None,
            },
            SigAlg::Ecdsa { curve: Curve::P384 } => AlgorithmIdentifierOwned {
                oid: OID_ECDSA_SHA384,
                parameters: None,
            },
            SigAlg::Ecdsa { .. } => AlgorithmIdentifierOwned {
                oid: OID_ECDSA_SHA256,
                parameters: None,
            },
            SigAlg::RsaPss => {
                let params = PssParams {
                    hash: DigestAlg::Sha256.identifier(),
                    mgf: AlgorithmIdentifierOwned {
                        oid: OID_MGF1,
                        parameters: Some(
                            Any::encode_from(&DigestAlg::Sha256.identifier()).expect("encodes"),
                        ),
                    },
                    salt_len: PSS_SALT as u32,
                };
                AlgorithmIdentifierOwned {
                    oid: OID_RSASSA_PSS,
                    parameters: Some(Any::encode_from(&params).expect("encodes")),
                }
            }
        }
    }

    /// The scheme named by a signature algorithm identifier (and the key it is used with).
    pub fn from_identifier(id: &AlgorithmIdentifierOwned, pk: &PublicKey) -> Result<SigAlg> {
        let alg = SigAlg::for_key(pk)?;
        let ok = match alg {
            SigAlg::RsaPss => {
                id.oid == OID_RSASSA_PSS
                    && id
                        .parameters
                        .as_ref()
                        .and_then(|p| p.to_der().ok())
                        .and_then(|d| PssParams::from_der(&d).ok())
                        .map(|p| {
                            p.hash.oid == OID_SHA256
                                && p.salt_len as usize == PSS_SALT
                                && p.mgf.oid == OID_MGF1
                        })
                        .unwrap_or(false)
            }
            other => other.signature_algorithm().oid == id.oid,
        };
        if ok {
            Ok(alg)
        } else {
            Err(SignError::Unsupported(hsm::text!(
                "signing.algorithm_not_verified",
                "signature algorithm {{oid}} with a {{key}} key is not one the console verifies",
                oid = id.oid,
                key = pk.algorithm()
            )))
        }
    }

    /// Sign `message` on the token. ECDSA hashes it here (the token gets the digest via
    /// `CKM_ECDSA`); RSA-PSS uses `CKM_SHA256_RSA_PKCS_PSS` over the message. `context` is
    /// ML-DSA's context string (empty for none).
    pub fn sign(
        &self,
        s: &Session,
        key: ObjectHandle,
        message: &[u8],
        context: &[u8],
    ) -> hsm::Result<Vec<u8>> {
        match self {
            SigAlg::MlDsa { .. } => {
                if context.is_empty() {
                    Ok(s.sign(&Mechanism::new(CKM_ML_DSA), key, message)?)
                } else {
                    Ok(s.sign(
                        &Mechanism::with_sign_context(
                            CKM_ML_DSA,
                            context,
                            p11::mechanism::Hedge::Preferred,
                        ),
                        key,
                        message,
                    )?)
                }
            }
            // Pure SLH-DSA with the empty context (no parameter): what RFC 9814 signs.
            SigAlg::SlhDsa { .. } => Ok(s.sign(&Mechanism::new(CKM_SLH_DSA), key, message)?),
            SigAlg::Hss => Ok(s.sign(&Mechanism::new(CKM_HSS), key, message)?),
            SigAlg::Ed25519 => Ok(s.sign(&Mechanism::new(CKM_EDDSA), key, message)?),
            SigAlg::Ecdsa { .. } => self.sign_digest(s, key, &self.digest().digest(message)),
            SigAlg::RsaPss => Ok(s.sign(
                &Mechanism::rsa_pss(
                    CKM_SHA256_RSA_PKCS_PSS,
                    CKM_SHA256,
                    CKG_MGF1_SHA256,
                    PSS_SALT as u64,
                ),
                key,
                message,
            )?),
        }
    }

    /// Sign a digest computed by the caller (ECDSA and RSA-PSS only).
    pub fn sign_digest(
        &self,
        s: &Session,
        key: ObjectHandle,
        digest: &[u8],
    ) -> hsm::Result<Vec<u8>> {
        match self {
            SigAlg::Ecdsa { curve } => {
                let raw = s.sign(&Mechanism::new(CKM_ECDSA), key, digest)?;
                let n = if *curve == Curve::P384 { 48 } else { 32 };
                swverify::ecdsa_raw_to_der(n, &raw).map_err(|e| {
                    hsm::HsmError::TokenMisbehaved(hsm::text!(
                        "signing.ecdsa_signature_malformed",
                        "the token's ECDSA signature is malformed: {{error}}",
                        error = e
                    ))
                })
            }
            SigAlg::RsaPss => Ok(s.sign(
                &Mechanism::rsa_pss(
                    CKM_RSA_PKCS_PSS,
                    CKM_SHA256,
                    CKG_MGF1_SHA256,
                    PSS_SALT as u64,
                ),
                key,
                digest,
            )?),
            other => Err(hsm::HsmError::Refused(hsm::text!(
                "signing.signs_message_not_digest",
                "{{algorithm}} signs the message itself, not a digest",
                algorithm = other.name()
            ))),
        }
    }

    /// Verify in software over the message.
    pub fn verify(
        &self,
        pk: &PublicKey,
        message: &[u8],
        context: &[u8],
        signature: &[u8],
    ) -> Result<()> {
        let r = match (self, pk) {
            (SigAlg::MlDsa { set }, PublicKey::MlDsa { key, .. }) => {
                swverify::ml_dsa(ml_dsa_set(*set), key, message, context, signature)
            }
            (SigAlg::SlhDsa { set }, PublicKey::SlhDsa { key, .. }) => {
                swverify::slh_dsa::verify(slh_dsa_set(*set), key, message, context, signature)
            }
            (SigAlg::Hss, PublicKey::Hss { key }) => swverify::hss::verify(key, message, signature),
            (SigAlg::Ed25519, PublicKey::Ec { point, .. }) => {
                swverify::ed25519(point, message, signature)
            }
            (SigAlg::Ecdsa { .. }, _) | (SigAlg::RsaPss, _) => {
                return self.verify_digest(pk, &self.digest().digest(message), signature)
            }
            _ => {
                return Err(SignError::Invalid(hsm::text!(
                    "signing.key_cannot_verify",
                    "a {{key}} key cannot verify {{alg}}",
                    key = pk.algorithm(),
                    alg = self.name()
                )))
            }
        };
        r.map_err(|e| {
            SignError::Invalid(hsm::text!(
                "signing.signature_does_not_verify",
                "{{alg}} signature does not verify: {{error}}",
                alg = self.name(),
                error = e
            ))
        })
    }

    /// Verify in software over a digest (ECDSA and RSA-PSS).
    pub fn verify_digest(&self, pk: &PublicKey, digest: &[u8], signature: &[u8]) -> Result<()> {
        let r = match (self, pk) {
            (SigAlg::Ecdsa { curve: Curve::P256 }, PublicKey::Ec { point, .. }) => {
                swverify::ecdsa_p256_prehash(point, digest, signature, swverify::EcdsaEncoding::Der)
            }
            (SigAlg::Ecdsa { curve: Curve::P384 }, PublicKey::Ec { point, .. }) => {
                swverify::ecdsa_p384_prehash(point, digest, signature, swverify::EcdsaEncoding::Der)
            }
            (SigAlg::RsaPss, PublicKey::Rsa { modulus, exponent }) => swverify::rsa_pss_prehash(
                modulus,
                exponent,
                swverify::PssHash::Sha256,
                PSS_SALT,
                digest,
                signature,
            ),
            _ => {
                return Err(SignError::Invalid(hsm::text!(
                    "signing.not_verified_over_digest",
                    "{{alg}} is not verified over a digest",
                    alg = self.name()
                )))
            }
        };
        r.map_err(|e| {
            SignError::Invalid(hsm::text!(
                "signing.signature_does_not_verify",
                "{{alg}} signature does not verify: {{error}}",
                alg = self.name(),
                error = e
            ))
        })
    }
}

pub fn ml_dsa_set(set: MlDsaSet) -> swverify::MlDsa {
    match set {
        MlDsaSet::P44 => swverify::MlDsa::P44,
        MlDsaSet::P65 => swverify::MlDsa::P65,
        MlDsaSet::P87 => swverify::MlDsa::P87,
    }
}

/// RFC 9814 §4's digest for each SLH-DSA parameter set.
fn slh_dsa_digest(set: SlhDsaSet) -> DigestAlg {
    use SlhDsaSet::*;
    match set {
        Sha2_128s | Sha2_128f => DigestAlg::Sha256,
        Sha2_192s | Sha2_192f | Sha2_256s | Sha2_256f => DigestAlg::Sha512,
        Shake128s | Shake128f => DigestAlg::Shake128,
        Shake192s | Shake192f | Shake256s | Shake256f => DigestAlg::Shake256,
    }
}

pub fn slh_dsa_set(set: SlhDsaSet) -> swverify::slh_dsa::SlhDsa {
    use swverify::slh_dsa::SlhDsa as V;
    match set {
        SlhDsaSet::Sha2_128s => V::Sha2_128s,
        SlhDsaSet::Shake128s => V::Shake128s,
        SlhDsaSet::Sha2_128f => V::Sha2_128f,
        SlhDsaSet::Shake128f => V::Shake128f,
        SlhDsaSet::Sha2_192s => V::Sha2_192s,
        SlhDsaSet::Shake192s => V::Shake192s,
        SlhDsaSet::Sha2_192f => V::Sha2_192f,
        SlhDsaSet::Shake192f => V::Shake192f,
        SlhDsaSet::Sha2_256s => V::Sha2_256s,
        SlhDsaSet::Shake256s => V::Shake256s,
        SlhDsaSet::Sha2_256f => V::Sha2_256f,
        SlhDsaSet::Shake256f => V::Shake256f,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pss_identifier_round_trips() {
        let pk = PublicKey::Rsa {
            modulus: vec![0xC1; 256],
            exponent: vec![1, 0, 1],
        };
        let id = SigAlg::RsaPss.signature_algorithm();
        assert_eq!(SigAlg::from_identifier(&id, &pk).unwrap(), SigAlg::RsaPss);
        // DER of the parameters as RFC 4055 spells them for SHA-256 / salt 32.
        let der = id.parameters.unwrap().to_der().unwrap();
        assert_eq!(hex::encode(&der), "3030a00d300b0609608648016503040201a11a301806092a864886f70d010108300b0609608648016503040201a203020120");
    }

    /// SHAKE128/256("abc") as FIPS 202's examples give them (32 and 64 bytes).
    #[test]
    fn shake_digests_have_rfc_8702_lengths() {
        assert_eq!(
            hex::encode(DigestAlg::Shake128.digest(b"abc")),
            "5881092dd818bf5cf8a3ddb793fbcba74097d5c526a6d35f97b83351940f2cc8"
        );
        assert_eq!(hex::encode(DigestAlg::Shake256.digest(b"abc")), "483366601360a8771c6863080cc4114d8db44530f8f1e1ee4f94ea37e78b5739d5a15bef186a5386c75744c0527e1faa9f8726e462a12a4feb06bd8801e751e4");
        assert_eq!(DigestAlg::from_oid(OID_SHAKE256), Some(DigestAlg::Shake256));
    }

    #[test]
    fn digests_follow_the_rfcs() {
        assert_eq!(
            SigAlg::MlDsa { set: MlDsaSet::P44 }.digest(),
            DigestAlg::Sha512
        );
        assert_eq!(SigAlg::Hss.digest(), DigestAlg::Sha256);
        let slh = |set| SigAlg::SlhDsa { set }.digest();
        assert_eq!(slh(SlhDsaSet::Sha2_128f), DigestAlg::Sha256);
        assert_eq!(slh(SlhDsaSet::Sha2_192s), DigestAlg::Sha512);
        assert_eq!(slh(SlhDsaSet::Shake128s), DigestAlg::Shake128);
        assert_eq!(slh(SlhDsaSet::Shake256f), DigestAlg::Shake256);
        assert_eq!(SigAlg::Ed25519.digest(), DigestAlg::Sha512);
        assert_eq!(
            SigAlg::Ecdsa { curve: Curve::P384 }.digest(),
            DigestAlg::Sha384
        );
    }
}
