-- The seed article's audit table, plus log_id and a monotonic seq (the chain's order).
CREATE TABLE audit_log (
    log_id        TEXT    NOT NULL,
    seq           INTEGER NOT NULL,
    epoch         INTEGER NOT NULL,
    timestamp     TEXT    NOT NULL,
    session_id    TEXT    NOT NULL,
    actor_id      TEXT,
    actor_ip      TEXT    NOT NULL,
    action        TEXT    NOT NULL,
    resource_type TEXT    NOT NULL,
    resource_id   TEXT,
    algorithm     TEXT,
    status        TEXT    NOT NULL,
    error_code    TEXT,
    metadata      TEXT    NOT NULL,
    hmac_chain    TEXT    NOT NULL,
    created_at    TEXT    NOT NULL,
    PRIMARY KEY (log_id, seq)
) WITHOUT ROWID;
CREATE INDEX idx_audit_timestamp ON audit_log(timestamp);
CREATE INDEX idx_audit_actor ON audit_log(actor_id);
CREATE INDEX idx_audit_action ON audit_log(action);

-- One row per trail.
CREATE TABLE audit_trail (
    log_id     TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);

-- The MAC key of each epoch, only ever stored wrapped by an HSM key.
CREATE TABLE audit_key (
    log_id         TEXT    NOT NULL,
    epoch          INTEGER NOT NULL,
    wrapped_key    TEXT    NOT NULL,
    wrap_mechanism TEXT    NOT NULL,
    kek_id         TEXT    NOT NULL,
    holder         TEXT    NOT NULL,
    created_at     TEXT    NOT NULL,
    PRIMARY KEY (log_id, epoch)
);

-- Signed checkpoints over the chain heads.
CREATE TABLE audit_checkpoint (
    log_id        TEXT    NOT NULL,
    checkpoint_no INTEGER NOT NULL,
    seq           INTEGER NOT NULL,
    head_hmac     TEXT    NOT NULL,
    head_digest   TEXT    NOT NULL,
    time          TEXT    NOT NULL,
    epoch         INTEGER NOT NULL,
    algorithm     TEXT    NOT NULL,
    public_key    TEXT    NOT NULL,
    signature     TEXT    NOT NULL,
    PRIMARY KEY (log_id, checkpoint_no)
);

-- Events recorded before the key was available (a failed login, say), chained in order
-- once it is.
CREATE TABLE audit_pending (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    log_id    TEXT NOT NULL,
    event     TEXT NOT NULL
);
