// "Will the HSM keep up?" — a partition's signing volume as the audit trail records it (peak
// per minute and per day over 90 days, by key), costed at what each key moves to, against the
// latest probe of that operation on the partition; with "Run a probe" where none was run.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { ApiError, Capacity, OperationLoad, PartitionReadiness, SuggestedProbe } from "../../bindings";
import { Badge, ErrorBox, ProgressBar } from "../../components";
import { useFormat } from "../../i18n";
import { api, newJobId, toApiError } from "../../ipc";

/// "ml-dsa-65-sign" → ["ML-DSA-65", "sign"].
function opParts(op: string): [string, "sign" | "decaps"] {
  const m = /^(.*)-(sign|decaps)$/.exec(op);
  return m ? [m[1]!.toUpperCase(), m[2] as "sign" | "decaps"] : [op.toUpperCase(), "sign"];
}

function OperationName({ op }: { op: string }) {
  const { t } = useTranslation();
  const [alg, kind] = opParts(op);
  return <>{t(kind === "sign" ? "pqc.capacity_op_sign" : "pqc.capacity_op_decaps", { alg })}</>;
}

function Verdict({ c }: { c: Capacity }) {
  const { t } = useTranslation();
  const { number: num } = useFormat();
  const share = num(100 * (c.peak_share ?? 0), 1);
  const headroom = num(c.headroom ?? 0, 1);
  switch (c.verdict) {
    case "keeps_up":
      return (
        <p data-testid="pqc-capacity-verdict" data-verdict={c.verdict}>
          <Badge tone="ok">{t("pqc.capacity_keeps_up")}</Badge> {t("pqc.capacity_keeps_up_text", { share, headroom })}
        </p>
      );
    case "does_not_keep_up":
      return (
        <p data-testid="pqc-capacity-verdict" data-verdict={c.verdict}>
          <Badge tone="bad">{t("pqc.capacity_does_not_keep_up")}</Badge>{" "}
          {t("pqc.capacity_does_not_keep_up_text", { share, hsms: c.hsms ?? 1 })}
        </p>
      );
    case "needs_probe":
      return (
        <p data-testid="pqc-capacity-verdict" data-verdict={c.verdict}>
          <Badge tone="warn">{t("pqc.capacity_needs_probe")}</Badge> {t("pqc.capacity_needs_probe_text")}
        </p>
      );
    default:
      return null;
  }
}

function OperationRow({
  o,
  probe,
  running,
  onRun,
}: {
  o: OperationLoad;
  probe: SuggestedProbe | undefined;
  running: boolean;
  onRun: (p: SuggestedProbe) => void;
}) {
  const { t } = useTranslation();
  const { number: num, date } = useFormat();
  return (
    <tr data-testid="pqc-capacity-op" data-op={o.op}>
      <td>
        <OperationName op={o.op} />
      </td>
      <td>{num(o.keys)}</td>
      <td>{t("pqc.capacity_rate", { rate: num(o.needed_per_s, 2) })}</td>
      <td>
        {o.ceiling ? (
          <>
            {t("pqc.capacity_ceiling", { rate: num(o.ceiling.per_s, 1), date: date(o.ceiling.measured_at) })}
            {o.ceiling.client_bound && <div className="warn-text">{t("pqc.capacity_client_bound")}</div>}
          </>
        ) : probe ? (
          <button onClick={() => onRun(probe)} disabled={running} data-testid="pqc-run-probe">
            {t("pqc.capacity_run_probe")}
          </button>
        ) : (
          <span className="muted">{t("pqc.capacity_not_probed")}</span>
        )}
      </td>
      <td>{o.share === null ? "—" : t("pqc.capacity_share", { share: num(100 * o.share, 1) })}</td>
    </tr>
  );
}

