//! RFC 9858's test case 1 (SHA-256/192: one level, LMS_SHA256_M24_H5 with
//! LMOTS_SHA256_N24_W8): the tree built from its `SEED` and `I` has its public key, and
//! the signature at its leaf 5 with its `C` is its signature, byte for byte — every hash
//! of the M24 path (chains, the cut, the checksum shift, leaves, interior nodes, the seed
//! derivation of Appendix A) against numbers from outside this code. The vector is the
//! one of draft-fluhrer-lms-more-parm-sets (test case 1), which became RFC 9858.

use sha2::digest::Digest;

use super::lms::{lms_public_key, lms_signature, message_hasher, ots_sign, Node, Params, TreeId};
use super::{tree, verify};

/// The test case (public key, message, signature), kept once for the crates that check it:
/// `tests/vectors/rfc9858-case1.txt`.
fn vector() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut lines = include_str!("../../../../tests/vectors/rfc9858-case1.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| hex::decode(l).unwrap());
    let mut next = || lines.next().expect("three lines");
    (next(), next(), next())
}

/// The test case's tree: `SEED` = 00 01 … 17, `I` = 20 21 … 2F.
fn tree() -> tree::Tree {
    let mut seed = [0u8; 32];
    (0..24).for_each(|k| seed[k] = k as u8);
    let mut i = [0u8; 16];
    (0..16).for_each(|k| i[k] = 0x20 + k as u8);
    let id = TreeId {
        i,
        seed: zeroize::Zeroizing::new(seed),
        n: 24,
    };
    tree::build(id, Params::from_codes(10, 8).unwrap(), None)
}

#[test]
fn the_tree_has_the_public_key_of_the_test_case() {
    let t = tree();
    let (pk, _, _) = vector();
    assert_eq!(pk[..4], 1u32.to_be_bytes(), "one level");
    assert_eq!(lms_public_key(t.params, &t.id.i, &t.root()), pk[4..]);
    assert_eq!(t.root()[24..], [0; 8], "an M24 node keeps its tail clear");
}

#[test]
fn leaf_5_signs_as_the_test_case_does() {
    let t = tree();
    let (_, msg, want) = vector();
    assert_eq!(want.len(), 784);
    assert_eq!(want[..4], 0u32.to_be_bytes(), "no signed public keys");
    let lms = &want[4..];
    assert_eq!(lms[..4], 5u32.to_be_bytes(), "leaf 5");
    // C is the signer's choice (ours derives it); take the test case's.
    let mut c: Node = [0; 32];
    c[..24].copy_from_slice(&lms[8..32]);
    let q_hash: Node = message_hasher(&t.id, 5, &c, 24)
        .chain_update(msg)
        .finalize()
        .into();
    let ots = ots_sign(&t.id, t.params.ots, 5, &c, &q_hash);
    assert_eq!(ots.len(), 4 + 24 + 26 * 24);
    let got = lms_signature(t.params, 5, &ots, &t.path(5));
    assert_eq!(hex::encode(&got), hex::encode(lms));
}

#[test]
fn the_token_verifies_the_test_case_and_nothing_else() {
    let (pk, msg, sig) = vector();
    assert!(verify(&pk, &msg, &sig));
    assert!(!verify(&pk, b"Test message for SHA256-192", &sig));
    for at in [0, 7, 8, 40, 700, 783] {
        let mut bad = sig.clone();
        bad[at] ^= 1;
        assert!(!verify(&pk, &msg, &bad), "byte {at} changed");
    }
    assert!(!verify(&pk, &msg, &sig[..783]));
    let mut longer = sig.clone();
    longer.push(0);
    assert!(!verify(&pk, &msg, &longer));
}
