//! Policies: which algorithms are deprecated or disallowed, and from when. Two ship with
//! the console (`policies/nist-ir-8547.toml`, `policies/cnsa-2.0.toml`); an organisation
//! writes its own in the same shape — a list of rules, the first that matches an object
//! deciding its dates:
//!
//! ```toml
//! name = "Example Corp 2027"
//! source = "Security standard 12, section 4"
//!
//! [[rule]]
//! class = "quantum-vulnerable"   # or post-quantum, not-quantum-relevant, unknown
//! max_classical_bits = 112       # and/or min_classical_bits
//! families = ["rsa", "ecdsa"]    # rsa ecdsa eddsa ml-dsa ml-kem slh-dsa hss-lms aes generic-secret
//! algorithms = ["RSA-2048"]      # names as the console shows them ("HSS/LMS" for any)
//! purpose = "signing"            # or key-establishment: what the key may do
//! min_category = 3               # NIST category at least
//! verdict = "what the officer reads"
//! deprecated_after = 2028-12-31
//! disallowed_after = 2030-12-31
//! ```
//!
//! A file with an unknown field, class, family or purpose, or a date in another form, is
//! refused with the line at fault.

use serde::{Deserialize, Serialize};
use time::Date;

use crate::classify::{Algorithm, Family, QuantumClass};

/// What a key may do, for rules that depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    /// It signs (or verifies): releases, firmware, certificates.
    Signing,
    /// It decrypts, unwraps, derives or decapsulates.
    KeyEstablishment,
}

/// One rule of a policy (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    #[serde(default)]
    pub class: Option<QuantumClass>,
    #[serde(default)]
    pub families: Vec<Family>,
    #[serde(default)]
    pub algorithms: Vec<String>,
    #[serde(default)]
    pub purpose: Option<Purpose>,
    #[serde(default)]
    pub min_classical_bits: Option<u32>,
    #[serde(default)]
    pub max_classical_bits: Option<u32>,
    #[serde(default)]
    pub min_category: Option<u8>,
    pub verdict: String,
    #[serde(default)]
    pub deprecated_after: Option<toml::value::Datetime>,
    #[serde(default)]
    pub disallowed_after: Option<toml::value::Datetime>,
}

/// A policy as read from its file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    pub name: String,
    #[serde(default)]
    pub source: String,
    #[serde(rename = "rule")]
    pub rules: Vec<Rule>,
}

/// A policy, checked: its rules with their dates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub name: String,
    pub source: String,
    rules: Vec<(Rule, Option<Date>, Option<Date>)>,
}

/// Why a policy file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// Not TOML of the policy's shape: the line and what is wrong there.
    #[error("line {line}: {message}")]
    Invalid { line: usize, message: String },
    /// A date that is not a calendar date (`2030-12-31`).
    #[error("rule {rule}: {field} must be a date such as 2030-12-31, not {value}")]
    NotADate {
        rule: usize,
        field: &'static str,
        value: String,
    },
    #[error("a policy needs at least one [[rule]]")]
    NoRules,
    /// An algorithm the console never names, so the rule could never match it.
    #[error("line {line}: unknown algorithm \"{name}\"; name it as the console shows it: RSA-2048, ECDSA P-256, Ed25519, ML-DSA-65, ML-KEM-768, SLH-DSA-SHA2-128s, HSS/LMS, AES-256")]
    UnknownAlgorithm { line: usize, name: String },
}

/// What a policy says of one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(rename = "PqcVerdict")]
pub struct Verdict {
    pub verdict: String,
    /// `YYYY-MM-DD`: in use after this day, the algorithm is deprecated.
    pub deprecated_after: Option<String>,
    pub disallowed_after: Option<String>,
    pub status: Status,
}

/// Where an object stands on the day it is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
#[ts(rename = "PqcStatus")]
pub enum Status {
    /// Allowed with no date, or its date is more than a year away.
    Ok,
    /// A date (deprecation or disallowance) within a year.
    DueWithinAYear,
    /// Deprecated already (still allowed).
    Deprecated,
    /// Disallowed already: past due.
    PastDue,
    /// No rule of the policy matches (an unknown algorithm): check it by hand.
    Unjudged,
}

impl Policy {
    /// One of the policies that ship: `nist` (NIST IR 8547) or `cnsa2` (CNSA 2.0).
    pub fn builtin(name: &str) -> Option<Policy> {
        let text = match name {
            "nist" => include_str!("policies/nist-ir-8547.toml"),
            "cnsa2" => include_str!("policies/cnsa-2.0.toml"),
            _ => return None,
        };
        Some(Policy::parse(text).expect("the policies that ship are valid"))
    }

