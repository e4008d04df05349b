// Generated from the Rust side by `src-tauri/src/ipc.rs`. Do not edit:
// run `make bindings` after changing a command or a type that crosses IPC.

export type Action = "use_keys" | "generate_keys" | "import_objects" | "edit_attributes" | "delete_objects" | "wrap_keys" | "unwrap_keys" | "change_own_pin" | "set_user_pin" | "set_role_pin" | "init_token" | "trust_keys";

export type Advice = "signing" | "signing_cnsa" | "ca" | "certificate" | "kem" | "kem_cnsa" | "aes" | "secret";

export type Algorithm = { 
/**
 * "RSA-2048", "ECDSA P-256", "Ed25519", "ML-DSA-65", "AES-256", "HSS/LMS", …
 */
name: string, family: Family, 
/**
 * Classical security strength in bits (SP 800-57), where known.
 */
classical_bits: number | null, 
/**
 * NIST PQC security category, 0–5 (0: none).
 */
nist_category: number, class: QuantumClass, };

export type ApiError = { code: ErrorCode, 
/**
 * English (what `hsmc` and the logs show).
 */
message: string, details: string | null, suggestion: string | null, pkcs11: Pkcs11Error | null, 
/**
 * The message and suggestion as catalog keys with their arguments, so the UI can show
 * them in the officer's language (absent for texts that have no key yet).
 */
i18n?: ErrorText, };

export type AppInfo = { version: string, data_dir: string, audit_location: string, audit_store: AuditStoreKind, builtin_available: boolean, builtin_note: string | null, 
/**
 * Remembered modules that could not be loaded at start, and why.
 */
startup_warnings: Array<string>, };

export type AppStatus = { info: AppInfo | null, startup_error: ApiError | null, };

export type Assessed = { 
/**
 * `PRIVATE_KEY`, `PUBLIC_KEY`, `SECRET_KEY`.
 */
object_class: string, label: string, id_hex: string, 
/**
 * `uid:` reference (see `ObjectSummary::unique_id`).
 */
unique_id: string | null, algorithm: Algorithm, purpose: Purpose | null, 
/**
 * What to move to, when the policy dates it or leaves it outside.
 */
successor: Successor | null, 
/**
 * The key's `CKA_START_DATE` and `CKA_END_DATE` (`YYYY-MM-DD`), where set.
 */
start_date: string | null, end_date: string | null, 
/**
 * What the audit trail says of its use (filled by the caller that reads the trail).
 */
evidence: Evidence, verdict: string, 
/**
 * `YYYY-MM-DD`: in use after this day, the algorithm is deprecated.
 */
deprecated_after: string | null, disallowed_after: string | null, status: PqcStatus, };

export type AttentionItem = { kind: AttentionKind, severity: Severity, partition_id: string | null, partition_label: string | null, 
/**
 * What it is about: a key's or certificate's label, an action.
 */
subject: string | null, 
/**
 * Days until it runs out or expires (negative: already past).
 */
days_left: number | null, 
/**
 * Signatures or uses left, and of how many (decimal; HSS totals exceed 2^53).
 */
remaining: number | null, total: string | null, 
/**
 * When: the expiry date, the projected exhaustion, the record's time.
 */
at: string | null, message: Text, link: Link, };

export type AttentionKind = "module" | "token" | "login" | "user_pin" | "so_pin" | "breaker" | "load" | "ha" | "hss_key" | "usage_limit" | "certificate" | "audit" | "failure" | "pqc";

export type AttrDisplay = "bool" | "number" | "text" | "date" | "hex" | "name";

export type AttrStatus = "value" | "sensitive" | "unavailable";

export type AttributeChanges = { label: string | null, 
/**
 * The new `CKA_ID`, hex.
 */
id_hex: string | null, 
/**
 * `YYYY-MM-DD`, or empty to clear.
 */
start_date: string | null, end_date: string | null, 
/**
 * Booleans by name (`sign`, `sensitive`, …).
 */
flags: Array<FlagChange>, };

export type AttributeView = { attribute: string, code: number, status: AttrStatus, display: AttrDisplay, value: string | null, };

export type AttributesChanged = { summary: ObjectSummary, 
/**
 * What was changed, in words (`label`, `id`, `sign=false`, …).
 */
changed: Array<string>, 
/**
 * Objects whose ID moved with it (`public key 'x'`, `certificate 'x'`).
 */
moved: Array<string>, };

export type AuditKeyView = { "state": "no_key_yet" } | { "state": "locked", holder: string, } | { "state": "unlocked", epoch: number, holder: string, };

export type AuditSettings = { 
/**
 * SQLite file or `postgres://` URL; `None` = `audit.db` in the data directory.
 */
location: string | null, checkpoint_every: number, checkpoint_minutes: number, auto_verify: AutoVerify, };

export type AuditStatusView = { log_id: string, location: string, store: AuditStoreKind, key: AuditKeyView, records: number, 
/**
 * Events waiting for the key (chained at the next unlock).
 */
pending: number, last_seq: number | null, checkpoints: number, last_checkpoint_time: string | null, last_checkpoint_seq: number | null, last_verification: LastVerification | null, 
/**
 * As in the settings.
 */
auto_verify: AutoVerify, };

export type AuditStoreKind = "sqlite" | "postgres";

export type AuditSummary = { 
/**
 * `None` when the trail's status cannot be read.
 */
key: AuditKeyView | null, records: number, pending: number, 
/**
 * The newest verification, this run's or the newest one the trail records.
 */
last_verification: LastVerification | null, auto_verify: AutoVerify, items: Array<AttentionItem>, };

export type AutoVerify = "off" | "hourly" | "daily";

export type BatchKey = { key: SigningKeyView, 
/**
 * The formats it made: with several keys, a format only some of them can make
 * (OpenPGP, minisign, SSHSIG) is made by those.
 */
formats: Array<SignFormat>, 
/**
 * What its outputs' names add before the format's suffix (`FILE.<stem>.sig`), with
 * several keys; none for a single key (`FILE.sig`).
 */
name_stem: string | null, signatures_made: number, hss_remaining_after: number | null, };

export type BinRate = { bin: string, count: number, 
/**
 * Per second since the previous sample (≥ 5 s before).
 */
per_second: number | null, };

export type BreakerState = "closed" | "open" | "half_open";

export type CallProfile = "pool" | "session-per-call" | "find-per-call";

export type Capabilities = { sign: boolean, verify: boolean, encrypt: boolean, decrypt: boolean, wrap: boolean, unwrap: boolean, derive: boolean, encapsulate: boolean, decapsulate: boolean, };

export type Capacity = { window_days: number, 
/**
 * Signatures in the window.
 */
signatures: number, peak_per_minute: number, 
/**
 * `YYYY-MM-DDTHH:MM` (UTC).
 */
peak_minute: string | null, peak_per_day: number, 
/**
 * `YYYY-MM-DD`.
 */
peak_day: string | null, 
/**
 * Keys with signatures in the window, busiest first.
 */
keys: Array<KeyLoad>, 
/**
 * By the operation the load moves to.
 */
operations: Array<OperationLoad>, 
/**
 * Signatures no probe operation fits (not costed).
 */
uncosted_signatures: number, 
/**
 * The busiest minute's load on one HSM with the successors, as a share of its ceiling.
 */
peak_share: number | null, 
/**
 * How many times the busiest minute could grow within 80 % of the ceiling.
 */
headroom: number | null, 
/**
 * HSMs the busiest minute takes at 80 % of the ceiling.
 */
hsms: number | null, verdict: CapacityVerdict, };

export type CapacityPlan = { target_per_s: number, ceiling_per_s: number, hsms: number, per_hsm_per_s: number, pool_size_per_hsm: number, explanation: string, };

