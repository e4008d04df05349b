//! Every kind of damage at every kind of position, on SQLite and PostgreSQL.
//!
//! The verifier's classification depends on where the damage sits: at the first record,
//! at a record a checkpoint covers or the one after it, at the first record of a new key
//! epoch, in the middle, at the last record a clean exit's checkpoint covers, and at a last
//! record no checkpoint covers yet. Each case builds the same trail, damages it with SQL
//! from outside the console, and expects the finding the damage itself implies (derived
//! below from the trail's shape, not from the verifier): the store's verdict (what the app
//! and `hsmc audit verify` show) and, for what an export carries, the offline check of an
//! export with the MAC keys.
//!
//! The trail (`checkpoint_every` 10): records 1–14 (a checkpoint after record 10), a key
//! rotation recorded as record 15 (a checkpoint at once), records 16–20 under the new key,
//! a clean exit (a checkpoint covering record 20); for the uncovered tail, the console
//! opens again and writes records 21–22.
//!
//! Each matrix runs twice per backend: with every record a row, and with records sealed
//! into blocks of 4 (records 1–16, or 1–20 with the uncovered tail), the damage done to
//! the sealed records by putting them back into rows, damaging those, and sealing again
//! (`audit::testing::unseal`).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use audit::testing::{SoftSigner, SoftWrapper};
use audit::verify::Finding;
use audit::{AuditConfig, AuditLog, CheckpointSigner, Context, Event, FileAnchor, Verdict};
use testkit::pg::{sqlite3, PgCluster};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Position {
    First,
    Covered,
    AfterCovered,
    Middle,
    NewEpoch,
    LastCovered,
    LastUncovered,
}

const POSITIONS: [Position; 7] = [
    Position::First,
    Position::Covered,
    Position::AfterCovered,
    Position::Middle,
    Position::NewEpoch,
    Position::LastCovered,
    Position::LastUncovered,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    Modify,
    Delete,
    DeleteRenumber,
    Insert,
    Reorder,
    Graft,
    Truncate,
    Rollback,
    ForgeCheckpoint,
    ReplaceCheckpointKey,
    TornWrite,
}

/// The trail as built: what the expectations are derived from.
struct Shape {
    last: i64,
    /// (checkpoint_no, seq), in order.
    checkpoints: Vec<(i64, i64)>,
    first_of_new_epoch: i64,
}

impl Shape {
    fn seq_of(&self, p: Position) -> i64 {
        match p {
            Position::First => 1,
            Position::Covered => self.checkpoints[0].1,
            Position::AfterCovered => self.checkpoints[0].1 + 1,
            Position::Middle => self.checkpoints[0].1 / 2,
            Position::NewEpoch => self.first_of_new_epoch,
            Position::LastCovered | Position::LastUncovered => self.last,
        }
    }

    fn vouched(&self) -> i64 {
        self.checkpoints.iter().map(|c| c.1).max().unwrap_or(0)
    }

    /// The first checkpoint covering `seq`.
    fn covering(&self, seq: i64) -> Option<(i64, i64)> {
        self.checkpoints.iter().copied().find(|c| c.1 >= seq)
    }
}

/// What the damage implies. `None`: the damage is not applicable at this position (no
/// checkpoint covers it). `Some(None)`: it cannot be seen — the trail verifies (records
/// after the last checkpoint are protected only once the next one is written).
fn expected(d: Damage, p: Position, s: &Shape) -> Option<Option<Finding>> {
    let seq = s.seq_of(p);
    let last = s.last;
    let tail_cut = |from: i64| {
        (s.vouched() >= from).then_some(Finding::TruncatedTail {
            last_seq: from - 1,
            checkpoint_seq: s.vouched(),
        })
    };
    Some(match d {
        Damage::Modify => Some(Finding::Modified { seq }),
        Damage::Delete | Damage::DeleteRenumber if seq == last => tail_cut(seq),
        Damage::Delete | Damage::DeleteRenumber => Some(Finding::Missing { seq }),
        Damage::Insert => Some(Finding::Inserted { seq }),
        Damage::Reorder => {
            let other = if seq < last { seq + 1 } else { seq - 1 };
            Some(Finding::Reordered {
                seq: seq.min(other),
                belongs_at: seq.max(other),
            })
        }
        Damage::Graft => Some(Finding::Grafted {
            seq,
            foreign_log: String::new(),
        }),
        Damage::Truncate => tail_cut(seq),
        Damage::Rollback => {
            let (no, at) = *s.checkpoints.last().unwrap();
            (at >= seq).then_some(Finding::Rollback {
                store_seq: seq - 1,
                anchor_seq: at,
                anchor_checkpoint: no,
            })
        }
        Damage::ForgeCheckpoint => {
            let (checkpoint_no, seq) = s.covering(seq)?;
            Some(Finding::CheckpointSignatureInvalid { checkpoint_no, seq })
        }
        Damage::ReplaceCheckpointKey => {
            let (checkpoint_no, seq) = s.covering(seq)?;
            Some(Finding::CheckpointKeyReplaced { checkpoint_no, seq })
        }
        // A torn write is a crash only where nothing vouched for the record afterwards.
        Damage::TornWrite if seq == last && s.covering(seq).is_none() => {
            Some(Finding::TornLastWrite { seq })
        }
        Damage::TornWrite => Some(Finding::Modified { seq }),
    })
}

