//! Files an officer imports onto a token, parsed and checked before anything reaches it:
//! X.509 certificates (PEM, DER, a PEM chain, a PKCS#7 `.p7b`) and public keys (SPKI PEM or
//! DER). Private keys are refused in any form: the console never imports plaintext private
//! keys. Also what the console shows of a certificate (subject, issuer, validity, key usage,
//! fingerprints) and the chain it builds to among others.

use der::asn1::{ObjectIdentifier, OctetString};
use der::{Decode, Encode, Sequence};
use serde::Serialize;
use sha2::{Digest, Sha256};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use ts_rs::TS;
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage};
use x509_cert::Certificate;

use hsm::pubkey::PublicKey;

use crate::{Result, SignError};

/// One thing found in an import file.
#[derive(Debug, Clone)]
pub enum ImportItem {
    Certificate(Vec<u8>),
    PublicKey(PublicKey),
}

/// `FILE: WHY`, with the reason nested so it is translated too.
fn bad(file: &str, why: hsm::Text) -> SignError {
    SignError::Format(
        hsm::text!(
            "signing.import.problem",
            "{{file}}: {{why}}",
            file = file,
            why = why.text
        )
        .nest("why", &why),
    )
}

/// A PKCS#8 `PrivateKeyInfo` (only to recognise one and refuse it).
#[derive(Sequence)]
struct PrivateKeyInfoShape {
    version: u8,
    algorithm: AlgorithmIdentifierOwned,
    private_key: OctetString,
}

const OID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");

/// The certificates and public keys in `bytes` (the file's content; `file` names it in
/// errors). PEM may hold several blocks; certificates keep their order.
pub fn parse_import(bytes: &[u8], file: &str) -> Result<Vec<ImportItem>> {
    if bytes.is_empty() {
        return Err(bad(
            file,
            hsm::text!("signing.import.empty", "the file is empty"),
        ));
    }
    let text = std::str::from_utf8(bytes).ok();
    let items = match text.filter(|t| t.contains("-----BEGIN ")) {
        Some(t) => parse_pem(t, file)?,
        None => parse_der(bytes, file)?,
    };
    if items.is_empty() {
        return Err(bad(
            file,
            hsm::text!(
                "signing.import.nothing",
                "holds no certificate or public key"
            ),
        ));
    }
    Ok(items)
}

fn parse_pem(text: &str, file: &str) -> Result<Vec<ImportItem>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let label_end = after.find("-----").ok_or_else(|| {
            bad(
                file,
                hsm::text!(
                    "signing.import.pem_header_open",
                    "a PEM header is not closed"
                ),
            )
        })?;
        let label = &after[..label_end];
        let end_marker = format!("-----END {label}-----");
        let body_end = after.find(&end_marker).ok_or_else(|| {
            bad(
                file,
                hsm::text!(
                    "signing.import.pem_no_end",
                    "the PEM block {{label}} has no END line",
                    label = label
                ),
            )
        })?;
        let block = &rest[start..start + 11 + body_end + end_marker.len()];
        rest = &after[body_end + end_marker.len()..];
        if label.contains("PRIVATE KEY") {
            return Err(private_key_refused(file));
        }
        let (_, der_bytes) = der::pem::decode_vec(block.as_bytes()).map_err(|e| {
            bad(
                file,
                hsm::text!(
                    "signing.import.pem_damaged",
                    "the PEM block {{label}} is damaged: {{error}}",
                    label = label,
                    error = e
                ),
            )
        })?;
        match label {
            "CERTIFICATE" | "X509 CERTIFICATE" | "TRUSTED CERTIFICATE" => {
                check_certificate(&der_bytes, file)?;
                out.push(ImportItem::Certificate(der_bytes));
            }
            "PUBLIC KEY" => out.push(ImportItem::PublicKey(public_key(&der_bytes, file)?)),
            "PKCS7" | "CMS" => out.extend(p7_certificates(&der_bytes, file)?),
            other => {
                return Err(bad(
                    file,
                    hsm::text!(
                        "signing.import.pem_unknown_block",
                        "a PEM block {{label}} is neither a certificate nor a public key",
                        label = other
                    ),
                ))
            }
        }
    }
    Ok(out)
}

