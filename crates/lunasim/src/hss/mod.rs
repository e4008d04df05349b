//! HSS/LMS (RFC 8554, SP 800-208), lunasim's own: parameters and Luna's checks of them,
//! key generation, signing from trees kept in memory and on disk, and verification.
//! LMS types H5–H20 with LM-OTS W1–W8 in SHA-256 (M32/N32) and RFC 9858's SHA-256/192
//! (M24/N24), as Luna supports them (its samples list both families); H25 is refused as
//! Luna refuses it. The SHAKE256 types of RFC 9858 are refused: Luna does not list them.
//! Levels may differ in type, hash length included (RFC 8554 §6 gives each level its
//! own types); within one tree the LMS and LM-OTS types share their hash (m = n).
//!
//! - [`lms`]: LM-OTS, LMS nodes, the seed derivation (compatible with `hbs-lms`, which
//!   earlier lunasim versions signed with, so their keys keep working), verification;
//! - [`tree`]: trees cut into blocks, built all at once or one leaf at a time;
//! - [`engine`]: the signer — every level's tree for the key's position, and the next
//!   block and next tree of each level built a little with every signature;
//! - [`cache`]: those trees on disk beside the key file;
//! - [`progress`]: key generations in progress, for `LUNASIM_Control`.
//!
//! Written here rather than with `hbs-lms`, which rebuilds the active bottom tree for
//! every signature (1.5 s per signature at H10/H10, 32 s at H10/H15) and exposes no tree
//! state to keep: a signature here costs one LM-OTS signature, a path lookup and about one
//! leaf of the next tree. `hbs-lms` (0.2.0-alpha.1) is no reference for SHA-256/192
//! either: with its `Sha256_192` hasher it writes the M32/N32 type codes and keeps the
//! N32 checksum shift for W1 (7, where RFC 9858 has 8); the M24 types are checked against
//! RFC 9858's test vector instead (`rfc_vectors`), and by `hsslms` in the module tests.

pub mod cache;
pub mod engine;
pub mod lms;
pub mod progress;
pub mod tree;

#[cfg(test)]
mod against_reference;
#[cfg(test)]
mod rfc_vectors;

use cryptoki_sys::*;
use zeroize::Zeroizing;

use engine::{Engine, Reservation};
use lms::Params;

/// Luna's single-part `CKM_HSS` limit; larger messages go through `C_SignUpdate`.
pub const MAX_SINGLE_PART: usize = 48_108;
/// Upper bound for a multi-part message held for verification (signing streams).
pub const MAX_MULTI_PART_VERIFY: usize = 256 << 20;

/// A multi-part signature in progress: its one-time key is reserved (the advanced
/// position is on disk) at the first `C_SignUpdate`, and the message is hashed as it comes
/// — nothing of it is kept.
pub struct Stream {
    pub reservation: Reservation,
    pub hasher: sha2::Sha256,
}

/// A PKCS#11 operation in progress on HSS keys.
pub enum Op {
    Sign {
        handle: CK_OBJECT_HANDLE,
        multipart: bool,
        stream: Option<Box<Stream>>,
    },
    Verify {
        public_key: Vec<u8>,
        data: Vec<u8>,
        multipart: bool,
    },
}

pub fn height(lms_type: u32) -> Option<u32> {
    lms::Lms::from_code(lms_type).map(|l| l.h)
}

/// Check the private template's HSS attributes the way Luna does.
pub fn validate(levels: u64, lms: &[u64], ots: &[u64]) -> Result<Vec<(u32, u32)>, CK_RV> {
    if !(1..=8).contains(&levels) || lms.len() as u64 != levels || ots.len() as u64 != levels {
        return Err(CKR_ATTRIBUTE_VALUE_INVALID);
    }
    let mut out = Vec::new();
    for (l, o) in lms.iter().zip(ots) {
        // Compare the full CK_ULONG: 0x1_0000_0005 is not LMS type 5.
        let (Ok(l), Ok(o)) = (u32::try_from(*l), u32::try_from(*o)) else {
            return Err(CKR_ATTRIBUTE_VALUE_INVALID);
        };
        // H25 is "not supported by Luna" (types 9 and 14); SHAKE types are not known
        // here; the tree's LMS and LM-OTS types must hash alike.
        if l == 9 || l == 14 || Params::from_codes(l, o).is_none() {
            return Err(CKR_ATTRIBUTE_VALUE_INVALID);
        }
        out.push((l, o));
    }
    Ok(out)
}

/// Bytes of an HSS signature for these (validated) levels (RFC 8554 §6.3): per level an
/// LMS signature, and below the top the public key it signs.
pub fn signature_len(levels: &[(u32, u32)]) -> usize {
    let params = parameters(levels);
    4 + params.iter().map(|p| p.signature_len()).sum::<usize>()
        + params[1..]
            .iter()
            .map(|p| p.lms.public_key_len())
            .sum::<usize>()
}