/// What an offline check of an export can see of the same damage: an export holds one
/// trail's records and the store's checkpoints, not the anchors kept outside the store nor
/// rows of other trails.
fn expected_offline(d: Damage, store: Option<Finding>) -> Option<Finding> {
    match d {
        Damage::Graft | Damage::Rollback => None,
        _ => store,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Backend {
    Sqlite,
    Postgres,
}

/// One damaged store.
struct Case<'a> {
    /// Records per sealed block.
    block_size: i64,
    dir: tempfile::TempDir,
    pg: Option<(&'a PgCluster, String)>,
    location: String,
}

impl<'a> Case<'a> {
    fn new(pg: Option<&'a PgCluster>, n: usize, block_size: i64) -> Case<'a> {
        let dir = tempfile::tempdir().unwrap();
        match pg {
            None => {
                let location = dir.path().join("audit.db").display().to_string();
                Case {
                    block_size,
                    dir,
                    pg: None,
                    location,
                }
            }
            Some(pg) => {
                let db = format!("positions{n}");
                let location = pg.create_db(&db);
                Case {
                    block_size,
                    dir,
                    pg: Some((pg, db)),
                    location,
                }
            }
        }
    }

    fn sql(&self, sql: &str) -> String {
        match &self.pg {
            None => sqlite3(std::path::Path::new(&self.location), sql),
            Some((pg, db)) => pg.psql(db, sql),
        }
    }

    async fn open(&self) -> AuditLog {
        let mut c = AuditConfig::new(&self.location);
        c.checkpoint_every = 10;
        c.block_size = self.block_size;
        let log = AuditLog::open(c, Context::local())
            .await
            .unwrap()
            .with_anchor(Arc::new(FileAnchor::new(
                self.dir.path().join("anchor.json"),
            )));
        log.unlock(wrapper(), signer()).await.unwrap();
        log
    }
}

fn wrapper() -> Arc<SoftWrapper> {
    Arc::new(SoftWrapper::new([7; 32], b"kek"))
}

fn signer() -> Arc<SoftSigner> {
    Arc::new(SoftSigner::new([9; 32]))
}

async fn fill(log: &AuditLog, from: usize, n: usize) {
    for i in from..from + n {
        log.append(Event::new("key.sign", "private_key").meta("i", i))
            .await
            .unwrap();
    }
}

/// Build the trail; the shape is read back from the store.
async fn build(case: &Case<'_>, uncovered_tail: bool) -> (AuditLog, Shape) {
    let log = case.open().await;
    fill(&log, 0, 14).await;
    log.rotate_key(wrapper()).await.unwrap();
    fill(&log, 14, 5).await;
    log.close().await.unwrap();
    let log = case.open().await;
    if uncovered_tail {
        fill(&log, 19, 2).await;
    }
    let records = log
        .records(&audit::store::Query {
            limit: 1000,
            ascending: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let checkpoints = log.checkpoints().await.unwrap();
    let shape = Shape {
        last: records.last().unwrap().seq,
        checkpoints: checkpoints
            .iter()
            .map(|c| (c.checkpoint_no, c.seq))
            .collect(),
        first_of_new_epoch: records.iter().find(|r| r.epoch == 1).unwrap().seq,
    };
    (log, shape)
}

const COLUMNS: &str = "log_id, seq, epoch, timestamp, session_id, actor_id, actor_ip, action, resource_type, resource_id, algorithm, status, error_code, metadata, hmac_chain, created_at";

/// Apply the damage with SQL from outside the console, to sealed records too (unsealed
/// first, sealed again after).
async fn damage(case: &Case<'_>, log: &AuditLog, d: Damage, seq: i64, s: &Shape) {
    audit::testing::unseal(log.store(), log.log_id()).await;
    damage_rows(case, log, d, seq, s).await;
    log.store()
        .seal(log.log_id(), case.block_size, usize::MAX)
        .await
        .unwrap();
}

async fn damage_rows(case: &Case<'_>, log: &AuditLog, d: Damage, seq: i64, s: &Shape) {
    match d {
        Damage::Modify => {
            case.sql(&format!(
                "UPDATE audit_log SET metadata = '{{\"i\":999}}' WHERE seq = {seq}"
            ));
        }
        Damage::Delete => {
            case.sql(&format!("DELETE FROM audit_log WHERE seq = {seq}"));
        }
        Damage::DeleteRenumber => {
            case.sql(&format!("DELETE FROM audit_log WHERE seq = {seq}"));
            case.sql(&format!(
                "UPDATE audit_log SET seq = -seq WHERE seq > {seq}"
            ));
            case.sql("UPDATE audit_log SET seq = -seq - 1 WHERE seq < 0");
        }
        Damage::Insert => {
            case.sql(&format!(
                "UPDATE audit_log SET seq = -seq WHERE seq >= {seq}"
            ));
            case.sql("UPDATE audit_log SET seq = -seq + 1 WHERE seq < 0");
            let next = seq + 1;
            case.sql(&format!(
                "INSERT INTO audit_log ({COLUMNS}) SELECT log_id, {seq}, epoch, timestamp, session_id, 'mallory@outside', actor_ip, 'key.export', resource_type, resource_id, algorithm, status, error_code, '{{}}', hmac_chain, created_at FROM audit_log WHERE seq = {next}"
            ));
        }
        Damage::Reorder => {
            let other = if seq < s.last { seq + 1 } else { seq - 1 };
            case.sql(&format!(
                "UPDATE audit_log SET seq = 100000 WHERE seq = {seq}"
            ));
            case.sql(&format!(
                "UPDATE audit_log SET seq = {seq} WHERE seq = {other}"
            ));
            case.sql(&format!(
                "UPDATE audit_log SET seq = {other} WHERE seq = 100000"
            ));
        }
        Damage::Graft => {
            let other_dir = tempfile::tempdir().unwrap();
            let other_loc = other_dir.path().join("other.db").display().to_string();
            let other = AuditLog::open(AuditConfig::new(&other_loc), Context::local())
                .await
                .unwrap();
            other
                .unlock(Arc::new(SoftWrapper::new([3; 32], b"other")), signer())
                .await
                .unwrap();
            let f = other
                .append(Event::new("key.destroy", "private_key").resource("prod-root"))
                .await
                .unwrap();
            case.sql(&format!(
                "INSERT INTO audit_log ({COLUMNS}) VALUES ('{}', {seq}, 0, '{}', '{}', 'x', '127.0.0.1', '{}', '{}', 'prod-root', NULL, 'success', NULL, '{}', '{}', '{}')",
                f.log_id, f.event.timestamp, f.event.session_id, f.event.action, f.event.resource_type, f.event.metadata, f.hmac_chain, f.created_at
            ));
        }
        Damage::Truncate => {
            case.sql(&format!("DELETE FROM audit_log WHERE seq >= {seq}"));
        }
        Damage::Rollback => {
            case.sql(&format!("DELETE FROM audit_log WHERE seq >= {seq}"));
            case.sql(&format!("DELETE FROM audit_checkpoint WHERE seq >= {seq}"));
        }
        Damage::ForgeCheckpoint => {
            let (no, _) = s.covering(seq).unwrap();
            case.sql(&format!(
                "UPDATE audit_checkpoint SET time = '2020-01-01T00:00:00.000Z' WHERE checkpoint_no = {no}"
            ));
        }
        Damage::ReplaceCheckpointKey => {
            let (no, _) = s.covering(seq).unwrap();
            let mallory = SoftSigner::new([5; 32]);
            let mut cp = log
                .checkpoints()
                .await
                .unwrap()
                .into_iter()
                .find(|c| c.checkpoint_no == no)
                .unwrap();
            cp.public_key = hex::encode(mallory.public_key_spki());
            let sig = mallory
                .sign(&audit::verify::checkpoint_message(&cp).unwrap())
                .unwrap();
            case.sql(&format!(
                "UPDATE audit_checkpoint SET public_key = '{}', signature = '{}' WHERE checkpoint_no = {no}",
                cp.public_key,
                hex::encode(sig)
            ));
        }
        Damage::TornWrite => {
            case.sql(&format!("UPDATE audit_log SET hmac_chain = substr(hmac_chain, 1, 9), metadata = substr(metadata, 1, 4) WHERE seq = {seq}"));
        }
    }
}

fn finding_of(v: &Verdict) -> Option<Finding> {
    match v {
        Verdict::Intact { .. } => None,
        Verdict::Broken { finding, .. } => Some(match finding {
            // The foreign trail's ID is random; the kind and the position are what count.
            Finding::Grafted { seq, .. } => Finding::Grafted {
                seq: *seq,
                foreign_log: String::new(),
            },
            f => f.clone(),
        }),
    }
}

async fn chain_keys(log: &AuditLog) -> BTreeMap<i64, audit::encode::ChainKey> {
    log.chain_keys().await.expect("unlocked")
}

/// Every position for one kind of damage; each case on a store of its own. Returns the
/// cases that came out otherwise than the damage implies.
async fn run(backend: Backend, block_size: i64, d: Damage) {
    let pg = (backend == Backend::Postgres).then(PgCluster::start);
    let mut wrong = Vec::new();
    for (n, p) in POSITIONS.into_iter().enumerate() {
        let case = Case::new(pg.as_ref(), n, block_size);
        let (log, shape) = build(&case, p == Position::LastUncovered).await;
        let sealed = log.store().sealed_to(log.log_id()).await.unwrap();
        assert_eq!(
            sealed,
            (shape.last - 1) / block_size * block_size,
            "all but the last records sealed"
        );
        let Some(want) = expected(d, p, &shape) else {
            continue;
        };
        let seq = shape.seq_of(p);
        let keys = chain_keys(&log).await;
        damage(&case, &log, d, seq, &shape).await;
        drop(log);
        // A console opening the damaged store (as the app and hsmc do) and verifying it.
        let log = case.open().await;
        let pinned = Some(signer().public_key_spki());
        let v = log
            .verify(pinned.clone(), &|_, _| {}, &AtomicBool::new(false))
            .await
            .unwrap();
        let got = finding_of(&v);
        if got != want {
            wrong.push(format!(
                "{d:?} at {p:?} (record {seq}), store: expected {want:?}, got {got:?}"
            ));
        }
        // The same store exported and checked offline with the MAC keys.
        let out = case.dir.path().join("export.jsonl");
        audit::export::export_jsonl(&log, &Default::default(), &out, None)
            .await
            .unwrap();
        let parsed = audit::export::read_jsonl(&out).unwrap();
        let offline = audit::export::verify_export(&parsed, Some(keys), pinned);
        let (got, want) = (finding_of(&offline), expected_offline(d, want));
        if got != want {
            wrong.push(format!(
                "{d:?} at {p:?} (record {seq}), export: expected {want:?}, got {got:?}"
            ));
        }
        // Dropped, not closed: a clean exit would sign a checkpoint over the damage.
        drop(log);
    }
    assert!(
        wrong.is_empty(),
        "{} cases:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

macro_rules! matrix {
    ($module:ident, $backend:ident, $block_size:expr; $($name:ident => $damage:ident),* $(,)?) => {
        #[allow(non_snake_case)]
        mod $module {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    run(Backend::$backend, $block_size, Damage::$damage).await;
                }
            )*
        }
    };
}

macro_rules! every_damage {
    ($module:ident, $backend:ident, $block_size:expr) => {
        matrix!($module, $backend, $block_size;
            modify => Modify,
            delete => Delete,
            delete_and_renumber => DeleteRenumber,
            insert => Insert,
            reorder => Reorder,
            graft => Graft,
            truncate => Truncate,
            roll_back => Rollback,
            forge_checkpoint => ForgeCheckpoint,
            replace_checkpoint_key => ReplaceCheckpointKey,
            torn_write => TornWrite,
        );
    };
}

// Blocks of 1,024: no record of these trails is sealed.
every_damage!(Sqlite, Sqlite, 1024);
every_damage!(Postgres, Postgres, 1024);
every_damage!(SqliteSealed, Sqlite, 4);
every_damage!(PostgresSealed, Postgres, 4);
