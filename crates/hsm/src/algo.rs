//! The algorithms the console knows: parameter sets with their standard sizes (FIPS 203,
//! 204, 205; RFC 8554), curves, and the key-generation presets officers pick from.

use p11::sys::*;
use serde::{Deserialize, Serialize};

/// ML-DSA (FIPS 204).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub enum MlDsaSet {
    #[serde(rename = "ML-DSA-44")]
    P44,
    #[serde(rename = "ML-DSA-65")]
    P65,
    #[serde(rename = "ML-DSA-87")]
    P87,
}

impl MlDsaSet {
    pub const ALL: [MlDsaSet; 3] = [MlDsaSet::P44, MlDsaSet::P65, MlDsaSet::P87];
    pub fn parameter_set(self) -> u64 {
        match self {
            MlDsaSet::P44 => CKP_ML_DSA_44,
            MlDsaSet::P65 => CKP_ML_DSA_65,
            MlDsaSet::P87 => CKP_ML_DSA_87,
        }
    }
    pub fn from_parameter_set(p: u64) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.parameter_set() == p)
    }
    pub fn public_key_len(self) -> usize {
        match self {
            MlDsaSet::P44 => 1312,
            MlDsaSet::P65 => 1952,
            MlDsaSet::P87 => 2592,
        }
    }
    pub fn signature_len(self) -> usize {
        match self {
            MlDsaSet::P44 => 2420,
            MlDsaSet::P65 => 3309,
            MlDsaSet::P87 => 4627,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            MlDsaSet::P44 => "ML-DSA-44",
            MlDsaSet::P65 => "ML-DSA-65",
            MlDsaSet::P87 => "ML-DSA-87",
        }
    }
}

/// ML-KEM (FIPS 203).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub enum MlKemSet {
    #[serde(rename = "ML-KEM-512")]
    P512,
    #[serde(rename = "ML-KEM-768")]
    P768,
    #[serde(rename = "ML-KEM-1024")]
    P1024,
}

impl MlKemSet {
    pub const ALL: [MlKemSet; 3] = [MlKemSet::P512, MlKemSet::P768, MlKemSet::P1024];
    pub fn parameter_set(self) -> u64 {
        match self {
            MlKemSet::P512 => CKP_ML_KEM_512,
            MlKemSet::P768 => CKP_ML_KEM_768,
            MlKemSet::P1024 => CKP_ML_KEM_1024,
        }
    }
    pub fn from_parameter_set(p: u64) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.parameter_set() == p)
    }
    pub fn public_key_len(self) -> usize {
        match self {
            MlKemSet::P512 => 800,
            MlKemSet::P768 => 1184,
            MlKemSet::P1024 => 1568,
        }
    }
    pub fn ciphertext_len(self) -> usize {
        match self {
            MlKemSet::P512 => 768,
            MlKemSet::P768 => 1088,
            MlKemSet::P1024 => 1568,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            MlKemSet::P512 => "ML-KEM-512",
            MlKemSet::P768 => "ML-KEM-768",
            MlKemSet::P1024 => "ML-KEM-1024",
        }
    }
}

/// SLH-DSA (FIPS 205) parameter sets, in `CKP_SLH_DSA_*` order (1..=12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub enum SlhDsaSet {
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

impl SlhDsaSet {
    pub const ALL: [SlhDsaSet; 12] = [
        SlhDsaSet::Sha2_128s,
        SlhDsaSet::Shake128s,
        SlhDsaSet::Sha2_128f,
        SlhDsaSet::Shake128f,
        SlhDsaSet::Sha2_192s,
        SlhDsaSet::Shake192s,
        SlhDsaSet::Sha2_192f,
        SlhDsaSet::Shake192f,
        SlhDsaSet::Sha2_256s,
        SlhDsaSet::Shake256s,
        SlhDsaSet::Sha2_256f,
        SlhDsaSet::Shake256f,
    ];
    pub fn parameter_set(self) -> u64 {
        Self::ALL.iter().position(|s| *s == self).unwrap() as u64 + 1
    }
    pub fn from_parameter_set(p: u64) -> Option<Self> {
        Self::ALL.get((p as usize).checked_sub(1)?).copied()
    }
    fn level(self) -> usize {
        (Self::ALL.iter().position(|s| *s == self).unwrap()) / 4
    }
    fn fast(self) -> bool {
        (Self::ALL.iter().position(|s| *s == self).unwrap() / 2) % 2 == 1
    }
    pub fn public_key_len(self) -> usize {
        [32, 48, 64][self.level()]
    }
    pub fn signature_len(self) -> usize {
        match (self.level(), self.fast()) {
            (0, false) => 7856,
            (0, true) => 17088,
            (1, false) => 16224,
            (1, true) => 35664,
            (2, false) => 29792,
            (_, _) => 49856,
        }
    }
    pub fn name(self) -> &'static str {
        [
            "SLH-DSA-SHA2-128s",
            "SLH-DSA-SHAKE-128s",
            "SLH-DSA-SHA2-128f",
            "SLH-DSA-SHAKE-128f",
            "SLH-DSA-SHA2-192s",
            "SLH-DSA-SHAKE-192s",
            "SLH-DSA-SHA2-192f",
            "SLH-DSA-SHAKE-192f",
            "SLH-DSA-SHA2-256s",
            "SLH-DSA-SHAKE-256s",
            "SLH-DSA-SHA2-256f",
            "SLH-DSA-SHAKE-256f",
        ][Self::ALL.iter().position(|s| *s == self).unwrap()]
    }
}

