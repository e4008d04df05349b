//! The two stores behind one type: SQLite (embedded default, WAL, `synchronous=FULL`) and
//! PostgreSQL (a shared trail for a team). Appends are serialized across threads,
//! processes and machines by the database itself — `BEGIN IMMEDIATE` on SQLite, a
//! transaction-scoped advisory lock on PostgreSQL — so the chain stays one line.

use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::Row;

use crate::{AuditError, Checkpoint, Record, Result};

/// An event prepared for the chain (everything but its position and chain value); also the
/// form in which events wait in the pending spool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub metadata: String,
}

/// A wrapped MAC key of one epoch.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct KeyRow {
    pub log_id: String,
    pub epoch: i64,
    pub wrapped_key: String,
    pub wrap_mechanism: String,
    pub kek_id: String,
    pub holder: String,
    pub created_at: String,
}

/// Filters for browsing.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(default)]
pub struct Query {
    /// Only records with `seq` below this (for paging newest-first); `None` = from the end.
    pub before_seq: Option<i64>,
    pub after_seq: Option<i64>,
    pub limit: i64,
    pub from_time: Option<String>,
    pub to_time: Option<String>,
    pub actor: Option<String>,
    pub action: Option<String>,
    pub status: Option<String>,
    pub resource: Option<String>,
    /// Free text in the metadata.
    pub text: Option<String>,
    /// Oldest first (export) instead of newest first (browse).
    pub ascending: bool,
}

/// One day of a trail: how many records, how many of them failures.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize, ts_rs::TS)]
pub struct DayCount {
    pub day: String,
    #[ts(type = "number")]
    pub records: i64,
    #[ts(type = "number")]
    pub failures: i64,
}

#[derive(Clone)]
pub enum Store {
    /// The pool and the database file (the verifier's scanner opens it directly).
    Sqlite(SqlitePool, std::path::PathBuf),
    Postgres(PgPool),
}

pub(crate) const COLUMNS: &str = "log_id, seq, epoch, timestamp, session_id, actor_id, actor_ip, action, resource_type, resource_id, algorithm, status, error_code, metadata, hmac_chain, created_at";

fn busy(e: sqlx::Error, timeout: Duration) -> AuditError {
    let s = e.to_string();
    if s.contains("database is locked")
        || s.contains("lock timeout")
        || s.contains("canceling statement due to lock timeout")
    {
        AuditError::Locked(timeout.as_millis() as u64)
    } else {
        AuditError::Store(s)
    }
}

