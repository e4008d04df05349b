// Generate a key from a preset, with the seed's label style, sizes, HSS capacity and the
// key-generation time warning shown before anything is made. The generation itself is a
// job in the keygen slice: its progress shows here, and the dialog can be closed while it
// runs (Escape too) — the header's indicator then shows it and brings the dialog back.
import { useEffect, useMemo, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { KeySpec, LmotsType, LmsType } from "../../bindings";
import { Dialog, ErrorBox, Field, ProgressBar } from "../../components";
import { textOf, useFormat } from "../../i18n";
import { api } from "../../ipc";
import { useKeygen, useKeygenActions } from "../../state";
import { useCommand } from "../../useCommand";
import { PRESETS, progressText } from "./presets";
import { HssLevels, SpecInfo } from "./KeySpecParts";

export function GenerateDialog({
  partitionId,
  initial,
  onClose,
  onDone,
}: {
  partitionId: string;
  /// The form filled in (a successor from the PQC readiness view): the preset and a label.
  initial?: { preset: string; label: string };
  onClose: () => void;
  onDone: (label: string) => void;
}) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { job, lastDone } = useKeygen();
  const { start, attach, dismiss } = useKeygenActions();
  // A generation under way (or one that failed here) is shown with the form it was started from.
  const [preset, setPreset] = useState(job?.form.preset ?? initial?.preset ?? "ml-dsa-65");
  const [levels, setLevels] = useState<[LmsType, LmotsType][]>(
    job?.form.levels ?? [
      ["LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"],
      ["LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"],
    ],
  );
  const [purpose, setPurpose] = useState(job?.form.purpose ?? "release");
  // A label given with the form stands as if typed: the suggestion does not replace it.
  const [label, setLabel] = useState(job?.form.label ?? initial?.label ?? "");
  const [labelEdited, setLabelEdited] = useState(job?.form.labelEdited ?? initial !== undefined);
  const [token, setToken] = useState(job?.form.token ?? true);
  const [extractableAsked, setExtractable] = useState(job?.form.extractable ?? false);
  // HSS keys never leave the token: a copy would sign with the same one-time keys again.
  const extractable = extractableAsked && preset !== "hss";
  const [alwaysAuthenticate, setAlwaysAuthenticate] = useState(job?.form.alwaysAuthenticate ?? false);
  const { run: describe, data: info, error: infoError } = useCommand(api.describeKeySpec, { keepError: true });
  const busy = job?.state === "running";
  const error = job?.state === "failed" ? job.error : null;

  // While this dialog is open, the end of a generation shows here (not as a notification);
  // once the key is made, the dialog that showed its generation closes.
  useEffect(() => attach(), [attach]);
  const showing = useRef<number | null>(null);
  useEffect(() => {
    if (job) showing.current = job.id;
  }, [job]);
  useEffect(() => {
    if (lastDone !== null && lastDone === showing.current) onClose();
  }, [lastDone, onClose]);

  const spec: KeySpec | null = useMemo(() => {
    if (preset === "hss") return { kind: "hss", params: { levels } };
    return PRESETS.find((p) => p.id === preset)?.spec ?? null;
  }, [preset, levels]);

  useEffect(() => {
    if (!spec) return;
    void describe(spec, purpose).then((i) => {
      if (i && !labelEdited) setLabel(i.suggested_label);
    });
  }, [describe, spec, purpose, labelEdited]);

  const generate = () => {
    if (!spec || !label.trim() || busy) return;
    const l = label.trim();
    start(
      job?.partitionId ?? partitionId,
      { spec, label: l, token, extractable, always_authenticate: alwaysAuthenticate },
      { preset, levels, purpose, label: l, labelEdited, token, extractable, alwaysAuthenticate },
      onDone,
    );
  };
  // Closing while the key is made leaves it running (the header shows it); closing after a
  // failure forgets the failed attempt.
  const close = () => {
    if (!busy) dismiss();
    onClose();
  };

  const groups = Array.from(new Set(PRESETS.map((p) => p.group)));
  return (
    <Dialog
      title={t("generate.title")}
      onClose={close}
      wide
      footer={
        <>
          {busy ? (
            <button onClick={onClose} data-testid="generate-background">
              {t("keygen.background")}
            </button>
          ) : (
            <button onClick={close}>{t("common.cancel")}</button>
          )}
          <button className="primary" onClick={generate} disabled={busy || !label.trim() || !!infoError} data-testid="generate-submit">
            {busy ? t("generate.generating") : t("generate.generate")}
          </button>
        </>
      }
    >
      <div className="form-grid">
        <Field label={t("audit.col_algorithm")}>
          <select
            value={preset}
            onChange={(e) => setPreset(e.target.value)}
            disabled={busy}
            data-testid="preset"
            aria-label={t("audit.col_algorithm")}
          >
            {groups.map((g) => (
              <optgroup key={g} label={t(`generate.group_${g}`)}>
                {PRESETS.filter((p) => p.group === g).map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.label === "generate.preset_hss" || p.label === "generate.preset_generic" ? t(p.label) : p.label}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </Field>
        <Field label={t("generate.purpose")} hint={t("generate.purpose_hint")}>
          <input
            type="text"
            value={purpose}
            onChange={(e) => setPurpose(e.target.value)}
            disabled={busy}
            aria-label={t("generate.purpose")}
          />
        </Field>
        <Field label={t("generate.label")}>
          <input
            type="text"
            value={label}
            onChange={(e) => {
              setLabel(e.target.value);
              setLabelEdited(true);
            }}
            disabled={busy}
            data-testid="key-label"
            aria-label={t("generate.label")}
          />
        </Field>
        <fieldset className="radio-row">
          <legend>{t("generate.lifetime")}</legend>
          <label>
            <input type="radio" checked={token} onChange={() => setToken(true)} disabled={busy} /> {t("generate.token_object")}
          </label>
          <label>
            <input type="radio" checked={!token} onChange={() => setToken(false)} disabled={busy} /> {t("generate.session_object")}
          </label>
        </fieldset>
      </div>
      <label className="checkbox" title={t("generate.extractable_hint")}>
        <input
          type="checkbox"
          checked={extractable}
          onChange={(e) => setExtractable(e.target.checked)}
          disabled={busy || preset === "hss"}
          data-testid="generate-extractable"
        />{" "}
        {t("generate.extractable")}
      </label>
      <p className="muted small" data-testid="generate-extractable-hint">
        {preset === "hss" ? t("generate.extractable_hss") : t("generate.extractable_hint")}
      </p>
      <label className="checkbox" title={t("generate.always_authenticate_hint")}>
        <input
          type="checkbox"
          checked={alwaysAuthenticate}
          onChange={(e) => setAlwaysAuthenticate(e.target.checked)}
          disabled={busy}
          data-testid="generate-always-authenticate"
        />{" "}
        {t("generate.always_authenticate")}
      </label>
      <p className="muted small">{t("generate.always_authenticate_hint")}</p>
      {preset === "hss" && <HssLevels levels={levels} onChange={setLevels} busy={busy} />}
      {infoError && <ErrorBox error={infoError} />}
      {info && <SpecInfo info={info} />}
      {info?.keygen_warning_text && (
        <div className="notice warn" role="note" data-testid="keygen-warning">
          {textOf(info.keygen_warning_text)}
        </div>
      )}
      {busy && job && (
        <div data-testid="keygen-progress">
          <ProgressBar done={job.progress?.done ?? 0} total={job.progress?.total ?? 0} label={progressText(job, t, fmt)} />
          <p className="muted small">{t("keygen.background_hint")}</p>
        </div>
      )}
      {error && <ErrorBox error={error} title={t("generate.failed")} />}
    </Dialog>
  );
}
