//! The audit trail on a real SQLite file and a real PostgreSQL cluster: appends, fail-closed
//! behaviour, the pending spool, key rotation, concurrency across processes, `kill -9`,
//! and every kind of tampering — done with SQL from outside the console (`sqlite3`, `psql`)
//! — named exactly by the verifier.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use audit::testing::{SoftSigner, SoftWrapper};
use audit::verify::Finding;
use audit::{AuditConfig, AuditError, AuditLog, Context, Event, FileAnchor, KeyStatus, Verdict};
use testkit::pg::{sqlite3, PgCluster};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Sqlite,
    Postgres,
}

struct Env {
    kind: Kind,
    /// Records per sealed block: the default (1,024, which these trails never reach, so
    /// every record stays a row), or a few, so that most records are sealed.
    block_size: i64,
    dir: tempfile::TempDir,
    pg: Option<PgCluster>,
    location: String,
}

const DB: &str = "audit";

impl Env {
    fn new(kind: Kind, block_size: i64) -> Env {
        let dir = tempfile::tempdir().unwrap();
        match kind {
            Kind::Sqlite => {
                let location = dir.path().join("audit.db").display().to_string();
                Env {
                    kind,
                    block_size,
                    dir,
                    pg: None,
                    location,
                }
            }
            Kind::Postgres => {
                let pg = PgCluster::start();
                let location = pg.create_db(DB);
                Env {
                    kind,
                    block_size,
                    dir,
                    pg: Some(pg),
                    location,
                }
            }
        }
    }

    fn db_path(&self) -> PathBuf {
        PathBuf::from(&self.location)
    }

    /// SQL from outside the console.
    fn sql(&self, sql: &str) -> String {
        match self.kind {
            Kind::Sqlite => sqlite3(&self.db_path(), sql),
            Kind::Postgres => self.pg.as_ref().unwrap().psql(DB, sql),
        }
    }

    /// Replace `from` (the same length as `to`) in the body of the block holding `seq`,
    /// byte for byte, from outside the console.
    fn edit_block(&self, seq: i64, from: &[u8], to: &[u8]) {
        assert_eq!(from.len(), to.len());
        let which = format!("log_id = (SELECT log_id FROM audit_trail) AND first_seq <= {seq} AND last_seq >= {seq}");
        match self.kind {
            Kind::Sqlite => {
                let conn = rusqlite::Connection::open(self.db_path()).unwrap();
                let mut body: Vec<u8> = conn
                    .query_row(
                        &format!("SELECT body FROM audit_block WHERE {which}"),
                        [],
                        |r| r.get(0),
                    )
                    .unwrap();
                let at = body
                    .windows(from.len())
                    .position(|w| w == from)
                    .expect("in the block");
                body[at..at + to.len()].copy_from_slice(to);
                conn.execute(
                    &format!("UPDATE audit_block SET body = ?1 WHERE {which}"),
                    [body],
                )
                .unwrap();
            }
            Kind::Postgres => {
                let (from, to) = (hex::encode(from), hex::encode(to));
                assert_eq!(self.sql(&format!(
                    "UPDATE audit_block SET body = overlay(body placing '\\x{to}'::bytea from position('\\x{from}'::bytea in body)) WHERE {which} AND position('\\x{from}'::bytea in body) > 0"
                )), "UPDATE 1");
            }
        }
    }

    fn sealing(&self) -> bool {
        self.block_size < AuditConfig::new("").block_size
    }

    /// Tampering with SQL from outside. Sealed records are first put back into rows, and
    /// sealed again after the SQL ran (as an attacker with write access can: see
    /// `audit::testing::unseal`), so that the damage is inside the blocks.
    async fn tamper(&self, log: &AuditLog, sql: &[&str]) {
        audit::testing::unseal(log.store(), log.log_id()).await;
        for s in sql {
            self.sql(s);
        }
        log.store()
            .seal(log.log_id(), self.block_size, usize::MAX)
            .await
            .unwrap();
    }

    fn config(&self) -> AuditConfig {
        let mut c = AuditConfig::new(&self.location);
        c.checkpoint_every = 100;
        c.block_size = self.block_size;
        c
    }

    fn anchor(&self) -> Arc<FileAnchor> {
        Arc::new(FileAnchor::new(self.dir.path().join("anchor.json")))
    }

    async fn open_locked(&self) -> AuditLog {
        AuditLog::open(self.config(), Context::local())
            .await
            .unwrap()
            .with_anchor(self.anchor())
    }

