//! `audit` — the console's tamper-evident audit trail.
//!
//! Every privileged action becomes a record in an append-only table (SQLite by default,
//! PostgreSQL for a team). Records are chained: `hmac_i = HMAC-SHA256(k, encode(record_i) ‖
//! hmac_{i-1})` over one canonical, length-prefixed encoding of every field. The 32-byte key
//! exists at rest only wrapped by a non-extractable HSM key ([`KeyWrapper`]). Signed
//! checkpoints ([`CheckpointSigner`]) over the chain heads bound truncation, and an anchor
//! outside the store ([`Anchor`]) exposes a rollback to an older copy. [`verify`] names the
//! first bad record and what is wrong with it. Older records are sealed a block to a row
//! ([`block`]), which is what lets verification run near the HMAC's own speed.
//!
//! This crate knows nothing of PKCS#11: the HSM-backed pieces come in through the traits.

pub mod anchor;
pub mod block;
pub mod encode;
pub mod export;
pub mod log;
pub mod scan;
pub mod sql;
pub mod store;
#[cfg(feature = "test-support")]
pub mod testing;
pub mod verify;

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

pub use anchor::{Anchor, FileAnchor};
pub use log::{AuditConfig, AuditLog, Context, KeyStatus};
pub use verify::{Finding, Verdict};

/// One stored record (the seed's columns plus `log_id`, `seq` and the key `epoch`): its
/// position in the chain, the event it holds, and the chain value over both. Its JSON (an
/// export's record line) lists the event's fields in place, between `epoch` and
/// `hmac_chain`, as the table's columns are ordered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct Record {
    pub log_id: String,
    pub seq: i64,
    pub epoch: i64,
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub event: Prepared,
    pub hmac_chain: String,
    pub created_at: String,
}

/// An event prepared for the chain: everything a record holds but its position and chain
/// value. Also the form in which events wait in the pending spool (its JSON), and what the
/// UI shows of a record (`RecordView` in the console flattens it too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow, ts_rs::TS)]
pub struct Prepared {
    pub timestamp: String,
    pub session_id: String,
    pub actor_id: Option<String>,
    pub actor_ip: String,
    pub action: String,
    pub resource_type: String,
    pub resource_id: Option<String>,
    pub algorithm: Option<String>,
    pub status: String,
    pub error_code: Option<String>,
    /// JSON text, stored and MACed byte for byte.
    pub metadata: String,
}

/// Outcome of the audited action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Success,
    Failure,
    Warning,
    /// The action may or may not have happened: its answer was lost (the HSM disconnected
    /// during the call) and the console could not settle it by reading the token.
    Unknown,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::Failure => "failure",
            Status::Warning => "warning",
            Status::Unknown => "unknown",
        }
    }
}

/// What a caller asks to record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub action: String,
    pub resource_type: String,
    pub resource_id: Option<String>,
    pub algorithm: Option<String>,
    pub status: Status,
    pub error_code: Option<String>,
    pub metadata: serde_json::Value,
}

impl Event {
    pub fn new(action: impl Into<String>, resource_type: impl Into<String>) -> Self {
        Event {
            action: action.into(),
            resource_type: resource_type.into(),
            resource_id: None,
            algorithm: None,
            status: Status::Success,
            error_code: None,
            metadata: serde_json::Value::Object(Default::default()),
        }
    }
    pub fn resource(mut self, id: impl Into<String>) -> Self {
        self.resource_id = Some(id.into());
        self
    }
    pub fn algorithm(mut self, a: impl Into<String>) -> Self {
        self.algorithm = Some(a.into());
        self
    }
    pub fn failed(mut self, code: impl Into<String>) -> Self {
        self.status = Status::Failure;
        self.error_code = Some(code.into());
        self
    }
    pub fn status(mut self, s: Status) -> Self {
        self.status = s;
        self
    }
    pub fn meta(mut self, key: &str, value: impl Serialize) -> Self {
        if let serde_json::Value::Object(m) = &mut self.metadata {
            m.insert(
                key.to_string(),
                serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
            );
        }
        self
    }
}

/// A signed checkpoint over the chain heads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow, ts_rs::TS)]
pub struct Checkpoint {
    pub log_id: String,
    pub checkpoint_no: i64,
    /// The last record covered (0 = none yet).
    pub seq: i64,
    pub head_hmac: String,
    pub head_digest: String,
    pub time: String,
    pub epoch: i64,
    /// `ML-DSA-65` or `ECDSA-P256`.
    pub algorithm: String,
    /// SubjectPublicKeyInfo, DER, hex.
    pub public_key: String,
    pub signature: String,
}

