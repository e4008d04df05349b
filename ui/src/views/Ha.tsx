// HA groups: the groups a module shows (Connections), one group with its members side by
// side and the drift check (Partition, Statistics), and the header's warning when a group
// drifted or lost a member. The backend decides and records; these only show and ask.
import { useCallback, useEffect, useState } from "react";
import type { Difference, DriftReport, HaGroupView, HaMemberView, HaProbeShare, HaWarning } from "../bindings";
import { Badge, ErrorBox } from "../components";
import { api } from "../ipc";
import { useConnections, useNavigate, usePartitionActions, useSettings } from "../state";
import { useConsoleEvent } from "../state/events";
import { useCommand } from "../useCommand";

const VERDICT_TONE: Record<DriftReport["verdict"], "ok" | "warn" | "bad"> = {
  in_sync: "ok",
  drift: "bad",
  member_down: "bad",
  not_comparable: "warn",
};

/// Reload when the backend says a group changed, and every statistics interval.
function useHaRefresh(reload: () => void, poll: boolean) {
  const { settings } = useSettings();
  const every = (settings?.stats_poll_seconds ?? 5) * 1000;
  useConsoleEvent((e) => {
    if (e.kind === "ha_changed") reload();
  });
  useEffect(() => {
    if (!poll) return;
    const t = setInterval(() => {
      if (!document.hidden) reload();
    }, every);
    return () => clearInterval(t);
  }, [reload, poll, every]);
}

function MemberState({ m }: { m: HaMemberView }) {
  return (
    <>
      {m.alive ? <Badge tone="ok">alive</Badge> : <Badge tone="bad">down ({m.status})</Badge>}
      {m.needs_sync === true && <Badge tone="bad">needs sync</Badge>}
      {m.needs_sync === false && <Badge tone="ok">in sync</Badge>}
    </>
  );
}

const pct = (v: number | null) => (v === null ? "—" : `${v.toFixed(1)} %`);

