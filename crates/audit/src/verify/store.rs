//! Verifying a whole store with the MAC keys, as a pipeline of named steps:
//!
//! 1. [`find_grafted`]: a record of another trail anywhere in the store;
//! 2. [`survey`]: what the store holds (records, the head, the checkpoints);
//! 3. [`plan_ranges`]: the trail cut into ranges, one per core;
//! 4. [`start_range`]: per range, a reader (the backend's bulk read, see `scan`) feeding a
//!    [`RangeChecker`] (encode, MAC, compare) on a blocking thread;
//! 5. [`await_ranges`]: wait for them, reporting progress and passing on a cancel;
//! 6. [`merge_ranges`]: the ranges' outcomes in order, the earliest finding winning;
//! 7. [`classify_mismatch`]: what happened to the first record that does not chain;
//! 8. `check_checkpoints`: the checkpoints and anchors against the chain heads seen.
//!
//! Each record's check needs only its own bytes and its predecessor's stored chain value,
//! which is what lets the ranges run in parallel, and what keeps reading, decoding and
//! MACing separable.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use super::{
    check_checkpoints, intact, judge_by_successor, key_moves, torn_or_modified, written_after,
    written_first, Finding, KeyMove, Verdict, VerifyInput, CHECKPOINT_KEY_MOVE_ACTION,
};
use crate::encode::{self, ChainKey, GENESIS};
use crate::scan::{self, Range};
use crate::store::{Query, Store};
use crate::{AuditError, Checkpoint, Record, Result};

/// Verify a whole store with the MAC keys: every record of the trail, the checkpoints, the
/// anchors, and records of other trails.
pub async fn verify_store(
    store: &Store,
    input: VerifyInput,
    progress: &(dyn Fn(i64, i64) + Send + Sync),
    cancel: &AtomicBool,
) -> Result<Verdict> {
    if let Some(grafted) = find_grafted(store, &input).await? {
        return Ok(Verdict::broken(grafted, 0));
    }
    let survey = survey(store, &input).await?;
    let ranges = plan_ranges(&input.log_id, survey.head_seq, survey.sealed_to, workers());
    let starts: Vec<i64> = ranges.iter().map(|r| r.from).collect();
    let shared = Shared {
        checked: Arc::new(AtomicI64::new(0)),
        // A cancel before the start stops every range at its first record.
        stop: Arc::new(AtomicBool::new(cancel.load(Ordering::Relaxed))),
    };
    let mut tasks = Vec::with_capacity(ranges.len());
    for range in ranges {
        tasks.push(start_range(store, &input, &survey, &shared, range).await?);
    }
    let outcomes = await_ranges(tasks, &shared, survey.total, progress, cancel).await?;
    let walked = match merge_ranges(&starts, outcomes) {
        Merged::Chained(walked) => walked,
        Merged::Broken { finding, checked } => return Ok(Verdict::broken(finding, checked)),
        Merged::Mismatch { seq, prev, checked } => {
            let finding = classify_mismatch(store, &input, &survey.checkpoints, seq, prev).await?;
            return Ok(Verdict::broken(finding, checked));
        }
        Merged::Cancelled => return Err(AuditError::Cancelled),
    };
    progress(walked.checked, survey.total);
    // Read once every record verified: a move is believed only when it is sealed.
    let moves = recorded_moves(store, &input.log_id, walked.last_seq).await?;
    if let Some(f) = check_checkpoints(
        &input,
        &moves,
        &survey.checkpoints,
        &walked.heads,
        None,
        walked.last_seq,
    ) {
        return Ok(Verdict::broken(f, walked.checked));
    }
    Ok(intact(
        &input,
        &survey.checkpoints,
        walked.checked,
        walked.last_seq,
        true,
    ))
}

/// The checkpoint-key moves among the verified records (up to `last_seq`).
pub(crate) async fn recorded_moves(
    store: &Store,
    log_id: &str,
    last_seq: i64,
) -> Result<Vec<KeyMove>> {
    let records = store
        .query(
            log_id,
            &Query {
                action: Some(CHECKPOINT_KEY_MOVE_ACTION.into()),
                after_seq: Some(0),
                limit: 10_000,
                ascending: true,
                ..Query::default()
            },
        )
        .await?;
    Ok(key_moves(records.iter().filter(|r| r.seq <= last_seq)))
}

/// Step 1: the first record (by trail, seq) that carries another trail's ID.
async fn find_grafted(store: &Store, input: &VerifyInput) -> Result<Option<Finding>> {
    Ok(store
        .foreign_record(&input.log_id)
        .await?
        .map(|(foreign_log, seq)| Finding::Grafted { seq, foreign_log }))
}

