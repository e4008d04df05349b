//! Keys running out and certificates expiring, on the partitions that are logged in.

use p11::sys::*;
use p11::Template;

use super::{
    AttentionItem, AttentionKind as K, Link, LinkView, PartitionCard, Section, Severity as S,
};
use crate::observe::health::{HssKeyView, HssStatus};
use crate::observe::usage::UsageKeyView;
use crate::{text, Console};

/// A key or certificate with at most this many days left is a warning…
pub const WARNING_DAYS: f64 = 30.0;
/// …and with at most this many, critical.
pub const CRITICAL_DAYS: f64 = 7.0;

fn by_days(days: Option<f64>) -> Option<S> {
    match days {
        Some(d) if d <= CRITICAL_DAYS => Some(S::Critical),
        Some(d) if d <= WARNING_DAYS => Some(S::Warning),
        _ => None,
    }
}

fn not_checked(cards: &[PartitionCard]) -> Vec<String> {
    cards
        .iter()
        .filter(|c| c.login.is_none())
        .map(|c| c.label.clone())
        .collect()
}

/// Days until an HSS key runs out at its burn rate (30-day, else 7- or 90-day).
pub fn hss_days_left(k: &HssKeyView) -> Option<f64> {
    let rate = [k.per_day_30, k.per_day_7, k.per_day_90]
        .into_iter()
        .find(|r| *r > 0.0)?;
    Some(k.remaining? as f64 / rate)
}

/// Days until a usage-limited key runs out at its burn rate (as [`hss_days_left`]).
pub fn usage_days_left(k: &UsageKeyView) -> Option<f64> {
    let rate = [k.per_day_30, k.per_day_7, k.per_day_90]
        .into_iter()
        .find(|r| *r > 0.0)?;
    Some(k.left as f64 / rate)
}

fn by_status(status: HssStatus) -> Option<S> {
    match status {
        HssStatus::Exhausted | HssStatus::Critical => Some(S::Critical),
        HssStatus::Warning => Some(S::Warning),
        HssStatus::Ok => None,
    }
}

/// HSS keys and usage-limited keys (Luna) that run out soon, are below the settings'
/// thresholds, or (HSS) whose counter disagrees with the trail.
pub(super) async fn keys_running_out(c: &Console, cards: &[PartitionCard]) -> Section {
    let mut section = Section {
        not_checked: not_checked(cards),
        ..Section::default()
    };
    let Ok((keys, limited)) = c.observe().counted_keys().await else {
        super::sort_items(&mut section.items);
        return section;
    };
    usage_limited(&limited, &mut section);
    section.checked += keys.len() as u32;
    for k in &keys {
        let days = hss_days_left(k);
        let by_status = by_status(k.status);
        let link = Link::to(LinkView::Hss)
            .partition(&k.partition_id)
            .search(&k.id_hex);
        if let Some(severity) = by_status.max(by_days(days)) {
            let message = match (k.status, days) {
                (HssStatus::Exhausted, _) => text!(
                    "overview.items.hss_exhausted",
                    "{{label}} has no signatures left.",
                    label = k.label
                ),
                (_, Some(d)) => text!(
                    "overview.items.hss_days_left",
                    "{{label}}: {{remaining}} signatures left, about {{days}} days at the current rate.",
                    label = k.label,
                    remaining = k.remaining.unwrap_or(0),
                    days = format!("{d:.0}")
                ),
                _ => text!(
                    "overview.items.hss_low",
                    "{{label}}: {{remaining}} of {{total}} signatures left.",
                    label = k.label,
                    remaining = k.remaining.unwrap_or(0),
                    total = k.capacity
                ),
            };
            let mut i = AttentionItem::new(K::HssKey, severity, message, link.clone())
                .on(&k.partition_id, &k.partition_label)
                .subject(&k.label);
            i.days_left = days;
            i.remaining = k.remaining;
            i.total = Some(k.capacity.clone());
            i.at = k.projected_exhaustion.clone();
            section.items.push(i);
        }
        if let Some(m) = &k.mismatch_text {
            section.items.push(
                AttentionItem::new(
                    K::HssKey,
                    S::Critical,
                    text!(
                        "overview.items.hss_mismatch",
                        "{{label}}: the token's counter and the audit trail disagree. {{detail}}",
                        label = k.label,
                        detail = m.text
                    )
                    .nest("detail", m),
                    link,
                )
                .on(&k.partition_id, &k.partition_label)
                .subject(&k.label),
            );
        }
    }
    super::sort_items(&mut section.items);
    section
}