export type CapacityVerdict = "no_use" | "needs_probe" | "keeps_up" | "does_not_keep_up";

export type Ceiling = { 
/**
 * The probe operation (`ml-dsa-65-sign`).
 */
op: string, 
/**
 * The best throughput of the run (operations per second).
 */
per_s: number, probe_id: string, 
/**
 * When it was measured (RFC 3339).
 */
measured_at: string, 
/**
 * The probe found the ceiling on the computer that ran it, not in the HSM (its own CPU
 * was saturated): the HSM may do more.
 */
client_bound: boolean, };

export type CertificateDetails = { handle: number, label: string, id_hex: string, info: CertificateInfo, 
/**
 * Subjects of the issuers found on the token, nearest first.
 */
chain: Array<string>, 
/**
 * The chain ends at a self-signed certificate on the token.
 */
chain_complete: boolean, 
/**
 * The label of the key pair whose certificate this is.
 */
key_label: string | null, 
/**
 * Why it should not sign code (expired, key usage, EKU).
 */
signing_warnings: Array<string>, 
/**
 * The same in a form each language translates.
 */
signing_warnings_text: Array<Text>, };

export type CertificateInfo = { subject: string, issuer: string, 
/**
 * Hex, as `openssl x509 -serial` prints it.
 */
serial: string, 
/**
 * RFC 3339.
 */
not_before: string, not_after: string, 
/**
 * Expired (now past `not_after`).
 */
expired: boolean, 
/**
 * Days until `not_after` (negative once expired).
 */
days_left: number, 
/**
 * A CA certificate (basic constraints cA).
 */
is_ca: boolean, self_signed: boolean, 
/**
 * Key usage bits by name (`digitalSignature`, `keyCertSign`, …); empty when absent.
 */
key_usage: Array<string>, 
/**
 * Extended key usages by name (`codeSigning`, …) or OID.
 */
extended_key_usage: Array<string>, sha256_fingerprint: string, 
/**
 * The fingerprint of its public key, as the console shows keys' (SHA-256 of the SPKI).
 */
public_key_fingerprint: string | null, 
/**
 * Its public key's algorithm as the console names keys' ("RSA-2048", "ECDSA P-256",
 * "ML-DSA-65", …), when the console reads the key.
 */
public_key_algorithm: string | null, 
/**
 * The algorithm its issuer signed it with: "RSA", "ECDSA", "Ed25519", "ML-DSA-65",
 * "SLH-DSA-SHA2-128s", "HSS/LMS", or the OID.
 */
signature_algorithm: string, };

export type CertificateView = { pem: string, subject: string, serial: string, not_after: string, fingerprint: string, stored_on_token: boolean, };

export type Checkpoint = { log_id: string, checkpoint_no: number, 
/**
 * The last record covered (0 = none yet).
 */
seq: number, head_hmac: string, head_digest: string, time: string, epoch: number, 
/**
 * `ML-DSA-65` or `ECDSA-P256`.
 */
algorithm: string, 
/**
 * SubjectPublicKeyInfo, DER, hex.
 */
public_key: string, signature: string, };

export type CheckpointSummary = { checkpoint_no: number, seq: number, time: string, algorithm: string, };

export type CheckpointView = { checkpoint_no: number, seq: number, time: string, epoch: number, algorithm: string, 
/**
 * SHA-256 of the signing key's SPKI.
 */
key_fingerprint: string, 
/**
 * The key is the one held by the HSM (when the holder is logged in).
 */
key_is_hsm_key: boolean | null, signature_valid: boolean, problem: string | null, };

export type ClassCount = { class: string, count: number, };

export type ConnectionView = { module: ModuleView, slots: Array<SlotView>, 
/**
 * Why the slots could not be listed (the module stays loaded).
 */
error: ApiError | null, };

export type ConsoleEvent = { "kind": "audit_record", record: RecordView, } | { "kind": "audit_changed", } | { "kind": "partition_changed", partition_id: string, } | { "kind": "audit_key", state: AuditKeyView, } | { "kind": "ha_changed", partition_id: string, };

export type ContextLogin = "per_signature" | "once_per_batch";

export type Counts = { quantum_vulnerable: number, post_quantum: number, not_quantum_relevant: number, unknown: number, past_due: number, deprecated: number, due_within_a_year: number, };

export type Curve = "P256" | "P384" | "Ed25519";

export type DayCount = { day: string, records: number, failures: number, };

export type DestroyFailure = { handle: number, label: string, error: ApiError, };

export type DestroyResult = { destroyed: Array<number>, failed: Array<DestroyFailure>, };

export type Difference = { 
/**
 * "private key 'fw_sign' (id 0a0b…)" or "policy 21 (Allow high availability recovery)".
 */
object: string, 
/**
 * The same in a form each language translates.
 */
object_text: Text, kind: DifferenceKind, 
/**
 * The attribute that differs (`label`, `kcv`, …); `None` for a missing object.
 */
field: string | null, 
/**
 * The same in a form each language translates.
 */
field_text: Text | null, values: Array<MemberValue>, 
/**
 * The members that drifted: those lacking the object, or holding another value than
 * most members (than the first member when there is no majority).
 */
members: Array<number>, };

export type DifferenceKind = "missing" | "different";

export type DigestAlg = "SHA-256" | "SHA-384" | "SHA-512" | "SHAKE128" | "SHAKE256";

export type DriftMember = { position: number, serial: string, partition_id: string | null, check: MemberCheck, 
/**
 * Without a login only public objects are compared.
 */
logged_in: boolean, objects: number | null, 
/**
 * Why reading it failed (`check` is `failed`), in words each language translates.
 */
error: ApiError | null, };

export type DriftReport = { partition_id: string, group_label: string, group_serial: string, checked_at: string, verdict: DriftVerdict, 
/**
 * "in sync", "drift on member 2", "member 2 down; members 1, 3 in sync".
 */
summary: string, 
/**
 * The same in a form each language translates.
 */
summary_text: Text, members: Array<DriftMember>, differences: Array<Difference>, policy_differences: Array<Difference>, drifting_members: Array<number>, down_members: Array<number>, 
/**
 * How the KCVs were computed (shown with them).
 */
kcv_method: string, kcv_method_text: Text, 
/**
 * What limited the check (members not logged in, …).
 */
notes: Array<string>, 
/**
 * The same notes in a form each language translates.
 */
notes_text: Array<Text>, };

export type DriftVerdict = "in_sync" | "drift" | "member_down" | "not_comparable";

export type EditableAttributes = { handle: number, class: string, label: string, id_hex: string, start_date: string | null, end_date: string | null, 
/**
 * `CKA_MODIFIABLE` (nothing changes when false).
 */
modifiable: boolean, flags: Array<FlagOffer>, 
/**
 * Objects that share the ID and move with a new one (the other half, certificates).
 */
related: Array<string>, };

export type ErrorClass = "Disconnected" | "SessionInvalid" | "RetryOnly" | "Pin" | "KeyNotFound" | "Busy" | "Operation";

export type ErrorCode = "KEY_NOT_FOUND" | "HSM_DISCONNECTED" | "HSM_UNAVAILABLE" | "HSM_ERROR" | "PIN_INCORRECT" | "PIN_LOCKED" | "PIN_INVALID" | "PIN_EXPIRED" | "NOT_LOGGED_IN" | "NOT_AUTHORIZED" | "INVALID_ALGORITHM" | "INVALID_INPUT" | "SIGNATURE_INVALID" | "BUSY" | "AUDIT_UNAVAILABLE" | "AUDIT_BROKEN" | "MODULE_LOAD_FAILED" | "NOT_PKCS11" | "MODULE_MISBEHAVED" | "TOKEN_MISBEHAVED" | "UNSUPPORTED" | "PARTITION_NOT_FOUND" | "IO" | "CANCELLED" | "KEY_USAGE_EXHAUSTED" | "TIMESTAMP_FAILED" | "FILE_CHANGED" | "INTERNAL";

