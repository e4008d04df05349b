// An in-memory stand-in for the Rust side, typed against the generated bindings, for UI
// tests in a plain browser. It answers the same commands with the same shapes (and the
// same ApiError codes) and records every call so tests can check what the UI sent.
import { emit } from "@tauri-apps/api/event";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import type { Channel } from "@tauri-apps/api/core";
import type { CommandName, Commands } from "../../src/commands";
import type {
  ApiError,
  AppStatus,
  AuditKeyView,
  AuditStatusView,
  ConnectionView,
  ConsoleEvent,
  GenerateRequest,
  GeneratedKey,
  JobEvent,
  KeyDetails,
  KeySpec,
  KeySpecInfo,
  MechanismView,
  ObjectSummary,
  PartitionView,
  Permission,
  Action,
  RecordView,
  Settings,
  TokenView,
  UserKind,
  Verdict,
  Finding,
  FileCheck,
  SignProgress,
  SignFormat,
  SignReport,
  SignRequest,
  ImportRequest,
  CertificateInfo,
  AttributeChanges,
  SigningKeyView,
  VerifyReport,
  HssKeyView,
  StatsSnapshot,
  ProbeChoice,
  ProbeProgress,
  ProbeReport,
  ProbeRequest,
  RunResult,
  DriftReport,
  HaGroupView,
  HaWarning,
  UsageKeyView,
  AttentionItem,
  Overview,
  PartitionCard,
  Text,
  DayCount,
  Evidence,
} from "../../src/bindings";
import { POLICY_NAMES, readiness } from "./pqc";

/// signing::input's reasons for refusing a path (the ones the mock makes).
const REASONS = {
  folder: "is a folder; drop the files inside it (or an archive of it)",
  empty: "is empty (0 bytes); an empty release artifact is almost certainly a mistake",
} as const;

export interface MockConfig {
  /** Extra objects on the partition (for the virtualized table). */
  objects?: number;
  /** The console could not start. */
  startupError?: ApiError;
  /** Wrong PINs left before the token reports final try. */
  pinTriesBeforeFinal?: number;
  /** Records in the trail (for verification progress). */
  records?: number;
  /** The verification finds this record damaged… */
  tamperedSeq?: number;
  /** …in this way (default "modified"). */
  tamperKind?:
    | "modified"
    | "missing"
    | "inserted"
    | "reordered"
    | "grafted"
    | "truncated_tail"
    | "rollback"
    | "checkpoint_signature_invalid"
    | "torn_last_write";
  /** An HSS key with this many signatures left (of 1024). */
  hssRemaining?: number;
  /** The token's counter and what the trail expects, when they disagree. */
  hssMismatch?: { now: number; expected: number };
  /** The signing keys' certificates expired (signing::objects::signing_warnings). */
  certificateExpired?: boolean;
  /** Certificates on the partition: label and days to expiry (negative: expired). */
  certificates?: { label: string; daysLeft: number }[];
  /** Failed operations in the trail (the overview's last 24 hours). */
  failedOps?: number;
  /** The user PIN's state flags as the token reports them. */
  pinLocked?: boolean;
  pinToBeChanged?: boolean;
  /** The trail's last verification found it broken at this record. */
  brokenAt?: number;
  /** No module at all (the overview's empty state). */
  noModules?: boolean;
  /** The HSM's busy share (per cent) once two samples were taken. */
  busyPercent?: number;
  /** An Ed25519 signing key pair (OpenPGP and minisign). */
  ed25519Key?: boolean;
  /** What the native folder dialog answers (default: cancelled). */
  pickedFolder?: string;
  /** What the native file dialog answers (default: cancelled). */
  pickedFiles?: string[];
  /** What the native save dialog answers for a CBOM (default: cancelled). */
  savedCbom?: string;
  /**
   * Keys for the post-quantum readiness: an RSA-2048 release key pair signing lately, a
   * test P-256 pair never used, an ML-DSA-65 pair, an AES-256 key, a legacy RSA-1024 key,
   * a P-384 key-agreement key and an X.509 certificate of a P-256 key.
   */
  pqc?: boolean;
  /** The day the readiness is judged on (`YYYY-MM-DD`; default today). */
  today?: string;
  /** The partition is an HA group's virtual slot (two members) in this state. */
  ha?: "in_sync" | "drift" | "member_down" | "member_unreadable";
  /** A key with this usage limit (CKA_USAGE_LIMIT), 2 uses made. */
  usageLimit?: number;
  /**
   * Key generation: `steps` events `stepMs` apart (3 × 60 ms), each with the module's
   * progress when `progress` is set (as lunasim reports HSS leaves); with `hold` it then
   * waits for `window.__mock.releaseKeygen()`; with `fail` it ends in an error.
   */
  keygen?: { steps?: number; stepMs?: number; progress?: boolean; hold?: boolean; fail?: boolean };
}

/** An answer for every command the Rust side has: a command the mock lacks does not compile. */
type MockHandlers = {
  [K in CommandName]: (args: Commands[K]["args"]) => Commands[K]["result"] | Promise<Commands[K]["result"]>;
};

interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

declare global {
  interface Window {
    __MOCK_CONFIG__?: MockConfig;
    __mock?: {
      calls: Call[];
      keys: ObjectSummary[];
      records: RecordView[];
      settings: Settings;
      event: (ev: ConsoleEvent) => Promise<void>;
      drop: (paths: string[]) => Promise<void>;
      releaseKeygen: () => void;
      reconnect: () => Promise<void>;
    };
  }
}

const PARTITION = "builtin:0f0aea212282d895";
const USER_PIN = "12345678";

function err(code: ApiError["code"], message: string, extra: Partial<ApiError> = {}): ApiError {
  return { code, message, details: null, suggestion: null, pkcs11: null, ...extra };
}

/// The console's role rules (hsm::roles::check), as far as the UI tests need them.
const ACTIONS: Action[] = [
  "use_keys",
  "generate_keys",
  "import_objects",
  "edit_attributes",
  "delete_objects",
  "wrap_keys",
  "unwrap_keys",
  "change_own_pin",
  "set_user_pin",
  "set_role_pin",
  "init_token",
  "trust_keys",
];
/// As console::role_texts: the refusal's sentence with the role, action and rule nested.
const ACTION_WORDS: Record<Action, string> = {
  use_keys: "use keys",
  generate_keys: "generate keys",
  import_objects: "import objects",
  edit_attributes: "change attributes",
  delete_objects: "delete objects",
  wrap_keys: "export keys wrapped",
  unwrap_keys: "import wrapped keys",
  change_own_pin: "change its PIN",
  set_user_pin: "set the user PIN",
  set_role_pin: "set other roles' PINs",
  init_token: "initialize the token",
  trust_keys: "mark wrapping keys trusted",
};
const RULE_WORDS = {
  so_manages_token: "the security officer manages the token and its PINs; keys are the user's (log in as the user or Crypto Officer).",
  only_so_sets_user_pin: "only the security officer sets or resets it (log in as the SO).",
  crypto_user_uses_only:
    "the Crypto User may use keys and read objects; creating, changing, exporting and deleting them is for the Crypto Officer.",
  limited_officer_limits:
    "the Limited Crypto Officer neither deletes nor exports keys nor sets other roles' PINs; that is for the Crypto Officer.",
  only_so_trusts: "only the security officer marks keys trusted; log in as the SO.",
} as const;
const ROLE_KEY: Record<UserKind, string> = {
  user: "roles.crypto_officer",
  so: "roles.partition_so",
  crypto_user: "roles.crypto_user",
  limited_crypto_officer: "roles.limited_crypto_officer",
};
function refusal(who: UserKind | null, action: Action, rule: keyof typeof RULE_WORDS | null): Text {
  const a = ACTION_WORDS[action];
  if (!who || !rule) {
    return { key: "roles.log_in_first_to", args: { action: a, "action.key": `roles.actions.${action}` }, text: `Log in first to ${a}.` };
  }
  const role = ROLE_NAME[who];
  const why = RULE_WORDS[rule];
  return {
    key: "roles.cannot",
    args: { role, "role.key": ROLE_KEY[who], action: a, "action.key": `roles.actions.${action}`, why, "why.key": `roles.rules.${rule}` },
    text: `The ${role} cannot ${a}: ${why}`,
  };
}

function permissions(who: UserKind | null): Permission[] {
  const rule = (a: Action): keyof typeof RULE_WORDS | "none" | null => {
    if (a === "init_token") return null;
    if (!who) return "none";
    if (a === "change_own_pin") return null;
    if (who === "so") return a === "set_user_pin" || a === "trust_keys" ? null : "so_manages_token";
    if (a === "set_user_pin") return "only_so_sets_user_pin";
    if (a === "trust_keys") return "only_so_trusts";
    if (who === "user") return null;
    if (who === "crypto_user") return a === "use_keys" ? null : "crypto_user_uses_only";
    return ["use_keys", "generate_keys", "import_objects", "edit_attributes", "unwrap_keys"].includes(a) ? null : "limited_officer_limits";
  };
  return ACTIONS.map((action) => {
    const r = rule(action);
    return { action, allowed: r === null, reason: r === null ? null : refusal(who, action, r === "none" ? null : r) };
  });
}

const ROLE_NAME: Record<UserKind, string> = {
  user: "Crypto Officer",
  so: "Partition Security Officer",
  crypto_user: "Crypto User",
  limited_crypto_officer: "Limited Crypto Officer",
};

function token(state: { userLow: boolean; userFinal: boolean; locked?: boolean; toBeChanged?: boolean; label?: string }): TokenView {
  return {
    label: state.label ?? "Built-in lunasim",
    manufacturer: "lunasim",
    model: "LunaSim K7",
    serial: "0f0aea212282d895",
    initialized: true,
    login_required: true,
    user_pin_initialized: true,
    write_protected: false,
    user_pin_count_low: state.userLow,
    user_pin_final_try: state.userFinal,
    user_pin_locked: state.locked ?? false,
    user_pin_to_be_changed: state.toBeChanged ?? false,
    so_pin_to_be_changed: false,
    so_pin_count_low: false,
    so_pin_final_try: false,
    so_pin_locked: false,
    session_count: 1,
    max_session_count: null,
    rw_session_count: 1,
    max_rw_session_count: null,
    free_public_memory: null,
    total_public_memory: null,
    free_private_memory: null,
    total_private_memory: null,
    min_pin_len: 4,
    max_pin_len: 64,
    hardware_version: "7.0",
    firmware_version: "7.9",
    utc_time: "",
    flags: 0,
  };
}

function summary(
  handle: number,
  label: string,
  cls: "PRIVATE_KEY" | "PUBLIC_KEY" | "SECRET_KEY" | "CERTIFICATE",
  algorithm: string,
  id: string,
): ObjectSummary {
  const priv = cls !== "PUBLIC_KEY" && cls !== "CERTIFICATE";
  return {
    handle,
    class: cls,
    key_type: algorithm.startsWith("ML-DSA") ? "ML_DSA" : algorithm.startsWith("AES") ? "AES" : "EC",
    label,
    id_hex: id,
    algorithm,
    parameter_set: algorithm.startsWith("ML-DSA") ? algorithm : null,
    token: true,
    private: priv,
    sensitive: priv ? true : null,
    extractable: priv ? false : null,
    local: true,
    unique_id: `${id}-${cls.toLowerCase()}`,
    capabilities: {
      sign: cls === "PRIVATE_KEY",
      verify: cls === "PUBLIC_KEY",
      encrypt: cls === "SECRET_KEY",
      decrypt: cls === "SECRET_KEY",
      wrap: false,
      unwrap: false,
      derive: false,
      encapsulate: false,
      decapsulate: false,
    },
    hss_keys_remaining: null,
    hss_capacity: null,
    duplicate_label: false,
    usage_limit: null,
    usage_count: null,
    trusted: cls === "PRIVATE_KEY" ? null : false,
    wrap_with_trusted: priv ? false : null,
    start_date: null,
    end_date: null,
  };
}

function hex(n: number): string {
  return n.toString(16).padStart(32, "0");
}

function certInfo(subject: string): CertificateInfo {
  return {
    subject,
    issuer: "CN=Example Intermediate CA",
    serial: "4D",
    not_before: "2026-11-01T00:00:00Z",
    not_after: "2027-11-01T00:00:00Z",
    expired: false,
    days_left: 335,
    is_ca: false,
    self_signed: false,
    key_usage: ["digitalSignature"],
    extended_key_usage: ["codeSigning"],
    sha256_fingerprint: "ab".repeat(32),
    public_key_fingerprint: null,
    public_key_algorithm: "ECDSA P-256",
    signature_algorithm: "ECDSA",
  };
}

