//! Luna's per-key usage limits in lunasim: `CKA_USAGE_LIMIT` set by the Crypto Officer
//! (or in the creation template), `CKA_USAGE_COUNT` counted per sign, verify, encrypt and
//! decrypt, `CKR_KEY_NOT_ACTIVE` at the limit, raising the limit, and the rules around
//! both attributes. (The count across a restart: `by_name.rs`.)

use hsm::algo::{Curve, KeySpec};
use hsm::keys;
use hsm::templates::KeyAttrs;
use p11::names::luna::{CKA_USAGE_COUNT, CKA_USAGE_LIMIT, CKR_KEY_NOT_ACTIVE};
use p11::sys::*;
use p11::{AttrValue, Mechanism, Session, Template, UserType};
use sha2::{Digest, Sha256};
use testkit::{Backend, TestToken, USER_PIN};

fn attrs(label: &str) -> KeyAttrs {
    KeyAttrs {
        label: label.into(),
        id: label.as_bytes().to_vec(),
        token: true,
    }
}

fn usage(s: &Session, key: u64) -> (Option<u64>, Option<u64>) {
    let v = s
        .get_attributes(key, &[CKA_USAGE_COUNT, CKA_USAGE_LIMIT])
        .unwrap();
    (v[0].as_ulong(), v[1].as_ulong())
}

fn sign(s: &Session, key: u64) -> p11::Result<Vec<u8>> {
    s.sign(&Mechanism::new(CKM_ECDSA), key, &Sha256::digest(b"fw"))
}

fn set_limit(s: &Session, key: u64, n: u64) -> p11::Result<()> {
    s.set_attributes(key, &mut Template::new().ulong(CKA_USAGE_LIMIT, n))
}

#[test]
fn a_key_refuses_to_sign_past_its_limit_until_it_is_raised() {
    let t = TestToken::new(Backend::LunaSim);
    let s = t.user_session();
    let k = keys::generate(&s, &KeySpec::Ec { curve: Curve::P256 }, &attrs("k")).unwrap();
    let v = s.get_attributes(k.private, &[CKA_USAGE_COUNT]).unwrap();
    assert!(
        matches!(v[0], AttrValue::Invalid),
        "no limit, no usage attributes"
    );

    set_limit(&s, k.private, 2).unwrap();
    assert_eq!(usage(&s, k.private), (Some(0), Some(2)));
    sign(&s, k.private).unwrap();
    // A length query uses nothing; the signature after it uses one.
    s.sign_init(&Mechanism::new(CKM_ECDSA), k.private).unwrap();
    let c_sign = t.module.functions().C_Sign.unwrap();
    let d = Sha256::digest(b"fw");
    let mut len: CK_ULONG = 0;
    // SAFETY: a NULL output asks for the length; the digest is a live buffer.
    let rv = unsafe {
        c_sign(
            s.handle(),
            d.as_ptr() as *mut _,
            32,
            std::ptr::null_mut(),
            &mut len,
        )
    };
    assert_eq!((rv, usage(&s, k.private)), (CKR_OK, (Some(1), Some(2))));
    let mut sig = vec![0u8; len as usize];
    // SAFETY: sig has len writable bytes.
    let rv = unsafe {
        c_sign(
            s.handle(),
            d.as_ptr() as *mut _,
            32,
            sig.as_mut_ptr(),
            &mut len,
        )
    };
    assert_eq!(rv, CKR_OK);
    assert_eq!(usage(&s, k.private), (Some(2), Some(2)));
    let e = sign(&s, k.private).unwrap_err();
    assert_eq!(e.rv(), Some(CKR_KEY_NOT_ACTIVE));

    // The count is the HSM's: it cannot be set, and a limit below it is refused.
    let e = s
        .set_attributes(k.private, &mut Template::new().ulong(CKA_USAGE_COUNT, 0))
        .unwrap_err();
    assert_eq!(e.rv(), Some(CKR_ATTRIBUTE_READ_ONLY));
    assert_eq!(
        set_limit(&s, k.private, 1).unwrap_err().rv(),
        Some(CKR_ATTRIBUTE_VALUE_INVALID)
    );
    assert_eq!(
        set_limit(&s, k.private, 0).unwrap_err().rv(),
        Some(CKR_ATTRIBUTE_VALUE_INVALID)
    );
    assert_eq!(
        set_limit(&s, k.private, 0x1_0000_0000).unwrap_err().rv(),
        Some(CKR_ATTRIBUTE_VALUE_INVALID),
        "Luna's range is 1 to 0xFFFFFFFF"
    );
    set_limit(&s, k.private, 4).unwrap();
    sign(&s, k.private).unwrap();
    assert_eq!(usage(&s, k.private), (Some(3), Some(4)));
    // Verification counts too (Luna: "encrypt/decrypt, sign/verify").
    let pk_limit = 1;
    set_limit(&s, k.public.unwrap(), pk_limit).unwrap();
    let digest = Sha256::digest(b"fw");
    let sig = sign(&s, k.private).unwrap();
    assert!(s
        .verify(&Mechanism::new(CKM_ECDSA), k.public.unwrap(), &digest, &sig)
        .unwrap());
    let e = s
        .verify(&Mechanism::new(CKM_ECDSA), k.public.unwrap(), &digest, &sig)
        .unwrap_err();
    assert_eq!(e.rv(), Some(CKR_KEY_NOT_ACTIVE));
    // Other keys are not touched.
    let other = keys::generate(&s, &KeySpec::Ec { curve: Curve::P256 }, &attrs("other")).unwrap();
    for _ in 0..5 {
        sign(&s, other.private).unwrap();
    }
}

