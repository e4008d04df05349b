//! lunasim's own behaviour: the Luna surface, HSS/LMS checked by two independent
//! verifiers, durability of the one-time-key state, Luna's template rules, statistics,
//! utilization counters, fault injection. One process per test (cargo nextest).

use std::time::Duration;

use hsm::algo::{HssParams, KeySpec, LmotsType, LmsType, MlDsaSet};
use hsm::keys;
use hsm::pubkey::PublicKey;
use hsm::templates::KeyAttrs;
use hsm::{HsmError, Pool, PoolConfig};
use p11::sys::*;
use p11::vendor::{bin, stats_id};
use p11::{AttrValue, ErrorClass, Mechanism, Session, Template, UserType};
use sha2::{Digest, Sha256};
use testkit::{python_verify, Backend, TestToken, USER_PIN};

fn token() -> TestToken {
    TestToken::new(Backend::LunaSim)
}

fn attrs(label: &str, token: bool) -> KeyAttrs {
    KeyAttrs {
        label: label.into(),
        id: label.as_bytes().to_vec(),
        token,
    }
}

fn hss_spec(ots: LmotsType) -> KeySpec {
    KeySpec::Hss {
        params: HssParams::new(vec![(LmsType::H5, ots), (LmsType::H5, ots)]).unwrap(),
    }
}

fn remaining(s: &Session, key: u64) -> u64 {
    s.get_attribute(key, CKA_HSS_KEYS_REMAINING)
        .unwrap()
        .as_ulong()
        .unwrap()
}

fn hss_sign(s: &Session, key: u64, msg: &[u8]) -> p11::Result<Vec<u8>> {
    s.sign(&Mechanism::new(CKM_HSS), key, msg)
}

#[test]
fn surface_and_identity() {
    let t = token();
    let m = &t.module;
    let offered = m.vendor().offered();
    for f in [
        "CA_GetFirmwareVersion",
        "CA_GetHSMStats",
        "CA_ReadUtilizationMetrics",
        "CA_ReadAllUtilizationCounters",
        "CA_ReadAndResetUtilizationMetrics",
        "CA_GetHSMStorageInformation",
        "CA_GetTokenStorageInformation",
        "CA_GetTokenPolicies",
        "CA_GetHSMCapabilitySet",
        "CA_GetConfigurationElementDescription",
        "CA_GetTokenStatus",
        "CA_EncapsulateKey",
        "CA_DecapsulateKey",
        "CA_GetHAState",
        "CA_GetCurrentHAState",
    ] {
        assert!(offered.contains(&f), "{f} missing");
    }
    assert_eq!(m.ca_firmware_version(t.slot).unwrap(), (7, 9, 1));
    let ti = m.token_info(t.slot).unwrap();
    assert_eq!(ti.model, "LunaSim K7");
    assert_eq!(
        (ti.firmware_version.major, ti.firmware_version.minor),
        (7, 9)
    );
    let mechs = m.mechanisms(t.slot).unwrap();
    assert!(mechs.contains(&CKM_HSS) && mechs.contains(&CKM_HSS_KEY_PAIR_GEN));
    assert!(mechs.contains(&CKM_ML_DSA) && mechs.contains(&CKM_ML_KEM));
    assert!(!mechs.contains(&CKM_SLH_DSA), "Luna 7.9 lists no SLH-DSA");
    assert_eq!(
        m.mechanism_info(t.slot, CKM_SLH_DSA).unwrap_err().rv(),
        Some(CKR_MECHANISM_INVALID)
    );
    assert!(m.mechanism_info(t.slot, CKM_HSS).unwrap().has(CKF_SIGN));
    assert_eq!(
        m.ca_firmware_version(9999).unwrap_err().rv(),
        Some(CKR_SLOT_ID_INVALID)
    );
}

#[test]
fn hsm_stats_busy_share_moves() {
    let t = token();
    let m = &t.module;
    let ids = [
        stats_id::BOOT_TIME,
        stats_id::CPU_UP_TIME,
        stats_id::CPU_IDLE_TIME,
        stats_id::ICD_COMMANDS_COUNT,
        77,
    ];
    let sample = || {
        let v = m.ca_hsm_stats(t.slot, &ids).unwrap();
        assert_eq!(
            v[4].0, 0xFFFF_FFFF,
            "unknown IDs come back as LUNA_STATS_UNKNOWN"
        );
        (v[0].1, v[1].1, v[2].1, v[3].1)
    };
    let (boot, up0, idle0, cmds0) = sample();
    assert!(boot > 1_700_000_000, "boot time is a Unix time");
    // Work: RSA-3072 key generation and signatures keep the simulated HSM busy.
    let s = t.user_session();
    let g = keys::generate(&s, &KeySpec::Rsa { bits: 3072 }, &attrs("busy", false)).unwrap();
    for _ in 0..20 {
        s.sign(
            &Mechanism::rsa_pss(CKM_SHA256_RSA_PKCS_PSS, CKM_SHA256, CKG_MGF1_SHA256, 32),
            g.private,
            b"x",
        )
        .unwrap();
    }
    let (_, up1, idle1, cmds1) = sample();
    let busy_working = (up1 - up0) - (idle1 - idle0);
    assert!(busy_working > 0, "busy time grows while the HSM works");
    assert!(
        cmds1 >= cmds0 + 40,
        "every call is an ICD command ({cmds0} → {cmds1})"
    );
    std::thread::sleep(Duration::from_millis(300));
    let (_, up2, idle2, _) = sample();
    assert!(up2 - up1 >= 300, "up time is in milliseconds and advances");
    let busy_resting = (up2 - up1) - (idle2 - idle1);
    assert!(
        busy_resting < busy_working,
        "the busy share falls when the HSM rests ({busy_resting} vs {busy_working})"
    );
    assert!(idle2 >= idle1 && up2 >= up1);
}

#[test]
fn utilization_counters_per_bin() {
    let t = token();
    let s = t.user_session();
    let ec = keys::generate(
        &s,
        &KeySpec::Ec {
            curve: hsm::algo::Curve::P256,
        },
        &attrs("ec", false),
    )
    .unwrap();
    let aes = keys::generate(&s, &KeySpec::Aes { bits: 256 }, &attrs("aes", false))
        .unwrap()
        .private;
    let digest = Sha256::digest(b"m");
    let (n, m) = (7, 5);
    for _ in 0..n {
        s.sign(&Mechanism::new(CKM_ECDSA), ec.private, &digest)
            .unwrap();
    }
    for i in 0..m {
        s.encrypt(&Mechanism::aes_gcm(&[i as u8; 12], b"", 128), aes, b"data")
            .unwrap();
    }
    let sig = s
        .sign(&Mechanism::new(CKM_ECDSA), ec.private, &digest)
        .unwrap();
    assert!(s
        .verify(
            &Mechanism::new(CKM_ECDSA),
            ec.public.unwrap(),
            &digest,
            &sig
        )
        .unwrap());
    let counters = s.ca_utilization(false).unwrap();
    let get = |b: u64| {
        counters
            .iter()
            .find(|c| c.bin == b)
            .map(|c| c.count)
            .unwrap()
    };
    assert_eq!(counters.len(), 6);
    assert_eq!(get(bin::SIGN), n + 1);
    assert_eq!(get(bin::ENCRYPT), m);
    assert_eq!(get(bin::VERIFY), 1);
    assert_eq!(get(bin::KEY_GENERATION), 2);
    assert_eq!(get(bin::DECRYPT), 0);
    assert_eq!(counters[0].label, testkit::TOKEN_LABEL);
    // Read-and-reset returns the counts and zeroes them.
    let reset = s.ca_utilization(true).unwrap();
    assert_eq!(
        reset.iter().find(|c| c.bin == bin::SIGN).unwrap().count,
        n + 1
    );
    let after = s.ca_utilization(false).unwrap();
    assert!(after.iter().all(|c| c.count == 0), "{after:?}");
}

