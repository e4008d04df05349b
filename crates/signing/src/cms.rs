//! Detached CMS `SignedData` (RFC 5652) with signed attributes: content type, message
//! digest, signing time, and `signingCertificateV2` (RFC 5035) binding the signer's
//! certificate; the signer named by issuer and serial number of its certificate, which is
//! included. The HSM signs the DER of the signed attributes — a small blob that
//! carries the file's digest — so any file size works with every scheme, including those
//! that sign whole messages (RFC 9882 ML-DSA, RFC 9708 HSS/LMS, RFC 8419 Ed25519).

use der::asn1::{ObjectIdentifier, OctetString, SetOfVec, UtcTime};
use der::{Any, Decode, Encode};
use sha2::{Digest, Sha256};
use spki::AlgorithmIdentifierOwned;
use x509_cert::attr::Attribute;
use x509_cert::Certificate;

use cms::cert::{CertificateChoices, IssuerAndSerialNumber};
use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{
    CertificateSet, EncapsulatedContentInfo, SignedAttributes, SignedData, SignerIdentifier,
    SignerInfo, SignerInfos,
};

use hsm::pubkey::PublicKey;

use crate::alg::{DigestAlg, SigAlg};
// ESSCertIDv2 (RFC 5035 §4): `hashAlgorithm` defaults to SHA-256 and is then left out
// (DER); `issuerSerial` is not written.
use crate::tsp::{EssCertIdV2, SigningCertificateV2};
use crate::{Result, SignError};

mod merge;
pub use merge::add_signer;

pub const OID_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1");
pub const OID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
pub const OID_CONTENT_TYPE: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.3");
pub const OID_MESSAGE_DIGEST: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");
pub const OID_SIGNING_TIME: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.5");
/// id-aa-signingCertificateV2 (RFC 5035 §3).
pub const OID_SIGNING_CERTIFICATE_V2: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.47");
const OID_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");

fn fmt(e: der::Error) -> SignError {
    SignError::Format(der_error(e))
}

fn der_error(e: der::Error) -> hsm::Text {
    hsm::text!("signing.der_error", "{{error}}", error = e)
}

fn attr(oid: ObjectIdentifier, value: Any) -> Result<Attribute> {
    let mut values = SetOfVec::new();
    values.insert(value).map_err(fmt)?;
    Ok(Attribute { oid, values })
}

/// The signed attributes for a content digest, signed with the key of `cert_der`.
pub fn signed_attributes(
    content_digest: &[u8],
    signing_time: std::time::SystemTime,
    cert_der: &[u8],
) -> Result<SignedAttributes> {
    let since = signing_time
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| {
            SignError::Format(hsm::text!(
                "signing.clock_before_1970",
                "{{error}}",
                error = e
            ))
        })?;
    let mut attrs = SetOfVec::new();
    attrs
        .insert(attr(
            OID_CONTENT_TYPE,
            Any::encode_from(&OID_DATA).map_err(fmt)?,
        )?)
        .map_err(fmt)?;
    attrs
        .insert(attr(
            OID_MESSAGE_DIGEST,
            Any::encode_from(&OctetString::new(content_digest).map_err(fmt)?).map_err(fmt)?,
        )?)
        .map_err(fmt)?;
    // UTCTime until 2049, as RFC 5652 §11.3 asks.
    attrs
        .insert(attr(
            OID_SIGNING_TIME,
            Any::encode_from(&UtcTime::from_unix_duration(since).map_err(fmt)?).map_err(fmt)?,
        )?)
        .map_err(fmt)?;
    // Binds the certificate (which CMS itself leaves unsigned) to the signature.
    let ess = SigningCertificateV2 {
        certs: vec![EssCertIdV2 {
            hash_algorithm: None,
            cert_hash: OctetString::new(Sha256::digest(cert_der).to_vec()).map_err(fmt)?,
            issuer_serial: None,
        }],
        policies: None,
    };
    attrs
        .insert(attr(
            OID_SIGNING_CERTIFICATE_V2,
            Any::encode_from(&ess).map_err(fmt)?,
        )?)
        .map_err(fmt)?;
    Ok(attrs)
}

