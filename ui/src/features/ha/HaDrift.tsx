// Drift between an HA group's members: what differs (objects, attributes, policies), checked on demand.
import { useTranslation } from "react-i18next";
import type { Difference, DriftReport } from "../../bindings";
import { Badge, ErrorBox } from "../../components";
import { errorTexts, textOf, useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useCommand } from "../../useCommand";

export const VERDICT_TONE: Record<DriftReport["verdict"], "ok" | "warn" | "bad"> = {
  in_sync: "ok",
  drift: "bad",
  member_down: "bad",
  not_comparable: "warn",
};

export function Differences({ title, list }: { title: string; list: Difference[] }) {
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

export function DriftCard({ partitionId, last }: { partitionId: string; last: DriftReport | null }) {
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
                <tr key={m.serial} data-testid="drift-member">
                  <td>{m.position}</td>
                  <td>{m.serial}</td>
                  <td>
                    {t(`ha.check_${m.check}`)}
                    {m.error && <div className="muted small">{errorTexts(m.error).message}</div>}
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
