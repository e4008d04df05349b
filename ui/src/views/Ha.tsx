// HA groups: the groups a module shows (Connections), one group with its members side by
// side and the drift check (Partition, Statistics), and the header's warning when a group
// drifted or lost a member. The backend decides and records; these only show and ask.
import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { Difference, DriftReport, HaGroupView, HaMemberView, HaProbeShare, HaWarning } from "../bindings";
import { Badge, ErrorBox } from "../components";
import { textOf, useFormat } from "../i18n";
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
  const { t } = useTranslation();
  return (
    <>
      {m.alive ? <Badge tone="ok">{t("ha.alive")}</Badge> : <Badge tone="bad">{t("ha.down", { status: m.status })}</Badge>}
      {m.needs_sync === true && <Badge tone="bad">{t("ha.needs_sync")}</Badge>}
      {m.needs_sync === false && <Badge tone="ok">{t("ha.in_sync")}</Badge>}
    </>
  );
}

/// The members of one group, with their own statistics side by side.
function MembersTable({ group, stats }: { group: HaGroupView; stats: boolean }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  return (
    <table className="table compact" data-testid={`ha-members-${group.serial}`}>
      <thead>
        <tr>
          <th>{t("ha.col_member")}</th>
          <th>{t("ha.col_serial")}</th>
          <th>{t("ha.col_state")}</th>
          <th>{t("ha.col_slot")}</th>
          <th>{t("ha.col_logged_in")}</th>
          {stats && (
            <>
              <th>{t("ha.col_busy")}</th>
              <th>{t("ha.col_commands")}</th>
              <th>{t("ha.col_share")}</th>
              <th>{t("ha.col_last_served")}</th>
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
            <td>{m.slot_id ?? <span className="muted">{t("ha.slot_hidden")}</span>}</td>
            <td>{m.logged_in ? (m.logged_in === "so" ? t("ha.logged_in_so") : t("ha.logged_in_user")) : t("common.no")}</td>
            {stats && (
              <>
                <td>{fmt.percent(m.busy_percent)}</td>
                <td>
                  {fmt.number(m.commands)}
                  {m.commands_per_second !== null && (
                    <div className="muted small">{t("ha.per_second", { rate: fmt.number(m.commands_per_second, 1) })}</div>
                  )}
                </td>
                <td>{fmt.percent(m.served_share_percent)}</td>
                <td>{m.last_served ? fmt.time(m.last_served) : <span className="muted">—</span>}</td>
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
  const { t } = useTranslation();
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
          <h3>
            {t("ha.group", { label: g.label })}{" "}
            <span className="muted">{t("ha.serial_virtual_slot", { serial: g.serial, slot: g.slot_id })}</span>{" "}
            {g.warning ? (
              <Badge tone="bad">{g.warning_text ? textOf(g.warning_text) : g.warning}</Badge>
            ) : (
              <Badge tone="ok">{t("ha.n_alive", { n: g.members.filter((m) => m.alive).length })}</Badge>
            )}
          </h3>
          <MembersTable group={g} stats={false} />
        </div>
      ))}
    </div>
  );
}

function Differences({ title, list }: { title: string; list: Difference[] }) {
  const { t } = useTranslation();
  if (list.length === 0) return null;
  return (
    <>
      <h3>{title}</h3>
      <table className="table compact" data-testid="drift-differences">
        <thead>
          <tr>
            <th>{t("ha.col_object")}</th>
            <th>{t("ha.col_what")}</th>
            <th>{t("ha.col_on_member")}</th>
            <th>{t("ha.col_values")}</th>
          </tr>
        </thead>
        <tbody>
          {list.map((d, i) => (
            <tr key={`${d.object}-${d.field ?? ""}-${i}`} data-testid="drift-difference" data-kind={d.kind}>
              <td>{textOf(d.object_text)}</td>
              <td>{d.kind === "missing" || !d.field_text ? t("ha.missing") : t("ha.field_differs", { field: textOf(d.field_text) })}</td>
              <td>{d.members.join(", ")}</td>
              <td className="small">
                {d.values.map((v) => (
                  <div key={v.member}>
                    {t("ha.member_value", { member: v.member })}{" "}
                    {v.value === null ? <span className="muted">{t("ha.absent")}</span> : d.field_text === null ? t("ha.present") : v.value}
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
  const { t } = useTranslation();
  const fmt = useFormat();
  const { run: check, data, loading, error } = useCommand(api.haDrift);
  const r = data ?? last;
  return (
    <section className="card" data-testid="drift-card">
      <header className="card-header">
        <h2>{t("ha.drift_check")}</h2>
        <button onClick={() => void check(partitionId)} disabled={loading} data-testid="drift-check">
          {loading ? t("ha.comparing") : t("ha.check_now")}
        </button>
      </header>
      <p className="muted small">{t("ha.drift_intro")}</p>
      {error && <ErrorBox error={error} />}
      {!r && !error && <p className="muted">{t("ha.not_checked")}</p>}
      {r && (
        <>
          <p data-testid="drift-verdict" data-verdict={r.verdict}>
            <Badge tone={VERDICT_TONE[r.verdict]}>{textOf(r.summary_text)}</Badge>{" "}
            <span className="muted small">{fmt.time(r.checked_at)}</span>
          </p>
          <table className="table compact">
            <thead>
              <tr>
                <th>{t("ha.col_member")}</th>
                <th>{t("ha.col_serial")}</th>
                <th>{t("ha.col_check")}</th>
                <th>{t("ha.col_objects")}</th>
              </tr>
            </thead>
            <tbody>
              {r.members.map((m) => (
                <tr key={m.serial}>
                  <td>{m.position}</td>
                  <td>{m.serial}</td>
                  <td>
                    {t(`ha.check_${m.check}`)}
                    {m.error && <div className="muted small">{m.error}</div>}
                  </td>
                  <td>{m.objects ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Differences title={t("ha.objects")} list={r.differences} />
          <Differences title={t("ha.policies")} list={r.policy_differences} />
          {r.notes_text.map((n) => (
            <p className="muted small" key={n.text}>
              {textOf(n)}
            </p>
          ))}
          <p className="muted small">{textOf(r.kcv_method_text)}.</p>
        </>
      )}
    </section>
  );
}

/// One group with its members side by side and the drift check (Partition, Statistics);
/// nothing for a partition that is not an HA group's virtual slot.
export function HaGroupPanel({ partitionId }: { partitionId: string }) {
  const { t } = useTranslation();
  const { run: load, data: group, error } = useCommand(api.haGroup, { keepError: true });
  const reload = useCallback(() => void load(partitionId), [load, partitionId]);
  useEffect(() => {
    reload();
  }, [reload]);
  useHaRefresh(reload, true);
  if (error) return <ErrorBox error={error} title={t("ha.group_title")} />;
  if (!group) return null;
  return (
    <>
      <section className="card" data-testid="ha-group">
        <header className="card-header">
          <h2>
            {t("ha.group", { label: group.label })} <span className="muted">{t("common.serial", { serial: group.serial })}</span>
          </h2>
          {group.warning ? (
            <Badge tone="bad">{group.warning_text ? textOf(group.warning_text) : group.warning}</Badge>
          ) : (
            <Badge tone="ok">{t("ha.members_alive")}</Badge>
          )}
        </header>
        <MembersTable group={group} stats={true} />
        {!group.members_visible && <p className="muted small">{t("ha.members_hidden")}</p>}
        <p className="muted small">{t("ha.layout_note", { layout: t(`ha.layout_${group.layout}`) })}</p>
      </section>
      <DriftCard partitionId={partitionId} last={group.drift} />
    </>
  );
}

/// The header's warning: a group with a drift or a member down.
export function HaWarningBadge() {
  const { t } = useTranslation();
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
      title={warnings.map((x) => t("ha.warning_title", { label: x.label, serial: x.serial, text: textOf(x.message) })).join("\n")}
      onClick={() => {
        selectPartition(w.partition_id);
        navigate("partition");
      }}
    >
      <Badge tone="bad">
        {t("ha.warning_badge", { label: w.label, text: textOf(w.message) })}
        {warnings.length > 1 ? ` (+${warnings.length - 1})` : ""}
      </Badge>
    </button>
  );
}

/// A probe on a group: each member's share of the calls and throughput, and the total.
export function HaProbeShares({ share }: { share: HaProbeShare }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  return (
    <div data-testid="probe-ha">
      <h3>{t("ha.probe_total", { rate: fmt.number(share.total_per_s, 1) })}</h3>
      <table className="table compact">
        <thead>
          <tr>
            <th>{t("ha.col_member")}</th>
            <th>{t("ha.col_serial")}</th>
            <th>{t("ha.col_share_of_calls")}</th>
            <th>{t("ha.col_throughput")}</th>
          </tr>
        </thead>
        <tbody>
          {share.members.map((m) => (
            <tr key={m.serial} data-testid="probe-ha-member">
              <td>{m.member}</td>
              <td>{m.serial}</td>
              <td>{fmt.percent(m.share_percent)}</td>
              <td>{t("ha.per_second", { rate: fmt.number(m.per_s, 1) })}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted small">{t("ha.probe_basis", { basis: share.basis_text ? textOf(share.basis_text) : share.basis })}</p>
    </div>
  );
}
