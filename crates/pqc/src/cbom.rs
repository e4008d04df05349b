//! A CycloneDX 1.6 cryptographic bill of materials (CBOM) of what a token holds: the token
//! as a `device` component, holding one `cryptographic-asset` component per key
//! (`related-crypto-material`) and per X.509 certificate (`certificate`: subject, issuer,
//! validity, the signature algorithm and the certified key where it is on the token), each
//! pointing at one component per algorithm in use
//! (`algorithm`, with its primitive, parameter set or curve, the functions the keys allow,
//! the classical and NIST quantum security levels, and `executionEnvironment: hardware`).
//!
//! Written here rather than with the `cyclonedx-bom` crate: its 0.8 line models the 1.3–1.5
//! specifications, which have no `cryptoProperties`. The output is deterministic — the
//! same token gives the same bytes apart from the BOM's `serialNumber` and
//! `metadata.timestamp` — so two exports can be diffed.

use std::collections::BTreeMap;

use hsm::keys::ObjectSummary;
use serde_json::{json, Value};

use crate::assess::Assessed;
use crate::classify::{Family, QuantumClass};
use crate::policy::Purpose;

/// The token that holds the keys.
#[derive(Debug, Clone)]
pub struct Holder {
    pub serial: String,
    pub label: String,
    pub manufacturer: String,
    pub model: String,
    pub firmware: String,
}

/// One token's keys (the listing's row and its assessment, side by side) and X.509
/// certificates.
pub struct TokenKeys<'a> {
    pub holder: Holder,
    pub keys: Vec<(&'a ObjectSummary, &'a Assessed)>,
    pub certificates: Vec<CertificateEntry>,
}

/// A certificate on the token, as the CBOM describes it.
#[derive(Debug, Clone)]
pub struct CertificateEntry {
    pub label: String,
    pub id_hex: String,
    pub subject: String,
    pub issuer: String,
    /// RFC 3339.
    pub not_before: String,
    pub not_after: String,
    /// The algorithm its issuer signed it with (as `signing::objects` names it).
    pub signature_algorithm: String,
    pub sha256_fingerprint: String,
}

