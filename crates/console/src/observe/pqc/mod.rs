//! Post-quantum readiness of the partitions the console has open: every key judged under a
//! policy (`hsmc_pqc`: NIST IR 8547, CNSA 2.0, or an organisation's own file).
//!
//! A policy is named `nist` or `cnsa2`, or is a TOML file: a path, or the name of a file in
//! the data folder's `policies/` (`policies/NAME.toml`).

use std::collections::HashMap;
use std::path::PathBuf;

use hsmc_pqc::capacity::Capacity;
use hsmc_pqc::{Assessed, Counts, Policy};
use serde::Serialize;

use crate::core::error::{ApiError, ApiResult};
use crate::core::partitions::token_name;
use crate::observe::Observe;
use crate::text;

mod capacity;

pub use capacity::{SuggestedProbe, WINDOW_DAYS};

/// One partition's keys, judged.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct PartitionReadiness {
    pub partition_id: String,
    pub partition_label: String,
    pub serial: String,
    pub counts: Counts,
    pub objects: Vec<Assessed>,
    /// Its signing volume from the trail and whether it keeps up with the successors.
    pub capacity: Capacity,
    /// Probes to run for what the capacity needs and no probe measured yet.
    pub suggested_probes: Vec<SuggestedProbe>,
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

/// One use of a key, as the trail records it.
struct Use {
    at: String,
    partition: String,
    key_id: String,
    key_label: String,
    signatures: u64,
    artifact: Option<String>,
}

impl Use {
    fn of(r: &audit::Record) -> Option<Use> {
        if !matches!(
            r.event.action.as_str(),
            "sign" | "sign.manifest" | "cert.issue"
        ) {
            return None;
        }
        let m: serde_json::Value = serde_json::from_str(&r.event.metadata).ok()?;
        let text = |v: &serde_json::Value| v.as_str().map(String::from);
        let key_id = text(&m["key_id"]).or_else(|| text(&m["key"]["id"]))?;
        Some(Use {
            at: r.event.timestamp.clone(),
            partition: text(&m["partition"]).unwrap_or_default(),
            key_label: text(&m["key"]["label"]).unwrap_or_default(),
            key_id,
            signatures: m["signatures"].as_u64().unwrap_or(1),
            artifact: (r.event.action != "cert.issue")
                .then(|| r.event.resource_id.clone())
                .flatten(),
        })
    }
}

/// One partition's recorded uses by the key they name: its `CKA_ID`, or its label for a key
/// without one (newest first, as `recorded_uses` sorts them).
struct UsesByKey<'a> {
    by_id: HashMap<&'a str, Vec<&'a Use>>,
    by_label: HashMap<&'a str, Vec<&'a Use>>,
}

impl<'a> UsesByKey<'a> {
    /// The uses made on the token named `token` ([`token_name`]: its serial, whatever path
    /// its module was loaded from then).
    fn of(uses: &'a [Use], token: &str) -> UsesByKey<'a> {
        let (mut by_id, mut by_label) = (HashMap::new(), HashMap::new());
        for u in uses.iter().filter(|u| token_name(&u.partition) == token) {
            by_id
                .entry(u.key_id.as_str())
                .or_insert_with(Vec::new)
                .push(u);
            by_label
                .entry(u.key_label.as_str())
                .or_insert_with(Vec::new)
                .push(u);
        }
        UsesByKey { by_id, by_label }
    }

    /// The uses of the key `row`.
    fn of_row(&self, row: &Assessed) -> &[&'a Use] {
        let found = if row.id_hex.is_empty() {
            (!row.label.is_empty())
                .then(|| self.by_label.get(row.label.as_str()))
                .flatten()
        } else {
            self.by_id.get(row.id_hex.as_str())
        };
        found.map_or(&[], Vec::as_slice)
    }
}

/// What the uses of the key `row` (newest first) say of it.
fn evidence(mine: &[&Use], row: &Assessed) -> hsmc_pqc::Evidence {
    if row.object_class == "CERTIFICATE" {
        return hsmc_pqc::Evidence::default();
    }
    let (d30, d90) = (
        crate::observe::health::days_ago(30),
        crate::observe::health::days_ago(90),
    );
    let sum = |since: &str| {
        mine.iter()
            .filter(|u| u.at.as_str() >= since)
            .map(|u| u.signatures)
            .sum()
    };
    let mut recent: Vec<String> = Vec::new();
    for a in mine.iter().filter_map(|u| u.artifact.clone()) {
        if recent.len() == 5 {
            break;
        }
        if !recent.contains(&a) {
            recent.push(a);
        }
    }
    hsmc_pqc::Evidence {
        seen: !mine.is_empty(),
        last_use: mine.first().map(|u| u.at.clone()),
        uses_30_days: sum(&d30),
        uses_90_days: sum(&d90),
        recent_artifacts: recent,
    }
}

/// A fresh `urn:uuid:` (version 4) for a BOM's `serialNumber`.
fn bom_serial_number() -> ApiResult<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| {
        ApiError::new(
            crate::core::error::ErrorCode::Internal,
            format!("no randomness: {e}"),
        )
    })?;
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

