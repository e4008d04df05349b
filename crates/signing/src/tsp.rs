//! RFC 3161 time-stamp protocol: the request the console sends a time-stamp authority
//! (TSA), the answer it gets back, and the check of the token inside (RFC 3161 §2.4.2,
//! RFC 5816 for ESSCertIDv2 TSAs) before the token is kept in a signature.
//!
//! The structures are written here with `der` 0.8's derive macros: the `x509-tsp` crate
//! builds on `der` 0.7 and cannot share types with this crate's `cms`/`x509-cert` stack.
//!
//! A token is a CMS `SignedData` whose content is a `TSTInfo`: the hash the TSA was sent
//! (the *message imprint*), the time (`genTime`), the nonce, the TSA's name. It is checked
//! as any CMS signature is, with the software verifiers: the content digest in the signed
//! attributes, the TSA's signature over them with the certificate the token carries, that
//! certificate's critical `timeStamping` extended key usage and validity at `genTime`,
//! and — when the officer names a CA — its chain to that CA.
//!
//! The token must also be *bound* to that certificate: the signed attributes name it by
//! hash in an ESS `signingCertificateV2` (RFC 5035, as RFC 5816 lets a TSA use) or
//! `signingCertificate` (RFC 2634, SHA-1) attribute, which RFC 3161 §2.4.1 requires. The
//! signer identifier and the certificates of a token are outside its signature; without
//! the binding, another certificate for the same key (another subject, another CA,
//! another validity) could be put in the token and the signature would still verify.

use der::asn1::{Any, BitString, GeneralizedTime, Int, ObjectIdentifier, OctetString};
use der::{Decode, Encode, Sequence, Tag, Tagged};
use serde::Serialize;
use spki::AlgorithmIdentifierOwned;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::ExtendedKeyUsage;
use x509_cert::ext::Extensions;
pub use x509_cert::Certificate;

use cms::cert::CertificateChoices;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier};

use hsm::algo::Curve;
use hsm::pubkey::PublicKey;

use crate::alg::DigestAlg;
use crate::cms::{OID_CONTENT_TYPE, OID_MESSAGE_DIGEST, OID_SIGNED_DATA};

/// id-ct-TSTInfo (RFC 3161 §2.4.2).
pub const OID_TST_INFO: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4");
/// id-aa-signatureTimeStampToken (RFC 3161 appendix A): the unsigned attribute of a CMS
/// signer that carries a token over its signature value.
pub const OID_SIGNATURE_TIME_STAMP_TOKEN: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.14");
/// id-aa-signingCertificate (RFC 2634 §5.4): the signer's certificate as an ESSCertID
/// (its SHA-1 hash).
pub const OID_SIGNING_CERTIFICATE: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.12");
/// id-aa-signingCertificateV2 (RFC 5035 §3): the signer's certificate as an ESSCertIDv2
/// (its hash, SHA-256 unless the ESSCertIDv2 names another).
pub use crate::cms::OID_SIGNING_CERTIFICATE_V2;
const OID_SHA1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.14.3.2.26");
/// id-kp-timeStamping (RFC 5280 §4.2.1.12).
pub const OID_KP_TIME_STAMPING: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.8");

const OID_RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const OID_SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const OID_SHA384_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
const OID_SHA512_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.13");
const OID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const OID_ECDSA_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
const OID_ECDSA_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
const OID_ECDSA_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.4");

/// Why a time-stamp answer or token is not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TspError {
    /// The answer or token is not what RFC 3161 describes.
    #[error("the answer is not an RFC 3161 time-stamp response: {0}")]
    Malformed(String),
    /// The TSA said no.
    #[error("the TSA refused the request: status {status}{text}")]
    Refused { status: String, text: String },
    #[error("the token's message imprint is not the hash that was sent")]
    WrongImprint,
    #[error("the token does not echo the nonce that was sent")]
    WrongNonce,
    /// The TSA's signature over the token does not verify.
    #[error("the TSA's signature does not verify: {0}")]
    BadSignature(String),
    /// The TSA's certificate is not fit to sign time-stamps.
    #[error("the TSA's certificate {0}")]
    Certificate(hsm::Text),
    #[error("the TSA's certificate does not chain to the CA file: {0}")]
    Untrusted(String),
    /// The token's signed attributes do not name the certificate that verifies it (no ESS
    /// signing-certificate attribute, or one naming another certificate).
    #[error("the token is not bound to the TSA's certificate: {0}")]
    Unbound(hsm::Text),
}

