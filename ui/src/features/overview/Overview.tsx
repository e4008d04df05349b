// The officer's first view: "is anything wrong?" for every connected partition. A card per
// partition (login, PIN state, load, pool and breaker, HA), then what needs attention across
// them (keys running out, certificates expiring, the audit trail, failed operations of the
// last 24 h), each item leading to the view that deals with it. All of it is one backend
// value (console::overview), refreshed on the polling interval and on the backend's events.
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import type { Overview, Section } from "../../bindings";
import { EmptyState, ErrorBox } from "../../components";
import { useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useAudit, useNavigate, useSettings } from "../../state";
import { useConsoleEvent } from "../../state/events";
import { useCommand } from "../../useCommand";
import { Item, Card } from "./PartitionCard";

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
