//! Certificates made with the HSM key: self-signed (kept on the token beside the key, where
//! the CMS format finds it) and PKCS#10 requests. Both audited.

use serde::Serialize;
use ts_rs::TS;

use audit::Event;
use signing::alg::SigAlg;

use super::key::{key_material, store_certificate};
use super::{hsm_side, sign_error};
use crate::core::change::{Change, ChangeKind};
use crate::core::error::{ApiError, ApiResult};
use crate::core::{partitions::Partition, Core};
use crate::sign::Signing;
use hsm::keys as hk;
use hsm::roles::Action;
use std::sync::Arc;

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

impl Signing<'_> {
    /// Issue a self-signed certificate for a key (and keep it on the token by its CKA_ID,
    /// where the CMS format finds it). Audited.
    pub async fn issue_certificate(
        self,
        partition: &str,
        handle: u64,
        subject: &str,
        days: u32,
        store: bool,
    ) -> ApiResult<CertificateView> {
        self.changes()
            .apply(
                partition,
                IssueCertificate {
                    handle,
                    subject: subject.to_string(),
                    days,
                    store,
                    target: None,
                },
            )
            .await
    }

    /// A PKCS#10 request for a key, signed by it. Audited.
    pub async fn certificate_request(
        self,
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

/// A self-signed certificate made with the key the officer chose, kept on the token.
struct IssueCertificate {
    handle: u64,
    subject: String,
    days: u32,
    store: bool,
    target: Option<hk::ObjectSummary>,
}

impl Change for IssueCertificate {
    type Output = CertificateView;

    fn kind(&self) -> ChangeKind {
        ChangeKind::CertificateIssue
    }

    fn permission(&self) -> Option<Action> {
        Some(Action::UseKeys)
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        signing::cert::parse_subject(&self.subject).map_err(sign_error)?;
        let target = crate::core::change::read_target(p, "sign.cert.key", self.handle).await?;
        let ev = Event::new("cert.issue", "key")
            .resource(&target.label)
            .algorithm(&target.algorithm)
            .meta("partition", &p.id)
            .meta("key_id", &target.id_hex)
            .meta("subject_requested", &self.subject)
            .meta("stored_on_token", self.store);
        self.target = Some(target);
        Ok(ev)
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<CertificateView> {
        let (subject, days, store, refs) = (self.subject.clone(), self.days, self.store, p.clone());
        let target = self.target.clone().expect("resolved");
        let id = hex::decode(&target.id_hex).unwrap_or_default();
        let label = target.label.clone();
        let certificates = move |s: &p11::Session| -> p11::Result<Vec<u64>> {
            s.find_objects(
                &mut p11::Template::new()
                    .ulong(p11::sys::CKA_CLASS, p11::sys::CKO_CERTIFICATE)
                    .bytes(p11::sys::CKA_ID, &id)
                    .text(p11::sys::CKA_LABEL, &label),
            )
        };
        let mut before: Option<usize> = None;
        // Safe to repeat after the pool recovered: a repeat first looks for a certificate
        // the lost attempt stored (one more than before it), and makes one only if none.
        let der_bytes = p
            .pool
            .run_service_idempotent_async("sign.cert", move |s| {
                let handle = crate::core::change::locate(s, &refs, &target)?;
                if store {
                    let now = certificates(s)?;
                    match before {
                        Some(n) if now.len() > n => {
                            let last = *now.last().expect("more than before");
                            return Ok(s
                                .get_attribute(last, p11::sys::CKA_VALUE)?
                                .bytes()
                                .map(<[u8]>::to_vec)
                                .unwrap_or_default());
                        }
                        Some(_) => {}
                        None => before = Some(now.len()),
                    }
                }
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
                Ok(der_bytes)
            })
            .await?;
        let (c, pk) = signing::cert::public_key(&der_bytes).map_err(sign_error)?;
        Ok(CertificateView {
            pem: signing::cert::to_pem("CERTIFICATE", &der_bytes),
            subject: c.tbs_certificate().subject().to_string(),
            serial: c.tbs_certificate().serial_number().to_string(),
            not_after: c.tbs_certificate().validity().not_after.to_string(),
            fingerprint: pk.fingerprint(),
            stored_on_token: store,
        })
    }

    fn outcome(&self, ev: Event, r: Result<&CertificateView, &ApiError>) -> Event {
        match r {
            Ok(c) => ev
                .meta("signatures", 1)
                .meta("subject", &c.subject)
                .meta("serial", &c.serial),
            Err(_) => ev,
        }
    }
}
