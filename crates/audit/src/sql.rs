//! Every query the store sends, each written once, and the one place that adapts a query's
//! text to the backend.
//!
//! Queries are written with SQLite's placeholders (`?`, or `?N` where a value is used
//! twice); [`rewrite_placeholders`] turns them into PostgreSQL's `$N` ([`Dialect::text`]
//! for the queries here, [`Dialect::translate`] for one built at run time) or, for `COPY`,
//! which takes no parameters, into literals. The few things that do differ between the
//! backends stay explicit where they are used, each with its reason: the schema
//! (`migrations/sqlite` vs `migrations/postgres`: integer types, `WITHOUT ROWID`), how a
//! writing transaction starts (`BEGIN IMMEDIATE` vs an advisory lock, see `store::Begin`),
//! PostgreSQL's row lock on the spool ([`PENDING`] + [`Dialect::locking`]), and the
//! verifier's bulk read (the SQLite C API vs `COPY … TO STDOUT`, see `scan`).
//!
//! The record queries read rows only after the trail's last sealed position
//! ([`SEALED_TO`]); positions up to it are read from `audit_block` (see `block`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::RwLock;

/// The record table's columns in table order. The SELECT lists, the INSERT, the record's
/// binding order (`store::bind_record!`) and the scanners' column positions (`scan`) all
/// follow this order; `Record` declares its fields (with the flattened event) in it too.
macro_rules! record_columns {
    () => {
        "log_id, seq, epoch, timestamp, session_id, actor_id, actor_ip, action, resource_type, resource_id, algorithm, status, error_code, metadata, hmac_chain, created_at"
    };
}

/// The record table's columns, for queries built at run time.
pub const COLUMNS: &str = record_columns!();
/// How many there are.
pub const COLUMN_COUNT: usize = 16;

/// The trail of this store (the oldest, should there ever be two).
pub const FIRST_TRAIL: &str = "SELECT log_id FROM audit_trail ORDER BY created_at LIMIT 1";
pub const INSERT_TRAIL: &str = "INSERT INTO audit_trail (log_id, created_at) VALUES (?, ?)";

pub const KEYS: &str = "SELECT log_id, epoch, wrapped_key, wrap_mechanism, kek_id, holder, created_at FROM audit_key WHERE log_id = ? ORDER BY epoch";
/// An epoch that exists already is left as it is (another console created it first).
pub const INSERT_KEY: &str = "INSERT INTO audit_key (log_id, epoch, wrapped_key, wrap_mechanism, kek_id, holder, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";
/// An epoch's key wrapped again under another HSM key; only while it is still wrapped as
/// read (another console that moved it first wins).
pub const REWRAP_KEY: &str = "UPDATE audit_key SET wrapped_key = ?, wrap_mechanism = ?, kek_id = ?, holder = ? WHERE log_id = ? AND epoch = ? AND wrapped_key = ?";

/// The last record's position and chain value.
pub const HEAD: &str =
    "SELECT seq, hmac_chain FROM audit_log WHERE log_id = ? ORDER BY seq DESC LIMIT 1";
pub const INSERT_RECORD: &str = concat!(
    "INSERT INTO audit_log (",
    record_columns!(),
    ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
);
pub const COUNT_RECORDS: &str = "SELECT COUNT(*) FROM audit_log";
/// The first record of another trail: the first before the trail and the first after it,
/// each a primary-key lookup. (With `log_id < ?1 OR log_id > ?1` in one WHERE, SQLite
/// scanned the whole table: 64 ms of a 250 ms verification of 200,000 records.)
pub const FOREIGN_RECORD: &str = concat!(
    "SELECT * FROM (SELECT log_id, seq FROM audit_log WHERE log_id < ?1 ORDER BY log_id, seq LIMIT 1) AS below",
    " UNION ALL ",
    "SELECT * FROM (SELECT log_id, seq FROM audit_log WHERE log_id > ?1 ORDER BY log_id, seq LIMIT 1) AS above",
    " ORDER BY 1, 2 LIMIT 1"
);
/// One trail in seq order, after a seq.
pub const TRAIL_PAGE: &str = concat!(
    "SELECT ",
    record_columns!(),
    " FROM audit_log WHERE log_id = ? AND seq > ? ORDER BY seq LIMIT ?"
);
/// Where and in which order the verifier's bulk reads take one trail's records `from..=to`.
macro_rules! range_of_trail {
    () => {
        " FROM audit_log WHERE log_id = ? AND seq >= ? AND seq <= ? ORDER BY seq"
    };
}
/// The SQL function [`RANGE_VISIT`] calls with each record's columns (SQLite only; the
/// scanner registers it on its own connection).
macro_rules! visit_function {
    () => {
        "audit_visit_record"
    };
}
/// One trail's records `from..=to` (the verifier's bulk read).
pub const RANGE: &str = concat!("SELECT ", record_columns!(), range_of_trail!());
/// The name the scanner registers its per-record SQL function under.
pub const VISIT_FUNCTION: &str = visit_function!();
/// [`RANGE`] with each record handed to [`VISIT_FUNCTION`] instead of returned.
pub const RANGE_VISIT: &str = concat!(
    "SELECT ",
    visit_function!(),
    "(",
    record_columns!(),
    ")",
    range_of_trail!()
);

