//! Time-stamping a signature made earlier: which signature values of a CMS `.p7s` or a
//! JSON bundle still want an RFC 3161 token, and the signature with the tokens added —
//! for a CMS, as the unsigned attribute `id-aa-signatureTimeStampToken` of each signer
//! that has none (RFC 3161 appendix A); for a bundle, as its `timestamp_token`. Nothing
//! signed changes: a CMS is only rewritten when decoding and encoding it again gives its
//! exact bytes (DER), and a bundle only when every field it has is one this console keeps.
//! The tokens themselves are asked for and checked by the caller (the console's TSA client).

use base64::Engine;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerInfo};
use der::asn1::SetOfVec;
use der::{Any, Decode, Encode};
use x509_cert::attr::Attribute;

use crate::alg::DigestAlg;
use crate::cms::OID_SIGNED_DATA;
use crate::formats::Bundle;
use crate::tsp::OID_SIGNATURE_TIME_STAMP_TOKEN;

/// Why a signature cannot be given a time-stamp token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestampError {
    /// Not a CMS `SignedData` (nor a bundle).
    #[error("it is neither a CMS signature (.p7s) nor a signature bundle (.sig.json): {0}")]
    NotASignature(String),
    /// Encoding it again would not give the same bytes (BER, or DER this code reads
    /// differently): rewriting it could break what is signed.
    #[error("its encoding is not DER as this console writes it back, so adding a token could change signed bytes; it was left as it is")]
    NotDer,
    /// Every signer already carries a token.
    #[error("it already carries a time-stamp token; nothing was changed")]
    AlreadyStamped,
    /// The bundle has fields this console does not know (rewriting would drop them).
    #[error("the bundle has fields this console does not know, which rewriting it would drop; it was left as it is")]
    UnknownBundleFields,
}

impl RestampError {
    /// The reason as the officer reads it (catalog keys under `signing.`).
    pub fn msg(&self) -> hsm::Text {
        match self {
            RestampError::NotASignature(e) => hsm::text!(
                "signing.restamp_not_a_signature",
                "it is neither a CMS signature (.p7s) nor a signature bundle (.sig.json): {{error}}",
                error = e
            ),
            RestampError::NotDer => hsm::text!(
                "signing.restamp_not_der",
                "its encoding is not DER as this console writes it back, so adding a token \
                 could change signed bytes; it was left as it is"
            ),
            RestampError::AlreadyStamped => hsm::text!(
                "signing.restamp_already_stamped",
                "it already carries a time-stamp token; nothing was changed"
            ),
            RestampError::UnknownBundleFields => hsm::text!(
                "signing.restamp_bundle_unknown_fields",
                "the bundle has fields this console does not know, which rewriting it would \
                 drop; it was left as it is"
            ),
        }
    }
}

pub type Result<T> = std::result::Result<T, RestampError>;

fn not_cms(e: impl std::fmt::Display) -> RestampError {
    RestampError::NotASignature(e.to_string())
}

/// A signature value that wants a token: the hash the TSA is sent, and the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub alg: DigestAlg,
    pub signature: Vec<u8>,
}

/// A detached or attached CMS signature, opened to gain tokens.
pub struct CmsRestamp {
    ci: ContentInfo,
    signers: Vec<SignerInfo>,
    sd: SignedData,
}

fn has_token(s: &SignerInfo) -> bool {
    s.unsigned_attrs
        .as_ref()
        .is_some_and(|a| a.iter().any(|a| a.oid == OID_SIGNATURE_TIME_STAMP_TOKEN))
}

impl CmsRestamp {
    /// Open a `.p7s` (DER `ContentInfo` with `SignedData`), refusing anything that would
    /// not be written back byte for byte.
    pub fn open(p7s: &[u8]) -> Result<CmsRestamp> {
        let ci = ContentInfo::from_der(p7s).map_err(not_cms)?;
        if ci.content_type != OID_SIGNED_DATA {
            return Err(not_cms(format!("content type {}", ci.content_type)));
        }
        let sd: SignedData = ci.content.decode_as().map_err(not_cms)?;
        let same = ci.to_der().ok().as_deref() == Some(p7s)
            && sd.to_der().ok() == ci.content.to_der().ok();
        if !same {
            return Err(RestampError::NotDer);
        }
        let signers = sd.signer_infos.0.iter().cloned().collect();
        Ok(CmsRestamp { ci, signers, sd })
    }

