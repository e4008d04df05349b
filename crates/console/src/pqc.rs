//! Post-quantum readiness of the partitions the console has open: every key judged under a
//! policy (`hsmc_pqc`: NIST IR 8547, CNSA 2.0, or an organisation's own file).
//!
//! A policy is named `nist` or `cnsa2`, or is a TOML file: a path, or the name of a file in
//! the data folder's `policies/` (`policies/NAME.toml`).

use std::path::PathBuf;

use hsmc_pqc::{Assessed, Counts, Policy};
use serde::Serialize;

use crate::error::{ApiError, ApiResult};
use crate::{text, Console};

/// One partition's keys, judged.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct PartitionReadiness {
    pub partition_id: String,
    pub partition_label: String,
    pub serial: String,
    pub counts: Counts,
    pub objects: Vec<Assessed>,
}

/// The readiness of every partition asked for, under one policy, on one day.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct Readiness {
    pub policy: String,
    /// Where the policy's rules come from.
    pub source: String,
    /// `YYYY-MM-DD`: the day the dates were compared with.
    pub date: String,
    pub partitions: Vec<PartitionReadiness>,
    /// All partitions together.
    pub counts: Counts,
}

impl Readiness {
    /// Something is disallowed already under the policy.
    pub fn past_due(&self) -> bool {
        self.counts.past_due > 0
    }
}