/// Bytes of the HSS public key of these (validated) levels: `u32(L)` and the top tree's
/// LMS public key.
pub fn public_key_len(levels: &[(u32, u32)]) -> usize {
    4 + parameters(&levels[..1])[0].lms.public_key_len()
}

/// The parameters of validated levels.
pub fn parameters(levels: &[(u32, u32)]) -> Vec<Params> {
    levels
        .iter()
        .map(|(l, o)| Params::from_codes(*l, *o).expect("validated levels"))
        .collect()
}

/// Leaves a key generation builds: one tree per level.
pub fn keygen_leaves(levels: &[(u32, u32)]) -> u64 {
    parameters(levels).iter().map(|p| 1u64 << p.lms.h).sum()
}

/// A new key: its master seed, public key and the signer with every first tree built.
pub struct NewKey {
    pub seed: Zeroizing<[u8; 32]>,
    pub public_key: Vec<u8>,
    pub engine: Engine,
}

/// Generate a key pair from a 32-byte seed (drawn from the inner module's RNG); the
/// leaves built are counted in `progress`.
pub fn keygen(
    levels: &[(u32, u32)],
    seed_bytes: &[u8],
    progress: &progress::Running,
) -> Result<NewKey, CK_RV> {
    let seed: [u8; 32] = seed_bytes.try_into().map_err(|_| CKR_GENERAL_ERROR)?;
    let seed = Zeroizing::new(seed);
    let mut engine = Engine::new(parameters(levels), &seed, Vec::new());
    engine.align(&vec![0; levels.len()], Some(&progress.0.done));
    Ok(NewKey {
        public_key: engine.public_key(),
        seed,
        engine,
    })
}

pub fn verify(public_key: &[u8], message: &[u8], signature: &[u8]) -> bool {
    lms::verify_hss(public_key, message, signature)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_follows_luna() {
        assert_eq!(validate(2, &[5, 5], &[4, 4]), Ok(vec![(5, 4), (5, 4)]));
        assert_eq!(
            validate(2, &[5], &[4, 4]),
            Err(CKR_ATTRIBUTE_VALUE_INVALID),
            "arrays must have `levels` entries"
        );
        assert_eq!(
            validate(1, &[9], &[4]),
            Err(CKR_ATTRIBUTE_VALUE_INVALID),
            "H25 is not supported by Luna"
        );
        assert_eq!(
            validate(9, &[5; 9], &[4; 9]),
            Err(CKR_ATTRIBUTE_VALUE_INVALID),
            "at most 8 levels"
        );
        assert_eq!(
            validate(1, &[5], &[7]),
            Err(CKR_ATTRIBUTE_VALUE_INVALID),
            "an N24 LM-OTS type in an M32 tree"
        );
        assert_eq!(
            validate(1, &[10], &[4]),
            Err(CKR_ATTRIBUTE_VALUE_INVALID),
            "an N32 LM-OTS type in an M24 tree"
        );
        assert_eq!(
            validate(2, &[10, 6], &[8, 3]),
            Ok(vec![(10, 8), (6, 3)]),
            "SHA-256/192 over SHA-256: levels may differ"
        );
        assert_eq!(
            validate(1, &[14], &[8]),
            Err(CKR_ATTRIBUTE_VALUE_INVALID),
            "M24 H25 is refused as M32 H25 is"
        );
        for shake in [(15, 12), (20, 16)] {
            assert_eq!(
                validate(1, &[shake.0], &[shake.1]),
                Err(CKR_ATTRIBUTE_VALUE_INVALID),
                "SHAKE256 types are not Luna's"
            );
        }
        // Found by the lunasim_templates fuzz target's reading: types were cut to 32 bits.
        assert_eq!(
            validate(1, &[(1 << 32) | 5], &[4]),
            Err(CKR_ATTRIBUTE_VALUE_INVALID),
            "an LMS type beyond 32 bits is not type 5"
        );
        assert_eq!(
            validate(1, &[5], &[(1 << 40) | 4]),
            Err(CKR_ATTRIBUTE_VALUE_INVALID),
            "an LM-OTS type beyond 32 bits is not type 4"
        );
    }

    #[test]
    fn signature_length_formula() {
        assert_eq!(signature_len(&[(5, 4), (5, 4)]), 2644);
        // RFC 9858's test case 1 (one level, M24 H5, N24 W8) is 784 bytes.
        assert_eq!(signature_len(&[(10, 8)]), 784);
        // M24 over M32: the bottom (M32) tree's 56-byte public key is signed above.
        assert_eq!(signature_len(&[(10, 8), (5, 4)]), 4 + 780 + 56 + 1292);
        assert_eq!(public_key_len(&[(5, 4)]), 60);
        assert_eq!(public_key_len(&[(10, 8), (5, 4)]), 52);
    }
}
