//! Administration of a partition: credentials (PINs, roles, initialization), keys, objects
//! and their attributes, and backups by wrapping. Every change goes through the core's
//! change engine, so it is recorded before it is sent and acts on the object chosen.

pub mod attributes;
pub mod backup;
pub mod credentials;
pub mod keys;
pub mod objects;

crate::core::domain_service!(
    /// Administration, as a service over the core (`Console::admin`).
    Admin
);
