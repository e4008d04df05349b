//! A partition's objects judged under a policy: each key's algorithm, what it is used for,
//! the policy's verdict and dates, and the suggested successor.

use hsm::keys::ObjectSummary;
use serde::Serialize;
use time::Date;

use crate::classify::{self, Algorithm, Family, QuantumClass};
use crate::policy::{Policy, Purpose, Status, Verdict};

/// One object, judged.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct Assessed {
    /// `PRIVATE_KEY`, `PUBLIC_KEY`, `SECRET_KEY`.
    pub object_class: String,
    pub label: String,
    pub id_hex: String,
    /// `uid:` reference (see `ObjectSummary::unique_id`).
    pub unique_id: Option<String>,
    pub algorithm: Algorithm,
    pub purpose: Option<Purpose>,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// What to move to, when the policy dates it or leaves it outside.
    pub successor: Option<Successor>,
    /// The key's `CKA_START_DATE` and `CKA_END_DATE` (`YYYY-MM-DD`), where set.
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    /// What the audit trail says of its use (filled by the caller that reads the trail).
    pub evidence: Evidence,
}

/// What the audit trail says of a key's use: the signatures it made (files, manifests,
/// SSH and OpenPGP signatures) and the certificates it issued.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Evidence {
    /// The trail records a use of the key.
    pub seen: bool,
    /// The last recorded use (RFC 3339).
    pub last_use: Option<String>,
    /// Signatures made in the last 30 and 90 days.
    pub uses_30_days: u64,
    pub uses_90_days: u64,
    /// The artifacts it signed last, newest first (at most five).
    pub recent_artifacts: Vec<String>,
}

/// The order a readiness table lists rows in: what needs doing first — unjudged (a person
/// must look), past due, deprecated, due within a year — and within each, the keys most
/// used lately, so an active release-signing key ranks above an unused test key.
pub fn rank(rows: &mut [Assessed]) {
    let urgency = |s: Status| match s {
        Status::Unjudged => 0,
        Status::PastDue => 1,
        Status::Deprecated => 2,
        Status::DueWithinAYear => 3,
        Status::Ok => 4,
    };
    rows.sort_by(|a, b| {
        urgency(a.verdict.status)
            .cmp(&urgency(b.verdict.status))
            .then(b.evidence.uses_90_days.cmp(&a.evidence.uses_90_days))
            .then(b.evidence.last_use.cmp(&a.evidence.last_use))
            .then(a.label.cmp(&b.label))
    });
}

/// Counts by quantum class and by status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Counts {
    pub quantum_vulnerable: u64,
    pub post_quantum: u64,
    pub not_quantum_relevant: u64,
    pub unknown: u64,
    pub past_due: u64,
    pub deprecated: u64,
    pub due_within_a_year: u64,
}

/// What a key may do, from its capabilities.
pub fn purpose_of(o: &ObjectSummary) -> Option<Purpose> {
    let c = &o.capabilities;
    if c.sign || c.verify {
        Some(Purpose::Signing)
    } else if c.decrypt
        || c.unwrap
        || c.derive
        || c.decapsulate
        || c.encrypt
        || c.wrap
        || c.encapsulate
    {
        Some(Purpose::KeyEstablishment)
    } else {
        None
    }
}

/// Every key in `objects` judged under `policy` on `today` (certificates, data objects and
/// the module's own mechanism objects are not keys and are left to other views).
pub fn assess(objects: &[ObjectSummary], policy: &Policy, today: Date) -> Vec<Assessed> {
    let keys = objects.iter().filter(|o| {
        matches!(
            o.class.as_str(),
            "PRIVATE_KEY" | "PUBLIC_KEY" | "SECRET_KEY"
        )
    });
    keys.map(|o| {
        let alg = classify::of_key(o, rsa_bits_of_pair(objects, o));
        let purpose = purpose_of(o);
        let verdict = match alg.family {
            // A size or curve the token did not answer: the policy's dates depend on it (an
            // RSA-1024 key is disallowed already), so a person must look.
            Family::Rsa | Family::Ecdsa if alg.classical_bits.is_none() => Verdict {
                verdict: "its size or curve could not be read from the token: check it by hand"
                    .into(),
                deprecated_after: None,
                disallowed_after: None,
                status: Status::Unjudged,
            },
            _ => policy.judge(&alg, purpose, today),
        };
        let successor = successor(&alg, purpose, &verdict, policy, &o.class, &o.label);
        Assessed {
            object_class: o.class.clone(),
            label: o.label.clone(),
            id_hex: o.id_hex.clone(),
            unique_id: o.unique_id.clone(),
            algorithm: alg,
            purpose,
            verdict,
            successor,
            start_date: o.start_date.clone(),
            end_date: o.end_date.clone(),
            evidence: Evidence::default(),
        }
    })
    .collect()
}

