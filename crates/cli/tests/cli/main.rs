//! `hsmc` run as a process, one test binary (one link of the tree instead of three): the
//! commands against lunasim, SoftHSM2 and Kryoptic (`hsmc`, with one module per area under
//! hsmc/), administration (`admin`) and HA groups (`ha`). Run one area with `cargo nextest
//! run -p hsmc-cli --test cli -E 'test(/^admin::/)'`.

mod admin;
mod ha;
mod hsmc;