export type ErrorText = { message: string | null, suggestion: string | null, details?: string, 
/**
 * The placeholders of all three.
 */
args: { [key in string]: string }, };

export type Evidence = { 
/**
 * The trail records a use of the key.
 */
seen: boolean, 
/**
 * The last recorded use (RFC 3339).
 */
last_use: string | null, 
/**
 * Signatures made in the last 30 and 90 days.
 */
uses_30_days: number, uses_90_days: number, 
/**
 * The artifacts it signed last, newest first (at most five).
 */
recent_artifacts: Array<string>, };

export type ExportContent = { "text": string } | { "base64": string };

export type ExportFormat = "jsonl" | "csv";

export type ExportKind = "svg" | "png" | "csv" | "json" | "pem";

export type ExportSummary = { path: string, records: number, checkpoints: number, first_seq: number | null, last_seq: number | null, };

export type ExportedPublicKey = { format: PublicKeyFormat, file_name: string, 
/**
 * PEM text, or base64 of DER/raw bytes.
 */
text: string | null, base64: string | null, fingerprint: string, };

export type Family = "rsa" | "ecdsa" | "eddsa" | "ml-dsa" | "ml-kem" | "slh-dsa" | "hss-lms" | "aes" | "generic-secret" | "unknown";

export type FileCheck = { path: string, name: string, size: number | null, 
/**
 * Why it cannot be signed (a folder, a FIFO, empty, …).
 */
problem: string | null, 
/**
 * The same in a form each language translates.
 */
problem_text: Text | null, };

export type FileOutcome = { path: string, name: string, size: number | null, sha256: string | null, outputs: Array<OutputView>, error: ApiError | null, 
/**
 * Signed, but without the time-stamp asked for: why (the TSA was optional and failed).
 */
unstamped: Text | null, 
/**
 * With several keys: the label of the key that could not sign the file (what the
 * others signed for it was removed).
 */
failed_key: string | null, };

export type Finding = { "kind": "modified", seq: number, } | { "kind": "missing", seq: number, } | { "kind": "inserted", seq: number, } | { "kind": "reordered", seq: number, belongs_at: number, } | { "kind": "grafted", seq: number, foreign_log: string, } | { "kind": "truncated_tail", last_seq: number, checkpoint_seq: number, } | { "kind": "rollback", store_seq: number, anchor_seq: number, anchor_checkpoint: number, } | { "kind": "checkpoint_signature_invalid", checkpoint_no: number, seq: number, } | { "kind": "checkpoint_key_replaced", checkpoint_no: number, seq: number, } | { "kind": "checkpoint_mismatch", checkpoint_no: number, seq: number, } | { "kind": "modified_between", from_seq: number, to_seq: number, checkpoint_no: number, } | { "kind": "torn_last_write", seq: number, };

export type FlagChange = { name: string, value: boolean, };

export type FlagOffer = { name: string, value: boolean, 
/**
 * May be switched to the other value.
 */
changeable: boolean, 
/**
 * Why not, when not.
 */
reason: Text | null, };

export type GenerateRequest = { spec: KeySpec, label: string, 
/**
 * Token object (persistent) or session object.
 */
token: boolean, 
/**
 * Extractable for backup only: `CKA_EXTRACTABLE` true (still sensitive), and
 * `CKA_WRAP_WITH_TRUSTED` where the token has it, so the key leaves the token only
 * wrapped under a key the security officer marked trusted. Never for HSS keys.
 */
extractable: boolean, 
/**
 * `CKA_ALWAYS_AUTHENTICATE` on the private key: every signature it makes wants the
 * PIN again (a context-specific login; `hsmc keys gen --always-authenticate`). Refused
 * with a clear message where the token cannot make such keys.
 */
always_authenticate: boolean, };

export type GeneratedKey = { private_handle: number, public_handle: number | null, label: string, id_hex: string, algorithm: string, public_key: PublicKeyView | null, 
/**
 * The size the standard prescribes for this public key, checked against the token's.
 */
expected_public_key_len: number | null, elapsed_ms: number, 
/**
 * Made extractable for backup (`GenerateRequest::extractable`).
 */
extractable: boolean, 
/**
 * `CKA_WRAP_WITH_TRUSTED` as the token answers for the new key: `true`, it leaves only
 * under a trusted wrapping key; otherwise (an extractable key on a token without the
 * attribute) it could be wrapped under any wrapping key.
 */
wrap_with_trusted: boolean | null, };

export type HaGroupView = { partition_id: string, module_id: string, slot_id: number, label: string, serial: string, layout: HaLayoutView, members: Array<HaMemberView>, 
/**
 * Whether the members' own slots are visible (the drift check needs them).
 */
members_visible: boolean, 
/**
 * The last drift check of this group, if one ran.
 */
drift: DriftReport | null, 
/**
 * "member 2 down", "drift on member 2" — what the header warns about.
 */
warning: string | null, 
/**
 * The same in a form each language translates.
 */
warning_text: Text | null, };

export type HaLayoutView = "current" | "legacy";

export type HaMemberView = { 
/**
 * 1-based, in the order the HA state lists the members.
 */
position: number, serial: string, alive: boolean, 
/**
 * `CKR_OK`, or why the member is not alive (`CKR_UNABLE_TO_CONNECT`, …).
 */
status: string, 
/**
 * The member's own slot, when the module shows it (not with Luna's `HAOnly`).
 */
partition_id: string | null, slot_id: number | null, logged_in: UserKind | null, 
/**
 * From the last drift check: `true` when the member lacks or differs in something.
 */
needs_sync: boolean | null, 
/**
 * The member's own statistics (its slot's `CA_GetHSMStats`, ≥ 5 s between samples).
 */
busy_percent: number | null, commands: number | null, commands_per_second: number | null, 
/**
 * Its share of the group's commands since the previous sample.
 */
served_share_percent: number | null, 
/**
 * When its command count last grew (it served calls).
 */
last_served: string | null, };

export type HaProbeShare = { 
/**
 * Timed calls per second of the whole group (all runs' calls ÷ their time).
 */
total_per_s: number, members: Array<MemberThroughput>, 
/**
 * Where the shares come from.
 */
basis: string, 
/**
 * The same in a form each language translates (absent in results stored before).
 */
basis_text: Text | null, };

export type HaRole = "group" | "member";

export type HaSummary = { 
/**
 * The group's virtual slot (its Partition view shows the group and its drift check).
 */
partition_id: string, group: string, serial: string, role: HaRole, 
/**
 * The member's position in the group (role `member`).
 */
position: number | null, members_online: number, members_total: number, 
/**
 * Positions of the members down.
 */
down_members: Array<number>, 
/**
 * The last drift check's verdict: this console's, else the trail's last record of the
 * group; `None` when the group was never checked. (The overview does not run one.)
 */
drift: DriftVerdict | null, drift_summary: Text | null, 
/**
 * When that check ran (or, from the trail, when it recorded the state).
 */
drift_checked_at: string | null, 
/**
 * Every member online and no drift known.
 */
healthy: boolean, };

export type HaWarning = { partition_id: string, label: string, serial: string, verdict: DriftVerdict, text: string, 
/**
 * The same in a form each language translates.
 */
message: Text, };

