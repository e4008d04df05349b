// The Overview's card of one partition: its token, PINs, keys, HSS keys left, and what needs
// attention there.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { AttentionItem, PartitionCard, PinState, Severity } from "../../bindings";
import { Badge } from "../../components";
import { textOf, useFormat } from "../../i18n";
import { LoginDialog } from "../connections/LoginDialog";
import { roleNames } from "../credentials/roles";
import { useJumps, useNavigate, usePartitionActions } from "../../state";

/// Following an item: to the view (and partition, key search or records) it names.
/// Follow an item's link: select its partition, then open the view with what to show there.
function useFollow() {
  const navigate = useNavigate();
  const { selectPartition } = usePartitionActions();
  const { showKeys, showAuditRecords } = useJumps();
  return (item: AttentionItem) => {
    const l = item.link;
    if (l.partition_id) selectPartition(l.partition_id);
    if (l.view === "keys" && l.search) showKeys(l.search);
    else if (l.view === "audit" && (l.day || l.seq !== null)) showAuditRecords({ day: l.day, seq: l.seq });
    else navigate(l.view);
  };
}

export const TONE: Record<Severity, "info" | "warn" | "bad"> = { info: "info", warning: "warn", critical: "bad" };

export function SeverityBadge({ s }: { s: Severity }) {
  const { t } = useTranslation();
  return <Badge tone={TONE[s]}>{t(`overview.severity_${s}`)}</Badge>;
}

export function Item({ item, showPartition }: { item: AttentionItem; showPartition: boolean }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const follow = useFollow();
  return (
    <li className="attention-item" data-testid="attention-item" data-kind={item.kind} data-severity={item.severity}>
      <SeverityBadge s={item.severity} />
      <span className="grow">
        {textOf(item.message)}
        {(showPartition && item.partition_label) || item.at ? (
          <div className="muted small">
            {[showPartition ? item.partition_label : null, item.kind === "failure" && item.at ? fmt.dateTime(item.at) : null]
              .filter(Boolean)
              .join(" · ")}
          </div>
        ) : null}
      </span>
      <button onClick={() => follow(item)} data-testid="attention-open" title={t(`overview.open_${item.link.view}`)}>
        {t("overview.open")}
      </button>
    </li>
  );
}

export function pinBadges(
  t: (
    k: "overview.pin_locked" | "overview.pin_final_try" | "overview.pin_count_low" | "overview.pin_to_be_changed" | "overview.pin_ok",
    o: { who: string },
  ) => string,
  who: string,
  p: PinState,
) {
  const out: { tone: "ok" | "warn" | "bad"; text: string }[] = [];
  if (p.locked) out.push({ tone: "bad", text: t("overview.pin_locked", { who }) });
  else if (p.final_try) out.push({ tone: "bad", text: t("overview.pin_final_try", { who }) });
  else if (p.count_low) out.push({ tone: "warn", text: t("overview.pin_count_low", { who }) });
  if (p.to_be_changed) out.push({ tone: "warn", text: t("overview.pin_to_be_changed", { who }) });
  return out;
}

export function Card({ card }: { card: PartitionCard }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const [login, setLogin] = useState(false);
  const pins = [...pinBadges(t, t("overview.user"), card.user_pin), ...pinBadges(t, t("overview.so"), card.so_pin)];
  const breakerTone = card.pool.breaker === "closed" ? "ok" : card.pool.breaker === "open" ? "bad" : "warn";
  return (
    <section className="card" data-testid="partition-card" data-partition={card.partition_id}>
      <header className="card-header">
        <div>
          <h2>{card.label}</h2>
          <div className="muted small">
            {t("common.serial", { serial: card.serial })}
            {card.model ? ` · ${card.model}` : ""} · {t("overview.slot", { slot: card.slot_id })}
          </div>
        </div>
        {card.login ? (
          <Badge tone="ok">
            {card.login === "so"
              ? t("common.so_logged_in")
              : card.login === "user"
                ? t("common.user_logged_in")
                : t("app.role_logged_in", { role: roleNames()[card.login] })}
          </Badge>
        ) : (
          <button className="primary" onClick={() => setLogin(true)} data-testid="card-login">
            {t("overview.log_in")}
          </button>
        )}
      </header>
      <div className="badge-row">
        {card.builtin && <Badge tone="info">{t("overview.emulator")}</Badge>}
        {card.family === "luna" && <Badge>Luna</Badge>}
        {card.holds_audit_key && <Badge tone="info">{t("overview.holds_audit_key")}</Badge>}
        {pins.length === 0 ? (
          <Badge tone="ok">{t("overview.pin_ok")}</Badge>
        ) : (
          pins.map((p) => (
            <Badge key={p.text} tone={p.tone}>
              {p.text}
            </Badge>
          ))
        )}
      </div>
      <dl className="info-grid">
        <div>
          <dt>{t("overview.load")}</dt>
          <dd data-testid="card-load">
            {card.load
              ? card.load.busy_percent === null
                ? t("overview.load_measuring")
                : t("overview.load_value", {
                    busy: fmt.percent(card.load.busy_percent),
                    rate: fmt.number(card.load.commands_per_second ?? 0, 1),
                  })
              : t("overview.load_not_offered")}
          </dd>
        </div>
        <div>
          <dt>{t("overview.pool")}</dt>
          <dd>
            {t("overview.pool_value", { open: card.pool.open, size: card.pool.size, in_use: card.pool.in_use })}{" "}
            <Badge tone={breakerTone}>{t(`overview.breaker_${card.pool.breaker}`)}</Badge>
          </dd>
        </div>
        {card.ha.map((h) => (
          <div key={`${h.partition_id}-${h.role}`} data-testid="card-ha" data-role={h.role} data-healthy={h.healthy}>
            <dt>{t("overview.ha")}</dt>
            <dd>
              <Badge tone={h.healthy ? "ok" : "bad"}>
                {h.role === "member" && h.position !== null
                  ? t("overview.ha_member", { position: h.position, group: h.group, online: h.members_online, total: h.members_total })
                  : t("overview.ha_value", { group: h.group, online: h.members_online, total: h.members_total })}
              </Badge>
              <div className="muted small" data-testid="card-ha-drift">
                {h.drift_summary
                  ? t("overview.ha_last_check", { at: fmt.dateTime(h.drift_checked_at ?? ""), summary: textOf(h.drift_summary) })
                  : t("overview.ha_never_checked")}
              </div>
            </dd>
          </div>
        ))}
      </dl>
      {card.items.length > 0 && (
        <ul className="attention-list">
          {card.items.map((i) => (
            <Item key={i.message.key + i.message.text} item={i} showPartition={false} />
          ))}
        </ul>
      )}
      {login && <LoginDialog partitionId={card.partition_id} label={card.label} onClose={() => setLogin(false)} />}
    </section>
  );
}
