// Luna's per-key usage limits: "N of M uses left" on a key (with a dialog to set or raise
// the limit — Luna allows the crypto officer and the SO), and every limited key with its
// burn rate and projected exhaustion, as the HSS view forecasts HSS keys.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { ObjectSummary } from "../../bindings";
import { Badge, Dialog, ErrorBox, Field } from "../../components";
import { useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useAudit, useSettings, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { LeftChart } from "./LeftChart";

const TONE: Record<string, "ok" | "warn" | "bad"> = { ok: "ok", warning: "warn", critical: "bad", exhausted: "bad" };

function LimitDialog({
  partitionId,
  summary,
  onClose,
  onSet,
}: {
  partitionId: string;
  summary: ObjectSummary;
  onClose: () => void;
  onSet: () => void;
}) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const toast = useToast();
  const [limit, setLimit] = useState(String(Math.max(summary.usage_limit ?? 0, (summary.usage_count ?? 0) + 1, 1)));
  const {
    run: save,
    loading,
    error,
  } = useCommand(async () => {
    const k = await api.setUsageLimit(partitionId, summary.handle, Number(limit));
    const set = k.usage_limit ?? 0;
    toast("ok", t("usage.limit_set", { label: k.label, count: set, left: fmt.number(set - (k.usage_count ?? 0)), limit: fmt.number(set) }));
    onSet();
    onClose();
  });
  return (
    <Dialog
      title={t("usage.dialog_title", { label: summary.label })}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>{t("common.cancel")}</button>
          <button className="primary" onClick={() => void save()} disabled={loading || !/^\d+$/.test(limit)} data-testid="usage-limit-save">
            {loading ? t("usage.setting") : t("usage.set_limit")}
          </button>
        </>
      }
    >
      <Field
        label={t("usage.uses_in_all")}
        hint={t("usage.limit_hint", { max: fmt.number(4294967295), used: fmt.number(summary.usage_count ?? 0) })}
      >
        <input type="number" min={1} value={limit} onChange={(e) => setLimit(e.target.value)} data-testid="usage-limit-input" />
      </Field>
      {error && <ErrorBox error={error} title={t("usage.not_set")} />}
    </Dialog>
  );
}

/// A key's usage line in the Keys detail pane (Luna modules only).
export function UsageLine({ partitionId, summary, onChanged }: { partitionId: string; summary: ObjectSummary; onChanged: () => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const [open, setOpen] = useState(false);
  const isKey = summary.class.endsWith("_KEY");
  if (!isKey) return null;
  const limited = summary.usage_limit !== null;
  const left = limited ? Math.max(0, (summary.usage_limit ?? 0) - (summary.usage_count ?? 0)) : null;
  return (
    <p data-testid="usage-line">
      {limited ? (
        <Badge tone={left === 0 ? "bad" : "info"}>
          {t("usage.left", { count: summary.usage_limit ?? 0, left: fmt.number(left), limit: fmt.number(summary.usage_limit) })}
        </Badge>
      ) : (
        <span className="muted small">{t("usage.no_limit")}</span>
      )}{" "}
      <button onClick={() => setOpen(true)} data-testid="usage-limit-button">
        {limited ? t("usage.raise_limit") : t("usage.usage_limit")}
      </button>
      {open && <LimitDialog partitionId={partitionId} summary={summary} onClose={() => setOpen(false)} onSet={onChanged} />}
    </p>
  );
}

/// Every key with a usage limit on the logged-in partitions.
export function UsageLimitedKeys() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { auditTick } = useAudit();
  const { settings } = useSettings();
  const { run: load, data: keys, error } = useCommand(api.usageKeys, { keepError: true });
  useEffect(() => {
    void load();
  }, [load, auditTick]);
  if (error) return <ErrorBox error={error} />;
  if (!keys || keys.length === 0) return null;
  return (
    <section data-testid="usage-keys">
      <h2>{t("usage.title")}</h2>
      <p className="muted">{t("usage.intro")}</p>
      <table className="table" data-testid="usage-table">
        <thead>
          <tr>
            <th>{t("hss.col_key")}</th>
            <th>{t("audit.col_algorithm")}</th>
            <th>{t("usage.col_left")}</th>
            <th>{t("hss.col_used")}</th>
            <th>{t("hss.col_per_day")}</th>
            <th>{t("hss.col_runs_out")}</th>
            <th>{t("hss.col_status")}</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={`${k.partition_id}-${k.handle}`} data-testid="usage-row" data-label={k.label}>
              <td>
                <strong>{k.label}</strong>
                <div className="muted small">{t("hss.key_where", { partition: k.partition_label, id: k.id_hex })}</div>
              </td>
              <td>{k.algorithm}</td>
              <td>{t("usage.left", { count: k.limit, left: fmt.number(k.left), limit: fmt.number(k.limit) })}</td>
              <td>{fmt.percent(k.used_percent)}</td>
              <td>
                {fmt.number(k.per_day_7, 2)} / {fmt.number(k.per_day_30, 2)} / {fmt.number(k.per_day_90, 2)}
              </td>
              <td>{k.projected_exhaustion ?? <span className="muted">{t("usage.no_uses")}</span>}</td>
              <td>
                <Badge tone={TONE[k.status] ?? "ok"}>{t(`hss.status_${k.status}`)}</Badge>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {keys
        .filter((k) => k.history.length > 0)
        .map((k) => (
          <section className="card chart" key={`c-${k.partition_id}-${k.handle}`}>
            <LeftChart
              testId="usage-chart"
              exportName={`usage-${k.label}`}
              title={t("usage.chart_title", { label: k.label })}
              yLabel={t("usage.chart_y")}
              total={k.limit}
              history={k.history}
              projected={k.projected_exhaustion}
              warning={settings?.hss_warning_percent ?? 10}
              critical={settings?.hss_critical_percent ?? 1}
            />
          </section>
        ))}
    </section>
  );
}
