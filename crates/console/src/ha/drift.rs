//! The drift check of an HA group, as a console service: every alive member whose slot is
//! visible is read object by object ([`hsm::drift::snapshot`]) and compared with the
//! others, with the partition policies; the verdict is "in sync" or "drift on member N",
//! or says which members are down. Run on demand, and by the app on the statistics
//! interval ([`Console::start_ha_watch`]). A drift or a down member raises the header's
//! warning and is written to the audit trail once per change of state (the state last
//! written is looked up in the trail, so a second console or `hsmc` does not repeat it).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Serialize;
use ts_rs::TS;

use audit::store::Query;
use audit::Event;
use hsm::drift::{self as hd, MemberObjects, ObjectFacts};

use super::{blocking, Member};
use crate::core::error::ApiResult;
use crate::core::ha_views::{DriftMember, DriftReport, DriftVerdict, MemberCheck};
#[cfg(test)]
use crate::core::i18n::InLang;
use crate::core::i18n::Text;
use crate::core::partitions::Partition;
use crate::core::views::ConsoleEvent;
use crate::ha::Ha;
use crate::text;

/// What the trail's last `ha.state` record of a group says.
#[derive(Debug, Clone)]
pub(crate) struct RecordedDrift {
    pub verdict: DriftVerdict,
    pub drifting: Vec<u32>,
    pub down: Vec<u32>,
    /// When the state was recorded (the check that found it).
    pub at: String,
}

/// A header warning: one per group with a drift or a member down.
#[derive(Debug, Clone, Serialize, TS)]
pub struct HaWarning {
    pub partition_id: String,
    pub label: String,
    pub serial: String,
    pub verdict: DriftVerdict,
    pub text: String,
    /// The same in a form each language translates.
    pub message: Text,
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// "member 2 down", "members 2, 3 down".
pub(crate) fn down_text(members: &[u32]) -> Text {
    match members {
        [one] => text!(
            "ha.summary.member_down",
            "member {{member}} down",
            member = one
        ),
        many => text!(
            "ha.summary.members_down",
            "members {{members}} down",
            members = list(many)
        ),
    }
}

fn drift_text(members: &[u32]) -> Text {
    match members {
        [one] => text!(
            "ha.summary.drift_on_member",
            "drift on member {{member}}",
            member = one
        ),
        many => text!(
            "ha.summary.drift_on_members",
            "drift on members {{members}}",
            members = list(many)
        ),
    }
}

fn in_sync_text(members: &[u32]) -> Text {
    match members {
        [one] => text!(
            "ha.summary.member_in_sync",
            "member {{member}} in sync",
            member = one
        ),
        many => text!(
            "ha.summary.members_in_sync",
            "members {{members}} in sync",
            members = list(many)
        ),
    }
}

/// The verdict in words: "drift on member 2; member 4 down", "member 2 down; members 1, 3
/// in sync" (English in `text`, each part a nested text the UI translates).
pub(crate) fn summary(
    verdict: DriftVerdict,
    drifting: &[u32],
    down: &[u32],
    compared: &[u32],
) -> Text {
    let down_part = (!down.is_empty()).then(|| down_text(down));
    match verdict {
        DriftVerdict::InSync => text!("ha.summary.in_sync", "in sync"),
        DriftVerdict::Drift => {
            let who = drift_text(drifting);
            match down_part {
                Some(d) => text!(
                    "ha.summary.drift_and_down",
                    "{{drift}}; {{down}}",
                    drift = who.text,
                    down = d.text
                )
                .nest("drift", &who)
                .nest("down", &d),
                None => who,
            }
        }
        DriftVerdict::MemberDown => {
            let d = down_part.unwrap_or_else(|| down_text(down));
            let rest = in_sync_text(compared);
            text!(
                "ha.summary.down_rest_in_sync",
                "{{down}}; {{in_sync}}",
                down = d.text,
                in_sync = rest.text
            )
            .nest("down", &d)
            .nest("in_sync", &rest)
        }
        DriftVerdict::NotComparable => text!(
            "ha.summary.not_comparable",
            "not comparable: fewer than two members' own slots are visible"
        ),
    }
}

/// How the KCVs are computed, in words each language translates (the same English as
/// [`hd::KCV_METHOD`]).
pub(crate) fn kcv_method_text() -> Text {
    text!(
        "ha.kcv_method",
        "KCV = the first 3 bytes of the AES-ECB encryption of a zero block (DES3-ECB for triple-DES keys)"
    )
}

/// What one member holds, read through its own partition.
struct Reading {
    objects: Vec<ObjectFacts>,
    policies: Option<Vec<(u64, u64)>>,
    names: BTreeMap<u64, String>,
}

async fn read_member(mp: &Arc<Partition>) -> ApiResult<Reading> {
    let objects = mp
        .pool
        .run_service_idempotent_async("ha.drift", hd::snapshot)
        .await?;
    let (m, slot) = (mp.module.module.clone(), mp.slot());
    let (policies, names) = blocking(move || {
        let p = m.ca_token_policies(slot).ok();
        let names = p
            .iter()
            .flatten()
            .filter_map(|(id, _)| {
                m.ca_element_description(slot, true, false, *id)
                    .ok()
                    .map(|d| (*id, d.description))
            })
            .collect();
        (p, names)
    })
    .await?;
    Ok(Reading {
        objects,
        policies,
        names,
    })
}

impl Ha<'_> {
    /// Run the drift check of the group behind `partition`.
    pub async fn ha_drift(self, partition: &str) -> ApiResult<DriftReport> {
        let p = self.partition_ref(partition).await?;
        let st = self.ha_state_of(&p).await.ok_or_else(|| Self::not_ha(&p))?;
        let members = self.ha_members(&p, &st).await;
        let report = self.check_members(&p, &st.group_serial, &members).await;
        self.note_drift(&p, report.clone()).await;
        Ok(report)
    }