#[test]
fn limits_in_templates_and_who_may_set_them() {
    let t = TestToken::new(Backend::LunaSim);
    let s = t.user_session();
    // An AES key made with a limit in its template: encrypt and decrypt count.
    let k = s
        .generate_key(
            &Mechanism::new(CKM_AES_KEY_GEN),
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_AES)
                .ulong(CKA_VALUE_LEN, 32)
                .bool(CKA_TOKEN, true)
                .bool(CKA_ENCRYPT, true)
                .bool(CKA_DECRYPT, true)
                .text(CKA_LABEL, "aes")
                .ulong(CKA_USAGE_LIMIT, 2),
        )
        .unwrap();
    assert_eq!(usage(&s, k), (Some(0), Some(2)));
    let ct = s
        .encrypt(&Mechanism::new(CKM_AES_ECB), k, &[0u8; 16])
        .unwrap();
    s.decrypt(&Mechanism::new(CKM_AES_ECB), k, &ct).unwrap();
    assert_eq!(usage(&s, k), (Some(2), Some(2)));
    assert_eq!(
        s.encrypt(&Mechanism::new(CKM_AES_ECB), k, &[0u8; 16])
            .unwrap_err()
            .rv(),
        Some(CKR_KEY_NOT_ACTIVE)
    );
    // A count in a creation template is refused.
    let e = s
        .create_object(
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
                .bytes(CKA_VALUE, &[1; 16])
                .ulong(CKA_USAGE_COUNT, 5),
        )
        .unwrap_err();
    assert_eq!(e.rv(), Some(CKR_ATTRIBUTE_READ_ONLY));

    // A read-only session cannot change a limit; a session without login cannot either.
    let ro = t.module.open_session(t.slot, false).unwrap();
    assert_eq!(
        set_limit(&ro, k, 9).unwrap_err().rv(),
        Some(CKR_SESSION_READ_ONLY)
    );
    drop(ro);
    drop(s);
    let public = t.module.open_session(t.slot, true).unwrap();
    let data = public
        .create_object(
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
                .bool(CKA_PRIVATE, false)
                .bytes(CKA_VALUE, &[2; 16]),
        )
        .unwrap();
    assert_eq!(
        set_limit(&public, data, 9).unwrap_err().rv(),
        Some(CKR_USER_NOT_LOGGED_IN)
    );
    public.login(UserType::User, &p11::pin(USER_PIN)).unwrap();
    set_limit(&public, data, 9).unwrap();
}
