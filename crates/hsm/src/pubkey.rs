//! Public keys read from a token, with their standard encodings: SubjectPublicKeyInfo (DER
//! and PEM), raw bytes, and a SHA-256 fingerprint of the SPKI. Encoded with RustCrypto's
//! `der`/`spki`, not by hand.

use der::asn1::{BitString, ObjectIdentifier, UintRef};
use der::{Encode, EncodePem, Sequence};
use serde::Serialize;
use sha2::{Digest, Sha256};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};

use crate::algo::{Curve, LmsType, MlDsaSet, MlKemSet, SlhDsaSet};

pub const OID_RSA_ENCRYPTION: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
pub const OID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
pub const OID_P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
pub const OID_P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
pub const OID_ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
/// id-alg-hss-lms-hashsig (RFC 9708).
pub const OID_HSS_LMS: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.3.17");

pub fn ml_dsa_oid(set: MlDsaSet) -> ObjectIdentifier {
    match set {
        MlDsaSet::P44 => ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.3.17"),
        MlDsaSet::P65 => ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.3.18"),
        MlDsaSet::P87 => ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.3.19"),
    }
}

pub fn ml_kem_oid(set: MlKemSet) -> ObjectIdentifier {
    match set {
        MlKemSet::P512 => ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.4.1"),
        MlKemSet::P768 => ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.4.2"),
        MlKemSet::P1024 => ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.4.3"),
    }
}

/// FIPS 205 / RFC 9909 arcs 2.16.840.1.101.3.4.3.20–31 (SHA2 sets first, then SHAKE).
pub fn slh_dsa_oid(set: SlhDsaSet) -> ObjectIdentifier {
    use SlhDsaSet::*;
    let arc = match set {
        Sha2_128s => 20,
        Sha2_128f => 21,
        Sha2_192s => 22,
        Sha2_192f => 23,
        Sha2_256s => 24,
        Sha2_256f => 25,
        Shake128s => 26,
        Shake128f => 27,
        Shake192s => 28,
        Shake192f => 29,
        Shake256s => 30,
        Shake256f => 31,
    };
    ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.3")
        .push_arc(arc)
        .expect("valid arc")
}

/// A public key as the console understands it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey {
    Rsa {
        modulus: Vec<u8>,
        exponent: Vec<u8>,
    },
    /// NIST curves: uncompressed SEC1 point. Ed25519: the 32-byte key.
    Ec {
        curve: Curve,
        point: Vec<u8>,
    },
    MlDsa {
        set: MlDsaSet,
        key: Vec<u8>,
    },
    MlKem {
        set: MlKemSet,
        key: Vec<u8>,
    },
    SlhDsa {
        set: SlhDsaSet,
        key: Vec<u8>,
    },
    /// RFC 8554 HSS public key (`u32 L ‖ LMS public key`).
    Hss {
        key: Vec<u8>,
    },
}

#[derive(Sequence)]
struct RsaPublicKeyDer<'a> {
    modulus: UintRef<'a>,
    public_exponent: UintRef<'a>,
}

/// Public-key encodings for export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum PublicKeyFormat {
    Pem,
    Der,
    Raw,
}

impl PublicKey {
    pub fn algorithm(&self) -> String {
        match self {
            PublicKey::Rsa { modulus, .. } => format!("RSA-{}", significant_bits(modulus)),
            PublicKey::Ec {
                curve: Curve::Ed25519,
                ..
            } => "Ed25519".into(),
            PublicKey::Ec { curve, .. } => format!("ECDSA {}", curve.name()),
            PublicKey::MlDsa { set, .. } => set.name().into(),
            PublicKey::MlKem { set, .. } => set.name().into(),
            PublicKey::SlhDsa { set, .. } => set.name().into(),
            PublicKey::Hss { .. } => "HSS/LMS".into(),
        }
    }