/// What the store holds before the walk.
struct Survey {
    /// Records in the store, all trails (the progress total).
    total: i64,
    /// The trail's last `seq` (0 when empty): the walk covers `1..=head_seq`.
    head_seq: i64,
    /// The last position read from sealed blocks (0 when none).
    sealed_to: i64,
    checkpoints: Vec<Checkpoint>,
    /// The positions whose chain values the checkpoints and anchors are compared with.
    wanted: Arc<HashSet<i64>>,
}

/// Step 2.
async fn survey(store: &Store, input: &VerifyInput) -> Result<Survey> {
    let total = store.count().await?;
    let sealed_to = store.sealed_to(&input.log_id).await?;
    // The head is a row (sealing keeps it one); should the rows be gone, the blocks still
    // say how far the trail went.
    let head_seq = store
        .head(&input.log_id)
        .await?
        .map(|h| h.0)
        .unwrap_or(0)
        .max(sealed_to);
    let checkpoints = store.checkpoints(&input.log_id).await?;
    let wanted = checkpoints
        .iter()
        .map(|c| c.seq)
        .chain(input.anchors.iter().map(|a| a.seq))
        .collect();
    Ok(Survey {
        total,
        head_seq,
        sealed_to,
        checkpoints,
        wanted: Arc::new(wanted),
    })
}

/// One range per core. (For PostgreSQL, one range was tried too: with the server
/// producing rows on one core and the checker on the other it was half as fast.)
fn workers() -> i64 {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 8) as i64
}

/// Step 3: `1..=head_seq` in at most `workers` contiguous ranges of about equal size (the
/// last one takes the remainder).
fn plan_ranges(log_id: &str, head_seq: i64, sealed_to: i64, workers: i64) -> Vec<Range> {
    let per = (head_seq / workers).max(1);
    let mut ranges: Vec<Range> = Vec::new();
    let mut from = 1;
    while from <= head_seq {
        let to = if ranges.len() as i64 == workers - 1 {
            head_seq
        } else {
            (from + per - 1).min(head_seq)
        };
        ranges.push(Range {
            log_id: log_id.to_string(),
            from,
            to,
            sealed_to,
        });
        from = to + 1;
    }
    ranges
}

/// What the ranges share while they run: the records checked so far (for progress) and
/// the flag that stops them (a cancel).
struct Shared {
    checked: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
}

/// A running range: the checker's task and, where the backend reads on its own task, the
/// reader's.
struct RangeTask {
    checker: JoinHandle<Result<ScanOutcome>>,
    reader: Option<JoinHandle<()>>,
}

/// Step 4: start reading and checking one range.
async fn start_range(
    store: &Store,
    input: &VerifyInput,
    survey: &Survey,
    shared: &Shared,
    range: Range,
) -> Result<RangeTask> {
    let mut checker = RangeChecker {
        log_id: input.log_id.clone(),
        keys: input.keys.clone(),
        wanted: survey.wanted.clone(),
        prev: range_start(store, &input.log_id, range.from).await?,
        last_seq: range.from - 1,
        checked: 0,
        heads: HashMap::new(),
        buf: Vec::with_capacity(1024),
        progress: shared.checked.clone(),
        stop: shared.stop.clone(),
        outcome: None,
    };
    Ok(match store {
        // The SQLite scanner reads and checks on one blocking thread.
        Store::Sqlite(_, path) => {
            let path = path.clone();
            RangeTask {
                checker: tokio::task::spawn_blocking(move || {
                    scan::sqlite(&path, &range, checker).map(RangeChecker::finish)
                }),
                reader: None,
            }
        }
        // PostgreSQL's rows stream in on an async task; parsing and checking them block.
        Store::Postgres(pool) => {
            let (tx, rx) = tokio::sync::mpsc::channel(16);
            RangeTask {
                reader: Some(tokio::spawn(scan::postgres_chunks(
                    pool.clone(),
                    range.clone(),
                    tx,
                ))),
                checker: tokio::task::spawn_blocking(move || {
                    scan::postgres_rows(rx, &range, &mut checker).map(|_| checker.finish())
                }),
            }
        }
    })
}

/// The stored chain value of the record before `from`, which the range's first record
/// chains onto.
async fn range_start(store: &Store, log_id: &str, from: i64) -> Result<[u8; 32]> {
    if from == 1 {
        return Ok(GENESIS);
    }
    let before = store
        .trail_page(log_id, from - 2, 1)
        .await?
        .into_iter()
        .next();
    Ok(match before {
        Some(r) if r.seq == from - 1 => encode::hex32(&r.hmac_chain).unwrap_or(GENESIS),
        _ => GENESIS, // the range before reports the problem first
    })
}