/// Keys with a usage limit (Luna) that run out within [`WARNING_DAYS`] at their burn rate
/// or are below the HSS thresholds of the settings; each leads to the key in the Keys view,
/// where its limit is raised.
fn usage_limited(keys: &[UsageKeyView], section: &mut Section) {
    section.checked += keys.len() as u32;
    for k in keys {
        let days = usage_days_left(k);
        let Some(severity) = by_status(k.status).max(by_days(days)) else {
            continue;
        };
        let message = match (k.status, days) {
            (HssStatus::Exhausted, _) => text!(
                "overview.items.usage_exhausted",
                "{{label}} has used all {{limit}} uses its limit allows.",
                label = k.label,
                limit = k.limit
            ),
            (_, Some(d)) => text!(
                "overview.items.usage_days_left",
                "{{label}}: {{remaining}} of {{total}} uses left, about {{days}} days at the current rate.",
                label = k.label,
                remaining = k.left,
                total = k.limit,
                days = format!("{d:.0}")
            ),
            _ => text!(
                "overview.items.usage_low",
                "{{label}}: {{remaining}} of {{total}} uses left.",
                label = k.label,
                remaining = k.left,
                total = k.limit
            ),
        };
        let link = Link::to(LinkView::Keys)
            .partition(&k.partition_id)
            .search(&k.id_hex);
        let mut i = AttentionItem::new(K::UsageLimit, severity, message, link)
            .on(&k.partition_id, &k.partition_label)
            .subject(&k.label);
        i.days_left = days;
        i.remaining = Some(k.left);
        i.total = Some(k.limit.to_string());
        i.at = k.projected_exhaustion.clone();
        section.items.push(i);
    }
}

/// A certificate on a token.
struct TokenCertificate {
    label: String,
    id_hex: String,
    subject: String,
    /// Seconds since the epoch.
    not_after: i64,
}

fn read_certificates(s: &p11::Session) -> p11::Result<Vec<TokenCertificate>> {
    let handles = s.find_objects(
        &mut Template::new()
            .ulong(CKA_CLASS, CKO_CERTIFICATE)
            .ulong(CKA_CERTIFICATE_TYPE, CKC_X_509),
    )?;
    let mut out = Vec::new();
    for h in handles {
        let Some(der) = s.get_attribute(h, CKA_VALUE)?.bytes().map(<[u8]>::to_vec) else {
            continue;
        };
        let Ok((cert, _)) = signing::cert::public_key(&der) else {
            continue;
        };
        let tbs = cert.tbs_certificate();
        out.push(TokenCertificate {
            label: s.get_attribute(h, CKA_LABEL)?.as_text().unwrap_or_default(),
            id_hex: s
                .get_attribute(h, CKA_ID)?
                .bytes()
                .map(hex::encode)
                .unwrap_or_default(),
            subject: tbs.subject().to_string(),
            not_after: tbs.validity().not_after.to_unix_duration().as_secs() as i64,
        });
    }
    Ok(out)
}

