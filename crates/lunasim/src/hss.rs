//! HSS/LMS (RFC 8554, SP 800-208) with `hbs-lms`, over bytes: parameters and Luna's
//! checks of them, key generation, signing that hands the advanced state to a callback
//! before the signature leaves (the key object persists it there), and verification.
//! SHA-256/M32 LMS types H5–H20 with LM-OTS W1–W8, as Luna supports them; H25 is refused
//! as Luna refuses it.

use cryptoki_sys::*;
use hbs_lms::{HssParameter, LmotsAlgorithm, LmsAlgorithm, Seed, Sha256_256};
use zeroize::Zeroizing;

/// Luna's single-part `CKM_HSS` limit; larger messages go through `C_SignUpdate`.
pub const MAX_SINGLE_PART: usize = 48_108;
/// Upper bound for a multi-part message held for signing.
pub const MAX_MULTI_PART: usize = 256 << 20;
/// Room for hbs-lms's cached top-tree nodes ("aux data").
const AUX_LEN: usize = 1 << 20;

/// A PKCS#11 operation in progress on HSS keys.
pub enum Op {
    Sign {
        handle: CK_OBJECT_HANDLE,
        data: Vec<u8>,
        multipart: bool,
    },
    Verify {
        public_key: Vec<u8>,
        data: Vec<u8>,
        multipart: bool,
    },
}

pub fn height(lms_type: u32) -> Option<u32> {
    match lms_type {
        5 => Some(5),
        6 => Some(10),
        7 => Some(15),
        8 => Some(20),
        9 => Some(25),
        _ => None,
    }
}

fn chains(ots_type: u32) -> Option<usize> {
    match ots_type {
        1 => Some(265),
        2 => Some(133),
        3 => Some(67),
        4 => Some(34),
        _ => None,
    }
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
        // H25 is "not supported by Luna"; M24 and SHAKE types are not implemented here.
        if !(5..=8).contains(&l) || chains(o).is_none() {
            return Err(CKR_ATTRIBUTE_VALUE_INVALID);
        }
        out.push((l, o));
    }
    Ok(out)
}

/// Bytes of an HSS signature for these levels (RFC 8554 §6.3).
pub fn signature_len(levels: &[(u32, u32)]) -> usize {
    let mut n = 4;
    for (i, (l, o)) in levels.iter().enumerate() {
        n +=
            4 + (4 + 32 + chains(*o).unwrap_or(0) * 32) + 4 + height(*l).unwrap_or(0) as usize * 32;
        if i + 1 < levels.len() {
            n += 56;
        }
    }
    n
}

fn parameters(levels: &[(u32, u32)]) -> Vec<HssParameter<Sha256_256>> {
    levels
        .iter()
        .map(|(l, o)| HssParameter::new(LmotsAlgorithm::from(*o), LmsAlgorithm::from(*l)))
        .collect()
}

/// A new key: (private state, public key, aux data).
pub type NewKey = (Zeroizing<Vec<u8>>, Vec<u8>, Vec<u8>);

/// Generate a key pair from a 32-byte seed (drawn from the inner module's RNG).
pub fn keygen(levels: &[(u32, u32)], seed_bytes: &[u8]) -> Result<NewKey, CK_RV> {
    let mut seed = Seed::<Sha256_256>::default();
    if seed.as_slice().len() != seed_bytes.len() {
        return Err(CKR_GENERAL_ERROR);
    }
    seed.as_mut_slice().copy_from_slice(seed_bytes);
    let params = parameters(levels);
    with_big_stack(move || {
        let mut aux = vec![0u8; AUX_LEN];
        let (sk, vk) = hbs_lms::keygen::<Sha256_256>(&params, &seed, Some(&mut &mut aux[..]))
            .map_err(|_| CKR_FUNCTION_FAILED)?;
        Ok((
            Zeroizing::new(sk.as_slice().to_vec()),
            vk.as_slice().to_vec(),
            aux,
        ))
    })
}

/// One signature with the next one-time key of `state`. hbs-lms hands `update` the
/// advanced state before it returns the signature, and returns none when `update` fails.
/// `aux` holds the cached top-tree nodes (empty: none). Run it on [`with_big_stack`].
pub fn sign(
    message: &[u8],
    state: &[u8],
    update: &mut dyn FnMut(&[u8]) -> Result<(), ()>,
    aux: &mut [u8],
) -> Option<Vec<u8>> {
    let aux_arg = if aux.is_empty() {
        None
    } else {
        Some(&mut &mut aux[..])
    };
    hbs_lms::sign::<Sha256_256>(message, state, update, aux_arg)
        .ok()
        .map(|sig| sig.as_ref().to_vec())
}

pub fn verify(public_key: &[u8], message: &[u8], signature: &[u8]) -> bool {
    with_big_stack(|| hbs_lms::verify::<Sha256_256>(message, signature, public_key).is_ok())
}

/// Run `f` on a thread with a large stack and wait for it. hbs-lms keeps its working
/// arrays (sized for 8 levels of H25 trees) on the stack — more than a caller's thread may
/// have; lunasim runs on its callers' threads.
pub fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("lunasim-hss".into())
            .stack_size(256 << 20)
            .spawn_scoped(scope, f)
            .expect("spawn HSS worker")
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
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
            "M24 LM-OTS types are not implemented"
        );
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
    }
}
