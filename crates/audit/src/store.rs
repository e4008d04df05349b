//! The two stores behind one type: SQLite (embedded default, WAL, `synchronous=FULL`) and
//! PostgreSQL (a shared trail for a team). Appends are serialized across threads,
//! processes and machines by the database itself — SQLite's write lock (`BEGIN
//! IMMEDIATE`), PostgreSQL's primary key on (trail, seq), which refuses a second record at
//! a position — so the chain stays one line. Sealing a block (see `block`) keeps that
//! key: its rows are emptied to stubs, never deleted, so a writer whose cached head is
//! older than a block still finds its position taken.
//!
//! Each query's text is written once (in [`crate::sql`]) and each method's code once: the
//! `on_pool!` macro compiles it for both pools.

use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Database, Encode, Row, Transaction, Type};

use crate::block;
use crate::encode::Fields;
use crate::sql::{self, Dialect};
use crate::{AuditError, Checkpoint, Prepared, Record, Result};

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

/// `$body` with `$pool` bound to the store's pool: written once, compiled for each backend.
macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match $store {
            Store::Sqlite($pool, _) => $body,
            Store::Postgres($pool) => $body,
        }
    };
}

/// How a writing transaction starts: the one thing besides the SQL dialect that differs
/// between the pools.
trait Begin {
    type Db: Database;

    /// A transaction no other writer of the store runs beside. SQLite takes the database's
    /// write lock at once (`BEGIN IMMEDIATE`: with a plain `BEGIN` two writers could both
    /// read before either writes); PostgreSQL takes a transaction-scoped advisory lock.
    async fn begin_exclusive(&self) -> sqlx::Result<Transaction<'_, Self::Db>>;

    /// The transaction an append runs in. SQLite: exclusive, as above, so the head read in
    /// it cannot move. PostgreSQL: a plain one; a concurrent writer that took the position
    /// first makes the insert fail on the primary key, and the append is tried again.
    async fn begin_append(&self) -> sqlx::Result<Transaction<'_, Self::Db>>;
}

impl Begin for SqlitePool {
    type Db = sqlx::Sqlite;

    async fn begin_exclusive(&self) -> sqlx::Result<Transaction<'_, sqlx::Sqlite>> {
        self.begin_with("BEGIN IMMEDIATE").await
    }

    async fn begin_append(&self) -> sqlx::Result<Transaction<'_, sqlx::Sqlite>> {
        self.begin_exclusive().await
    }
}

/// The advisory lock that makes a PostgreSQL transaction exclusive (any fixed number; only
/// the console takes it).
const PG_WRITE_LOCK: i64 = 7284001;

impl Begin for PgPool {
    type Db = sqlx::Postgres;

    async fn begin_exclusive(&self) -> sqlx::Result<Transaction<'_, sqlx::Postgres>> {
        let mut tx = self.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(PG_WRITE_LOCK)
            .execute(&mut *tx)
            .await?;
        Ok(tx)
    }

    async fn begin_append(&self) -> sqlx::Result<Transaction<'_, sqlx::Postgres>> {
        self.begin().await
    }
}

type QueryOf<'q, DB> = sqlx::query::Query<'q, DB, <DB as Database>::Arguments<'q>>;

/// Bind `r`'s values to [`sql::INSERT_RECORD`], in [`sql::COLUMNS`] order.
fn bind_record<'q, DB: Database>(q: QueryOf<'q, DB>, r: &'q Record) -> QueryOf<'q, DB>
where
    &'q String: Encode<'q, DB> + Type<DB>,
    &'q Option<String>: Encode<'q, DB> + Type<DB>,
    i64: Encode<'q, DB> + Type<DB>,
{
    let e = &r.event;
    q.bind(&r.log_id)
        .bind(r.seq)
        .bind(r.epoch)
        .bind(&e.timestamp)
        .bind(&e.session_id)
        .bind(&e.actor_id)
        .bind(&e.actor_ip)
        .bind(&e.action)
        .bind(&e.resource_type)
        .bind(&e.resource_id)
        .bind(&e.algorithm)
        .bind(&e.status)
        .bind(&e.error_code)
        .bind(&e.metadata)
        .bind(&r.hmac_chain)
        .bind(&r.created_at)
}

