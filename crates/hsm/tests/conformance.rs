//! One conformance suite, run on every module of the rig (one process per test under
//! `cargo nextest`, each with its own token directory). Signatures are checked by the
//! RustCrypto verifiers in `swverify`, never only by the token that made them.

use std::time::Duration;

use hsm::algo::*;
use hsm::keys::{self, KeySelector};
use hsm::pubkey::PublicKey;
use hsm::templates::KeyAttrs;
use hsm::{HsmError, Pool, PoolConfig};
use p11::sys::*;
use p11::{AttrValue, EntryPoint, ErrorClass, Mechanism, Session, Template, UserType};
use sha2::{Digest, Sha256};
use testkit::{Backend, TestToken, USER_PIN};

fn attrs(label: &str) -> KeyAttrs {
    KeyAttrs {
        label: label.into(),
        id: label.as_bytes().to_vec(),
        token: false,
    }
}

fn gen(s: &Session, spec: KeySpec, label: &str) -> keys::Generated {
    keys::generate(s, &spec, &attrs(label))
        .unwrap_or_else(|e| panic!("generate {}: {e}", spec.display()))
}

fn flip(mut v: Vec<u8>, at: usize) -> Vec<u8> {
    let i = at % v.len();
    v[i] ^= 0x40;
    v
}

mod cases {
    use super::*;

    pub fn info_and_interface(t: &TestToken) {
        let m = &t.module;
        let info = m.info().unwrap();
        assert!(!info.manufacturer.is_empty());
        match t.backend {
            Backend::SoftHsm => {
                assert_eq!(m.entry_point(), EntryPoint::FunctionList);
                assert_eq!(m.api_version().major, 2);
                assert_eq!(m.family(), p11::Family::SoftHsm);
                assert!(m.vendor().offered().is_empty());
            }
            Backend::Kryoptic => {
                assert_eq!(
                    m.entry_point(),
                    EntryPoint::Interface32,
                    "3.2 interface preferred"
                );
                assert_eq!((m.api_version().major, m.api_version().minor), (3, 2));
                assert_eq!(m.family(), p11::Family::Kryoptic);
            }
            Backend::LunaSim => {
                assert_eq!(m.entry_point(), EntryPoint::Interface32);
                assert_eq!(
                    m.family(),
                    p11::Family::Luna,
                    "lunasim exports the CA_* symbols"
                );
                assert!(m.vendor().offered().contains(&"CA_GetHSMStats"));
            }
        }
        let slots = m.slots(true).unwrap();
        assert!(slots.contains(&t.slot));
        let ti = m.token_info(t.slot).unwrap();
        assert_eq!(ti.label, testkit::TOKEN_LABEL);
        assert!(ti.initialized() && ti.user_pin_initialized() && ti.login_required());
        let si = m.slot_info(t.slot).unwrap();
        assert!(si.token_present());
    }

    pub fn mechanisms(t: &TestToken) {
        let list = t.module.mechanisms(t.slot).unwrap();
        assert!(list.len() > 20, "{} mechanisms", list.len());
        for m in [CKM_SHA256, CKM_AES_GCM, CKM_RSA_PKCS_PSS] {
            assert!(
                list.contains(&m),
                "{} missing",
                p11::names::mechanism_name(m, t.module.family())
            );
        }
        let info = t.module.mechanism_info(t.slot, CKM_AES_GCM).unwrap();
        assert!(info.has(CKF_ENCRYPT) && info.has(CKF_DECRYPT));
        // Every listed mechanism answers C_GetMechanismInfo, named or not.
        for m in &list {
            t.module
                .mechanism_info(t.slot, *m)
                .unwrap_or_else(|e| panic!("0x{m:X}: {e}"));
        }
        let e = t.module.mechanism_info(t.slot, 0x7FFF_FFF0).unwrap_err();
        assert_eq!(e.rv(), Some(CKR_MECHANISM_INVALID));
    }

    pub fn login_and_pin_errors(t: &TestToken) {
        let s = t.module.open_session(t.slot, true).unwrap();
        let e = s
            .login(UserType::User, &p11::pin("definitely-wrong"))
            .unwrap_err();
        assert_eq!(e.class(), ErrorClass::Pin);
        assert_eq!(e.rv(), Some(CKR_PIN_INCORRECT));
        assert_eq!(e.function(), Some("C_Login"));
        assert!(e.to_string().contains("CKR_PIN_INCORRECT"), "{e}");
        assert!(!s.info().unwrap().logged_in());
        s.login(UserType::User, &p11::pin(USER_PIN)).unwrap();
        assert!(s.info().unwrap().logged_in());
        s.logout().unwrap();
        assert!(!s.info().unwrap().logged_in());
        s.close().unwrap();
    }

