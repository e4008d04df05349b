//! The officer's morning view: "is anything wrong?" answered once for every connected
//! partition. A card per partition (login, PIN state, load, pool and breaker, HA where
//! there is one) and the lists that need attention across all of them: keys running out
//! (HSS, and usage-limited keys once they exist), certificates about to expire, the audit
//! trail's verification, failed operations of the last 24 hours. The desktop app's
//! Overview and `hsmc status` show this one value.
//!
//! Every item says how serious it is, what it is about, and which view deals with it; its
//! text is a [`Text`] so it reads in the officer's language. A new source of attention
//! (HA groups, usage limits, roles) is one more function pushing items into a section.

mod cards;
mod ha;
mod keys;
mod trail;

pub use trail::FAILURES_SHOWN;

use serde::Serialize;
use ts_rs::TS;

use crate::core::error::ApiResult;
use crate::core::i18n::Text;
use crate::core::settings::AutoVerify;
use crate::core::views::{AuditKeyView, ModuleFamily, UserKind};
use crate::trail::LastVerification;
use crate::Console;

/// How much an item needs the officer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing to do yet.
    Info,
    /// Needs attention soon.
    Warning,
    /// Needs attention now.
    Critical,
}

hsm::wire_display!(Severity);

/// What an item is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AttentionKind {
    /// A module whose slots cannot be listed.
    Module,
    /// A token that cannot be read.
    Token,
    /// Not logged in: keys and certificates are not looked at.
    Login,
    /// The user PIN's state (count low, final try, locked, to be changed).
    UserPin,
    /// The security officer PIN's state.
    SoPin,
    /// The session pool's circuit breaker.
    Breaker,
    /// The HSM near its ceiling.
    Load,
    /// An HA group with a member down or out of step.
    Ha,
    /// An HSS key running out, or its counter disagreeing with the trail.
    HssKey,
    /// A key with a usage limit running out.
    UsageLimit,
    /// A certificate near or past its expiry.
    Certificate,
    /// The audit trail: broken, not verified, unavailable, locked.
    Audit,
    /// An operation that failed (from the trail).
    Failure,
    /// Keys past due, deprecated, or due within a year under the post-quantum policy.
    Pqc,
}

hsm::wire_display!(AttentionKind);

/// The view that deals with an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum LinkView {
    Connections,
    Partition,
    Keys,
    Hss,
    /// The post-quantum readiness view.
    Pqc,
    Stats,
    Audit,
    Settings,
}

/// Where an item leads: the view, and what to select or filter there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct Link {
    pub view: LinkView,
    pub partition_id: Option<String>,
    /// Text to search for (a key's id, an action).
    pub search: Option<String>,
    /// A day to filter the audit trail to (`YYYY-MM-DD`).
    pub day: Option<String>,
    /// An audit record.
    #[ts(type = "number | null")]
    pub seq: Option<i64>,
}

impl Link {
    pub fn to(view: LinkView) -> Link {
        Link {
            view,
            partition_id: None,
            search: None,
            day: None,
            seq: None,
        }
    }
    pub fn partition(mut self, id: &str) -> Link {
        self.partition_id = Some(id.to_string());
        self
    }
    pub fn search(mut self, s: &str) -> Link {
        self.search = Some(s.to_string());
        self
    }
}

/// One thing the officer may need to act on.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AttentionItem {
    pub kind: AttentionKind,
    pub severity: Severity,
    pub partition_id: Option<String>,
    pub partition_label: Option<String>,
    /// What it is about: a key's or certificate's label, an action.
    pub subject: Option<String>,
    /// Days until it runs out or expires (negative: already past).
    pub days_left: Option<f64>,
    /// Signatures or uses left, and of how many (decimal; HSS totals exceed 2^53).
    #[ts(type = "number | null")]
    pub remaining: Option<u64>,
    pub total: Option<String>,
    /// When: the expiry date, the projected exhaustion, the record's time.
    pub at: Option<String>,
    pub message: Text,
    pub link: Link,
}

impl AttentionItem {
    pub(crate) fn new(kind: AttentionKind, severity: Severity, message: Text, link: Link) -> Self {
        AttentionItem {
            kind,
            severity,
            partition_id: None,
            partition_label: None,
            subject: None,
            days_left: None,
            remaining: None,
            total: None,
            at: None,
            message,
            link,
        }
    }
    pub(crate) fn on(mut self, partition_id: &str, label: &str) -> Self {
        self.partition_id = Some(partition_id.to_string());
        self.partition_label = Some(label.to_string());
        self
    }
    pub(crate) fn subject(mut self, s: &str) -> Self {
        self.subject = Some(s.to_string());
        self
    }
}

/// A PIN's state flags as the token reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, TS)]
pub struct PinState {
    pub count_low: bool,
    pub final_try: bool,
    pub locked: bool,
    pub to_be_changed: bool,
}

/// The HSM's load (Luna `CA_*` figures; rates need two samples ≥ 5 s apart).
#[derive(Debug, Clone, Serialize, TS)]
pub struct LoadView {
    pub busy_percent: Option<f64>,
    pub commands_per_second: Option<f64>,
    pub firmware: Option<String>,
}

/// How a partition belongs to an HA group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum HaRole {
    /// The group's virtual slot.
    Group,
    /// One member's own slot.
    Member,
}

hsm::wire_display!(HaRole);

