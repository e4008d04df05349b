//! lunasim's HA groups: replication to every member, operations taking turns, a member
//! taken down failing over without an error, needs-sync until a resync, HSS refused,
//! `CA_GetHAState` in both SDK layouts, and groups refused for bad configurations while
//! the other slots keep working. One process per test (cargo nextest).

use hsm::algo::{Curve, HssParams, KeySpec, LmotsType, LmsType, MlDsaSet};
use hsm::keys;
use hsm::templates::KeyAttrs;
use hsm::HsmError;
use p11::sys::*;
use p11::vendor::{stats_id, HaLayout};
use p11::{Mechanism, ObjectHandle, Session, Template};
use serde_json::Value;
use sha2::{Digest, Sha256};
use testkit::{ha_group_toml, ha_member_serial, HaRig, HA_LABEL, HA_SERIAL, HA_SLOT};

const UNABLE_TO_CONNECT: u64 = p11::names::luna::CKR_UNABLE_TO_CONNECT;

fn attrs(label: &str) -> KeyAttrs {
    KeyAttrs {
        label: label.into(),
        id: label.as_bytes().to_vec(),
        token: true,
    }
}

fn find(s: &Session, class: u64, id: &[u8]) -> Vec<ObjectHandle> {
    s.find_objects(&mut Template::new().ulong(CKA_CLASS, class).bytes(CKA_ID, id))
        .unwrap()
}

fn one(s: &Session, class: u64, id: &[u8]) -> ObjectHandle {
    let found = find(s, class, id);
    assert_eq!(found.len(), 1, "class {class:#x} id {id:?}: {found:?}");
    found[0]
}

fn value(s: &Session, h: ObjectHandle, a: u64) -> Vec<u8> {
    s.get_attribute(h, a).unwrap().bytes().unwrap().to_vec()
}

/// KCV: the first 3 bytes of AES-ECB over a zero block.
fn kcv(s: &Session, key: ObjectHandle) -> Vec<u8> {
    s.encrypt(&Mechanism::new(CKM_AES_ECB), key, &[0u8; 16])
        .unwrap()[..3]
        .to_vec()
}

fn ecdsa(s: &Session, key: ObjectHandle) -> p11::Result<Vec<u8>> {
    s.sign(&Mechanism::new(CKM_ECDSA), key, &Sha256::digest(b"release"))
}