/// Build a detached `.p7s` (DER). `sign` gets the DER of the signed attributes (a SET OF)
/// and returns the HSM's signature with `alg`; the result is checked in software before it
/// is returned.
pub fn build(
    alg: SigAlg,
    cert_der: &[u8],
    content_digest: &[u8],
    signing_time: std::time::SystemTime,
    sign: &mut dyn FnMut(&[u8]) -> Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    build_with(alg, cert_der, content_digest, signing_time, sign, None)
}

/// Gets a signature value and returns an RFC 3161 token over it (DER `ContentInfo`),
/// checked by the caller; `None` when the caller chose to sign without one after its TSA
/// failed.
pub type Stamp<'a> = &'a mut dyn FnMut(&[u8]) -> Result<Option<Vec<u8>>>;

/// As [`build`]; with `stamp`, the signer carries the token over its signature value as
/// the `signatureTimeStampToken` unsigned attribute (RFC 3161 appendix A).
pub fn build_with(
    alg: SigAlg,
    cert_der: &[u8],
    content_digest: &[u8],
    signing_time: std::time::SystemTime,
    sign: &mut dyn FnMut(&[u8]) -> Result<Vec<u8>>,
    stamp: Option<Stamp<'_>>,
) -> Result<Vec<u8>> {
    build_with_chain(
        alg,
        cert_der,
        &[],
        content_digest,
        signing_time,
        sign,
        stamp,
    )
}

/// As [`build_with`], also carrying `chain` (the issuers of the signer's certificate, DER),
/// so a verifier with only the root (`openssl cms -verify -CAfile root.pem`) can build the
/// path.
pub fn build_with_chain(
    alg: SigAlg,
    cert_der: &[u8],
    chain: &[Vec<u8>],
    content_digest: &[u8],
    signing_time: std::time::SystemTime,
    sign: &mut dyn FnMut(&[u8]) -> Result<Vec<u8>>,
    stamp: Option<Stamp<'_>>,
) -> Result<Vec<u8>> {
    let (cert, pk) = crate::cert::public_key(cert_der)?;
    let attrs = signed_attributes(content_digest, signing_time, cert_der)?;
    let to_sign = attrs.to_der().map_err(fmt)?;
    let signature = sign(&to_sign)?;
    alg.verify(&pk, &to_sign, &[], &signature)
        .map_err(SignError::into_self_check)?;
    let token = match stamp {
        Some(stamp) => stamp(&signature)?,
        None => None,
    };
    let unsigned_attrs = match token {
        Some(token) => {
            let mut set = SetOfVec::new();
            set.insert(attr(
                crate::tsp::OID_SIGNATURE_TIME_STAMP_TOKEN,
                Any::from_der(&token).map_err(fmt)?,
            )?)
            .map_err(fmt)?;
            Some(set)
        }
        None => None,
    };
    let digest_alg = alg.digest().identifier();
    let signer = SignerInfo {
        version: CmsVersion::V1,
        sid: SignerIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
            issuer: cert.tbs_certificate().issuer().clone(),
            serial_number: cert.tbs_certificate().serial_number().clone(),
        }),
        digest_alg: digest_alg.clone(),
        signed_attrs: Some(attrs),
        signature_algorithm: alg.signature_algorithm(),
        signature: OctetString::new(signature).map_err(fmt)?,
        unsigned_attrs,
    };
    let mut digests = SetOfVec::new();
    digests.insert(digest_alg).map_err(fmt)?;
    let mut certs = SetOfVec::new();
    certs
        .insert(CertificateChoices::Certificate(cert))
        .map_err(fmt)?;
    for c in chain {
        let c = Certificate::from_der(c).map_err(|e| {
            SignError::Format(hsm::text!(
                "signing.chain_certificate_damaged",
                "a chain certificate is damaged: {{error}}",
                error = e
            ))
        })?;
        certs
            .insert(CertificateChoices::Certificate(c))
            .map_err(fmt)?;
    }
    let mut signers = SetOfVec::new();
    signers.insert(signer).map_err(fmt)?;
    let sd = SignedData {
        version: CmsVersion::V1,
        digest_algorithms: digests,
        encap_content_info: EncapsulatedContentInfo {
            econtent_type: OID_DATA,
            econtent: None,
        },
        certificates: Some(CertificateSet(certs)),
        crls: None,
        signer_infos: SignerInfos(signers),
    };
    let ci = ContentInfo {
        content_type: OID_SIGNED_DATA,
        content: Any::encode_from(&sd).map_err(fmt)?,
    };
    ci.to_der().map_err(fmt)
}

