// Post-quantum readiness: every key and certificate on the logged-in partitions judged under
// the policy chosen in Settings (NIST IR 8547, CNSA 2.0 or an organisation's file) — the
// counts by quantum class per partition and together, the years keys become deprecated and
// disallowed, and a table of every object with its dates, its use as the audit trail records
// it and what to do: the successor algorithm by purpose, "Generate successor…" (the key
// generation dialog filled in) and, for signing keys, dual signing during the transition.
// The same keys export as a CycloneDX 1.6 CBOM.
import { useEffect, useMemo, useState, type KeyboardEvent } from "react";
import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import type { Assessed, Counts, PqcStatus, QuantumClass, Readiness, Successor } from "../../bindings";
import { BarChart, type BarSpec } from "../../charts/Chart";
import { Badge, EmptyState, ErrorBox, Field } from "../../components";
import { useFormat } from "../../i18n";
import { api, toApiError } from "../../ipc";
import { useAudit, useConnections, useJumps, useNavigate, useSettings, useToast } from "../../state";
import { useConsoleEvent } from "../../state/events";
import { useCommand } from "../../useCommand";
import { GenerateDialog } from "../keys/GenerateDialog";
import { CapacityCard } from "./PqcCapacity";

/// An object with the partition it is on.
export type Row = Assessed & { partition_id: string; partition_label: string };

const CLASS_TONE: Record<Assessed["algorithm"]["class"], "ok" | "warn" | "bad" | "info" | "neutral"> = {
  "quantum-vulnerable": "bad",
  "post-quantum": "ok",
  "not-quantum-relevant": "info",
  unknown: "warn",
};
const STATUS_TONE: Record<Assessed["status"], "ok" | "warn" | "bad" | "info" | "neutral"> = {
  ok: "ok",
  "due-within-a-year": "warn",
  deprecated: "warn",
  "past-due": "bad",
  unjudged: "neutral",
};
/// The counts table's row of all partitions together.
const ALL = "all";
const CLASSES = ["quantum_vulnerable", "post_quantum", "not_quantum_relevant", "unknown"] as const;
const CLASS_KEY = {
  "quantum-vulnerable": "pqc.class_quantum_vulnerable",
  "post-quantum": "pqc.class_post_quantum",
  "not-quantum-relevant": "pqc.class_not_quantum_relevant",
  unknown: "pqc.class_unknown",
} as const satisfies Record<QuantumClass, string>;
const STATUS_KEY = {
  ok: "pqc.status_ok",
  "due-within-a-year": "pqc.status_due_within_a_year",
  deprecated: "pqc.status_deprecated",
  "past-due": "pqc.status_past_due",
  unjudged: "pqc.status_unjudged",
} as const satisfies Record<PqcStatus, string>;
const OBJECT_KEY = {
  PRIVATE_KEY: "pqc.object_private_key",
  PUBLIC_KEY: "pqc.object_public_key",
  SECRET_KEY: "pqc.object_secret_key",
  CERTIFICATE: "pqc.object_certificate",
} as const;
const objectKind = (cls: string) => OBJECT_KEY[cls as keyof typeof OBJECT_KEY] ?? OBJECT_KEY.SECRET_KEY;
/// Deprecated in the first series colour, disallowed in red (and named in the legend).
const TIMELINE_COLORS: BarSpec["colors"] = [2, "bad"];

/// The classical algorithm in a label ("rsa_2048", "p256", "ed25519").
const CLASSICAL_IN_LABEL = /(rsa|aes)[_-]?\d{3,4}|ecdsa[_-]?p?[_-]?\d{3}|ec[_-]?p[_-]?\d{3}|p[_-]?(256|384|521)|ed25519|ed448|ecdsa|rsa/i;

/// The successor's label from the old one: its algorithm replaced ("release_rsa_2048" →
/// "release_ml_dsa_65"), or the successor's name added; in the old label's separator style.
export function successorLabel(old: string, preset: string): string {
  const dashed = old.includes("-") && !old.includes("_");
  const name = dashed ? preset : preset.replace(/-/g, "_");
  if (!old.trim()) return name;
  if (CLASSICAL_IN_LABEL.test(old)) return old.replace(CLASSICAL_IN_LABEL, name);
  return `${old}${dashed ? "-" : "_"}${name}`;
}

/// Objects by the year their deprecation and disallowance dates fall in, every year from the
/// first (or `thisYear`, if earlier) to the last, so the axis reads as a time line from now.
export function timeline(rows: Assessed[], thisYear: number): { year: number; deprecated: number; disallowed: number }[] {
  const year = (d: string | null) => (d ? Number(d.slice(0, 4)) : null);
  const dated = rows.flatMap((r) => [year(r.deprecated_after), year(r.disallowed_after)]).filter((y): y is number => y !== null);
  if (dated.length === 0) return [];
  const out = [];
  for (let y = Math.min(thisYear, ...dated); y <= Math.max(...dated); y++) {
    out.push({
      year: y,
      deprecated: rows.filter((r) => year(r.deprecated_after) === y).length,
      disallowed: rows.filter((r) => year(r.disallowed_after) === y).length,
    });
  }
  return out;
}

