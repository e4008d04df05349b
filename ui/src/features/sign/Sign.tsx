// Sign release artifacts: drop files on the window (or add them), pick a key, formats and
// where the outputs go; progress per file; a summary with each output, all verified in
// software before they were written. The form's parts are in this folder; its state is one
// SignRequest (request.ts).
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { FileCheck, SignProgress, SignRequest } from "../../bindings";
import { EmptyState, ErrorBox } from "../../components";
import { api, newJobId } from "../../ipc";
import { useNavigate, usePartition, useSettings, useSignQueue, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { FormatFields } from "./FormatFields";
import { KeyFields } from "./KeyFields";
import { OutputFields } from "./OutputFields";
import { keyRef, requestToSend, signersOf, useSignRequest } from "./request";
import { SignFiles, type FileState } from "./SignFiles";
import { SignNotices, tooFewLeft } from "./SignNotices";
import { SignReport } from "./SignReport";

export function SignView() {
  const { t } = useTranslation();
  const { partitionId, partition } = usePartition();
  const { signFiles, setSignFiles } = useSignQueue();
  const { settings } = useSettings();
  const navigate = useNavigate();
  const toast = useToast();
  const [checks, setChecks] = useState<FileCheck[]>([]);
  const { run: loadKeys, data: keys, error: keysError } = useCommand(api.signingKeys);
  // The form: one request, as the sign command takes it ("Also sign with": more keys
  // signing the same batch; `context_login`: the officer's consent to give the PIN once for
  // a batch of a key that wants it per signature).
  const [request, update] = useSignRequest();
  // That PIN, asked here again (the login's is not reused), is sent beside the request.
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
      update({ confirm_hss: false, context_login: undefined });
      setPerUsePin("");
    }
  });
  const { data: report, error } = signing;
  const loggedIn = partition?.logged_in === "user";

  useEffect(() => {
    if (!partitionId || !loggedIn) return;
    void loadKeys(partitionId).then((k) => {
      if (k) update((r) => ({ key: r.key && k.some((x) => keyRef(x) === r.key) ? r.key : k[0] ? keyRef(k[0]) : "" }));
    });
  }, [loadKeys, partitionId, loggedIn, report, update]);

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

  const signers = signersOf(request, keys);
  const { key, hss, perUse, chosen } = signers;
  const good = checks.filter((c) => !c.problem).length;
  const perUseReady = perUse.length === 0 || (request.context_login === "once_per_batch" && perUsePin.length > 0);
  const hssReady = hss.length === 0 || (request.confirm_hss && !hss.some((k) => tooFewLeft(k, request, good)));
  const kitNeedsUid = !!request.kit && signers.openpgp && !request.kit.user_id?.trim();
  const busy = !!job;
  const form = { request, update, signers, busy };

  const { run: addFiles } = useCommand(
    async () => {
      const picked = await api.pickFiles(t("sign.pick_title"), true);
      if (picked.length) setSignFiles((old) => [...old, ...picked]);
    },
    { errorToast: t("sign.no_file_dialog") },
  );

  const run = async () => {
    if (!partitionId || !key) return;
    const id = newJobId();
    setJob(id);
    signing.reset();
    setProgress({});
    const tsaCa = (settings?.timestamp.enabled && settings.timestamp.ca_file) || undefined;
    await signing.run(
      partitionId,
      id,
      requestToSend(request, { files: signFiles, signers: signers.all, tsaCa }),
      perUse.length > 0 ? perUsePin : null,
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
      </header>{" "}
      <SignFiles
        files={signFiles}
        checks={checks}
        progress={progress}
        report={report}
        busy={busy}
        onRemove={(i) => setSignFiles((old) => old.filter((_, j) => j !== i))}
      />
      <section className="card form-grid">
        <h2>{t("sign.key_and_formats")}</h2>
        {keysError && <ErrorBox error={keysError} />}
        <KeyFields {...form} keys={keys} />
        <FormatFields {...form} checks={checks} />
        <OutputFields {...form} />
      </section>
      <SignNotices {...form} good={good} pin={perUsePin} setPin={setPerUsePin} />
      <div className="button-row">
        <button
          className="primary"
          onClick={() => void run()}
          disabled={busy || !key || good === 0 || chosen.length === 0 || kitNeedsUid || !hssReady || !perUseReady}
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
      {report && <SignReport report={report} />}
    </div>
  );
}