export type HssKeyView = { partition_id: string, partition_label: string, handle: number, label: string, id_hex: string, 
/**
 * "HSS/LMS H5/W8 + H5/W8" — levels with their LMS and LM-OTS types.
 */
algorithm: string, 
/**
 * Signatures in total (decimal; can exceed 2^53).
 */
capacity: string, remaining: number | null, used_percent: number, 
/**
 * Against the thresholds in the settings.
 */
status: HssStatus, 
/**
 * Signatures per day over the last 7, 30 and 90 days, from the audit trail.
 */
per_day_7: number, per_day_30: number, per_day_90: number, 
/**
 * At the 30-day rate (or the 7- or 90-day one when that is all there is).
 */
projected_exhaustion: string | null, 
/**
 * What the trail says should be left (its baseline minus the signatures it recorded).
 */
audit_expected_remaining: number | null, 
/**
 * Set when the token's counter and the trail disagree, saying which way.
 */
mismatch: string | null, 
/**
 * The same in a form each language translates.
 */
mismatch_text: Text | null, 
/**
 * Signatures left over time, from the trail's records (its baseline, then after each
 * signing record) and the token's count now; for the chart.
 */
history: Array<HssPoint>, };

export type HssParams = { levels: Array<[LmsType, LmotsType]>, };

export type HssPoint = { at: string, remaining: number, };

export type HssStatus = "ok" | "warning" | "critical" | "exhausted";

export type ImportRequest = { path: string, 
/**
 * The label; for a certificate of a key on the token, the key's label by default.
 */
label: string | null, 
/**
 * `CKA_ID` in hex; for a certificate of a key on the token, the key's by default.
 */
id_hex: string | null, 
/**
 * Import the file as it is, as a data object (`CKO_DATA`).
 */
data: boolean, 
/**
 * The data object's `CKA_APPLICATION`.
 */
application: string | null, };

export type ImportResult = { file: string, objects: Array<ImportedObject>, };

export type ImportedObject = { handle: number, 
/**
 * `certificate`, `public_key` or `data`.
 */
kind: string, label: string, id_hex: string, 
/**
 * The certificate's details.
 */
certificate: CertificateInfo | null, 
/**
 * The label of the key pair whose certificate this is (`None`: it matches no key).
 */
key_label: string | null, 
/**
 * Stored as a CA certificate (`CKA_CERTIFICATE_CATEGORY` = authority).
 */
authority: boolean, };

export type InitTokenRequest = { label: string, confirmation: string, destroy_audit_key: boolean, };

export type JobEvent = { "kind": "progress", done: number, total: number, } | { "kind": "elapsed", ms: number, };

export type KeyDetails = { summary: ObjectSummary, attributes: Array<AttributeView>, public_key: PublicKeyView | null, };

export type KeyLoad = { label: string, id_hex: string, algorithm: string, 
/**
 * The probe operation its signatures are costed at (`None`: none fits, not costed).
 */
costed_as: string | null, signatures: number, peak_per_minute: number, peak_per_day: number, };

export type KeySpec = { "kind": "ml-dsa", set: MlDsaSet, } | { "kind": "ml-kem", set: MlKemSet, } | { "kind": "slh-dsa", set: SlhDsaSet, } | { "kind": "hss", params: HssParams, } | { "kind": "ec", curve: Curve, } | { "kind": "rsa", bits: number, } | { "kind": "aes", bits: number, } | { "kind": "generic-secret", bits: number, };

export type KeySpecInfo = { display: string, suggested_label: string, 
/**
 * HSS: signatures the key can make (decimal; can exceed 2^53).
 */
signature_capacity: string | null, signature_len: number | null, public_key_len: number | null, 
/**
 * HSS trees of height 15 and more take minutes to hours to generate.
 */
keygen_warning: string | null, 
/**
 * The same in a form each language translates.
 */
keygen_warning_text: Text | null, mechanism: string, };

export type KitCheck = { 
/**
 * The artifact (or `SHA256SUMS`) the signature is over.
 */
subject: string, format: OutputKind, 
/**
 * The program that checks it (`openssl`, `gpg`, `minisign`, `sha256sum`, `hsmc`).
 */
tool: string, 
/**
 * The command as `VERIFY.md` shows it: run in the kit, the artifacts one folder up.
 */
command: string, };

export type KitRequest = { 
/**
 * The folder to create; it must not exist yet.
 */
dir: string, 
/**
 * The user ID of the key's OpenPGP certificate: needed when the batch has OpenPGP
 * signatures, and adds the certificate to the kit of any OpenPGP-capable key.
 */
user_id?: string, 
/**
 * The PEM file of the CA the TSA's certificate chains to, copied into the kit.
 */
tsa_ca?: string, 
/**
 * The ML-DSA context string the batch was signed with (raw and bundle formats).
 */
context?: string, 
/**
 * A key succession statement (`hsmc keys succession`) naming the batch's key, copied
 * into the kit with its two signatures and checked by `verify.sh`.
 */
succession?: string, };

export type KitView = { dir: string, 
/**
 * Every file of the kit, relative to it.
 */
files: Array<string>, checks: Array<KitCheck>, };

export type Language = "en" | "zh-Hant" | "zh-Hans";

export type LastVerification = { at: string, intact: boolean, 
/**
 * Records checked (intact) or checked before the first bad one.
 */
records: number, first_bad_seq: number | null, 
/**
 * What is wrong, in English (`finding` says it in a form each language translates).
 */
explanation: string | null, finding: Finding | null, trigger: VerifyTrigger, };

export type LatencySummary = { count: number, min_us: number, mean_us: number, stddev_us: number, p50_us: number, p90_us: number, p95_us: number, p99_us: number, p999_us: number, max_us: number, };

export type Link = { view: LinkView, partition_id: string | null, 
/**
 * Text to search for (a key's id, an action).
 */
search: string | null, 
/**
 * A day to filter the audit trail to (`YYYY-MM-DD`).
 */
day: string | null, 
/**
 * An audit record.
 */
seq: number | null, };

export type LinkView = "connections" | "partition" | "keys" | "hss" | "pqc" | "stats" | "audit" | "settings";

export type LmotsType = "LMOTS_SHA256_N32_W1" | "LMOTS_SHA256_N32_W2" | "LMOTS_SHA256_N32_W4" | "LMOTS_SHA256_N32_W8" | "LMOTS_SHA256_N24_W1" | "LMOTS_SHA256_N24_W2" | "LMOTS_SHA256_N24_W4" | "LMOTS_SHA256_N24_W8";

export type LmsType = "LMS_SHA256_M32_H5" | "LMS_SHA256_M32_H10" | "LMS_SHA256_M32_H15" | "LMS_SHA256_M32_H20" | "LMS_SHA256_M32_H25" | "LMS_SHA256_M24_H5" | "LMS_SHA256_M24_H10" | "LMS_SHA256_M24_H15" | "LMS_SHA256_M24_H20" | "LMS_SHA256_M24_H25";

export type LoadView = { busy_percent: number | null, commands_per_second: number | null, firmware: string | null, };

export type LoginResult = { partition_id: string, user: UserKind, 
/**
 * The role as the module's documentation names it ("Crypto Officer").
 */
role_name: string, audit: AuditKeyView, 
/**
 * The token wants this PIN changed before anything else (`CKF_USER_PIN_TO_BE_CHANGED`
 * / `CKF_SO_PIN_TO_BE_CHANGED`, Luna's policy 21): offer the change at once.
 */
pin_to_be_changed: boolean, 
/**
 * Why, in words, when it does.
 */
pin_change_reason: string | null, };

export type LunaStats = { firmware: string | null, boot_time: number | null, cpu_up_time: number | null, cpu_idle_time: number | null, 
/**
 * Share of CPU time busy between two samples ≥ 5 s apart.
 */
busy_percent: number | null, commands: number | null, commands_per_second: number | null, utilization: Array<BinRate>, hsm_storage: StorageView | null, token_storage: StorageView | null, 
/**
 * Luna functions this module does not offer (shown as such, never as errors).
 */
not_offered: Array<string>, };

