// Generate a key from a preset, with the seed's label style, sizes, HSS capacity and the
// key-generation time warning shown before anything is made. The generation itself is a
// job in the keygen slice: its progress shows here, and the dialog can be closed while it
// runs (Escape too) — the header's indicator then shows it and brings the dialog back.
import { useEffect, useMemo, useRef, useState } from "react";
import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import type { KeySpec, LmotsType, LmsType } from "../bindings";
import { Dialog, ErrorBox, Field, ProgressBar } from "../components";
import { textOf, useFormat } from "../i18n";
import { api } from "../ipc";
import { timeLeftMs, useKeygen, useKeygenActions, type KeygenJob } from "../state";
import { useCommand } from "../useCommand";

type Group = "pq_signatures" | "pq_kem" | "classical" | "secret";

interface Preset {
  id: string;
  group: Group;
  /// The algorithm's name (the same in every language), or a catalog key under generate.*.
  label: string;
  spec: KeySpec | null;
}

const PRESETS: Preset[] = [
  { id: "ml-dsa-44", group: "pq_signatures", label: "ML-DSA-44", spec: { kind: "ml-dsa", set: "ML-DSA-44" } },
  { id: "ml-dsa-65", group: "pq_signatures", label: "ML-DSA-65", spec: { kind: "ml-dsa", set: "ML-DSA-65" } },
  { id: "ml-dsa-87", group: "pq_signatures", label: "ML-DSA-87", spec: { kind: "ml-dsa", set: "ML-DSA-87" } },
  { id: "hss", group: "pq_signatures", label: "generate.preset_hss", spec: null },
  { id: "ml-kem-512", group: "pq_kem", label: "ML-KEM-512", spec: { kind: "ml-kem", set: "ML-KEM-512" } },
  { id: "ml-kem-768", group: "pq_kem", label: "ML-KEM-768", spec: { kind: "ml-kem", set: "ML-KEM-768" } },
  { id: "ml-kem-1024", group: "pq_kem", label: "ML-KEM-1024", spec: { kind: "ml-kem", set: "ML-KEM-1024" } },
  { id: "ec-p256", group: "classical", label: "EC P-256", spec: { kind: "ec", curve: "P256" } },
  { id: "ec-p384", group: "classical", label: "EC P-384", spec: { kind: "ec", curve: "P384" } },
  { id: "ed25519", group: "classical", label: "Ed25519", spec: { kind: "ec", curve: "Ed25519" } },
  { id: "rsa-2048", group: "classical", label: "RSA-2048", spec: { kind: "rsa", bits: 2048 } },
  { id: "rsa-3072", group: "classical", label: "RSA-3072", spec: { kind: "rsa", bits: 3072 } },
  { id: "rsa-4096", group: "classical", label: "RSA-4096", spec: { kind: "rsa", bits: 4096 } },
  { id: "aes-128", group: "secret", label: "AES-128", spec: { kind: "aes", bits: 128 } },
  { id: "aes-256", group: "secret", label: "AES-256", spec: { kind: "aes", bits: 256 } },
  { id: "generic-secret", group: "secret", label: "generate.preset_generic", spec: { kind: "generic-secret", bits: 256 } },
];

// SHA-256 (M32/N32) and RFC 9858's SHA-256/192 (M24/N24). A level's LM-OTS type hashes as
// its LMS type does: the LM-OTS list shows that hash's types, and a change of the LMS
// type's hash carries the Winternitz parameter over.
const LMS: LmsType[] = [
  "LMS_SHA256_M32_H5",
  "LMS_SHA256_M32_H10",
  "LMS_SHA256_M32_H15",
  "LMS_SHA256_M32_H20",
  "LMS_SHA256_M32_H25",
  "LMS_SHA256_M24_H5",
  "LMS_SHA256_M24_H10",
  "LMS_SHA256_M24_H15",
  "LMS_SHA256_M24_H20",
  "LMS_SHA256_M24_H25",
];
const LMOTS: LmotsType[] = [
  "LMOTS_SHA256_N32_W1",
  "LMOTS_SHA256_N32_W2",
  "LMOTS_SHA256_N32_W4",
  "LMOTS_SHA256_N32_W8",
  "LMOTS_SHA256_N24_W1",
  "LMOTS_SHA256_N24_W2",
  "LMOTS_SHA256_N24_W4",
  "LMOTS_SHA256_N24_W8",
];
const lmsBytes = (l: LmsType) => (l.includes("_M24_") ? 24 : 32);
const lmotsBytes = (o: LmotsType) => (o.includes("_N24_") ? 24 : 32);
/// The level with its LMS type set to `l`, its LM-OTS type moved to `l`'s hash if needed.
function withLms(level: [LmsType, LmotsType], l: LmsType): [LmsType, LmotsType] {
  const n = lmsBytes(l);
  const o = level[1];
  if (lmotsBytes(o) === n) return [l, o];
  const w = o.slice(o.lastIndexOf("_"));
  return [l, LMOTS.find((x) => lmotsBytes(x) === n && x.endsWith(w)) ?? o];
}