/// Elliptic curves the console generates keys on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub enum Curve {
    P256,
    P384,
    Ed25519,
}

/// DER OIDs.
const OID_P256: &[u8] = &[0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];
const OID_P384: &[u8] = &[0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22];
const OID_ED25519: &[u8] = &[0x06, 0x03, 0x2B, 0x65, 0x70];
/// `PrintableString "edwards25519"`, which SoftHSM2 2.6 requires for Ed25519.
const PRINTABLE_ED25519: &[u8] = b"\x13\x0cedwards25519";

impl Curve {
    /// `CKA_EC_PARAMS`. For Ed25519 the RFC 8410 OID, except SoftHSM2 wants its printable
    /// string (`softhsm_style`).
    pub fn ec_params(self, softhsm_style: bool) -> &'static [u8] {
        match self {
            Curve::P256 => OID_P256,
            Curve::P384 => OID_P384,
            Curve::Ed25519 if softhsm_style => PRINTABLE_ED25519,
            Curve::Ed25519 => OID_ED25519,
        }
    }

    pub fn from_ec_params(params: &[u8]) -> Option<Curve> {
        match params {
            p if p == OID_P256 => Some(Curve::P256),
            p if p == OID_P384 => Some(Curve::P384),
            p if p == OID_ED25519 || p == PRINTABLE_ED25519 => Some(Curve::Ed25519),
            // PrintableString "curve25519"/"ed25519" variants seen in the wild.
            [0x13, n, rest @ ..]
                if *n as usize == rest.len() && (rest == b"ed25519" || rest == b"curve25519") =>
            {
                Some(Curve::Ed25519)
            }
            _ => None,
        }
    }

    /// Length of the public point as raw bytes (uncompressed SEC1 for NIST curves).
    pub fn point_len(self) -> usize {
        match self {
            Curve::P256 => 65,
            Curve::P384 => 97,
            Curve::Ed25519 => 32,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Curve::P256 => "P-256",
            Curve::P384 => "P-384",
            Curve::Ed25519 => "Ed25519",
        }
    }
}

/// Strip the optional DER OCTET STRING around `CKA_EC_POINT` (SoftHSM2 wraps it, Kryoptic
/// returns it raw). The curve's point length decides; a raw point may itself start with
/// 0x04, so the tag alone cannot.
pub fn ec_point_raw(value: &[u8], curve: Curve) -> Option<Vec<u8>> {
    let n = curve.point_len();
    if value.len() == n {
        return Some(value.to_vec());
    }
    if value.len() == n + 2 && value[0] == 0x04 && value[1] as usize == n {
        return Some(value[2..].to_vec());
    }
    None
}

/// An LMS type: RFC 8554's SHA-256 ones (m = 32) and RFC 9858's SHA-256/192 ones (m = 24,
/// SHA-256 cut to 24 bytes; the `M24…` variants). The SHAKE256 types of RFC 9858 are not
/// offered: no token here (nor Luna) generates them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub enum LmsType {
    #[serde(rename = "LMS_SHA256_M32_H5")]
    H5,
    #[serde(rename = "LMS_SHA256_M32_H10")]
    H10,
    #[serde(rename = "LMS_SHA256_M32_H15")]
    H15,
    #[serde(rename = "LMS_SHA256_M32_H20")]
    H20,
    #[serde(rename = "LMS_SHA256_M32_H25")]
    H25,
    #[serde(rename = "LMS_SHA256_M24_H5")]
    M24H5,
    #[serde(rename = "LMS_SHA256_M24_H10")]
    M24H10,
    #[serde(rename = "LMS_SHA256_M24_H15")]
    M24H15,
    #[serde(rename = "LMS_SHA256_M24_H20")]
    M24H20,
    #[serde(rename = "LMS_SHA256_M24_H25")]
    M24H25,
}

