//! What `status` shows: the partitions, then each list, then a verdict line. Words for
//! people follow `--lang`; JSON is the overview as the app receives it.

use console::i18n::{Lang, Text};
use console::overview::{AttentionItem, HaRole, Overview, PartitionCard, Section, Severity};
use console::views::{AuditKeyView, UserKind};
use console::{text, ApiResult};
use serde::Serialize;

use crate::render::{Page, Render};
use console::i18n::InLang;

/// `status` (exit 1 when anything is at warning or worse).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Status(pub Overview);

fn t(lang: Lang, x: Text) -> String {
    x.in_lang(lang)
}

fn severity(lang: Lang, s: Severity) -> String {
    match s {
        Severity::Info => t(lang, text!("cli.status.info", "note")),
        Severity::Warning => t(lang, text!("cli.status.warning", "WARNING")),
        Severity::Critical => t(lang, text!("cli.status.critical", "CRITICAL")),
    }
}

fn item(page: &mut Page, i: &AttentionItem) {
    let lang = page.lang();
    let on = i
        .partition_label
        .as_deref()
        .map(|l| format!(" [{l}]"))
        .unwrap_or_default();
    writeln!(
        page,
        "  {:<8}  {}{on}",
        severity(lang, i.severity),
        i.message.in_lang(lang)
    );
}

fn card(page: &mut Page, c: &PartitionCard) {
    let lang = page.lang();
    let login = match c.login {
        Some(UserKind::User) => t(lang, text!("cli.status.user_logged_in", "user logged in")),
        Some(UserKind::So) => t(lang, text!("cli.status.so_logged_in", "SO logged in")),
        Some(UserKind::CryptoUser) => t(
            lang,
            text!("cli.status.crypto_user_logged_in", "Crypto User logged in"),
        ),
        Some(UserKind::LimitedCryptoOfficer) => t(
            lang,
            text!(
                "cli.status.lco_logged_in",
                "Limited Crypto Officer logged in"
            ),
        ),
        None => t(lang, text!("cli.status.not_logged_in", "not logged in")),
    };
    let mut parts = vec![login];
    if let Some(l) = &c.load {
        if let Some(b) = l.busy_percent {
            parts.push(t(
                lang,
                text!(
                    "cli.status.busy",
                    "busy {{percent}} %",
                    percent = format!("{b:.0}")
                ),
            ));
        }
        if let Some(r) = l.commands_per_second {
            parts.push(t(
                lang,
                text!(
                    "cli.status.commands",
                    "{{rate}} commands/s",
                    rate = format!("{r:.1}")
                ),
            ));
        }
    }
    parts.push(t(
        lang,
        text!(
            "cli.status.pool",
            "sessions {{open}}/{{size}}, breaker {{breaker}}",
            open = c.pool.open,
            size = c.pool.size,
            breaker = hsm::wire::wire_name(&c.pool.breaker)
        ),
    ));
    for ha in &c.ha {
        let mut s = match (ha.role, ha.position) {
            (HaRole::Member, Some(position)) => t(
                lang,
                text!(
                    "cli.status.ha_member",
                    "member {{position}} of HA group {{group}}, {{online}}/{{total}} members online",
                    position = position,
                    group = ha.group,
                    online = ha.members_online,
                    total = ha.members_total
                ),
            ),
            _ => t(
                lang,
                text!(
                    "cli.status.ha_group",
                    "HA group {{group}}, {{online}}/{{total}} members online",
                    group = ha.group,
                    online = ha.members_online,
                    total = ha.members_total
                ),
            ),
        };
        if let Some(d) = &ha.drift_summary {
            s.push_str(&t(
                lang,
                text!(
                    "cli.status.ha_last_check",
                    ", last check: {{summary}}",
                    summary = d.text
                )
                .nest("summary", d),
            ));
        }
        parts.push(s);
    }
    writeln!(
        page,
        "{} (serial {}) — {}",
        c.label,
        c.serial,
        parts.join(" · ")
    );
    for i in &c.items {
        item(page, i);
    }
}

