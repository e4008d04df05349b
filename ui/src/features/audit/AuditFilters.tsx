// The filters of the audit records: text, action, actor, a date range, status; and the
// query a page of records is read with under them.
import { useTranslation } from "react-i18next";
import type { Query } from "../../bindings";

export interface RecordFilter {
  text: string;
  action: string;
  actor: string;
  /// Dates (YYYY-MM-DD) in the window's time zone; empty: no bound.
  from: string;
  to: string;
  status: string;
}

/// A date's start (or, for `end`, its last millisecond) as an ISO time; null when empty or invalid.
export function toIso(local: string, end: boolean): string | null {
  if (!local) return null;
  const d = new Date(local);
  if (Number.isNaN(d.getTime())) return null;
  if (end && local.length <= 10) d.setHours(23, 59, 59, 999);
  return d.toISOString();
}

export function isFiltered(f: RecordFilter): boolean {
  return !!(f.action || f.status || f.text || f.actor || f.from || f.to);
}

/// The query for a page of `limit` records before `before` (null: the newest), newest first.
export function recordQuery(f: RecordFilter, before: number | null, limit: number): Query {
  return {
    before_seq: before,
    after_seq: null,
    limit,
    from_time: toIso(f.from, false),
    to_time: toIso(f.to, true),
    actor: f.actor.trim() || null,
    action: f.action || null,
    status: f.status || null,
    resource: null,
    text: f.text.trim() || null,
    ascending: false,
  };
}

export function AuditFilters({ filter, onChange }: { filter: RecordFilter; onChange: (f: RecordFilter) => void }) {
  const { t } = useTranslation();
  const set = (change: Partial<RecordFilter>) => onChange({ ...filter, ...change });
  return (
    <div className="filters">
      <input
        type="search"
        placeholder={t("audit.search_placeholder")}
        value={filter.text}
        onChange={(e) => set({ text: e.target.value })}
        aria-label={t("audit.search_label")}
        data-testid="audit-search"
      />
      <input
        type="text"
        placeholder={t("audit.action_placeholder")}
        value={filter.action}
        onChange={(e) => set({ action: e.target.value })}
        aria-label={t("audit.action_label")}
      />
      <input
        type="text"
        placeholder={t("audit.actor_label")}
        value={filter.actor}
        onChange={(e) => set({ actor: e.target.value })}
        aria-label={t("audit.actor_label")}
      />
      <label className="inline-form small">
        {t("audit.from")}{" "}
        <input
          type="date"
          value={filter.from}
          onChange={(e) => set({ from: e.target.value })}
          aria-label={t("audit.from_label")}
          data-testid="audit-from"
        />
      </label>
      <label className="inline-form small">
        {t("audit.to")}{" "}
        <input type="date" value={filter.to} onChange={(e) => set({ to: e.target.value })} aria-label={t("audit.to_label")} />
      </label>
      <select value={filter.status} onChange={(e) => set({ status: e.target.value })} aria-label={t("audit.status_label")}>
        <option value="">{t("audit.any_status")}</option>
        <option value="success">{t("audit.status_success")}</option>
        <option value="failure">{t("audit.status_failure")}</option>
        <option value="warning">{t("audit.status_warning")}</option>
        <option value="unknown">{t("audit.status_unknown")}</option>
      </select>
    </div>
  );
}
