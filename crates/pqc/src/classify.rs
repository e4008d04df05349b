//! What an object's algorithm is, as the migration sees it: its family and parameters,
//! its classical strength (SP 800-57 Part 1 rev. 5, table 2), its NIST post-quantum
//! security category (FIPS 203/204/205; 0 = none, i.e. quantum-vulnerable) and its
//! [`QuantumClass`]. Read from the console's object listing (key type, parameter set,
//! curve, modulus bits, value length), never guessed: an algorithm this table does not
//! know is [`QuantumClass::Unknown`] — "check it by hand" — and stays in every listing.

use hsm::keys::ObjectSummary;
use serde::{Deserialize, Serialize};

/// Where an algorithm stands against a quantum adversary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
pub enum QuantumClass {
    /// Broken by Shor's algorithm: RSA, ECDSA, EdDSA, (EC)DH.
    QuantumVulnerable,
    /// A post-quantum algorithm: ML-DSA, ML-KEM, SLH-DSA, LMS/HSS.
    PostQuantum,
    /// Symmetric keys: Grover halves their strength, which the strength shown accounts for
    /// (AES-128 is not AES-256 under CNSA 2.0).
    NotQuantumRelevant,
    /// An algorithm the console cannot place.
    Unknown,
}

/// An algorithm family, named as policies name it (`families = [...]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    Rsa,
    Ecdsa,
    Eddsa,
    MlDsa,
    MlKem,
    SlhDsa,
    HssLms,
    Aes,
    GenericSecret,
    Unknown,
}

/// An algorithm as the readiness view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Algorithm {
    /// "RSA-2048", "ECDSA P-256", "Ed25519", "ML-DSA-65", "AES-256", "HSS/LMS", …
    pub name: String,
    pub family: Family,
    /// Classical security strength in bits (SP 800-57), where known.
    pub classical_bits: Option<u32>,
    /// NIST PQC security category, 0–5 (0: none).
    pub nist_category: u8,
    pub class: QuantumClass,
}

impl Algorithm {
    fn new(name: impl Into<String>, family: Family, bits: Option<u32>, category: u8) -> Self {
        let class = match family {
            Family::Rsa | Family::Ecdsa | Family::Eddsa => QuantumClass::QuantumVulnerable,
            Family::MlDsa | Family::MlKem | Family::SlhDsa | Family::HssLms => {
                QuantumClass::PostQuantum
            }
            Family::Aes | Family::GenericSecret => QuantumClass::NotQuantumRelevant,
            Family::Unknown => QuantumClass::Unknown,
        };
        Algorithm {
            name: name.into(),
            family,
            classical_bits: bits,
            nist_category: category,
            class,
        }
    }

    pub fn unknown(name: &str) -> Algorithm {
        Algorithm::new(
            if name.is_empty() { "unknown" } else { name },
            Family::Unknown,
            None,
            0,
        )
    }
}

/// SP 800-57 Part 1 rev. 5, table 2: the strength of an RSA modulus (or finite-field
/// group) of `bits`.
pub fn rsa_strength(bits: u32) -> u32 {
    match bits {
        0..=1023 => 0,
        1024..=2047 => 80,
        2048..=3071 => 112,
        3072..=7679 => 128,
        7680..=15359 => 192,
        _ => 256,
    }
}

