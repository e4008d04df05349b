// Keys: a virtualized table (tens of thousands of objects), filters, the detail pane with
// every attribute decoded, public-key export, generation and deletion.
import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { AttributeView, KeyDetails, ObjectSummary, PublicKeyFormat } from "../bindings";
import { Badge, Dialog, EmptyState, ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { useAudit, useJumps, useNavigate, usePartition, useToast } from "../state";
import { useCommand } from "../useCommand";
import { permission } from "./Credentials";
import { DeleteDialog } from "./DeleteDialog";
import { GenerateDialog } from "./GenerateDialog";
import { AttributesDialog } from "./Attributes";
import { Kcv, WrapDialog } from "./Backup";
import { CertificatePane, ImportDialog, UriPane } from "./Objects";

const CAPS = ["sign", "verify", "encrypt", "decrypt", "wrap", "unwrap", "derive", "encapsulate", "decapsulate"] as const;
type Cap = (typeof CAPS)[number];

const ROW = 34;

function classLabel(c: string) {
  return c.toLowerCase().replace(/_/g, " ");
}

function AttrValue({ a }: { a: AttributeView }) {
  if (a.status !== "value") return <span className="muted">({a.status})</span>;
  const v = a.value ?? "";
  switch (a.display) {
    case "bool":
      return <Badge tone={v === "true" ? "ok" : "neutral"}>{v}</Badge>;
    case "hex":
      return v === "" ? (
        <span className="muted">(empty)</span>
      ) : (
        <code className="hex" title={v}>
          {v.length > 96 ? `${v.slice(0, 96)}… (${v.length / 2} bytes)` : v}
        </code>
      );
    case "name":
      return <code>{v}</code>;
    default:
      return <span>{v}</span>;
  }
}

function CertificateDialog({ partitionId, details, onClose }: { partitionId: string; details: KeyDetails; onClose: () => void }) {
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
    <Dialog title={`Certificate for ${details.summary.label}`} onClose={onClose} wide>
      <Field label="Subject" hint="A distinguished name, e.g. CN=Release signing,O=Example">
        <input type="text" value={subject} onChange={(e) => setSubject(e.target.value)} aria-label="Subject" />
      </Field>
      <Field label="Valid for (days)">
        <input type="number" min={1} value={days} onChange={(e) => setDays(Number(e.target.value))} aria-label="Days" />
      </Field>
      <p className="muted small">
        The HSM key signs the certificate or request{details.summary.algorithm.startsWith("HSS") ? " (one HSS signature)" : ""}. An issued
        certificate is kept on the token next to the key; CMS signatures carry it.
      </p>
      <div className="button-row">
        <button className="primary" onClick={() => void run(false)} disabled={busy}>
          Issue self-signed certificate
        </button>
        <button onClick={() => void run(true)} disabled={busy}>
          Create CSR
        </button>
        <button onClick={() => setImporting(true)} data-testid="import-issued">
          Import the issued certificate…
        </button>
      </div>
      {importing && (
        <ImportDialog
          partitionId={partitionId}
          title={`The certificate a CA issued for ${details.summary.label}`}
          onClose={() => setImporting(false)}
          onImported={(r) => {
            const mine = r.objects.find((o) => o.id_hex === details.summary.id_hex);
            toast(
              mine ? "ok" : "info",
              mine
                ? "Imported: CMS signatures now carry this certificate and its chain."
                : "Imported, but it is not this key's certificate.",
            );
          }}
        />
      )}
      {error && <ErrorBox error={error} />}
      {pem && <textarea className="pem" readOnly value={pem} rows={10} aria-label="PEM" data-testid="cert-pem" />}
    </Dialog>
  );
}