fn parse_der(bytes: &[u8], file: &str) -> Result<Vec<ImportItem>> {
    if Certificate::from_der(bytes).is_ok() {
        return Ok(vec![ImportItem::Certificate(bytes.to_vec())]);
    }
    if SubjectPublicKeyInfoOwned::from_der(bytes).is_ok() {
        return Ok(vec![ImportItem::PublicKey(public_key(bytes, file)?)]);
    }
    if PrivateKeyInfoShape::from_der(bytes).is_ok() {
        return Err(private_key_refused(file));
    }
    if let Ok(items) = p7_certificates(bytes, file) {
        return Ok(items);
    }
    Err(bad(
        file,
        hsm::text!(
            "signing.import.unrecognised",
            "is not a certificate (PEM, DER or PKCS#7) or a public key (SPKI PEM or DER)"
        ),
    ))
}

fn private_key_refused(file: &str) -> SignError {
    bad(
        file,
        hsm::text!("signing.import.private_key", "holds a private key; the console never imports plaintext private keys (generate the key on the token, or unwrap a wrapped one)"),
    )
}

fn check_certificate(der_bytes: &[u8], file: &str) -> Result<Certificate> {
    Certificate::from_der(der_bytes).map_err(|e| {
        bad(
            file,
            hsm::text!(
                "signing.import.not_x509",
                "is not a valid X.509 certificate: {{error}}",
                error = e
            ),
        )
    })
}

fn public_key(der_bytes: &[u8], file: &str) -> Result<PublicKey> {
    PublicKey::from_spki_der(der_bytes).map_err(|e| {
        bad(
            file,
            hsm::text!("signing.public_key_unusable", "{{error}}", error = e),
        )
    })
}

fn p7_certificates(der_bytes: &[u8], file: &str) -> Result<Vec<ImportItem>> {
    let ci = cms::content_info::ContentInfo::from_der(der_bytes).map_err(|e| {
        bad(
            file,
            hsm::text!(
                "signing.import.not_pkcs7",
                "is not PKCS#7: {{error}}",
                error = e
            ),
        )
    })?;
    if ci.content_type != OID_SIGNED_DATA {
        return Err(bad(
            file,
            hsm::text!(
                "signing.import.pkcs7_not_signed_data",
                "is PKCS#7 but not SignedData"
            ),
        ));
    }
    let damaged = |e: der::Error| {
        bad(
            file,
            hsm::text!(
                "signing.import.pkcs7_damaged",
                "its PKCS#7 SignedData is damaged: {{error}}",
                error = e
            ),
        )
    };
    let _: cms::signed_data::SignedData = ci.content.decode_as().map_err(damaged)?;
    let mut out = Vec::new();
    for c in signed_data_certificates(&ci.content.to_der().map_err(damaged)?).map_err(damaged)? {
        check_certificate(&c, file)?;
        out.push(ImportItem::Certificate(c));
    }
    if out.is_empty() {
        return Err(bad(
            file,
            hsm::text!(
                "signing.import.pkcs7_no_certificates",
                "is PKCS#7 without certificates"
            ),
        ));
    }
    Ok(out)
}

