//! `lunasim` — a Luna-compatible PKCS#11 module for tests and for the console's built-in
//! default partition. See this crate's README for what is real and what is simulated.
//!
//! It exports every PKCS#11 3.2 function by name and through `C_GetFunctionList`,
//! `C_GetInterface`, `C_GetInterfaceList` (3.2, 3.0 and 2.40 tables; [`outer`]), Luna's
//! `CA_*` functions, and `LUNASIM_Control` for tests. Standard work is forwarded to a real
//! inner module (Kryoptic with OpenSSL 3.5 by default); HSS/LMS, the Luna statistics,
//! Luna's external-μ ML-DSA ([`extmu`]),
//! vendor return codes, HA groups ([`ha`]), per-key usage limits ([`usage`]), trusted
//! wrapping keys ([`trust`]), latency,
//! the PQC service queue and fault injection are added here.
//!
//! With `p11`, this is the only crate with `unsafe`: it receives raw pointers from C.

// The exported functions are C entry points: they take raw pointers under the PKCS#11
// contract and are called by C code through the function tables, never from Rust.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod books;
pub mod config;
pub mod control;
pub mod entry;
pub mod extmu;
pub mod forward;
pub mod ha;
pub mod hss;
pub mod intercept;
pub mod knobs;
pub mod layer;
pub mod luna;
pub mod objects;
pub mod ouid;
pub mod outer;
pub mod raw;
pub mod roles;
pub mod sim;
pub mod stats;
pub mod tables;
pub mod templates;
pub mod tpl;
pub mod trust;
pub mod usage;

/// The layer over the single-partition core: the HA groups. Core modules reach it only
/// through [`layer::get`] and this wiring; the outer dispatch ([`outer`]) is the one
/// other place that names [`ha`], to send calls on a virtual slot or session there.
static LAYER: &dyn layer::Layer = &ha::Groups;
