// Generated from the Rust side by `src-tauri/src/ipc.rs`. Do not edit:
// run `make bindings` after changing a command or a type that crosses IPC.

import { Channel } from "@tauri-apps/api/core";
import type { AppStatus, AttributeChanges, AttributesChanged, AuditStatusView, CapacityPlan, CertificateDetails, CertificateView, Checkpoint, CheckpointView, ConnectionView, ConsoleEvent, DayCount, DestroyResult, DriftReport, EditableAttributes, ExportContent, ExportFormat, ExportKind, ExportSummary, ExportedPublicKey, FileCheck, GenerateRequest, GeneratedKey, HaGroupView, HaWarning, HssKeyView, ImportRequest, ImportResult, InitTokenRequest, JobEvent, KeyDetails, KeySpec, KeySpecInfo, LoginResult, MechanismView, ModuleView, OaepHash, ObjectFormat, ObjectSummary, ObjectUri, OpenPgpCertificate, OpenPgpKeyView, Overview, PartitionView, PinChanged, ProbeChart, ProbeChoice, ProbeProgress, ProbeReport, ProbeRequest, ProbeSummary, PublicKeyFormat, Query, Range, Readiness, RecordView, SeriesPoint, Settings, SignProgress, SignReport, SignRequest, SigningKeyView, StatsChart, StatsPoint, StatsSnapshot, SuccessionMade, TokenContents, TokenInitialized, ToolVerdict, Unwrapped, UsageKeyView, UserKind, Verdict, VerifyReport, WrapFile } from "./bindings";

