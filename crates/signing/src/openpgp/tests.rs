//! The encoder checked by rpgp with software keys (the console tests add the HSM, gpg 2.2
//! and sq).

use super::*;
use ed25519_dalek::Signer;
use pgp::types::KeyDetails;

fn ed25519() -> (ed25519_dalek::SigningKey, PublicKey) {
    let sk = ed25519_dalek::SigningKey::from_bytes(&[9u8; 32]);
    let pk = PublicKey::Ec {
        curve: Curve::Ed25519,
        point: sk.verifying_key().to_bytes().to_vec(),
    };
    (sk, pk)
}

fn p256() -> (p256::ecdsa::SigningKey, PublicKey) {
    let sk = p256::ecdsa::SigningKey::from_slice(&[3u8; 32]).unwrap();
    let point = sk.verifying_key().to_sec1_point(false).as_bytes().to_vec();
    (
        sk,
        PublicKey::Ec {
            curve: Curve::P256,
            point,
        },
    )
}

const CREATED: u32 = 1_780_000_000;
const UID: &str = "Release Signing <release@example.org>";

#[test]
fn ed25519_certificate_signature_and_cleartext_verify_in_rpgp() {
    let (sk, pk) = ed25519();
    let key = PgpKey::new(&pk, CREATED).unwrap();
    assert_eq!(key.alg, PgpAlgorithm::EddsaLegacy);
    let mut sign = |d: &[u8]| Ok(sk.sign(d).to_bytes().to_vec());
    let cert = certificate(&key, UID, CREATED + 5, &mut sign).unwrap();
    let armored = armor::armor(armor::Block::PublicKey, &cert);
    let c = verify::Certificate::read(armored.as_bytes()).unwrap();
    assert_eq!(
        c.fingerprint(),
        key.fingerprint_hex(),
        "rpgp computes the same fingerprint"
    );
    assert_eq!(c.user_ids(), vec![UID.to_string()]);
    assert_eq!(c.created(), CREATED);
    assert!(verify::is_certificate(armored.as_bytes()) && verify::is_certificate(&cert));

    let sig = detached_bytes(&key, b"artifact", CREATED + 9, &mut sign).unwrap();
    assert_eq!(verify::kind(&sig), Some(verify::Kind::Binary));
    let v = verify::check_detached(c.primary(), &sig, &b"artifact"[..]).unwrap();
    assert_eq!(v.created, Some(CREATED + 9));
    assert_eq!(v.fingerprint, key.fingerprint_hex());
    assert_eq!(v.hash, "Sha512");
    let asc = armor::armor(armor::Block::Signature, &sig);
    assert_eq!(verify::kind(asc.as_bytes()), Some(verify::Kind::Armored));
    verify::check_detached(c.primary(), asc.as_bytes(), &b"artifact"[..]).unwrap();
    assert!(verify::check_detached(c.primary(), &sig, &b"artifacT"[..]).is_err());

    let text = "aa one.tar.gz \n-dash.bin\n";
    let msg = cleartext_signed(&key, text, CREATED + 10, &mut sign);
    assert!(msg.is_err(), "trailing whitespace is refused");
    let text = "aa one.tar.gz\n-dash.bin\n";
    let msg = cleartext_signed(&key, text, CREATED + 10, &mut sign).unwrap();
    assert_eq!(verify::kind(msg.as_bytes()), Some(verify::Kind::Cleartext));
    let (signed, _) = verify::check_cleartext(c.primary(), &msg).unwrap();
    assert_eq!(signed, "aa one.tar.gz\n-dash.bin");
    let forged = msg.replace("aa one", "ab one");
    assert!(verify::check_cleartext(c.primary(), &forged).is_err());
}

#[test]
fn p256_signature_verifies_against_the_bare_key_packet() {
    use p256::ecdsa::signature::hazmat::PrehashSigner;
    let (sk, pk) = p256();
    let key = PgpKey::new(&pk, CREATED).unwrap();
    let rpgp = verify::public_key_packet(&key.packet()).unwrap();
    assert_eq!(format!("{:X}", rpgp.fingerprint()), key.fingerprint_hex());
    let mut sign = |d: &[u8]| {
        let s: p256::ecdsa::Signature = sk.sign_prehash(d).unwrap();
        Ok(s.to_bytes().to_vec())
    };
    let sig = detached_bytes(&key, b"firmware", CREATED, &mut sign).unwrap();
    let v = verify::check_detached(&rpgp, &sig, &b"firmware"[..]).unwrap();
    assert_eq!(v.hash, "Sha256");
    // Another key (same point, another creation time) is another fingerprint: the
    // signature's issuer does not match it.
    let later = PgpKey::new(&pk, CREATED + 1).unwrap();
    assert_ne!(later.fingerprint(), key.fingerprint());
    let other = verify::public_key_packet(&later.packet()).unwrap();
    assert!(verify::check_detached(&other, &sig, &b"firmware"[..]).is_err());
}

