// Sign release artifacts: drop files on the window (or add them), pick a key, formats and
// where the outputs go; progress per file; a summary with each output, all verified in
// software before they were written.
import { useEffect, useMemo, useState } from "react";
import type { FileCheck, SignFormat, SignProgress, SignRequest, SigningKeyView } from "../bindings";
import { Badge, EmptyState, ErrorBox, Field, ProgressBar, formatBytes } from "../components";
import { api, newJobId } from "../ipc";
import { useNavigate, usePartition, useSettings, useSignQueue, useToast } from "../state";
import { useCommand } from "../useCommand";

type FileState = { stage: "waiting" | "hashing" | "signing" | "done" | "failed"; done: number; total: number; message?: string };

function hssTone(k: SigningKeyView, warn: number, crit: number): "ok" | "warn" | "bad" {
  if (k.hss_remaining === null || k.hss_capacity === null) return "ok";
  const pct = (100 * k.hss_remaining) / Number(k.hss_capacity);
  return pct <= crit ? "bad" : pct <= warn ? "warn" : "ok";
}

export function SignView() {
  const { partitionId, partition } = usePartition();
  const { signFiles, setSignFiles } = useSignQueue();
  const { settings } = useSettings();
  const navigate = useNavigate();
  const toast = useToast();
  const [checks, setChecks] = useState<FileCheck[]>([]);
  const { run: loadKeys, data: keys, error: keysError } = useCommand(api.signingKeys);
  const [keyId, setKeyId] = useState("");
  const [formats, setFormats] = useState<SignFormat[]>(["cms"]);
  const [manifest, setManifest] = useState(false);
  const [outDir, setOutDir] = useState<string | null>(null);
  const [context, setContext] = useState("");
  const [continueOnError, setContinueOnError] = useState(false);
  const [confirmHss, setConfirmHss] = useState(false);
  const [job, setJob] = useState<string | null>(null);
  const [progress, setProgress] = useState<Record<number, FileState>>({});
  const onEvent = (e: SignProgress) =>
    setProgress((p) => {
      const cur = p[e.index] ?? { stage: "waiting", done: 0, total: 0 };
      switch (e.stage) {
        case "hashing":
          return { ...p, [e.index]: { stage: "hashing", done: e.done, total: e.total } };
        case "signing":
          return { ...p, [e.index]: { ...cur, stage: "signing" } };
        case "done":
          return { ...p, [e.index]: { ...cur, stage: "done" } };
        case "failed":
          return { ...p, [e.index]: { ...cur, stage: "failed", message: e.message } };
      }
    });

  const signing = useCommand(async (partitionId: string, id: string, request: SignRequest) => {
    try {
      const r = await api.signFiles(partitionId, id, request, onEvent);
      const ok = r.files.filter((f) => !f.error).length;
      toast(ok === r.files.length ? "ok" : "info", `Signed ${ok} of ${r.files.length} file${r.files.length === 1 ? "" : "s"}.`);
      return r;
    } finally {
      setJob(null);
      setConfirmHss(false);
    }
  });
  const { data: report, error } = signing;
  const loggedIn = partition?.logged_in === "user";

  useEffect(() => {
    if (!partitionId || !loggedIn) return;
    void loadKeys(partitionId).then((k) => {
      if (k) setKeyId((cur) => (cur && k.some((x) => `id:${x.id_hex}` === cur) ? cur : k[0] ? `id:${k[0].id_hex}` : ""));
    });
  }, [loadKeys, partitionId, loggedIn, report]);

  useEffect(() => {
    let live = true;
    api.inspectFiles(signFiles).then(
      (c) => live && setChecks(c),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [signFiles]);

  const key = keys?.find((k) => `id:${k.id_hex}` === keyId) ?? null;
  const isHss = key?.scheme.scheme === "hss";
  const isMlDsa = key?.scheme.scheme === "ml-dsa";
  const good = checks.filter((c) => !c.problem).length;
  const needed = useMemo(() => {
    const perFile = (formats.includes("cms") ? 1 : 0) + (formats.some((f) => f !== "cms") ? 1 : 0);
    return good * perFile + (manifest ? 1 : 0) + (formats.includes("cms") && key && !key.has_certificate ? 1 : 0);
  }, [good, formats, manifest, key]);
  const tooFew = isHss && key?.hss_remaining !== null && key?.hss_remaining !== undefined && key.hss_remaining < needed;

  const toggleFormat = (f: SignFormat) => setFormats((cur) => (cur.includes(f) ? cur.filter((x) => x !== f) : [...cur, f]));
  const { run: addFiles } = useCommand(
    async () => {
      const picked = await api.pickFiles("Choose release artifacts to sign", true);
      if (picked.length) setSignFiles((old) => [...old, ...picked]);
    },
    { errorToast: "Could not open the file dialog" },
  );
  const chooseOut = async () => {
    const d = await api.pickFolder("Write signatures to");
    if (d) setOutDir(d);
  };

  const run = async () => {
    if (!partitionId || !key) return;
    const id = newJobId();
    setJob(id);
    signing.reset();
    setProgress({});
    await signing.run(partitionId, id, {
      key: `id:${key.id_hex}`,
      files: signFiles,
      formats,
      manifest,
      out_dir: outDir,
      context: isMlDsa && context ? context : null,
      on_error: continueOnError ? "continue" : "stop",
      confirm_hss: confirmHss,
    });
  };

  if (!partitionId || !loggedIn) {
    return (
      <div className="view">
        <h1>Sign</h1>
        <EmptyState title="Log in to sign" action={<button onClick={() => navigate("connections")}>Go to Connections</button>}>
          Signing needs the partition's user to be logged in. Files you drop on the window wait here meanwhile
          {signFiles.length ? ` (${signFiles.length} waiting)` : ""}.
        </EmptyState>
      </div>
    );
  }

  return (
    <div className="view sign-view">
      <header className="view-header">
        <h1>Sign release artifacts</h1>
        <div className="button-row">
          <button onClick={() => void addFiles()} disabled={!!job}>
            Add files…
          </button>
          <button onClick={() => setSignFiles([])} disabled={!!job || signFiles.length === 0}>
            Clear
          </button>
        </div>
      </header>
      <section className="card drop-zone" data-testid="drop-zone">
        {signFiles.length === 0 ? (
          <EmptyState title="Drop files anywhere on this window">
            …or use “Add files…”. A tarball, an ISO, a firmware image, twenty files at once: each is hashed as it streams and signed once.
          </EmptyState>
        ) : (
          <table className="table compact" data-testid="sign-files">
            <thead>
              <tr>
                <th>File</th>
                <th>Size</th>
                <th>Status</th>
                <th aria-label="Remove" />
              </tr>
            </thead>
            <tbody>
              {signFiles.map((f, i) => {
                const c = checks[i];
                const pr = progress[i];
                const out = report?.files[i];
                return (
                  <tr
                    key={`${f}-${i}`}
                    data-testid="sign-file"
                    data-name={c?.name ?? f}
                    data-state={c?.problem ? "problem" : out?.error ? "failed" : out?.outputs.length ? "signed" : (pr?.stage ?? "ready")}
                  >
                    <td>
                      <strong>{c?.name ?? f}</strong>
                      <div className="muted small">{f}</div>
                      {out?.sha256 && <div className="mono small">SHA-256 {out.sha256}</div>}
                    </td>
                    <td>{formatBytes(c?.size ?? null)}</td>
                    <td className="status-cell">
                      {c?.problem ? (
                        <span className="bad-text">{c.problem}</span>
                      ) : out?.error ? (
                        <span className="bad-text">{out.error.message}</span>
                      ) : out && out.outputs.length ? (
                        <div>
                          {out.outputs.map((o) => (
                            <div key={o.path} className="small">
                              <Badge tone="ok">{o.format}</Badge> {o.path} {o.verified && <span className="muted">(verified)</span>}
                            </div>
                          ))}
                        </div>
                      ) : pr ? (
                        pr.stage === "hashing" ? (
                          <ProgressBar
                            done={pr.done}
                            total={pr.total}
                            label={`hashing ${Math.round((100 * pr.done) / Math.max(1, pr.total))}%`}
                          />
                        ) : pr.stage === "failed" ? (
                          <span className="bad-text">{pr.message}</span>
                        ) : (
                          <span>{pr.stage === "signing" ? "signing on the HSM…" : pr.stage}</span>
                        )
                      ) : (
                        <span className="muted">ready</span>
                      )}
                    </td>
                    <td>
                      <button
                        className="icon-button"
                        onClick={() => setSignFiles((old) => old.filter((_, j) => j !== i))}
                        disabled={!!job}
                        aria-label={`Remove ${c?.name ?? f}`}
                      >
                        ×
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
      <section className="card form-grid">
        <h3>Key and formats</h3>
        {keysError && <ErrorBox error={keysError} />}
        <Field
          label="Signing key"
          hint={keys && keys.length === 0 ? "No key on this partition can sign: generate one in Keys." : undefined}
        >
          <select value={keyId} onChange={(e) => setKeyId(e.target.value)} disabled={!!job} data-testid="sign-key" aria-label="Signing key">
            {(keys ?? []).map((k) => (
              <option key={k.id_hex} value={`id:${k.id_hex}`}>
                {k.label} — {k.algorithm}
                {k.hss_remaining !== null
                  ? ` — ${k.hss_remaining.toLocaleString()} of ${Number(k.hss_capacity ?? 0).toLocaleString()} signatures left`
                  : ""}
              </option>
            ))}
          </select>
        </Field>
        <fieldset className="radio-row">
          <legend>Formats</legend>
          <label>
            <input
              type="checkbox"
              checked={formats.includes("cms")}
              onChange={() => toggleFormat("cms")}
              disabled={!!job}
              data-testid="fmt-cms"
            />{" "}
            CMS (.p7s, with certificate)
          </label>
          <label>
            <input
              type="checkbox"
              checked={formats.includes("raw")}
              onChange={() => toggleFormat("raw")}
              disabled={!!job}
              data-testid="fmt-raw"
            />{" "}
            Raw (.sig + public key)
          </label>
          <label>
            <input
              type="checkbox"
              checked={formats.includes("bundle")}
              onChange={() => toggleFormat("bundle")}
              disabled={!!job}
              data-testid="fmt-bundle"
            />{" "}
            JSON bundle
          </label>
          <label>
            <input type="checkbox" checked={manifest} onChange={(e) => setManifest(e.target.checked)} disabled={!!job} /> SHA256SUMS
            manifest
          </label>
        </fieldset>
        <Field label="Outputs">
          <div className="inline-form">
            <span>{outDir ?? "beside each file"}</span>
            <button onClick={() => void chooseOut()} disabled={!!job}>
              Choose folder…
            </button>
            {outDir && <button onClick={() => setOutDir(null)}>Beside the files</button>}
          </div>
        </Field>
        {isMlDsa && formats.some((f) => f !== "cms") && (
          <Field label="ML-DSA context (optional)" hint="Raw and bundle signatures only; verifiers need the same context.">
            <input type="text" value={context} onChange={(e) => setContext(e.target.value)} disabled={!!job} aria-label="ML-DSA context" />
          </Field>
        )}
        <label className="check">
          <input
            type="checkbox"
            checked={continueOnError}
            onChange={(e) => setContinueOnError(e.target.checked)}
            disabled={!!job}
            data-testid="continue-on-error"
          />{" "}
          Go on with the other files when one fails
        </label>
      </section>
      {key && formats.includes("cms") && key.certificate_warnings.length > 0 && (
        <div className="notice warn" data-testid="certificate-warnings">
          CMS signatures will carry {key.certificate_subject ?? "the key's certificate"}:{" "}
          {key.certificate_warnings.map((w) => (
            <span key={w}>{w}. </span>
          ))}
        </div>
      )}
      {key && isHss && (
        <div className={`notice ${tooFew ? "warn" : ""}`} data-testid="hss-notice">
          <Badge tone={hssTone(key, settings?.hss_warning_percent ?? 10, settings?.hss_critical_percent ?? 1)}>
            {key.hss_remaining?.toLocaleString()} of {Number(key.hss_capacity ?? 0).toLocaleString()} left
          </Badge>{" "}
          This batch uses {needed} one-time signature{needed === 1 ? "" : "s"} of this HSS key for good; an HSS key cannot be backed up or
          cloned.
          {tooFew ? " There are not enough left: sign fewer files or formats." : ""}
          <label className="check">
            <input type="checkbox" checked={confirmHss} onChange={(e) => setConfirmHss(e.target.checked)} data-testid="confirm-hss" /> I
            understand; use {needed} signature{needed === 1 ? "" : "s"}
          </label>
        </div>
      )}
      <div className="button-row">
        <button
          className="primary"
          onClick={() => void run()}
          disabled={!!job || !key || good === 0 || formats.length === 0 || (isHss && (!confirmHss || tooFew))}
          data-testid="sign-submit"
        >
          {job ? "Signing…" : `Sign ${good} file${good === 1 ? "" : "s"}`}
        </button>
        {job && (
          <button onClick={() => void api.cancelJob(job)} data-testid="sign-cancel">
            Cancel
          </button>
        )}
      </div>
      {error && <ErrorBox error={error} title="Nothing was signed" />}
      {report && (
        <section className="card" data-testid="sign-report">
          <h3>Summary</h3>
          <p>
            {report.signatures_made} signature{report.signatures_made === 1 ? "" : "s"} with <strong>{report.key.label}</strong> (
            {report.key.algorithm}), each verified in software before it was written.
            {report.hss_remaining_after !== null && ` ${report.hss_remaining_after.toLocaleString()} HSS signatures left.`}
            {report.stopped && " Stopped at the first failure."}
            {report.cancelled && " Cancelled."}
          </p>
          {report.manifest.map((o) => (
            <div key={o.path} className="small">
              <Badge tone="ok">{o.format.replace("_", " ")}</Badge> {o.path}
            </div>
          ))}
          {report.manifest_error && <ErrorBox error={report.manifest_error} />}
        </section>
      )}
    </div>
  );
}
