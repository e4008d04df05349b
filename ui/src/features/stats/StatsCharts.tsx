// The statistics' history as charts (operations, latency, sessions) and as a CSV file.
import { useTranslation } from "react-i18next";
import type { StatsPoint } from "../../bindings";
import { LineChart, type Series } from "../../charts/Chart";
import { useFormat } from "../../i18n";

export function historyCsv(h: StatsPoint[]): string {
  const rows = h.map((p) =>
    [
      p.t.toFixed(1),
      p.busy_percent ?? "",
      p.commands_per_second ?? "",
      p.sign_per_second ?? "",
      p.sessions ?? "",
      p.console_ops,
      p.console_errors,
    ].join(","),
  );
  return ["seconds,busy_percent,commands_per_second,sign_per_second,sessions,console_ops,console_errors", ...rows].join("\n") + "\n";
}

export function series(name: string, h: StatsPoint[], f: (p: StatsPoint) => number | null): Series {
  return { name, points: h.flatMap((p) => (f(p) === null ? [] : [[p.t, f(p)!] as [number, number]])) };
}

/// The history's three charts: the HSM's busy share, its request rates, the console's calls.
export function StatsCharts({ h }: { h: StatsPoint[] }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const x = { label: t("stats.chart_time"), unit: t("stats.unit_s"), format: (v: number) => fmt.number(v) };
  return (
    <div className="cards">
      <section className="card chart">
        <LineChart
          testId="chart-load"
          exportName="hsm-busy"
          spec={{
            title: t("stats.chart_busy"),
            x,
            y: { label: t("stats.chart_busy_y"), unit: "%", format: (v) => fmt.number(v) },
            series: [series(t("stats.series_busy"), h, (p) => p.busy_percent)],
          }}
        />
      </section>
      <section className="card chart">
        <LineChart
          testId="chart-rates"
          exportName="hsm-requests"
          spec={{
            title: t("stats.chart_rates"),
            x,
            y: { label: t("stats.chart_rates_y"), unit: t("stats.unit_per_s"), format: (v) => fmt.number(v) },
            series: [
              series(t("stats.series_commands"), h, (p) => p.commands_per_second),
              series(t("stats.series_sign"), h, (p) => p.sign_per_second),
            ],
          }}
        />
      </section>
      <section className="card chart">
        <LineChart
          testId="chart-console"
          exportName="console-calls"
          spec={{
            title: t("stats.chart_console"),
            x,
            y: { label: t("stats.chart_console_y"), format: (v) => fmt.number(v) },
            series: [
              series(t("stats.series_ok"), h, (p) => p.console_ops),
              { ...series(t("stats.series_failed"), h, (p) => p.console_errors), color: 5 },
            ],
          }}
        />
      </section>
    </div>
  );
}
