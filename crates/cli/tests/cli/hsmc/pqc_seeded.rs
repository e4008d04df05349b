//! `hsmc pqc` on tokens seeded with every algorithm the issue names: each key's class,
//! category and dates checked against a table written from the standards — FIPS 203/204/205
//! for the categories (SP 800-208 and RFC 9858 for LMS by hash length), NIST IR 8547 ipd
//! tables 2 and 4 (112-bit classical deprecated after 2030; every classical algorithm
//! disallowed after 2035), CNSA 2.0 (only ML-DSA-87, ML-KEM-1024, AES-256 and LMS; signing
//! exclusively CNSA 2.0 by 2030, the rest by 2033) — not from the code; an RSA-signed chain
//! judged link by link; the CBOM validated by CycloneDX's own library with a component per
//! key `pkcs11-tool` lists; and the same on lunasim (HSS) and an HA group's virtual slot.

use std::collections::HashMap;

use super::*;

/// (label, `keys gen -a`, class, NIST category, NIST IR 8547 deprecated / disallowed after,
/// CNSA 2.0 disallowed after).
type Expected = (
    &'static str,
    &'static str,
    &'static str,
    u8,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
);

const QV: &str = "quantum-vulnerable";
const PQ: &str = "post-quantum";
const SYM: &str = "not-quantum-relevant";
const Y2030: Option<&str> = Some("2030-12-31");
const Y2033: Option<&str> = Some("2033-12-31");
const Y2035: Option<&str> = Some("2035-12-31");

const KRYOPTIC_SEED: &[Expected] = &[
    ("s_rsa2048", "rsa-2048", QV, 0, Y2030, Y2035, Y2030),
    ("s_rsa3072", "rsa-3072", QV, 0, None, Y2035, Y2030),
    ("s_rsa4096", "rsa-4096", QV, 0, None, Y2035, Y2030),
    ("s_p256", "ec-p256", QV, 0, None, Y2035, Y2030),
    ("s_p384", "ec-p384", QV, 0, None, Y2035, Y2030),
    ("s_ed25519", "ed25519", QV, 0, None, Y2035, Y2030),
    ("s_mldsa44", "ml-dsa-44", PQ, 2, None, None, Y2030),
    ("s_mldsa65", "ml-dsa-65", PQ, 3, None, None, Y2030),
    ("s_mldsa87", "ml-dsa-87", PQ, 5, None, None, None),
    ("s_mlkem512", "ml-kem-512", PQ, 1, None, None, Y2033),
    ("s_mlkem768", "ml-kem-768", PQ, 3, None, None, Y2033),
    ("s_mlkem1024", "ml-kem-1024", PQ, 5, None, None, None),
    ("s_slhdsa", "slh-dsa-sha2-128s", PQ, 1, None, None, Y2030),
    ("s_aes128", "aes-128", SYM, 1, None, None, Y2033),
    ("s_aes256", "aes-256", SYM, 5, None, None, None),
];

/// The key's own row (not its public half): the secret key of an AES seed, else the private
/// key.
fn key_row(v: &Value, label: &str, alg: &str) -> Value {
    let class = if alg.starts_with("aes") {
        "SECRET_KEY"
    } else {
        "PRIVATE_KEY"
    };
    pqc_row(v, label, class)
}

/// `pqc --cbom` written and valid under CycloneDX's validator: how many components of each
/// asset type the tokens in it hold.
fn cbom_assets(h: &Hsmc, pin: Option<&str>, name: &str) -> HashMap<String, usize> {
    let cbom = h.data.path().join(name);
    h.json(pin, &["pqc", "--cbom", cbom.to_str().unwrap()]);
    let text = std::fs::read_to_string(&cbom).unwrap();
    assert_eq!(cyclonedx_verdict(&text), "valid");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut counts = HashMap::new();
    for device in doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "device")
    {
        for c in device["components"].as_array().unwrap() {
            let asset = c["cryptoProperties"]["assetType"].as_str().unwrap();
            *counts.entry(asset.to_string()).or_insert(0) += 1;
        }
    }
    counts
}