#[test]
fn storage_policies_and_descriptions() {
    let t = token();
    let m = &t.module;
    let s = t.user_session();
    let before = m.ca_token_storage(t.slot).unwrap();
    keys::generate(
        &s,
        &KeySpec::Ec {
            curve: hsm::algo::Curve::P256,
        },
        &attrs("stored", true),
    )
    .unwrap();
    let after = m.ca_token_storage(t.slot).unwrap();
    assert_eq!(
        after.object_count.unwrap(),
        before.object_count.unwrap() + 2
    );
    assert!(after.used >= before.used && after.total == after.used + after.free);
    let hsm = m.ca_hsm_storage(t.slot).unwrap();
    assert!(hsm.total > 0 && hsm.total == hsm.used + hsm.free);
    let policies = m.ca_token_policies(t.slot).unwrap();
    assert!(policies.contains(&(20, 10)), "max failed user logins");
    let caps = m.ca_hsm_capabilities(t.slot).unwrap();
    assert!(
        caps.contains(&(49, 1)),
        "partition utilization metrics allowed"
    );
    let d = m.ca_element_description(t.slot, true, false, 20).unwrap();
    assert_eq!(d.description, "Maximum failed user logins allowed");
    let e = m
        .ca_element_description(t.slot, true, false, 12345)
        .unwrap_err();
    assert_eq!(
        e.ck().unwrap().name,
        "CKR_POLICY_ID_INVALID",
        "a Luna vendor code, named"
    );
    let st = m.ca_token_status(t.slot).unwrap();
    assert_eq!(
        st.flags & 0x0100_0400,
        0x0100_0400,
        "enabled and initialized"
    );
    assert!(st.sessions >= 1);
}

#[test]
fn vendor_kem_path_matches_the_standard_one() {
    let t = token();
    let s = t.user_session();
    let g = keys::generate(
        &s,
        &KeySpec::MlKem {
            set: hsm::algo::MlKemSet::P768,
        },
        &attrs("kem", false),
    )
    .unwrap();
    let derived = || {
        Template::new()
            .ulong(CKA_CLASS, CKO_SECRET_KEY)
            .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
            .bool(CKA_TOKEN, false)
            .bool(CKA_EXTRACTABLE, true)
            .bool(CKA_SENSITIVE, false)
    };
    let ca_encap = t
        .module
        .vendor()
        .encapsulate_key
        .expect("CA_EncapsulateKey");
    let mut tmpl = derived();
    // Call Luna's CA_EncapsulateKey directly (the console uses it when a module's table
    // lacks C_EncapsulateKey).
    let mut ct = vec![0u8; 2048];
    let mut ct_len = ct.len() as CK_ULONG;
    let mut key: CK_OBJECT_HANDLE = 0;
    let mut mech = CK_MECHANISM {
        mechanism: CKM_ML_KEM,
        pParameter: std::ptr::null_mut(),
        ulParameterLen: 0,
    };
    let attrs_raw = template_raw(&mut tmpl);
    // SAFETY: all buffers live for the call; the prototype is CA_EncapsulateKey's.
    let rv = unsafe {
        ca_encap(
            s.handle(),
            &mut mech,
            g.public.unwrap(),
            attrs_raw.0,
            attrs_raw.1,
            ct.as_mut_ptr(),
            &mut ct_len,
            &mut key,
        )
    };
    assert_eq!(rv, CKR_OK);
    assert_eq!(ct_len, 1088);
    ct.truncate(ct_len as usize);
    let back = s
        .decapsulate(&Mechanism::new(CKM_ML_KEM), g.private, &mut derived(), &ct)
        .unwrap();
    assert_eq!(
        s.get_attribute(key, CKA_VALUE).unwrap(),
        s.get_attribute(back, CKA_VALUE).unwrap()
    );
}

/// The raw view of a template for a direct vendor call in this test.
fn template_raw(t: &mut Template) -> (*mut CK_ATTRIBUTE, CK_ULONG) {
    // Rebuild from the template's own values: the types and bytes are public API.
    let types: Vec<u64> = t.types().collect();
    let vals: Vec<Vec<u8>> = types
        .iter()
        .map(|ty| t.get(*ty).unwrap().to_vec())
        .collect();
    let leaked: &'static mut Vec<Vec<u8>> = Box::leak(Box::new(vals));
    let raw: Vec<CK_ATTRIBUTE> = types
        .iter()
        .zip(leaked.iter_mut())
        .map(|(ty, v)| CK_ATTRIBUTE {
            type_: *ty,
            pValue: v.as_mut_ptr() as *mut _,
            ulValueLen: v.len() as CK_ULONG,
        })
        .collect();
    let raw: &'static mut Vec<CK_ATTRIBUTE> = Box::leak(Box::new(raw));
    (raw.as_mut_ptr(), raw.len() as CK_ULONG)
}

