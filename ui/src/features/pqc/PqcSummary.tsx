// The PQC view's summary: counts per class and status, the deprecation timeline.
import { useTranslation } from "react-i18next";
import type { Counts, Readiness } from "../../bindings";
import { BarChart } from "../../charts/Chart";
import { useFormat } from "../../i18n";
import { type Row, ALL, CLASSES, TIMELINE_COLORS, timeline } from "./assessed";

export function CountsTable({ readiness }: { readiness: Readiness }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const line = (key: string, name: string, c: Counts, total: boolean) => (
    <tr key={key} data-testid="pqc-counts-row" data-partition={key} className={total ? "total" : undefined}>
      <th scope="row">{name}</th>
      {CLASSES.map((k) => (
        <td key={k} data-class={k}>
          {fmt.number(c[k])}
        </td>
      ))}
      <td data-status="past_due">{fmt.number(c.past_due)}</td>
      <td data-status="deprecated">{fmt.number(c.deprecated)}</td>
      <td data-status="due_within_a_year">{fmt.number(c.due_within_a_year)}</td>
    </tr>
  );
  return (
    <table className="table compact" data-testid="pqc-counts">
      <caption className="muted">{t("pqc.counts_caption")}</caption>
      <thead>
        <tr>
          <th>{t("pqc.col_partition")}</th>
          {CLASSES.map((k) => (
            <th key={k}>{t(`pqc.class_${k}`)}</th>
          ))}
          <th>{t("pqc.status_past_due")}</th>
          <th>{t("pqc.status_deprecated")}</th>
          <th>{t("pqc.status_due_within_a_year")}</th>
        </tr>
      </thead>
      <tbody>
        {readiness.partitions.map((p) =>
          line(p.partition_id, t("pqc.partition_name", { label: p.partition_label, serial: p.serial }), p.counts, false),
        )}
        {readiness.partitions.length > 1 && line(ALL, t("pqc.all_partitions"), readiness.counts, true)}
      </tbody>
    </table>
  );
}

/// The years objects become deprecated and disallowed: a chart, and the same numbers as text.
export function Timeline({ rows, policy, today }: { rows: Row[]; policy: string; today: string }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const years = timeline(rows, Number(today.slice(0, 4)));
  if (years.length === 0)
    return (
      <p className="muted" data-testid="pqc-timeline-empty">
        {t("pqc.timeline_none", { policy })}
      </p>
    );
  return (
    <>
      <BarChart
        testId="pqc-timeline-chart"
        exportName="pqc-timeline"
        lines={12}
        spec={{
          title: t("pqc.timeline_title", { policy }),
          x: { label: t("pqc.timeline_x"), format: (v) => String(v) },
          // Objects are whole: no tick between two counts.
          y: { label: t("pqc.timeline_y"), format: (v) => (Number.isInteger(v) ? fmt.number(v) : "") },
          bars: years.map((y) => ({ label: String(y.year), values: [y.deprecated, y.disallowed] })),
          names: [t("pqc.timeline_deprecated"), t("pqc.timeline_disallowed")],
          colors: TIMELINE_COLORS,
        }}
      />
      <ul className="pqc-timeline-list small" data-testid="pqc-timeline">
        {years
          .filter((y) => y.deprecated + y.disallowed > 0)
          .map((y) => (
            <li key={y.year} data-year={y.year}>
              {t("pqc.timeline_year", { year: y.year, deprecated: fmt.number(y.deprecated), disallowed: fmt.number(y.disallowed) })}
            </li>
          ))}
      </ul>
    </>
  );
}
