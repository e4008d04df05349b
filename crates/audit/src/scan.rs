//! Fast full scans for verification.
//!
//! sqlx's SQLite driver hands every row across a worker-thread channel and decodes each
//! column into an owned value: measured here at 14 µs a row, 23× the cost of the HMAC the
//! verifier has to do per row. So the bulk read path bypasses it: SQLite rows are handed,
//! straight from SQLite's buffers, to a SQL function of ours that the range query calls
//! per record (`rusqlite`, sharing sqlx's `libsqlite3-sys`), and PostgreSQL rows stream
//! through `COPY … TO STDOUT` (binary format, parsed here). Rows are handed to the
//! verifier borrowed, to encode and MAC while the bytes are still in cache. Appends,
//! browsing and everything else stay on sqlx.
//!
//! Most of a long trail is not rows but sealed blocks (see `block`): a range reads its
//! blocks first (a body of a thousand records per row: read in place from SQLite's
//! buffers, through sqlx from PostgreSQL), each record handed over with the encoding it
//! was MACed over, then its rows after the last sealed position.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::mpsc::Sender;

use crate::block;
use crate::encode::Fields;
use crate::sql;
use crate::{AuditError, Result};

/// A slice of one trail: records `from..=to`, of which those up to `sealed_to` are read
/// from sealed blocks and the rest from rows.
#[derive(Debug, Clone)]
pub struct Range {
    pub log_id: String,
    pub from: i64,
    pub to: i64,
    pub sealed_to: i64,
}

impl Range {
    /// The positions read from blocks, if any.
    fn sealed(&self) -> Option<(i64, i64)> {
        (self.from <= self.sealed_to).then(|| (self.from, self.to.min(self.sealed_to)))
    }

    /// The positions read from rows, if any.
    fn rows(&self) -> Option<(i64, i64)> {
        let from = self.from.max(self.sealed_to + 1);
        (from <= self.to).then_some((from, self.to))
    }
}

/// What the scanners hand each record to, in the range's order: first the sealed ones,
/// then the rows. Returning `false` stops the scan.
pub trait Visit {
    /// A row: its fields (borrowed from the database's buffers) and its stored chain value
    /// (hex).
    fn row(&mut self, f: &Fields<'_>, hmac_hex: &[u8]) -> bool;
    /// A sealed record: its stored encoding, its fields and chain value, borrowed from the
    /// block's body.
    fn sealed(&mut self, e: &block::Entry<'_>) -> bool;
    /// A block's body stopped parsing before the range's end: its remaining records cannot
    /// be read.
    fn damaged_block(&mut self) -> bool;
}

/// Hand a block's records within `from..=to` to the visitor; false once it says stop.
/// Records before `from` belong to the range before; reading stops after `to`.
fn visit_body(body: &[u8], (from, to): (i64, i64), visit: &mut dyn Visit) -> bool {
    for entry in block::entries(body) {
        let Ok(e) = entry else {
            return visit.damaged_block();
        };
        let seq = e.fields.seq;
        if seq > to {
            return true;
        }
        if seq >= from && !visit.sealed(&e) {
            return false;
        }
    }
    true
}

/// A row's columns by position, borrowed from the database's buffers.
///
/// This is the scanners' inner loop: [`record_fields`] and the implementations are
/// `#[inline(always)]`: without it, decoding and MACing a PostgreSQL range measured about a
/// fifth slower than the closures these replaced.
trait Columns<'a> {
    /// A text column (NULL reads as empty).
    #[inline(always)]
    fn text(&self, i: usize) -> Result<&'a [u8]> {
        Ok(self.opt(i)?.unwrap_or(b""))
    }
    /// A nullable text column.
    fn opt(&self, i: usize) -> Result<Option<&'a [u8]>>;
    fn int(&self, i: usize) -> Result<i64>;
}

/// A row read with [`sql::RANGE`] as the encoder's fields and the stored chain value, by
/// the positions of [`sql::COLUMNS`].
#[inline(always)]
fn record_fields<'a>(r: &impl Columns<'a>) -> Result<(Fields<'a>, &'a [u8])> {
    Ok((
        Fields {
            log_id: r.text(0)?,
            seq: r.int(1)?,
            epoch: r.int(2)?,
            timestamp: r.text(3)?,
            session_id: r.text(4)?,
            actor_id: r.opt(5)?,
            actor_ip: r.text(6)?,
            action: r.text(7)?,
            resource_type: r.text(8)?,
            resource_id: r.opt(9)?,
            algorithm: r.opt(10)?,
            status: r.text(11)?,
            error_code: r.opt(12)?,
            metadata: r.text(13)?,
            created_at: r.text(15)?,
        },
        r.text(14)?,
    ))
}

