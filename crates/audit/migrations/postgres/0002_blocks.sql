-- Sealed blocks (see src/block.rs): a trail's older records packed many to a row. The
-- rows of a sealed block stay in audit_log as stubs (their key only), so the primary key
-- still refuses a second record at a sealed position; they are never read.
CREATE TABLE audit_block (
    log_id    TEXT    NOT NULL,
    first_seq BIGINT  NOT NULL,
    last_seq  BIGINT  NOT NULL,
    records   BIGINT  NOT NULL,
    -- The latest timestamp in the block: lets the day chart skip older blocks.
    max_time  TEXT    NOT NULL,
    body      BYTEA   NOT NULL,
    PRIMARY KEY (log_id, first_seq)
);
-- Out of line and uncompressed: a body compresses little (hashes, IDs), and uncompressed
-- it is sent without the server decompressing it on every verification.
ALTER TABLE audit_block ALTER COLUMN body SET STORAGE EXTERNAL;
