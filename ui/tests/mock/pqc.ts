// The mock's post-quantum readiness, as hsmc_pqc judges keys: the algorithms the mock's keys
// use (strengths from SP 800-57 Pt. 1 r5 table 2, categories from FIPS 203/204), the two
// built-in policies' rules (NIST IR 8547 tables 2 and 4; CNSA 2.0), the ranking and the
// counts. The UI tests check what the view shows against the standards, not against this.
import type {
  Algorithm,
  Assessed,
  Counts,
  Evidence,
  Family,
  ObjectSummary,
  PqcStatus,
  Purpose,
  QuantumClass,
  Readiness,
} from "../../src/bindings";

const ALGORITHMS: Record<string, [Family, number | null, number]> = {
  "RSA-1024": ["rsa", 80, 0],
  "RSA-2048": ["rsa", 112, 0],
  "RSA-3072": ["rsa", 128, 0],
  "ECDSA P-256": ["ecdsa", 128, 0],
  "ECDSA P-384": ["ecdsa", 192, 0],
  Ed25519: ["eddsa", 128, 0],
  "ML-DSA-44": ["ml-dsa", 128, 2],
  "ML-DSA-65": ["ml-dsa", 192, 3],
  "ML-DSA-87": ["ml-dsa", 256, 5],
  "ML-KEM-768": ["ml-kem", 192, 3],
  "ML-KEM-1024": ["ml-kem", 256, 5],
  HSS: ["hss-lms", 256, 5],
  "AES-128": ["aes", 128, 0],
  "AES-256": ["aes", 256, 0],
};

function classOf(f: Family): QuantumClass {
  if (f === "rsa" || f === "ecdsa" || f === "eddsa") return "quantum-vulnerable";
  if (f === "ml-dsa" || f === "ml-kem" || f === "slh-dsa" || f === "hss-lms") return "post-quantum";
  if (f === "aes" || f === "generic-secret") return "not-quantum-relevant";
  return "unknown";
}

function algorithm(name: string): Algorithm {
  const a = ALGORITHMS[name];
  if (!a) return { name, family: "unknown", classical_bits: null, nist_category: 0, class: "unknown" };
  return { name, family: a[0], classical_bits: a[1], nist_category: a[2], class: classOf(a[0]) };
}

interface Rule {
  verdict: string;
  deprecated: string | null;
  disallowed: string | null;
}

/// The first rule of the policy that matches (the files in crates/pqc/src/policies).
function rule(policy: string, a: Algorithm, purpose: Purpose | null): Rule | null {
  if (a.class === "unknown") return null;
  if (policy === "cnsa2") {
    if (["ML-DSA-87", "ML-KEM-1024", "AES-256", "HSS"].includes(a.name))
      return { verdict: "in the CNSA 2.0 suite", deprecated: null, disallowed: null };
    if (purpose === "signing")
      return {
        verdict: "outside CNSA 2.0: software and firmware signing must be CNSA 2.0 exclusively by 2030",
        deprecated: "2025-12-31",
        disallowed: "2030-12-31",
      };
    return { verdict: "outside CNSA 2.0: CNSA 2.0 exclusively by 2033", deprecated: "2025-12-31", disallowed: "2033-12-31" };
  }
  const bits = a.classical_bits ?? 0;
  if (a.class === "quantum-vulnerable" && bits <= 111)
    return { verdict: "below 112-bit classical security: already disallowed", deprecated: null, disallowed: "2013-12-31" };
  if (a.class === "quantum-vulnerable" && bits <= 112)
    return {
      verdict: "112-bit classical: deprecated after 2030, disallowed after 2035",
      deprecated: "2030-12-31",
      disallowed: "2035-12-31",
    };
  if (a.class === "quantum-vulnerable")
    return { verdict: "quantum-vulnerable: disallowed after 2035", deprecated: null, disallowed: "2035-12-31" };
  if (a.class === "post-quantum") return { verdict: "approved post-quantum algorithm", deprecated: null, disallowed: null };
  return { verdict: "symmetric: not quantum-relevant at this strength", deprecated: null, disallowed: null };
}

