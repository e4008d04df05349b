//! Post-quantum readiness of a partition: what each key is (algorithm, classical strength,
//! NIST category, quantum class — [`classify`]), what a policy says of it and from when
//! ([`policy`]: NIST IR 8547 and CNSA 2.0 ship, an organisation may add its own), and the
//! judged listing with suggested successors ([`assess`]); whether a partition keeps up
//! with them ([`capacity`]); a CycloneDX 1.6 CBOM of it ([`cbom`]). Pure: the console reads the
//! objects and the date; nothing here talks to an HSM.

pub mod assess;
pub mod capacity;
pub mod cbom;
pub mod classify;
pub mod policy;

pub use assess::{
    assess, certificate, counts, rank, Advice, Assessed, CertificateInput, Counts, Evidence,
    Successor,
};
pub use classify::{Algorithm, Family, QuantumClass};
pub use policy::{Policy, PolicyError, Purpose, Status, Verdict};
