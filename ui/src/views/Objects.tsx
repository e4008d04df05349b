// Certificates and other objects: the Import dialog (a certificate, a chain, a .p7b, a
// public key, or any file as a data object) and the certificate pane in the Keys view
// (subject, issuer, validity, usages, fingerprints, chain; export as PEM/DER).
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { ImportResult, ObjectFormat, ToolCommand } from "../bindings";
import { Badge, Dialog, ErrorBox, Field } from "../components";
import { textOf } from "../i18n";
import { api } from "../ipc";
import { useToast } from "../state";
import { useCommand } from "../useCommand";
import { objectClassName } from "./Credentials";

/// An imported object's kind (`certificate`, `public_key`, `data`) in words.
function kindName(kind: string): string {
  return objectClassName(kind === "data" ? "DATA" : kind.toUpperCase());
}

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
  const { t } = useTranslation();
  const [path, setPath] = useState("");
  const [label, setLabel] = useState("");
  const [id, setId] = useState("");
  const [data, setData] = useState(false);
  const [application, setApplication] = useState("");
  const { run: pick } = useCommand(
    async () => {
      const [p] = await api.pickFiles(t("objects.choose_file"), false);
      if (p) setPath(p);
    },
    { errorToast: t("objects.file_dialog_failed") },
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
      <Field label={t("objects.file")} hint={t("objects.file_hint")}>
        <div className="button-row">
          <input
            type="text"
            value={path}
            onChange={(e) => setPath(e.target.value)}
            aria-label={t("objects.file_path")}
            data-testid="import-path"
          />
          <button onClick={() => void pick()}>{t("backup.choose")}</button>
        </div>
      </Field>
      <Field label={t("attributes.label")} hint={t("objects.label_hint")}>
        <input type="text" value={label} onChange={(e) => setLabel(e.target.value)} aria-label={t("attributes.label")} />
      </Field>
      <Field label={t("attributes.id_hex")} hint={t("objects.id_hint")}>
        <input type="text" value={id} onChange={(e) => setId(e.target.value)} aria-label={t("objects.id")} />
      </Field>
      <label className="checkbox">
        <input type="checkbox" checked={data} onChange={(e) => setData(e.target.checked)} /> {t("objects.as_data")}
      </label>
      {data && (
        <Field label={t("objects.application")}>
          <input type="text" value={application} onChange={(e) => setApplication(e.target.value)} aria-label={t("objects.application")} />
        </Field>
      )}
      <div className="button-row">
        <button className="primary" onClick={() => void doImport()} disabled={loading || !path.trim()} data-testid="import-run">
          {t("objects.import")}
        </button>
        <button onClick={onClose}>{t("common.close")}</button>
      </div>
      {error && <ErrorBox error={error} />}
      {result && (
        <ul data-testid="import-result">
          {result.objects.map((o) => (
            <li key={o.handle}>
              {t("objects.imported_as", {
                what: o.certificate
                  ? t(o.authority ? "objects.ca_certificate_subject" : "objects.certificate_subject", { subject: o.certificate.subject })
                  : kindName(o.kind),
                label: o.label,
                id: o.id_hex,
              })}
              {o.key_label
                ? t("objects.suffix_cert_of_key", { label: o.key_label })
                : o.certificate && !o.authority
                  ? t("objects.suffix_no_key")
                  : ""}
            </li>
          ))}
        </ul>
      )}
    </Dialog>
  );
}

export function CertificatePane({ partitionId, handle, label }: { partitionId: string; handle: number; label: string }) {
  const { t } = useTranslation();
  const toast = useToast();
  const { run: load, data: c, error } = useCommand(api.certificateDetails);
  useEffect(() => {
    void load(partitionId, handle);
  }, [load, partitionId, handle]);
  const { run: save } = useCommand(
    async (format: ObjectFormat) => {
      const base = (label || "certificate").replace(/[^A-Za-z0-9._-]/g, "_");
      const p = await api.saveObject(partitionId, handle, format, `${base}.${format === "pem" ? "pem" : "der"}`);
      if (p) toast("ok", t("common.saved", { path: p }));
    },
    { errorToast: t("common.export_failed") },
  );
  if (error) return <ErrorBox error={error} />;
  if (!c) return <p className="muted">{t("objects.reading_certificate")}</p>;
  const i = c.info;
  return (
    <section className="certificate" data-testid="certificate-details">
      <h3>{t("objects.certificate")}</h3>
      <table className="table compact">
        <tbody>
          <tr>
            <th scope="row">{t("objects.subject")}</th>
            <td>{i.subject}</td>
          </tr>
          <tr>
            <th scope="row">{t("objects.issuer")}</th>
            <td>{i.issuer}</td>
          </tr>
          <tr>
            <th scope="row">{t("objects.serial")}</th>
            <td>
              <code>{i.serial}</code>
            </td>
          </tr>
          <tr>
            <th scope="row">{t("objects.valid")}</th>
            <td data-testid="cert-validity">
              {t("objects.validity_range", { from: i.not_before, to: i.not_after })}{" "}
              {i.expired ? (
                <Badge tone="bad">{t("objects.expired")}</Badge>
              ) : (
                <Badge tone={i.days_left < 30 ? "warn" : "ok"}>{t("objects.expires_in", { count: i.days_left })}</Badge>
              )}
            </td>
          </tr>
          <tr>
            <th scope="row">{t("objects.key_usage")}</th>
            <td>{i.key_usage.join(", ") || <span className="muted">{t("objects.not_restricted")}</span>}</td>
          </tr>
          <tr>
            <th scope="row">{t("objects.extended_key_usage")}</th>
            <td>{i.extended_key_usage.join(", ") || <span className="muted">{t("objects.not_restricted")}</span>}</td>
          </tr>
          <tr>
            <th scope="row">SHA-256</th>
            <td>
              <code className="fingerprint">{i.sha256_fingerprint}</code>
            </td>
          </tr>
          <tr>
            <th scope="row">{t("objects.key")}</th>
            <td>
              {c.key_label
                ? t("objects.cert_of", { label: c.key_label })
                : i.is_ca
                  ? t("objects.a_ca_certificate")
                  : t("objects.matches_no_key")}
            </td>
          </tr>
          <tr>
            <th scope="row">{t("objects.chain")}</th>
            <td data-testid="cert-chain">
              {c.chain.length ? c.chain.join(" → ") : <span className="muted">{t("objects.no_issuer")}</span>}
              {!c.chain_complete && <span className="muted"> · {t("objects.root_missing")}</span>}
            </td>
          </tr>
        </tbody>
      </table>
      {c.signing_warnings_text.map((w) => (
        <div className="notice" key={w.key} data-testid="cert-signing-warning">
          {textOf(w)}
        </div>
      ))}
      <div className="button-row">
        <button onClick={() => void save("pem")}>{t("objects.export_pem")}</button>
        <button onClick={() => void save("der")}>{t("objects.export_der")}</button>
      </div>
    </section>
  );
}