impl Observe<'_> {
    /// The policy `choice` names: `nist`, `cnsa2`, a file's path, or the name of a file in
    /// the data folder's `policies/`. A file that is not a policy is refused with the line
    /// at fault.
    pub fn pqc_policy(self, choice: &str) -> ApiResult<Policy> {
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

    /// Every key of `partitions` judged under `policy` (see [`crate::observe::Observe::pqc_policy`]) today.
    pub async fn pqc_readiness(self, partitions: &[String], policy: &str) -> ApiResult<Readiness> {
        Ok(self.readiness_of(partitions, policy).await?.0)
    }

    /// The readiness, and what was read from each partition to judge it (the CBOM describes
    /// the same objects: they are read once).
    async fn readiness_of(
        self,
        partitions: &[String],
        policy: &str,
    ) -> ApiResult<(Readiness, Vec<PartitionRead>)> {
        let policy = self.pqc_policy(policy)?;
        let today = time::OffsetDateTime::now_utc().date();
        let uses = self.recorded_uses().await;
        let mut out = Vec::new();
        let mut reads = Vec::new();
        for id in partitions {
            let read = self.read_partition(id).await?;
            let mut rows = hsmc_pqc::assess(&read.objects, &policy, today);
            rows.extend(read.certificates.iter().map(|c| {
                hsmc_pqc::certificate(
                    &hsmc_pqc::CertificateInput {
                        label: &c.label,
                        id_hex: &c.id_hex,
                        unique_id: c.unique_id.clone(),
                        public_key_algorithm: c.info.public_key_algorithm.as_deref(),
                        signature_algorithm: &c.info.signature_algorithm,
                    },
                    &policy,
                    today,
                )
            }));
            let used = UsesByKey::of(&uses, read.partition.token_name());
            for row in &mut rows {
                row.evidence = evidence(used.of_row(row), row);
            }
            hsmc_pqc::rank(&mut rows);
            let (capacity, suggested_probes) =
                self.capacity_of(&read.partition.id, &rows, &used).await;
            out.push(PartitionReadiness {
                partition_id: read.partition.id.clone(),
                partition_label: read.partition.label.clone(),
                serial: read.partition.serial.clone(),
                counts: hsmc_pqc::counts(&rows),
                objects: rows,
                capacity,
                suggested_probes,
            });
            reads.push(read);
        }
        let all: Vec<Assessed> = out.iter().flat_map(|p| p.objects.clone()).collect();
        let readiness = Readiness {
            policy: policy.name.clone(),
            source: policy.source.clone(),
            date: today.to_string(),
            counts: hsmc_pqc::counts(&all),
            partitions: out,
        };
        Ok((readiness, reads))
    }

    /// The trail's records of keys used: signatures (files, manifests, SSH) and issued
    /// certificates that succeeded. A trail that cannot be read gives none (the readiness
    /// then says no key was seen; the audit view says why).
    async fn recorded_uses(self) -> Vec<Use> {
        let mut uses = Vec::new();
        for action in ["sign", "cert.issue"] {
            let q = audit::store::Query {
                action: Some(action.into()),
                status: Some("success".into()),
                ..Default::default()
            };
            let of_action = self.audit().all_records(&q, |r| Use::of(&r)).await;
            uses.extend(of_action.unwrap_or_default());
        }
        uses.sort_by(|a, b| b.at.cmp(&a.at));
        uses
    }

    /// A partition's objects and X.509 certificates (described; a certificate the console
    /// cannot read as X.509 is left to the keys view).
    async fn read_partition(self, id: &str) -> ApiResult<PartitionRead> {
        let partition = self.partition_ref(id).await?;
        let objects = self.list_keys(id).await?;
        let certificates = if objects.iter().any(|o| o.class == "CERTIFICATE") {
            partition
                .pool
                .run_service_idempotent_async("pqc.certificates", hsm::objects::certificates)
                .await?
        } else {
            Vec::new()
        };
        let certificates = certificates
            .into_iter()
            .filter_map(|(handle, label, der)| {
                let info = signing::objects::describe(&der).ok()?;
                let o = objects.iter().find(|o| o.handle == handle);
                Some(ReadCertificate {
                    label,
                    id_hex: o.map(|o| o.id_hex.clone()).unwrap_or_default(),
                    unique_id: o.and_then(|o| o.unique_id.clone()),
                    info,
                })
            })
            .collect();
        Ok(PartitionRead {
            partition,
            objects,
            certificates,
        })
    }

    /// A CycloneDX 1.6 CBOM (see `hsmc_pqc::cbom`) of the keys and certificates on
    /// `partitions`, with the policy's status and dates in each key's properties;
    /// pretty-printed JSON.
    pub async fn pqc_cbom(self, partitions: &[String], policy: &str) -> ApiResult<Vec<u8>> {
        let (readiness, reads) = self.readiness_of(partitions, policy).await?;
        let mut infos = Vec::new();
        for read in &reads {
            let (module, slot) = (read.partition.module.module.clone(), read.partition.slot());
            let info = tokio::task::spawn_blocking(move || module.token_info(slot))
                .await
                .map_err(|e| {
                    ApiError::new(crate::core::error::ErrorCode::Internal, e.to_string())
                })??;
            infos.push(info);
        }
        let tokens: Vec<hsmc_pqc::cbom::TokenKeys<'_>> = readiness
            .partitions
            .iter()
            .zip(reads.iter().zip(&infos))
            .map(|(pr, (read, info))| hsmc_pqc::cbom::TokenKeys {
                holder: hsmc_pqc::cbom::Holder {
                    serial: pr.serial.clone(),
                    label: pr.partition_label.clone(),
                    manufacturer: info.manufacturer.clone(),
                    model: info.model.clone(),
                    firmware: format!("{}", info.firmware_version),
                },
                certificates: read
                    .certificates
                    .iter()
                    .map(|c| hsmc_pqc::cbom::CertificateEntry {
                        label: c.label.clone(),
                        id_hex: c.id_hex.clone(),
                        subject: c.info.subject.clone(),
                        issuer: c.info.issuer.clone(),
                        not_before: c.info.not_before.clone(),
                        not_after: c.info.not_after.clone(),
                        signature_algorithm: c.info.signature_algorithm.clone(),
                        sha256_fingerprint: c.info.sha256_fingerprint.clone(),
                    })
                    .collect(),
                // Each key's listing row beside its assessment (the certificates above).
                keys: pr
                    .objects
                    .iter()
                    .filter(|a| a.object_class != "CERTIFICATE")
                    .filter_map(|a| {
                        read.objects
                            .iter()
                            .find(|o| {
                                o.class == a.object_class
                                    && o.id_hex == a.id_hex
                                    && o.label == a.label
                                    && o.unique_id == a.unique_id
                            })
                            .map(|o| (o, a))
                    })
                    .collect(),
            })
            .collect();
        let doc = hsmc_pqc::cbom::document(
            &tokens,
            &bom_serial_number()?,
            &audit::now_rfc3339(),
            env!("CARGO_PKG_VERSION"),
        );
        serde_json::to_vec_pretty(&doc)
            .map_err(|e| ApiError::new(crate::core::error::ErrorCode::Internal, e.to_string()))
    }
}