/// What a parsed `.p7s` says.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub digest_alg: DigestAlg,
    pub message_digest: Vec<u8>,
    pub signed_attrs_der: Vec<u8>,
    pub signature_algorithm: AlgorithmIdentifierOwned,
    pub signature: Vec<u8>,
    /// The signer's certificate (DER), when included.
    pub certificate: Option<Vec<u8>>,
    pub signing_time: Option<String>,
    /// The `signatureTimeStampToken` over the signature value (DER), when there is one.
    pub timestamp_token: Option<Vec<u8>>,
}

/// Parse a detached `.p7s` with exactly one signer and signed attributes.
pub fn parse(p7s: &[u8]) -> Result<Parsed> {
    let mut signers = parse_signers(p7s)?;
    match signers.len() {
        1 => Ok(signers.remove(0)),
        _ => Err(not_checkable(hsm::text!(
            "signing.cms.one_signer",
            "exactly one signer is supported"
        ))),
    }
}

/// Parse a detached `.p7s` with one or more signers (a dual-signed `.p7s` has one per
/// key), each with signed attributes; in the order of its `signerInfos`.
pub fn parse_signers(p7s: &[u8]) -> Result<Vec<Parsed>> {
    let sd = signed_data(p7s)?;
    if sd.signer_infos.0.is_empty() {
        return Err(not_checkable(hsm::text!(
            "signing.cms.no_signer",
            "it has no signer"
        )));
    }
    sd.signer_infos
        .0
        .iter()
        .map(|signer| parse_signer(&sd, signer))
        .collect()
}

/// The detached `SignedData` of a `.p7s`, its own fields held to RFC 5652.
fn signed_data(p7s: &[u8]) -> Result<SignedData> {
    let bad = not_checkable;
    let ci = ContentInfo::from_der(p7s).map_err(|e| bad(der_error(e)))?;
    if ci.content_type != OID_SIGNED_DATA {
        return Err(bad(hsm::text!(
            "signing.cms.not_signed_data",
            "the content is not SignedData"
        )));
    }
    let sd: SignedData = ci
        .content
        .decode_as()
        .map_err(|e: der::Error| bad(der_error(e)))?;
    if sd.encap_content_info.econtent.is_some() {
        return Err(bad(hsm::text!(
            "signing.cms.attached",
            "it carries the content (attached); a detached signature was expected"
        )));
    }
    if !matches!(sd.version, CmsVersion::V1 | CmsVersion::V3) {
        return Err(bad(hsm::text!(
            "signing.cms.version",
            "unexpected SignedData or SignerInfo version (RFC 5652 5.1, 5.3)"
        )));
    }
    if sd.encap_content_info.econtent_type != OID_DATA {
        return Err(bad(hsm::text!(
            "signing.cms.content_type",
            "the encapsulated content type is not id-data"
        )));
    }
    Ok(sd)
}

