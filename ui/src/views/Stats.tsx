// The partition's health: generic token figures for any module, Luna's CA_* statistics and
// utilization rates where offered, and the console's own call metrics, with live charts.
// Polling follows the settings' interval and pauses while the window is hidden.
import { useEffect, useState } from "react";
import type { StatsPoint, StatsSnapshot } from "../bindings";
import { Badge, EmptyState, ErrorBox, formatBytes } from "../components";
import { api } from "../ipc";
import { useNavigate, usePartition, useSettings, useToast } from "../state";
import { useCommand } from "../useCommand";

function svgUrl(svg: string) {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}

async function svgToPngBase64(svg: string): Promise<string> {
  const img = new Image();
  img.src = svgUrl(svg);
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = img.naturalWidth || 720;
  canvas.height = img.naturalHeight || 300;
  const ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("no canvas");
  ctx.drawImage(img, 0, 0);
  return canvas.toDataURL("image/png").split(",")[1] ?? "";
}

function historyCsv(h: StatsPoint[]): string {
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
  const { partitionId } = usePartition();
  const { settings } = useSettings();
  const navigate = useNavigate();
  const toast = useToast();
  const [snap, setSnap] = useState<StatsSnapshot | null>(null);
  const [charts, setCharts] = useState<{ load: string; console: string } | null>(null);
  const [paused, setPaused] = useState(false);
  const visible = useVisible();
  const interval = Math.max(1, settings?.stats_poll_seconds ?? 5);

  // A sample: the figures first, then the charts drawn from the history they extend.
  const { run: sampleFrom, error } = useCommand(
    async (partitionId: string) => {
      setSnap(await api.stats(partitionId));
      const [load, cons] = await Promise.all([api.statsChart(partitionId, "load"), api.statsChart(partitionId, "console")]);
      setCharts({ load, console: cons });
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

  const { run: exportChart } = useCommand(
    async (which: "load" | "console", kind: "svg" | "png") => {
      if (!charts) return;
      const svg = charts[which];
      const p =
        kind === "svg"
          ? await api.saveExport(`${which}.svg`, "svg", { text: svg })
          : await api.saveExport(`${which}.png`, "png", { base64: await svgToPngBase64(svg) });
      if (p) toast("ok", `Saved ${p}.`);
    },
    { errorToast: "Export failed" },
  );
  const { run: exportNumbers } = useCommand(
    async (kind: "csv" | "json") => {
      if (!partitionId) return;
      const h = await api.statsHistory(partitionId);
      const p = await api.saveExport(`statistics.${kind}`, kind, {
        text: kind === "csv" ? historyCsv(h) : JSON.stringify({ latest: snap, history: h }, null, 2),
      });
      if (p) toast("ok", `Saved ${p}.`);
    },
    { errorToast: "Export failed" },
  );

  if (!partitionId) {
    return (
      <div className="view">
        <h1>Statistics</h1>
        <EmptyState title="No partition selected" action={<button onClick={() => navigate("connections")}>Go to Connections</button>} />
      </div>
    );
  }
  const t = snap?.token;
  const l = snap?.luna;
  return (
    <div className="view">
      <header className="view-header">
        <h1>Statistics</h1>
        <div className="button-row">
          <span className="muted small">{paused ? "paused" : !visible ? "paused while hidden" : `every ${interval} s`}</span>
          <button onClick={() => setPaused(!paused)} data-testid="stats-pause">
            {paused ? "Resume" : "Pause"}
          </button>
          <button onClick={sample}>Sample now</button>
          <button onClick={() => void exportNumbers("csv")}>Numbers as CSV…</button>
          <button onClick={() => void exportNumbers("json")}>JSON…</button>
        </div>
      </header>
      {error && <ErrorBox error={error} title="Statistics could not be read" />}
      {snap && t && (
        <div className="cards" data-testid="stats-cards">
          <section className="card">
            <h3>Token</h3>
            <dl className="info-grid">
              <div>
                <dt>Library</dt>
                <dd>
                  {snap.manufacturer} · {snap.library} · Cryptoki {snap.cryptoki_version}
                </dd>
              </div>
              <div>
                <dt>Sessions</dt>
                <dd>
                  {t.session_count ?? "?"} of {t.max_session_count ?? "unlimited"} ({t.rw_session_count ?? "?"} read-write)
                </dd>
              </div>
              <div>
                <dt>Public memory</dt>
                <dd>
                  {t.total_public_memory === null
                    ? "not reported by the token"
                    : `${formatBytes(t.free_public_memory)} free of ${formatBytes(t.total_public_memory)}`}
                </dd>
              </div>
              <div>
                <dt>Private memory</dt>
                <dd>
                  {t.total_private_memory === null
                    ? "not reported by the token"
                    : `${formatBytes(t.free_private_memory)} free of ${formatBytes(t.total_private_memory)}`}
                </dd>
              </div>
              <div>
                <dt>Mechanisms</dt>
                <dd>{snap.mechanism_count}</dd>
              </div>
              <div>
                <dt>PIN</dt>
                <dd>
                  {t.user_pin_locked ? (
                    <Badge tone="bad">locked</Badge>
                  ) : t.user_pin_final_try ? (
                    <Badge tone="bad">final try</Badge>
                  ) : t.user_pin_count_low ? (
                    <Badge tone="warn">count low</Badge>
                  ) : (
                    <Badge tone="ok">ok</Badge>
                  )}
                </dd>
              </div>
            </dl>
          </section>
          <section className="card" data-testid="stats-luna">
            <h3>HSM (Luna)</h3>
            {l ? (
              <>
                <dl className="info-grid">
                  <div>
                    <dt>Busy</dt>
                    <dd data-testid="busy">
                      {l.busy_percent !== null ? `${l.busy_percent.toFixed(1)} %` : "measuring (two samples ≥ 5 s apart)…"}
                    </dd>
                  </div>
                  <div>
                    <dt>Commands</dt>
                    <dd>
                      {l.commands?.toLocaleString() ?? "?"}
                      {l.commands_per_second !== null && ` (${l.commands_per_second.toFixed(1)}/s)`}
                    </dd>
                  </div>
                  <div>
                    <dt>Firmware</dt>
                    <dd>{l.firmware ?? "—"}</dd>
                  </div>
                  <div>
                    <dt>HSM storage</dt>
                    <dd>{l.hsm_storage ? `${formatBytes(l.hsm_storage.used)} of ${formatBytes(l.hsm_storage.total)}` : "—"}</dd>
                  </div>
                </dl>
                <table className="table compact" data-testid="utilization">
                  <thead>
                    <tr>
                      <th>Requests</th>
                      <th>Count</th>
                      <th>Per second</th>
                    </tr>
                  </thead>
                  <tbody>
                    {l.utilization.map((b) => (
                      <tr key={b.bin}>
                        <td>{b.bin}</td>
                        <td>{b.count.toLocaleString()}</td>
                        <td>{b.per_second !== null ? b.per_second.toFixed(2) : "…"}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                {l.not_offered.length > 0 && <p className="muted small">Not offered by this module: {l.not_offered.join(", ")}</p>}
              </>
            ) : (
              <p className="muted">Not offered by this module (no Luna CA_* functions). The generic figures are on the left.</p>
            )}
          </section>
          <section className="card">
            <h3>Console</h3>
            <p>
              Pool: {snap.pool.open} of {snap.pool.size} sessions open, {snap.pool.in_use} in use; breaker{" "}
              <Badge tone={snap.pool.breaker === "closed" ? "ok" : "bad"}>{snap.pool.breaker.replace("_", " ")}</Badge>; recoveries{" "}
              {snap.metrics.module_recoveries}, session reopens {snap.metrics.session_reopens}.
            </p>
            <table className="table compact" data-testid="console-ops">
              <thead>
                <tr>
                  <th>Operation</th>
                  <th>OK</th>
                  <th>Errors</th>
                  <th>p50 µs</th>
                  <th>p95 µs</th>
                  <th>p99 µs</th>
                </tr>
              </thead>
              <tbody>
                {snap.metrics.ops.map((o) => (
                  <tr key={o.op}>
                    <td>{o.op}</td>
                    <td>{o.ok}</td>
                    <td>{o.errors}</td>
                    <td>{o.p50_us.toFixed(0)}</td>
                    <td>{o.p95_us.toFixed(0)}</td>
                    <td>{o.p99_us.toFixed(0)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </div>
      )}
      {charts && (
        <div className="cards">
          {(["load", "console"] as const).map((w) => (
            <section className="card chart" key={w}>
              <img
                src={svgUrl(charts[w])}
                alt={w === "load" ? "HSM load over time" : "Console calls over time"}
                data-testid={`chart-${w}`}
              />
              <div className="button-row">
                <button onClick={() => void exportChart(w, "svg")}>SVG…</button>
                <button onClick={() => void exportChart(w, "png")}>PNG…</button>
              </div>
            </section>
          ))}
        </div>
      )}
    </div>
  );
}