/// An HA group the partition is the virtual slot or a member of (where the module reports
/// HA state).
#[derive(Debug, Clone, Serialize, TS)]
pub struct HaSummary {
    /// The group's virtual slot (its Partition view shows the group and its drift check).
    pub partition_id: String,
    pub group: String,
    pub serial: String,
    pub role: HaRole,
    /// The member's position in the group (role `member`).
    pub position: Option<u32>,
    pub members_online: u32,
    pub members_total: u32,
    /// Positions of the members down.
    pub down_members: Vec<u32>,
    /// The last drift check's verdict: this console's, else the trail's last record of the
    /// group; `None` when the group was never checked. (The overview does not run one.)
    pub drift: Option<crate::ha::DriftVerdict>,
    pub drift_summary: Option<Text>,
    /// When that check ran (or, from the trail, when it recorded the state).
    pub drift_checked_at: Option<String>,
    /// Every member online and no drift known.
    pub healthy: bool,
}

/// One partition at a glance.
#[derive(Debug, Clone, Serialize, TS)]
pub struct PartitionCard {
    pub partition_id: String,
    pub module_id: String,
    pub module_path: String,
    pub builtin: bool,
    pub family: ModuleFamily,
    #[ts(type = "number")]
    pub slot_id: u64,
    pub label: String,
    pub serial: String,
    pub model: Option<String>,
    /// Who is logged in (`None`: nobody).
    pub login: Option<UserKind>,
    pub user_pin: PinState,
    pub so_pin: PinState,
    pub pool: hsm::PoolStatus,
    /// Luna only.
    pub load: Option<LoadView>,
    /// The HA groups it belongs to (as the virtual slot or as a member).
    pub ha: Vec<HaSummary>,
    pub holds_audit_key: bool,
    /// What needs attention on this partition (PINs, breaker, load, login, HA).
    pub items: Vec<AttentionItem>,
}

/// A list across partitions.
#[derive(Debug, Clone, Default, Serialize, TS)]
pub struct Section {
    /// What needs attention, most urgent first.
    pub items: Vec<AttentionItem>,
    /// How many things were looked at (keys, certificates, records).
    pub checked: u32,
    /// Partitions whose objects could not be looked at (not logged in), by label.
    pub not_checked: Vec<String>,
}

/// The audit trail at a glance.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AuditSummary {
    /// `None` when the trail's status cannot be read.
    pub key: Option<AuditKeyView>,
    #[ts(type = "number")]
    pub records: i64,
    #[ts(type = "number")]
    pub pending: i64,
    /// The newest verification, this run's or the newest one the trail records.
    pub last_verification: Option<LastVerification>,
    pub auto_verify: AutoVerify,
    pub items: Vec<AttentionItem>,
}

/// Everything the Overview shows.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Overview {
    pub generated_at: String,
    /// Loaded modules (a module with no token has no card).
    pub modules: u32,
    pub partitions: Vec<PartitionCard>,
    /// Modules that could not be listed.
    pub module_items: Vec<AttentionItem>,
    /// Keys running out: HSS and usage-limited, by days left.
    pub keys: Section,
    /// Certificates by days to expiry.
    pub certificates: Section,
    pub audit: AuditSummary,
    /// Failed operations of the last 24 hours (the newest 20), from the trail.
    pub failures: Section,
    /// Items at warning or critical, everywhere.
    pub attention: u32,
    pub worst: Option<Severity>,
}

impl Overview {
    /// Whether anything is at warning or worse (`hsmc status` exits 1 then).
    pub fn needs_attention(&self) -> bool {
        self.attention > 0
    }

    /// Every item, in the order the sections are shown.
    pub fn items(&self) -> impl Iterator<Item = &AttentionItem> {
        self.module_items
            .iter()
            .chain(self.partitions.iter().flat_map(|p| p.items.iter()))
            .chain(self.keys.items.iter())
            .chain(self.certificates.items.iter())
            .chain(self.audit.items.iter())
            .chain(self.failures.items.iter())
    }
}

/// Most urgent first; among equals, the soonest.
pub(crate) fn sort_items(items: &mut [AttentionItem]) {
    items.sort_by(|a, b| {
        b.severity.cmp(&a.severity).then(
            a.days_left
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.days_left.unwrap_or(f64::INFINITY)),
        )
    });
}

impl Console {
    /// The overview of every connected partition, and what needs attention across them.
    /// Lists the modules' slots (so every token has a card), takes a statistics sample of
    /// each partition, and reads the keys and certificates of those logged in.
    pub async fn overview(&self) -> ApiResult<Overview> {
        let (mut partitions, module_items, modules) = cards::cards(self).await;
        keys::post_quantum(self, &mut partitions).await;
        let keys = keys::keys_running_out(self, &partitions).await;
        let certificates = keys::certificates(self, &partitions).await;
        let audit = trail::audit_summary(self).await;
        let failures = trail::failures(self).await;
        let mut o = Overview {
            generated_at: audit::now_rfc3339(),
            modules,
            partitions,
            module_items,
            keys,
            certificates,
            audit,
            failures,
            attention: 0,
            worst: None,
        };
        o.attention = o
            .items()
            .filter(|i| i.severity >= Severity::Warning)
            .count() as u32;
        o.worst = o.items().map(|i| i.severity).max();
        Ok(o)
    }
}
