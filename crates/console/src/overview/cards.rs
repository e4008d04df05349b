//! A card per partition: what its token and pool say now, and what of that needs attention.

use hsm::BreakerState;

use super::{
    AttentionItem, AttentionKind as K, Link, LinkView, LoadView, PartitionCard, PinState,
    Severity as S,
};
use crate::core::i18n::Text;
use crate::core::partitions::Partition;
use crate::core::views::TokenView;
use crate::ha::HaGroupView;
use crate::observe::health::StatsSnapshot;
use crate::{text, Console};

/// Luna's busy share at or above this is "near its ceiling".
pub const BUSY_WARNING_PERCENT: f64 = 90.0;

/// Every partition's card, the modules that could not be listed, and how many modules
/// are loaded.
pub(super) async fn cards(c: &Console) -> (Vec<PartitionCard>, Vec<AttentionItem>, u32) {
    let connections = c.connections().await;
    let mut cards = Vec::new();
    let mut groups = Vec::new();
    let mut module_items = Vec::new();
    for conn in &connections {
        if let Some(e) = &conn.error {
            module_items.push(
                AttentionItem::new(
                    K::Module,
                    S::Critical,
                    text!(
                        "overview.items.module_unlisted",
                        "The module {{path}} cannot list its slots: {{error}}",
                        path = conn.module.path,
                        error = e.message
                    ),
                    Link::to(LinkView::Connections),
                )
                .subject(&conn.module.path),
            );
            continue;
        }
        for slot in &conn.slots {
            let Some(pid) = &slot.partition_id else {
                continue;
            };
            let Ok(p) = c.partition_ref(pid).await else {
                continue;
            };
            let (card, group) = card(c, &p, slot.token.as_ref()).await;
            cards.push(card);
            groups.extend(group);
        }
    }
    super::ha::attach(c, &mut cards, groups).await;
    if connections.is_empty() {
        module_items.push(AttentionItem::new(
            K::Module,
            S::Info,
            text!(
                "overview.items.no_module",
                "No PKCS#11 module is connected. Add one in Connections."
            ),
            Link::to(LinkView::Connections),
        ));
    }
    (cards, module_items, connections.len() as u32)
}

fn user_pin(t: &TokenView) -> PinState {
    PinState {
        count_low: t.user_pin_count_low,
        final_try: t.user_pin_final_try,
        locked: t.user_pin_locked,
        to_be_changed: t.user_pin_to_be_changed,
    }
}

fn so_pin(t: &TokenView) -> PinState {
    PinState {
        count_low: t.so_pin_count_low,
        final_try: t.so_pin_final_try,
        locked: t.so_pin_locked,
        to_be_changed: false,
    }
}

/// The card, and the HA group when the partition is one's virtual slot (from the same
/// statistics sample).
async fn card(
    c: &Console,
    p: &Partition,
    listed: Option<&TokenView>,
) -> (PartitionCard, Option<HaGroupView>) {
    let sample = c.stats(&p.id).await;
    let (token, load, pool) = match &sample {
        Ok(s) => (Some(s.token.clone()), load(s), s.pool.clone()),
        Err(_) => (listed.cloned(), None, p.pool.status()),
    };
    let mut card = PartitionCard {
        partition_id: p.id.clone(),
        module_id: p.module.id.clone(),
        module_path: p.module.path.display().to_string(),
        builtin: p.module.builtin,
        family: p.module.module.family().into(),
        slot_id: p.slot(),
        label: p.label.clone(),
        serial: p.serial.clone(),
        model: token.as_ref().map(|t| t.model.trim().to_string()),
        login: p.logged_in(),
        user_pin: token.as_ref().map(user_pin).unwrap_or_default(),
        so_pin: token.as_ref().map(so_pin).unwrap_or_default(),
        pool,
        load,
        ha: Vec::new(),
        holds_audit_key: p.holds_audit_key(),
        items: Vec::new(),
    };
    if let Err(e) = &sample {
        card.items.push(item(
            p,
            K::Token,
            S::Critical,
            text!(
                "overview.items.token_unreadable",
                "The token cannot be read: {{error}}",
                error = e.message
            ),
            LinkView::Partition,
        ));
    }
    card.items.extend(pin_items(p, K::UserPin, &card.user_pin));
    card.items.extend(pin_items(p, K::SoPin, &card.so_pin));
    card.items.extend(pool_items(p, &card.pool));
    card.items.extend(load_items(p, card.load.as_ref()));
    if card.login.is_none() {
        card.items.push(item(
            p,
            K::Login,
            S::Info,
            text!(
                "overview.items.not_logged_in",
                "Not logged in: log in to see its keys and certificates."
            ),
            LinkView::Connections,
        ));
    }
    super::sort_items(&mut card.items);
    let group = sample.ok().and_then(|s| s.ha);
    (card, group)
}

