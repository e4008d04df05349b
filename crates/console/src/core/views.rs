//! What the services hand to the UI and to `hsmc --json`. TypeScript types are generated
//! from these (see `bindings`), never copied by hand.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use p11::sys::*;

/// Which vendor's module this is (decides vendor error names, attributes and functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ModuleFamily {
    Generic,
    /// Thales/SafeNet Luna, and lunasim, which imitates it.
    Luna,
    /// SafeNet ProtectToolkit.
    #[serde(rename = "protecttoolkit")]
    ProtectToolkit,
    #[serde(rename = "softhsm")]
    SoftHsm,
    Kryoptic,
}

hsm::wire_display!(ModuleFamily);

impl From<p11::Family> for ModuleFamily {
    fn from(f: p11::Family) -> Self {
        match f {
            p11::Family::Generic => ModuleFamily::Generic,
            p11::Family::Luna => ModuleFamily::Luna,
            p11::Family::ProtectToolkit => ModuleFamily::ProtectToolkit,
            p11::Family::SoftHsm => ModuleFamily::SoftHsm,
            p11::Family::Kryoptic => ModuleFamily::Kryoptic,
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ModuleView {
    pub id: String,
    pub path: String,
    pub builtin: bool,
    pub manufacturer: String,
    pub library_description: String,
    pub library_version: String,
    pub cryptoki_version: String,
    /// "C_GetInterface 3.2", "C_GetInterface 3.0" or "C_GetFunctionList 2.40".
    pub interface: String,
    pub family: ModuleFamily,
    /// Luna `CA_*` functions the module exports.
    pub vendor_functions: Vec<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct TokenView {
    pub label: String,
    pub manufacturer: String,
    pub model: String,
    pub serial: String,
    pub initialized: bool,
    pub login_required: bool,
    pub user_pin_initialized: bool,
    pub write_protected: bool,
    /// A wrong user PIN was entered since the last successful login.
    pub user_pin_count_low: bool,
    /// One more wrong user PIN locks it.
    pub user_pin_final_try: bool,
    pub user_pin_locked: bool,
    pub user_pin_to_be_changed: bool,
    /// The SO PIN must be changed before the SO may do anything else.
    pub so_pin_to_be_changed: bool,
    pub so_pin_count_low: bool,
    pub so_pin_final_try: bool,
    pub so_pin_locked: bool,
    #[ts(type = "number | null")]
    pub session_count: Option<u64>,
    #[ts(type = "number | null")]
    pub max_session_count: Option<u64>,
    #[ts(type = "number | null")]
    pub rw_session_count: Option<u64>,
    #[ts(type = "number | null")]
    pub max_rw_session_count: Option<u64>,
    #[ts(type = "number | null")]
    pub free_public_memory: Option<u64>,
    #[ts(type = "number | null")]
    pub total_public_memory: Option<u64>,
    #[ts(type = "number | null")]
    pub free_private_memory: Option<u64>,
    #[ts(type = "number | null")]
    pub total_private_memory: Option<u64>,
    #[ts(type = "number")]
    pub min_pin_len: u64,
    #[ts(type = "number")]
    pub max_pin_len: u64,
    pub hardware_version: String,
    pub firmware_version: String,
    pub utc_time: String,
    #[ts(type = "number")]
    pub flags: u64,
}

impl From<&p11::TokenInfo> for TokenView {
    fn from(t: &p11::TokenInfo) -> Self {
        TokenView {
            label: t.label.clone(),
            manufacturer: t.manufacturer.clone(),
            model: t.model.clone(),
            serial: t.serial_number.clone(),
            initialized: t.has(CKF_TOKEN_INITIALIZED),
            login_required: t.has(CKF_LOGIN_REQUIRED),
            user_pin_initialized: t.has(CKF_USER_PIN_INITIALIZED),
            write_protected: t.has(CKF_WRITE_PROTECTED),
            user_pin_count_low: t.has(CKF_USER_PIN_COUNT_LOW),
            user_pin_final_try: t.has(CKF_USER_PIN_FINAL_TRY),
            user_pin_locked: t.has(CKF_USER_PIN_LOCKED),
            user_pin_to_be_changed: t.has(CKF_USER_PIN_TO_BE_CHANGED),
            so_pin_to_be_changed: t.has(CKF_SO_PIN_TO_BE_CHANGED),
            so_pin_count_low: t.has(CKF_SO_PIN_COUNT_LOW),
            so_pin_final_try: t.has(CKF_SO_PIN_FINAL_TRY),
            so_pin_locked: t.has(CKF_SO_PIN_LOCKED),
            session_count: t.session_count,
            max_session_count: t.max_session_count,
            rw_session_count: t.rw_session_count,
            max_rw_session_count: t.max_rw_session_count,
            free_public_memory: t.free_public_memory,
            total_public_memory: t.total_public_memory,
            free_private_memory: t.free_private_memory,
            total_private_memory: t.total_private_memory,
            min_pin_len: t.min_pin_len,
            max_pin_len: t.max_pin_len,
            hardware_version: t.hardware_version.to_string(),
            firmware_version: t.firmware_version.to_string(),
            utc_time: t.utc_time.clone(),
            flags: t.flags,
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct SlotView {
    #[ts(type = "number")]
    pub slot_id: u64,
    pub description: String,
    pub manufacturer: String,
    pub token_present: bool,
    pub hardware: bool,
    pub removable: bool,
    pub token: Option<TokenView>,
    /// The partition this slot's token is, when it has one.
    pub partition_id: Option<String>,
}

/// Who logs in: the PKCS#11 user (Luna's Crypto Officer) or security officer, or one of
/// Luna's extra partition roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum UserKind {
    User,
    So,
    /// Luna's Crypto User (`CKU_CRYPTO_USER` = 0x80000001): uses keys, changes nothing.
    CryptoUser,
    /// Luna's Limited Crypto Officer (0x80000003).
    LimitedCryptoOfficer,
}

hsm::wire_display!(UserKind);

impl UserKind {
    pub fn p11(self) -> p11::UserType {
        self.role().user_type()
    }

    pub fn role(self) -> hsm::roles::Role {
        use hsm::roles::Role;
        match self {
            UserKind::User => Role::CryptoOfficer,
            UserKind::So => Role::SecurityOfficer,
            UserKind::CryptoUser => Role::CryptoUser,
            UserKind::LimitedCryptoOfficer => Role::LimitedCryptoOfficer,
        }
    }

    pub fn of(role: hsm::roles::Role) -> UserKind {
        use hsm::roles::Role;
        match role {
            Role::CryptoOfficer => UserKind::User,
            Role::SecurityOfficer => UserKind::So,
            Role::CryptoUser => UserKind::CryptoUser,
            Role::LimitedCryptoOfficer => UserKind::LimitedCryptoOfficer,
        }
    }

    /// The PIN flags of `CK_TOKEN_INFO` that speak about this role's PIN: the user flags
    /// for the user (Crypto Officer), the SO flags for the SO; Luna's extra roles have none.
    pub fn pin_to_be_changed(self, token: &TokenView) -> bool {
        match self {
            UserKind::User => token.user_pin_to_be_changed,
            UserKind::So => token.so_pin_to_be_changed,
            _ => false,
        }
    }
}

/// Whether the role logged in may do an action, and why not.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Permission {
    pub action: hsm::roles::Action,
    pub allowed: bool,
    /// Why not, in words (`None` when allowed).
    pub reason: Option<crate::core::i18n::Text>,
}

/// Every action, checked for `role` on a module of `family`.
pub fn permissions(role: Option<UserKind>, family: p11::Family) -> Vec<Permission> {
    hsm::roles::Action::ALL
        .into_iter()
        .map(|action| {
            let r = hsm::roles::check(role.map(UserKind::role), action, family);
            Permission {
                action,
                allowed: r.is_ok(),
                reason: r.err().as_ref().map(crate::core::role_texts::refusal),
            }
        })
        .collect()
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct NamedSetting {
    #[ts(type = "number")]
    pub id: u64,
    #[ts(type = "number")]
    pub value: u64,
    /// From `CA_GetConfigurationElementDescription` when the module offers it.
    pub name: Option<String>,
    pub destructive: Option<bool>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct StorageView {
    #[ts(type = "number")]
    pub total: u64,
    #[ts(type = "number")]
    pub used: u64,
    #[ts(type = "number")]
    pub free: u64,
    #[ts(type = "number | null")]
    pub object_count: Option<u64>,
}

impl From<p11::vendor::StorageInfo> for StorageView {
    fn from(s: p11::vendor::StorageInfo) -> Self {
        StorageView {
            total: s.total,
            used: s.used,
            free: s.free,
            object_count: s.object_count,
        }
    }
}

/// Luna extras, each `None` when the module does not offer it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct LunaView {
    /// "7.9.1" from `CA_GetFirmwareVersion` (with the sub-minor the token info lacks).
    pub firmware: Option<String>,
    pub hsm_storage: Option<StorageView>,
    pub token_storage: Option<StorageView>,
    pub partition_policies: Option<Vec<NamedSetting>>,
    pub hsm_capabilities: Option<Vec<NamedSetting>>,
    #[ts(type = "number | null")]
    pub token_status_flags: Option<u64>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct PartitionView {
    pub id: String,
    pub module_id: String,
    pub module_path: String,
    #[ts(type = "number")]
    pub slot_id: u64,
    pub builtin: bool,
    pub token: TokenView,
    pub logged_in: Option<UserKind>,
    /// The role logged in, as the module's documentation names it ("Crypto Officer").
    pub role_name: Option<String>,
    /// The roles this module offers at login (Luna's extra roles only on Luna).
    pub roles: Vec<UserKind>,
    /// What the role logged in may do, with the reason where it may not.
    pub permissions: Vec<Permission>,
    pub pool: hsm::PoolStatus,
    pub luna: Option<LunaView>,
    /// Luna functions the module exports (empty for other modules).
    pub vendor_functions: Vec<String>,
    /// This partition holds the audit trail's key.
    pub holds_audit_key: bool,
    #[ts(type = "number")]
    pub mechanism_count: u64,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct MechanismView {
    #[ts(type = "number")]
    pub code: u64,
    pub hex: String,
    /// `None` for mechanisms nobody has a name for (they are listed all the same).
    pub name: Option<String>,
    #[ts(type = "number")]
    pub min_key_size: u64,
    #[ts(type = "number")]
    pub max_key_size: u64,
    pub flags: Vec<String>,
    pub info_error: Option<String>,
}

pub fn mechanism_flags(flags: u64) -> Vec<String> {
    let table: &[(u64, &str)] = &[
        (CKF_HW, "HW"),
        (CKF_ENCRYPT, "ENCRYPT"),
        (CKF_DECRYPT, "DECRYPT"),
        (CKF_DIGEST, "DIGEST"),
        (CKF_SIGN, "SIGN"),
        (CKF_SIGN_RECOVER, "SIGN_RECOVER"),
        (CKF_VERIFY, "VERIFY"),
        (CKF_VERIFY_RECOVER, "VERIFY_RECOVER"),
        (CKF_GENERATE, "GENERATE"),
        (CKF_GENERATE_KEY_PAIR, "GENERATE_KEY_PAIR"),
        (CKF_WRAP, "WRAP"),
        (CKF_UNWRAP, "UNWRAP"),
        (CKF_DERIVE, "DERIVE"),
        (0x1000_0000, "ENCAPSULATE"),
        (0x2000_0000, "DECAPSULATE"),
        (CKF_EC_F_P, "EC_F_P"),
        (CKF_EC_NAMEDCURVE, "EC_NAMEDCURVE"),
        (CKF_EC_UNCOMPRESS, "EC_UNCOMPRESS"),
        (CKF_EC_COMPRESS, "EC_COMPRESS"),
    ];
    table
        .iter()
        .filter(|(f, _)| flags & f != 0)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// The state of the audit key, as the header badge shows it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AuditKeyView {
    /// A new trail: the next login creates its key on that partition.
    NoKeyYet,
    /// Privileged actions are refused until the holder is logged in.
    Locked { holder: String },
    Unlocked {
        #[ts(type = "number")]
        epoch: i64,
        holder: String,
    },
}

impl From<audit::KeyStatus> for AuditKeyView {
    fn from(k: audit::KeyStatus) -> Self {
        match k {
            audit::KeyStatus::NoKeyYet => AuditKeyView::NoKeyYet,
            audit::KeyStatus::Locked { holder } => AuditKeyView::Locked { holder },
            audit::KeyStatus::Unlocked { epoch, holder } => {
                AuditKeyView::Unlocked { epoch, holder }
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct LoginResult {
    pub partition_id: String,
    pub user: UserKind,
    /// The role as the module's documentation names it ("Crypto Officer").
    pub role_name: String,
    pub audit: AuditKeyView,
    /// The token wants this PIN changed before anything else (`CKF_USER_PIN_TO_BE_CHANGED`
    /// / `CKF_SO_PIN_TO_BE_CHANGED`, Luna's policy 21): offer the change at once.
    pub pin_to_be_changed: bool,
    /// Why, in words, when it does.
    pub pin_change_reason: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct GenerateRequest {
    pub spec: hsm::algo::KeySpec,
    pub label: String,
    /// Token object (persistent) or session object.
    pub token: bool,
    /// Extractable for backup only: `CKA_EXTRACTABLE` true (still sensitive), and
    /// `CKA_WRAP_WITH_TRUSTED` where the token has it, so the key leaves the token only
    /// wrapped under a key the security officer marked trusted. Never for HSS keys.
    #[serde(default)]
    pub extractable: bool,
    /// `CKA_ALWAYS_AUTHENTICATE` on the private key: every signature it makes wants the
    /// PIN again (a context-specific login; `hsmc keys gen --always-authenticate`). Refused
    /// with a clear message where the token cannot make such keys.
    #[serde(default)]
    pub always_authenticate: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct PublicKeyView {
    pub algorithm: String,
    pub fingerprint: String,
    pub pem: String,
    pub raw_len: usize,
}

impl From<&hsm::pubkey::PublicKey> for PublicKeyView {
    fn from(p: &hsm::pubkey::PublicKey) -> Self {
        PublicKeyView {
            algorithm: p.algorithm(),
            fingerprint: p.fingerprint(),
            pem: p.spki_pem(),
            raw_len: p.raw().len(),
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct GeneratedKey {
    #[ts(type = "number")]
    pub private_handle: u64,
    #[ts(type = "number | null")]
    pub public_handle: Option<u64>,
    pub label: String,
    pub id_hex: String,
    pub algorithm: String,
    pub public_key: Option<PublicKeyView>,
    /// The size the standard prescribes for this public key, checked against the token's.
    pub expected_public_key_len: Option<usize>,
    #[ts(type = "number")]
    pub elapsed_ms: u64,
    /// Made extractable for backup (`GenerateRequest::extractable`).
    pub extractable: bool,
    /// `CKA_WRAP_WITH_TRUSTED` as the token answers for the new key: `true`, it leaves only
    /// under a trusted wrapping key; otherwise (an extractable key on a token without the
    /// attribute) it could be wrapped under any wrapping key.
    pub wrap_with_trusted: Option<bool>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct KeyDetails {
    pub summary: hsm::keys::ObjectSummary,
    pub attributes: Vec<hsm::keys::AttributeView>,
    pub public_key: Option<PublicKeyView>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ExportedPublicKey {
    pub format: hsm::pubkey::PublicKeyFormat,
    pub file_name: String,
    /// PEM text, or base64 of DER/raw bytes.
    pub text: Option<String>,
    pub base64: Option<String>,
    pub fingerprint: String,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct AppInfo {
    pub version: String,
    pub data_dir: String,
    pub audit_location: String,
    pub audit_store: AuditStoreKind,
    pub builtin_available: bool,
    pub builtin_note: Option<String>,
    /// Remembered modules that could not be loaded at start, and why.
    pub startup_warnings: Vec<String>,
}

/// One audit record for the UI: the stored record without its trail ID and write time.
/// The event's fields come from [`audit::Prepared`] (flattened, so they sit in place
/// between `epoch` and `hmac_chain`).
#[derive(Debug, Clone, Serialize, TS)]
pub struct RecordView {
    #[ts(type = "number")]
    pub seq: i64,
    #[ts(type = "number")]
    pub epoch: i64,
    #[serde(flatten)]
    pub event: audit::Prepared,
    pub hmac_chain: String,
}

impl From<audit::Record> for RecordView {
    fn from(r: audit::Record) -> Self {
        RecordView {
            seq: r.seq,
            epoch: r.epoch,
            event: r.event,
            hmac_chain: r.hmac_chain,
        }
    }
}

/// Events the backend pushes to the UI.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ConsoleEvent {
    AuditRecord {
        record: Box<RecordView>,
    },
    /// Something was recorded or spooled, or a checkpoint was written.
    AuditChanged {},
    PartitionChanged {
        partition_id: String,
    },
    AuditKey {
        state: AuditKeyView,
    },
    /// An HA group's state changed (a drift found or resolved, a member down or back).
    HaChanged {
        partition_id: String,
    },
}

/// Progress of a long job, streamed to the UI over a channel.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobEvent {
    /// `done` of `total` units (records, bytes, files).
    Progress { done: i64, total: i64 },
    /// For work that reports no units (key generation): time so far.
    Elapsed { ms: u64 },
}

/// The mechanism table as CSV (for spreadsheets and change tickets).
pub fn mechanisms_csv(list: &[MechanismView]) -> String {
    let mut out = String::from("code,name,min_key_size,max_key_size,flags\n");
    for m in list {
        out.push_str(&format!(
            "{},{},{},{},{}\n",
            m.hex,
            m.name.clone().unwrap_or_default(),
            m.min_key_size,
            m.max_key_size,
            m.flags.join(" ")
        ));
    }
    out
}

/// What the window asks first: the app's information, or why the console could not start.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AppStatus {
    pub info: Option<AppInfo>,
    pub startup_error: Option<crate::core::error::ApiError>,
}

/// What the Generate dialog shows about a choice before anything is made.
#[derive(Debug, Clone, Serialize, TS)]
pub struct KeySpecInfo {
    pub display: String,
    pub suggested_label: String,
    /// HSS: signatures the key can make (decimal; can exceed 2^53).
    pub signature_capacity: Option<String>,
    pub signature_len: Option<usize>,
    pub public_key_len: Option<usize>,
    /// HSS trees of height 15 and more take minutes to hours to generate.
    pub keygen_warning: Option<String>,
    /// The same in a form each language translates.
    pub keygen_warning_text: Option<crate::core::i18n::Text>,
    pub mechanism: String,
}

impl KeySpecInfo {
    pub fn describe(
        spec: &hsm::algo::KeySpec,
        purpose: &str,
    ) -> Result<KeySpecInfo, crate::core::error::ApiError> {
        use hsm::algo::KeySpec as K;
        if let K::Hss { params } = spec {
            hsm::algo::HssParams::new(params.levels.clone())
                .map_err(crate::core::error::ApiError::invalid)?;
        }
        let now = time::OffsetDateTime::now_utc();
        let (cap, sig, pk, warn) = match spec {
            K::Hss { params } => (
                Some(params.capacity().to_string()),
                Some(params.signature_len()),
                Some(params.public_key_len()),
                params.keygen_warning_text(),
            ),
            K::MlDsa { set } => (
                None,
                Some(set.signature_len()),
                Some(set.public_key_len()),
                None,
            ),
            K::MlKem { set } => (None, None, Some(set.public_key_len()), None),
            K::SlhDsa { set } => (
                None,
                Some(set.signature_len()),
                Some(set.public_key_len()),
                None,
            ),
            K::Ec { curve } => (None, None, Some(curve.point_len()), None),
            K::Rsa { bits } => (None, Some(*bits as usize / 8), None, None),
            K::Aes { .. } | K::GenericSecret { .. } => (None, None, None, None),
        };
        Ok(KeySpecInfo {
            display: spec.display(),
            suggested_label: hsm::algo::suggest_label(
                purpose,
                spec,
                now.year(),
                u8::from(now.month()),
            ),
            signature_capacity: cap,
            signature_len: sig,
            public_key_len: pk,
            keygen_warning: warn.as_ref().map(|t| t.text.clone()),
            keygen_warning_text: warn,
            mechanism: p11::names::mechanism_name(spec.mechanism(), p11::Family::Generic)
                .into_owned(),
        })
    }
}

/// A dropped or picked path, checked before anything is read.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FileCheck {
    pub path: String,
    pub name: String,
    #[ts(type = "number | null")]
    pub size: Option<u64>,
    /// Why it cannot be signed (a folder, a FIFO, empty, …).
    pub problem: Option<String>,
    /// The same in a form each language translates.
    pub problem_text: Option<crate::core::i18n::Text>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The UI reads a record as one flat object, the event's fields in place.
    #[test]
    fn a_record_view_is_one_flat_object() {
        let r = audit::Record {
            log_id: "log_0011".into(),
            seq: 7,
            epoch: 1,
            event: audit::Prepared {
                timestamp: "2026-11-30T15:00:00.000Z".into(),
                session_id: "sess_1".into(),
                actor_id: Some("officer@console".into()),
                actor_ip: "127.0.0.1".into(),
                action: "key.generate".into(),
                resource_type: "private_key".into(),
                resource_id: None,
                algorithm: Some("ML-DSA-65".into()),
                status: "success".into(),
                error_code: None,
                metadata: "{}".into(),
            },
            hmac_chain: "ab".into(),
            created_at: "2026-11-30T15:00:00.001Z".into(),
        };
        assert_eq!(
            serde_json::to_string(&RecordView::from(r)).unwrap(),
            r#"{"seq":7,"epoch":1,"timestamp":"2026-11-30T15:00:00.000Z","session_id":"sess_1","actor_id":"officer@console","actor_ip":"127.0.0.1","action":"key.generate","resource_type":"private_key","resource_id":null,"algorithm":"ML-DSA-65","status":"success","error_code":null,"metadata":"{}","hmac_chain":"ab"}"#
        );
    }
}

/// Where the trail is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AuditStoreKind {
    Sqlite,
    Postgres,
}

hsm::wire_display!(AuditStoreKind);

impl AuditStoreKind {
    pub(crate) fn of(log: &audit::AuditLog) -> AuditStoreKind {
        if log.location_kind() == "postgres" {
            AuditStoreKind::Postgres
        } else {
            AuditStoreKind::Sqlite
        }
    }
}
