// A key's public part out of the token: its certificate, and the public key in a format chosen.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { KeyDetails, PublicKeyFormat } from "../../bindings";
import { Dialog, ErrorBox, Field } from "../../components";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { ImportDialog } from "../objects/ImportDialog";

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