impl TspError {
    /// The reason as the officer reads it, with a catalog key under `signing.` (the same
    /// English as `Display`; another library's error text stays an English argument).
    pub fn msg(&self) -> hsm::Text {
        match self {
            TspError::Malformed(e) => hsm::text!(
                "signing.tsp_malformed",
                "the answer is not an RFC 3161 time-stamp response: {{error}}",
                error = e
            ),
            TspError::Refused { status, text } => hsm::text!(
                "signing.tsp_refused",
                "the TSA refused the request: status {{status}}{{text}}",
                status = status,
                text = text
            ),
            TspError::WrongImprint => hsm::text!(
                "signing.tsp_wrong_imprint",
                "the token's message imprint is not the hash that was sent"
            ),
            TspError::WrongNonce => hsm::text!(
                "signing.tsp_wrong_nonce",
                "the token does not echo the nonce that was sent"
            ),
            TspError::BadSignature(e) => hsm::text!(
                "signing.tsp_bad_signature",
                "the TSA's signature does not verify: {{error}}",
                error = e
            ),
            TspError::Certificate(m) => hsm::text!(
                "signing.tsp_certificate",
                "the TSA's certificate {{reason}}",
                reason = m
            )
            .nest("reason", m),
            TspError::Untrusted(e) => hsm::text!(
                "signing.tsp_untrusted",
                "the TSA's certificate does not chain to the CA file: {{error}}",
                error = e
            ),
            TspError::Unbound(m) => hsm::text!(
                "signing.tsp_unbound",
                "the token is not bound to the TSA's certificate: {{reason}}",
                reason = m
            )
            .nest("reason", m),
        }
    }
}

pub type Result<T> = std::result::Result<T, TspError>;

fn malformed(e: impl std::fmt::Display) -> TspError {
    TspError::Malformed(e.to_string())
}

/// MessageImprint ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier, hashedMessage OCTET STRING }
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct MessageImprint {
    pub hash_algorithm: AlgorithmIdentifierOwned,
    pub hashed_message: OctetString,
}

/// TimeStampReq (RFC 3161 §2.4.1). `certReq` is sent TRUE so the token carries the TSA's
/// certificate; extensions are never sent.
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct TimeStampReq {
    pub version: u8,
    pub message_imprint: MessageImprint,
    #[asn1(optional = "true")]
    pub req_policy: Option<ObjectIdentifier>,
    #[asn1(optional = "true")]
    pub nonce: Option<Int>,
    #[asn1(optional = "true")]
    pub cert_req: Option<bool>,
}

/// PKIStatusInfo (RFC 3161 §2.4.2, from RFC 4210).
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct PkiStatusInfo {
    pub status: u8,
    #[asn1(optional = "true")]
    pub status_string: Option<Vec<String>>,
    #[asn1(optional = "true")]
    pub fail_info: Option<BitString>,
}

/// TimeStampResp ::= SEQUENCE { status PKIStatusInfo, timeStampToken ContentInfo OPTIONAL }
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct TimeStampResp {
    pub status: PkiStatusInfo,
    #[asn1(optional = "true")]
    pub time_stamp_token: Option<ContentInfo>,
}

/// Accuracy ::= SEQUENCE { seconds INTEGER OPTIONAL, millis [0] OPTIONAL, micros [1] OPTIONAL }
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct Accuracy {
    #[asn1(optional = "true")]
    pub seconds: Option<u32>,
    #[asn1(context_specific = "0", tag_mode = "IMPLICIT", optional = "true")]
    pub millis: Option<u16>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    pub micros: Option<u16>,
}

/// TSTInfo (RFC 3161 §2.4.2). `genTime` is kept as it came (a GeneralizedTime that may
/// carry fractions of a second, which `der`'s own type refuses).
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct TstInfo {
    pub version: u8,
    pub policy: ObjectIdentifier,
    pub message_imprint: MessageImprint,
    pub serial_number: Int,
    pub gen_time: Any,
    #[asn1(optional = "true")]
    pub accuracy: Option<Accuracy>,
    #[asn1(optional = "true")]
    pub ordering: Option<bool>,
    #[asn1(optional = "true")]
    pub nonce: Option<Int>,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    pub tsa: Option<GeneralName>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    pub extensions: Option<Extensions>,
}