    /// The signers without a token, in order (index, what to stamp); refused when every
    /// signer has one. The imprint is hashed with the signer's digest (SHA-256 when that
    /// is not SHA-2).
    pub fn wanted(&self) -> Result<Vec<(usize, Wanted)>> {
        let w: Vec<(usize, Wanted)> = self
            .signers
            .iter()
            .enumerate()
            .filter(|(_, s)| !has_token(s))
            .map(|(i, s)| {
                (
                    i,
                    Wanted {
                        alg: DigestAlg::from_oid(s.digest_alg.oid).unwrap_or(DigestAlg::Sha256),
                        signature: s.signature.as_bytes().to_vec(),
                    },
                )
            })
            .collect();
        if w.is_empty() {
            return Err(RestampError::AlreadyStamped);
        }
        Ok(w)
    }

    /// The `.p7s` with `tokens` (signer index, token DER) added as each signer's
    /// `signatureTimeStampToken`; its other unsigned attributes are kept.
    pub fn with_tokens(mut self, tokens: &[(usize, Vec<u8>)]) -> Result<Vec<u8>> {
        for (i, token) in tokens {
            let s = self
                .signers
                .get_mut(*i)
                .ok_or_else(|| not_cms(format!("no signer {i}")))?;
            if has_token(s) {
                return Err(RestampError::AlreadyStamped);
            }
            let mut values = SetOfVec::new();
            values
                .insert(Any::from_der(token).map_err(not_cms)?)
                .map_err(not_cms)?;
            let mut attrs = s.unsigned_attrs.take().unwrap_or_default();
            attrs
                .insert(Attribute {
                    oid: OID_SIGNATURE_TIME_STAMP_TOKEN,
                    values,
                })
                .map_err(not_cms)?;
            s.unsigned_attrs = Some(attrs);
        }
        self.sd.signer_infos.0 = SetOfVec::try_from(self.signers).map_err(not_cms)?;
        self.ci.content = Any::encode_from(&self.sd).map_err(not_cms)?;
        self.ci.to_der().map_err(not_cms)
    }
}

/// A JSON bundle opened to gain its token.
pub struct BundleRestamp {
    bundle: Bundle,
}

impl BundleRestamp {
    /// Open a bundle without a token, whose every field this console writes back.
    pub fn open(text: &str) -> Result<BundleRestamp> {
        let bundle = Bundle::parse(text).map_err(|e| RestampError::NotASignature(e.to_string()))?;
        let as_read: serde_json::Value = serde_json::from_str(text).map_err(not_cms)?;
        if serde_json::to_value(&bundle).ok() != Some(as_read) {
            return Err(RestampError::UnknownBundleFields);
        }
        if bundle.timestamp_token.is_some() {
            return Err(RestampError::AlreadyStamped);
        }
        Ok(BundleRestamp { bundle })
    }

    /// The signature value and the hash of the bundle's scheme.
    pub fn wanted(&self) -> Result<Wanted> {
        let signature = base64::engine::general_purpose::STANDARD
            .decode(&self.bundle.signature)
            .map_err(|e| not_cms(format!("the signature is not base64: {e}")))?;
        Ok(Wanted {
            alg: self.bundle.scheme.digest(),
            signature,
        })
    }

    /// The bundle, as the console writes bundles, with `token` (DER) as its
    /// `timestamp_token`.
    pub fn with_token(mut self, token: &[u8]) -> Result<Vec<u8>> {
        self.bundle.timestamp_token = Some(base64::engine::general_purpose::STANDARD.encode(token));
        serde_json::to_vec_pretty(&self.bundle).map_err(not_cms)
    }
}