/// The HSM key that wraps the trail's MAC key (AES key wrap with padding, non-extractable).
pub trait KeyWrapper: Send + Sync {
    /// Which partition holds the wrapping key (shown to the officer).
    fn holder(&self) -> String;
    /// `CKA_ID` of the wrapping key.
    fn kek_id(&self) -> Vec<u8>;
    fn mechanism(&self) -> String;
    fn wrap(&self, key: &[u8]) -> std::result::Result<Vec<u8>, String>;
    fn unwrap(&self, wrapped: &[u8]) -> std::result::Result<Zeroizing<Vec<u8>>, String>;
}

/// The HSM key that signs checkpoints (non-extractable; ML-DSA-65 where the token has it,
/// else ECDSA P-256).
pub trait CheckpointSigner: Send + Sync {
    /// `ML-DSA-65` or `ECDSA-P256`.
    fn algorithm(&self) -> String;
    /// SubjectPublicKeyInfo, DER.
    fn public_key_spki(&self) -> Vec<u8>;
    /// Sign the message itself (ECDSA: DER signature over SHA-256 of the message).
    fn sign(&self, message: &[u8]) -> std::result::Result<Vec<u8>, String>;
}

/// What failed underneath the store: the database driver, the file system, a stored value
/// that does not parse.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The MAC key is not unlocked: the caller must refuse the privileged action.
    #[error("the audit trail is locked: {0}")]
    KeyUnavailable(String),
    /// The store failed. `context` says what the console was doing when that adds to the
    /// cause (`cannot open /path/audit.db`); `cause` is the underlying error, kept as the
    /// source. The message names both, as the console shows only the message.
    #[error("the audit store is unavailable: {}", store_message(.context.as_deref(), .cause.as_deref()))]
    Store {
        context: Option<String>,
        #[source]
        cause: Option<Cause>,
    },
    #[error("the audit store was busy for longer than {0} ms")]
    Locked(u64),
    #[error("{0}")]
    Hsm(String),
    #[error("{0}")]
    Invalid(String),
    #[error("cancelled")]
    Cancelled,
    /// The store ends before a record a signed checkpoint vouches for: records were removed
    /// from the end. A new record would take the first removed one's number and hide the
    /// removal, so the trail takes no record until the store is restored.
    #[error("the audit trail was truncated: it ends at record {last_seq}, but a signed checkpoint vouches for records up to {checkpoint_seq}, so the console writes nothing onto it")]
    Truncated { last_seq: i64, checkpoint_seq: i64 },
}

impl AuditError {
    /// The store failed with `cause` while the console was doing `context`.
    pub fn store(context: impl Into<String>, cause: impl Into<Cause>) -> Self {
        AuditError::Store {
            context: Some(context.into()),
            cause: Some(cause.into()),
        }
    }

    /// The store holds or returned something the console never writes (no error below).
    pub fn store_state(what: impl Into<String>) -> Self {
        AuditError::Store {
            context: Some(what.into()),
            cause: None,
        }
    }

    /// The store failed with `cause`, which says it all.
    pub fn store_cause(cause: impl Into<Cause>) -> Self {
        AuditError::Store {
            context: None,
            cause: Some(cause.into()),
        }
    }
}

fn store_message(
    context: Option<&str>,
    cause: Option<&(dyn std::error::Error + Send + Sync + 'static)>,
) -> String {
    match (context, cause) {
        (Some(c), Some(e)) => format!("{c}: {e}"),
        (Some(c), None) => c.to_string(),
        (None, Some(e)) => e.to_string(),
        (None, None) => "unknown error".to_string(),
    }
}

impl From<sqlx::Error> for AuditError {
    fn from(e: sqlx::Error) -> Self {
        AuditError::store_cause(e)
    }
}

pub type Result<T> = std::result::Result<T, AuditError>;

/// `2026-11-30T15:19:39.123Z`.
pub fn now_rfc3339() -> String {
    let t = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_store_error_keeps_its_cause() {
        let e = AuditError::from(sqlx::Error::RowNotFound);
        assert_eq!(
            e.to_string(),
            format!(
                "the audit store is unavailable: {}",
                sqlx::Error::RowNotFound
            )
        );
        let cause = e.source().expect("the driver's error is the source");
        assert!(matches!(
            cause.downcast_ref::<sqlx::Error>(),
            Some(sqlx::Error::RowNotFound)
        ));

        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = AuditError::store("cannot open /x/audit.db", io);
        assert_eq!(
            e.to_string(),
            "the audit store is unavailable: cannot open /x/audit.db: denied"
        );
        let cause = e.source().and_then(|c| c.downcast_ref::<std::io::Error>());
        assert_eq!(
            cause.map(|c| c.kind()),
            Some(std::io::ErrorKind::PermissionDenied)
        );

        let e = AuditError::store_state("record 7 vanished during verification");
        assert_eq!(
            e.to_string(),
            "the audit store is unavailable: record 7 vanished during verification"
        );
        assert!(e.source().is_none());
    }
}
