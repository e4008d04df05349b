//! What one domain needs of another, said in the core so that neither imports the other.
//! A domain's service holds the port it needs; the console (the facade) implements each
//! port with the domain that answers it.

use std::future::Future;
use std::pin::Pin;

use crate::core::partitions::Partition;

/// A future a port returns.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A member's own figures, as observation samples them (its `CA_GetHSMStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MemberFigures {
    pub busy_percent: Option<f64>,
    pub commands: Option<u64>,
    pub commands_per_second: Option<f64>,
}

/// Observation, as HA reads it: an HA group's view shows each member's figures side by side.
pub trait MemberStats: Sync {
    /// One statistics sample of a member's own partition; `None` when it cannot be taken
    /// or the module reports no figures.
    fn member_figures<'a>(&'a self, partition_id: &'a str) -> Pending<'a, Option<MemberFigures>>;
}

/// HA, as observation reads it: a probe on a group says which member served its calls.
pub trait GroupCounters: Sync {
    /// Per member of the group behind `p`: position, serial, commands so far. `None` when
    /// `p` is not an HA group's virtual slot.
    fn member_counters<'a>(
        &'a self,
        p: &'a Partition,
    ) -> Pending<'a, Option<Vec<(u32, String, u64)>>>;
}
