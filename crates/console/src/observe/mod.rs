//! Observation: what the HSMs report and what the trail says was done with them — health
//! and statistics samples, HSS counters, usage limits, latency probes, and post-quantum
//! readiness. Reads only; a setting it changes (a usage limit) goes through the change
//! engine like any other.

pub mod health;
pub(crate) mod history;
pub mod pqc;
pub mod probe_verdict;
pub mod probes;
pub mod usage;

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
    /// The HSS keys and the keys with a usage limit, their histories from one reading of
    /// the trail (the overview shows both; the trail may be long).
    pub async fn counted_keys(
        self,
    ) -> ApiResult<(Vec<health::HssKeyView>, Vec<usage::UsageKeyView>)> {
        let hss = self.hss_listed().await;
        let limited = self.usage_listed().await;
        let mut names = history::names(&hss, |k| k);
        names.extend(history::names(&limited, |(k, ..)| k));
        let histories = self.key_histories(names).await?;
        Ok((
            self.hss_views(&hss, &histories),
            self.usage_views(&limited, &histories),
        ))
    }
}

impl std::ops::Deref for Observe<'_> {
    type Target = Core;
    fn deref(&self) -> &Core {
        self.core
    }
}
