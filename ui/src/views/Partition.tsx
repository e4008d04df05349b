// One partition: token information, Luna extras, the session pool, the mechanism table.
import { useEffect, useMemo, useState } from "react";
import type { NamedSetting, StorageView } from "../bindings";
import { Badge, EmptyState, ErrorBox, formatBytes } from "../components";
import { api } from "../ipc";
import { useNavigate, usePartition, useToast } from "../state";
import { useCommand } from "../useCommand";
import { CredentialsCard } from "./Credentials";

function Info({ rows }: { rows: [string, React.ReactNode][] }) {
  return (
    <dl className="info-grid">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function Storage({ s }: { s: StorageView }) {
  const pct = s.total > 0 ? Math.round((s.used / s.total) * 100) : 0;
  return (
    <span>
      {formatBytes(s.used)} of {formatBytes(s.total)} used ({pct}%){s.object_count !== null ? ` · ${s.object_count} objects` : ""}
    </span>
  );
}

function Settings({ title, items }: { title: string; items: NamedSetting[] }) {
  return (
    <section className="card">
      <h3>{title}</h3>
      <table className="table compact">
        <thead>
          <tr>
            <th>ID</th>
            <th>Name</th>
            <th>Value</th>
          </tr>
        </thead>
        <tbody>
          {items.map((i) => (
            <tr key={i.id}>
              <td>{i.id}</td>
              <td>
                {i.name ?? <span className="muted">(unnamed)</span>} {i.destructive && <Badge tone="warn">destructive</Badge>}
              </td>
              <td>{i.value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Mechanisms({ partitionId }: { partitionId: string }) {
  const toast = useToast();
  const { run: loadList, data: list, error } = useCommand(api.mechanisms);
  const [q, setQ] = useState("");
  useEffect(() => {
    void loadList(partitionId);
  }, [loadList, partitionId]);
  const shown = useMemo(() => {
    const s = q.trim().toLowerCase();
    if (!list) return [];
    if (!s) return list;
    return list.filter(
      (m) =>
        (m.name ?? "").toLowerCase().includes(s) || m.hex.toLowerCase().includes(s) || m.flags.some((f) => f.toLowerCase().includes(s)),
    );
  }, [list, q]);
  const { run: exportCsv } = useCommand(
    async () => {
      const p = await api.saveMechanismsCsv(partitionId);
      if (p) toast("ok", `Saved ${p}.`);
    },
    { errorToast: "Export failed" },
  );
  return (
    <section className="card">
      <header className="card-header">
        <h3>
          Mechanisms{" "}
          {list && (
            <span className="muted">
              ({shown.length} of {list.length})
            </span>
          )}
        </h3>
        <div className="inline-form">
          <input
            type="search"
            placeholder="Filter by name, code or flag"
            value={q}
            onChange={(e) => setQ(e.target.value)}
            aria-label="Filter mechanisms"
            data-testid="mechanism-filter"
          />
          <button onClick={() => void exportCsv()} disabled={!list}>
            Export CSV…
          </button>
        </div>
      </header>
      {error && <ErrorBox error={error} />}
      {list === null && !error && <p className="muted">Reading the mechanism list…</p>}
      {list && (
        <div className="scroll-box">
          <table className="table compact" data-testid="mechanism-table">
            <thead>
              <tr>
                <th>Code</th>
                <th>Name</th>
                <th>Key sizes</th>
                <th>Flags</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((m) => (
                <tr key={m.code}>
                  <td>
                    <code>{m.hex}</code>
                  </td>
                  <td>{m.name ?? <span className="muted">(vendor-defined)</span>}</td>
                  <td>{m.min_key_size === 0 && m.max_key_size === 0 ? "—" : `${m.min_key_size} – ${m.max_key_size}`}</td>
                  <td className="flags">{m.info_error ? <span className="muted">{m.info_error}</span> : m.flags.join(" ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function PartitionViewPage() {
  const { partition: p, partitionId } = usePartition();
  const navigate = useNavigate();
  if (!partitionId || !p) {
    return (
      <div className="view">
        <h1>Partition</h1>
        <EmptyState title="No partition selected" action={<button onClick={() => navigate("connections")}>Go to Connections</button>}>
          Open a token from the Connections view.
        </EmptyState>
      </div>
    );
  }
  const t = p.token;
  return (
    <div className="view">
      <header className="view-header">
        <h1>{t.label}</h1>
        <span className="muted">{p.module_path}</span>
      </header>
      <div className="cards">
        <section className="card">
          <h3>Token</h3>
          <Info
            rows={[
              ["Serial", t.serial],
              ["Model", t.model],
              ["Manufacturer", t.manufacturer],
              ["Firmware", p.luna?.firmware ? `${p.luna.firmware} (CA_GetFirmwareVersion)` : t.firmware_version],
              ["Hardware", t.hardware_version],
              ["Sessions", `${t.session_count ?? "?"} of ${t.max_session_count ?? "unlimited"} (${t.rw_session_count ?? "?"} read-write)`],
              ["PIN length", `${t.min_pin_len} – ${t.max_pin_len}`],
              ["Mechanisms", p.mechanism_count],
              ["Holds audit key", p.holds_audit_key ? <Badge tone="ok">yes</Badge> : "no"],
            ]}
          />
        </section>
        <section className="card">
          <h3>Session pool</h3>
          <Info
            rows={[
              ["Slot", p.slot_id],
              ["Sessions", `${p.pool.open} open of ${p.pool.size} (${p.pool.in_use} in use, ${p.pool.waiting} waiting)`],
              [
                "Circuit breaker",
                <Badge key="b" tone={p.pool.breaker === "closed" ? "ok" : "bad"}>
                  {p.pool.breaker.replace("_", " ")}
                </Badge>,
              ],
              ["Breaker opened", `${p.pool.breaker_opened} times`],
              ["Logged in", p.logged_in ? (p.role_name ?? p.logged_in) : "no"],
            ]}
          />
        </section>
        {p.luna && (
          <section className="card">
            <h3>Luna</h3>
            <Info
              rows={[
                ["Firmware", p.luna.firmware ?? "—"],
                ["HSM storage", p.luna.hsm_storage ? <Storage s={p.luna.hsm_storage} /> : "—"],
                ["Partition storage", p.luna.token_storage ? <Storage s={p.luna.token_storage} /> : "—"],
                ["Token status flags", p.luna.token_status_flags !== null ? `0x${p.luna.token_status_flags.toString(16)}` : "—"],
              ]}
            />
            <p className="muted small">Luna functions offered: {p.vendor_functions.join(", ")}</p>
          </section>
        )}
      </div>
      <div className="cards">
        <CredentialsCard p={p} />
      </div>
      <div className="cards">
        {p.luna?.partition_policies && <Settings title="Partition policies" items={p.luna.partition_policies} />}
        {p.luna?.hsm_capabilities && <Settings title="HSM capabilities" items={p.luna.hsm_capabilities} />}
      </div>
      <Mechanisms partitionId={partitionId} key={partitionId} />
    </div>
  );
}
