// HA in other views: the header's warning badge, a probe's share per member.
import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { HaProbeShare, HaWarning } from "../../bindings";
import { Badge } from "../../components";
import { textOf, useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useNavigate, usePartitionActions } from "../../state";
import { useHaRefresh } from "./useHaRefresh";

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
