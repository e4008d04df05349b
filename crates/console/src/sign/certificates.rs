//! Certificates made with the HSM key: self-signed (kept on the token beside the key, where
//! the CMS format finds it) and PKCS#10 requests. Both audited.

use serde::Serialize;
use ts_rs::TS;

use audit::Event;
use signing::alg::SigAlg;

use super::key::{key_material, store_certificate};
use super::{hsm_side, sign_error};
use crate::error::{ApiError, ApiResult};
use crate::Console;

/// Certificate issued on the fly, for the report and the audit trail.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CertificateView {
    pub pem: String,
    pub subject: String,
    pub serial: String,
    pub not_after: String,
    pub fingerprint: String,
    pub stored_on_token: bool,
}

impl Console {
    /// Issue a self-signed certificate for a key (and keep it on the token by its CKA_ID,
    /// where the CMS format finds it). Audited.
    pub async fn issue_certificate(
        &self,
        partition: &str,
        handle: u64,
        subject: &str,
        days: u32,
        store: bool,
    ) -> ApiResult<CertificateView> {
        signing::cert::parse_subject(subject).map_err(sign_error)?;
        let p = self.partition_ref(partition).await?;
        self.audit_first(
            Event::new("cert.issue.request", "key")
                .resource(subject)
                .meta("partition", &p.id)
                .meta("handle", handle),
        )
        .await?;
        let subject = subject.to_string();
        let r = p
            .pool
            .run_service_async("sign.cert", move |s| {
                let (summary, pk) = key_material(s, handle)?;
                let alg = SigAlg::for_key(&pk).map_err(unsupported_key)?;
                let der_bytes = signing::cert::self_signed(&pk, alg, &subject, days, &mut |m| {
                    Ok(alg.sign(s, handle, m, &[])?)
                })
                .map_err(hsm_side)?;
                if store {
                    store_certificate(
                        s,
                        &hex::decode(&summary.id_hex).unwrap_or_default(),
                        &summary.label,
                        &der_bytes,
                    )?;
                }
                Ok((summary, der_bytes))
            })
            .await
            .map_err(ApiError::from)
            .and_then(|(summary, der_bytes)| {
                let (c, pk) = signing::cert::public_key(&der_bytes).map_err(sign_error)?;
                Ok((
                    summary,
                    CertificateView {
                        pem: signing::cert::to_pem("CERTIFICATE", &der_bytes),
                        subject: c.tbs_certificate().subject().to_string(),
                        serial: c.tbs_certificate().serial_number().to_string(),
                        not_after: c.tbs_certificate().validity().not_after.to_string(),
                        fingerprint: pk.fingerprint(),
                        stored_on_token: store,
                    },
                ))
            });
        let ev = Event::new("cert.issue", "key").meta("partition", &p.id);
        let ev = match &r {
            Ok((s, c)) => ev
                .resource(&s.label)
                .algorithm(&s.algorithm)
                .meta("key_id", &s.id_hex)
                .meta("signatures", 1)
                .meta("subject", &c.subject)
                .meta("serial", &c.serial),
            Err(_) => ev.resource(handle.to_string()),
        };
        self.record_outcome(ev, &r).await;
        r.map(|(_, c)| c)
    }

    /// A PKCS#10 request for a key, signed by it. Audited.
    pub async fn certificate_request(
        &self,
        partition: &str,
        handle: u64,
        subject: &str,
    ) -> ApiResult<String> {
        signing::cert::parse_subject(subject).map_err(sign_error)?;
        let p = self.partition_ref(partition).await?;
        self.audit_first(
            Event::new("cert.csr.request", "key")
                .resource(subject)
                .meta("partition", &p.id)
                .meta("handle", handle),
        )
        .await?;
        let subject = subject.to_string();
        let r = p
            .pool
            .run_service_async("sign.csr", move |s| {
                let (_, pk) = key_material(s, handle)?;
                let alg = SigAlg::for_key(&pk).map_err(unsupported_key)?;
                signing::cert::csr(&pk, alg, &subject, &mut |m| {
                    Ok(alg.sign(s, handle, m, &[])?)
                })
                .map_err(hsm_side)
            })
            .await
            .map_err(ApiError::from)
            .map(|d| signing::cert::to_pem("CERTIFICATE REQUEST", &d));
        self.record_outcome(
            Event::new("cert.csr", "key")
                .resource(handle.to_string())
                .meta("partition", &p.id),
            &r,
        )
        .await;
        r
    }
}

/// A key that cannot sign certificates, as `hsm`'s refusal with the message's key.
fn unsupported_key(e: signing::SignError) -> hsm::HsmError {
    match e {
        signing::SignError::Unsupported(m) => hsm::HsmError::NotSupported(m),
        other => hsm_side(other),
    }
}
