//! `hsmc ha`, `hsmc ha drift` and `hsmc usage` run as processes against a lunasim HA group
//! (the tokens made here, the same files seen by each hsmc process).

use std::process::{Command, Output, Stdio};

use hsm::algo::{Curve, KeySpec};
use hsm::keys;
use hsm::templates::KeyAttrs;
use p11::sys::*;
use p11::Template;
use serde_json::Value;
use testkit::{ha_member_serial, HaRig, HA_SERIAL, HA_SLOT, USER_PIN};

fn hsmc(rig: &HaRig, data: &std::path::Path, args: &[&str]) -> Output {
    let mut c = Command::new(testkit::hsmc_binary());
    c.args(args)
        .env_remove("HSMC_PIN")
        .env("HSMC_DATA_DIR", data)
        .env("HSMC_MODULE", &rig.module_path)
        .env("HSMC_PIN", USER_PIN)
        .env("USER", "ci-officer")
        .stdin(Stdio::null());
    for (k, v) in rig.env() {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

#[test]
fn ha_lists_the_group_and_drift_exits_3_when_members_differ() {
    let rig = HaRig::group(2, "", "");
    let data = tempfile::tempdir().unwrap();
    let slot = HA_SLOT.to_string();
    let v = rig.user_session(HA_SLOT);
    keys::generate(
        &v,
        &KeySpec::Ec { curve: Curve::P256 },
        &KeyAttrs {
            label: "fw".into(),
            id: b"fw".to_vec(),
            token: true,
        },
    )
    .unwrap();

    let o = hsmc(&rig, data.path(), &["ha"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("HA group ha-test  serial {HA_SERIAL}")),
        "{text}"
    );
    assert!(
        text.contains(&ha_member_serial(2)) && text.contains("alive"),
        "{text}"
    );

    let o = hsmc(&rig, data.path(), &["--json", "ha", "drift"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(json(&o)["verdict"], "in_sync");

    // Deleted on member 2's own slot, outside any console.
    let m2 = rig.user_session(rig.members[1]);
    let h = m2
        .find_objects(
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_PUBLIC_KEY)
                .bytes(CKA_ID, b"fw"),
        )
        .unwrap()[0];
    m2.destroy_object(h).unwrap();
    let o = hsmc(
        &rig,
        data.path(),
        &["--json", "--slot", &slot, "ha", "drift"],
    );
    assert_eq!(o.status.code(), Some(3), "exit 3 when the members differ");
    let r = json(&o);
    assert_eq!(r["verdict"], "drift");
    assert_eq!(r["summary"], "drift on member 2");
    assert_eq!(r["differences"][0]["kind"], "missing");
    let o = hsmc(&rig, data.path(), &["ha", "drift"]);
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("drift on member 2") && text.contains("public key 'fw'"),
        "{text}"
    );
    assert!(text.contains("KCV = the first 3 bytes of the AES-ECB encryption of a zero block"));

    // The same group data in `hsmc stats` of the virtual slot.
    let o = hsmc(&rig, data.path(), &["--slot", &slot, "stats"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("HA group ha-test"));
    let o = hsmc(&rig, data.path(), &["--json", "--slot", &slot, "stats"]);
    assert_eq!(json(&o)["ha"]["members"][1]["serial"], ha_member_serial(2));

    // One audit record of the drift, across the three hsmc runs that saw it.
    let o = hsmc(&rig, data.path(), &["--json", "audit", "tail", "-n", "200"]);
    let recs = json(&o);
    let drift_records = recs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "ha.state")
        .count();
    assert_eq!(drift_records, 1, "{recs}");
}

#[test]
fn usage_lists_limited_keys_and_set_raises_a_limit() {
    let rig = HaRig::group(2, "", "");
    let data = tempfile::tempdir().unwrap();
    let m1 = rig.user_session(rig.members[0]);
    keys::generate(
        &m1,
        &KeySpec::Ec { curve: Curve::P256 },
        &KeyAttrs {
            label: "limited".into(),
            id: b"limited".to_vec(),
            token: true,
        },
    )
    .unwrap();
    let slot = rig.members[0].to_string();
    let o = hsmc(
        &rig,
        data.path(),
        &[
            "--slot",
            &slot,
            "usage",
            "set",
            "label:limited",
            "--limit",
            "5",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("limited: 5 of 5 uses left"));
    let o = hsmc(&rig, data.path(), &["--json", "--slot", &slot, "usage"]);
    let v = json(&o);
    assert_eq!(v[0]["label"], "limited");
    assert_eq!(
        (v[0]["limit"].as_u64(), v[0]["left"].as_u64()),
        (Some(5), Some(5))
    );
    let o = hsmc(
        &rig,
        data.path(),
        &[
            "--slot",
            &slot,
            "usage",
            "set",
            "label:limited",
            "--limit",
            "0",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "an invalid limit is a usage error"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 to 4294967295"));
}

#[test]
fn status_names_the_group_on_each_card_and_a_used_up_key_exits_1() {
    let rig = HaRig::group(2, "", "");
    let data = tempfile::tempdir().unwrap();
    let m1 = rig.user_session(rig.members[0]);
    keys::generate(
        &m1,
        &KeySpec::Ec { curve: Curve::P256 },
        &KeyAttrs {
            label: "limited".into(),
            id: b"limited".to_vec(),
            token: true,
        },
    )
    .unwrap();
    let slot = rig.members[0].to_string();
    let o = hsmc(&rig, data.path(), &["--slot", &slot, "status"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        text.contains("HA group ha-test, 2/2 members online"),
        "{text}"
    );
    assert!(
        text.contains("member 1 of HA group ha-test, 2/2 members online"),
        "{text}"
    );

    let o = hsmc(
        &rig,
        data.path(),
        &[
            "--slot",
            &slot,
            "usage",
            "set",
            "label:limited",
            "--limit",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The one use, outside any console.
    let h = m1
        .find_objects(
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
                .bytes(CKA_ID, b"limited"),
        )
        .unwrap()[0];
    m1.sign(&p11::Mechanism::new(CKM_ECDSA), h, &[7u8; 32])
        .unwrap();

    let o = hsmc(&rig, data.path(), &["--slot", &slot, "status"]);
    assert_eq!(o.status.code(), Some(1), "something needs attention");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        text.contains("CRITICAL  limited has used all 1 uses its limit allows."),
        "{text}"
    );
    let o = hsmc(&rig, data.path(), &["--json", "--slot", &slot, "status"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    let item = v["keys"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "usage_limit")
        .cloned()
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(item["severity"], "critical");
    assert_eq!(item["link"]["view"], "keys");
    let roles: Vec<&str> = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["ha"].as_array().unwrap())
        .map(|h| h["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.contains(&"group") && roles.contains(&"member"),
        "{roles:?}"
    );
}