/// The members of one group, with their own statistics side by side.
function MembersTable({ group, stats }: { group: HaGroupView; stats: boolean }) {
  return (
    <table className="table compact" data-testid={`ha-members-${group.serial}`}>
      <thead>
        <tr>
          <th>Member</th>
          <th>Serial</th>
          <th>State</th>
          <th>Slot</th>
          <th>Logged in</th>
          {stats && (
            <>
              <th>Busy</th>
              <th>Commands</th>
              <th>Share of calls</th>
              <th>Last served</th>
            </>
          )}
        </tr>
      </thead>
      <tbody>
        {group.members.map((m) => (
          <tr key={m.serial} data-testid="ha-member" data-alive={m.alive} data-needs-sync={String(m.needs_sync)}>
            <td>{m.position}</td>
            <td>{m.serial}</td>
            <td>
              <MemberState m={m} />
            </td>
            <td>{m.slot_id ?? <span className="muted">hidden</span>}</td>
            <td>{m.logged_in ? (m.logged_in === "so" ? "SO" : "user") : "no"}</td>
            {stats && (
              <>
                <td>{pct(m.busy_percent)}</td>
                <td>
                  {m.commands?.toLocaleString() ?? "—"}
                  {m.commands_per_second !== null && <div className="muted small">{m.commands_per_second.toFixed(1)}/s</div>}
                </td>
                <td>{pct(m.served_share_percent)}</td>
                <td>{m.last_served ? new Date(m.last_served).toLocaleTimeString() : <span className="muted">—</span>}</td>
              </>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/// The HA groups among one module's slots (Connections).
export function HaGroupsOfModule({ moduleId }: { moduleId: string }) {
  const { connections } = useConnections();
  const { run: load, data: groups } = useCommand(api.haGroups, { keepError: true });
  const reload = useCallback(() => void load(), [load]);
  useEffect(() => {
    reload();
  }, [reload, connections]);
  useHaRefresh(reload, false);
  const mine = (groups ?? []).filter((g) => g.module_id === moduleId);
  if (mine.length === 0) return null;
  return (
    <div className="ha-groups">
      {mine.map((g) => (
        <div key={g.partition_id} className="ha-group" data-testid={`ha-group-${g.serial}`}>
          <h4>
            HA group {g.label}{" "}
            <span className="muted">
              serial {g.serial} · virtual slot {g.slot_id}
            </span>{" "}
            {g.warning ? <Badge tone="bad">{g.warning}</Badge> : <Badge tone="ok">{g.members.filter((m) => m.alive).length} alive</Badge>}
          </h4>
          <MembersTable group={g} stats={false} />
        </div>
      ))}
    </div>
  );
}

function Differences({ title, list }: { title: string; list: Difference[] }) {
  if (list.length === 0) return null;
  return (
    <>
      <h4>{title}</h4>
      <table className="table compact" data-testid="drift-differences">
        <thead>
          <tr>
            <th>Object</th>
            <th>What</th>
            <th>On member</th>
            <th>Values</th>
          </tr>
        </thead>
        <tbody>
          {list.map((d, i) => (
            <tr key={`${d.object}-${d.field ?? ""}-${i}`} data-testid="drift-difference" data-kind={d.kind}>
              <td>{d.object}</td>
              <td>{d.kind === "missing" ? "missing" : `${d.field} differs`}</td>
              <td>{d.members.join(", ")}</td>
              <td className="small">
                {d.values.map((v) => (
                  <div key={v.member}>
                    {v.member}: {v.value ?? <span className="muted">absent</span>}
                  </div>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function DriftCard({ partitionId, last }: { partitionId: string; last: DriftReport | null }) {
  const { run: check, data, loading, error } = useCommand(api.haDrift);
  const r = data ?? last;
  return (
    <section className="card" data-testid="drift-card">
      <header className="card-header">
        <h3>Drift check</h3>
        <button onClick={() => void check(partitionId)} disabled={loading} data-testid="drift-check">
          {loading ? "Comparing…" : "Check now"}
        </button>
      </header>
      <p className="muted small">
        Compares the members object by object — class, key type, label, CKA_ID, public-key fingerprint, KCV of secret keys, CKA_MODIFIABLE /
        EXTRACTABLE / SENSITIVE — and their partition policies. Runs on the statistics interval too.
      </p>
      {error && <ErrorBox error={error} />}
      {!r && !error && <p className="muted">Not checked yet.</p>}
      {r && (
        <>
          <p data-testid="drift-verdict" data-verdict={r.verdict}>
            <Badge tone={VERDICT_TONE[r.verdict]}>{r.summary}</Badge>{" "}
            <span className="muted small">{new Date(r.checked_at).toLocaleTimeString()}</span>
          </p>
          <table className="table compact">
            <thead>
              <tr>
                <th>Member</th>
                <th>Serial</th>
                <th>Check</th>
                <th>Objects</th>
              </tr>
            </thead>
            <tbody>
              {r.members.map((m) => (
                <tr key={m.serial}>
                  <td>{m.position}</td>
                  <td>{m.serial}</td>
                  <td>
                    {m.check.replace("_", " ")}
                    {m.error && <div className="muted small">{m.error}</div>}
                  </td>
                  <td>{m.objects ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Differences title="Objects" list={r.differences} />
          <Differences title="Partition policies" list={r.policy_differences} />
          {r.notes.map((n) => (
            <p className="muted small" key={n}>
              {n}
            </p>
          ))}
          <p className="muted small">{r.kcv_method}.</p>
        </>
      )}
    </section>
  );
}

/// One group with its members side by side and the drift check (Partition, Statistics);
/// nothing for a partition that is not an HA group's virtual slot.
export function HaGroupPanel({ partitionId }: { partitionId: string }) {
  const { run: load, data: group, error } = useCommand(api.haGroup, { keepError: true });
  const reload = useCallback(() => void load(partitionId), [load, partitionId]);
  useEffect(() => {
    reload();
  }, [reload]);
  useHaRefresh(reload, true);
  if (error) return <ErrorBox error={error} title="HA group" />;
  if (!group) return null;
  return (
    <>
      <section className="card" data-testid="ha-group">
        <header className="card-header">
          <h3>
            HA group {group.label} <span className="muted">serial {group.serial}</span>
          </h3>
          {group.warning ? <Badge tone="bad">{group.warning}</Badge> : <Badge tone="ok">members alive</Badge>}
        </header>
        <MembersTable group={group} stats={true} />
        {!group.members_visible && (
          <p className="muted small">The members' own slots are not visible (HAOnly), so they cannot be compared.</p>
        )}
        <p className="muted small">
          CA_GetHAState in the {group.layout} SDK layout. Shares and “last served” come from each member's own command counter.
        </p>
      </section>
      <DriftCard partitionId={partitionId} last={group.drift} />
    </>
  );
}

/// The header's warning: a group with a drift or a member down.
export function HaWarningBadge() {
  const navigate = useNavigate();
  const { selectPartition } = usePartitionActions();
  const [warnings, setWarnings] = useState<HaWarning[]>([]);
  const reload = useCallback(() => {
    void api
      .haWarnings()
      .then(setWarnings)
      .catch(() => setWarnings([]));
  }, []);
  useEffect(() => {
    reload();
  }, [reload]);
  useHaRefresh(reload, true);
  const w = warnings[0];
  if (!w) return null;
  return (
    <button
      className="badge-button"
      data-testid="ha-warning"
      title={warnings.map((x) => `HA group ${x.label} (serial ${x.serial}): ${x.text}`).join("\n")}
      onClick={() => {
        selectPartition(w.partition_id);
        navigate("partition");
      }}
    >
      <Badge tone="bad">
        HA {w.label}: {w.text}
        {warnings.length > 1 ? ` (+${warnings.length - 1})` : ""}
      </Badge>
    </button>
  );
}

/// A probe on a group: each member's share of the calls and throughput, and the total.
export function HaProbeShares({ share }: { share: HaProbeShare }) {
  return (
    <div data-testid="probe-ha">
      <h4>HA group: {share.total_per_s.toFixed(1)} calls/s in all</h4>
      <table className="table compact">
        <thead>
          <tr>
            <th>Member</th>
            <th>Serial</th>
            <th>Share of the calls</th>
            <th>Throughput</th>
          </tr>
        </thead>
        <tbody>
          {share.members.map((m) => (
            <tr key={m.serial} data-testid="probe-ha-member">
              <td>{m.member}</td>
              <td>{m.serial}</td>
              <td>{m.share_percent.toFixed(1)} %</td>
              <td>{m.per_s.toFixed(1)}/s</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted small">From {share.basis}.</p>
    </div>
  );
}