/// The algorithm of a key as the console lists it. `rsa_bits` gives the modulus size of an
/// RSA private key whose listing has none (PKCS#11 keeps `CKA_MODULUS_BITS` on the public
/// half; the caller pairs them by `CKA_ID`).
pub fn of_key(o: &ObjectSummary, rsa_bits: Option<u32>) -> Algorithm {
    let kt = o.key_type.as_deref().unwrap_or("");
    let name = o.algorithm.as_str();
    let pset = o.parameter_set.as_deref().unwrap_or(name);
    match kt {
        "RSA" => {
            let bits = name
                .strip_prefix("RSA-")
                .and_then(|b| b.parse::<u32>().ok())
                .or(rsa_bits);
            match bits {
                Some(b) => {
                    Algorithm::new(format!("RSA-{b}"), Family::Rsa, Some(rsa_strength(b)), 0)
                }
                None => Algorithm::new("RSA", Family::Rsa, None, 0),
            }
        }
        "EC" => match pset {
            "P-256" | "ECDSA P-256" => Algorithm::new("ECDSA P-256", Family::Ecdsa, Some(128), 0),
            "P-384" | "ECDSA P-384" => Algorithm::new("ECDSA P-384", Family::Ecdsa, Some(192), 0),
            "P-521" | "ECDSA P-521" => Algorithm::new("ECDSA P-521", Family::Ecdsa, Some(256), 0),
            "secp256k1" | "ECDSA secp256k1" => {
                Algorithm::new("ECDSA secp256k1", Family::Ecdsa, Some(128), 0)
            }
            "Ed25519" => Algorithm::new("Ed25519", Family::Eddsa, Some(128), 0),
            other => Algorithm::new(other, Family::Ecdsa, None, 0),
        },
        "EC_EDWARDS" => match pset {
            "Ed25519" => Algorithm::new("Ed25519", Family::Eddsa, Some(128), 0),
            "Ed448" => Algorithm::new("Ed448", Family::Eddsa, Some(224), 0),
            other => Algorithm::new(other, Family::Eddsa, None, 0),
        },
        "ML_DSA" => match pset {
            "ML-DSA-44" => Algorithm::new("ML-DSA-44", Family::MlDsa, None, 2),
            "ML-DSA-65" => Algorithm::new("ML-DSA-65", Family::MlDsa, None, 3),
            "ML-DSA-87" => Algorithm::new("ML-DSA-87", Family::MlDsa, None, 5),
            _ => Algorithm::unknown(name),
        },
        "ML_KEM" => match pset {
            "ML-KEM-512" => Algorithm::new("ML-KEM-512", Family::MlKem, None, 1),
            "ML-KEM-768" => Algorithm::new("ML-KEM-768", Family::MlKem, None, 3),
            "ML-KEM-1024" => Algorithm::new("ML-KEM-1024", Family::MlKem, None, 5),
            _ => Algorithm::unknown(name),
        },
        "SLH_DSA" => slh_dsa(pset).unwrap_or_else(|| Algorithm::unknown(name)),
        // SP 800-208 gives LMS/HSS the strength of its hash output: n = 32 bytes with the
        // SHA-256 types, 24 with RFC 9858's SHA-256/192 ones (the console names those
        // keys "… SHA-256/192 …"; a key with any such level is as strong as that level).
        // Mapped to a category as FIPS 205 maps the same hash-based construction (n =
        // 16/24/32 → 1/3/5).
        "HSS" | "LMS" => {
            let short = name.contains("M24") || name.contains("SHA-256/192");
            let category = if short { 3 } else { 5 };
            Algorithm::new("HSS/LMS", Family::HssLms, None, category)
        }
        "AES" => {
            let bits = name
                .strip_prefix("AES-")
                .and_then(|b| b.parse::<u32>().ok());
            let n = bits
                .map(|b| format!("AES-{b}"))
                .unwrap_or_else(|| "AES".into());
            Algorithm::new(n, Family::Aes, bits, aes_category(bits))
        }
        "GENERIC_SECRET" => {
            let bits = name
                .split(|c: char| !c.is_ascii_digit())
                .find_map(|d| d.parse::<u32>().ok());
            let n = bits
                .map(|b| format!("generic secret ({b} bits)"))
                .unwrap_or_else(|| "generic secret".into());
            Algorithm::new(n, Family::GenericSecret, bits, 0)
        }
        _ => Algorithm::unknown(name),
    }
}

