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
            let rows = hsmc_pqc::assess(&objects, &policy, today);
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
}