/// Step 5: wait for every range, reporting progress every 100 ms and telling the ranges
/// to stop once `cancel` is set. The outcomes come back in range order.
async fn await_ranges(
    tasks: Vec<RangeTask>,
    shared: &Shared,
    total: i64,
    progress: &(dyn Fn(i64, i64) + Send + Sync),
    cancel: &AtomicBool,
) -> Result<Vec<ScanOutcome>> {
    let (checkers, readers): (Vec<_>, Vec<_>) =
        tasks.into_iter().map(|t| (t.checker, t.reader)).unzip();
    let all = futures_util::future::join_all(checkers);
    tokio::pin!(all);
    let joined = loop {
        tokio::select! {
            r = &mut all => break r,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {
                progress(shared.checked.load(Ordering::Relaxed), total);
                if cancel.load(Ordering::Relaxed) {
                    shared.stop.store(true, Ordering::Relaxed);
                }
            }
        }
    };
    for reader in readers.into_iter().flatten() {
        let _ = reader.await;
    }
    joined
        .into_iter()
        .map(|j| j.map_err(|e| AuditError::Invalid(format!("verification task failed: {e}")))?)
        .collect()
}

/// The chain as the ranges walked it, all of them intact.
struct Walked {
    checked: i64,
    last_seq: i64,
    /// seq → stored chain value, at the positions the checkpoints and anchors name.
    heads: HashMap<i64, [u8; 32]>,
}

/// The ranges' outcomes taken together.
enum Merged {
    Chained(Walked),
    /// A finding decided while walking (a gap).
    Broken {
        finding: Finding,
        checked: i64,
    },
    /// The record at `seq` does not chain onto `prev`: to be classified.
    Mismatch {
        seq: i64,
        prev: [u8; 32],
        checked: i64,
    },
    Cancelled,
}

/// Step 6: the ranges (starting at `starts`) in order; the first one that did not finish
/// names the first bad record (the counts include every range before it). A range that
/// ended before the next one starts is missing its last records.
fn merge_ranges(starts: &[i64], outcomes: Vec<ScanOutcome>) -> Merged {
    let mut walked = Walked {
        checked: 0,
        last_seq: 0,
        heads: HashMap::new(),
    };
    for (i, outcome) in outcomes.into_iter().enumerate() {
        if i > 0
            && starts
                .get(i)
                .is_some_and(|from| walked.last_seq + 1 != *from)
        {
            return Merged::Broken {
                finding: Finding::Missing {
                    seq: walked.last_seq + 1,
                },
                checked: walked.checked,
            };
        }
        match outcome {
            ScanOutcome::Done {
                last_seq,
                checked,
                heads,
            } => {
                walked.checked += checked;
                walked.last_seq = last_seq;
                walked.heads.extend(heads);
            }
            ScanOutcome::Found { finding, checked } => {
                return Merged::Broken {
                    finding,
                    checked: walked.checked + checked,
                }
            }
            ScanOutcome::Mismatch { seq, prev, checked } => {
                return Merged::Mismatch {
                    seq,
                    prev,
                    checked: walked.checked + checked,
                }
            }
            ScanOutcome::Cancelled => return Merged::Cancelled,
        }
    }
    Merged::Chained(walked)
}

/// Step 7: read the record at `seq` again and classify what happened to it.
async fn classify_mismatch(
    store: &Store,
    input: &VerifyInput,
    checkpoints: &[Checkpoint],
    seq: i64,
    prev: [u8; 32],
) -> Result<Finding> {
    let r = store
        .trail_page(&input.log_id, seq - 1, 1)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| {
            AuditError::store_state(format!("record {seq} vanished during verification"))
        })?;
    classify(store, input, checkpoints, &r, prev).await
}

/// Classify the first record whose MAC does not chain (see the module `verify` for the
/// rules): by its successor first, then by where it was written, else torn or modified.
async fn classify(
    store: &Store,
    input: &VerifyInput,
    checkpoints: &[Checkpoint],
    r: &Record,
    prev: [u8; 32],
) -> Result<Finding> {
    let next = store
        .trail_page(&input.log_id, r.seq, 1)
        .await?
        .into_iter()
        .next();
    if let Some(f) = judge_by_successor(&input.keys, r, next.as_ref(), &prev) {
        return Ok(f);
    }
    if let Some(belongs_at) = written_at(store, input, r).await? {
        return Ok(Finding::Reordered {
            seq: r.seq,
            belongs_at,
        });
    }
    Ok(torn_or_modified(r, next.is_none(), checkpoints))
}