function PublicKeyExport({ partitionId, details }: { partitionId: string; details: KeyDetails }) {
  const toast = useToast();
  const handle = details.summary.handle;
  const [cert, setCert] = useState(false);
  const { run: show, data: pem } = useCommand(async () => (await api.exportPublicKey(partitionId, handle, "pem")).text, {
    errorToast: "Export failed",
  });
  const { run: save } = useCommand(
    async (format: PublicKeyFormat) => {
      const base = (details.summary.label || details.summary.id_hex || "key").replace(/[^A-Za-z0-9._-]/g, "_");
      const p = await api.savePublicKey(partitionId, handle, format, `${base}.pub.${format}`);
      if (p) toast("ok", `Saved ${p}.`);
    },
    { errorToast: "Export failed" },
  );
  const pk = details.public_key;
  if (!pk) return null;
  return (
    <section className="pubkey">
      <h4>Public key</h4>
      <p>
        {pk.algorithm} · {pk.raw_len} bytes
      </p>
      <p>
        <code className="fingerprint" data-testid="fingerprint">
          {pk.fingerprint}
        </code>
      </p>
      <div className="button-row">
        <button onClick={() => void show()} data-testid="export-pem">
          Show PEM
        </button>
        <button onClick={() => void save("pem")}>Save PEM…</button>
        <button onClick={() => void save("der")}>Save DER…</button>
        <button onClick={() => void save("raw")}>Save raw…</button>
        {details.summary.class === "PRIVATE_KEY" && details.summary.capabilities.sign && (
          <button onClick={() => setCert(true)}>Certificate…</button>
        )}
      </div>
      {cert && <CertificateDialog partitionId={partitionId} details={details} onClose={() => setCert(false)} />}
      {pem && (
        <>
          <textarea className="pem" readOnly value={pem} rows={8} data-testid="pem-text" aria-label="Public key (PEM)" />
          <button onClick={() => void navigator.clipboard?.writeText(pem).then(() => toast("ok", "Copied."))}>Copy</button>
        </>
      )}
    </section>
  );
}

