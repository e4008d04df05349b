// Verify an artifact against a signature offline: .p7s, .sig (with the public key), a JSON
// bundle, or a signed SHA256SUMS. Software verifiers only; no HSM needed.
import { useState } from "react";
import { Badge, ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { useJumps } from "../state";
import { useCommand } from "../useCommand";

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
        <button onClick={() => void browse()}>Browse…</button>
      </div>
    </Field>
  );
}

export function VerifyView() {
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
        <h1>Verify a signature</h1>
      </header>
      <section className="card form-grid">
        <PathField
          label="Artifact"
          value={file}
          onChange={setFile}
          testid="verify-file"
          hint="Or SHA256SUMS, with SHA256SUMS.sig (and the public key) or SHA256SUMS.asc (and the OpenPGP certificate)."
        />
        <PathField
          label="Signature"
          value={sig}
          onChange={setSig}
          testid="verify-sig"
          hint=".p7s, .sig, .sig.json, OpenPGP .asc/.gpg or minisign .minisig"
        />
        <PathField
          label="Public key (optional)"
          value={pub}
          onChange={setPub}
          testid="verify-pub"
          hint="PEM public key or certificate (needed for raw .sig files; pins the signer for CMS and bundles), the OpenPGP certificate (.asc) for OpenPGP, minisign.pub for minisign."
        />
        <Field label="ML-DSA context (if one was used)">
          <input type="text" value={context} onChange={(e) => setContext(e.target.value)} aria-label="ML-DSA context" />
        </Field>
      </section>
      <div className="button-row">
        <button
          className="primary"
          onClick={() => void verify()}
          disabled={busy || !file.trim() || !sig.trim()}
          data-testid="verify-submit"
        >
          {busy ? "Verifying…" : "Verify"}
        </button>
      </div>
      {error && <ErrorBox error={error} title="Could not verify" />}
      {report && (
        <section
          className={`verdict ${report.valid ? "ok" : "bad"}`}
          data-testid="verify-report"
          data-valid={String(report.valid)}
          role={report.valid ? "status" : "alert"}
        >
          <strong>{report.valid ? "Valid signature." : "Invalid signature."}</strong> {report.detail}
          <dl className="info-grid">
            <div>
              <dt>Format</dt>
              <dd>{report.format}</dd>
            </div>
            {report.algorithm && (
              <div>
                <dt>Algorithm</dt>
                <dd>{report.algorithm}</dd>
              </div>
            )}
            {report.signer && (
              <div>
                <dt>Signer</dt>
                <dd>{report.signer}</dd>
              </div>
            )}
            {report.key_fingerprint && (
              <div>
                <dt>Key</dt>
                <dd className="mono">{report.key_fingerprint}</dd>
              </div>
            )}
            {report.signing_time && (
              <div>
                <dt>Signed</dt>
                <dd>{report.signing_time}</dd>
              </div>
            )}
            {report.timestamp && (
              <div>
                <dt>Time-stamped</dt>
                <dd data-testid="verify-timestamp">{report.timestamp.time} (RFC 3161)</dd>
              </div>
            )}
            {report.timestamp && (
              <div>
                <dt>Time-stamp authority</dt>
                <dd data-testid="verify-tsa">{report.timestamp.tsa_subject}</dd>
              </div>
            )}
          </dl>
          {report.entries.length > 0 && (
            <ul>
              {report.entries.map((e) => (
                <li key={e.name}>
                  <Badge tone={e.ok ? "ok" : "bad"}>{e.ok ? "ok" : "fails"}</Badge> {e.name} {e.ok ? "" : `— ${e.detail}`}
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </div>
  );
}