/// The certificates of a SignedData (`certificates [0] IMPLICIT CertificateSet`, its
/// `Certificate` choices) byte for byte and in the file's order. Decoded as a SET OF they
/// would come out sorted by their encoding (a leaf-first chain out of order), and encoded
/// again a certificate not in strict DER (a default version written out, say) would
/// change — and with it the bytes its signature covers.
fn signed_data_certificates(signed_data: &[u8]) -> der::Result<Vec<Vec<u8>>> {
    use der::asn1::AnyRef;
    use der::{Reader, SliceReader, Tag, TagNumber, Tagged};
    let sd = AnyRef::from_der(signed_data)?;
    let mut r = SliceReader::new(sd.value())?;
    // version, digestAlgorithms, encapContentInfo
    for _ in 0..3 {
        AnyRef::decode(&mut r)?;
    }
    let mut out = Vec::new();
    let certificates = Tag::ContextSpecific {
        constructed: true,
        number: TagNumber(0),
    };
    if Tag::peek(&r)? == certificates {
        let set = AnyRef::decode(&mut r)?;
        let mut c = SliceReader::new(set.value())?;
        while !c.is_finished() {
            let item = AnyRef::decode(&mut c)?;
            if item.tag() == Tag::Sequence {
                out.push(item.to_der()?);
            }
        }
    }
    Ok(out)
}

/// A chain in a file goes leaf first, each next certificate the issuer of the one before.
/// A chain in another order is refused (it would store CA certificates as leaves).
pub fn check_chain_order(certs: &[Vec<u8>], file: &str) -> Result<()> {
    let parsed = certs
        .iter()
        .map(|d| check_certificate(d, file))
        .collect::<Result<Vec<_>>>()?;
    for (i, pair) in parsed.windows(2).enumerate() {
        let (child, parent) = (pair[0].tbs_certificate(), pair[1].tbs_certificate());
        if child.issuer() != parent.subject() {
            return Err(bad(
                file,
                hsm::text!(
                    "signing.import.chain_out_of_order",
                    "the chain is not in order: certificate {{parent}} ({{parent_subject}}) is not the issuer of certificate {{child}} ({{child_subject}}, issued by {{child_issuer}}); put the leaf first, then each issuer",
                    parent = i + 2,
                    parent_subject = parent.subject(),
                    child = i + 1,
                    child_subject = child.subject(),
                    child_issuer = child.issuer()
                ),
            ));
        }
    }
    Ok(())
}

/// What the console shows of a certificate.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CertificateInfo {
    pub subject: String,
    pub issuer: String,
    /// Hex, as `openssl x509 -serial` prints it.
    pub serial: String,
    /// RFC 3339.
    pub not_before: String,
    pub not_after: String,
    /// Expired (now past `not_after`).
    pub expired: bool,
    /// Days until `not_after` (negative once expired).
    #[ts(type = "number")]
    pub days_left: i64,
    /// A CA certificate (basic constraints cA).
    pub is_ca: bool,
    pub self_signed: bool,
    /// Key usage bits by name (`digitalSignature`, `keyCertSign`, …); empty when absent.
    pub key_usage: Vec<String>,
    /// Extended key usages by name (`codeSigning`, …) or OID.
    pub extended_key_usage: Vec<String>,
    pub sha256_fingerprint: String,
    /// The fingerprint of its public key, as the console shows keys' (SHA-256 of the SPKI).
    pub public_key_fingerprint: Option<String>,
    /// Its public key's algorithm as the console names keys' ("RSA-2048", "ECDSA P-256",
    /// "ML-DSA-65", …), when the console reads the key.
    pub public_key_algorithm: Option<String>,
    /// The algorithm its issuer signed it with: "RSA", "ECDSA", "Ed25519", "ML-DSA-65",
    /// "SLH-DSA-SHA2-128s", "HSS/LMS", or the OID.
    pub signature_algorithm: String,
}