/// The arguments of a call of [`sql::VISIT_FUNCTION`]: one record's columns.
struct FunctionArgs<'c, 'a>(&'c rusqlite::functions::Context<'a>);

impl<'c> Columns<'c> for FunctionArgs<'c, '_> {
    #[inline(always)]
    fn opt(&self, i: usize) -> Result<Option<&'c [u8]>> {
        use rusqlite::types::ValueRef;
        match self.0.get_raw(i) {
            ValueRef::Text(b) | ValueRef::Blob(b) => Ok(Some(b)),
            ValueRef::Null => Ok(None),
            _ => Err(AuditError::store_state(format!("column {i} is not text"))),
        }
    }

    #[inline(always)]
    fn int(&self, i: usize) -> Result<i64> {
        match self.0.get_raw(i) {
            rusqlite::types::ValueRef::Integer(n) => Ok(n),
            _ => Err(AuditError::store_state(format!(
                "column {i} is not an integer"
            ))),
        }
    }
}

/// What the SQL function shares with the scan: the visitor, and a row that could not be
/// read.
struct Visiting<V> {
    visit: V,
    error: Option<AuditError>,
}

/// Scan a range of a SQLite store (read-only connection; WAL lets it run beside writers),
/// on the calling (blocking) thread, and give the visitor back.
///
/// The rows are not returned to Rust column by column: the query hands each record's
/// columns to a SQL function of ours, [`sql::VISIT_FUNCTION`], which visits it, and
/// returns only whether to go on. Reading 16 columns through `sqlite3_column_*` (three
/// calls each) measured as over a third of a verifying thread's time, twice the HMAC's;
/// a function's arguments skip most of that per-call work.
pub fn sqlite<V: Visit + Send + 'static>(path: &Path, range: &Range, visit: V) -> Result<V> {
    use rusqlite::functions::FunctionFlags;
    let err = AuditError::store_cause;
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(err)?;
    conn.pragma_update(None, "mmap_size", 1i64 << 30)
        .map_err(err)?;
    let shared = Arc::new(parking_lot::Mutex::new(Visiting { visit, error: None }));
    let theirs = shared.clone();
    conn.create_scalar_function(
        sql::VISIT_FUNCTION,
        sql::COLUMN_COUNT as i32,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DIRECTONLY,
        move |ctx| {
            let mut v = theirs.lock();
            let go = match record_fields(&FunctionArgs(ctx)) {
                Ok((f, hmac)) => v.visit.row(&f, hmac),
                Err(e) => {
                    v.error = Some(e);
                    false
                }
            };
            Ok(go)
        },
    )
    .map_err(err)?;
    let mut go = true;
    if let Some((from, to)) = range.sealed() {
        let mut st = conn.prepare(sql::BLOCKS_OF_RANGE).map_err(err)?;
        let mut bodies = st
            .query(rusqlite::params![range.log_id, from, to])
            .map_err(err)?;
        while let Some(r) = bodies.next().map_err(err)? {
            // The body read in place, from SQLite's page buffers (or the mapped file).
            let body = r.get_ref(0).map_err(err)?;
            let body = match body {
                rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => b,
                _ => {
                    return Err(AuditError::store_state(
                        "a sealed block's body is not a blob",
                    ))
                }
            };
            if !visit_body(body, (from, to), &mut shared.lock().visit) {
                go = false;
                break;
            }
        }
    }
    if let (true, Some((from, to))) = (go, range.rows()) {
        let mut st = conn.prepare(sql::RANGE_VISIT).map_err(err)?;
        let mut rows = st
            .query(rusqlite::params![range.log_id, from, to])
            .map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            if !r.get::<_, bool>(0).map_err(err)? {
                break;
            }
        }
    }
    // Closing the connection drops the function and its handle on the visitor.
    drop(conn);
    let Visiting { visit, error } = Arc::try_unwrap(shared)
        .map_err(|_| AuditError::store_state("the scan's SQL function outlived its connection"))?
        .into_inner();
    match error {
        Some(e) => Err(e),
        None => Ok(visit),
    }
}