/// The algorithm's name; a certificate's as "key signed with signature" in the window's language.
function algorithmName(r: Assessed, t: TFunction): string {
  const [key, sig] = r.algorithm.name.split(" signed with ");
  return r.object_class === "CERTIFICATE" && sig !== undefined ? t("pqc.certificate_algorithm", { key, sig }) : r.algorithm.name;
}

function CountsTable({ readiness }: { readiness: Readiness }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const line = (key: string, name: string, c: Counts, total: boolean) => (
    <tr key={key} data-testid="pqc-counts-row" data-partition={key} className={total ? "total" : undefined}>
      <th scope="row">{name}</th>
      {CLASSES.map((k) => (
        <td key={k} data-class={k}>
          {fmt.number(c[k])}
        </td>
      ))}
      <td data-status="past_due">{fmt.number(c.past_due)}</td>
      <td data-status="deprecated">{fmt.number(c.deprecated)}</td>
      <td data-status="due_within_a_year">{fmt.number(c.due_within_a_year)}</td>
    </tr>
  );
  return (
    <table className="table compact" data-testid="pqc-counts">
      <caption className="muted">{t("pqc.counts_caption")}</caption>
      <thead>
        <tr>
          <th>{t("pqc.col_partition")}</th>
          {CLASSES.map((k) => (
            <th key={k}>{t(`pqc.class_${k}`)}</th>
          ))}
          <th>{t("pqc.status_past_due")}</th>
          <th>{t("pqc.status_deprecated")}</th>
          <th>{t("pqc.status_due_within_a_year")}</th>
        </tr>
      </thead>
      <tbody>
        {readiness.partitions.map((p) =>
          line(p.partition_id, t("pqc.partition_name", { label: p.partition_label, serial: p.serial }), p.counts, false),
        )}
        {readiness.partitions.length > 1 && line(ALL, t("pqc.all_partitions"), readiness.counts, true)}
      </tbody>
    </table>
  );
}

/// The years objects become deprecated and disallowed: a chart, and the same numbers as text.
function Timeline({ rows, policy, today }: { rows: Row[]; policy: string; today: string }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const years = timeline(rows, Number(today.slice(0, 4)));
  if (years.length === 0)
    return (
      <p className="muted" data-testid="pqc-timeline-empty">
        {t("pqc.timeline_none", { policy })}
      </p>
    );
  return (
    <>
      <BarChart
        testId="pqc-timeline-chart"
        exportName="pqc-timeline"
        lines={12}
        spec={{
          title: t("pqc.timeline_title", { policy }),
          x: { label: t("pqc.timeline_x"), format: (v) => String(v) },
          // Objects are whole: no tick between two counts.
          y: { label: t("pqc.timeline_y"), format: (v) => (Number.isInteger(v) ? fmt.number(v) : "") },
          bars: years.map((y) => ({ label: String(y.year), values: [y.deprecated, y.disallowed] })),
          names: [t("pqc.timeline_deprecated"), t("pqc.timeline_disallowed")],
          colors: TIMELINE_COLORS,
        }}
      />
      <ul className="pqc-timeline-list small" data-testid="pqc-timeline">
        {years
          .filter((y) => y.deprecated + y.disallowed > 0)
          .map((y) => (
            <li key={y.year} data-year={y.year}>
              {t("pqc.timeline_year", { year: y.year, deprecated: fmt.number(y.deprecated), disallowed: fmt.number(y.disallowed) })}
            </li>
          ))}
      </ul>
    </>
  );
}