/// The object's PKCS#11 URI with Copy, and for a private key "Use this key from…".
export function UriPane({ partitionId, handle }: { partitionId: string; handle: number }) {
  const { t } = useTranslation();
  const toast = useToast();
  const { run: load, data: u, error } = useCommand(api.objectUri);
  useEffect(() => {
    void load(partitionId, handle);
  }, [load, partitionId, handle]);
  const copy = (text: string) =>
    void copyText(text).then(
      () => toast("ok", t("objects.copied")),
      () => toast("error", t("objects.clipboard_refused")),
    );
  if (error) return <ErrorBox error={error} />;
  if (!u) return null;
  return (
    <section className="uri" data-testid="uri-pane">
      <h3>{t("objects.uri_heading")}</h3>
      <p>
        <code className="hex" data-testid="object-uri">
          {u.uri}
        </code>{" "}
        <button onClick={() => copy(u.uri)} data-testid="copy-uri">
          {t("objects.copy")}
        </button>
      </p>
      <p className="muted small">
        {t("objects.token")} <code>{u.token_uri}</code> <button onClick={() => copy(u.token_uri)}>{t("objects.copy")}</button>
      </p>
      {u.commands.length > 0 && (
        <details data-testid="use-key-from">
          <summary>{t("objects.use_key_from")}</summary>
          <p className="muted small">{t("uris.pin_file_note")}</p>
          {u.commands.map((c) => (
            <ToolLine key={c.tool} partitionId={partitionId} handle={handle} line={c} copy={copy} />
          ))}
        </details>
      )}
    </section>
  );
}

/// One tool's line with Copy and "Test this line": the console runs it against a throwaway
/// file with the session's PIN (never shown) and shows the tools' own verdict.
function ToolLine({
  partitionId,
  handle,
  line: c,
  copy,
}: {
  partitionId: string;
  handle: number;
  line: ToolCommand;
  copy: (text: string) => void;
}) {
  const { t } = useTranslation();
  const { run, data: v, error, loading } = useCommand(api.tryToolLine);
  return (
    <div data-testid="tool-line" data-tool={c.tool}>
      <p>
        <strong>{c.tool}</strong> <span className="muted small">— {textOf(c.purpose)}</span>{" "}
        <button onClick={() => copy(c.command)}>{t("objects.copy")}</button>{" "}
        <button
          onClick={() => void run(partitionId, handle, c.tool)}
          disabled={loading}
          aria-busy={loading}
          title={t("objects.test_line_hint")}
          data-testid="test-line"
        >
          {loading ? t("objects.testing_line") : t("objects.test_line")}
        </button>
      </p>
      {c.caveat && (
        <p className="warn small" role="note" data-testid="tool-caveat">
          {textOf(c.caveat)}
        </p>
      )}
      <pre className="pem">{c.command}</pre>
      {c.verify && (
        <>
          <p className="muted small">{t("uris.then_check")}</p>
          <pre className="pem">{c.verify}</pre>
        </>
      )}
      <div aria-live="polite">
        {error && <ErrorBox error={error} />}
        {v && !loading && (
          <div data-testid="trial-verdict" data-ok={String(v.ok)}>
            <p className={v.ok ? "ok" : "warn"} role="status">
              <strong>{v.ok ? t("objects.trial_ok") : t("objects.trial_failed")}</strong>
            </p>
            {v.steps.map((s) => (
              <div key={s.command}>
                <p className="muted small">
                  <code>{s.command.split("\n").pop()}</code> —{" "}
                  {s.exit_code === null ? t("objects.trial_stopped") : t("objects.trial_exit", { code: s.exit_code })}
                </p>
                {s.output && <pre className="pem">{s.output}</pre>}
              </div>
            ))}
          </div>
        )}
      </div>
    </div>
  );
}

/** Put `text` on the clipboard: the Clipboard API where the webview offers it, else the
 * older copy command on a hidden text field (some WebKitGTK builds lack the API). */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) return navigator.clipboard.writeText(text);
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  if (!ok) throw new Error("the copy command was refused");
}