/// Parse one tuple of PostgreSQL's binary COPY format at the start of `buf`: a 16-bit
/// field count, then per field a 32-bit length (-1 = NULL) and the raw bytes. Returns the
/// field ranges (relative to `buf`) and the tuple's length, or `None` when `buf` does not
/// hold the whole tuple yet. A count of -1 is the trailer (returns an empty field list).
fn binary_tuple(buf: &[u8], ranges: &mut Vec<Option<(usize, usize)>>) -> Result<Option<usize>> {
    ranges.clear();
    if buf.len() < 2 {
        return Ok(None);
    }
    let n = i16::from_be_bytes([buf[0], buf[1]]);
    if n == -1 {
        return Ok(Some(2));
    }
    if n as usize != sql::COLUMN_COUNT {
        return Err(AuditError::store_state(format!(
            "COPY tuple with {n} columns"
        )));
    }
    let mut at = 2usize;
    for _ in 0..sql::COLUMN_COUNT {
        if buf.len() < at + 4 {
            return Ok(None);
        }
        let len = i32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
        at += 4;
        if len < 0 {
            ranges.push(None);
            continue;
        }
        let len = len as usize;
        if buf.len() < at + len {
            return Ok(None);
        }
        ranges.push(Some((at, at + len)));
        at += len;
    }
    Ok(Some(at))
}

/// One binary COPY tuple's columns: `ranges` (from [`binary_tuple`]) into `buf`.
struct CopyTuple<'a, 'r> {
    buf: &'a [u8],
    ranges: &'r [Option<(usize, usize)>],
}

impl<'a> Columns<'a> for CopyTuple<'a, '_> {
    #[inline(always)]
    fn opt(&self, i: usize) -> Result<Option<&'a [u8]>> {
        Ok(self.ranges[i].map(|(a, b)| &self.buf[a..b]))
    }

    /// BIGINT columns come as 8-byte big-endian integers.
    #[inline(always)]
    fn int(&self, i: usize) -> Result<i64> {
        self.text(i)?
            .try_into()
            .map(i64::from_be_bytes)
            .map_err(|_| AuditError::store_state(format!("column {i} is not a BIGINT")))
    }
}

fn fields_of<'a>(buf: &'a [u8], r: &[Option<(usize, usize)>]) -> Result<(Fields<'a>, &'a [u8])> {
    record_fields(&CopyTuple { buf, ranges: r })
}

/// How many bytes of COPY output [`postgres_chunks`] gathers before handing them over.
const COPY_BATCH: usize = 256 * 1024;

/// The binary COPY header: signature, flags, header-extension length.
const COPY_SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";

/// What [`postgres_chunks`] hands the checker's thread.
pub enum Chunk {
    /// A sealed block's body.
    Body(Vec<u8>),
    /// Raw bytes of the rows' binary COPY stream.
    Copy(bytes::Bytes),
}