/// The last position of the trail's sealed blocks (0 when none): records up to it are
/// read from `audit_block`, the rows of `audit_log` only after it.
pub const SEALED_TO: &str =
    "SELECT CAST(COALESCE(MAX(last_seq), 0) AS BIGINT) FROM audit_block WHERE log_id = ?";
pub const INSERT_BLOCK: &str = "INSERT INTO audit_block (log_id, first_seq, last_seq, records, max_time, body) VALUES (?, ?, ?, ?, ?, ?)";
/// The rows of a sealed block emptied to stubs: only their key keeps meaning (it refuses a
/// second record at the position); nothing reads the rest.
pub const STUB_ROWS: &str = "UPDATE audit_log SET epoch = 0, timestamp = '', session_id = '', actor_id = NULL, actor_ip = '', action = '', resource_type = '', resource_id = NULL, algorithm = NULL, status = '', error_code = NULL, metadata = '', hmac_chain = '', created_at = '' WHERE log_id = ? AND seq >= ? AND seq <= ?";
/// The trail's blocks that hold positions after a seq (a condition for `store::each_body`).
pub const BLOCKS_AFTER: &str = "last_seq > ?";
/// The bodies of the trail's blocks that overlap `from..=to`, oldest first (the
/// verifier's bulk read of a range's sealed part).
pub const BLOCKS_OF_RANGE: &str = "SELECT body FROM audit_block WHERE log_id = ? AND last_seq >= ? AND first_seq <= ? ORDER BY first_seq";
/// The first block of another trail.
pub const FOREIGN_BLOCK: &str = "SELECT log_id, first_seq FROM audit_block WHERE log_id <> ? ORDER BY log_id, first_seq LIMIT 1";
/// The trail's blocks with records from a time on (the day chart; a condition for
/// `store::each_body`).
pub const BLOCKS_SINCE: &str = "max_time >= ?";
/// The trail's blocks between two positions (browsing; a condition for `store::each_body`).
pub const BLOCKS_BETWEEN: &str = "last_seq > ? AND first_seq < ?";

/// The start of the browsing query; `store::browse` adds a condition per filter, the
/// order and the limit.
pub const BROWSE: &str = concat!(
    "SELECT ",
    record_columns!(),
    " FROM audit_log WHERE log_id = ?"
);

/// The spooled events, oldest first. Read in the append's transaction with
/// [`Dialect::locking`].
pub const PENDING: &str = "SELECT id, event FROM audit_pending WHERE log_id = ? ORDER BY id";
pub const INSERT_PENDING: &str = "INSERT INTO audit_pending (log_id, event) VALUES (?, ?)";
pub const DELETE_PENDING: &str = "DELETE FROM audit_pending WHERE id = ?";
pub const COUNT_PENDING: &str = "SELECT COUNT(*) FROM audit_pending WHERE log_id = ?";