/** Every IPC command: the arguments the page sends (camelCase) and the result. */
export interface Commands {
  /**
   * Every connected partition (login, PIN state, load, pool, HA) and the lists that need
   * attention across them: keys running out, certificates expiring, the audit trail's
   * verification, failed operations of the last 24 hours.
   */
  overview: { args: {}; result: Overview };
  /** The window's first request: whether the console started, and if not, why. */
  app_info: { args: {}; result: AppStatus };
  get_settings: { args: {}; result: Settings };
  /** Validate, store and audit new settings. */
  update_settings: { args: { settings: Settings }; result: Settings };
  /** Stop a running job (verification, signing batch, probe); false if none has that ID. */
  cancel_job: { args: { jobId: string }; result: boolean };
  /**
   * Save an export the window produced (a chart as SVG or PNG, numbers as CSV or JSON)
   * where the officer chooses; `None` when the dialog is cancelled.
   */
  save_export: { args: { fileName: string; kind: ExportKind; content: ExportContent }; result: string | null };
  /** Every loaded module with its slots and tokens. */
  connections: { args: {}; result: Array<ConnectionView> };
  /** Load a PKCS#11 module by path (checked for a PKCS#11 entry point before it is loaded). */
  add_module: { args: { path: string }; result: ModuleView };
  /** The native file dialog for choosing a module; `None` when the officer cancels. */
  pick_module_file: { args: {}; result: string | null };
  /** Forget a module (its partitions log out). */
  remove_module: { args: { moduleId: string }; result: null };
  partition: { args: { partitionId: string }; result: PartitionView };
  mechanisms: { args: { partitionId: string }; result: Array<MechanismView> };
  /** The mechanism table as CSV where the officer chooses; `None` when cancelled. */
  save_mechanisms_csv: { args: { partitionId: string }; result: string | null };
  /** The PIN crosses IPC once, goes straight into zeroizing memory, and is never stored. */
  login: { args: { partitionId: string; user: UserKind; pin: string }; result: LoginResult };
  logout: { args: { partitionId: string }; result: null };
  /** Change the PIN of the role logged in (`C_SetPIN`); a wrong current PIN is tried once. */
  change_pin: { args: { partitionId: string; oldPin: string; newPin: string }; result: PinChanged };
  /** The SO sets or resets the user PIN (`C_InitPIN`). */
  set_user_pin: { args: { partitionId: string; newPin: string }; result: null };
  /** The Crypto Officer sets a Luna role's PIN (`CA_InitRolePIN`). */
  set_role_pin: { args: { partitionId: string; role: UserKind; newPin: string }; result: null };
  /** What the token holds, for the Initialize dialog. */
  token_contents: { args: { partitionId: string }; result: TokenContents };
  /**
   * Initialize the token (`C_InitToken`): the label typed as confirmation, and for the
   * partition holding the audit trail's key, the second confirmation.
   */
  init_token: { args: { partitionId: string; soPin: string; request: InitTokenRequest }; result: TokenInitialized };
  list_keys: { args: { partitionId: string }; result: Array<ObjectSummary> };
  /** Every attribute of one object, decoded. */
  key_details: { args: { partitionId: string; handle: number }; result: KeyDetails };
  /** What a key specification means: its name, a suggested label, a time warning. */
  describe_key_spec: { args: { spec: KeySpec; purpose: string }; result: KeySpecInfo };
  /**
   * Key generation runs off the UI thread; the window gets, twice a second, the elapsed time
   * and — where the module reports it (lunasim's HSS trees) — how much is built.
   */
  generate_key: { args: { partitionId: string; request: GenerateRequest; onEvent: Channel<JobEvent> }; result: GeneratedKey };
  /** The words the officer types to confirm deleting these objects. */
  deletion_phrase: { args: { partitionId: string; handles: Array<number> }; result: string };
  destroy_keys: { args: { partitionId: string; handles: Array<number>; confirmation: string }; result: DestroyResult };
  export_public_key: { args: { partitionId: string; handle: number; format: PublicKeyFormat }; result: ExportedPublicKey };
  /** Ask where, then write; `None` when the officer cancels the dialog. */
  save_public_key: { args: { partitionId: string; handle: number; format: PublicKeyFormat; fileName: string }; result: string | null };
  /** A self-signed certificate for a key, kept on the token beside it. */
  issue_certificate: { args: { partitionId: string; handle: number; subject: string; days: number }; result: CertificateView };
  /** A PKCS#10 certificate request signed by the key (PEM). */
  certificate_request: { args: { partitionId: string; handle: number; subject: string }; result: string };
  /** A signing key's OpenPGP algorithm and, once its creation time is fixed, its fingerprint. */
  openpgp_key: { args: { partitionId: string; handle: number }; result: OpenPgpKeyView };
  /**
   * Ask where, then write the key's ASCII-armored OpenPGP certificate with this user ID;
   * `None` when the officer cancels the dialog. The first one fixes the key's creation time
   * on the token.
   */
  save_openpgp_certificate: { args: { partitionId: string; handle: number; userId: string; fileName: string }; result: OpenPgpCertificate | null };
  /** Ask where, then write an Ed25519 key's `minisign.pub`; `None` when cancelled. */
  save_minisign_public_key: { args: { partitionId: string; handle: number }; result: string | null };
  /**
   * Ask where, then write a key succession statement from `old_key` to `new_key`, signed by
   * both (see `hsmc keys succession`); `None` when the officer cancels the dialog.
   */
  save_key_succession: { args: { partitionId: string; oldKey: string; newKey: string; newKeySignsFrom: string | null; transitionEnds: string | null; confirmHss: boolean; fileName: string }; result: SuccessionMade | null };
  /**
   * Import a certificate (PEM, DER, a chain leaf first, `.p7b`), a public key, or a file as
   * a data object (`C_CreateObject`); a certificate of a key on the token gets its ID.
   */
  import_objects: { args: { partitionId: string; request: ImportRequest }; result: ImportResult };
  /** A certificate on the token: subject, issuer, validity, key usages, fingerprints, chain. */
  certificate_details: { args: { partitionId: string; handle: number }; result: CertificateDetails };
  /**
   * Export a certificate, public key or data object where the officer chooses (never over an
   * existing file); `null` when the dialog is cancelled.
   */
  save_object: { args: { partitionId: string; handle: number; format: ObjectFormat; fileName: string }; result: string | null };
  /**
   * What the attribute editor may offer for an object (by `CKA_MODIFIABLE` and PKCS#11's
   * rules), and the objects that move with a new ID.
   */
  editable_attributes: { args: { partitionId: string; handle: number }; result: EditableAttributes };
  /**
   * Change label, ID, dates or flags (`C_SetAttributeValue`); a new ID moves the pair's other
   * half and its certificates along.
   */
  set_attributes: { args: { partitionId: string; handle: number; changes: AttributeChanges }; result: AttributesChanged };
  /**
   * The object's PKCS#11 URI (RFC 7512), its token's and module's, and for a private key the
   * command lines of other tools that use it.
   */
  object_uri: { args: { partitionId: string; handle: number }; result: ObjectUri };
  /**
   * Test a key's tool line: run it as printed against a throwaway file, with the logged-in
   * session's PIN handed over in a private file (never shown), then the tool's own check.
   * Audited before it runs.
   */
  try_tool_line: { args: { partitionId: string; handle: number; tool: string }; result: ToolVerdict };
  /** An AES or generic secret key's check value (first 3 bytes of its CKA_CHECK_VALUE). */
  key_check_value: { args: { partitionId: string; handle: number }; result: string };
  /**
   * Wrap an extractable key under another key on the token into a file the officer chooses
   * (never over an existing one); `null` when the dialog is cancelled. `anyWrappingKey`: the
   * officer confirmed wrapping a key without CKA_WRAP_WITH_TRUSTED.
   */
  wrap_key: { args: { partitionId: string; handle: number; wrappingHandle: number; fileName: string; oaepHash: OaepHash | null; anyWrappingKey: boolean }; result: WrapFile | null };
  /** Unwrap a wrap file with the matching key, restoring its attributes. */
  unwrap_key: { args: { partitionId: string; path: string; unwrappingHandle: number; label: string | null }; result: Unwrapped };
  /** Private keys on the partition that can sign in the formats the console writes. */
  signing_keys: { args: { partitionId: string }; result: Array<SigningKeyView> };
  /** What the drop list shows at once: name, size, or why a path cannot be signed. */
  inspect_files: { args: { paths: Array<string> }; result: Array<FileCheck> };
  /** The native dialog for choosing files (one or several). */
  pick_files: { args: { title: string; multiple: boolean }; result: Array<string> };
  /** The native dialog for choosing a folder; `None` when cancelled. */
  pick_folder: { args: { title: string }; result: string | null };
  /**
   * Sign a batch with progress per file; `cancel_job(job_id)` stops it between files.
   * `context_pin`: the PIN for a key that wants one for each signature, given once with the
   * officer's consent for the batch (`SignRequest::context_login`).
   */
  sign_files: { args: { partitionId: string; jobId: string; request: SignRequest; contextPin: string | null; onEvent: Channel<SignProgress> }; result: SignReport };
  /** Verify a file against a signature offline, with the software verifiers only. */
  verify_signature: { args: { file: string; signature: string; publicKey: string | null; context: string | null }; result: VerifyReport };
  audit_status: { args: {}; result: AuditStatusView };
  /** A page of records matching the filter, newest first. */
  audit_records: { args: { query: Query }; result: Array<RecordView> };
  /** Verify the whole trail with progress; `cancel_job(job_id)` stops it. */
  audit_verify: { args: { jobId: string; onEvent: Channel<JobEvent> }; result: Verdict };
  /** Export the records in the range where the officer chooses; `None` when cancelled. */
  audit_export: { args: { format: ExportFormat; range: Range }; result: ExportSummary | null };
  /** Write a signed checkpoint now. */
  audit_checkpoint: { args: {}; result: Checkpoint };
  /** Every checkpoint with its signature checked. */
  audit_checkpoints: { args: {}; result: Array<CheckpointView> };
  /** The checkpoint signing key's public half (PEM). */
  audit_public_key: { args: {}; result: string };
  /** Start a new key epoch (the window asks for confirmation first). */
  audit_rotate_key: { args: {}; result: number };
  /** Records and failures per day for the last `days` days (the Audit view's bar chart). */
  audit_days: { args: { days: number }; result: Array<DayCount> };
  /** Every HSS key on the logged-in partitions, with burn rates from the audit trail. */
  hss_keys: { args: {}; result: Array<HssKeyView> };
  /** One statistics sample of a partition (kept for the charts). */
  stats: { args: { partitionId: string }; result: StatsSnapshot };
  /** The samples taken so far. */
  stats_history: { args: { partitionId: string }; result: Array<StatsPoint> };
  /** A statistics chart as SVG. */
  stats_chart: { args: { partitionId: string; which: StatsChart }; result: string };
  /** Every HA group of the loaded modules (their members, without statistics). */
  ha_groups: { args: {}; result: Array<HaGroupView> };
  /**
   * One HA group, with its members' statistics side by side; null when the partition is
   * not an HA group's virtual slot.
   */
  ha_group: { args: { partitionId: string }; result: HaGroupView | null };
  /** Compare the group's members object by object now (recorded when the state changes). */
  ha_drift: { args: { partitionId: string }; result: DriftReport };
  /** The header's HA warnings: groups with a drift or a member down. */
  ha_warnings: { args: {}; result: Array<HaWarning> };
  /** Every key with a Luna usage limit on the logged-in partitions: uses left, burn rate. */
  usage_keys: { args: {}; result: Array<UsageKeyView> };
  /** Set or raise a key's usage limit (Luna: the crypto officer or the SO). */
  set_usage_limit: { args: { partitionId: string; handle: number; limit: number }; result: ObjectSummary };
  /**
   * The readiness of `partition_id` (every logged-in partition when `None`) under `policy`
   * (`nist`, `cnsa2`, or a policy file: see `observe::Observe::pqc_policy`), judged today.
   */
  pqc_readiness: { args: { partitionId: string | null; policy: string }; result: Readiness };
  /**
   * Save a CycloneDX 1.6 CBOM of the same keys where the officer chooses, never over an
   * existing file; the path written, or `None` when the dialog is cancelled.
   */
  pqc_export_cbom: { args: { partitionId: string | null; policy: string }; result: string | null };
  /** The probes this partition offers (and why others are not). */
  probe_catalog: { args: { partitionId: string }; result: Array<ProbeChoice> };
  /** Run a probe with live progress; `cancel_job(job_id)` stops it. */
  run_probe: { args: { partitionId: string; jobId: string; request: ProbeRequest; onEvent: Channel<ProbeProgress> }; result: ProbeReport };
  /** The kept runs, newest first. */
  probe_history: { args: {}; result: Array<ProbeSummary> };
  probe_report: { args: { id: string }; result: ProbeReport };
  /** One of a kept run's charts as SVG. */
  probe_chart: { args: { id: string; which: ProbeChart }; result: string };
  /** A kept run's figures as CSV. */
  probe_csv: { args: { id: string }; result: string };
  /** The live latency chart from the points the window has received so far. */
  probe_live_chart: { args: { title: string; points: Array<SeriesPoint> }; result: string };
  /** How many HSMs and sessions a target rate needs, from a measured ceiling. */
  probe_capacity: { args: { ceilingPerS: number; meanLatencyUs: number; targetPerS: number }; result: CapacityPlan };
}