function EvidenceCell({ row }: { row: Row }) {
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

function ActionCell({ row, successor, onGenerate }: { row: Row; successor: Successor | null; onGenerate: () => void }) {
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

function ObjectsTable({ rows, onGenerate }: { rows: Row[]; onGenerate: (r: Row, s: Successor) => void }) {
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

/// The policy the view judges under: the one in Settings, switched here (and remembered there).
function PolicyPicker({ readiness }: { readiness: Readiness | null }) {
  const { t } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const { settings, setSettings } = useSettings();
  const current = settings?.pqc_policy ?? "nist";
  const choose = async (policy: string) => {
    if (!settings || policy === current) return;
    try {
      setSettings(await api.updateSettings({ ...settings, pqc_policy: policy }));
    } catch (e) {
      toast("error", t("pqc.policy_not_saved"), toApiError(e));
    }
  };
  return (
    <div className="pqc-policy">
      <Field
        label={t("pqc.policy")}
        hint={readiness ? t("pqc.policy_source", { source: readiness.source, date: readiness.date }) : undefined}
      >
        <select value={current} onChange={(e) => void choose(e.target.value)} data-testid="pqc-view-policy" aria-label={t("pqc.policy")}>
          <option value="nist">{t("settings.pqc_nist")}</option>
          <option value="cnsa2">{t("settings.pqc_cnsa2")}</option>
          {current !== "nist" && current !== "cnsa2" && <option value={current}>{t("pqc.policy_file", { name: current })}</option>}
        </select>
      </Field>
      <button className="link" onClick={() => navigate("settings")}>
        {t("pqc.policy_in_settings")}
      </button>
    </div>
  );
}

export function PqcView() {
  const { t } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const { auditTick } = useAudit();
  const { settings } = useSettings();
  const { connections, connectionsLoaded } = useConnections();
  const policy = settings?.pqc_policy ?? null;
  const { run: load, data: readiness, error, loading } = useCommand(api.pqcReadiness, { keepError: true });
  const [scope, setScope] = useState(ALL);
  const [gen, setGen] = useState<{ row: Row; successor: Successor } | null>(null);
  const partitions = connections.flatMap((c) => c.slots.filter((s) => s.partition_id !== null));
  useEffect(() => {
    if (policy !== null) void load(null, policy);
  }, [load, policy, auditTick]);
  // A login, a logout or a changed token changes what there is to judge.
  useConsoleEvent((ev) => {
    if (ev.kind === "partition_changed" && policy !== null) void load(null, policy);
  });
  const rows: Row[] = useMemo(
    () =>
      (readiness?.partitions ?? [])
        .filter((p) => scope === ALL || p.partition_id === scope)
        .flatMap((p) => p.objects.map((o) => ({ ...o, partition_id: p.partition_id, partition_label: p.partition_label }))),
    [readiness, scope],
  );
  const exportCbom = async () => {
    if (!policy) return;
    try {
      const path = await api.pqcExportCbom(scope === ALL ? null : scope, policy);
      if (path) toast("ok", t("pqc.cbom_saved", { path }));
    } catch (e) {
      toast("error", t("pqc.cbom_failed"), toApiError(e));
    }
  };
  const header = (
    <header className="view-header">
      <h1>{t("pqc.title")}</h1>
    </header>
  );
  if (connectionsLoaded && partitions.length === 0) {
    return (
      <div className="view">
        {header}
        <EmptyState
          title={t("common.no_partition_selected")}
          action={<button onClick={() => navigate("connections")}>{t("common.go_to_connections")}</button>}
        >
          {t("pqc.no_partition")}
        </EmptyState>
      </div>
    );
  }
  const policyName = readiness?.policy ?? "";
  return (
    <div className="view" data-testid="pqc-view">
      {header}
      <p className="muted">{t("pqc.intro")}</p>
      <div className="filters pqc-toolbar">
        <PolicyPicker readiness={readiness} />
        {readiness && readiness.partitions.length > 1 && (
          <Field label={t("pqc.scope")}>
            <select value={scope} onChange={(e) => setScope(e.target.value)} data-testid="pqc-scope" aria-label={t("pqc.scope")}>
              <option value={ALL}>{t("pqc.all_partitions")}</option>
              {readiness.partitions.map((p) => (
                <option key={p.partition_id} value={p.partition_id}>
                  {p.partition_label}
                </option>
              ))}
            </select>
          </Field>
        )}
        <button onClick={() => void exportCbom()} disabled={!readiness || readiness.partitions.length === 0} data-testid="pqc-export-cbom">
          {t("pqc.export_cbom")}
        </button>
      </div>
      {error && <ErrorBox error={error} title={t("pqc.not_read")} />}
      {readiness && <p data-testid="pqc-policy-name">{t("pqc.judged_under", { policy: readiness.policy, date: readiness.date })}</p>}
      {readiness && readiness.partitions.length === 0 ? (
        <EmptyState
          title={t("pqc.log_in_title")}
          action={<button onClick={() => navigate("connections")}>{t("common.go_to_connections")}</button>}
        >
          {t("pqc.log_in_text")}
        </EmptyState>
      ) : readiness && rows.length === 0 ? (
        <EmptyState title={t("pqc.nothing_title")} action={<button onClick={() => navigate("keys")}>{t("pqc.go_to_keys")}</button>}>
          {t("pqc.nothing_text")}
        </EmptyState>
      ) : readiness ? (
        <>
          <section className="card">
            <CountsTable readiness={readiness} />
          </section>
          <section className="card chart">
            <Timeline rows={rows} policy={policyName} today={readiness.date} />
          </section>
          {readiness.partitions
            .filter((p) => scope === ALL || p.partition_id === scope)
            .map((p) => (
              <CapacityCard key={p.partition_id} partition={p} onProbed={() => policy && void load(null, policy)} />
            ))}
          <ObjectsTable rows={rows} onGenerate={(row, successor) => setGen({ row, successor })} />
        </>
      ) : (
        loading && <p className="muted">{t("pqc.reading")}</p>
      )}
      {gen && (
        <GenerateDialog
          partitionId={gen.row.partition_id}
          initial={{ preset: gen.successor.preset, label: successorLabel(gen.row.label, gen.successor.preset) }}
          onClose={() => setGen(null)}
          onDone={(label) => {
            toast("ok", t("keys.generated", { label }));
            if (policy) void load(null, policy);
          }}
        />
      )}
    </div>
  );
}