    /// The key's own bytes: the point/key for EC and PQC, PKCS#1 `RSAPublicKey` for RSA.
    pub fn raw(&self) -> Vec<u8> {
        match self {
            PublicKey::Rsa { modulus, exponent } => RsaPublicKeyDer {
                modulus: UintRef::new(strip_zeros(modulus)).expect("modulus"),
                public_exponent: UintRef::new(strip_zeros(exponent)).expect("exponent"),
            }
            .to_der()
            .expect("RSAPublicKey encodes"),
            PublicKey::Ec { point, .. } => point.clone(),
            PublicKey::MlDsa { key, .. }
            | PublicKey::MlKem { key, .. }
            | PublicKey::SlhDsa { key, .. }
            | PublicKey::Hss { key } => key.clone(),
        }
    }

    pub fn spki(&self) -> SubjectPublicKeyInfoOwned {
        let (oid, params): (ObjectIdentifier, Option<der::Any>) = match self {
            PublicKey::Rsa { .. } => (OID_RSA_ENCRYPTION, Some(der::asn1::Null.into())),
            PublicKey::Ec {
                curve: Curve::P256, ..
            } => (OID_EC_PUBLIC_KEY, Some(der::Any::from(OID_P256))),
            PublicKey::Ec {
                curve: Curve::P384, ..
            } => (OID_EC_PUBLIC_KEY, Some(der::Any::from(OID_P384))),
            PublicKey::Ec {
                curve: Curve::Ed25519,
                ..
            } => (OID_ED25519, None),
            PublicKey::MlDsa { set, .. } => (ml_dsa_oid(*set), None),
            PublicKey::MlKem { set, .. } => (ml_kem_oid(*set), None),
            PublicKey::SlhDsa { set, .. } => (slh_dsa_oid(*set), None),
            PublicKey::Hss { .. } => (OID_HSS_LMS, None),
        };
        SubjectPublicKeyInfoOwned {
            algorithm: AlgorithmIdentifierOwned {
                oid,
                parameters: params,
            },
            subject_public_key: BitString::from_bytes(&self.raw()).expect("bit string"),
        }
    }

    pub fn spki_der(&self) -> Vec<u8> {
        self.spki().to_der().expect("SPKI encodes")
    }

    pub fn spki_pem(&self) -> String {
        self.spki()
            .to_pem(der::pem::LineEnding::LF)
            .expect("SPKI PEM encodes")
    }

    pub fn export(&self, format: PublicKeyFormat) -> Vec<u8> {
        match format {
            PublicKeyFormat::Pem => self.spki_pem().into_bytes(),
            PublicKeyFormat::Der => self.spki_der(),
            PublicKeyFormat::Raw => self.raw(),
        }
    }

    /// Read a SubjectPublicKeyInfo (DER) back: the inverse of [`PublicKey::spki`], for
    /// keys that come from files (verification, certificates).
    pub fn from_spki_der(der_bytes: &[u8]) -> Result<PublicKey, String> {
        use der::Decode;
        let spki = SubjectPublicKeyInfoOwned::from_der(der_bytes)
            .map_err(|e| format!("not a SubjectPublicKeyInfo: {e}"))?;
        PublicKey::from_spki(&spki)
    }

    /// From PEM (`-----BEGIN PUBLIC KEY-----`).
    pub fn from_spki_pem(pem: &str) -> Result<PublicKey, String> {
        use der::DecodePem;
        let spki = SubjectPublicKeyInfoOwned::from_pem(pem.trim())
            .map_err(|e| format!("not a PEM public key: {e}"))?;
        PublicKey::from_spki(&spki)
    }