#[test]
fn hss_template_rules_follow_luna() {
    let t = token();
    let s = t.user_session();
    let m = Mechanism::new(CKM_HSS_KEY_PAIR_GEN);
    let private = || {
        Template::new()
            .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
            .ulong(CKA_KEY_TYPE, CKK_HSS)
            .bool(CKA_SIGN, true)
            .ulong(CKA_HSS_LEVELS, 2)
            .ulongs(CKA_HSS_LMS_TYPES, &[5, 5])
            .ulongs(CKA_HSS_LMOTS_TYPES, &[4, 4])
    };
    let public = || {
        Template::new()
            .ulong(CKA_CLASS, CKO_PUBLIC_KEY)
            .ulong(CKA_KEY_TYPE, CKK_HSS)
            .bool(CKA_VERIFY, true)
    };
    // HSS parameters in the public template: refused, as by Luna 7.9.
    let mut bad_pub = public().ulong(CKA_HSS_LEVELS, 2);
    let e = s
        .generate_key_pair(&m, &mut bad_pub, &mut private())
        .unwrap_err();
    assert_eq!(e.rv(), Some(CKR_ATTRIBUTE_VALUE_INVALID));
    // Missing parameters.
    let mut no_types = Template::new()
        .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
        .ulong(CKA_HSS_LEVELS, 1);
    assert_eq!(
        s.generate_key_pair(&m, &mut public(), &mut no_types)
            .unwrap_err()
            .rv(),
        Some(CKR_TEMPLATE_INCOMPLETE)
    );
    // H25 is not supported by Luna.
    let mut h25 = Template::new()
        .ulong(CKA_HSS_LEVELS, 1)
        .ulongs(CKA_HSS_LMS_TYPES, &[9])
        .ulongs(CKA_HSS_LMOTS_TYPES, &[4]);
    assert_eq!(
        s.generate_key_pair(&m, &mut public(), &mut h25)
            .unwrap_err()
            .rv(),
        Some(CKR_ATTRIBUTE_VALUE_INVALID)
    );
    // Arrays must have `levels` entries.
    let mut short = Template::new()
        .ulong(CKA_HSS_LEVELS, 2)
        .ulongs(CKA_HSS_LMS_TYPES, &[5])
        .ulongs(CKA_HSS_LMOTS_TYPES, &[4, 4]);
    assert_eq!(
        s.generate_key_pair(&m, &mut public(), &mut short)
            .unwrap_err()
            .rv(),
        Some(CKR_ATTRIBUTE_VALUE_INVALID)
    );
    // The whole CK_ULONG counts: 2^32 + 5 is not LMS_SHA256_M32_H5 (it was, before the
    // template fuzz target's review: the type was cut to 32 bits).
    let mut wide = Template::new()
        .ulong(CKA_HSS_LEVELS, 1)
        .ulongs(CKA_HSS_LMS_TYPES, &[(1 << 32) | 5])
        .ulongs(CKA_HSS_LMOTS_TYPES, &[4]);
    assert_eq!(
        s.generate_key_pair(&m, &mut public(), &mut wide)
            .unwrap_err()
            .rv(),
        Some(CKR_ATTRIBUTE_VALUE_INVALID)
    );
    // An extractable HSS key is refused.
    let mut extractable = private().bool(CKA_EXTRACTABLE, true);
    assert_eq!(
        s.generate_key_pair(&m, &mut public(), &mut extractable)
            .unwrap_err()
            .rv(),
        Some(CKR_ATTRIBUTE_VALUE_INVALID)
    );
    // The right way works.
    let (hp, hs) = s
        .generate_key_pair(&m, &mut public(), &mut private())
        .unwrap();
    assert_eq!(remaining(&s, hs), 1024);
    assert_eq!(
        s.get_attribute(hp, CKA_HSS_LMS_TYPE).unwrap().as_ulong(),
        Some(5)
    );
    assert_eq!(
        s.get_attribute(hs, CKA_HSS_LMS_TYPES).unwrap().as_ulongs(),
        Some(vec![5, 5])
    );
    assert_eq!(
        s.get_attribute(hs, CKA_VALUE).unwrap(),
        AttrValue::Sensitive
    );
    assert_eq!(
        s.get_attribute(hp, CKA_HSS_KEYS_REMAINING).unwrap(),
        AttrValue::Invalid,
        "remaining is on the private key"
    );
}

#[test]
fn hss_signatures_pass_two_independent_verifiers() {
    let t = token();
    let s = t.user_session();
    let g = keys::generate(
        &s,
        &hss_spec(LmotsType::W8),
        &attrs("firmware_signing_hss_lms_2026", true),
    )
    .unwrap();
    let Some(PublicKey::Hss { key: public }) = g.public_key.clone() else {
        panic!("HSS public key")
    };
    assert_eq!(public.len(), 60);
    assert_eq!(remaining(&s, g.private), 1024);
    let msg = b"firmware image 7.9.1 for the release of 2026-11";
    let sig = hss_sign(&s, g.private, msg).unwrap();
    assert_eq!(sig.len(), 2644, "2-level H5/W8 signature size");
    assert_eq!(
        remaining(&s, g.private),
        1023,
        "every signature consumes a one-time key"
    );
    // RustCrypto lms-signature with the HSS layer (swverify) and Python hsslms.
    swverify::hss::verify(&public, msg, &sig).expect("swverify accepts");
    assert!(
        python_verify("hss", &public, msg, &sig, b""),
        "hsslms accepts"
    );
    // HSS signs the message itself: the digest is a different message.
    let digest = Sha256::digest(msg);
    assert!(swverify::hss::verify(&public, &digest, &sig).is_err());
    assert!(!python_verify("hss", &public, &digest, &sig, b""));
    // Tampering.
    let mut bad = sig.clone();
    bad[100] ^= 1;
    assert!(swverify::hss::verify(&public, msg, &bad).is_err());
    assert!(!python_verify("hss", &public, msg, &bad, b""));
    // The token's own verification agrees.
    assert!(s
        .verify(&Mechanism::new(CKM_HSS), g.public.unwrap(), msg, &sig)
        .unwrap());
    assert!(!s
        .verify(&Mechanism::new(CKM_HSS), g.public.unwrap(), msg, &bad)
        .unwrap());
    // A length query consumes nothing.
    s.sign_init(&Mechanism::new(CKM_HSS), g.private).unwrap();
    assert_eq!(remaining(&s, g.private), 1023);
}

#[test]
fn hss_single_part_limit_and_multipart() {
    let t = token();
    let s = t.user_session();
    let g = keys::generate(&s, &hss_spec(LmotsType::W4), &attrs("limits", false)).unwrap();
    let Some(PublicKey::Hss { key: public }) = g.public_key.clone() else {
        panic!()
    };
    let at_limit = vec![0x42u8; 48_108];
    let sig = hss_sign(&s, g.private, &at_limit).unwrap();
    swverify::hss::verify(&public, &at_limit, &sig).unwrap();
    let over = vec![0x42u8; 48_109];
    let e = hss_sign(&s, g.private, &over).unwrap_err();
    assert_eq!(e.rv(), Some(CKR_DATA_LEN_RANGE), "Luna's single-part limit");
    assert_eq!(
        remaining(&s, g.private),
        1023,
        "the refused call consumed nothing"
    );
    // Larger messages go through C_SignUpdate/C_SignFinal.
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    s.sign_init(&Mechanism::new(CKM_HSS), g.private).unwrap();
    for chunk in big.chunks(65_536) {
        s.sign_update(chunk).unwrap();
    }
    let sig = s.sign_final().unwrap();
    swverify::hss::verify(&public, &big, &sig)
        .expect("multi-part signature over the whole message");
    assert!(python_verify("hss", &public, &big, &sig, b""));
}

