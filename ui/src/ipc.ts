// Typed calls into the Rust side. Every command returns its result or throws a
// CommandError carrying the backend's ApiError (code, message, details, suggestion,
// PKCS#11 function and code). Types come from the generated bindings.
import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type {
  ApiError,
  AppStatus,
  AuditStatusView,
  Checkpoint,
  ConnectionView,
  ConsoleEvent,
  DestroyResult,
  ExportFormat,
  ExportSummary,
  ExportedPublicKey,
  GenerateRequest,
  GeneratedKey,
  JobEvent,
  KeyDetails,
  KeySpec,
  KeySpecInfo,
  LoginResult,
  MechanismView,
  ModuleView,
  ObjectSummary,
  PartitionView,
  PublicKeyFormat,
  Query,
  Range,
  RecordView,
  Settings,
  UserKind,
  Verdict,
  CertificateView,
  FileCheck,
  SignProgress,
  SignReport,
  SignRequest,
  SigningKeyView,
  VerifyReport,
  HssKeyView,
  StatsPoint,
  StatsSnapshot,
  CapacityPlan,
  ProbeChoice,
  ProbeProgress,
  ProbeReport,
  ProbeRequest,
  ProbeSummary,
  SeriesPoint,
  CheckpointView,
} from "./bindings";

export class CommandError extends Error {
  readonly api: ApiError;
  constructor(api: ApiError) {
    super(api.message);
    this.api = api;
  }
}

export function toApiError(e: unknown): ApiError {
  if (e instanceof CommandError) return e.api;
  if (e && typeof e === "object" && "code" in e && "message" in e) return e as ApiError;
  return { code: "INTERNAL", message: String(e), details: null, suggestion: null, pkcs11: null };
}

async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    throw new CommandError(toApiError(e));
  }
}

function channel(onEvent: (e: JobEvent) => void): Channel<JobEvent> {
  const ch = new Channel<JobEvent>();
  ch.onmessage = onEvent;
  return ch;
}

