//! Verification: walks the chain, checks every checkpoint and the anchors, and names the
//! first bad record and what happened to it, in words an auditor understands.
//!
//! How a damaged record is classified (R = the first record whose MAC fails, P its
//! predecessor, N its successor):
//! - N still chains onto R's stored value → R's content was **modified**;
//! - N chains onto P when given R's position → R was **inserted**;
//! - N chains onto R from one position further → a record before R is **missing** and the
//!   rest were renumbered (a plain gap in `seq` is reported as missing directly);
//! - R's MAC is right for another position of the trail → **reordered**;
//! - N chains onto P from R's position and R onto N from N's → the two were **swapped**
//!   (reordered);
//! - R is the last record, is malformed, and no checkpoint vouches for it → a **torn last
//!   write** after a crash (a record a checkpoint covered was complete when it was signed);
//! - otherwise R was modified (content and chain value both rewritten).
//!
//! Records carrying another trail's `log_id` are **grafted**. A checkpoint beyond the last
//! record means a **truncated tail** (records up to the furthest such checkpoint are
//! missing); an anchor newer than the store, a **rollback**.
//!
//! [`verify_store`] walks a whole store (its steps are in the `store` module);
//! [`verify_records`] checks records already loaded, such as an export.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::encode::{self, ChainKey, GENESIS};
use crate::{AuditError, Checkpoint, Record, Result};

mod store;

pub(crate) use store::recorded_moves;
pub use store::verify_store;

/// What is wrong, at which record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    Modified {
        seq: i64,
    },
    Missing {
        seq: i64,
    },
    Inserted {
        seq: i64,
    },
    Reordered {
        seq: i64,
        belongs_at: i64,
    },
    Grafted {
        seq: i64,
        foreign_log: String,
    },
    TruncatedTail {
        last_seq: i64,
        checkpoint_seq: i64,
    },
    Rollback {
        store_seq: i64,
        anchor_seq: i64,
        anchor_checkpoint: i64,
    },
    CheckpointSignatureInvalid {
        checkpoint_no: i64,
        seq: i64,
    },
    CheckpointKeyReplaced {
        checkpoint_no: i64,
        seq: i64,
    },
    CheckpointMismatch {
        checkpoint_no: i64,
        seq: i64,
    },
    /// Records between two checkpoints no longer hash to what the later one signed, and
    /// their seals could not be checked (an export checked without the trail's key): one or
    /// more of them were changed, which one cannot be told.
    ModifiedBetween {
        from_seq: i64,
        to_seq: i64,
        checkpoint_no: i64,
    },
    TornLastWrite {
        seq: i64,
    },
}

impl Finding {
    /// The first record that cannot be trusted.
    pub fn seq(&self) -> i64 {
        match self {
            Finding::Modified { seq }
            | Finding::Missing { seq }
            | Finding::Inserted { seq }
            | Finding::Reordered { seq, .. }
            | Finding::Grafted { seq, .. }
            | Finding::CheckpointSignatureInvalid { seq, .. }
            | Finding::CheckpointKeyReplaced { seq, .. }
            | Finding::CheckpointMismatch { seq, .. }
            | Finding::TornLastWrite { seq } => *seq,
            Finding::ModifiedBetween { from_seq, .. } => *from_seq,
            Finding::TruncatedTail { last_seq, .. } => last_seq + 1,
            Finding::Rollback { store_seq, .. } => store_seq + 1,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Finding::Modified { .. } => "modified",
            Finding::Missing { .. } => "missing",
            Finding::Inserted { .. } => "inserted",
            Finding::Reordered { .. } => "reordered",
            Finding::Grafted { .. } => "grafted",
            Finding::TruncatedTail { .. } => "truncated_tail",
            Finding::Rollback { .. } => "rollback",
            Finding::CheckpointSignatureInvalid { .. } => "checkpoint_signature_invalid",
            Finding::CheckpointKeyReplaced { .. } => "checkpoint_key_replaced",
            Finding::CheckpointMismatch { .. } => "checkpoint_mismatch",
            Finding::ModifiedBetween { .. } => "modified_between",
            Finding::TornLastWrite { .. } => "torn_last_write",
        }
    }

    /// Tampering, or a crash?
    pub fn is_tampering(&self) -> bool {
        !matches!(self, Finding::TornLastWrite { .. })
    }