#[test]
fn hss_state_reaches_disk_before_the_signature() {
    let t = token();
    let s = t.user_session();
    let g = keys::generate(&s, &hss_spec(LmotsType::W4), &attrs("durable", true)).unwrap();
    hss_sign(&s, g.private, b"one").unwrap();
    hss_sign(&s, g.private, b"two").unwrap();
    drop(s);
    // Re-initialize: lunasim forgets everything in memory and reloads the key from disk.
    t.module.reinitialize().unwrap();
    let s = t.user_session();
    let key = keys::find_one(
        &s,
        &keys::KeySelector::Label("durable".into()),
        Some(CKO_PRIVATE_KEY),
    )
    .unwrap();
    assert_eq!(remaining(&s, key), 1022, "the advanced state survived");
    // Make the next state write fail: replace the key directory with a file.
    let slot_dir = t
        .dir
        .path()
        .join("lunasim/hss")
        .join(format!("slot-{}", t.slot));
    let moved = t.dir.path().join("moved-away");
    std::fs::rename(&slot_dir, &moved).unwrap();
    std::fs::write(&slot_dir, b"not a directory").unwrap();
    let e = hss_sign(&s, key, b"three").unwrap_err();
    assert_eq!(
        e.rv(),
        Some(CKR_DEVICE_ERROR),
        "no durable state, no signature"
    );
    std::fs::remove_file(&slot_dir).unwrap();
    std::fs::rename(&moved, &slot_dir).unwrap();
    let sig = hss_sign(&s, key, b"four").unwrap();
    let public = keys::read_public_key(&s, keys::public_for_private(&s, key).unwrap()).unwrap();
    let PublicKey::Hss { key: pk } = public else {
        panic!()
    };
    swverify::hss::verify(&pk, b"four", &sig).unwrap();
    assert_eq!(
        remaining(&s, key),
        1021,
        "the refused call took no one-time key"
    );

    // The tree state sits beside the key file: the trees of the current position (and,
    // checkpointed as it grows, the next bottom tree in work), each checked when read.
    let key_file = std::fs::read_dir(&slot_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let trees = key_file.with_extension("trees");
    let mut names: Vec<String> = std::fs::read_dir(&trees)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["tree-0", "tree-1"]);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&key_file).unwrap()).unwrap();
    assert_eq!(
        state["position"],
        serde_json::json!([0, 3]),
        "the next leaf of each level"
    );
    // Damaged or lost tree state costs a rebuild, never a wrong or reused signature.
    let tree1 = trees.join("tree-1");
    let mut bytes = std::fs::read(&tree1).unwrap();
    bytes[200] ^= 0xFF;
    std::fs::write(&tree1, bytes).unwrap();
    std::fs::remove_file(trees.join("tree-0")).unwrap();
    drop(s);
    t.module.reinitialize().unwrap();
    let s = t.user_session();
    let key = keys::find_one(
        &s,
        &keys::KeySelector::Label("durable".into()),
        Some(CKO_PRIVATE_KEY),
    )
    .unwrap();
    let sig = hss_sign(&s, key, b"five").unwrap();
    swverify::hss::verify(&pk, b"five", &sig).unwrap();
    assert_eq!(
        u32::from_be_bytes(sig[4..8].try_into().unwrap()),
        0,
        "top leaf 0"
    );
    let at = sig.len() - (4 + 4 + 32 + 67 * 32 + 4 + 5 * 32);
    assert_eq!(
        u32::from_be_bytes(sig[at..at + 4].try_into().unwrap()),
        3,
        "bottom leaf 3: the position from the key file"
    );
    assert!(trees.join("tree-0").exists(), "rebuilt and written again");
}

/// The (top, bottom) leaves of a two-level H5/W4 signature: the one-time key it used.
fn leaf_ids(sig: &[u8]) -> (u32, u32) {
    let top_q = u32::from_be_bytes(sig[4..8].try_into().unwrap());
    let at = sig.len() - (4 + 4 + 32 + 67 * 32 + 4 + 5 * 32);
    (
        top_q,
        u32::from_be_bytes(sig[at..at + 4].try_into().unwrap()),
    )
}

const SIGN_LOOP: &str = "LUNASIM_TEST_SIGN_LOOP";

/// The child of `hss_kill_9_between_signatures_never_reuses_a_one_time_key`: opens the
/// parent's token and signs until killed, printing each signature (hex) once it has it.
fn sign_until_killed() -> ! {
    use std::io::Write;
    let module = p11::Module::load(testkit::lunasim_module()).unwrap();
    module.initialize().unwrap();
    let slot = module.slots(true).unwrap()[0];
    let s = module.open_session(slot, true).unwrap();
    s.login(UserType::User, &p11::pin(testkit::USER_PIN))
        .unwrap();
    let key = keys::find_one(
        &s,
        &keys::KeySelector::Label("killed".into()),
        Some(CKO_PRIVATE_KEY),
    )
    .unwrap();
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        let sig = hss_sign(&s, key, format!("child {i}").as_bytes()).unwrap();
        writeln!(out, "sig {}", hex::encode(sig)).unwrap();
        out.flush().unwrap();
    }
    unreachable!()
}

/// `kill -9` of a process signing in a loop, at moments around a bottom-tree switch (every
/// 32 signatures: the next tree, its signature by the top level and the tree files are
/// written then): every signature that left the killed process verifies, and none of its
/// one-time keys signs again after the restart.
#[test]
fn hss_kill_9_between_signatures_never_reuses_a_one_time_key() {
    use std::io::BufRead;
    if std::env::var_os(SIGN_LOOP).is_some() {
        sign_until_killed();
    }
    let t = token();
    let s = t.user_session();
    let g = keys::generate(&s, &hss_spec(LmotsType::W4), &attrs("killed", true)).unwrap();
    let Some(PublicKey::Hss { key: public }) = g.public_key.clone() else {
        panic!()
    };
    drop(s);
    let mut used = std::collections::HashSet::new();
    let mut signed = 0;
    // This test by its path in the test binary (its module's, without the crate's name).
    let this_test = format!(
        "{}::hss_kill_9_between_signatures_never_reuses_a_one_time_key",
        module_path!().split_once("::").map_or("", |(_, m)| m)
    );
    for (round, kill_after) in [30usize, 33, 31, 2].into_iter().enumerate() {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &this_test, "--nocapture"])
            .env(SIGN_LOOP, "1")
            .envs(t.env().iter().cloned())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The test harness prints its own lines too; signatures are the "sig " ones. Whole
        // lines only: a signature's line is longer than a pipe takes in one write, so the
        // kill can cut the last one short, and a signature cut short never left the child
        // (its one-time key is the one in flight, counted below).
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut next_signature = move || loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                return None;
            }
            let hex = line.strip_suffix('\n')?.strip_prefix("sig ");
            if let Some(hex) = hex {
                return Some(hex::decode(hex).unwrap());
            }
        };
        let mut sigs = Vec::new();
        // Kill at the round's moment: after that many signatures left the child.
        while sigs.len() < kill_after {
            sigs.push(next_signature().expect("the child signs"));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Signatures already in the pipe left the child too.
        sigs.extend(std::iter::from_fn(next_signature));
        for (i, sig) in sigs.iter().enumerate() {
            let msg = format!("child {i}");
            swverify::hss::verify(&public, msg.as_bytes(), sig)
                .unwrap_or_else(|e| panic!("round {round}, signature {i}: {e}"));
            assert!(
                used.insert(leaf_ids(sig)),
                "round {round}: one-time key {:?} used twice",
                leaf_ids(sig)
            );
        }
        signed += sigs.len();
        // This process, restarted onto the same store, goes on where the child stopped.
        t.module.reinitialize().unwrap();
        let s = t.user_session();
        let key = keys::find_one(
            &s,
            &keys::KeySelector::Label("killed".into()),
            Some(CKO_PRIVATE_KEY),
        )
        .unwrap();
        let left = remaining(&s, key) as usize;
        assert!(
            left == 1024 - signed || left == 1024 - signed - 1,
            "round {round}: {left} left after {signed} signatures (at most the one in flight lost)"
        );
        signed = 1024 - left;
        let sig = hss_sign(&s, key, b"after the kill").unwrap();
        swverify::hss::verify(&public, b"after the kill", &sig).unwrap();
        assert!(
            used.insert(leaf_ids(&sig)),
            "round {round}: the restarted process reused {:?}",
            leaf_ids(&sig)
        );
        signed += 1;
    }
    assert!(signed > 96, "three bottom trees crossed");
}

