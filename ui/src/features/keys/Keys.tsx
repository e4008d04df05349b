// Keys: a virtualized table (tens of thousands of objects), filters, the detail pane with
// every attribute decoded, public-key export, generation and deletion.
import { useCallback, useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import type { ObjectSummary } from "../../bindings";
import { EmptyState, ErrorBox } from "../../components";
import { textOf } from "../../i18n";
import { api } from "../../ipc";
import { useAudit, useJumps, useKeygen, useNavigate, usePartition, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { permission } from "../credentials/roles";
import { DeleteDialog } from "./DeleteDialog";
import { GenerateDialog } from "./GenerateDialog";
import { UnwrapDialog } from "../backup/UnwrapDialog";
import { ImportDialog } from "../objects/ImportDialog";
import { KeyTable } from "./KeyTable";
import { DetailsPane } from "./KeyDetails";
import { filterKeys, KeyFilters, type KeyFilter } from "./KeyFilters";

export function KeysView() {
  const { t } = useTranslation();
  const { partitionId, partition } = usePartition();
  const { auditTick } = useAudit();
  const { keySearch } = useJumps();
  const navigate = useNavigate();
  const toast = useToast();
  const { run: listKeys, data: keys, error } = useCommand(api.listKeys);
  const [filter, setFilter] = useState<KeyFilter>(() => ({ q: keySearch, cls: "", alg: "", cap: "" }));
  const [active, setActive] = useState<number | null>(null);
  const [checked, setChecked] = useState<Set<number>>(new Set());
  const [gen, setGen] = useState(false);
  const [del, setDel] = useState<ObjectSummary[] | null>(null);
  const [importing, setImporting] = useState(false);
  const [unwrapping, setUnwrapping] = useState(false);

  const load = useCallback(async () => {
    if (partitionId) await listKeys(partitionId);
  }, [listKeys, partitionId]);

  // A key generated in the background while this view was closed shows up on return too;
  // after the HSM reconnected (a new module generation) the handles may be new numbers.
  const { lastDone } = useKeygen();
  const generation = partition?.pool.module_generation;
  useEffect(() => {
    void load();
  }, [load, partition?.logged_in, lastDone, generation]);

  const shown = useMemo(() => filterKeys(keys ?? [], filter), [keys, filter]);

  // Space ticks the active key, Delete asks to delete the ticked ones (or the active one);
  // the table moves between the keys.
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === " " && active !== null) {
      e.preventDefault();
      toggle(active);
    } else if (e.key === "Delete" && (checked.size > 0 || active !== null)) {
      e.preventDefault();
      askDelete();
    }
  };
  const toggle = (h: number) =>
    setChecked((c) => {
      const n = new Set(c);
      if (n.has(h)) n.delete(h);
      else n.add(h);
      return n;
    });
  // Every role that uses keys sees private objects; what it may change, the permissions say.
  const loggedIn = partition?.logged_in != null && partition.logged_in !== "so";
  const canGenerate = permission(partition, "generate_keys");
  const canDelete = permission(partition, "delete_objects");
  const canImport = permission(partition, "import_objects");
  const canUnwrap = permission(partition, "unwrap_keys");
  const askDelete = () => {
    if (canDelete?.allowed === false) {
      toast("info", canDelete.reason ? textOf(canDelete.reason) : t("keys.role_may_not_delete"));
      return;
    }
    const handles = checked.size > 0 ? Array.from(checked) : active !== null ? [active] : [];
    const objs = (keys ?? []).filter((k) => handles.includes(k.handle));
    if (objs.length) setDel(objs);
  };

  if (!partitionId) {
    return (
      <div className="view">
        <h1>{t("nav.keys")}</h1>
        <EmptyState
          title={t("common.no_partition_selected")}
          action={<button onClick={() => navigate("connections")}>{t("common.go_to_connections")}</button>}
        >
          {t("keys.open_a_token")}
        </EmptyState>
      </div>
    );
  }
  return (
    <div className="view keys-view">
      <header className="view-header">
        <h1>
          {t("nav.keys")}{" "}
          {keys && (
            <span className="muted">
              {shown.length === keys.length ? `(${keys.length})` : t("partition.shown_of", { shown: shown.length, total: keys.length })}
            </span>
          )}
        </h1>
        <div className="button-row">
          <button onClick={() => void load()}>{t("overview.refresh")}</button>
          <button
            onClick={askDelete}
            disabled={(checked.size === 0 && active === null) || canDelete?.allowed === false}
            title={canDelete?.allowed === false && canDelete.reason ? textOf(canDelete.reason) : undefined}
            data-testid="delete-keys"
          >
            {checked.size > 0 ? t("keys.delete_n", { n: checked.size }) : t("keys.delete")}
          </button>
          <button
            onClick={() => setImporting(true)}
            disabled={!canImport?.allowed}
            title={canImport?.allowed ? t("keys.import_title") : canImport?.reason ? textOf(canImport.reason) : t("keys.log_in_first")}
            data-testid="import-objects"
          >
            {t("keys.import")}
          </button>
          <button
            onClick={() => setUnwrapping(true)}
            disabled={!canUnwrap?.allowed}
            title={canUnwrap?.allowed ? t("backup.unwrap_title") : canUnwrap?.reason ? textOf(canUnwrap.reason) : t("keys.log_in_first")}
            data-testid="unwrap-key"
          >
            {t("backup.unwrap_button")}
          </button>
          <button
            className="primary"
            onClick={() => setGen(true)}
            disabled={!canGenerate?.allowed}
            title={canGenerate?.allowed ? t("generate.title") : canGenerate?.reason ? textOf(canGenerate.reason) : t("keys.log_in_first")}
            data-testid="generate-key"
          >
            {t("keys.generate")}
          </button>
        </div>
      </header>
      {loggedIn && canGenerate?.allowed === false && canGenerate.reason && (
        <div className="notice" data-testid="role-notice">
          {textOf(canGenerate.reason)}
        </div>
      )}
      {!loggedIn && <div className="notice">{t("keys.public_only")}</div>}
      <KeyFilters keys={keys} filter={filter} onChange={setFilter} />
      {error && <ErrorBox error={error} title={t("keys.unlisted")} />}
      <div className="split">
        <KeyTable
          keys={keys}
          shown={shown}
          error={error}
          loggedIn={loggedIn}
          active={active}
          onActivate={setActive}
          checked={checked}
          onToggle={toggle}
          onKeyDown={onKeyDown}
        />
        <aside className="detail-pane">
          {active !== null ? (
            <DetailsPane
              partitionId={partitionId}
              handle={active}
              key={`${active}-${auditTick > 0 ? 1 : 0}`}
              onChanged={() => void load()}
            />
          ) : (
            <p className="muted pad">{t("keys.select_one")}</p>
          )}
        </aside>
      </div>
      {unwrapping && <UnwrapDialog partitionId={partitionId} onClose={() => setUnwrapping(false)} onUnwrapped={() => void load()} />}
      {importing && (
        <ImportDialog
          partitionId={partitionId}
          title={t("keys.import_title")}
          onClose={() => setImporting(false)}
          onImported={(r) => {
            toast("ok", t("keys.imported", { count: r.objects.length }));
            void load();
          }}
        />
      )}
      {gen && (
        <GenerateDialog
          partitionId={partitionId}
          onClose={() => setGen(false)}
          onDone={(label) => {
            toast("ok", t("keys.generated", { label }));
            void load();
          }}
        />
      )}
      {del && (
        <DeleteDialog
          partitionId={partitionId}
          objects={del}
          onClose={() => setDel(null)}
          onDone={(n) => {
            toast("ok", t("keys.deleted", { count: n }));
            setChecked(new Set());
            setActive(null);
            void load();
          }}
        />
      )}
    </div>
  );
}
