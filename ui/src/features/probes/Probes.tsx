// Latency probes: pick what the partition offers, a mode and the workers (or a sweep), run
// with a live chart and cancel; the report with percentiles, the sweep's verdict, charts,
// exports, a capacity helper; stored runs side by side.
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { CallProfile, ProbeChoice, ProbeMode, ProbeRequest, ProbeSummary, SeriesPoint } from "../../bindings";
import { EmptyState, ErrorBox, Field, ProgressBar } from "../../components";
import { api, newJobId } from "../../ipc";
import { useNavigate, usePartition, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { num, LatencyChart, ReportView } from "./ProbeReport";
import { StoredRuns } from "./StoredRuns";

const MODES = ["count", "duration", "rate"] as const;

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
      <StoredRuns history={history} />
    </div>
  );
}