/// The position R was written at, when its MAC is right for another one: first, or after
/// any record of the trail but its present predecessor.
async fn written_at(store: &Store, input: &VerifyInput, r: &Record) -> Result<Option<i64>> {
    if encode::hex32(&r.hmac_chain).is_none() {
        return Ok(None);
    }
    if written_first(&input.keys, r) {
        return Ok(Some(1));
    }
    let mut after = 0;
    loop {
        let page = store.trail_page(&input.log_id, after, 10_000).await?;
        let Some(last) = page.last() else {
            return Ok(None);
        };
        after = last.seq;
        if let Some(at) = page.iter().find_map(|x| written_after(&input.keys, r, x)) {
            return Ok(Some(at));
        }
    }
}

/// How a range's checker ended.
enum ScanOutcome {
    /// Every record chained: the range's last position, its count, and the chain values
    /// at the wanted positions.
    Done {
        last_seq: i64,
        checked: i64,
        heads: HashMap<i64, [u8; 32]>,
    },
    /// A structural finding (a gap) decided without lookahead.
    Found {
        finding: Finding,
        checked: i64,
    },
    /// The record at `seq` does not chain onto `prev`.
    Mismatch {
        seq: i64,
        prev: [u8; 32],
        checked: i64,
    },
    Cancelled,
}

/// Checks one range's records as the scanner reads them: encode (rows) or take the stored
/// encoding (sealed records), MAC, compare.
struct RangeChecker {
    log_id: String,
    keys: std::collections::BTreeMap<i64, ChainKey>,
    wanted: Arc<HashSet<i64>>,
    prev: [u8; 32],
    last_seq: i64,
    checked: i64,
    heads: HashMap<i64, [u8; 32]>,
    buf: Vec<u8>,
    progress: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
    outcome: Option<ScanOutcome>,
}

impl RangeChecker {
    fn found(&mut self, finding: Finding) -> bool {
        self.outcome = Some(ScanOutcome::Found {
            finding,
            checked: self.checked,
        });
        false
    }

    /// The record at `seq` (of `epoch`, encoded as `encoded`) with its stored chain value.
    #[inline(always)]
    fn check(&mut self, seq: i64, epoch: i64, encoded: &[u8], hmac_hex: &[u8]) -> bool {
        // Every 8192 records, the first included: has the verification been cancelled?
        if self.checked % 8192 == 0 && self.stop.load(Ordering::Relaxed) {
            self.outcome = Some(ScanOutcome::Cancelled);
            return false;
        }
        if seq != self.last_seq + 1 {
            return self.found(Finding::Missing {
                seq: self.last_seq + 1,
            });
        }
        let stored = match self.keys.get(&epoch) {
            Some(k) => {
                let mac = k.link(encoded, &self.prev);
                stored_matches(hmac_hex, &mac).then_some(mac)
            }
            None => None,
        };
        let Some(stored) = stored else {
            self.outcome = Some(ScanOutcome::Mismatch {
                seq,
                prev: self.prev,
                checked: self.checked,
            });
            return false;
        };
        self.prev = stored;
        self.last_seq = seq;
        self.checked += 1;
        if self.wanted.contains(&seq) {
            self.heads.insert(seq, stored);
        }
        if self.checked % 8192 == 0 {
            self.progress.fetch_add(8192, Ordering::Relaxed);
        }
        true
    }
}

impl scan::Visit for RangeChecker {
    fn row(&mut self, f: &encode::Fields<'_>, hmac_hex: &[u8]) -> bool {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        encode::encode_fields(f, &mut buf);
        let go = self.check(f.seq, f.epoch, &buf, hmac_hex);
        self.buf = buf;
        go
    }

    fn sealed(&mut self, e: &crate::block::Entry<'_>) -> bool {
        // A row of another trail is found by its `log_id` column before the walk; a record
        // of another trail inside this trail's block only here.
        if e.fields.log_id != self.log_id.as_bytes() {
            return self.found(Finding::Grafted {
                seq: e.fields.seq,
                foreign_log: String::from_utf8_lossy(e.fields.log_id).into_owned(),
            });
        }
        self.check(e.fields.seq, e.fields.epoch, e.encoded, e.hmac_chain)
    }

    /// The next record cannot be read: its content was changed.
    fn damaged_block(&mut self) -> bool {
        self.found(Finding::Modified {
            seq: self.last_seq + 1,
        })
    }
}