/// The signature algorithm of a certificate (or CMS signer) by its OID, named as the
/// console names algorithms (RFC 8017/5758/8410, RFC 9881, RFC 9909, RFC 9802).
pub fn signature_algorithm_name(oid: &str) -> String {
    let name = match oid {
        "1.2.840.113549.1.1.5"
        | "1.2.840.113549.1.1.10"
        | "1.2.840.113549.1.1.11"
        | "1.2.840.113549.1.1.12"
        | "1.2.840.113549.1.1.13" => "RSA",
        "1.2.840.10045.4.3.2" | "1.2.840.10045.4.3.3" | "1.2.840.10045.4.3.4" => "ECDSA",
        "1.3.101.112" => "Ed25519",
        "1.3.101.113" => "Ed448",
        "2.16.840.1.101.3.4.3.17" => "ML-DSA-44",
        "2.16.840.1.101.3.4.3.18" => "ML-DSA-65",
        "2.16.840.1.101.3.4.3.19" => "ML-DSA-87",
        "2.16.840.1.101.3.4.3.20" => "SLH-DSA-SHA2-128s",
        "2.16.840.1.101.3.4.3.21" => "SLH-DSA-SHA2-128f",
        "2.16.840.1.101.3.4.3.22" => "SLH-DSA-SHA2-192s",
        "2.16.840.1.101.3.4.3.23" => "SLH-DSA-SHA2-192f",
        "2.16.840.1.101.3.4.3.24" => "SLH-DSA-SHA2-256s",
        "2.16.840.1.101.3.4.3.25" => "SLH-DSA-SHA2-256f",
        "2.16.840.1.101.3.4.3.26" => "SLH-DSA-SHAKE-128s",
        "2.16.840.1.101.3.4.3.27" => "SLH-DSA-SHAKE-128f",
        "2.16.840.1.101.3.4.3.28" => "SLH-DSA-SHAKE-192s",
        "2.16.840.1.101.3.4.3.29" => "SLH-DSA-SHAKE-192f",
        "2.16.840.1.101.3.4.3.30" => "SLH-DSA-SHAKE-256s",
        "2.16.840.1.101.3.4.3.31" => "SLH-DSA-SHAKE-256f",
        "1.2.840.113549.1.9.16.3.17" => "HSS/LMS",
        other => other,
    };
    name.to_string()
}

fn rfc3339(t: &x509_cert::time::Time) -> (String, i64) {
    let secs = t.to_unix_duration().as_secs() as i64;
    let s = time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|d| {
            d.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default();
    (s, secs)
}

const KEY_USAGE_NAMES: [&str; 9] = [
    "digitalSignature",
    "nonRepudiation",
    "keyEncipherment",
    "dataEncipherment",
    "keyAgreement",
    "keyCertSign",
    "cRLSign",
    "encipherOnly",
    "decipherOnly",
];

fn eku_name(oid: &ObjectIdentifier) -> String {
    match oid.to_string().as_str() {
        "1.3.6.1.5.5.7.3.1" => "serverAuth".into(),
        "1.3.6.1.5.5.7.3.2" => "clientAuth".into(),
        "1.3.6.1.5.5.7.3.3" => "codeSigning".into(),
        "1.3.6.1.5.5.7.3.4" => "emailProtection".into(),
        "1.3.6.1.5.5.7.3.8" => "timeStamping".into(),
        "1.3.6.1.5.5.7.3.9" => "OCSPSigning".into(),
        other => other.to_string(),
    }
}

/// Describe a certificate (DER).
pub fn describe(der_bytes: &[u8]) -> Result<CertificateInfo> {
    let c = Certificate::from_der(der_bytes).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.not_x509_certificate",
            "not an X.509 certificate: {{error}}",
            error = e
        ))
    })?;
    let tbs = c.tbs_certificate();
    let (not_before, _) = rfc3339(&tbs.validity().not_before);
    let (not_after, end) = rfc3339(&tbs.validity().not_after);
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let is_ca = matches!(
        tbs.get_extension::<BasicConstraints>(),
        Ok(Some((_, bc))) if bc.ca
    );
    let key_usage = match tbs.get_extension::<KeyUsage>() {
        Ok(Some((_, ku))) => {
            let bits = ku.0.bits();
            KEY_USAGE_NAMES
                .iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .map(|(_, n)| (*n).to_string())
                .collect()
        }
        _ => Vec::new(),
    };
    let extended_key_usage = match tbs.get_extension::<ExtendedKeyUsage>() {
        Ok(Some((_, eku))) => eku.0.iter().map(eku_name).collect(),
        _ => Vec::new(),
    };
    let public_key = tbs
        .subject_public_key_info()
        .to_der()
        .ok()
        .and_then(|d| PublicKey::from_spki_der(&d).ok());
    let public_key_fingerprint = public_key.as_ref().map(|pk| pk.fingerprint());
    let public_key_algorithm = public_key.as_ref().map(|pk| pk.algorithm());
    Ok(CertificateInfo {
        subject: tbs.subject().to_string(),
        issuer: tbs.issuer().to_string(),
        serial: hex::encode_upper(tbs.serial_number().as_bytes()),
        not_before,
        not_after,
        expired: now > end,
        days_left: (end - now).div_euclid(86_400),
        is_ca,
        self_signed: tbs.subject() == tbs.issuer(),
        key_usage,
        extended_key_usage,
        sha256_fingerprint: hex::encode(Sha256::digest(der_bytes)),
        public_key_fingerprint,
        public_key_algorithm,
        signature_algorithm: signature_algorithm_name(&c.signature_algorithm().oid.to_string()),
    })
}