/// The modulus size of an RSA key's other half (PKCS#11 keeps `CKA_MODULUS_BITS` on the
/// public key), paired by `CKA_ID`.
fn rsa_bits_of_pair(objects: &[ObjectSummary], o: &ObjectSummary) -> Option<u32> {
    if o.key_type.as_deref() != Some("RSA") || o.id_hex.is_empty() {
        return None;
    }
    objects
        .iter()
        .filter(|p| p.id_hex == o.id_hex && p.key_type.as_deref() == Some("RSA"))
        .find_map(|p| p.algorithm.strip_prefix("RSA-")?.parse().ok())
}

/// What to move a key to: the key-generation preset (`hsmc keys gen -a PRESET`, the
/// generate dialog's preset) and why, as the readiness view and `hsmc pqc` say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Successor {
    /// `ml-dsa-65`, `ml-dsa-87`, `ml-kem-768`, `ml-kem-1024`, `aes-256` or `generic-secret`.
    pub preset: String,
    pub advice: Advice,
}

/// Why that successor (each has a catalog text `pqc.advice_<advice>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Advice {
    /// Release signing: ML-DSA-65 (ML-DSA-87 for the highest category; firmware: LMS/HSS).
    Signing,
    /// Any signing under CNSA 2.0: ML-DSA-87 (LMS/HSS for firmware).
    SigningCnsa,
    /// A CA's key: ML-DSA-87.
    Ca,
    /// A certificate: issue its successor for an ML-DSA key.
    Certificate,
    /// Key establishment: ML-KEM-768 (ML-KEM-1024 for the highest category).
    Kem,
    /// Key establishment under CNSA 2.0: ML-KEM-1024.
    KemCnsa,
    Aes,
    Secret,
}

impl Successor {
    fn new(preset: &str, advice: Advice) -> Successor {
        Successor {
            preset: preset.into(),
            advice,
        }
    }
}

/// Whether a label names a CA's key: "root", "ca" or "issuing" as a word of it.
fn is_ca_label(label: &str) -> bool {
    label
        .split(['_', '-', '.', ' '])
        .any(|w| ["root", "ca", "issuing"].contains(&w.to_ascii_lowercase().as_str()))
}

/// The successor by purpose, for what the policy dates or leaves outside: release signing
/// → ML-DSA-65 (ML-DSA-87 under CNSA 2.0), CA keys → ML-DSA-87, key establishment →
/// ML-KEM-768 (ML-KEM-1024 under CNSA 2.0), AES → AES-256. What the key may do decides;
/// a key that says nothing is taken by its algorithm (ECDSA, EdDSA, ML-DSA: signing).
fn successor(
    alg: &Algorithm,
    purpose: Option<Purpose>,
    v: &Verdict,
    policy: &Policy,
    object_class: &str,
    label: &str,
) -> Option<Successor> {
    if v.status == Status::Unjudged
        || (v.deprecated_after.is_none() && v.disallowed_after.is_none())
    {
        return None;
    }
    let cnsa = policy.name.contains("CNSA");
    let signing = match purpose {
        Some(p) => p == Purpose::Signing,
        None => matches!(
            alg.family,
            Family::MlDsa | Family::SlhDsa | Family::HssLms | Family::Eddsa | Family::Ecdsa
        ),
    };
    Some(match alg.class {
        QuantumClass::NotQuantumRelevant if alg.family == Family::Aes => {
            Successor::new("aes-256", Advice::Aes)
        }
        QuantumClass::NotQuantumRelevant => Successor::new("generic-secret", Advice::Secret),
        _ if object_class == "CERTIFICATE" => Successor::new(
            if cnsa { "ml-dsa-87" } else { "ml-dsa-65" },
            Advice::Certificate,
        ),
        _ if signing && is_ca_label(label) => Successor::new("ml-dsa-87", Advice::Ca),
        _ if signing && cnsa => Successor::new("ml-dsa-87", Advice::SigningCnsa),
        _ if signing => Successor::new("ml-dsa-65", Advice::Signing),
        _ if cnsa => Successor::new("ml-kem-1024", Advice::KemCnsa),
        _ => Successor::new("ml-kem-768", Advice::Kem),
    })
}

