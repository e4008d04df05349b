//! An HA group at run time: its members (each a simulated HSM with its own statistics and
//! store), which of them are alive, what a member missed while it was down, the
//! round-robin turn, which member served the last calls, and the group's login (Luna's HA
//! client logs a recovered member in again with it).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use cryptoki_sys::*;
use parking_lot::Mutex;
use zeroize::Zeroizing;

use super::objects::{Identity, Table};
use crate::config::GroupConfig;
use crate::stats::Stats;

/// How many served calls the group remembers.
const SERVED_KEPT: usize = 64;

/// Something a member did not see because it was down; replayed by a resync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missed {
    /// A token object created in the group (its replication record has the attributes).
    Created { uid: String, identity: Identity },
    /// A token object destroyed in the group.
    Destroyed { identity: Identity },
    /// Attributes set on a token object in the group.
    Changed {
        identity: Identity,
        attrs: Vec<(CK_ATTRIBUTE_TYPE, Vec<u8>)>,
    },
}

impl Missed {
    pub fn identity(&self) -> &Identity {
        match self {
            Missed::Created { identity, .. }
            | Missed::Destroyed { identity }
            | Missed::Changed { identity, .. } => identity,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Missed::Created { .. } => "created",
            Missed::Destroyed { .. } => "destroyed",
            Missed::Changed { .. } => "changed",
        }
    }
}

#[derive(Debug, Default)]
pub struct MemberState {
    pub down: bool,
    pub down_since: Option<SystemTime>,
    /// What happened in the group while the member was down, oldest first.
    pub missed: Vec<Missed>,
    /// Why the last resync could not finish.
    pub resync_error: Option<String>,
}

/// One member: a partition of its own (an inner slot with its own token) on a simulated
/// HSM of its own.
pub struct Member {
    /// 0-based position in the group (the control commands count from 1).
    pub index: usize,
    pub serial: String,
    pub slot: CK_SLOT_ID,
    pub store: PathBuf,
    pub stats: &'static Stats,
    pub state: Mutex<MemberState>,
}

impl Member {
    pub fn alive(&self) -> bool {
        !self.state.lock().down
    }

    pub fn needs_sync(&self) -> bool {
        !self.state.lock().missed.is_empty()
    }
}

/// One call the group routed to a member.
#[derive(Debug, Clone)]
pub struct Served {
    pub member: usize,
    pub function: &'static str,
    pub at: SystemTime,
}

/// The credential of the group's login (user type and PIN), kept to log in members that
/// come back or sessions opened later.
pub struct Login {
    pub user: CK_USER_TYPE,
    pub pin: Zeroizing<Vec<u8>>,
}

pub struct Group {
    pub index: usize,
    pub config: GroupConfig,
    /// The virtual slot's ID.
    pub slot: CK_SLOT_ID,
    /// Why the group did not start (it then has no members and no token).
    pub refused: Option<super::config::Refusal>,
    /// Replication records (`objects/<uid>.json`).
    pub store: PathBuf,
    pub members: Vec<Member>,
    turn: AtomicUsize,
    pub served: Mutex<VecDeque<Served>>,
    pub login: Mutex<Option<Login>>,
    pub objects: Mutex<Table>,
}

impl Group {
    pub fn new(
        index: usize,
        config: GroupConfig,
        slot: CK_SLOT_ID,
        refused: Option<super::config::Refusal>,
        store: PathBuf,
        members: Vec<Member>,
    ) -> Group {
        Group {
            index,
            config,
            slot,
            refused,
            store,
            members,
            turn: AtomicUsize::new(0),
            served: Mutex::new(VecDeque::new()),
            login: Mutex::new(None),
            objects: Mutex::new(Table::default()),
        }
    }

    pub fn alive(&self) -> Vec<usize> {
        self.members
            .iter()
            .filter(|m| m.alive())
            .map(|m| m.index)
            .collect()
    }

    /// The member that answers searches and attribute reads: the first alive one that is
    /// in sync, else the first alive one.
    pub fn primary(&self) -> Option<usize> {
        let alive = self.alive();
        alive
            .iter()
            .copied()
            .find(|m| !self.members[*m].needs_sync())
            .or_else(|| alive.first().copied())
    }

    /// The next alive member in round-robin order.
    pub fn next_member(&self) -> Option<usize> {
        let alive = self.alive();
        if alive.is_empty() {
            return None;
        }
        let turn = self.turn.fetch_add(1, Ordering::Relaxed);
        Some(alive[turn % alive.len()])
    }

    pub fn record_served(&self, member: usize, function: &'static str) {
        let mut s = self.served.lock();
        s.push_back(Served {
            member,
            function,
            at: SystemTime::now(),
        });
        while s.len() > SERVED_KEPT {
            s.pop_front();
        }
    }

    /// Note what a down member misses (token objects only).
    pub fn missed_by_down_members(&self, what: impl Fn() -> Missed) {
        for m in &self.members {
            let mut st = m.state.lock();
            if st.down {
                st.missed.push(what());
            }
        }
    }

    /// "HA group 'prod' (serial 1280000100)", as messages name it.
    pub fn name(&self) -> String {
        format!(
            "HA group '{}' (serial {})",
            self.config.label, self.config.serial
        )
    }

    /// Find a member by its 1-based position or its serial.
    pub fn member_by(&self, which: &str) -> Option<usize> {
        if let Some(m) = self.members.iter().find(|m| m.serial == which) {
            return Some(m.index);
        }
        which
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=self.members.len()).contains(n))
            .map(|n| n - 1)
    }
}