export function install(cfg: MockConfig = {}) {
  const calls: Call[] = [];
  let handle = 100;
  let releaseKeygen: () => void = () => undefined;
  let loggedIn: UserKind | null = null;
  let pinTries = cfg.pinTriesBeforeFinal ?? 2;
  const pinState = {
    userLow: false,
    userFinal: false,
    locked: cfg.pinLocked ?? false,
    toBeChanged: cfg.pinToBeChanged ?? false,
    label: "Built-in lunasim",
  };
  let userPin = USER_PIN;
  let cryptoUserPin: string | null = null;
  let auditKey: AuditKeyView = { state: "no_key_yet" };
  const records: RecordView[] = [];
  const keys: ObjectSummary[] = [];
  for (let i = 0; i < (cfg.objects ?? 0); i++) {
    keys.push(
      summary(
        handle++,
        `bulk_key_${String(i).padStart(5, "0")}`,
        i % 3 === 0 ? "SECRET_KEY" : i % 3 === 1 ? "PRIVATE_KEY" : "PUBLIC_KEY",
        i % 3 === 0 ? "AES-256" : "ECDSA P-256",
        hex(i),
      ),
    );
  }
  if (cfg.hssRemaining !== undefined) {
    const hss = summary(handle++, "fw_hss_2026_11", "PRIVATE_KEY", "HSS", hex(9999));
    hss.hss_keys_remaining = cfg.hssRemaining;
    hss.hss_capacity = "1024";
    keys.push(hss);
  }
  if (cfg.ed25519Key) {
    const id = hex(8888);
    keys.push(summary(handle++, "release_ed25519", "PUBLIC_KEY", "Ed25519", id));
    keys.push(summary(handle++, "release_ed25519", "PRIVATE_KEY", "Ed25519", id));
  }
  // What the trail records of the readiness keys' use (as console::pqc reads it), by CKA_ID.
  const pqcEvidence = new Map<string, Evidence>();
  if (cfg.pqc) {
    const pair = (label: string, alg: string, id: string, keyType: string) => {
      for (const cls of ["PUBLIC_KEY", "PRIVATE_KEY"] as const) {
        const k = summary(handle++, label, cls, alg, id);
        k.key_type = keyType;
        keys.push(k);
      }
    };
    const days = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");
    // Both release keys signed last in the same minute (the capacity's busiest).
    const lately = days(2);
    pair("release_rsa_2048", "RSA-2048", hex(5001), "RSA");
    pqcEvidence.set(hex(5001), {
      seen: true,
      last_use: lately,
      uses_30_days: 12,
      uses_90_days: 40,
      recent_artifacts: ["app-2.4.1.tar.gz", "app-2.4.0.tar.gz", "app-2.3.9.tar.gz"],
    });
    pair("test_p256", "ECDSA P-256", hex(5002), "EC");
    pair("release_ml_dsa_65", "ML-DSA-65", hex(5003), "ML_DSA");
    pqcEvidence.set(hex(5003), { seen: true, last_use: lately, uses_30_days: 3, uses_90_days: 3, recent_artifacts: ["app-2.4.1.tar.gz"] });
    keys.push(summary(handle++, "backup_aes_256", "SECRET_KEY", "AES-256", hex(5004)));
    const legacy = summary(handle++, "legacy_rsa_1024", "PRIVATE_KEY", "RSA-1024", hex(5005));
    legacy.key_type = "RSA";
    keys.push(legacy);
    const kex = summary(handle++, "tls_kex_p384", "PRIVATE_KEY", "ECDSA P-384", hex(5006));
    kex.capabilities = { ...kex.capabilities, sign: false, derive: true };
    keys.push(kex);
    const cert = summary(handle++, "codesign_2026", "CERTIFICATE", "X.509", hex(5002));
    cert.key_type = null;
    keys.push(cert);
  }
  // OpenPGP creation times fixed per key ID (as the data object on the token).
  const openpgpCreated = new Map<string, string>();
  if (cfg.usageLimit !== undefined) {
    const limited = summary(handle++, "limited_ecdsa_2026_11", "PRIVATE_KEY", "ECDSA P-256", hex(7777));
    limited.usage_limit = cfg.usageLimit;
    limited.usage_count = 2;
    keys.push(limited);
  }
  let settings: Settings = {
    modules: [],
    builtin_enabled: true,
    audit: { location: null, checkpoint_every: 100, checkpoint_minutes: 10, auto_verify: "daily" },
    hss_warning_percent: 10,
    hss_critical_percent: 1,
    pool_size: 4,
    stats_poll_seconds: 5,
    theme: "system",
    language: null,
    last_output_dir: null,
    timestamp: { enabled: false, url: "", ca_file: null, timeout_seconds: 10, optional: false },
    pqc_policy: "nist",
  };
  let ipcReady = false;
  // Seeded records: one every 10 minutes from 2026-11-28 00:00 UTC, every third by another actor.
  for (let i = 0; i < (cfg.records ?? 0); i++)
    record("probe.run", "probe", `bulk-${i}`, "success", { n: i }, i % 3 === 0 ? "ops@ci" : "officer@mock");
  for (let i = 0; i < (cfg.failedOps ?? 0); i++) record(i % 2 ? "sign" : "login", "partition", PARTITION, "failure");

  function record(
    action: string,
    resourceType: string,
    resource: string | null,
    status: string,
    meta: Record<string, unknown> = {},
    actor = "officer@mock",
  ) {
    const seq = records.length + 1;
    records.push({
      seq,
      epoch: 0,
      timestamp: new Date(Date.UTC(2026, 10, 28) + seq * 600_000).toISOString(),
      session_id: "sess_mock",
      actor_id: actor,
      actor_ip: "127.0.0.1",
      action,
      resource_type: resourceType,
      resource_id: resource,
      algorithm: null,
      status,
      error_code: status === "failure" ? "PIN_INCORRECT" : null,
      metadata: JSON.stringify(meta),
      hmac_chain: hex(seq) + hex(seq),
    });
    // Seeded records are written before the IPC mock exists: nobody listens yet.
    if (ipcReady) void emit("console-event", { kind: "audit_changed" } satisfies ConsoleEvent);
  }

  // The module's generation: it moves when the HSM reconnects (window.__mock.reconnect).
  let moduleGeneration = 1;

  function partitionView(): PartitionView {
    return {
      id: PARTITION,
      module_id: "builtin",
      module_path: "/opt/hsm-console/liblunasim.so",
      slot_id: 1,
      builtin: true,
      token: token(pinState),
      logged_in: loggedIn,
      role_name: loggedIn ? ROLE_NAME[loggedIn] : null,
      roles: ["user", "crypto_user", "limited_crypto_officer", "so"],
      permissions: permissions(loggedIn),
      pool: {
        slot: 1,
        size: 4,
        open: 1,
        idle: 1,
        in_use: 0,
        waiting: 0,
        breaker: "closed",
        breaker_opened: 0,
        logged_in: loggedIn !== null,
        module_generation: moduleGeneration,
      },
      luna: {
        firmware: "7.9.1",
        hsm_storage: { total: 16777216, used: 1048576, free: 15728640, object_count: null },
        token_storage: { total: 4194304, used: 65536, free: 4128768, object_count: keys.length },
        partition_policies: [{ id: 0, value: 1, name: "Allow private key cloning", destructive: true }],
        hsm_capabilities: [{ id: 12, value: 1, name: "Enable PQC", destructive: false }],
        token_status_flags: 0,
      },
      vendor_functions: ["CA_GetFirmwareVersion", "CA_GetHSMStats"],
      holds_audit_key: auditKey.state === "unlocked",
      mechanism_count: 3,
    };
  }

  const removedModules = new Set<string>();

  function connections(): ConnectionView[] {
    return [
      {
        module: {
          id: "builtin",
          path: "/opt/hsm-console/liblunasim.so",
          builtin: true,
          manufacturer: "lunasim (Luna emulation)",
          library_description: "lunasim Luna-compatible module",
          library_version: "10.9",
          cryptoki_version: "3.2",
          interface: "C_GetInterface 3.2",
          family: "luna",
          vendor_functions: ["CA_GetFirmwareVersion", "CA_GetHSMStats"],
        },
        slots: [
          {
            slot_id: 1,
            description: "LunaSim slot",
            manufacturer: "lunasim",
            token_present: true,
            hardware: true,
            removable: false,
            token: token(pinState),
            partition_id: PARTITION,
          },
        ],
        error: null,
      },
    ];
  }

  const mechanisms: MechanismView[] = [
    {
      code: 0x1c,
      hex: "0x0000001C",
      name: "CKM_ML_DSA_KEY_PAIR_GEN",
      min_key_size: 0,
      max_key_size: 0,
      flags: ["HW", "GENERATE_KEY_PAIR"],
      info_error: null,
    },
    {
      code: 0x1d,
      hex: "0x0000001D",
      name: "CKM_ML_DSA",
      min_key_size: 0,
      max_key_size: 0,
      flags: ["HW", "SIGN", "VERIFY"],
      info_error: null,
    },
    { code: 0x80000a02, hex: "0x80000A02", name: null, min_key_size: 0, max_key_size: 0, flags: ["HW"], info_error: null },
  ];

  function describe(spec: KeySpec, purpose: string): KeySpecInfo {
    const tag =
      spec.kind === "ml-dsa" ? spec.set.toLowerCase().replace(/-/g, "_") : spec.kind === "hss" ? "hss_lms" : spec.kind.replace(/-/g, "_");
    const p =
      purpose
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9]/g, "_") || "key";
    let capacity: string | null = null;
    let warning: Text | null = null;
    if (spec.kind === "hss") {
      const h = spec.params.levels.reduce((a, [l]) => a + Number(l.split("_H")[1]), 0);
      capacity = (2n ** BigInt(h)).toString();
      // As hsm::algo::HssParams::keygen_warning_text (the Luna part).
      const tallest = Math.max(...spec.params.levels.map(([l]) => Number(l.split("_H")[1])));
      if (tallest > 15)
        warning = text(
          "hsm.keygen.luna_h20",
          "Key generation of an H20 or taller tree can take hours on a Luna HSM and blocks the partition meanwhile; choose the smallest tree that covers the signatures you need.",
        );
      else if (tallest > 10)
        warning = text(
          "hsm.keygen.luna_h15",
          "Key generation of an H15 tree takes about 90 seconds on a Luna HSM and blocks the partition meanwhile.",
        );
    }
    return {
      display: spec.kind === "ml-dsa" ? spec.set : spec.kind,
      suggested_label: `${p}_${tag}_2026_11`,
      signature_capacity: capacity,
      signature_len: spec.kind === "ml-dsa" ? 3309 : null,
      // HSS: u32 L, the top level's LMS types and I, and its root (24 bytes for SHA-256/192).
      public_key_len:
        spec.kind === "ml-dsa" ? 1952 : spec.kind === "hss" ? 28 + (spec.params.levels[0]?.[0].includes("_M24_") ? 24 : 32) : null,
      keygen_warning: warning?.text ?? null,
      keygen_warning_text: warning,
      mechanism: spec.kind === "ml-dsa" ? "CKM_ML_DSA_KEY_PAIR_GEN" : "CKM_HSS_KEY_PAIR_GEN",
    };
  }

  function requireAudit() {
    if (auditKey.state !== "unlocked")
      throw err("AUDIT_UNAVAILABLE", "The audit trail cannot record this.", {
        suggestion: "Log in to the partition that holds the audit key.",
      });
  }

  function find(h: number): ObjectSummary {
    const k = keys.find((x) => x.handle === h);
    if (!k) throw err("KEY_NOT_FOUND", "The key or object no longer exists on the token.", { suggestion: "Refresh the key list." });
    return k;
  }

  function svg(title: string): string {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="720" height="300"><text x="10" y="20">${title}</text></svg>`;
  }

  function text(key: string, english: string, args: Record<string, string | number> = {}): Text {
    const a = Object.fromEntries(Object.entries(args).map(([k, v]) => [k, String(v)]));
    return { key, args: a, text: english.replace(/\{\{(\w+)\}\}/g, (_, n: string) => a[n] ?? "") };
  }

  /// As hsm::drift::describe: an object, its class nested.
  function driftObject(class_: string, classWords: string, label: string, id: string): Text {
    const t = text("hsm.drift.object", "{{class}} '{{label}}' (id {{id}})", { class: classWords, label, id });
    return { ...t, args: { ...t.args, "class.key": `hsm.drift.class.${class_}` } };
  }

  /// As signing::objects::signing_warnings_text: the certificate expired (cfg.certificateExpired).
  function certWarnings(subject: string): Text[] {
    if (!cfg.certificateExpired) return [];
    return [
      text("signing.certificate_warnings.expired", "the signing certificate ({{subject}}) expired on {{date}}", {
        subject,
        date: "2026-11-01T00:00:00Z",
      }),
    ];
  }

  /// As console::health: the mismatch in English and as a catalog text.
  function hssMismatch(m: { now: number; expected: number } | undefined): { mismatch: string | null; mismatch_text: Text | null } {
    if (!m) return { mismatch: null, mismatch_text: null };
    const t =
      m.now < m.expected
        ? text(
            "hss.mismatch_outside",
            "The token has {{now}} signatures left but the audit trail accounts for {{expected}}: {{outside}} were made outside this console (another tool or another trail).",
            { ...m, outside: m.expected - m.now },
          )
        : text(
            "hss.mismatch_backwards",
            "The token reports {{now}} signatures left, more than the {{expected}} the audit trail allows: the counter went backwards (a restored or cloned key?). Signing again may reuse one-time keys.",
            m,
          );
    return { mismatch: t.text, mismatch_text: t };
  }

  /// As console::findings + Text::nest: a finding's key and fields as `name.key`, `name.FIELD`.
  function nest(t: Text, name: string, finding: Finding | null | undefined): Text {
    if (!finding) return t;
    const { kind, ...fields } = finding;
    const args: Record<string, string> = { ...t.args, [`${name}.key`]: `audit.findings.${kind}` };
    for (const [k, v] of Object.entries(fields)) args[`${name}.${k}`] = String(v);
    return { ...t, args };
  }

  function item(
    kind: AttentionItem["kind"],
    severity: AttentionItem["severity"],
    message: Text,
    view: AttentionItem["link"]["view"],
    extra: Partial<AttentionItem> = {},
  ): AttentionItem {
    return {
      kind,
      severity,
      partition_id: PARTITION,
      partition_label: "Built-in lunasim",
      subject: null,
      days_left: null,
      remaining: null,
      total: null,
      at: null,
      message,
      link: { view, partition_id: PARTITION, search: null, day: null, seq: null },
      ...extra,
    };
  }

  /// The partition's HA group on its card (cfg.ha), and its items, as console::overview::ha.
  function haCards(items: AttentionItem[]): PartitionCard["ha"] {
    if (!cfg.ha) return [];
    const down = cfg.ha === "member_down";
    const drift = cfg.ha === "drift";
    const checkedAt = "2026-11-30T06:00:00.000Z";
    const link = { view: "partition" as const, partition_id: PARTITION, search: null, day: null, seq: null };
    if (down)
      items.push(
        item(
          "ha",
          "warning",
          text(
            "overview.items.ha_member_down",
            "HA group {{group}}: {{down}} of {{total}} members down ({{members}}); the group runs without redundancy.",
            { group: "prod-ha", down: 1, total: 2, members: "2 (1280000102, CKR_UNABLE_TO_CONNECT)" },
          ),
          "partition",
          { subject: "prod-ha", remaining: 1, total: "2", link },
        ),
      );
    if (drift) {
      const summary = haSummary();
      const t = text(
        "overview.items.ha_drift",
        "HA group {{group}}: the members differ ({{summary}}) at the check of {{at}}; compare and synchronize them in the group's Partition view.",
        { group: "prod-ha", summary: summary.text, at: checkedAt },
      );
      items.push(
        item("ha", "warning", { ...t, args: { ...t.args, "summary.key": summary.key, "summary.member": "2" } }, "partition", {
          subject: "prod-ha",
          at: checkedAt,
          link,
        }),
      );
    }
    return [
      {
        partition_id: PARTITION,
        group: "prod-ha",
        serial: "1280000100",
        role: "group",
        position: null,
        members_online: down ? 1 : 2,
        members_total: 2,
        down_members: down ? [2] : [],
        drift: drift ? "drift" : down ? "member_down" : "in_sync",
        drift_summary: haSummary(),
        drift_checked_at: checkedAt,
        healthy: !down && !drift,
      },
    ];
  }

  /// The readiness under `policy` (console::pqc): the partition's keys once logged in.
  function pqcReadiness(policy: string) {
    if (!POLICY_NAMES[policy])
      throw err(
        "INVALID_INPUT",
        `There is no policy '${policy}': it is neither nist nor cnsa2, nor a file that can be read (No such file or directory).`,
      );
    const part = loggedIn ? { id: PARTITION, label: pinState.label, serial: "0f0aea212282d895" } : null;
    const none: Evidence = { seen: false, last_use: null, uses_30_days: 0, uses_90_days: 0, recent_artifacts: [] };
    return readiness(
      keys.filter((k) => loggedIn === "user" || !k.private),
      policy,
      part,
      (o) => pqcEvidence.get(o.id_hex) ?? none,
      (o) => (o.label === "codesign_2026" ? { key: "ECDSA P-256", sig: "ecdsa-with-SHA256" } : null),
      cfg.today ?? new Date().toISOString().slice(0, 10),
      (op) => {
        const r = [...probes].reverse().find((p) => p.op_name === op && p.partition_id === PARTITION && !p.cancelled);
        if (!r) return null;
        const best = Math.max(...r.runs.map((x) => x.throughput_per_s));
        return { op, per_s: best, probe_id: r.id, measured_at: r.created_at, client_bound: false };
      },
    );
  }

  /// The post-quantum items of the partition's card (console::overview::keys::post_quantum).
  function pqcItems(): AttentionItem[] {
    if (!loggedIn || !cfg.pqc) return [];
    const r = pqcReadiness(settings.pqc_policy);
    const objects = r.partitions[0]?.objects ?? [];
    const named = (want: string[]) =>
      objects.filter((o) => want.includes(o.status)).map((o) => `${o.label} (${o.algorithm.name}; ${o.evidence.uses_90_days})`);
    const past = named(["past-due"]);
    const soon = named(["deprecated", "due-within-a-year"]);
    const out: AttentionItem[] = [];
    const args = (keys: string[]) => ({ n: keys.length, policy: r.policy, keys: keys.join(", ") });
    if (past.length)
      out.push(
        item(
          "pqc",
          "critical",
          text(
            "overview.pqc_past_due",
            "{{n}} key(s) disallowed under {{policy}} (each with its signatures over the last 90 days): {{keys}}. Replace them (the PQC readiness view and hsmc pqc name a successor).",
            args(past),
          ),
          "pqc",
        ),
      );
    if (soon.length)
      out.push(
        item(
          "pqc",
          "warning",
          text(
            "overview.pqc_due_soon",
            "{{n}} key(s) deprecated, or disallowed within a year, under {{policy}} (each with its signatures over the last 90 days): {{keys}}.",
            args(soon),
          ),
          "pqc",
        ),
      );
    return out;
  }

  /// The overview from the mock's state, as the Rust side composes it (console/src/overview).
  async function overview(): Promise<Overview> {
    const rank = { info: 0, warning: 1, critical: 2 } as const;
    const sort = (xs: AttentionItem[]) =>
      xs.sort((a, b) => rank[b.severity] - rank[a.severity] || (a.days_left ?? Infinity) - (b.days_left ?? Infinity));
    const stats = await handlers.stats({ partitionId: PARTITION });
    const cards: PartitionCard[] = [];
    if (!cfg.noModules) {
      const items: AttentionItem[] = [];
      const t = stats.token;
      if (t.user_pin_locked)
        items.push(
          item(
            "user_pin",
            "critical",
            text("overview.items.user_pin_locked", "The user PIN is locked: the security officer must unlock or reset it."),
            "connections",
          ),
        );
      else if (t.user_pin_final_try)
        items.push(
          item("user_pin", "critical", text("overview.items.user_pin_final_try", "One more wrong user PIN locks it."), "connections"),
        );
      else if (t.user_pin_count_low)
        items.push(
          item(
            "user_pin",
            "warning",
            text("overview.items.user_pin_count_low", "A wrong user PIN was entered since the last successful login."),
            "connections",
          ),
        );
      if (t.user_pin_to_be_changed)
        items.push(
          item(
            "user_pin",
            "warning",
            text("overview.items.user_pin_to_be_changed", "The user PIN must be changed before it can be used."),
            "connections",
          ),
        );
      const busy = stats.luna?.busy_percent ?? null;
      if (busy !== null && busy >= 90)
        items.push(
          item(
            "load",
            "warning",
            text("overview.items.hsm_busy", "The HSM is {{percent}} % busy: near its ceiling.", { percent: busy.toFixed(0) }),
            "stats",
          ),
        );
      if (!loggedIn)
        items.push(
          item(
            "login",
            "info",
            text("overview.items.not_logged_in", "Not logged in: log in to see its keys and certificates."),
            "connections",
          ),
        );
      items.push(...pqcItems());
      cards.push({
        partition_id: PARTITION,
        module_id: "builtin",
        module_path: "/opt/hsm-console/liblunasim.so",
        builtin: true,
        family: "luna",
        slot_id: 1,
        label: "Built-in lunasim",
        serial: "0f0aea212282d895",
        model: "LunaSim K7",
        login: loggedIn,
        user_pin: {
          count_low: t.user_pin_count_low,
          final_try: t.user_pin_final_try,
          locked: t.user_pin_locked,
          to_be_changed: t.user_pin_to_be_changed,
        },
        so_pin: { count_low: false, final_try: false, locked: false, to_be_changed: false },
        pool: stats.pool,
        load: { busy_percent: busy, commands_per_second: stats.luna?.commands_per_second ?? null, firmware: "7.9.1" },
        ha: haCards(items),
        holds_audit_key: auditKey.state === "unlocked",
        items: sort(items),
      });
    }
    const notChecked = loggedIn || cfg.noModules ? [] : ["Built-in lunasim"];
    const keyItems: AttentionItem[] = [];
    const hss = loggedIn ? await handlers.hss_keys({}) : [];
    for (const k of hss) {
      const days = (k.remaining ?? 0) / k.per_day_30;
      const severity =
        k.status === "critical" || k.status === "exhausted" || days <= 7
          ? "critical"
          : k.status === "warning" || days <= 30
            ? "warning"
            : null;
      if (severity)
        keyItems.push(
          item(
            "hss_key",
            severity,
            text("overview.items.hss_days_left", "{{label}}: {{remaining}} signatures left, about {{days}} days at the current rate.", {
              label: k.label,
              remaining: k.remaining ?? 0,
              days: days.toFixed(0),
            }),
            "hss",
            {
              subject: k.label,
              days_left: days,
              remaining: k.remaining,
              total: k.capacity,
              at: k.projected_exhaustion,
              link: { view: "hss", partition_id: PARTITION, search: k.id_hex, day: null, seq: null },
            },
          ),
        );
    }
    // Usage-limited keys (Luna), as console::overview::keys: by the HSS thresholds and days left.
    const limited = await handlers.usage_keys({});
    for (const k of limited) {
      const days = k.left / k.per_day_30;
      const severity =
        k.status === "critical" || k.status === "exhausted" || days <= 7
          ? "critical"
          : k.status === "warning" || days <= 30
            ? "warning"
            : null;
      if (!severity) continue;
      const message =
        k.status === "exhausted"
          ? text("overview.items.usage_exhausted", "{{label}} has used all {{limit}} uses its limit allows.", {
              label: k.label,
              limit: k.limit,
            })
          : text(
              "overview.items.usage_days_left",
              "{{label}}: {{remaining}} of {{total}} uses left, about {{days}} days at the current rate.",
              {
                label: k.label,
                remaining: k.left,
                total: k.limit,
                days: days.toFixed(0),
              },
            );
      keyItems.push(
        item("usage_limit", severity, message, "keys", {
          subject: k.label,
          days_left: days,
          remaining: k.left,
          total: String(k.limit),
          at: k.projected_exhaustion,
          link: { view: "keys", partition_id: PARTITION, search: k.id_hex, day: null, seq: null },
        }),
      );
    }
    const certItems: AttentionItem[] = [];
    for (const c of loggedIn ? (cfg.certificates ?? []) : []) {
      if (c.daysLeft > 30) continue;
      const date = new Date(Date.now() + c.daysLeft * 86_400_000).toISOString().slice(0, 10);
      certItems.push(
        item(
          "certificate",
          c.daysLeft <= 7 ? "critical" : "warning",
          c.daysLeft < 0
            ? text("overview.items.certificate_expired", "The certificate {{name}} expired on {{date}}.", { name: c.label, date })
            : text("overview.items.certificate_expires", "The certificate {{name}} expires on {{date}}, in {{days}} days.", {
                name: c.label,
                date,
                days: Math.floor(c.daysLeft),
              }),
          "keys",
          {
            subject: c.label,
            days_left: c.daysLeft,
            at: date,
            link: { view: "keys", partition_id: PARTITION, search: c.label, day: null, seq: null },
          },
        ),
      );
    }
    const auditItems: AttentionItem[] = [];
    const last = cfg.brokenAt
      ? {
          at: "2026-11-30T06:00:00.000Z",
          intact: false,
          records: cfg.brokenAt - 1,
          first_bad_seq: cfg.brokenAt,
          explanation: `Record ${cfg.brokenAt} was changed after it was written: its content no longer matches its seal.`,
          finding: { kind: "modified" as const, seq: cfg.brokenAt },
          trigger: "scheduled" as const,
        }
      : lastVerification;
    if (last && !last.intact)
      auditItems.push(
        item(
          "audit",
          "critical",
          nest(
            text("overview.items.audit_broken", "The audit trail is broken at record {{seq}}: {{explanation}}", {
              seq: last.first_bad_seq ?? 0,
              explanation: last.explanation ?? "",
            }),
            "explanation",
            last.finding,
          ),
          "audit",
          {
            partition_id: null,
            partition_label: null,
            link: { view: "audit", partition_id: null, search: null, day: null, seq: last.first_bad_seq },
          },
        ),
      );
    else if (!last && records.length > 0)
      auditItems.push(
        item(
          "audit",
          "warning",
          text("overview.items.audit_never_verified", "The audit trail has never been verified. Verify it in the Audit trail view."),
          "audit",
          { partition_id: null, partition_label: null },
        ),
      );
    if (auditKey.state === "no_key_yet")
      auditItems.push(
        item(
          "audit",
          "info",
          text("overview.items.audit_no_key", "The trail has no key yet: the first user login creates it on that partition."),
          "connections",
          { partition_id: null, partition_label: null },
        ),
      );
    const failed = records.filter((r) => r.status === "failure").reverse();
    const failureItems = failed.slice(0, 20).map((r) =>
      item(
        "failure",
        "warning",
        text("overview.items.failed_operation", "{{action}} failed ({{error}}).", { action: r.action, error: r.error_code ?? "" }),
        "audit",
        {
          partition_id: null,
          partition_label: null,
          subject: r.action,
          at: r.timestamp,
          link: { view: "audit", partition_id: null, search: null, day: r.timestamp.slice(0, 10), seq: r.seq },
        },
      ),
    );
    const o: Overview = {
      generated_at: new Date().toISOString(),
      modules: cfg.noModules ? 0 : 1,
      partitions: cards,
      module_items: cfg.noModules
        ? [
            item(
              "module",
              "info",
              text("overview.items.no_module", "No PKCS#11 module is connected. Add one in Connections."),
              "connections",
              { partition_id: null, partition_label: null },
            ),
          ]
        : [],
      keys: { items: sort(keyItems), checked: hss.length + limited.length, not_checked: notChecked },
      certificates: { items: sort(certItems), checked: loggedIn ? (cfg.certificates?.length ?? 0) : 0, not_checked: notChecked },
      audit: {
        key: auditKey,
        records: records.length,
        pending: 0,
        last_verification: last,
        auto_verify: settings.audit.auto_verify,
        items: sort(auditItems),
      },
      failures: { items: failureItems, checked: failed.length, not_checked: [] },
      attention: 0,
      worst: null,
    };
    const all = [
      ...o.module_items,
      ...cards.flatMap((c) => c.items),
      ...o.keys.items,
      ...o.certificates.items,
      ...o.audit.items,
      ...o.failures.items,
    ];
    o.attention = all.filter((i) => i.severity !== "info").length;
    o.worst = all.reduce<AttentionItem["severity"] | null>((w, i) => (w === null || rank[i.severity] > rank[w] ? i.severity : w), null);
    return o;
  }

  function phrase(hs: number[]): string {
    const labels = Array.from(new Set(hs.map((h) => find(h).label)));
    return labels.length === 1 && labels[0] ? labels[0] : `delete ${hs.length} objects`;
  }

  // An HA group behind the partition (cfg.ha): member 2 differs or is down.
  let haRecorded = false;
  function haGroup(stats: boolean): HaGroupView {
    const down = cfg.ha === "member_down";
    return {
      partition_id: PARTITION,
      module_id: "builtin",
      slot_id: 100,
      label: "prod-ha",
      serial: "1280000100",
      layout: "current",
      members: [1, 2].map((n) => ({
        position: n,
        serial: `12800001${String(n).padStart(2, "0")}`,
        alive: !(down && n === 2),
        status: down && n === 2 ? "CKR_UNABLE_TO_CONNECT" : "CKR_OK",
        partition_id: `builtin:12800001${String(n).padStart(2, "0")}`,
        slot_id: n,
        logged_in: loggedIn,
        needs_sync: cfg.ha === "drift" ? n === 2 : down && n === 2 ? null : false,
        busy_percent: stats ? 20 + n : null,
        commands: stats ? 100 * n : null,
        commands_per_second: stats ? 10 : null,
        served_share_percent: stats ? 50 : null,
        last_served: stats ? new Date().toISOString() : null,
      })),
      members_visible: true,
      drift: null,
      warning: cfg.ha === "drift" ? "drift on member 2" : down ? "member 2 down; member 1 in sync" : null,
      warning_text: cfg.ha === "drift" || down ? haSummary() : null,
    };
  }
  /// As console::ha::drift::summary: the verdict in words, its parts nested.
  function haSummary(): Text {
    if (cfg.ha === "drift") return text("ha.summary.drift_on_member", "drift on member {{member}}", { member: 2 });
    if (cfg.ha === "member_down") {
      const d = text("ha.summary.member_down", "member {{member}} down", { member: 2 });
      const r = text("ha.summary.member_in_sync", "member {{member}} in sync", { member: 1 });
      const t = text("ha.summary.down_rest_in_sync", "{{down}}; {{in_sync}}", { down: d.text, in_sync: r.text });
      return {
        ...t,
        args: { ...t.args, "down.key": d.key, "down.member": "2", "in_sync.key": r.key, "in_sync.member": "1" },
      };
    }
    if (cfg.ha === "member_unreadable") {
      return text("ha.summary.not_comparable", "not comparable: fewer than two members' own slots are visible");
    }
    return text("ha.summary.in_sync", "in sync");
  }
  /// As console's ApiError from a PKCS#11 error it has no own words for (errors.hsm_refused).
  function memberReadError(): ApiError {
    const args = { name: "CKR_FUNCTION_FAILED", function: "C_FindObjectsInit" };
    return err("HSM_ERROR", "The HSM refused the operation: CKR_FUNCTION_FAILED in C_FindObjectsInit.", {
      i18n: { message: "errors.hsm_refused", suggestion: null, args },
    });
  }
  function driftReport(): DriftReport {
    const drift = cfg.ha === "drift";
    const down = cfg.ha === "member_down";
    const unreadable = cfg.ha === "member_unreadable";
    if (!haRecorded && (drift || down)) {
      haRecorded = true;
      record("ha.state", "ha_group", "1280000100", "success", { verdict: drift ? "drift" : "member_down" });
    }
    return {
      partition_id: PARTITION,
      group_label: "prod-ha",
      group_serial: "1280000100",
      checked_at: new Date().toISOString(),
      verdict: drift ? "drift" : down ? "member_down" : unreadable ? "not_comparable" : "in_sync",
      summary: haSummary().text,
      summary_text: haSummary(),
      members: [1, 2].map((n) => ({
        position: n,
        serial: `12800001${String(n).padStart(2, "0")}`,
        partition_id: `builtin:12800001${String(n).padStart(2, "0")}`,
        check: down && n === 2 ? "down" : unreadable && n === 2 ? "failed" : "compared",
        logged_in: true,
        objects: (down || unreadable) && n === 2 ? null : drift && n === 2 ? 3 : 4,
        error: unreadable && n === 2 ? memberReadError() : null,
      })),
      differences: drift
        ? [
            {
              object: "private key 'fw_sign_2026_11' (id 0a0b)",
              object_text: driftObject("private_key", "private key", "fw_sign_2026_11", "0a0b"),
              kind: "missing",
              field: null,
              field_text: null,
              values: [
                { member: 1, value: "present" },
                { member: 2, value: null },
              ],
              members: [2],
            },
            {
              object: "secret key 'wrap' (id 07)",
              object_text: driftObject("secret_key", "secret key", "wrap", "07"),
              kind: "different",
              field: "label",
              field_text: text("hsm.drift.field.label", "label"),
              values: [
                { member: 1, value: "wrap" },
                { member: 2, value: "wrap-old" },
              ],
              members: [2],
            },
          ]
        : [],
      policy_differences: [],
      drifting_members: drift ? [2] : [],
      down_members: down ? [2] : [],
      kcv_method: "KCV = the first 3 bytes of the AES-ECB encryption of a zero block (DES3-ECB for triple-DES keys)",
      kcv_method_text: text(
        "ha.kcv_method",
        "KCV = the first 3 bytes of the AES-ECB encryption of a zero block (DES3-ECB for triple-DES keys)",
      ),
      notes: [],
      notes_text: [],
    };
  }

  const handlers: MockHandlers = {
    ha_groups: async () => (cfg.ha ? [haGroup(false)] : []),
    ha_group: async ({ partitionId }) => (cfg.ha && partitionId === PARTITION ? haGroup(true) : null),
    ha_drift: async () => {
      if (!cfg.ha) throw err("INVALID_INPUT", "Built-in lunasim is not an HA group's virtual slot.");
      return driftReport();
    },
    ha_warnings: async (): Promise<HaWarning[]> => {
      if (!cfg.ha || cfg.ha === "in_sync") return [];
      const r = driftReport();
      return [
        { partition_id: PARTITION, label: "prod-ha", serial: "1280000100", verdict: r.verdict, text: r.summary, message: r.summary_text },
      ];
    },
    usage_keys: async () => {
      if (loggedIn === null) return [];
      return keys
        .filter((k) => k.usage_limit !== null)
        .map((k): UsageKeyView => {
          const limit = k.usage_limit ?? 0;
          const used = k.usage_count ?? 0;
          return {
            partition_id: PARTITION,
            partition_label: "Built-in lunasim",
            handle: k.handle,
            class: k.class,
            label: k.label,
            id_hex: k.id_hex,
            algorithm: k.algorithm,
            limit,
            used,
            left: Math.max(0, limit - used),
            used_percent: limit ? (100 * used) / limit : 100,
            status: limit - used <= 0 ? "exhausted" : "ok",
            per_day_7: 0.3,
            per_day_30: 0.1,
            per_day_90: 0.05,
            projected_exhaustion: "2027-01-15",
            history: [
              { at: new Date(Date.now() - 10 * 86_400_000).toISOString(), remaining: limit },
              { at: new Date(Date.now() - 86_400_000).toISOString(), remaining: Math.max(0, limit - used) },
              { at: new Date().toISOString(), remaining: Math.max(0, limit - used) },
            ],
          };
        });
    },
    set_usage_limit: async ({ handle, limit }) => {
      const k = keys.find((x) => x.handle === handle);
      if (!k) throw err("KEY_NOT_FOUND", "No object is at that handle any more.");
      if (limit < 1 || limit > 0xffffffff) throw err("INVALID_INPUT", "A usage limit is 1 to 4294967295 uses (Luna's range).");
      if (limit < (k.usage_count ?? 0)) throw err("INVALID_INPUT", `The key has already been used ${k.usage_count} times.`);
      k.usage_limit = limit;
      k.usage_count = k.usage_count ?? 0;
      record("key.usage_limit", "key", k.label, "success", { to: limit });
      return k;
    },
    app_info: async () => {
      return cfg.startupError
        ? ({ info: null, startup_error: cfg.startupError } satisfies AppStatus)
        : ({
            info: {
              version: "0.1.0",
              data_dir: "/home/officer/.local/share/hsm-console",
              audit_location: "audit.db",
              audit_store: "sqlite",
              builtin_available: true,
              builtin_note: null,
              startup_warnings: [],
            },
            startup_error: null,
          } satisfies AppStatus);
    },
    get_settings: async () => {
      return settings;
    },
    update_settings: async (args) => {
      const s = args.settings as Settings;
      if (s.hss_critical_percent > s.hss_warning_percent)
        throw err("INVALID_INPUT", "the critical HSS threshold must not exceed the warning threshold");
      if (s.timestamp.enabled && !/^https?:\/\/[^/]+/i.test(s.timestamp.url))
        throw err("INVALID_INPUT", `The time-stamp authority URL '${s.timestamp.url}' is not an http:// or https:// URL.`);
      settings = s;
      record("settings.update", "settings", null, "success");
      return settings;
    },
    connections: async () => {
      if (cfg.noModules) return [];
      return connections().filter((c) => !removedModules.has(c.module.id));
    },
    add_module: async (args) => {
      const path = String(args.path);
      record("module.add", "module", path, "failure");
      throw err("NOT_PKCS11", `${path} is not a PKCS#11 module.`, {
        details: "It exports neither C_GetInterface nor C_GetFunctionList.",
        suggestion: "Choose the vendor's PKCS#11 library rather than another shared library.",
      });
    },
    remove_module: async (args) => {
      if (!connections().some((c) => c.module.id === args.moduleId)) throw err("INVALID_INPUT", `No module ${args.moduleId} is loaded.`);
      record("module.remove", "module", args.moduleId, "success");
      removedModules.add(args.moduleId);
      if (args.moduleId === "builtin") loggedIn = null;
      return null;
    },
    pick_module_file: async () => {
      return null;
    },
    partition: async () => {
      return partitionView();
    },
    mechanisms: async () => {
      return mechanisms;
    },
    login: async (args) => {
      const expected = args.user === "crypto_user" ? cryptoUserPin : args.user === "so" ? "87654321" : userPin;
      if (args.pin !== expected) {
        pinTries -= 1;
        pinState.userLow = true;
        pinState.userFinal = pinTries <= 0;
        record("login", "partition", PARTITION, "failure");
        throw err("PIN_INCORRECT", "The PIN is incorrect.", {
          details: pinState.userFinal
            ? "The token says one attempt is left before the PIN locks."
            : "The token says wrong PINs were entered; fewer attempts remain.",
          suggestion: "Check the PIN and try again. The console never retries a PIN by itself.",
          pkcs11: { function: "C_Login", code: 0xa0, name: "CKR_PIN_INCORRECT", class: "Pin" },
          i18n: { message: "errors.pin_incorrect", suggestion: "errors.pin_incorrect_hint", args: {} },
        });
      }
      loggedIn = args.user as UserKind;
      pinState.userLow = false;
      pinState.userFinal = false;
      auditKey = { state: "unlocked", epoch: 0, holder: "Built-in lunasim (serial 0f0aea212282d895)" };
      const mustChange = loggedIn === "user" && pinState.toBeChanged;
      if (mustChange) auditKey = { state: "no_key_yet" };
      record("login", "partition", PARTITION, "success");
      void emit("console-event", { kind: "partition_changed", partition_id: PARTITION } satisfies ConsoleEvent);
      return {
        partition_id: PARTITION,
        user: loggedIn,
        role_name: ROLE_NAME[loggedIn],
        audit: auditKey,
        pin_to_be_changed: mustChange,
        pin_change_reason: mustChange
          ? "The security officer set this Crypto Officer PIN, and the partition's policy 21 wants it changed before anything else."
          : null,
      };
    },
    change_pin: async (args) => {
      if (!loggedIn) throw err("NOT_LOGGED_IN", "Log in as the role whose PIN you change.");
      const current = loggedIn === "crypto_user" ? cryptoUserPin : userPin;
      if (args.oldPin !== current) {
        pinState.userLow = true;
        record("pin.change", "partition", PARTITION, "failure");
        throw err("PIN_INCORRECT", "The current PIN is incorrect; the PIN was not changed.", {
          details: "The token says wrong PINs were entered; fewer attempts remain.",
          pkcs11: { function: "C_SetPIN", code: 0xa0, name: "CKR_PIN_INCORRECT", class: "Pin" },
        });
      }
      if (args.newPin.length < 4 || args.newPin.length > 64)
        throw err("PIN_INVALID", `The new PIN is ${args.newPin.length} characters long; this token accepts 4 to 64.`);
      record("pin.change.request", "partition", PARTITION, "success");
      if (loggedIn === "crypto_user") cryptoUserPin = args.newPin;
      else userPin = args.newPin;
      pinState.toBeChanged = false;
      auditKey = { state: "unlocked", epoch: 0, holder: "Built-in lunasim (serial 0f0aea212282d895)" };
      record("pin.change", "partition", PARTITION, "success");
      void emit("console-event", { kind: "partition_changed", partition_id: PARTITION } satisfies ConsoleEvent);
      return { partition_id: PARTITION, user: loggedIn, audit: auditKey };
    },
    set_user_pin: async (args) => {
      if (loggedIn !== "so") throw err("NOT_AUTHORIZED", "Only the security officer sets or resets it (log in as the SO).");
      userPin = args.newPin;
      pinState.toBeChanged = true;
      record("pin.init", "partition", PARTITION, "success");
      return null;
    },
    set_role_pin: async (args) => {
      if (loggedIn !== "user") throw err("NOT_AUTHORIZED", "Only the Crypto Officer sets other roles' PINs.");
      if (args.role === "crypto_user") cryptoUserPin = args.newPin;
      record("pin.init", "partition", PARTITION, "success");
      return null;
    },
    token_contents: async () => {
      const visible = loggedIn ? keys : keys.filter((k) => k.class === "PUBLIC_KEY");
      const classes = new Map<string, number>();
      for (const k of visible) classes.set(k.class, (classes.get(k.class) ?? 0) + 1);
      return {
        partition_id: PARTITION,
        label: pinState.label,
        serial: "0f0aea212282d895",
        objects: visible.length,
        by_class: Array.from(classes, ([cls, count]) => ({ class: cls, count })),
        reported_object_count: keys.length,
        public_only: !loggedIn,
        holds_audit_key: auditKey.state !== "no_key_yet",
        confirmation: pinState.label,
      };
    },
    init_token: async (args) => {
      if (args.soPin !== "87654321") throw err("PIN_INCORRECT", "The SO PIN is incorrect; the token was not initialized.");
      if (args.request.confirmation !== pinState.label)
        throw err("INVALID_INPUT", `Type the token's label, “${pinState.label}”, to confirm.`);
      const n = keys.length;
      keys.length = 0;
      pinState.label = args.request.label;
      loggedIn = null;
      record("token.init", "partition", PARTITION, "success");
      return { partition_id: PARTITION, label: args.request.label, objects_destroyed: n };
    },
    logout: async () => {
      loggedIn = null;
      record("logout", "partition", PARTITION, "success");
      auditKey = { state: "locked", holder: "Built-in lunasim (serial 0f0aea212282d895)" };
      return null;
    },
    list_keys: async () => {
      // A fresh array each time, as real IPC answers are.
      return structuredClone(loggedIn ? keys : keys.filter((k) => k.class === "PUBLIC_KEY"));
    },
    key_details: async (args) => {
      const k = find(Number(args.handle));
      const d: KeyDetails = {
        summary: k,
        attributes: [
          { attribute: "CKA_CLASS", code: 0, status: "value", display: "name", value: `CKO_${k.class}` },
          { attribute: "CKA_LABEL", code: 3, status: "value", display: "text", value: k.label },
          // Attributes an object lacks are not listed (as the backend does).
          ...(k.private ? [{ attribute: "CKA_SENSITIVE", code: 0x103, status: "value", display: "bool", value: "true" } as const] : []),
          ...(k.parameter_set
            ? [{ attribute: "CKA_PARAMETER_SET", code: 0x61d, status: "value", display: "name", value: k.parameter_set } as const]
            : []),
        ],
        public_key:
          k.class === "SECRET_KEY"
            ? null
            : {
                algorithm: k.algorithm,
                fingerprint: `SHA256:${hex(k.handle)}${hex(k.handle)}`,
                pem: "-----BEGIN PUBLIC KEY-----\nMOCK\n-----END PUBLIC KEY-----\n",
                raw_len: 1952,
              },
      };
      return d;
    },
    describe_key_spec: async (args) => {
      return describe(args.spec as KeySpec, String(args.purpose));
    },
    generate_key: async (args) => {
      if (loggedIn !== "user") throw err("NOT_LOGGED_IN", "Log in as the partition's user to generate keys.");
      requireAudit();
      const req = args.request as GenerateRequest;
      const ch = args.onEvent as Channel<JobEvent>;
      record("key.generate.request", "key", req.label, "success");
      const kg = cfg.keygen ?? {};
      const steps = kg.steps ?? 3;
      const stepMs = kg.stepMs ?? 60;
      const total = steps * 1024;
      // Released by the test at any time from here on (even before the steps are through).
      const held = kg.hold ? new Promise<void>((r) => (releaseKeygen = r)) : null;
      for (let i = 1; i <= steps; i++) {
        await new Promise((r) => setTimeout(r, stepMs));
        if (kg.progress) ch.onmessage({ kind: "progress", done: i * 1024 - 512, total });
        ch.onmessage({ kind: "elapsed", ms: i * 500 });
      }
      if (held) {
        let ms = steps * 500;
        const tick = setInterval(() => ch.onmessage({ kind: "elapsed", ms: (ms += 500) }), 100);
        await held;
        clearInterval(tick);
      }
      if (kg.fail) {
        record("key.generate", "key", req.label, "failure");
        throw err("HSM_ERROR", "The HSM has no room for the key (CKR_DEVICE_MEMORY).", {
          pkcs11: { function: "C_GenerateKeyPair", code: 0x31, name: "CKR_DEVICE_MEMORY", class: "Operation" },
        });
      }
      const id = hex(handle);
      const alg = req.spec.kind === "ml-dsa" || req.spec.kind === "ml-kem" ? req.spec.set : "HSS";
      const pub = summary(handle++, req.label, "PUBLIC_KEY", alg, id);
      const priv = summary(handle++, req.label, "PRIVATE_KEY", alg, id);
      if (req.spec.kind === "ml-kem") {
        // A KEM pair encapsulates and decapsulates; it does not sign.
        pub.key_type = priv.key_type = "ML_KEM";
        pub.capabilities = { ...pub.capabilities, verify: false, encapsulate: true };
        priv.capabilities = { ...priv.capabilities, sign: false, decapsulate: true };
      }
      // CKA_ALWAYS_AUTHENTICATE on the private key, as the token reports it back.
      priv.always_authenticate = req.always_authenticate;
      keys.push(pub, priv);
      record("key.generate", "key", req.label, "success", { id });
      const g: GeneratedKey = {
        private_handle: priv.handle,
        public_handle: pub.handle,
        label: req.label,
        id_hex: id,
        algorithm: alg,
        public_key: {
          algorithm: alg,
          fingerprint: `SHA256:${id}`,
          pem: "-----BEGIN PUBLIC KEY-----\nMOCK\n-----END PUBLIC KEY-----\n",
          raw_len: 1952,
        },
        expected_public_key_len: 1952,
        elapsed_ms: 180,
        extractable: req.extractable,
        wrap_with_trusted: req.extractable ? true : null,
      };
      return g;
    },
    deletion_phrase: async (args) => {
      return phrase(args.handles as number[]);
    },
    destroy_keys: async (args) => {
      requireAudit();
      const hs = args.handles as number[];
      const want = phrase(hs);
      if (args.confirmation !== want)
        throw err("INVALID_INPUT", `Type “${want}” to confirm the deletion.`, { details: "Nothing was deleted." });
      record("key.destroy.request", "key", want, "success");
      for (const h of hs) {
        const i = keys.findIndex((k) => k.handle === h);
        if (i >= 0) {
          record("key.destroy", "key", keys[i]!.label, "success");
          keys.splice(i, 1);
        }
      }
      return { destroyed: hs, failed: [] };
    },
    export_public_key: async (args) => {
      const k = find(Number(args.handle));
      record("key.export_public", "key", k.label, "success", { id: k.id_hex });
      return {
        format: args.format,
        file_name: `${k.label}.pub.pem`,
        text: "-----BEGIN PUBLIC KEY-----\nMOCK\n-----END PUBLIC KEY-----\n",
        base64: null,
        fingerprint: `SHA256:${hex(k.handle)}`,
      };
    },
    save_public_key: async () => {
      return null;
    },
    save_mechanisms_csv: async () => {
      return null;
    },
    audit_export: async (args) => {
      const r = args.range as { from_time: string | null; to_time: string | null };
      const n = records.filter((x) => (!r.from_time || x.timestamp >= r.from_time) && (!r.to_time || x.timestamp <= r.to_time)).length;
      return { path: `/home/officer/audit.${String(args.format)}`, records: n, checkpoints: 1, first_seq: null, last_seq: null };
    },
    audit_status: async () => {
      const s: AuditStatusView = {
        log_id: "log_mock",
        location: "audit.db",
        store: "sqlite",
        key: auditKey,
        records: records.length,
        pending: 0,
        last_seq: records.length,
        checkpoints: 1,
        last_checkpoint_time: null,
        last_checkpoint_seq: null,
        last_verification: lastVerification,
        auto_verify: settings.audit.auto_verify,
      };
      return s;
    },
    audit_records: async (args) => {
      const q = args.query as {
        before_seq: number | null;
        limit: number;
        action: string | null;
        status: string | null;
        text: string | null;
        actor: string | null;
        from_time: string | null;
        to_time: string | null;
      };
      return records
        .filter(
          (r) =>
            (q.before_seq === null || r.seq < q.before_seq) &&
            (!q.action || r.action.startsWith(q.action)) &&
            (!q.status || r.status === q.status) &&
            (!q.text || r.metadata.includes(q.text)) &&
            (!q.actor || r.actor_id === q.actor) &&
            (!q.from_time || r.timestamp >= q.from_time) &&
            (!q.to_time || r.timestamp <= q.to_time),
        )
        .reverse()
        .slice(0, q.limit);
    },
    audit_verify: async (args) => {
      requireAudit();
      const ch = args.onEvent as Channel<JobEvent>;
      const total = records.length;
      const jobId = String(args.jobId);
      for (let done = 0; done <= total; done += Math.max(1, Math.ceil(total / 10))) {
        if (cancelled.has(jobId)) throw err("CANCELLED", "Cancelled.");
        ch.onmessage({ kind: "progress", done, total });
        await new Promise((r) => setTimeout(r, 80));
      }
      const seq = cfg.tamperedSeq ?? 0;
      const kind = cfg.tamperKind ?? "modified";
      const findings: Record<string, [Finding, string]> = {
        modified: [{ kind: "modified", seq }, `Record ${seq} was changed after it was written: its content no longer matches its seal.`],
        missing: [{ kind: "missing", seq }, `Record ${seq} is missing: it was deleted from the trail.`],
        inserted: [{ kind: "inserted", seq }, `Record ${seq} was inserted into the trail afterwards; the console never wrote it there.`],
        reordered: [{ kind: "reordered", seq, belongs_at: seq + 3 }, `Record ${seq} is out of place: it was written as record ${seq + 3}.`],
        grafted: [
          { kind: "grafted", seq, foreign_log: "log_other" },
          `A record numbered ${seq} from another trail (log_other) was copied into this one.`,
        ],
        truncated_tail: [
          { kind: "truncated_tail", last_seq: seq - 1, checkpoint_seq: seq + 20 },
          `The trail ends at record ${seq - 1}, but a signed checkpoint vouches for records up to ${seq + 20}: the newest records were removed.`,
        ],
        rollback: [
          { kind: "rollback", store_seq: seq - 1, anchor_seq: seq + 50, anchor_checkpoint: 7 },
          `The store was rolled back to an older copy: it ends at record ${seq - 1}, while checkpoint 7, remembered outside the store, covers records up to ${seq + 50}.`,
        ],
        checkpoint_signature_invalid: [
          { kind: "checkpoint_signature_invalid", checkpoint_no: 3, seq },
          `Checkpoint 3 has an invalid signature: it was forged or altered.`,
        ],
        torn_last_write: [
          { kind: "torn_last_write", seq },
          `The last record (${seq}) is incomplete: the console was probably interrupted while writing it. This looks like a crash, not tampering; all records before it are intact.`,
        ],
      };
      const [finding, explanation] = findings[kind]!;
      const v: Verdict = cfg.tamperedSeq
        ? { verdict: "broken", finding, first_bad_seq: seq, explanation, records_checked: seq - 1 }
        : {
            verdict: "intact",
            records: total,
            last_seq: total,
            checkpoints: 1,
            last_checkpoint: null,
            key_pinned: true,
            macs_checked: true,
          };
      lastVerification =
        v.verdict === "intact"
          ? {
              at: new Date().toISOString(),
              intact: true,
              records: total,
              first_bad_seq: null,
              explanation: null,
              finding: null,
              trigger: "manual",
            }
          : { at: new Date().toISOString(), intact: false, records: seq - 1, first_bad_seq: seq, explanation, finding, trigger: "manual" };
      record("audit.verify", "audit_trail", "log_mock", v.verdict === "intact" ? "success" : "failure");
      return v;
    },
    audit_checkpoint: async () => {
      requireAudit();
      return {
        log_id: "log_mock",
        checkpoint_no: 2,
        seq: records.length,
        head_hmac: "",
        head_digest: "",
        time: "",
        epoch: 0,
        algorithm: "ML-DSA-65",
        public_key: "",
        signature: "",
      };
    },
    signing_keys: async () => {
      const ks: SigningKeyView[] = keys
        .filter((k) => k.class === "PRIVATE_KEY" && k.capabilities.sign)
        .map((k) => ({
          handle: k.handle,
          label: k.label,
          id_hex: k.id_hex,
          algorithm: k.algorithm,
          scheme:
            k.algorithm === "HSS"
              ? { scheme: "hss" }
              : k.algorithm === "Ed25519"
                ? { scheme: "ed25519" }
                : k.algorithm.startsWith("ECDSA")
                  ? { scheme: "ecdsa", curve: "P256" }
                  : { scheme: "ml-dsa", set: "ML-DSA-65" },
          fingerprint: `SHA256:${k.id_hex}`,
          hss_remaining: k.hss_keys_remaining,
          hss_capacity: k.hss_capacity,
          has_certificate: keys.some((c) => c.class === "CERTIFICATE" && c.id_hex === k.id_hex),
          certificate_subject: keys.some((c) => c.class === "CERTIFICATE" && c.id_hex === k.id_hex) ? `CN=${k.label}` : null,
          ...(() => {
            const has = keys.some((c) => c.class === "CERTIFICATE" && c.id_hex === k.id_hex);
            const w = has ? certWarnings(`CN=${k.label}`) : [];
            return { certificate_warnings: w.map((x) => x.text), certificate_warnings_text: w };
          })(),
          always_authenticate: k.always_authenticate === true,
        }));
      return ks;
    },
    inspect_files: async (args) => {
      // As signing::input and console::sign::input_problem: the English, and the reason nested.
      const refuse = (path: string, name: string, reason: keyof typeof REASONS): FileCheck => ({
        path,
        name,
        size: null,
        problem: `${path}: ${REASONS[reason]}`,
        problem_text: {
          ...text("errors.path_reason", "{{path}} {{reason}}.", { path, reason: REASONS[reason] }),
          args: { path, reason: REASONS[reason], "reason.key": `errors.inputs.${reason}` },
        },
      });
      return (args.paths as string[]).map((p): FileCheck => {
        const name = p.split("/").pop() ?? p;
        if (p.endsWith("/")) return refuse(p, name, "folder");
        if (name.startsWith("empty")) return refuse(p, name, "empty");
        return { path: p, name, size: 1000 + name.length * 100, problem: null, problem_text: null };
      });
    },
    // The officer cancels every native dialog.
    pick_files: async () => cfg.pickedFiles ?? [],
    pick_folder: async () => cfg.pickedFolder ?? null,
    sign_files: async (args) => {
      requireAudit();
      const req = args.request as SignRequest;
      const ch = args.onEvent as Channel<SignProgress>;
      const jobId = String(args.jobId);
      const key = keys.find((k) => `id:${k.id_hex}` === req.key);
      if (!key) throw err("KEY_NOT_FOUND", "Key not found.");
      // Dual signing (crates/console/src/sign/batch/signers.rs): each key makes the formats
      // it can; every output but the .p7s is named for its key.
      const signers = [key];
      for (const id of req.also_keys ?? []) {
        const k = keys.find((x) => `id:${x.id_hex}` === id && x.class === "PRIVATE_KEY");
        if (!k) throw err("KEY_NOT_FOUND", "Key not found.");
        signers.push(k);
      }
      const several = signers.length > 1;
      const canMake = (k: ObjectSummary, f: string) =>
        f === "minisign"
          ? k.algorithm === "Ed25519"
          : f === "sshsig" || f === "openpgp" || f === "openpgp_binary" || f === "openpgp_cleartext"
            ? k.algorithm === "Ed25519" || k.algorithm.startsWith("ECDSA")
            : true;
      const stem = (k: ObjectSummary) => k.label.replace(/[^A-Za-z0-9_-]/g, "_");
      const keyView = (k: ObjectSummary): SigningKeyView => ({
        handle: k.handle,
        label: k.label,
        id_hex: k.id_hex,
        algorithm: k.algorithm,
        scheme:
          k.algorithm === "Ed25519"
            ? { scheme: "ed25519" }
            : k.algorithm.startsWith("ECDSA")
              ? { scheme: "ecdsa", curve: "P256" }
              : { scheme: "ml-dsa", set: "ML-DSA-65" },
        fingerprint: "SHA256:x",
        hss_remaining: k.hss_keys_remaining,
        hss_capacity: k.hss_capacity,
        has_certificate: true,
        certificate_subject: `CN=${k.label}`,
        certificate_warnings: certWarnings(`CN=${k.label}`).map((x) => x.text),
        certificate_warnings_text: certWarnings(`CN=${k.label}`),
        always_authenticate: k.always_authenticate === true,
      });
      if (key.algorithm === "HSS" && !req.confirm_hss)
        throw err("INVALID_INPUT", "Signing with an HSS key uses up one-time signatures for good; confirm it to go on.");
      // The backend checks each chain link before signing (crates/console/src/sign/chain.rs).
      const unrelated = req.chain.find((f) => f.includes("unrelated"));
      if (unrelated) {
        const args = { file: unrelated, subject: "CN=Unrelated CA", last: "CN=Test Intermediate CA", expected: "CN=Test Root CA" };
        throw err(
          "INVALID_INPUT",
          `${unrelated}: the certificate CN=Unrelated CA does not chain to the signing certificate; the path ends at CN=Test Intermediate CA, whose issuer is CN=Test Root CA.`,
          { details: "Nothing was signed.", i18n: { message: "errors.chain_does_not_chain", suggestion: null, args } },
        );
      }
      // A key that wants the PIN for each signature (crates/console/src/sign/batch/per_use.rs):
      // the Sign view gives it once, with the consent; without both, nothing is signed.
      const perUse = signers.find((k) => k.always_authenticate === true);
      if (perUse && (req.context_login !== "once_per_batch" || !args.contextPin))
        throw err(
          "INVALID_INPUT",
          `'${perUse.label}' wants the PIN for each signature it makes (CKA_ALWAYS_AUTHENTICATE). Nothing was signed.`,
        );
      record("sign.batch", "artifact", `${req.files.length} file(s)`, "success");
      if (perUse) record("sign.consent", "artifact", perUse.label, "success", { context_login: "once-per-batch" });
      const report: SignReport = {
        key: { ...keyView(key), scheme: { scheme: "ml-dsa", set: "ML-DSA-65" } },
        keys: signers.map((k) => ({
          key: keyView(k),
          formats: req.formats.filter((f) => canMake(k, f)),
          name_stem: several ? stem(k) : null,
          signatures_made: 0,
          hss_remaining_after: null,
        })),
        files: [],
        manifest: [],
        manifest_error: null,
        stopped: false,
        cancelled: false,
        hss_remaining_after: null,
        signatures_made: 0,
        kit: null,
        kit_error: null,
      };
      if (req.kit && req.kit.dir.startsWith("/exists"))
        throw err("INVALID_INPUT", `${req.kit.dir} already exists; the kit is written only to a new folder.`);
      // As the backend: paths that cannot be signed are refused first; with "stop" nothing is signed.
      const problem = (p: string) =>
        p.endsWith("/")
          ? `${p} is a folder; drop the files inside it (or an archive of it).`
          : (p.split("/").pop() ?? "").startsWith("empty")
            ? `${p} is empty (0 bytes); an empty release artifact is almost certainly a mistake.`
            : null;
      if (req.on_error === "stop" && req.files.some((p) => problem(p))) {
        report.stopped = true;
        report.files = req.files.map((path) => ({
          path,
          name: path.split("/").pop() ?? path,
          size: null,
          sha256: null,
          outputs: [],
          error: problem(path) ? err("INVALID_INPUT", problem(path)!) : null,
          unstamped: null,
          failed_key: null,
        }));
        return report;
      }
      for (let i = 0; i < req.files.length; i++) {
        const path = req.files[i]!;
        const name = path.split("/").pop() ?? path;
        if (problem(path)) {
          ch.onmessage({ stage: "failed", index: i, message: problem(path)! });
          report.files.push({
            path,
            name,
            size: null,
            sha256: null,
            outputs: [],
            error: err("INVALID_INPUT", problem(path)!),
            unstamped: null,
            failed_key: null,
          });
          continue;
        }
        // A file whose signature cannot be written (signing::output): the OS's English nested
        // in errors.cannot_write as signing.write_failed.
        if (name.startsWith("readonly")) {
          const os = "Permission denied (os error 13)";
          const sig = `${path}.sig`;
          report.files.push({
            path,
            name,
            size: 1000,
            sha256: null,
            outputs: [],
            error: err("IO", `Cannot write ${sig}: ${os}.`, {
              i18n: {
                message: "errors.cannot_write",
                suggestion: null,
                args: { path: sig, reason: os, "reason.key": "signing.write_failed", "reason.error": os },
              },
            }),
            unstamped: null,
            failed_key: null,
          });
          continue;
        }
        if (cancelled.has(jobId)) {
          report.cancelled = true;
          break;
        }
        for (let d = 0; d <= 4; d++) {
          ch.onmessage({ stage: "hashing", index: i, done: d * 250, total: 1000 });
          await new Promise((r) => setTimeout(r, 40));
        }
        ch.onmessage({ stage: "signing", index: i });
        await new Promise((r) => setTimeout(r, 40));
        // As the backend names them: an apt repository's Release gets InRelease and an
        // armored Release.gpg (crates/console/src/sign/openpgp.rs); with several keys every
        // output but the .p7s is named for its key.
        const dir = path.slice(0, path.length - name.length);
        const suffix = (f: SignFormat) =>
          ({
            cms: ".p7s",
            raw: ".sig",
            bundle: ".sig.json",
            openpgp: ".asc",
            openpgp_binary: ".gpg",
            openpgp_cleartext: ".clearsigned",
            minisign: ".minisig",
            sshsig: ".sshsig",
          })[f];
        const single = (f: SignFormat) =>
          name === "Release" && f === "openpgp"
            ? `${dir}Release.gpg`
            : name === "Release" && f === "openpgp_cleartext"
              ? `${dir}InRelease`
              : `${path}${suffix(f)}`;
        const outputs = req.formats.flatMap((f) =>
          f === "cms" || !several
            ? [{ format: f, path: single(f), verified: true, signed_by: signers.filter((k) => canMake(k, f)).map((k) => k.label) }]
            : signers
                .filter((k) => canMake(k, f))
                .map((k) => ({ format: f, path: `${path}.${stem(k)}${suffix(f)}`, verified: true, signed_by: [k.label] })),
        );
        report.files.push({ path, name, size: 1000, sha256: "ab".repeat(32), outputs, error: null, unstamped: null, failed_key: null });
        report.signatures_made += outputs.reduce((n, o) => n + o.signed_by.length, 0);
        report.keys.forEach((k) => (k.signatures_made += k.formats.length));
        ch.onmessage({ stage: "done", index: i });
        record("sign", "artifact", name, "success", { path, key_id: key.id_hex, outputs: outputs.map((o) => o.path) });
      }
      if (key.hss_keys_remaining !== null) {
        key.hss_keys_remaining -= report.signatures_made;
        report.hss_remaining_after = key.hss_keys_remaining;
      }
      if (req.kit) {
        const kitReq = req.kit;
        const signed = report.files.filter((f) => !f.error);
        if (signed.length < report.files.length) {
          report.kit_error = err("INVALID_INPUT", "The verifier kit was not written: not every file was signed.");
        } else {
          const sigs = signed.flatMap((f) =>
            f.outputs.map((o) => ({ subject: f.name, format: o.format, name: o.path.split("/").pop() ?? o.path })),
          );
          report.kit = {
            dir: kitReq.dir,
            files: ["keys/public.pem", ...sigs.map((s) => `signatures/${s.name}`), "VERIFY.md", "verify.sh"],
            checks: sigs.map((s) => ({ subject: s.subject, format: s.format, tool: "openssl", command: `openssl … signatures/${s.name}` })),
          };
        }
      }
      return report;
    },
    verify_signature: async (args) => {
      const file = String(args.file);
      const valid = !file.includes("tampered");
      const r: VerifyReport = {
        file,
        format: String(args.signature).endsWith(".p7s") ? "cms" : "raw",
        valid,
        algorithm: "ML-DSA-65",
        key_fingerprint: "SHA256:abc",
        signer: "CN=release",
        signing_time: "2026-11-30 12:00:00",
        detail: "the file's digest does not match the signed message digest: the file is not the one that was signed",
        // An error's own words (a failed check) have no catalog text; a verdict has.
        detail_text: null,
        entries: [],
        timestamp: file.includes("stamped")
          ? {
              time: "2026-11-30T12:00:01Z",
              tsa_subject: "O=Example,CN=Example TSA",
              tsa_name: null,
              policy: "1.2.3.4.1",
              serial: "01",
              hash: "SHA-256",
              ca_checked: false,
            }
          : null,
      };
      if (valid) {
        r.detail_text = text(
          "verify.details.cms_ok",
          "the signed attributes carry the file's {{digest}} digest and the {{algorithm}} signature over them verifies",
          { digest: "SHA-256", algorithm: "ML-DSA-65" },
        );
        r.detail = r.detail_text.text;
      }
      record("verify", "artifact", file, valid ? "success" : "failure");
      return r;
    },
    issue_certificate: async (args) => {
      return {
        pem: "-----BEGIN CERTIFICATE-----\nMOCK\n-----END CERTIFICATE-----\n",
        subject: String(args.subject),
        serial: "01",
        not_after: "2029",
        fingerprint: "SHA256:x",
        stored_on_token: true,
      };
    },
    // A file whose name says "issued-for-LABEL" holds the certificate a CA issued for that
    // key; "not-a-cert" is refused by name, as the backend does.
    import_objects: async (args) => {
      const req = args.request as ImportRequest;
      if (!loggedIn) throw err("NOT_LOGGED_IN", "Log in to import objects.");
      requireAudit();
      const name = req.path.split("/").pop() ?? req.path;
      if (name.includes("not-a-cert"))
        throw err("INVALID_INPUT", `${req.path}: is not a certificate (PEM, DER or PKCS#7) or a public key (SPKI PEM or DER)`);
      const forKey = /issued-for-([A-Za-z0-9_]+)/.exec(name)?.[1];
      const key = keys.find((k) => k.class === "PRIVATE_KEY" && k.label === forKey);
      const label = req.label ?? key?.label ?? name;
      const id = req.id_hex ?? key?.id_hex ?? hex(handle);
      const c = summary(handle++, label, "CERTIFICATE", "X.509 certificate", id);
      keys.push(c);
      record("object.import.request", "object", req.path, "success");
      record("object.import", "object", req.path, "success");
      return {
        file: req.path,
        objects: [
          {
            handle: c.handle,
            kind: "certificate",
            label,
            id_hex: id,
            certificate: certInfo(`CN=${label}`),
            key_label: key?.label ?? null,
            authority: false,
          },
        ],
      };
    },
    certificate_details: async (args) => {
      const c = find(Number(args.handle));
      const key = keys.find((k) => k.class === "PRIVATE_KEY" && k.id_hex === c.id_hex);
      return {
        handle: c.handle,
        label: c.label,
        id_hex: c.id_hex,
        info: certInfo(`CN=${c.label}`),
        chain: ["CN=Example Intermediate CA"],
        chain_complete: false,
        key_label: key?.label ?? null,
        signing_warnings: certWarnings(`CN=${c.label}`).map((x) => x.text),
        signing_warnings_text: certWarnings(`CN=${c.label}`),
      };
    },
    save_object: async () => null,
    key_check_value: async (args) => {
      const k = find(Number(args.handle));
      if (k.class !== "SECRET_KEY") throw err("INVALID_INPUT", "key check values are computed for AES keys");
      return "1A2B3C";
    },
    wrap_key: async () => null,
    unwrap_key: async (args) => {
      const path = String(args.path);
      // As console::backup::read_wrap_file: serde's English nested as errors.wrap.not_json.
      if (!path.endsWith(".json")) {
        const why = "expected value at line 1 column 1";
        throw err("INVALID_INPUT", `${path}: is not a wrap file: ${why}`, {
          i18n: {
            message: "errors.wrap_file_invalid",
            suggestion: null,
            args: { file: path, error: why, "error.key": "errors.wrap.not_json", "error.error": why },
          },
        });
      }
      const kek = find(Number(args.unwrappingHandle));
      if (kek.class !== "SECRET_KEY") throw err("INVALID_INPUT", `'${kek.label}' cannot wrap: use an AES key or an RSA key pair.`);
      const k = summary(handle++, args.label ?? "restored_key", "SECRET_KEY", "AES-256", hex(6000 + handle));
      keys.push(k);
      return { summary: k, kcv: "1A2B3C", public_handle: null };
    },
    object_uri: async (args) => {
      const k = find(Number(args.handle));
      const token = "pkcs11:token=Built-in%20lunasim;manufacturer=Thales%20(lunasim);serial=1234;model=LunaSim%20K7";
      const type = { PRIVATE_KEY: "private", PUBLIC_KEY: "public", SECRET_KEY: "secret-key", CERTIFICATE: "cert" }[k.class] ?? "data";
      const uri = `${token};object=${encodeURIComponent(k.label)};id=%${k.id_hex.match(/../g)?.join("%") ?? ""};type=${type}`;
      return {
        uri,
        token_uri: token,
        module_uri: "pkcs11:library-manufacturer=Thales%20(lunasim)",
        module_path: "/usr/lib/liblunasim.so",
        commands:
          k.class === "PRIVATE_KEY"
            ? [
                {
                  tool: "OpenSSL 3 (pkcs11 engine)",
                  purpose: text(
                    "uris.purpose_openssl_engine",
                    "sign a file; the PIN is read from PIN-FILE (Debian: libengine-pkcs11-openssl)",
                  ),
                  command: `openssl dgst -sha256 -engine pkcs11 -keyform engine -passin file:PIN-FILE -sign '${uri}'`,
                  verify: "openssl dgst -sha256 -verify PUBLIC.pem -signature FILE.sig FILE",
                  // The built-in partition holds the trail's ML-DSA key.
                  caveat: text(
                    "uris.caveat_libp11",
                    "Will not work on this token: Debian 12's libp11 (the pkcs11 engine) stops listing a token's keys when the token holds a key type it does not know, and this one holds {{algorithms}}. Sign with hsmc sign or the Sign view instead, or keep this key on a partition of classic keys.",
                    { algorithms: "ML-DSA-65" },
                  ),
                },
                {
                  tool: "p11tool",
                  purpose: text("uris.purpose_p11tool", "list the token's objects (GnuTLS); the PIN is read from PIN-FILE"),
                  command: `GNUTLS_PIN="$(cat PIN-FILE)" p11tool --provider='/usr/lib/liblunasim.so' --login --list-all '${token}'`,
                  verify: null,
                  caveat: null,
                },
              ]
            : [],
      };
    },
    // The engine cannot read the built-in partition (its caveat); p11tool lists the key.
    try_tool_line: async (args) => {
      const k = find(Number(args.handle));
      if (args.tool === "p11tool")
        return {
          tool: "p11tool",
          ok: true,
          steps: [{ command: "p11tool --login --list-all", exit_code: 0, output: `Object 0:\n\tLabel: ${k.label}\n\tType: Private key` }],
        };
      return {
        tool: String(args.tool),
        ok: false,
        steps: [
          {
            command: "OPENSSL_CONF=pkcs11-engine.cnf openssl dgst -sha256 -engine pkcs11 …",
            exit_code: 1,
            output: "Unable to enumerate private keys\nPKCS11_get_private_key returned NULL",
          },
        ],
      };
    },
    editable_attributes: async (args) => {
      const k = find(Number(args.handle));
      const isKey = k.class !== "CERTIFICATE";
      return {
        handle: k.handle,
        class: k.class,
        label: k.label,
        id_hex: k.id_hex,
        start_date: null,
        end_date: null,
        modifiable: true,
        flags: isKey
          ? [
              {
                name: "sensitive",
                value: k.private,
                changeable: !k.private,
                reason: k.private
                  ? {
                      key: "errors.flag_sensitive_forever",
                      args: {},
                      text: "a sensitive key can never be made non-sensitive (PKCS#11: CKA_SENSITIVE may only be set to true)",
                    }
                  : null,
              },
              { name: "sign", value: k.capabilities.sign, changeable: true, reason: null },
            ]
          : [],
        related: keys.filter((o) => o.handle !== k.handle && o.id_hex === k.id_hex).map((o) => `${o.class.toLowerCase()} '${o.label}'`),
      };
    },
    set_attributes: async (args) => {
      if (!loggedIn) throw err("NOT_LOGGED_IN", "Log in to change attributes.");
      requireAudit();
      const k = find(Number(args.handle));
      const ch = args.changes as AttributeChanges;
      const changed: string[] = [];
      const moved: string[] = [];
      if (ch.label) {
        k.label = ch.label;
        changed.push(`label=${ch.label}`);
      }
      if (ch.id_hex) {
        for (const o of keys.filter((o) => o.handle !== k.handle && o.id_hex === k.id_hex)) {
          o.id_hex = ch.id_hex;
          moved.push(`${o.class.toLowerCase()} '${o.label}'`);
        }
        k.id_hex = ch.id_hex;
        changed.push(`id=${ch.id_hex}`);
      }
      for (const f of ch.flags) {
        if (f.name === "sign") k.capabilities.sign = f.value;
        changed.push(`${f.name}=${f.value}`);
      }
      record("object.set_attributes.request", "object", k.label, "success");
      record("object.set_attributes", "object", k.label, "success");
      return { summary: k, changed, moved };
    },
    certificate_request: async () => {
      return "-----BEGIN CERTIFICATE REQUEST-----\nMOCK\n-----END CERTIFICATE REQUEST-----\n";
    },
    openpgp_key: async (args) => {
      const k = find(Number(args.handle));
      const algorithm =
        k.algorithm === "Ed25519"
          ? "eddsa_legacy"
          : k.algorithm === "ECDSA P-256"
            ? "ecdsa_p256"
            : k.algorithm === "ECDSA P-384"
              ? "ecdsa_p384"
              : k.algorithm.startsWith("RSA")
                ? "rsa"
                : null;
      if (!algorithm) throw err("UNSUPPORTED", `a ${k.algorithm} key has no OpenPGP form that gpg 2.2 and Sequoia 0.27 read`);
      const created = openpgpCreated.get(k.id_hex) ?? null;
      return { algorithm, fingerprint: created ? `${k.id_hex.slice(0, 32)}ABCD1234`.toUpperCase() : null, created };
    },
    save_openpgp_certificate: async (args) => {
      const k = find(Number(args.handle));
      const uid = String(args.userId);
      // eslint-disable-next-line no-control-regex
      if (!uid.trim() || /[\u0000-\u001f]/.test(uid))
        throw err("INVALID_INPUT", "an OpenPGP user ID is one line of text: it cannot contain a newline or other control characters.");
      const stored = !openpgpCreated.has(k.id_hex);
      if (stored) openpgpCreated.set(k.id_hex, "2026-12-01T10:00:00Z");
      record("openpgp.cert", "key", k.label, "success", { user_id: uid });
      return {
        armored: "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nMOCK\n-----END PGP PUBLIC KEY BLOCK-----\n",
        fingerprint: `${k.id_hex.slice(0, 32)}ABCD1234`.toUpperCase(),
        user_id: uid,
        created: openpgpCreated.get(k.id_hex)!,
        creation_time_stored: stored,
      };
    },
    save_key_succession: async (args) => {
      // As crates/console/src/sign/succession.rs: two different signing keys, both sign.
      const byId = (sel: unknown) => {
        const hex = String(sel).replace(/^id:/, "");
        const k = keys.find((x) => x.id_hex === hex && x.class === "PRIVATE_KEY");
        if (!k) throw err("KEY_NOT_FOUND", `no private key ${String(sel)}`);
        return k;
      };
      const [old, next] = [byId(args.oldKey), byId(args.newKey)];
      if (old.id_hex === next.id_hex) throw err("INVALID_INPUT", "The old and the new key are the same key; choose its successor.");
      if ((old.algorithm === "HSS" || next.algorithm === "HSS") && !args.confirmHss)
        throw err("INVALID_INPUT", "Signing with an HSS key uses up one-time signatures for good; confirm it to go on.");
      const path = `/home/officer/${String(args.fileName)}`;
      const named = (k: typeof old) => ({
        label: k.label,
        algorithm: k.algorithm,
        fingerprint: `SHA256:${k.id_hex}`,
        public_key: "-----BEGIN PUBLIC KEY-----\nMOCK\n-----END PUBLIC KEY-----\n",
      });
      for (const k of [old, next]) record("sign", "artifact", path, "success", { key_id: k.id_hex, signatures: 1 });
      return {
        statement_path: path,
        signatures: [old, next].map((k) => `${path}.${k.label}.sig`),
        statement: {
          format: "hsm-console/key-succession",
          version: 1,
          old: named(old),
          new: named(next),
          new_key_signs_from: (args.newKeySignsFrom as string | null) ?? "2026-12-06",
          transition_ends: (args.transitionEnds as string | null) ?? null,
          made: "2026-12-06T10:00:00Z",
        },
      };
    },
    save_minisign_public_key: async (args) => {
      const k = find(Number(args.handle));
      if (k.algorithm !== "Ed25519") throw err("UNSUPPORTED", `minisign signs with Ed25519 keys only; this is a ${k.algorithm} key`);
      return "/home/officer/minisign.pub";
    },
    hss_keys: async () => {
      return keys
        .filter((k) => k.algorithm === "HSS" && k.class === "PRIVATE_KEY")
        .map((k): HssKeyView => ({
          partition_id: PARTITION,
          partition_label: "Built-in lunasim",
          handle: k.handle,
          label: k.label,
          id_hex: k.id_hex,
          algorithm: "HSS/LMS H5/W8 + H5/W8",
          capacity: k.hss_capacity ?? "0",
          remaining: k.hss_keys_remaining,
          used_percent: (100 * (1024 - (k.hss_keys_remaining ?? 0))) / 1024,
          status: (k.hss_keys_remaining ?? 0) <= 10 ? "critical" : (k.hss_keys_remaining ?? 0) <= 102 ? "warning" : "ok",
          per_day_7: 2,
          per_day_30: 1.5,
          per_day_90: 1,
          projected_exhaustion: "2027-03-01",
          audit_expected_remaining: k.hss_keys_remaining,
          ...hssMismatch(cfg.hssMismatch),
          // Signatures left over time: from the generation (full) down to what is left now.
          history: [0, 1, 2, 3].map((i) => ({
            at: new Date(Date.UTC(2026, 9, 1) + i * 20 * 86_400_000).toISOString(),
            remaining: Math.round(1024 - (i * (1024 - (k.hss_keys_remaining ?? 0))) / 3),
          })),
        }));
    },
    stats: async () => {
      statsSamples += 1;
      const s: StatsSnapshot = {
        partition_id: PARTITION,
        taken_at: new Date().toISOString(),
        manufacturer: "lunasim (Luna emulation)",
        library: "lunasim 10.9",
        cryptoki_version: "3.2",
        token: token(pinState),
        mechanism_count: 3,
        luna: {
          firmware: "7.9.1",
          boot_time: 1,
          cpu_up_time: 1000 * statsSamples,
          cpu_idle_time: 600 * statsSamples,
          busy_percent: statsSamples > 1 ? (cfg.busyPercent ?? 40) : null,
          commands: 100 * statsSamples,
          commands_per_second: statsSamples > 1 ? 20 : null,
          utilization: [
            { bin: "sign", count: 7 * statsSamples, per_second: statsSamples > 1 ? 1.4 : null },
            { bin: "encrypt", count: 4 * statsSamples, per_second: statsSamples > 1 ? 0.8 : null },
          ],
          hsm_storage: { total: 16777216, used: 1048576, free: 15728640, object_count: null },
          token_storage: null,
          not_offered: [],
        },
        pool: {
          slot: 1,
          size: 4,
          open: 1,
          idle: 1,
          in_use: 0,
          waiting: 0,
          breaker: "closed",
          breaker_opened: 0,
          logged_in: loggedIn !== null,
          module_generation: 1,
        },
        metrics: {
          ops: [{ op: "keys.list", ok: 3, errors: 0, mean_us: 120, p50_us: 100, p90_us: 150, p95_us: 180, p99_us: 250, max_us: 300 }],
          errors_by_class: [],
          module_recoveries: 0,
          session_reopens: 0,
          recovered_calls: 0,
          health_checks: 0,
          busy_rejections: 0,
          breaker_rejections: 0,
        },
        ha: cfg.ha ? haGroup(true) : null,
      };
      return s;
    },
    stats_history: async () => {
      return Array.from({ length: statsSamples }, (_, i) => ({
        t: i * 5,
        busy_percent: i ? 40 : null,
        commands_per_second: i ? 20 : null,
        sign_per_second: i ? 1.4 : null,
        sessions: 1,
        console_ops: i,
        console_errors: 0,
      }));
    },
    stats_chart: async (args) => {
      return `<svg xmlns="http://www.w3.org/2000/svg" width="720" height="300"><text x="10" y="20">${String(args.which)} chart, ${statsSamples} samples</text></svg>`;
    },
    save_export: async () => {
      return null;
    },
    pqc_readiness: async (args) => {
      if (args.partitionId !== null && args.partitionId !== PARTITION)
        throw err("PARTITION_NOT_FOUND", `No partition ${args.partitionId} is known.`);
      return pqcReadiness(args.policy);
    },
    pqc_export_cbom: async (args) => {
      pqcReadiness(args.policy);
      return cfg.savedCbom ?? null;
    },
    audit_checkpoints: async () => {
      return [
        {
          checkpoint_no: 1,
          seq: 100,
          time: "2026-11-30T12:00:00Z",
          epoch: 0,
          algorithm: "ML-DSA-65",
          key_fingerprint: "SHA256:abcdef0123456789abcdef",
          key_is_hsm_key: true,
          signature_valid: true,
          problem: null,
        },
        {
          checkpoint_no: 2,
          seq: 200,
          time: "2026-11-30T12:10:00Z",
          epoch: 0,
          algorithm: "ML-DSA-65",
          key_fingerprint: "SHA256:0000000000000000000000",
          key_is_hsm_key: false,
          signature_valid: false,
          problem: "signature invalid",
        },
      ];
    },
    audit_public_key: async () => {
      return "-----BEGIN PUBLIC KEY-----\nMOCK\n-----END PUBLIC KEY-----\n";
    },
    audit_rotate_key: async () => {
      requireAudit();
      record("audit.key_rotate", "audit_key", "epoch-1", "success");
      return 1;
    },
    probe_catalog: async () => {
      return [
        { op: { op: "random32" }, name: "random32", mechanism: "C_GenerateRandom", offered: true },
        { op: { op: "ecdsa-p256-sign" }, name: "ecdsa-p256-sign", mechanism: "CKM_ECDSA", offered: true },
        { op: { op: "ml-dsa-sign", set: "ML-DSA-65" }, name: "ml-dsa-65-sign", mechanism: "CKM_ML_DSA", offered: true },
        { op: { op: "slh-dsa-sign", set: "Sha2_128f" }, name: "slh-dsa-sha2-128f-sign", mechanism: "CKM_SLH_DSA", offered: false },
      ] satisfies ProbeChoice[];
    },
    run_probe: async (args) => {
      const req = args.request as ProbeRequest;
      const ch = args.onEvent as Channel<ProbeProgress>;
      const counts = req.sweep.length ? req.sweep : [req.workers];
      const runs: RunResult[] = [];
      for (let i = 0; i < counts.length; i++) {
        const w = counts[i]!;
        for (let k = 1; k <= 4; k++) {
          await new Promise((r) => setTimeout(r, 120));
          ch.onmessage({
            workers: w,
            run: i + 1,
            runs: counts.length,
            calls: k * 16,
            fraction: k / 4,
            point: { t: k * 0.25, p50_us: 15000 * w, p99_us: 16000 * w, ops_per_s: 65 },
          });
        }
        const lat = 15000 * w;
        runs.push({
          workers: w,
          calls: 64,
          errors: 0,
          first_error: null,
          seconds: 1,
          throughput_per_s: 64 + i,
          first_call_us: 40000,
          latency: {
            count: 64,
            min_us: lat * 0.9,
            mean_us: lat,
            stddev_us: 100,
            p50_us: lat,
            p90_us: lat * 1.05,
            p95_us: lat * 1.06,
            p99_us: lat * 1.1,
            p999_us: lat * 1.2,
            max_us: lat * 1.3,
          },
          series: [
            { t: 0.5, p50_us: lat, p99_us: lat * 1.1, ops_per_s: 64 },
            { t: 1, p50_us: lat, p99_us: lat * 1.2, ops_per_s: 64 },
          ],
          // Buckets as the backend's are: sub-millisecond, fractional microseconds, seconds.
          histogram: [
            [849.7, 2],
            [1234.567, 12],
            [lat, 48],
            [1_500_000, 2],
          ],
          // Waiting on the HSM's queue: the console's process is nearly idle.
          client_cpu: 0.03 * w,
        });
      }
      const sweep =
        counts.length > 1
          ? runs.map((r) => ({
              workers: r.workers,
              throughput_per_s: r.throughput_per_s,
              mean_us: r.latency.mean_us,
              p99_us: r.latency.p99_us,
              efficiency: r.throughput_per_s / (runs[0]!.throughput_per_s * r.workers),
              client_cpu: r.client_cpu,
            }))
          : [];
      const report: ProbeReport = {
        id: `probe_${probes.length + 1}`,
        created_at: new Date(Date.UTC(2026, 10, 30, 12, probes.length)).toISOString(),
        partition_id: PARTITION,
        module: "lunasim (Luna emulation)",
        firmware: "7.9.1",
        slot: 1,
        op: req.op,
        op_name: "ml-dsa-65-sign",
        mechanism: "CKM_ML_DSA",
        payload_bytes: 32,
        request: req,
        console_version: "0.1.0",
        runs,
        sweep,
        verdict: sweep.length
          ? "Ceiling in the HSM at about 66 ops/s: from 2 to 4 workers throughput stayed flat (65 → 66 ops/s) while mean latency grew 2.0× — more workers only queue. Add HSMs, not sessions."
          : null,
        verdict_text: sweep.length
          ? text(
              "probes.verdicts.ceiling",
              "Ceiling in the HSM at about {{best}} ops/s: from {{from}} to {{to}} workers throughput stayed flat ({{from_rate}} → {{to_rate}} ops/s) while mean latency grew {{growth}}× — more workers only queue. Add HSMs, not sessions.",
              { best: 66, from: 2, to: 4, from_rate: 65, to_rate: 66, growth: "2.0" },
            )
          : null,
        overhead_ns: 70,
        ha: cfg.ha
          ? {
              total_per_s: 66,
              members: [1, 2].map((n) => ({
                member: n,
                serial: `12800001${String(n).padStart(2, "0")}`,
                commands: 400,
                share_percent: 50,
                per_s: 33,
              })),
              basis: "each member's command counter (CA_GetHSMStats, or its utilization counters) before and after the probe",
              basis_text: text(
                "ha.probe_basis_counters",
                "each member's command counter (CA_GetHSMStats, or its utilization counters) before and after the probe",
              ),
            }
          : null,
        cancelled: false,
      };
      probes.push(report);
      record("probe.run", "partition", PARTITION, "success");
      return report;
    },
    probe_history: async () => {
      return [...probes].reverse().map((r) => ({
        id: r.id,
        created_at: r.created_at,
        op_name: r.op_name,
        partition_id: r.partition_id,
        workers: r.runs.map((x) => x.workers).join(","),
        throughput_per_s: Math.max(...r.runs.map((x) => x.throughput_per_s)),
        p50_us: r.runs[0]!.latency.p50_us,
        p99_us: r.runs[0]!.latency.p99_us,
      }));
    },
    probe_report: async (args) => {
      const r = probes.find((x) => x.id === args.id);
      if (!r) throw err("INVALID_INPUT", `No probe run ${args.id}.`);
      return r;
    },
    probe_chart: async (args) => svg(args.which),
    probe_live_chart: async (args) => svg(args.title),
    probe_csv: async () => {
      return "op,workers\n";
    },
    probe_capacity: async (args) => {
      const c = Number(args.ceilingPerS);
      const t = Number(args.targetPerS);
      const hsms = Math.ceil(t / (c * 0.8));
      return {
        target_per_s: t,
        ceiling_per_s: c,
        hsms,
        per_hsm_per_s: t / hsms,
        pool_size_per_hsm: 1,
        explanation: `${hsms} HSMs (each kept at ≤ 80 % of its ${c.toFixed(0)} ops/s ceiling), then 1 session per HSM.`,
      };
    },
    overview: async () => {
      return overview();
    },
    audit_days: async (args) => {
      // Days of the seeded trail, counted as the backend does (the mock's "today" is its newest record's day).
      const days: DayCount[] = [];
      const newest = records.at(-1)?.timestamp.slice(0, 10) ?? "2026-11-30";
      const end = Date.parse(`${newest}T00:00:00Z`);
      for (let i = Number(args.days) - 1; i >= 0; i--) {
        const day = new Date(end - i * 86_400_000).toISOString().slice(0, 10);
        const of = records.filter((r) => r.timestamp.startsWith(day));
        days.push({ day, records: of.length, failures: of.filter((r) => r.status === "failure").length });
      }
      return days;
    },
    cancel_job: async (args) => {
      cancelled.add(String(args.jobId));
      return true;
    },
  };
  async function handler(cmd: string, payload?: unknown): Promise<unknown> {
    const args = (payload ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args: { ...args } });
    const answer = (handlers as Record<string, ((a: never) => unknown) | undefined>)[cmd];
    if (!answer) throw err("INTERNAL", `mock: unknown command ${cmd}`);
    return answer(args as never);
  }
  const cancelled = new Set<string>();
  let statsSamples = 0;
  let lastVerification: AuditStatusView["last_verification"] = null;
  const probes: ProbeReport[] = [];
  mockWindows("main");
  mockIPC(handler, { shouldMockEvents: true });
  ipcReady = true;
  window.__mock = {
    calls,
    keys,
    records,
    get settings() {
      return settings;
    },
    // A backend event, as the console emits them (audit records, partition changes).
    event: (ev: ConsoleEvent) => emit("console-event", ev),
    // What the window gets when files are dropped on it.
    drop: (paths: string[]) => emit("tauri://drag-drop", { paths, position: { x: 400, y: 300 } }),
    // Lets a held key generation (cfg.keygen.hold) finish.
    releaseKeygen: () => releaseKeygen(),
    // The HSM reconnected: a new module generation, announced as the console does.
    reconnect: () => {
      moduleGeneration += 1;
      return emit("console-event", { kind: "partition_changed", partition_id: PARTITION } satisfies ConsoleEvent);
    },
  };
}

install(window.__MOCK_CONFIG__);