    pub fn from_spki(spki: &SubjectPublicKeyInfoOwned) -> Result<PublicKey, String> {
        let key = spki
            .subject_public_key
            .as_bytes()
            .ok_or("the public key bit string has unused bits")?
            .to_vec();
        let oid = spki.algorithm.oid;
        let param_oid = || {
            spki.algorithm
                .parameters
                .as_ref()
                .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
        };
        let pk = if oid == OID_RSA_ENCRYPTION {
            use der::Decode;
            let r = RsaPublicKeyDer::from_der(&key).map_err(|e| format!("bad RSA key: {e}"))?;
            PublicKey::Rsa {
                modulus: r.modulus.as_bytes().to_vec(),
                exponent: r.public_exponent.as_bytes().to_vec(),
            }
        } else if oid == OID_EC_PUBLIC_KEY {
            let curve = match param_oid() {
                Some(c) if c == OID_P256 => Curve::P256,
                Some(c) if c == OID_P384 => Curve::P384,
                other => return Err(format!("unsupported EC curve {other:?}")),
            };
            PublicKey::Ec { curve, point: key }
        } else if oid == OID_ED25519 {
            PublicKey::Ec {
                curve: Curve::Ed25519,
                point: key,
            }
        } else if oid == OID_HSS_LMS {
            PublicKey::Hss { key }
        } else if let Some(set) = [MlDsaSet::P44, MlDsaSet::P65, MlDsaSet::P87]
            .into_iter()
            .find(|s| ml_dsa_oid(*s) == oid)
        {
            PublicKey::MlDsa { set, key }
        } else if let Some(set) = [MlKemSet::P512, MlKemSet::P768, MlKemSet::P1024]
            .into_iter()
            .find(|s| ml_kem_oid(*s) == oid)
        {
            PublicKey::MlKem { set, key }
        } else if let Some(set) = SlhDsaSet::ALL.into_iter().find(|s| slh_dsa_oid(*s) == oid) {
            PublicKey::SlhDsa { set, key }
        } else {
            return Err(format!("unsupported public key algorithm {oid}"));
        };
        pk.check_size().map_err(|m| m.text)?;
        Ok(pk)
    }

    /// `SHA256:<hex>` over the DER SubjectPublicKeyInfo.
    pub fn fingerprint(&self) -> String {
        format!("SHA256:{}", hex::encode(Sha256::digest(self.spki_der())))
    }

    /// Compare the key's length with the standard's. A parameter set the token silently
    /// ignored shows only here (the seed's Luna lesson).
    pub fn check_size(&self) -> Result<(), crate::Text> {
        let (got, want, what) = match self {
            PublicKey::MlDsa { set, key } => (key.len(), set.public_key_len(), set.name()),
            PublicKey::MlKem { set, key } => (key.len(), set.public_key_len(), set.name()),
            PublicKey::SlhDsa { set, key } => (key.len(), set.public_key_len(), set.name()),
            PublicKey::Ec { curve, point } => (point.len(), curve.point_len(), curve.name()),
            PublicKey::Hss { key } => {
                // The top level's LMS type sets the length: 60 bytes (SHA-256), 52
                // (SHA-256/192). A type the console does not know is not checked here.
                let code = key
                    .get(4..8)
                    .map(|t| u32::from_be_bytes(t.try_into().expect("4 bytes")) as u64);
                match code.map(LmsType::from_code) {
                    None => (key.len(), 60, "HSS"),
                    Some(None) => return Ok(()),
                    Some(Some(t)) => (
                        key.len(),
                        4 + t.public_key_len(),
                        if t.m() == 24 {
                            "HSS (SHA-256/192)"
                        } else {
                            "HSS (SHA-256/M32)"
                        },
                    ),
                }
            }
            PublicKey::Rsa { .. } => return Ok(()),
        };
        if got == want {
            Ok(())
        } else {
            Err(crate::text!(
                "hsm.public_key_wrong_size",
                "the token returned a {{got}}-byte public key; {{what}} keys are {{want}} bytes — the requested parameter set was not applied",
                got = got,
                what = what,
                want = want
            ))
        }
    }
}

fn strip_zeros(b: &[u8]) -> &[u8] {
    let i = b
        .iter()
        .position(|&x| x != 0)
        .unwrap_or(b.len().saturating_sub(1));
    &b[i..]
}

