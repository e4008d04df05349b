//! liblunasim.so as Thales' own clients load libCryptoki2: Python ctypes resolves every
//! PKCS#11 3.2 function and the `CA_*` statistics, storage, utilization and HA functions
//! by name (`tests/lunasim/ctypes_by_name.py`, with struct layouts written there from the Luna SDK
//! facts, not from `p11::vendor`), in a process of its own — which also shows that a
//! key's usage count survives a restart. What it reads is compared with what the
//! console's binding reads here.

use std::process::Command;

use hsm::algo::{Curve, KeySpec};
use hsm::keys;
use hsm::templates::KeyAttrs;
use p11::names::luna::{CKA_USAGE_COUNT, CKA_USAGE_LIMIT, CKR_KEY_NOT_ACTIVE};
use p11::sys::*;
use p11::vendor::HaLayout;
use p11::{Mechanism, Template};
use serde_json::Value;
use sha2::{Digest, Sha256};
use testkit::{ha_member_serial, HaRig, HA_SERIAL, HA_SLOT, USER_PIN};

fn run(layout: &str) {
    let top = format!("firmware = \"7.8.4\"\nha_state_layout = \"{layout}\"");
    let rig = HaRig::group(2, "", &top);
    let member = rig.members[0];
    let s = rig.user_session(member);
    let g = keys::generate(
        &s,
        &KeySpec::Ec { curve: Curve::P256 },
        &KeyAttrs {
            label: "limited".into(),
            id: b"limited".to_vec(),
            token: true,
        },
    )
    .unwrap();
    s.set_attributes(g.private, &mut Template::new().ulong(CKA_USAGE_LIMIT, 3))
        .unwrap();
    let digest = Sha256::digest(b"m");
    for _ in 0..2 {
        s.sign(&Mechanism::new(CKM_ECDSA), g.private, &digest)
            .unwrap();
    }
    let count = |s: &p11::Session| {
        s.get_attribute(g.private, CKA_USAGE_COUNT)
            .unwrap()
            .as_ulong()
    };
    assert_eq!(count(&s), Some(2));

    let out = Command::new(testkit::python())
        .arg(testkit::repo_root().join("crates/lunasim/tests/lunasim/ctypes_by_name.py"))
        .arg(&rig.module_path)
        .arg(member.to_string())
        .arg(HA_SLOT.to_string())
        .arg(USER_PIN)
        .arg("limited")
        .arg(layout)
        .envs(rig.env().iter().cloned())
        .output()
        .expect("run ctypes_by_name.py");
    assert!(
        out.status.success(),
        "ctypes_by_name.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("its JSON");

    assert_eq!(v["exported"], 104, "every PKCS#11 3.2 function by name");
    assert_eq!(v["firmware"], serde_json::json!([7, 8, 4]));
    assert!(v["token_storage"]["objects"].as_u64().unwrap() >= 2);
    assert!(v["stats"]["commands"].as_u64().unwrap() > 0);
    // Counted in the other process across the restart: 2 used here, 1 there, then refused.
    assert_eq!(v["usage_before"], serde_json::json!([2, 3]));
    assert_eq!(v["usage_after"], serde_json::json!([3, 3]));
    assert_eq!(v["signs"][1], CKR_KEY_NOT_ACTIVE);
    let util = v["utilization"].as_array().unwrap();
    assert_eq!(util.len(), 6, "one counter per bin");
    for (i, c) in util.iter().enumerate() {
        assert_eq!(c["bin"], i as u64);
        assert_eq!(
            c["serial"].as_u64().unwrap().to_string(),
            ha_member_serial(1)
        );
        assert_eq!(c["label"], "member-1");
    }
    assert_eq!(
        util[0]["count"], 1,
        "the one signature made in that process"
    );

    // The HA state as ctypes read it, and as the console's binding reads it.
    let ours = rig.module.ca_ha_state(HA_SLOT, false).unwrap();
    assert_eq!(
        ours.layout,
        if layout == "legacy" {
            HaLayout::Legacy
        } else {
            HaLayout::Current
        }
    );
    assert_eq!(v["ha"]["group_serial"], HA_SERIAL);
    assert_eq!(ours.group_serial, HA_SERIAL);
    let theirs = v["ha"]["members"].as_array().unwrap();
    assert_eq!(theirs.len(), ours.members.len());
    for (t, o) in theirs.iter().zip(&ours.members) {
        assert_eq!(t["serial"], o.serial.as_str());
        assert_eq!(t["status"], o.status);
    }

    // Back here, the count the other process wrote holds: the key is used up.
    assert_eq!(count(&s), Some(3));
    let e = s
        .sign(&Mechanism::new(CKM_ECDSA), g.private, &digest)
        .unwrap_err();
    assert_eq!(e.rv(), Some(CKR_KEY_NOT_ACTIVE));
    assert_eq!(e.ck().unwrap().name, "CKR_KEY_NOT_ACTIVE");
}

#[test]
fn ctypes_resolves_everything_by_name_current_sdk() {
    run("current");
}

#[test]
fn ctypes_resolves_everything_by_name_legacy_sdk() {
    run("legacy");
}