/// One signer of `sd`, checked as [`parse`] checks the only one.
fn parse_signer(sd: &SignedData, signer: &SignerInfo) -> Result<Parsed> {
    let bad = not_checkable;
    // The parts of SignedData outside the signed attributes are held to RFC 5652 too, so
    // that no byte of a signature file can change while it still verifies (the embedded
    // certificate aside: CMS leaves it unsigned; pin the signer's key to rule it out).
    let sid_version = match &signer.sid {
        SignerIdentifier::IssuerAndSerialNumber(_) => CmsVersion::V1,
        SignerIdentifier::SubjectKeyIdentifier(_) => CmsVersion::V3,
    };
    if signer.version != sid_version {
        return Err(bad(hsm::text!(
            "signing.cms.version",
            "unexpected SignedData or SignerInfo version (RFC 5652 5.1, 5.3)"
        )));
    }
    if !sd.digest_algorithms.iter().any(|d| d == &signer.digest_alg) {
        return Err(bad(hsm::text!(
            "signing.cms.digest_not_listed",
            "the signer's digest algorithm is not among SignedData's digestAlgorithms"
        )));
    }
    let attrs = signer.signed_attrs.as_ref().ok_or_else(|| {
        bad(hsm::text!(
            "signing.cms.no_signed_attributes",
            "no signed attributes"
        ))
    })?;
    let digest_alg = DigestAlg::from_oid(signer.digest_alg.oid).ok_or_else(|| {
        bad(hsm::text!(
            "signing.cms.digest_algorithm",
            "digest algorithm {{oid}}",
            oid = signer.digest_alg.oid
        ))
    })?;
    let SignedAttrValues {
        message_digest,
        content_type_ok,
        signing_time,
        signing_cert_hash,
    } = read_signed_attributes(attrs)?;
    if !content_type_ok {
        return Err(bad(hsm::text!(
            "signing.cms.content_type_attribute",
            "the content-type attribute is missing or not id-data"
        )));
    }
    // The signer's certificate: the one the signer identifier names.
    let certificate = signer_certificate(sd, signer);
    if let (Some(hash), Some(cert)) = (&signing_cert_hash, &certificate) {
        if hash.as_slice() != Sha256::digest(cert).as_slice() {
            return Err(bad(hsm::text!("signing.cms.signing_certificate_mismatch", "the certificate it carries is not the one its signingCertificateV2 attribute names")));
        }
    }
    let timestamp_token = timestamp_token(signer).map_err(bad)?;
    if sd.certificates.is_some() && certificate.is_none() {
        return Err(bad(hsm::text!(
            "signing.cms.sid_mismatch",
            "the signer identifier does not name the certificate it carries"
        )));
    }
    Ok(Parsed {
        digest_alg,
        message_digest: message_digest.ok_or_else(|| {
            bad(hsm::text!(
                "signing.cms.no_message_digest",
                "no message-digest attribute"
            ))
        })?,
        signed_attrs_der: attrs.to_der().map_err(fmt)?,
        signature_algorithm: signer.signature_algorithm.clone(),
        signature: signer.signature.as_bytes().to_vec(),
        certificate,
        signing_time,
        timestamp_token,
    })
}

fn not_checkable(why: hsm::Text) -> SignError {
    SignError::Format(
        hsm::text!(
            "signing.cms.not_checkable",
            "not a detached CMS signature this console can check: {{why}}",
            why = why.text
        )
        .nest("why", &why),
    )
}

/// What the signed attributes say (each read once, the first value of each).
struct SignedAttrValues {
    message_digest: Option<Vec<u8>>,
    content_type_ok: bool,
    signing_time: Option<String>,
    signing_cert_hash: Option<Vec<u8>>,
}

fn read_signed_attributes(attrs: &SignedAttributes) -> Result<SignedAttrValues> {
    let bad = not_checkable;
    let mut message_digest = None;
    let mut content_type_ok = false;
    let mut signing_time = None;
    let mut signing_cert_hash = None;
    for a in attrs.iter() {
        let v = a.values.iter().next();
        if a.oid == OID_MESSAGE_DIGEST {
            message_digest = v
                .and_then(|v| v.decode_as::<OctetString>().ok())
                .map(|o| o.as_bytes().to_vec());
        } else if a.oid == OID_CONTENT_TYPE {
            content_type_ok =
                v.and_then(|v| v.decode_as::<ObjectIdentifier>().ok()) == Some(OID_DATA);
        } else if a.oid == OID_SIGNING_CERTIFICATE_V2 {
            let ess = v
                .and_then(|v| v.decode_as::<SigningCertificateV2>().ok())
                .ok_or_else(|| {
                    bad(hsm::text!(
                        "signing.cms.signing_certificate_unreadable",
                        "the signingCertificateV2 attribute cannot be read"
                    ))
                })?;
            let first = ess.certs.first().ok_or_else(|| {
                bad(hsm::text!(
                    "signing.cms.signing_certificate_empty",
                    "the signingCertificateV2 attribute names no certificate"
                ))
            })?;
            if first
                .hash_algorithm
                .as_ref()
                .is_some_and(|h| h.oid != OID_SHA256)
            {
                return Err(bad(hsm::text!(
                    "signing.cms.signing_certificate_hash",
                    "signingCertificateV2 with a hash other than SHA-256"
                )));
            }
            signing_cert_hash = Some(first.cert_hash.as_bytes().to_vec());
        } else if a.oid == OID_SIGNING_TIME {
            signing_time = v
                .and_then(|v| v.decode_as::<UtcTime>().ok())
                .map(|t| t.to_date_time().to_string());
        }
    }
    Ok(SignedAttrValues {
        message_digest,
        content_type_ok,
        signing_time,
        signing_cert_hash,
    })
}