/// The CBOM of `tokens`; `serial_number` is the BOM's `urn:uuid:…`, `timestamp` RFC 3339.
pub fn document(
    tokens: &[TokenKeys<'_>],
    serial_number: &str,
    timestamp: &str,
    tool_version: &str,
) -> Value {
    let mut algorithms: BTreeMap<String, AlgorithmUse> = BTreeMap::new();
    let mut devices = Vec::new();
    for t in tokens {
        let mut keys: Vec<Value> = t
            .keys
            .iter()
            .map(|(o, a)| {
                let r = algorithm_ref(a);
                algorithms
                    .entry(r.clone())
                    .or_insert_with(|| AlgorithmUse::new(a))
                    .add(o, a);
                key_component(&t.holder, o, a, &r)
            })
            .collect();
        for c in &t.certificates {
            let alg = crate::classify::of_name(&c.signature_algorithm);
            let r = format!("algorithm:{}", alg.name);
            algorithms
                .entry(r.clone())
                .or_insert_with(|| AlgorithmUse::of(&alg))
                .signed_certificate();
            // The certified key, when its public half is on the token (same CKA_ID).
            let key_ref = t
                .keys
                .iter()
                .find(|(o, _)| {
                    o.class == "PUBLIC_KEY" && !c.id_hex.is_empty() && o.id_hex == c.id_hex
                })
                .map(|(o, _)| {
                    let id = o
                        .unique_id
                        .clone()
                        .unwrap_or_else(|| format!("{}:{}", o.class, o.id_hex));
                    format!("key:{}:{}", t.holder.serial, id)
                });
            keys.push(certificate_component(&t.holder, c, &r, key_ref));
        }
        keys.sort_by(|a, b| a["bom-ref"].as_str().cmp(&b["bom-ref"].as_str()));
        // A token without unique IDs may hold two keys of one class and ID: each keeps a
        // reference of its own.
        let mut seen: BTreeMap<String, u32> = BTreeMap::new();
        for k in &mut keys {
            let r = k["bom-ref"].as_str().unwrap_or_default().to_string();
            let n = seen.entry(r.clone()).or_insert(0);
            *n += 1;
            if *n > 1 {
                k["bom-ref"] = json!(format!("{r}#{n}"));
            }
        }
        devices.push(json!({
            "type": "device",
            "bom-ref": format!("token:{}", t.holder.serial),
            "name": t.holder.label,
            "version": t.holder.firmware,
            "manufacturer": { "name": t.holder.manufacturer },
            "description": format!("PKCS#11 token {} (model {}, serial {})", t.holder.label, t.holder.model, t.holder.serial),
            "properties": [
                { "name": "pkcs11:serial", "value": t.holder.serial },
                { "name": "pkcs11:model", "value": t.holder.model },
            ],
            "components": keys,
        }));
    }
    let mut components: Vec<Value> = algorithms
        .into_iter()
        .map(|(r, u)| u.component(&r))
        .collect();
    components.extend(devices);
    json!({
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "serialNumber": serial_number,
        "version": 1,
        "metadata": {
            "timestamp": timestamp,
            "tools": { "components": [ { "type": "application", "name": "hsm-console", "version": tool_version } ] },
        },
        "components": components,
    })
}

fn algorithm_ref(a: &Assessed) -> String {
    format!("algorithm:{}", a.algorithm.name)
}

/// An algorithm and what the keys that use it may do.
struct AlgorithmUse {
    name: String,
    family: Family,
    class: QuantumClass,
    classical_bits: Option<u32>,
    category: u8,
    functions: Vec<&'static str>,
    signs: bool,
}

impl AlgorithmUse {
    fn new(a: &Assessed) -> AlgorithmUse {
        AlgorithmUse::of(&a.algorithm)
    }

    fn of(a: &crate::classify::Algorithm) -> AlgorithmUse {
        AlgorithmUse {
            name: a.name.clone(),
            family: a.family,
            class: a.class,
            classical_bits: a.classical_bits,
            category: a.nist_category,
            functions: Vec::new(),
            signs: false,
        }
    }

    /// A certificate on the token was signed with it.
    fn signed_certificate(&mut self) {
        for f in ["sign", "verify"] {
            if !self.functions.contains(&f) {
                self.functions.push(f);
            }
        }
        self.signs = true;
    }

    fn add(&mut self, o: &ObjectSummary, a: &Assessed) {
        let c = &o.capabilities;
        for (on, f) in [
            (c.sign, "sign"),
            (c.verify, "verify"),
            (c.encrypt || c.wrap, "encrypt"),
            (c.decrypt || c.unwrap, "decrypt"),
            (c.derive, "keyderive"),
            (c.encapsulate, "encapsulate"),
            (c.decapsulate, "decapsulate"),
        ] {
            if on && !self.functions.contains(&f) {
                self.functions.push(f);
            }
        }
        self.signs |= a.purpose == Some(Purpose::Signing);
    }

    fn primitive(&self) -> &'static str {
        match self.family {
            Family::MlDsa | Family::SlhDsa | Family::HssLms | Family::Ecdsa | Family::Eddsa => {
                "signature"
            }
            Family::MlKem => "kem",
            Family::Rsa if self.signs => "signature",
            Family::Rsa => "pke",
            Family::Aes => "block-cipher",
            Family::GenericSecret => "mac",
            Family::Unknown => "unknown",
        }
    }

    /// FIPS 203/204/205 name their sets by a number (ML-DSA-65) or a suffix
    /// (SLH-DSA-SHA2-128s); RSA and AES by their size. Curves go in `curve`.
    fn parameter_set(&self) -> Option<String> {
        match self.family {
            Family::MlDsa | Family::MlKem | Family::Rsa | Family::Aes => {
                self.name.rsplit('-').next().map(String::from)
            }
            Family::SlhDsa => self.name.strip_prefix("SLH-DSA-").map(String::from),
            _ => None,
        }
    }

    fn curve(&self) -> Option<String> {
        match self.family {
            Family::Ecdsa => self.name.strip_prefix("ECDSA ").map(String::from),
            Family::Eddsa => Some(self.name.clone()),
            _ => None,
        }
    }

    fn component(&self, bom_ref: &str) -> Value {
        let mut props = serde_json::Map::new();
        props.insert("primitive".into(), json!(self.primitive()));
        if let Some(p) = self.parameter_set() {
            props.insert("parameterSetIdentifier".into(), json!(p));
        }
        if let Some(c) = self.curve() {
            props.insert("curve".into(), json!(c));
        }
        props.insert("executionEnvironment".into(), json!("hardware"));
        let mut functions = self.functions.clone();
        functions.sort_unstable();
        if functions.is_empty() {
            functions.push("unknown");
        }
        props.insert("cryptoFunctions".into(), json!(functions));
        if let Some(b) = self.classical_bits {
            props.insert("classicalSecurityLevel".into(), json!(b));
        }
        props.insert("nistQuantumSecurityLevel".into(), json!(self.category));
        let class = serde_json::to_value(self.class).unwrap_or(Value::Null);
        json!({
            "type": "cryptographic-asset",
            "bom-ref": bom_ref,
            "name": self.name,
            "cryptoProperties": { "assetType": "algorithm", "algorithmProperties": props },
            "properties": [ { "name": "hsm-console:quantum-class", "value": class } ],
        })
    }
}