impl LmsType {
    pub const ALL: [LmsType; 10] = [
        LmsType::H5,
        LmsType::H10,
        LmsType::H15,
        LmsType::H20,
        LmsType::H25,
        LmsType::M24H5,
        LmsType::M24H10,
        LmsType::M24H15,
        LmsType::M24H20,
        LmsType::M24H25,
    ];
    /// The IANA type code (RFC 8554 §5.1, RFC 9858 §4).
    pub fn code(self) -> u64 {
        match self {
            LmsType::H5 => 5,
            LmsType::H10 => 6,
            LmsType::H15 => 7,
            LmsType::H20 => 8,
            LmsType::H25 => 9,
            LmsType::M24H5 => 0x0A,
            LmsType::M24H10 => 0x0B,
            LmsType::M24H15 => 0x0C,
            LmsType::M24H20 => 0x0D,
            LmsType::M24H25 => 0x0E,
        }
    }
    pub fn from_code(c: u64) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.code() == c)
    }
    pub fn height(self) -> u32 {
        match self {
            LmsType::H5 | LmsType::M24H5 => 5,
            LmsType::H10 | LmsType::M24H10 => 10,
            LmsType::H15 | LmsType::M24H15 => 15,
            LmsType::H20 | LmsType::M24H20 => 20,
            LmsType::H25 | LmsType::M24H25 => 25,
        }
    }
    /// Bytes of each tree node (the hash's output): 32, or 24 for SHA-256/192.
    pub fn m(self) -> usize {
        if self.code() >= 0x0A {
            24
        } else {
            32
        }
    }
    /// The same height with hash output `m` (32 or 24).
    pub fn with_m(self, m: usize) -> LmsType {
        Self::ALL
            .into_iter()
            .find(|t| t.m() == m && t.height() == self.height())
            .unwrap_or(self)
    }
    pub fn name(self) -> &'static str {
        match self {
            LmsType::H5 => "LMS_SHA256_M32_H5",
            LmsType::H10 => "LMS_SHA256_M32_H10",
            LmsType::H15 => "LMS_SHA256_M32_H15",
            LmsType::H20 => "LMS_SHA256_M32_H20",
            LmsType::H25 => "LMS_SHA256_M32_H25",
            LmsType::M24H5 => "LMS_SHA256_M24_H5",
            LmsType::M24H10 => "LMS_SHA256_M24_H10",
            LmsType::M24H15 => "LMS_SHA256_M24_H15",
            LmsType::M24H20 => "LMS_SHA256_M24_H20",
            LmsType::M24H25 => "LMS_SHA256_M24_H25",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s.trim()))
    }
    /// Bytes of the LMS public key: types, I, root.
    pub fn public_key_len(self) -> usize {
        24 + self.m()
    }
}

/// An LM-OTS type: RFC 8554's SHA-256 ones (n = 32) and RFC 9858's SHA-256/192 ones (n =
/// 24; the `N24…` variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub enum LmotsType {
    #[serde(rename = "LMOTS_SHA256_N32_W1")]
    W1,
    #[serde(rename = "LMOTS_SHA256_N32_W2")]
    W2,
    #[serde(rename = "LMOTS_SHA256_N32_W4")]
    W4,
    #[serde(rename = "LMOTS_SHA256_N32_W8")]
    W8,
    #[serde(rename = "LMOTS_SHA256_N24_W1")]
    N24W1,
    #[serde(rename = "LMOTS_SHA256_N24_W2")]
    N24W2,
    #[serde(rename = "LMOTS_SHA256_N24_W4")]
    N24W4,
    #[serde(rename = "LMOTS_SHA256_N24_W8")]
    N24W8,
}