    /// A policy file's text, checked.
    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        let file: PolicyFile = toml::from_str(text).map_err(|e| PolicyError::Invalid {
            line: e
                .span()
                .map(|s| {
                    text.as_bytes()[..s.start.min(text.len())]
                        .iter()
                        .filter(|&&b| b == b'\n')
                        .count()
                        + 1
                })
                .unwrap_or(1),
            message: e.message().to_string(),
        })?;
        if file.rules.is_empty() {
            return Err(PolicyError::NoRules);
        }
        for r in &file.rules {
            if let Some(name) = r.algorithms.iter().find(|a| !known_algorithm(a)) {
                let quoted = format!("\"{name}\"");
                let line = text
                    .lines()
                    .position(|l| l.contains(&quoted))
                    .map_or(1, |i| i + 1);
                return Err(PolicyError::UnknownAlgorithm {
                    line,
                    name: name.clone(),
                });
            }
        }
        let mut rules = Vec::new();
        for (i, r) in file.rules.into_iter().enumerate() {
            let deprecated = date(i + 1, "deprecated_after", &r.deprecated_after)?;
            let disallowed = date(i + 1, "disallowed_after", &r.disallowed_after)?;
            rules.push((r, deprecated, disallowed));
        }
        Ok(Policy {
            name: file.name,
            source: file.source,
            rules,
        })
    }

    /// What the policy says of `alg` used for `purpose`, on `today`.
    pub fn judge(&self, alg: &Algorithm, purpose: Option<Purpose>, today: Date) -> Verdict {
        let Some((rule, deprecated, disallowed)) =
            self.rules.iter().find(|(r, _, _)| matches(r, alg, purpose))
        else {
            return Verdict {
                verdict: "no rule of this policy names it: check it by hand".into(),
                deprecated_after: None,
                disallowed_after: None,
                status: Status::Unjudged,
            };
        };
        let in_a_year = today.saturating_add(time::Duration::days(365));
        let status = match (deprecated, disallowed) {
            (_, Some(d)) if today > *d => Status::PastDue,
            (Some(d), _) if today > *d => Status::Deprecated,
            (d1, d2) if [d1, d2].iter().any(|d| d.is_some_and(|d| d < in_a_year)) => {
                Status::DueWithinAYear
            }
            _ => Status::Ok,
        };
        Verdict {
            verdict: rule.verdict.clone(),
            deprecated_after: deprecated.map(|d| d.to_string()),
            disallowed_after: disallowed.map(|d| d.to_string()),
            status,
        }
    }
}

fn date(
    rule: usize,
    field: &'static str,
    v: &Option<toml::value::Datetime>,
) -> Result<Option<Date>, PolicyError> {
    let Some(v) = v else { return Ok(None) };
    let not_a_date = || PolicyError::NotADate {
        rule,
        field,
        value: v.to_string(),
    };
    match (v.date, v.time, v.offset) {
        (Some(d), None, None) => {
            let month = time::Month::try_from(d.month).map_err(|_| not_a_date())?;
            Date::from_calendar_date(i32::from(d.year), month, d.day)
                .map(Some)
                .map_err(|_| not_a_date())
        }
        _ => Err(not_a_date()),
    }
}

/// A name the console gives an algorithm (see [`crate::classify::of_name`]; AES by its
/// length).
fn known_algorithm(name: &str) -> bool {
    let a = crate::classify::of_name(name);
    (a.class != QuantumClass::Unknown && a.name.eq_ignore_ascii_case(name))
        || ["AES-128", "AES-192", "AES-256"]
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name))
}

fn matches(r: &Rule, alg: &Algorithm, purpose: Option<Purpose>) -> bool {
    let bits = alg.classical_bits;
    // An algorithm the console cannot place is judged only by a rule that says so.
    if alg.class == QuantumClass::Unknown && r.class != Some(QuantumClass::Unknown) {
        return false;
    }
    r.class.is_none_or(|c| c == alg.class)
        && (r.families.is_empty() || r.families.contains(&alg.family))
        && (r.algorithms.is_empty()
            || r.algorithms
                .iter()
                .any(|a| a.eq_ignore_ascii_case(&alg.name)))
        && r.purpose.is_none_or(|p| Some(p) == purpose)
        && r.min_classical_bits
            .is_none_or(|m| bits.is_some_and(|b| b >= m))
        && r.max_classical_bits
            .is_none_or(|m| bits.is_some_and(|b| b <= m))
        && r.min_category.is_none_or(|m| alg.nist_category >= m)
}
