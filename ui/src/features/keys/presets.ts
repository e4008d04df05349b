// What the key generation dialog offers: the presets by group, the HSS tree shapes (LMS and
// LM-OTS types), and the job's progress as text.
import type { TFunction } from "i18next";
import type { KeySpec, LmotsType, LmsType } from "../../bindings";
import { useFormat } from "../../i18n";
import { timeLeftMs, type KeygenJob } from "../../state";

/// The hash output sizes of an LMS and an LM-OTS type: the two must agree.
export const lmsBytes = (l: LmsType) => (l.includes("_M24_") ? 24 : 32);
export const lmotsBytes = (o: LmotsType) => (o.includes("_N24_") ? 24 : 32);

export type Group = "pq_signatures" | "pq_kem" | "classical" | "secret";

export interface Preset {
  id: string;
  group: Group;
  /// The algorithm's name (the same in every language), or a catalog key under generate.*.
  label: string;
  spec: KeySpec | null;
}

export const PRESETS: Preset[] = [
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
export const LMS: LmsType[] = [
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
export const LMOTS: LmotsType[] = [
  "LMOTS_SHA256_N32_W1",
  "LMOTS_SHA256_N32_W2",
  "LMOTS_SHA256_N32_W4",
  "LMOTS_SHA256_N32_W8",
  "LMOTS_SHA256_N24_W1",
  "LMOTS_SHA256_N24_W2",
  "LMOTS_SHA256_N24_W4",
  "LMOTS_SHA256_N24_W8",
];
/// The level with its LMS type set to `l`, its LM-OTS type moved to `l`'s hash if needed.
export function withLms(level: [LmsType, LmotsType], l: LmsType): [LmsType, LmotsType] {
  const n = lmsBytes(l);
  const o = level[1];
  if (lmotsBytes(o) === n) return [l, o];
  const w = o.slice(o.lastIndexOf("_"));
  return [l, LMOTS.find((x) => lmotsBytes(x) === n && x.endsWith(w)) ?? o];
}

export type T = TFunction;
export type Fmt = ReturnType<typeof useFormat>;

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
