//! What `ha` and `ha drift` show.

use console::ha::{DriftReport, DriftVerdict, HaGroupView, HaMemberView};
use console::ApiResult;
use hsm::drift::Difference;
use serde::Serialize;

use crate::render::{Page, Render};

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1}%")).unwrap_or_else(|| "-".into())
}

fn member_rows(members: &[HaMemberView]) -> Vec<Vec<String>> {
    members
        .iter()
        .map(|m| {
            vec![
                m.position.to_string(),
                m.serial.clone(),
                if m.alive {
                    "alive".into()
                } else {
                    format!("down ({})", m.status)
                },
                match m.needs_sync {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "?".into(),
                },
                opt(m.slot_id),
                pct(m.busy_percent),
                opt(m.commands),
                pct(m.served_share_percent),
                m.last_served.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect()
}

pub const MEMBER_HEADERS: [&str; 9] = [
    "MEMBER",
    "SERIAL",
    "STATE",
    "NEEDS SYNC",
    "SLOT",
    "BUSY",
    "COMMANDS",
    "SHARE",
    "LAST SERVED",
];

/// Print one group: its name line, the members table, its warning.
pub fn group_text(page: &mut Page, g: &HaGroupView) {
    writeln!(
        page,
        "HA group {}  serial {}  virtual slot {}  ({} SDK layout)",
        g.label, g.serial, g.slot_id, g.layout
    );
    page.table(&MEMBER_HEADERS, &member_rows(&g.members));
    if !g.members_visible {
        writeln!(
            page,
            "The members' own slots are not visible (HAOnly): the drift check cannot compare them."
        );
    }
    if let Some(w) = &g.warning {
        writeln!(page, "WARNING {}: {w}", g.label);
    }
}

/// `ha`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct HaGroups(pub Vec<HaGroupView>);

impl Render for HaGroups {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        for (i, g) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(page);
            }
            group_text(page, g);
        }
        Ok(())
    }
}

fn difference_rows(d: &[Difference]) -> Vec<Vec<String>> {
    d.iter()
        .map(|d| {
            vec![
                d.object.clone(),
                d.kind.to_string(),
                d.field.clone().unwrap_or_else(|| "-".into()),
                d.members
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                d.values
                    .iter()
                    .map(|v| format!("{}: {}", v.member, v.value.as_deref().unwrap_or("absent")))
                    .collect::<Vec<_>>()
                    .join("; "),
            ]
        })
        .collect()
}

/// `ha drift` (exit 3 when the members differ or one is down).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct DriftView(pub DriftReport);

impl Render for DriftView {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let r = &self.0;
        writeln!(
            page,
            "HA group {} (serial {}): {}",
            r.group_label, r.group_serial, r.summary
        );
        let rows: Vec<Vec<String>> = r
            .members
            .iter()
            .map(|m| {
                vec![
                    m.position.to_string(),
                    m.serial.clone(),
                    m.check.to_string(),
                    opt(m.objects),
                    if m.logged_in {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                    m.error
                        .as_ref()
                        .map(|e| e.message.clone())
                        .unwrap_or_default(),
                ]
            })
            .collect();
        page.table(
            &["MEMBER", "SERIAL", "CHECK", "OBJECTS", "LOGGED IN", "ERROR"],
            &rows,
        );
        let headers = ["OBJECT", "KIND", "FIELD", "ON MEMBER", "VALUES"];
        if !r.differences.is_empty() {
            writeln!(page, "\nObjects:");
            page.table(&headers, &difference_rows(&r.differences));
        }
        if !r.policy_differences.is_empty() {
            writeln!(page, "\nPartition policies:");
            page.table(&headers, &difference_rows(&r.policy_differences));
        }
        for n in &r.notes {
            writeln!(page, "note: {n}");
        }
        writeln!(page, "{}.", r.kcv_method);
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        match self.0.verdict {
            DriftVerdict::InSync => 0,
            DriftVerdict::Drift | DriftVerdict::MemberDown => 3,
            DriftVerdict::NotComparable => 1,
        }
    }
}
