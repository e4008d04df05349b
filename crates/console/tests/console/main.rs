//! The console's integration tests, one binary: every module is one area (linking the
//! whole tree once instead of once per area is most of a cold test build). Each test runs
//! in its own process under nextest, so tests that set process-wide state (`LUNASIM_CONF`)
//! stay apart. Run one area with `cargo nextest run -p hsmc-console --test console -E
//! 'test(/^soak::/)'`.

mod common;

mod admin_faults;
mod attributes;
mod backup;
mod backup_trusted;
mod basics;
mod catalogs;
mod chains;
mod change_matrix;
mod context_login;
mod credentials;
mod dual_signing;
mod ecosystem;
mod ha;
mod health;
mod objects;
mod overview;
mod pin_memory;
mod pins;
mod probes;
mod recovery;
mod signing;
mod soak;
mod soak_ha;
mod timestamps;
mod uris;