/// The last position a checkpoint of the trail vouches for.
pub const VOUCHED_SEQ: &str = "SELECT MAX(seq) FROM audit_checkpoint WHERE log_id = ?";
pub const CHECKPOINTS: &str = "SELECT log_id, checkpoint_no, seq, head_hmac, head_digest, time, epoch, algorithm, public_key, signature FROM audit_checkpoint WHERE log_id = ? ORDER BY checkpoint_no";
pub const INSERT_CHECKPOINT: &str = "INSERT INTO audit_checkpoint (log_id, checkpoint_no, seq, head_hmac, head_digest, time, epoch, algorithm, public_key, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/// The SQL dialect a query's text is sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// One of the queries above as this backend takes it: unchanged for SQLite, with `$N`
    /// placeholders for PostgreSQL (translated once per query and kept, as appends send
    /// the same text a thousand times a second).
    pub fn text(self, sql: &'static str) -> &'static str {
        match self {
            Dialect::Sqlite => sql,
            Dialect::Postgres => postgres_text(sql),
        }
    }

    /// A query built at run time as this backend takes it (translated on every call).
    pub fn translate(self, sql: &str) -> Cow<'_, str> {
        match self {
            Dialect::Sqlite => Cow::Borrowed(sql),
            Dialect::Postgres => Cow::Owned(rewrite_placeholders(sql, |n| format!("${n}"))),
        }
    }

    /// `sql` (a SELECT in a writing transaction) with the rows it reads locked until the
    /// transaction ends. PostgreSQL needs `FOR UPDATE` so that two writers cannot both
    /// chain the same spooled events; SQLite has no row locks and needs none, as its
    /// writing transaction holds the whole database's write lock (`BEGIN IMMEDIATE`).
    pub fn locking(self, sql: &'static str) -> Cow<'static, str> {
        match self {
            Dialect::Sqlite => Cow::Borrowed(sql),
            Dialect::Postgres => Cow::Owned(format!("{} FOR UPDATE", self.text(sql))),
        }
    }
}

/// The PostgreSQL text of a static query, translated on first use. The cache is keyed by
/// the text's address (the queries are constants) and holds one entry per query.
fn postgres_text(sql: &'static str) -> &'static str {
    type Cache = RwLock<HashMap<(usize, usize), &'static str>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (sql.as_ptr() as usize, sql.len());
    if let Some(text) = cache.read().get(&key) {
        return text;
    }
    let text = Dialect::Postgres.translate(sql).into_owned();
    cache
        .write()
        .entry(key)
        .or_insert_with(|| Box::leak(text.into_boxed_str()))
}

/// `sql` with each placeholder replaced by `value(n)`, `n` its 1-based parameter number:
/// `?N` is parameter N, a bare `?` the one after the highest so far (SQLite's own rule).
/// Question marks inside quoted literals or identifiers are left alone.
pub fn rewrite_placeholders(sql: &str, mut value: impl FnMut(usize) -> String) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut highest = 0;
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '?') => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                let n = digits.parse().unwrap_or(highest + 1);
                highest = highest.max(n);
                out.push_str(&value(n));
            }
            (None, c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_numbered_for_postgres() {
        assert_eq!(
            Dialect::Postgres.translate("SELECT a FROM t WHERE x = ? AND y > ? LIMIT ?"),
            "SELECT a FROM t WHERE x = $1 AND y > $2 LIMIT $3"
        );
        assert_eq!(
            Dialect::Postgres.translate("WHERE a < ?1 OR b > ?1 LIMIT ?2"),
            "WHERE a < $1 OR b > $1 LIMIT $2"
        );
        // SQLite's rule: a bare `?` follows the highest number so far.
        assert_eq!(
            Dialect::Postgres.translate("?2, ?, ?1, ?"),
            "$2, $3, $1, $4"
        );
        assert_eq!(
            Dialect::Postgres.translate("WHERE a LIKE '%?%' AND \"q?\" = ?"),
            "WHERE a LIKE '%?%' AND \"q?\" = $1"
        );
        assert_eq!(Dialect::Sqlite.text(INSERT_RECORD), INSERT_RECORD);
        // Translated once, then the same text.
        let first = Dialect::Postgres.text(INSERT_RECORD);
        assert!(std::ptr::eq(first, Dialect::Postgres.text(INSERT_RECORD)));
        assert_eq!(first, Dialect::Postgres.translate(INSERT_RECORD));
    }

    #[test]
    fn the_record_insert_binds_every_column() {
        let pg = Dialect::Postgres.text(INSERT_RECORD);
        assert_eq!(COLUMNS.split(", ").count(), COLUMN_COUNT);
        assert!(pg.ends_with(
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
        ));
    }

    #[test]
    fn only_postgres_locks_the_spooled_rows() {
        assert_eq!(Dialect::Sqlite.locking(PENDING), PENDING);
        assert_eq!(
            Dialect::Postgres.locking(PENDING),
            "SELECT id, event FROM audit_pending WHERE log_id = $1 ORDER BY id FOR UPDATE"
        );
    }
}
