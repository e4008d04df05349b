//! lunasim's Luna roles and policy 21: the Crypto User and Limited Crypto Officer set by
//! the Crypto Officer with `CA_InitRolePIN` and what each may do, and the Crypto Officer's
//! PIN flagged to be changed after the SO set it. One process per test (cargo nextest).

use hsm::algo::{Curve, KeySpec};
use hsm::keys;
use hsm::templates::KeyAttrs;
use p11::names::luna;
use p11::sys::*;
use p11::{Mechanism, Session, Template, UserType};
use testkit::{Backend, TestToken, USER_PIN};

const CU: UserType = UserType::Vendor(luna::CKU_CRYPTO_USER);
const LCO: UserType = UserType::Vendor(luna::CKU_LIMITED_CRYPTO_OFFICER);
const CU_PIN: &str = "crypto-user-2468";
const LCO_PIN: &str = "limited-co-9753";

fn rv<T: std::fmt::Debug>(r: p11::Result<T>) -> u64 {
    r.expect_err("the token should refuse")
        .rv()
        .expect("a PKCS#11 answer")
}

fn p256(s: &Session, label: &str) -> keys::Generated {
    keys::generate(
        s,
        &KeySpec::Ec { curve: Curve::P256 },
        &KeyAttrs {
            label: label.into(),
            id: label.as_bytes().to_vec(),
            token: true,
        },
    )
    .expect("generate")
}

fn data_object(label: &str) -> Template {
    Template::new()
        .ulong(CKA_CLASS, CKO_DATA)
        .bool(CKA_TOKEN, true)
        .text(CKA_LABEL, label)
        .bytes(CKA_VALUE, b"x")
}

/// The Crypto Officer makes a key and both extra roles; returns the key (private, public).
fn officer_sets_up(t: &TestToken) -> (u64, u64) {
    let s = t.user_session();
    let k = p256(&s, "co_key");
    s.ca_init_role_pin(CU, &p11::pin(CU_PIN))
        .expect("CA_InitRolePIN CU");
    s.ca_init_role_pin(LCO, &p11::pin(LCO_PIN))
        .expect("CA_InitRolePIN LCO");
    s.logout().unwrap();
    (k.private, k.public.unwrap())
}

#[test]
fn the_crypto_user_signs_and_reads_but_neither_creates_nor_destroys() {
    let t = TestToken::new(Backend::LunaSim);
    assert!(
        t.module.vendor().init_role_pin.is_some(),
        "CA_InitRolePIN is exported"
    );
    let (private, public) = officer_sets_up(&t);
    let s = t.module.open_session(t.slot, true).unwrap();
    assert_eq!(rv(s.login(CU, &p11::pin("not-the-pin"))), CKR_PIN_INCORRECT);
    s.login(CU, &p11::pin(CU_PIN)).expect("Crypto User login");
    // Reads and signs.
    let found = s
        .find_objects(&mut Template::new().ulong(CKA_CLASS, CKO_PRIVATE_KEY))
        .unwrap();
    assert!(found.contains(&private));
    let sig = s
        .sign(&Mechanism::new(CKM_ECDSA), private, &[7u8; 32])
        .expect("sign");
    assert!(s
        .verify(&Mechanism::new(CKM_ECDSA), public, &[7u8; 32], &sig)
        .unwrap());
    // Creates, changes and destroys nothing.
    let nope = luna::CKR_USER_NOT_AUTHORIZED;
    assert_eq!(
        rv(keys::generate(
            &s,
            &KeySpec::Ec { curve: Curve::P256 },
            &KeyAttrs {
                label: "cu".into(),
                id: vec![1],
                token: true
            }
        )
        .map_err(|e| e.p11().cloned().unwrap())),
        nope
    );
    assert_eq!(rv(s.create_object(&mut data_object("cu_data"))), nope);
    assert_eq!(rv(s.destroy_object(private)), nope);
    assert_eq!(
        rv(s.set_attributes(private, &mut Template::new().text(CKA_LABEL, "renamed"))),
        nope
    );
    // Another role cannot log in on top.
    assert_eq!(
        rv(s.login(UserType::User, &p11::pin(USER_PIN))),
        CKR_USER_ANOTHER_ALREADY_LOGGED_IN
    );
    // The Crypto User changes its own PIN; the old one stops working.
    s.set_pin(&p11::pin(CU_PIN), &p11::pin("crypto-user-new-1"))
        .unwrap();
    s.logout().unwrap();
    assert_eq!(rv(s.login(CU, &p11::pin(CU_PIN))), CKR_PIN_INCORRECT);
    s.login(CU, &p11::pin("crypto-user-new-1")).unwrap();
    s.logout().unwrap();
    // The key is still there for the Crypto Officer, who may destroy it.
    s.login(UserType::User, &p11::pin(USER_PIN)).unwrap();
    s.destroy_object(private).unwrap();
}

