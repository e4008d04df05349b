//! The audit trail's integration tests, one binary (one link of the tree instead of one per
//! area): the stores on SQLite and PostgreSQL, tampering at every position, export formats.
//! Run one area with `cargo nextest run -p hsmc-audit --test audit -E 'test(/^trail::/)'`.

mod formats;
mod positions;
mod trail;
