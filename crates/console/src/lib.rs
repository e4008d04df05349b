//! `console` — the console's services as officers use them. The two front doors (the desktop
//! app's commands and `hsmc`'s subcommands) are thin adapters over [`Console`], itself a thin
//! facade:
//!
//! - [`core`]: modules, partitions, logins and sessions, the change engine that records and
//!   applies every change, settings, errors, the message type. Every change is written to
//!   the audit trail first, and refused when it cannot be.
//! - Domains, each a service over the core that imports no other domain:
//!   [`admin`] (credentials, keys, objects, attributes, backups), [`sign`] (signing and
//!   verifying, the formats, URIs for other tools), [`observe`] (health, statistics, HSS,
//!   usage limits, probes, PQC readiness), [`trail`] (the audit trail's operations) and
//!   [`ha`] (HA groups and their drift check).
//! - [`overview`]: the one read across domains ("is anything wrong?"), above them.
//!
//! `Console` owns the core and each domain's state, hands out the services
//! (`console.admin()`, `console.signing()` …), and does what takes more than one domain:
//! a login that also logs in to an HA group's members, a statistics sample that names its
//! group, the ticker.

pub mod admin;
pub mod core;
pub mod ha;
pub mod observe;
pub mod overview;
pub mod sign;
pub mod trail;

/// `text!(KEY, TEMPLATE, name = value, …)`: a [`core::i18n::Text`] (the workspace's one macro).
pub use hsm::text;

pub use self::core::error::{ApiError, ApiResult, ErrorCode};
pub use self::core::partitions::{LoadedModule, Partition};
pub use self::core::{redact_url, ConsoleConfig, Core};
// The core's modules by their short names, as the front doors and tests name them.
pub use self::core::{
    audit_hsm, audit_slot, builtin, change, error, i18n, key_refs, partitions, role_texts,
    settings, views,
};
pub use admin::{attributes, backup, credentials, keys, objects};
pub use observe::{health, pqc, probe_verdict, probes, usage};
pub use sign::uris;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use self::core::partitions::Partition as PartitionRef;
use self::core::ports::{GroupCounters, MemberFigures, MemberStats, Pending};
use self::core::views::{ConsoleEvent, LoginResult, UserKind};

/// The console: the core, each domain's state, and the background ticker.
pub struct Console {
    core: Core,
    observe: observe::State,
    trail: trail::State,
    ha: parking_lot::Mutex<ha::HaMemory>,
    ticker: parking_lot::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The core's operations (partitions, logins, settings, the trail's handle) are the
/// console's own.
impl std::ops::Deref for Console {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

impl Console {
    /// Open the console: settings, audit trail, built-in partition, remembered modules.
    /// Only a damaged settings file or an unreachable audit store stop it; a module that
    /// cannot be loaded is reported and skipped.
    pub async fn open(config: ConsoleConfig) -> ApiResult<Arc<Console>> {
        let console = Arc::new(Console {
            core: Core::open(config).await?,
            observe: observe::State::default(),
            trail: trail::State::default(),
            ha: parking_lot::Mutex::new(ha::HaMemory::default()),
            ticker: parking_lot::Mutex::new(None),
        });
        console.start_ticker();
        Ok(console)
    }

    /// The core the domains stand on.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Credentials, keys, objects, attributes, backups.
    pub fn admin(&self) -> admin::Admin<'_> {
        admin::Admin::new(&self.core)
    }

