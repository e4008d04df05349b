// HA groups: the groups a module shows (Connections), one group with its members side by
// side (Partition, Statistics). The drift check is HaDrift.tsx; the header's warning when a
// group drifted or lost a member, HaBadges.tsx. The backend decides and records; these only
// show and ask.
import { useCallback, useEffect } from "react";
import { useTranslation } from "react-i18next";
import type { HaGroupView, HaMemberView } from "../../bindings";
import { Badge, ErrorBox } from "../../components";
import { textOf, useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useConnections } from "../../state";
import { useCommand } from "../../useCommand";
import { useHaRefresh } from "./useHaRefresh";
import { DriftCard } from "./HaDrift";

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
