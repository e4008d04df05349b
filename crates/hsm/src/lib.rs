//! `hsm` — the console's services over the `p11` binding: session pools with recovery,
//! keys and templates, signing/verification/KEM, statistics and HSS accounting.

pub mod algo;
pub mod attr_edit;
pub mod breaker;
pub mod drift;
pub mod error;
pub mod keys;
pub mod metrics;
pub mod objects;
pub mod pool;
pub mod pubkey;
pub mod roles;
pub mod templates;
pub mod uri;
pub mod vault;
pub mod wire;

pub use breaker::BreakerState;
pub use error::{HsmError, Result};
pub use metrics::{MetricsSnapshot, OpSnapshot};
pub use pool::{Pool, PoolConfig, PoolStatus};
/// Text people read: one type for the whole workspace (see the `text` crate).
pub use text::{fill, text, Text};
