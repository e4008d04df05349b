//! HSS verification (RFC 8554 §6.3) on top of RustCrypto's single-tree LMS verifier.
//!
//! `lms-signature` verifies one LMS tree, with the mode fixed at the type level, and has
//! no HSS layer; this module parses the HSS structures, dispatches each level to the right
//! LMS mode by its type codes, and chains the levels. Written here because no crate from
//! the reachable registries offers HSS verification that is not the signer's own library.
//!
//! Supported: LMS_SHA256_M32_H5..H25 with LMOTS_SHA256_N32_W1..W8 (RFC 8554), and RFC
//! 9858's SHA-256/192 family, LMS_SHA256_M24_H5..H25 with LMOTS_SHA256_N24_W1..W8 (every
//! hash SHA-256 cut to 24 bytes); levels may mix them. `lms-signature` has no M24 (nor
//! SHAKE) modes, so M24 trees go to this crate's RFC 8554 code, checked against RFC 9858's
//! test vector. The SHAKE256 types are refused as unsupported.

use lms_signature::lms::{LmsSha256M32H10, LmsSha256M32H5};
use lms_signature::ots::{
    LmsOtsSha256N32W1, LmsOtsSha256N32W2, LmsOtsSha256N32W4, LmsOtsSha256N32W8,
};

use crate::{Result, VerifyError};

/// LMS type code → (m, tree height): SHA-256 (m = 32) and SHA-256/192 (m = 24).
pub fn lms_mh(lms_type: u32) -> Option<(usize, u32)> {
    match lms_type {
        5 => Some((32, 5)),
        6 => Some((32, 10)),
        7 => Some((32, 15)),
        8 => Some((32, 20)),
        9 => Some((32, 25)),
        10 => Some((24, 5)),
        11 => Some((24, 10)),
        12 => Some((24, 15)),
        13 => Some((24, 20)),
        14 => Some((24, 25)),
        _ => None,
    }
}

/// LMS type code → tree height.
pub fn lms_height(lms_type: u32) -> Option<u32> {
    lms_mh(lms_type).map(|(_, h)| h)
}

/// LM-OTS type code → (n, p).
pub fn lmots_np(ots_type: u32) -> Option<(usize, usize)> {
    match ots_type {
        1 => Some((32, 265)),
        2 => Some((32, 133)),
        3 => Some((32, 67)),
        4 => Some((32, 34)),
        5 => Some((24, 200)),
        6 => Some((24, 101)),
        7 => Some((24, 51)),
        8 => Some((24, 26)),
        _ => None,
    }
}

/// Length of an LMS public key of this LMS type: types, I (16), T[1] (m).
fn lms_public_len(lms_type: u32) -> Result<usize> {
    lms_mh(lms_type)
        .map(|(m, _)| 24 + m)
        .ok_or_else(|| VerifyError::Unsupported(format!("LMS type {lms_type}")))
}

fn be32(b: &[u8], at: usize) -> Result<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| VerifyError::BadSignature("truncated".into()))
}

/// Length of the LMS signature starting at `sig[at..]`.
fn lms_signature_len(sig: &[u8], at: usize) -> Result<usize> {
    let ots_type = be32(sig, at + 4)?;
    let (n, p) = lmots_np(ots_type)
        .ok_or_else(|| VerifyError::Unsupported(format!("LM-OTS type {ots_type}")))?;
    let ots_len = 4 + n + p * n;
    let lms_type = be32(sig, at + 4 + ots_len)?;
    let (m, h) =
        lms_mh(lms_type).ok_or_else(|| VerifyError::Unsupported(format!("LMS type {lms_type}")))?;
    Ok(4 + ots_len + 4 + h as usize * m)
}