impl LmotsType {
    pub const ALL: [LmotsType; 8] = [
        LmotsType::W1,
        LmotsType::W2,
        LmotsType::W4,
        LmotsType::W8,
        LmotsType::N24W1,
        LmotsType::N24W2,
        LmotsType::N24W4,
        LmotsType::N24W8,
    ];
    /// The IANA type code (RFC 8554 §4.1, RFC 9858 §4).
    pub fn code(self) -> u64 {
        match self {
            LmotsType::W1 => 1,
            LmotsType::W2 => 2,
            LmotsType::W4 => 3,
            LmotsType::W8 => 4,
            LmotsType::N24W1 => 5,
            LmotsType::N24W2 => 6,
            LmotsType::N24W4 => 7,
            LmotsType::N24W8 => 8,
        }
    }
    pub fn from_code(c: u64) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.code() == c)
    }
    pub fn name(self) -> &'static str {
        match self {
            LmotsType::W1 => "LMOTS_SHA256_N32_W1",
            LmotsType::W2 => "LMOTS_SHA256_N32_W2",
            LmotsType::W4 => "LMOTS_SHA256_N32_W4",
            LmotsType::W8 => "LMOTS_SHA256_N32_W8",
            LmotsType::N24W1 => "LMOTS_SHA256_N24_W1",
            LmotsType::N24W2 => "LMOTS_SHA256_N24_W2",
            LmotsType::N24W4 => "LMOTS_SHA256_N24_W4",
            LmotsType::N24W8 => "LMOTS_SHA256_N24_W8",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s.trim()))
    }
    /// Bytes of each hash (C, each chain value): 32, or 24 for SHA-256/192.
    pub fn n(self) -> usize {
        if self.code() >= 5 {
            24
        } else {
            32
        }
    }
    /// The Winternitz parameter w.
    pub fn w(self) -> u32 {
        match self {
            LmotsType::W1 | LmotsType::N24W1 => 1,
            LmotsType::W2 | LmotsType::N24W2 => 2,
            LmotsType::W4 | LmotsType::N24W4 => 4,
            LmotsType::W8 | LmotsType::N24W8 => 8,
        }
    }
    /// The same w with hash output `n` (32 or 24).
    pub fn with_n(self, n: usize) -> LmotsType {
        Self::ALL
            .into_iter()
            .find(|t| t.n() == n && t.w() == self.w())
            .unwrap_or(self)
    }
    /// Number of hash chains `p`.
    pub fn chains(self) -> usize {
        match self {
            LmotsType::W1 => 265,
            LmotsType::W2 => 133,
            LmotsType::W4 => 67,
            LmotsType::W8 => 34,
            LmotsType::N24W1 => 200,
            LmotsType::N24W2 => 101,
            LmotsType::N24W4 => 51,
            LmotsType::N24W8 => 26,
        }
    }

    /// Bytes of an LM-OTS signature: type, C, p chain values.
    pub fn signature_len(self) -> usize {
        4 + self.n() * (1 + self.chains())
    }

    /// Milliseconds lunasim spends per leaf in key generation on 2 cores (`scripts/bench.sh
    /// hss`, the `per_leaf_ms` of an H10 tree per type; chains × 2^w hashes). Every chain
    /// step is one SHA-256 block for n = 24 as for n = 32, so the N24 figures are the N32
    /// ones scaled by the chains (200/265, 101/133, 51/67, 26/34); the bench's M24 per-leaf
    /// lines agree (W8: 0.77 of N32 on 2026-12-06).
    pub fn lunasim_leaf_ms(self) -> f64 {
        match self {
            LmotsType::W1 => 0.066,
            LmotsType::W2 => 0.058,
            LmotsType::W4 => 0.113,
            LmotsType::W8 => 1.01,
            LmotsType::N24W1 => 0.050,
            LmotsType::N24W2 => 0.044,
            LmotsType::N24W4 => 0.086,
            LmotsType::N24W8 => 0.77,
        }
    }
}

/// "40 s", "6 min", "3 h".
fn duration_words(seconds: f64) -> crate::Text {
    if seconds < 90.0 {
        crate::text!(
            "hsm.duration.seconds",
            "{{n}} s",
            n = seconds.round() as u64
        )
    } else if seconds < 90.0 * 60.0 {
        crate::text!(
            "hsm.duration.minutes",
            "{{n}} min",
            n = (seconds / 60.0).round() as u64
        )
    } else {
        crate::text!(
            "hsm.duration.hours",
            "{{n}} h",
            n = format!("{:.1}", seconds / 3600.0)
        )
    }
}

fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// HSS parameters: one (LMS, LM-OTS) pair per level, top level first.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
pub struct HssParams {
    pub levels: Vec<(LmsType, LmotsType)>,
}

