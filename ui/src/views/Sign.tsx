// Sign release artifacts: drop files on the window (or add them), pick a key, formats and
// where the outputs go; progress per file; a summary with each output, all verified in
// software before they were written.
import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import type { FileCheck, SignFormat, SignProgress, SignRequest, SigningKeyView } from "../bindings";
import { Badge, EmptyState, ErrorBox, Field, ProgressBar } from "../components";
import { errorTexts, textOf, useFormat } from "../i18n";
import { api, newJobId } from "../ipc";
import { useNavigate, usePartition, useSettings, useSignQueue, useToast } from "../state";
import { useCommand } from "../useCommand";

// The OpenPGP formats (Ed25519, ECDSA and RSA keys).
const OPENPGP_FORMATS: SignFormat[] = ["openpgp", "openpgp_binary", "openpgp_cleartext"];
// The "apt repository" preset: for a file named Release, Release.gpg (armored) and InRelease.
const APT_FORMATS: SignFormat[] = ["openpgp", "openpgp_cleartext"];

type FileState = { stage: "waiting" | "hashing" | "signing" | "done" | "failed"; done: number; total: number; message?: string };

/** Whether a key can make a format (as the backend decides: crates/console/src/sign/formats.rs). */
function canMake(k: SigningKeyView, f: SignFormat): boolean {
  const s = k.scheme;
  // OpenPGP (gpg 2.2, sq 0.27) has Ed25519, ECDSA and RSA keys; minisign Ed25519 only; SSH
  // signatures (ssh-keygen -Y verify) Ed25519 and ECDSA P-256 keys.
  if (f === "minisign") return s.scheme === "ed25519";
  if (f === "sshsig") return s.scheme === "ed25519" || (s.scheme === "ecdsa" && s.curve === "P256");
  if (OPENPGP_FORMATS.includes(f)) return ["ed25519", "ecdsa", "rsa-pss"].includes(s.scheme);
  return true;
}

function hssTone(k: SigningKeyView, warn: number, crit: number): "ok" | "warn" | "bad" {
  if (k.hss_remaining === null || k.hss_capacity === null) return "ok";
  const pct = (100 * k.hss_remaining) / Number(k.hss_capacity);
  return pct <= crit ? "bad" : pct <= warn ? "warn" : "ok";
}

