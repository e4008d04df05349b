// The partition's health: generic token figures for any module, Luna's CA_* statistics and
// utilization rates where offered, and the console's own call metrics, with live charts
// drawn from the samples' history. Polling follows the settings' interval and pauses while
// the window is hidden.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { StatsPoint, StatsSnapshot } from "../../bindings";
import { EmptyState, ErrorBox } from "../../components";
import { api } from "../../ipc";
import { useNavigate, usePartition, useSettings, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { StatsCards } from "./StatsCards";
import { historyCsv, StatsCharts } from "./StatsCharts";

function useVisible(): boolean {
  const [v, setV] = useState(() => document.visibilityState === "visible");
  useEffect(() => {
    const on = () => setV(document.visibilityState === "visible");
    document.addEventListener("visibilitychange", on);
    return () => document.removeEventListener("visibilitychange", on);
  }, []);
  return v;
}

export function StatsView() {
  const { t } = useTranslation();
  const { partitionId } = usePartition();
  const { settings } = useSettings();
  const navigate = useNavigate();
  const toast = useToast();
  const [snap, setSnap] = useState<StatsSnapshot | null>(null);
  const [history, setHistory] = useState<StatsPoint[] | null>(null);
  const [paused, setPaused] = useState(false);
  const visible = useVisible();
  const interval = Math.max(1, settings?.stats_poll_seconds ?? 5);

  // A sample: the figures first, then the history the charts draw (the sample extends it).
  const { run: sampleFrom, error } = useCommand(
    async (partitionId: string) => {
      setSnap(await api.stats(partitionId));
      setHistory(await api.statsHistory(partitionId));
    },
    { keepError: true },
  );
  const sample = () => {
    if (partitionId) void sampleFrom(partitionId);
  };

  useEffect(() => {
    if (!partitionId || paused || !visible) return;
    const first = setTimeout(() => void sampleFrom(partitionId), 0);
    const id = setInterval(() => void sampleFrom(partitionId), interval * 1000);
    return () => {
      clearTimeout(first);
      clearInterval(id);
    };
  }, [partitionId, paused, visible, interval, sampleFrom]);

  const { run: exportNumbers } = useCommand(
    async (kind: "csv" | "json") => {
      if (!partitionId) return;
      const h = await api.statsHistory(partitionId);
      const p = await api.saveExport(`statistics.${kind}`, kind, {
        text: kind === "csv" ? historyCsv(h) : JSON.stringify({ latest: snap, history: h }, null, 2),
      });
      if (p) toast("ok", t("common.saved", { path: p }));
    },
    { errorToast: t("common.export_failed") },
  );

  if (!partitionId) {
    return (
      <div className="view">
        <h1>{t("stats.title")}</h1>
        <EmptyState
          title={t("common.no_partition_selected")}
          action={<button onClick={() => navigate("connections")}>{t("common.go_to_connections")}</button>}
        />
      </div>
    );
  }
  return (
    <div className="view">
      <header className="view-header">
        <h1>{t("stats.title")}</h1>
        <div className="button-row">
          <span className="muted small">
            {paused ? t("stats.paused") : !visible ? t("stats.paused_hidden") : t("stats.every", { seconds: interval })}
          </span>
          <button onClick={() => setPaused(!paused)} data-testid="stats-pause">
            {paused ? t("stats.resume") : t("stats.pause")}
          </button>
          <button onClick={sample}>{t("stats.sample_now")}</button>
          <button onClick={() => void exportNumbers("csv")}>{t("stats.numbers_csv")}</button>
          <button onClick={() => void exportNumbers("json")}>{t("stats.numbers_json")}</button>
        </div>
      </header>
      {error && <ErrorBox error={error} title={t("stats.unreadable")} />}
      {snap && <StatsCards snap={snap} />}
      {history && history.length > 0 && <StatsCharts h={history} />}
    </div>
  );
}