impl HssParams {
    /// Levels may differ in type, hash length included (RFC 8554 §6 gives each level its
    /// own types); within one level the LMS and LM-OTS types hash alike (m = n).
    pub fn new(levels: Vec<(LmsType, LmotsType)>) -> Result<Self, crate::Text> {
        if levels.is_empty() || levels.len() > 8 {
            return Err(crate::text!(
                "errors.hss_levels_count",
                "HSS takes 1 to 8 levels, not {{count}}",
                count = levels.len()
            ));
        }
        if let Some((i, (l, o))) = levels.iter().enumerate().find(|(_, (l, o))| l.m() != o.n()) {
            return Err(crate::text!(
                "errors.hss_level_mixed_hash",
                "level {{level}}: {{lms}} hashes to {{lms_bytes}} bytes, {{lmots}} to {{lmots_bytes}}; one tree uses one hash",
                level = i + 1,
                lms = l.name(),
                lms_bytes = l.m(),
                lmots = o.name(),
                lmots_bytes = o.n()
            ));
        }
        Ok(HssParams { levels })
    }

    /// Total signatures: 2^(sum of heights).
    pub fn capacity(&self) -> u128 {
        1u128 << self.levels.iter().map(|(l, _)| l.height()).sum::<u32>()
    }

    /// Signature size in bytes (RFC 8554 §6.3): Nspk, then per level an LMS signature, and
    /// a public key for every level below the top.
    pub fn signature_len(&self) -> usize {
        let lms_sig =
            |l: LmsType, o: LmotsType| 4 + o.signature_len() + 4 + l.height() as usize * l.m();
        let mut n = 4;
        for (i, (l, o)) in self.levels.iter().enumerate() {
            n += lms_sig(*l, *o);
            if i > 0 {
                n += l.public_key_len(); // this level's LMS public key, signed above
            }
        }
        n
    }

    /// The HSS public key's size: `u32(L)` and the top level's LMS public key (60 bytes
    /// with SHA-256, 52 with SHA-256/192).
    pub fn public_key_len(&self) -> usize {
        4 + self.levels[0].0.public_key_len()
    }

    /// Leaves key generation builds: one tree per level, 2^h LM-OTS key pairs each.
    pub fn keygen_leaves(&self) -> u64 {
        self.levels.iter().map(|(l, _)| 1u64 << l.height()).sum()
    }

    /// Seconds lunasim takes to generate this key on the machine kind it is developed on
    /// (2 cores, leaves spread over both): leaves × the time per leaf of their LM-OTS type,
    /// as `scripts/bench.sh hss` measures it (its `per_leaf_ms` lines; the H5…H20 curve is
    /// linear in the leaves).
    pub fn lunasim_keygen_seconds(&self) -> f64 {
        self.levels
            .iter()
            .map(|(l, o)| (1u64 << l.height()) as f64 * o.lunasim_leaf_ms() / 1000.0)
            .sum()
    }

    /// The time a generation takes, where that is worth a word: on a Luna, from the seed
    /// measurements (H5 ~60 ms, H10 ~2.6 s, H15 ~92 s, H20 hours; driven by the tallest
    /// tree), and on the built-in lunasim, from the calibrated estimate.
    pub fn keygen_warning(&self) -> Option<String> {
        self.keygen_warning_text().map(|t| t.text)
    }

    /// The same in a form each language translates.
    pub fn keygen_warning_text(&self) -> Option<crate::Text> {
        let tallest = self
            .levels
            .iter()
            .map(|(l, _)| l.height())
            .max()
            .unwrap_or(0);
        let luna = match tallest {
            0..=10 => None,
            11..=15 => Some(crate::text!("hsm.keygen.luna_h15", "Key generation of an H15 tree takes about 90 seconds on a Luna HSM and blocks the partition meanwhile.")),
            _ => Some(crate::text!("hsm.keygen.luna_h20", "Key generation of an H20 or taller tree can take hours on a Luna HSM and blocks the partition meanwhile; choose the smallest tree that covers the signatures you need.")),
        };
        let seconds = self.lunasim_keygen_seconds();
        let lunasim = (seconds >= 10.0).then(|| {
            let took = duration_words(seconds);
            crate::text!(
                "hsm.keygen.lunasim",
                "On the built-in lunasim it takes about {{duration}} ({{leaves}} one-time keys to build, measured on 2 cores); it runs in the background with its progress shown.",
                duration = &took,
                leaves = group_thousands(self.keygen_leaves())
            )
            .nest("duration", &took)
        });
        match (luna, lunasim) {
            (None, None) => None,
            (Some(a), None) => Some(a),
            (None, Some(b)) => Some(b),
            (Some(a), Some(b)) => Some(
                crate::text!(
                    "hsm.keygen.both",
                    "{{luna}} {{lunasim}}",
                    luna = &a,
                    lunasim = &b
                )
                .nest("luna", &a)
                .nest("lunasim", &b),
            ),
        }
    }