export type CommandName = keyof Commands;

/** Every command, in the order the surface lists them. */
export const COMMAND_NAMES: readonly CommandName[] = ["overview", "app_info", "get_settings", "update_settings", "cancel_job", "save_export", "connections", "add_module", "pick_module_file", "remove_module", "partition", "mechanisms", "save_mechanisms_csv", "login", "logout", "change_pin", "set_user_pin", "set_role_pin", "token_contents", "init_token", "list_keys", "key_details", "describe_key_spec", "generate_key", "deletion_phrase", "destroy_keys", "export_public_key", "save_public_key", "issue_certificate", "certificate_request", "openpgp_key", "save_openpgp_certificate", "save_minisign_public_key", "save_key_succession", "import_objects", "certificate_details", "save_object", "editable_attributes", "set_attributes", "object_uri", "try_tool_line", "key_check_value", "wrap_key", "unwrap_key", "signing_keys", "inspect_files", "pick_files", "pick_folder", "sign_files", "verify_signature", "audit_status", "audit_records", "audit_verify", "audit_export", "audit_checkpoint", "audit_checkpoints", "audit_public_key", "audit_rotate_key", "audit_days", "hss_keys", "stats", "stats_history", "stats_chart", "ha_groups", "ha_group", "ha_drift", "ha_warnings", "usage_keys", "set_usage_limit", "pqc_readiness", "pqc_export_cbom", "probe_catalog", "run_probe", "probe_history", "probe_report", "probe_chart", "probe_csv", "probe_live_chart", "probe_capacity"];

