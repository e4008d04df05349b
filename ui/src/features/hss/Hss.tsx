// Every HSS key across the logged-in partitions: what is left, how fast it goes, when it
// runs out, and whether the token's counter agrees with the audit trail; per key a chart of
// the signatures left over time (from the trail's signing records), the projected line to
// exhaustion and the warning and critical thresholds of the settings.
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import type { HssKeyView } from "../../bindings";
import { Badge, EmptyState, ErrorBox } from "../../components";
import { textOf, useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useAudit, useNavigate, useSettings } from "../../state";
import { useCommand } from "../../useCommand";
import { LeftChart } from "../usage/LeftChart";
import { UsageLimitedKeys } from "../usage/Usage";

const TONE: Record<string, "ok" | "warn" | "bad"> = { ok: "ok", warning: "warn", critical: "bad", exhausted: "bad" };

/// Signatures left over time, the projection to zero, the thresholds.
function KeyChart({ k, warning, critical }: { k: HssKeyView; warning: number; critical: number }) {
  const { t } = useTranslation();
  return (
    <LeftChart
      testId="hss-chart"
      exportName={`hss-${k.label}`}
      title={t("hss.chart_title", { label: k.label })}
      yLabel={t("hss.chart_y")}
      total={Number(k.capacity || "0")}
      history={k.history}
      projected={k.projected_exhaustion}
      warning={warning}
      critical={critical}
    />
  );
}

export function HssView() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { auditTick } = useAudit();
  const { settings } = useSettings();
  const navigate = useNavigate();
  const { run: loadKeys, data: keys, error } = useCommand(api.hssKeys, { keepError: true });
  useEffect(() => {
    void loadKeys();
  }, [loadKeys, auditTick]);
  const warning = settings?.hss_warning_percent ?? 10;
  const critical = settings?.hss_critical_percent ?? 1;
  return (
    <div className="view">
      <header className="view-header">
        <h1>{t("hss.title")}</h1>
      </header>
      <p className="muted">{t("hss.intro", { warning, critical })}</p>
      {error && <ErrorBox error={error} />}
      {keys
        ?.filter((k) => k.mismatch)
        .map((k) => (
          <div className="error-box" role="alert" key={`m-${k.id_hex}`} data-testid="hss-mismatch">
            <strong>{t("hss.mismatch", { label: k.label })}</strong>
            <p>{k.mismatch_text ? textOf(k.mismatch_text) : k.mismatch}</p>
          </div>
        ))}
      {keys && keys.length === 0 ? (
        <EmptyState title={t("hss.none")} action={<button onClick={() => navigate("keys")}>{t("hss.go_to_keys")}</button>}>
          {t("hss.none_text")}
        </EmptyState>
      ) : (
        <table className="table" data-testid="hss-table">
          <thead>
            <tr>
              <th>{t("hss.col_key")}</th>
              <th>{t("hss.col_levels")}</th>
              <th>{t("hss.col_left")}</th>
              <th>{t("hss.col_used")}</th>
              <th>{t("hss.col_per_day")}</th>
              <th>{t("hss.col_runs_out")}</th>
              <th>{t("hss.col_status")}</th>
            </tr>
          </thead>
          <tbody>
            {(keys ?? []).map((k) => (
              <tr key={`${k.partition_id}-${k.id_hex}`} data-testid="hss-row" data-label={k.label}>
                <td>
                  <strong>{k.label}</strong>
                  <div className="muted small">{t("hss.key_where", { partition: k.partition_label, id: k.id_hex })}</div>
                </td>
                <td>{k.algorithm}</td>
                <td>
                  {t("hss.left_of", {
                    left: k.remaining === null ? "?" : fmt.number(k.remaining),
                    total: fmt.number(BigInt(k.capacity || "0")),
                  })}
                  {k.audit_expected_remaining !== null && !k.mismatch && <div className="muted small">{t("hss.matches_trail")}</div>}
                </td>
                <td>
                  <div
                    className="gauge"
                    role="meter"
                    aria-valuemin={0}
                    aria-valuemax={100}
                    aria-valuenow={Math.round(k.used_percent)}
                    aria-label={t("hss.used_label", { label: k.label })}
                  >
                    <div className={`gauge-fill gauge-${TONE[k.status] ?? "ok"}`} style={{ width: `${Math.min(100, k.used_percent)}%` }} />
                  </div>
                  <span className="small">{fmt.percent(k.used_percent)}</span>
                </td>
                <td>
                  {fmt.number(k.per_day_7, 2)} / {fmt.number(k.per_day_30, 2)} / {fmt.number(k.per_day_90, 2)}
                </td>
                <td>{k.projected_exhaustion ?? <span className="muted">{t("hss.no_signatures_yet")}</span>}</td>
                <td>
                  <Badge tone={TONE[k.status] ?? "ok"}>{t(`hss.status_${k.status}`)}</Badge>
                  {k.mismatch && <Badge tone="bad">{t("hss.counter_mismatch")}</Badge>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(keys ?? [])
        .filter((k) => k.history.length > 0)
        .map((k) => (
          <section className="card chart" key={`c-${k.partition_id}-${k.id_hex}`}>
            <KeyChart k={k} warning={warning} critical={critical} />
          </section>
        ))}
      <UsageLimitedKeys />
    </div>
  );
}
