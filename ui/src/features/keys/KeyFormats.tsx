// The detail pane's OpenPGP and minisign section for a signing key: the OpenPGP fingerprint
// (once the key's creation time is fixed on the token), the certificate export with a user
// ID the officer types, and an Ed25519 key's minisign.pub.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { KeyDetails } from "../../bindings";
import { ErrorBox, Field } from "../../components";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";

/** One line of printable text, as the backend requires (it checks again): what is wrong. */
function uidProblem(uid: string): "uid_empty" | "uid_control" | null {
  if (!uid.trim()) return "uid_empty";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(uid)) return "uid_control";
  return null;
}

export function KeyFormats({ partitionId, details }: { partitionId: string; details: KeyDetails }) {
  const { t } = useTranslation();
  const toast = useToast();
  const handle = details.summary.handle;
  const { run: load, data: pgp } = useCommand(api.openpgpKey);
  const [uid, setUid] = useState("");
  useEffect(() => {
    void load(partitionId, handle);
  }, [load, partitionId, handle]);
  const base = (details.summary.label || details.summary.id_hex || "key").replace(/[^A-Za-z0-9._-]/g, "_");
  const exportCert = useCommand(async () => {
    const c = await api.saveOpenpgpCertificate(partitionId, handle, uid, `${base}.asc`);
    if (c) {
      toast("ok", t("key_formats.saved_certificate", { fingerprint: c.fingerprint }));
      void load(partitionId, handle);
    }
    return c;
  });
  const { run: saveMinisign } = useCommand(
    async () => {
      const p = await api.saveMinisignPublicKey(partitionId, handle);
      if (p) toast("ok", t("common.saved", { path: p }));
    },
    { errorToast: t("common.export_failed") },
  );
  // Keys without an OpenPGP form (ML-DSA, HSS) get no section: the backend says so by error.
  if (!pgp) return null;
  const problem = uid ? uidProblem(uid) : null;
  return (
    <section className="pubkey" data-testid="key-formats">
      <h3>{t("key_formats.title")}</h3>
      <p>
        {t("key_formats.fingerprint")}{" "}
        {pgp.fingerprint ? (
          <code className="fingerprint" data-testid="openpgp-fingerprint">
            {pgp.fingerprint}
          </code>
        ) : (
          <span className="muted" data-testid="openpgp-fingerprint">
            {t("key_formats.not_fixed")}
          </span>
        )}
      </p>
      <Field label={t("key_formats.user_id")} hint={problem ? t(`key_formats.${problem}`) : t("key_formats.user_id_hint")}>
        <input
          type="text"
          value={uid}
          onChange={(e) => setUid(e.target.value)}
          placeholder={t("key_formats.user_id_example")}
          aria-label={t("key_formats.user_id_label")}
          data-testid="openpgp-uid"
        />
      </Field>
      <div className="button-row">
        <button onClick={() => void exportCert.run()} disabled={!uid || !!problem || exportCert.loading} data-testid="export-openpgp">
          {t("key_formats.export_certificate")}
        </button>
        {pgp.algorithm === "eddsa_legacy" && (
          <button onClick={() => void saveMinisign()} data-testid="export-minisign">
            {t("key_formats.save_minisign")}
          </button>
        )}
      </div>
      {exportCert.error && <ErrorBox error={exportCert.error} />}
    </section>
  );
}