/// Verify one LMS signature over `message` with an LMS public key. Trees of height 5 and
/// 10 go to `lms-signature`; it cannot instantiate 15–25 (its type-level array sizes exceed
/// what `hybrid-array` supports), so those use [`rfc8554::verify_lms`].
pub fn verify_lms(public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<()> {
    let lms_type = be32(public_key, 0).map_err(|_| VerifyError::BadKey("truncated".into()))?;
    let ots_type = be32(public_key, 4).map_err(|_| VerifyError::BadKey("truncated".into()))?;
    if be32(signature, 4)? != ots_type {
        return Err(VerifyError::Mismatch);
    }
    match lms_type {
        5 | 6 => verify_lms_crate(lms_type, ots_type, public_key, message, signature),
        _ => rfc8554::verify_lms(public_key, message, signature),
    }
}

fn verify_lms_crate(
    lms_type: u32,
    ots_type: u32,
    public_key: &[u8],
    message: &[u8],
    signature: &[u8],
) -> Result<()> {
    use lms_signature::lms::{Signature, VerifyingKey};
    use signature::Verifier;
    macro_rules! with_mode {
        ($($l:literal, $o:literal => $mode:ty;)*) => {
            match (lms_type, ots_type) {
                $(($l, $o) => {
                    let vk = VerifyingKey::<$mode>::try_from(public_key)
                        .map_err(|_| VerifyError::BadKey("not an LMS public key of its stated type".into()))?;
                    let sig = Signature::<$mode>::try_from(signature)
                        .map_err(|_| VerifyError::BadSignature("not an LMS signature of the key's type".into()))?;
                    if vk.verify(message, &sig).is_ok() { Ok(()) } else { Err(VerifyError::Mismatch) }
                })*
                _ => Err(VerifyError::Unsupported(format!("LMS type {lms_type} with LM-OTS type {ots_type}"))),
            }
        };
    }
    with_mode! {
        5, 1 => LmsSha256M32H5<LmsOtsSha256N32W1>; 5, 2 => LmsSha256M32H5<LmsOtsSha256N32W2>;
        5, 3 => LmsSha256M32H5<LmsOtsSha256N32W4>; 5, 4 => LmsSha256M32H5<LmsOtsSha256N32W8>;
        6, 1 => LmsSha256M32H10<LmsOtsSha256N32W1>; 6, 2 => LmsSha256M32H10<LmsOtsSha256N32W2>;
        6, 3 => LmsSha256M32H10<LmsOtsSha256N32W4>; 6, 4 => LmsSha256M32H10<LmsOtsSha256N32W8>;
    }
}

/// RFC 8554 Algorithms 4b and 6a (LM-OTS candidate key, LMS verification) for the SHA-256
/// n = m = 32 types and RFC 9858's SHA-256/192 n = m = 24 ones (SHA-256's first 24 bytes,
/// for every hash), any tree height.
pub mod rfc8554 {
    use sha2::{Digest, Sha256};

    use super::{be32, lmots_np, lms_mh};
    use crate::{Result, VerifyError};

    /// SHA-256 of what `h` was fed, cut to `n` bytes.
    fn cut(h: Sha256, n: usize) -> Vec<u8> {
        h.finalize()[..n].to_vec()
    }

    const D_PBLC: [u8; 2] = [0x80, 0x80];
    const D_MESG: [u8; 2] = [0x81, 0x81];
    const D_LEAF: [u8; 2] = [0x82, 0x82];
    const D_INTR: [u8; 2] = [0x83, 0x83];

    fn w_of(ots_type: u32) -> Option<(u32, u32)> {
        // (w, left shift of the checksum): RFC 8554 Table 1, RFC 9858 §4.
        match ots_type {
            1 => Some((1, 7)),
            2 => Some((2, 6)),
            3 => Some((4, 4)),
            4 => Some((8, 0)),
            5 => Some((1, 8)),
            6 => Some((2, 6)),
            7 => Some((4, 4)),
            8 => Some((8, 0)),
            _ => None,
        }
    }

    fn coef(s: &[u8], i: usize, w: u32) -> u32 {
        let w = w as usize;
        let byte = s[i * w / 8] as u32;
        let shift = 8 - (w * (i % (8 / w)) + w);
        ((1u32 << w) - 1) & (byte >> shift)
    }

    /// `H(I ‖ u32(q) ‖ D_MESG ‖ C`, ready for the message (Algorithm 4b, step 3).
    pub(super) fn message_prefix(id: &[u8], q: u32, c: &[u8]) -> Sha256 {
        Sha256::new()
            .chain_update(id)
            .chain_update(q.to_be_bytes())
            .chain_update(D_MESG)
            .chain_update(c)
    }

    /// Algorithm 4b: the LM-OTS public key a signature implies. `hash_message` completes
    /// the message hash from its prefix (the message fed whole, or streamed beforehand);
    /// its first n bytes count.
    fn candidate_ots_key(
        ots_type: u32,
        sig: &[u8],
        hash_message: &mut dyn FnMut(Sha256) -> [u8; 32],
        id: &[u8],
        q: u32,
    ) -> Result<Vec<u8>> {
        let (n, p) = lmots_np(ots_type)
            .ok_or_else(|| VerifyError::Unsupported(format!("LM-OTS type {ots_type}")))?;
        let (w, ls) = w_of(ots_type)
            .ok_or_else(|| VerifyError::Unsupported(format!("LM-OTS type {ots_type}")))?;
        if sig.len() != 4 + n + p * n || be32(sig, 0)? != ots_type {
            return Err(VerifyError::BadSignature(
                "LM-OTS signature length or type".into(),
            ));
        }
        let c = &sig[4..4 + n];
        let y = &sig[4 + n..];
        let qb = q.to_be_bytes();
        let q_hash = hash_message(message_prefix(id, q, c));
        let q_hash = &q_hash[..n];
        let max = (1u32 << w) - 1;
        let mut sum = 0u32;
        for i in 0..(n * 8 / w as usize) {
            sum += max - coef(q_hash, i, w);
        }
        let cksm = ((sum << ls) as u16).to_be_bytes();
        let mut qa = q_hash.to_vec();
        qa.extend_from_slice(&cksm);
        let mut pub_hash = Sha256::new()
            .chain_update(id)
            .chain_update(qb)
            .chain_update(D_PBLC);
        for i in 0..p {
            let a = coef(&qa, i, w);
            let mut tmp = y[i * n..(i + 1) * n].to_vec();
            for j in a..max {
                tmp = cut(
                    Sha256::new()
                        .chain_update(id)
                        .chain_update(qb)
                        .chain_update((i as u16).to_be_bytes())
                        .chain_update([j as u8])
                        .chain_update(&tmp),
                    n,
                );
            }
            pub_hash.update(&tmp);
        }
        Ok(cut(pub_hash, n))
    }

    /// Algorithm 6a: verify one LMS signature.
    pub fn verify_lms(public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<()> {
        verify_lms_with(public_key, signature, &mut |prefix| {
            prefix.chain_update(message).finalize().into()
        })
    }

    /// [`verify_lms`] with the message hash completed by `hash_message`.
    pub(super) fn verify_lms_with(
        public_key: &[u8],
        signature: &[u8],
        hash_message: &mut dyn FnMut(Sha256) -> [u8; 32],
    ) -> Result<()> {
        let lms_type = be32(public_key, 0)?;
        let ots_type = be32(public_key, 4)?;
        let (m, h) = lms_mh(lms_type)
            .ok_or_else(|| VerifyError::Unsupported(format!("LMS type {lms_type}")))?;
        let (n, p) = lmots_np(ots_type)
            .ok_or_else(|| VerifyError::Unsupported(format!("LM-OTS type {ots_type}")))?;
        if public_key.len() != 8 + 16 + m {
            return Err(VerifyError::BadKey(format!(
                "an LMS public key of type {lms_type} is {} bytes, not {}",
                8 + 16 + m,
                public_key.len()
            )));
        }
        if m != n {
            return Err(VerifyError::BadKey(format!(
                "LMS type {lms_type} (m = {m}) with LM-OTS type {ots_type} (n = {n}): one tree hashes with one function"
            )));
        }
        let id = &public_key[8..24];
        let t1 = &public_key[24..];
        let ots_len = 4 + n + p * n;
        if signature.len() != 4 + ots_len + 4 + h as usize * m {
            return Err(VerifyError::BadSignature(
                "LMS signature length does not fit its types".into(),
            ));
        }
        let q = be32(signature, 0)?;
        if q as u64 >= 1u64 << h {
            return Err(VerifyError::BadSignature(format!(
                "leaf index {q} beyond a tree of height {h}"
            )));
        }
        if be32(signature, 4 + ots_len)? != lms_type {
            return Err(VerifyError::Mismatch);
        }
        let kc = candidate_ots_key(ots_type, &signature[4..4 + ots_len], hash_message, id, q)?;
        let path = &signature[4 + ots_len + 4..];
        let mut node = (1u64 << h) + q as u64;
        let mut tmp = cut(
            Sha256::new()
                .chain_update(id)
                .chain_update((node as u32).to_be_bytes())
                .chain_update(D_LEAF)
                .chain_update(kc),
            m,
        );
        let mut i = 0usize;
        while node > 1 {
            let sibling = &path[i * m..(i + 1) * m];
            let parent = ((node / 2) as u32).to_be_bytes();
            let hasher = Sha256::new()
                .chain_update(id)
                .chain_update(parent)
                .chain_update(D_INTR);
            tmp = if node % 2 == 1 {
                cut(hasher.chain_update(sibling).chain_update(&tmp), m)
            } else {
                cut(hasher.chain_update(&tmp).chain_update(sibling), m)
            };
            node /= 2;
            i += 1;
        }
        if tmp.as_slice() == t1 {
            Ok(())
        } else {
            Err(VerifyError::Mismatch)
        }
    }
}

/// The parameters an HSS public key announces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HssPublicKey {
    pub levels: u32,
    pub lms_type: u32,
    pub ots_type: u32,
}

pub fn parse_public_key(public_key: &[u8]) -> Result<HssPublicKey> {
    let lms_type = be32(public_key, 4).map_err(|_| VerifyError::BadKey("truncated".into()))?;
    let want = 4 + lms_public_len(lms_type)?;
    if public_key.len() != want {
        return Err(VerifyError::BadKey(format!(
            "an HSS public key of LMS type {lms_type} is {want} bytes, not {}",
            public_key.len()
        )));
    }
    let levels = be32(public_key, 0).map_err(|_| VerifyError::BadKey("truncated".into()))?;
    if !(1..=8).contains(&levels) {
        return Err(VerifyError::BadKey(format!("{levels} levels")));
    }
    Ok(HssPublicKey {
        levels,
        lms_type: be32(public_key, 4).map_err(|_| VerifyError::BadKey("truncated".into()))?,
        ots_type: be32(public_key, 8).map_err(|_| VerifyError::BadKey("truncated".into()))?,
    })
}

/// Verify an HSS signature over the message itself (RFC 8554 §6.3, Algorithm 7).
pub fn verify(public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<()> {
    let (key, at) = verify_upper_levels(public_key, signature)?;
    verify_lms(&key, message, &signature[at..])
}

/// The upper levels of an HSS signature checked, and where the bottom LMS signature is.
fn verify_upper_levels(public_key: &[u8], signature: &[u8]) -> Result<(Vec<u8>, usize)> {
    let pk = parse_public_key(public_key)?;
    let nspk = be32(signature, 0)?;
    if nspk + 1 != pk.levels {
        return Err(VerifyError::Mismatch);
    }
    let mut key: Vec<u8> = public_key[4..].to_vec();
    let mut at = 4usize;
    for _ in 0..nspk {
        let len = lms_signature_len(signature, at)?;
        let sig = signature
            .get(at..at + len)
            .ok_or_else(|| VerifyError::BadSignature("truncated".into()))?;
        at += len;
        let next_len = lms_public_len(be32(signature, at)?)?;
        let next = signature
            .get(at..at + next_len)
            .ok_or_else(|| VerifyError::BadSignature("truncated".into()))?;
        at += next_len;
        verify_lms(&key, next, sig)?;
        key = next.to_vec();
    }
    let len = lms_signature_len(signature, at)?;
    if at + len != signature.len() {
        return Err(VerifyError::BadSignature(format!(
            "{} trailing bytes",
            signature.len() as i64 - (at + len) as i64
        )));
    }
    Ok((key, at))
}

/// An HSS signature checked over a message that arrives in parts — a file of any size,
/// read once, none of it kept. The signed public keys are checked when it is made; the
/// message's own LMS signature by [`StreamingVerifier::finish`] (RFC 8554 Algorithms 4b
/// and 6a, this crate's own code: `lms-signature` takes whole messages only).
pub struct StreamingVerifier {
    bottom_key: Vec<u8>,
    bottom_sig: Vec<u8>,
    hasher: sha2::Sha256,
}

impl StreamingVerifier {
    pub fn new(public_key: &[u8], signature: &[u8]) -> Result<StreamingVerifier> {
        let (bottom_key, at) = verify_upper_levels(public_key, signature)?;
        let bottom_sig = signature[at..].to_vec();
        let q = be32(&bottom_sig, 0)?;
        let ots_type = be32(&bottom_sig, 4)?;
        let (n, _) = lmots_np(ots_type)
            .ok_or_else(|| VerifyError::Unsupported(format!("LM-OTS type {ots_type}")))?;
        let c = bottom_sig
            .get(8..8 + n)
            .ok_or_else(|| VerifyError::BadSignature("truncated".into()))?;
        let id = &bottom_key[8..24];
        let hasher = rfc8554::message_prefix(id, q, c);
        Ok(StreamingVerifier {
            bottom_key,
            bottom_sig,
            hasher,
        })
    }

    pub fn update(&mut self, part: &[u8]) {
        sha2::Digest::update(&mut self.hasher, part);
    }

    pub fn finish(self) -> Result<()> {
        let q_hash: [u8; 32] = sha2::Digest::finalize(self.hasher).into();
        rfc8554::verify_lms_with(&self.bottom_key, &self.bottom_sig, &mut |_| q_hash)
    }
}

/// [`verify`] over a message read from `message` to its end (a file of any size).
pub fn verify_reader(
    public_key: &[u8],
    message: &mut dyn std::io::Read,
    signature: &[u8],
) -> Result<()> {
    let mut v = StreamingVerifier::new(public_key, signature)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match message.read(&mut buf) {
            Ok(0) => return v.finish(),
            Ok(n) => v.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(VerifyError::Read(e.to_string())),
        }
    }
}

/// Number of signatures an HSS key with these LMS types can make in total.
pub fn capacity(lms_types: &[u32]) -> Option<u128> {
    let mut bits = 0u32;
    for t in lms_types {
        bits += lms_height(*t)?;
    }
    1u128.checked_shl(bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lms_signature::lms::{SigningKey, VerifyingKey};
    use signature::{RandomizedSignerMut, SignatureEncoding};

    /// Sign with RustCrypto's LMS, then check that the in-crate RFC 8554 verifier and the
    /// crate's verifier agree on every signature and every tampering.
    fn agree<Mode: lms_signature::lms::LmsMode>(pk: Vec<u8>, mut sk: SigningKey<Mode>)
    where
        lms_signature::lms::Signature<Mode>: SignatureEncoding,
    {
        let mut rng = getrandom::SysRng;
        for (i, msg) in [&b"release-1.0.tar.gz"[..], b"", &[0xA5; 3000]]
            .iter()
            .enumerate()
        {
            let sig = sk.try_sign_with_rng(&mut rng, msg).expect("sign").to_vec();
            assert_eq!(
                rfc8554::verify_lms(&pk, msg, &sig),
                Ok(()),
                "own verifier, message {i}"
            );
            assert_eq!(
                verify_lms(&pk, msg, &sig),
                Ok(()),
                "crate verifier, message {i}"
            );
            for pos in [0usize, 3, 8, 40, sig.len() / 2, sig.len() - 1] {
                let mut bad = sig.clone();
                bad[pos] ^= 0x01;
                let ours = rfc8554::verify_lms(&pk, msg, &bad).is_ok();
                let theirs = verify_lms(&pk, msg, &bad).is_ok();
                assert!(
                    !ours && !theirs,
                    "tampered byte {pos} accepted (ours {ours}, crate {theirs})"
                );
            }
            let mut other = msg.to_vec();
            other.push(1);
            assert!(rfc8554::verify_lms(&pk, &other, &sig).is_err());
        }
    }

    macro_rules! cross_check {
        ($name:ident, $mode:ty) => {
            #[test]
            fn $name() {
                let sk = SigningKey::<$mode>::new_from_seed([7u8; 16], [9u8; 32]).unwrap();
                let vk: VerifyingKey<$mode> = sk.public();
                let pk: hybrid_array::Array<u8, _> = vk.into();
                agree(pk.to_vec(), sk);
            }
        };
    }
    cross_check!(
        h5_w1,
        lms_signature::lms::LmsSha256M32H5<lms_signature::ots::LmsOtsSha256N32W1>
    );
    cross_check!(
        h5_w2,
        lms_signature::lms::LmsSha256M32H5<lms_signature::ots::LmsOtsSha256N32W2>
    );
    cross_check!(
        h5_w4,
        lms_signature::lms::LmsSha256M32H5<lms_signature::ots::LmsOtsSha256N32W4>
    );
    cross_check!(
        h5_w8,
        lms_signature::lms::LmsSha256M32H5<lms_signature::ots::LmsOtsSha256N32W8>
    );
    cross_check!(
        h10_w4,
        lms_signature::lms::LmsSha256M32H10<lms_signature::ots::LmsOtsSha256N32W4>
    );

    #[test]
    fn streamed_messages_verify_like_whole_ones() {
        type Mode = lms_signature::lms::LmsSha256M32H5<lms_signature::ots::LmsOtsSha256N32W4>;
        let mut sk = SigningKey::<Mode>::new_from_seed([3u8; 16], [4u8; 32]).unwrap();
        let vk: VerifyingKey<Mode> = sk.public();
        let lms_pk: hybrid_array::Array<u8, _> = vk.into();
        // A one-level HSS key and signature around the LMS ones.
        let mut pk = 1u32.to_be_bytes().to_vec();
        pk.extend_from_slice(&lms_pk);
        let msg: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
        let lms_sig = sk
            .try_sign_with_rng(&mut getrandom::SysRng, &msg)
            .unwrap()
            .to_vec();
        let mut sig = 0u32.to_be_bytes().to_vec();
        sig.extend_from_slice(&lms_sig);
        assert_eq!(verify(&pk, &msg, &sig), Ok(()));
        let streamed = |m: &[u8], s: &[u8], part: usize| {
            let mut v = StreamingVerifier::new(&pk, s)?;
            m.chunks(part).for_each(|c| v.update(c));
            v.finish()
        };
        for part in [1usize, 4096, 65_536, msg.len()] {
            assert_eq!(streamed(&msg, &sig, part), Ok(()), "parts of {part}");
        }
        let mut other = msg.clone();
        other[77_777] ^= 1;
        assert_eq!(streamed(&other, &sig, 4096), Err(VerifyError::Mismatch));
        let mut bad = sig.clone();
        bad[20] ^= 1;
        assert!(streamed(&msg, &bad, 4096).is_err());
        assert!(StreamingVerifier::new(&pk, &sig[..sig.len() - 1]).is_err());
    }

    /// RFC 9858's test case 1 (draft-fluhrer-lms-more-parm-sets): one level,
    /// LMS_SHA256_M24_H5 with LMOTS_SHA256_N24_W8, message "Test message for SHA256-192\n",
    /// from `tests/vectors/rfc9858-case1.txt` (lunasim's tests read the same file).
    fn rfc_9858_case_1() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let mut lines = include_str!("../../../tests/vectors/rfc9858-case1.txt")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(unhex);
        let mut next = || lines.next().expect("three lines");
        (next(), next(), next())
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn sha256_192_verifies_rfc_9858_test_case_1() {
        let (pk, msg, sig) = rfc_9858_case_1();
        assert_eq!(
            parse_public_key(&pk).unwrap(),
            HssPublicKey {
                levels: 1,
                lms_type: 10,
                ots_type: 8
            }
        );
        assert_eq!(verify(&pk, &msg, &sig), Ok(()));
        assert_eq!(verify_reader(&pk, &mut &msg[..], &sig), Ok(()));
        let mut v = StreamingVerifier::new(&pk, &sig).unwrap();
        msg.chunks(5).for_each(|c| v.update(c));
        assert_eq!(v.finish(), Ok(()));
        assert_eq!(verify(&pk, &msg[1..], &sig), Err(VerifyError::Mismatch));
        for at in [4usize, 8, 12, 40, 400, 700, 783] {
            let mut bad = sig.clone();
            bad[at] ^= 1;
            assert!(verify(&pk, &msg, &bad).is_err(), "byte {at} changed");
        }
        assert!(verify(&pk, &msg, &sig[..783]).is_err());
        assert_eq!(capacity(&[10]), Some(32));
        assert_eq!(capacity(&[11, 6]), Some(1 << 20));
        // The same key announcing an N32 LM-OTS type: one tree, one hash.
        let mut mixed = pk.clone();
        mixed[8..12].copy_from_slice(&4u32.to_be_bytes());
        assert!(verify(&mixed, &msg, &sig).is_err());
    }

    #[test]
    fn shake_types_are_refused_as_unsupported() {
        // RFC 9858's test case 2 key (LMS_SHAKE_M24_H5, LMOTS_SHAKE_N24_W8).
        let pk = unhex(concat!(
            "000000010000001400000010505152535455565758595a5b5c5d5e5fdb54a4509901051c",
            "01e26d9990e550347986da87924ff0b1"
        ));
        assert!(matches!(
            parse_public_key(&pk),
            Err(VerifyError::Unsupported(_))
        ));
    }

    #[test]
    fn capacity_and_public_key_parsing() {
        assert_eq!(capacity(&[5, 5]), Some(1024));
        assert_eq!(capacity(&[6, 6]), Some(1 << 20));
        assert_eq!(capacity(&[8, 8]), Some(1 << 40));
        assert_eq!(capacity(&[99]), None);
        assert!(parse_public_key(&[0u8; 59]).is_err());
        let mut pk = vec![0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 4];
        pk.extend_from_slice(&[0u8; 48]);
        assert_eq!(
            parse_public_key(&pk).unwrap(),
            HssPublicKey {
                levels: 2,
                lms_type: 5,
                ots_type: 4
            }
        );
    }
}