#[test]
fn the_limited_crypto_officer_creates_but_does_not_destroy_or_export() {
    let t = TestToken::new(Backend::LunaSim);
    let (private, _) = officer_sets_up(&t);
    let s = t.module.open_session(t.slot, true).unwrap();
    s.login(LCO, &p11::pin(LCO_PIN))
        .expect("Limited Crypto Officer login");
    let k = p256(&s, "lco_key");
    s.create_object(&mut data_object("lco_data"))
        .expect("create");
    s.set_attributes(k.private, &mut Template::new().text(CKA_LABEL, "lco_key_2"))
        .expect("modify");
    assert_eq!(rv(s.destroy_object(private)), luna::CKR_USER_NOT_AUTHORIZED);
    // Only the Crypto Officer sets other roles' PINs.
    assert_eq!(
        rv(s.ca_init_role_pin(CU, &p11::pin("x-1234567"))),
        luna::CKR_USER_NOT_AUTHORIZED
    );
}

#[test]
fn roles_survive_a_restart_and_go_with_the_token() {
    let t = TestToken::new(Backend::LunaSim);
    officer_sets_up(&t);
    t.module.reinitialize().unwrap();
    let s = t.module.open_session(t.slot, true).unwrap();
    s.login(CU, &p11::pin(CU_PIN))
        .expect("the role is kept in lunasim's store");
    s.logout().unwrap();
    drop(s);
    t.module
        .init_token(t.slot, &p11::pin(testkit::SO_PIN), "again")
        .unwrap();
    let s = t.module.open_session(t.slot, true).unwrap();
    assert_eq!(
        rv(s.login(CU, &p11::pin(CU_PIN))),
        CKR_USER_PIN_NOT_INITIALIZED
    );
}

#[test]
fn policy_21_makes_the_officer_change_the_pin_the_so_set() {
    let t = TestToken::with_lunasim_extra(Backend::LunaSim, "force_user_pin_change = true");
    let m = &t.module;
    let policies = m.ca_token_policies(t.slot).unwrap();
    assert!(
        policies.contains(&(21, 1)),
        "policy 21 reported on: {policies:?}"
    );
    // testkit's SO set the user PIN: the token says it must be changed.
    assert!(m
        .token_info(t.slot)
        .unwrap()
        .has(CKF_USER_PIN_TO_BE_CHANGED));
    let s = t.user_session();
    assert_eq!(rv(s.find_objects(&mut Template::new())), CKR_PIN_EXPIRED);
    assert_eq!(
        rv(s.create_object(&mut data_object("before"))),
        CKR_PIN_EXPIRED
    );
    s.set_pin(&p11::pin(USER_PIN), &p11::pin("officer-own-pin-1"))
        .expect("C_SetPIN");
    assert!(!m
        .token_info(t.slot)
        .unwrap()
        .has(CKF_USER_PIN_TO_BE_CHANGED));
    s.find_objects(&mut Template::new())
        .expect("works once changed");
    s.logout().unwrap();
    assert_eq!(
        rv(s.login(UserType::User, &p11::pin(USER_PIN))),
        CKR_PIN_INCORRECT
    );
    s.login(UserType::User, &p11::pin("officer-own-pin-1"))
        .unwrap();
    s.logout().unwrap();
    // A reset by the SO flags it again.
    s.login(UserType::SecurityOfficer, &p11::pin(testkit::SO_PIN))
        .unwrap();
    s.init_pin(&p11::pin("reset-by-so-1")).unwrap();
    s.logout().unwrap();
    assert!(m
        .token_info(t.slot)
        .unwrap()
        .has(CKF_USER_PIN_TO_BE_CHANGED));
}

#[test]
fn without_policy_21_nothing_is_flagged() {
    let t = TestToken::new(Backend::LunaSim);
    let policies = t.module.ca_token_policies(t.slot).unwrap();
    assert!(policies.contains(&(21, 0)), "{policies:?}");
    assert!(!t
        .module
        .token_info(t.slot)
        .unwrap()
        .has(CKF_USER_PIN_TO_BE_CHANGED));
    t.user_session().find_objects(&mut Template::new()).unwrap();
}