/// The bit length of a big-endian unsigned integer (an RSA modulus): 0 for zero.
pub(crate) fn significant_bits(b: &[u8]) -> usize {
    let b = strip_zeros(b);
    match b.first() {
        Some(&x) => b.len() * 8 - x.leading_zeros() as usize,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spki_round_trips() {
        let keys = [
            PublicKey::Ec {
                curve: Curve::P256,
                point: {
                    let mut p = vec![4u8; 65];
                    p[0] = 4;
                    p
                },
            },
            PublicKey::Ec {
                curve: Curve::Ed25519,
                point: vec![9u8; 32],
            },
            PublicKey::MlDsa {
                set: MlDsaSet::P65,
                key: vec![1u8; 1952],
            },
            PublicKey::Hss { key: vec![2u8; 60] },
            PublicKey::Rsa {
                modulus: vec![0xC5u8; 256],
                exponent: vec![1, 0, 1],
            },
        ];
        for k in keys {
            assert_eq!(PublicKey::from_spki_der(&k.spki_der()).unwrap(), k);
            assert_eq!(PublicKey::from_spki_pem(&k.spki_pem()).unwrap(), k);
        }
        assert!(PublicKey::from_spki_der(b"junk").is_err());
    }

    #[test]
    fn hss_public_keys_are_checked_by_their_top_level_type() {
        let key = |lms: u32, len: usize| {
            let mut k = 1u32.to_be_bytes().to_vec();
            k.extend_from_slice(&lms.to_be_bytes());
            k.resize(len, 7);
            PublicKey::Hss { key: k }
        };
        assert!(key(5, 60).check_size().is_ok());
        assert!(key(0x0A, 52).check_size().is_ok(), "SHA-256/192");
        let e = key(0x0A, 60).check_size().unwrap_err();
        assert!(
            e.text.contains("HSS (SHA-256/192) keys are 52 bytes"),
            "{}",
            e.text
        );
        assert!(key(5, 52).check_size().is_err());
        assert!(
            key(0x14, 52).check_size().is_ok(),
            "a type it does not know"
        );
        let round = key(0x0B, 52);
        assert_eq!(PublicKey::from_spki_der(&round.spki_der()).unwrap(), round);
    }

    #[test]
    fn ed25519_spki_matches_rfc8410_example() {
        // RFC 8410 §10.1 example public key.
        let key = hex::decode("19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1")
            .unwrap();
        let pk = PublicKey::Ec {
            curve: Curve::Ed25519,
            point: key,
        };
        assert_eq!(
            pk.spki_pem(),
            "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"
        );
    }

    #[test]
    fn slh_dsa_oids() {
        assert_eq!(
            slh_dsa_oid(SlhDsaSet::Sha2_128s).to_string(),
            "2.16.840.1.101.3.4.3.20"
        );
        assert_eq!(
            slh_dsa_oid(SlhDsaSet::Shake256f).to_string(),
            "2.16.840.1.101.3.4.3.31"
        );
    }

    #[test]
    fn size_check_names_the_problem() {
        let pk = PublicKey::MlDsa {
            set: MlDsaSet::P87,
            key: vec![0; 1312],
        };
        let e = pk.check_size().unwrap_err();
        assert!(e.text.contains("1312") && e.text.contains("2592"), "{e}");
        assert_eq!(e.key, "hsm.public_key_wrong_size");
        assert!(PublicKey::MlDsa {
            set: MlDsaSet::P44,
            key: vec![0; 1312]
        }
        .check_size()
        .is_ok());
    }

    #[test]
    fn rsa_bits() {
        let mut n = vec![0u8];
        n.extend(vec![0xC0; 256]);
        let pk = PublicKey::Rsa {
            modulus: n,
            exponent: vec![1, 0, 1],
        };
        assert_eq!(pk.algorithm(), "RSA-2048");
        assert_eq!(pk.raw()[0], 0x30);
    }
}