fn check_against(nist: &Value, cnsa: &Value, seed: &[Expected]) {
    for (label, alg, class, category, deprecated, disallowed, cnsa_disallowed) in seed {
        let n = key_row(nist, label, alg);
        assert_eq!(n["algorithm"]["class"], *class, "{label}: {n}");
        assert_eq!(n["algorithm"]["nist_category"], *category, "{label}: {n}");
        assert_eq!(n["deprecated_after"].as_str(), *deprecated, "{label}: {n}");
        assert_eq!(n["disallowed_after"].as_str(), *disallowed, "{label}: {n}");
        let c = key_row(cnsa, label, alg);
        assert_eq!(
            c["disallowed_after"].as_str(),
            *cnsa_disallowed,
            "{label} under CNSA 2.0: {c}"
        );
        // What a policy dates has a successor; what it does not, none.
        assert_eq!(
            c["successor"].is_object(),
            cnsa_disallowed.is_some(),
            "{label} under CNSA 2.0: {c}"
        );
    }
}

/// An RSA-3072 root and an ECDSA P-256 leaf it signed (sha256WithRSAEncryption), made by
/// OpenSSL and written to the token by pkcs11-tool.
fn write_rsa_chain(t: &TestToken, dir: &Path) {
    let sh = |script: &str| {
        let o = Command::new("sh")
            .arg("-ec")
            .arg(script)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    sh("openssl req -x509 -newkey rsa:3072 -nodes -keyout root.key -subj /CN=Seed-Root -days 3650 -sha256 -outform DER -out root.der");
    sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf.key -subj /CN=Seed-Leaf -out leaf.csr \
        && openssl x509 -req -in leaf.csr -CA root.der -CAform DER -CAkey root.key -days 365 -sha256 -outform DER -out leaf.der");
    for (file, label) in [("root.der", "s_root_ca"), ("leaf.der", "s_leaf")] {
        let o = testkit::tools::pkcs11_tool(
            &t.module_path,
            t.env(),
            &[
                "--token-label",
                testkit::TOKEN_LABEL,
                "--login",
                "--pin",
                testkit::USER_PIN,
                "--write-object",
                dir.join(file).to_str().unwrap(),
                "--type",
                "cert",
                "--label",
                label,
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

fn check_certificates(nist: &Value, cnsa: &Value) {
    let cert = |v: &Value, label: &str| pqc_row(v, label, "CERTIFICATE");
    // Each link of the RSA chain is quantum-vulnerable by its key and by its RSA signature.
    for label in ["s_root_ca", "s_leaf"] {
        let n = cert(nist, label);
        assert_eq!(n["algorithm"]["class"], QV, "{n}");
        assert_eq!(n["disallowed_after"], "2035-12-31", "{n}");
        assert_eq!(cert(cnsa, label)["disallowed_after"], "2030-12-31");
    }
    assert!(
        cert(nist, "s_leaf")["algorithm"]["name"]
            .as_str()
            .unwrap()
            .starts_with("ECDSA P-256 signed with"),
        "the leaf's own key and its issuer's signature"
    );
    // ML-DSA-87 signed by ML-DSA-87: in CNSA 2.0's suite, undated under both.
    let m = cert(cnsa, "s_mldsa87");
    assert_eq!(
        (
            m["algorithm"]["class"].as_str(),
            m["algorithm"]["nist_category"].as_u64()
        ),
        (Some(PQ), Some(5)),
        "{m}"
    );
    assert_eq!(m["disallowed_after"], Value::Null, "{m}");
}

#[test]
fn kryoptic_token_seeded_with_every_algorithm() {
    let t = TestToken::new(Backend::Kryoptic);
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    for (label, alg, ..) in KRYOPTIC_SEED {
        h.json(
            pin,
            &["keys", "gen", "-a", alg, "-l", label, "--persistent"],
        );
    }
    h.json(
        pin,
        &[
            "keys",
            "cert",
            "label:s_mldsa87",
            "--self-signed",
            "--subject",
            "CN=Seed ML-DSA",
        ],
    );
    write_rsa_chain(&t, h.data.path());
    let nist = h.json(pin, &["pqc"]);
    let cnsa = h.json(pin, &["pqc", "--policy", "cnsa2"]);
    check_against(&nist, &cnsa, KRYOPTIC_SEED);
    check_certificates(&nist, &cnsa);
    let keys_listed = the_table_holds_every_key_pkcs11_tool_lists(&t, &nist);
    let assets = cbom_assets(&h, pin, "seeded.cbom.json");
    assert_eq!(
        assets["related-crypto-material"], keys_listed,
        "a component per key pkcs11-tool lists"
    );
    assert_eq!(
        assets["certificate"], 3,
        "the chain's two and the ML-DSA one"
    );
}

/// lunasim's HSS keys (Luna 7.9's only stateful scheme): SHA-256/256 levels are category 5,
/// RFC 9858's SHA-256/192 category 3; both post-quantum and in CNSA 2.0's LMS.
#[test]
fn lunasim_hss_keys_are_post_quantum_by_their_hash_length() {
    let t = TestToken::new(Backend::LunaSim);
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    for (label, lms, lmots) in [
        ("s_hss_m32", "LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"),
        ("s_hss_m24", "LMS_SHA256_M24_H5", "LMOTS_SHA256_N24_W8"),
    ] {
        h.json(
            pin,
            &[
                "keys",
                "gen",
                "-a",
                "hss",
                "-l",
                label,
                "--persistent",
                "--hss-lms",
                lms,
                "--hss-lmots",
                lmots,
            ],
        );
    }
    let seed: &[Expected] = &[
        ("s_hss_m32", "hss", PQ, 5, None, None, None),
        ("s_hss_m24", "hss", PQ, 3, None, None, None),
    ];
    let nist = h.json(pin, &["pqc"]);
    let cnsa = h.json(pin, &["pqc", "--policy", "cnsa2"]);
    check_against(&nist, &cnsa, seed);
}

/// An HA group's virtual slot is judged like any partition, and `--all` takes every
/// partition the console has open, the virtual slot among them.
#[test]
fn an_ha_groups_virtual_slot_and_all_partitions() {
    let rig = testkit::HaRig::group(2, "", "");
    let h = Hsmc {
        data: tempfile::tempdir().unwrap(),
        env: rig.env().to_vec(),
        module: rig.module_path.display().to_string(),
    };
    let pin = Some(testkit::USER_PIN);
    let slot = testkit::HA_SLOT.to_string();
    h.json(
        pin,
        &[
            "--slot",
            &slot,
            "keys",
            "gen",
            "-a",
            "rsa-2048",
            "-l",
            "s_ha_rsa",
            "--persistent",
        ],
    );
    let one = h.json(pin, &["--slot", &slot, "pqc"]);
    assert_eq!(one["partitions"].as_array().unwrap().len(), 1, "{one}");
    assert_eq!(one["partitions"][0]["serial"], testkit::HA_SERIAL, "{one}");
    let rsa = pqc_row(&one, "s_ha_rsa", "PRIVATE_KEY");
    assert_eq!(
        (
            rsa["deprecated_after"].as_str(),
            rsa["disallowed_after"].as_str()
        ),
        (Y2030, Y2035),
        "{rsa}"
    );
    let all = h.json(pin, &["--slot", &slot, "pqc", "--all"]);
    let serials: Vec<&str> = all["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["serial"].as_str())
        .collect();
    assert!(serials.contains(&testkit::HA_SERIAL), "{serials:?}");
}

/// SoftHSM2 (PKCS#11 2.40, no post-quantum keys): its RSA, EC and AES keys judged as
/// elsewhere, and the CBOM valid with a component per key pkcs11-tool lists.
#[test]
fn softhsm_keys_and_cbom() {
    let t = TestToken::new(Backend::SoftHsm);
    let h = Hsmc::token(&t);
    let pin = Some(testkit::USER_PIN);
    let seed: &[Expected] = &[
        ("s_rsa2048", "rsa-2048", QV, 0, Y2030, Y2035, Y2030),
        ("s_p384", "ec-p384", QV, 0, None, Y2035, Y2030),
        ("s_aes256", "aes-256", SYM, 5, None, None, None),
    ];
    for (label, alg, ..) in seed {
        h.json(
            pin,
            &["keys", "gen", "-a", alg, "-l", label, "--persistent"],
        );
    }
    let nist = h.json(pin, &["pqc"]);
    let cnsa = h.json(pin, &["pqc", "--policy", "cnsa2"]);
    check_against(&nist, &cnsa, seed);
    let keys_listed = the_table_holds_every_key_pkcs11_tool_lists(&t, &nist);
    let assets = cbom_assets(&h, pin, "softhsm.cbom.json");
    assert_eq!(
        assets["related-crypto-material"], keys_listed,
        "a component per key pkcs11-tool lists"
    );
}