fn section(page: &mut Page, title: Text, s: &Section, nothing: Text) {
    let lang = page.lang();
    writeln!(page, "\n{} ({})", title.in_lang(lang), s.checked);
    for i in &s.items {
        item(page, i);
    }
    if s.items.is_empty() {
        writeln!(page, "  {}", nothing.in_lang(lang));
    }
    if !s.not_checked.is_empty() {
        writeln!(
            page,
            "  {}",
            t(
                lang,
                text!(
                    "cli.status.not_checked",
                    "not looked at (not logged in): {{partitions}}",
                    partitions = s.not_checked.join(", ")
                )
            )
        );
    }
}

impl Render for Status {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let o = &self.0;
        let lang = page.lang();
        writeln!(
            page,
            "{}",
            t(lang, text!("cli.status.partitions", "Partitions"))
        );
        for i in &o.module_items {
            item(page, i);
        }
        for c in &o.partitions {
            card(page, c);
        }
        section(
            page,
            text!("cli.status.keys", "Keys running out"),
            &o.keys,
            text!("cli.status.keys_fine", "none runs out within 30 days"),
        );
        section(
            page,
            text!("cli.status.certificates", "Certificates"),
            &o.certificates,
            text!(
                "cli.status.certificates_fine",
                "none expires within 30 days"
            ),
        );
        let a = &o.audit;
        let key = match &a.key {
            Some(AuditKeyView::Unlocked { .. }) => {
                t(lang, text!("cli.status.audit_unlocked", "key unlocked"))
            }
            Some(AuditKeyView::Locked { .. }) => {
                t(lang, text!("cli.status.audit_locked", "key locked"))
            }
            Some(AuditKeyView::NoKeyYet) => t(lang, text!("cli.status.audit_no_key", "no key yet")),
            None => t(lang, text!("cli.status.audit_unreadable", "unreadable")),
        };
        let verified = match &a.last_verification {
            Some(v) if v.intact => t(
                lang,
                text!("cli.status.verified", "intact at {{at}}", at = v.at),
            ),
            Some(v) => t(
                lang,
                text!(
                    "cli.status.broken",
                    "broken at record {{seq}} ({{at}})",
                    seq = v.first_bad_seq.unwrap_or(0),
                    at = v.at
                ),
            ),
            None => t(lang, text!("cli.status.never_verified", "not verified")),
        };
        writeln!(
            page,
            "\n{} — {}",
            t(lang, text!("cli.status.audit", "Audit trail")),
            t(
                lang,
                text!(
                    "cli.status.audit_line",
                    "{{records}} records, {{key}}, {{verified}}",
                    records = a.records,
                    key = key,
                    verified = verified
                )
            )
        );
        for i in &a.items {
            item(page, i);
        }
        section(
            page,
            text!("cli.status.failures", "Failed operations, last 24 h"),
            &o.failures,
            text!("cli.status.failures_none", "none"),
        );
        let verdict = if o.attention == 1 {
            text!("cli.status.attention_single", "1 item needs attention.")
        } else if o.needs_attention() {
            text!(
                "cli.status.attention",
                "{{n}} items need attention.",
                n = o.attention
            )
        } else {
            text!("cli.status.all_well", "Nothing needs attention.")
        };
        writeln!(page, "\n{}", verdict.in_lang(lang));
        if o.needs_attention() && a.last_verification.is_none() && a.records > 0 {
            // A monitoring job's first red on a new partition: say why, and what clears it.
            let why = text!(
                "cli.status.never_verified_exit",
                "Exit status 1: this audit trail has never been verified (a new partition's never has). Run `hsmc audit verify` once; it clears this item."
            );
            writeln!(page, "{}", why.in_lang(lang));
        }
        Ok(())
    }

    fn json(&self, page: &mut Page) {
        page.document(&self.0);
    }

    fn exit_code(&self) -> u8 {
        u8::from(self.0.needs_attention())
    }
}