export type LunaView = { 
/**
 * "7.9.1" from `CA_GetFirmwareVersion` (with the sub-minor the token info lacks).
 */
firmware: string | null, hsm_storage: StorageView | null, token_storage: StorageView | null, partition_policies: Array<NamedSetting> | null, hsm_capabilities: Array<NamedSetting> | null, token_status_flags: number | null, };

export type ManifestEntry = { name: string, ok: boolean, detail: string, detail_text: Text | null, };

export type MechanismView = { code: number, hex: string, 
/**
 * `None` for mechanisms nobody has a name for (they are listed all the same).
 */
name: string | null, min_key_size: number, max_key_size: number, flags: Array<string>, info_error: string | null, };

export type MemberCheck = "compared" | "down" | "not_visible" | "failed";

export type MemberThroughput = { member: number, serial: string, 
/**
 * Commands the member served during the probe (set-up and warm-up included).
 */
commands: number, share_percent: number, 
/**
 * Its share of the group's throughput.
 */
per_s: number, };

export type MemberValue = { member: number, value: string | null, };

export type MetricsSnapshot = { ops: Array<OpSnapshot>, errors_by_class: Array<[string, number]>, module_recoveries: number, session_reopens: number, 
/**
 * Calls that succeeded after a recovery (the fault never reached their caller).
 */
recovered_calls: number, health_checks: number, busy_rejections: number, breaker_rejections: number, };

export type MlDsaSet = "ML-DSA-44" | "ML-DSA-65" | "ML-DSA-87";

export type MlKemSet = "ML-KEM-512" | "ML-KEM-768" | "ML-KEM-1024";

export type ModuleFamily = "generic" | "luna" | "protecttoolkit" | "softhsm" | "kryoptic";

export type ModuleView = { id: string, path: string, builtin: boolean, manufacturer: string, library_description: string, library_version: string, cryptoki_version: string, 
/**
 * "C_GetInterface 3.2", "C_GetInterface 3.0" or "C_GetFunctionList 2.40".
 */
interface: string, family: ModuleFamily, 
/**
 * Luna `CA_*` functions the module exports.
 */
vendor_functions: Array<string>, };

export type NamedSetting = { id: number, value: number, 
/**
 * From `CA_GetConfigurationElementDescription` when the module offers it.
 */
name: string | null, destructive: boolean | null, };

export type OaepHash = "sha1" | "sha256";

export type ObjectFormat = "pem" | "der";

export type ObjectSummary = { handle: number, class: string, key_type: string | null, label: string, id_hex: string, 
/**
 * "ML-DSA-65", "ECDSA P-256", "RSA-3072", "AES-256", "HSS/LMS H5/H5", …
 */
algorithm: string, parameter_set: string | null, token: boolean, private: boolean, sensitive: boolean | null, extractable: boolean | null, local: boolean | null, capabilities: Capabilities, hss_keys_remaining: number | null, 
/**
 * HSS: signatures the key can make in total (decimal; can exceed 2^64), from its LMS
 * types.
 */
hss_capacity: string | null, 
/**
 * Another object of the same class carries the same label.
 */
duplicate_label: boolean, 
/**
 * Luna's per-key usage limit (`CKA_USAGE_LIMIT`), on Luna modules, when the key has one.
 */
usage_limit: number | null, 
/**
 * Uses so far (`CKA_USAGE_COUNT`), with the limit.
 */
usage_count: number | null, 
/**
 * The object's identity on its token, where the token gives one: Luna's `CKA_OUID`
 * (hexadecimal) on Luna modules, else PKCS#11 3.0's `CKA_UNIQUE_ID`. `hsmc` selects
 * an object by it with `uid:VALUE`; it outlives handles (see [`unique_id_attribute`]).
 */
unique_id: string | null, 
/**
 * `CKA_TRUSTED`: the security officer marked this (public or secret) key as one that
 * may wrap keys restricted to trusted wrapping keys. `None`: the object has no such
 * attribute (a private key, or a token that does not know it).
 */
trusted: boolean | null, 
/**
 * `CKA_WRAP_WITH_TRUSTED`: the key leaves the token only wrapped under a trusted key.
 */
wrap_with_trusted: boolean | null, 
/**
 * `CKA_START_DATE` and `CKA_END_DATE` (`YYYY-MM-DD`) of a key, where set: the period
 * it is meant to be used in (PKCS#11 leaves enforcing them to the application).
 */
start_date: string | null, end_date: string | null, 
/**
 * `CKA_ALWAYS_AUTHENTICATE` of a private key: each signature wants a context-specific
 * login (the PIN again). `None`: not a private key, or the token does not say.
 */
always_authenticate?: boolean, };

export type ObjectUri = { 
/**
 * The object (`pkcs11:token=…;object=…;id=…;type=…`).
 */
uri: string, 
/**
 * The token alone.
 */
token_uri: string, 
/**
 * The module (`library-manufacturer`, `library-description`).
 */
module_uri: string, module_path: string, 
/**
 * Command lines of other tools using the key (private keys; empty for other objects).
 */
commands: Array<ToolCommand>, };

export type OnError = "stop" | "continue";

export type OpSnapshot = { op: string, ok: number, errors: number, mean_us: number, p50_us: number, p90_us: number, p95_us: number, p99_us: number, max_us: number, };

export type OpenPgpCertificate = { 
/**
 * ASCII-armored transferable public key.
 */
armored: string, fingerprint: string, user_id: string, created: string, 
/**
 * The creation time was fixed by this export (stored on the token now).
 */
creation_time_stored: boolean, };

export type OpenPgpKeyView = { algorithm: PgpAlgorithm, 
/**
 * Set once the creation time is fixed (by the first certificate or signature).
 */
fingerprint: string | null, created: string | null, };

export type OperationLoad = { 
/**
 * The probe operation (`ml-dsa-65-sign`).
 */
op: string, 
/**
 * The keys costed at it.
 */
keys: number, 
/**
 * Their signatures in their busiest minute together.
 */
peak_per_minute: number, 
/**
 * That minute's rate (operations per second).
 */
needed_per_s: number, 
/**
 * The latest probe of it on this partition (`None`: not probed yet).
 */
ceiling: Ceiling | null, 
/**
 * `needed_per_s` as a share of the ceiling.
 */
share: number | null, };

export type OutputKind = "cms" | "raw" | "bundle" | "manifest" | "manifest_signature" | "public_key" | "openpgp" | "openpgp_binary" | "minisign" | "manifest_cleartext" | "sshsig" | "succession" | "openpgp_cleartext";

export type OutputView = { format: OutputKind, path: string, 
/**
 * Verified in software before it was written.
 */
verified: boolean, 
/**
 * The labels of the keys whose signatures it holds (a dual-signed `.p7s` has several;
 * the `SHA256SUMS` itself none).
 */
signed_by: Array<string>, };

export type Overview = { generated_at: string, 
/**
 * Loaded modules (a module with no token has no card).
 */
modules: number, partitions: Array<PartitionCard>, 
/**
 * Modules that could not be listed.
 */
module_items: Array<AttentionItem>, 
/**
 * Keys running out: HSS and usage-limited, by days left.
 */
keys: Section, 
/**
 * Certificates by days to expiry.
 */
certificates: Section, audit: AuditSummary, 
/**
 * Failed operations of the last 24 hours (the newest 20), from the trail.
 */
failures: Section, 
/**
 * Items at warning or critical, everywhere.
 */
attention: number, worst: Severity | null, };

export type PartitionCard = { partition_id: string, module_id: string, module_path: string, builtin: boolean, family: ModuleFamily, slot_id: number, label: string, serial: string, model: string | null, 
/**
 * Who is logged in (`None`: nobody).
 */
login: UserKind | null, user_pin: PinState, so_pin: PinState, pool: PoolStatus, 
/**
 * Luna only.
 */
load: LoadView | null, 
/**
 * The HA groups it belongs to (as the virtual slot or as a member).
 */
ha: Array<HaSummary>, holds_audit_key: boolean, 
/**
 * What needs attention on this partition (PINs, breaker, load, login, HA).
 */
items: Array<AttentionItem>, };