    pub fn explain(&self) -> String {
        match self {
            Finding::Modified { seq } => format!("Record {seq} was changed after it was written: its content no longer matches its seal."),
            Finding::Missing { seq } => format!("Record {seq} is missing: it was deleted from the trail."),
            Finding::Inserted { seq } => format!("Record {seq} was inserted into the trail afterwards; the console never wrote it there."),
            Finding::Reordered { seq, belongs_at } => format!("Record {seq} is out of place: it was written as record {belongs_at}."),
            Finding::Grafted { seq, foreign_log } => format!("A record numbered {seq} from another trail ({foreign_log}) was copied into this one."),
            Finding::TruncatedTail { last_seq, checkpoint_seq } => format!(
                "The trail ends at record {last_seq}, but a signed checkpoint vouches for records up to {checkpoint_seq}: the newest records were removed."
            ),
            Finding::Rollback { store_seq, anchor_seq, anchor_checkpoint } => format!(
                "The store was rolled back to an older copy: it ends at record {store_seq}, while checkpoint {anchor_checkpoint}, remembered outside the store, covers records up to {anchor_seq}."
            ),
            Finding::CheckpointSignatureInvalid { checkpoint_no, .. } => format!("Checkpoint {checkpoint_no} has an invalid signature: it was forged or altered."),
            Finding::CheckpointKeyReplaced { checkpoint_no, .. } => format!(
                "Checkpoint {checkpoint_no} is signed with a public key other than the HSM's checkpoint key: the key in the store was replaced."
            ),
            Finding::CheckpointMismatch { checkpoint_no, seq } => format!("Checkpoint {checkpoint_no} does not match record {seq} as stored: the records or the checkpoint were altered."),
            Finding::ModifiedBetween { from_seq, to_seq, checkpoint_no } => format!(
                "One or more of records {from_seq}–{to_seq} were changed after they were written: they no longer match what checkpoint {checkpoint_no} signed. Without the trail's key (it stays in the HSM) an export cannot tell which one."
            ),
            Finding::TornLastWrite { seq } => format!(
                "The last record ({seq}) is incomplete: the console was probably interrupted while writing it. This looks like a crash, not tampering; all records before it are intact."
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct CheckpointSummary {
    pub checkpoint_no: i64,
    pub seq: i64,
    pub time: String,
    pub algorithm: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    Intact {
        records: i64,
        last_seq: i64,
        checkpoints: i64,
        last_checkpoint: Option<CheckpointSummary>,
        /// Whether the checkpoint key was pinned (from the HSM) rather than taken from the
        /// store.
        key_pinned: bool,
        /// Whether the records' MACs were checked (needs the HSM) or only the public digest
        /// chain against the checkpoints.
        macs_checked: bool,
    },
    Broken {
        finding: Finding,
        first_bad_seq: i64,
        explanation: String,
        records_checked: i64,
    },
}

impl Verdict {
    pub fn is_intact(&self) -> bool {
        matches!(self, Verdict::Intact { .. })
    }

    pub fn broken(finding: Finding, records_checked: i64) -> Verdict {
        Verdict::Broken {
            first_bad_seq: finding.seq(),
            explanation: finding.explain(),
            finding,
            records_checked,
        }
    }
}

const CP_DOMAIN: &[u8] = b"hsm-console/audit-checkpoint/v1";

/// The bytes a checkpoint signature covers.
pub fn checkpoint_message(c: &Checkpoint) -> Result<Vec<u8>> {
    let hh = encode::hex32(&c.head_hmac)
        .ok_or_else(|| AuditError::Invalid("checkpoint head MAC is not 32 hex bytes".into()))?;
    let hd = encode::hex32(&c.head_digest)
        .ok_or_else(|| AuditError::Invalid("checkpoint head digest is not 32 hex bytes".into()))?;
    let mut m = Vec::with_capacity(200);
    for f in [CP_DOMAIN, c.log_id.as_bytes()] {
        m.extend_from_slice(&(f.len() as u32).to_be_bytes());
        m.extend_from_slice(f);
    }
    m.extend_from_slice(&c.checkpoint_no.to_be_bytes());
    m.extend_from_slice(&c.seq.to_be_bytes());
    m.extend_from_slice(&hh);
    m.extend_from_slice(&hd);
    m.extend_from_slice(&(c.time.len() as u32).to_be_bytes());
    m.extend_from_slice(c.time.as_bytes());
    m.extend_from_slice(&c.epoch.to_be_bytes());
    Ok(m)
}

/// Verify a checkpoint's signature with the public key it carries (RustCrypto verifiers;
/// public material only).
pub fn check_checkpoint_signature(c: &Checkpoint) -> std::result::Result<(), String> {
    let spki = hex::decode(&c.public_key).map_err(|_| "public key is not hex".to_string())?;
    let sig = hex::decode(&c.signature).map_err(|_| "signature is not hex".to_string())?;
    let msg = checkpoint_message(c).map_err(|e| e.to_string())?;
    verify_spki_signature(&spki, &msg, &sig)
}

/// Verify `sig` over `msg` with a DER SubjectPublicKeyInfo: ML-DSA-65 (pure, empty context)
/// or ECDSA P-256 with SHA-256 (DER signature).
pub fn verify_spki_signature(
    spki: &[u8],
    msg: &[u8],
    sig: &[u8],
) -> std::result::Result<(), String> {
    use spki::der::Decode;
    let info =
        spki::SubjectPublicKeyInfoRef::from_der(spki).map_err(|e| format!("public key: {e}"))?;
    let key = info.subject_public_key.raw_bytes();
    match info.algorithm.oid.to_string().as_str() {
        "2.16.840.1.101.3.4.3.18" => {
            swverify::ml_dsa(swverify::MlDsa::P65, key, msg, b"", sig).map_err(|e| e.to_string())
        }
        "1.2.840.10045.2.1" => {
            swverify::ecdsa_p256_sha256(key, msg, sig, swverify::EcdsaEncoding::Der)
                .map_err(|e| e.to_string())
        }
        other => Err(format!("checkpoint key algorithm {other} is not supported")),
    }
}

/// The action of the record that moves the trail's MAC keys to another wrapping key.
pub const KEY_MOVE_ACTION: &str = "audit.key_move";
/// The action of the record that hands checkpoint signing to another key.
pub const CHECKPOINT_KEY_MOVE_ACTION: &str = "audit.checkpoint_key_move";

/// A checkpoint key handed over to another, as a sealed record of the trail says (both
/// SubjectPublicKeyInfo, hex). The record is written and checkpointed under the old key
/// before the new one signs anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMove {
    pub from: String,
    pub to: String,
}

/// The checkpoint-key moves recorded in `records` (read only once the records verified).
pub fn key_moves<'a>(records: impl IntoIterator<Item = &'a Record>) -> Vec<KeyMove> {
    records
        .into_iter()
        .filter(|r| r.event.action == CHECKPOINT_KEY_MOVE_ACTION)
        .filter_map(|r| {
            let meta: serde_json::Value = serde_json::from_str(&r.event.metadata).ok()?;
            Some(KeyMove {
                from: meta.get("from_public_key")?.as_str()?.to_string(),
                to: meta.get("to_public_key")?.as_str()?.to_string(),
            })
        })
        .collect()
}

/// The checkpoint keys (SPKI, hex) that `pinned` vouches for through the recorded moves,
/// oldest first, `pinned` last.
pub fn trusted_keys(pinned: &[u8], moves: &[KeyMove]) -> Vec<String> {
    Trust::new(Some(pinned), moves).chain.unwrap_or_default()
}

/// The checkpoint keys a verifier that pins one trusts, oldest first: the pinned key and,
/// through the recorded moves, each key it succeeded. A checkpoint may be signed by any of
/// them, but never by a key older than one that already signed (a retired key signs no
/// more). Without a pinned key every key is taken and the verdict says it was not pinned.
struct Trust {
    chain: Option<Vec<String>>,
}

impl Trust {
    fn new(pinned: Option<&[u8]>, moves: &[KeyMove]) -> Trust {
        let chain = pinned.map(|p| {
            let mut chain = vec![hex::encode(p)];
            // Walk back from the pinned key; a loop in forged moves cannot run forever.
            while let Some(m) = moves
                .iter()
                .find(|m| &m.to == chain.last().expect("never empty") && !chain.contains(&m.from))
            {
                chain.push(m.from.clone());
            }
            chain.reverse();
            chain
        });
        Trust { chain }
    }

    /// The position of `key` in the chain; `Some(0)` for any key when nothing is pinned.
    fn position(&self, key: &str) -> Option<usize> {
        match &self.chain {
            None => Some(0),
            Some(chain) => chain.iter().position(|k| k == key),
        }
    }

    fn trusts(&self, key: &str) -> bool {
        self.position(key).is_some()
    }
}

pub struct VerifyInput {
    pub log_id: String,
    pub keys: BTreeMap<i64, ChainKey>,
    pub trusted_public_key: Option<Vec<u8>>,
    pub anchors: Vec<Checkpoint>,
}

/// The verdict for a trail found intact: `records` checked up to `last_seq`.
fn intact(
    input: &VerifyInput,
    checkpoints: &[Checkpoint],
    records: i64,
    last_seq: i64,
    macs_checked: bool,
) -> Verdict {
    Verdict::Intact {
        records,
        last_seq,
        checkpoints: checkpoints.len() as i64,
        last_checkpoint: checkpoints.last().map(|c| CheckpointSummary {
            checkpoint_no: c.checkpoint_no,
            seq: c.seq,
            time: c.time.clone(),
            algorithm: c.algorithm.clone(),
        }),
        key_pinned: input.trusted_public_key.is_some(),
        macs_checked,
    }
}

fn with_seq(r: &Record, seq: i64) -> Record {
    let mut c = r.clone();
    c.seq = seq;
    c
}

fn chains(keys: &BTreeMap<i64, ChainKey>, r: &Record, prev: &[u8; 32]) -> bool {
    match (keys.get(&r.epoch), encode::hex32(&r.hmac_chain)) {
        (Some(k), Some(stored)) => k.link(&encode::encode(r), prev) == stored,
        _ => false,
    }
}

/// What R's successor N says of R, the first record that does not chain onto `prev`: N
/// chains onto R's stored value (R modified), onto it from one position further (a record
/// before R missing, the rest renumbered), or onto R's predecessor from R's position — R
/// inserted, or, when R chains onto N from N's position, the two swapped.
fn judge_by_successor(
    keys: &BTreeMap<i64, ChainKey>,
    r: &Record,
    next: Option<&Record>,
    prev: &[u8; 32],
) -> Option<Finding> {
    let n = next.filter(|n| n.seq == r.seq + 1)?;
    if let Some(stored_r) = encode::hex32(&r.hmac_chain) {
        if chains(keys, n, &stored_r) {
            return Some(Finding::Modified { seq: r.seq });
        }
        if chains(keys, &with_seq(n, n.seq + 1), &stored_r) {
            return Some(Finding::Missing { seq: r.seq });
        }
    }
    if chains(keys, &with_seq(n, r.seq), prev) {
        let swapped = encode::hex32(&n.hmac_chain)
            .is_some_and(|stored_n| chains(keys, &with_seq(r, n.seq), &stored_n));
        return Some(if swapped {
            Finding::Reordered {
                seq: r.seq,
                belongs_at: n.seq,
            }
        } else {
            Finding::Inserted { seq: r.seq }
        });
    }
    None
}

/// Whether R's MAC is right at the first position (when R is elsewhere).
fn written_first(keys: &BTreeMap<i64, ChainKey>, r: &Record) -> bool {
    r.seq != 1 && chains(keys, &with_seq(r, 1), &GENESIS)
}

/// The position right after X, when R's MAC is right there (and X is not R's present
/// predecessor).
fn written_after(keys: &BTreeMap<i64, ChainKey>, r: &Record, x: &Record) -> Option<i64> {
    if x.seq + 1 == r.seq {
        return None;
    }
    let xh = encode::hex32(&x.hmac_chain)?;
    chains(keys, &with_seq(r, x.seq + 1), &xh).then_some(x.seq + 1)
}

/// R is neither out of place nor explained by its successor: a torn last write when it is
/// the last record, malformed, and no checkpoint vouched for it; modified otherwise.
fn torn_or_modified(r: &Record, is_last: bool, checkpoints: &[Checkpoint]) -> Finding {
    let vouched = checkpoints.iter().any(|c| c.seq >= r.seq);
    if is_last && !vouched && malformed(r) {
        Finding::TornLastWrite { seq: r.seq }
    } else {
        Finding::Modified { seq: r.seq }
    }
}

/// Classify the first record of `records` (at `i`) that does not chain, with the records
/// at hand: the same rules as for a store.
fn classify_loaded(
    keys: &BTreeMap<i64, ChainKey>,
    records: &[Record],
    i: usize,
    prev: &[u8; 32],
    checkpoints: &[Checkpoint],
) -> Finding {
    let r = &records[i];
    let next = records.get(i + 1);
    if let Some(f) = judge_by_successor(keys, r, next, prev) {
        return f;
    }
    if encode::hex32(&r.hmac_chain).is_some() {
        if written_first(keys, r) {
            return Finding::Reordered {
                seq: r.seq,
                belongs_at: 1,
            };
        }
        if let Some(belongs_at) = records.iter().find_map(|x| written_after(keys, r, x)) {
            return Finding::Reordered {
                seq: r.seq,
                belongs_at,
            };
        }
    }
    torn_or_modified(r, next.is_none(), checkpoints)
}

fn malformed(r: &Record) -> bool {
    encode::hex32(&r.hmac_chain).is_none()
        || serde_json::from_str::<serde_json::Value>(&r.event.metadata).is_err()
        || r.event.action.is_empty()
}

/// Check the checkpoints against the chain heads seen, then the anchors against the store.
/// `heads`: seq → stored chain value at the checkpoints' positions; `digests` the same for
/// the public digest chain, when it was computed.
fn check_checkpoints(
    input: &VerifyInput,
    moves: &[KeyMove],
    checkpoints: &[Checkpoint],
    heads: &HashMap<i64, [u8; 32]>,
    digests: Option<&HashMap<i64, [u8; 32]>>,
    last_seq: i64,
) -> Option<Finding> {
    let trust = Trust::new(input.trusted_public_key.as_deref(), moves);
    check_each_checkpoint(input, &trust, checkpoints, heads, digests, last_seq)
        .or_else(|| check_anchors(input, &trust, checkpoints, last_seq))
}

/// Each checkpoint in order: signed by a trusted key (not one retired before it),
/// validly, for this trail, not beyond the last record, and matching the chain (and
/// digest) values at its position.
fn check_each_checkpoint(
    input: &VerifyInput,
    trust: &Trust,
    checkpoints: &[Checkpoint],
    heads: &HashMap<i64, [u8; 32]>,
    digests: Option<&HashMap<i64, [u8; 32]>>,
    last_seq: i64,
) -> Option<Finding> {
    // The last record a checkpoint that held vouched for: a span's damage starts after it.
    let mut vouched = 0;
    // The newest trusted key that signed so far.
    let mut newest = 0;
    for c in checkpoints {
        match trust.position(&c.public_key) {
            Some(at) if at >= newest => newest = at,
            _ => {
                return Some(Finding::CheckpointKeyReplaced {
                    checkpoint_no: c.checkpoint_no,
                    seq: c.seq,
                })
            }
        }
        if check_checkpoint_signature(c).is_err() || c.log_id != input.log_id {
            return Some(Finding::CheckpointSignatureInvalid {
                checkpoint_no: c.checkpoint_no,
                seq: c.seq,
            });
        }
        if c.seq > last_seq {
            // Every record up to the furthest checkpoint that verifies is missing.
            let checkpoint_seq = checkpoints
                .iter()
                .filter(|x| x.seq > c.seq && x.log_id == input.log_id)
                .filter(|x| trust.trusts(&x.public_key))
                .filter(|x| check_checkpoint_signature(x).is_ok())
                .map(|x| x.seq)
                .fold(c.seq, i64::max);
            return Some(Finding::TruncatedTail {
                last_seq,
                checkpoint_seq,
            });
        }
        let head = if c.seq == 0 {
            Some(&GENESIS)
        } else {
            heads.get(&c.seq)
        };
        if head.map(hex::encode).as_deref() != Some(c.head_hmac.as_str()) {
            return Some(Finding::CheckpointMismatch {
                checkpoint_no: c.checkpoint_no,
                seq: c.seq,
            });
        }
        if let Some(d) = digests {
            let dh = if c.seq == 0 {
                Some(&GENESIS)
            } else {
                d.get(&c.seq)
            };
            if dh.map(hex::encode).as_deref() != Some(c.head_digest.as_str()) {
                // The chain values matched and the digests did not: the records' content
                // changed where nothing checked their seals (no key), somewhere in this
                // checkpoint's span.
                return Some(if c.seq > vouched {
                    Finding::ModifiedBetween {
                        from_seq: vouched + 1,
                        to_seq: c.seq,
                        checkpoint_no: c.checkpoint_no,
                    }
                } else {
                    Finding::CheckpointMismatch {
                        checkpoint_no: c.checkpoint_no,
                        seq: c.seq,
                    }
                });
            }
        }
        vouched = vouched.max(c.seq);
    }
    None
}

/// The anchors (checkpoints remembered outside the store): one newer than the store's
/// last checkpoint or record is a rollback; one that differs from the store's checkpoint
/// of its number, a mismatch. Anchors that do not verify are ignored.
fn check_anchors(
    input: &VerifyInput,
    trust: &Trust,
    checkpoints: &[Checkpoint],
    last_seq: i64,
) -> Option<Finding> {
    let store_cp = checkpoints.last().map(|c| c.checkpoint_no).unwrap_or(0);
    for a in &input.anchors {
        if a.log_id != input.log_id {
            continue;
        }
        if check_checkpoint_signature(a).is_err() || !trust.trusts(&a.public_key) {
            // An anchor that does not verify is ignored, not believed.
            continue;
        }
        if a.checkpoint_no > store_cp || a.seq > last_seq {
            return Some(Finding::Rollback {
                store_seq: last_seq,
                anchor_seq: a.seq,
                anchor_checkpoint: a.checkpoint_no,
            });
        }
        if let Some(c) = checkpoints
            .iter()
            .find(|c| c.checkpoint_no == a.checkpoint_no)
        {
            if c.head_hmac != a.head_hmac || c.seq != a.seq {
                return Some(Finding::CheckpointMismatch {
                    checkpoint_no: a.checkpoint_no,
                    seq: a.seq,
                });
            }
        }
    }
    None
}

/// Verify records (already loaded, e.g. from an export) with or without MAC keys. Without
/// keys, the public digest chain is checked against the signed checkpoints.
pub fn verify_records(
    input: &VerifyInput,
    records: &[Record],
    checkpoints: &[Checkpoint],
    prev_hmac: [u8; 32],
    prev_digest: [u8; 32],
    torn: bool,
) -> Verdict {
    let use_macs = !input.keys.is_empty();
    let wanted: std::collections::HashSet<i64> = checkpoints.iter().map(|c| c.seq).collect();
    let mut heads = HashMap::new();
    let mut digests = HashMap::new();
    let mut prev = prev_hmac;
    let mut digest = prev_digest;
    // Records chained onto the genesis value start the trail: the first is record 1.
    let mut last_seq = match records.first() {
        Some(r) if prev_hmac != GENESIS => r.seq - 1,
        _ => 0,
    };
    for (i, r) in records.iter().enumerate() {
        if r.log_id != input.log_id {
            return Verdict::broken(
                Finding::Grafted {
                    seq: r.seq,
                    foreign_log: r.log_id.clone(),
                },
                i as i64,
            );
        }
        if r.seq != last_seq + 1 {
            return Verdict::broken(Finding::Missing { seq: last_seq + 1 }, i as i64);
        }
        let enc = encode::encode(r);
        if use_macs {
            if !chains(&input.keys, r, &prev) {
                let finding = classify_loaded(&input.keys, records, i, &prev, checkpoints);
                return Verdict::broken(finding, i as i64);
            }
            prev = encode::hex32(&r.hmac_chain).unwrap_or(GENESIS);
        } else {
            prev = encode::hex32(&r.hmac_chain).unwrap_or(GENESIS);
        }
        digest = encode::digest_link(&enc, &digest);
        if wanted.contains(&r.seq) {
            heads.insert(r.seq, prev);
            digests.insert(r.seq, digest);
        }
        last_seq = r.seq;
    }
    if torn {
        return Verdict::broken(
            Finding::TornLastWrite { seq: last_seq + 1 },
            records.len() as i64,
        );
    }
    // Without the MAC key, a record changed after the last checkpoint cannot be told; the
    // digest chain still binds everything up to it.
    let moves = key_moves(records);
    if let Some(f) = check_checkpoints(input, &moves, checkpoints, &heads, Some(&digests), last_seq)
    {
        return Verdict::broken(f, records.len() as i64);
    }
    intact(input, checkpoints, records.len() as i64, last_seq, use_macs)
}