/// The algorithm the console names `name` — a key's as `PublicKey::algorithm` names it
/// ("RSA-2048", "ECDSA P-256", "Ed25519", "ML-DSA-65", "SLH-DSA-SHA2-128s", "HSS/LMS") or a
/// signature algorithm without a size ("RSA", "ECDSA"): for certificates.
pub fn of_name(name: &str) -> Algorithm {
    let (key_type, pset): (&str, Option<&str>) = if name.starts_with("RSA") {
        ("RSA", None)
    } else if let Some(curve) = name.strip_prefix("ECDSA ") {
        ("EC", Some(curve))
    } else if name == "ECDSA" {
        return Algorithm::new("ECDSA", Family::Ecdsa, None, 0);
    } else if name == "Ed25519" || name == "Ed448" {
        ("EC_EDWARDS", Some(name))
    } else if name.starts_with("ML-DSA-") {
        ("ML_DSA", Some(name))
    } else if name.starts_with("ML-KEM-") {
        ("ML_KEM", Some(name))
    } else if name.starts_with("SLH-DSA-") {
        ("SLH_DSA", Some(name))
    } else if name.starts_with("HSS") || name.starts_with("LMS") {
        ("HSS", None)
    } else {
        return Algorithm::unknown(name);
    };
    let o = ObjectSummary {
        key_type: Some(key_type.into()),
        algorithm: name.into(),
        parameter_set: pset.map(String::from),
        ..Default::default()
    };
    of_key(&o, None)
}

/// AES's category is the one the category is defined by: AES-128 key search is category 1,
/// AES-192 category 3, AES-256 category 5 (NIST PQC call for proposals, §4.A.5).
fn aes_category(bits: Option<u32>) -> u8 {
    match bits {
        Some(256) => 5,
        Some(192) => 3,
        Some(128) => 1,
        _ => 0,
    }
}

/// FIPS 205 table 2: 128s/f → 1, 192s/f → 3, 256s/f → 5, SHA2 and SHAKE alike.
fn slh_dsa(set: &str) -> Option<Algorithm> {
    let rest = set.strip_prefix("SLH-DSA-")?;
    let category = if rest.contains("128") {
        1
    } else if rest.contains("192") {
        3
    } else if rest.contains("256") {
        5
    } else {
        return None;
    };
    Some(Algorithm::new(set, Family::SlhDsa, None, category))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsa_strengths_follow_sp_800_57() {
        for (bits, strength) in [
            (1024, 80),
            (2048, 112),
            (3072, 128),
            (4096, 128),
            (7680, 192),
            (15360, 256),
        ] {
            assert_eq!(rsa_strength(bits), strength, "RSA-{bits}");
        }
    }

    #[test]
    fn certificate_algorithms_by_name() {
        assert_eq!(of_name("RSA-3072").classical_bits, Some(128));
        assert_eq!(of_name("RSA").class, QuantumClass::QuantumVulnerable);
        assert_eq!(of_name("ECDSA P-384").classical_bits, Some(192));
        assert_eq!(of_name("ECDSA").family, Family::Ecdsa);
        assert_eq!(of_name("Ed25519").family, Family::Eddsa);
        assert_eq!(of_name("ML-DSA-87").nist_category, 5);
        assert_eq!(of_name("SLH-DSA-SHAKE-192f").nist_category, 3);
        assert_eq!(of_name("HSS/LMS").class, QuantumClass::PostQuantum);
        assert_eq!(of_name("1.2.3.4").class, QuantumClass::Unknown);
    }

    #[test]
    fn hss_categories_follow_the_hash_length() {
        let hss = |alg: &str| {
            of_key(
                &ObjectSummary {
                    key_type: Some("HSS".into()),
                    algorithm: alg.into(),
                    ..Default::default()
                },
                None,
            )
            .nist_category
        };
        assert_eq!(hss("HSS/LMS H5/W8+H5/W8"), 5);
        assert_eq!(hss("HSS/LMS SHA-256/192 H10/W4"), 3);
        assert_eq!(hss("HSS/LMS H10/W4+H5/W8 (level 1 SHA-256/192)"), 3);
    }

    #[test]
    fn slh_dsa_categories_follow_fips_205() {
        for (set, c) in [
            ("SLH-DSA-SHA2-128s", 1),
            ("SLH-DSA-SHAKE-192f", 3),
            ("SLH-DSA-SHA2-256s", 5),
        ] {
            assert_eq!(slh_dsa(set).unwrap().nist_category, c, "{set}");
        }
        assert!(slh_dsa("SLH-DSA-SHA2-999s").is_none());
    }
}
