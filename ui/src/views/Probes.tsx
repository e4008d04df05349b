// Latency probes: pick what the partition offers, a mode and the workers (or a sweep), run
// with a live chart and cancel; the report with percentiles, the sweep's verdict, charts,
// exports, a capacity helper; stored runs side by side.
import { useEffect, useRef, useState } from "react";
import type { ProbeChoice, ProbeMode, ProbeReport, ProbeRequest, ProbeSummary, SeriesPoint } from "../bindings";
import { EmptyState, ErrorBox, Field, ProgressBar } from "../components";
import { api, newJobId } from "../ipc";
import { useNavigate, usePartition, useToast } from "../state";
import { useCommand } from "../useCommand";
import { HaProbeShares } from "./Ha";

function svgUrl(svg: string) {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}

function num(v: number, digits = 0) {
  return v.toLocaleString(undefined, { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function ReportView({ report }: { report: ProbeReport }) {
  const toast = useToast();
  const [charts, setCharts] = useState<Record<string, string>>({});
  const [target, setTarget] = useState("");
  const { run: planCapacity, data: plan } = useCommand(api.probeCapacity, { errorToast: "No plan" });
  useEffect(() => {
    let live = true;
    const which: ("latency" | "histogram" | "sweep")[] = report.sweep.length ? ["sweep", "latency", "histogram"] : ["latency", "histogram"];
    void Promise.all(which.map((w) => api.probeChart(report.id, w).then((svg) => [w, svg] as const))).then(
      (all) => live && setCharts(Object.fromEntries(all)),
    );
    return () => {
      live = false;
    };
  }, [report]);
  const best = report.runs.reduce((a, b) => (b.throughput_per_s > a.throughput_per_s ? b : a), report.runs[0]!);
  const { run: exp } = useCommand(
    async (kind: "json" | "csv") => {
      const text = kind === "json" ? JSON.stringify(report, null, 2) : await api.probeCsv(report.id);
      const p = await api.saveExport(`${report.op_name}-${report.id}.${kind}`, kind, { text });
      if (p) toast("ok", `Saved ${p}.`);
    },
    { errorToast: "Export failed" },
  );
  const expChart = async (w: string) => {
    const svg = charts[w];
    if (!svg) return;
    const p = await api.saveExport(`${report.op_name}-${w}.svg`, "svg", { text: svg });
    if (p) toast("ok", `Saved ${p}.`);
  };
  return (
    <section className="card" data-testid="probe-report">
      <header className="card-header">
        <div>
          <h3>
            {report.op_name}{" "}
            <span className="muted">
              ({report.mechanism}, {report.payload_bytes} bytes)
            </span>
          </h3>
          <div className="muted small">
            {report.module} · firmware {report.firmware || "?"} · slot {report.slot} · {report.created_at} · probe overhead{" "}
            {num(report.overhead_ns)} ns per call
            {report.cancelled && " · cancelled"}
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
            <th>Workers</th>
            <th>Calls</th>
            <th>Errors</th>
            <th>Ops/s</th>
            <th>First µs</th>
            <th>Mean µs</th>
            <th>±σ</th>
            <th>p50</th>
            <th>p90</th>
            <th>p95</th>
            <th>p99</th>
            <th>p99.9</th>
            <th>Max</th>
            {report.sweep.length > 0 && <th>Efficiency</th>}
          </tr>
        </thead>
        <tbody>
          {report.runs.map((r, i) => (
            <tr key={r.workers}>
              <td>{r.workers}</td>
              <td>{r.calls.toLocaleString()}</td>
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
            </tr>
          ))}
        </tbody>
      </table>
      {report.runs.some((r) => r.first_error) && (
        <ErrorBox
          error={{
            code: "HSM_ERROR",
            message: `Some calls failed: ${report.runs.find((r) => r.first_error)?.first_error}`,
            details: null,
            suggestion: null,
            pkcs11: null,
          }}
        />
      )}
      {report.verdict && (
        <p className="verdict-line" data-testid="probe-verdict">
          <strong>{report.verdict}</strong>
        </p>
      )}
      {report.ha && <HaProbeShares share={report.ha} />}
      <div className="cards">
        {Object.entries(charts).map(([w, svg]) => (
          <div key={w} className="chart">
            <img src={svgUrl(svg)} alt={`${w} chart`} data-testid={`probe-chart-${w}`} />
            <button onClick={() => void expChart(w)}>SVG…</button>
          </div>
        ))}
      </div>
      <div className="inline-form">
        <label>
          Capacity for{" "}
          <input
            type="number"
            min={1}
            value={target}
            onChange={(e) => setTarget(e.target.value)}
            aria-label="Target operations per second"
            data-testid="capacity-target"
          />{" "}
          ops/s
        </label>
        <button
          onClick={() => void planCapacity(best.throughput_per_s, best.latency.mean_us, Number(target))}
          disabled={!(Number(target) > 0)}
          data-testid="capacity-plan"
        >
          Plan
        </button>
        {plan && <span data-testid="capacity-result">{plan.explanation}</span>}
      </div>
    </section>
  );
}

export function ProbesView() {
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
  const [job, setJob] = useState<string | null>(null);
  const [runInfo, setRunInfo] = useState<{ run: number; runs: number; fraction: number; workers: number; calls: number } | null>(null);
  const [live, setLive] = useState<string | null>(null);
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
          void api
            .probeLiveChart(`${opName}, ${p.workers} worker${p.workers === 1 ? "" : "s"}`, points.current.slice(-600))
            .then(setLive, () => undefined);
        }
      });
      toast("ok", `${r.op_name}: ${num(Math.max(...r.runs.map((x) => x.throughput_per_s)), 1)} ops/s.`);
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
        <h1>Probes</h1>
        <EmptyState title="Log in to run probes" action={<button onClick={() => navigate("connections")}>Go to Connections</button>}>
          Probes make temporary keys on the partition (destroyed afterwards), so they need a logged-in user.
        </EmptyState>
      </div>
    );
  }
  return (
    <div className="view">
      <header className="view-header">
        <h1>Latency probes</h1>
      </header>
      <section className="card form-grid">
        <Field label="Probe">
          <select value={opName} onChange={(e) => setOpName(e.target.value)} disabled={!!job} data-testid="probe-op" aria-label="Probe">
            {catalog.map((c) => (
              <option key={c.name} value={c.name} disabled={!c.offered}>
                {c.name}
                {c.offered ? "" : " — not offered"}
              </option>
            ))}
          </select>
        </Field>
        <fieldset className="radio-row">
          <legend>Mode</legend>
          {(["count", "duration", "rate"] as const).map((m) => (
            <label key={m}>
              <input type="radio" checked={modeKind === m} onChange={() => setModeKind(m)} disabled={!!job} />{" "}
              {m === "count" ? "Fixed count" : m === "duration" ? "Fixed duration" : "Fixed rate"}
            </label>
          ))}
        </fieldset>
        {modeKind === "count" ? (
          <Field label="Calls">
            <input type="number" min={1} value={calls} onChange={(e) => setCalls(Number(e.target.value))} aria-label="Calls" />
          </Field>
        ) : (
          <Field label="Seconds per run">
            <input
              type="number"
              min={0.1}
              step={0.5}
              value={seconds}
              onChange={(e) => setSeconds(Number(e.target.value))}
              aria-label="Seconds"
              data-testid="probe-seconds"
            />
          </Field>
        )}
        {modeKind === "rate" && (
          <Field label="Calls per second" hint="Latency counts from each call's scheduled start (coordinated omission corrected).">
            <input type="number" min={0.1} value={rate} onChange={(e) => setRate(Number(e.target.value))} aria-label="Rate" />
          </Field>
        )}
        <Field label="Workers" hint="A number, or a sweep such as 1,2,4,8">
          <input
            type="text"
            value={workers}
            onChange={(e) => setWorkers(e.target.value)}
            aria-label="Workers"
            data-testid="probe-workers"
          />
        </Field>
        <Field label="Warm-up calls per worker">
          <input type="number" min={0} value={warmup} onChange={(e) => setWarmup(Number(e.target.value))} aria-label="Warm-up" />
        </Field>
      </section>
      <div className="button-row">
        <button
          className="primary"
          onClick={() => void run()}
          disabled={!!job || !catalog.some((c) => c.name === opName && c.offered)}
          data-testid="probe-run"
        >
          {job ? "Running…" : "Run probe"}
        </button>
        {job && (
          <button onClick={() => void api.cancelJob(job)} data-testid="probe-cancel">
            Cancel
          </button>
        )}
      </div>
      {runInfo && (
        <ProgressBar
          done={Math.round(runInfo.fraction * 1000)}
          total={1000}
          label={`run ${runInfo.run} of ${runInfo.runs}: ${runInfo.workers} worker${runInfo.workers === 1 ? "" : "s"}, ${runInfo.calls.toLocaleString()} calls`}
        />
      )}
      {live && job && <img className="chart-live" src={svgUrl(live)} alt="Live latency" data-testid="probe-live" />}
      {error && <ErrorBox error={error} title="The probe did not run" />}
      {report && <ReportView report={report} />}
      <section className="card">
        <h3>Stored runs</h3>
        {history.length === 0 ? (
          <p className="muted">Runs are stored in probes.db in the data folder. Select two to compare them.</p>
        ) : (
          <table className="table compact" data-testid="probe-history">
            <thead>
              <tr>
                <th aria-label="Compare" />
                <th>When</th>
                <th>Probe</th>
                <th>Workers</th>
                <th>Best ops/s</th>
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
                      aria-label={`Compare ${h.op_name} ${h.created_at}`}
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
                <th />
                <th>{pair[0]!.created_at}</th>
                <th>{pair[1]!.created_at}</th>
                <th>Difference</th>
              </tr>
            </thead>
            <tbody>
              {(
                [
                  ["ops/s", (r: ProbeReport) => Math.max(...r.runs.map((x) => x.throughput_per_s))],
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
