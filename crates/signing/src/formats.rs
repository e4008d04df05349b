//! The non-CMS formats: raw detached signatures (ECDSA as DER, as OpenSSL expects) with the
//! public key as PEM, a `SHA256SUMS` manifest of the batch signed the same way, and a JSON
//! bundle per artifact that carries everything a verifier needs.

use serde::{Deserialize, Serialize};

use crate::alg::SigAlg;
use crate::{Result, SignError};

pub const BUNDLE_FORMAT: &str = "hsm-console/signature-bundle/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleFile {
    pub name: String,
    pub size: u64,
    pub sha256: String,
    pub sha512: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleKey {
    pub label: String,
    pub id: String,
    pub fingerprint: String,
    /// SubjectPublicKeyInfo, PEM.
    pub public_key: String,
}

/// One artifact's signature and everything needed to check it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bundle {
    pub format: String,
    pub file: BundleFile,
    /// "ML-DSA-65", "HSS/LMS", "ECDSA P-256 SHA-256", "RSA-PSS SHA-256", "Ed25519".
    pub algorithm: String,
    pub scheme: SigAlg,
    /// RSA-PSS: hash SHA-256, MGF1-SHA-256, salt 32; ML-DSA: the context string (hex).
    pub parameters: serde_json::Value,
    /// What was signed: always the file's bytes (ECDSA and RSA-PSS through their hash).
    pub signed: String,
    pub key: BundleKey,
    /// Base64 (ECDSA: DER).
    pub signature: String,
    pub signed_at: String,
    pub console_version: String,
    pub token_serial: String,
    /// How the token was given the file (bundles of earlier versions do not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_path: Option<crate::whole::SignPath>,
    /// An RFC 3161 time-stamp token over the signature's bytes (base64 of the DER
    /// `ContentInfo`), when a time-stamp authority was asked (bundles without one do not
    /// carry the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_token: Option<String>,
}

impl Bundle {
    pub fn parse(text: &str) -> Result<Bundle> {
        let b: Bundle = serde_json::from_str(text).map_err(|e| {
            SignError::Format(hsm::text!(
                "signing.not_a_bundle",
                "not a signature bundle: {{error}}",
                error = e
            ))
        })?;
        if b.format != BUNDLE_FORMAT {
            return Err(SignError::Format(hsm::text!(
                "signing.unknown_bundle_format",
                "unknown bundle format '{{format}}'",
                format = b.format
            )));
        }
        Ok(b)
    }

    pub fn context(&self) -> Vec<u8> {
        self.parameters
            .get("context")
            .and_then(|c| c.as_str())
            .and_then(|h| hex::decode(h).ok())
            .unwrap_or_default()
    }

    pub fn parameters_for(alg: SigAlg, context: &[u8]) -> serde_json::Value {
        match alg {
            SigAlg::RsaPss => {
                serde_json::json!({ "hash": "SHA-256", "mgf": "MGF1-SHA-256", "salt_length": crate::alg::PSS_SALT })
            }
            SigAlg::MlDsa { .. } => {
                serde_json::json!({ "context": hex::encode(context), "pre_hash": false })
            }
            SigAlg::Ecdsa { .. } => {
                serde_json::json!({ "hash": hsm::wire::wire_name(&alg.digest()), "encoding": "DER" })
            }
            _ => serde_json::json!({}),
        }
    }
}

/// `SHA256SUMS` text (`sha256sum -c` reads it): one `<hex>  <name>` line per file.
pub fn manifest(entries: &[(String, String)]) -> String {
    let mut s = String::new();
    for (sha, name) in entries {
        s.push_str(sha);
        s.push_str("  ");
        s.push_str(name);
        s.push('\n');
    }
    s
}

