//! The signing key: the private key object, its public half, its scheme and its certificate
//! on the token (by `CKA_ID`).

use hsm::keys as hk;
use hsm::pubkey::PublicKey;
use p11::sys::*;
use p11::{Session, Template};
use signing::alg::SigAlg;

use super::SigningKeyView;
use crate::core::error::ApiResult;
use crate::sign::Signing;

/// Everything a batch knows about its key, read once before anything is signed.
pub struct SigningKey {
    pub alg: SigAlg,
    pub pk: PublicKey,
    pub summary: hk::ObjectSummary,
    /// DER; CMS needs it (the console issues a self-signed one on first use).
    pub cert: Option<Vec<u8>>,
    /// The certificate's issuers found on the token (DER, nearest first), which CMS
    /// signatures carry with it.
    pub chain: Vec<Vec<u8>>,
    /// ML-DSA context (raw and bundle formats).
    pub context: Vec<u8>,
    pub token_serial: String,
    /// The OpenPGP creation time stored on the token, once fixed (OpenPGP formats).
    pub openpgp_created: Option<u32>,
}

impl SigningKey {
    pub fn view(&self) -> SigningKeyView {
        view(&self.summary, &self.pk, self.alg, self.cert.as_deref())
    }

    /// The key and fingerprint as the audit trail records them.
    pub fn audit_json(&self) -> serde_json::Value {
        serde_json::json!({
            "label": self.summary.label,
            "id": self.summary.id_hex,
            "fingerprint": self.pk.fingerprint(),
        })
    }
}

/// The public key of a private key object that may sign, and its summary.
pub(super) fn key_material(
    s: &Session,
    handle: u64,
) -> hsm::Result<(hk::ObjectSummary, PublicKey)> {
    let summary = hk::summary(s, handle)?;
    if summary.class != "PRIVATE_KEY" || !summary.capabilities.sign {
        return Err(hsm::HsmError::Refused(crate::text!(
            "errors.not_a_signing_key",
            "'{{label}}' is not a private key that may sign",
            label = summary.label
        )));
    }
    let ph = hk::public_for_private(s, handle)?;
    Ok((summary, hk::read_public_key(s, ph)?))
}

/// The certificate stored with the key's `CKA_ID`, DER. When there are several (the
/// console's self-signed one, then the one a CA issued and the officer imported), the
/// CA-issued one wins, and among those the one valid longest.
pub(crate) fn find_certificate(s: &Session, id: &[u8]) -> p11::Result<Option<Vec<u8>>> {
    if id.is_empty() {
        return Ok(None);
    }
    let found = s.find_objects(
        &mut Template::new()
            .ulong(CKA_CLASS, CKO_CERTIFICATE)
            .bytes(CKA_ID, id),
    )?;
    let mut best: Option<((bool, String), Vec<u8>)> = None;
    for h in found {
        if let Some(v) = s.get_attribute(h, CKA_VALUE)?.bytes() {
            let rank = match signing::objects::describe(v) {
                Ok(i) => (!i.self_signed, i.not_after),
                Err(_) => (false, String::new()),
            };
            if best.as_ref().is_none_or(|(r, _)| rank > *r) {
                best = Some((rank, v.to_vec()));
            }
        }
    }
    Ok(best.map(|(_, v)| v))
}

/// The issuers of `cert` among the token's certificates, nearest first.
pub(super) fn find_chain(s: &Session, cert: &[u8]) -> hsm::Result<Vec<Vec<u8>>> {
    let pool: Vec<Vec<u8>> = hsm::objects::certificates(s)?
        .into_iter()
        .map(|(_, _, d)| d)
        .collect();
    Ok(signing::objects::build_chain(cert, &pool))
}

/// Keep a certificate on the token beside its key.
pub(super) fn store_certificate(
    s: &Session,
    id: &[u8],
    label: &str,
    der_bytes: &[u8],
) -> p11::Result<()> {
    let (cert, _) = signing::cert::public_key(der_bytes)
        .map_err(|e| p11::Error::InvalidArgument(e.to_string()))?;
    let subject = der::Encode::to_der(cert.tbs_certificate().subject())
        .map_err(|e| p11::Error::InvalidArgument(e.to_string()))?;
    let mut t = Template::new()
        .ulong(CKA_CLASS, CKO_CERTIFICATE)
        .ulong(CKA_CERTIFICATE_TYPE, CKC_X_509)
        .bool(CKA_TOKEN, true)
        .bool(CKA_PRIVATE, false)
        .text(CKA_LABEL, label)
        .bytes(CKA_ID, id)
        .bytes(CKA_SUBJECT, &subject)
        .bytes(CKA_VALUE, der_bytes);
    s.create_object(&mut t).map(|_| ())
}

pub(super) fn view(
    summary: &hk::ObjectSummary,
    pk: &PublicKey,
    scheme: SigAlg,
    cert: Option<&[u8]>,
) -> SigningKeyView {
    let info = cert.and_then(|c| signing::objects::describe(c).ok());
    SigningKeyView {
        handle: summary.handle,
        label: summary.label.clone(),
        id_hex: summary.id_hex.clone(),
        algorithm: summary.algorithm.clone(),
        scheme,
        fingerprint: pk.fingerprint(),
        hss_remaining: summary.hss_keys_remaining,
        hss_capacity: summary.hss_capacity.clone(),
        has_certificate: cert.is_some(),
        certificate_subject: info.as_ref().map(|i| i.subject.clone()),
        certificate_warnings: info
            .as_ref()
            .map(signing::objects::signing_warnings)
            .unwrap_or_default(),
        certificate_warnings_text: info
            .as_ref()
            .map(signing::objects::signing_warnings_text)
            .unwrap_or_default(),
        always_authenticate: summary.always_authenticate == Some(true),
    }
}

/// The private key by its `CKA_ID` (handles do not survive a module reinitialization, which
/// the pool may do between two files of a batch).
pub(super) fn resolve(s: &Session, summary: &hk::ObjectSummary) -> hsm::Result<u64> {
    let sel = if summary.id_hex.is_empty() {
        hk::KeySelector::Label(summary.label.clone())
    } else {
        hk::KeySelector::Id(hex::decode(&summary.id_hex).unwrap_or_default())
    };
    hk::find_one(s, &sel, Some(CKO_PRIVATE_KEY))
}

impl Signing<'_> {
    /// Private keys on the partition that can sign in the formats the console writes.
    pub async fn signing_keys(self, partition: &str) -> ApiResult<Vec<SigningKeyView>> {
        let p = self.partition_ref(partition).await?;
        Ok(p.pool
            .run_service_idempotent_async("sign.keys", |s| {
                let mut out = Vec::new();
                for o in
                    hk::list_objects(s, &mut Template::new().ulong(CKA_CLASS, CKO_PRIVATE_KEY))?
                {
                    if !o.capabilities.sign {
                        continue;
                    }
                    let (summary, pk) = match key_material(s, o.handle) {
                        Ok(m) => m,
                        Err(e) => {
                            // Not offered for signing; say why where someone can look.
                            tracing::warn!("'{}' is not offered for signing: {e}", o.label);
                            continue;
                        }
                    };
                    let Ok(alg) = SigAlg::for_key(&pk) else {
                        continue;
                    };
                    let id = hex::decode(&summary.id_hex).unwrap_or_default();
                    let cert = find_certificate(s, &id)?;
                    out.push(view(&summary, &pk, alg, cert.as_deref()));
                }
                Ok(out)
            })
            .await?)
    }
}
