//! What the console shows of HA groups: each group behind a virtual slot, its members, and
//! the last drift check's report. The types sit in the core because two domains hand them
//! out — HA (the group and its drift check) and observation (the statistics sample names the
//! group it was taken on) — and neither may import the other.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use ts_rs::TS;

use hsm::drift::Difference;
use p11::vendor::HaLayout;

use crate::core::error::ApiError;
use crate::core::i18n::Text;
use crate::core::views::UserKind;

/// Which SDK generation's `CK_HA_STATUS` the module wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum HaLayoutView {
    /// Luna SDK 2018 and later (20-character serials).
    Current,
    /// Older SDKs (`CK_ULONG` serials).
    Legacy,
}

hsm::wire_display!(HaLayoutView);

impl From<HaLayout> for HaLayoutView {
    fn from(l: HaLayout) -> Self {
        match l {
            HaLayout::Current => HaLayoutView::Current,
            HaLayout::Legacy => HaLayoutView::Legacy,
        }
    }
}

/// One member of a group, as the Connections, Partition and Statistics views show it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct HaMemberView {
    /// 1-based, in the order the HA state lists the members.
    pub position: u32,
    pub serial: String,
    pub alive: bool,
    /// `CKR_OK`, or why the member is not alive (`CKR_UNABLE_TO_CONNECT`, …).
    pub status: String,
    /// The member's own slot, when the module shows it (not with Luna's `HAOnly`).
    pub partition_id: Option<String>,
    #[ts(type = "number | null")]
    pub slot_id: Option<u64>,
    pub logged_in: Option<UserKind>,
    /// From the last drift check: `true` when the member lacks or differs in something.
    pub needs_sync: Option<bool>,
    /// The member's own statistics (its slot's `CA_GetHSMStats`, ≥ 5 s between samples).
    pub busy_percent: Option<f64>,
    #[ts(type = "number | null")]
    pub commands: Option<u64>,
    pub commands_per_second: Option<f64>,
    /// Its share of the group's commands since the previous sample.
    pub served_share_percent: Option<f64>,
    /// When its command count last grew (it served calls).
    pub last_served: Option<String>,
}

/// One HA group behind a virtual slot.
#[derive(Debug, Clone, Serialize, TS)]
pub struct HaGroupView {
    pub partition_id: String,
    pub module_id: String,
    #[ts(type = "number")]
    pub slot_id: u64,
    pub label: String,
    pub serial: String,
    pub layout: HaLayoutView,
    pub members: Vec<HaMemberView>,
    /// Whether the members' own slots are visible (the drift check needs them).
    pub members_visible: bool,
    /// The last drift check of this group, if one ran.
    pub drift: Option<DriftReport>,
    /// "member 2 down", "drift on member 2" — what the header warns about.
    pub warning: Option<String>,
    /// The same in a form each language translates.
    pub warning_text: Option<Text>,
}

/// The drift check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DriftVerdict {
    /// Every member compared holds the same objects and policies, and none is down.
    InSync,
    /// The members differ (see the differences).
    Drift,
    /// The alive members agree, but at least one member is down.
    MemberDown,
    /// Fewer than two members could be compared (their slots are not visible).
    NotComparable,
}

hsm::wire_display!(DriftVerdict);

/// How far the check got with one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MemberCheck {
    Compared,
    Down,
    /// The module does not show the member's own slot (Luna's `HAOnly`).
    NotVisible,
    /// Reading it failed (see `error`).
    Failed,
}

hsm::wire_display!(MemberCheck);

#[derive(Debug, Clone, Serialize, TS)]
pub struct DriftMember {
    pub position: u32,
    pub serial: String,
    pub partition_id: Option<String>,
    pub check: MemberCheck,
    /// Without a login only public objects are compared.
    pub logged_in: bool,
    #[ts(type = "number | null")]
    pub objects: Option<u64>,
    /// Why reading it failed (`check` is `failed`), in words each language translates.
    pub error: Option<ApiError>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct DriftReport {
    pub partition_id: String,
    pub group_label: String,
    pub group_serial: String,
    pub checked_at: String,
    pub verdict: DriftVerdict,
    /// "in sync", "drift on member 2", "member 2 down; members 1, 3 in sync".
    pub summary: String,
    /// The same in a form each language translates.
    pub summary_text: Text,
    pub members: Vec<DriftMember>,
    pub differences: Vec<Difference>,
    pub policy_differences: Vec<Difference>,
    pub drifting_members: Vec<u32>,
    pub down_members: Vec<u32>,
    /// How the KCVs were computed (shown with them).
    pub kcv_method: String,
    pub kcv_method_text: Text,
    /// What limited the check (members not logged in, …).
    pub notes: Vec<String>,
    /// The same notes in a form each language translates.
    pub notes_text: Vec<Text>,
}

impl DriftReport {
    /// Whether a member needs sync, as far as this check can tell.
    pub fn needs_sync(&self, position: u32) -> Option<bool> {
        let m = self.members.iter().find(|m| m.position == position)?;
        (m.check == MemberCheck::Compared).then(|| self.drifting_members.contains(&position))
    }

    /// What the header warns about, if anything.
    pub fn warning(&self) -> Option<String> {
        self.warning_text().map(|t| t.text)
    }

    /// The same in a form each language translates.
    pub fn warning_text(&self) -> Option<Text> {
        match self.verdict {
            DriftVerdict::InSync | DriftVerdict::NotComparable => None,
            _ => Some(self.summary_text.clone()),
        }
    }

    /// The state written to the audit trail: it changes when the verdict, the members
    /// concerned or the set of differences change.
    pub(crate) fn state_key(&self) -> String {
        if self.verdict == DriftVerdict::InSync {
            return "in_sync".into();
        }
        let mut h = Sha256::new();
        for d in self.differences.iter().chain(&self.policy_differences) {
            h.update(format!(
                "{}|{:?}|{:?}|{:?}\n",
                d.object, d.field, d.kind, d.members
            ));
        }
        format!(
            "{}|drift:{:?}|down:{:?}|{}",
            self.verdict,
            self.drifting_members,
            self.down_members,
            &hex::encode(h.finalize())[..12]
        )
    }
}