    pub fn lms_codes(&self) -> Vec<u64> {
        self.levels.iter().map(|(l, _)| l.code()).collect()
    }

    pub fn lmots_codes(&self) -> Vec<u64> {
        self.levels.iter().map(|(_, o)| o.code()).collect()
    }
}

/// What an officer can generate.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum KeySpec {
    MlDsa { set: MlDsaSet },
    MlKem { set: MlKemSet },
    SlhDsa { set: SlhDsaSet },
    Hss { params: HssParams },
    Ec { curve: Curve },
    Rsa { bits: u32 },
    Aes { bits: u32 },
    GenericSecret { bits: u32 },
}

impl KeySpec {
    /// Parse the CLI/IPC algorithm names (`ml-dsa-65`, `ec-p256`, `rsa-3072`, `aes-256`, …).
    /// HSS takes its levels separately.
    pub fn parse(alg: &str) -> Option<KeySpec> {
        let a = alg.trim().to_ascii_lowercase();
        Some(match a.as_str() {
            "ml-dsa-44" => KeySpec::MlDsa { set: MlDsaSet::P44 },
            "ml-dsa-65" => KeySpec::MlDsa { set: MlDsaSet::P65 },
            "ml-dsa-87" => KeySpec::MlDsa { set: MlDsaSet::P87 },
            "ml-kem-512" => KeySpec::MlKem {
                set: MlKemSet::P512,
            },
            "ml-kem-768" => KeySpec::MlKem {
                set: MlKemSet::P768,
            },
            "ml-kem-1024" => KeySpec::MlKem {
                set: MlKemSet::P1024,
            },
            "ec-p256" | "p256" | "p-256" => KeySpec::Ec { curve: Curve::P256 },
            "ec-p384" | "p384" | "p-384" => KeySpec::Ec { curve: Curve::P384 },
            "ed25519" => KeySpec::Ec {
                curve: Curve::Ed25519,
            },
            "rsa-2048" => KeySpec::Rsa { bits: 2048 },
            "rsa-3072" => KeySpec::Rsa { bits: 3072 },
            "rsa-4096" => KeySpec::Rsa { bits: 4096 },
            "aes-128" => KeySpec::Aes { bits: 128 },
            "aes-192" => KeySpec::Aes { bits: 192 },
            "aes-256" => KeySpec::Aes { bits: 256 },
            "generic-secret" => KeySpec::GenericSecret { bits: 256 },
            other => {
                let set = SlhDsaSet::ALL
                    .into_iter()
                    .find(|s| s.name().eq_ignore_ascii_case(other))?;
                KeySpec::SlhDsa { set }
            }
        })
    }

    /// The key-generation mechanism.
    pub fn mechanism(&self) -> u64 {
        match self {
            KeySpec::MlDsa { .. } => CKM_ML_DSA_KEY_PAIR_GEN,
            KeySpec::MlKem { .. } => CKM_ML_KEM_KEY_PAIR_GEN,
            KeySpec::SlhDsa { .. } => CKM_SLH_DSA_KEY_PAIR_GEN,
            KeySpec::Hss { .. } => CKM_HSS_KEY_PAIR_GEN,
            KeySpec::Ec {
                curve: Curve::Ed25519,
            } => CKM_EC_EDWARDS_KEY_PAIR_GEN,
            KeySpec::Ec { .. } => CKM_EC_KEY_PAIR_GEN,
            KeySpec::Rsa { .. } => CKM_RSA_PKCS_KEY_PAIR_GEN,
            KeySpec::Aes { .. } => CKM_AES_KEY_GEN,
            KeySpec::GenericSecret { .. } => CKM_GENERIC_SECRET_KEY_GEN,
        }
    }

    pub fn is_pair(&self) -> bool {
        !matches!(self, KeySpec::Aes { .. } | KeySpec::GenericSecret { .. })
    }

