//! The audit trail's side of the overview: its key, its last verification and any break,
//! and the operations that failed in the last 24 hours.

use audit::store::Query;
use audit::Verdict;

use super::{
    AttentionItem, AttentionKind as K, AuditSummary, Link, LinkView, Section, Severity as S,
};
use crate::core::i18n::Text;
use crate::core::settings::AutoVerify;
use crate::core::views::AuditKeyView;
use crate::trail::findings::finding_text;
use crate::trail::{LastVerification, VerifyTrigger};
use crate::{text, Console};

/// Failed operations listed (the count covers all of the last 24 hours).
pub const FAILURES_SHOWN: usize = 20;

fn rfc3339(t: time::OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.000Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

fn parse(t: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
}

/// The newest verification the trail records (a console started after it, like `hsmc
/// status`, knows it from there).
async fn recorded_verification(c: &Console) -> Option<LastVerification> {
    let q = Query {
        action: Some("audit.verify".into()),
        limit: 1,
        ..Query::default()
    };
    let r = c.audit().records(&q).await.ok()?.into_iter().next()?;
    let meta: serde_json::Value = serde_json::from_str(&r.event.metadata).ok()?;
    let verdict: Verdict = serde_json::from_value(meta.get("verdict")?.clone()).ok()?;
    let trigger = match meta.get("trigger").and_then(|t| t.as_str()) {
        Some("scheduled") => VerifyTrigger::Scheduled,
        _ => VerifyTrigger::Manual,
    };
    Some(LastVerification::from_verdict(
        &verdict,
        r.event.timestamp,
        trigger,
    ))
}

/// "Broken at record N: what is wrong", the finding translated with the sentence.
fn broken_text(seq: i64, v: &LastVerification) -> Text {
    let t = text!(
        "overview.items.audit_broken",
        "The audit trail is broken at record {{seq}}: {{explanation}}",
        seq = seq,
        explanation = v.explanation.clone().unwrap_or_default()
    );
    match &v.finding {
        Some(f) => t.nest("explanation", &finding_text(f)),
        None => t,
    }
}

/// How old a verification may be before it is "not verified since …".
fn max_age(schedule: &AutoVerify) -> time::Duration {
    match schedule {
        AutoVerify::Hourly => time::Duration::hours(2),
        // Daily, and when off: a day and a bit is what an officer expects.
        AutoVerify::Daily | AutoVerify::Off => time::Duration::hours(26),
    }
}

pub(super) async fn audit_summary(c: &Console) -> AuditSummary {
    let schedule = c.settings().audit.auto_verify;
    let audit = Link::to(LinkView::Audit);
    let status = match c.trail().audit_status().await {
        Ok(s) => s,
        Err(e) => {
            return AuditSummary {
                key: None,
                records: 0,
                pending: 0,
                last_verification: None,
                auto_verify: schedule,
                items: vec![AttentionItem::new(
                    K::Audit,
                    S::Critical,
                    text!(
                        "overview.items.audit_unavailable",
                        "The audit trail cannot be read: {{error}}",
                        error = e.message
                    ),
                    audit,
                )],
            };
        }
    };
    let last = match status.last_verification.clone() {
        Some(v) => Some(v),
        None => recorded_verification(c).await,
    };
    let mut items = Vec::new();
    match &last {
        Some(v) if !v.intact => {
            let seq = v.first_bad_seq.unwrap_or(0);
            let mut link = audit.clone();
            link.seq = v.first_bad_seq;
            items.push(AttentionItem::new(
                K::Audit,
                S::Critical,
                broken_text(seq, v),
                link,
            ));
        }
        Some(v) => {
            let stale = parse(&v.at)
                .is_none_or(|t| time::OffsetDateTime::now_utc() - t > max_age(&schedule));
            if stale {
                let mut i = AttentionItem::new(
                    K::Audit,
                    S::Warning,
                    text!(
                        "overview.items.audit_stale",
                        "The audit trail has not been verified since {{at}}.",
                        at = v.at
                    ),
                    audit.clone(),
                );
                i.at = Some(v.at.clone());
                items.push(i);
            }
        }
        None if status.records > 0 => items.push(AttentionItem::new(
            K::Audit,
            S::Warning,
            text!(
                "overview.items.audit_never_verified",
                "The audit trail has never been verified. Verify it in the Audit trail view."
            ),
            audit.clone(),
        )),
        None => {}
    }
    match &status.key {
        AuditKeyView::Locked { holder } => items.push(AttentionItem::new(
            K::Audit,
            S::Info,
            text!(
                "overview.items.audit_locked",
                "The trail's key is locked: log in to {{holder}}; privileged actions are refused until then.",
                holder = holder
            ),
            Link::to(LinkView::Connections),
        )),
        AuditKeyView::NoKeyYet => items.push(AttentionItem::new(
            K::Audit,
            S::Info,
            text!(
                "overview.items.audit_no_key",
                "The trail has no key yet: the first user login creates it on that partition."
            ),
            Link::to(LinkView::Connections),
        )),
        AuditKeyView::Unlocked { .. } => {}
    }
    if status.pending > 0 {
        items.push(AttentionItem::new(
            K::Audit,
            S::Info,
            text!(
                "overview.items.audit_pending",
                "{{n}} events wait for the trail's key and are chained at the next login.",
                n = status.pending
            ),
            audit,
        ));
    }
    super::sort_items(&mut items);
    AuditSummary {
        key: Some(status.key),
        records: status.records,
        pending: status.pending,
        last_verification: last,
        auto_verify: schedule,
        items,
    }
}

/// The changes to a token recorded before they run (`<action>.request`, then `<action>`
/// with the outcome): every kind the change engine runs — signing with a stateful (HSS)
/// key among them — and certificate requests (signed by a key, recorded the same way).
fn changes() -> impl Iterator<Item = &'static str> {
    crate::core::change::ChangeKind::ALL
        .into_iter()
        .map(crate::core::change::ChangeKind::action)
        .chain(["cert.csr"])
}

