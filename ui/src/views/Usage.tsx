// Luna's per-key usage limits: "N of M uses left" on a key (with a dialog to set or raise
// the limit — Luna allows the crypto officer and the SO), and every limited key with its
// burn rate and projected exhaustion, as the HSS view forecasts HSS keys.
import { useEffect, useState } from "react";
import type { ObjectSummary } from "../bindings";
import { Badge, Dialog, ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { useAudit, useToast } from "../state";
import { useCommand } from "../useCommand";

const TONE: Record<string, "ok" | "warn" | "bad"> = { ok: "ok", warning: "warn", critical: "bad", exhausted: "bad" };

function LimitDialog({
  partitionId,
  summary,
  onClose,
  onSet,
}: {
  partitionId: string;
  summary: ObjectSummary;
  onClose: () => void;
  onSet: () => void;
}) {
  const toast = useToast();
  const [limit, setLimit] = useState(String(Math.max(summary.usage_limit ?? 0, (summary.usage_count ?? 0) + 1, 1)));
  const {
    run: save,
    loading,
    error,
  } = useCommand(async () => {
    const k = await api.setUsageLimit(partitionId, summary.handle, Number(limit));
    toast("ok", `${k.label}: ${(k.usage_limit ?? 0) - (k.usage_count ?? 0)} of ${k.usage_limit} uses left.`);
    onSet();
    onClose();
  });
  return (
    <Dialog
      title={`Usage limit of ${summary.label}`}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>Cancel</button>
          <button className="primary" onClick={() => void save()} disabled={loading || !/^\d+$/.test(limit)} data-testid="usage-limit-save">
            {loading ? "Setting…" : "Set limit"}
          </button>
        </>
      }
    >
      <Field
        label="Uses in all (CKA_USAGE_LIMIT)"
        hint={`1 to 4294967295. Used so far: ${summary.usage_count ?? 0}. Every sign, verify, encrypt and decrypt counts one; at the limit the HSM refuses the key (CKR_KEY_NOT_ACTIVE).`}
      >
        <input type="number" min={1} value={limit} onChange={(e) => setLimit(e.target.value)} data-testid="usage-limit-input" />
      </Field>
      {error && <ErrorBox error={error} title="The limit was not set" />}
    </Dialog>
  );
}

/// A key's usage line in the Keys detail pane (Luna modules only).
export function UsageLine({ partitionId, summary, onChanged }: { partitionId: string; summary: ObjectSummary; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const isKey = summary.class.endsWith("_KEY");
  if (!isKey) return null;
  const limited = summary.usage_limit !== null;
  const left = limited ? Math.max(0, (summary.usage_limit ?? 0) - (summary.usage_count ?? 0)) : null;
  return (
    <p data-testid="usage-line">
      {limited ? (
        <Badge tone={left === 0 ? "bad" : "info"}>
          {left} of {summary.usage_limit} uses left
        </Badge>
      ) : (
        <span className="muted small">No usage limit.</span>
      )}{" "}
      <button onClick={() => setOpen(true)} data-testid="usage-limit-button">
        {limited ? "Raise limit…" : "Usage limit…"}
      </button>
      {open && <LimitDialog partitionId={partitionId} summary={summary} onClose={() => setOpen(false)} onSet={onChanged} />}
    </p>
  );
}

/// Every key with a usage limit on the logged-in partitions.
export function UsageLimitedKeys() {
  const { auditTick } = useAudit();
  const { run: load, data: keys, error } = useCommand(api.usageKeys, { keepError: true });
  useEffect(() => {
    void load();
  }, [load, auditTick]);
  if (error) return <ErrorBox error={error} />;
  if (!keys || keys.length === 0) return null;
  return (
    <section data-testid="usage-keys">
      <h2>Keys with a usage limit</h2>
      <p className="muted">Luna's per-key limits (CKA_USAGE_LIMIT): each sign, verify, encrypt and decrypt uses one.</p>
      <table className="table" data-testid="usage-table">
        <thead>
          <tr>
            <th>Key</th>
            <th>Algorithm</th>
            <th>Uses left</th>
            <th>Used</th>
            <th>Per day (7 / 30 / 90 d)</th>
            <th>Runs out</th>
            <th>Status</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={`${k.partition_id}-${k.handle}`} data-testid="usage-row" data-label={k.label}>
              <td>
                <strong>{k.label}</strong>
                <div className="muted small">
                  {k.partition_label} · id {k.id_hex}
                </div>
              </td>
              <td>{k.algorithm}</td>
              <td>
                {k.left.toLocaleString()} of {k.limit.toLocaleString()} uses left
              </td>
              <td>{k.used_percent.toFixed(1)} %</td>
              <td>
                {k.per_day_7.toFixed(2)} / {k.per_day_30.toFixed(2)} / {k.per_day_90.toFixed(2)}
              </td>
              <td>{k.projected_exhaustion ?? <span className="muted">no uses recorded</span>}</td>
              <td>
                <Badge tone={TONE[k.status] ?? "ok"}>{k.status}</Badge>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