#[test]
fn user_ids_are_one_line_and_keys_must_have_an_openpgp_form() {
    for bad in ["", "  ", "Release\nSigning", "a\rb", "tab\there"] {
        assert!(check_user_id(bad).is_err(), "{bad:?}");
    }
    assert_eq!(user_id_problem(" "), Some(UserIdProblem::Empty));
    assert_eq!(user_id_problem("a\nb"), Some(UserIdProblem::NotOneLine));
    assert_eq!(
        user_id_problem(&"x".repeat(MAX_USER_ID + 1)),
        Some(UserIdProblem::TooLong)
    );
    assert_eq!(user_id_problem(&"x".repeat(MAX_USER_ID)), None);
    check_user_id(UID).unwrap();
    let e = PgpKey::new(
        &PublicKey::MlDsa {
            set: hsm::algo::MlDsaSet::P65,
            key: vec![0; 1952],
        },
        CREATED,
    )
    .unwrap_err();
    assert!(e.to_string().contains("no OpenPGP form"), "{e}");
}

#[test]
fn the_public_key_packet_is_the_rfc_layout() {
    let (_, pk) = ed25519();
    let key = PgpKey::new(&pk, 0x01020304).unwrap();
    let p = key.packet();
    // Tag 6 (new format), length, v4, time, algorithm 22, OID length 9, OID, MPI of 263 bits.
    assert_eq!(p[0], 0xC6);
    assert_eq!(p[1] as usize, p.len() - 2);
    assert_eq!(&p[2..8], &[4, 1, 2, 3, 4, 22]);
    assert_eq!(p[8], 9);
    assert_eq!(&p[9..18], OID_ED25519_LEGACY);
    assert_eq!(&p[18..21], &[0x01, 0x07, 0x40]);
    assert_eq!(key.key_id(), key.fingerprint()[12..]);
}

#[test]
fn a_raw_signature_that_starts_like_a_packet_is_not_taken_for_openpgp() {
    // Old-format tag 2, a length that fits, then bytes of no known signature version.
    let mut raw = vec![0x88, 0x20, 0x07];
    raw.extend((0..61u8).map(|i| i.wrapping_mul(37)));
    assert_eq!(verify::kind(&raw), None);
    // A real signature with one byte more is not one either.
    let (sk, pk) = ed25519();
    let key = PgpKey::new(&pk, CREATED).unwrap();
    let mut sig = detached_bytes(&key, b"x", CREATED, &mut |d| {
        Ok(sk.sign(d).to_bytes().to_vec())
    })
    .unwrap();
    assert_eq!(verify::kind(&sig), Some(verify::Kind::Binary));
    sig.push(0);
    assert_eq!(verify::kind(&sig), None);
}

#[test]
fn a_signature_verifies_with_any_length_encoding_and_the_same_in_both_forms() {
    // Found with the `openpgp` fuzz target's property (one verdict for both forms) on
    // variants of a gpg signature: a binary signature whose header wrote its length
    // otherwise than rpgp writes it again (an old-format header with a two- or four-octet
    // length, a five-octet new-format length) was not taken for OpenPGP, while the same
    // bytes armored verified; and an armored one verified with trailing bytes or a second
    // signature after it, which the binary form refuses.
    let (sk, pk) = ed25519();
    let key = PgpKey::new(&pk, CREATED).unwrap();
    let mut sign = |d: &[u8]| Ok(sk.sign(d).to_bytes().to_vec());
    let cert = certificate(&key, UID, CREATED, &mut sign).unwrap();
    let c = verify::Certificate::read(&cert).unwrap();
    let sig = detached_bytes(&key, b"artifact", CREATED, &mut sign).unwrap();
    assert_eq!(sig[0], 0xC2, "new format, tag 2");
    let body = &sig[2..];
    assert_eq!(sig[1] as usize, body.len());
    let len = body.len() as u32;
    let with = |header: &[u8]| [header, body].concat();
    let forms = [
        with(&[0x88, len as u8]),
        with(&[0x89, 0, len as u8]),
        with(&[&[0x8A][..], &len.to_be_bytes()].concat()),
        with(&[&[0xC2, 0xFF][..], &len.to_be_bytes()].concat()),
    ];
    for s in &forms {
        assert_eq!(
            verify::kind(s),
            Some(verify::Kind::Binary),
            "{:02X?}",
            &s[..3]
        );
        let v = verify::check_detached(c.primary(), s, &b"artifact"[..]).unwrap();
        assert_eq!(v.fingerprint, key.fingerprint_hex());
        let asc = armor::armor(armor::Block::Signature, s);
        verify::check_detached(c.primary(), asc.as_bytes(), &b"artifact"[..]).unwrap();
        assert!(verify::check_detached(c.primary(), s, &b"artifacT"[..]).is_err());
    }
    // A length that says more or less than there is, or a partial length, is not a packet.
    let mut short = forms[1].clone();
    short[2] += 1;
    let mut partial = sig.clone();
    partial[1] = 0xE0;
    for s in [&short, &partial] {
        assert_eq!(verify::kind(s), None);
    }
    // Trailing bytes, a second signature: refused in both forms.
    let other = detached_bytes(&key, b"other", CREATED, &mut sign).unwrap();
    for s in [[&sig[..], &[0]].concat(), [&sig[..], &other].concat()] {
        assert_eq!(verify::kind(&s), None);
        let asc = armor::armor(armor::Block::Signature, &s);
        let e = verify::check_detached(c.primary(), asc.as_bytes(), &b"artifact"[..]).unwrap_err();
        assert!(e.to_string().contains("one v4 signature packet"), "{e}");
    }
    // And a certificate is not a signature, armored as one.
    let asc = armor::armor(armor::Block::Signature, &cert);
    assert!(verify::check_detached(c.primary(), asc.as_bytes(), &b"artifact"[..]).is_err());
}