function status(r: Rule | null, today: string): PqcStatus {
  if (!r) return "unjudged";
  if (r.disallowed && r.disallowed < today) return "past-due";
  if (r.deprecated && r.deprecated < today) return "deprecated";
  const inAYear = new Date(Date.parse(today) + 365 * 86_400_000).toISOString().slice(0, 10);
  if ((r.deprecated && r.deprecated <= inAYear) || (r.disallowed && r.disallowed <= inAYear)) return "due-within-a-year";
  return "ok";
}

export const POLICY_NAMES: Record<string, [string, string]> = {
  nist: ["NIST IR 8547", "NIST IR 8547 ipd (2024-11), tables 2 and 4; strengths from SP 800-57 Pt. 1 r5, table 2"],
  cnsa2: ["CNSA 2.0", "NSA CNSA 2.0 (CSA, 2022-09; FAQ 2024-12)"],
};

function assessed(
  o: ObjectSummary,
  policy: string,
  today: string,
  evidence: Evidence,
  cert: { key: string; sig: string } | null,
): Assessed {
  const alg = algorithm(cert ? cert.key : o.algorithm);
  const purpose: Purpose | null =
    cert || o.capabilities.sign || o.capabilities.verify
      ? "signing"
      : o.class === "SECRET_KEY" || o.capabilities.derive || o.capabilities.encapsulate || o.capabilities.decapsulate
        ? "key-establishment"
        : null;
  const r = rule(policy, alg, purpose);
  const st = status(r, today);
  const dated = r !== null && (r.deprecated !== null || r.disallowed !== null);
  return {
    object_class: o.class,
    label: o.label,
    id_hex: o.id_hex,
    unique_id: o.unique_id,
    algorithm: cert ? { ...alg, name: `${cert.key} signed with ${cert.sig}` } : alg,
    purpose,
    verdict: r?.verdict ?? "no rule of the policy matches: check it by hand",
    deprecated_after: r?.deprecated ?? null,
    disallowed_after: r?.disallowed ?? null,
    status: st,
    successor: dated ? "(named by purpose)" : null,
    start_date: o.start_date,
    end_date: o.end_date,
    evidence: cert ? { seen: false, last_use: null, uses_30_days: 0, uses_90_days: 0, recent_artifacts: [] } : evidence,
  };
}

const URGENCY: Record<PqcStatus, number> = { unjudged: 0, "past-due": 1, deprecated: 2, "due-within-a-year": 3, ok: 4 };

export function counts(rows: Assessed[]): Counts {
  const c: Counts = {
    quantum_vulnerable: 0,
    post_quantum: 0,
    not_quantum_relevant: 0,
    unknown: 0,
    past_due: 0,
    deprecated: 0,
    due_within_a_year: 0,
  };
  for (const r of rows) {
    c[r.algorithm.class.replace(/-/g, "_") as "quantum_vulnerable"] += 1;
    if (r.status === "past-due") c.past_due += 1;
    if (r.status === "deprecated") c.deprecated += 1;
    if (r.status === "due-within-a-year") c.due_within_a_year += 1;
  }
  return c;
}

/// The readiness of the mock's one partition (none when logged out).
export function readiness(
  keys: ObjectSummary[],
  policy: string,
  partition: { id: string; label: string; serial: string } | null,
  evidenceOf: (o: ObjectSummary) => Evidence,
  certificateOf: (o: ObjectSummary) => { key: string; sig: string } | null,
  today: string,
): Readiness {
  const [name, source] = POLICY_NAMES[policy] ?? [policy, policy];
  const rows = partition
    ? keys
        .filter((o) => o.class !== "DATA")
        .map((o) => assessed(o, policy, today, evidenceOf(o), o.class === "CERTIFICATE" ? certificateOf(o) : null))
        .filter((a) => a.object_class !== "CERTIFICATE" || a.algorithm.name.includes(" signed with "))
    : [];
  rows.sort(
    (a, b) =>
      URGENCY[a.status] - URGENCY[b.status] ||
      b.evidence.uses_90_days - a.evidence.uses_90_days ||
      (b.evidence.last_use ?? "").localeCompare(a.evidence.last_use ?? "") ||
      a.label.localeCompare(b.label),
  );
  return {
    policy: name,
    source,
    date: today,
    partitions: partition
      ? [{ partition_id: partition.id, partition_label: partition.label, serial: partition.serial, counts: counts(rows), objects: rows }]
      : [],
    counts: counts(rows),
  };
}
