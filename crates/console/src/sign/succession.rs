//! Making a key succession statement on the token's keys (the format and its check are
//! `signing::verify::succession`): the statement is written, then signed by the old key and
//! by the new one through the signing batch — each a raw signature named for its key,
//! verified in software, in the audit trail, with an HSS key's rules — and nothing is left
//! behind when either cannot sign.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use signing::verify::succession::{self, Statement, SuccessionKey};
use signing::verify::VerifyReport;
use ts_rs::TS;

use super::batch::read_key;
use super::key::SigningKey;
use super::{sign_error, OnError, SignFormat, SignRequest};
use crate::core::error::{ApiError, ApiResult};
use crate::sign::Signing;
use crate::text;

/// A statement to make: the two keys (`label:`, `id:`, `uid:` selectors), where it goes,
/// and the dates (`YYYY-MM-DD`).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct SuccessionRequest {
    pub old_key: String,
    pub new_key: String,
    /// The statement's path (refused when it exists).
    pub out: String,
    /// From when the new key signs (default: today).
    pub new_key_signs_from: Option<String>,
    /// Until when releases carry both signatures (none: open).
    pub transition_ends: Option<String>,
    /// An HSS key spends one-time signatures; confirmed as for signing.
    pub confirm_hss: bool,
}

/// A statement made: the file, its two signatures, and what it says.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SuccessionMade {
    pub statement_path: String,
    pub signatures: Vec<String>,
    pub statement: Statement,
}

impl Signing<'_> {
    /// Write a key succession statement for `req.old_key` → `req.new_key` on `partition`,
    /// signed by both.
    pub async fn key_succession(
        self,
        partition: &str,
        req: SuccessionRequest,
    ) -> ApiResult<SuccessionMade> {
        let from = match &req.new_key_signs_from {
            Some(d) => check_date(d)?,
            None => today(),
        };
        let until = req.transition_ends.as_deref().map(check_date).transpose()?;
        if until.as_ref().is_some_and(|u| *u < from) {
            return Err(ApiError::invalid(text!(
                "errors.succession_ends_before_it_starts",
                "The transition cannot end ({{until}}) before the new key signs ({{from}}).",
                until = until.clone().unwrap_or_default(),
                from = &from
            )));
        }
        let p = self.partition_ref(partition).await?;
        let old = read_key(&p, &req.old_key, Vec::new()).await?;
        let new = read_key(&p, &req.new_key, Vec::new()).await?;
        if old.pk.fingerprint() == new.pk.fingerprint() {
            return Err(ApiError::invalid(text!(
                "errors.succession_same_key",
                "The old and the new key are the same key ({{fingerprint}}); choose its successor.",
                fingerprint = old.pk.fingerprint()
            )));
        }
        if succession::label_stem(&old.summary.label) == succession::label_stem(&new.summary.label)
        {
            return Err(ApiError::invalid(text!(
                "errors.succession_same_label",
                "Both keys are labelled '{{label}}': their signatures would have the same name. Give one of them another label first.",
                label = &new.summary.label
            )));
        }
        let statement = Statement {
            format: succession::FORMAT.into(),
            version: succession::VERSION,
            old: named(&old),
            new: named(&new),
            new_key_signs_from: from,
            transition_ends: until,
            made: audit::now_rfc3339(),
        };
        let path = PathBuf::from(&req.out);
        signing::output::write_new(&path, &statement.to_bytes()).map_err(sign_error)?;
        let mut signatures = Vec::new();
        for key in [&req.old_key, &req.new_key] {
            match self
                .sign_statement(partition, &path, key, req.confirm_hss)
                .await
            {
                Ok(sig) => signatures.push(sig),
                Err(e) => {
                    // A statement signed by one key only vouches for nothing: none is left.
                    for f in signatures.iter().map(PathBuf::from).chain([path.clone()]) {
                        let _ = std::fs::remove_file(f);
                    }
                    return Err(e);
                }
            }
        }
        Ok(SuccessionMade {
            statement_path: path.display().to_string(),
            signatures,
            statement,
        })
    }

    /// The statement signed by `key` (raw, named for the key); the signature's path.
    async fn sign_statement(
        self,
        partition: &str,
        path: &Path,
        key: &str,
        confirm_hss: bool,
    ) -> ApiResult<String> {
        let req = SignRequest {
            key: key.to_string(),
            also_keys: vec![],
            files: vec![path.display().to_string()],
            formats: vec![SignFormat::Raw],
            manifest: false,
            out_dir: None,
            context: None,
            on_error: OnError::Stop,
            confirm_hss,
            timestamp: None,
            kit: None,
            chain: vec![],
            context_login: None,
        };
        let r = self
            .sign_batch(
                partition,
                req,
                Arc::new(|_| {}),
                Arc::new(AtomicBool::new(false)),
                true,
                None,
            )
            .await?;
        let file = r.files.into_iter().next().expect("one file");
        if let Some(e) = file.error {
            return Err(e);
        }
        let sig = file.outputs.into_iter().next().expect("the raw signature");
        Ok(sig.path)
    }

    /// Check a key succession statement and both its signatures; `trusted_old_pem` is the
    /// old key the user trusts (a PEM public key or certificate). `None` when the file is
    /// not a statement.
    pub async fn verify_succession(
        self,
        statement: &str,
        trusted_old_pem: Option<&str>,
    ) -> ApiResult<Option<VerifyReport>> {
        let trusted = trusted_old_pem
            .map(super::verify::read_public_key)
            .transpose()?;
        let path = PathBuf::from(statement);
        let r = tokio::task::spawn_blocking(move || succession::verify(&path, trusted.as_ref()))
            .await
            .map_err(|e| ApiError::new(crate::core::error::ErrorCode::Internal, e.to_string()))?
            .map_err(sign_error)?;
        if let Some(r) = &r {
            self.record_verification(statement, statement, r).await;
        }
        Ok(r)
    }
}

/// A key as the statement names it.
fn named(k: &SigningKey) -> SuccessionKey {
    SuccessionKey {
        label: k.summary.label.clone(),
        algorithm: k.alg.name(),
        fingerprint: k.pk.fingerprint(),
        public_key: k.pk.spki_pem(),
    }
}

/// `YYYY-MM-DD`, a real day.
fn check_date(d: &str) -> ApiResult<String> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(d, &format)
        .map(|_| d.to_string())
        .map_err(|_| {
            ApiError::invalid(text!(
                "errors.succession_date",
                "{{date}} is not a date of the form YYYY-MM-DD.",
                date = d
            ))
        })
}

fn today() -> String {
    audit::now_rfc3339()[..10].to_string()
}
