// Verify an artifact against a signature offline: .p7s, .sig (with the public key), a JSON
// bundle, or a signed SHA256SUMS. Software verifiers only; no HSM needed.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Badge, ErrorBox, Field } from "../../components";
import { textOf } from "../../i18n";
import { api } from "../../ipc";
import { useJumps } from "../../state";
import { useCommand } from "../../useCommand";

function PathField({
  label,
  value,
  onChange,
  testid,
  hint,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  testid: string;
  hint?: string;
}) {
  const { t } = useTranslation();
  const browse = async () => {
    const p = await api.pickFiles(label, false);
    if (p[0]) onChange(p[0]);
  };
  return (
    <Field label={label} {...(hint ? { hint } : {})}>
      <div className="inline-form">
        <input
          type="text"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          spellCheck={false}
          data-testid={testid}
          aria-label={label}
        />
        <button onClick={() => void browse()}>{t("connections.browse")}</button>
      </div>
    </Field>
  );
}

export function VerifyView() {
  const { t } = useTranslation();
  const { verifyTarget } = useJumps();
  const [file, setFile] = useState(verifyTarget?.file ?? "");
  const [sig, setSig] = useState(verifyTarget?.sig ?? "");
  const [pub, setPub] = useState("");
  const [context, setContext] = useState("");
  const checking = useCommand(api.verifySignature);
  const { loading: busy, data: report, error } = checking;
  const verify = async () => {
    checking.reset();
    await checking.run(file.trim(), sig.trim(), pub.trim() || null, context || null);
  };
  return (
    <div className="view">
      <header className="view-header">
        <h1>{t("verify.title")}</h1>
      </header>
      <section className="card form-grid">
        <PathField label={t("verify.artifact")} value={file} onChange={setFile} testid="verify-file" hint={t("verify.artifact_hint")} />
        <PathField label={t("verify.signature")} value={sig} onChange={setSig} testid="verify-sig" hint={t("verify.signature_hint")} />
        <PathField label={t("verify.public_key")} value={pub} onChange={setPub} testid="verify-pub" hint={t("verify.public_key_hint")} />
        <Field label={t("verify.context")}>
          <input type="text" value={context} onChange={(e) => setContext(e.target.value)} aria-label={t("verify.context_label")} />
        </Field>
      </section>
      <div className="button-row">
        <button
          className="primary"
          onClick={() => void verify()}
          disabled={busy || !file.trim() || !sig.trim()}
          data-testid="verify-submit"
        >
          {busy ? t("verify.verifying") : t("verify.verify")}
        </button>
      </div>
      {error && <ErrorBox error={error} title={t("verify.could_not")} />}
      {report && (
        <section
          className={`verdict ${report.valid ? "ok" : "bad"}`}
          data-testid="verify-report"
          data-valid={String(report.valid)}
          role={report.valid ? "status" : "alert"}
        >
          <strong>{report.valid ? t("verify.valid") : t("verify.invalid")}</strong>{" "}
          {report.detail_text ? textOf(report.detail_text) : report.detail}
          <dl className="info-grid">
            <div>
              <dt>{t("verify.format")}</dt>
              <dd>{report.format}</dd>
            </div>
            {report.algorithm && (
              <div>
                <dt>{t("audit.col_algorithm")}</dt>
                <dd>{report.algorithm}</dd>
              </div>
            )}
            {report.signer && (
              <div>
                <dt>{t("verify.signer")}</dt>
                <dd>{report.signer}</dd>
              </div>
            )}
            {report.key_fingerprint && (
              <div>
                <dt>{t("audit.key")}</dt>
                <dd className="mono">{report.key_fingerprint}</dd>
              </div>
            )}
            {report.signing_time && (
              <div>
                <dt>{t("verify.signed")}</dt>
                <dd>{report.signing_time}</dd>
              </div>
            )}
            {report.timestamp && (
              <div>
                <dt>{t("verify.timestamped")}</dt>
                <dd data-testid="verify-timestamp">{t("verify.timestamp_time", { time: report.timestamp.time })}</dd>
              </div>
            )}
            {report.timestamp && (
              <div>
                <dt>{t("verify.timestamp_authority")}</dt>
                <dd data-testid="verify-tsa">{report.timestamp.tsa_subject}</dd>
              </div>
            )}
          </dl>
          {report.entries.length > 0 && (
            <ul>
              {report.entries.map((e) => (
                <li key={e.name}>
                  <Badge tone={e.ok ? "ok" : "bad"}>{e.ok ? t("verify.entry_ok") : t("verify.entry_fails")}</Badge> {e.name}{" "}
                  {e.ok ? "" : `— ${e.detail_text ? textOf(e.detail_text) : e.detail}`}
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </div>
  );
}
