// Every HSS key across the logged-in partitions: what is left, how fast it goes, when it
// runs out, and whether the token's counter agrees with the audit trail.
import { useEffect } from "react";
import { Badge, EmptyState, ErrorBox } from "../components";
import { api } from "../ipc";
import { useAudit, useNavigate, useSettings } from "../state";
import { useCommand } from "../useCommand";
import { UsageLimitedKeys } from "./Usage";

const TONE: Record<string, "ok" | "warn" | "bad"> = { ok: "ok", warning: "warn", critical: "bad", exhausted: "bad" };

export function HssView() {
  const { auditTick } = useAudit();
  const { settings } = useSettings();
  const navigate = useNavigate();
  const { run: loadKeys, data: keys, error } = useCommand(api.hssKeys, { keepError: true });
  useEffect(() => {
    void loadKeys();
  }, [loadKeys, auditTick]);
  return (
    <div className="view">
      <header className="view-header">
        <h1>HSS keys</h1>
      </header>
      <p className="muted">
        Stateful hash-based keys sign a fixed number of times. An HSS key cannot be backed up or cloned (a copy would reuse one-time keys),
        key generation time grows steeply with tree height (H15 ≈ 90 s, H20 hours), and every signature uses one up for good. Warning below{" "}
        {settings?.hss_warning_percent ?? 10} % left, critical below {settings?.hss_critical_percent ?? 1} % (Settings).
      </p>
      {error && <ErrorBox error={error} />}
      {keys
        ?.filter((k) => k.mismatch)
        .map((k) => (
          <div className="error-box" role="alert" key={`m-${k.id_hex}`} data-testid="hss-mismatch">
            <strong>{k.label}: the token's counter and the audit trail disagree.</strong>
            <p>{k.mismatch}</p>
          </div>
        ))}
      {keys && keys.length === 0 ? (
        <EmptyState title="No HSS keys" action={<button onClick={() => navigate("keys")}>Go to Keys</button>}>
          Log in to a partition to see its private keys, or generate an HSS key in Keys → Generate.
        </EmptyState>
      ) : (
        <table className="table" data-testid="hss-table">
          <thead>
            <tr>
              <th>Key</th>
              <th>Levels</th>
              <th>Left</th>
              <th>Used</th>
              <th>Per day (7 / 30 / 90 d)</th>
              <th>Runs out</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {(keys ?? []).map((k) => (
              <tr key={`${k.partition_id}-${k.id_hex}`} data-testid="hss-row" data-label={k.label}>
                <td>
                  <strong>{k.label}</strong>
                  <div className="muted small">
                    {k.partition_label} · id {k.id_hex}
                  </div>
                </td>
                <td>{k.algorithm}</td>
                <td>
                  {k.remaining?.toLocaleString() ?? "?"} of {BigInt(k.capacity || "0").toLocaleString()}
                  {k.audit_expected_remaining !== null && !k.mismatch && <div className="muted small">matches the audit trail</div>}
                </td>
                <td>
                  <div
                    className="gauge"
                    role="meter"
                    aria-valuemin={0}
                    aria-valuemax={100}
                    aria-valuenow={Math.round(k.used_percent)}
                    aria-label={`${k.label} used`}
                  >
                    <div className={`gauge-fill gauge-${TONE[k.status] ?? "ok"}`} style={{ width: `${Math.min(100, k.used_percent)}%` }} />
                  </div>
                  <span className="small">{k.used_percent.toFixed(1)} %</span>
                </td>
                <td>
                  {k.per_day_7.toFixed(2)} / {k.per_day_30.toFixed(2)} / {k.per_day_90.toFixed(2)}
                </td>
                <td>{k.projected_exhaustion ?? <span className="muted">no signatures yet</span>}</td>
                <td>
                  <Badge tone={TONE[k.status] ?? "ok"}>{k.status}</Badge>
                  {k.mismatch && <Badge tone="bad">counter mismatch</Badge>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <UsageLimitedKeys />
    </div>
  );
}
