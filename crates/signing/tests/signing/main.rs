//! The signing crate's integration tests, one binary (one link of the tree instead of one
//! per area): certificate chains, CMS signers, time-stamp binding.

mod chain;
mod cms_signers;
mod tsp_binding;
