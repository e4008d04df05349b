// What the PQC view says about an assessed object: its class's and status's tone and catalog
// key, the deprecation timeline, a successor's label.
import type { TFunction } from "i18next";
import type { Assessed, PqcStatus, QuantumClass } from "../../bindings";
import { type BarSpec } from "../../charts/Chart";

/// An object with the partition it is on.
export type Row = Assessed & { partition_id: string; partition_label: string };

export const CLASS_TONE: Record<Assessed["algorithm"]["class"], "ok" | "warn" | "bad" | "info" | "neutral"> = {
  "quantum-vulnerable": "bad",
  "post-quantum": "ok",
  "not-quantum-relevant": "info",
  unknown: "warn",
};
export const STATUS_TONE: Record<Assessed["status"], "ok" | "warn" | "bad" | "info" | "neutral"> = {
  ok: "ok",
  "due-within-a-year": "warn",
  deprecated: "warn",
  "past-due": "bad",
  unjudged: "neutral",
};
/// The counts table's row of all partitions together.
export const ALL = "all";
export const CLASSES = ["quantum_vulnerable", "post_quantum", "not_quantum_relevant", "unknown"] as const;
export const CLASS_KEY = {
  "quantum-vulnerable": "pqc.class_quantum_vulnerable",
  "post-quantum": "pqc.class_post_quantum",
  "not-quantum-relevant": "pqc.class_not_quantum_relevant",
  unknown: "pqc.class_unknown",
} as const satisfies Record<QuantumClass, string>;
export const STATUS_KEY = {
  ok: "pqc.status_ok",
  "due-within-a-year": "pqc.status_due_within_a_year",
  deprecated: "pqc.status_deprecated",
  "past-due": "pqc.status_past_due",
  unjudged: "pqc.status_unjudged",
} as const satisfies Record<PqcStatus, string>;
export const OBJECT_KEY = {
  PRIVATE_KEY: "pqc.object_private_key",
  PUBLIC_KEY: "pqc.object_public_key",
  SECRET_KEY: "pqc.object_secret_key",
  CERTIFICATE: "pqc.object_certificate",
} as const;
export const objectKind = (cls: string) => OBJECT_KEY[cls as keyof typeof OBJECT_KEY] ?? OBJECT_KEY.SECRET_KEY;
/// Deprecated in the first series colour, disallowed in red (and named in the legend).
export const TIMELINE_COLORS: BarSpec["colors"] = [2, "bad"];

/// The classical algorithm in a label ("rsa_2048", "p256", "ed25519").
export const CLASSICAL_IN_LABEL =
  /(rsa|aes)[_-]?\d{3,4}|ecdsa[_-]?p?[_-]?\d{3}|ec[_-]?p[_-]?\d{3}|p[_-]?(256|384|521)|ed25519|ed448|ecdsa|rsa/i;

/// The successor's label from the old one: its algorithm replaced ("release_rsa_2048" →
/// "release_ml_dsa_65"), or the successor's name added; in the old label's separator style.
export function successorLabel(old: string, preset: string): string {
  const dashed = old.includes("-") && !old.includes("_");
  const name = dashed ? preset : preset.replace(/-/g, "_");
  if (!old.trim()) return name;
  if (CLASSICAL_IN_LABEL.test(old)) return old.replace(CLASSICAL_IN_LABEL, name);
  return `${old}${dashed ? "-" : "_"}${name}`;
}

/// Objects by the year their deprecation and disallowance dates fall in, every year from the
/// first (or `thisYear`, if earlier) to the last, so the axis reads as a time line from now.
export function timeline(rows: Assessed[], thisYear: number): { year: number; deprecated: number; disallowed: number }[] {
  const year = (d: string | null) => (d ? Number(d.slice(0, 4)) : null);
  const dated = rows.flatMap((r) => [year(r.deprecated_after), year(r.disallowed_after)]).filter((y): y is number => y !== null);
  if (dated.length === 0) return [];
  const out = [];
  for (let y = Math.min(thisYear, ...dated); y <= Math.max(...dated); y++) {
    out.push({
      year: y,
      deprecated: rows.filter((r) => year(r.deprecated_after) === y).length,
      disallowed: rows.filter((r) => year(r.disallowed_after) === y).length,
    });
  }
  return out;
}

/// The algorithm's name; a certificate's as "key signed with signature" in the window's language.
export function algorithmName(r: Assessed, t: TFunction): string {
  const [key, sig] = r.algorithm.name.split(" signed with ");
  return r.object_class === "CERTIFICATE" && sig !== undefined ? t("pqc.certificate_algorithm", { key, sig }) : r.algorithm.name;
}
