// The certificate pane in the Keys view (subject, issuer, validity, usages, fingerprints,
// chain; export as PEM/DER). Importing objects is ImportDialog.tsx; an object's URI and the
// outside tools' command lines, UriPane.tsx.
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import type { ObjectFormat } from "../../bindings";
import { Badge, ErrorBox } from "../../components";
import { textOf } from "../../i18n";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";

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

/** Put `text` on the clipboard: the Clipboard API where the webview offers it, else the
 * older copy command on a hidden text field (some WebKitGTK builds lack the API). */
export async function copyText(text: string): Promise<void> {
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
