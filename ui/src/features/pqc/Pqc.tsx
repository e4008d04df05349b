// Post-quantum readiness: every key and certificate on the logged-in partitions judged under
// the policy chosen in Settings (NIST IR 8547, CNSA 2.0 or an organisation's file) — the
// counts by quantum class per partition and together, the years keys become deprecated and
// disallowed, and a table of every object with its dates, its use as the audit trail records
// it and what to do: the successor algorithm by purpose, "Generate successor…" (the key
// generation dialog filled in) and, for signing keys, dual signing during the transition.
// The same keys export as a CycloneDX 1.6 CBOM.
import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import type { Readiness, Successor } from "../../bindings";
import { EmptyState, ErrorBox, Field } from "../../components";
import { api, toApiError } from "../../ipc";
import { useAudit, useConnections, useNavigate, useSettings, useToast } from "../../state";
import { useConsoleEvent } from "../../state/events";
import { useCommand } from "../../useCommand";
import { GenerateDialog } from "../keys/GenerateDialog";
import { CapacityCard } from "./PqcCapacity";
import { ObjectsTable } from "./PqcObjects";
import { CountsTable, Timeline } from "./PqcSummary";
import { type Row, ALL, successorLabel } from "./assessed";

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