/// Certificates that expire within [`WARNING_DAYS`] or have expired.
pub(super) async fn certificates(c: &Console, cards: &[PartitionCard]) -> Section {
    let mut section = Section {
        not_checked: not_checked(cards),
        ..Section::default()
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    for card in cards.iter().filter(|c| c.login.is_some()) {
        let Ok(p) = c.partition_ref(&card.partition_id).await else {
            continue;
        };
        let Ok(certs) = p
            .pool
            .run_idempotent_async("overview.certificates", read_certificates)
            .await
        else {
            continue;
        };
        section.checked += certs.len() as u32;
        for cert in certs {
            let days = (cert.not_after - now) as f64 / 86_400.0;
            let Some(severity) = by_days(Some(days)) else {
                continue;
            };
            let date = time::OffsetDateTime::from_unix_timestamp(cert.not_after)
                .map(|d| format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day()))
                .unwrap_or_default();
            let name = if cert.label.is_empty() {
                &cert.subject
            } else {
                &cert.label
            };
            let message = if days < 0.0 {
                text!(
                    "overview.items.certificate_expired",
                    "The certificate {{name}} expired on {{date}}.",
                    name = name,
                    date = date
                )
            } else {
                text!(
                    "overview.items.certificate_expires",
                    "The certificate {{name}} expires on {{date}}, in {{days}} days.",
                    name = name,
                    date = date,
                    days = format!("{:.0}", days.floor())
                )
            };
            let mut i = AttentionItem::new(
                K::Certificate,
                severity,
                message,
                Link::to(LinkView::Keys)
                    .partition(&p.id)
                    .search(&cert.id_hex),
            )
            .on(&p.id, &p.label)
            .subject(name);
            i.days_left = Some(days);
            i.at = Some(date);
            section.items.push(i);
        }
    }
    super::sort_items(&mut section.items);
    section
}

/// Per logged-in partition, the keys the settings' post-quantum policy dates: past due
/// (critical), deprecated or due within a year (warning), named with the policy and how
/// much each signed over the last 90 days (the most used first).
pub(super) async fn post_quantum(c: &Console, cards: &mut [PartitionCard]) {
    let policy = c.settings().pqc_policy;
    for card in cards.iter_mut().filter(|c| c.login.is_some()) {
        let Ok(r) = c
            .observe()
            .pqc_readiness(std::slice::from_ref(&card.partition_id), &policy)
            .await
        else {
            continue;
        };
        let Some(p) = r.partitions.first() else {
            continue;
        };
        let named = |want: &[hsmc_pqc::Status]| -> Vec<String> {
            p.objects
                .iter()
                .filter(|o| want.contains(&o.verdict.status))
                .map(|o| {
                    format!(
                        "{} ({}; {})",
                        o.label, o.algorithm.name, o.evidence.uses_90_days
                    )
                })
                .collect()
        };
        use hsmc_pqc::Status as St;
        let past = named(&[St::PastDue]);
        let soon = named(&[St::Deprecated, St::DueWithinAYear]);
        // The readiness view lists the keys with their successors and evidence of use.
        let link = Link::to(LinkView::Pqc).partition(&card.partition_id);
        if !past.is_empty() {
            card.items.push(
                AttentionItem::new(
                    K::Pqc,
                    S::Critical,
                    text!(
                        "overview.pqc_past_due",
                        "{{n}} key(s) disallowed under {{policy}} (each with its signatures over the last 90 days): {{keys}}. Replace them (the PQC readiness view and hsmc pqc name a successor).",
                        n = past.len(),
                        policy = &r.policy,
                        keys = past.join(", ")
                    ),
                    link.clone(),
                )
                .on(&card.partition_id, &card.label),
            );
        }
        if !soon.is_empty() {
            card.items.push(
                AttentionItem::new(
                    K::Pqc,
                    S::Warning,
                    text!(
                        "overview.pqc_due_soon",
                        "{{n}} key(s) deprecated, or disallowed within a year, under {{policy}} (each with its signatures over the last 90 days): {{keys}}.",
                        n = soon.len(),
                        policy = &r.policy,
                        keys = soon.join(", ")
                    ),
                    link,
                )
                .on(&card.partition_id, &card.label),
            );
        }
    }
}