#[test]
fn hss_key_runs_to_exhaustion_across_tree_boundaries() {
    let t = token();
    let s = t.user_session();
    let g = keys::generate(&s, &hss_spec(LmotsType::W4), &attrs("exhaust", true)).unwrap();
    let Some(PublicKey::Hss { key: public }) = g.public_key.clone() else {
        panic!()
    };
    let mut leaf_ids = std::collections::HashSet::new();
    for i in 0..1024u32 {
        let msg = format!("artifact {i}");
        let sig = hss_sign(&s, g.private, msg.as_bytes())
            .unwrap_or_else(|e| panic!("signature {i}: {e}"));
        // (top q, bottom q) identifies the one-time key: never reused.
        let top_q = u32::from_be_bytes(sig[4..8].try_into().unwrap());
        let bottom_at = sig.len() - (4 + 4 + 32 + 67 * 32 + 4 + 5 * 32);
        let bottom_q = u32::from_be_bytes(sig[bottom_at..bottom_at + 4].try_into().unwrap());
        assert!(
            leaf_ids.insert((top_q, bottom_q)),
            "one-time key ({top_q},{bottom_q}) reused at {i}"
        );
        // Check every tree boundary and the ends with both outside verifiers.
        if i % 32 == 0 || (i % 32 == 31 && !(64..=960).contains(&i)) || i == 1023 {
            swverify::hss::verify(&public, msg.as_bytes(), &sig)
                .unwrap_or_else(|e| panic!("signature {i}: {e}"));
        }
        if [0, 31, 32, 33, 1023].contains(&i) {
            assert!(
                python_verify("hss", &public, msg.as_bytes(), &sig, b""),
                "hsslms, signature {i}"
            );
        }
    }
    assert_eq!(remaining(&s, g.private), 0);
    let e = hss_sign(&s, g.private, b"one too many").unwrap_err();
    assert_eq!(e.rv(), Some(CKR_KEY_EXHAUSTED));
    assert_eq!(
        e.class(),
        ErrorClass::Operation,
        "exhaustion is final, not retriable"
    );
}

#[test]
fn hss_objects_merge_with_the_inner_modules() {
    let t = token();
    let s = t.user_session();
    let ec = keys::generate(
        &s,
        &KeySpec::Ec {
            curve: hsm::algo::Curve::P256,
        },
        &attrs("ec", true),
    )
    .unwrap();
    let hss = keys::generate(&s, &hss_spec(LmotsType::W4), &attrs("hss", true)).unwrap();
    let all = keys::list_objects(&s, &mut Template::new()).unwrap();
    assert!(all
        .iter()
        .any(|o| o.handle == ec.private && o.algorithm == "ECDSA P-256"));
    let row = all
        .iter()
        .find(|o| o.handle == hss.private)
        .expect("HSS key listed");
    assert_eq!(row.algorithm, "HSS/LMS H5/W4+H5/W4");
    assert_eq!(row.hss_keys_remaining, Some(1024));
    assert!(row.capabilities.sign && row.sensitive == Some(true) && row.extractable == Some(false));
    let found = s
        .find_objects(&mut Template::new().ulong(CKA_KEY_TYPE, CKK_HSS))
        .unwrap();
    assert_eq!(found.len(), 2);
    // Not clonable, not extractable.
    let copy = p11_copy(&s, hss.private);
    assert_eq!(copy, CKR_ACTION_PROHIBITED);
    let kek = keys::generate(&s, &KeySpec::Aes { bits: 256 }, &attrs("kek", false))
        .unwrap()
        .private;
    let e = s
        .wrap_key(&Mechanism::new(CKM_AES_KEY_WRAP_KWP), kek, hss.private)
        .unwrap_err();
    assert_eq!(e.rv(), Some(CKR_KEY_UNEXTRACTABLE));
    // Private HSS keys are invisible without login.
    let public_session = t.module.open_session(t.slot, false).unwrap();
    s.logout().unwrap();
    let seen = public_session
        .find_objects(&mut Template::new().ulong(CKA_KEY_TYPE, CKK_HSS))
        .unwrap();
    assert_eq!(seen, vec![hss.public.unwrap()]);
    s.login(UserType::User, &p11::pin(USER_PIN)).unwrap();
    // Destroy works like on any key.
    s.destroy_object(hss.private).unwrap();
    assert!(s
        .find_objects(
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
                .ulong(CKA_KEY_TYPE, CKK_HSS)
        )
        .unwrap()
        .is_empty());
    assert_eq!(
        s.get_attribute(hss.private, CKA_LABEL).unwrap_err().class(),
        ErrorClass::KeyNotFound
    );
    // The token still lists the public half until it goes too.
    s.destroy_object(hss.public.unwrap()).unwrap();
    assert!(s
        .find_objects(&mut Template::new().ulong(CKA_KEY_TYPE, CKK_HSS))
        .unwrap()
        .is_empty());
}

/// `C_CopyObject` through the raw table (no wrapper for it in the console: it never copies).
fn p11_copy(s: &Session, obj: u64) -> CK_RV {
    let f = s.module().functions().C_CopyObject.unwrap();
    let mut out: CK_OBJECT_HANDLE = 0;
    // SAFETY: an empty template and a valid out pointer.
    unsafe { f(s.handle(), obj, std::ptr::null_mut(), 0, &mut out) }
}

#[test]
fn ml_dsa_parameter_set_trap() {
    let t = token();
    let s = t.user_session();
    // CKA_PARAMETER_SET only on the private half: Luna silently applies its default.
    let mut public = Template::new()
        .ulong(CKA_CLASS, CKO_PUBLIC_KEY)
        .ulong(CKA_KEY_TYPE, CKK_ML_DSA)
        .bool(CKA_VERIFY, true)
        .bool(CKA_TOKEN, false);
    let mut private = Template::new()
        .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
        .ulong(CKA_KEY_TYPE, CKK_ML_DSA)
        .bool(CKA_SIGN, true)
        .bool(CKA_TOKEN, false)
        .ulong(CKA_PARAMETER_SET, CKP_ML_DSA_87);
    let (hp, hs) = s
        .generate_key_pair(
            &Mechanism::new(CKM_ML_DSA_KEY_PAIR_GEN),
            &mut public,
            &mut private,
        )
        .unwrap();
    let pk = keys::read_public_key(&s, hp).unwrap();
    let PublicKey::MlDsa { set, key } = &pk else {
        panic!()
    };
    assert_eq!(
        *set,
        MlDsaSet::P44,
        "the default parameter set, not the 87 that was asked for"
    );
    assert_eq!(key.len(), 1312);
    let sig = s.sign(&Mechanism::new(CKM_ML_DSA), hs, b"m").unwrap();
    assert_eq!(sig.len(), 2420, "only the sizes give it away");
    // The console's generator puts the parameter set on both halves and checks the size.
    let g = keys::generate(
        &s,
        &KeySpec::MlDsa { set: MlDsaSet::P87 },
        &attrs("ok87", false),
    )
    .unwrap();
    assert!(
        matches!(g.public_key, Some(PublicKey::MlDsa { set: MlDsaSet::P87, ref key }) if key.len() == 2592)
    );
}

