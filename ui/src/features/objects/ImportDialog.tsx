// Importing objects from files (certificates, public keys, PKCS#12, OpenPGP keys).
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { ImportResult } from "../../bindings";
import { Dialog, ErrorBox, Field } from "../../components";
import { api } from "../../ipc";
import { useCommand } from "../../useCommand";
import { objectClassName } from "../credentials/roles";

/// An imported object's kind (`certificate`, `public_key`, `data`) in words.
export function kindName(kind: string): string {
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
