//! The built-in partition keeps the audit trail's keys in the built-in module's own audit
//! slot, so other tools read the partition: checked with pkcs11-tool (which objects are on
//! which token) and with the OpenSSL pkcs11 engine line run as `hsmc uri --test` prints it.
//! A data folder from before the audit slot is moved at the first login, and the trail —
//! checkpoints of the old key included — verifies with only the new key pinned.

use super::*;

const PIN: Option<&str> = Some(console::builtin::USER_PIN);
const ENGINE: &str = "OpenSSL 3 (pkcs11 engine)";

/// pkcs11-tool's object listing of the token `label`, over the data folder's built-in
/// configuration (another process than the console, another PKCS#11 client).
fn objects_on(h: &Hsmc, label: &str) -> String {
    let conf = h.data.path().join("builtin/lunasim.toml");
    let env = [("LUNASIM_CONF".to_string(), conf.display().to_string())];
    let o = testkit::tools::pkcs11_tool(
        &testkit::lunasim_module(),
        &env,
        &[
            "--token-label",
            label,
            "--login",
            "--pin",
            console::builtin::USER_PIN,
            "--list-objects",
        ],
    );
    assert!(o.status.success(), "pkcs11-tool on {label}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The actions of the trail, oldest first.
fn actions(h: &Hsmc) -> Vec<String> {
    let tail = h.json(PIN, &["audit", "tail", "-n", "500"]);
    let mut records: Vec<&Value> = tail
        .as_array()
        .or_else(|| tail["records"].as_array())
        .unwrap_or_else(|| panic!("records: {tail}"))
        .iter()
        .collect();
    records.sort_by_key(|r| r["seq"].as_i64().expect("each record's position"));
    records
        .iter()
        .map(|r| r["action"].as_str().unwrap().to_string())
        .collect()
}

fn assert_intact_and_pinned(h: &Hsmc) -> Value {
    let v = h.json(PIN, &["audit", "verify"]);
    assert_eq!(v["verdict"]["verdict"], "intact", "{v}");
    assert_eq!(v["verdict"]["key_pinned"], true, "{v}");
    v
}

#[test]
fn a_new_trail_keeps_its_keys_in_the_audit_slot_and_the_engine_reads_the_partition() {
    let h = Hsmc::builtin();
    h.json(
        PIN,
        &[
            "keys",
            "gen",
            "-a",
            "ec-p256",
            "-l",
            "release",
            "--persistent",
        ],
    );
    let slots = h.json(None, &["slots"]);
    assert_eq!(
        slots.as_array().unwrap().len(),
        1,
        "the audit slot is the console's own, not a partition: {slots}"
    );
    let partition = objects_on(&h, console::builtin::TOKEN_LABEL);
    let audit_slot = objects_on(&h, console::builtin::AUDIT_TOKEN_LABEL);
    assert!(
        !partition.contains("hsm-console audit"),
        "no trail object on the partition: {partition}"
    );
    assert!(partition.contains("release"), "{partition}");
    for object in [
        "hsm-console audit key log_",
        "hsm-console audit checkpoints log_",
        "audit anchor log_",
    ] {
        assert!(audit_slot.contains(object), "{object}: {audit_slot}");
    }
    assert_intact_and_pinned(&h);

    // The engine line carries no caveat on the built-in partition now, and works as printed.
    let u = h.json(PIN, &["uri", "label:release", "--commands"]);
    let engine = u["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["tool"] == ENGINE)
        .unwrap_or_else(|| panic!("the engine line: {u}"));
    assert!(engine["caveat"].is_null(), "{engine}");
    let o = h.run(PIN, &["uri", "label:release", "--test", ENGINE]);
    assert!(
        o.status.success(),
        "the engine line on the built-in partition: {}",
        text(&o)
    );
}

/// The built-in configuration of a data folder written before the audit slot: one
/// Kryoptic slot, the trail's keys on the partition.
fn write_old_builtin(h: &Hsmc) -> PathBuf {
    let dir = h.data.path().join("builtin");
    std::fs::create_dir_all(dir.join("store")).unwrap();
    std::fs::write(
        dir.join("kryoptic.conf"),
        format!(
            "[[slots]]\nslot = 1\ndbtype = \"sqlite\"\ndbargs = \"{}\"\n",
            dir.join("token.sql").display()
        ),
    )
    .unwrap();
    let conf = dir.join("lunasim.toml");
    std::fs::write(
        &conf,
        format!(
            "inner_module = \"{}\"\nstore_dir = \"{}\"\ncontrol_file = \"{}\"\n{}\n\n[inner_env]\nKRYOPTIC_CONF = \"{}\"\n",
            testkit::kryoptic_module().display(),
            dir.join("store").display(),
            dir.join("control.jsonl").display(),
            console::builtin::KEPT_MARKER,
            dir.join("kryoptic.conf").display()
        ),
    )
    .unwrap();
    conf
}

#[test]
fn an_old_data_folder_moves_the_trail_keys_at_the_first_login() {
    let h = Hsmc::builtin();
    let conf = write_old_builtin(&h);
    // As the console before the audit slot: the trail's keys on the partition.
    let old = |args: &[&str]| {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let o = h
            .cmd(&a)
            .env("LUNASIM_CONF", &conf)
            .env("HSMC_PIN", PIN.unwrap())
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    old(&[
        "keys",
        "gen",
        "-a",
        "ec-p256",
        "-l",
        "before",
        "--persistent",
    ]);
    old(&["audit", "verify"]);
    let before = old(&["audit", "checkpoints"]);
    let before = before
        .as_array()
        .or_else(|| before["checkpoints"].as_array())
        .unwrap()
        .clone();
    assert!(!before.is_empty(), "the old key signed checkpoints");
    let old_fp = before[0]["key_fingerprint"].clone();
    let partition = objects_on(&h, console::builtin::TOKEN_LABEL);
    assert!(
        partition.contains("hsm-console audit checkpoints log_"),
        "the old layout: {partition}"
    );

    // The console of today on the same folder: the first login moves the keys.
    assert_intact_and_pinned(&h);
    let partition = objects_on(&h, console::builtin::TOKEN_LABEL);
    assert!(!partition.contains("hsm-console audit"), "{partition}");
    assert!(
        partition.contains("before"),
        "the officer's key stays: {partition}"
    );
    let audit_slot = objects_on(&h, console::builtin::AUDIT_TOKEN_LABEL);
    assert!(
        audit_slot.contains("hsm-console audit key log_"),
        "{audit_slot}"
    );
    let a = actions(&h);
    let at = |action: &str| {
        a.iter()
            .position(|x| x == action)
            .unwrap_or_else(|| panic!("{action} in {a:?}"))
    };
    assert!(
        at("audit.key_move") < at("audit.checkpoint_key_move")
            && at("audit.checkpoint_key_move") < at("audit.old_keys_destroy"),
        "each step recorded before it is taken: {a:?}"
    );

    // Checkpoints of both keys, every one counted as the HSM's (the old one through the
    // recorded move); the trail verifies again, and the move is not repeated.
    let cps = h.json(PIN, &["audit", "checkpoints"]);
    let cps = cps
        .as_array()
        .or_else(|| cps["checkpoints"].as_array())
        .unwrap()
        .clone();
    assert!(
        cps.iter().any(|c| c["key_fingerprint"] == old_fp),
        "{cps:?}"
    );
    assert!(
        cps.iter().any(|c| c["key_fingerprint"] != old_fp),
        "{cps:?}"
    );
    for c in &cps {
        assert_eq!(c["key_is_hsm_key"], true, "{c}");
        assert_eq!(c["signature_valid"], true, "{c}");
    }
    assert_intact_and_pinned(&h);
    let moves = actions(&h)
        .iter()
        .filter(|x| x.starts_with("audit.") && x.contains("move"))
        .count();
    assert_eq!(moves, 2, "one move of each kind");

    // The engine now reads the partition that used to hold the trail's ML-DSA key.
    let o = h.run(PIN, &["uri", "label:before", "--test", ENGINE]);
    assert!(o.status.success(), "{}", text(&o));
}