    pub fn random(t: &TestToken) {
        let s = t.user_session();
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        s.generate_random(&mut a).unwrap();
        s.generate_random(&mut b).unwrap();
        assert_ne!(a, b);
        assert_ne!(a, [0u8; 32]);
    }

    pub fn data_object_lifecycle(t: &TestToken) {
        let s = t.user_session();
        let mut tmpl = Template::new()
            .ulong(CKA_CLASS, CKO_DATA)
            .bool(CKA_TOKEN, true)
            .bool(CKA_PRIVATE, true)
            .text(CKA_LABEL, "lifecycle")
            .text(CKA_APPLICATION, "hsm-console")
            .bytes(CKA_VALUE, b"hello");
        let h = s.create_object(&mut tmpl).unwrap();
        let found = s
            .find_objects(&mut Template::new().text(CKA_LABEL, "lifecycle"))
            .unwrap();
        assert_eq!(found, vec![h]);
        let v = s
            .get_attributes(
                h,
                &[CKA_CLASS, CKA_LABEL, CKA_VALUE, CKA_TOKEN, CKA_MODULUS],
            )
            .unwrap();
        assert_eq!(v[0].as_ulong(), Some(CKO_DATA));
        assert_eq!(v[1].as_text().as_deref(), Some("lifecycle"));
        assert_eq!(v[2], AttrValue::Value(b"hello".to_vec()));
        assert_eq!(v[3].as_bool(), Some(true));
        assert_eq!(v[4], AttrValue::Invalid, "a data object has no modulus");
        s.destroy_object(h).unwrap();
        assert!(s
            .find_objects(&mut Template::new().text(CKA_LABEL, "lifecycle"))
            .unwrap()
            .is_empty());
        let e = s.get_attributes(h, &[CKA_LABEL]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::KeyNotFound, "{e}");
    }

    pub fn find_in_batches(t: &TestToken) {
        let s = t.user_session();
        for i in 0..600u32 {
            let mut tmpl = Template::new()
                .ulong(CKA_CLASS, CKO_DATA)
                .bool(CKA_TOKEN, false)
                .text(CKA_LABEL, "batch")
                .bytes(CKA_VALUE, &i.to_be_bytes());
            s.create_object(&mut tmpl).unwrap();
        }
        let found = s
            .find_objects(&mut Template::new().text(CKA_LABEL, "batch"))
            .unwrap();
        assert_eq!(found.len(), 600, "more than two C_FindObjects batches");
        let listed = keys::list_objects(&s, &mut Template::new().text(CKA_LABEL, "batch")).unwrap();
        assert_eq!(listed.len(), 600);
        assert!(listed
            .iter()
            .all(|o| o.duplicate_label && o.class == "DATA"));
    }

    pub fn aes_gcm_and_sensitive_values(t: &TestToken) {
        let s = t.user_session();
        let k = gen(&s, KeySpec::Aes { bits: 256 }, "aes").private;
        assert_eq!(s.get_attribute(k, CKA_VALUE).unwrap(), AttrValue::Sensitive);
        assert_eq!(
            s.get_attribute(k, CKA_VALUE_LEN).unwrap().as_ulong(),
            Some(32)
        );
        let iv = [7u8; 12];
        let ct = s
            .encrypt(&Mechanism::aes_gcm(&iv, b"aad", 128), k, &[0x42; 1024])
            .unwrap();
        assert_eq!(ct.len(), 1024 + 16);
        let pt = s
            .decrypt(&Mechanism::aes_gcm(&iv, b"aad", 128), k, &ct)
            .unwrap();
        assert_eq!(pt, vec![0x42; 1024]);
        let e = s
            .decrypt(&Mechanism::aes_gcm(&iv, b"aad", 128), k, &flip(ct, 1030))
            .unwrap_err();
        assert!(
            matches!(
                e.rv(),
                Some(CKR_ENCRYPTED_DATA_INVALID) | Some(CKR_GENERAL_ERROR)
            ),
            "bad tag: {e}"
        );
        let summary = keys::list_objects(&s, &mut Template::new().text(CKA_LABEL, "aes")).unwrap();
        assert_eq!(summary[0].algorithm, "AES-256");
        assert_eq!(summary[0].sensitive, Some(true));
        assert_eq!(summary[0].extractable, Some(false));
        let details = keys::object_details(&s, k).unwrap();
        let value = details.iter().find(|a| a.attribute == "CKA_VALUE").unwrap();
        assert_eq!(value.status, hsm::keys::AttrStatus::Sensitive);
        assert!(
            details.iter().all(|a| a.attribute != "CKA_MODULUS"),
            "absent attributes are left out"
        );
    }

