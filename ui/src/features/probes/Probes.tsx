// Latency probes: pick what the partition offers, a mode and the workers (or a sweep), run
// with a live chart and cancel; the report with percentiles, the sweep's verdict, charts,
// exports, a capacity helper; stored runs side by side.
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { CallProfile, ProbeChoice, ProbeMode, ProbeReport, ProbeRequest, ProbeSummary, SeriesPoint } from "../../bindings";
import { BarChart, LineChart } from "../../charts/Chart";
import { EmptyState, ErrorBox, Field, ProgressBar } from "../../components";
import { formatter, textOf, useFormat } from "../../i18n";
import { api, newJobId } from "../../ipc";
import { useNavigate, usePartition, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { HaProbeShares } from "../ha/Ha";

const MODES = ["count", "duration", "rate"] as const;

function num(v: number, digits = 0) {
  return formatter().number(v, digits);
}

/// p50 and p99 over a run's time (the live chart and the report's).
function LatencyChart({ title, points, testId }: { title: string; points: SeriesPoint[]; testId: string }) {
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

function ReportCharts({ report }: { report: ProbeReport }) {
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

function ReportView({ report }: { report: ProbeReport }) {
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

export function ProbesView() {
  const { t } = useTranslation();
  const { partitionId, partition } = usePartition();
  const navigate = useNavigate();
  const toast = useToast();
  const [catalog, setCatalog] = useState<ProbeChoice[]>([]);
  const [opName, setOpName] = useState("ecdsa-p256-sign");
  const [modeKind, setModeKind] = useState<"count" | "duration" | "rate">("duration");
  const [calls, setCalls] = useState(1000);
  const [seconds, setSeconds] = useState(5);
  const [rate, setRate] = useState(100);
  const [workers, setWorkers] = useState("1");
  const [warmup, setWarmup] = useState(10);
  const [profile, setProfile] = useState<CallProfile>("pool");
  const [job, setJob] = useState<string | null>(null);
  const [runInfo, setRunInfo] = useState<{ run: number; runs: number; fraction: number; workers: number; calls: number } | null>(null);
  const [live, setLive] = useState<{ title: string; points: SeriesPoint[] } | null>(null);
  const [history, setHistory] = useState<ProbeSummary[]>([]);
  const [compare, setCompare] = useState<string[]>([]);
  const points = useRef<SeriesPoint[]>([]);
  const lastDraw = useRef(0);
  const loggedIn = !!partition?.logged_in;

  const probing = useCommand(async (partitionId: string, id: string, request: ProbeRequest) => {
    try {
      const r = await api.runProbe(partitionId, id, request, (p) => {
        setRunInfo({ run: p.run, runs: p.runs, fraction: p.fraction, workers: p.workers, calls: p.calls });
        if (p.point) points.current.push(p.point);
        const now = Date.now();
        if (now - lastDraw.current > 400 && points.current.length > 0) {
          lastDraw.current = now;
          setLive({ title: t("probes.live_title", { op: opName, count: p.workers }), points: points.current.slice(-600) });
        }
      });
      toast("ok", t("probes.done", { op: r.op_name, rate: num(Math.max(...r.runs.map((x) => x.throughput_per_s)), 1) }));
      return r;
    } finally {
      setJob(null);
      setRunInfo(null);
    }
  });
  const { data: report, error } = probing;

  useEffect(() => {
    if (!partitionId) return;
    let on = true;
    api.probeCatalog(partitionId).then(
      (c) => on && setCatalog(c),
      () => undefined,
    );
    api.probeHistory().then(
      (h) => on && setHistory(h),
      () => undefined,
    );
    return () => {
      on = false;
    };
  }, [partitionId, report]);

  const mode: ProbeMode =
    modeKind === "count"
      ? { mode: "count", calls }
      : modeKind === "duration"
        ? { mode: "duration", seconds }
        : { mode: "rate", per_second: rate, seconds };
  const sweep = workers.includes(",")
    ? workers
        .split(",")
        .map((x) => Number(x.trim()))
        .filter((x) => x > 0)
    : [];

  const run = async () => {
    if (!partitionId) return;
    const choice = catalog.find((c) => c.name === opName);
    if (!choice) return;
    const id = newJobId();
    setJob(id);
    probing.reset();
    setLive(null);
    points.current = [];
    await probing.run(partitionId, id, {
      op: choice.op,
      mode,
      workers: sweep.length ? 1 : Math.max(1, Number(workers) || 1),
      sweep,
      warmup,
      profile,
    });
  };

  const [pair, setPair] = useState<ProbeReport[]>([]);
  useEffect(() => {
    if (compare.length !== 2) return;
    let on = true;
    void Promise.all(compare.map((id) => api.probeReport(id))).then(
      (r) => on && setPair(r),
      () => undefined,
    );
    return () => {
      on = false;
    };
  }, [compare]);

  if (!partitionId || !loggedIn) {
    return (
      <div className="view">
        <h1>{t("probes.title_short")}</h1>
        <EmptyState
          title={t("probes.log_in_title")}
          action={<button onClick={() => navigate("connections")}>{t("common.go_to_connections")}</button>}
        >
          {t("probes.log_in_text")}
        </EmptyState>
      </div>
    );
  }
  return (
    <div className="view">
      <header className="view-header">
        <h1>{t("probes.title")}</h1>
      </header>
      <section className="card form-grid">
        <Field label={t("probes.probe")}>
          <select
            value={opName}
            onChange={(e) => setOpName(e.target.value)}
            disabled={!!job}
            data-testid="probe-op"
            aria-label={t("probes.probe")}
          >
            {catalog.map((c) => (
              <option key={c.name} value={c.name} disabled={!c.offered}>
                {c.name}
                {c.offered ? "" : ` — ${t("probes.not_offered")}`}
              </option>
            ))}
          </select>
        </Field>
        <fieldset className="radio-row">
          <legend>{t("probes.mode")}</legend>
          {MODES.map((m) => (
            <label key={m}>
              <input type="radio" checked={modeKind === m} onChange={() => setModeKind(m)} disabled={!!job} /> {t(`probes.mode_${m}`)}
            </label>
          ))}
        </fieldset>
        {modeKind === "count" ? (
          <Field label={t("probes.calls")}>
            <input type="number" min={1} value={calls} onChange={(e) => setCalls(Number(e.target.value))} aria-label={t("probes.calls")} />
          </Field>
        ) : (
          <Field label={t("probes.seconds")}>
            <input
              type="number"
              min={0.1}
              step={0.5}
              value={seconds}
              onChange={(e) => setSeconds(Number(e.target.value))}
              aria-label={t("probes.seconds_label")}
              data-testid="probe-seconds"
            />
          </Field>
        )}
        {modeKind === "rate" && (
          <Field label={t("probes.rate")} hint={t("probes.rate_hint")}>
            <input
              type="number"
              min={0.1}
              value={rate}
              onChange={(e) => setRate(Number(e.target.value))}
              aria-label={t("probes.rate_label")}
            />
          </Field>
        )}
        <Field label={t("probes.workers")} hint={t("probes.workers_hint")}>
          <input
            type="text"
            value={workers}
            onChange={(e) => setWorkers(e.target.value)}
            aria-label={t("probes.workers")}
            data-testid="probe-workers"
          />
        </Field>
        <Field label={t("probes.warmup")}>
          <input
            type="number"
            min={0}
            value={warmup}
            onChange={(e) => setWarmup(Number(e.target.value))}
            aria-label={t("probes.warmup_label")}
          />
        </Field>
        <Field label={t("probes.profile")}>
          <select
            value={profile}
            onChange={(e) => setProfile(e.target.value as CallProfile)}
            data-testid="probe-profile"
            title={t("probes.profile_hint")}
          >
            <option value="pool">{t("probes.profile_pool")}</option>
            <option value="session-per-call">{t("probes.profile_session_per_call")}</option>
            <option value="find-per-call">{t("probes.profile_find_per_call")}</option>
          </select>
        </Field>
      </section>
      <div className="button-row">
        <button
          className="primary"
          onClick={() => void run()}
          disabled={!!job || !catalog.some((c) => c.name === opName && c.offered)}
          data-testid="probe-run"
        >
          {job ? t("probes.running") : t("probes.run")}
        </button>
        {job && (
          <button onClick={() => void api.cancelJob(job)} data-testid="probe-cancel">
            {t("common.cancel")}
          </button>
        )}
      </div>
      {runInfo && (
        <ProgressBar
          done={Math.round(runInfo.fraction * 1000)}
          total={1000}
          label={t("probes.progress", { run: runInfo.run, runs: runInfo.runs, count: runInfo.workers, calls: num(runInfo.calls) })}
        />
      )}
      {live && job && (
        <section className="card chart">
          <LatencyChart testId="probe-live" title={live.title} points={live.points} />
        </section>
      )}
      {error && <ErrorBox error={error} title={t("probes.did_not_run")} />}
      {report && <ReportView report={report} />}
      <section className="card">
        <h2>{t("probes.stored_runs")}</h2>
        {history.length === 0 ? (
          <p className="muted">{t("probes.stored_empty")}</p>
        ) : (
          <table className="table compact" data-testid="probe-history">
            <thead>
              <tr>
                <th>
                  <span className="sr-only">{t("probes.compare")}</span>
                </th>
                <th>{t("probes.col_when")}</th>
                <th>{t("probes.probe")}</th>
                <th>{t("probes.col_workers")}</th>
                <th>{t("probes.col_best")}</th>
                <th>p50 µs</th>
                <th>p99 µs</th>
              </tr>
            </thead>
            <tbody>
              {history.map((h) => (
                <tr key={h.id}>
                  <td>
                    <input
                      type="checkbox"
                      checked={compare.includes(h.id)}
                      onChange={() => setCompare((c) => (c.includes(h.id) ? c.filter((x) => x !== h.id) : [...c, h.id].slice(-2)))}
                      aria-label={t("probes.compare_run", { op: h.op_name, at: h.created_at })}
                    />
                  </td>
                  <td>{h.created_at}</td>
                  <td>{h.op_name}</td>
                  <td>{h.workers}</td>
                  <td>{num(h.throughput_per_s, 1)}</td>
                  <td>{num(h.p50_us)}</td>
                  <td>{num(h.p99_us)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {compare.length === 2 && pair.length === 2 && (
          <table className="table compact" data-testid="probe-compare">
            <thead>
              <tr>
                <th>
                  <span className="sr-only">{t("probes.col_measure")}</span>
                </th>
                <th>{pair[0]!.created_at}</th>
                <th>{pair[1]!.created_at}</th>
                <th>{t("probes.difference")}</th>
              </tr>
            </thead>
            <tbody>
              {(
                [
                  [t("probes.unit_ops"), (r: ProbeReport) => Math.max(...r.runs.map((x) => x.throughput_per_s))],
                  ["p50 µs", (r: ProbeReport) => r.runs[0]!.latency.p50_us],
                  ["p99 µs", (r: ProbeReport) => r.runs[0]!.latency.p99_us],
                ] as const
              ).map(([name, f]) => {
                const a = f(pair[0]!);
                const b = f(pair[1]!);
                return (
                  <tr key={name}>
                    <td>{name}</td>
                    <td>{num(a, 1)}</td>
                    <td>{num(b, 1)}</td>
                    <td>{a ? `${b >= a ? "+" : ""}${num((100 * (b - a)) / a, 1)} %` : "—"}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
