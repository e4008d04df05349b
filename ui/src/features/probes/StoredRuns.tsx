// The probe runs stored on this machine: each one's best throughput and latency, and two
// of them side by side.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { ProbeReport, ProbeSummary } from "../../bindings";
import { api } from "../../ipc";
import { num } from "./ProbeReport";

export function StoredRuns({ history }: { history: ProbeSummary[] }) {
  const { t } = useTranslation();
  const [compare, setCompare] = useState<string[]>([]);
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
  return (
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
  );
}