/// The counts of `rows`.
pub fn counts(rows: &[Assessed]) -> Counts {
    let mut c = Counts::default();
    for r in rows {
        match r.algorithm.class {
            QuantumClass::QuantumVulnerable => c.quantum_vulnerable += 1,
            QuantumClass::PostQuantum => c.post_quantum += 1,
            QuantumClass::NotQuantumRelevant => c.not_quantum_relevant += 1,
            QuantumClass::Unknown => c.unknown += 1,
        }
        match r.verdict.status {
            Status::PastDue => c.past_due += 1,
            Status::Deprecated => c.deprecated += 1,
            Status::DueWithinAYear => c.due_within_a_year += 1,
            Status::Ok | Status::Unjudged => {}
        }
    }
    c
}

/// A certificate on the token, as the readiness view needs it.
pub struct CertificateInput<'a> {
    pub label: &'a str,
    pub id_hex: &'a str,
    pub unique_id: Option<String>,
    /// Its public key's algorithm (`None` when the console cannot read the key).
    pub public_key_algorithm: Option<&'a str>,
    /// The algorithm its issuer signed it with.
    pub signature_algorithm: &'a str,
}

/// A certificate judged by its key and by its signature, whichever the policy dates
/// first (an unknown one is left to the officer). The issuers' certificates that are on
/// the token are judged as rows of their own.
pub fn certificate(c: &CertificateInput<'_>, policy: &Policy, today: Date) -> Assessed {
    let key = c
        .public_key_algorithm
        .map(classify::of_name)
        .unwrap_or_else(|| Algorithm::unknown("unknown key"));
    let signature = classify::of_name(c.signature_algorithm);
    let purpose = Some(Purpose::Signing);
    let judged: Vec<(Algorithm, Verdict)> = [key, signature]
        .into_iter()
        .map(|a| {
            let v = policy.judge(&a, purpose, today);
            (a, v)
        })
        .collect();
    // The worse of the two: unjudged first (a person must look), then past due, then the
    // earlier disallowance, deprecation.
    let rank = |v: &Verdict| {
        (
            v.status == Status::Unjudged,
            v.status,
            std::cmp::Reverse(v.disallowed_after.clone().unwrap_or_else(|| "9999".into())),
            std::cmp::Reverse(v.deprecated_after.clone().unwrap_or_else(|| "9999".into())),
        )
    };
    let (alg, verdict) = judged
        .into_iter()
        .max_by(|a, b| rank(&a.1).cmp(&rank(&b.1)))
        .expect("two algorithms");
    let successor = successor(&alg, purpose, &verdict, policy, "CERTIFICATE", c.label);
    Assessed {
        object_class: "CERTIFICATE".into(),
        label: c.label.to_string(),
        id_hex: c.id_hex.to_string(),
        unique_id: c.unique_id.clone(),
        algorithm: Algorithm {
            name: format!(
                "{} signed with {}",
                c.public_key_algorithm.unwrap_or("unknown key"),
                c.signature_algorithm
            ),
            ..alg
        },
        purpose,
        verdict,
        successor,
        start_date: None,
        end_date: None,
        evidence: Evidence::default(),
    }
}