export type PartitionReadiness = { partition_id: string, partition_label: string, serial: string, counts: Counts, objects: Array<Assessed>, 
/**
 * Its signing volume from the trail and whether it keeps up with the successors.
 */
capacity: Capacity, 
/**
 * Probes to run for what the capacity needs and no probe measured yet.
 */
suggested_probes: Array<SuggestedProbe>, };

export type PartitionView = { id: string, module_id: string, module_path: string, slot_id: number, builtin: boolean, token: TokenView, logged_in: UserKind | null, 
/**
 * The role logged in, as the module's documentation names it ("Crypto Officer").
 */
role_name: string | null, 
/**
 * The roles this module offers at login (Luna's extra roles only on Luna).
 */
roles: Array<UserKind>, 
/**
 * What the role logged in may do, with the reason where it may not.
 */
permissions: Array<Permission>, pool: PoolStatus, luna: LunaView | null, 
/**
 * Luna functions the module exports (empty for other modules).
 */
vendor_functions: Array<string>, 
/**
 * This partition holds the audit trail's key.
 */
holds_audit_key: boolean, mechanism_count: number, };

export type Permission = { action: Action, allowed: boolean, 
/**
 * Why not, in words (`None` when allowed).
 */
reason: Text | null, };

export type PgpAlgorithm = "eddsa_legacy" | "ecdsa_p256" | "ecdsa_p384" | "rsa";

export type PinChanged = { partition_id: string, user: UserKind, 
/**
 * The trail's key, which a change of a PIN that was to be changed may just have opened.
 */
audit: AuditKeyView, };

export type PinState = { count_low: boolean, final_try: boolean, locked: boolean, to_be_changed: boolean, };

export type Pkcs11Error = { function: string, code: number, name: string, class: ErrorClass, };

export type PoolStatus = { slot: number, size: number, open: number, idle: number, in_use: number, waiting: number, breaker: BreakerState, breaker_opened: number, logged_in: boolean, module_generation: number, };

export type PqcStatus = "ok" | "due-within-a-year" | "deprecated" | "past-due" | "unjudged";

export type ProbeChart = "latency" | "histogram" | "sweep";

export type ProbeChoice = { op: ProbeOp, name: string, mechanism: string, offered: boolean, };

export type ProbeMode = { "mode": "count", calls: number, } | { "mode": "duration", seconds: number, } | { "mode": "rate", per_second: number, seconds: number, };

export type ProbeOp = { "op": "random32" } | { "op": "session-open" } | { "op": "aes-gcm", bytes: number, } | { "op": "ecdsa-p256-sign" } | { "op": "rsa2048-sign" } | { "op": "ed25519-sign" } | { "op": "ml-dsa-sign", set: MlDsaSet, } | { "op": "ml-dsa-verify", set: MlDsaSet, } | { "op": "ml-kem-encaps", set: MlKemSet, } | { "op": "ml-kem-decaps", set: MlKemSet, } | { "op": "hss-sign" } | { "op": "hss-verify" } | { "op": "hss-m24-sign" } | { "op": "hss-m24-verify" } | { "op": "slh-dsa-sign", set: SlhDsaSet, } | { "op": "slh-dsa-verify", set: SlhDsaSet, };

export type ProbeProgress = { workers: number, run: number, runs: number, calls: number, 
/**
 * Calls planned (count mode) or the seconds planned, for the progress bar.
 */
fraction: number, point: SeriesPoint | null, };

export type ProbeReport = { id: string, created_at: string, partition_id: string, module: string, firmware: string, slot: number, op: ProbeOp, op_name: string, mechanism: string, payload_bytes: number, request: ProbeRequest, console_version: string, runs: Array<RunResult>, sweep: Array<SweepPoint>, verdict: string | null, 
/**
 * The verdict in a form each language translates (absent in reports kept before it).
 */
verdict_text: Text | null, 
/**
 * The probe's own cost per timed call (two clock reads and a histogram record).
 */
overhead_ns: number, cancelled: boolean, 
/**
 * Against an HA group's virtual slot: how the calls spread over its members.
 */
ha: HaProbeShare | null, };

export type ProbeRequest = { op: ProbeOp, mode: ProbeMode, 
/**
 * One run with this many workers…
 */
workers: number, 
/**
 * …or a sweep over these worker counts (e.g. 1, 2, 4, 8).
 */
sweep: Array<number>, 
/**
 * Untimed calls per worker before timing starts.
 */
warmup: number, 
/**
 * How each call reaches the token (requests stored before it was asked: the pool).
 */
profile: CallProfile, };

export type ProbeSummary = { id: string, created_at: string, op_name: string, partition_id: string, workers: string, throughput_per_s: number, p50_us: number, p99_us: number, };

export type PublicKeyFormat = "pem" | "der" | "raw";

export type PublicKeyView = { algorithm: string, fingerprint: string, pem: string, raw_len: number, };

export type Purpose = "signing" | "key-establishment";

export type QuantumClass = "quantum-vulnerable" | "post-quantum" | "not-quantum-relevant" | "unknown";

export type Query = { 
/**
 * Only records with `seq` below this (for paging newest-first); `None` = from the end.
 */
before_seq: number | null, after_seq: number | null, limit: number, from_time: string | null, to_time: string | null, actor: string | null, action: string | null, status: string | null, resource: string | null, 
/**
 * Free text in the metadata.
 */
text: string | null, 
/**
 * Oldest first (export) instead of newest first (browse).
 */
ascending: boolean, };

export type Range = { from_time: string | null, to_time: string | null, };

export type Readiness = { policy: string, 
/**
 * Where the policy's rules come from.
 */
source: string, 
/**
 * `YYYY-MM-DD`: the day the dates were compared with.
 */
date: string, partitions: Array<PartitionReadiness>, 
/**
 * All partitions together.
 */
counts: Counts, };

export type RecordView = { seq: number, epoch: number, hmac_chain: string, timestamp: string, session_id: string, actor_id: string | null, actor_ip: string, action: string, resource_type: string, resource_id: string | null, algorithm: string | null, status: string, error_code: string | null, 
/**
 * JSON text, stored and MACed byte for byte.
 */
metadata: string, };

export type RunResult = { workers: number, calls: number, errors: number, first_error: string | null, seconds: number, throughput_per_s: number, first_call_us: number | null, latency: LatencySummary, series: Array<SeriesPoint>, 
/**
 * (upper bound µs, count), log-spaced.
 */
histogram: Array<[number, number]>, 
/**
 * The console process's CPU time during the run ÷ (the run's wall time × this machine's
 * cores): 1.0 when it kept every core busy. It includes a module loaded into the
 * process (lunasim, SoftHSM2, Kryoptic); absent in runs stored before it was measured.
 */
client_cpu: number | null, };

export type Section = { 
/**
 * What needs attention, most urgent first.
 */
items: Array<AttentionItem>, 
/**
 * How many things were looked at (keys, certificates, records).
 */
checked: number, 
/**
 * Partitions whose objects could not be looked at (not logged in), by label.
 */
not_checked: Array<string>, };

export type SeriesPoint = { t: number, p50_us: number, p99_us: number, ops_per_s: number, };