/// IssuerSerial ::= SEQUENCE { issuer GeneralNames, serialNumber CertificateSerialNumber }
/// (RFC 5035 §4).
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct IssuerSerial {
    pub issuer: Vec<GeneralName>,
    pub serial_number: Int,
}

/// ESSCertID ::= SEQUENCE { certHash OCTET STRING (SHA-1), issuerSerial OPTIONAL }
/// (RFC 2634 §5.4.1).
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct EssCertId {
    pub cert_hash: OctetString,
    #[asn1(optional = "true")]
    pub issuer_serial: Option<IssuerSerial>,
}

/// SigningCertificate ::= SEQUENCE { certs SEQUENCE OF ESSCertID, policies OPTIONAL }
/// (RFC 2634 §5.4). The first ESSCertID is the signer's.
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct SigningCertificate {
    pub certs: Vec<EssCertId>,
    #[asn1(optional = "true")]
    pub policies: Option<Vec<Any>>,
}

/// ESSCertIDv2 ::= SEQUENCE { hashAlgorithm DEFAULT sha256, certHash, issuerSerial
/// OPTIONAL } (RFC 5035 §4). An absent `hashAlgorithm` is SHA-256 (an encoder that writes
/// the default anyway is taken too).
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct EssCertIdV2 {
    #[asn1(optional = "true")]
    pub hash_algorithm: Option<AlgorithmIdentifierOwned>,
    pub cert_hash: OctetString,
    #[asn1(optional = "true")]
    pub issuer_serial: Option<IssuerSerial>,
}

/// SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF ESSCertIDv2, policies OPTIONAL }
/// (RFC 5035 §3). The first ESSCertIDv2 is the signer's.
#[derive(Debug, Clone, PartialEq, Eq, Sequence)]
pub struct SigningCertificateV2 {
    pub certs: Vec<EssCertIdV2>,
    #[asn1(optional = "true")]
    pub policies: Option<Vec<Any>>,
}

/// A request for `digest` (of `alg`), with its nonce (a random positive 63-bit integer).
pub struct Request {
    pub der: Vec<u8>,
    pub imprint: MessageImprint,
    pub nonce: Int,
}

/// The request a TSA is sent for `data` (a signature value), hashed with `alg`.
pub fn request(alg: DigestAlg, data: &[u8]) -> Result<Request> {
    let mut n = [0u8; 8];
    getrandom::fill(&mut n).map_err(malformed)?;
    n[0] &= 0x7F;
    n[0] |= 0x01; // eight bytes, positive
    let nonce = Int::new(&n).map_err(malformed)?;
    let imprint = MessageImprint {
        hash_algorithm: alg.identifier(),
        hashed_message: OctetString::new(alg.digest(data)).map_err(malformed)?,
    };
    let req = TimeStampReq {
        version: 1,
        message_imprint: imprint.clone(),
        req_policy: None,
        nonce: Some(nonce.clone()),
        cert_req: Some(true),
    };
    Ok(Request {
        der: req.to_der().map_err(malformed)?,
        imprint,
        nonce,
    })
}

/// The certificates of a PEM file (a CA file for [`check_response`]).
pub fn load_ca(pem: &[u8]) -> std::result::Result<Vec<Certificate>, der::Error> {
    Certificate::load_pem_chain(pem)
}

/// What a checked token says, to show the officer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct TimestampInfo {
    /// `genTime`, as `2026-12-01T12:00:00Z` (fractions kept as the TSA gave them).
    pub time: String,
    /// The TSA's certificate subject.
    pub tsa_subject: String,
    /// The `tsa` name in the token, when the TSA gives one.
    pub tsa_name: Option<String>,
    pub policy: String,
    /// Serial number of the token (hex).
    pub serial: String,
    /// The hash of the imprint ("SHA-256").
    pub hash: DigestAlg,
    /// Whether the TSA's certificate was checked against a CA.
    pub ca_checked: bool,
}

