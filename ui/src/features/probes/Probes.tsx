// Latency probes: pick what the partition offers, a mode and the workers (or a sweep), run
// with a live chart and cancel; the report with percentiles, the sweep's verdict, charts,
// exports, a capacity helper; stored runs side by side.
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { ProbeChoice, ProbeRequest, ProbeSummary, SeriesPoint } from "../../bindings";
import { EmptyState, ErrorBox, ProgressBar } from "../../components";
import { api, newJobId } from "../../ipc";
import { useNavigate, usePartition, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { num, LatencyChart, ReportView } from "./ProbeReport";
import { DEFAULT_SETTINGS, ProbeForm, requestOf, type ProbeSettings } from "./ProbeForm";
import { StoredRuns } from "./StoredRuns";

export function ProbesView() {
  const { t } = useTranslation();
  const { partitionId, partition } = usePartition();
  const navigate = useNavigate();
  const toast = useToast();
  const [catalog, setCatalog] = useState<ProbeChoice[]>([]);
  const [settings, setSettings] = useState<ProbeSettings>(DEFAULT_SETTINGS);
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
          setLive({ title: t("probes.live_title", { op: settings.opName, count: p.workers }), points: points.current.slice(-600) });
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

  const run = async () => {
    if (!partitionId) return;
    const request = requestOf(settings, catalog);
    if (!request) return;
    const id = newJobId();
    setJob(id);
    probing.reset();
    setLive(null);
    points.current = [];
    await probing.run(partitionId, id, request);
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
      <ProbeForm settings={settings} onChange={setSettings} catalog={catalog} disabled={!!job} />
      <div className="button-row">
        <button
          className="primary"
          onClick={() => void run()}
          disabled={!!job || !catalog.some((c) => c.name === settings.opName && c.offered)}
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
