// Keys: a virtualized table (tens of thousands of objects), filters, the detail pane with
// every attribute decoded, public-key export, generation and deletion.
import { useCallback, useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import type { AttributeView, KeyDetails, ObjectSummary, PublicKeyFormat } from "../../bindings";
import { Badge, Dialog, EmptyState, ErrorBox, Field } from "../../components";
import { textOf } from "../../i18n";
import { api } from "../../ipc";
import { useAudit, useJumps, useKeygen, useNavigate, usePartition, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { permission } from "../credentials/Credentials";
import { DeleteDialog } from "./DeleteDialog";
import { GenerateDialog } from "./GenerateDialog";
import { AttributesDialog } from "../attributes/Attributes";
import { Kcv, UnwrapDialog, WrapDialog } from "../backup/Backup";
import { CertificatePane, ImportDialog, UriPane } from "../objects/Objects";
import { KeyFormats } from "./KeyFormats";
import { classLabel, KeyTable } from "./KeyTable";
import { KeySuccession } from "./KeySuccession";
import { UsageLine } from "../usage/Usage";

const CAPS = ["sign", "verify", "encrypt", "decrypt", "wrap", "unwrap", "derive", "encapsulate", "decapsulate"] as const;
type Cap = (typeof CAPS)[number];

function AttrValue({ a }: { a: AttributeView }) {
  const { t } = useTranslation();
  if (a.status !== "value") return <span className="muted">({a.status})</span>;
  const v = a.value ?? "";
  switch (a.display) {
    case "bool":
      return <Badge tone={v === "true" ? "ok" : "neutral"}>{v}</Badge>;
    case "hex":
      return v === "" ? (
        <span className="muted">{t("keys.empty_value")}</span>
      ) : (
        <code className="hex" title={v}>
          {v.length > 96 ? `${v.slice(0, 96)}… (${t("generate.bytes", { bytes: v.length / 2 })})` : v}
        </code>
      );
    case "name":
      return <code>{v}</code>;
    default:
      return <span>{v}</span>;
  }
}

function CertificateDialog({ partitionId, details, onClose }: { partitionId: string; details: KeyDetails; onClose: () => void }) {
  const { t } = useTranslation();
  const toast = useToast();
  const [importing, setImporting] = useState(false);
  const [subject, setSubject] = useState(`CN=${details.summary.label.replace(/[,+=\\"<>;]/g, "_")}`);
  const [days, setDays] = useState(1095);
  const {
    run,
    loading: busy,
    data: pem,
    error,
  } = useCommand(async (csr: boolean) =>
    csr
      ? await api.certificateRequest(partitionId, details.summary.handle, subject)
      : (await api.issueCertificate(partitionId, details.summary.handle, subject, days)).pem,
  );
  return (
    <Dialog title={t("keys.cert_title", { label: details.summary.label })} onClose={onClose} wide>
      <Field label={t("keys.subject")} hint={t("keys.subject_hint")}>
        <input type="text" value={subject} onChange={(e) => setSubject(e.target.value)} aria-label={t("keys.subject")} />
      </Field>
      <Field label={t("keys.valid_days")}>
        <input type="number" min={1} value={days} onChange={(e) => setDays(Number(e.target.value))} aria-label={t("keys.days")} />
      </Field>
      <p className="muted small">{details.summary.algorithm.startsWith("HSS") ? t("keys.cert_note_hss") : t("keys.cert_note")}</p>
      <div className="button-row">
        <button className="primary" onClick={() => void run(false)} disabled={busy}>
          {t("keys.issue_cert")}
        </button>
        <button onClick={() => void run(true)} disabled={busy}>
          {t("keys.create_csr")}
        </button>
        <button onClick={() => setImporting(true)} data-testid="import-issued">
          {t("keys.import_issued")}
        </button>
      </div>
      {importing && (
        <ImportDialog
          partitionId={partitionId}
          title={t("keys.import_issued_title", { label: details.summary.label })}
          onClose={() => setImporting(false)}
          onImported={(r) => {
            const mine = r.objects.find((o) => o.id_hex === details.summary.id_hex);
            toast(mine ? "ok" : "info", mine ? t("keys.imported_own_cert") : t("keys.imported_other_cert"));
          }}
        />
      )}
      {error && <ErrorBox error={error} />}
      {pem && <textarea className="pem" readOnly value={pem} rows={10} aria-label="PEM" data-testid="cert-pem" />}
    </Dialog>
  );
}

function PublicKeyExport({ partitionId, details }: { partitionId: string; details: KeyDetails }) {
  const { t } = useTranslation();
  const toast = useToast();
  const handle = details.summary.handle;
  const [cert, setCert] = useState(false);
  const { run: show, data: pem } = useCommand(async () => (await api.exportPublicKey(partitionId, handle, "pem")).text, {
    errorToast: t("common.export_failed"),
  });
  const { run: save } = useCommand(
    async (format: PublicKeyFormat) => {
      const base = (details.summary.label || details.summary.id_hex || "key").replace(/[^A-Za-z0-9._-]/g, "_");
      const p = await api.savePublicKey(partitionId, handle, format, `${base}.pub.${format}`);
      if (p) toast("ok", t("common.saved", { path: p }));
    },
    { errorToast: t("common.export_failed") },
  );
  const pk = details.public_key;
  if (!pk) return null;
  return (
    <section className="pubkey">
      <h3>{t("generate.public_key")}</h3>
      <p>{`${pk.algorithm} · ${t("generate.bytes", { bytes: pk.raw_len })}`}</p>
      <p>
        <code className="fingerprint" data-testid="fingerprint">
          {pk.fingerprint}
        </code>
      </p>
      <div className="button-row">
        <button onClick={() => void show()} data-testid="export-pem">
          {t("keys.show_pem")}
        </button>
        <button onClick={() => void save("pem")}>{t("keys.save_pem")}</button>
        <button onClick={() => void save("der")}>{t("keys.save_der")}</button>
        <button onClick={() => void save("raw")}>{t("keys.save_raw")}</button>
        {details.summary.class === "PRIVATE_KEY" && details.summary.capabilities.sign && (
          <button onClick={() => setCert(true)}>{t("keys.certificate")}</button>
        )}
      </div>
      {cert && <CertificateDialog partitionId={partitionId} details={details} onClose={() => setCert(false)} />}
      {pem && (
        <>
          <textarea className="pem" readOnly value={pem} rows={8} data-testid="pem-text" aria-label={t("keys.pem_label")} />
          <button onClick={() => void navigator.clipboard?.writeText(pem).then(() => toast("ok", t("keys.copied")))}>
            {t("keys.copy")}
          </button>
        </>
      )}
    </section>
  );
}

function DetailsPane({ partitionId, handle, onChanged }: { partitionId: string; handle: number; onChanged: () => void }) {
  const { t } = useTranslation();
  const { showAudit } = useJumps();
  const toast = useToast();
  const { partition } = usePartition();
  const canEdit = permission(partition, "edit_attributes");
  const [editing, setEditing] = useState(false);
  const [wrapping, setWrapping] = useState(false);
  const { run: loadDetails, data: d, error } = useCommand(api.keyDetails);
  const isLuna = usePartition().partition?.luna != null;
  // Remounted (key) for every key shown, so no state to reset here.
  useEffect(() => {
    void loadDetails(partitionId, handle);
  }, [loadDetails, partitionId, handle]);
  if (error) return <ErrorBox error={error} />;
  if (!d) return <p className="muted">{t("keys.reading_attributes")}</p>;
  return (
    <div className="details" data-testid="key-details">
      <h2>{d.summary.label || <span className="muted">{t("connections.no_label")}</span>}</h2>
      <p className="muted">
        {t("keys.detail_line", {
          class: classLabel(d.summary.class),
          algorithm: d.summary.algorithm || d.summary.key_type,
          handle: d.summary.handle,
        })}
      </p>
      {d.summary.duplicate_label && (
        <ErrorBox
          error={{
            code: "INVALID_INPUT",
            message: t("keys.duplicate_label"),
            details: t("keys.duplicate_label_details", { id: d.summary.id_hex }),
            suggestion: null,
            pkcs11: null,
          }}
        />
      )}
      {d.summary.id_hex && (
        <button onClick={() => showAudit(d.summary.id_hex)} data-testid="key-audit-records">
          {t("keys.audit_records")}
        </button>
      )}
      <button
        onClick={() => setEditing(true)}
        disabled={!canEdit?.allowed}
        title={canEdit?.allowed || !canEdit?.reason ? undefined : textOf(canEdit.reason)}
        data-testid="edit-attributes"
      >
        {t("keys.edit_attributes")}
      </button>
      {editing && (
        <AttributesDialog
          partitionId={partitionId}
          handle={handle}
          onClose={() => setEditing(false)}
          onChanged={(r) => {
            toast(
              "ok",
              r.moved.length
                ? t("keys.attributes_changed_moved", { changed: r.changed.join(", "), moved: r.moved.join(", ") })
                : t("keys.attributes_changed", { changed: r.changed.join(", ") }),
            );
            void loadDetails(partitionId, handle);
            onChanged();
          }}
        />
      )}
      {(d.summary.class === "SECRET_KEY" || d.summary.class === "PRIVATE_KEY") && (
        <button onClick={() => setWrapping(true)} data-testid="wrap-key">
          {t("keys.wrap")}
        </button>
      )}
      {wrapping && <WrapDialog partitionId={partitionId} details={d} onClose={() => setWrapping(false)} />}
      {d.summary.class === "SECRET_KEY" && (d.summary.key_type === "AES" || d.summary.key_type === "GENERIC_SECRET") && (
        <Kcv partitionId={partitionId} handle={d.summary.handle} />
      )}
      {/* The URI names the label and ID: read again when an edit changes them. */}
      <UriPane key={`${d.summary.label}/${d.summary.id_hex}`} partitionId={partitionId} handle={d.summary.handle} />
      <PublicKeyExport partitionId={partitionId} details={d} />
      {d.summary.class === "CERTIFICATE" && <CertificatePane partitionId={partitionId} handle={d.summary.handle} label={d.summary.label} />}
      {d.summary.class === "PRIVATE_KEY" && d.summary.capabilities.sign && <KeyFormats partitionId={partitionId} details={d} />}
      {d.summary.class === "PRIVATE_KEY" && d.summary.capabilities.sign && <KeySuccession partitionId={partitionId} details={d} />}
      {isLuna && <UsageLine partitionId={partitionId} summary={d.summary} onChanged={() => void loadDetails(partitionId, handle)} />}
      <table className="table compact attrs">
        <tbody>
          {d.attributes.map((a) => (
            <tr key={a.code}>
              <th scope="row" title={`0x${a.code.toString(16)}`}>
                {a.attribute}
              </th>
              <td>
                <AttrValue a={a} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function KeysView() {
  const { t } = useTranslation();
  const { partitionId, partition } = usePartition();
  const { auditTick } = useAudit();
  const { keySearch } = useJumps();
  const navigate = useNavigate();
  const toast = useToast();
  const { run: listKeys, data: keys, error } = useCommand(api.listKeys);
  const [q, setQ] = useState(keySearch);
  const [cls, setCls] = useState("");
  const [alg, setAlg] = useState("");
  const [cap, setCap] = useState<Cap | "">("");
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

  const classes = useMemo(() => Array.from(new Set((keys ?? []).map((k) => k.class))).sort(), [keys]);
  const algorithms = useMemo(() => Array.from(new Set((keys ?? []).map((k) => k.algorithm).filter(Boolean))).sort(), [keys]);
  const shown = useMemo(() => {
    const s = q.trim().toLowerCase();
    return (keys ?? []).filter(
      (k) =>
        (!cls || k.class === cls) &&
        (!alg || k.algorithm === alg) &&
        (!cap || k.capabilities[cap]) &&
        (!s || k.label.toLowerCase().includes(s) || k.id_hex.includes(s) || (k.parameter_set ?? "").toLowerCase().includes(s)),
    );
  }, [keys, q, cls, alg, cap]);

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
      <div className="filters">
        <input
          type="search"
          placeholder={t("keys.search_placeholder")}
          value={q}
          onChange={(e) => setQ(e.target.value)}
          aria-label={t("keys.search_label")}
          data-testid="key-search"
        />
        <select value={cls} onChange={(e) => setCls(e.target.value)} aria-label={t("keys.class")}>
          <option value="">{t("keys.all_classes")}</option>
          {classes.map((c) => (
            <option key={c} value={c}>
              {classLabel(c)}
            </option>
          ))}
        </select>
        <select value={alg} onChange={(e) => setAlg(e.target.value)} aria-label={t("audit.col_algorithm")}>
          <option value="">{t("keys.all_algorithms")}</option>
          {algorithms.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <select value={cap} onChange={(e) => setCap(e.target.value as Cap | "")} aria-label={t("keys.capability")}>
          <option value="">{t("keys.any_capability")}</option>
          {CAPS.map((c) => (
            <option key={c} value={c}>
              {t(`keys.can_${c}`)}
            </option>
          ))}
        </select>
      </div>
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