    async fn check_members(self, p: &Partition, serial: &str, members: &[Member]) -> DriftReport {
        let mut checked = Vec::new();
        let mut compared = Vec::new();
        let mut policies = Vec::new();
        let mut names = BTreeMap::new();
        let mut notes = Vec::new();
        for m in members {
            let mut dm = DriftMember {
                position: m.position,
                serial: m.serial.clone(),
                partition_id: m.partition.as_ref().map(|x| x.id.clone()),
                check: MemberCheck::NotVisible,
                logged_in: m
                    .partition
                    .as_ref()
                    .is_some_and(|x| x.logged_in().is_some()),
                objects: None,
                error: None,
            };
            match (&m.partition, m.alive) {
                (_, false) => dm.check = MemberCheck::Down,
                (None, true) => {}
                (Some(mp), true) => match read_member(mp).await {
                    Ok(r) => {
                        dm.check = MemberCheck::Compared;
                        dm.objects = Some(r.objects.len() as u64);
                        if !dm.logged_in {
                            notes.push(text!(
                                "ha.notes.member_not_logged_in",
                                "member {{member}} is not logged in: only its public objects were compared",
                                member = m.position
                            ));
                        }
                        if let Some(pol) = r.policies {
                            policies.push((m.position, pol));
                        }
                        if names.is_empty() {
                            names = r.names;
                        }
                        compared.push(MemberObjects {
                            member: m.position,
                            objects: r.objects,
                        });
                    }
                    Err(e) => {
                        dm.check = MemberCheck::Failed;
                        dm.error = Some(e);
                    }
                },
            }
            checked.push(dm);
        }
        let (differences, policy_differences) = if compared.len() >= 2 {
            (
                hd::compare_objects(&compared),
                hd::compare_policies(&policies, &names),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let drifting: Vec<u32> = differences
            .iter()
            .chain(&policy_differences)
            .flat_map(|d| d.members.iter().copied())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let down: Vec<u32> = checked
            .iter()
            .filter(|m| m.check == MemberCheck::Down)
            .map(|m| m.position)
            .collect();
        let compared_positions: Vec<u32> = compared.iter().map(|m| m.member).collect();
        let verdict = if !drifting.is_empty() {
            DriftVerdict::Drift
        } else if !down.is_empty() {
            DriftVerdict::MemberDown
        } else if compared.len() < 2 {
            DriftVerdict::NotComparable
        } else {
            DriftVerdict::InSync
        };
        let summary = summary(verdict, &drifting, &down, &compared_positions);
        let kcv_method = kcv_method_text();
        DriftReport {
            partition_id: p.id.clone(),
            group_label: p.label.clone(),
            group_serial: serial.to_string(),
            checked_at: audit::now_rfc3339(),
            verdict,
            summary: summary.text.clone(),
            summary_text: summary,
            members: checked,
            differences,
            policy_differences,
            drifting_members: drifting,
            down_members: down,
            kcv_method: kcv_method.text.clone(),
            kcv_method_text: kcv_method,
            notes: notes.iter().map(|n| n.text.clone()).collect(),
            notes_text: notes,
        }
    }

    /// Keep the report for the views and the header; on a change of state, write it to
    /// the audit trail and tell the window.
    async fn note_drift(self, p: &Partition, report: DriftReport) {
        let key = report.state_key();
        let before = self
            .state
            .lock()
            .recorded
            .get(&report.group_serial)
            .cloned();
        let before = match before {
            Some(b) => b,
            None => self.last_recorded_state(&report.group_serial).await,
        };
        self.state
            .lock()
            .last_drift
            .insert(p.id.clone(), report.clone());
        if before == key {
            return;
        }
        let diffs: Vec<String> = report
            .differences
            .iter()
            .chain(&report.policy_differences)
            .take(50)
            .map(|d| match &d.field {
                Some(f) => format!("{} {f} differs on {:?}", d.object, d.members),
                None => format!("{} missing on {:?}", d.object, d.members),
            })
            .collect();
        self.record(
            Event::new("ha.state", "ha_group")
                .resource(&report.group_serial)
                .meta("group", &report.group_label)
                .meta("partition", &p.id)
                .meta("state", &key)
                .meta("verdict", report.verdict)
                .meta("summary", &report.summary)
                .meta("drifting_members", &report.drifting_members)
                .meta("down_members", &report.down_members)
                .meta("differences", diffs),
        )
        .await;
        self.state
            .lock()
            .recorded
            .insert(report.group_serial.clone(), key);
        self.emit(ConsoleEvent::HaChanged {
            partition_id: p.id.clone(),
        });
    }

    /// The state of the group's last `ha.state` record ("in_sync" when there is none).
    async fn last_recorded_state(self, serial: &str) -> String {
        let q = Query {
            action: Some("ha.state".into()),
            resource: Some(serial.into()),
            limit: 1,
            ..Query::default()
        };
        self.audit()
            .store()
            .query(self.audit().log_id(), &q)
            .await
            .ok()
            .and_then(|r| r.into_iter().next())
            .and_then(|r| serde_json::from_str::<serde_json::Value>(&r.event.metadata).ok())
            .and_then(|v| v.get("state").and_then(|s| s.as_str()).map(str::to_string))
            .unwrap_or_else(|| "in_sync".into())
    }

    /// The group's last `ha.state` record, as the verdict of the check that wrote it: what
    /// a console that has not checked the group itself (`hsmc status`) knows of its drift,
    /// at the cost of one query. `None` when the trail has no record of the group.
    pub(crate) async fn last_recorded_drift(self, serial: &str) -> Option<RecordedDrift> {
        let q = Query {
            action: Some("ha.state".into()),
            resource: Some(serial.into()),
            limit: 1,
            ..Query::default()
        };
        let r = self
            .audit()
            .store()
            .query(self.audit().log_id(), &q)
            .await
            .ok()?
            .into_iter()
            .next()?;
        let meta: serde_json::Value = serde_json::from_str(&r.event.metadata).ok()?;
        let verdict: DriftVerdict = serde_json::from_value(meta.get("verdict")?.clone()).ok()?;
        let members = |k: &str| -> Vec<u32> {
            meta.get(k)
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .unwrap_or_default()
        };
        Some(RecordedDrift {
            verdict,
            drifting: members("drifting_members"),
            down: members("down_members"),
            at: r.event.timestamp,
        })
    }

    /// The header's warnings, from the last check of each group (the group's HA state
    /// when it has not been checked yet).
    pub async fn ha_warnings(self) -> Vec<HaWarning> {
        let mut out = Vec::new();
        for p in self.partitions() {
            if self.state.lock().known.get(&p.id) != Some(&true) {
                continue;
            }
            let last = self.state.lock().last_drift.get(&p.id).cloned();
            let (verdict, message, serial) = match last {
                Some(d) => match d.warning_text() {
                    Some(w) => (d.verdict, w, d.group_serial),
                    None => continue,
                },
                None => {
                    let Some(st) = self.ha_state_of(&p).await else {
                        continue;
                    };
                    let down: Vec<u32> = st
                        .members
                        .iter()
                        .enumerate()
                        .filter(|(_, m)| m.status != p11::sys::CKR_OK)
                        .map(|(i, _)| i as u32 + 1)
                        .collect();
                    if down.is_empty() {
                        continue;
                    }
                    (DriftVerdict::MemberDown, down_text(&down), st.group_serial)
                }
            };
            out.push(HaWarning {
                partition_id: p.id.clone(),
                label: p.label.clone(),
                serial,
                verdict,
                text: message.text.clone(),
                message,
            });
        }
        out
    }

    /// One round of the watcher: check every known HA group.
    pub async fn ha_watch_tick(self) {
        for p in self.partitions() {
            if self.ha_state_of(&p).await.is_some() {
                if let Err(e) = self.ha_drift(&p.id).await {
                    tracing::debug!("drift check of {} failed: {}", p.id, e.message);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_name_the_members() {
        let s = |v, d: &[u32], w: &[u32], c: &[u32]| summary(v, d, w, c).text;
        assert_eq!(
            s(DriftVerdict::Drift, &[2], &[], &[1, 2]),
            "drift on member 2"
        );
        assert_eq!(
            s(DriftVerdict::Drift, &[2, 3], &[4], &[1, 2, 3]),
            "drift on members 2, 3; member 4 down"
        );
        assert_eq!(
            s(DriftVerdict::MemberDown, &[], &[2], &[1, 3]),
            "member 2 down; members 1, 3 in sync"
        );
        assert_eq!(s(DriftVerdict::InSync, &[], &[], &[1, 2]), "in sync");
    }

    #[test]
    fn summaries_translate_with_their_parts() {
        use crate::core::i18n::Lang;
        let t = summary(DriftVerdict::MemberDown, &[], &[2], &[1, 3]);
        let zh = t.in_lang(Lang::ZhHant);
        assert!(!zh.contains("down") && !zh.contains("sync"), "{zh}");
        assert!(zh.contains('2') && zh.contains("1, 3"), "{zh}");
        assert_eq!(t.in_lang(Lang::En), t.text);
    }

    #[test]
    fn the_kcv_method_text_is_the_hsm_crates_words() {
        assert_eq!(kcv_method_text().text, hd::KCV_METHOD);
    }
}
