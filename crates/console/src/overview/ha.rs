//! HA groups on the cards: each group's virtual slot and each member whose own slot has a
//! card say which group they belong to and its state; a member down or members that
//! differ are items on the group's card, leading to its Partition view (the group panel
//! and its drift check).
//!
//! Cost: the group comes with the card's statistics sample (one `CA_GetHAState`), so
//! nothing is read for it twice. The drift check itself is not run here (it reads every
//! object of every member): the overview shows the last one the console ran (the app's
//! watcher runs it on the statistics interval), or else the group's last `ha.state` record
//! in the audit trail (one query), which is what `hsmc status` knows.

use super::{
    AttentionItem, AttentionKind as K, HaRole, HaSummary, Link, LinkView, PartitionCard,
    Severity as S,
};
use crate::core::i18n::Text;
use crate::ha::drift::{summary, RecordedDrift};
use crate::ha::{DriftVerdict, HaGroupView};
use crate::{text, Console};

/// What the last drift check (this console's, or the trail's record of one) found.
struct KnownDrift {
    verdict: DriftVerdict,
    summary: Text,
    at: String,
}

fn from_record(r: RecordedDrift, total: u32) -> KnownDrift {
    let compared: Vec<u32> = (1..=total).filter(|n| !r.down.contains(n)).collect();
    KnownDrift {
        verdict: r.verdict,
        summary: summary(r.verdict, &r.drifting, &r.down, &compared),
        at: r.at,
    }
}

async fn known_drift(c: &Console, g: &HaGroupView) -> Option<KnownDrift> {
    if let Some(d) = &g.drift {
        return Some(KnownDrift {
            verdict: d.verdict,
            summary: d.summary_text.clone(),
            at: d.checked_at.clone(),
        });
    }
    let r = c.ha().last_recorded_drift(&g.serial).await?;
    Some(from_record(r, g.members.len() as u32))
}

fn summary_of(g: &HaGroupView, known: Option<&KnownDrift>) -> HaSummary {
    let down: Vec<u32> = g
        .members
        .iter()
        .filter(|m| !m.alive)
        .map(|m| m.position)
        .collect();
    let total = g.members.len() as u32;
    let drift = known.map(|k| k.verdict);
    HaSummary {
        partition_id: g.partition_id.clone(),
        group: g.label.clone(),
        serial: g.serial.clone(),
        role: HaRole::Group,
        position: None,
        members_online: total - down.len() as u32,
        members_total: total,
        healthy: down.is_empty() && drift != Some(DriftVerdict::Drift),
        down_members: down,
        drift,
        drift_summary: known.map(|k| k.summary.clone()),
        drift_checked_at: known.map(|k| k.at.clone()),
    }
}

/// The items of a group: members down (critical when none is left), members that differ.
fn items(card: &PartitionCard, s: &HaSummary, g: &HaGroupView) -> Vec<AttentionItem> {
    let link = Link::to(LinkView::Partition).partition(&s.partition_id);
    let mut out = Vec::new();
    if !s.down_members.is_empty() {
        let serials: Vec<String> = g
            .members
            .iter()
            .filter(|m| !m.alive)
            .map(|m| format!("{} ({}, {})", m.position, m.serial, m.status))
            .collect();
        let (severity, message) = if s.members_online == 0 {
            (
                S::Critical,
                text!(
                    "overview.items.ha_all_down",
                    "HA group {{group}}: every member is down ({{members}}).",
                    group = s.group,
                    members = serials.join(", ")
                ),
            )
        } else {
            (
                S::Warning,
                text!(
                    "overview.items.ha_member_down",
                    "HA group {{group}}: {{down}} of {{total}} members down ({{members}}); the group runs without redundancy.",
                    group = s.group,
                    down = s.down_members.len(),
                    total = s.members_total,
                    members = serials.join(", ")
                ),
            )
        };
        let mut i = AttentionItem::new(K::Ha, severity, message, link.clone())
            .on(&card.partition_id, &card.label)
            .subject(&s.group);
        i.remaining = Some(u64::from(s.members_online));
        i.total = Some(s.members_total.to_string());
        out.push(i);
    }
    if let (Some(DriftVerdict::Drift), Some(summary)) = (s.drift, &s.drift_summary) {
        let mut i = AttentionItem::new(
            K::Ha,
            S::Warning,
            text!(
                "overview.items.ha_drift",
                "HA group {{group}}: the members differ ({{summary}}) at the check of {{at}}; compare and synchronize them in the group's Partition view.",
                group = s.group,
                summary = summary.text,
                at = s.drift_checked_at.clone().unwrap_or_default()
            )
            .nest("summary", summary),
            link,
        )
        .on(&card.partition_id, &card.label)
        .subject(&s.group);
        i.at = s.drift_checked_at.clone();
        out.push(i);
    }
    out
}

/// Put each group on its virtual slot's card (with its items) and on its visible members'
/// cards (as a member, without repeating the items).
pub(super) async fn attach(c: &Console, cards: &mut [PartitionCard], groups: Vec<HaGroupView>) {
    for g in groups {
        let known = known_drift(c, &g).await;
        let s = summary_of(&g, known.as_ref());
        if let Some(card) = cards.iter_mut().find(|x| x.partition_id == g.partition_id) {
            let found = items(card, &s, &g);
            card.items.extend(found);
            super::sort_items(&mut card.items);
            card.ha.push(s.clone());
        }
        for m in &g.members {
            let Some(pid) = &m.partition_id else { continue };
            if let Some(card) = cards.iter_mut().find(|x| &x.partition_id == pid) {
                card.ha.push(HaSummary {
                    role: HaRole::Member,
                    position: Some(m.position),
                    ..s.clone()
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_member_down_names_the_others_in_sync() {
        let k = from_record(
            RecordedDrift {
                verdict: DriftVerdict::MemberDown,
                drifting: vec![],
                down: vec![3],
                at: "2026-01-01T00:00:00Z".into(),
            },
            3,
        );
        assert_eq!(k.summary.text, "member 3 down; members 1, 2 in sync");
    }
}