/// One partition's capacity after the migration.
export function CapacityCard({ partition, onProbed }: { partition: PartitionReadiness; onProbed: () => void }) {
  const { t } = useTranslation();
  const { number: num } = useFormat();
  const c = partition.capacity;
  const [progress, setProgress] = useState<{ op: string; run: number; runs: number; fraction: number } | null>(null);
  const [job, setJob] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const run = async (p: SuggestedProbe) => {
    const id = newJobId();
    setJob(id);
    setError(null);
    setProgress({ op: p.op_name, run: 0, runs: p.request.sweep.length, fraction: 0 });
    try {
      await api.runProbe(partition.partition_id, id, p.request, (ev) =>
        setProgress({ op: p.op_name, run: ev.run, runs: ev.runs, fraction: ev.fraction }),
      );
      onProbed();
    } catch (e) {
      setError(toApiError(e));
    } finally {
      setJob(null);
      setProgress(null);
    }
  };
  return (
    <section
      className="card"
      data-testid="pqc-capacity"
      data-partition={partition.partition_id}
      aria-labelledby={`cap-${partition.partition_id}`}
    >
      <h2 id={`cap-${partition.partition_id}`}>{t("pqc.capacity_title", { partition: partition.partition_label })}</h2>
      {c.signatures === 0 ? (
        <p className="muted" data-testid="pqc-capacity-none">
          {t("pqc.capacity_no_use", { days: c.window_days })}
        </p>
      ) : (
        <>
          <p data-testid="pqc-capacity-volume">
            {t("pqc.capacity_volume", {
              days: c.window_days,
              signatures: num(c.signatures),
              per_minute: num(c.peak_per_minute),
              minute: c.peak_minute?.replace("T", " ") ?? "—",
              per_day: num(c.peak_per_day),
              day: c.peak_day ?? "—",
            })}
          </p>
          <table className="table" data-testid="pqc-capacity-ops">
            <thead>
              <tr>
                <th>{t("pqc.capacity_col_op")}</th>
                <th>{t("pqc.capacity_col_keys")}</th>
                <th>{t("pqc.capacity_col_needed")}</th>
                <th>{t("pqc.capacity_col_ceiling")}</th>
                <th>{t("pqc.capacity_col_share")}</th>
              </tr>
            </thead>
            <tbody>
              {c.operations.map((o) => (
                <OperationRow
                  key={o.op}
                  o={o}
                  probe={partition.suggested_probes.find((p) => p.op_name === o.op)}
                  running={job !== null}
                  onRun={(p) => void run(p)}
                />
              ))}
            </tbody>
          </table>
          {progress && (
            <div data-testid="pqc-probe-progress">
              <ProgressBar
                done={Math.max(0, progress.run - 1) + progress.fraction}
                total={Math.max(1, progress.runs)}
                label={t("pqc.capacity_probing", { run: progress.run, runs: progress.runs })}
              />
              <button onClick={() => job && void api.cancelJob(job)}>{t("common.cancel")}</button>
            </div>
          )}
          {error && <ErrorBox error={error} title={t("pqc.capacity_probe_failed")} />}
          <Verdict c={c} />
          {c.uncosted_signatures > 0 && <p className="muted">{t("pqc.capacity_uncosted", { n: num(c.uncosted_signatures) })}</p>}
          <details>
            <summary>{t("pqc.capacity_by_key")}</summary>
            <table className="table" data-testid="pqc-capacity-keys">
              <thead>
                <tr>
                  <th>{t("pqc.capacity_col_key")}</th>
                  <th>{t("pqc.capacity_col_signatures")}</th>
                  <th>{t("pqc.capacity_col_peak_minute")}</th>
                  <th>{t("pqc.capacity_col_peak_day")}</th>
                  <th>{t("pqc.capacity_col_as")}</th>
                </tr>
              </thead>
              <tbody>
                {c.keys.map((k) => (
                  <tr key={`${k.id_hex}/${k.label}`} data-testid="pqc-capacity-key" data-label={k.label}>
                    <td>
                      {k.label} <span className="muted">{k.algorithm}</span>
                    </td>
                    <td>{num(k.signatures)}</td>
                    <td>{num(k.peak_per_minute)}</td>
                    <td>{num(k.peak_per_day)}</td>
                    <td>{k.costed_as ? <OperationName op={k.costed_as} /> : "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      )}
    </section>
  );
}
