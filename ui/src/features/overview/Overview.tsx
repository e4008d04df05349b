// The officer's first view: "is anything wrong?" for every connected partition. A card per
// partition (login, PIN state, load, pool and breaker, HA), then what needs attention across
// them (keys running out, certificates expiring, the audit trail, failed operations of the
// last 24 h), each item leading to the view that deals with it. All of it is one backend
// value (console::overview), refreshed on the polling interval and on the backend's events.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { AttentionItem, Overview, PartitionCard, PinState, Section, Severity } from "../../bindings";
import { Badge, EmptyState, ErrorBox } from "../../components";
import { textOf, useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useAudit, useJumps, useNavigate, usePartitionActions, useSettings } from "../../state";
import { useConsoleEvent } from "../../state/events";
import { useCommand } from "../../useCommand";
import { LoginDialog } from "../connections/Connections";
import { roleNames } from "../credentials/roles";

const TONE: Record<Severity, "info" | "warn" | "bad"> = { info: "info", warning: "warn", critical: "bad" };

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

function SeverityBadge({ s }: { s: Severity }) {
  const { t } = useTranslation();
  return <Badge tone={TONE[s]}>{t(`overview.severity_${s}`)}</Badge>;
}

function Item({ item, showPartition }: { item: AttentionItem; showPartition: boolean }) {
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

function pinBadges(
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

function Card({ card }: { card: PartitionCard }) {
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

/// One list across partitions, with what it looked at and an empty state that says what to do.
function List({ title, section, empty, testId }: { title: string; section: Section; empty: string; testId: string }) {
  const { t } = useTranslation();
  return (
    <section className="card" data-testid={testId}>
      <header className="card-header">
        <h2>{title}</h2>
        <span className="muted small">{t("overview.checked", { count: section.checked })}</span>
      </header>
      {section.items.length > 0 ? (
        <ul className="attention-list">
          {section.items.map((i, n) => (
            <Item key={`${n}-${i.message.text}`} item={i} showPartition />
          ))}
        </ul>
      ) : (
        <p className="muted" data-testid={`${testId}-empty`}>
          {empty}
        </p>
      )}
      {section.not_checked.length > 0 && (
        <p className="muted small" data-testid={`${testId}-not-checked`}>
          {t("overview.not_checked", { partitions: section.not_checked.join(", ") })}
        </p>
      )}
    </section>
  );
}

function AuditCard({ o }: { o: Overview }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const navigate = useNavigate();
  const a = o.audit;
  const v = a.last_verification;
  return (
    <section className="card" data-testid="overview-audit">
      <header className="card-header">
        <h2>{t("overview.audit")}</h2>
        <button onClick={() => navigate("audit")} title={t("overview.open_audit")}>
          {t("overview.open")}
        </button>
      </header>
      <p>
        {t("overview.audit_records", { count: a.records })}
        {" · "}
        {v
          ? v.intact
            ? t("overview.audit_verified", { at: fmt.dateTime(v.at) })
            : t("overview.audit_broken_at", { seq: v.first_bad_seq ?? 0, at: fmt.dateTime(v.at) })
          : t("overview.audit_not_verified")}
      </p>
      {a.items.length > 0 && (
        <ul className="attention-list">
          {a.items.map((i) => (
            <Item key={i.message.key} item={i} showPartition={false} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function OverviewView() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const navigate = useNavigate();
  const { settings } = useSettings();
  const { auditTick } = useAudit();
  const { run: load, data: o, error, loading } = useCommand(api.overview, { keepError: true });
  // Each refresh samples every partition's statistics: not more often than every 15 s.
  const every = Math.max(15, settings?.stats_poll_seconds ?? 5) * 1000;
  useEffect(() => {
    void load();
    const id = setInterval(() => {
      if (document.visibilityState === "visible") void load();
    }, every);
    return () => clearInterval(id);
  }, [load, every, auditTick]);
  useConsoleEvent((ev) => {
    if (ev.kind === "partition_changed" || ev.kind === "audit_key") void load();
  });

  const header = (
    <header className="view-header">
      <h1>{t("overview.title")}</h1>
      <div className="button-row">
        {o && <span className="muted small">{t("overview.as_of", { at: fmt.time(o.generated_at) })}</span>}
        <button onClick={() => void load()} disabled={loading} data-testid="overview-refresh">
          {t("overview.refresh")}
        </button>
      </div>
    </header>
  );
  if (!o) {
    return (
      <div className="view">
        {header}
        {error ? <ErrorBox error={error} title={t("overview.unavailable")} /> : <p className="muted">{t("overview.loading")}</p>}
      </div>
    );
  }
  const worst = o.worst === "critical" ? "critical" : o.attention > 0 ? "warning" : "ok";
  return (
    <div className="view overview-view">
      {header}
      {error && <ErrorBox error={error} title={t("overview.unavailable")} />}
      <div className={`overview-summary ${worst}`} data-testid="overview-summary" data-attention={o.attention} role="status">
        <strong>{o.attention > 0 ? t("overview.need_attention", { count: o.attention }) : t("overview.all_well")}</strong>
        <span className="small">{t("overview.partitions_count", { count: o.partitions.length })}</span>
      </div>
      {o.module_items.length > 0 && (
        <section className="card">
          <ul className="attention-list">
            {o.module_items.map((i) => (
              <Item key={i.message.text} item={i} showPartition={false} />
            ))}
          </ul>
        </section>
      )}
      {o.partitions.length === 0 ? (
        <EmptyState
          title={o.modules === 0 ? t("overview.no_module_title") : t("overview.no_token_title")}
          action={<button onClick={() => navigate("connections")}>{t("overview.add_module")}</button>}
        >
          {o.modules === 0 ? t("overview.no_module_text") : t("overview.no_token_text")}
        </EmptyState>
      ) : (
        <div className="partition-cards">
          {o.partitions.map((c) => (
            <Card key={c.partition_id} card={c} />
          ))}
        </div>
      )}
      <div className="attention-lists">
        <List title={t("overview.keys")} section={o.keys} empty={t("overview.keys_empty")} testId="overview-keys" />
        <List
          title={t("overview.certificates")}
          section={o.certificates}
          empty={t("overview.certificates_empty")}
          testId="overview-certificates"
        />
        <AuditCard o={o} />
        <List title={t("overview.failures")} section={o.failures} empty={t("overview.failures_empty")} testId="overview-failures" />
      </div>
    </div>
  );
}
