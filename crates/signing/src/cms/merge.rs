//! Dual signing in one `.p7s`: the signer of a second detached CMS signature added to a
//! first one (RFC 5652 §5.1: `signerInfos` is a SET, one `SignerInfo` per signer), with its
//! certificates and its digest algorithm. What was signed does not change: the first
//! `.p7s` is only rewritten when decoding and encoding it again gives its exact bytes
//! (DER), as `restamp` does, and every signer of both — the one added and those already
//! there — must carry the content's digest in its own algorithm (they may differ: SHA-256
//! for ECDSA P-256, SHA-512 for Ed25519 and ML-DSA), so that a `.p7s` over another file is
//! refused before anything is written.

use cms::cert::CertificateChoices;
use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{CertificateSet, SignedData};
use der::asn1::SetOfVec;
use der::{Any, Decode, Encode};

use super::{fmt, parse_signers, read_signed_attributes, signed_data, SignedAttrValues};
use crate::alg::DigestAlg;
use crate::{Result, SignError};

/// `existing` (DER, one or more signers) with the one signer of `addition` (DER) added;
/// `content_digest` gives the content's digest in an algorithm. Refused, naming why, when
/// either is not a detached CMS signature this console writes back byte for byte, when a
/// signer's message digest is not the content's, or when the added signer's certificate
/// signs `existing` already.
pub fn add_signer(
    existing: &[u8],
    addition: &[u8],
    content_digest: &dyn Fn(DigestAlg) -> Option<Vec<u8>>,
) -> Result<Vec<u8>> {
    let mut sd = exact_signed_data(existing)?;
    let add = exact_signed_data(addition)?;
    let [signer] = add.signer_infos.0.as_slice() else {
        return Err(SignError::Format(hsm::text!(
            "signing.cms.merge_one_signer",
            "the signature to add must have exactly one signer"
        )));
    };
    for s in sd.signer_infos.0.iter().chain([signer]) {
        same_content(s, content_digest)?;
    }
    if sd.signer_infos.0.iter().any(|s| s.sid == signer.sid) {
        return Err(SignError::Format(hsm::text!(
            "signing.cms.merge_same_signer",
            "the certificate of the signer to add signs it already"
        )));
    }
    if !sd.digest_algorithms.iter().any(|d| d == &signer.digest_alg) {
        sd.digest_algorithms
            .insert(signer.digest_alg.clone())
            .map_err(fmt)?;
    }
    let mut certs: Vec<CertificateChoices> = sd
        .certificates
        .take()
        .map(|c| c.0.into_vec())
        .unwrap_or_default();
    for c in add.certificates.iter().flat_map(|c| c.0.iter()) {
        if !certs.contains(c) {
            certs.push(c.clone());
        }
    }
    if !certs.is_empty() {
        sd.certificates = Some(CertificateSet(SetOfVec::try_from(certs).map_err(fmt)?));
    }
    sd.signer_infos.0.insert(signer.clone()).map_err(fmt)?;
    // RFC 5652 §5.1: version 3 when any signer is named by its subject key identifier.
    if sd
        .signer_infos
        .0
        .iter()
        .any(|s| s.version == CmsVersion::V3)
    {
        sd.version = CmsVersion::V3;
    }
    let ci = ContentInfo {
        content_type: super::OID_SIGNED_DATA,
        content: Any::encode_from(&sd).map_err(fmt)?,
    };
    let merged = ci.to_der().map_err(fmt)?;
    // What was written parses back with every signer, each as the verifier reads it.
    let n = parse_signers(&merged)?.len();
    debug_assert_eq!(n, sd.signer_infos.0.len());
    Ok(merged)
}

/// The `SignedData` of a detached `.p7s` that encodes back to exactly its bytes.
fn exact_signed_data(p7s: &[u8]) -> Result<SignedData> {
    let sd = signed_data(p7s)?;
    let ci = ContentInfo::from_der(p7s).map_err(fmt)?;
    let same =
        ci.to_der().ok().as_deref() == Some(p7s) && sd.to_der().ok() == ci.content.to_der().ok();
    if !same {
        return Err(SignError::Format(hsm::text!(
            "signing.cms.merge_not_der",
            "its encoding is not DER as this console writes it back, so adding a signer could change signed bytes"
        )));
    }
    Ok(sd)
}

/// A signer whose message digest is the content's, in the signer's digest algorithm.
fn same_content(
    s: &cms::signed_data::SignerInfo,
    content_digest: &dyn Fn(DigestAlg) -> Option<Vec<u8>>,
) -> Result<()> {
    let alg = DigestAlg::from_oid(s.digest_alg.oid).ok_or_else(|| {
        SignError::Format(hsm::text!(
            "signing.cms.digest_algorithm",
            "digest algorithm {{oid}}",
            oid = s.digest_alg.oid
        ))
    })?;
    let attrs = s.signed_attrs.as_ref().ok_or_else(|| {
        SignError::Format(hsm::text!(
            "signing.cms.no_signed_attributes",
            "no signed attributes"
        ))
    })?;
    let SignedAttrValues { message_digest, .. } = read_signed_attributes(attrs)?;
    match (message_digest, content_digest(alg)) {
        (Some(m), Some(d)) if m == d => Ok(()),
        _ => Err(SignError::Invalid(hsm::text!(
            "signing.cms.merge_other_content",
            "its signers do not all carry the file's {{digest}} digest: the signatures are over different content",
            digest = alg
        ))),
    }
}
