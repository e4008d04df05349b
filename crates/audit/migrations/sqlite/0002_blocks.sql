-- Sealed blocks (see src/block.rs): a trail's older records packed many to a row. The
-- rows of a sealed block stay in audit_log as stubs (their key only), so the primary key
-- still refuses a second record at a sealed position; they are never read.
-- A rowid table, not WITHOUT ROWID: SQLite advises WITHOUT ROWID only for rows smaller
-- than about a twentieth of a page, and a body is some 400 kB.
CREATE TABLE audit_block (
    log_id    TEXT    NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq  INTEGER NOT NULL,
    records   INTEGER NOT NULL,
    -- The latest timestamp in the block: lets the day chart skip older blocks.
    max_time  TEXT    NOT NULL,
    body      BLOB    NOT NULL,
    PRIMARY KEY (log_id, first_seq)
);