/// A TSA's answer to `req`, checked (RFC 3161 §2.4.2): status granted (or granted with
/// modifications), the token for the imprint and nonce sent, valid as [`verify_token`]
/// checks it. Returns the token's DER (a `ContentInfo`) and what it says.
pub fn check_response(
    resp_der: &[u8],
    req: &Request,
    ca: Option<&[Certificate]>,
) -> Result<(Vec<u8>, TimestampInfo)> {
    let resp = TimeStampResp::from_der(resp_der).map_err(malformed)?;
    if resp.status.status > 1 {
        let status = match resp.status.status {
            2 => "rejection".to_string(),
            3 => "waiting".to_string(),
            4 => "revocationWarning".to_string(),
            5 => "revocationNotification".to_string(),
            n => n.to_string(),
        };
        let text = resp
            .status
            .status_string
            .map(|t| format!(" ({})", t.join("; ")))
            .unwrap_or_default();
        return Err(TspError::Refused { status, text });
    }
    let token = resp
        .time_stamp_token
        .ok_or_else(|| malformed("status granted but no token"))?;
    let token_der = token.to_der().map_err(malformed)?;
    let (tst, info) = verify_token(&token_der, ca)?;
    if tst.message_imprint != req.imprint {
        return Err(TspError::WrongImprint);
    }
    if tst.nonce.as_ref() != Some(&req.nonce) {
        return Err(TspError::WrongNonce);
    }
    Ok((token_der, info))
}

/// Check a token kept in a signature against the data it stamps (the signature value):
/// its imprint is that data's hash, and the token is valid as [`verify_token`] says.
pub fn verify_token_for(
    token_der: &[u8],
    data: &[u8],
    ca: Option<&[Certificate]>,
) -> Result<TimestampInfo> {
    let (tst, info) = verify_token(token_der, ca)?;
    let alg = DigestAlg::from_oid(tst.message_imprint.hash_algorithm.oid).ok_or_else(|| {
        malformed(format!(
            "imprint hash {}",
            tst.message_imprint.hash_algorithm.oid
        ))
    })?;
    if tst.message_imprint.hashed_message.as_bytes() != alg.digest(data).as_slice() {
        return Err(TspError::WrongImprint);
    }
    Ok(info)
}