/// The signer's certificate: the one the signer identifier names.
fn signer_certificate(sd: &SignedData, signer: &SignerInfo) -> Option<Vec<u8>> {
    sd.certificates.as_ref().and_then(|c| {
        c.0.iter().find_map(|cc| match (cc, &signer.sid) {
            (CertificateChoices::Certificate(c), SignerIdentifier::IssuerAndSerialNumber(ias))
                if c.tbs_certificate().issuer() == &ias.issuer
                    && c.tbs_certificate().serial_number() == &ias.serial_number =>
            {
                c.to_der().ok()
            }
            (CertificateChoices::Certificate(c), SignerIdentifier::SubjectKeyIdentifier(_)) => {
                c.to_der().ok()
            }
            _ => None,
        })
    })
}

/// The `signatureTimeStampToken` among a signer's unsigned attributes, if any (other
/// unsigned attributes are left alone, as before); two tokens are refused.
fn timestamp_token(signer: &SignerInfo) -> std::result::Result<Option<Vec<u8>>, hsm::Text> {
    let Some(attrs) = &signer.unsigned_attrs else {
        return Ok(None);
    };
    let mut tokens = attrs
        .iter()
        .filter(|a| a.oid == crate::tsp::OID_SIGNATURE_TIME_STAMP_TOKEN)
        .flat_map(|a| a.values.iter());
    match (tokens.next(), tokens.next()) {
        (None, _) => Ok(None),
        (Some(t), None) => t.to_der().map(Some).map_err(der_error),
        (Some(_), Some(_)) => Err(hsm::text!(
            "signing.cms.two_timestamp_tokens",
            "more than one signatureTimeStampToken"
        )),
    }
}

/// Check a parsed signature against the content's digest (computed by the caller with
/// `parsed.digest_alg`) and a public key: `pinned` if given, else the included
/// certificate's. Returns the key that verified and the scheme.
pub fn verify(
    parsed: &Parsed,
    content_digest: &[u8],
    pinned: Option<&PublicKey>,
) -> Result<(PublicKey, SigAlg)> {
    let pk = match (pinned, &parsed.certificate) {
        (Some(p), Some(c)) => {
            let (_, cpk) = crate::cert::public_key(c)?;
            if &cpk != p {
                return Err(SignError::Invalid(hsm::text!(
                    "signing.cms.certificate_not_for_key",
                    "the certificate in the signature is not for the expected public key"
                )));
            }
            p.clone()
        }
        (Some(p), None) => p.clone(),
        (None, Some(c)) => crate::cert::public_key(c)?.1,
        (None, None) => {
            return Err(SignError::Format(hsm::text!(
                "signing.cms.no_certificate",
                "the signature includes no certificate; give the signer's public key"
            )))
        }
    };
    let alg = SigAlg::from_identifier(&parsed.signature_algorithm, &pk)?;
    if parsed.digest_alg != alg.digest()
        && !matches!(alg, SigAlg::MlDsa { .. } | SigAlg::SlhDsa { .. })
    {
        return Err(SignError::Invalid(hsm::text!(
            "signing.cms.wrong_digest",
            "{{alg}} signatures use {{expected}}, not {{digest}}",
            alg = alg.name(),
            expected = alg.digest(),
            digest = parsed.digest_alg
        )));
    }
    if parsed.message_digest != content_digest {
        return Err(SignError::Invalid(hsm::text!(
            "signing.cms.digest_mismatch",
            "the file's digest does not match the signed message digest: the file is not the one that was signed"
        )));
    }
    alg.verify(&pk, &parsed.signed_attrs_der, &[], &parsed.signature)?;
    Ok((pk, alg))
}

/// The certificate inside, if any (to show who signed).
pub fn certificate(p: &Parsed) -> Option<Certificate> {
    p.certificate
        .as_ref()
        .and_then(|c| Certificate::from_der(c).ok())
}
