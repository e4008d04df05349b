//! Luna's external-μ ML-DSA (`CKM_EXTMU_ML_DSA`, vendor 0x80000175, firmware 7.9.0+) as
//! lunasim does it: μ computed here (SHAKE256 written out, not taken from lunasim's
//! library), the token's signature checked by dilithium-py as a pure ML-DSA signature over
//! the message. One process per test (cargo nextest).

use hsm::algo::{KeySpec, MlDsaSet};
use hsm::keys;
use hsm::pubkey::PublicKey;
use hsm::templates::KeyAttrs;
use p11::sys::*;
use p11::{Mechanism, Session, Template};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use testkit::{python_verify, Backend, TestToken};

const EXTMU: CK_MECHANISM_TYPE = p11::names::luna::CKM_EXTMU_ML_DSA;

fn shake256_64(parts: &[&[u8]]) -> [u8; 64] {
    let mut h = sha3::Shake256::default();
    for p in parts {
        h.update(p);
    }
    let mut out = [0u8; 64];
    h.finalize_xof().read(&mut out);
    out
}

/// FIPS 204: μ = SHAKE256(SHAKE256(pk, 64) ‖ 0 ‖ |ctx| ‖ ctx ‖ M, 64).
fn mu(pk: &[u8], ctx: &[u8], msg: &[u8]) -> [u8; 64] {
    let tr = shake256_64(&[pk]);
    shake256_64(&[&tr, &[0, ctx.len() as u8], ctx, msg])
}

fn generate(s: &Session, set: MlDsaSet, label: &str, token: bool) -> (u64, u64, Vec<u8>) {
    let attrs = KeyAttrs {
        label: label.into(),
        id: label.as_bytes().to_vec(),
        token,
    };
    let g = keys::generate(s, &KeySpec::MlDsa { set }, &attrs).unwrap();
    let Some(PublicKey::MlDsa { key, .. }) = g.public_key else {
        panic!("an ML-DSA public key")
    };
    (g.public.unwrap(), g.private, key)
}

fn rv<T: std::fmt::Debug>(r: p11::Result<T>) -> CK_RV {
    r.unwrap_err().rv().unwrap()
}

fn attr_bool(s: &Session, o: u64, ty: CK_ATTRIBUTE_TYPE) -> Option<bool> {
    s.get_attribute(o, ty).unwrap().as_bool()
}

#[test]
fn external_mu_signatures_are_pure_ml_dsa_for_dilithium_py() {
    let t = TestToken::new(Backend::LunaSim);
    let m = &t.module;
    assert!(m.mechanisms(t.slot).unwrap().contains(&EXTMU));
    let info = m.mechanism_info(t.slot, EXTMU).unwrap();
    assert!(info.has(CKF_SIGN) && info.has(CKF_VERIFY) && !info.has(CKF_GENERATE_KEY_PAIR));
    let s = t.user_session();
    let msg = b"release 7.9.1 of the firmware image, signed through external mu";
    for (set, name, token) in [
        (MlDsaSet::P44, "ml-dsa-44-dilithium-py", false),
        (MlDsaSet::P65, "ml-dsa-65-dilithium-py", true),
        (MlDsaSet::P87, "ml-dsa-87-dilithium-py", false),
    ] {
        let (public, private, pk) = generate(&s, set, name, token);
        for ctx in [&b""[..], b"release"] {
            let sig = s
                .sign(&Mechanism::new(EXTMU), private, &mu(&pk, ctx, msg))
                .unwrap();
            assert!(python_verify(name, &pk, msg, &sig, ctx), "{name}, {ctx:?}");
            assert!(!python_verify(name, &pk, b"another message", &sig, ctx));
        }
        // The standard mechanism still runs in the inner module, with the same key.
        let sig = s.sign(&Mechanism::new(CKM_ML_DSA), private, msg).unwrap();
        assert!(
            python_verify(name, &pk, msg, &sig, b""),
            "{name}, CKM_ML_DSA"
        );
        // Verification from μ: the good signature, and no changed one.
        let mu = mu(&pk, b"", msg);
        let mut sig = s.sign(&Mechanism::new(EXTMU), private, &mu).unwrap();
        assert!(s.verify(&Mechanism::new(EXTMU), public, &mu, &sig).unwrap());
        let mut other = mu;
        other[0] ^= 1;
        assert!(!s
            .verify(&Mechanism::new(EXTMU), public, &other, &sig)
            .unwrap());
        sig[100] ^= 1;
        assert!(!s.verify(&Mechanism::new(EXTMU), public, &mu, &sig).unwrap());
        // μ is 64 bytes.
        for len in [0, 32, 63, 65] {
            assert_eq!(
                rv(s.sign(&Mechanism::new(EXTMU), private, &vec![1u8; len])),
                CKR_DATA_LEN_RANGE,
                "{len}"
            );
        }
        // Generated keys answer as a Luna's do.
        assert_eq!(attr_bool(&s, private, CKA_LOCAL), Some(true));
        assert_eq!(attr_bool(&s, public, CKA_LOCAL), Some(true));
        assert_eq!(attr_bool(&s, private, CKA_NEVER_EXTRACTABLE), Some(true));
        assert_eq!(attr_bool(&s, private, CKA_ALWAYS_SENSITIVE), Some(true));
        assert_eq!(attr_bool(&s, private, CKA_SENSITIVE), Some(true));
        assert_eq!(attr_bool(&s, private, CKA_EXTRACTABLE), Some(false));
        assert_eq!(
            s.get_attribute(private, CKA_KEY_GEN_MECHANISM)
                .unwrap()
                .as_ulong(),
            Some(CKM_ML_DSA_KEY_PAIR_GEN)
        );
    }
    a_key_lunasim_did_not_make_is_refused(&s);
    drop(s);
    a_token_key_signs_from_mu_after_a_renumbering_restart(&t, msg);
}