export type Settings = { 
/**
 * PKCS#11 modules the officer added (paths), loaded at start.
 */
modules: Array<string>, 
/**
 * Offer the built-in lunasim partition.
 */
builtin_enabled: boolean, audit: AuditSettings, 
/**
 * HSS thresholds, in per cent of the key's total signatures left.
 */
hss_warning_percent: number, hss_critical_percent: number, 
/**
 * Sessions per partition pool.
 */
pool_size: number, 
/**
 * Statistics polling interval, seconds.
 */
stats_poll_seconds: number, theme: Theme, 
/**
 * The window's language; `None` follows the system's locale.
 */
language: Language | null, 
/**
 * Where signatures were last written (a folder), when not beside the files.
 */
last_output_dir: string | null, 
/**
 * RFC 3161 time-stamps on CMS and bundle signatures.
 */
timestamp: TimestampSettings, 
/**
 * The post-quantum policy the Overview and `hsmc status` judge keys under: `nist`,
 * `cnsa2`, or a policy file (see `console::pqc`).
 */
pqc_policy: string, };

export type Severity = "info" | "warning" | "critical";

export type SigAlg = { "scheme": "ml-dsa", set: MlDsaSet, } | { "scheme": "slh-dsa", set: SlhDsaSet, } | { "scheme": "hss" } | { "scheme": "ecdsa", curve: Curve, } | { "scheme": "rsa-pss" } | { "scheme": "ed25519" };

export type SignFormat = "cms" | "raw" | "bundle" | "openpgp" | "openpgp_binary" | "openpgp_cleartext" | "minisign" | "sshsig";

export type SignProgress = { "stage": "hashing", index: number, done: number, total: number, } | { "stage": "signing", index: number, } | { "stage": "done", index: number, } | { "stage": "failed", index: number, message: string, };

export type SignReport = { 
/**
 * The first key (the request's `key`).
 */
key: SigningKeyView, 
/**
 * Every key of the batch, the first one first (two or more when dual signing).
 */
keys: Array<BatchKey>, files: Array<FileOutcome>, manifest: Array<OutputView>, manifest_error: ApiError | null, 
/**
 * The batch stopped at the first failure (as asked).
 */
stopped: boolean, cancelled: boolean, 
/**
 * The first key's HSS signatures left (each key's: `keys`).
 */
hss_remaining_after: number | null, 
/**
 * By every key together.
 */
signatures_made: number, 
/**
 * The verifier kit, when one was asked for and written.
 */
kit: KitView | null, 
/**
 * Why the kit asked for was not written (the signatures are).
 */
kit_error: ApiError | null, };

export type SignRequest = { 
/**
 * The signing key: `id:HEX` (stable across reconnections), `label:NAME` or `handle:N`.
 */
key: string, 
/**
 * More keys signing the same batch (dual signing, `hsmc sign --key A --key B`, the
 * Sign view's "Also sign with"): one `.p7s` with a signer per key, and every other
 * output once per key, named `FILE.<label stem><suffix>`.
 */
also_keys: Array<string>, files: Array<string>, formats: Array<SignFormat>, 
/**
 * Also write a `SHA256SUMS` of the batch and its raw signature.
 */
manifest: boolean, 
/**
 * Write outputs here instead of beside each file.
 */
out_dir: string | null, 
/**
 * ML-DSA context string (raw and bundle formats; CMS requires none).
 */
context: string | null, on_error: OnError, 
/**
 * Signing with an HSS key uses up one-time signatures: the officer confirms it.
 */
confirm_hss: boolean, 
/**
 * Time-stamp CMS and bundle signatures with this authority (`hsmc sign --tsa`);
 * without it, the one in Settings → Timestamp authority when that is on.
 */
timestamp?: TimestampAuthority, 
/**
 * Also write a verifier kit of the batch into a new folder (`hsmc sign --kit`, the
 * Sign view's option); written only when every file was signed.
 */
kit?: KitRequest, 
/**
 * Certificate chain files for CMS signatures (`hsmc sign --chain FILE`): PEM (one or
 * more certificates), DER or PKCS#7, in any order; the issuers of the signer's
 * certificate, and optionally that certificate itself. Checked before signing.
 */
chain: Array<string>, 
/**
 * For a key that wants the PIN for each signature (`CKA_ALWAYS_AUTHENTICATE`): how
 * the batch logs in for them. Without it such a batch is refused before anything is
 * signed.
 */
context_login?: ContextLogin, };

export type SignatureFormat = "cms" | "raw" | "bundle" | "manifest" | "openpgp" | "minisign" | "sshsig" | "succession";

export type SigningKeyView = { handle: number, label: string, id_hex: string, algorithm: string, scheme: SigAlg, fingerprint: string, hss_remaining: number | null, hss_capacity: string | null, has_certificate: boolean, 
/**
 * The subject of the certificate CMS signatures carry.
 */
certificate_subject: string | null, 
/**
 * Why that certificate should not sign code (expired, no digitalSignature key usage,
 * no codeSigning EKU), shown before signing.
 */
certificate_warnings: Array<string>, 
/**
 * The same in a form each language translates.
 */
certificate_warnings_text: Array<Text>, 
/**
 * The key wants the PIN for each signature (`CKA_ALWAYS_AUTHENTICATE`): the batch
 * dialog asks how ([`ContextLogin`]).
 */
always_authenticate: boolean, };

export type SlhDsaSet = "Sha2_128s" | "Shake128s" | "Sha2_128f" | "Shake128f" | "Sha2_192s" | "Shake192s" | "Sha2_192f" | "Shake192f" | "Sha2_256s" | "Shake256s" | "Sha2_256f" | "Shake256f";

export type SlotView = { slot_id: number, description: string, manufacturer: string, token_present: boolean, hardware: boolean, removable: boolean, token: TokenView | null, 
/**
 * The partition this slot's token is, when it has one.
 */
partition_id: string | null, };

export type Statement = { format: string, version: number, old: SuccessionKey, new: SuccessionKey, 
/**
 * `YYYY-MM-DD`: releases from this day on are signed by the new key.
 */
new_key_signs_from: string, 
/**
 * `YYYY-MM-DD`: until this day releases carry both signatures; none when open.
 */
transition_ends: string | null, 
/**
 * When the statement was made (RFC 3339, UTC).
 */
made: string, };

export type StatsChart = "load" | "console";

export type StatsPoint = { 
/**
 * Seconds since the console started watching this partition.
 */
t: number, busy_percent: number | null, commands_per_second: number | null, sign_per_second: number | null, sessions: number | null, console_ops: number, console_errors: number, };

export type StatsSnapshot = { partition_id: string, taken_at: string, manufacturer: string, library: string, cryptoki_version: string, token: TokenView, mechanism_count: number, luna: LunaStats | null, pool: PoolStatus, metrics: MetricsSnapshot, 
/**
 * For an HA group's virtual slot: the group, its members' statistics side by side.
 */
ha: HaGroupView | null, };

export type StorageView = { total: number, used: number, free: number, object_count: number | null, };

export type SuccessionKey = { label: string, algorithm: string, 
/**
 * `SHA256:` and the hex of the SHA-256 of the DER SubjectPublicKeyInfo.
 */
fingerprint: string, 
/**
 * PEM SubjectPublicKeyInfo.
 */
public_key: string, };

export type SuccessionMade = { statement_path: string, signatures: Array<string>, statement: Statement, };

export type Successor = { 
/**
 * `ml-dsa-65`, `ml-dsa-87`, `ml-kem-768`, `ml-kem-1024`, `aes-256` or `generic-secret`.
 */
preset: string, advice: Advice, };

export type SuggestedProbe = { 
/**
 * `ml-dsa-65-sign`.
 */
op_name: string, 
/**
 * A sweep over 1–16 workers, 3 s each, through the pool.
 */
request: ProbeRequest, };

export type SweepPoint = { workers: number, throughput_per_s: number, mean_us: number, p99_us: number, 
/**
 * Throughput ÷ (one worker's throughput × workers).
 */
efficiency: number, 
/**
 * [`RunResult::client_cpu`] of the run.
 */
client_cpu: number | null, };