fn certificate_component(
    holder: &Holder,
    c: &CertificateEntry,
    signature_algorithm: &str,
    subject_key: Option<String>,
) -> Value {
    let mut props = serde_json::Map::new();
    props.insert("subjectName".into(), json!(c.subject));
    props.insert("issuerName".into(), json!(c.issuer));
    props.insert("notValidBefore".into(), json!(c.not_before));
    props.insert("notValidAfter".into(), json!(c.not_after));
    props.insert("signatureAlgorithmRef".into(), json!(signature_algorithm));
    if let Some(k) = subject_key {
        props.insert("subjectPublicKeyRef".into(), json!(k));
    }
    props.insert("certificateFormat".into(), json!("X.509"));
    json!({
        "type": "cryptographic-asset",
        "bom-ref": format!("certificate:{}:{}", holder.serial, c.sha256_fingerprint),
        "name": if c.label.is_empty() { c.subject.clone() } else { c.label.clone() },
        "cryptoProperties": { "assetType": "certificate", "certificateProperties": props },
        "properties": [ { "name": "pkcs11:id", "value": c.id_hex } ],
    })
}

fn key_component(holder: &Holder, o: &ObjectSummary, a: &Assessed, algorithm: &str) -> Value {
    let kind = match o.class.as_str() {
        "PRIVATE_KEY" => "private-key",
        "PUBLIC_KEY" => "public-key",
        _ => "secret-key",
    };
    let id = o
        .unique_id
        .clone()
        .unwrap_or_else(|| format!("{}:{}", o.class, o.id_hex));
    let mut props = serde_json::Map::new();
    props.insert("type".into(), json!(kind));
    props.insert("id".into(), json!(id));
    props.insert("state".into(), json!("active"));
    props.insert("algorithmRef".into(), json!(algorithm));
    if let Some(b) = key_size(a) {
        props.insert("size".into(), json!(b));
    }
    // The period PKCS#11 says the key is for (CKA_START_DATE, CKA_END_DATE), as CycloneDX's
    // date-times (the start of the day, UTC).
    if let Some(d) = &o.start_date {
        props.insert("activationDate".into(), json!(format!("{d}T00:00:00Z")));
    }
    if let Some(d) = &o.end_date {
        props.insert("expirationDate".into(), json!(format!("{d}T00:00:00Z")));
    }
    if kind != "public-key" && o.sensitive == Some(true) {
        props.insert(
            "securedBy".into(),
            json!({ "mechanism": format!("PKCS#11 token {} (sensitive{})", holder.serial,
                if o.extractable == Some(false) { ", not extractable" } else { "" }) }),
        );
    }
    let mut properties = vec![
        json!({ "name": "pkcs11:class", "value": o.class }),
        json!({ "name": "pkcs11:id", "value": o.id_hex }),
        json!({ "name": "hsm-console:status", "value": serde_json::to_value(a.verdict.status).unwrap_or(Value::Null) }),
    ];
    if let Some(d) = &a.verdict.disallowed_after {
        properties.push(json!({ "name": "hsm-console:disallowed-after", "value": d }));
    }
    json!({
        "type": "cryptographic-asset",
        "bom-ref": format!("key:{}:{}", holder.serial, id),
        "name": if o.label.is_empty() { id.clone() } else { o.label.clone() },
        "cryptoProperties": { "assetType": "related-crypto-material", "relatedCryptoMaterialProperties": props },
        "properties": properties,
    })
}

/// The key's size in bits where the algorithm has one (RSA modulus, AES and secret
/// length, EC field size).
fn key_size(a: &Assessed) -> Option<u32> {
    let name = &a.algorithm.name;
    match a.algorithm.family {
        Family::Rsa | Family::Aes => name.rsplit('-').next()?.parse().ok(),
        Family::GenericSecret => name
            .split(|c: char| !c.is_ascii_digit())
            .find_map(|d| d.parse().ok()),
        Family::Ecdsa => match name.as_str() {
            "ECDSA P-256" | "ECDSA secp256k1" => Some(256),
            "ECDSA P-384" => Some(384),
            "ECDSA P-521" => Some(521),
            _ => None,
        },
        Family::Eddsa => Some(255),
        _ => None,
    }
}
