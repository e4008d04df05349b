//! HA groups in the console. A partition is an HA group's virtual slot when its module
//! answers `CA_GetHAState` for it; its members are found among the module's other slots by
//! their serials. What is shown per group: label and serial, each member with serial,
//! alive or down, needs-sync (from the drift check), which member served the last calls,
//! and the member's own statistics (busy share, commands) side by side. Logging in to a
//! group logs in to its visible members too (Luna's members share the credential), so the
//! drift check ([`drift`]) can compare their private objects.

pub mod drift;

use std::collections::HashMap;
use std::sync::Arc;

use p11::vendor::HaState;

use crate::core::error::{ApiError, ApiResult, ErrorCode};
pub use crate::core::ha_views::{
    DriftMember, DriftReport, DriftVerdict, HaGroupView, HaLayoutView, HaMemberView, MemberCheck,
};
use crate::core::partitions::Partition;
use crate::core::ports::MemberStats;
use crate::core::views::UserKind;
use crate::core::Core;
use crate::text;
pub use drift::HaWarning;

/// HA groups, as a service over the core (`Console::ha`).
#[derive(Clone, Copy)]
pub struct Ha<'c> {
    core: &'c Core,
    state: &'c parking_lot::Mutex<HaMemory>,
    /// Each member's own figures (from observation).
    stats: &'c dyn MemberStats,
}

impl<'c> Ha<'c> {
    pub(crate) fn new(
        core: &'c Core,
        state: &'c parking_lot::Mutex<HaMemory>,
        stats: &'c dyn MemberStats,
    ) -> Self {
        Ha { core, state, stats }
    }
}

impl std::ops::Deref for Ha<'_> {
    type Target = Core;
    fn deref(&self) -> &Core {
        self.core
    }
}

/// What the console remembers about groups between calls.
#[derive(Default)]
pub struct HaMemory {
    /// Partition ID → whether its slot is an HA group's.
    known: HashMap<String, bool>,
    /// Partition ID → the last drift check.
    last_drift: HashMap<String, DriftReport>,
    /// (group serial, member serial) → (command count, when it last grew).
    served: HashMap<(String, String), (u64, Option<String>)>,
    /// Group serial → the state last written to the audit trail.
    recorded: HashMap<String, String>,
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> ApiResult<T> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        ApiError::new(
            ErrorCode::Internal,
            text!(
                "hsm.console.background_task_failed",
                "a background task failed: {{error}}",
                error = e
            ),
        )
    })
}

fn rv_name(rv: u64) -> String {
    p11::names::rv_name(rv, p11::Family::Luna).into_owned()
}

/// Who the member of a group is, and where the console sees it.
pub(crate) struct Member {
    pub position: u32,
    pub serial: String,
    pub alive: bool,
    pub status: u64,
    pub partition: Option<Arc<Partition>>,
}