    async fn open(&self) -> AuditLog {
        let log = self.open_locked().await;
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

fn trusted_key() -> Option<Vec<u8>> {
    use audit::CheckpointSigner;
    Some(signer().public_key_spki())
}

async fn fill(log: &AuditLog, n: usize) {
    for i in 0..n {
        log.append(
            Event::new("key.sign", "private_key")
                .resource(format!("k{}", i % 7))
                .algorithm("ML-DSA-65")
                .meta("i", i),
        )
        .await
        .unwrap();
    }
}

async fn verify(log: &AuditLog) -> Verdict {
    log.verify(trusted_key(), &|_, _| {}, &AtomicBool::new(false))
        .await
        .unwrap()
}

fn finding(v: Verdict) -> Finding {
    match v {
        Verdict::Broken { finding, .. } => finding,
        other => panic!("expected a finding, got {other:?}"),
    }
}

/// A trail of 250 records with checkpoints after 100 and 200.
async fn trail(env: &Env) -> AuditLog {
    let log = env.open().await;
    fill(&log, 250).await;
    log
}

/// A trail of `n` bench-style records written in large transactions (no checkpoints).
async fn bulk_trail(env: &Env, n: i64) -> AuditLog {
    let log = env.open().await;
    let keys = log.chain_keys().await.expect("unlocked");
    audit::testing::fill_trail(log.store(), log.log_id(), 0, &keys[&0], n).await;
    // Sealed as the console's own appends would have sealed it.
    log.store()
        .seal(log.log_id(), env.block_size, usize::MAX)
        .await
        .unwrap();
    log
}

mod cases {
    use super::*;

    pub async fn append_and_verify(env: Env) {
        let log = trail(&env).await;
        let v = verify(&log).await;
        match &v {
            Verdict::Intact {
                records,
                last_seq,
                checkpoints,
                last_checkpoint,
                key_pinned,
                macs_checked,
            } => {
                assert_eq!((*records, *last_seq, *checkpoints), (250, 250, 2));
                assert_eq!(last_checkpoint.as_ref().unwrap().seq, 200);
                assert!(*key_pinned && *macs_checked);
            }
            other => panic!("{other:?}"),
        }
        // Clean shutdown signs a final checkpoint.
        log.close().await.unwrap();
        let log = env.open().await;
        let cps = log.checkpoints().await.unwrap();
        assert_eq!(cps.last().unwrap().seq, 250);
        assert!(verify(&log).await.is_intact());
        // A checkpoint also when nothing happened.
        let cp = log.checkpoint().await.unwrap();
        assert_eq!((cp.seq, cp.checkpoint_no), (250, 4));
        // Records really are in the store with the seed's columns, or sealed into blocks
        // but for the last ones.
        let in_rows = env.sql(
            "SELECT COUNT(*) FROM audit_log WHERE algorithm = 'ML-DSA-65' AND status = 'success'",
        );
        if env.sealing() {
            let sealed = (250 - 1) / env.block_size * env.block_size;
            assert_eq!(in_rows, (250 - sealed).to_string());
            assert_eq!(
                env.sql("SELECT SUM(records) FROM audit_block"),
                sealed.to_string()
            );
        } else {
            assert_eq!(in_rows, "250");
        }
    }

    pub async fn fail_closed_and_pending_spool(env: Env) {
        let log = env.open_locked().await;
        assert_eq!(log.key_status().await.unwrap(), KeyStatus::NoKeyYet);
        let e = log
            .append(Event::new("key.generate", "private_key"))
            .await
            .unwrap_err();
        assert!(matches!(e, AuditError::KeyUnavailable(_)), "{e}");
        // A failed login before any key exists is kept, not dropped.
        log.record(Event::new("session.login", "partition").failed("CKR_PIN_INCORRECT"))
            .await
            .unwrap();
        log.record(Event::new("session.login", "partition").failed("CKR_PIN_INCORRECT"))
            .await
            .unwrap();
        log.unlock(wrapper(), signer()).await.unwrap();
        let r = log
            .append(Event::new("session.login", "partition"))
            .await
            .unwrap();
        assert_eq!(
            r.seq, 3,
            "the two spooled events were chained first, in order"
        );
        let all = log
            .records(&audit::store::Query {
                limit: 10,
                ascending: true,
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(
            all[0].event.error_code.as_deref(),
            Some("CKR_PIN_INCORRECT")
        );
        assert_eq!(all[2].event.error_code, None);
        assert!(verify(&log).await.is_intact());
        // After logout the key is gone again: privileged actions are refused.
        log.lock().await;
        assert!(matches!(
            log.key_status().await.unwrap(),
            KeyStatus::Locked { .. }
        ));
        assert!(matches!(
            log.append(Event::new("key.destroy", "private_key")).await,
            Err(AuditError::KeyUnavailable(_))
        ));
        // A wrong wrapping key cannot unlock it.
        let other = Arc::new(SoftWrapper::new([1; 32], b"other-kek"));
        assert!(matches!(
            log.unlock(other, signer()).await,
            Err(AuditError::KeyUnavailable(_))
        ));
    }

    pub async fn key_unavailable_in_the_hsm(env: Env) {
        let log = env.open().await;
        log.lock().await;
        let w = wrapper();
        *w.fail.lock().unwrap() = true;
        let e = log.unlock(w, signer()).await.unwrap_err();
        assert!(matches!(e, AuditError::KeyUnavailable(_)), "{e}");
        assert!(log
            .append(Event::new("key.sign", "private_key"))
            .await
            .is_err());
    }

    pub async fn key_rotation_starts_an_epoch(env: Env) {
        let log = env.open().await;
        fill(&log, 10).await;
        let epoch = log.rotate_key(wrapper()).await.unwrap();
        assert_eq!(epoch, 1);
        fill(&log, 10).await;
        let recs = log
            .records(&audit::store::Query {
                limit: 100,
                ascending: true,
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(recs[10].event.action, "audit.key_rotate");
        assert_eq!(
            recs[10].epoch, 0,
            "the rotation is recorded under the old key"
        );
        assert!(recs[11..].iter().all(|r| r.epoch == 1));
        assert_eq!(env.sql("SELECT COUNT(*) FROM audit_key"), "2");
        drop(log);
        let log = env.open().await;
        assert!(
            verify(&log).await.is_intact(),
            "both epochs' keys unwrap and verify"
        );
    }

    /// The trail's keys move to another holder (the built-in module's own audit slot):
    /// every epoch is wrapped again under the new key, checkpoints are signed by the new
    /// key from the recorded move on, and a verifier that pins only the new key still
    /// accepts the checkpoints made before — but not a retired key signing after it, nor a
    /// key change that no sealed record announces.
    pub async fn keys_move_to_another_holder(env: Env) {
        use audit::CheckpointSigner;
        let log = trail(&env).await;
        let (new_wrapper, new_signer) = (
            Arc::new(SoftWrapper::new([8; 32], b"kek")),
            Arc::new(SoftSigner::new([10; 32])),
        );
        let pinned_new = Some(new_signer.public_key_spki());
        assert_eq!(log.rewrap(wrapper(), new_wrapper.clone()).await.unwrap(), 1);
        log.move_checkpoint_key(new_signer.clone()).await.unwrap();
        fill(&log, 20).await;
        log.checkpoint().await.unwrap();
        let moved = log
            .records(&audit::store::Query {
                limit: 400,
                ascending: true,
                ..Default::default()
            })
            .await
            .unwrap();
        let actions: Vec<&str> = moved[250..252]
            .iter()
            .map(|r| r.event.action.as_str())
            .collect();
        assert_eq!(actions, ["audit.key_move", "audit.checkpoint_key_move"]);
        let v = log
            .verify(pinned_new.clone(), &|_, _| {}, &AtomicBool::new(false))
            .await
            .unwrap();
        assert!(
            matches!(
                v,
                Verdict::Intact {
                    key_pinned: true,
                    records: 272,
                    checkpoints: 5,
                    ..
                }
            ),
            "{v:?}"
        );
        // Pinning the old key: the first checkpoint of the new one is a replaced key.
        assert!(matches!(
            finding(verify(&log).await),
            Finding::CheckpointKeyReplaced {
                checkpoint_no: 4,
                ..
            }
        ));
        // An export checked offline with only the new key follows the same move.
        let out = env.dir.path().join("moved.jsonl");
        audit::export::export_jsonl(&log, &Default::default(), &out, None)
            .await
            .unwrap();
        let parsed = audit::export::read_jsonl(&out).unwrap();
        let offline = audit::export::verify_export(&parsed, None, pinned_new.clone());
        assert!(offline.is_intact(), "{offline:?}");
        drop(log);

        // The old wrapping key no longer opens the trail; the new one does.
        let log = env.open_locked().await;
        assert!(matches!(
            log.unlock(wrapper(), new_signer.clone()).await,
            Err(AuditError::KeyUnavailable(_))
        ));
        log.unlock(new_wrapper.clone(), new_signer.clone())
            .await
            .unwrap();
        assert!(log
            .verify(pinned_new.clone(), &|_, _| {}, &AtomicBool::new(false))
            .await
            .unwrap()
            .is_intact());

        // The retired key signing again after the new one did is refused by name.
        log.lock().await;
        log.unlock(new_wrapper.clone(), signer()).await.unwrap();
        let late = log.checkpoint().await.unwrap();
        log.lock().await;
        log.unlock(new_wrapper, new_signer).await.unwrap();
        assert_eq!(
            finding(
                log.verify(pinned_new, &|_, _| {}, &AtomicBool::new(false))
                    .await
                    .unwrap()
            ),
            Finding::CheckpointKeyReplaced {
                checkpoint_no: late.checkpoint_no,
                seq: late.seq
            }
        );
    }

    /// A checkpoint key that changed without a recorded move is not followed.
    pub async fn unannounced_checkpoint_key_is_refused(env: Env) {
        use audit::CheckpointSigner;
        let log = trail(&env).await;
        log.lock().await;
        let other = Arc::new(SoftSigner::new([10; 32]));
        log.unlock(wrapper(), other.clone()).await.unwrap();
        fill(&log, 5).await;
        log.checkpoint().await.unwrap();
        let v = log
            .verify(
                Some(other.public_key_spki()),
                &|_, _| {},
                &AtomicBool::new(false),
            )
            .await
            .unwrap();
        assert!(
            matches!(
                finding(v),
                Finding::CheckpointKeyReplaced {
                    checkpoint_no: 1,
                    ..
                }
            ),
            "the old key's checkpoints are not vouched for by any record"
        );
    }

    /// The store's queries on their own, each once per backend: an epoch's key is created
    /// only once, paging covers the store, browsing filters combine.
    pub async fn store_queries(env: Env) {
        let log = env.open().await;
        fill(&log, 30).await;
        log.append(Event::new("key.destroy", "private_key").failed("CKR_KEY_HANDLE_INVALID"))
            .await
            .unwrap();
        let store = log.store();

        let mut key = store.keys(log.log_id()).await.unwrap().remove(0);
        key.wrapped_key = "00".into();
        assert!(
            !store.insert_key(&key).await.unwrap(),
            "epoch 0 exists: the second key is not stored"
        );
        assert_ne!(store.keys(log.log_id()).await.unwrap()[0].wrapped_key, "00");
        key.epoch = 5;
        assert!(store.insert_key(&key).await.unwrap());
        assert_eq!(store.keys(log.log_id()).await.unwrap().len(), 2);

        let mut seen = Vec::new();
        let mut after = 0;
        loop {
            let page = store.trail_page(log.log_id(), after, 7).await.unwrap();
            let Some(last) = page.last() else { break };
            after = last.seq;
            seen.extend(page.iter().map(|r| r.seq));
        }
        assert_eq!(seen, (1..=31).collect::<Vec<_>>());
        let tail = store.trail_page(log.log_id(), 28, 100).await.unwrap();
        assert_eq!(tail.iter().map(|r| r.seq).collect::<Vec<_>>(), [29, 30, 31]);

        let browse = |q: audit::store::Query| {
            let log = &log;
            async move {
                log.records(&q)
                    .await
                    .unwrap()
                    .iter()
                    .map(|r| r.seq)
                    .collect::<Vec<_>>()
            }
        };
        use audit::store::Query;
        assert_eq!(
            browse(Query {
                limit: 3,
                ..Default::default()
            })
            .await,
            [31, 30, 29],
            "newest first"
        );
        assert_eq!(
            browse(Query {
                limit: 3,
                before_seq: Some(10),
                ascending: true,
                ..Default::default()
            })
            .await,
            [1, 2, 3]
        );
        assert_eq!(
            browse(Query {
                limit: 100,
                action: Some("key.".into()),
                status: Some("failure".into()),
                ..Default::default()
            })
            .await,
            [31]
        );
        assert_eq!(
            browse(Query {
                limit: 100,
                resource: Some("k3".into()),
                after_seq: Some(10),
                ..Default::default()
            })
            .await,
            [25, 18, 11]
        );
        assert_eq!(
            browse(Query {
                limit: 100,
                text: Some("\"i\":7}".into()),
                ..Default::default()
            })
            .await,
            [8],
            "free text in the metadata"
        );
        // The whole trail past the browse limit: pages of 7 records (sealed blocks of 8 in
        // the sealed suites, so pages end inside blocks and at the rows), filters kept.
        let every = |q: Query, page: i64| {
            let log = &log;
            async move {
                audit::testing::query_all_in_pages(log.store(), log.log_id(), &q, page)
                    .await
                    .iter()
                    .map(|r| r.seq)
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(
            every(Query::default(), 7).await,
            (1..=31).collect::<Vec<_>>()
        );
        assert_eq!(
            every(Query::default(), 31).await,
            (1..=31).collect::<Vec<_>>()
        );
        assert_eq!(
            every(
                Query {
                    resource: Some("k3".into()),
                    limit: 1,
                    ..Default::default()
                },
                2
            )
            .await,
            [4, 11, 18, 25],
            "a filter holds across pages; the query's own limit does not cut it short"
        );
        // The newest n, oldest first, in pages of 4 (`tail -n`).
        let newest = |n: u64, page: i64| {
            let log = &log;
            async move {
                audit::testing::newest_in_pages(log.store(), log.log_id(), n, page)
                    .await
                    .iter()
                    .map(|r| r.seq)
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(newest(10, 4).await, (22..=31).collect::<Vec<_>>());
        assert_eq!(newest(8, 4).await, (24..=31).collect::<Vec<_>>());
        assert_eq!(newest(100, 4).await, (1..=31).collect::<Vec<_>>());
        assert_eq!(newest(0, 4).await, Vec::<i64>::new());
        let kept = log
            .all_records(&Query::default(), |r| (r.seq % 10 == 0).then_some(r.seq))
            .await
            .unwrap();
        assert_eq!(kept, [10, 20, 30]);
        assert_eq!(store.pending_count(log.log_id()).await.unwrap(), 0);
        assert!(verify(&log).await.is_intact());
    }

    pub async fn tamper_modified(env: Env) {
        let log = trail(&env).await;
        env.tamper(
            &log,
            &["UPDATE audit_log SET metadata = '{\"i\":999}' WHERE seq = 57"],
        )
        .await;
        assert_eq!(finding(verify(&log).await), Finding::Modified { seq: 57 });
    }

    /// A trail large enough that the last verification range reads several sealed blocks
    /// and then rows in more than one bulk-read batch (PostgreSQL's COPY output is handed
    /// over in 256 KiB batches), damaged in a late batch of the rows.
    pub async fn tamper_modified_deep_in_a_large_trail(env: Env) {
        let n = 6_000;
        let log = bulk_trail(&env, n).await;
        match verify(&log).await {
            Verdict::Intact { records, .. } => assert_eq!(records, n),
            other => panic!("{other:?}"),
        }
        env.tamper(
            &log,
            &["UPDATE audit_log SET metadata = '{}' WHERE seq = 5800"],
        )
        .await;
        assert_eq!(finding(verify(&log).await), Finding::Modified { seq: 5800 });
    }

    /// Findings in different verification ranges (two on two cores, cut at 3000): the
    /// earliest is named, also a record gone at the end of a range.
    pub async fn earliest_finding_across_ranges(env: Env) {
        let log = bulk_trail(&env, 6_000).await;
        env.tamper(
            &log,
            &["UPDATE audit_log SET metadata = '{}' WHERE seq = 4500"],
        )
        .await;
        assert_eq!(finding(verify(&log).await), Finding::Modified { seq: 4500 });
        env.tamper(&log, &["DELETE FROM audit_log WHERE seq = 3000"])
            .await;
        assert_eq!(finding(verify(&log).await), Finding::Missing { seq: 3000 });
        env.tamper(
            &log,
            &["UPDATE audit_log SET metadata = '{}' WHERE seq = 1500"],
        )
        .await;
        assert_eq!(finding(verify(&log).await), Finding::Modified { seq: 1500 });
    }

    /// A cancel reaches every range: set before the start, each stops at its first record.
    pub async fn verification_cancelled(env: Env) {
        let log = bulk_trail(&env, 2_000).await;
        let cancelled = AtomicBool::new(true);
        match log.verify(trusted_key(), &|_, _| {}, &cancelled).await {
            Err(AuditError::Cancelled) => {}
            other => panic!("expected the verification cancelled, got {other:?}"),
        }
        assert!(
            verify(&log).await.is_intact(),
            "nothing changed by the cancel"
        );
    }

    pub async fn tamper_deleted(env: Env) {
        let log = trail(&env).await;
        env.tamper(&log, &["DELETE FROM audit_log WHERE seq = 40"])
            .await;
        assert_eq!(finding(verify(&log).await), Finding::Missing { seq: 40 });
    }

    pub async fn tamper_deleted_and_renumbered(env: Env) {
        let log = trail(&env).await;
        env.tamper(
            &log,
            &[
                "DELETE FROM audit_log WHERE seq = 40",
                "UPDATE audit_log SET seq = -seq WHERE seq > 40",
                "UPDATE audit_log SET seq = -seq - 1 WHERE seq < 0",
            ],
        )
        .await;
        assert_eq!(finding(verify(&log).await), Finding::Missing { seq: 40 });
    }

    pub async fn tamper_inserted(env: Env) {
        let log = trail(&env).await;
        env.tamper(&log, &[
            "UPDATE audit_log SET seq = -seq WHERE seq >= 31",
            "UPDATE audit_log SET seq = -seq + 1 WHERE seq < 0",
            "INSERT INTO audit_log (log_id, seq, epoch, timestamp, session_id, actor_id, actor_ip, action, resource_type, resource_id, algorithm, status, error_code, metadata, hmac_chain, created_at) \
             SELECT log_id, 31, epoch, timestamp, session_id, 'mallory@outside', actor_ip, 'key.export', resource_type, resource_id, algorithm, status, error_code, '{}', hmac_chain, created_at FROM audit_log WHERE seq = 32",
        ]).await;
        assert_eq!(finding(verify(&log).await), Finding::Inserted { seq: 31 });
    }

    pub async fn tamper_reordered(env: Env) {
        let log = trail(&env).await;
        env.tamper(
            &log,
            &[
                "UPDATE audit_log SET seq = 100000 WHERE seq = 20",
                "UPDATE audit_log SET seq = 20 WHERE seq = 25",
                "UPDATE audit_log SET seq = 25 WHERE seq = 100000",
            ],
        )
        .await;
        assert_eq!(
            finding(verify(&log).await),
            Finding::Reordered {
                seq: 20,
                belongs_at: 25
            }
        );
    }

    pub async fn tamper_grafted(env: Env) {
        let log = trail(&env).await;
        // A record from another trail (another console's store) copied in.
        let other_dir = tempfile::tempdir().unwrap();
        let other_loc = other_dir.path().join("other.db").display().to_string();
        let other = AuditLog::open(AuditConfig::new(&other_loc), Context::local())
            .await
            .unwrap();
        other
            .unlock(Arc::new(SoftWrapper::new([3; 32], b"other")), signer())
            .await
            .unwrap();
        let foreign = other
            .append(Event::new("key.destroy", "private_key").resource("prod-root"))
            .await
            .unwrap();
        env.tamper(&log, &[&format!(
            "INSERT INTO audit_log (log_id, seq, epoch, timestamp, session_id, actor_id, actor_ip, action, resource_type, resource_id, algorithm, status, error_code, metadata, hmac_chain, created_at) \
             VALUES ('{}', 251, 0, '{}', '{}', 'x', '127.0.0.1', '{}', '{}', '{}', NULL, 'success', NULL, '{}', '{}', '{}')",
            foreign.log_id, foreign.event.timestamp, foreign.event.session_id, foreign.event.action, foreign.event.resource_type, foreign.event.resource_id.as_deref().unwrap(),
            foreign.event.metadata, foreign.hmac_chain, foreign.created_at
        )]).await;
        match finding(verify(&log).await) {
            Finding::Grafted {
                seq: 251,
                foreign_log,
            } => assert_eq!(foreign_log, foreign.log_id),
            other => panic!("{other:?}"),
        }
    }

    pub async fn tamper_truncated_tail(env: Env) {
        let log = trail(&env).await;
        env.tamper(&log, &["DELETE FROM audit_log WHERE seq > 150"])
            .await;
        assert_eq!(
            finding(verify(&log).await),
            Finding::TruncatedTail {
                last_seq: 150,
                checkpoint_seq: 200
            }
        );
    }

    pub async fn tamper_rollback(env: Env) {
        let log = trail(&env).await;
        // The store goes back to an older copy: newer records and their checkpoints vanish
        // together (the copy is self-consistent). The anchor outside the store remembers.
        env.tamper(
            &log,
            &[
                "DELETE FROM audit_log WHERE seq > 120",
                "DELETE FROM audit_checkpoint WHERE seq > 120",
            ],
        )
        .await;
        assert_eq!(
            finding(verify(&log).await),
            Finding::Rollback {
                store_seq: 120,
                anchor_seq: 200,
                anchor_checkpoint: 2
            }
        );
    }

    pub async fn tamper_rollback_then_rewritten(env: Env) {
        let first = trail(&env).await;
        // Back to an older copy, and the console writes on from there: the store's second
        // checkpoint is now another one than the anchor remembers under that number.
        env.tamper(
            &first,
            &[
                "DELETE FROM audit_log WHERE seq > 120",
                "DELETE FROM audit_checkpoint WHERE seq > 120",
            ],
        )
        .await;
        let log = env.open().await;
        fill(&log, 100).await;
        assert_eq!(log.checkpoints().await.unwrap()[1].seq, 220);
        assert_eq!(
            finding(verify(&log).await),
            Finding::CheckpointMismatch {
                checkpoint_no: 2,
                seq: 200
            }
        );
    }

    pub async fn tamper_checkpoint_signature(env: Env) {
        let log = trail(&env).await;
        env.tamper(&log, &[
            "UPDATE audit_checkpoint SET time = '2020-01-01T00:00:00.000Z' WHERE checkpoint_no = 1",
        ]).await;
        assert_eq!(
            finding(verify(&log).await),
            Finding::CheckpointSignatureInvalid {
                checkpoint_no: 1,
                seq: 100
            }
        );
    }

    pub async fn tamper_checkpoint_key_replaced(env: Env) {
        use audit::CheckpointSigner;
        let log = trail(&env).await;
        // The tamperer re-signs checkpoint 1 with a key of their own and stores its public key.
        let mallory = SoftSigner::new([5; 32]);
        let mut cp = log.checkpoints().await.unwrap()[0].clone();
        cp.public_key = hex::encode(mallory.public_key_spki());
        let sig = mallory
            .sign(&audit::verify::checkpoint_message(&cp).unwrap())
            .unwrap();
        env.tamper(&log, &[&format!("UPDATE audit_checkpoint SET public_key = '{}', signature = '{}' WHERE checkpoint_no = 1", cp.public_key, hex::encode(sig))]).await;
        assert_eq!(
            finding(verify(&log).await),
            Finding::CheckpointKeyReplaced {
                checkpoint_no: 1,
                seq: 100
            }
        );
        // Without the pinned key the signature itself is valid; the finding needs the HSM's key.
        let unpinned = log
            .verify(None, &|_, _| {}, &AtomicBool::new(false))
            .await
            .unwrap();
        assert!(unpinned.is_intact());
    }

    pub async fn torn_last_write(env: Env) {
        let log = trail(&env).await;
        env.tamper(&log, &["UPDATE audit_log SET hmac_chain = substr(hmac_chain, 1, 9), metadata = substr(metadata, 1, 4) WHERE seq = 250"]).await;
        let f = finding(verify(&log).await);
        assert_eq!(f, Finding::TornLastWrite { seq: 250 });
        assert!(!f.is_tampering(), "reported as a crash");
    }

    /// A sealed record's bytes edited inside its block: named as modified, and what the
    /// officer is shown is the block's copy, the one verified.
    pub async fn tamper_sealed_block_edited(env: Env) {
        let log = trail(&env).await;
        // Record 57 was appended with `"i": 56`.
        env.edit_block(57, b"{\"i\":56}", b"{\"i\":99}");
        assert_eq!(finding(verify(&log).await), Finding::Modified { seq: 57 });
        let shown = log
            .records(&audit::store::Query {
                after_seq: Some(56),
                ascending: true,
                limit: 1,
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(shown[0].event.metadata, "{\"i\":99}");
    }

    /// A block's body cut short: its first record can no longer be read.
    pub async fn tamper_sealed_block_cut(env: Env) {
        let log = trail(&env).await;
        env.sql(match env.kind {
            Kind::Sqlite => "UPDATE audit_block SET body = substr(body, 1, 4) WHERE first_seq = 33",
            Kind::Postgres => {
                "UPDATE audit_block SET body = substring(body from 1 for 4) WHERE first_seq = 33"
            }
        });
        assert_eq!(finding(verify(&log).await), Finding::Modified { seq: 33 });
    }

    /// A whole block deleted: its records are missing, though their stubs remain.
    pub async fn tamper_sealed_block_deleted(env: Env) {
        let log = trail(&env).await;
        env.sql("DELETE FROM audit_block WHERE first_seq = 41");
        assert_eq!(finding(verify(&log).await), Finding::Missing { seq: 41 });
    }

    /// The stub a sealed record leaves in `audit_log` is never read: filling it with a
    /// forged record changes nothing the officer or the verifier sees.
    pub async fn sealed_stub_edited(env: Env) {
        let log = trail(&env).await;
        env.sql("UPDATE audit_log SET action = 'key.export', actor_id = 'mallory', metadata = '{}', hmac_chain = 'ff' WHERE seq = 12");
        assert!(verify(&log).await.is_intact());
        let exported = log
            .records(&audit::store::Query {
                action: Some("key.export".into()),
                limit: 10,
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(exported.is_empty(), "{exported:?}");
        let twelve = log.store().trail_page(log.log_id(), 11, 1).await.unwrap();
        assert_eq!(
            (twelve[0].seq, twelve[0].event.action.as_str()),
            (12, "key.sign")
        );
    }

    /// A trail written before blocks existed (all rows) is sealed over its next appends,
    /// a few blocks at a time, and verifies intact throughout.
    pub async fn existing_trail_is_sealed_over_its_next_appends(env: Env) {
        let mut cfg = env.config();
        cfg.block_size = 1024;
        let old = AuditLog::open(cfg, Context::local()).await.unwrap();
        old.unlock(wrapper(), signer()).await.unwrap();
        fill(&old, 250).await;
        old.close().await.unwrap();
        let log = env.open().await;
        let sealed = || async { log.store().sealed_to(log.log_id()).await.unwrap() };
        assert_eq!(sealed().await, 0);
        // The first append past a block's end seals up to 16 blocks.
        fill(&log, 7).await;
        assert_eq!(sealed().await, 16 * env.block_size);
        assert!(verify(&log).await.is_intact());
        fill(&log, 8).await;
        assert_eq!(sealed().await, 32 * env.block_size);
        match verify(&log).await {
            Verdict::Intact { records, .. } => assert_eq!(records, 265),
            other => panic!("{other:?}"),
        }
        let all = log.store().trail_page(log.log_id(), 0, 1000).await.unwrap();
        assert_eq!(
            all.iter().map(|r| r.seq).collect::<Vec<_>>(),
            (1..=265).collect::<Vec<_>>()
        );
    }

    /// A checkpoint carries the digest chain on from the newest one this console's key
    /// signed: a record changed under an earlier checkpoint does not enter the new one, and
    /// a checkpoint row edited afterwards (its signature no longer holds) is not carried on
    /// from.
    pub async fn checkpoint_digest_carries_on_from_a_signed_checkpoint(env: Env) {
        use audit::encode::{digest_link, encode, hex32};
        let log = trail(&env).await;
        let third = log.checkpoint().await.unwrap();
        assert_eq!(third.seq, 250);
        log.append(Event::new("key.sign", "private_key"))
            .await
            .unwrap();
        let next_record = log.store().trail_page(log.log_id(), 250, 1).await.unwrap();
        let want = hex::encode(digest_link(
            &encode(&next_record[0]),
            &hex32(&third.head_digest).unwrap(),
        ));
        let zeros = "0".repeat(64);
        env.tamper(
            &log,
            &[
                "UPDATE audit_log SET metadata = '{}' WHERE seq = 150",
                &format!(
                    "UPDATE audit_checkpoint SET head_digest = '{zeros}' WHERE checkpoint_no = 3"
                ),
            ],
        )
        .await;
        let fourth = log.checkpoint().await.unwrap();
        assert_eq!((fourth.seq, fourth.head_digest), (251, want));
        assert_eq!(finding(verify(&log).await), Finding::Modified { seq: 150 });
    }

    pub async fn many_tasks_one_chain(env: Env) {
        let log = Arc::new(env.open().await);
        let mut tasks = Vec::new();
        for t in 0..8 {
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..40 {
                    log.append(Event::new("test.concurrent", "test").resource(format!("t{t}-{i}")))
                        .await
                        .unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert!(verify(&log).await.is_intact());
        assert_eq!(env.sql("SELECT COUNT(*) FROM audit_log"), "320");
        assert_eq!(env.sql("SELECT MAX(seq) FROM audit_log"), "320");
    }

    fn child(env: &Env, count: &str, tag: &str) -> std::process::Child {
        Command::new(env!("CARGO_BIN_EXE_audit_append_loop"))
            .args([env.location.as_str(), count, tag])
            .env("AUDIT_BLOCK_SIZE", env.block_size.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("audit_append_loop (built with the audit crate's test-support feature)")
    }

    pub async fn two_processes_one_chain(env: Env) {
        // Create the trail and its key first, so both children find it.
        env.open().await;
        let mut a = child(&env, "150", "a");
        let mut b = child(&env, "150", "b");
        assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
        let log = env.open().await;
        assert!(
            verify(&log).await.is_intact(),
            "two writers, one linear chain"
        );
        assert_eq!(env.sql("SELECT COUNT(*) FROM audit_log"), "300");
    }

    pub async fn kill_9_loses_no_acknowledged_record(env: Env) {
        env.open().await;
        let mut c = child(&env, "1000000", "k");
        let mut acked = BTreeSet::new();
        let mut lines = BufReader::new(c.stdout.take().unwrap()).lines();
        while acked.len() < 200 {
            let l = lines.next().unwrap().unwrap();
            acked.insert(l.trim_start_matches("ACK ").parse::<i64>().unwrap());
        }
        // SIGKILL mid-stream; nothing gets to clean up.
        Command::new("kill")
            .args(["-9", &c.id().to_string()])
            .status()
            .unwrap();
        c.wait().unwrap();
        for l in lines.map_while(|l| l.ok()) {
            if let Some(s) = l.strip_prefix("ACK ") {
                acked.insert(s.parse().unwrap());
            }
        }
        let log = env.open().await;
        let v = verify(&log).await;
        assert!(v.is_intact(), "{v:?}");
        let stored: i64 = env.sql("SELECT COUNT(*) FROM audit_log").parse().unwrap();
        assert!(
            stored >= *acked.last().unwrap(),
            "every acknowledged record survives ({stored} stored, last ack {})",
            acked.last().unwrap()
        );
    }

    pub async fn export_verifies_offline(env: Env) {
        let log = trail(&env).await;
        let out = env.dir.path().join("export.jsonl");
        let s = audit::export::export_jsonl(&log, &Default::default(), &out, None)
            .await
            .unwrap();
        assert_eq!((s.records, s.checkpoints), (250, 2));
        let parsed = audit::export::read_jsonl(&out).unwrap();
        // Public material only: the digest chain against the signed checkpoints.
        let v = audit::export::verify_export(&parsed, None, trusted_key());
        assert!(
            matches!(
                v,
                Verdict::Intact {
                    macs_checked: false,
                    records: 250,
                    ..
                }
            ),
            "{v:?}"
        );
        // Alter a record inside the export: the checkpoints catch it without any key.
        let text = std::fs::read_to_string(&out).unwrap().replacen(
            "\"resource_id\":\"k3\"",
            "\"resource_id\":\"k9\"",
            1,
        );
        std::fs::write(&out, &text).unwrap();
        let tampered = audit::export::read_jsonl(&out).unwrap();
        // Without the keys nothing checks a record's seal: the damage is named as the span
        // the first checkpoint vouches for.
        let verdict = audit::export::verify_export(&tampered, None, trusted_key());
        assert!(
            matches!(
                verdict,
                Verdict::Broken {
                    finding: Finding::ModifiedBetween {
                        from_seq: 1,
                        checkpoint_no: 1,
                        ..
                    },
                    ..
                }
            ),
            "{verdict:?}"
        );
        // An export cut off mid-write is a crash, named as such.
        let whole = std::fs::read_to_string(&out).unwrap();
        let first: Vec<&str> = whole.lines().take(120).collect();
        let cut = format!(
            "{}\n{{\"type\":\"record\",\"log_id\":\"lo",
            first.join("\n")
        );
        std::fs::write(&out, cut).unwrap();
        let torn = audit::export::read_jsonl(&out).unwrap();
        let f = finding(audit::export::verify_export(&torn, None, trusted_key()));
        assert!(matches!(f, Finding::TornLastWrite { .. }), "{f:?}");
        // CSV for spreadsheets.
        let csv = env.dir.path().join("export.csv");
        audit::export::export_csv(&log, &Default::default(), &csv)
            .await
            .unwrap();
        let text = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(text.lines().count(), 251);
        assert!(
            text.lines().nth(1).unwrap().contains("\"{\"\"i\"\":0}\""),
            "metadata is quoted CSV"
        );
    }

    pub async fn locked_store_fails_the_append(env: Env) {
        let mut cfg = env.config();
        cfg.lock_timeout = Duration::from_millis(300);
        let log = AuditLog::open(cfg, Context::local()).await.unwrap();
        log.unlock(wrapper(), signer()).await.unwrap();
        fill(&log, 1).await;
        // Another process holds the write lock.
        let mut holder = match env.kind {
            Kind::Sqlite => Command::new("sqlite3")
                .arg(env.db_path())
                .stdin(Stdio::piped())
                .spawn()
                .unwrap(),
            Kind::Postgres => {
                let pg = env.pg.as_ref().unwrap();
                Command::new("runuser")
                    .args([
                        "-u",
                        "postgres",
                        "--",
                        "psql",
                        "-h",
                        "127.0.0.1",
                        "-p",
                        &pg.port.to_string(),
                        "-U",
                        "hsmc",
                        "-d",
                        DB,
                    ])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap()
            }
        };
        {
            use std::io::Write;
            let stdin = holder.stdin.as_mut().unwrap();
            let lock = match env.kind {
                Kind::Sqlite => "BEGIN IMMEDIATE;\n".to_string(),
                Kind::Postgres => "BEGIN; LOCK TABLE audit_log IN EXCLUSIVE MODE;\n".to_string(),
            };
            stdin.write_all(lock.as_bytes()).unwrap();
            stdin.flush().unwrap();
        }
        std::thread::sleep(Duration::from_millis(500));
        let e = log
            .append(Event::new("key.sign", "private_key"))
            .await
            .unwrap_err();
        assert!(matches!(e, AuditError::Locked(_)), "{e}");
        drop(holder.stdin.take());
        holder.wait().unwrap();
        log.append(Event::new("key.sign", "private_key"))
            .await
            .expect("works again once the lock is released");
    }
}

/// A store that cannot be opened says where and why, and keeps the error below as its source.
#[tokio::test]
async fn unopenable_store_keeps_the_cause() {
    use std::error::Error as _;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, b"").unwrap();
    let location = file.join("audit.db").display().to_string();
    let e = match AuditLog::open(AuditConfig::new(&location), Context::local()).await {
        Err(e) => e,
        Ok(_) => panic!("a store below a regular file cannot open"),
    };
    assert!(matches!(e, AuditError::Store { .. }), "{e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!(
            "the audit store is unavailable: cannot create {}: ",
            file.display()
        )),
        "{shown}"
    );
    let cause = e.source().and_then(|c| c.downcast_ref::<std::io::Error>());
    assert!(cause.is_some(), "the file system's error is kept: {e:?}");
}

macro_rules! suite {
    ($module:ident, $kind:expr, $block_size:expr, [$($case:ident),* $(,)?]) => {
        mod $module {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    cases::$case(Env::new($kind, $block_size)).await;
                }
            )*
        }
    };
}

/// Sealed blocks of 8 records: a 250-record trail is sealed up to record 248.
const SMALL_BLOCKS: i64 = 8;

suite!(
    sqlite,
    Kind::Sqlite,
    1024,
    [
        append_and_verify,
        fail_closed_and_pending_spool,
        key_unavailable_in_the_hsm,
        key_rotation_starts_an_epoch,
        keys_move_to_another_holder,
        unannounced_checkpoint_key_is_refused,
        store_queries,
        tamper_modified,
        tamper_modified_deep_in_a_large_trail,
        earliest_finding_across_ranges,
        verification_cancelled,
        tamper_deleted,
        tamper_deleted_and_renumbered,
        tamper_inserted,
        tamper_reordered,
        tamper_grafted,
        tamper_truncated_tail,
        tamper_rollback,
        tamper_rollback_then_rewritten,
        tamper_checkpoint_signature,
        tamper_checkpoint_key_replaced,
        checkpoint_digest_carries_on_from_a_signed_checkpoint,
        torn_last_write,
        many_tasks_one_chain,
        two_processes_one_chain,
        kill_9_loses_no_acknowledged_record,
        export_verifies_offline,
        locked_store_fails_the_append,
    ]
);

suite!(
    postgres,
    Kind::Postgres,
    1024,
    [
        append_and_verify,
        fail_closed_and_pending_spool,
        key_unavailable_in_the_hsm,
        key_rotation_starts_an_epoch,
        keys_move_to_another_holder,
        unannounced_checkpoint_key_is_refused,
        store_queries,
        tamper_modified,
        tamper_modified_deep_in_a_large_trail,
        earliest_finding_across_ranges,
        verification_cancelled,
        tamper_deleted,
        tamper_deleted_and_renumbered,
        tamper_inserted,
        tamper_reordered,
        tamper_grafted,
        tamper_truncated_tail,
        tamper_rollback,
        tamper_rollback_then_rewritten,
        tamper_checkpoint_signature,
        tamper_checkpoint_key_replaced,
        checkpoint_digest_carries_on_from_a_signed_checkpoint,
        torn_last_write,
        many_tasks_one_chain,
        two_processes_one_chain,
        kill_9_loses_no_acknowledged_record,
        export_verifies_offline,
        locked_store_fails_the_append,
    ]
);

// The same cases with most records sealed into blocks, and the blocks' own tampering.
suite!(
    sqlite_sealed,
    Kind::Sqlite,
    SMALL_BLOCKS,
    [
        append_and_verify,
        fail_closed_and_pending_spool,
        key_unavailable_in_the_hsm,
        key_rotation_starts_an_epoch,
        keys_move_to_another_holder,
        unannounced_checkpoint_key_is_refused,
        store_queries,
        tamper_modified,
        tamper_modified_deep_in_a_large_trail,
        earliest_finding_across_ranges,
        verification_cancelled,
        tamper_deleted,
        tamper_deleted_and_renumbered,
        tamper_inserted,
        tamper_reordered,
        tamper_grafted,
        tamper_truncated_tail,
        tamper_rollback,
        tamper_rollback_then_rewritten,
        tamper_checkpoint_signature,
        tamper_checkpoint_key_replaced,
        checkpoint_digest_carries_on_from_a_signed_checkpoint,
        torn_last_write,
        many_tasks_one_chain,
        two_processes_one_chain,
        kill_9_loses_no_acknowledged_record,
        export_verifies_offline,
        locked_store_fails_the_append,
        tamper_sealed_block_edited,
        tamper_sealed_block_cut,
        tamper_sealed_block_deleted,
        sealed_stub_edited,
        existing_trail_is_sealed_over_its_next_appends,
    ]
);

suite!(
    postgres_sealed,
    Kind::Postgres,
    SMALL_BLOCKS,
    [
        append_and_verify,
        fail_closed_and_pending_spool,
        key_unavailable_in_the_hsm,
        key_rotation_starts_an_epoch,
        keys_move_to_another_holder,
        unannounced_checkpoint_key_is_refused,
        store_queries,
        tamper_modified,
        tamper_modified_deep_in_a_large_trail,
        earliest_finding_across_ranges,
        verification_cancelled,
        tamper_deleted,
        tamper_deleted_and_renumbered,
        tamper_inserted,
        tamper_reordered,
        tamper_grafted,
        tamper_truncated_tail,
        tamper_rollback,
        tamper_rollback_then_rewritten,
        tamper_checkpoint_signature,
        tamper_checkpoint_key_replaced,
        checkpoint_digest_carries_on_from_a_signed_checkpoint,
        torn_last_write,
        many_tasks_one_chain,
        two_processes_one_chain,
        kill_9_loses_no_acknowledged_record,
        export_verifies_offline,
        locked_store_fails_the_append,
        tamper_sealed_block_edited,
        tamper_sealed_block_cut,
        tamper_sealed_block_deleted,
        sealed_stub_edited,
        existing_trail_is_sealed_over_its_next_appends,
    ]
);