fn served(rig: &HaRig, function: &str) -> Vec<u64> {
    let st = rig.control(r#"{"op":"ha_state"}"#);
    let mut v: Vec<u64> = st["groups"][0]["last_served"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["function"] == function)
        .map(|s| s["member"].as_u64().unwrap())
        .collect();
    v.reverse(); // oldest first
    v
}

fn member_json(rig: &HaRig, member: usize) -> Value {
    rig.control(r#"{"op":"ha_state"}"#)["groups"][0]["members"][member - 1].clone()
}

fn commands(rig: &HaRig, slot: u64) -> u64 {
    rig.module
        .ca_hsm_stats(slot, &[stats_id::ICD_COMMANDS_COUNT])
        .unwrap()[0]
        .1
}

#[test]
fn objects_made_in_the_group_are_on_every_member() {
    let rig = HaRig::group(2, "", "");
    let v = rig.user_session(HA_SLOT);
    let ec = keys::generate(&v, &KeySpec::Ec { curve: Curve::P256 }, &attrs("ec")).unwrap();
    let aes = keys::generate(&v, &KeySpec::Aes { bits: 256 }, &attrs("aes")).unwrap();
    let ml = keys::generate(&v, &KeySpec::MlDsa { set: MlDsaSet::P65 }, &attrs("mldsa")).unwrap();
    let data = v
        .create_object(
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_DATA)
                .bool(CKA_TOKEN, true)
                .bool(CKA_PRIVATE, true)
                .text(CKA_LABEL, "notes")
                .bytes(CKA_VALUE, b"kept on every member"),
        )
        .unwrap();
    assert!(data >= 0x4841_0000, "a virtual handle");

    let members: Vec<Session> = rig.members.iter().map(|s| rig.user_session(*s)).collect();
    let mut points = Vec::new();
    let mut kcvs = Vec::new();
    let mut ml_keys = Vec::new();
    for m in &members {
        let pk = one(m, CKO_PUBLIC_KEY, b"ec");
        let sk = one(m, CKO_PRIVATE_KEY, b"ec");
        assert_eq!(value(m, sk, CKA_LABEL), b"ec");
        assert_eq!(
            m.get_attribute(sk, CKA_SENSITIVE).unwrap().as_bool(),
            Some(true)
        );
        assert_eq!(
            m.get_attribute(sk, CKA_EXTRACTABLE).unwrap().as_bool(),
            Some(false)
        );
        points.push(value(m, pk, CKA_EC_POINT));
        kcvs.push(kcv(m, one(m, CKO_SECRET_KEY, b"aes")));
        ml_keys.push(value(m, one(m, CKO_PUBLIC_KEY, b"mldsa"), CKA_VALUE));
        one(m, CKO_PRIVATE_KEY, b"mldsa");
        let d = m
            .find_objects(
                &mut Template::new()
                    .ulong(CKA_CLASS, CKO_DATA)
                    .text(CKA_LABEL, "notes"),
            )
            .unwrap();
        assert_eq!(value(m, d[0], CKA_VALUE), b"kept on every member");
    }
    assert_eq!(points[0], points[1], "the same EC key on both members");
    assert_eq!(kcvs[0], kcvs[1], "the same AES key on both members");
    assert_eq!(
        ml_keys[0], ml_keys[1],
        "the same ML-DSA key on both members"
    );
    assert_eq!(
        Some(ml_keys[0].clone()),
        ml.public_key.as_ref().map(|k| k.raw()),
        "the key the caller saw is the replicated one"
    );
    // Signed through the group, verified with each member's own copy of the public key.
    let digest = Sha256::digest(b"release");
    let sig = v
        .sign(&Mechanism::new(CKM_ECDSA), ec.private, &digest)
        .unwrap();
    for m in &members {
        assert!(m
            .verify(
                &Mechanism::new(CKM_ECDSA),
                one(m, CKO_PUBLIC_KEY, b"ec"),
                &digest,
                &sig
            )
            .unwrap());
    }
    // Searches through the group find each object once.
    assert_eq!(find(&v, CKO_SECRET_KEY, b"aes"), vec![aes.private]);
    // A destroy in the group destroys everywhere.
    v.destroy_object(aes.private).unwrap();
    for m in &members {
        assert!(find(m, CKO_SECRET_KEY, b"aes").is_empty());
    }
}

#[test]
fn operations_take_turns_over_the_members() {
    let rig = HaRig::group(2, "", "");
    let v = rig.user_session(HA_SLOT);
    let ec = keys::generate(&v, &KeySpec::Ec { curve: Curve::P256 }, &attrs("ec")).unwrap();
    let before: Vec<u64> = rig.members.iter().map(|s| commands(&rig, *s)).collect();
    for _ in 0..6 {
        ecdsa(&v, ec.private).unwrap();
    }
    let turns = served(&rig, "C_SignInit");
    assert_eq!(turns.len(), 6);
    for pair in turns.windows(2) {
        assert_ne!(pair[0], pair[1], "round-robin: {turns:?}");
    }
    for (i, slot) in rig.members.iter().enumerate() {
        assert!(
            commands(&rig, *slot) >= before[i] + 6,
            "member {} counted its share of the calls",
            i + 1
        );
        assert!(member_json(&rig, i + 1)["served"].as_u64().unwrap() >= 3);
    }
    let mut r = [0u8; 4];
    v.generate_random(&mut r).unwrap();
    v.generate_random(&mut r).unwrap();
    let rnd = served(&rig, "C_GenerateRandom");
    assert_eq!(rnd.len(), 2);
    assert_ne!(rnd[0], rnd[1]);
    // The group's serial and label on its virtual slot; each member's own on its slot.
    let t = rig.module.token_info(HA_SLOT).unwrap();
    assert_eq!(
        (t.label.as_str(), t.serial_number.as_str()),
        (HA_LABEL, HA_SERIAL)
    );
    let t = rig.module.token_info(rig.members[1]).unwrap();
    assert_eq!(t.serial_number, ha_member_serial(2));
}

#[test]
fn a_member_down_fails_over_and_needs_sync_until_resync() {
    let rig = HaRig::group(2, "", "");
    let v = rig.user_session(HA_SLOT);
    let kept = keys::generate(&v, &KeySpec::Ec { curve: Curve::P256 }, &attrs("kept")).unwrap();
    let gone = keys::generate(&v, &KeySpec::Aes { bits: 128 }, &attrs("gone")).unwrap();
    rig.control(r#"{"op":"member_down","member":2}"#);

    let st = rig.module.ca_ha_state(HA_SLOT, false).unwrap();
    assert_eq!(st.layout, HaLayout::Current);
    assert_eq!(st.group_serial, HA_SERIAL);
    assert_eq!(st.members[0].status, CKR_OK);
    assert_eq!(st.members[1].serial, ha_member_serial(2));
    assert_eq!(st.members[1].status, UNABLE_TO_CONNECT);
    assert_eq!(rig.module.ca_ha_state(HA_SLOT, true).unwrap(), st);

    let m2_before = commands(&rig, rig.members[1]);
    for _ in 0..4 {
        ecdsa(&v, kept.private).expect("no error while a member is down");
    }
    assert!(served(&rig, "C_SignInit").ends_with(&[1, 1, 1, 1]));
    assert_eq!(
        commands(&rig, rig.members[1]),
        m2_before,
        "the down member served nothing"
    );

    // Made and destroyed while member 2 is down: it misses both.
    let late = keys::generate(&v, &KeySpec::Ec { curve: Curve::P384 }, &attrs("late")).unwrap();
    v.destroy_object(gone.private).unwrap();
    let m2 = rig.user_session(rig.members[1]);
    assert!(find(&m2, CKO_PRIVATE_KEY, b"late").is_empty());
    assert_eq!(find(&m2, CKO_SECRET_KEY, b"gone").len(), 1);
    let j = member_json(&rig, 2);
    assert_eq!(j["alive"], false);
    assert_eq!(j["needs_sync"], true);
    let missing: Vec<&str> = j["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(
        missing.iter().any(|m| m.contains("private key 'late'")),
        "{missing:?}"
    );
    assert!(
        missing.iter().any(|m| m.contains("public key 'late'")),
        "{missing:?}"
    );

    rig.control(r#"{"op":"member_up","member":2}"#);
    let j = member_json(&rig, 2);
    assert_eq!(
        (j["alive"].as_bool(), j["needs_sync"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(
        rig.module.ca_ha_state(HA_SLOT, false).unwrap().members[1].status,
        CKR_OK
    );

    let r = rig.control(r#"{"op":"resync"}"#);
    assert!(r["applied"].as_u64().unwrap() >= 3, "{r}");
    assert_eq!(member_json(&rig, 2)["needs_sync"], false);
    assert_eq!(find(&m2, CKO_PRIVATE_KEY, b"late").len(), 1);
    assert!(find(&m2, CKO_SECRET_KEY, b"gone").is_empty());
    // Both members serve the replicated key again.
    for _ in 0..2 {
        ecdsa(&v, late.private).unwrap();
    }
    assert!(
        served(&rig, "C_SignInit").ends_with(&[1, 2])
            || served(&rig, "C_SignInit").ends_with(&[2, 1])
    );
}

#[test]
fn a_key_deleted_on_a_members_own_slot_fails_on_that_member_until_resync() {
    let rig = HaRig::group(2, "", "");
    let v = rig.user_session(HA_SLOT);
    let k = keys::generate(&v, &KeySpec::Ec { curve: Curve::P256 }, &attrs("fw")).unwrap();
    let m2 = rig.user_session(rig.members[1]);
    m2.destroy_object(one(&m2, CKO_PRIVATE_KEY, b"fw")).unwrap();
    // The day member 2 serves the request, it fails — what the drift check is for.
    let results: Vec<_> = (0..4).map(|_| ecdsa(&v, k.private)).collect();
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        2,
        "{results:?}"
    );
    let e = results.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert_eq!(e.rv(), Some(CKR_KEY_HANDLE_INVALID));
    // A resync puts the group's copy back from its replication record.
    rig.control(r#"{"op":"resync"}"#);
    assert_eq!(find(&m2, CKO_PRIVATE_KEY, b"fw").len(), 1);
    for _ in 0..4 {
        ecdsa(&v, k.private).unwrap();
    }
}

#[test]
fn auto_resync_replicates_when_the_member_is_back() {
    let rig = HaRig::group(3, "auto_resync = true", "");
    let v = rig.user_session(HA_SLOT);
    rig.control(r#"{"op":"member_down","member":"1280000103"}"#);
    keys::generate(&v, &KeySpec::Aes { bits: 256 }, &attrs("while-down")).unwrap();
    let m3 = rig.user_session(rig.members[2]);
    assert!(find(&m3, CKO_SECRET_KEY, b"while-down").is_empty());
    assert_eq!(member_json(&rig, 3)["needs_sync"], true);
    rig.control(r#"{"op":"member_up","member":3}"#);
    assert_eq!(member_json(&rig, 3)["needs_sync"], false);
    assert_eq!(find(&m3, CKO_SECRET_KEY, b"while-down").len(), 1);
    let kcvs: Vec<_> = rig
        .members
        .iter()
        .map(|s| {
            let m = rig.user_session(*s);
            kcv(&m, one(&m, CKO_SECRET_KEY, b"while-down"))
        })
        .collect();
    assert!(kcvs.windows(2).all(|w| w[0] == w[1]), "{kcvs:?}");
}

#[test]
fn hss_keys_cannot_be_made_in_a_group() {
    let rig = HaRig::group(2, "", "");
    let v = rig.user_session(HA_SLOT);
    let spec = KeySpec::Hss {
        params: HssParams::new(vec![(LmsType::H5, LmotsType::W8)]).unwrap(),
    };
    match keys::generate(&v, &spec, &attrs("hss")) {
        Err(HsmError::P11(e)) => assert_eq!(e.rv(), Some(CKR_ACTION_PROHIBITED)),
        other => panic!("HSS in an HA group: {other:?}"),
    }
    for s in &rig.members {
        let m = rig.user_session(*s);
        assert!(
            find(&m, CKO_PRIVATE_KEY, b"hss").is_empty(),
            "nothing was left behind"
        );
    }
    // On a member's own slot (outside the group) it works as on any partition.
    let m1 = rig.user_session(rig.members[0]);
    keys::generate(&m1, &spec, &attrs("hss")).unwrap();
}

#[test]
fn ha_only_shows_just_the_virtual_slot_and_legacy_layout_answers_as_old_sdks() {
    let rig = HaRig::group(2, "ha_only = true", "ha_state_layout = \"legacy\"");
    assert_eq!(rig.module.slots(true).unwrap(), vec![HA_SLOT]);
    let st = rig.module.ca_ha_state(HA_SLOT, false).unwrap();
    assert_eq!(st.layout, HaLayout::Legacy);
    assert_eq!(st.group_serial, HA_SERIAL);
    assert_eq!(
        st.members
            .iter()
            .map(|m| m.serial.clone())
            .collect::<Vec<_>>(),
        vec![ha_member_serial(1), ha_member_serial(2)]
    );
    assert!(
        rig.module.ca_ha_state(rig.members[0], false).is_err(),
        "not an HA slot"
    );
    let v = rig.user_session(HA_SLOT);
    keys::generate(
        &v,
        &KeySpec::Ec {
            curve: Curve::Ed25519,
        },
        &attrs("ed"),
    )
    .unwrap();
    // Luna's CA_* answer for the virtual slot from a member.
    assert_eq!(rig.module.ca_firmware_version(HA_SLOT).unwrap(), (7, 9, 1));
    let util = v.ca_utilization(false).unwrap();
    let serials: std::collections::BTreeSet<u64> = util.iter().map(|c| c.serial_number).collect();
    assert_eq!(
        serials.into_iter().collect::<Vec<_>>(),
        vec![1_280_000_101, 1_280_000_102],
        "one set of counters per member"
    );
}

fn refused(rig: &HaRig) -> String {
    rig.control(r#"{"op":"ha_state"}"#)["groups"][0]["refused"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// What every refused group leaves working: its slot is listed without a token and says
/// why; the other slots, and another good group, work.
fn check_refused(rig: &HaRig, why: &str) {
    assert!(
        refused(rig).contains("HA group 'ha-test'"),
        "{}",
        refused(rig)
    );
    assert!(refused(rig).contains(why), "{}", refused(rig));
    assert!(rig.module.slots(false).unwrap().contains(&HA_SLOT));
    assert!(!rig.module.slots(true).unwrap().contains(&HA_SLOT));
    let info = rig.module.slot_info(HA_SLOT).unwrap();
    assert!(
        info.description.contains("HA group 'ha-test' not started"),
        "{}",
        info.description
    );
    assert_eq!(
        rig.module.open_session(HA_SLOT, false).unwrap_err().rv(),
        Some(CKR_TOKEN_NOT_PRESENT)
    );
    let s = rig.user_session(1);
    let mut b = [0u8; 8];
    s.generate_random(&mut b).unwrap();
    let good = rig.user_session(101);
    keys::generate(&good, &KeySpec::Aes { bits: 128 }, &attrs("ok")).unwrap();
}

fn good_second_group() -> String {
    ha_group_toml(
        "other",
        "1280000200",
        &[("1280000201".into(), 3), ("1280000202".into(), 4)],
        "",
    )
}

#[test]
fn a_group_with_one_member_is_refused_by_name() {
    let bad = ha_group_toml(HA_LABEL, HA_SERIAL, &[(ha_member_serial(1), 1)], "");
    let rig = HaRig::new(4, &[1, 2, 3, 4], "", &(bad + &good_second_group()));
    check_refused(&rig, "1 member; an HA group needs at least two");
}

#[test]
fn a_group_with_duplicate_member_serials_is_refused_by_name() {
    let bad = ha_group_toml(
        HA_LABEL,
        HA_SERIAL,
        &[(ha_member_serial(1), 1), (ha_member_serial(1), 2)],
        "",
    );
    let rig = HaRig::new(4, &[1, 2, 3, 4], "", &(bad + &good_second_group()));
    check_refused(&rig, "appears twice");
}

#[test]
fn a_group_whose_member_token_is_missing_is_refused_by_name() {
    let bad = ha_group_toml(
        HA_LABEL,
        HA_SERIAL,
        &[(ha_member_serial(1), 1), (ha_member_serial(2), 2)],
        "",
    );
    let rig = HaRig::new(4, &[1, 3, 4], "", &(bad + &good_second_group()));
    check_refused(&rig, "token in inner slot 2 missing");
}