    pub fn ecdsa_p256(t: &TestToken) {
        let s = t.user_session();
        let g = gen(&s, KeySpec::Ec { curve: Curve::P256 }, "ec");
        let Some(PublicKey::Ec { point, .. }) = g.public_key.clone() else {
            panic!("EC public key")
        };
        let msg = b"release-2026.11.tar.gz contents";
        let digest = Sha256::digest(msg);
        let sig = s
            .sign(&Mechanism::new(CKM_ECDSA), g.private, &digest)
            .unwrap();
        assert_eq!(sig.len(), 64, "raw r||s");
        swverify::ecdsa_p256_prehash(&point, &digest, &sig, swverify::EcdsaEncoding::Raw)
            .expect("p256 crate accepts");
        swverify::ecdsa_p256_sha256(&point, msg, &sig, swverify::EcdsaEncoding::Raw)
            .expect("same as ECDSA-SHA256 over the message");
        let der = swverify::ecdsa_raw_to_der(32, &sig).unwrap();
        swverify::ecdsa_p256_sha256(&point, msg, &der, swverify::EcdsaEncoding::Der).unwrap();
        assert!(swverify::ecdsa_p256_prehash(
            &point,
            &digest,
            &flip(sig.clone(), 5),
            swverify::EcdsaEncoding::Raw
        )
        .is_err());
        // Hashing the digest again (the classic mistake) must not verify.
        assert!(
            swverify::ecdsa_p256_sha256(&point, &digest, &sig, swverify::EcdsaEncoding::Raw)
                .is_err()
        );
        assert!(s
            .verify(&Mechanism::new(CKM_ECDSA), g.public.unwrap(), &digest, &sig)
            .unwrap());
        assert!(!s
            .verify(
                &Mechanism::new(CKM_ECDSA),
                g.public.unwrap(),
                &digest,
                &flip(sig, 9)
            )
            .unwrap());
        let pem = g.public_key.unwrap().spki_pem();
        assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"));
    }

    pub fn ed25519(t: &TestToken) {
        let s = t.user_session();
        let g = gen(
            &s,
            KeySpec::Ec {
                curve: Curve::Ed25519,
            },
            "ed",
        );
        let Some(PublicKey::Ec { point, .. }) = g.public_key.clone() else {
            panic!("Ed25519 public key")
        };
        let msg = b"pure Ed25519 signs the message itself";
        let sig = s.sign(&Mechanism::new(CKM_EDDSA), g.private, msg).unwrap();
        swverify::ed25519(&point, msg, &sig).expect("ed25519-dalek accepts");
        assert!(swverify::ed25519(&point, b"other", &sig).is_err());
        assert!(swverify::ed25519(&point, msg, &flip(sig, 3)).is_err());
    }

    pub fn rsa_pss(t: &TestToken) {
        let s = t.user_session();
        let g = gen(&s, KeySpec::Rsa { bits: 2048 }, "rsa");
        let Some(PublicKey::Rsa { modulus, exponent }) = g.public_key.clone() else {
            panic!("RSA public key")
        };
        let msg = b"firmware image 7.9.1";
        let mech = Mechanism::rsa_pss(CKM_SHA256_RSA_PKCS_PSS, CKM_SHA256, CKG_MGF1_SHA256, 32);
        let sig = s.sign(&mech, g.private, msg).unwrap();
        assert_eq!(sig.len(), 256);
        swverify::rsa_pss(
            &modulus,
            &exponent,
            swverify::PssHash::Sha256,
            32,
            msg,
            &sig,
        )
        .expect("rsa crate accepts");
        assert!(swverify::rsa_pss(
            &modulus,
            &exponent,
            swverify::PssHash::Sha256,
            32,
            b"x",
            &sig
        )
        .is_err());
        assert_eq!(g.public_key.unwrap().algorithm(), "RSA-2048");
    }

    pub fn digest(t: &TestToken) {
        let s = t.user_session();
        let data = vec![0x5A; 100_000];
        assert_eq!(
            s.digest(&Mechanism::new(CKM_SHA256), &data).unwrap(),
            Sha256::digest(&data).to_vec()
        );
    }

    pub fn hmac_multipart(t: &TestToken) {
        let s = t.user_session();
        let k = gen(&s, KeySpec::GenericSecret { bits: 256 }, "mac").private;
        let m = Mechanism::new(CKM_SHA256_HMAC);
        let single = s.sign(&m, k, b"part one|part two").unwrap();
        s.sign_init(&m, k).unwrap();
        s.sign_update(b"part one|").unwrap();
        s.sign_update(b"part two").unwrap();
        let multi = s.sign_final().unwrap();
        assert_eq!(single, multi);
        assert_eq!(single.len(), 32);
        s.verify_init(&m, k).unwrap();
        s.verify_update(b"part one|part two").unwrap();
        assert!(s.verify_final(&single).unwrap());
    }

