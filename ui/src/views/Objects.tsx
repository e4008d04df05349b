// Certificates and other objects: the Import dialog (a certificate, a chain, a .p7b, a
// public key, or any file as a data object) and the certificate pane in the Keys view
// (subject, issuer, validity, usages, fingerprints, chain; export as PEM/DER).
import { useEffect, useState } from "react";
import type { ImportResult, ObjectFormat } from "../bindings";
import { Badge, Dialog, ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { useToast } from "../state";
import { useCommand } from "../useCommand";

export function ImportDialog({
  partitionId,
  title,
  onClose,
  onImported,
}: {
  partitionId: string;
  title: string;
  onClose: () => void;
  onImported: (r: ImportResult) => void;
}) {
  const [path, setPath] = useState("");
  const [label, setLabel] = useState("");
  const [id, setId] = useState("");
  const [data, setData] = useState(false);
  const [application, setApplication] = useState("");
  const { run: pick } = useCommand(
    async () => {
      const [p] = await api.pickFiles("Choose the file to import", false);
      if (p) setPath(p);
    },
    { errorToast: "The file dialog failed" },
  );
  const {
    run: doImport,
    loading,
    data: result,
    error,
  } = useCommand(async () => {
    const r = await api.importObjects(partitionId, {
      path: path.trim(),
      label: label.trim() || null,
      id_hex: id.trim() || null,
      data,
      application: data ? application.trim() || null : null,
    });
    onImported(r);
    return r;
  });
  return (
    <Dialog title={title} onClose={onClose} wide>
      <Field
        label="File"
        hint="A certificate (PEM, DER, a PEM chain leaf first, .p7b) or a public key (SPKI PEM/DER). Private keys are never imported."
      >
        <div className="button-row">
          <input type="text" value={path} onChange={(e) => setPath(e.target.value)} aria-label="File path" data-testid="import-path" />
          <button onClick={() => void pick()}>Choose…</button>
        </div>
      </Field>
      <Field label="Label" hint="Empty: the key's label for its certificate, else the certificate's CN or the file name">
        <input type="text" value={label} onChange={(e) => setLabel(e.target.value)} aria-label="Label" />
      </Field>
      <Field label="ID (hex)" hint="Empty: the key's CKA_ID for its certificate">
        <input type="text" value={id} onChange={(e) => setId(e.target.value)} aria-label="ID" />
      </Field>
      <label className="checkbox">
        <input type="checkbox" checked={data} onChange={(e) => setData(e.target.checked)} /> Import the file as a data object (CKO_DATA)
      </label>
      {data && (
        <Field label="Application">
          <input type="text" value={application} onChange={(e) => setApplication(e.target.value)} aria-label="Application" />
        </Field>
      )}
      <div className="button-row">
        <button className="primary" onClick={() => void doImport()} disabled={loading || !path.trim()} data-testid="import-run">
          Import
        </button>
        <button onClick={onClose}>Close</button>
      </div>
      {error && <ErrorBox error={error} />}
      {result && (
        <ul data-testid="import-result">
          {result.objects.map((o) => (
            <li key={o.handle}>
              {o.certificate ? (o.authority ? "CA certificate " : "Certificate ") + o.certificate.subject : o.kind.replace("_", " ")} as “
              {o.label}” id:
              {o.id_hex}
              {o.key_label
                ? ` — the certificate of key “${o.key_label}”`
                : o.certificate && !o.authority
                  ? " — matches no key on this token"
                  : ""}
            </li>
          ))}
        </ul>
      )}
    </Dialog>
  );
}

export function CertificatePane({ partitionId, handle, label }: { partitionId: string; handle: number; label: string }) {
  const toast = useToast();
  const { run: load, data: c, error } = useCommand(api.certificateDetails);
  useEffect(() => {
    void load(partitionId, handle);
  }, [load, partitionId, handle]);
  const { run: save } = useCommand(
    async (format: ObjectFormat) => {
      const base = (label || "certificate").replace(/[^A-Za-z0-9._-]/g, "_");
      const p = await api.saveObject(partitionId, handle, format, `${base}.${format === "pem" ? "pem" : "der"}`);
      if (p) toast("ok", `Saved ${p}.`);
    },
    { errorToast: "Export failed" },
  );
  if (error) return <ErrorBox error={error} />;
  if (!c) return <p className="muted">Reading the certificate…</p>;
  const i = c.info;
  return (
    <section className="certificate" data-testid="certificate-details">
      <h4>Certificate</h4>
      <table className="table compact">
        <tbody>
          <tr>
            <th scope="row">Subject</th>
            <td>{i.subject}</td>
          </tr>
          <tr>
            <th scope="row">Issuer</th>
            <td>{i.issuer}</td>
          </tr>
          <tr>
            <th scope="row">Serial</th>
            <td>
              <code>{i.serial}</code>
            </td>
          </tr>
          <tr>
            <th scope="row">Valid</th>
            <td data-testid="cert-validity">
              {i.not_before} – {i.not_after}{" "}
              {i.expired ? (
                <Badge tone="bad">expired</Badge>
              ) : (
                <Badge tone={i.days_left < 30 ? "warn" : "ok"}>expires in {i.days_left} days</Badge>
              )}
            </td>
          </tr>
          <tr>
            <th scope="row">Key usage</th>
            <td>{i.key_usage.join(", ") || <span className="muted">(not restricted)</span>}</td>
          </tr>
          <tr>
            <th scope="row">Extended key usage</th>
            <td>{i.extended_key_usage.join(", ") || <span className="muted">(not restricted)</span>}</td>
          </tr>
          <tr>
            <th scope="row">SHA-256</th>
            <td>
              <code className="fingerprint">{i.sha256_fingerprint}</code>
            </td>
          </tr>
          <tr>
            <th scope="row">Key</th>
            <td>{c.key_label ? `the certificate of “${c.key_label}”` : i.is_ca ? "a CA certificate" : "matches no key on this token"}</td>
          </tr>
          <tr>
            <th scope="row">Chain</th>
            <td data-testid="cert-chain">
              {c.chain.length ? c.chain.join(" → ") : <span className="muted">(no issuer on the token)</span>}
              {!c.chain_complete && <span className="muted"> · the root is not on the token</span>}
            </td>
          </tr>
        </tbody>
      </table>
      {c.signing_warnings.map((w) => (
        <div className="notice" key={w}>
          {w}
        </div>
      ))}
      <div className="button-row">
        <button onClick={() => void save("pem")}>Export PEM…</button>
        <button onClick={() => void save("der")}>Export DER…</button>
      </div>
    </section>
  );
}

/// The object's PKCS#11 URI with Copy, and for a private key "Use this key from…".
export function UriPane({ partitionId, handle }: { partitionId: string; handle: number }) {
  const toast = useToast();
  const { run: load, data: u, error } = useCommand(api.objectUri);
  useEffect(() => {
    void load(partitionId, handle);
  }, [load, partitionId, handle]);
  const copy = (text: string) =>
    void navigator.clipboard?.writeText(text).then(
      () => toast("ok", "Copied."),
      () => toast("error", "The clipboard refused."),
    );
  if (error) return <ErrorBox error={error} />;
  if (!u) return null;
  return (
    <section className="uri" data-testid="uri-pane">
      <h4>PKCS#11 URI</h4>
      <p>
        <code className="hex" data-testid="object-uri">
          {u.uri}
        </code>{" "}
        <button onClick={() => copy(u.uri)} data-testid="copy-uri">
          Copy
        </button>
      </p>
      <p className="muted small">
        Token: <code>{u.token_uri}</code> <button onClick={() => copy(u.token_uri)}>Copy</button>
      </p>
      {u.commands.length > 0 && (
        <details data-testid="use-key-from">
          <summary>Use this key from…</summary>
          {u.commands.map((c) => (
            <div key={c.tool}>
              <p>
                <strong>{c.tool}</strong> <span className="muted small">— {c.purpose}</span>{" "}
                <button onClick={() => copy(c.command)}>Copy</button>
              </p>
              <pre className="pem">{c.command}</pre>
            </div>
          ))}
        </details>
      )}
    </section>
  );
}