    /// Short algorithm tag for labels (`ml_dsa_65`).
    pub fn tag(&self) -> String {
        match self {
            KeySpec::MlDsa { set } => set.name().to_ascii_lowercase().replace('-', "_"),
            KeySpec::MlKem { set } => set.name().to_ascii_lowercase().replace('-', "_"),
            KeySpec::SlhDsa { set } => set.name().to_ascii_lowercase().replace('-', "_"),
            KeySpec::Hss { .. } => "hss_lms".into(),
            KeySpec::Ec { curve: Curve::P256 } => "ecdsa_p256".into(),
            KeySpec::Ec { curve: Curve::P384 } => "ecdsa_p384".into(),
            KeySpec::Ec {
                curve: Curve::Ed25519,
            } => "ed25519".into(),
            KeySpec::Rsa { bits } => format!("rsa_{bits}"),
            KeySpec::Aes { bits } => format!("aes_{bits}"),
            KeySpec::GenericSecret { .. } => "secret".into(),
        }
    }

    pub fn display(&self) -> String {
        match self {
            KeySpec::MlDsa { set } => set.name().into(),
            KeySpec::MlKem { set } => set.name().into(),
            KeySpec::SlhDsa { set } => set.name().into(),
            KeySpec::Hss { params } => format!(
                "HSS/LMS {} level{} ({})",
                params.levels.len(),
                if params.levels.len() == 1 { "" } else { "s" },
                params
                    .levels
                    .iter()
                    .map(|(l, o)| format!("{}/{}", l.name(), o.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            KeySpec::Ec { curve } => format!("EC {}", curve.name()),
            KeySpec::Rsa { bits } => format!("RSA-{bits}"),
            KeySpec::Aes { bits } => format!("AES-{bits}"),
            KeySpec::GenericSecret { bits } => format!("Generic secret ({bits} bits)"),
        }
    }
}

/// A label in the seed's `purpose_algorithm_date` style, e.g. `release_ml_dsa_65_2026_11`.
pub fn suggest_label(purpose: &str, spec: &KeySpec, year: i32, month: u8) -> String {
    let purpose: String = purpose
        .trim()
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let purpose = purpose.trim_matches('_');
    let purpose = if purpose.is_empty() { "key" } else { purpose };
    format!("{}_{}_{:04}_{:02}", purpose, spec.tag(), year, month)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fips_sizes() {
        assert_eq!(MlDsaSet::P65.signature_len(), 3309);
        assert_eq!(MlKemSet::P768.ciphertext_len(), 1088);
        assert_eq!(SlhDsaSet::Sha2_128s.signature_len(), 7856);
        assert_eq!(SlhDsaSet::Shake128f.signature_len(), 17088);
        assert_eq!(SlhDsaSet::Sha2_192s.public_key_len(), 48);
        assert_eq!(SlhDsaSet::Shake256f.signature_len(), 49856);
        assert_eq!(SlhDsaSet::Sha2_256s.signature_len(), 29792);
        for (i, s) in SlhDsaSet::ALL.iter().enumerate() {
            assert_eq!(s.parameter_set(), i as u64 + 1);
            assert_eq!(SlhDsaSet::from_parameter_set(i as u64 + 1), Some(*s));
        }
    }

    #[test]
    fn hss_sizes_match_the_reference() {
        // test-backends.md: 2 levels H5/W8 → 2644-byte signatures, 1024 signatures.
        let p = HssParams::new(vec![
            (LmsType::H5, LmotsType::W8),
            (LmsType::H5, LmotsType::W8),
        ])
        .unwrap();
        assert_eq!(p.signature_len(), 2644);
        assert_eq!(p.capacity(), 1024);
        assert!(p.keygen_warning().is_none());
        let big = HssParams::new(vec![(LmsType::H20, LmotsType::W8)]).unwrap();
        assert!(big.keygen_warning().unwrap().contains("hours"));
        // Calibrated on lunasim: 2^20 W8 leaves at about 1 ms each on 2 cores.
        let w = big.keygen_warning().unwrap();
        assert!(w.contains("about 18 min") && w.contains("1,048,576"), "{w}");
        let h15 = HssParams::new(vec![(LmsType::H15, LmotsType::W4)]).unwrap();
        assert!((3.0..4.0).contains(&h15.lunasim_keygen_seconds()));
        assert!(
            !h15.keygen_warning().unwrap().contains("lunasim"),
            "quick there"
        );
        // The keyed text's English is the warning `hsmc` has always printed.
        let t = big.keygen_warning_text().unwrap();
        assert_eq!(
            t.text,
            "Key generation of an H20 or taller tree can take hours on a Luna HSM and blocks the partition meanwhile; choose the smallest tree that covers the signatures you need. On the built-in lunasim it takes about 18 min (1,048,576 one-time keys to build, measured on 2 cores); it runs in the background with its progress shown."
        );
        assert_eq!(t.key, "hsm.keygen.both");
        assert_eq!(
            t.args.get("lunasim.key").map(String::as_str),
            Some("hsm.keygen.lunasim")
        );
        assert_eq!(
            t.args.get("lunasim.duration.key").map(String::as_str),
            Some("hsm.duration.minutes")
        );
        assert_eq!(
            h15.keygen_warning_text().unwrap().text,
            "Key generation of an H15 tree takes about 90 seconds on a Luna HSM and blocks the partition meanwhile."
        );
        let h10 = HssParams::new(vec![(LmsType::H10, LmotsType::W8); 2]).unwrap();
        assert!(
            h10.keygen_warning().is_none(),
            "2 s on lunasim, 2.6 s on a Luna"
        );
        assert!(HssParams::new(vec![]).is_err());
    }

    #[test]
    fn hss_sha256_192_sizes_follow_rfc_9858() {
        // RFC 9858's test case 1: one level, M24 H5 with N24 W8 — 784-byte signatures,
        // 52-byte public key.
        let one = HssParams::new(vec![(LmsType::M24H5, LmotsType::N24W8)]).unwrap();
        assert_eq!((one.signature_len(), one.public_key_len()), (784, 52));
        assert_eq!(one.capacity(), 32);
        // M24 over M32: the bottom level's LMS public key (56 bytes) is signed above.
        let mixed = HssParams::new(vec![
            (LmsType::M24H10, LmotsType::N24W4),
            (LmsType::H5, LmotsType::W8),
        ])
        .unwrap();
        assert_eq!(
            mixed.signature_len(),
            4 + (4 + (4 + 24 + 51 * 24) + 4 + 10 * 24) + 56 + (4 + 1124 + 4 + 5 * 32)
        );
        assert_eq!(mixed.public_key_len(), 52);
        assert_eq!(mixed.lms_codes(), [0x0B, 5]);
        assert_eq!(mixed.lmots_codes(), [7, 4]);
        let err = HssParams::new(vec![(LmsType::M24H5, LmotsType::W8)]).unwrap_err();
        assert_eq!(err.key, "errors.hss_level_mixed_hash");
        assert_eq!(
            err.text,
            "level 1: LMS_SHA256_M24_H5 hashes to 24 bytes, LMOTS_SHA256_N32_W8 to 32; one tree uses one hash"
        );
        for t in LmsType::ALL {
            assert_eq!(LmsType::from_code(t.code()), Some(t));
            assert_eq!(LmsType::parse(t.name()), Some(t));
            assert_eq!(t.with_m(24).height(), t.height());
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
        }
        for t in LmotsType::ALL {
            assert_eq!(LmotsType::from_code(t.code()), Some(t));
            assert_eq!(t.with_n(32).with_n(t.n()), t);
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
        }
        assert_eq!(
            LmotsType::ALL.map(|t| (t.n(), t.chains())),
            [
                (32, 265),
                (32, 133),
                (32, 67),
                (32, 34),
                (24, 200),
                (24, 101),
                (24, 51),
                (24, 26)
            ]
        );
        assert_eq!(LmsType::parse("lms_sha256_m24_h10"), Some(LmsType::M24H10));
        assert_eq!(
            LmsType::from_code(0x0F),
            None,
            "SHAKE types are not offered"
        );
    }

    #[test]
    fn ec_points() {
        let raw = vec![4u8; 65];
        assert_eq!(ec_point_raw(&raw, Curve::P256), Some(raw.clone()));
        let mut der = vec![0x04, 65];
        der.extend_from_slice(&raw);
        assert_eq!(ec_point_raw(&der, Curve::P256), Some(raw));
        assert_eq!(ec_point_raw(&[1, 2, 3], Curve::P256), None);
        assert_eq!(
            Curve::from_ec_params(Curve::Ed25519.ec_params(true)),
            Some(Curve::Ed25519)
        );
        assert_eq!(
            Curve::from_ec_params(Curve::P384.ec_params(false)),
            Some(Curve::P384)
        );
    }

    #[test]
    fn labels_and_parsing() {
        let spec = KeySpec::parse("ML-DSA-65").unwrap();
        assert_eq!(
            suggest_label("Release signing", &spec, 2026, 11),
            "release_signing_ml_dsa_65_2026_11"
        );
        assert_eq!(
            KeySpec::parse("slh-dsa-sha2-128s"),
            Some(KeySpec::SlhDsa {
                set: SlhDsaSet::Sha2_128s
            })
        );
        assert_eq!(KeySpec::parse("rsa-1024"), None);
    }
}
