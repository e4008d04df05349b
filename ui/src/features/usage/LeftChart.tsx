// What is left of a key over time (HSS signatures, Luna usage-limited uses): the history
// from the audit trail, the projected line to zero at the current rate, and the settings'
// warning and critical thresholds. The HSS view and the usage-limited keys draw the same
// chart.
import { useTranslation } from "react-i18next";
import type { HssPoint } from "../../bindings";
import { LineChart, type Series, type Threshold } from "../../charts/Chart";
import { useFormat } from "../../i18n";

export interface LeftChartProps {
  testId: string;
  exportName: string;
  title: string;
  /// The y axis: what is counted ("signatures left", "uses left").
  yLabel: string;
  /// What there is in all (the thresholds are shares of it); 0 when unknown.
  total: number;
  history: HssPoint[];
  /// `YYYY-MM-DD`, when it runs out at the current rate.
  projected: string | null;
  /// The settings' thresholds, per cent left.
  warning: number;
  critical: number;
}

export function LeftChart({ testId, exportName, title, yLabel, total, history, projected, warning, critical }: LeftChartProps) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const points = history.map((p) => [Date.parse(p.at), p.remaining] as [number, number]);
  const last = points.at(-1);
  const series: Series[] = [{ name: t("hss.chart_left"), points }];
  const thresholds: Threshold[] =
    Number.isFinite(total) && total > 0
      ? [
          { label: t("hss.threshold_warning", { percent: warning }), y: (total * warning) / 100, tone: "warn" },
          { label: t("hss.threshold_critical", { percent: critical }), y: (total * critical) / 100, tone: "bad" },
        ]
      : [];
  if (last && projected)
    series.push({
      name: t("hss.chart_projected"),
      points: [last, [Date.parse(`${projected}T00:00:00Z`), 0]],
      dashed: true,
      color: 1,
    });
  return (
    <LineChart
      testId={testId}
      exportName={exportName}
      lines={18}
      spec={{
        title,
        x: { label: t("hss.chart_x"), time: true, format: (v) => fmt.date(v) },
        y: { label: yLabel, format: (v) => fmt.number(v) },
        series,
        thresholds,
      }}
    />
  );
}