    pub fn wrap_unwrap(t: &TestToken) {
        let s = t.user_session();
        let mechs = t.module.mechanisms(t.slot).unwrap();
        // RFC 5649 by any of its names: PKCS#11 3.0, Luna's vendor one (lunasim), SoftHSM2's.
        let kwp = [
            CKM_AES_KEY_WRAP_KWP,
            p11::names::luna::CKM_AES_KWP,
            CKM_AES_KEY_WRAP_PAD,
        ]
        .into_iter()
        .find(|m| mechs.contains(m))
        .unwrap_or(CKM_AES_KEY_WRAP_PAD);
        assert!(mechs.contains(&kwp), "no AES key wrap with padding");
        let kek = gen(&s, KeySpec::Aes { bits: 256 }, "kek").private;
        let mut tmpl = Template::new()
            .ulong(CKA_CLASS, CKO_SECRET_KEY)
            .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
            .bool(CKA_TOKEN, false)
            .bool(CKA_EXTRACTABLE, true)
            .bool(CKA_SENSITIVE, false)
            .bytes(CKA_VALUE, &[0x11; 32]);
        let secret = s.create_object(&mut tmpl).unwrap();
        let wrapped = s.wrap_key(&Mechanism::new(kwp), kek, secret).unwrap();
        assert_eq!(wrapped.len(), 40);
        let mut ut = Template::new()
            .ulong(CKA_CLASS, CKO_SECRET_KEY)
            .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
            .bool(CKA_TOKEN, false)
            .bool(CKA_EXTRACTABLE, true)
            .bool(CKA_SENSITIVE, false);
        let back = s
            .unwrap_key(&Mechanism::new(kwp), kek, &wrapped, &mut ut)
            .unwrap();
        assert_eq!(
            s.get_attribute(back, CKA_VALUE).unwrap(),
            AttrValue::Value(vec![0x11; 32])
        );
        assert!(s
            .unwrap_key(&Mechanism::new(kwp), kek, &flip(wrapped, 7), &mut ut)
            .is_err());
    }

    pub fn key_selectors(t: &TestToken) {
        let s = t.user_session();
        let g = gen(&s, KeySpec::Ec { curve: Curve::P256 }, "selector");
        assert_eq!(
            keys::find_one(
                &s,
                &KeySelector::parse("label:selector").unwrap(),
                Some(CKO_PRIVATE_KEY)
            )
            .unwrap(),
            g.private
        );
        let id = KeySelector::parse(&format!("id:{}", hex::encode(b"selector"))).unwrap();
        assert_eq!(
            keys::find_one(&s, &id, Some(CKO_PUBLIC_KEY)).unwrap(),
            g.public.unwrap()
        );
        assert_eq!(
            keys::public_for_private(&s, g.private).unwrap(),
            g.public.unwrap()
        );
        assert!(matches!(
            keys::find_one(&s, &KeySelector::Label("nope".into()), None),
            Err(HsmError::KeyNotFound(_))
        ));
        gen(&s, KeySpec::Ec { curve: Curve::P256 }, "selector");
        let e = keys::find_one(
            &s,
            &KeySelector::Label("selector".into()),
            Some(CKO_PRIVATE_KEY),
        )
        .unwrap_err();
        assert!(e.to_string().contains("2 private keys"), "{e}");
        assert!(KeySelector::parse("selector").is_err());
        assert!(KeySelector::parse("id:zz").is_err());
    }

    // ---- the pool ---------------------------------------------------------------------

    fn pool(t: &TestToken, size: usize) -> Pool {
        let cfg = PoolConfig {
            size,
            backoff_base: Duration::from_millis(10),
            health_ttl: Duration::from_secs(60),
            ..PoolConfig::default()
        };
        let p = Pool::new(t.module.clone(), t.slot, cfg);
        p.login(UserType::User, p11::pin(USER_PIN)).unwrap();
        p.warm_up().unwrap();
        p
    }

    pub fn pool_warm_up_and_counters(t: &TestToken) {
        let p = pool(t, 3);
        let st = p.status();
        assert_eq!((st.open, st.idle, st.in_use), (3, 3, 0));
        assert!(st.logged_in);
        for _ in 0..10 {
            p.run_idempotent("C_GenerateRandom", |s| {
                let mut b = [0u8; 32];
                s.generate_random(&mut b)
            })
            .unwrap();
        }
        let m = p.metrics();
        assert_eq!(m.op("C_GenerateRandom").unwrap().ok, 10);
        assert!(m.op("C_GenerateRandom").unwrap().p50_us > 0.0);
        // A batch borrows one session for all of its work.
        let handles: Vec<u64> = p
            .run("batch", |s| {
                let a = s.handle();
                let mut b = [0u8; 8];
                s.generate_random(&mut b)?;
                s.generate_random(&mut b)?;
                Ok(vec![a, s.handle()])
            })
            .unwrap();
        assert_eq!(handles[0], handles[1]);
    }

