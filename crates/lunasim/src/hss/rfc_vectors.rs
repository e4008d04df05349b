//! RFC 9858's test case 1 (SHA-256/192: one level, LMS_SHA256_M24_H5 with
//! LMOTS_SHA256_N24_W8): the tree built from its `SEED` and `I` has its public key, and
//! the signature at its leaf 5 with its `C` is its signature, byte for byte — every hash
//! of the M24 path (chains, the cut, the checksum shift, leaves, interior nodes, the seed
//! derivation of Appendix A) against numbers from outside this code. The vector is the
//! one of draft-fluhrer-lms-more-parm-sets (test case 1), which became RFC 9858.

use sha2::digest::Digest;

use super::lms::{lms_public_key, lms_signature, message_hasher, ots_sign, Node, Params, TreeId};
use super::{tree, verify};

const PUBLIC_KEY: &str = concat!(
    "000000010000000a00000008202122232425262728292a2b2c2d2e2f2c571450aed99cfb4f4ac285",
    "da14882796618314508b12d2",
);

/// "Test message for SHA256-192\n"
const MESSAGE: &str = "54657374206d65737361676520666f72205348413235362d3139320a";

const SIGNATURE: &str = concat!(
    "0000000000000005000000080b5040a18c1b5cabcbc85b047402ec6294a30dd8da8fc3dae13b9f08",
    "75f09361dc77fcc4481ea463c073716249719193614b835b4694c059f12d3aedd34f3db93f3580fb",
    "88743b8b3d0648c0537b7a50e433d7ea9d6672fffc5f42770feab4f98eb3f3b23fd2061e4d0b38f8",
    "32860ae76673ad1a1a52a9005dcf1bfb56fe16ff723627612f9a48f790f3c47a67f870b81e919d99",
    "919c8db48168838cece0abfb683da48b9209868be8ec10c63d8bf80d36498dfc205dc45d0dd87057",
    "2d6d8f1d90177cf5137b8bbf7bcb67a46f86f26cfa5a44cbcaa4e18da099a98b0b3f96d5ac8ac375",
    "d8da2a7c248004ba11d7ac775b9218359cddab4cf8ccc6d54cb7e1b35a36ddc9265c087063d2fc67",
    "42a7177876476a324b03295bfed99f2eaf1f38970583c1b2b616aad0f31cd7a4b1bb0a51e477e94a",
    "01bbb4d6f8866e2528a159df3d6ce244d2b6518d1f0212285a3c2d4a927054a1e1620b5b02aab0c8",
    "c10ed48ae518ea73cba81fcfff88bff461dac51e7ab4ca75f47a6259d24820b9995792d139f61ae2",
    "a8186ae4e3c9bfe0af2cc717f424f41aa67f03faedb0665115f2067a46843a4cbbd297d5e83bc1aa",
    "fc18d1d03b3d894e8595a6526073f02ab0f08b99fd9eb208b59ff6317e5545e6f9ad5f9c183abd04",
    "3d5acd6eb2dd4da3f02dbc3167b468720a4b8b92ddfe7960998bb7a0ecf2a26a37598299413f7b2a",
    "ecd39a30cec527b4d9710c4473639022451f50d01c0457125da0fa4429c07dad859c846cbbd93ab5",
    "b91b01bc770b089cfede6f651e86dd7c15989c8b5321dea9ca608c71fd862323072b827cee7a7e28",
    "e4e2b999647233c3456944bb7aef9187c96b3f5b79fb98bc76c3574dd06f0e95685e5b3aef3a54c4",
    "155fe3ad817749629c30adbe897c4f4454c86c490000000ae9ca10eaa811b22ae07fb195e3590a33",
    "4ea64209942fbae338d19f152182c807d3c40b189d3fcbea942f44682439b191332d33ae0b761a2a",
    "8f984b56b2ac2fd4ab08223a69ed1f7719c7aa7e9eee96504b0e60c6bb5c942d695f0493eb25f80a",
    "5871cffd131d0e04ffe5065bc7875e82d34b40b69dd9f3c1",
);

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
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
    let pk = unhex(PUBLIC_KEY);
    assert_eq!(pk[..4], 1u32.to_be_bytes(), "one level");
    assert_eq!(lms_public_key(t.params, &t.id.i, &t.root()), pk[4..]);
    assert_eq!(t.root()[24..], [0; 8], "an M24 node keeps its tail clear");
}

#[test]
fn leaf_5_signs_as_the_test_case_does() {
    let t = tree();
    let want = unhex(SIGNATURE);
    assert_eq!(want.len(), 784);
    assert_eq!(want[..4], 0u32.to_be_bytes(), "no signed public keys");
    let lms = &want[4..];
    assert_eq!(lms[..4], 5u32.to_be_bytes(), "leaf 5");
    // C is the signer's choice (ours derives it); take the test case's.
    let mut c: Node = [0; 32];
    c[..24].copy_from_slice(&lms[8..32]);
    let q_hash: Node = message_hasher(&t.id, 5, &c, 24)
        .chain_update(unhex(MESSAGE))
        .finalize()
        .into();
    let ots = ots_sign(&t.id, t.params.ots, 5, &c, &q_hash);
    assert_eq!(ots.len(), 4 + 24 + 26 * 24);
    let got = lms_signature(t.params, 5, &ots, &t.path(5));
    assert_eq!(hex::encode(&got), hex::encode(lms));
}

#[test]
fn the_token_verifies_the_test_case_and_nothing_else() {
    let (pk, msg, sig) = (unhex(PUBLIC_KEY), unhex(MESSAGE), unhex(SIGNATURE));
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