export const api = {
  appInfo: () => call<AppStatus>("app_info"),
  connections: () => call<ConnectionView[]>("connections"),
  addModule: (path: string) => call<ModuleView>("add_module", { path }),
  pickModuleFile: () => call<string | null>("pick_module_file"),
  removeModule: (moduleId: string) => call<null>("remove_module", { moduleId }),
  partition: (partitionId: string) => call<PartitionView>("partition", { partitionId }),
  mechanisms: (partitionId: string) => call<MechanismView[]>("mechanisms", { partitionId }),
  saveMechanismsCsv: (partitionId: string) => call<string | null>("save_mechanisms_csv", { partitionId }),
  login: (partitionId: string, user: UserKind, pin: string) => call<LoginResult>("login", { partitionId, user, pin }),
  logout: (partitionId: string) => call<null>("logout", { partitionId }),
  listKeys: (partitionId: string) => call<ObjectSummary[]>("list_keys", { partitionId }),
  keyDetails: (partitionId: string, handle: number) => call<KeyDetails>("key_details", { partitionId, handle }),
  describeKeySpec: (spec: KeySpec, purpose: string) => call<KeySpecInfo>("describe_key_spec", { spec, purpose }),
  generateKey: (partitionId: string, request: GenerateRequest, onEvent: (e: JobEvent) => void) =>
    call<GeneratedKey>("generate_key", { partitionId, request, onEvent: channel(onEvent) }),
  deletionPhrase: (partitionId: string, handles: number[]) => call<string>("deletion_phrase", { partitionId, handles }),
  destroyKeys: (partitionId: string, handles: number[], confirmation: string) =>
    call<DestroyResult>("destroy_keys", { partitionId, handles, confirmation }),
  exportPublicKey: (partitionId: string, handle: number, format: PublicKeyFormat) =>
    call<ExportedPublicKey>("export_public_key", { partitionId, handle, format }),
  savePublicKey: (partitionId: string, handle: number, format: PublicKeyFormat, fileName: string) =>
    call<string | null>("save_public_key", { partitionId, handle, format, fileName }),
  getSettings: () => call<Settings>("get_settings"),
  updateSettings: (settings: Settings) => call<Settings>("update_settings", { settings }),
  auditStatus: () => call<AuditStatusView>("audit_status"),
  auditRecords: (query: Query) => call<RecordView[]>("audit_records", { query }),
  auditVerify: (jobId: string, onEvent: (e: JobEvent) => void) => call<Verdict>("audit_verify", { jobId, onEvent: channel(onEvent) }),
  auditExport: (format: ExportFormat, range: Range) => call<ExportSummary | null>("audit_export", { format, range }),
  auditCheckpoint: () => call<Checkpoint>("audit_checkpoint"),
  cancelJob: (jobId: string) => call<boolean>("cancel_job", { jobId }),
  signingKeys: (partitionId: string) => call<SigningKeyView[]>("signing_keys", { partitionId }),
  inspectFiles: (paths: string[]) => call<FileCheck[]>("inspect_files", { paths }),
  pickFiles: (title: string, multiple: boolean) => call<string[]>("pick_files", { title, multiple }),
  pickFolder: (title: string) => call<string | null>("pick_folder", { title }),
  signFiles: (partitionId: string, jobId: string, request: SignRequest, onEvent: (e: SignProgress) => void) => {
    const ch = new Channel<SignProgress>();
    ch.onmessage = onEvent;
    return call<SignReport>("sign_files", { partitionId, jobId, request, onEvent: ch });
  },
  verifySignature: (file: string, signature: string, publicKey: string | null, context: string | null) =>
    call<VerifyReport>("verify_signature", { file, signature, publicKey, context }),
  issueCertificate: (partitionId: string, handle: number, subject: string, days: number) =>
    call<CertificateView>("issue_certificate", { partitionId, handle, subject, days }),
  certificateRequest: (partitionId: string, handle: number, subject: string) =>
    call<string>("certificate_request", { partitionId, handle, subject }),
  hssKeys: () => call<HssKeyView[]>("hss_keys"),
  stats: (partitionId: string) => call<StatsSnapshot>("stats", { partitionId }),
  statsHistory: (partitionId: string) => call<StatsPoint[]>("stats_history", { partitionId }),
  statsChart: (partitionId: string, which: "load" | "console") => call<string>("stats_chart", { partitionId, which }),
  probeCatalog: (partitionId: string) => call<ProbeChoice[]>("probe_catalog", { partitionId }),
  runProbe: (partitionId: string, jobId: string, request: ProbeRequest, onEvent: (e: ProbeProgress) => void) => {
    const ch = new Channel<ProbeProgress>();
    ch.onmessage = onEvent;
    return call<ProbeReport>("run_probe", { partitionId, jobId, request, onEvent: ch });
  },
  probeHistory: () => call<ProbeSummary[]>("probe_history"),
  probeReport: (id: string) => call<ProbeReport>("probe_report", { id }),
  probeChart: (id: string, which: "latency" | "histogram" | "sweep") => call<string>("probe_chart", { id, which }),
  probeCsv: (id: string) => call<string>("probe_csv", { id }),
  probeLiveChart: (title: string, points: SeriesPoint[]) => call<string>("probe_live_chart", { title, points }),
  probeCapacity: (ceilingPerS: number, meanLatencyUs: number, targetPerS: number) =>
    call<CapacityPlan>("probe_capacity", { ceilingPerS, meanLatencyUs, targetPerS }),
  auditCheckpoints: () => call<CheckpointView[]>("audit_checkpoints"),
  auditPublicKey: () => call<string>("audit_public_key"),
  auditRotateKey: () => call<number>("audit_rotate_key"),
  saveExport: (fileName: string, kind: "svg" | "png" | "csv" | "json" | "pem", content: { text: string } | { base64: string }) =>
    call<string | null>("save_export", {
      fileName,
      kind,
      text: "text" in content ? content.text : null,
      base64: "base64" in content ? content.base64 : null,
    }),
};

export function onConsoleEvent(cb: (e: ConsoleEvent) => void): Promise<UnlistenFn> {
  return listen<ConsoleEvent>("console-event", (ev) => cb(ev.payload));
}

export function newJobId(): string {
  return `job-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