export function SignView() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { partitionId, partition } = usePartition();
  const { signFiles, setSignFiles } = useSignQueue();
  const { settings } = useSettings();
  const navigate = useNavigate();
  const toast = useToast();
  const [checks, setChecks] = useState<FileCheck[]>([]);
  const { run: loadKeys, data: keys, error: keysError } = useCommand(api.signingKeys);
  const [keyId, setKeyId] = useState("");
  // "Also sign with": more keys signing the same batch (dual signing).
  const [alsoIds, setAlsoIds] = useState<string[]>([]);
  const [formats, setFormats] = useState<SignFormat[]>(["cms"]);
  const [manifest, setManifest] = useState(false);
  const [outDir, setOutDir] = useState<string | null>(null);
  const [kitDir, setKitDir] = useState<string | null>(null);
  const [chainFiles, setChainFiles] = useState<string[]>([]);
  const [kitUid, setKitUid] = useState("");
  const [context, setContext] = useState("");
  const [continueOnError, setContinueOnError] = useState(false);
  const [confirmHss, setConfirmHss] = useState(false);
  // A key that wants the PIN for each signature: the officer's consent to give it once for
  // the batch, and that PIN (asked here again: the login's is not reused).
  const [consentPerUse, setConsentPerUse] = useState(false);
  const [perUsePin, setPerUsePin] = useState("");
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

  const signing = useCommand(async (partitionId: string, id: string, request: SignRequest, pin: string | null) => {
    try {
      const r = await api.signFiles(partitionId, id, request, pin, onEvent);
      const ok = r.files.filter((f) => !f.error).length;
      toast(ok === r.files.length ? "ok" : "info", t("sign.signed_n", { ok, count: r.files.length }));
      return r;
    } finally {
      setJob(null);
      setConfirmHss(false);
      setConsentPerUse(false);
      setPerUsePin("");
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
  const alsoKeys = (keys ?? []).filter((k) => `id:${k.id_hex}` !== keyId && alsoIds.includes(`id:${k.id_hex}`));
  const signers = key ? [key, ...alsoKeys] : [];
  const hssKeys = signers.filter((k) => k.scheme.scheme === "hss");
  const isHss = hssKeys.length > 0;
  const perUseKeys = signers.filter((k) => k.always_authenticate);
  const perUseReady = perUseKeys.length === 0 || (consentPerUse && perUsePin.length > 0);
  const isMlDsa = signers.some((k) => k.scheme.scheme === "ml-dsa");
  // With several keys a format one of them can make is made by those that can.
  const canOpenpgp = signers.some((k) => canMake(k, "openpgp"));
  const canMinisign = signers.some((k) => canMake(k, "minisign"));
  const canSshsig = signers.some((k) => canMake(k, "sshsig"));
  // Formats no key can make are kept out of the request (and shown unchecked).
  const chosen = formats.filter((f) =>
    f === "minisign" ? canMinisign : f === "sshsig" ? canSshsig : OPENPGP_FORMATS.includes(f) ? canOpenpgp : true,
  );
  // Detached OpenPGP (armored or binary); `openpgp`: any OpenPGP output, cleartext too (the
  // kit's OpenPGP certificate, SHA256SUMS.asc with the manifest).
  const detachedOpenpgp = chosen.includes("openpgp") || chosen.includes("openpgp_binary");
  const openpgp = detachedOpenpgp || chosen.includes("openpgp_cleartext");
  const toggleOpenpgp = () =>
    setFormats((cur) => (detachedOpenpgp ? cur.filter((f) => f !== "openpgp" && f !== "openpgp_binary") : [...cur, "openpgp"]));
  // An apt repository's Release, signed as apt reads it: InRelease and an armored Release.gpg.
  const aptPreset = chosen.length === APT_FORMATS.length && APT_FORMATS.every((f) => chosen.includes(f));
  const aptWithoutRelease = aptPreset && checks.length > 0 && !checks.some((c) => c.name === "Release");
  const setOpenpgpBinary = (binary: boolean) =>
    setFormats((cur) => cur.map((f) => (f === "openpgp" || f === "openpgp_binary" ? (binary ? "openpgp_binary" : "openpgp") : f)));
  const good = checks.filter((c) => !c.problem).length;
  // One-time signatures an HSS key of the set uses: per file, CMS and the signature raw and
  // bundle share, of the formats it makes; the manifest; a certificate for CMS.
  const perFileFor = useMemo(
    () => (k: SigningKeyView) => {
      const made = formats.filter((f) => canMake(k, f));
      return (made.includes("cms") ? 1 : 0) + (made.some((f) => f !== "cms") ? 1 : 0);
    },
    [formats],
  );
  const neededFor = useMemo(
    () => (k: SigningKeyView) => {
      const made = formats.filter((f) => canMake(k, f));
      const perFile = perFileFor(k);
      // A chain file may carry the key's certificate: then no self-signed one is issued.
      const selfSigned = made.includes("cms") && !k.has_certificate && chainFiles.length === 0;
      return good * perFile + (manifest ? 1 : 0) + (selfSigned ? 1 : 0);
    },
    [good, formats, manifest, chainFiles, perFileFor],
  );
  const short = (k: SigningKeyView) => k.hss_remaining !== null && k.hss_remaining < neededFor(k);
  const tooFew = hssKeys.some(short);
  const toggleAlso = (id: string) => setAlsoIds((cur) => (cur.includes(id) ? cur.filter((x) => x !== id) : [...cur, id]));

  const toggleFormat = (f: SignFormat) => setFormats((cur) => (cur.includes(f) ? cur.filter((x) => x !== f) : [...cur, f]));
  const { run: addFiles } = useCommand(
    async () => {
      const picked = await api.pickFiles(t("sign.pick_title"), true);
      if (picked.length) setSignFiles((old) => [...old, ...picked]);
    },
    { errorToast: t("sign.no_file_dialog") },
  );
  // PEM/DER chain files for CMS; the backend reads and checks them before signing.
  const { run: addChain } = useCommand(
    async () => {
      const picked = await api.pickFiles(t("sign.chain_title"), true);
      if (picked.length) setChainFiles((old) => [...old, ...picked.filter((p) => !old.includes(p))]);
    },
    { errorToast: t("sign.no_file_dialog") },
  );
  const chooseOut = async () => {
    const d = await api.pickFolder(t("sign.pick_folder_title"));
    if (d) setOutDir(d);
  };

  // The kit goes into a new folder inside the chosen one: the backend refuses an existing one.
  const chooseKit = async () => {
    const d = await api.pickFolder(t("sign.kit_pick_title"));
    if (d) setKitDir(`${d.replace(/\/+$/, "")}/verifier-kit`);
  };
  const kitNeedsUid = !!kitDir && openpgp && !kitUid.trim();

  const run = async () => {
    if (!partitionId || !key) return;
    const id = newJobId();
    setJob(id);
    signing.reset();
    setProgress({});
    await signing.run(
      partitionId,
      id,
      {
        key: `id:${key.id_hex}`,
        also_keys: alsoKeys.map((k) => `id:${k.id_hex}`),
        files: signFiles,
        formats: chosen,
        manifest,
        out_dir: outDir,
        context: isMlDsa && context ? context : null,
        on_error: continueOnError ? "continue" : "stop",
        confirm_hss: confirmHss,
        kit: kitDir
          ? {
              dir: kitDir,
              user_id: kitUid.trim() || undefined,
              tsa_ca: (settings?.timestamp.enabled && settings.timestamp.ca_file) || undefined,
              context: isMlDsa && context ? context : undefined,
            }
          : undefined,
        // Chain files are one key's chain; with several keys the token's are used.
        chain: chosen.includes("cms") && alsoKeys.length === 0 ? chainFiles : [],
        context_login: perUseKeys.length > 0 ? "once_per_batch" : undefined,
      },
      perUseKeys.length > 0 ? perUsePin : null,
    );
  };

  if (!partitionId || !loggedIn) {
    return (
      <div className="view">
        <h1>{t("nav.sign")}</h1>
        <EmptyState
          title={t("sign.log_in_title")}
          action={<button onClick={() => navigate("connections")}>{t("common.go_to_connections")}</button>}
        >
          {signFiles.length ? t("sign.log_in_text_waiting", { count: signFiles.length }) : t("sign.log_in_text")}
        </EmptyState>
      </div>
    );
  }

  return (
    <div className="view sign-view">
      <header className="view-header">
        <h1>{t("sign.title")}</h1>
        <div className="button-row">
          <button onClick={() => void addFiles()} disabled={!!job}>
            {t("sign.add_files")}
          </button>
          <button onClick={() => setSignFiles([])} disabled={!!job || signFiles.length === 0}>
            {t("sign.clear")}
          </button>
        </div>
      </header>
      <section className="card drop-zone" data-testid="drop-zone">
        {signFiles.length === 0 ? (
          <EmptyState title={t("sign.drop_title")}>{t("sign.drop_text")}</EmptyState>
        ) : (
          <table className="table compact" data-testid="sign-files">
            <thead>
              <tr>
                <th>{t("sign.col_file")}</th>
                <th>{t("sign.col_size")}</th>
                <th>{t("audit.col_status")}</th>
                <th>
                  <span className="sr-only">{t("connections.remove")}</span>
                </th>
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
                    <td>{fmt.bytes(c?.size ?? null)}</td>
                    <td className="status-cell">
                      {c?.problem ? (
                        <span className="bad-text">{c.problem_text ? textOf(c.problem_text) : c.problem}</span>
                      ) : out?.error ? (
                        <span className="bad-text">
                          {out.failed_key && `${out.failed_key}: `}
                          {errorTexts(out.error).message}
                        </span>
                      ) : out && out.outputs.length ? (
                        <div>
                          {out.outputs.map((o) => (
                            <div key={o.path} className="small">
                              <Badge tone="ok">{o.format}</Badge> {o.path}{" "}
                              {o.signed_by.length > 1 && <span data-testid="signed-by">({o.signed_by.join(" + ")}) </span>}
                              {o.verified && <span className="muted">{t("sign.verified")}</span>}
                            </div>
                          ))}
                          {out.unstamped && (
                            <div className="small warn-text" data-testid="sign-unstamped">
                              {textOf(out.unstamped)}
                            </div>
                          )}
                        </div>
                      ) : pr ? (
                        pr.stage === "hashing" ? (
                          <ProgressBar
                            done={pr.done}
                            total={pr.total}
                            label={t("sign.hashing", { pct: Math.round((100 * pr.done) / Math.max(1, pr.total)) })}
                          />
                        ) : pr.stage === "failed" ? (
                          <span className="bad-text">{pr.message}</span>
                        ) : (
                          <span>{t(`sign.stage_${pr.stage}`)}</span>
                        )
                      ) : (
                        <span className="muted">{t("sign.ready")}</span>
                      )}
                    </td>
                    <td>
                      <button
                        className="icon-button"
                        onClick={() => setSignFiles((old) => old.filter((_, j) => j !== i))}
                        disabled={!!job}
                        aria-label={t("sign.remove_file", { name: c?.name ?? f })}
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
        <h2>{t("sign.key_and_formats")}</h2>
        {keysError && <ErrorBox error={keysError} />}
        <Field label={t("sign.signing_key")} hint={keys && keys.length === 0 ? t("sign.no_key") : undefined}>
          <select
            value={keyId}
            onChange={(e) => setKeyId(e.target.value)}
            disabled={!!job}
            data-testid="sign-key"
            aria-label={t("sign.signing_key")}
          >
            {(keys ?? []).map((k) => (
              <option key={k.id_hex} value={`id:${k.id_hex}`}>
                {`${k.label} — ${k.algorithm}`}
                {k.hss_remaining !== null
                  ? ` — ${t("sign.key_left", { left: fmt.number(k.hss_remaining), total: fmt.number(Number(k.hss_capacity ?? 0)) })}`
                  : ""}
              </option>
            ))}
          </select>
        </Field>
        {keys && keys.length > 1 && (
          <Field label={t("sign.also_sign_with")} hint={t("sign.also_hint")}>
            <div className="inline-form">
              {alsoKeys.map((k) => (
                <span key={k.id_hex} className="small" data-testid="also-key">
                  {`${k.label} — ${k.algorithm}`}{" "}
                  <button
                    onClick={() => toggleAlso(`id:${k.id_hex}`)}
                    disabled={!!job}
                    aria-label={t("sign.also_remove", { label: k.label })}
                  >
                    ×
                  </button>
                </span>
              ))}
              <select
                value=""
                onChange={(e) => e.target.value && toggleAlso(e.target.value)}
                disabled={!!job}
                data-testid="sign-also"
                aria-label={t("sign.also_sign_with")}
              >
                <option value="">{t("sign.also_pick")}</option>
                {keys
                  .filter((k) => `id:${k.id_hex}` !== keyId && !alsoIds.includes(`id:${k.id_hex}`))
                  .map((k) => (
                    <option key={k.id_hex} value={`id:${k.id_hex}`}>{`${k.label} — ${k.algorithm}`}</option>
                  ))}
              </select>
            </div>
          </Field>
        )}
        <fieldset className="radio-row">
          <legend>{t("sign.formats")}</legend>
          <div className="inline-form preset-row">
            <button
              onClick={() => {
                setFormats(APT_FORMATS);
                setManifest(false);
              }}
              disabled={!!job || !canOpenpgp}
              title={canOpenpgp ? t("sign.preset_apt_hint") : t("sign.openpgp_needs_key")}
              data-testid="preset-apt"
            >
              {t("sign.preset_apt")}
            </button>
            {aptPreset && (
              <span className={aptWithoutRelease ? "small warn-text" : "small muted"} data-testid="apt-note">
                {aptWithoutRelease ? t("sign.apt_no_release") : t("sign.apt_outputs")}
              </span>
            )}
          </div>
          <label>
            <input
              type="checkbox"
              checked={formats.includes("cms")}
              onChange={() => toggleFormat("cms")}
              disabled={!!job}
              data-testid="fmt-cms"
            />{" "}
            {t("sign.fmt_cms")}
          </label>
          {formats.includes("cms") && alsoKeys.length === 0 && (
            <span className="inline-form" title={t("sign.chain_hint")}>
              <button onClick={() => void addChain()} disabled={!!job} data-testid="chain-add">
                {t("sign.chain")}
              </button>
              {chainFiles.length > 0 && (
                <>
                  <span className="small" data-testid="chain-files" title={chainFiles.join("\n")}>
                    {t("sign.chain_files", { count: chainFiles.length })}
                  </span>
                  <button onClick={() => setChainFiles([])} disabled={!!job} aria-label={t("sign.chain_clear")}>
                    ×
                  </button>
                </>
              )}
            </span>
          )}
          <label>
            <input
              type="checkbox"
              checked={formats.includes("raw")}
              onChange={() => toggleFormat("raw")}
              disabled={!!job}
              data-testid="fmt-raw"
            />{" "}
            {t("sign.fmt_raw")}
          </label>
          <label>
            <input
              type="checkbox"
              checked={formats.includes("bundle")}
              onChange={() => toggleFormat("bundle")}
              disabled={!!job}
              data-testid="fmt-bundle"
            />{" "}
            {t("sign.fmt_bundle")}
          </label>
          <label title={canOpenpgp ? undefined : t("sign.openpgp_needs_key")}>
            <input
              type="checkbox"
              checked={detachedOpenpgp}
              onChange={toggleOpenpgp}
              disabled={!!job || !canOpenpgp}
              data-testid="fmt-openpgp"
            />{" "}
            {t("sign.fmt_openpgp")}
          </label>
          {detachedOpenpgp && (
            <label>
              <input
                type="checkbox"
                checked={chosen.includes("openpgp_binary")}
                onChange={(e) => setOpenpgpBinary(e.target.checked)}
                disabled={!!job}
                data-testid="fmt-openpgp-binary"
              />{" "}
              {t("sign.fmt_openpgp_binary")}
            </label>
          )}
          <label title={canOpenpgp ? t("sign.fmt_openpgp_cleartext_hint") : t("sign.openpgp_needs_key")}>
            <input
              type="checkbox"
              checked={chosen.includes("openpgp_cleartext")}
              onChange={() => toggleFormat("openpgp_cleartext")}
              disabled={!!job || !canOpenpgp}
              data-testid="fmt-openpgp-cleartext"
            />{" "}
            {t("sign.fmt_openpgp_cleartext")}
          </label>
          <label title={canMinisign ? undefined : t("sign.minisign_needs_key")}>
            <input
              type="checkbox"
              checked={chosen.includes("minisign")}
              onChange={() => toggleFormat("minisign")}
              disabled={!!job || !canMinisign}
              data-testid="fmt-minisign"
            />{" "}
            {t("sign.fmt_minisign")}
          </label>
          <label title={canSshsig ? undefined : t("sign.sshsig_needs_key")}>
            <input
              type="checkbox"
              checked={chosen.includes("sshsig")}
              onChange={() => toggleFormat("sshsig")}
              disabled={!!job || !canSshsig}
              data-testid="fmt-sshsig"
            />{" "}
            {t("sign.fmt_sshsig")}
          </label>
          <label>
            <input type="checkbox" checked={manifest} onChange={(e) => setManifest(e.target.checked)} disabled={!!job} />{" "}
            {t("sign.fmt_manifest")}
            {openpgp ? t("sign.fmt_manifest_openpgp") : ""}
          </label>
        </fieldset>
        {settings?.timestamp.enabled && formats.some((f) => f === "cms" || f === "bundle") && (
          <p className="muted" data-testid="sign-tsa">
            {t("sign.tsa_note", { url: settings.timestamp.url })}
          </p>
        )}
        <Field label={t("sign.outputs")}>
          <div className="inline-form">
            <span>{outDir ?? t("sign.beside_each")}</span>
            <button onClick={() => void chooseOut()} disabled={!!job}>
              {t("sign.choose_folder")}
            </button>
            {outDir && <button onClick={() => setOutDir(null)}>{t("sign.beside_files")}</button>}
          </div>
        </Field>
        <Field label={t("sign.kit")} hint={t("sign.kit_hint")}>
          <div className="inline-form">
            <span data-testid="kit-dir">{kitDir ?? t("sign.kit_none")}</span>
            <button onClick={() => void chooseKit()} disabled={!!job} data-testid="kit-choose">
              {t("sign.kit_choose")}
            </button>
            {kitDir && <button onClick={() => setKitDir(null)}>{t("sign.kit_remove")}</button>}
          </div>
        </Field>
        {kitDir && canOpenpgp && (
          <Field label={t("sign.kit_uid")} hint={openpgp ? t("sign.kit_uid_needed") : t("sign.kit_uid_hint")}>
            <input
              type="text"
              value={kitUid}
              onChange={(e) => setKitUid(e.target.value)}
              disabled={!!job}
              aria-label={t("sign.kit_uid")}
              data-testid="kit-uid"
            />
          </Field>
        )}
        {isMlDsa && formats.some((f) => f !== "cms") && (
          <Field label={t("sign.context")} hint={t("sign.context_hint")}>
            <input
              type="text"
              value={context}
              onChange={(e) => setContext(e.target.value)}
              disabled={!!job}
              aria-label={t("verify.context_label")}
            />
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
          {t("sign.continue_on_error")}
        </label>
      </section>
      {key && formats.includes("cms") && key.certificate_warnings_text.length > 0 && (
        <div className="notice warn" data-testid="certificate-warnings">
          {t("sign.cms_certificate_warnings", { subject: key.certificate_subject ?? t("sign.the_keys_certificate") })}{" "}
          {key.certificate_warnings_text.map((w) => (
            <span key={w.key}>{t("sign.sentence", { text: textOf(w) })} </span>
          ))}
        </div>
      )}
      {hssKeys.map((k) => (
        <div key={k.id_hex} className={`notice ${short(k) ? "warn" : ""}`} data-testid="hss-notice">
          {signers.length > 1 && <strong>{k.label}: </strong>}
          <Badge tone={hssTone(k, settings?.hss_warning_percent ?? 10, settings?.hss_critical_percent ?? 1)}>
            {t("hss.left_of", {
              left: k.hss_remaining === null ? "?" : fmt.number(k.hss_remaining),
              total: fmt.number(Number(k.hss_capacity ?? 0)),
            })}
          </Badge>{" "}
          {t("sign.hss_uses", { count: neededFor(k) })}
          {short(k) ? ` ${t("sign.hss_not_enough")}` : ""}
          <label className="check">
            <input type="checkbox" checked={confirmHss} onChange={(e) => setConfirmHss(e.target.checked)} data-testid="confirm-hss" />{" "}
            {t("sign.hss_confirm", { count: neededFor(k) })}
          </label>
        </div>
      ))}
      {perUseKeys.map((k) => (
        <div key={k.id_hex} className="notice warn" data-testid="per-use-notice">
          {t("sign.per_use_notice", { label: k.label })}
          <label className="check">
            <input
              type="checkbox"
              checked={consentPerUse}
              onChange={(e) => setConsentPerUse(e.target.checked)}
              disabled={!!job}
              data-testid="consent-per-use"
            />{" "}
            {t("sign.per_use_consent", { count: good * perFileFor(k) })}
          </label>
        </div>
      ))}
      {perUseKeys.length > 0 && (
        <Field label={t("sign.per_use_pin")}>
          <input
            type="password"
            autoComplete="off"
            value={perUsePin}
            onChange={(e) => setPerUsePin(e.target.value)}
            disabled={!!job || !consentPerUse}
            data-testid="per-use-pin"
          />
        </Field>
      )}
      <div className="button-row">
        <button
          className="primary"
          onClick={() => void run()}
          disabled={!!job || !key || good === 0 || chosen.length === 0 || kitNeedsUid || (isHss && (!confirmHss || tooFew)) || !perUseReady}
          data-testid="sign-submit"
        >
          {job ? t("sign.signing") : t("sign.sign_n", { count: good })}
        </button>
        {job && (
          <button onClick={() => void api.cancelJob(job)} data-testid="sign-cancel">
            {t("common.cancel")}
          </button>
        )}
      </div>
      {error && <ErrorBox error={error} title={t("sign.nothing_signed")} />}
      {report && (
        <section className="card" data-testid="sign-report">
          <h2>{t("sign.summary")}</h2>
          <p>
            {report.keys.length > 1
              ? t("sign.summary_keys", {
                  count: report.signatures_made,
                  keys: report.keys.map((k) => `${k.key.label} (${k.key.algorithm})`).join(", "),
                })
              : t("sign.summary_text", { count: report.signatures_made, label: report.key.label, algorithm: report.key.algorithm })}
            {report.keys.length > 1
              ? report.keys
                  .filter((k) => k.hss_remaining_after !== null)
                  .map((k) => ` ${t("sign.hss_left_after_key", { label: k.key.label, n: fmt.number(k.hss_remaining_after ?? 0) })}`)
              : report.hss_remaining_after !== null && ` ${t("sign.hss_left_after", { n: fmt.number(report.hss_remaining_after) })}`}
            {report.stopped && ` ${t("sign.stopped")}`}
            {report.cancelled && ` ${t("errors.cancelled")}`}
          </p>
          {report.manifest.map((o) => (
            <div key={o.path} className="small">
              <Badge tone="ok">{o.format.replace("_", " ")}</Badge> {o.path}
            </div>
          ))}
          {report.manifest_error && <ErrorBox error={report.manifest_error} />}
          {report.kit && (
            <div className="small" data-testid="sign-kit">
              <Badge tone="ok">{t("sign.kit_written")}</Badge>{" "}
              {t("sign.kit_summary", { dir: report.kit.dir, files: report.kit.files.length, checks: report.kit.checks.length })}
            </div>
          )}
          {report.kit_error && <ErrorBox error={report.kit_error} title={t("sign.kit_not_written")} />}
        </section>
      )}
    </div>
  );
}