type T = TFunction;
type Fmt = ReturnType<typeof useFormat>;

/// A duration in the window's language: "42 s", "3 min 05 s", "2 h 10 min".
export function duration(ms: number, t: T, fmt: Fmt): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return t("keygen.duration_s", { s: fmt.number(s) });
  if (s < 3600) return t("keygen.duration_m", { m: fmt.number(Math.floor(s / 60)), s: String(s % 60).padStart(2, "0") });
  return t("keygen.duration_h", { h: fmt.number(Math.floor(s / 3600)), m: String(Math.floor(s / 60) % 60).padStart(2, "0") });
}

/// The job's progress in words: done of total, the share, the time taken and the time left
/// when the module reports its progress; the elapsed time only otherwise.
export function progressText(job: KeygenJob, t: T, fmt: Fmt, short = false): string {
  const p = job.progress;
  const elapsed = duration(job.elapsedMs, t, fmt);
  if (!p || p.total <= 0) return short ? elapsed : t("generate.progress", { seconds: fmt.number(job.elapsedMs / 1000, 1) });
  const percent = fmt.percent((100 * p.done) / p.total, 0);
  if (short) return percent;
  const left = timeLeftMs(job);
  const args = { done: fmt.number(p.done), total: fmt.number(p.total), percent, elapsed };
  return left === null ? t("keygen.progress", args) : t("keygen.progress_left", { ...args, left: duration(left, t, fmt) });
}

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
      {preset === "hss" && (
        <section className="hss-levels">
          <h3>{t("generate.hss_levels")}</h3>
          {levels.map((lv, i) => (
            <div className="inline-form" key={i}>
              <span>{t("generate.level", { n: i + 1 })}</span>
              <select
                value={lv[0]}
                onChange={(e) => setLevels(levels.map((x, j) => (j === i ? withLms(x, e.target.value as LmsType) : x)))}
                aria-label={t("generate.level_lms", { n: i + 1 })}
                disabled={busy}
              >
                {LMS.map((x) => (
                  <option key={x}>{x}</option>
                ))}
              </select>
              <select
                value={lv[1]}
                onChange={(e) => setLevels(levels.map((x, j) => (j === i ? [x[0], e.target.value as LmotsType] : x)))}
                aria-label={t("generate.level_lmots", { n: i + 1 })}
                disabled={busy}
              >
                {LMOTS.filter((x) => lmotsBytes(x) === lmsBytes(lv[0])).map((x) => (
                  <option key={x}>{x}</option>
                ))}
              </select>
              <button
                onClick={() => setLevels(levels.filter((_, j) => j !== i))}
                disabled={busy || levels.length === 1}
                aria-label={t("generate.remove_level", { n: i + 1 })}
              >
                {t("connections.remove")}
              </button>
            </div>
          ))}
          <button
            onClick={() => setLevels([...levels, ["LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"]])}
            disabled={busy || levels.length >= 8}
          >
            {t("generate.add_level")}
          </button>
        </section>
      )}
      {infoError && <ErrorBox error={infoError} />}
      {info && (
        <dl className="info-grid spec-info" data-testid="spec-info">
          <div>
            <dt>{t("generate.mechanism")}</dt>
            <dd>
              <code>{info.mechanism}</code>
            </dd>
          </div>
          {info.public_key_len !== null && (
            <div>
              <dt>{t("generate.public_key")}</dt>
              <dd>{t("generate.public_key_len", { bytes: info.public_key_len })}</dd>
            </div>
          )}
          {info.signature_len !== null && (
            <div>
              <dt>{t("verify.signature")}</dt>
              <dd>{t("generate.bytes", { bytes: fmt.number(info.signature_len) })}</dd>
            </div>
          )}
          {info.signature_capacity !== null && (
            <div>
              <dt>{t("generate.signatures")}</dt>
              <dd data-testid="hss-capacity">{t("generate.capacity", { n: fmt.number(BigInt(info.signature_capacity)) })}</dd>
            </div>
          )}
        </dl>
      )}
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