/// A failed statement of an append: a lock held past the timeout is [`AuditError::Locked`].
fn busy(e: sqlx::Error, timeout: Duration) -> AuditError {
    let s = e.to_string();
    if s.contains("database is locked")
        || s.contains("lock timeout")
        || s.contains("canceling statement due to lock timeout")
    {
        AuditError::Locked(timeout.as_millis() as u64)
    } else {
        AuditError::store_cause(e)
    }
}

/// What an insert of a record at its position came to.
enum Inserted {
    Yes,
    /// Another writer's record holds the position.
    PositionTaken,
}

fn inserted(res: sqlx::Result<impl Sized>, lock_timeout: Duration) -> Result<Inserted> {
    match res {
        Ok(_) => Ok(Inserted::Yes),
        Err(sqlx::Error::Database(d)) if d.is_unique_violation() => Ok(Inserted::PositionTaken),
        Err(e) => Err(busy(e, lock_timeout)),
    }
}

impl Store {
    /// Connect and run the migrations. `location` is a PostgreSQL URL or a SQLite file path
    /// (`sqlite://` prefix optional).
    pub async fn connect(location: &str, lock_timeout: Duration) -> Result<Store> {
        if location.starts_with("postgres://") || location.starts_with("postgresql://") {
            let opts = PgConnectOptions::from_str(location)
                .map_err(|e| AuditError::store("bad PostgreSQL URL", e))?
                .options([("lock_timeout", format!("{}ms", lock_timeout.as_millis()))]);
            let pool = PgPoolOptions::new()
                .max_connections(4)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(opts)
                .await
                .map_err(|e| AuditError::store("cannot connect to PostgreSQL", e))?;
            // The schema differs per backend (integer types, `WITHOUT ROWID`), so each has
            // its own migrations.
            sqlx::migrate!("./migrations/postgres")
                .run(&pool)
                .await
                .map_err(AuditError::store_cause)?;
            Ok(Store::Postgres(pool))
        } else {
            let path = location.strip_prefix("sqlite://").unwrap_or(location);
            if let Some(parent) = std::path::Path::new(path).parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        AuditError::store(format!("cannot create {}", parent.display()), e)
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
                .map_err(|e| AuditError::store(format!("cannot open {path}"), e))?;
            sqlx::migrate!("./migrations/sqlite")
                .run(&pool)
                .await
                .map_err(AuditError::store_cause)?;
            Ok(Store::Sqlite(pool, std::path::PathBuf::from(path)))
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Store::Sqlite(_, _) => "sqlite",
            Store::Postgres(_) => "postgresql",
        }
    }

    /// The dialect this store's queries are sent in.
    pub fn dialect(&self) -> Dialect {
        match self {
            Store::Sqlite(_, _) => Dialect::Sqlite,
            Store::Postgres(_) => Dialect::Postgres,
        }
    }