/// Stream a range of a PostgreSQL store: the sealed blocks' bodies (one row per block,
/// through sqlx: the per-row cost does not matter at a thousand records a row), then the
/// rows with `COPY (SELECT …) TO STDOUT (FORMAT binary)` as raw chunks (text columns arrive
/// as their raw bytes, nothing to unescape). Parsing happens in [`postgres_rows`] on a
/// blocking thread.
pub async fn postgres_chunks(pool: sqlx::PgPool, range: Range, tx: Sender<Result<Chunk>>) {
    use futures_util::StreamExt;
    let run = async {
        if let Some((from, to)) = range.sealed() {
            let mut bodies =
                sqlx::query_scalar::<_, Vec<u8>>(sql::Dialect::Postgres.text(sql::BLOCKS_OF_RANGE))
                    .bind(&range.log_id)
                    .bind(from)
                    .bind(to)
                    .fetch(&pool);
            while let Some(body) = bodies.next().await {
                if tx.send(Ok(Chunk::Body(body?))).await.is_err() {
                    return Ok(());
                }
            }
        }
        let Some((from, to)) = range.rows() else {
            return Ok(());
        };
        // COPY takes no bind parameters; the trail ID is the console's own `log_<hex>`.
        let log_id = range.log_id.as_str();
        if !log_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(AuditError::store_state(format!(
                "unexpected trail ID {log_id:?}"
            )));
        }
        let mut conn = pool.acquire().await?;
        let select = sql::rewrite_placeholders(sql::RANGE, |n| match n {
            1 => format!("'{log_id}'"),
            2 => from.to_string(),
            _ => to.to_string(),
        });
        let copy = format!("COPY ({select}) TO STDOUT (FORMAT binary)");
        let mut stream = conn.copy_out_raw(&copy).await?;
        let mut receiver_gone = false;
        // The server sends about one CopyData message per row; batching them into large
        // buffers here makes one hand-over to the checker's thread per batch rather than
        // per row (measured: the per-row wake-ups cost more than parsing the rows).
        let mut batch = bytes::BytesMut::with_capacity(COPY_BATCH);
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            // After the receiver has gone, keep draining so the connection stays usable.
            if receiver_gone {
                continue;
            }
            batch.extend_from_slice(&chunk);
            if batch.len() >= COPY_BATCH {
                let full = batch.split().freeze();
                batch.reserve(COPY_BATCH);
                if tx.send(Ok(Chunk::Copy(full))).await.is_err() {
                    receiver_gone = true;
                }
            }
        }
        if !receiver_gone && !batch.is_empty() {
            let _ = tx.send(Ok(Chunk::Copy(batch.freeze()))).await;
        }
        Ok(())
    };
    if let Err(e) = run.await {
        let _ = tx.send(Err(e)).await;
    }
}

