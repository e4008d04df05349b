//! Every class, category and date checked against a table written from the standards —
//! FIPS 203/204/205 for the categories, SP 800-57 Part 1 rev. 5 table 2 for classical
//! strengths, NIST IR 8547 ipd tables 2 and 4 and CNSA 2.0 (with its FAQ) for the dates —
//! not from the code. The rows are keys as the console lists them.

use hsm::keys::{Capabilities, ObjectSummary};
use hsmc_pqc::{assess, counts, Policy, QuantumClass, Status};
use time::macros::date;

fn key(key_type: &str, algorithm: &str, pset: Option<&str>, sign: bool) -> ObjectSummary {
    ObjectSummary {
        class: if key_type == "AES" {
            "SECRET_KEY"
        } else {
            "PRIVATE_KEY"
        }
        .into(),
        key_type: Some(key_type.into()),
        label: algorithm.into(),
        id_hex: hex(algorithm),
        algorithm: algorithm.into(),
        parameter_set: pset.map(String::from),
        capabilities: Capabilities {
            sign,
            decrypt: !sign,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

use QuantumClass::*;

/// (key type, listing's algorithm, parameter set, signs?) → (class, category, classical
/// bits, NIST IR 8547: deprecated after, disallowed after; CNSA 2.0: disallowed after).
#[allow(clippy::type_complexity)]
const TABLE: &[(
    &str,
    &str,
    Option<&str>,
    bool,
    QuantumClass,
    u8,
    Option<u32>,
    Option<&str>,
    Option<&str>,
    Option<&str>,
)] = &[
    (
        "RSA",
        "RSA-2048",
        None,
        true,
        QuantumVulnerable,
        0,
        Some(112),
        Some("2030-12-31"),
        Some("2035-12-31"),
        Some("2030-12-31"),
    ),
    (
        "RSA",
        "RSA-3072",
        None,
        true,
        QuantumVulnerable,
        0,
        Some(128),
        None,
        Some("2035-12-31"),
        Some("2030-12-31"),
    ),
    (
        "RSA",
        "RSA-4096",
        None,
        false,
        QuantumVulnerable,
        0,
        Some(128),
        None,
        Some("2035-12-31"),
        Some("2033-12-31"),
    ),
    (
        "EC",
        "ECDSA P-256",
        Some("P-256"),
        true,
        QuantumVulnerable,
        0,
        Some(128),
        None,
        Some("2035-12-31"),
        Some("2030-12-31"),
    ),
    (
        "EC",
        "ECDSA P-384",
        Some("P-384"),
        true,
        QuantumVulnerable,
        0,
        Some(192),
        None,
        Some("2035-12-31"),
        Some("2030-12-31"),
    ),
    (
        "EC_EDWARDS",
        "Ed25519",
        Some("Ed25519"),
        true,
        QuantumVulnerable,
        0,
        Some(128),
        None,
        Some("2035-12-31"),
        Some("2030-12-31"),
    ),
    (
        "ML_DSA",
        "ML-DSA-44",
        Some("ML-DSA-44"),
        true,
        PostQuantum,
        2,
        None,
        None,
        None,
        Some("2030-12-31"),
    ),
    (
        "ML_DSA",
        "ML-DSA-65",
        Some("ML-DSA-65"),
        true,
        PostQuantum,
        3,
        None,
        None,
        None,
        Some("2030-12-31"),
    ),
    (
        "ML_DSA",
        "ML-DSA-87",
        Some("ML-DSA-87"),
        true,
        PostQuantum,
        5,
        None,
        None,
        None,
        None,
    ),
    (
        "ML_KEM",
        "ML-KEM-512",
        Some("ML-KEM-512"),
        false,
        PostQuantum,
        1,
        None,
        None,
        None,
        Some("2033-12-31"),
    ),
    (
        "ML_KEM",
        "ML-KEM-768",
        Some("ML-KEM-768"),
        false,
        PostQuantum,
        3,
        None,
        None,
        None,
        Some("2033-12-31"),
    ),
    (
        "ML_KEM",
        "ML-KEM-1024",
        Some("ML-KEM-1024"),
        false,
        PostQuantum,
        5,
        None,
        None,
        None,
        None,
    ),
    (
        "SLH_DSA",
        "SLH-DSA-SHA2-128s",
        Some("SLH-DSA-SHA2-128s"),
        true,
        PostQuantum,
        1,
        None,
        None,
        None,
        Some("2030-12-31"),
    ),
    (
        "SLH_DSA",
        "SLH-DSA-SHAKE-192f",
        Some("SLH-DSA-SHAKE-192f"),
        true,
        PostQuantum,
        3,
        None,
        None,
        None,
        Some("2030-12-31"),
    ),
    (
        "SLH_DSA",
        "SLH-DSA-SHA2-256f",
        Some("SLH-DSA-SHA2-256f"),
        true,
        PostQuantum,
        5,
        None,
        None,
        None,
        Some("2030-12-31"),
    ),
    (
        "HSS",
        "HSS/LMS H5/W8+H5/W8",
        None,
        true,
        PostQuantum,
        5,
        None,
        None,
        None,
        None,
    ),
    (
        "AES",
        "AES-128",
        None,
        false,
        NotQuantumRelevant,
        1,
        Some(128),
        None,
        None,
        Some("2033-12-31"),
    ),
    (
        "AES",
        "AES-256",
        None,
        false,
        NotQuantumRelevant,
        5,
        Some(256),
        None,
        None,
        None,
    ),
];

#[test]
fn classes_categories_and_dates_follow_the_standards() {
    let nist = Policy::builtin("nist").unwrap();
    let cnsa = Policy::builtin("cnsa2").unwrap();
    let objects: Vec<ObjectSummary> = TABLE.iter().map(|r| key(r.0, r.1, r.2, r.3)).collect();
    let today = date!(2026 - 12 - 06);
    let under_nist = assess(&objects, &nist, today);
    let under_cnsa = assess(&objects, &cnsa, today);
    assert_eq!(under_nist.len(), TABLE.len());
    for (i, row) in TABLE.iter().enumerate() {
        let (n, c) = (&under_nist[i], &under_cnsa[i]);
        let what = row.1;
        assert_eq!(n.algorithm.class, row.4, "{what}: class");
        assert_eq!(n.algorithm.nist_category, row.5, "{what}: category");
        assert_eq!(n.algorithm.classical_bits, row.6, "{what}: classical bits");
        assert_eq!(
            n.verdict.deprecated_after.as_deref(),
            row.7,
            "{what}: NIST deprecated"
        );
        assert_eq!(
            n.verdict.disallowed_after.as_deref(),
            row.8,
            "{what}: NIST disallowed"
        );
        assert_eq!(
            c.verdict.disallowed_after.as_deref(),
            row.9,
            "{what}: CNSA disallowed"
        );
        // Nothing is past due in December 2026 under either policy.
        assert!(
            n.verdict.status < Status::Deprecated,
            "{what}: {:?}",
            n.verdict
        );
        // Whatever a policy dates has a successor to suggest; what it does not, none.
        assert_eq!(
            c.successor.is_some(),
            row.9.is_some(),
            "{what}: {:?}",
            c.successor
        );
    }
    let cn = counts(&under_nist);
    assert_eq!(
        (
            cn.quantum_vulnerable,
            cn.post_quantum,
            cn.not_quantum_relevant,
            cn.unknown
        ),
        (6, 10, 2, 0)
    );
}

#[test]
fn status_moves_with_the_date() {
    let nist = Policy::builtin("nist").unwrap();
    let rsa = [key("RSA", "RSA-2048", None, true)];
    let at = |d| assess(&rsa, &nist, d)[0].verdict.status;
    assert_eq!(at(date!(2026 - 12 - 06)), Status::Ok);
    assert_eq!(at(date!(2030 - 06 - 01)), Status::DueWithinAYear);
    assert_eq!(at(date!(2031 - 01 - 01)), Status::Deprecated);
    assert_eq!(at(date!(2036 - 01 - 01)), Status::PastDue);
    // RSA-1024 is below 112 bits: already disallowed.
    let weak = [key("RSA", "RSA-1024", None, true)];
    assert_eq!(
        assess(&weak, &nist, date!(2026 - 12 - 06))[0]
            .verdict
            .status,
        Status::PastDue
    );
}

#[test]
fn an_rsa_private_key_takes_its_size_from_its_public_half() {
    let nist = Policy::builtin("nist").unwrap();
    let mut private = key("RSA", "RSA", None, true);
    private.id_hex = "01".into();
    let mut public = key("RSA", "RSA-2048", None, true);
    public.class = "PUBLIC_KEY".into();
    public.id_hex = "01".into();
    let rows = assess(&[private, public], &nist, date!(2026 - 12 - 06));
    assert_eq!(rows[0].algorithm.name, "RSA-2048");
    assert_eq!(
        rows[0].verdict.disallowed_after.as_deref(),
        Some("2035-12-31")
    );
}

#[test]
fn an_unknown_key_type_is_listed_and_left_to_the_officer() {
    let nist = Policy::builtin("nist").unwrap();
    let odd = [key("VENDOR_0x80000123", "VENDOR_0x80000123", None, true)];
    let rows = assess(&odd, &nist, date!(2026 - 12 - 06));
    assert_eq!(rows.len(), 1, "never dropped");
    assert_eq!(rows[0].algorithm.class, QuantumClass::Unknown);
    assert_eq!(rows[0].verdict.status, Status::Unjudged);
    assert_eq!(counts(&rows).unknown, 1);
}

/// A key whose size the token did not answer (an unreadable CKA_MODULUS_BITS and no public
/// half, or EC parameters it would not give): listed, quantum-vulnerable, and left to the
/// officer rather than given the latest date — an RSA-1024 key is disallowed already.
#[test]
fn a_key_whose_size_cannot_be_read_is_left_to_the_officer() {
    let nist = Policy::builtin("nist").unwrap();
    let unread = [key("RSA", "RSA", None, true), key("EC", "EC", None, true)];
    let rows = assess(&unread, &nist, date!(2026 - 12 - 06));
    assert_eq!(rows.len(), 2, "never dropped");
    for r in &rows {
        assert_eq!(r.algorithm.class, QuantumClass::QuantumVulnerable, "{r:?}");
        assert_eq!(r.verdict.status, Status::Unjudged, "{r:?}");
        assert!(r.verdict.verdict.contains("check it by hand"), "{r:?}");
    }
}

#[test]
fn a_policy_file_is_refused_with_the_line_at_fault() {
    let bad_family = "name = \"x\"\n\n[[rule]]\nfamilies = [\"quantum-rsa\"]\nverdict = \"v\"\n";
    let e = Policy::parse(bad_family).unwrap_err().to_string();
    assert!(e.starts_with("line 4:"), "{e}");
    let bad_field = "name = \"x\"\n[[rule]]\nverdict = \"v\"\ncolour = \"red\"\n";
    let e = Policy::parse(bad_field).unwrap_err().to_string();
    assert!(e.starts_with("line 4:") && e.contains("colour"), "{e}");
    let bad_date =
        "name = \"x\"\n[[rule]]\nverdict = \"v\"\ndisallowed_after = 2030-12-31T10:00:00\n";
    let e = Policy::parse(bad_date).unwrap_err().to_string();
    assert!(e.contains("must be a date"), "{e}");
    let not_a_day = "name = \"x\"\n[[rule]]\nverdict = \"v\"\ndisallowed_after = \"31/12/2030\"\n";
    let e = Policy::parse(not_a_day).unwrap_err().to_string();
    assert!(e.starts_with("line 4:"), "{e}");
    // An algorithm the console never names (a typo) would match nothing: refused, named.
    for typo in ["RSA2048", "ML-DSA-99", "P-256"] {
        let text = format!(
            "name = \"x\"\n[[rule]]\nverdict = \"v\"\nalgorithms = [\"ML-DSA-87\", \"{typo}\"]\n"
        );
        let e = Policy::parse(&text).unwrap_err().to_string();
        assert!(
            e.starts_with("line 4: unknown algorithm") && e.contains(typo),
            "{e}"
        );
    }
    let known = "name = \"x\"\n[[rule]]\nverdict = \"v\"\nalgorithms = [\"RSA-2048\", \"ECDSA P-256\", \"Ed25519\", \"ML-KEM-1024\", \"SLH-DSA-SHA2-128s\", \"HSS/LMS\", \"aes-256\"]\n";
    assert!(Policy::parse(known).is_ok());
    let own = "name = \"Example\"\nsource = \"std 12\"\n[[rule]]\nalgorithms = [\"RSA-2048\"]\nverdict = \"gone by 2027\"\ndisallowed_after = 2026-12-31\n[[rule]]\nverdict = \"fine\"\n";
    let p = Policy::parse(own).unwrap();
    let rows = assess(
        &[key("RSA", "RSA-2048", None, true)],
        &p,
        date!(2027 - 01 - 02),
    );
    assert_eq!(rows[0].verdict.status, Status::PastDue);
}

/// The successor by purpose, as the issue states it: release signing → ML-DSA-65 (ML-DSA-87
/// under CNSA 2.0), CA keys → ML-DSA-87, key establishment → ML-KEM-768 (ML-KEM-1024 under
/// CNSA 2.0), AES → AES-256. What a key may do decides, not its family: a P-384 key that
/// only derives is a key-establishment key.
#[test]
fn successors_follow_what_the_key_does() {
    let mut agreement = key("EC", "ECDSA P-384", None, false);
    agreement.capabilities = Capabilities {
        derive: true,
        ..Default::default()
    };
    let mut ca = key("RSA", "RSA-3072", None, true);
    ca.label = "issuing-ca-2026".into();
    let keys = [
        key("RSA", "RSA-2048", None, true),
        agreement,
        ca,
        key("AES", "AES-128", None, false),
    ];
    let today = date!(2026 - 12 - 06);
    let preset = |policy: &str| -> Vec<(String, Option<String>)> {
        assess(&keys, &Policy::builtin(policy).unwrap(), today)
            .into_iter()
            .map(|a| (a.label, a.successor.map(|s| s.preset)))
            .collect()
    };
    let named = |v: [(&str, Option<&str>); 4]| -> Vec<(String, Option<String>)> {
        v.iter()
            .map(|(l, p)| (l.to_string(), p.map(String::from)))
            .collect()
    };
    assert_eq!(
        preset("nist"),
        named([
            ("RSA-2048", Some("ml-dsa-65")),
            ("ECDSA P-384", Some("ml-kem-768")),
            ("issuing-ca-2026", Some("ml-dsa-87")),
            // NIST IR 8547 dates no AES key: nothing to move to.
            ("AES-128", None),
        ])
    );
    assert_eq!(
        preset("cnsa2"),
        named([
            ("RSA-2048", Some("ml-dsa-87")),
            ("ECDSA P-384", Some("ml-kem-1024")),
            ("issuing-ca-2026", Some("ml-dsa-87")),
            ("AES-128", Some("aes-256")),
        ])
    );
}
