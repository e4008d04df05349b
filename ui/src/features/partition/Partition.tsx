// One partition: token information, Luna extras, the session pool, the mechanism table.
import { useTranslation } from "react-i18next";
import type { NamedSetting, StorageView } from "../../bindings";
import { Badge, EmptyState } from "../../components";
import { useFormat } from "../../i18n";
import { useNavigate, usePartition } from "../../state";
import { CredentialsCard } from "../credentials/Credentials";
import { roleNameText } from "../credentials/roles";
import { HaGroupPanel } from "../ha/Ha";
import { Mechanisms } from "./Mechanisms";

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
  const { t } = useTranslation();
  const fmt = useFormat();
  const pct = s.total > 0 ? Math.round((s.used / s.total) * 100) : 0;
  return (
    <span>
      {t("partition.storage_used", { used: fmt.bytes(s.used), total: fmt.bytes(s.total), pct })}
      {s.object_count !== null ? ` · ${t("partition.objects", { count: s.object_count })}` : ""}
    </span>
  );
}

function Settings({ title, items }: { title: string; items: NamedSetting[] }) {
  const { t } = useTranslation();
  return (
    <section className="card">
      <h2>{title}</h2>
      <table className="table compact">
        <thead>
          <tr>
            <th>ID</th>
            <th>{t("partition.col_name")}</th>
            <th>{t("partition.col_value")}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((i) => (
            <tr key={i.id}>
              <td>{i.id}</td>
              <td>
                {i.name ?? <span className="muted">{t("partition.unnamed")}</span>}{" "}
                {i.destructive && <Badge tone="warn">{t("partition.destructive")}</Badge>}
              </td>
              <td>{i.value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function PartitionViewPage() {
  const { t: tr } = useTranslation();
  const { partition: p, partitionId } = usePartition();
  const navigate = useNavigate();
  if (!partitionId || !p) {
    return (
      <div className="view">
        <h1>{tr("nav.partition")}</h1>
        <EmptyState
          title={tr("common.no_partition_selected")}
          action={<button onClick={() => navigate("connections")}>{tr("common.go_to_connections")}</button>}
        >
          {tr("partition.open_a_token")}
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
          <h2>{tr("stats.token")}</h2>
          <Info
            rows={[
              [tr("partition.serial"), t.serial],
              [tr("partition.model"), t.model],
              [tr("partition.manufacturer"), t.manufacturer],
              [tr("stats.firmware"), p.luna?.firmware ? `${p.luna.firmware} (CA_GetFirmwareVersion)` : t.firmware_version],
              [tr("partition.hardware"), t.hardware_version],
              [
                tr("stats.sessions"),
                tr("stats.sessions_value", {
                  count: t.session_count ?? 0,
                  n: t.session_count ?? "?",
                  max: t.max_session_count ?? tr("stats.unlimited"),
                  rw: t.rw_session_count ?? "?",
                }),
              ],
              [tr("partition.pin_length"), `${t.min_pin_len} – ${t.max_pin_len}`],
              [tr("stats.mechanisms"), p.mechanism_count],
              [tr("partition.holds_audit_key"), p.holds_audit_key ? <Badge tone="ok">{tr("common.yes")}</Badge> : tr("common.no")],
            ]}
          />
        </section>
        <section className="card">
          <h2>{tr("partition.pool")}</h2>
          <Info
            rows={[
              [tr("connections.col_slot"), p.slot_id],
              [
                tr("stats.sessions"),
                tr("partition.pool_sessions", { open: p.pool.open, size: p.pool.size, in_use: p.pool.in_use, waiting: p.pool.waiting }),
              ],
              [
                tr("partition.breaker"),
                <Badge key="b" tone={p.pool.breaker === "closed" ? "ok" : "bad"}>
                  {tr(`overview.breaker_${p.pool.breaker}`)}
                </Badge>,
              ],
              [tr("partition.breaker_opened"), tr("partition.times", { count: p.pool.breaker_opened })],
              [tr("partition.logged_in"), p.logged_in ? roleNameText(p.role_name) || p.logged_in : tr("common.no")],
            ]}
          />
        </section>
        {p.luna && (
          <section className="card">
            <h2>Luna</h2>
            <Info
              rows={[
                [tr("stats.firmware"), p.luna.firmware ?? "—"],
                [tr("stats.hsm_storage"), p.luna.hsm_storage ? <Storage s={p.luna.hsm_storage} /> : "—"],
                [tr("partition.partition_storage"), p.luna.token_storage ? <Storage s={p.luna.token_storage} /> : "—"],
                [tr("partition.status_flags"), p.luna.token_status_flags !== null ? `0x${p.luna.token_status_flags.toString(16)}` : "—"],
              ]}
            />
            <p className="muted small">{tr("partition.luna_functions", { list: p.vendor_functions.join(", ") })}</p>
          </section>
        )}
      </div>
      <div className="cards">
        <CredentialsCard p={p} />
      </div>
      <div className="cards">
        {p.luna?.partition_policies && <Settings title={tr("partition.policies")} items={p.luna.partition_policies} />}
        {p.luna?.hsm_capabilities && <Settings title={tr("partition.capabilities")} items={p.luna.hsm_capabilities} />}
      </div>
      <HaGroupPanel partitionId={partitionId} key={`ha-${partitionId}`} />
      <Mechanisms partitionId={partitionId} key={partitionId} />
    </div>
  );
}
