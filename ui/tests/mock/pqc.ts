// The mock's post-quantum readiness, as hsmc_pqc judges keys: the algorithms the mock's keys
// use (strengths from SP 800-57 Pt. 1 r5 table 2, categories from FIPS 203/204), the two
// built-in policies' rules (NIST IR 8547 tables 2 and 4; CNSA 2.0), the ranking and the
// counts. The UI tests check what the view shows against the standards, not against this.
import type {
  Algorithm,
  Assessed,
  Capacity,
  Ceiling,
  Counts,
  Evidence,
  Family,
  MlDsaSet,
  ObjectSummary,
  PqcStatus,
  Purpose,
  QuantumClass,
  Readiness,
  Successor,
  SuggestedProbe,
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

const CA_LABEL = /(^|[_\-. ])(root|ca|issuing)([_\-. ]|$)/i;
const SIGNING_FAMILIES: Family[] = ["ml-dsa", "slh-dsa", "hss-lms", "eddsa", "ecdsa"];

/// The successor by purpose (hsmc_pqc::assess): what the key may do decides, a key that says
/// nothing goes by its family.
function successorOf(o: ObjectSummary, a: Algorithm, purpose: Purpose | null, policy: string, cert: boolean): Successor {
  const cnsa = policy === "cnsa2";
  if (a.class === "not-quantum-relevant")
    return a.family === "aes" ? { preset: "aes-256", advice: "aes" } : { preset: "generic-secret", advice: "secret" };
  if (cert) return { preset: cnsa ? "ml-dsa-87" : "ml-dsa-65", advice: "certificate" };
  const signing = purpose ? purpose === "signing" : SIGNING_FAMILIES.includes(a.family);
  if (signing && CA_LABEL.test(o.label)) return { preset: "ml-dsa-87", advice: "ca" };
  if (signing) return cnsa ? { preset: "ml-dsa-87", advice: "signing_cnsa" } : { preset: "ml-dsa-65", advice: "signing" };
  return cnsa ? { preset: "ml-kem-1024", advice: "kem_cnsa" } : { preset: "ml-kem-768", advice: "kem" };
}

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
    successor: dated ? successorOf(o, alg, purpose, policy, cert !== null) : null,
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

/// The probe operation a key's signatures are costed at (hsmc_pqc::capacity::costed_as).
function costedAs(r: Assessed): string | null {
  const preset = r.successor?.preset ?? (["ml-dsa", "ml-kem"].includes(r.algorithm.family) ? r.algorithm.name.toLowerCase() : null);
  if (!preset) return null;
  if (preset.startsWith("ml-dsa-")) return `${preset}-sign`;
  if (preset.startsWith("ml-kem-")) return `${preset}-decaps`;
  return null;
}

/// The partition's capacity (hsmc_pqc::capacity), from each used private key's signatures in
/// the last 90 days, recorded at its last use; and the probes to run where none was.
function capacity(rows: Assessed[], ceilingOf: (op: string) => Ceiling | null): [Capacity, SuggestedProbe[]] {
  const used = rows.filter((r) => r.object_class === "PRIVATE_KEY" && r.evidence.uses_90_days > 0 && r.evidence.last_use);
  const minute = new Map<string, number>();
  const day = new Map<string, number>();
  const ops = new Map<string, { keys: number; minutes: Map<string, number> }>();
  for (const r of used) {
    const at = r.evidence.last_use!;
    const n = r.evidence.uses_90_days;
    minute.set(at.slice(0, 16), (minute.get(at.slice(0, 16)) ?? 0) + n);
    day.set(at.slice(0, 10), (day.get(at.slice(0, 10)) ?? 0) + n);
    const op = costedAs(r);
    if (op) {
      const o = ops.get(op) ?? { keys: 0, minutes: new Map<string, number>() };
      o.keys += 1;
      o.minutes.set(at.slice(0, 16), (o.minutes.get(at.slice(0, 16)) ?? 0) + n);
      ops.set(op, o);
    }
  }
  const peak = (m: Map<string, number>): [number, string | null] => {
    const [at, n] = [...m.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0] ?? [null, 0];
    return [n, at];
  };
  const [perMinute, atMinute] = peak(minute);
  const [perDay, atDay] = peak(day);
  const operations = [...ops.entries()]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([op, o]) => {
      const ceiling = ceilingOf(op);
      const [busiest] = peak(o.minutes);
      const needed = busiest / 60;
      return { op, keys: o.keys, peak_per_minute: busiest, needed_per_s: needed, ceiling, share: ceiling ? needed / ceiling.per_s : null };
    });
  const signatures = used.reduce((a, r) => a + r.evidence.uses_90_days, 0);
  const probed = operations.length > 0 && operations.every((o) => o.ceiling);
  const share = probed ? operations.reduce((a, o) => a + (o.share ?? 0), 0) : null;
  const c: Capacity = {
    window_days: 90,
    signatures,
    peak_per_minute: perMinute,
    peak_minute: atMinute,
    peak_per_day: perDay,
    peak_day: atDay,
    keys: used.map((r) => ({
      label: r.label,
      id_hex: r.id_hex,
      algorithm: r.algorithm.name,
      costed_as: costedAs(r),
      signatures: r.evidence.uses_90_days,
      peak_per_minute: r.evidence.uses_90_days,
      peak_per_day: r.evidence.uses_90_days,
    })),
    operations,
    uncosted_signatures: used.filter((r) => !costedAs(r)).reduce((a, r) => a + r.evidence.uses_90_days, 0),
    peak_share: share,
    headroom: share ? 0.8 / share : null,
    hsms: share === null ? null : Math.max(1, Math.ceil(share / 0.8)),
    verdict: signatures === 0 ? "no_use" : share === null ? "needs_probe" : share <= 0.8 ? "keeps_up" : "does_not_keep_up",
  };
  const probes: SuggestedProbe[] = operations
    .filter((o) => !o.ceiling)
    .map((o) => {
      const [, set] = /^ml-dsa-(\d+)-sign$/.exec(o.op) ?? [];
      return {
        op_name: o.op,
        request: {
          op: { op: "ml-dsa-sign", set: `ML-DSA-${set ?? "65"}` as MlDsaSet },
          mode: { mode: "duration", seconds: 3 },
          workers: 1,
          sweep: [1, 2, 4, 8, 16],
          warmup: 20,
          profile: "pool",
        },
      };
    });
  return [c, probes];
}

/// The readiness of the mock's one partition (none when logged out).
export function readiness(
  keys: ObjectSummary[],
  policy: string,
  partition: { id: string; label: string; serial: string } | null,
  evidenceOf: (o: ObjectSummary) => Evidence,
  certificateOf: (o: ObjectSummary) => { key: string; sig: string } | null,
  today: string,
  ceilingOf: (op: string) => Ceiling | null,
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
  const [cap, probes] = capacity(rows, ceilingOf);
  return {
    policy: name,
    source,
    date: today,
    partitions: partition
      ? [
          {
            partition_id: partition.id,
            partition_label: partition.label,
            serial: partition.serial,
            counts: counts(rows),
            objects: rows,
            capacity: cap,
            suggested_probes: probes,
          },
        ]
      : [],
    counts: counts(rows),
  };
}