/// What the readiness view read from one partition.
struct PartitionRead {
    partition: std::sync::Arc<crate::core::partitions::Partition>,
    objects: Vec<hsm::keys::ObjectSummary>,
    certificates: Vec<ReadCertificate>,
}

/// An X.509 certificate on the token, described.
struct ReadCertificate {
    label: String,
    id_hex: String,
    unique_id: Option<String>,
    info: signing::objects::CertificateInfo,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key's uses are those made on its token, however the module's path has changed;
    /// the same ID on another token is another key.
    #[test]
    fn uses_are_the_tokens_whatever_path_its_module_had() {
        let used = |partition: &str, key_id: &str| Use {
            at: "2026-12-01T00:00:00Z".into(),
            partition: partition.into(),
            key_id: key_id.into(),
            key_label: "k".into(),
            signatures: 1,
            artifact: None,
        };
        let uses = vec![
            used("m-11111111:AA", "01"),
            used("m-22222222:AA", "01"),
            used("m-11111111:BB", "01"),
        ];
        let of_aa = UsesByKey::of(&uses, "AA");
        let partitions: Vec<&str> = of_aa.by_id["01"]
            .iter()
            .map(|u| u.partition.as_str())
            .collect();
        assert_eq!(partitions, ["m-11111111:AA", "m-22222222:AA"]);
        assert_eq!(UsesByKey::of(&uses, "BB").by_id["01"].len(), 1);
    }
}
