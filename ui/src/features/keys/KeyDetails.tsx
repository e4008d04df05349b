// The detail pane of the key picked in the Keys view: every attribute decoded, the
// public key's export, the certificate, and what can be changed.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { AttributeView, KeyDetails, PublicKeyFormat } from "../../bindings";
import { Badge, Dialog, ErrorBox, Field } from "../../components";
import { textOf } from "../../i18n";
import { api } from "../../ipc";
import { useJumps, usePartition, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { permission } from "../credentials/roles";
import { AttributesDialog } from "../attributes/Attributes";
import { Kcv, WrapDialog } from "../backup/Backup";
import { CertificatePane, ImportDialog, UriPane } from "../objects/Objects";
import { KeyFormats } from "./KeyFormats";
import { classLabel } from "./KeyTable";
import { KeySuccession } from "./KeySuccession";
import { UsageLine } from "../usage/Usage";

export function AttrValue({ a }: { a: AttributeView }) {
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

export function CertificateDialog({ partitionId, details, onClose }: { partitionId: string; details: KeyDetails; onClose: () => void }) {
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

export function PublicKeyExport({ partitionId, details }: { partitionId: string; details: KeyDetails }) {
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

export function DetailsPane({ partitionId, handle, onChanged }: { partitionId: string; handle: number; onChanged: () => void }) {
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
