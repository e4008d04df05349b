//! Certificates for HSM keys: a self-signed X.509 v3 certificate or a PKCS#10 request,
//! signed by the key on the token. The CMS format names its signer by a certificate; for a
//! key without one on the token, the console issues a self-signed one.
//!
//! `x509-cert` keeps `TbsCertificate`'s fields private outside its builder, and the builder
//! wants a software `Signer`; the to-be-signed structure is therefore declared here with the
//! same ASN.1 (and the crate's public component types), and the result is parsed back with
//! `x509-cert` to prove it is well formed.

use std::str::FromStr;
use std::time::Duration;

use der::asn1::{BitString, OctetString};
use der::{Decode, Encode, Sequence};
use sha2::{Digest, Sha256};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::ext::pkix::{BasicConstraints, KeyUsage, KeyUsages, SubjectKeyIdentifier};
use x509_cert::ext::Extension;
use x509_cert::name::Name;
use x509_cert::request::{CertReq, CertReqInfo};
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::Validity;
use x509_cert::Certificate;

use hsm::pubkey::PublicKey;

use crate::alg::SigAlg;
use crate::{Result, SignError};

#[derive(Sequence)]
struct Tbs {
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
    version: u8,
    serial_number: SerialNumber,
    signature: AlgorithmIdentifierOwned,
    issuer: Name,
    validity: Validity,
    subject: Name,
    subject_public_key_info: SubjectPublicKeyInfoOwned,
    #[asn1(context_specific = "3", tag_mode = "EXPLICIT")]
    extensions: Vec<Extension>,
}

#[derive(Sequence)]
struct Cert {
    tbs: Tbs,
    signature_algorithm: AlgorithmIdentifierOwned,
    signature: BitString,
}

fn ext(oid: der::asn1::ObjectIdentifier, critical: bool, value: &impl Encode) -> Result<Extension> {
    let v = value.to_der().map_err(fmt)?;
    Ok(Extension {
        extn_id: oid,
        critical,
        extn_value: OctetString::new(v).map_err(fmt)?,
    })
}

fn fmt(e: der::Error) -> SignError {
    SignError::Format(hsm::text!("signing.der_error", "{{error}}", error = e))
}

/// Parse `CN=…,O=…` (RFC 4514).
pub fn parse_subject(subject: &str) -> Result<Name> {
    Name::from_str(subject).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.not_a_distinguished_name",
            "'{{subject}}' is not a distinguished name such as CN=Release signing,O=Example: {{error}}",
            subject = subject,
            error = e
        ))
    })
}

/// A self-signed certificate for `public_key`, valid for `days` from now, signed through
/// `sign` (which asks the HSM to sign the DER bytes it is given with `alg`).
pub fn self_signed(
    public_key: &PublicKey,
    alg: SigAlg,
    subject: &str,
    days: u32,
    sign: &mut dyn FnMut(&[u8]) -> Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    let name = parse_subject(subject)?;
    let mut serial = [0u8; 16];
    getrandom::fill(&mut serial).map_err(|e| {
        SignError::Format(hsm::text!("signing.no_randomness", "{{error}}", error = e))
    })?;
    serial[0] &= 0x7F; // positive
    serial[0] |= 0x40; // and exactly 16 bytes
    let spki = public_key.spki();
    let ski = Sha256::digest(spki.subject_public_key.raw_bytes());
    let ku = KeyUsages::DigitalSignature | KeyUsages::NonRepudiation;
    let tbs = Tbs {
        version: 2,
        serial_number: SerialNumber::new(&serial).map_err(fmt)?,
        signature: alg.signature_algorithm(),
        issuer: name.clone(),
        validity: Validity::from_now(Duration::from_secs(u64::from(days) * 86_400)).map_err(fmt)?,
        subject: name,
        subject_public_key_info: spki,
        extensions: vec![
            ext(
                const_oid::db::rfc5280::ID_CE_BASIC_CONSTRAINTS,
                true,
                &BasicConstraints {
                    ca: false,
                    path_len_constraint: None,
                },
            )?,
            ext(const_oid::db::rfc5280::ID_CE_KEY_USAGE, true, &KeyUsage(ku))?,
            ext(
                const_oid::db::rfc5280::ID_CE_SUBJECT_KEY_IDENTIFIER,
                false,
                &SubjectKeyIdentifier(OctetString::new(&ski[..20]).map_err(fmt)?),
            )?,
        ],
    };
    let tbs_der = tbs.to_der().map_err(fmt)?;
    let signature = sign(&tbs_der)?;
    alg.verify(public_key, &tbs_der, &[], &signature)
        .map_err(SignError::into_self_check)?;
    let cert = Cert {
        tbs,
        signature_algorithm: alg.signature_algorithm(),
        signature: BitString::from_bytes(&signature).map_err(fmt)?,
    };
    let der = cert.to_der().map_err(fmt)?;
    Certificate::from_der(&der).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.certificate_does_not_parse_back",
            "the certificate does not parse back: {{error}}",
            error = e
        ))
    })?;
    Ok(der)
}

/// A PKCS#10 certificate signing request.
pub fn csr(
    public_key: &PublicKey,
    alg: SigAlg,
    subject: &str,
    sign: &mut dyn FnMut(&[u8]) -> Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    let info = CertReqInfo {
        version: x509_cert::request::Version::V1,
        subject: parse_subject(subject)?,
        public_key: public_key.spki(),
        attributes: Default::default(),
    };
    let info_der = info.to_der().map_err(fmt)?;
    let signature = sign(&info_der)?;
    alg.verify(public_key, &info_der, &[], &signature)
        .map_err(SignError::into_self_check)?;
    let req = CertReq {
        info,
        algorithm: alg.signature_algorithm(),
        signature: BitString::from_bytes(&signature).map_err(fmt)?,
    };
    req.to_der().map_err(fmt)
}

/// The public key of a certificate, and whether its own signature verifies with it (for
/// self-signed certificates).
pub fn public_key(cert_der: &[u8]) -> Result<(Certificate, PublicKey)> {
    let c = Certificate::from_der(cert_der).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.not_x509_certificate",
            "not an X.509 certificate: {{error}}",
            error = e
        ))
    })?;
    let spki = c.tbs_certificate().subject_public_key_info();
    let pk = PublicKey::from_spki_der(&spki.to_der().map_err(fmt)?).map_err(crate::unusable_key)?;
    Ok((c, pk))
}

pub fn to_pem(label: &str, der_bytes: &[u8]) -> String {
    der::pem::encode_string(label, der::pem::LineEnding::LF, der_bytes).expect("PEM encodes")
}