/** Every event the backend emits to the window, by name, with its payload. */
export interface Events {
  /** Changes the window should show: audit records, partitions, the trail's key. */
  "console-event": ConsoleEvent;
}

export type EventName = keyof Events;

export const EVENT_NAMES: readonly EventName[] = ["console-event"];

/** Sends one command; resolves with its result or rejects with the backend's error. */
export type Invoker = <K extends CommandName>(command: K, args: Commands[K]["args"]) => Promise<Commands[K]["result"]>;

function channel<T>(onMessage: (message: T) => void): Channel<T> {
  const ch = new Channel<T>();
  ch.onmessage = onMessage;
  return ch;
}

/** A typed function per command, over an invoker (`ipc.ts` passes Tauri's, with errors mapped). */
export function commandFunctions(invoke: Invoker) {
  return {
    /**
     * Every connected partition (login, PIN state, load, pool, HA) and the lists that need
     * attention across them: keys running out, certificates expiring, the audit trail's
     * verification, failed operations of the last 24 hours.
     */
    overview: () => invoke("overview", {}),
    /** The window's first request: whether the console started, and if not, why. */
    appInfo: () => invoke("app_info", {}),
    getSettings: () => invoke("get_settings", {}),
    /** Validate, store and audit new settings. */
    updateSettings: (settings: Settings) => invoke("update_settings", { settings }),
    /** Stop a running job (verification, signing batch, probe); false if none has that ID. */
    cancelJob: (jobId: string) => invoke("cancel_job", { jobId }),
    /**
     * Save an export the window produced (a chart as SVG or PNG, numbers as CSV or JSON)
     * where the officer chooses; `None` when the dialog is cancelled.
     */
    saveExport: (fileName: string, kind: ExportKind, content: ExportContent) => invoke("save_export", { fileName, kind, content }),
    /** Every loaded module with its slots and tokens. */
    connections: () => invoke("connections", {}),
    /** Load a PKCS#11 module by path (checked for a PKCS#11 entry point before it is loaded). */
    addModule: (path: string) => invoke("add_module", { path }),
    /** The native file dialog for choosing a module; `None` when the officer cancels. */
    pickModuleFile: () => invoke("pick_module_file", {}),
    /** Forget a module (its partitions log out). */
    removeModule: (moduleId: string) => invoke("remove_module", { moduleId }),
    partition: (partitionId: string) => invoke("partition", { partitionId }),
    mechanisms: (partitionId: string) => invoke("mechanisms", { partitionId }),
    /** The mechanism table as CSV where the officer chooses; `None` when cancelled. */
    saveMechanismsCsv: (partitionId: string) => invoke("save_mechanisms_csv", { partitionId }),
    /** The PIN crosses IPC once, goes straight into zeroizing memory, and is never stored. */
    login: (partitionId: string, user: UserKind, pin: string) => invoke("login", { partitionId, user, pin }),
    logout: (partitionId: string) => invoke("logout", { partitionId }),
    /** Change the PIN of the role logged in (`C_SetPIN`); a wrong current PIN is tried once. */
    changePin: (partitionId: string, oldPin: string, newPin: string) => invoke("change_pin", { partitionId, oldPin, newPin }),
    /** The SO sets or resets the user PIN (`C_InitPIN`). */
    setUserPin: (partitionId: string, newPin: string) => invoke("set_user_pin", { partitionId, newPin }),
    /** The Crypto Officer sets a Luna role's PIN (`CA_InitRolePIN`). */
    setRolePin: (partitionId: string, role: UserKind, newPin: string) => invoke("set_role_pin", { partitionId, role, newPin }),
    /** What the token holds, for the Initialize dialog. */
    tokenContents: (partitionId: string) => invoke("token_contents", { partitionId }),
    /**
     * Initialize the token (`C_InitToken`): the label typed as confirmation, and for the
     * partition holding the audit trail's key, the second confirmation.
     */
    initToken: (partitionId: string, soPin: string, request: InitTokenRequest) => invoke("init_token", { partitionId, soPin, request }),
    listKeys: (partitionId: string) => invoke("list_keys", { partitionId }),
    /** Every attribute of one object, decoded. */
    keyDetails: (partitionId: string, handle: number) => invoke("key_details", { partitionId, handle }),
    /** What a key specification means: its name, a suggested label, a time warning. */
    describeKeySpec: (spec: KeySpec, purpose: string) => invoke("describe_key_spec", { spec, purpose }),
    /**
     * Key generation runs off the UI thread; the window gets, twice a second, the elapsed time
     * and — where the module reports it (lunasim's HSS trees) — how much is built.
     */
    generateKey: (partitionId: string, request: GenerateRequest, onEvent: (message: JobEvent) => void) => invoke("generate_key", { partitionId, request, onEvent: channel(onEvent) }),
    /** The words the officer types to confirm deleting these objects. */
    deletionPhrase: (partitionId: string, handles: Array<number>) => invoke("deletion_phrase", { partitionId, handles }),
    destroyKeys: (partitionId: string, handles: Array<number>, confirmation: string) => invoke("destroy_keys", { partitionId, handles, confirmation }),
    exportPublicKey: (partitionId: string, handle: number, format: PublicKeyFormat) => invoke("export_public_key", { partitionId, handle, format }),
    /** Ask where, then write; `None` when the officer cancels the dialog. */
    savePublicKey: (partitionId: string, handle: number, format: PublicKeyFormat, fileName: string) => invoke("save_public_key", { partitionId, handle, format, fileName }),
    /** A self-signed certificate for a key, kept on the token beside it. */
    issueCertificate: (partitionId: string, handle: number, subject: string, days: number) => invoke("issue_certificate", { partitionId, handle, subject, days }),
    /** A PKCS#10 certificate request signed by the key (PEM). */
    certificateRequest: (partitionId: string, handle: number, subject: string) => invoke("certificate_request", { partitionId, handle, subject }),
    /** A signing key's OpenPGP algorithm and, once its creation time is fixed, its fingerprint. */
    openpgpKey: (partitionId: string, handle: number) => invoke("openpgp_key", { partitionId, handle }),
    /**
     * Ask where, then write the key's ASCII-armored OpenPGP certificate with this user ID;
     * `None` when the officer cancels the dialog. The first one fixes the key's creation time
     * on the token.
     */
    saveOpenpgpCertificate: (partitionId: string, handle: number, userId: string, fileName: string) => invoke("save_openpgp_certificate", { partitionId, handle, userId, fileName }),
    /** Ask where, then write an Ed25519 key's `minisign.pub`; `None` when cancelled. */
    saveMinisignPublicKey: (partitionId: string, handle: number) => invoke("save_minisign_public_key", { partitionId, handle }),
    /**
     * Ask where, then write a key succession statement from `old_key` to `new_key`, signed by
     * both (see `hsmc keys succession`); `None` when the officer cancels the dialog.
     */
    saveKeySuccession: (partitionId: string, oldKey: string, newKey: string, newKeySignsFrom: string | null, transitionEnds: string | null, confirmHss: boolean, fileName: string) => invoke("save_key_succession", { partitionId, oldKey, newKey, newKeySignsFrom, transitionEnds, confirmHss, fileName }),
    /**
     * Import a certificate (PEM, DER, a chain leaf first, `.p7b`), a public key, or a file as
     * a data object (`C_CreateObject`); a certificate of a key on the token gets its ID.
     */
    importObjects: (partitionId: string, request: ImportRequest) => invoke("import_objects", { partitionId, request }),
    /** A certificate on the token: subject, issuer, validity, key usages, fingerprints, chain. */
    certificateDetails: (partitionId: string, handle: number) => invoke("certificate_details", { partitionId, handle }),
    /**
     * Export a certificate, public key or data object where the officer chooses (never over an
     * existing file); `null` when the dialog is cancelled.
     */
    saveObject: (partitionId: string, handle: number, format: ObjectFormat, fileName: string) => invoke("save_object", { partitionId, handle, format, fileName }),
    /**
     * What the attribute editor may offer for an object (by `CKA_MODIFIABLE` and PKCS#11's
     * rules), and the objects that move with a new ID.
     */
    editableAttributes: (partitionId: string, handle: number) => invoke("editable_attributes", { partitionId, handle }),
    /**
     * Change label, ID, dates or flags (`C_SetAttributeValue`); a new ID moves the pair's other
     * half and its certificates along.
     */
    setAttributes: (partitionId: string, handle: number, changes: AttributeChanges) => invoke("set_attributes", { partitionId, handle, changes }),
    /**
     * The object's PKCS#11 URI (RFC 7512), its token's and module's, and for a private key the
     * command lines of other tools that use it.
     */
    objectUri: (partitionId: string, handle: number) => invoke("object_uri", { partitionId, handle }),
    /**
     * Test a key's tool line: run it as printed against a throwaway file, with the logged-in
     * session's PIN handed over in a private file (never shown), then the tool's own check.
     * Audited before it runs.
     */
    tryToolLine: (partitionId: string, handle: number, tool: string) => invoke("try_tool_line", { partitionId, handle, tool }),
    /** An AES or generic secret key's check value (first 3 bytes of its CKA_CHECK_VALUE). */
    keyCheckValue: (partitionId: string, handle: number) => invoke("key_check_value", { partitionId, handle }),
    /**
     * Wrap an extractable key under another key on the token into a file the officer chooses
     * (never over an existing one); `null` when the dialog is cancelled. `anyWrappingKey`: the
     * officer confirmed wrapping a key without CKA_WRAP_WITH_TRUSTED.
     */
    wrapKey: (partitionId: string, handle: number, wrappingHandle: number, fileName: string, oaepHash: OaepHash | null, anyWrappingKey: boolean) => invoke("wrap_key", { partitionId, handle, wrappingHandle, fileName, oaepHash, anyWrappingKey }),
    /** Unwrap a wrap file with the matching key, restoring its attributes. */
    unwrapKey: (partitionId: string, path: string, unwrappingHandle: number, label: string | null) => invoke("unwrap_key", { partitionId, path, unwrappingHandle, label }),
    /** Private keys on the partition that can sign in the formats the console writes. */
    signingKeys: (partitionId: string) => invoke("signing_keys", { partitionId }),
    /** What the drop list shows at once: name, size, or why a path cannot be signed. */
    inspectFiles: (paths: Array<string>) => invoke("inspect_files", { paths }),
    /** The native dialog for choosing files (one or several). */
    pickFiles: (title: string, multiple: boolean) => invoke("pick_files", { title, multiple }),
    /** The native dialog for choosing a folder; `None` when cancelled. */
    pickFolder: (title: string) => invoke("pick_folder", { title }),
    /**
     * Sign a batch with progress per file; `cancel_job(job_id)` stops it between files.
     * `context_pin`: the PIN for a key that wants one for each signature, given once with the
     * officer's consent for the batch (`SignRequest::context_login`).
     */
    signFiles: (partitionId: string, jobId: string, request: SignRequest, contextPin: string | null, onEvent: (message: SignProgress) => void) => invoke("sign_files", { partitionId, jobId, request, contextPin, onEvent: channel(onEvent) }),
    /** Verify a file against a signature offline, with the software verifiers only. */
    verifySignature: (file: string, signature: string, publicKey: string | null, context: string | null) => invoke("verify_signature", { file, signature, publicKey, context }),
    auditStatus: () => invoke("audit_status", {}),
    /** A page of records matching the filter, newest first. */
    auditRecords: (query: Query) => invoke("audit_records", { query }),
    /** Verify the whole trail with progress; `cancel_job(job_id)` stops it. */
    auditVerify: (jobId: string, onEvent: (message: JobEvent) => void) => invoke("audit_verify", { jobId, onEvent: channel(onEvent) }),
    /** Export the records in the range where the officer chooses; `None` when cancelled. */
    auditExport: (format: ExportFormat, range: Range) => invoke("audit_export", { format, range }),
    /** Write a signed checkpoint now. */
    auditCheckpoint: () => invoke("audit_checkpoint", {}),
    /** Every checkpoint with its signature checked. */
    auditCheckpoints: () => invoke("audit_checkpoints", {}),
    /** The checkpoint signing key's public half (PEM). */
    auditPublicKey: () => invoke("audit_public_key", {}),
    /** Start a new key epoch (the window asks for confirmation first). */
    auditRotateKey: () => invoke("audit_rotate_key", {}),
    /** Records and failures per day for the last `days` days (the Audit view's bar chart). */
    auditDays: (days: number) => invoke("audit_days", { days }),
    /** Every HSS key on the logged-in partitions, with burn rates from the audit trail. */
    hssKeys: () => invoke("hss_keys", {}),
    /** One statistics sample of a partition (kept for the charts). */
    stats: (partitionId: string) => invoke("stats", { partitionId }),
    /** The samples taken so far. */
    statsHistory: (partitionId: string) => invoke("stats_history", { partitionId }),
    /** A statistics chart as SVG. */
    statsChart: (partitionId: string, which: StatsChart) => invoke("stats_chart", { partitionId, which }),
    /** Every HA group of the loaded modules (their members, without statistics). */
    haGroups: () => invoke("ha_groups", {}),
    /**
     * One HA group, with its members' statistics side by side; null when the partition is
     * not an HA group's virtual slot.
     */
    haGroup: (partitionId: string) => invoke("ha_group", { partitionId }),
    /** Compare the group's members object by object now (recorded when the state changes). */
    haDrift: (partitionId: string) => invoke("ha_drift", { partitionId }),
    /** The header's HA warnings: groups with a drift or a member down. */
    haWarnings: () => invoke("ha_warnings", {}),
    /** Every key with a Luna usage limit on the logged-in partitions: uses left, burn rate. */
    usageKeys: () => invoke("usage_keys", {}),
    /** Set or raise a key's usage limit (Luna: the crypto officer or the SO). */
    setUsageLimit: (partitionId: string, handle: number, limit: number) => invoke("set_usage_limit", { partitionId, handle, limit }),
    /**
     * The readiness of `partition_id` (every logged-in partition when `None`) under `policy`
     * (`nist`, `cnsa2`, or a policy file: see `observe::Observe::pqc_policy`), judged today.
     */
    pqcReadiness: (partitionId: string | null, policy: string) => invoke("pqc_readiness", { partitionId, policy }),
    /**
     * Save a CycloneDX 1.6 CBOM of the same keys where the officer chooses, never over an
     * existing file; the path written, or `None` when the dialog is cancelled.
     */
    pqcExportCbom: (partitionId: string | null, policy: string) => invoke("pqc_export_cbom", { partitionId, policy }),
    /** The probes this partition offers (and why others are not). */
    probeCatalog: (partitionId: string) => invoke("probe_catalog", { partitionId }),
    /** Run a probe with live progress; `cancel_job(job_id)` stops it. */
    runProbe: (partitionId: string, jobId: string, request: ProbeRequest, onEvent: (message: ProbeProgress) => void) => invoke("run_probe", { partitionId, jobId, request, onEvent: channel(onEvent) }),
    /** The kept runs, newest first. */
    probeHistory: () => invoke("probe_history", {}),
    probeReport: (id: string) => invoke("probe_report", { id }),
    /** One of a kept run's charts as SVG. */
    probeChart: (id: string, which: ProbeChart) => invoke("probe_chart", { id, which }),
    /** A kept run's figures as CSV. */
    probeCsv: (id: string) => invoke("probe_csv", { id }),
    /** The live latency chart from the points the window has received so far. */
    probeLiveChart: (title: string, points: Array<SeriesPoint>) => invoke("probe_live_chart", { title, points }),
    /** How many HSMs and sessions a target rate needs, from a measured ceiling. */
    probeCapacity: (ceilingPerS: number, meanLatencyUs: number, targetPerS: number) => invoke("probe_capacity", { ceilingPerS, meanLatencyUs, targetPerS }),
  };
}