function DetailsPane({ partitionId, handle, onChanged }: { partitionId: string; handle: number; onChanged: () => void }) {
  const { showAudit } = useJumps();
  const toast = useToast();
  const { partition } = usePartition();
  const canEdit = permission(partition, "edit_attributes");
  const [editing, setEditing] = useState(false);
  const [wrapping, setWrapping] = useState(false);
  const { run: loadDetails, data: d, error } = useCommand(api.keyDetails);
  // Remounted (key) for every key shown, so no state to reset here.
  useEffect(() => {
    void loadDetails(partitionId, handle);
  }, [loadDetails, partitionId, handle]);
  if (error) return <ErrorBox error={error} />;
  if (!d) return <p className="muted">Reading attributes…</p>;
  return (
    <div className="details" data-testid="key-details">
      <h3>{d.summary.label || <span className="muted">(no label)</span>}</h3>
      <p className="muted">
        {classLabel(d.summary.class)} · {d.summary.algorithm || d.summary.key_type} · handle {d.summary.handle}
      </p>
      {d.summary.duplicate_label && (
        <ErrorBox
          error={{
            code: "INVALID_INPUT",
            message: "Another object of this class has the same label.",
            details: "Labels are not unique in PKCS#11; scripts should select this key by id:" + d.summary.id_hex,
            suggestion: null,
            pkcs11: null,
          }}
        />
      )}
      {d.summary.id_hex && (
        <button onClick={() => showAudit(d.summary.id_hex)} data-testid="key-audit-records">
          Audit records of this key
        </button>
      )}
      <button
        onClick={() => setEditing(true)}
        disabled={!canEdit?.allowed}
        title={canEdit?.allowed ? undefined : (canEdit?.reason ?? undefined)}
        data-testid="edit-attributes"
      >
        Edit attributes…
      </button>
      {editing && (
        <AttributesDialog
          partitionId={partitionId}
          handle={handle}
          onClose={() => setEditing(false)}
          onChanged={(r) => {
            toast("ok", `Changed ${r.changed.join(", ")}${r.moved.length ? `; moved ${r.moved.join(", ")}` : ""}.`);
            void loadDetails(partitionId, handle);
            onChanged();
          }}
        />
      )}
      {(d.summary.class === "SECRET_KEY" || d.summary.class === "PRIVATE_KEY") && (
        <button onClick={() => setWrapping(true)} data-testid="wrap-key">
          Wrap…
        </button>
      )}
      {wrapping && <WrapDialog partitionId={partitionId} details={d} onClose={() => setWrapping(false)} />}
      {d.summary.class === "SECRET_KEY" && d.summary.key_type === "AES" && <Kcv partitionId={partitionId} handle={d.summary.handle} />}
      <UriPane partitionId={partitionId} handle={d.summary.handle} />
      <PublicKeyExport partitionId={partitionId} details={d} />
      {d.summary.class === "CERTIFICATE" && <CertificatePane partitionId={partitionId} handle={d.summary.handle} label={d.summary.label} />}
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
  const parentRef = useRef<HTMLDivElement>(null);

  const load = useCallback(async () => {
    if (partitionId) await listKeys(partitionId);
  }, [listKeys, partitionId]);

  useEffect(() => {
    void load();
  }, [load, partition?.logged_in]);

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

  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual's API cannot be memoized by the React compiler; this table re-renders on scroll by design.
  const virt = useVirtualizer({ count: shown.length, getScrollElement: () => parentRef.current, estimateSize: () => ROW, overscan: 12 });

  const activeIndex = shown.findIndex((k) => k.handle === active);
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (shown.length === 0) return;
    let i = activeIndex;
    if (e.key === "ArrowDown") i = Math.min(shown.length - 1, i + 1);
    else if (e.key === "ArrowUp") i = Math.max(0, i - 1);
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = shown.length - 1;
    else if (e.key === " " && active !== null) {
      e.preventDefault();
      toggle(active);
      return;
    } else if (e.key === "Delete" && (checked.size > 0 || active !== null)) {
      e.preventDefault();
      askDelete();
      return;
    } else return;
    e.preventDefault();
    const k = shown[Math.max(0, i)];
    if (k) {
      setActive(k.handle);
      virt.scrollToIndex(Math.max(0, i));
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
  const askDelete = () => {
    if (canDelete?.allowed === false) {
      toast("info", canDelete.reason ?? "This role may not delete objects.");
      return;
    }
    const handles = checked.size > 0 ? Array.from(checked) : active !== null ? [active] : [];
    const objs = (keys ?? []).filter((k) => handles.includes(k.handle));
    if (objs.length) setDel(objs);
  };

  if (!partitionId) {
    return (
      <div className="view">
        <h1>Keys</h1>
        <EmptyState title="No partition selected" action={<button onClick={() => navigate("connections")}>Go to Connections</button>}>
          Open a token from the Connections view to see its keys.
        </EmptyState>
      </div>
    );
  }
  return (
    <div className="view keys-view">
      <header className="view-header">
        <h1>
          Keys {keys && <span className="muted">({shown.length === keys.length ? keys.length : `${shown.length} of ${keys.length}`})</span>}
        </h1>
        <div className="button-row">
          <button onClick={() => void load()}>Refresh</button>
          <button
            onClick={askDelete}
            disabled={(checked.size === 0 && active === null) || canDelete?.allowed === false}
            title={canDelete?.allowed === false ? (canDelete.reason ?? undefined) : undefined}
            data-testid="delete-keys"
          >
            Delete{checked.size > 0 ? ` (${checked.size})` : ""}…
          </button>
          <button
            onClick={() => setImporting(true)}
            disabled={!canImport?.allowed}
            title={
              canImport?.allowed
                ? "Import a certificate, public key or data object"
                : (canImport?.reason ?? "Log in as the partition's user first")
            }
            data-testid="import-objects"
          >
            Import…
          </button>
          <button
            className="primary"
            onClick={() => setGen(true)}
            disabled={!canGenerate?.allowed}
            title={canGenerate?.allowed ? "Generate a key" : (canGenerate?.reason ?? "Log in as the partition's user first")}
            data-testid="generate-key"
          >
            Generate key…
          </button>
        </div>
      </header>
      {loggedIn && canGenerate?.allowed === false && canGenerate.reason && (
        <div className="notice" data-testid="role-notice">
          {canGenerate.reason}
        </div>
      )}
      {!loggedIn && (
        <div className="notice">
          Not logged in as the user: only public objects are visible. Log in from Connections to see and manage private keys.
        </div>
      )}
      <div className="filters">
        <input
          type="search"
          placeholder="Search label, ID or parameter set"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          aria-label="Search keys"
          data-testid="key-search"
        />
        <select value={cls} onChange={(e) => setCls(e.target.value)} aria-label="Class">
          <option value="">All classes</option>
          {classes.map((c) => (
            <option key={c} value={c}>
              {classLabel(c)}
            </option>
          ))}
        </select>
        <select value={alg} onChange={(e) => setAlg(e.target.value)} aria-label="Algorithm">
          <option value="">All algorithms</option>
          {algorithms.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <select value={cap} onChange={(e) => setCap(e.target.value as Cap | "")} aria-label="Capability">
          <option value="">Any capability</option>
          {CAPS.map((c) => (
            <option key={c} value={c}>
              can {c}
            </option>
          ))}
        </select>
      </div>
      {error && <ErrorBox error={error} title="The keys could not be listed" />}
      <div className="split">
        <div
          className="key-table"
          role="grid"
          aria-label="Keys"
          aria-rowcount={shown.length}
          tabIndex={0}
          onKeyDown={onKeyDown}
          data-testid="key-table"
        >
          <div className="key-row key-head" role="row">
            <span role="columnheader" aria-label="Selected" />
            <span role="columnheader">Label</span>
            <span role="columnheader">Class</span>
            <span role="columnheader">Algorithm</span>
            <span role="columnheader">ID</span>
            <span role="columnheader">Flags</span>
          </div>
          {keys === null && !error ? (
            <p className="muted pad">Reading objects…</p>
          ) : shown.length === 0 ? (
            <EmptyState title={keys && keys.length > 0 ? "No key matches the filters" : "No objects on this partition"}>
              {keys && keys.length > 0
                ? "Clear the search or filters."
                : loggedIn
                  ? "Generate the first key with “Generate key…”."
                  : "Log in to see private objects."}
            </EmptyState>
          ) : (
            <div className="key-scroll" ref={parentRef}>
              <div style={{ height: virt.getTotalSize(), position: "relative" }}>
                {virt.getVirtualItems().map((v) => {
                  const k = shown[v.index]!;
                  return (
                    <div
                      key={k.handle}
                      role="row"
                      aria-rowindex={v.index + 1}
                      aria-selected={k.handle === active}
                      className={`key-row${k.handle === active ? " active" : ""}`}
                      style={{ position: "absolute", top: 0, left: 0, right: 0, height: ROW, transform: `translateY(${v.start}px)` }}
                      onClick={() => setActive(k.handle)}
                      data-label={k.label}
                      data-testid="key-row"
                    >
                      <span role="gridcell">
                        <input
                          type="checkbox"
                          checked={checked.has(k.handle)}
                          onChange={() => toggle(k.handle)}
                          onClick={(e) => e.stopPropagation()}
                          aria-label={`Select ${k.label}`}
                          tabIndex={-1}
                        />
                      </span>
                      <span role="gridcell" className="ellipsis" title={k.label}>
                        {k.label || <span className="muted">(no label)</span>}
                        {k.duplicate_label && (
                          <Badge tone="warn" title="Another object of this class has the same label">
                            duplicate
                          </Badge>
                        )}
                      </span>
                      <span role="gridcell">{classLabel(k.class)}</span>
                      <span role="gridcell">{k.algorithm || k.key_type}</span>
                      <span role="gridcell" className="mono ellipsis" title={k.id_hex}>
                        {k.id_hex}
                      </span>
                      <span role="gridcell" className="flags">
                        {k.token ? "token" : "session"}
                        {k.sensitive ? " · sensitive" : ""}
                        {k.extractable === false ? " · non-extractable" : ""}
                        {k.hss_keys_remaining !== null ? ` · ${k.hss_keys_remaining.toLocaleString()} left` : ""}
                      </span>
                    </div>
                  );
                })}
              </div>
            </div>
          )}
        </div>
        <aside className="detail-pane">
          {active !== null ? (
            <DetailsPane
              partitionId={partitionId}
              handle={active}
              key={`${active}-${auditTick > 0 ? 1 : 0}`}
              onChanged={() => void load()}
            />
          ) : (
            <p className="muted pad">Select a key to see all its attributes.</p>
          )}
        </aside>
      </div>
      {importing && (
        <ImportDialog
          partitionId={partitionId}
          title="Import a certificate, public key or data object"
          onClose={() => setImporting(false)}
          onImported={(r) => {
            toast("ok", `Imported ${r.objects.length} object${r.objects.length === 1 ? "" : "s"}.`);
            void load();
          }}
        />
      )}
      {gen && (
        <GenerateDialog
          partitionId={partitionId}
          onClose={() => setGen(false)}
          onDone={(label) => {
            toast("ok", `Generated ${label}.`);
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
            toast("ok", `Deleted ${n} object${n === 1 ? "" : "s"}.`);
            setChecked(new Set());
            setActive(null);
            void load();
          }}
        />
      )}
    </div>
  );
}