pub fn parse_manifest(text: &str) -> Result<Vec<(String, String)>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (h, n) = l.split_once("  ").ok_or_else(|| {
                SignError::Format(hsm::text!(
                    "signing.not_a_manifest_line",
                    "not a SHA256SUMS line: {{line}}",
                    line = l
                ))
            })?;
            if h.len() != 64 || hex::decode(h).is_err() {
                return Err(SignError::Format(hsm::text!(
                    "signing.not_a_sha256_digest",
                    "not a SHA-256 digest: {{digest}}",
                    digest = h
                )));
            }
            Ok((h.to_string(), n.trim_start_matches('*').to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundle is a signed format others parse: its bytes come from serde names only,
    /// never from `Debug` output, so renaming a Rust variant must not change them.
    #[test]
    fn bundle_bytes_are_pinned() {
        let b = |scheme: SigAlg, context: &[u8]| Bundle {
            format: BUNDLE_FORMAT.into(),
            file: BundleFile {
                name: "app.tar.gz".into(),
                size: 3,
                sha256: "aa".into(),
                sha512: "bb".into(),
            },
            algorithm: scheme.name(),
            scheme,
            parameters: Bundle::parameters_for(scheme, context),
            signed: "file".into(),
            key: BundleKey {
                label: "k".into(),
                id: "01".into(),
                fingerprint: "SHA256:cc".into(),
                public_key: "PEM".into(),
            },
            signature: "c2ln".into(),
            signed_at: "2026-12-01T00:00:00Z".into(),
            console_version: "0.1.0".into(),
            token_serial: "7".into(),
            signing_path: None,
            timestamp_token: None,
        };
        let ecdsa = b(
            SigAlg::Ecdsa {
                curve: hsm::algo::Curve::P384,
            },
            &[],
        );
        assert_eq!(
            serde_json::to_string(&ecdsa).unwrap(),
            r#"{"format":"hsm-console/signature-bundle/v1","file":{"name":"app.tar.gz","size":3,"sha256":"aa","sha512":"bb"},"algorithm":"ECDSA P-384 SHA-384","scheme":{"scheme":"ecdsa","curve":"P384"},"parameters":{"encoding":"DER","hash":"SHA-384"},"signed":"file","key":{"label":"k","id":"01","fingerprint":"SHA256:cc","public_key":"PEM"},"signature":"c2ln","signed_at":"2026-12-01T00:00:00Z","console_version":"0.1.0","token_serial":"7"}"#
        );
        let ml_dsa = b(
            SigAlg::MlDsa {
                set: hsm::algo::MlDsaSet::P65,
            },
            b"ctx",
        );
        let v = serde_json::to_value(&ml_dsa).unwrap();
        assert_eq!(
            v["scheme"],
            serde_json::json!({"scheme": "ml-dsa", "set": "ML-DSA-65"})
        );
        assert_eq!(
            v["parameters"],
            serde_json::json!({"context": "637478", "pre_hash": false})
        );
        let pss = serde_json::to_value(b(SigAlg::RsaPss, &[])).unwrap();
        assert_eq!(
            pss["parameters"],
            serde_json::json!({"hash": "SHA-256", "mgf": "MGF1-SHA-256", "salt_length": 32})
        );
        assert_eq!(
            Bundle::parse(&serde_json::to_string(&ecdsa).unwrap()).unwrap(),
            ecdsa
        );
        let mut streamed = b(SigAlg::Hss, &[]);
        streamed.signing_path = Some(crate::whole::SignPath::MultiPart);
        let v = serde_json::to_value(&streamed).unwrap();
        assert_eq!(v["signing_path"], "multi-part");
        assert_eq!(
            Bundle::parse(&v.to_string()).unwrap().signing_path,
            Some(crate::whole::SignPath::MultiPart)
        );
        let mut stamped = b(SigAlg::Ed25519, &[]);
        stamped.timestamp_token = Some("MAA=".into());
        let v = serde_json::to_value(&stamped).unwrap();
        assert_eq!(v["timestamp_token"], "MAA=");
        assert_eq!(Bundle::parse(&v.to_string()).unwrap(), stamped);
    }

    #[test]
    fn manifest_round_trips_in_sha256sum_format() {
        let e = vec![
            ("a".repeat(64), "release.tar.gz".to_string()),
            ("b".repeat(64), "fw.bin".to_string()),
        ];
        let text = manifest(&e);
        assert_eq!(
            text.lines().next().unwrap(),
            format!("{}  release.tar.gz", "a".repeat(64))
        );
        assert_eq!(parse_manifest(&text).unwrap(), e);
        assert!(parse_manifest("xyz  file").is_err());
    }
}