impl Store {
    /// Connect and run the migrations. `location` is a PostgreSQL URL or a SQLite file path
    /// (`sqlite://` prefix optional).
    pub async fn connect(location: &str, lock_timeout: Duration) -> Result<Store> {
        if location.starts_with("postgres://") || location.starts_with("postgresql://") {
            let opts = PgConnectOptions::from_str(location)
                .map_err(|e| AuditError::Store(format!("bad PostgreSQL URL: {e}")))?
                .options([("lock_timeout", format!("{}ms", lock_timeout.as_millis()))]);
            let pool = PgPoolOptions::new()
                .max_connections(4)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(opts)
                .await
                .map_err(|e| AuditError::Store(format!("cannot connect to PostgreSQL: {e}")))?;
            sqlx::migrate!("./migrations/postgres")
                .run(&pool)
                .await
                .map_err(|e| AuditError::Store(e.to_string()))?;
            Ok(Store::Postgres(pool))
        } else {
            let path = location.strip_prefix("sqlite://").unwrap_or(location);
            if let Some(parent) = std::path::Path::new(path).parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        AuditError::Store(format!("cannot create {}: {e}", parent.display()))
                    })?;
                }
            }
            let opts = SqliteConnectOptions::new()
                .filename(path)
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .busy_timeout(lock_timeout);
            let pool = SqlitePoolOptions::new()
                .max_connections(4)
                .connect_with(opts)
                .await
                .map_err(|e| AuditError::Store(format!("cannot open {path}: {e}")))?;
            sqlx::migrate!("./migrations/sqlite")
                .run(&pool)
                .await
                .map_err(|e| AuditError::Store(e.to_string()))?;
            Ok(Store::Sqlite(pool, std::path::PathBuf::from(path)))
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Store::Sqlite(_, _) => "sqlite",
            Store::Postgres(_) => "postgresql",
        }
    }

    pub async fn close(&self) {
        match self {
            Store::Sqlite(p, _) => p.close().await,
            Store::Postgres(p) => p.close().await,
        }
    }

    /// The trail's ID: the existing one, or a new one created under the write lock (two
    /// consoles starting at once agree on one trail).
    pub async fn trail(&self, new_id: &str, now: &str) -> Result<String> {
        match self {
            Store::Sqlite(p, _) => {
                let mut tx = p.begin_with("BEGIN IMMEDIATE").await?;
                let got: Option<String> = sqlx::query_scalar(
                    "SELECT log_id FROM audit_trail ORDER BY created_at LIMIT 1",
                )
                .fetch_optional(&mut *tx)
                .await?;
                let id = match got {
                    Some(id) => id,
                    None => {
                        sqlx::query("INSERT INTO audit_trail (log_id, created_at) VALUES (?, ?)")
                            .bind(new_id)
                            .bind(now)
                            .execute(&mut *tx)
                            .await?;
                        new_id.to_string()
                    }
                };
                tx.commit().await?;
                Ok(id)
            }
            Store::Postgres(p) => {
                let mut tx = p.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock(7284001)")
                    .execute(&mut *tx)
                    .await?;
                let got: Option<String> = sqlx::query_scalar(
                    "SELECT log_id FROM audit_trail ORDER BY created_at LIMIT 1",
                )
                .fetch_optional(&mut *tx)
                .await?;
                let id = match got {
                    Some(id) => id,
                    None => {
                        sqlx::query("INSERT INTO audit_trail (log_id, created_at) VALUES ($1, $2)")
                            .bind(new_id)
                            .bind(now)
                            .execute(&mut *tx)
                            .await?;
                        new_id.to_string()
                    }
                };
                tx.commit().await?;
                Ok(id)
            }
        }
    }

    pub async fn keys(&self, log_id: &str) -> Result<Vec<KeyRow>> {
        let sql = "SELECT log_id, epoch, wrapped_key, wrap_mechanism, kek_id, holder, created_at FROM audit_key WHERE log_id = ";
        Ok(match self {
            Store::Sqlite(p, _) => {
                sqlx::query_as(&format!("{sql}? ORDER BY epoch"))
                    .bind(log_id)
                    .fetch_all(p)
                    .await?
            }
            Store::Postgres(p) => {
                sqlx::query_as(&format!("{sql}$1 ORDER BY epoch"))
                    .bind(log_id)
                    .fetch_all(p)
                    .await?
            }
        })
    }

    /// Store a wrapped key; fails if the epoch exists already (another console won).
    pub async fn insert_key(&self, k: &KeyRow) -> Result<bool> {
        let r = match self {
            Store::Sqlite(p, _) => {
                sqlx::query("INSERT OR IGNORE INTO audit_key (log_id, epoch, wrapped_key, wrap_mechanism, kek_id, holder, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
                    .bind(&k.log_id).bind(k.epoch).bind(&k.wrapped_key).bind(&k.wrap_mechanism).bind(&k.kek_id).bind(&k.holder).bind(&k.created_at)
                    .execute(p).await?.rows_affected()
            }
            Store::Postgres(p) => {
                sqlx::query("INSERT INTO audit_key (log_id, epoch, wrapped_key, wrap_mechanism, kek_id, holder, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING")
                    .bind(&k.log_id).bind(k.epoch).bind(&k.wrapped_key).bind(&k.wrap_mechanism).bind(&k.kek_id).bind(&k.holder).bind(&k.created_at)
                    .execute(p).await?.rows_affected()
            }
        };
        Ok(r == 1)
    }

    /// Append records in one transaction. `build` gets the current head (seq, chain value)
    /// and, when `with_pending`, the pending spool, and returns the records to insert (the
    /// spooled ones first). SQLite: under the write lock (`BEGIN IMMEDIATE`), so the head
    /// cannot move. PostgreSQL: a concurrent writer may take the position first; the
    /// primary key refuses the duplicate and the answer is `None` (read the head again).
    pub async fn append_with<F>(
        &self,
        log_id: &str,
        lock_timeout: Duration,
        with_pending: bool,
        build: F,
    ) -> Result<Option<Vec<Record>>>
    where
        F: FnOnce(Option<(i64, String)>, Vec<(i64, Prepared)>) -> Result<Vec<Record>>,
    {
        match self {
            Store::Sqlite(p, _) => {
                let mut tx = p
                    .begin_with("BEGIN IMMEDIATE")
                    .await
                    .map_err(|e| busy(e, lock_timeout))?;
                let head: Option<(i64, String)> = sqlx::query_as("SELECT seq, hmac_chain FROM audit_log WHERE log_id = ? ORDER BY seq DESC LIMIT 1")
                    .bind(log_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                let pending = if with_pending {
                    Self::pending_rows(
                        sqlx::query(
                            "SELECT id, event FROM audit_pending WHERE log_id = ? ORDER BY id",
                        )
                        .bind(log_id)
                        .fetch_all(&mut *tx)
                        .await?,
                    )?
                } else {
                    Vec::new()
                };
                let ids: Vec<i64> = pending.iter().map(|(id, _)| *id).collect();
                let recs = build(head, pending)?;
                for r in &recs {
                    sqlx::query(&format!("INSERT INTO audit_log ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"))
                        .bind(&r.log_id).bind(r.seq).bind(r.epoch).bind(&r.timestamp).bind(&r.session_id).bind(&r.actor_id).bind(&r.actor_ip)
                        .bind(&r.action).bind(&r.resource_type).bind(&r.resource_id).bind(&r.algorithm).bind(&r.status).bind(&r.error_code)
                        .bind(&r.metadata).bind(&r.hmac_chain).bind(&r.created_at)
                        .execute(&mut *tx)
                        .await?;
                }
                for id in ids {
                    sqlx::query("DELETE FROM audit_pending WHERE id = ?")
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await.map_err(|e| busy(e, lock_timeout))?;
                Ok(Some(recs))
            }
            Store::Postgres(p) => {
                let mut tx = p.begin().await?;
                let head: Option<(i64, String)> = sqlx::query_as("SELECT seq, hmac_chain FROM audit_log WHERE log_id = $1 ORDER BY seq DESC LIMIT 1")
                    .bind(log_id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(|e| busy(e, lock_timeout))?;
                let pending = if with_pending {
                    Self::pending_rows(sqlx::query("SELECT id, event FROM audit_pending WHERE log_id = $1 ORDER BY id FOR UPDATE").bind(log_id).fetch_all(&mut *tx).await?)?
                } else {
                    Vec::new()
                };
                let ids: Vec<i64> = pending.iter().map(|(id, _)| *id).collect();
                let recs = build(head, pending)?;
                for r in &recs {
                    let res = sqlx::query(&format!("INSERT INTO audit_log ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"))
                        .bind(&r.log_id).bind(r.seq).bind(r.epoch).bind(&r.timestamp).bind(&r.session_id).bind(&r.actor_id).bind(&r.actor_ip)
                        .bind(&r.action).bind(&r.resource_type).bind(&r.resource_id).bind(&r.algorithm).bind(&r.status).bind(&r.error_code)
                        .bind(&r.metadata).bind(&r.hmac_chain).bind(&r.created_at)
                        .execute(&mut *tx)
                        .await;
                    match res {
                        Ok(_) => {}
                        Err(sqlx::Error::Database(d)) if d.is_unique_violation() => {
                            return Ok(None)
                        }
                        Err(e) => return Err(busy(e, lock_timeout)),
                    }
                }
                for id in ids {
                    sqlx::query("DELETE FROM audit_pending WHERE id = $1")
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(Some(recs))
            }
        }
    }

    fn pending_rows<R: Row>(rows: Vec<R>) -> Result<Vec<(i64, Prepared)>>
    where
        for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
        for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
        for<'r> &'r str: sqlx::ColumnIndex<R>,
    {
        rows.into_iter()
            .map(|r| {
                let id: i64 = r.try_get("id")?;
                let text: String = r.try_get("event")?;
                let p: Prepared = serde_json::from_str(&text).map_err(|e| {
                    AuditError::Store(format!("pending event {id} is unreadable: {e}"))
                })?;
                Ok((id, p))
            })
            .collect()
    }

    /// Insert one record without taking the write lock, at a position computed from a
    /// cached head. The primary key (log_id, seq) turns a concurrent writer's append at the
    /// same position into a conflict: `Ok(false)`, and the caller re-reads the head under
    /// the lock. One round trip in the common case.
    pub async fn insert_optimistic(&self, r: &Record, lock_timeout: Duration) -> Result<bool> {
        let res = match self {
            Store::Sqlite(p, _) => {
                sqlx::query(&format!("INSERT INTO audit_log ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"))
                    .bind(&r.log_id).bind(r.seq).bind(r.epoch).bind(&r.timestamp).bind(&r.session_id).bind(&r.actor_id).bind(&r.actor_ip)
                    .bind(&r.action).bind(&r.resource_type).bind(&r.resource_id).bind(&r.algorithm).bind(&r.status).bind(&r.error_code)
                    .bind(&r.metadata).bind(&r.hmac_chain).bind(&r.created_at)
                    .execute(p)
                    .await
                    .map(|_| ())
            }
            Store::Postgres(p) => {
                sqlx::query(&format!("INSERT INTO audit_log ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"))
                    .bind(&r.log_id).bind(r.seq).bind(r.epoch).bind(&r.timestamp).bind(&r.session_id).bind(&r.actor_id).bind(&r.actor_ip)
                    .bind(&r.action).bind(&r.resource_type).bind(&r.resource_id).bind(&r.algorithm).bind(&r.status).bind(&r.error_code)
                    .bind(&r.metadata).bind(&r.hmac_chain).bind(&r.created_at)
                    .execute(p)
                    .await
                    .map(|_| ())
            }
        };
        match res {
            Ok(_) => Ok(true),
            Err(sqlx::Error::Database(d)) if d.is_unique_violation() => Ok(false),
            Err(e) => Err(busy(e, lock_timeout)),
        }
    }

    /// Spool an event until the key is available.
    pub async fn push_pending(&self, log_id: &str, p: &Prepared) -> Result<()> {
        let text = serde_json::to_string(p).map_err(|e| AuditError::Invalid(e.to_string()))?;
        match self {
            Store::Sqlite(pool, _) => {
                sqlx::query("INSERT INTO audit_pending (log_id, event) VALUES (?, ?)")
                    .bind(log_id)
                    .bind(text)
                    .execute(pool)
                    .await?;
            }
            Store::Postgres(pool) => {
                sqlx::query("INSERT INTO audit_pending (log_id, event) VALUES ($1, $2)")
                    .bind(log_id)
                    .bind(text)
                    .execute(pool)
                    .await?;
            }
        }
        Ok(())
    }

    pub async fn pending_count(&self, log_id: &str) -> Result<i64> {
        Ok(match self {
            Store::Sqlite(p, _) => {
                sqlx::query_scalar("SELECT COUNT(*) FROM audit_pending WHERE log_id = ?")
                    .bind(log_id)
                    .fetch_one(p)
                    .await?
            }
            Store::Postgres(p) => {
                sqlx::query_scalar("SELECT COUNT(*) FROM audit_pending WHERE log_id = $1")
                    .bind(log_id)
                    .fetch_one(p)
                    .await?
            }
        })
    }

    /// The last record's (seq, chain value).
    pub async fn head(&self, log_id: &str) -> Result<Option<(i64, String)>> {
        Ok(match self {
            Store::Sqlite(p, _) => sqlx::query_as(
                "SELECT seq, hmac_chain FROM audit_log WHERE log_id = ? ORDER BY seq DESC LIMIT 1",
            )
            .bind(log_id)
            .fetch_optional(p)
            .await?,
            Store::Postgres(p) => sqlx::query_as(
                "SELECT seq, hmac_chain FROM audit_log WHERE log_id = $1 ORDER BY seq DESC LIMIT 1",
            )
            .bind(log_id)
            .fetch_optional(p)
            .await?,
        })
    }

    pub async fn count(&self) -> Result<i64> {
        Ok(match self {
            Store::Sqlite(p, _) => {
                sqlx::query_scalar("SELECT COUNT(*) FROM audit_log")
                    .fetch_one(p)
                    .await?
            }
            Store::Postgres(p) => {
                sqlx::query_scalar("SELECT COUNT(*) FROM audit_log")
                    .fetch_one(p)
                    .await?
            }
        })
    }

    /// The first record (by trail, seq) that belongs to another trail than `log_id`.
    pub async fn foreign_record(&self, log_id: &str) -> Result<Option<(String, i64)>> {
        Ok(match self {
            Store::Sqlite(p, _) => sqlx::query_as("SELECT log_id, seq FROM audit_log WHERE log_id < ?1 OR log_id > ?1 ORDER BY log_id, seq LIMIT 1").bind(log_id).fetch_optional(p).await?,
            Store::Postgres(p) => sqlx::query_as("SELECT log_id, seq FROM audit_log WHERE log_id < $1 OR log_id > $1 ORDER BY log_id, seq LIMIT 1").bind(log_id).fetch_optional(p).await?,
        })
    }

    /// Every record of the store, all trails, in chain order, in pages (for verification:
    /// records grafted from another trail must be seen too).
    pub async fn page(&self, after: Option<(String, i64)>, limit: i64) -> Result<Vec<Record>> {
        let (after_log, after_seq) = after.unwrap_or_default();
        Ok(match self {
            Store::Sqlite(p, _) => {
                sqlx::query_as(&format!("SELECT {COLUMNS} FROM audit_log WHERE (log_id, seq) > (?, ?) ORDER BY log_id, seq LIMIT ?"))
                    .bind(after_log).bind(after_seq).bind(limit).fetch_all(p).await?
            }
            Store::Postgres(p) => {
                sqlx::query_as(&format!("SELECT {COLUMNS} FROM audit_log WHERE (log_id, seq) > ($1, $2) ORDER BY log_id, seq LIMIT $3"))
                    .bind(after_log).bind(after_seq).bind(limit).fetch_all(p).await?
            }
        })
    }

    /// One trail's records in seq order, in pages.
    pub async fn trail_page(
        &self,
        log_id: &str,
        after_seq: i64,
        limit: i64,
    ) -> Result<Vec<Record>> {
        Ok(match self {
            Store::Sqlite(p, _) => {
                sqlx::query_as(&format!("SELECT {COLUMNS} FROM audit_log WHERE log_id = ? AND seq > ? ORDER BY seq LIMIT ?"))
                    .bind(log_id).bind(after_seq).bind(limit).fetch_all(p).await?
            }
            Store::Postgres(p) => {
                sqlx::query_as(&format!("SELECT {COLUMNS} FROM audit_log WHERE log_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"))
                    .bind(log_id).bind(after_seq).bind(limit).fetch_all(p).await?
            }
        })
    }

    /// Records and failures per day (UTC, `YYYY-MM-DD`) from `from_time` on, oldest first;
    /// days without records are absent.
    pub async fn daily_counts(&self, log_id: &str, from_time: &str) -> Result<Vec<DayCount>> {
        const SELECT: &str = "SELECT substr(timestamp, 1, 10) AS day, COUNT(*) AS records, \
             SUM(CASE WHEN status = 'failure' THEN 1 ELSE 0 END) AS failures FROM audit_log";
        Ok(match self {
            Store::Sqlite(p, _) => {
                sqlx::query_as(&format!(
                    "{SELECT} WHERE log_id = ? AND timestamp >= ? GROUP BY day ORDER BY day"
                ))
                .bind(log_id)
                .bind(from_time)
                .fetch_all(p)
                .await?
            }
            Store::Postgres(p) => {
                sqlx::query_as(&format!(
                    "{SELECT} WHERE log_id = $1 AND timestamp >= $2 GROUP BY day ORDER BY day"
                ))
                .bind(log_id)
                .bind(from_time)
                .fetch_all(p)
                .await?
            }
        })
    }

    /// Browse with filters.
    pub async fn query(&self, log_id: &str, q: &Query) -> Result<Vec<Record>> {
        let pg = matches!(self, Store::Postgres(_));
        let mut sql = format!("SELECT {COLUMNS} FROM audit_log WHERE log_id = ");
        let mut n = 0;
        let mut ph = |sql: &mut String| {
            n += 1;
            if pg {
                sql.push_str(&format!("${n}"));
            } else {
                sql.push('?');
            }
        };
        ph(&mut sql);
        let mut binds: Vec<Bind> = vec![Bind::S(log_id.to_string())];
        let mut cond =
            |sql: &mut String, clause: &str, b: Bind, ph: &mut dyn FnMut(&mut String)| {
                sql.push_str(" AND ");
                sql.push_str(clause);
                ph(sql);
                binds.push(b);
            };
        if let Some(s) = q.before_seq {
            cond(&mut sql, "seq < ", Bind::I(s), &mut ph);
        }
        if let Some(s) = q.after_seq {
            cond(&mut sql, "seq > ", Bind::I(s), &mut ph);
        }
        if let Some(t) = &q.from_time {
            cond(&mut sql, "timestamp >= ", Bind::S(t.clone()), &mut ph);
        }
        if let Some(t) = &q.to_time {
            cond(&mut sql, "timestamp <= ", Bind::S(t.clone()), &mut ph);
        }
        if let Some(a) = &q.actor {
            cond(&mut sql, "actor_id = ", Bind::S(a.clone()), &mut ph);
        }
        if let Some(a) = &q.action {
            cond(&mut sql, "action LIKE ", Bind::S(format!("{a}%")), &mut ph);
        }
        if let Some(s) = &q.status {
            cond(&mut sql, "status = ", Bind::S(s.clone()), &mut ph);
        }
        if let Some(r) = &q.resource {
            cond(&mut sql, "resource_id = ", Bind::S(r.clone()), &mut ph);
        }
        if let Some(t) = &q.text {
            cond(
                &mut sql,
                "metadata LIKE ",
                Bind::S(format!("%{}%", t.replace('%', "\\%"))),
                &mut ph,
            );
        }
        sql.push_str(if q.ascending {
            " ORDER BY seq ASC LIMIT "
        } else {
            " ORDER BY seq DESC LIMIT "
        });
        ph(&mut sql);
        binds.push(Bind::I(q.limit.clamp(1, 100_000)));
        Ok(match self {
            Store::Sqlite(p, _) => {
                let mut query = sqlx::query_as::<_, Record>(&sql);
                for b in binds {
                    query = match b {
                        Bind::S(s) => query.bind(s),
                        Bind::I(i) => query.bind(i),
                    };
                }
                query.fetch_all(p).await?
            }
            Store::Postgres(p) => {
                let mut query = sqlx::query_as::<_, Record>(&sql);
                for b in binds {
                    query = match b {
                        Bind::S(s) => query.bind(s),
                        Bind::I(i) => query.bind(i),
                    };
                }
                query.fetch_all(p).await?
            }
        })
    }

    pub async fn checkpoints(&self, log_id: &str) -> Result<Vec<Checkpoint>> {
        let sql = "SELECT log_id, checkpoint_no, seq, head_hmac, head_digest, time, epoch, algorithm, public_key, signature FROM audit_checkpoint WHERE log_id = ";
        Ok(match self {
            Store::Sqlite(p, _) => {
                sqlx::query_as(&format!("{sql}? ORDER BY checkpoint_no"))
                    .bind(log_id)
                    .fetch_all(p)
                    .await?
            }
            Store::Postgres(p) => {
                sqlx::query_as(&format!("{sql}$1 ORDER BY checkpoint_no"))
                    .bind(log_id)
                    .fetch_all(p)
                    .await?
            }
        })
    }

    pub async fn insert_checkpoint(&self, c: &Checkpoint) -> Result<()> {
        match self {
            Store::Sqlite(p, _) => {
                sqlx::query("INSERT INTO audit_checkpoint (log_id, checkpoint_no, seq, head_hmac, head_digest, time, epoch, algorithm, public_key, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                    .bind(&c.log_id).bind(c.checkpoint_no).bind(c.seq).bind(&c.head_hmac).bind(&c.head_digest).bind(&c.time).bind(c.epoch).bind(&c.algorithm).bind(&c.public_key).bind(&c.signature)
                    .execute(p).await?;
            }
            Store::Postgres(p) => {
                sqlx::query("INSERT INTO audit_checkpoint (log_id, checkpoint_no, seq, head_hmac, head_digest, time, epoch, algorithm, public_key, signature) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
                    .bind(&c.log_id).bind(c.checkpoint_no).bind(c.seq).bind(&c.head_hmac).bind(&c.head_digest).bind(&c.time).bind(c.epoch).bind(&c.algorithm).bind(&c.public_key).bind(&c.signature)
                    .execute(p).await?;
            }
        }
        Ok(())
    }
}

enum Bind {
    S(String),
    I(i64),
}
