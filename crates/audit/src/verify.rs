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
//! - R is the last record and is malformed → a **torn last write** after a crash;
//! - otherwise R was modified (content and chain value both rewritten).
//!
//! Records carrying another trail's `log_id` are **grafted**. A checkpoint beyond the last
//! record means a **truncated tail**; an anchor newer than the store, a **rollback**.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::encode::{self, ChainKey, GENESIS};
use crate::store::Store;
use crate::{AuditError, Checkpoint, Record, Result};

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

pub struct VerifyInput {
    pub log_id: String,
    pub keys: BTreeMap<i64, ChainKey>,
    pub trusted_public_key: Option<Vec<u8>>,
    pub anchors: Vec<Checkpoint>,
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

fn malformed(r: &Record) -> bool {
    encode::hex32(&r.hmac_chain).is_none()
        || serde_json::from_str::<serde_json::Value>(&r.event.metadata).is_err()
        || r.event.action.is_empty()
}

/// Classify the first record whose MAC does not chain.
async fn classify(
    store: &Store,
    input: &VerifyInput,
    r: &Record,
    prev: [u8; 32],
) -> Result<Finding> {
    let next = store
        .trail_page(&input.log_id, r.seq, 1)
        .await?
        .into_iter()
        .next();
    let stored_r = encode::hex32(&r.hmac_chain);
    if let Some(n) = &next {
        if n.seq == r.seq + 1 {
            if let Some(sr) = stored_r {
                if chains(&input.keys, n, &sr) {
                    return Ok(Finding::Modified { seq: r.seq });
                }
                if chains(&input.keys, &with_seq(n, n.seq + 1), &sr) {
                    return Ok(Finding::Missing { seq: r.seq });
                }
            }
            if chains(&input.keys, &with_seq(n, r.seq), &prev) {
                return Ok(Finding::Inserted { seq: r.seq });
            }
        }
    }
    // Was R written at another position? Try every predecessor the trail offers.
    if stored_r.is_some() {
        if r.seq != 1 && chains(&input.keys, &with_seq(r, 1), &GENESIS) {
            return Ok(Finding::Reordered {
                seq: r.seq,
                belongs_at: 1,
            });
        }
        let mut after = 0;
        loop {
            let page = store.trail_page(&input.log_id, after, 10_000).await?;
            if page.is_empty() {
                break;
            }
            for x in &page {
                if x.seq + 1 != r.seq {
                    if let Some(xh) = encode::hex32(&x.hmac_chain) {
                        if chains(&input.keys, &with_seq(r, x.seq + 1), &xh) {
                            return Ok(Finding::Reordered {
                                seq: r.seq,
                                belongs_at: x.seq + 1,
                            });
                        }
                    }
                }
                after = x.seq;
            }
        }
    }
    if next.is_none() && malformed(r) {
        return Ok(Finding::TornLastWrite { seq: r.seq });
    }
    Ok(Finding::Modified { seq: r.seq })
}

/// Check the checkpoints against the chain heads seen, then the anchors against the store.
/// `heads`: seq → stored chain value at the checkpoints' positions.
fn check_checkpoints(
    input: &VerifyInput,
    checkpoints: &[Checkpoint],
    heads: &HashMap<i64, [u8; 32]>,
    digests: Option<&HashMap<i64, [u8; 32]>>,
    last_seq: i64,
) -> Option<Finding> {
    let trusted = input.trusted_public_key.as_ref().map(hex::encode);
    for c in checkpoints {
        if let Some(t) = &trusted {
            if &c.public_key != t {
                return Some(Finding::CheckpointKeyReplaced {
                    checkpoint_no: c.checkpoint_no,
                    seq: c.seq,
                });
            }
        }
        if check_checkpoint_signature(c).is_err() || c.log_id != input.log_id {
            return Some(Finding::CheckpointSignatureInvalid {
                checkpoint_no: c.checkpoint_no,
                seq: c.seq,
            });
        }
        if c.seq > last_seq {
            return Some(Finding::TruncatedTail {
                last_seq,
                checkpoint_seq: c.seq,
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
                return Some(Finding::CheckpointMismatch {
                    checkpoint_no: c.checkpoint_no,
                    seq: c.seq,
                });
            }
        }
    }
    let store_cp = checkpoints.last().map(|c| c.checkpoint_no).unwrap_or(0);
    for a in &input.anchors {
        if a.log_id != input.log_id {
            continue;
        }
        if check_checkpoint_signature(a).is_err()
            || trusted
                .as_ref()
                .map(|t| t != &a.public_key)
                .unwrap_or(false)
        {
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

/// How the MAC thread ended.
enum ScanOutcome {
    /// Every record chained; the new predecessor, position and count.
    Done {
        last_seq: i64,
        checked: i64,
        heads: Vec<(i64, [u8; 32])>,
    },
    /// A structural finding (a gap) decided without lookahead.
    Found(Finding, i64),
    /// The record at `seq` does not chain onto `prev`.
    Mismatch {
        seq: i64,
        prev: [u8; 32],
        checked: i64,
    },
    Cancelled,
}

/// Checks one range's rows as the scanner reads them: encode, MAC, compare.
struct RangeChecker {
    keys: BTreeMap<i64, ChainKey>,
    wanted: std::sync::Arc<std::collections::HashSet<i64>>,
    prev: [u8; 32],
    last_seq: i64,
    checked: i64,
    heads: Vec<(i64, [u8; 32])>,
    buf: Vec<u8>,
    progress: std::sync::Arc<std::sync::atomic::AtomicI64>,
    stop: std::sync::Arc<AtomicBool>,
    outcome: Option<ScanOutcome>,
}

impl crate::scan::Visit for RangeChecker {
    fn row(&mut self, f: &encode::Fields<'_>, hmac_hex: &[u8]) -> bool {
        if f.seq != self.last_seq + 1 {
            self.outcome = Some(ScanOutcome::Found(
                Finding::Missing {
                    seq: self.last_seq + 1,
                },
                self.checked,
            ));
            return false;
        }
        let mut stored = [0u8; 32];
        let parsed = hmac_hex.len() == 64 && hex::decode_to_slice(hmac_hex, &mut stored).is_ok();
        let ok = match self.keys.get(&f.epoch) {
            Some(k) if parsed => {
                self.buf.clear();
                encode::encode_fields(f, &mut self.buf);
                k.link(&self.buf, &self.prev) == stored
            }
            _ => false,
        };
        if !ok {
            self.outcome = Some(ScanOutcome::Mismatch {
                seq: f.seq,
                prev: self.prev,
                checked: self.checked,
            });
            return false;
        }
        self.prev = stored;
        self.last_seq = f.seq;
        self.checked += 1;
        if self.wanted.contains(&f.seq) {
            self.heads.push((f.seq, stored));
        }
        if self.checked % 8192 == 0 {
            self.progress.fetch_add(8192, Ordering::Relaxed);
            if self.stop.load(Ordering::Relaxed) {
                self.outcome = Some(ScanOutcome::Cancelled);
                return false;
            }
        }
        true
    }
}

impl RangeChecker {
    fn finish(self) -> ScanOutcome {
        self.outcome.unwrap_or(ScanOutcome::Done {
            last_seq: self.last_seq,
            checked: self.checked,
            heads: self.heads,
        })
    }
}

/// Verify a whole store with the MAC keys.
///
/// Each record's check needs only its own bytes and its predecessor's stored chain value,
/// so the trail is cut into ranges verified in parallel (one per core), each with a
/// scanner (read and encode) feeding a MAC thread; the earliest finding wins. Records of
/// other trails are looked for separately.
pub async fn verify_store(
    store: &Store,
    input: VerifyInput,
    progress: &(dyn Fn(i64, i64) + Send + Sync),
    cancel: &AtomicBool,
) -> Result<Verdict> {
    use std::sync::Arc;
    if let Some((foreign_log, seq)) = store.foreign_record(&input.log_id).await? {
        return Ok(Verdict::broken(Finding::Grafted { seq, foreign_log }, 0));
    }
    let total = store.count().await?;
    let head_seq = store.head(&input.log_id).await?.map(|h| h.0).unwrap_or(0);
    let checkpoints = store.checkpoints(&input.log_id).await?;
    let wanted: Arc<std::collections::HashSet<i64>> = Arc::new(
        checkpoints
            .iter()
            .map(|c| c.seq)
            .chain(input.anchors.iter().map(|a| a.seq))
            .collect(),
    );
    // One range per core. (For PostgreSQL, one range was tried too: with the server
    // producing rows on one core and the checker on the other it was half as fast.)
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 8) as i64;
    let per = (head_seq / workers).max(1);
    let mut bounds = Vec::new();
    let mut from = 1;
    while from <= head_seq {
        let to = if bounds.len() as i64 == workers - 1 {
            head_seq
        } else {
            (from + per - 1).min(head_seq)
        };
        bounds.push((from, to));
        from = to + 1;
    }
    let count = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut checkers = Vec::new();
    let mut scanners = Vec::new();
    for (from, to) in bounds.iter().copied() {
        // The range starts from the stored chain value of the record before it.
        let prev = if from == 1 {
            GENESIS
        } else {
            match store
                .trail_page(&input.log_id, from - 2, 1)
                .await?
                .into_iter()
                .next()
            {
                Some(r) if r.seq == from - 1 => encode::hex32(&r.hmac_chain).unwrap_or(GENESIS),
                _ => GENESIS, // the range before reports the problem first
            }
        };
        let range = crate::scan::Range {
            log_id: input.log_id.clone(),
            from,
            to,
        };
        let mut checker = RangeChecker {
            keys: input.keys.clone(),
            wanted: wanted.clone(),
            prev,
            last_seq: from - 1,
            checked: 0,
            heads: Vec::new(),
            buf: Vec::with_capacity(1024),
            progress: count.clone(),
            stop: stop.clone(),
            outcome: None,
        };
        checkers.push(match store {
            Store::Sqlite(_, path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || {
                    crate::scan::sqlite(&path, &range, &mut checker).map(|_| checker.finish())
                })
            }
            Store::Postgres(pool) => {
                let (tx, rx) = tokio::sync::mpsc::channel(16);
                scanners.push(tokio::spawn(crate::scan::postgres_chunks(
                    pool.clone(),
                    range,
                    tx,
                )));
                tokio::task::spawn_blocking(move || {
                    crate::scan::postgres_rows(rx, &mut checker).map(|_| checker.finish())
                })
            }
        });
    }
    let mut results = Vec::new();
    let all = futures_util::future::join_all(checkers);
    tokio::pin!(all);
    let outcomes = loop {
        tokio::select! {
            r = &mut all => break r,
            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {
                progress(count.load(Ordering::Relaxed), total);
                if cancel.load(Ordering::Relaxed) {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
    };
    for s in scanners {
        let _ = s.await;
    }
    for o in outcomes {
        results
            .push(o.map_err(|e| AuditError::Invalid(format!("verification task failed: {e}")))??);
    }
    // Ranges in order: the first one with a finding names the first bad record.
    let mut checked = 0i64;
    let mut heads: HashMap<i64, [u8; 32]> = HashMap::new();
    let mut last_seq = 0;
    for outcome in results {
        match outcome {
            ScanOutcome::Done {
                last_seq: l,
                checked: c,
                heads: h,
            } => {
                checked += c;
                last_seq = l;
                heads.extend(h);
            }
            ScanOutcome::Found(f, c) => return Ok(Verdict::broken(f, checked + c)),
            ScanOutcome::Cancelled => return Err(AuditError::Cancelled),
            ScanOutcome::Mismatch {
                seq,
                prev,
                checked: c,
            } => {
                let r = store
                    .trail_page(&input.log_id, seq - 1, 1)
                    .await?
                    .into_iter()
                    .next()
                    .ok_or_else(|| {
                        AuditError::store_state(format!(
                            "record {seq} vanished during verification"
                        ))
                    })?;
                let finding = classify(store, &input, &r, prev).await?;
                return Ok(Verdict::broken(finding, checked + c));
            }
        }
    }
    progress(checked, total);
    if let Some(f) = check_checkpoints(&input, &checkpoints, &heads, None, last_seq) {
        return Ok(Verdict::broken(f, checked));
    }
    Ok(Verdict::Intact {
        records: checked,
        last_seq,
        checkpoints: checkpoints.len() as i64,
        last_checkpoint: checkpoints.last().map(|c| CheckpointSummary {
            checkpoint_no: c.checkpoint_no,
            seq: c.seq,
            time: c.time.clone(),
            algorithm: c.algorithm.clone(),
        }),
        key_pinned: input.trusted_public_key.is_some(),
        macs_checked: true,
    })
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
    let mut last_seq = records.first().map(|r| r.seq - 1).unwrap_or(0);
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
                let finding = if i + 1 == records.len() && malformed(r) {
                    Finding::TornLastWrite { seq: r.seq }
                } else {
                    Finding::Modified { seq: r.seq }
                };
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
    if let Some(f) = check_checkpoints(input, checkpoints, &heads, Some(&digests), last_seq) {
        return Verdict::broken(f, records.len() as i64);
    }
    Verdict::Intact {
        records: records.len() as i64,
        last_seq,
        checkpoints: checkpoints.len() as i64,
        last_checkpoint: checkpoints.last().map(|c| CheckpointSummary {
            checkpoint_no: c.checkpoint_no,
            seq: c.seq,
            time: c.time.clone(),
            algorithm: c.algorithm.clone(),
        }),
        key_pinned: input.trusted_public_key.is_some(),
        macs_checked: use_macs,
    }
}