    pub fn pool_recovers_closed_sessions(t: &TestToken) {
        let p = pool(t, 2);
        // Close every session of the slot from outside the pool (as a token removal or an
        // administrator would); this also logs the application out.
        t.module.close_all_sessions(t.slot).unwrap();
        let mut errors = 0;
        for _ in 0..5 {
            let r = p.run("sign", |s| {
                let mut b = [0u8; 16];
                s.generate_random(&mut b)?;
                // Needs the login back: find a private object.
                s.find_objects(&mut Template::new().ulong(CKA_CLASS, CKO_PRIVATE_KEY))
            });
            if r.is_err() {
                errors += 1;
            }
        }
        assert!(errors <= 1, "the caller saw {errors} errors");
        let m = p.metrics();
        assert!(m.session_reopens >= 1);
        assert_eq!(
            m.module_recoveries, 0,
            "a closed session is not a disconnect"
        );
        assert!(p.is_logged_in());
    }

    fn random16(s: &Session) -> p11::Result<()> {
        let mut b = [0u8; 16];
        s.generate_random(&mut b)
    }

    pub fn pool_recovers_finalize(t: &TestToken) {
        let p = pool(t, 2);
        let gen0 = t.module.generation();
        // Another component of the process finalizes the library behind the pool's back.
        t.module.finalize_untracked().unwrap();
        match p.run("random", random16) {
            Err(HsmError::Disconnected {
                recovered: true,
                error,
            }) => {
                assert_eq!(error.rv(), Some(CKR_CRYPTOKI_NOT_INITIALIZED));
            }
            other => panic!("expected one recovered disconnect, got {other:?}"),
        }
        assert!(t.module.generation() > gen0);
        for _ in 0..5 {
            p.run("random", random16)
                .expect("after recovery every call succeeds");
        }
        // An idempotent call is retried transparently after a recovery.
        t.module.finalize_untracked().unwrap();
        p.run_idempotent("random", random16)
            .expect("idempotent calls recover silently");
        // A finalize through this handle is noticed before the call runs: no error at all.
        t.module.finalize().unwrap();
        p.run("random", random16)
            .expect("stale sessions are replaced at checkout");
        let m = p.metrics();
        assert_eq!(m.module_recoveries, 3);
        assert!(p.is_logged_in(), "credentials kept for the re-login");
        let found = p.run("find", |s| {
            s.find_objects(&mut Template::new().ulong(CKA_CLASS, CKO_SECRET_KEY))
        });
        assert!(found.is_ok(), "logged in again after recovery: {found:?}");
    }

    pub fn pool_wrong_pin_not_retried(t: &TestToken) {
        let p = Pool::new(
            t.module.clone(),
            t.slot,
            PoolConfig {
                size: 2,
                ..PoolConfig::default()
            },
        );
        let e = p
            .login(UserType::User, p11::pin("wrong-pin-0000"))
            .unwrap_err();
        assert_eq!(e.class(), ErrorClass::Pin);
        let m = p.metrics();
        assert_eq!(m.errors_of(ErrorClass::Pin), 1, "one attempt, no retry");
        assert_eq!(m.module_recoveries, 0);
        assert_eq!(m.session_reopens, 0);
        assert_eq!(
            p.status().breaker,
            hsm::BreakerState::Closed,
            "a PIN error is not a connection failure"
        );
        assert!(!p.is_logged_in());
        // A call needing login says so plainly.
        let r = p.run("find", |s| {
            let mut b = [0u8; 4];
            s.generate_random(&mut b)?;
            let h = s.find_objects(&mut Template::new().ulong(CKA_CLASS, CKO_PRIVATE_KEY))?;
            Ok(h)
        });
        assert!(
            matches!(r, Ok(ref v) if v.is_empty()) || matches!(r, Err(HsmError::NotLoggedIn)),
            "{r:?}"
        );
    }

    pub fn pool_backlog_is_bounded(t: &TestToken) {
        let cfg = PoolConfig {
            size: 1,
            backlog: 0,
            ..PoolConfig::default()
        };
        let p = Pool::new(t.module.clone(), t.slot, cfg);
        p.warm_up().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
        let holder = {
            let p = p.clone();
            std::thread::spawn(move || {
                p.run("hold", |_s| {
                    started_tx.send(()).unwrap();
                    rx.recv().unwrap();
                    Ok(())
                })
            })
        };
        started_rx.recv().unwrap();
        let r = p.run("second", |_s| Ok(()));
        assert!(matches!(r, Err(HsmError::Busy { size: 1, .. })), "{r:?}");
        tx.send(()).unwrap();
        holder.join().unwrap().unwrap();
        p.run("third", |_s| Ok(())).unwrap();
        assert_eq!(p.metrics().busy_rejections, 1);
    }