impl Ha<'_> {
    /// The HA state behind a partition's slot; `None` when it is not an HA group's.
    pub(crate) async fn ha_state_of(self, p: &Partition) -> Option<HaState> {
        if self.state.lock().known.get(&p.id) == Some(&false) {
            return None;
        }
        let m = p.module.module.clone();
        if m.vendor().get_ha_state.is_none() {
            self.state.lock().known.insert(p.id.clone(), false);
            return None;
        }
        let slot = p.slot();
        let st = blocking(move || m.ca_ha_state(slot, false))
            .await
            .ok()
            .and_then(|r| r.ok());
        self.state.lock().known.insert(p.id.clone(), st.is_some());
        st
    }

    /// A group's members, each with its own partition when the module shows its slot.
    pub(crate) async fn ha_members(self, p: &Partition, st: &HaState) -> Vec<Member> {
        let slots = self.slots(&p.module.id).await.unwrap_or_default();
        let mut out = Vec::new();
        for (i, m) in st.members.iter().enumerate() {
            let pid = slots
                .iter()
                .find(|s| {
                    s.partition_id.is_some()
                        && s.slot_id != p.slot()
                        && s.token.as_ref().map(|t| t.serial.trim()) == Some(m.serial.as_str())
                })
                .and_then(|s| s.partition_id.clone());
            let partition = match pid {
                Some(pid) => self.partition_ref(&pid).await.ok(),
                None => None,
            };
            out.push(Member {
                position: i as u32 + 1,
                serial: m.serial.clone(),
                alive: m.status == p11::sys::CKR_OK,
                status: m.status,
                partition,
            });
        }
        out
    }

    fn not_ha(p: &Partition) -> ApiError {
        ApiError::invalid(text!(
            "errors.not_ha_group",
            "{{partition}} is not an HA group's virtual slot.",
            partition = p.holder_name()
        ))
        .suggest(text!(
            "errors.open_ha_group_virtual_slot",
            "Open the group's virtual slot (Connections lists HA groups under their module)."
        ))
    }

    /// Every HA group of the loaded modules (without member statistics).
    pub async fn ha_groups(self) -> ApiResult<Vec<HaGroupView>> {
        let mods: Vec<_> = self.modules.read().clone();
        let mut out = Vec::new();
        for m in mods {
            if m.module.vendor().get_ha_state.is_none() {
                continue;
            }
            let Ok(slots) = self.slots(&m.id).await else {
                continue;
            };
            for s in slots {
                let Some(pid) = s.partition_id else { continue };
                let Ok(p) = self.partition_ref(&pid).await else {
                    continue;
                };
                if let Some(v) = self.ha_group_view(&p, false).await {
                    out.push(v);
                }
            }
        }
        Ok(out)
    }

    /// One group with its members' statistics side by side; `None` when the partition is
    /// not an HA group's virtual slot.
    pub async fn ha_group(self, partition: &str) -> ApiResult<Option<HaGroupView>> {
        let p = self.partition_ref(partition).await?;
        Ok(self.ha_group_view(&p, true).await)
    }

    pub(crate) async fn ha_group_view(
        self,
        p: &Partition,
        with_stats: bool,
    ) -> Option<HaGroupView> {
        let st = self.ha_state_of(p).await?;
        let members = self.ha_members(p, &st).await;
        let drift = self.state.lock().last_drift.get(&p.id).cloned();
        let mut views = Vec::new();
        for m in &members {
            let needs_sync = drift.as_ref().and_then(|d| d.needs_sync(m.position));
            let mut v = HaMemberView {
                position: m.position,
                serial: m.serial.clone(),
                alive: m.alive,
                status: rv_name(m.status),
                partition_id: m.partition.as_ref().map(|x| x.id.clone()),
                slot_id: m.partition.as_ref().map(|x| x.slot()),
                logged_in: m.partition.as_ref().and_then(|x| x.logged_in()),
                needs_sync,
                busy_percent: None,
                commands: None,
                commands_per_second: None,
                served_share_percent: None,
                last_served: None,
            };
            if with_stats && m.alive {
                if let Some(pid) = &v.partition_id {
                    if let Some(f) = self.stats.member_figures(pid).await {
                        v.busy_percent = f.busy_percent;
                        v.commands = f.commands;
                        v.commands_per_second = f.commands_per_second;
                    }
                }
            }
            views.push(v);
        }
        if with_stats && views.iter().all(|v| v.partition_id.is_none()) {
            self.member_counts_from_group(p, &mut views).await;
        }
        self.note_served(&st.group_serial, &mut views);
        let warning_text = drift.as_ref().and_then(|d| d.warning_text()).or_else(|| {
            let down: Vec<u32> = views
                .iter()
                .filter(|v| !v.alive)
                .map(|v| v.position)
                .collect();
            (!down.is_empty()).then(|| drift::down_text(&down))
        });
        Some(HaGroupView {
            partition_id: p.id.clone(),
            module_id: p.module.id.clone(),
            slot_id: p.slot(),
            label: p.label.clone(),
            serial: st.group_serial.clone(),
            layout: st.layout.into(),
            members_visible: views.iter().any(|v| v.partition_id.is_some()),
            members: views,
            drift,
            warning: warning_text.as_ref().map(|t| t.text.clone()),
            warning_text,
        })
    }

    /// Without the members' own slots: each member's request counters, read from the
    /// utilization counters of a group session (one set per member serial).
    async fn member_counts_from_group(self, p: &Partition, views: &mut [HaMemberView]) {
        let Ok(util) = p
            .pool
            .run_idempotent_async("ha.utilization", |s| s.ca_utilization(false))
            .await
        else {
            return;
        };
        for v in views.iter_mut() {
            let n: u64 = util
                .iter()
                .filter(|c| c.serial_number.to_string() == v.serial)
                .map(|c| c.count)
                .sum();
            v.commands = Some(n);
        }
    }

    /// Shares of the group's commands since the previous sample, and when each member
    /// last served one.
    fn note_served(self, group: &str, views: &mut [HaMemberView]) {
        let total: f64 = views.iter().filter_map(|v| v.commands_per_second).sum();
        let now = audit::now_rfc3339();
        let mut mem = self.state.lock();
        for v in views.iter_mut() {
            if total > 0.0 {
                v.served_share_percent = v.commands_per_second.map(|c| 100.0 * c / total);
            }
            let Some(c) = v.commands else { continue };
            let e = mem
                .served
                .entry((group.to_string(), v.serial.clone()))
                .or_insert((c, None));
            if c > e.0 {
                *e = (c, Some(now.clone()));
            }
            v.last_served = e.1.clone();
        }
    }

    /// After a login to a group: log in to its visible members with the same credential,
    /// so their private objects can be compared. A member that refuses is reported in the
    /// log and left as it is.
    pub(crate) async fn ha_login_members(
        self,
        p: &Arc<Partition>,
        user: UserKind,
        pin: &p11::Pin,
    ) -> bool {
        let Some(st) = self.ha_state_of(p).await else {
            return false;
        };
        let mut logged_in = false;
        for m in self.ha_members(p, &st).await {
            let Some(mp) = m.partition.filter(|mp| mp.logged_in().is_none()) else {
                continue;
            };
            if !m.alive {
                continue;
            }
            match self.core.login(&mp.id, user, pin.clone()).await {
                Ok(_) => logged_in = true,
                Err(e) => tracing::warn!(
                    "HA group {}: member {} ({}) refused the login: {}",
                    st.group_serial,
                    m.position,
                    m.serial,
                    e.message
                ),
            }
        }
        logged_in
    }

    /// Per member (position, serial, commands so far) — for a probe's per-member shares.
    pub(crate) async fn ha_member_counters(self, p: &Partition) -> Option<Vec<(u32, String, u64)>> {
        let st = self.ha_state_of(p).await?;
        let members = self.ha_members(p, &st).await;
        let mut out = Vec::new();
        if members.iter().any(|m| m.partition.is_some()) {
            for m in &members {
                let n = match &m.partition {
                    Some(mp) => {
                        let (module, slot) = (mp.module.module.clone(), mp.slot());
                        blocking(move || {
                            module.ca_hsm_stats(slot, &[p11::vendor::stats_id::ICD_COMMANDS_COUNT])
                        })
                        .await
                        .ok()
                        .and_then(|r| r.ok())
                        .and_then(|v| v.first().map(|x| x.1))
                        .unwrap_or(0)
                    }
                    None => 0,
                };
                out.push((m.position, m.serial.clone(), n));
            }
        } else {
            let util = p
                .pool
                .run_idempotent_async("ha.utilization", |s| s.ca_utilization(false))
                .await
                .ok()?;
            for m in &members {
                let n = util
                    .iter()
                    .filter(|c| c.serial_number.to_string() == m.serial)
                    .map(|c| c.count)
                    .sum();
                out.push((m.position, m.serial.clone(), n));
            }
        }
        Some(out)
    }
}