    fn sql(&self, query: &'static str) -> &'static str {
        self.dialect().text(query)
    }

    pub async fn close(&self) {
        on_pool!(self, p => p.close().await)
    }

    /// The trail's ID: the existing one, or a new one created under the write lock (two
    /// consoles starting at once agree on one trail).
    pub async fn trail(&self, new_id: &str, now: &str) -> Result<String> {
        let (first, insert) = (self.sql(sql::FIRST_TRAIL), self.sql(sql::INSERT_TRAIL));
        on_pool!(self, p => {
            let mut tx = p.begin_exclusive().await?;
            let got: Option<String> = sqlx::query_scalar(first)
                .fetch_optional(&mut *tx)
                .await?;
            let id = match got {
                Some(id) => id,
                None => {
                    sqlx::query(insert)
                        .bind(new_id)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    new_id.to_string()
                }
            };
            tx.commit().await?;
            Ok(id)
        })
    }

    pub async fn keys(&self, log_id: &str) -> Result<Vec<KeyRow>> {
        let text = self.sql(sql::KEYS);
        on_pool!(self, p => Ok(sqlx::query_as(text).bind(log_id).fetch_all(p).await?))
    }

    /// Store a wrapped key; fails if the epoch exists already (another console won).
    pub async fn insert_key(&self, k: &KeyRow) -> Result<bool> {
        let text = self.sql(sql::INSERT_KEY);
        let inserted = on_pool!(self, p => sqlx::query(text)
            .bind(&k.log_id)
            .bind(k.epoch)
            .bind(&k.wrapped_key)
            .bind(&k.wrap_mechanism)
            .bind(&k.kek_id)
            .bind(&k.holder)
            .bind(&k.created_at)
            .execute(p)
            .await?
            .rows_affected());
        Ok(inserted == 1)
    }

    /// Replace the wrapped keys of `rows`' epochs (read before as `old`) in one transaction:
    /// every epoch moves to the new wrapping key, or none does. `false` when another
    /// console changed one of them meanwhile.
    pub async fn rewrap_keys(&self, old: &[KeyRow], rows: &[KeyRow]) -> Result<bool> {
        let text = self.sql(sql::REWRAP_KEY);
        on_pool!(self, p => {
            let mut tx = p.begin_exclusive().await?;
            for (was, k) in old.iter().zip(rows) {
                let changed = sqlx::query(text)
                    .bind(&k.wrapped_key)
                    .bind(&k.wrap_mechanism)
                    .bind(&k.kek_id)
                    .bind(&k.holder)
                    .bind(&k.log_id)
                    .bind(k.epoch)
                    .bind(&was.wrapped_key)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if changed != 1 {
                    tx.rollback().await?;
                    return Ok(false);
                }
            }
            tx.commit().await?;
            Ok(true)
        })
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
        let busy = |e| busy(e, lock_timeout);
        let head = self.sql(sql::HEAD);
        let pending = self.dialect().locking(sql::PENDING);
        let insert = self.sql(sql::INSERT_RECORD);
        let delete = self.sql(sql::DELETE_PENDING);
        on_pool!(self, p => {
            let mut tx = p.begin_append().await.map_err(busy)?;
            let head: Option<(i64, String)> = sqlx::query_as(head)
                .bind(log_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(busy)?;
            let pending = if with_pending {
                let rows = sqlx::query(&pending)
                    .bind(log_id)
                    .fetch_all(&mut *tx)
                    .await
                    .map_err(busy)?;
                Self::pending_rows(rows)?
            } else {
                Vec::new()
            };
            let ids: Vec<i64> = pending.iter().map(|(id, _)| *id).collect();
            let recs = build(head, pending)?;
            for r in &recs {
                let res = bind_record(sqlx::query(insert), r).execute(&mut *tx).await;
                if let Inserted::PositionTaken = inserted(res, lock_timeout)? {
                    return Ok(None);
                }
            }
            for id in ids {
                sqlx::query(delete)
                    .bind(id)
                    .execute(&mut *tx)
                    .await
                    .map_err(busy)?;
            }
            tx.commit().await.map_err(busy)?;
            Ok(Some(recs))
        })
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
                    AuditError::store(format!("pending event {id} is unreadable"), e)
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
        let insert = self.sql(sql::INSERT_RECORD);
        let res =
            on_pool!(self, p => bind_record(sqlx::query(insert), r).execute(p).await.map(|_| ()));
        Ok(matches!(inserted(res, lock_timeout)?, Inserted::Yes))
    }

    /// Insert records as rows in one transaction, as they are (tests: see
    /// `testing::unseal`).
    #[cfg(feature = "test-support")]
    pub async fn insert_rows(&self, recs: &[Record]) -> Result<()> {
        let insert = self.sql(sql::INSERT_RECORD);
        on_pool!(self, p => {
            let mut tx = p.begin().await?;
            for r in recs {
                bind_record(sqlx::query(insert), r).execute(&mut *tx).await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// Spool an event until the key is available.
    pub async fn push_pending(&self, log_id: &str, p: &Prepared) -> Result<()> {
        let event = serde_json::to_string(p).map_err(|e| AuditError::Invalid(e.to_string()))?;
        let text = self.sql(sql::INSERT_PENDING);
        on_pool!(self, pool => {
            sqlx::query(text).bind(log_id).bind(event).execute(pool).await?;
        });
        Ok(())
    }

    pub async fn pending_count(&self, log_id: &str) -> Result<i64> {
        let text = self.sql(sql::COUNT_PENDING);
        on_pool!(self, p => Ok(sqlx::query_scalar(text).bind(log_id).fetch_one(p).await?))
    }

    /// The last record's (seq, chain value).
    pub async fn head(&self, log_id: &str) -> Result<Option<(i64, String)>> {
        let text = self.sql(sql::HEAD);
        on_pool!(self, p => Ok(sqlx::query_as(text).bind(log_id).fetch_optional(p).await?))
    }

    pub async fn count(&self) -> Result<i64> {
        let text = self.sql(sql::COUNT_RECORDS);
        on_pool!(self, p => Ok(sqlx::query_scalar(text).fetch_one(p).await?))
    }

    /// The first record (by trail, seq) that belongs to another trail than `log_id`.
    /// Rows and sealed blocks both count: a block of another trail is named by its first
    /// position. (A record of another trail inside one of this trail's blocks is found by
    /// the verifier as it reads the block.)
    pub async fn foreign_record(&self, log_id: &str) -> Result<Option<(String, i64)>> {
        let (rows, blocks) = (self.sql(sql::FOREIGN_RECORD), self.sql(sql::FOREIGN_BLOCK));
        type Position = Option<(String, i64)>;
        let (row, block): (Position, Position) = on_pool!(self, p => (
            sqlx::query_as(rows).bind(log_id).fetch_optional(p).await?,
            sqlx::query_as(blocks).bind(log_id).fetch_optional(p).await?,
        ));
        Ok(row.into_iter().chain(block).min())
    }

    /// The last position sealed into a block (0 when none). Positions up to it are read
    /// from blocks, the rows of `audit_log` only after it.
    pub async fn sealed_to(&self, log_id: &str) -> Result<i64> {
        let text = self.sql(sql::SEALED_TO);
        on_pool!(self, p => Ok(sqlx::query_scalar(text).bind(log_id).fetch_one(p).await?))
    }

    /// Seal whole blocks of `block_size` positions after the last one, each in its own
    /// exclusive transaction: the rows' records are packed into an `audit_block` row and
    /// the rows emptied to stubs, so either both happen or neither does. A block is sealed
    /// only when a record after it exists: the head is always a row, which the append's
    /// head query and its primary-key check rely on. At most `max_blocks` per call (a trail
    /// from before blocks existed is sealed over its next appends, not all at once).
    /// Returns how many records were sealed.
    pub async fn seal(&self, log_id: &str, block_size: i64, max_blocks: usize) -> Result<i64> {
        let (sealed_to, head) = (self.sql(sql::SEALED_TO), self.sql(sql::HEAD));
        let (rows, insert, stub) = (
            self.sql(sql::RANGE),
            self.sql(sql::INSERT_BLOCK),
            self.sql(sql::STUB_ROWS),
        );
        let mut sealed = 0;
        for _ in 0..max_blocks {
            let done = on_pool!(self, p => {
                let mut tx = p.begin_exclusive().await?;
                let from: i64 = sqlx::query_scalar(sealed_to).bind(log_id).fetch_one(&mut *tx).await? ;
                let from = from + 1;
                let to = from + block_size - 1;
                let head: Option<(i64, String)> =
                    sqlx::query_as(head).bind(log_id).fetch_optional(&mut *tx).await?;
                if head.is_none_or(|(h, _)| h <= to) {
                    None
                } else {
                    let recs: Vec<Record> = sqlx::query_as(rows)
                        .bind(log_id)
                        .bind(from)
                        .bind(to)
                        .fetch_all(&mut *tx)
                        .await?;
                    let max_time = recs.iter().map(|r| r.event.timestamp.as_str()).max().unwrap_or("");
                    sqlx::query(insert)
                        .bind(log_id)
                        .bind(from)
                        .bind(to)
                        .bind(recs.len() as i64)
                        .bind(max_time)
                        .bind(block::body_of(&recs))
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query(stub).bind(log_id).bind(from).bind(to).execute(&mut *tx).await?;
                    tx.commit().await?;
                    Some(recs.len() as i64)
                }
            });
            match done {
                Some(n) => sealed += n,
                None => break,
            }
        }
        Ok(sealed)
    }

    /// Hand the bodies of the trail's blocks that meet `condition` (with `values` bound in
    /// order) to `each`, oldest first or newest first, until it returns `false`. Read a few
    /// blocks per query, each query after the last block seen, so that stopping early
    /// reads no more than it needs (a streamed query left half-read would still be sent
    /// whole).
    async fn each_body(
        &self,
        log_id: &str,
        condition: &str,
        values: &[Value],
        ascending: bool,
        mut each: impl FnMut(&[u8]) -> bool,
    ) -> Result<()> {
        const BLOCKS_PER_QUERY: i64 = 4;
        let (cursor, order) = if ascending {
            (">", "ASC")
        } else {
            ("<", "DESC")
        };
        let text = self.dialect().translate(&format!(
            "SELECT first_seq, body FROM audit_block WHERE log_id = ? AND {condition} AND first_seq {cursor} ? ORDER BY first_seq {order} LIMIT ?"
        )).into_owned();
        let mut last = if ascending { i64::MIN } else { i64::MAX };
        loop {
            let blocks: Vec<(i64, Vec<u8>)> = on_pool!(self, p => {
                let mut q = sqlx::query_as(&text).bind(log_id);
                for v in values {
                    q = match v {
                        Value::Text(s) => q.bind(s.as_str()),
                        Value::Int(i) => q.bind(*i),
                    };
                }
                q.bind(last).bind(BLOCKS_PER_QUERY).fetch_all(p).await?
            });
            let full = blocks.len() as i64 == BLOCKS_PER_QUERY;
            for (first_seq, body) in blocks {
                last = first_seq;
                if !each(&body) {
                    return Ok(());
                }
            }
            if !full {
                return Ok(());
            }
        }
    }

    /// One trail's records in seq order, in pages.
    pub async fn trail_page(
        &self,
        log_id: &str,
        after_seq: i64,
        limit: i64,
    ) -> Result<Vec<Record>> {
        let sealed = self.sealed_to(log_id).await?;
        let mut out: Vec<Record> = Vec::new();
        if after_seq < sealed {
            let values = [Value::Int(after_seq)];
            self.each_body(log_id, sql::BLOCKS_AFTER, &values, true, |body| {
                out.extend(
                    block::records(body)
                        .filter(|r| r.seq > after_seq && r.seq <= sealed)
                        .take((limit as usize).saturating_sub(out.len())),
                );
                (out.len() as i64) < limit
            })
            .await?;
        }
        let rest = limit - out.len() as i64;
        if rest > 0 {
            let text = self.sql(sql::TRAIL_PAGE);
            let rows: Vec<Record> = on_pool!(self, p => sqlx::query_as(text)
                .bind(log_id)
                .bind(after_seq.max(sealed))
                .bind(rest)
                .fetch_all(p)
                .await?);
            out.extend(rows);
        }
        Ok(out)
    }

    /// Records and failures per day (UTC, `YYYY-MM-DD`) from `from_time` on, oldest first;
    /// days without records are absent.
    pub async fn daily_counts(&self, log_id: &str, from_time: &str) -> Result<Vec<DayCount>> {
        const SELECT: &str = "SELECT substr(timestamp, 1, 10) AS day, COUNT(*) AS records, \
             SUM(CASE WHEN status = 'failure' THEN 1 ELSE 0 END) AS failures FROM audit_log \
             WHERE log_id = ? AND seq > ? AND timestamp >= ? GROUP BY day ORDER BY day";
        let sealed = self.sealed_to(log_id).await?;
        let text = self.dialect().translate(SELECT);
        let rows: Vec<DayCount> = on_pool!(self, p => sqlx::query_as(&text)
            .bind(log_id)
            .bind(sealed)
            .bind(from_time)
            .fetch_all(p)
            .await?);
        let mut days: std::collections::BTreeMap<String, (i64, i64)> = rows
            .into_iter()
            .map(|d| (d.day, (d.records, d.failures)))
            .collect();
        let values = [Value::Text(from_time.into())];
        self.each_body(log_id, sql::BLOCKS_SINCE, &values, true, |body| {
            for e in block::entries(body).map_while(|e| e.ok()) {
                let f = &e.fields;
                if f.seq <= sealed && f.timestamp >= from_time.as_bytes() {
                    let day = String::from_utf8_lossy(f.timestamp.get(..10).unwrap_or(f.timestamp));
                    let d = match days.get_mut(day.as_ref()) {
                        Some(d) => d,
                        None => days.entry(day.into_owned()).or_default(),
                    };
                    d.0 += 1;
                    d.1 += i64::from(f.status == b"failure");
                }
            }
            true
        })
        .await?;
        Ok(days
            .into_iter()
            .map(|(day, (records, failures))| DayCount {
                day,
                records,
                failures,
            })
            .collect())
    }

    /// Browse with filters.
    pub async fn query(&self, log_id: &str, q: &Query) -> Result<Vec<Record>> {
        let sealed = self.sealed_to(log_id).await?;
        let limit = q.limit.clamp(1, MAX_BROWSE) as usize;
        let (text, values) = browse(log_id, q, sealed);
        let text = self.dialect().translate(&text);
        let rows: Vec<Record> = on_pool!(self, p => {
            let mut query = sqlx::query_as::<_, Record>(&text);
            for v in values {
                query = match v {
                    Value::Text(s) => query.bind(s),
                    Value::Int(i) => query.bind(i),
                };
            }
            query.fetch_all(p).await?
        });
        // Newest first: the rows come after every sealed position, so blocks are read only
        // when the rows do not fill the page. Oldest first: blocks, then the rows.
        if !q.ascending && rows.len() >= limit {
            return Ok(rows);
        }
        let mut sealed_matches = Vec::new();
        let want = if q.ascending {
            limit
        } else {
            limit - rows.len()
        };
        let values = [
            Value::Int(q.after_seq.unwrap_or(0)),
            Value::Int(q.before_seq.unwrap_or(i64::MAX)),
        ];
        let dialect = self.dialect();
        self.each_body(log_id, sql::BLOCKS_BETWEEN, &values, q.ascending, |body| {
            let mut found: Vec<Record> = block::entries(body)
                .map_while(|e| e.ok())
                .filter(|e| e.fields.seq <= sealed && matches(q, &e.fields, dialect))
                .map(|e| e.record())
                .collect();
            if !q.ascending {
                found.reverse();
            }
            found.truncate(want - sealed_matches.len());
            sealed_matches.extend(found);
            sealed_matches.len() < want
        })
        .await?;
        Ok(if q.ascending {
            sealed_matches.extend(rows);
            sealed_matches.truncate(limit);
            sealed_matches
        } else {
            let mut rows = rows;
            rows.extend(sealed_matches);
            rows
        })
    }

    /// What `pick` takes from every record matching `q` (its `limit` and order aside),
    /// oldest first, however many records there are. A reader that works from the whole
    /// trail (a key's signatures since its generation) must not stop at the browse limit,
    /// where `query` does: it would miss the newest records. Read a page of the browse
    /// limit at a time, so no more than one page of records is held beside what is picked.
    pub async fn query_all<T>(
        &self,
        log_id: &str,
        q: &Query,
        pick: impl FnMut(Record) -> Option<T>,
    ) -> Result<Vec<T>> {
        self.query_all_in_pages(log_id, q, MAX_BROWSE, pick).await
    }

    /// [`Store::query_all`] in pages of `page` records (tests use small pages).
    pub(crate) async fn query_all_in_pages<T>(
        &self,
        log_id: &str,
        q: &Query,
        page: i64,
        mut pick: impl FnMut(Record) -> Option<T>,
    ) -> Result<Vec<T>> {
        let mut q = Query {
            ascending: true,
            limit: page,
            ..q.clone()
        };
        let mut out = Vec::new();
        loop {
            let rows = self.query(log_id, &q).await?;
            let Some(last) = rows.last() else {
                return Ok(out);
            };
            q.after_seq = Some(last.seq);
            let full = rows.len() as i64 >= q.limit.clamp(1, MAX_BROWSE);
            out.extend(rows.into_iter().filter_map(&mut pick));
            if !full {
                return Ok(out);
            }
        }
    }

    /// The newest `n` records, oldest first (`tail -n`), however many `n` is: newest-first
    /// pages of the browse limit.
    pub async fn newest(&self, log_id: &str, n: u64) -> Result<Vec<Record>> {
        self.newest_in_pages(log_id, n, MAX_BROWSE).await
    }

    /// [`Store::newest`] in pages of `page` records (tests use small pages).
    pub(crate) async fn newest_in_pages(
        &self,
        log_id: &str,
        n: u64,
        page: i64,
    ) -> Result<Vec<Record>> {
        let mut out: Vec<Record> = Vec::new();
        while (out.len() as u64) < n {
            let q = Query {
                before_seq: out.last().map(|r| r.seq),
                limit: page.min(i64::try_from(n - out.len() as u64).unwrap_or(i64::MAX)),
                ..Query::default()
            };
            let rows = self.query(log_id, &q).await?;
            let done = (rows.len() as i64) < q.limit.clamp(1, MAX_BROWSE);
            out.extend(rows);
            if done {
                break;
            }
        }
        out.reverse();
        Ok(out)
    }

    /// The last position a checkpoint of the trail vouches for (`None` before the first).
    pub async fn vouched_seq(&self, log_id: &str) -> Result<Option<i64>> {
        let text = self.sql(sql::VOUCHED_SEQ);
        on_pool!(self, p => Ok(sqlx::query_scalar(text).bind(log_id).fetch_one(p).await?))
    }

    pub async fn checkpoints(&self, log_id: &str) -> Result<Vec<Checkpoint>> {
        let text = self.sql(sql::CHECKPOINTS);
        on_pool!(self, p => Ok(sqlx::query_as(text).bind(log_id).fetch_all(p).await?))
    }

    pub async fn insert_checkpoint(&self, c: &Checkpoint) -> Result<()> {
        let text = self.sql(sql::INSERT_CHECKPOINT);
        on_pool!(self, p => {
            sqlx::query(text)
                .bind(&c.log_id)
                .bind(c.checkpoint_no)
                .bind(c.seq)
                .bind(&c.head_hmac)
                .bind(&c.head_digest)
                .bind(&c.time)
                .bind(c.epoch)
                .bind(&c.algorithm)
                .bind(&c.public_key)
                .bind(&c.signature)
                .execute(p)
                .await?;
        });
        Ok(())
    }
}

/// A value bound to the browsing query.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Text(String),
    Int(i64),
}

/// The most records one browse returns.
const MAX_BROWSE: i64 = 100_000;

/// The browsing query for `q` over the rows after the sealed positions (SQLite
/// placeholders) and its values in order.
fn browse(log_id: &str, q: &Query, sealed: i64) -> (String, Vec<Value>) {
    let mut text = sql::BROWSE.to_string();
    let mut values = vec![Value::Text(log_id.to_string())];
    let mut and = |clause: &str, v: Value| {
        text.push_str(" AND ");
        text.push_str(clause);
        values.push(v);
    };
    and("seq > ?", Value::Int(sealed));
    if let Some(s) = q.before_seq {
        and("seq < ?", Value::Int(s));
    }
    if let Some(s) = q.after_seq {
        and("seq > ?", Value::Int(s));
    }
    if let Some(t) = &q.from_time {
        and("timestamp >= ?", Value::Text(t.clone()));
    }
    if let Some(t) = &q.to_time {
        and("timestamp <= ?", Value::Text(t.clone()));
    }
    if let Some(a) = &q.actor {
        and("actor_id = ?", Value::Text(a.clone()));
    }
    if let Some(a) = &q.action {
        and("action LIKE ?", Value::Text(format!("{a}%")));
    }
    if let Some(s) = &q.status {
        and("status = ?", Value::Text(s.clone()));
    }
    if let Some(r) = &q.resource {
        and("resource_id = ?", Value::Text(r.clone()));
    }
    if let Some(t) = &q.text {
        and(
            "metadata LIKE ?",
            Value::Text(format!("%{}%", t.replace('%', "\\%"))),
        );
    }
    text.push_str(if q.ascending {
        " ORDER BY seq ASC LIMIT ?"
    } else {
        " ORDER BY seq DESC LIMIT ?"
    });
    values.push(Value::Int(q.limit.clamp(1, MAX_BROWSE)));
    (text, values)
}

/// Whether a sealed record passes `q`'s filters: what [`browse`]'s conditions select among
/// rows, with each backend's `LIKE` (ASCII case-insensitive in SQLite, exact in
/// PostgreSQL). On the borrowed fields, so that only the records shown are copied out.
fn matches(q: &Query, f: &Fields<'_>, dialect: Dialect) -> bool {
    let fold = dialect == Dialect::Sqlite;
    let starts = |s: &[u8], p: &str| {
        let p = p.as_bytes();
        s.len() >= p.len()
            && match fold {
                true => s[..p.len()].eq_ignore_ascii_case(p),
                false => &s[..p.len()] == p,
            }
    };
    let contains = |s: &[u8], p: &str| {
        let p = p.as_bytes();
        p.is_empty()
            || s.windows(p.len()).any(|w| match fold {
                true => w.eq_ignore_ascii_case(p),
                false => w == p,
            })
    };
    let is = |v: Option<&[u8]>, want: &str| v == Some(want.as_bytes());
    q.before_seq.is_none_or(|b| f.seq < b)
        && q.after_seq.is_none_or(|a| f.seq > a)
        && q.from_time
            .as_ref()
            .is_none_or(|t| f.timestamp >= t.as_bytes())
        && q.to_time
            .as_ref()
            .is_none_or(|t| f.timestamp <= t.as_bytes())
        && q.actor.as_ref().is_none_or(|a| is(f.actor_id, a))
        && q.action.as_ref().is_none_or(|a| starts(f.action, a))
        && q.status.as_ref().is_none_or(|s| f.status == s.as_bytes())
        && q.resource.as_ref().is_none_or(|x| is(f.resource_id, x))
        && q.text.as_ref().is_none_or(|t| contains(f.metadata, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsing_binds_one_value_per_placeholder() {
        let q = Query {
            before_seq: Some(90),
            limit: 50,
            action: Some("key.".into()),
            text: Some("50%".into()),
            ..Query::default()
        };
        let (text, values) = browse("log_1", &q, 0);
        assert_eq!(
            text,
            format!(
                "{} AND seq > ? AND seq < ? AND action LIKE ? AND metadata LIKE ? ORDER BY seq DESC LIMIT ?",
                sql::BROWSE
            )
        );
        assert_eq!(
            values,
            vec![
                Value::Text("log_1".into()),
                Value::Int(0),
                Value::Int(90),
                Value::Text("key.%".into()),
                Value::Text("%50\\%%".into()),
                Value::Int(50),
            ]
        );
        assert!(Dialect::Postgres
            .translate(&text)
            .ends_with("ORDER BY seq DESC LIMIT $6"));
    }
}