/// Why a certificate should not sign code, in words (empty when it may): expired, or
/// lacking the digitalSignature key usage or the codeSigning extended key usage where the
/// certificate restricts them.
pub fn signing_warnings(info: &CertificateInfo) -> Vec<String> {
    signing_warnings_text(info)
        .into_iter()
        .map(|t| t.text)
        .collect()
}

/// The same in a form each language translates.
pub fn signing_warnings_text(info: &CertificateInfo) -> Vec<hsm::Text> {
    let mut w = Vec::new();
    if info.expired {
        w.push(hsm::text!(
            "signing.certificate_warnings.expired",
            "the signing certificate ({{subject}}) expired on {{date}}",
            subject = &info.subject,
            date = &info.not_after
        ));
    }
    if !info.key_usage.is_empty() && !info.key_usage.iter().any(|u| u == "digitalSignature") {
        w.push(hsm::text!(
            "signing.certificate_warnings.no_digital_signature",
            "the signing certificate ({{subject}}) lacks the digitalSignature key usage",
            subject = &info.subject
        ));
    }
    if !info.extended_key_usage.is_empty()
        && !info.extended_key_usage.iter().any(|u| u == "codeSigning")
    {
        w.push(hsm::text!(
            "signing.certificate_warnings.no_code_signing",
            "the signing certificate ({{subject}}) lacks the codeSigning extended key usage",
            subject = &info.subject
        ));
    }
    w
}

/// The chain `leaf` builds to among `pool` (DER certificates, e.g. the CA certificates on
/// the token), issuer by issuer, leaf excluded; stops at a self-signed certificate or when
/// no issuer is found. Matching is by name; the CMS verifier checks the signatures.
pub fn build_chain(leaf: &[u8], pool: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let parsed: Vec<(Vec<u8>, Certificate)> = pool
        .iter()
        .filter_map(|d| Certificate::from_der(d).ok().map(|c| (d.clone(), c)))
        .collect();
    let mut chain: Vec<Vec<u8>> = Vec::new();
    let Ok(mut current) = Certificate::from_der(leaf) else {
        return chain;
    };
    while current.tbs_certificate().issuer() != current.tbs_certificate().subject() {
        let issuer = current.tbs_certificate().issuer().clone();
        let Some((d, c)) = parsed
            .iter()
            .find(|(d, c)| c.tbs_certificate().subject() == &issuer && !chain.contains(d))
        else {
            break;
        };
        if d.as_slice() == leaf {
            break;
        }
        chain.push(d.clone());
        current = c.clone();
        if chain.len() > 8 {
            break;
        }
    }
    chain
}