    pub fn pool_async_off_core_threads(t: &TestToken) {
        let p = pool(t, 2);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let core = std::thread::current().id();
        let ran_on = rt.block_on(async {
            p.run_async("random", |s| {
                let mut b = [0u8; 8];
                s.generate_random(&mut b)?;
                Ok(std::thread::current().id())
            })
            .await
            .unwrap()
        });
        assert_ne!(ran_on, core, "PKCS#11 calls run on the blocking pool");
    }

    /// With a zero TTL every checkout health-checks its session; one whose handle died
    /// behind the pool's back fails the check and is replaced (logged in again) before the
    /// caller's closure runs, so the caller sees no error at all.
    pub fn pool_health_check_replaces_dead_sessions(t: &TestToken) {
        let p = Pool::new(
            t.module.clone(),
            t.slot,
            PoolConfig {
                size: 1,
                health_ttl: Duration::ZERO,
                ..PoolConfig::default()
            },
        );
        p.login(UserType::User, p11::pin(USER_PIN)).unwrap();
        p.warm_up().unwrap();
        let checks = p.metrics().health_checks;
        for _ in 0..3 {
            p.run("random", random16).unwrap();
        }
        assert_eq!(
            p.metrics().health_checks,
            checks + 3,
            "one check per checkout"
        );
        assert_eq!(p.metrics().session_reopens, 0);
        t.module.close_all_sessions(t.slot).unwrap();
        let found = p.run("find", |s| {
            s.find_objects(&mut Template::new().ulong(CKA_CLASS, CKO_PRIVATE_KEY))
        });
        assert!(
            found.is_ok(),
            "the dead session never reached the caller: {found:?}"
        );
        let m = p.metrics();
        assert_eq!(m.session_reopens, 1, "replaced once, at checkout");
        assert_eq!(m.op("find").unwrap().errors, 0);
        assert_eq!(m.module_recoveries, 0);
    }

