// The PQC view's table of objects: each one's class, status, evidence and the action (a
// successor to generate).
import { type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import type { Successor } from "../../bindings";
import { Badge } from "../../components";
import { useFormat } from "../../i18n";
import { useJumps, useNavigate } from "../../state";
import { type Row, CLASS_TONE, STATUS_TONE, CLASS_KEY, STATUS_KEY, objectKind, algorithmName } from "./assessed";

export function EvidenceCell({ row }: { row: Row }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const e = row.evidence;
  if (row.object_class === "CERTIFICATE") return <span className="muted">{t("pqc.evidence_certificate")}</span>;
  if (!e.seen) return <span data-testid="pqc-never-used">{t("pqc.never_used")}</span>;
  return (
    <div data-testid="pqc-evidence">
      <div>{t("pqc.last_use", { when: e.last_use ? fmt.dateTime(e.last_use) : "—" })}</div>
      <div>{t("pqc.signatures_30_90", { d30: fmt.number(e.uses_30_days), d90: fmt.number(e.uses_90_days) })}</div>
      {e.recent_artifacts.length > 0 && (
        <div className="muted small">{t("pqc.recent_artifacts", { artifacts: e.recent_artifacts.join(", ") })}</div>
      )}
    </div>
  );
}

export function ActionCell({ row, successor, onGenerate }: { row: Row; successor: Successor | null; onGenerate: () => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { showKeys } = useJumps();
  if (row.status === "unjudged") return <span>{t("pqc.action_unjudged")}</span>;
  if (!successor) return <span className="muted">{t("pqc.action_none")}</span>;
  const signing = ["signing", "signing_cnsa", "ca"].includes(successor.advice);
  return (
    <div data-testid="pqc-action" data-preset={successor.preset}>
      <div>{t(`pqc.advice_${successor.advice}`)}</div>
      {row.object_class !== "PUBLIC_KEY" && (
        <button onClick={onGenerate} data-testid="pqc-generate-successor">
          {t("pqc.generate_successor")}
        </button>
      )}
      {signing && (
        <div className="muted small" data-testid="pqc-dual-sign">
          {t("pqc.dual_sign")}{" "}
          <button className="link" onClick={() => navigate("sign")}>
            {t("pqc.open_sign")}
          </button>{" "}
          <button className="link" onClick={() => showKeys(row.id_hex || row.label)}>
            {t("pqc.open_succession")}
          </button>
        </div>
      )}
    </div>
  );
}

export function ObjectsTable({ rows, onGenerate }: { rows: Row[]; onGenerate: (r: Row, s: Successor) => void }) {
  const { t } = useTranslation();
  const onKey = (e: KeyboardEvent<HTMLTableRowElement>, r: Row, s: Successor | null) => {
    if (e.target !== e.currentTarget) return;
    if (e.key === "Enter" && s && r.object_class !== "PUBLIC_KEY") {
      e.preventDefault();
      onGenerate(r, s);
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const next = e.key === "ArrowDown" ? e.currentTarget.nextElementSibling : e.currentTarget.previousElementSibling;
      if (next instanceof HTMLElement) next.focus();
    }
  };
  return (
    <table className="table" data-testid="pqc-table">
      <caption className="muted">{t("pqc.table_caption")}</caption>
      <thead>
        <tr>
          <th>{t("pqc.col_object")}</th>
          <th>{t("pqc.col_algorithm")}</th>
          <th>{t("pqc.col_class")}</th>
          <th>{t("pqc.col_category")}</th>
          <th>{t("pqc.col_dates")}</th>
          <th>{t("pqc.col_status")}</th>
          <th>{t("pqc.col_evidence")}</th>
          <th>{t("pqc.col_action")}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => {
          const s = r.successor;
          return (
            <tr
              key={`${r.partition_id}-${r.object_class}-${r.unique_id ?? r.id_hex}-${r.label}`}
              tabIndex={0}
              data-testid="pqc-row"
              data-label={r.label}
              data-class={r.object_class}
              data-status={r.status}
              onKeyDown={(e) => onKey(e, r, s)}
              aria-label={t("pqc.row_label", { label: r.label || r.id_hex, algorithm: r.algorithm.name, status: t(STATUS_KEY[r.status]) })}
            >
              <td>
                <strong>{r.label || t("pqc.no_label")}</strong>
                <div className="muted small">
                  {t("pqc.object_where", { kind: t(objectKind(r.object_class)), partition: r.partition_label })}
                </div>
              </td>
              <td data-testid="pqc-algorithm">
                {algorithmName(r, t)}
                {r.algorithm.classical_bits !== null && (
                  <div className="muted small">{t("pqc.classical_bits", { bits: r.algorithm.classical_bits })}</div>
                )}
              </td>
              <td>
                <Badge tone={CLASS_TONE[r.algorithm.class]}>{t(CLASS_KEY[r.algorithm.class])}</Badge>
              </td>
              <td data-testid="pqc-category">
                {r.algorithm.nist_category > 0 ? t("pqc.category", { n: r.algorithm.nist_category }) : t("pqc.category_none")}
              </td>
              <td data-testid="pqc-dates">
                {r.deprecated_after && <div>{t("pqc.deprecated_after", { date: r.deprecated_after })}</div>}
                {r.disallowed_after && <div>{t("pqc.disallowed_after", { date: r.disallowed_after })}</div>}
                {!r.deprecated_after && !r.disallowed_after && <span className="muted">{t("pqc.no_date")}</span>}
                {(r.start_date || r.end_date) && (
                  <div className="muted small">{t("pqc.key_dates", { start: r.start_date ?? "—", end: r.end_date ?? "—" })}</div>
                )}
              </td>
              <td>
                {/* The policy's own words (its file's language) on hover; the status translated. */}
                <Badge tone={STATUS_TONE[r.status]} title={r.verdict}>
                  {t(STATUS_KEY[r.status])}
                </Badge>
              </td>
              <td>
                <EvidenceCell row={r} />
              </td>
              <td>
                <ActionCell row={r} successor={s} onGenerate={() => s && onGenerate(r, s)} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