export type Text = { 
/**
 * The catalog key (`errors.pin_incorrect`, `overview.hss.days_left`).
 */
key: string, 
/**
 * The values of the template's `{{name}}` placeholders.
 */
args: { [key in string]: string }, 
/**
 * The English text with the arguments filled in.
 */
text: string, };

export type Theme = "system" | "light" | "dark";

export type TimestampAuthority = { 
/**
 * `http://` or `https://`; requests are POSTed as `application/timestamp-query`.
 */
url: string, 
/**
 * PEM file of the CA (or CAs) the TSA's certificate must chain to; without one, the
 * TSA's certificate is checked for its `timeStamping` use but not for who issued it.
 */
ca_file: string | null, 
/**
 * How long to wait for an answer, seconds.
 */
timeout_seconds: number, 
/**
 * When the TSA fails, write the signature without a time-stamp (the file's outcome and
 * its record say so) instead of failing the file and discarding the signature.
 */
optional?: boolean, };

export type TimestampInfo = { 
/**
 * `genTime`, as `2026-12-01T12:00:00Z` (fractions kept as the TSA gave them).
 */
time: string, 
/**
 * The TSA's certificate subject.
 */
tsa_subject: string, 
/**
 * The `tsa` name in the token, when the TSA gives one.
 */
tsa_name: string | null, policy: string, 
/**
 * Serial number of the token (hex).
 */
serial: string, 
/**
 * The hash of the imprint ("SHA-256").
 */
hash: DigestAlg, 
/**
 * Whether the TSA's certificate was checked against a CA.
 */
ca_checked: boolean, };

export type TimestampSettings = { enabled: boolean, url: string, ca_file: string | null, timeout_seconds: number, 
/**
 * Sign without a time-stamp when the TSA fails (see [`TimestampAuthority::optional`]).
 */
optional: boolean, };

export type TokenContents = { partition_id: string, label: string, serial: string, 
/**
 * Objects the console can see (public ones only when nobody is logged in).
 */
objects: number, by_class: Array<ClassCount>, 
/**
 * Luna's own count of the objects on the partition (`CA_GetTokenStorageInformation`),
 * private ones included, where the module reports it.
 */
reported_object_count: number | null, 
/**
 * Nobody is logged in: private objects are not counted.
 */
public_only: boolean, 
/**
 * This partition holds the audit trail's key (it goes with the token).
 */
holds_audit_key: boolean, 
/**
 * What the officer types to confirm: the token's label.
 */
confirmation: string, };

export type TokenInitialized = { 
/**
 * The token's partition after initialization (its serial may have changed).
 */
partition_id: string | null, label: string, objects_destroyed: number, };

export type TokenView = { label: string, manufacturer: string, model: string, serial: string, initialized: boolean, login_required: boolean, user_pin_initialized: boolean, write_protected: boolean, 
/**
 * A wrong user PIN was entered since the last successful login.
 */
user_pin_count_low: boolean, 
/**
 * One more wrong user PIN locks it.
 */
user_pin_final_try: boolean, user_pin_locked: boolean, user_pin_to_be_changed: boolean, 
/**
 * The SO PIN must be changed before the SO may do anything else.
 */
so_pin_to_be_changed: boolean, so_pin_count_low: boolean, so_pin_final_try: boolean, so_pin_locked: boolean, session_count: number | null, max_session_count: number | null, rw_session_count: number | null, max_rw_session_count: number | null, free_public_memory: number | null, total_public_memory: number | null, free_private_memory: number | null, total_private_memory: number | null, min_pin_len: number, max_pin_len: number, hardware_version: string, firmware_version: string, utc_time: string, flags: number, };

export type ToolCommand = { 
/**
 * Which tool; also names the line for [`crate::sign::Signing::try_tool_line`].
 */
tool: string, 
/**
 * What it does, and how it gets the PIN.
 */
purpose: Text, command: string, 
/**
 * The tool's own check of what `command` made (`None` where it makes nothing).
 */
verify: string | null, 
/**
 * Why the line may not work on this token, and what does instead.
 */
caveat: Text | null, };

export type ToolVerdict = { tool: string, 
/**
 * Every step exited with 0 (the line and its check).
 */
ok: boolean, steps: Array<TrialStep>, };

export type TrialStep = { command: string, 
/**
 * The exit status; `None` when it was stopped (timeout) or killed by a signal.
 */
exit_code: number | null, 
/**
 * Its standard output then standard error, trimmed; the PIN never appears.
 */
output: string, };

export type Unwrapped = { summary: ObjectSummary, kcv: string | null, 
/**
 * The public half restored beside an unwrapped private key.
 */
public_handle: number | null, };

export type UsageKeyView = { partition_id: string, partition_label: string, handle: number, class: string, label: string, id_hex: string, algorithm: string, limit: number, used: number, left: number, used_percent: number, 
/**
 * Against the same thresholds as HSS keys (Settings).
 */
status: HssStatus, 
/**
 * Signatures per day over the last 7, 30 and 90 days, from the audit trail.
 */
per_day_7: number, per_day_30: number, per_day_90: number, projected_exhaustion: string | null, 
/**
 * Uses left over time, from the trail's records (after each signing record and each
 * change of the limit) and the token's count now; for the chart, as HSS keys have.
 */
history: Array<HssPoint>, };

export type UserKind = "user" | "so" | "crypto_user" | "limited_crypto_officer";

export type Verdict = { "verdict": "intact", records: number, last_seq: number, checkpoints: number, last_checkpoint: CheckpointSummary | null, 
/**
 * Whether the checkpoint key was pinned (from the HSM) rather than taken from the
 * store.
 */
key_pinned: boolean, 
/**
 * Whether the records' MACs were checked (needs the HSM) or only the public digest
 * chain against the checkpoints.
 */
macs_checked: boolean, } | { "verdict": "broken", finding: Finding, first_bad_seq: number, explanation: string, records_checked: number, };

export type VerifyReport = { file: string, format: SignatureFormat, valid: boolean, algorithm: string | null, 
/**
 * SHA-256 fingerprint of the signer's public key.
 */
key_fingerprint: string | null, 
/**
 * The certificate subject (CMS) or key label (bundle).
 */
signer: string | null, signing_time: string | null, 
/**
 * Why it failed, or what was checked.
 */
detail: string, 
/**
 * The same as a catalog text (absent when `detail` is an error's own words).
 */
detail_text: Text | null, 
/**
 * Manifest: each listed file and whether it matches.
 */
entries: Array<ManifestEntry>, 
/**
 * The RFC 3161 time-stamp over the signature (CMS, bundle), checked.
 */
timestamp: TimestampInfo | null, };

export type VerifyTrigger = "manual" | "scheduled";

export type WrapFile = { format: string, 
/**
 * The scheme: the token's name of its RFC 5649 key wrap (`CKM_AES_KEY_WRAP_KWP`,
 * `CKM_AES_KWP`, `CKM_AES_KEY_WRAP_PAD`), `CKM_RSA_PKCS_OAEP(SHA-256)` / `(SHA-1)`, or
 * `CKM_RSA_AES_KEY_WRAP(SHA-256)` / `(SHA-1)`.
 */
mechanism: string, 
/**
 * The wrapping key: `SHA256:…` of an RSA public key, `KCV:…` of an AES key.
 */
wrapping_key_fingerprint: string, wrapping_key_label: string, class: string, key_type: number, algorithm: string, label: string, id_hex: string, flags: Array<[string, boolean]>, 
/**
 * The key's check value when it is an AES or generic secret key.
 */
kcv: string | null, 
/**
 * A private key's public half (SPKI DER, base64), restored beside it on unwrap so the
 * key pair signs and verifies on the other token.
 */
public_key?: string, 
/**
 * The wrapped key, base64.
 */
wrapped: string, };