    /// Signing and verifying, the formats, URIs for other tools.
    pub fn signing(&self) -> sign::Signing<'_> {
        sign::Signing::new(&self.core)
    }

    /// Health, statistics, HSS, usage limits, probes, PQC readiness.
    pub fn observe(&self) -> observe::Observe<'_> {
        observe::Observe::new(&self.core, &self.observe, self)
    }

    /// The audit trail's operations.
    pub fn trail(&self) -> trail::Trail<'_> {
        trail::Trail::new(&self.core, &self.trail)
    }

    /// HA groups and their drift check.
    pub fn ha(&self) -> ha::Ha<'_> {
        ha::Ha::new(&self.core, &self.ha, self)
    }

    /// Log in ([`Core::login`]); on an HA group's virtual slot, log in to its visible
    /// members too (Luna's members share the credential), so the drift check can compare
    /// their private objects.
    pub async fn login(&self, id: &str, user: UserKind, pin: p11::Pin) -> ApiResult<LoginResult> {
        let for_members = pin.clone();
        let r = self.core.login(id, user, pin).await?;
        let p = self.core.partition_ref(id).await?;
        if self.ha().ha_login_members(&p, user, &for_members).await {
            self.core.emit(ConsoleEvent::PartitionChanged {
                partition_id: p.id.clone(),
            });
        }
        Ok(r)
    }

    /// One statistics sample of a partition ([`observe::Observe::stats`]), with the HA group
    /// it was taken on, if any (and its members' figures side by side).
    pub async fn stats(&self, partition: &str) -> ApiResult<observe::health::StatsSnapshot> {
        let mut s = self.observe().stats(partition).await?;
        let p = self.core.partition_ref(partition).await?;
        s.ha = self.ha().ha_group_view(&p, true).await;
        Ok(s)
    }

    /// Checkpoints on time even when nothing happens (the audit log decides when one is due),
    /// every 30 s; and every second, a partition whose module reconnected (the pool
    /// reinitialized it) is announced as changed, so the window reads its objects again —
    /// their handles may be new numbers.
    fn start_ticker(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let h = tokio::spawn(async move {
            let mut iv = tokio::time::interval(Duration::from_secs(1));
            let mut generations: HashMap<String, u64> = HashMap::new();
            let mut ticks = 0u64;
            iv.tick().await;
            loop {
                iv.tick().await;
                ticks += 1;
                let Some(c) = weak.upgrade() else { break };
                c.announce_reconnects(&mut generations);
                if ticks % 30 != 0 {
                    continue;
                }
                match c.audit().tick().await {
                    Ok(true) => c.emit(ConsoleEvent::AuditChanged {}),
                    Ok(false) => {}
                    Err(e) => tracing::debug!("audit checkpoint not written: {e}"),
                }
                c.trail().scheduled_verification().await;
            }
        });
        *self.ticker.lock() = Some(h);
    }

    /// Check the HA groups on the statistics interval ([`ha::Ha::ha_watch_tick`]); the
    /// desktop app starts this, `hsmc` checks when asked.
    pub fn start_ha_watch(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let every = match weak.upgrade() {
                    Some(c) => c.settings().stats_poll_seconds.max(1),
                    None => break,
                };
                tokio::time::sleep(Duration::from_secs(every)).await;
                let Some(c) = weak.upgrade() else { break };
                c.ha().ha_watch_tick().await;
            }
        });
    }

    /// Write the final checkpoint, log out and release the store. Call before exit.
    pub async fn close(&self) {
        if let Some(h) = self.ticker.lock().take() {
            h.abort();
        }
        self.core.close().await;
    }
}

/// HA's group view reads each member's figures from observation.
impl MemberStats for Console {
    fn member_figures<'a>(&'a self, partition_id: &'a str) -> Pending<'a, Option<MemberFigures>> {
        Box::pin(async move {
            let luna = self.observe().stats(partition_id).await.ok()?.luna?;
            Some(MemberFigures {
                busy_percent: luna.busy_percent,
                commands: luna.commands,
                commands_per_second: luna.commands_per_second,
            })
        })
    }
}

/// A probe reads which member of an HA group served its calls from HA.
impl GroupCounters for Console {
    fn member_counters<'a>(
        &'a self,
        p: &'a PartitionRef,
    ) -> Pending<'a, Option<Vec<(u32, String, u64)>>> {
        Box::pin(async move { self.ha().ha_member_counters(p).await })
    }
}
