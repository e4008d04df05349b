// A probe run's report: latency per operation (charts and a table), the verdict.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { ProbeReport, SeriesPoint } from "../../bindings";
import { BarChart, LineChart } from "../../charts/Chart";
import { ErrorBox } from "../../components";
import { formatter, textOf, useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { HaProbeShares } from "../ha/HaBadges";

export function num(v: number, digits = 0) {
  return formatter().number(v, digits);
}

/// p50 and p99 over a run's time (the live chart and the report's).
export function LatencyChart({ title, points, testId }: { title: string; points: SeriesPoint[]; testId: string }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  return (
    <LineChart
      testId={testId}
      exportName={testId}
      spec={{
        title,
        x: { label: t("probes.chart_time"), unit: t("stats.unit_s"), format: (v) => fmt.number(v) },
        y: { label: t("probes.chart_latency"), format: (v) => fmt.latency(v) },
        series: [
          { name: "p50", points: points.map((p) => [p.t, p.p50_us]) },
          { name: "p99", points: points.map((p) => [p.t, p.p99_us]) },
        ],
      }}
    />
  );
}

export function ReportCharts({ report }: { report: ProbeReport }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const last = report.runs.at(-1);
  return (
    <div className="cards">
      {report.sweep.length > 0 && (
        <div className="chart">
          <LineChart
            testId="probe-chart-sweep"
            exportName={`${report.op_name}-sweep`}
            spec={{
              title: t("probes.chart_sweep", { op: report.op_name }),
              x: { label: t("probes.chart_workers"), format: (v) => fmt.number(v) },
              y: { label: t("probes.chart_throughput"), unit: t("probes.unit_ops"), format: (v) => fmt.number(v) },
              series: [{ name: t("probes.series_throughput"), points: report.runs.map((r) => [r.workers, r.throughput_per_s]) }],
            }}
          />
        </div>
      )}
      {last && (
        <div className="chart">
          <LatencyChart testId="probe-chart-latency" title={t("probes.chart_latency_title", { op: report.op_name })} points={last.series} />
        </div>
      )}
      {last && last.histogram.length > 0 && (
        <div className="chart">
          <BarChart
            testId="probe-chart-histogram"
            exportName={`${report.op_name}-histogram`}
            spec={{
              title: t("probes.chart_histogram", { op: report.op_name }),
              x: { label: t("probes.chart_latency"), format: (v) => fmt.latency(v) },
              y: { label: t("probes.chart_calls"), format: (v) => fmt.number(v) },
              bars: last.histogram.map(([upper, count]) => ({ label: `≤ ${fmt.latency(upper)}`, values: [count] })),
              names: [t("probes.chart_calls")],
              colors: [0],
            }}
          />
        </div>
      )}
    </div>
  );
}

export function ReportView({ report }: { report: ProbeReport }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const toast = useToast();
  const [target, setTarget] = useState("");
  const { run: planCapacity, data: plan } = useCommand(api.probeCapacity, { errorToast: t("probes.no_plan") });
  const best = report.runs.reduce((a, b) => (b.throughput_per_s > a.throughput_per_s ? b : a), report.runs[0]!);
  const { run: exp } = useCommand(
    async (kind: "json" | "csv") => {
      const text = kind === "json" ? JSON.stringify(report, null, 2) : await api.probeCsv(report.id);
      const p = await api.saveExport(`${report.op_name}-${report.id}.${kind}`, kind, { text });
      if (p) toast("ok", t("common.saved", { path: p }));
    },
    { errorToast: t("common.export_failed") },
  );
  return (
    <section className="card" data-testid="probe-report">
      <header className="card-header">
        <div>
          <h2>
            {report.op_name}{" "}
            <span className="muted">{t("probes.mechanism_payload", { mechanism: report.mechanism, bytes: report.payload_bytes })}</span>
          </h2>
          <div className="muted small">
            {t("probes.report_line", {
              module: report.module,
              firmware: report.firmware || "?",
              slot: report.slot,
              at: report.created_at,
              overhead: num(report.overhead_ns),
            })}
            {report.cancelled && ` · ${t("probes.cancelled")}`}
          </div>
        </div>
        <div className="button-row">
          <button onClick={() => void exp("json")}>JSON…</button>
          <button onClick={() => void exp("csv")}>CSV…</button>
        </div>
      </header>
      <table className="table compact" data-testid="probe-runs">
        <thead>
          <tr>
            <th>{t("probes.col_workers")}</th>
            <th>{t("probes.col_calls")}</th>
            <th>{t("probes.col_errors")}</th>
            <th>{t("probes.col_ops")}</th>
            <th>{t("probes.col_first")}</th>
            <th>{t("probes.col_mean")}</th>
            <th>±σ</th>
            <th>p50</th>
            <th>p90</th>
            <th>p95</th>
            <th>p99</th>
            <th>p99.9</th>
            <th>{t("probes.col_max")}</th>
            {report.sweep.length > 0 && <th>{t("probes.col_efficiency")}</th>}
            <th title={t("probes.col_console_cpu_hint")}>{t("probes.col_console_cpu")}</th>
          </tr>
        </thead>
        <tbody>
          {report.runs.map((r, i) => (
            <tr key={r.workers}>
              <td>{r.workers}</td>
              <td>{num(r.calls)}</td>
              <td>{r.errors}</td>
              <td>{num(r.throughput_per_s, 1)}</td>
              <td>{r.first_call_us !== null ? num(r.first_call_us) : "—"}</td>
              <td>{num(r.latency.mean_us)}</td>
              <td>{num(r.latency.stddev_us)}</td>
              <td>{num(r.latency.p50_us)}</td>
              <td>{num(r.latency.p90_us)}</td>
              <td>{num(r.latency.p95_us)}</td>
              <td>{num(r.latency.p99_us)}</td>
              <td>{num(r.latency.p999_us)}</td>
              <td>{num(r.latency.max_us)}</td>
              {report.sweep.length > 0 && <td>{num(100 * (report.sweep[i]?.efficiency ?? 0))} %</td>}
              <td>{r.client_cpu !== undefined && r.client_cpu !== null ? `${num(100 * r.client_cpu)} %` : "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {report.runs.some((r) => r.first_error) && (
        <ErrorBox
          error={{
            code: "HSM_ERROR",
            message: t("probes.some_failed", { error: report.runs.find((r) => r.first_error)?.first_error }),
            details: null,
            suggestion: null,
            pkcs11: null,
          }}
        />
      )}
      {report.verdict && (
        <p className="verdict-line" data-testid="probe-verdict">
          <strong>{report.verdict_text ? textOf(report.verdict_text) : report.verdict}</strong>
        </p>
      )}
      {report.ha && <HaProbeShares share={report.ha} />}
      <ReportCharts report={report} />
      <div className="inline-form">
        <label>
          {t("probes.capacity_for")}{" "}
          <input
            type="number"
            min={1}
            value={target}
            onChange={(e) => setTarget(e.target.value)}
            aria-label={t("probes.capacity_label")}
            data-testid="capacity-target"
          />{" "}
          {t("probes.unit_ops")}
        </label>
        <button
          onClick={() => void planCapacity(best.throughput_per_s, best.latency.mean_us, Number(target))}
          disabled={!(Number(target) > 0)}
          data-testid="capacity-plan"
        >
          {t("probes.plan")}
        </button>
        {plan && (
          <span data-testid="capacity-result">
            {t("probes.capacity_plan", {
              hsms: t("probes.capacity_hsms", { count: plan.hsms }),
              ceiling: fmt.number(plan.ceiling_per_s, 0),
              sessions: t("probes.capacity_sessions", { count: plan.pool_size_per_hsm }),
              per: fmt.number(plan.per_hsm_per_s, 0),
              ms: fmt.number(best.latency.mean_us / 1000, 2),
            })}
          </span>
        )}
      </div>
    </section>
  );
}