/// A token on its own: the `TSTInfo` inside, the TSA's signature over it, the TSA's
/// certificate (critical `timeStamping` EKU, valid at `genTime`, chained to `ca` if given).
pub fn verify_token(
    token_der: &[u8],
    ca: Option<&[Certificate]>,
) -> Result<(TstInfo, TimestampInfo)> {
    let ci = ContentInfo::from_der(token_der).map_err(malformed)?;
    if ci.content_type != OID_SIGNED_DATA {
        return Err(malformed("the token is not CMS SignedData"));
    }
    let sd: SignedData = ci.content.decode_as().map_err(malformed)?;
    if sd.encap_content_info.econtent_type != OID_TST_INFO {
        return Err(malformed("the token's content is not a TSTInfo"));
    }
    let content = sd
        .encap_content_info
        .econtent
        .as_ref()
        .ok_or_else(|| malformed("the token carries no TSTInfo"))?
        .decode_as::<OctetString>()
        .map_err(malformed)?;
    let tst = TstInfo::from_der(content.as_bytes()).map_err(malformed)?;
    if tst.version != 1 {
        return Err(malformed(format!("TSTInfo version {}", tst.version)));
    }
    let signer = match sd.signer_infos.0.as_slice() {
        [one] => one,
        _ => return Err(malformed("the token must have exactly one signer")),
    };
    let certs: Vec<Certificate> = sd
        .certificates
        .iter()
        .flat_map(|c| c.0.iter())
        .filter_map(|c| match c {
            CertificateChoices::Certificate(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    let tsa_cert = certs
        .iter()
        .find(|c| names_signer(c, &signer.sid))
        .ok_or_else(|| {
            TspError::Certificate(hsm::text!(
                "signing.tsp_certificate_missing",
                "is not in the token (the request asked for it)"
            ))
        })?;
    // The signed attributes: content type TSTInfo and the digest of the TSTInfo.
    let attrs = signer
        .signed_attrs
        .as_ref()
        .ok_or_else(|| malformed("the token's signer has no signed attributes"))?;
    let digest_alg = DigestAlg::from_oid(signer.digest_alg.oid)
        .ok_or_else(|| malformed(format!("digest algorithm {}", signer.digest_alg.oid)))?;
    let mut digest_ok = false;
    let mut type_ok = false;
    for a in attrs.iter() {
        let v = a.values.iter().next();
        if a.oid == OID_MESSAGE_DIGEST {
            digest_ok = v
                .and_then(|v| v.decode_as::<OctetString>().ok())
                .is_some_and(|d| d.as_bytes() == digest_alg.digest(content.as_bytes()));
        } else if a.oid == OID_CONTENT_TYPE {
            type_ok = v.and_then(|v| v.decode_as::<ObjectIdentifier>().ok()) == Some(OID_TST_INFO);
        }
    }
    if !type_ok {
        return Err(malformed(
            "the token's content-type attribute is not TSTInfo",
        ));
    }
    if !digest_ok {
        return Err(TspError::BadSignature(
            "the signed digest is not the TSTInfo's".into(),
        ));
    }
    let signed = attrs.to_der().map_err(malformed)?;
    verify_signature(
        tsa_cert,
        &signer.signature_algorithm,
        digest_alg,
        &signed,
        signer.signature.as_bytes(),
    )
    .map_err(TspError::BadSignature)?;
    check_binding(attrs.iter(), tsa_cert)?;
    let (time, at) = gen_time(&tst.gen_time)?;
    check_tsa_certificate(tsa_cert, at)?;
    if let Some(ca) = ca {
        chain_to(tsa_cert, &certs, ca)?;
    }
    let info = TimestampInfo {
        time,
        tsa_subject: tsa_cert.tbs_certificate().subject().to_string(),
        tsa_name: tst.tsa.as_ref().map(general_name),
        policy: tst.policy.to_string(),
        serial: hex::encode(tst.serial_number.as_bytes()),
        hash: DigestAlg::from_oid(tst.message_imprint.hash_algorithm.oid).ok_or_else(|| {
            malformed(format!(
                "imprint hash {}",
                tst.message_imprint.hash_algorithm.oid
            ))
        })?,
        ca_checked: ca.is_some(),
    };
    Ok((tst, info))
}

/// The ESS signing-certificate attributes among a signer's signed attributes name `cert`
/// (RFC 3161 §2.4.1, RFC 5816 §2.2.1): at least one of `signingCertificateV2` and
/// `signingCertificate` is there, and the first ESSCertID(v2) of each has `cert`'s hash and,
/// when it gives one, `cert`'s issuer and serial number.
fn check_binding<'a>(
    attrs: impl Iterator<Item = &'a x509_cert::attr::Attribute>,
    cert: &Certificate,
) -> Result<()> {
    let cert_der = cert.to_der().map_err(malformed)?;
    let mut named = false;
    for a in attrs {
        let (attribute, v2) = if a.oid == OID_SIGNING_CERTIFICATE_V2 {
            ("signingCertificateV2", true)
        } else if a.oid == OID_SIGNING_CERTIFICATE {
            ("signingCertificate", false)
        } else {
            continue;
        };
        let damaged = |e: &dyn std::fmt::Display| {
            TspError::Unbound(hsm::text!(
                "signing.tsp_unbound_damaged",
                "its {{attribute}} attribute cannot be read ({{error}}); the token cannot be \
                 tied to a certificate, ask the TSA's operator to check what its tokens carry",
                attribute = attribute,
                error = e
            ))
        };
        let value = match a.values.as_slice() {
            [one] => one,
            _ => return Err(damaged(&"it must have exactly one value")),
        };
        let (alg, hash, issuer_serial) = if v2 {
            let sc: SigningCertificateV2 = value.decode_as().map_err(|e| damaged(&e))?;
            let id = sc
                .certs
                .into_iter()
                .next()
                .ok_or_else(|| damaged(&"it names no certificate"))?;
            let alg = id.hash_algorithm.map_or(crate::alg::OID_SHA256, |a| a.oid);
            (alg, id.cert_hash, id.issuer_serial)
        } else {
            let sc: SigningCertificate = value.decode_as().map_err(|e| damaged(&e))?;
            let id = sc
                .certs
                .into_iter()
                .next()
                .ok_or_else(|| damaged(&"it names no certificate"))?;
            (OID_SHA1, id.cert_hash, id.issuer_serial)
        };
        let (hash_name, actual) = if alg == OID_SHA1 {
            use sha1::Digest;
            ("SHA-1".to_string(), sha1::Sha1::digest(&cert_der).to_vec())
        } else if let Some(d) = DigestAlg::from_oid(alg) {
            (d.to_string(), d.digest(&cert_der))
        } else {
            return Err(TspError::Unbound(hsm::text!(
                "signing.tsp_unbound_hash_algorithm",
                "its {{attribute}} attribute hashes the certificate with {{algorithm}}, which \
                 is not checked here (SHA-1, SHA-256, SHA-384 and SHA-512 are); use a TSA \
                 that names its certificate with SHA-256",
                attribute = attribute,
                algorithm = alg
            )));
        };
        if hash.as_bytes() != actual.as_slice() {
            return Err(TspError::Unbound(hsm::text!(
                "signing.tsp_unbound_hash",
                "its {{attribute}} attribute names the certificate with {{hash}} {{named}}, but \
                 the certificate that signed the token ({{subject}}) has {{actual}}; do not \
                 keep this token, and ask the TSA's operator which certificate signs its tokens",
                attribute = attribute,
                hash = hash_name,
                named = hex::encode(hash.as_bytes()),
                subject = cert.tbs_certificate().subject(),
                actual = hex::encode(&actual)
            )));
        }
        if let Some(is) = issuer_serial {
            let tbs = cert.tbs_certificate();
            let issuer_ok = is
                .issuer
                .iter()
                .any(|n| matches!(n, GeneralName::DirectoryName(d) if d == tbs.issuer()));
            if !issuer_ok || is.serial_number.as_bytes() != tbs.serial_number().as_bytes() {
                let named_issuer = is
                    .issuer
                    .iter()
                    .map(general_name)
                    .collect::<Vec<_>>()
                    .join("; ");
                return Err(TspError::Unbound(hsm::text!(
                    "signing.tsp_unbound_issuer_serial",
                    "its {{attribute}} attribute names serial {{named_serial}} of \
                     {{named_issuer}}, but the certificate that signed the token has serial \
                     {{serial}} of {{issuer}}; do not keep this token, and ask the TSA's \
                     operator which certificate signs its tokens",
                    attribute = attribute,
                    named_serial = hex::encode(is.serial_number.as_bytes()),
                    named_issuer = named_issuer,
                    serial = hex::encode(tbs.serial_number().as_bytes()),
                    issuer = tbs.issuer()
                )));
            }
        }
        named = true;
    }
    if !named {
        return Err(TspError::Unbound(hsm::text!(
            "signing.tsp_unbound_missing",
            "it has neither a signingCertificateV2 nor a signingCertificate attribute, which \
             RFC 3161 2.4.1 requires; use a TSA that names its certificate in its tokens \
             (RFC 5816)"
        )));
    }
    Ok(())
}

fn names_signer(c: &Certificate, sid: &SignerIdentifier) -> bool {
    match sid {
        SignerIdentifier::IssuerAndSerialNumber(ias) => {
            c.tbs_certificate().issuer() == &ias.issuer
                && c.tbs_certificate().serial_number() == &ias.serial_number
        }
        SignerIdentifier::SubjectKeyIdentifier(ski) => c
            .tbs_certificate()
            .get_extension::<x509_cert::ext::pkix::SubjectKeyIdentifier>()
            .ok()
            .flatten()
            .is_some_and(|(_, k)| k == *ski),
    }
}

fn general_name(n: &GeneralName) -> String {
    match n {
        GeneralName::DirectoryName(d) => d.to_string(),
        GeneralName::DnsName(d) => d.to_string(),
        GeneralName::UniformResourceIdentifier(u) => u.to_string(),
        GeneralName::Rfc822Name(r) => r.to_string(),
        other => format!("{other:?}"),
    }
}

/// `genTime` (GeneralizedTime, `YYYYMMDDHHMMSS[.f*]Z`) as text and as the second it names.
fn gen_time(t: &Any) -> Result<(String, std::time::SystemTime)> {
    if t.tag() != Tag::GeneralizedTime {
        return Err(malformed("genTime is not a GeneralizedTime"));
    }
    let s = std::str::from_utf8(t.value()).map_err(malformed)?;
    let bad = || malformed(format!("genTime '{s}'"));
    let body = s.strip_suffix('Z').ok_or_else(bad)?;
    let (whole, fraction) = match body.split_once('.') {
        Some((w, f)) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => (w, Some(f)),
        Some(_) => return Err(bad()),
        None => (body, None),
    };
    if whole.len() != 14 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let second = GeneralizedTime::from_der(&{
        let mut d = vec![0x18, 15];
        d.extend_from_slice(whole.as_bytes());
        d.push(b'Z');
        d
    })
    .map_err(|_| bad())?;
    let dt = der::DateTime::from_unix_duration(second.to_unix_duration()).map_err(|_| bad())?;
    let text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{}Z",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minutes(),
        dt.seconds(),
        fraction.map(|f| format!(".{f}")).unwrap_or_default()
    );
    Ok((text, second.to_system_time()))
}

/// RFC 3161 §2.3: the TSA's certificate has exactly one extended key usage,
/// `timeStamping`, marked critical; and it was valid when it stamped.
fn check_tsa_certificate(c: &Certificate, at: std::time::SystemTime) -> Result<()> {
    let eku = c
        .tbs_certificate()
        .get_extension::<ExtendedKeyUsage>()
        .map_err(|e| {
            TspError::Certificate(hsm::text!(
                "signing.tsp_certificate_eku_damaged",
                "has a damaged extended key usage: {{error}}",
                error = e
            ))
        })?;
    match eku {
        Some((true, ExtendedKeyUsage(purposes))) if purposes == [OID_KP_TIME_STAMPING] => {}
        Some((false, _)) => {
            return Err(TspError::Certificate(hsm::text!(
                "signing.tsp_certificate_eku_not_critical",
                "marks its extended key usage non-critical (RFC 3161 2.3 asks for critical)"
            )))
        }
        _ => {
            return Err(TspError::Certificate(hsm::text!(
                "signing.tsp_certificate_eku_missing",
                "does not have the timeStamping extended key usage (alone)"
            )))
        }
    }
    let v = c.tbs_certificate().validity();
    if at < v.not_before.to_system_time() || at > v.not_after.to_system_time() {
        return Err(TspError::Certificate(hsm::text!(
            "signing.tsp_certificate_not_valid_then",
            "was not valid at the time it stamped ({{not_before}} to {{not_after}})",
            not_before = v.not_before,
            not_after = v.not_after
        )));
    }
    Ok(())
}

/// The TSA's certificate up to a certificate of the CA file: each link's signature
/// verified with its issuer's key (issuers from the token or the CA file), at most 8 deep.
fn chain_to(leaf: &Certificate, token_certs: &[Certificate], ca: &[Certificate]) -> Result<()> {
    let mut current = leaf.clone();
    for _ in 0..8 {
        if ca.contains(&current) {
            return Ok(());
        }
        let issuer_name = current.tbs_certificate().issuer();
        let tbs = current.tbs_certificate().to_der().map_err(malformed)?;
        let sig = current.signature().raw_bytes();
        let alg = current.signature_algorithm();
        let issued_by = |i: &&Certificate| {
            i.tbs_certificate().subject() == issuer_name
                && cert_signature_digest(alg)
                    .and_then(|d| verify_signature(i, alg, d, &tbs, sig))
                    .is_ok()
        };
        if ca.iter().find(issued_by).is_some() {
            return Ok(());
        }
        match token_certs.iter().find(issued_by) {
            Some(i) if i != &current => current = i.clone(),
            _ => {
                return Err(TspError::Untrusted(format!(
                    "no certificate there issued {}",
                    current.tbs_certificate().subject()
                )))
            }
        }
    }
    Err(TspError::Untrusted("the chain is longer than 8".into()))
}

/// The digest a certificate's signature algorithm names.
pub(crate) fn cert_signature_digest(
    alg: &AlgorithmIdentifierOwned,
) -> std::result::Result<DigestAlg, String> {
    match alg.oid {
        o if o == OID_SHA256_WITH_RSA || o == OID_ECDSA_SHA256 => Ok(DigestAlg::Sha256),
        o if o == OID_SHA384_WITH_RSA || o == OID_ECDSA_SHA384 => Ok(DigestAlg::Sha384),
        o if o == OID_SHA512_WITH_RSA || o == OID_ECDSA_SHA512 => Ok(DigestAlg::Sha512),
        o => Err(format!("signature algorithm {o} is not supported")),
    }
}

/// A TSA's (or CA's) signature over `message` with the key of `cert`: ECDSA P-256/P-384 or
/// RSA PKCS #1 v1.5, with `digest`, by the software verifiers.
pub(crate) fn verify_signature(
    cert: &Certificate,
    alg: &AlgorithmIdentifierOwned,
    digest: DigestAlg,
    message: &[u8],
    signature: &[u8],
) -> std::result::Result<(), String> {
    let spki = cert.tbs_certificate().subject_public_key_info();
    let pk = PublicKey::from_spki_der(&spki.to_der().map_err(|e| e.to_string())?)?;
    let hashed = digest.digest(message);
    let ecdsa = [
        OID_ECDSA_SHA256,
        OID_ECDSA_SHA384,
        OID_ECDSA_SHA512,
        OID_EC_PUBLIC_KEY,
    ];
    let rsa = [
        OID_RSA_ENCRYPTION,
        OID_SHA256_WITH_RSA,
        OID_SHA384_WITH_RSA,
        OID_SHA512_WITH_RSA,
    ];
    let enc = swverify::EcdsaEncoding::Der;
    let r = match &pk {
        PublicKey::Ec {
            curve: Curve::P256,
            point,
        } if ecdsa.contains(&alg.oid) => {
            swverify::ecdsa_p256_prehash(point, &hashed, signature, enc)
        }
        PublicKey::Ec {
            curve: Curve::P384,
            point,
        } if ecdsa.contains(&alg.oid) => {
            swverify::ecdsa_p384_prehash(point, &hashed, signature, enc)
        }
        PublicKey::Rsa { modulus, exponent } if rsa.contains(&alg.oid) => {
            let hash = match digest {
                DigestAlg::Sha256 => swverify::PssHash::Sha256,
                DigestAlg::Sha384 => swverify::PssHash::Sha384,
                DigestAlg::Sha512 => swverify::PssHash::Sha512,
                other => {
                    return Err(format!(
                        "RSA PKCS#1 v1.5 signatures over {other} are not supported"
                    ))
                }
            };
            swverify::rsa_pkcs1v15_prehash(modulus, exponent, hash, &hashed, signature)
        }
        _ => {
            return Err(format!(
                "{} keys signing with {} are not supported",
                pk.algorithm(),
                alg.oid
            ))
        }
    };
    r.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_der_with_a_fresh_nonce() {
        let a = request(DigestAlg::Sha256, b"sig").unwrap();
        let b = request(DigestAlg::Sha256, b"sig").unwrap();
        assert_ne!(a.nonce, b.nonce);
        let back = TimeStampReq::from_der(&a.der).unwrap();
        assert_eq!(back.version, 1);
        assert_eq!(back.cert_req, Some(true));
        assert_eq!(back.message_imprint, a.imprint);
        assert_eq!(
            back.message_imprint.hashed_message.as_bytes(),
            DigestAlg::Sha256.digest(b"sig")
        );
        assert_eq!(a.nonce.as_bytes().len(), 8);
    }

    #[test]
    fn gen_time_keeps_fractions_and_refuses_other_forms() {
        let t = |s: &str| Any::new(Tag::GeneralizedTime, s.as_bytes()).unwrap();
        assert_eq!(
            gen_time(&t("20261201120304Z")).unwrap().0,
            "2026-12-01T12:03:04Z"
        );
        assert_eq!(
            gen_time(&t("20261201120304.25Z")).unwrap().0,
            "2026-12-01T12:03:04.25Z"
        );
        for bad in [
            "20261201120304",
            "2026120112Z",
            "20261201120304.Z",
            "20261301120304Z",
        ] {
            assert!(gen_time(&t(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn refusals_name_the_status() {
        let req = request(DigestAlg::Sha256, b"x").unwrap();
        let resp = TimeStampResp {
            status: PkiStatusInfo {
                status: 2,
                status_string: Some(vec!["policy not accepted".into()]),
                fail_info: None,
            },
            time_stamp_token: None,
        };
        let e = check_response(&resp.to_der().unwrap(), &req, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the TSA refused the request: status rejection (policy not accepted)"
        );
        assert!(matches!(
            check_response(b"<html>", &req, None).unwrap_err(),
            TspError::Malformed(_)
        ));
    }
}