/// The DER of a certificate's subject (for `CKA_SUBJECT`) and issuer and serial (for
/// `CKA_ISSUER` / `CKA_SERIAL_NUMBER`).
pub fn certificate_names(der_bytes: &[u8]) -> Result<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let c = Certificate::from_der(der_bytes).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.not_x509_certificate",
            "not an X.509 certificate: {{error}}",
            error = e
        ))
    })?;
    let tbs = c.tbs_certificate();
    let enc = |r: der::Result<Vec<u8>>| {
        r.map_err(|e| SignError::Format(hsm::text!("signing.der_error", "{{error}}", error = e)))
    };
    Ok((
        enc(tbs.subject().to_der())?,
        enc(tbs.issuer().to_der())?,
        enc(tbs.serial_number().to_der())?,
    ))
}

/// The public key a certificate certifies.
pub fn certificate_public_key(der_bytes: &[u8]) -> Result<PublicKey> {
    crate::cert::public_key(der_bytes).map(|(_, pk)| pk)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_keys_and_garbage_are_refused_by_file_name() {
        let pem =
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n";
        let e = parse_import(pem.as_bytes(), "key.pem")
            .unwrap_err()
            .to_string();
        assert!(e.contains("key.pem") && e.contains("private key"), "{e}");
        let e = parse_import(b"hello world", "notes.txt")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("notes.txt") && e.contains("not a certificate"),
            "{e}"
        );
        let e = parse_import(b"", "empty.der").unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
    }

    #[test]
    fn certificates_unfit_for_code_signing_are_warned_about() {
        let mut i = CertificateInfo {
            subject: "CN=rel".into(),
            issuer: "CN=ca".into(),
            serial: "01".into(),
            not_before: String::new(),
            not_after: "2020-01-01T00:00:00Z".into(),
            expired: false,
            days_left: 10,
            is_ca: false,
            self_signed: false,
            key_usage: vec!["digitalSignature".into()],
            extended_key_usage: vec!["codeSigning".into()],
            sha256_fingerprint: String::new(),
            public_key_fingerprint: None,
            public_key_algorithm: None,
            signature_algorithm: "ECDSA".into(),
        };
        assert!(signing_warnings(&i).is_empty());
        i.key_usage = Vec::new();
        i.extended_key_usage = Vec::new();
        assert!(signing_warnings(&i).is_empty(), "unrestricted is fine");
        i.expired = true;
        i.key_usage = vec!["keyEncipherment".into()];
        i.extended_key_usage = vec!["serverAuth".into()];
        let w = signing_warnings(&i).join("; ");
        assert!(
            w.contains("expired") && w.contains("digitalSignature") && w.contains("codeSigning"),
            "{w}"
        );
        // The keyed texts' English is what `hsmc sign` has always printed.
        let subject = i.subject.clone();
        let at = i.not_after.clone();
        assert_eq!(
            signing_warnings(&i),
            vec![
                format!("the signing certificate ({subject}) expired on {at}"),
                format!("the signing certificate ({subject}) lacks the digitalSignature key usage"),
                format!(
                    "the signing certificate ({subject}) lacks the codeSigning extended key usage"
                ),
            ]
        );
        assert!(signing_warnings_text(&i)
            .iter()
            .all(|t| t.key.starts_with("signing.certificate_warnings.")));
    }

    #[test]
    fn a_public_key_pem_is_read() {
        let pk = PublicKey::Ec {
            curve: hsm::algo::Curve::Ed25519,
            point: vec![7; 32],
        };
        let items = parse_import(pk.spki_pem().as_bytes(), "k.pem").unwrap();
        assert!(matches!(&items[..], [ImportItem::PublicKey(p)] if *p == pk));
        let items = parse_import(&pk.spki_der(), "k.der").unwrap();
        assert!(matches!(&items[..], [ImportItem::PublicKey(p)] if *p == pk));
    }
}