/// Parse the chunks of [`postgres_chunks`] for `range` and hand each record to `visit`.
pub fn postgres_rows(
    mut rx: tokio::sync::mpsc::Receiver<Result<Chunk>>,
    range: &Range,
    visit: &mut dyn Visit,
) -> Result<()> {
    let mut pending: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut ranges = Vec::with_capacity(sql::COLUMN_COUNT);
    let mut header_done = false;
    while let Some(chunk) = rx.blocking_recv() {
        match chunk? {
            Chunk::Body(body) => {
                let sealed = range.sealed().unwrap_or((1, 0));
                if !visit_body(&body, sealed, visit) {
                    return Ok(());
                }
                continue;
            }
            Chunk::Copy(bytes) => pending.extend_from_slice(&bytes),
        }
        let mut at = 0;
        if !header_done {
            if pending.len() < COPY_SIGNATURE.len() + 8 {
                continue;
            }
            if &pending[..COPY_SIGNATURE.len()] != COPY_SIGNATURE {
                return Err(AuditError::store_state("not a binary COPY stream"));
            }
            let ext = u32::from_be_bytes(
                pending[COPY_SIGNATURE.len() + 4..COPY_SIGNATURE.len() + 8]
                    .try_into()
                    .unwrap(),
            ) as usize;
            if pending.len() < COPY_SIGNATURE.len() + 8 + ext {
                continue;
            }
            at = COPY_SIGNATURE.len() + 8 + ext;
            header_done = true;
        }
        while let Some(len) = binary_tuple(&pending[at..], &mut ranges)? {
            if ranges.is_empty() {
                at += len; // trailer
                continue;
            }
            let (f, hmac) = fields_of(&pending[at..], &ranges)?;
            if !visit.row(&f, hmac) {
                return Ok(());
            }
            at += len;
        }
        pending.drain(..at);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(fields: &[Option<&[u8]>]) -> Vec<u8> {
        let mut v = (fields.len() as i16).to_be_bytes().to_vec();
        for f in fields {
            match f {
                Some(b) => {
                    v.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    v.extend_from_slice(b);
                }
                None => v.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        v
    }

    /// Counts the rows it is handed and stops after `stop_after`.
    struct Counter {
        seqs: Vec<i64>,
        stop_after: usize,
    }

    impl Counter {
        fn stopping_after(stop_after: usize) -> Self {
            Counter {
                seqs: vec![],
                stop_after,
            }
        }
    }

    impl Visit for Counter {
        fn row(&mut self, f: &Fields<'_>, hmac_hex: &[u8]) -> bool {
            assert_eq!(
                (f.log_id, f.actor_id, hmac_hex),
                (&b"L"[..], None, &b"ab"[..])
            );
            self.seqs.push(f.seq);
            self.seqs.len() < self.stop_after
        }

        fn sealed(&mut self, e: &block::Entry<'_>) -> bool {
            self.seqs.push(-e.fields.seq);
            self.seqs.len() < self.stop_after
        }

        fn damaged_block(&mut self) -> bool {
            self.seqs.push(0);
            false
        }
    }

    /// A SQLite store with the migrated schema and records `1..=n` of trail `L`.
    fn sqlite_store(n: i64) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(include_str!("../migrations/sqlite/0001_audit.sql"))
            .unwrap();
        for seq in (1..=n).rev() {
            conn.execute(
                "INSERT INTO audit_log VALUES ('L', ?1, 0, 't', 's', NULL, 'ip', 'a', 'r', NULL, NULL, 'success', NULL, '{}', 'ab', 'c')",
                [seq],
            )
            .unwrap();
        }
        (dir, path)
    }

    fn range(from: i64, to: i64) -> Range {
        Range {
            log_id: "L".into(),
            from,
            to,
            sealed_to: 0,
        }
    }

    #[test]
    fn sqlite_rows_come_in_order_and_stop_when_asked() {
        let (_dir, path) = sqlite_store(50);
        let all = sqlite(&path, &range(3, 40), Counter::stopping_after(1000));
        assert_eq!(all.unwrap().seqs, (3..=40).collect::<Vec<_>>());
        let some = sqlite(&path, &range(1, 50), Counter::stopping_after(5));
        assert_eq!(some.unwrap().seqs, [1, 2, 3, 4, 5]);
    }

    /// The SQL function sees rows in the order it is called in: SQLite must read them in
    /// `seq` order from the primary key, not compute the results first and sort them.
    #[test]
    fn sqlite_range_query_reads_in_key_order() {
        let (_dir, path) = sqlite_store(1);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.create_scalar_function(
            sql::VISIT_FUNCTION,
            sql::COLUMN_COUNT as i32,
            rusqlite::functions::FunctionFlags::SQLITE_UTF8,
            |_| Ok(true),
        )
        .unwrap();
        let mut st = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", sql::RANGE_VISIT))
            .unwrap();
        let plan: Vec<String> = st
            .query_map(["L", "1", "2"], |r| r.get(3))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        let plan = plan.join("; ");
        assert!(plan.contains("PRIMARY KEY"), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    }

    #[test]
    fn sqlite_row_of_the_wrong_type_is_an_error() {
        let (_dir, path) = sqlite_store(3);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute("UPDATE audit_log SET epoch = 'x' WHERE seq = 2", [])
            .unwrap();
        drop(conn);
        let e = sqlite(&path, &range(1, 3), Counter::stopping_after(1000))
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains("column 2 is not an integer"), "{e}");
    }

    #[test]
    fn binary_copy_tuples() {
        let seq = 7i64.to_be_bytes();
        let epoch = 0i64.to_be_bytes();
        let f: Vec<Option<&[u8]>> = vec![
            Some(b"L"),
            Some(&seq),
            Some(&epoch),
            Some(b"t"),
            Some(b"s"),
            None,
            Some(b"ip"),
            Some(b"a\tb"),
            Some(b"r"),
            None,
            None,
            Some(b"success"),
            None,
            Some(b"{\"x\":\"\t\"}"),
            Some(b"ff"),
            Some(b"c"),
        ];
        let t = tuple(&f);
        let mut ranges = Vec::new();
        assert_eq!(
            binary_tuple(&t[..t.len() - 1], &mut ranges).unwrap(),
            None,
            "incomplete tuple waits for more bytes"
        );
        assert_eq!(binary_tuple(&t, &mut ranges).unwrap(), Some(t.len()));
        let (fields, hmac) = fields_of(&t, &ranges).unwrap();
        assert_eq!(
            (fields.seq, fields.actor_id, fields.action, hmac),
            (7, None, &b"a\tb"[..], &b"ff"[..])
        );
        assert_eq!(fields.metadata, b"{\"x\":\"\t\"}");
        assert_eq!(
            binary_tuple(&(-1i16).to_be_bytes(), &mut ranges).unwrap(),
            Some(2)
        );
        assert!(ranges.is_empty());
        assert!(binary_tuple(&tuple(&[Some(b"x")]), &mut ranges).is_err());
    }
}