/// Whether the stored chain value (hex) is `mac`. The writer stores lowercase hex, so
/// comparing with `mac` in lowercase decides almost every row without decoding: decoding
/// 64 hex digits per row measured as most of the checker's own time, about three quarters
/// of the HMAC's. Anything else (uppercase digits, say) is decoded and compared.
#[inline]
fn stored_matches(hmac_hex: &[u8], mac: &[u8; 32]) -> bool {
    let mut lower = [0u8; 64];
    hex::encode_to_slice(mac, &mut lower).expect("64 digits for 32 bytes");
    if hmac_hex == lower {
        return true;
    }
    let mut stored = [0u8; 32];
    hmac_hex.len() == 64 && hex::decode_to_slice(hmac_hex, &mut stored).is_ok() && stored == *mac
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_chain_values_match_in_either_case_of_hex() {
        let mac: [u8; 32] = std::array::from_fn(|i| (i * 37 + 11) as u8);
        let lower = hex::encode(mac);
        assert!(stored_matches(lower.as_bytes(), &mac));
        assert!(stored_matches(lower.to_uppercase().as_bytes(), &mac));
        let mut other = mac;
        other[31] ^= 1;
        assert!(!stored_matches(lower.as_bytes(), &other));
        assert!(!stored_matches(&lower.as_bytes()[..62], &mac));
        assert!(!stored_matches(format!("{lower}00").as_bytes(), &mac));
        assert!(!stored_matches(
            format!("g{}", &lower[1..]).as_bytes(),
            &mac
        ));
        assert!(!stored_matches(b"", &mac));
    }

    fn bounds(head_seq: i64, workers: i64) -> Vec<[i64; 2]> {
        plan_ranges("L", head_seq, 0, workers)
            .iter()
            .map(|r| [r.from, r.to])
            .collect()
    }

    #[test]
    fn ranges_cover_the_trail_once() {
        assert!(bounds(0, 4).is_empty());
        assert_eq!(bounds(1, 4), [[1, 1]]);
        assert_eq!(bounds(3, 4), [[1, 1], [2, 2], [3, 3]]);
        assert_eq!(bounds(10, 4), [[1, 2], [3, 4], [5, 6], [7, 10]]);
        assert_eq!(bounds(10, 1), [[1, 10]]);
    }

    #[test]
    fn the_first_range_that_stopped_names_the_record() {
        let done = |last_seq, checked, head: Option<i64>| ScanOutcome::Done {
            last_seq,
            checked,
            heads: head.map(|s| (s, [s as u8; 32])).into_iter().collect(),
        };
        match merge_ranges(
            &[1, 11, 21],
            vec![
                done(10, 10, Some(5)),
                done(20, 10, None),
                done(30, 10, Some(30)),
            ],
        ) {
            Merged::Chained(w) => {
                assert_eq!((w.checked, w.last_seq), (30, 30));
                assert_eq!(w.heads.len(), 2);
            }
            _ => panic!("every range chained"),
        }
        match merge_ranges(
            &[1, 11, 21],
            vec![
                done(10, 10, None),
                ScanOutcome::Mismatch {
                    seq: 14,
                    prev: [1; 32],
                    checked: 3,
                },
                ScanOutcome::Found {
                    finding: Finding::Missing { seq: 25 },
                    checked: 4,
                },
            ],
        ) {
            Merged::Mismatch { seq, checked, .. } => assert_eq!((seq, checked), (14, 13)),
            _ => panic!("the earlier range's mismatch wins"),
        }
        match merge_ranges(
            &[1, 11],
            vec![
                done(10, 10, None),
                ScanOutcome::Found {
                    finding: Finding::Missing { seq: 12 },
                    checked: 1,
                },
            ],
        ) {
            Merged::Broken { finding, checked } => {
                assert_eq!((finding, checked), (Finding::Missing { seq: 12 }, 11))
            }
            _ => panic!("a gap is a finding"),
        }
        assert!(matches!(
            merge_ranges(&[1, 11], vec![ScanOutcome::Cancelled, done(20, 10, None)]),
            Merged::Cancelled
        ));
        // The first range's last record is gone: the next range starts after a gap.
        match merge_ranges(&[1, 11], vec![done(9, 9, None), done(20, 10, None)]) {
            Merged::Broken { finding, checked } => {
                assert_eq!((finding, checked), (Finding::Missing { seq: 10 }, 9))
            }
            _ => panic!("a gap between ranges is a finding"),
        }
    }
}