    /// Two callers at once get two different sessions (one of them finds its place by
    /// scanning past the other's), and neither waits for the other.
    pub fn pool_concurrent_callers_get_their_own_sessions(t: &TestToken) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let p = Pool::new(
            t.module.clone(),
            t.slot,
            PoolConfig {
                size: 2,
                ..PoolConfig::default()
            },
        );
        p.warm_up().unwrap();
        let inside = AtomicUsize::new(0);
        let seen: Vec<(u64, usize)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        p.run("hold", |s| {
                            // Wait (bounded) for the other caller to be inside too: with
                            // one session between them it would still be waiting outside.
                            inside.fetch_add(1, Ordering::SeqCst);
                            let deadline = std::time::Instant::now() + Duration::from_secs(5);
                            while inside.load(Ordering::SeqCst) < 2
                                && std::time::Instant::now() < deadline
                            {
                                std::thread::sleep(Duration::from_millis(1));
                            }
                            random16(s)?;
                            Ok((s.handle(), inside.load(Ordering::SeqCst)))
                        })
                        .unwrap()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert_eq!(
            (seen[0].1, seen[1].1),
            (2, 2),
            "both callers were inside at once"
        );
        assert_ne!(seen[0].0, seen[1].0, "on two sessions");
        // Afterwards each thread keeps finding a session on its own.
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        p.run("random", random16).unwrap();
                    }
                });
            }
        });
        let m = p.metrics();
        assert_eq!(m.op("hold").unwrap().ok, 2);
        assert_eq!(m.op("random").unwrap().ok, 100);
        let st = p.status();
        assert_eq!((st.open, st.idle, st.waiting), (2, 2, 0));
    }

    // ---- PQC (modules that list the mechanisms) ----------------------------------------

    pub fn ml_dsa_all_sets(t: &TestToken) {
        let s = t.user_session();
        for set in MlDsaSet::ALL {
            let g = gen(&s, KeySpec::MlDsa { set }, set.name());
            let Some(PublicKey::MlDsa { key, set: got }) = g.public_key.clone() else {
                panic!()
            };
            assert_eq!(got, set);
            assert_eq!(key.len(), set.public_key_len(), "FIPS 204 public key size");
            let wanted = match set {
                MlDsaSet::P44 => swverify::MlDsa::P44,
                MlDsaSet::P65 => swverify::MlDsa::P65,
                MlDsaSet::P87 => swverify::MlDsa::P87,
            };
            let msg = b"an artifact, not its digest";
            let sig = s.sign(&Mechanism::new(CKM_ML_DSA), g.private, msg).unwrap();
            assert_eq!(sig.len(), set.signature_len(), "FIPS 204 signature size");
            swverify::ml_dsa(wanted, &key, msg, b"", &sig).expect("RustCrypto ml-dsa accepts");
            assert!(swverify::ml_dsa(wanted, &key, b"other", b"", &sig).is_err());
            assert!(swverify::ml_dsa(wanted, &key, msg, b"", &flip(sig.clone(), 100)).is_err());
            // Hedged by default: two signatures differ, both verify.
            let sig2 = s.sign(&Mechanism::new(CKM_ML_DSA), g.private, msg).unwrap();
            swverify::ml_dsa(wanted, &key, msg, b"", &sig2).unwrap();
            // With a context string.
            let m = Mechanism::with_sign_context(CKM_ML_DSA, b"release-v1", p11::Hedge::Preferred);
            let sig3 = s.sign(&m, g.private, msg).unwrap();
            swverify::ml_dsa(wanted, &key, msg, b"release-v1", &sig3).expect("context honoured");
            assert!(
                swverify::ml_dsa(wanted, &key, msg, b"", &sig3).is_err(),
                "context is bound into the signature"
            );
            assert!(s.verify(&m, g.public.unwrap(), msg, &sig3).unwrap());
        }
    }

    /// RFC 9858's SHA-256/192 HSS types wherever a module offers HSS: an M24 level over an
    /// M32 one signs what swverify accepts (lunasim). A module that lists no `CKM_HSS`
    /// (Kryoptic 1.5.4 implements none; SoftHSM2) refuses the key pair as an unknown
    /// mechanism — checked, so that the day one of them gains HSS this case fails and the
    /// M24 types get tested there too.
    pub fn hss_sha256_192(t: &TestToken) {
        let s = t.user_session();
        let mechs = t.module.mechanisms(t.slot).unwrap();
        let offered = mechs.contains(&CKM_HSS_KEY_PAIR_GEN) && mechs.contains(&CKM_HSS);
        assert_eq!(offered, t.backend == Backend::LunaSim, "HSS offered");
        let params = HssParams::new(vec![
            (LmsType::M24H5, LmotsType::N24W8),
            (LmsType::H5, LmotsType::W4),
        ])
        .unwrap();
        let spec = KeySpec::Hss {
            params: params.clone(),
        };
        let r = keys::generate(&s, &spec, &attrs("hss_m24"));
        if !offered {
            let e = r.expect_err("no HSS, no key");
            assert_eq!(
                e.p11().and_then(|e| e.rv()),
                Some(CKR_MECHANISM_INVALID),
                "{e}"
            );
            return;
        }
        let g = r.unwrap();
        let Some(PublicKey::Hss { key: public }) = g.public_key.clone() else {
            panic!("an HSS public key")
        };
        assert_eq!(public.len(), 52);
        for msg in [&b"boot"[..], &[0xA5; 5000]] {
            let sig = s.sign(&Mechanism::new(CKM_HSS), g.private, msg).unwrap();
            assert_eq!(sig.len(), params.signature_len());
            swverify::hss::verify(&public, msg, &sig).unwrap();
            assert!(swverify::hss::verify(&public, msg, &flip(sig, 900)).is_err());
        }
    }

    pub fn ml_kem_all_sets(t: &TestToken) {
        let s = t.user_session();
        let derived = || {
            Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
                .bool(CKA_TOKEN, false)
                .bool(CKA_EXTRACTABLE, true)
                .bool(CKA_SENSITIVE, false)
        };
        for set in MlKemSet::ALL {
            let g = gen(&s, KeySpec::MlKem { set }, set.name());
            let Some(PublicKey::MlKem { key, .. }) = g.public_key.clone() else {
                panic!()
            };
            assert_eq!(
                key.len(),
                set.public_key_len(),
                "FIPS 203 encapsulation key size"
            );
            let (ct, k1) = s
                .encapsulate(
                    &Mechanism::new(CKM_ML_KEM),
                    g.public.unwrap(),
                    &mut derived(),
                )
                .unwrap();
            assert_eq!(ct.len(), set.ciphertext_len(), "FIPS 203 ciphertext size");
            let k2 = s
                .decapsulate(&Mechanism::new(CKM_ML_KEM), g.private, &mut derived(), &ct)
                .unwrap();
            let v1 = s.get_attribute(k1, CKA_VALUE).unwrap();
            let v2 = s.get_attribute(k2, CKA_VALUE).unwrap();
            assert_eq!(v1.bytes().unwrap().len(), 32);
            assert_eq!(v1, v2, "decapsulation recovers the encapsulated secret");
            // Independent: RustCrypto encapsulates to the token's key, the token decapsulates.
            let which = match set {
                MlKemSet::P512 => swverify::mlkem::MlKem::P512,
                MlKemSet::P768 => swverify::mlkem::MlKem::P768,
                MlKemSet::P1024 => swverify::mlkem::MlKem::P1024,
            };
            let (ct2, ss) = swverify::mlkem::encapsulate(which, &key, &[0x3C; 32]).unwrap();
            let k3 = s
                .decapsulate(&Mechanism::new(CKM_ML_KEM), g.private, &mut derived(), &ct2)
                .unwrap();
            assert_eq!(
                s.get_attribute(k3, CKA_VALUE).unwrap(),
                AttrValue::Value(ss.to_vec()),
                "same secret as ml-kem"
            );
            // Implicit rejection: a tampered ciphertext gives a different secret, not an error.
            let k4 = s
                .decapsulate(
                    &Mechanism::new(CKM_ML_KEM),
                    g.private,
                    &mut derived(),
                    &flip(ct2, 11),
                )
                .unwrap();
            assert_ne!(
                s.get_attribute(k4, CKA_VALUE).unwrap(),
                AttrValue::Value(ss.to_vec())
            );
        }
    }

    pub fn slh_dsa_all_sets(t: &TestToken) {
        let s = t.user_session();
        for set in SlhDsaSet::ALL {
            let g = gen(&s, KeySpec::SlhDsa { set }, set.name());
            let Some(PublicKey::SlhDsa { key, .. }) = g.public_key.clone() else {
                panic!()
            };
            assert_eq!(key.len(), set.public_key_len(), "{}", set.name());
            let sig = s
                .sign(&Mechanism::new(CKM_SLH_DSA), g.private, b"m")
                .unwrap();
            assert_eq!(
                sig.len(),
                set.signature_len(),
                "FIPS 205 signature size of {}",
                set.name()
            );
            assert!(s
                .verify(&Mechanism::new(CKM_SLH_DSA), g.public.unwrap(), b"m", &sig)
                .unwrap());
        }
    }
}

