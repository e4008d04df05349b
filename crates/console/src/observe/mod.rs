//! Observation: what the HSMs report and what the trail says was done with them — health
//! and statistics samples, HSS counters, usage limits, latency probes, and post-quantum
//! readiness. Reads only; a setting it changes (a usage limit) goes through the change
//! engine like any other.

pub mod health;
pub mod pqc;
pub mod probe_verdict;
pub mod probes;
pub mod usage;

use hsm::keys::ObjectSummary;

use crate::core::error::ApiResult;
use crate::core::ports::GroupCounters;
use crate::core::Core;

/// What observation keeps between calls: each partition's statistics history (the charts'
/// points and the previous sample rates are worked from), and the probe results database.
#[derive(Default)]
pub struct State {
    pub(crate) stats: parking_lot::Mutex<health::StatsState>,
    pub(crate) probe_db: parking_lot::Mutex<Option<sqlx::SqlitePool>>,
}

/// Observation, as a service over the core (`Console::observe`).
#[derive(Clone, Copy)]
pub struct Observe<'c> {
    core: &'c Core,
    state: &'c State,
    /// Which member of an HA group served a probe's calls (from the HA domain).
    groups: &'c dyn GroupCounters,
}

impl<'c> Observe<'c> {
    pub(crate) fn new(core: &'c Core, state: &'c State, groups: &'c dyn GroupCounters) -> Self {
        Observe {
            core,
            state,
            groups,
        }
    }
}

impl Observe<'_> {
    /// The trail's records, oldest first and however many, whose metadata names one of
    /// `keys` (by `CKA_ID` in hex): what the keys' histories (signatures made, limits set)
    /// are worked from. The whole trail is read, page by page, keeping only these.
    pub(crate) async fn records_naming<'k>(
        self,
        keys: impl IntoIterator<Item = &'k ObjectSummary>,
    ) -> ApiResult<Vec<audit::Record>> {
        let ids: Vec<&str> = keys
            .into_iter()
            .map(|k| k.id_hex.as_str())
            .filter(|id| !id.is_empty())
            .collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let names_one = |r: audit::Record| ids.iter().any(|id| names_key(&r, id)).then_some(r);
        Ok(self
            .audit()
            .all_records(&audit::store::Query::default(), names_one)
            .await?)
    }
}

/// Does the record name the key whose `CKA_ID` is `id_hex` (its metadata holds the id)? A key
/// without an ID is named by none: no record can be told to be its, and matching the empty
/// id would credit it with every key's signatures.
pub(crate) fn names_key(r: &audit::Record, id_hex: &str) -> bool {
    !id_hex.is_empty() && r.event.metadata.contains(id_hex)
}

impl std::ops::Deref for Observe<'_> {
    type Target = Core;
    fn deref(&self) -> &Core {
        self.core
    }
}