#[test]
fn fault_injection_and_recovery() {
    let t = token();
    let s = t.user_session();
    let digest = Sha256::digest(b"m");
    let ec = keys::generate(
        &s,
        &KeySpec::Ec {
            curve: hsm::algo::Curve::P256,
        },
        &attrs("ec", false),
    )
    .unwrap();
    t.module
        .sim_control(r#"{"op":"fail","function":"C_Sign","rv":"CKR_DEVICE_ERROR","count":2}"#)
        .unwrap();
    for _ in 0..2 {
        let e = s
            .sign(&Mechanism::new(CKM_ECDSA), ec.private, &digest)
            .unwrap_err();
        assert_eq!(e.rv(), Some(CKR_DEVICE_ERROR));
        assert_eq!(e.class(), ErrorClass::Disconnected);
    }
    s.sign(&Mechanism::new(CKM_ECDSA), ec.private, &digest)
        .expect("fault exhausted");
    drop(s);

    // A network disconnect through the pool: Luna's code, named, classified, recovered.
    let cfg = PoolConfig {
        size: 2,
        backoff_base: Duration::from_millis(5),
        breaker_threshold: 3,
        breaker_open_for: Duration::from_millis(200),
        ..PoolConfig::default()
    };
    let pool = Pool::new(t.module.clone(), t.slot, cfg);
    pool.login(UserType::User, p11::pin(USER_PIN)).unwrap();
    pool.warm_up().unwrap();
    let random = |s: &Session| {
        let mut b = [0u8; 8];
        s.generate_random(&mut b)
    };
    t.module
        .sim_control(r#"{"op":"disconnect","count":1}"#)
        .unwrap();
    match pool.run("random", random) {
        Err(HsmError::Disconnected { error, .. }) => {
            assert_eq!(error.ck().unwrap().name, "CKR_UNABLE_TO_CONNECT");
        }
        other => panic!("{other:?}"),
    }
    pool.run("random", random)
        .expect("recovered after the disconnect");

    // A call safe to repeat lives through as many recoveries as the budget allows, and
    // counts as recovered; a fault that outlasts the budget reaches the caller.
    let find = |s: &Session| s.find_objects(&mut Template::new().ulong(CKA_CLASS, CKO_SECRET_KEY));
    let before = pool.metrics();
    t.module
        .sim_control(
            r#"{"op":"fail","function":"C_FindObjectsInit","rv":"CKR_DEVICE_ERROR","count":2}"#,
        )
        .unwrap();
    pool.run_idempotent("find", find)
        .expect("two faults are within the budget of three recoveries");
    let after = pool.metrics();
    assert_eq!(after.recovered_calls, before.recovered_calls + 1);
    assert_eq!(after.module_recoveries, before.module_recoveries + 2);
    let budget = PoolConfig::default().recovery_budget as u64;
    t.module
        .sim_control(&format!(
            r#"{{"op":"fail","function":"C_FindObjectsInit","rv":"CKR_DEVICE_ERROR","count":{}}}"#,
            budget + 1
        ))
        .unwrap();
    match pool.run_idempotent("find", find) {
        Err(HsmError::Disconnected { error, .. }) => {
            assert_eq!(error.rv(), Some(CKR_DEVICE_ERROR));
        }
        other => panic!("a fault longer than the budget is reported: {other:?}"),
    }
    assert_eq!(pool.metrics().recovered_calls, after.recovered_calls);
    t.module.sim_control(r#"{"op":"clear"}"#).unwrap();
    std::thread::sleep(Duration::from_millis(250));

    // A lasting outage opens the breaker: calls are refused without touching the HSM.
    t.module
        .sim_control(r#"{"op":"disconnect","count":null}"#)
        .unwrap();
    let mut saw_open = false;
    for _ in 0..10 {
        if let Err(HsmError::CircuitOpen { .. }) = pool.run("random", random) {
            saw_open = true;
            break;
        }
    }
    assert!(saw_open, "breaker opened");
    assert_eq!(pool.status().breaker, hsm::BreakerState::Open);
    t.module.sim_control(r#"{"op":"clear"}"#).unwrap();
    std::thread::sleep(Duration::from_millis(250));
    pool.run_idempotent("random", random)
        .expect("half-open probe succeeds once the HSM is back");
    assert_eq!(pool.status().breaker, hsm::BreakerState::Closed);
}

#[test]
fn wrong_pin_is_tried_once() {
    let t = token();
    let pool = Pool::new(
        t.module.clone(),
        t.slot,
        PoolConfig {
            size: 3,
            ..PoolConfig::default()
        },
    );
    let before: serde_json::Value =
        serde_json::from_str(&t.module.sim_control(r#"{"op":"stats"}"#).unwrap()).unwrap();
    let e = pool
        .login(UserType::User, p11::pin("guess-1234"))
        .unwrap_err();
    assert_eq!(e.class(), ErrorClass::Pin);
    let after: serde_json::Value =
        serde_json::from_str(&t.module.sim_control(r#"{"op":"stats"}"#).unwrap()).unwrap();
    let logins = |v: &serde_json::Value| v["calls"]["C_Login"].as_u64().unwrap_or(0);
    assert_eq!(
        logins(&after) - logins(&before),
        1,
        "exactly one C_Login reached the HSM"
    );
}

#[test]
fn control_file_from_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let control = dir.path().join("control.jsonl");
    std::fs::write(&control, "").unwrap();
    let t = TestToken::with_lunasim_extra(
        Backend::LunaSim,
        &format!("control_file = \"{}\"\n", control.display()),
    );
    let s = t.user_session();
    let mut b = [0u8; 4];
    s.generate_random(&mut b).unwrap();
    std::fs::write(
        &control,
        "{\"op\":\"fail\",\"function\":\"C_GenerateRandom\",\"rv\":\"CKR_TOKEN_NOT_PRESENT\"}\n",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let e = s.generate_random(&mut b).unwrap_err();
    assert_eq!(e.rv(), Some(CKR_TOKEN_NOT_PRESENT));
    s.generate_random(&mut b).unwrap();
}

/// Peak resident memory of this process (lunasim runs in it), from the kernel.
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// A multi-part HSS signature keeps nothing of the message: 512 MiB through
/// `C_SignUpdate` grow the process by far less than that; the one-time key is taken at
/// the first part (the position is on disk before any of the message is hashed).
#[test]
fn hss_multipart_streams_the_message() {
    let t = token();
    let s = t.user_session();
    let g = keys::generate(&s, &hss_spec(LmotsType::W4), &attrs("stream", true)).unwrap();
    let Some(PublicKey::Hss { key: public }) = g.public_key.clone() else {
        panic!()
    };
    let part: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
    let parts = 512;
    let before = peak_rss_bytes();
    s.sign_init(&Mechanism::new(CKM_HSS), g.private).unwrap();
    assert_eq!(
        remaining(&s, g.private),
        1024,
        "nothing taken by C_SignInit"
    );
    s.sign_update(&part).unwrap();
    assert_eq!(remaining(&s, g.private), 1023, "taken at the first part");
    for _ in 1..parts {
        s.sign_update(&part).unwrap();
    }
    let sig = s.sign_final().unwrap();
    let grown = peak_rss_bytes().saturating_sub(before);
    assert!(
        grown < 64 << 20,
        "lunasim held the message: +{} MiB",
        grown >> 20
    );
    let mut v = swverify::hss::StreamingVerifier::new(&public, &sig).unwrap();
    (0..parts).for_each(|_| v.update(&part));
    v.finish().expect("the signature covers all 512 MiB");
    let mut v = swverify::hss::StreamingVerifier::new(&public, &sig).unwrap();
    (1..parts).for_each(|_| v.update(&part));
    assert!(v.finish().is_err(), "and not a part less");
    // A multi-part operation given up after its first part has used its one-time key.
    s.sign_init(&Mechanism::new(CKM_HSS), g.private).unwrap();
    s.sign_update(b"abandoned").unwrap();
    drop(s);
    let s = t.user_session();
    assert_eq!(remaining(&s, g.private), 1022);
}

/// Luna's table names the padded AES key wrap (RFC 5649) `CKM_AES_KWP` (vendor 0x80000171):
/// lunasim lists that in place of PKCS#11 3.0's `CKM_AES_KEY_WRAP_KWP`, refuses the standard
/// one, and its vendor one wraps exactly what RFC 5649 gives — checked against OpenSSL's
/// `id-aes256-wrap-pad` of the same key under the same KEK.
#[test]
fn aes_key_wrap_with_padding_is_lunas_ckm_aes_kwp() {
    let t = token();
    let kwp = p11::names::luna::CKM_AES_KWP;
    let mechs = t.module.mechanisms(t.slot).unwrap();
    assert!(mechs.contains(&kwp), "CKM_AES_KWP listed");
    assert!(!mechs.contains(&CKM_AES_KEY_WRAP_KWP) && !mechs.contains(&CKM_AES_KEY_WRAP_PKCS7));
    let info = t.module.mechanism_info(t.slot, kwp).unwrap();
    assert!(
        info.flags & CKF_WRAP != 0 && info.flags & CKF_UNWRAP != 0,
        "{info:?}"
    );
    let s = t.user_session();
    let kek_value = [0x2au8; 32];
    let secret_value = [0x11u8; 20];
    let secret = |ty: u64, v: &[u8], extra: bool| {
        Template::new()
            .ulong(CKA_CLASS, CKO_SECRET_KEY)
            .ulong(CKA_KEY_TYPE, ty)
            .bool(CKA_TOKEN, false)
            .bool(CKA_EXTRACTABLE, true)
            .bool(CKA_SENSITIVE, false)
            .bool(CKA_WRAP, extra)
            .bool(CKA_UNWRAP, extra)
            .bytes(CKA_VALUE, v)
    };
    let kek = s
        .create_object(&mut secret(CKK_AES, &kek_value, true))
        .unwrap();
    let key = s
        .create_object(&mut secret(CKK_GENERIC_SECRET, &secret_value, false))
        .unwrap();
    let e = s
        .wrap_key(&Mechanism::new(CKM_AES_KEY_WRAP_KWP), kek, key)
        .unwrap_err();
    assert_eq!(e.rv(), Some(CKR_MECHANISM_INVALID));
    let wrapped = s.wrap_key(&Mechanism::new(kwp), kek, key).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("secret");
    std::fs::write(&input, secret_value).unwrap();
    let out = std::process::Command::new("openssl")
        .args([
            "enc",
            "-id-aes256-wrap-pad",
            "-K",
            &hex::encode(kek_value),
            "-iv",
            "A65959A6",
            "-in",
        ])
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(wrapped, out.stdout, "RFC 5649 as OpenSSL computes it");
    let back = s
        .unwrap_key(
            &Mechanism::new(kwp),
            kek,
            &wrapped,
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
                .bool(CKA_TOKEN, false)
                .bool(CKA_EXTRACTABLE, true)
                .bool(CKA_SENSITIVE, false),
        )
        .unwrap();
    assert_eq!(
        s.get_attribute(back, CKA_VALUE).unwrap(),
        AttrValue::Value(secret_value.to_vec())
    );
}

/// Every object answers `CKA_OUID` (12 bytes, one per object), a search by it finds that
/// object alone, and the OUIDs stay what they were across a restart that numbers the
/// objects anew (the `renumber` knob) — which moves every handle.
#[test]
fn ouid_identifies_objects_across_a_renumbering_restart() {
    use p11::names::luna::CKA_OUID;
    let t = token();
    let s = t.user_session();
    let ec = keys::generate(
        &s,
        &KeySpec::Ec {
            curve: hsm::algo::Curve::P256,
        },
        &attrs("ec", true),
    )
    .unwrap();
    let aes = keys::generate(&s, &KeySpec::Aes { bits: 256 }, &attrs("aes", true)).unwrap();
    let hss = keys::generate(
        &s,
        &KeySpec::Hss {
            params: HssParams::new(vec![(LmsType::H5, LmotsType::W8)]).unwrap(),
        },
        &attrs("hss", true),
    )
    .unwrap();
    let objects = [
        ec.private,
        ec.public.unwrap(),
        aes.private,
        hss.private,
        hss.public.unwrap(),
    ];
    let ouid = |s: &Session, h: u64| match s.get_attribute(h, CKA_OUID).unwrap() {
        AttrValue::Value(v) => v,
        other => panic!("CKA_OUID of {h}: {other:?}"),
    };
    let before: Vec<Vec<u8>> = objects.iter().map(|&h| ouid(&s, h)).collect();
    for (i, o) in before.iter().enumerate() {
        assert_eq!(o.len(), 12, "a Luna OUID is 12 bytes");
        assert_eq!(
            before.iter().filter(|x| *x == o).count(),
            1,
            "object {i}'s OUID is its own"
        );
        let found = s
            .find_objects(&mut Template::new().bytes(CKA_OUID, o))
            .unwrap();
        assert_eq!(
            found,
            vec![objects[i]],
            "a search by OUID finds object {i} alone"
        );
    }
    // The OUID combines with the rest of a template like any attribute.
    let wrong_class = s
        .find_objects(
            &mut Template::new()
                .bytes(CKA_OUID, &before[0])
                .ulong(CKA_CLASS, CKO_PUBLIC_KEY),
        )
        .unwrap();
    assert!(wrong_class.is_empty(), "{wrong_class:?}");
    drop(s);

    t.module
        .sim_control(r#"{"op":"renumber","enabled":true}"#)
        .unwrap();
    t.module.reinitialize().unwrap();
    let s = t.user_session();
    let mut moved = 0;
    for (i, o) in before.iter().enumerate() {
        let found = s
            .find_objects(&mut Template::new().bytes(CKA_OUID, o))
            .unwrap();
        assert_eq!(
            found.len(),
            1,
            "object {i} is found by its OUID after the restart"
        );
        assert_eq!(ouid(&s, found[0]), *o);
        if p11::token_handle(found[0]) != p11::token_handle(objects[i]) {
            moved += 1;
        }
        // The old handle is refused by the binding, never sent.
        let e = s.get_attribute(objects[i], CKA_LABEL).unwrap_err();
        assert!(matches!(e, p11::Error::StaleHandle { .. }), "{e:?}");
    }
    assert_eq!(moved, objects.len(), "every object has a new number");
}

/// RFC 9858's SHA-256/192 types (M24/N24), alone and under or over an M32 level: keys of
/// the right size and types, signatures (single- and multi-part) that hsslms and swverify
/// accept and the token's own verification too, the counter dropping by one each time,
/// and a restart that signs on from the disk.
#[test]
fn sha256_192_hss_keys_sign_for_both_verifiers() {
    let t = token();
    let s = t.user_session();
    let m24 = vec![(LmsType::M24H5, LmotsType::N24W8)];
    let m24_over_m32 = vec![
        (LmsType::M24H5, LmotsType::N24W4),
        (LmsType::H5, LmotsType::W8),
    ];
    let m32_over_m24 = vec![
        (LmsType::H5, LmotsType::W4),
        (LmsType::M24H5, LmotsType::N24W2),
    ];
    for (n, levels) in [m24, m24_over_m32, m32_over_m24].into_iter().enumerate() {
        let params = HssParams::new(levels.clone()).unwrap();
        let spec = KeySpec::Hss {
            params: params.clone(),
        };
        let g = keys::generate(&s, &spec, &attrs(&format!("sha256_192_{n}"), true)).unwrap();
        let Some(PublicKey::Hss { key: public }) = g.public_key.clone() else {
            panic!("HSS public key")
        };
        assert_eq!(public.len(), params.public_key_len(), "{levels:?}");
        assert_eq!(
            u32::from_be_bytes(public[4..8].try_into().unwrap()) as u64,
            levels[0].0.code()
        );
        let types = s.get_attribute(g.private, CKA_HSS_LMS_TYPES).unwrap();
        assert_eq!(types.as_ulongs(), Some(params.lms_codes()));
        let ots = s.get_attribute(g.private, CKA_HSS_LMOTS_TYPES).unwrap();
        assert_eq!(ots.as_ulongs(), Some(params.lmots_codes()));
        let pub_type = s
            .get_attribute(g.public.unwrap(), CKA_HSS_LMS_TYPE)
            .unwrap();
        assert_eq!(pub_type.as_ulong(), Some(levels[0].0.code()));
        let total = params.capacity() as u64;
        assert_eq!(remaining(&s, g.private), total);
        // Past the first bottom tree (32 leaves) where there are two levels.
        let count = if levels.len() == 2 { 34 } else { 3 };
        for i in 0..count {
            let msg = format!("firmware {n}.{i}");
            let sig = hss_sign(&s, g.private, msg.as_bytes()).unwrap();
            assert_eq!(sig.len(), params.signature_len(), "{levels:?}");
            assert_eq!(remaining(&s, g.private), total - 1 - i as u64);
            swverify::hss::verify(&public, msg.as_bytes(), &sig).expect("swverify accepts");
            if i == 0 || i == count - 1 {
                assert!(
                    python_verify("hss", &public, msg.as_bytes(), &sig, b""),
                    "hsslms accepts {levels:?} signature {i}"
                );
                let mut bad = sig.clone();
                bad[sig.len() - 30] ^= 1;
                assert!(!python_verify("hss", &public, msg.as_bytes(), &bad, b""));
                assert!(swverify::hss::verify(&public, msg.as_bytes(), &bad).is_err());
            }
            assert!(s
                .verify(
                    &Mechanism::new(CKM_HSS),
                    g.public.unwrap(),
                    msg.as_bytes(),
                    &sig
                )
                .unwrap());
        }
        // Beyond Luna's single-part limit, in parts.
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        s.sign_init(&Mechanism::new(CKM_HSS), g.private).unwrap();
        big.chunks(65_536).for_each(|c| s.sign_update(c).unwrap());
        let sig = s.sign_final().unwrap();
        swverify::hss::verify(&public, &big, &sig).expect("multi-part, swverify");
        assert!(
            python_verify("hss", &public, &big, &sig, b""),
            "multi-part, hsslms"
        );
        assert_eq!(remaining(&s, g.private), total - count as u64 - 1);
    }
    // A restart: the keys load from their files and sign on where they stopped.
    drop(s);
    t.module.reinitialize().unwrap();
    let s = t.user_session();
    let key = keys::find_one(
        &s,
        &keys::KeySelector::Label("sha256_192_1".into()),
        Some(CKO_PRIVATE_KEY),
    )
    .unwrap();
    assert_eq!(remaining(&s, key), 1024 - 35, "M24 over M32, from its file");
    let public = keys::read_public_key(&s, keys::public_for_private(&s, key).unwrap()).unwrap();
    let PublicKey::Hss { key: pk } = public else {
        panic!()
    };
    assert_eq!(pk.len(), 52);
    let sig = hss_sign(&s, key, b"after the restart").unwrap();
    swverify::hss::verify(&pk, b"after the restart", &sig).unwrap();
    assert!(python_verify("hss", &pk, b"after the restart", &sig, b""));
}

/// lunasim refuses what Luna refuses among the new types: one tree hashing two ways, M24
/// H25, and RFC 9858's SHAKE256 types (Luna lists none).
#[test]
fn sha256_192_templates_follow_luna() {
    let t = token();
    let s = t.user_session();
    for (lms, ots) in [(10u64, 4u64), (5, 8), (14, 8), (0x14, 0x10), (0x0F, 0x0C)] {
        let mut public = Template::new()
            .ulong(CKA_CLASS, CKO_PUBLIC_KEY)
            .ulong(CKA_KEY_TYPE, CKK_HSS)
            .bool(CKA_VERIFY, true);
        let mut private = Template::new()
            .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
            .ulong(CKA_KEY_TYPE, CKK_HSS)
            .bool(CKA_SIGN, true)
            .ulong(CKA_HSS_LEVELS, 1)
            .ulongs(CKA_HSS_LMS_TYPES, &[lms])
            .ulongs(CKA_HSS_LMOTS_TYPES, &[ots]);
        let e = s
            .generate_key_pair(
                &Mechanism::new(CKM_HSS_KEY_PAIR_GEN),
                &mut public,
                &mut private,
            )
            .unwrap_err();
        assert_eq!(
            e.rv(),
            Some(CKR_ATTRIBUTE_VALUE_INVALID),
            "{lms:#x}/{ots:#x}"
        );
    }
}
