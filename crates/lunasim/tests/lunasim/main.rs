//! lunasim's integration tests, one binary (one link of the tree instead of one per area):
//! the module as a Luna behaves, roles, usage limits, HA groups, functions called by name,
//! external μ. Run one area with `cargo nextest run -p hsmc-lunasim --test lunasim -E
//! 'test(/^ha::/)'`.

mod basics;
mod by_name;
mod context_login;
mod extmu;
mod ha;
mod roles;
mod usage;