fn load(s: &StatsSnapshot) -> Option<LoadView> {
    s.luna.as_ref().map(|l| LoadView {
        busy_percent: l.busy_percent,
        commands_per_second: l.commands_per_second,
        firmware: l.firmware.clone(),
    })
}

fn item(p: &Partition, kind: K, severity: S, message: Text, view: LinkView) -> AttentionItem {
    AttentionItem::new(kind, severity, message, Link::to(view).partition(&p.id)).on(&p.id, &p.label)
}

/// A PIN's flags as items: locked and final try are critical, count low and "to be
/// changed" a warning.
pub(crate) fn pin_items(p: &Partition, kind: K, pin: &PinState) -> Vec<AttentionItem> {
    let so = kind == K::SoPin;
    let pick = |user: Text, so_text: Text| if so { so_text } else { user };
    let mut out = Vec::new();
    let mut add = |severity: S, message: Text| {
        out.push(item(p, kind, severity, message, LinkView::Connections));
    };
    if pin.locked {
        add(
            S::Critical,
            pick(
                text!(
                    "overview.items.user_pin_locked",
                    "The user PIN is locked: the security officer must unlock or reset it."
                ),
                text!(
                    "overview.items.so_pin_locked",
                    "The security officer PIN is locked."
                ),
            ),
        );
    } else if pin.final_try {
        add(
            S::Critical,
            pick(
                text!(
                    "overview.items.user_pin_final_try",
                    "One more wrong user PIN locks it."
                ),
                text!(
                    "overview.items.so_pin_final_try",
                    "One more wrong security officer PIN locks it."
                ),
            ),
        );
    } else if pin.count_low {
        add(
            S::Warning,
            pick(
                text!(
                    "overview.items.user_pin_count_low",
                    "A wrong user PIN was entered since the last successful login."
                ),
                text!(
                    "overview.items.so_pin_count_low",
                    "A wrong security officer PIN was entered since the last successful login."
                ),
            ),
        );
    }
    if pin.to_be_changed {
        add(
            S::Warning,
            pick(
                text!(
                    "overview.items.user_pin_to_be_changed",
                    "The user PIN must be changed before it can be used."
                ),
                text!(
                    "overview.items.so_pin_to_be_changed",
                    "The security officer PIN must be changed before it can be used."
                ),
            ),
        );
    }
    out
}

fn pool_items(p: &Partition, pool: &hsm::PoolStatus) -> Vec<AttentionItem> {
    match pool.breaker {
        BreakerState::Closed => vec![],
        BreakerState::Open => vec![item(
            p,
            K::Breaker,
            S::Critical,
            text!(
                "overview.items.breaker_open",
                "Calls to this HSM are paused: it failed repeatedly (circuit breaker open)."
            ),
            LinkView::Stats,
        )],
        BreakerState::HalfOpen => vec![item(
            p,
            K::Breaker,
            S::Warning,
            text!(
                "overview.items.breaker_half_open",
                "The HSM failed repeatedly; the console is trying it again (circuit breaker half-open)."
            ),
            LinkView::Stats,
        )],
    }
}

fn load_items(p: &Partition, load: Option<&LoadView>) -> Vec<AttentionItem> {
    match load.and_then(|l| l.busy_percent) {
        Some(b) if b >= BUSY_WARNING_PERCENT => vec![item(
            p,
            K::Load,
            S::Warning,
            text!(
                "overview.items.hsm_busy",
                "The HSM is {{percent}} % busy: near its ceiling.",
                percent = format!("{b:.0}")
            ),
            LinkView::Stats,
        )],
        _ => vec![],
    }
}