/// The seed of a token key is read back from the store after a restart that gives every
/// object another handle: found by its label, the key still signs from μ.
fn a_token_key_signs_from_mu_after_a_renumbering_restart(t: &TestToken, msg: &[u8]) {
    t.module
        .sim_control(r#"{"op":"renumber","enabled":true}"#)
        .unwrap();
    t.module.reinitialize().unwrap();
    let s = t.user_session();
    let find = |class| {
        let found = s
            .find_objects(
                &mut Template::new()
                    .ulong(CKA_CLASS, class)
                    .bytes(CKA_LABEL, b"ml-dsa-65-dilithium-py"),
            )
            .unwrap();
        assert_eq!(found.len(), 1, "{class}");
        found[0]
    };
    let (private, public) = (find(CKO_PRIVATE_KEY), find(CKO_PUBLIC_KEY));
    let pk = s
        .get_attribute(public, CKA_VALUE)
        .unwrap()
        .bytes()
        .unwrap()
        .to_vec();
    let sig = s
        .sign(&Mechanism::new(EXTMU), private, &mu(&pk, b"", msg))
        .unwrap();
    assert!(python_verify("ml-dsa-65-dilithium-py", &pk, msg, &sig, b""));
    assert_eq!(attr_bool(&s, private, CKA_LOCAL), Some(true));
    // A destroyed key's seed goes with it.
    let book = || {
        std::fs::read_dir(t.dir.path().join("lunasim/mldsa"))
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect::<String>()
    };
    assert_eq!(book().matches("\"seed\"").count(), 1, "{}", book());
    s.destroy_object(private).unwrap();
    assert!(!book().contains("seed"), "{}", book());
}

/// An ML-DSA key imported from its seed (not generated by lunasim) signs with CKM_ML_DSA
/// but not from μ: lunasim has no seed for it and says so rather than sign wrongly.
fn a_key_lunasim_did_not_make_is_refused(s: &Session) {
    let mut t = Template::new()
        .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
        .ulong(CKA_KEY_TYPE, CKK_ML_DSA)
        .ulong(CKA_PARAMETER_SET, CKP_ML_DSA_44)
        .bool(CKA_TOKEN, false)
        .bool(CKA_SIGN, true)
        .bytes(CKA_SEED, &[4u8; 32]);
    let imported = s.create_object(&mut t).unwrap();
    assert_eq!(attr_bool(s, imported, CKA_LOCAL), Some(false));
    assert!(s.sign(&Mechanism::new(CKM_ML_DSA), imported, b"m").is_ok());
    assert_eq!(
        rv(s.sign(&Mechanism::new(EXTMU), imported, &[0u8; 64])),
        CKR_KEY_FUNCTION_NOT_PERMITTED
    );
}

#[test]
fn below_firmware_7_9_there_is_no_external_mu() {
    let t = TestToken::with_lunasim_extra(Backend::LunaSim, "firmware = \"7.8.4\"");
    let m = &t.module;
    assert!(!m.mechanisms(t.slot).unwrap().contains(&EXTMU));
    assert_eq!(rv(m.mechanism_info(t.slot, EXTMU)), CKR_MECHANISM_INVALID);
    let s = t.user_session();
    let (_, private, _) = generate(&s, MlDsaSet::P65, "old_fw", false);
    assert_eq!(
        rv(s.sign(&Mechanism::new(EXTMU), private, &[0u8; 64])),
        CKR_MECHANISM_INVALID
    );
}