/// A fresh `urn:uuid:` (version 4) for a BOM's `serialNumber`.
fn bom_serial_number() -> ApiResult<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b)
        .map_err(|e| ApiError::new(crate::ErrorCode::Internal, format!("no randomness: {e}")))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    Ok(format!(
        "urn:uuid:{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

impl Console {
    /// The policy `choice` names: `nist`, `cnsa2`, a file's path, or the name of a file in
    /// the data folder's `policies/`. A file that is not a policy is refused with the line
    /// at fault.
    pub fn pqc_policy(&self, choice: &str) -> ApiResult<Policy> {
        if let Some(p) = Policy::builtin(choice) {
            return Ok(p);
        }
        let in_data = self
            .config()
            .data_dir
            .join("policies")
            .join(format!("{choice}.toml"));
        let path = if in_data.is_file() {
            in_data
        } else {
            PathBuf::from(choice)
        };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ApiError::invalid(text!(
                "errors.pqc_policy_unreadable",
                "There is no policy '{{policy}}': it is neither nist nor cnsa2, nor a file that can be read ({{error}}).",
                policy = choice,
                error = e
            ))
            .suggest(text!(
                "errors.pqc_policy_unreadable_hint",
                "Use --policy nist or --policy cnsa2, or a TOML policy file (its path, or its name in the data folder's policies folder)."
            ))
        })?;
        Policy::parse(&text).map_err(|e| {
            ApiError::invalid(text!(
                "errors.pqc_policy_invalid",
                "The policy file {{path}} was refused: {{reason}}.",
                path = path.display(),
                reason = e
            ))
        })
    }

    /// Every key of `partitions` judged under `policy` (see [`Console::pqc_policy`]) today.
    pub async fn pqc_readiness(&self, partitions: &[String], policy: &str) -> ApiResult<Readiness> {
        let policy = self.pqc_policy(policy)?;
        let today = time::OffsetDateTime::now_utc().date();
        let mut out = Vec::new();
        for id in partitions {
            let p = self.partition_ref(id).await?;
            let objects = self.list_keys(id).await?;
            let mut rows = hsmc_pqc::assess(&objects, &policy, today);
            rows.extend(
                self.certificates_judged(&p, &objects, &policy, today)
                    .await?,
            );
            out.push(PartitionReadiness {
                partition_id: p.id.clone(),
                partition_label: p.label.clone(),
                serial: p.serial.clone(),
                counts: hsmc_pqc::counts(&rows),
                objects: rows,
            });
        }
        let all: Vec<Assessed> = out.iter().flat_map(|p| p.objects.clone()).collect();
        Ok(Readiness {
            policy: policy.name.clone(),
            source: policy.source.clone(),
            date: today.to_string(),
            counts: hsmc_pqc::counts(&all),
            partitions: out,
        })
    }

    /// A CycloneDX 1.6 CBOM (see `hsmc_pqc::cbom`) of the keys on `partitions`, with the
    /// policy's status and dates in each key's properties; pretty-printed JSON.
    pub async fn pqc_cbom(&self, partitions: &[String], policy: &str) -> ApiResult<Vec<u8>> {
        let readiness = self.pqc_readiness(partitions, policy).await?;
        let mut listings = Vec::new();
        for pr in &readiness.partitions {
            let p = self.partition_ref(&pr.partition_id).await?;
            let keys = self.list_keys(&pr.partition_id).await?;
            let (module, slot) = (p.module.module.clone(), p.slot());
            let info = tokio::task::spawn_blocking(move || module.token_info(slot))
                .await
                .map_err(|e| ApiError::new(crate::ErrorCode::Internal, e.to_string()))??;
            let certificates = self.certificate_entries(&p, &keys).await?;
            listings.push((info, keys, certificates));
        }
        let tokens: Vec<hsmc_pqc::cbom::TokenKeys<'_>> = readiness
            .partitions
            .iter()
            .zip(&listings)
            .map(
                |(pr, (info, keys, certificates))| hsmc_pqc::cbom::TokenKeys {
                    holder: hsmc_pqc::cbom::Holder {
                        serial: pr.serial.clone(),
                        label: pr.partition_label.clone(),
                        manufacturer: info.manufacturer.clone(),
                        model: info.model.clone(),
                        firmware: format!("{}", info.firmware_version),
                    },
                    certificates: certificates.clone(),
                    // The certificates come from the token (above), not from the table's rows.
                    keys: pr
                        .objects
                        .iter()
                        .filter(|a| a.object_class != "CERTIFICATE")
                        .filter_map(|a| {
                            keys.iter()
                                .find(|o| {
                                    o.class == a.object_class
                                        && o.id_hex == a.id_hex
                                        && o.label == a.label
                                        && o.unique_id == a.unique_id
                                })
                                .map(|o| (o, a))
                        })
                        .collect(),
                },
            )
            .collect();
        let doc = hsmc_pqc::cbom::document(
            &tokens,
            &bom_serial_number()?,
            &audit::now_rfc3339(),
            env!("CARGO_PKG_VERSION"),
        );
        serde_json::to_vec_pretty(&doc)
            .map_err(|e| ApiError::new(crate::ErrorCode::Internal, e.to_string()))
    }

    /// The X.509 certificates on `p`, each judged by its key and its signature.
    async fn certificates_judged(
        &self,
        p: &std::sync::Arc<crate::Partition>,
        listed: &[hsm::keys::ObjectSummary],
        policy: &Policy,
        today: time::Date,
    ) -> ApiResult<Vec<Assessed>> {
        if !listed.iter().any(|o| o.class == "CERTIFICATE") {
            return Ok(Vec::new());
        }
        let certs = p
            .pool
            .run_service_idempotent_async("pqc.certificates", hsm::objects::certificates)
            .await?;
        let mut out = Vec::new();
        for (handle, label, der) in certs {
            let Ok(info) = signing::objects::describe(&der) else {
                continue; // not X.509 as the console reads it: the keys view shows it
            };
            let o = listed.iter().find(|o| o.handle == handle);
            out.push(hsmc_pqc::certificate(
                &hsmc_pqc::CertificateInput {
                    label: &label,
                    id_hex: o.map(|o| o.id_hex.as_str()).unwrap_or_default(),
                    unique_id: o.and_then(|o| o.unique_id.clone()),
                    public_key_algorithm: info.public_key_algorithm.as_deref(),
                    signature_algorithm: &info.signature_algorithm,
                },
                policy,
                today,
            ));
        }
        Ok(out)
    }

    /// The X.509 certificates on `p`, as the CBOM describes them.
    async fn certificate_entries(
        &self,
        p: &std::sync::Arc<crate::Partition>,
        listed: &[hsm::keys::ObjectSummary],
    ) -> ApiResult<Vec<hsmc_pqc::cbom::CertificateEntry>> {
        if !listed.iter().any(|o| o.class == "CERTIFICATE") {
            return Ok(Vec::new());
        }
        let certs = p
            .pool
            .run_service_idempotent_async("pqc.certificates", hsm::objects::certificates)
            .await?;
        Ok(certs
            .into_iter()
            .filter_map(|(handle, label, der)| {
                let info = signing::objects::describe(&der).ok()?;
                let id_hex = listed
                    .iter()
                    .find(|o| o.handle == handle)
                    .map(|o| o.id_hex.clone())
                    .unwrap_or_default();
                Some(hsmc_pqc::cbom::CertificateEntry {
                    label,
                    id_hex,
                    subject: info.subject,
                    issuer: info.issuer,
                    not_before: info.not_before,
                    not_after: info.not_after,
                    signature_algorithm: info.signature_algorithm,
                    sha256_fingerprint: info.sha256_fingerprint,
                })
            })
            .collect())
    }
}
