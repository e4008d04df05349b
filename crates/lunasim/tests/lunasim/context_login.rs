//! Keys with `CKA_ALWAYS_AUTHENTICATE`: each signature wants a context-specific login
//! (`C_Login` with `CKU_CONTEXT_SPECIFIC`) after `C_SignInit`, which authorizes that one
//! operation. On lunasim (our Luna simulator) and, as the outside reference, on Kryoptic.
//! One process per test (cargo nextest).

use hsm::algo::{Curve, KeySpec};
use hsm::keys;
use hsm::templates::{Export, KeyAttrs};
use p11::names::luna;
use p11::sys::*;
use p11::{Mechanism, Session, UserType};
use testkit::{Backend, TestToken, USER_PIN};

const DIGEST: [u8; 32] = [7u8; 32];

fn rv<T: std::fmt::Debug>(r: p11::Result<T>) -> u64 {
    r.expect_err("the token should refuse")
        .rv()
        .expect("a PKCS#11 answer")
}

fn attrs(label: &str) -> KeyAttrs {
    KeyAttrs {
        label: label.into(),
        id: label.as_bytes().to_vec(),
        token: true,
    }
}

/// A P-256 key pair whose private half has `CKA_ALWAYS_AUTHENTICATE` true.
fn per_use_key(s: &Session) -> keys::Generated {
    let spec = KeySpec::Ec { curve: Curve::P256 };
    keys::generate_opts(s, &spec, &attrs("per_use"), Export::Never, true).expect("generate")
}

fn with_pin(s: &Session, pin: &str) {
    let pin = pin.to_string();
    s.set_context_auth(Some(Box::new(move |_| Some(p11::pin(&pin)))));
}

/// The whole contract, on any token that keeps it (`multi_part`: the token has
/// `CKM_ECDSA_SHA256`, which SoftHSM2 2.6 has not).
fn each_signature_wants_its_own_login(backend: Backend, multi_part: bool) {
    let t = TestToken::new(backend);
    let s = t.user_session();
    let k = per_use_key(&s);
    let public = k.public.expect("a pair");
    let summary = keys::summary(&s, k.private).expect("summary");
    assert_eq!(
        summary.always_authenticate,
        Some(true),
        "stored and reported"
    );
    let ecdsa = Mechanism::new(CKM_ECDSA);

    // No context login: the token refuses the signature.
    assert_eq!(
        rv(s.sign(&ecdsa, k.private, &DIGEST)),
        CKR_USER_NOT_LOGGED_IN
    );

    // The right PIN authorizes one signature.
    with_pin(&s, USER_PIN);
    let sig = s
        .sign(&ecdsa, k.private, &DIGEST)
        .expect("signed after the login");
    assert!(s.verify(&ecdsa, public, &DIGEST, &sig).unwrap());

    // The next one, without a new login, is refused again.
    s.set_context_auth(None);
    assert_eq!(
        rv(s.sign(&ecdsa, k.private, &DIGEST)),
        CKR_USER_NOT_LOGGED_IN
    );

    // A wrong PIN: CKR_PIN_INCORRECT, and the operation is ended (the next C_SignInit is
    // not CKR_OPERATION_ACTIVE).
    with_pin(&s, "not-the-pin");
    assert_eq!(rv(s.sign(&ecdsa, k.private, &DIGEST)), CKR_PIN_INCORRECT);
    with_pin(&s, USER_PIN);
    let sig = s
        .sign(&ecdsa, k.private, &DIGEST)
        .expect("signed after a wrong PIN");
    assert!(s.verify(&ecdsa, public, &DIGEST, &sig).unwrap());

    // One multi-part signature is one operation: one login.
    s.set_context_auth(None);
    if multi_part {
        one_login_per_multi_part_signature(&s, k.private, public);
    }

    // A key without the attribute signs as always, and wants no context login.
    let plain =
        keys::generate(&s, &KeySpec::Ec { curve: Curve::P256 }, &attrs("plain")).expect("generate");
    assert_eq!(
        keys::summary(&s, plain.private)
            .unwrap()
            .always_authenticate,
        Some(false)
    );
    s.sign(&ecdsa, plain.private, &DIGEST).expect("plain key");
}