macro_rules! suite {
    ($module:ident, $backend:expr, [$($case:ident),* $(,)?]) => {
        mod $module {
            use super::*;
            $(
                #[test]
                fn $case() {
                    let t = TestToken::new($backend);
                    cases::$case(&t);
                }
            )*
        }
    };
}

suite!(
    softhsm,
    Backend::SoftHsm,
    [
        info_and_interface,
        mechanisms,
        login_and_pin_errors,
        random,
        data_object_lifecycle,
        find_in_batches,
        aes_gcm_and_sensitive_values,
        ecdsa_p256,
        ed25519,
        rsa_pss,
        digest,
        hmac_multipart,
        wrap_unwrap,
        key_selectors,
        pool_warm_up_and_counters,
        pool_recovers_closed_sessions,
        pool_recovers_finalize,
        pool_wrong_pin_not_retried,
        pool_backlog_is_bounded,
        pool_async_off_core_threads,
        pool_health_check_replaces_dead_sessions,
        pool_concurrent_callers_get_their_own_sessions,
        hss_sha256_192,
    ]
);

suite!(
    kryoptic,
    Backend::Kryoptic,
    [
        info_and_interface,
        mechanisms,
        login_and_pin_errors,
        random,
        data_object_lifecycle,
        find_in_batches,
        aes_gcm_and_sensitive_values,
        ecdsa_p256,
        ed25519,
        rsa_pss,
        digest,
        hmac_multipart,
        wrap_unwrap,
        key_selectors,
        pool_warm_up_and_counters,
        pool_recovers_closed_sessions,
        pool_recovers_finalize,
        pool_wrong_pin_not_retried,
        pool_backlog_is_bounded,
        pool_async_off_core_threads,
        pool_health_check_replaces_dead_sessions,
        pool_concurrent_callers_get_their_own_sessions,
        ml_dsa_all_sets,
        ml_kem_all_sets,
        hss_sha256_192,
        slh_dsa_all_sets,
    ]
);

// lunasim forwards to Kryoptic and hides SLH-DSA, as Luna 7.9's mechanism table does.
suite!(
    lunasim,
    Backend::LunaSim,
    [
        info_and_interface,
        mechanisms,
        login_and_pin_errors,
        random,
        data_object_lifecycle,
        find_in_batches,
        aes_gcm_and_sensitive_values,
        ecdsa_p256,
        ed25519,
        rsa_pss,
        digest,
        hmac_multipart,
        wrap_unwrap,
        key_selectors,
        pool_warm_up_and_counters,
        pool_recovers_closed_sessions,
        pool_recovers_finalize,
        pool_wrong_pin_not_retried,
        pool_backlog_is_bounded,
        pool_async_off_core_threads,
        pool_health_check_replaces_dead_sessions,
        pool_concurrent_callers_get_their_own_sessions,
        ml_dsa_all_sets,
        ml_kem_all_sets,
        hss_sha256_192,
    ]
);