/// `.request` records since `since` with no outcome after them: the console (or `hsmc`)
/// stopped between the two — killed, or the machine went down — or the action is still
/// running. An outcome answers the latest open request of its action on the same
/// resource (or, failing that, the latest one): a killed request stays open however many
/// answered ones come after it. A `sign` or `sign.manifest` record answers only a request
/// for the same file: signatures with stateless keys are recorded after the fact, without
/// a request.
async fn unanswered_requests(c: &Console, since: &str) -> Vec<audit::Record> {
    let mut open = Vec::new();
    for action in changes() {
        let q = Query {
            action: Some(action.to_string()),
            from_time: Some(since.to_string()),
            ..Query::default()
        };
        // All of the day's, not a first page: an answer after the page's end would leave
        // its request looking interrupted.
        let Ok(records) = c.audit().all_records(&q, Some).await else {
            continue;
        };
        let request = format!("{action}.request");
        let mut pending: Vec<audit::Record> = Vec::new();
        for r in records {
            if r.event.action == request {
                pending.push(r);
            } else if r.event.action == action {
                let same = pending
                    .iter()
                    .rposition(|q| q.event.resource_id == r.event.resource_id);
                let latest = match action {
                    "sign" | "sign.manifest" => None,
                    _ => pending.len().checked_sub(1),
                };
                if let Some(i) = same.or(latest) {
                    pending.remove(i);
                }
            }
        }
        open.extend(pending);
    }
    open.sort_by_key(|r| std::cmp::Reverse(r.seq));
    open
}

fn audit_link(r: &audit::Record) -> Link {
    let mut link = Link::to(LinkView::Audit);
    link.seq = Some(r.seq);
    link.day = r.event.timestamp.get(..10).map(String::from);
    link
}

/// Operations the trail records as failed in the last 24 hours, newest first; before them
/// the changes whose outcome is not known (an answer lost, or no outcome recorded).
pub(super) async fn failures(c: &Console) -> Section {
    let since = rfc3339(time::OffsetDateTime::now_utc() - time::Duration::days(1));
    let mut section = Section::default();
    let unknown = Query {
        status: Some(audit::Status::Unknown.as_str().into()),
        from_time: Some(since.clone()),
        limit: 1000,
        ..Query::default()
    };
    for r in c.audit().records(&unknown).await.unwrap_or_default() {
        section.checked += 1;
        let mut i = AttentionItem::new(
            K::Failure,
            S::Warning,
            text!(
                "overview.items.unknown_outcome",
                "{{action}}: the HSM disconnected during the call and the outcome is not known (record {{seq}}). Check the token.",
                action = r.event.action,
                seq = r.seq
            ),
            audit_link(&r),
        )
        .subject(&r.event.action);
        i.at = Some(r.event.timestamp.clone());
        section.items.push(i);
    }
    for r in unanswered_requests(c, &since).await {
        section.checked += 1;
        let action = r.event.action.trim_end_matches(".request").to_string();
        let mut i = AttentionItem::new(
            K::Failure,
            S::Warning,
            text!(
                "overview.items.unanswered_request",
                "{{action}} has no outcome in the trail (requested in record {{seq}}): unless it is still running, it was interrupted. Check the token.",
                action = action,
                seq = r.seq
            ),
            audit_link(&r),
        )
        .subject(&action);
        i.at = Some(r.event.timestamp.clone());
        section.items.push(i);
    }
    let newest = Query {
        status: Some("failure".into()),
        from_time: Some(since.clone()),
        limit: FAILURES_SHOWN as i64,
        ..Query::default()
    };
    let Ok(records) = c.audit().records(&newest).await else {
        return section;
    };
    // Counted over the whole day, however many, by the store's own count of failures per
    // day (from `since` on): no record is read for it.
    let count = c
        .audit()
        .store()
        .daily_counts(c.audit().log_id(), &since)
        .await
        .map(|days| days.iter().map(|d| d.failures).sum::<i64>());
    section.checked += count.map_or(records.len() as u32, |n| n as u32);
    for r in records {
        let error = r.event.error_code.clone().unwrap_or_default();
        let link = audit_link(&r);
        let mut i = AttentionItem::new(
            K::Failure,
            S::Warning,
            text!(
                "overview.items.failed_operation",
                "{{action}} failed ({{error}}).",
                action = r.event.action,
                error = error
            ),
            link,
        )
        .subject(&r.event.action);
        i.at = Some(r.event.timestamp.clone());
        section.items.push(i);
    }
    section
}