fn one_login_per_multi_part_signature(s: &Session, private: u64, public: u64) {
    let hashed = Mechanism::new(CKM_ECDSA_SHA256);
    let message = b"a message signed in two parts";
    s.sign_init(&hashed, private).unwrap();
    s.context_login(&p11::pin(USER_PIN)).expect("context login");
    s.sign_update(&message[..9]).unwrap();
    s.sign_update(&message[9..]).unwrap();
    let sig = s.sign_final().expect("multi-part");
    assert!(s.verify(&hashed, public, message, &sig).unwrap());
    s.sign_init(&hashed, private).unwrap();
    assert_eq!(rv(s.sign_update(message)), CKR_USER_NOT_LOGGED_IN);
}

#[test]
fn lunasim_wants_a_context_login_per_signature() {
    each_signature_wants_its_own_login(Backend::LunaSim, true);
}

#[test]
fn kryoptic_wants_a_context_login_per_signature() {
    each_signature_wants_its_own_login(Backend::Kryoptic, true);
}

#[test]
fn lunasim_checks_the_role_logged_in_and_counts_wrong_pins() {
    let t = TestToken::new(Backend::LunaSim);
    let s = t.user_session();
    let k = per_use_key(&s);
    let cu = UserType::Vendor(luna::CKU_CRYPTO_USER);
    s.ca_init_role_pin(cu, &p11::pin("crypto-user-2468"))
        .unwrap();
    s.logout().unwrap();

    // A public session has no one to authenticate.
    let public = t.module.open_session(t.slot, true).unwrap();
    let ecdsa = Mechanism::new(CKM_ECDSA);
    assert_eq!(
        rv(public.context_login(&p11::pin(USER_PIN))),
        CKR_USER_NOT_LOGGED_IN
    );
    drop(public);

    // The Crypto User authenticates with the Crypto User's PIN, not the officer's.
    let s = t.module.open_session(t.slot, true).unwrap();
    s.login(cu, &p11::pin("crypto-user-2468")).unwrap();
    with_pin(&s, USER_PIN);
    assert_eq!(rv(s.sign(&ecdsa, k.private, &DIGEST)), CKR_PIN_INCORRECT);
    with_pin(&s, "crypto-user-2468");
    s.sign(&ecdsa, k.private, &DIGEST)
        .expect("the Crypto User signs");
    s.logout().unwrap();

    // A wrong context PIN counts toward the lockout like a wrong login: after the ten
    // failures Luna allows, the role is locked.
    s.login(cu, &p11::pin("crypto-user-2468")).unwrap();
    with_pin(&s, "wrong");
    for _ in 0..10 {
        assert_eq!(rv(s.sign(&ecdsa, k.private, &DIGEST)), CKR_PIN_INCORRECT);
    }
    with_pin(&s, "crypto-user-2468");
    assert_eq!(rv(s.sign(&ecdsa, k.private, &DIGEST)), CKR_PIN_LOCKED);
}

#[test]
fn lunasim_refuses_an_hss_key_that_always_authenticates() {
    let t = TestToken::new(Backend::LunaSim);
    let s = t.user_session();
    let spec = KeySpec::Hss {
        params: hsm::algo::HssParams::new(vec![(hsm::algo::LmsType::H5, hsm::algo::LmotsType::W8)])
            .unwrap(),
    };
    let r = keys::generate_opts(&s, &spec, &attrs("hss"), Export::Never, true);
    match r {
        Err(hsm::HsmError::P11(e)) => assert_eq!(e.rv(), Some(CKR_ATTRIBUTE_VALUE_INVALID)),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// SoftHSM2 2.6 keeps the contract too; being a PKCS#11 2.40 module it does not end an
/// operation on `C_SignInit` with a NULL mechanism, so after a wrong PIN the session's
/// operation is ended with a refused `C_Sign` (`Session::sign_init`).
#[test]
fn softhsm_wants_a_context_login_per_signature() {
    each_signature_wants_its_own_login(Backend::SoftHsm, false);
}
