//! Modules, slots and partitions; logging in and out; the partition view with Luna's
//! extras; mechanisms. A partition is a token, identified by its module and serial number
//! (slot IDs can change when a module is reinitialized; serials do not).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use audit::Event;
use hsm::{Pool, PoolConfig};
use p11::{Module, SlotId};

use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::core::i18n::Text;
use crate::core::views::*;
use crate::core::{builtin, module_id, Core};
use crate::text;
use hsm::keys::{self as hk, ObjectSummary};

/// PKCS#11 PINs are short (Luna: at most 255 characters; CK_TOKEN_INFO.ulMaxPinLen is
/// rarely above 256). Anything longer is refused before it reaches the token.
pub const MAX_PIN_BYTES: usize = 256;

/// A loaded PKCS#11 module.
pub struct LoadedModule {
    pub id: String,
    pub path: PathBuf,
    pub module: Arc<Module>,
    pub builtin: bool,
}

/// What names a token in trail records, from a partition ID (`<module>:<serial>`, as
/// [`Partition::id`] is made): its serial, whatever path its module was loaded from. A token
/// that reports no serial is named by its slot (`slotN`), and slot numbers repeat from module
/// to module: such a token is named by its whole partition ID.
pub(crate) fn token_name(partition_id: &str) -> &str {
    match partition_id.split_once(':') {
        Some((_, serial)) if !is_slot_name(serial) => serial,
        _ => partition_id,
    }
}

/// The name a token that reports no serial gets in its partition ID.
fn slot_name(slot: SlotId) -> String {
    format!("slot{slot}")
}

fn is_slot_name(serial: &str) -> bool {
    serial
        .strip_prefix("slot")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// One token the console talks to, with its session pool.
pub struct Partition {
    pub id: String,
    pub module: Arc<LoadedModule>,
    pub serial: String,
    pub label: String,
    pub pool: Pool,
    /// The handles handed out, to find their objects again after a reconnect.
    pub key_refs: crate::core::key_refs::KeyRefs,
    logged_in: Mutex<Option<UserKind>>,
    pub(crate) holds_audit: AtomicBool,
}

impl Partition {
    /// What names this partition's token in trail records ([`token_name`]).
    pub(crate) fn token_name(&self) -> &str {
        token_name(&self.id)
    }

    /// Who is logged in: nobody once the pool has forgotten the credentials (the token
    /// refused them after a reconnection, or a PIN change's outcome is unknown).
    pub fn logged_in(&self) -> Option<UserKind> {
        let who = *self.logged_in.lock();
        who.filter(|_| self.pool.is_logged_in())
    }

    pub(crate) fn set_logged_in(&self, who: Option<UserKind>) {
        *self.logged_in.lock() = who;
    }

    pub fn slot(&self) -> SlotId {
        self.pool.slot()
    }

    pub fn holds_audit_key(&self) -> bool {
        self.holds_audit.load(Ordering::Acquire)
    }

    /// "label (serial …)", as the audit trail names a key holder.
    pub fn holder_name(&self) -> String {
        format!("{} (serial {})", self.label, self.serial)
    }
}

/// One module with its slots, for the Connections view.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct ConnectionView {
    pub module: ModuleView,
    pub slots: Vec<SlotView>,
    /// Why the slots could not be listed (the module stays loaded).
    pub error: Option<ApiError>,
}

pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        ApiError::new(
            ErrorCode::Internal,
            text!(
                "errors.background_task_failed",
                "a background task failed: {{error}}",
                error = e
            ),
        )
    })
}

/// Check a module path before handing it to the dynamic loader.
pub fn validate_module_path(path: &str) -> ApiResult<PathBuf> {
    let p = Path::new(path.trim());
    if path.trim().is_empty() {
        return Err(ApiError::invalid(text!(
            "errors.no_module_path_given",
            "No module path was given."
        ))
        .suggest(text!(
            "errors.choose_vendor_s_pkcs_library",
            "Choose the vendor's PKCS#11 library (a .so file)."
        )));
    }
    if !p.is_absolute() {
        return Err(ApiError::invalid(text!(
            "errors.not_absolute_path",
            "{{path}} is not an absolute path.",
            path = path
        ))
        .suggest(text!(
            "errors.give_full_path_pkcs_library",
            "Give the full path of the PKCS#11 library, e.g. /usr/lib/softhsm/libsofthsm2.so."
        )));
    }
    let meta = std::fs::metadata(p).map_err(|e| {
        ApiError::new(
            ErrorCode::ModuleLoadFailed,
            text!(
                "errors.module_cannot_read",
                "The module {{path}} cannot be read: {{error}}.",
                path = path,
                error = e
            ),
        )
        .suggest(text!(
            "errors.check_path_file_s_permissions",
            "Check the path and the file's permissions."
        ))
    })?;
    if !meta.is_file() {
        return Err(ApiError::new(
            ErrorCode::NotPkcs11,
            text!(
                "errors.not_regular_file",
                "{{path}} is not a regular file.",
                path = path
            ),
        )
        .suggest(text!(
            "errors.choose_vendor_s_pkcs_library_2",
            "Choose the vendor's PKCS#11 library file (a .so), not a folder, device or pipe."
        )));
    }
    Ok(p.to_path_buf())
}

impl Core {
    pub(crate) async fn load_builtin(&self) -> ApiResult<()> {
        let paths = builtin::locate(
            self.config.lunasim_path.as_deref(),
            self.config.kryoptic_path.as_deref(),
            self.config.resource_dir.as_deref(),
        )
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::ModuleLoadFailed,
                text!(
                    "errors.built_partition_s_module_liblunasim",
                    "The built-in partition's module (liblunasim.so) was not found."
                ),
            )
            .suggest(text!(
                "errors.build_cargo_build_p_lunasim",
                "Build it with `cargo build -p hsmc-lunasim` (make run does), or add a PKCS#11 module."
            ))
        })?;
        if paths.kryoptic.is_none() && std::env::var_os("LUNASIM_CONF").is_none() {
            return Err(ApiError::new(ErrorCode::ModuleLoadFailed, text!("errors.built_partition_needs_kryoptic_libkryoptic", "The built-in partition needs Kryoptic (libkryoptic_pkcs11.so), which was not found."))
                .suggest(text!("errors.run_scripts_build_kryoptic_sh", "Run scripts/build-kryoptic.sh (make run does).")));
        }
        let owned = std::env::var_os("LUNASIM_CONF").is_none();
        builtin::configure(&self.config.data_dir.join("builtin"), &paths)?;
        let lm = self.load_module_path(paths.lunasim.clone(), true).await?;
        let m = lm.module.clone();
        let found = blocking(move || -> ApiResult<Option<SlotId>> {
            let partition = builtin::ensure_token(&m)?;
            builtin::ensure_audit_slot(&m, partition, owned)
        })
        .await??;
        if let Some(slot) = found {
            self.open_audit_slot(&lm, slot).await?;
        }
        Ok(())
    }

    pub(crate) async fn load_module(
        &self,
        path: &str,
        builtin: bool,
    ) -> ApiResult<Arc<LoadedModule>> {
        let p = validate_module_path(path)?;
        self.load_module_path(p, builtin).await
    }

    async fn load_module_path(&self, path: PathBuf, builtin: bool) -> ApiResult<Arc<LoadedModule>> {
        let canonical = path.canonicalize().unwrap_or(path.clone());
        if let Some(m) = self.modules.read().iter().find(|m| m.path == canonical) {
            return Ok(m.clone());
        }
        let p2 = canonical.clone();
        let module = blocking(move || -> ApiResult<Arc<Module>> {
            let m = Module::load(&p2)?;
            m.initialize()?;
            Ok(m)
        })
        .await??;
        let lm = Arc::new(LoadedModule {
            id: if builtin {
                "builtin".into()
            } else {
                module_id(&canonical)
            },
            path: canonical,
            module,
            builtin,
        });
        let mut mods = self.modules.write();
        if let Some(m) = mods.iter().find(|m| m.path == lm.path) {
            return Ok(m.clone());
        }
        mods.push(lm.clone());
        Ok(lm)
    }

    /// Add a module by path: loaded, initialized, remembered in the settings, audited.
    pub async fn add_module(&self, path: &str) -> ApiResult<ModuleView> {
        let r = self.load_module(path, false).await;
        let ev = Event::new("module.add", "module").resource(path.trim());
        self.record_outcome(ev, &r).await;
        let lm = r?;
        let p = lm.path.display().to_string();
        let mut s = self.settings();
        if !lm.builtin && !s.modules.contains(&p) {
            s.modules.push(p);
            s.save(&self.config.settings_file())?;
            *self.settings.write() = s;
        }
        Ok(module_view(&lm))
    }

    /// Forget a module: log out of its partitions and drop it from the settings. (The
    /// library itself stays mapped until the console exits; see `p11`.)
    pub async fn remove_module(&self, module_id: &str) -> ApiResult<()> {
        let lm = self.module_ref(module_id)?;
        if lm.builtin {
            return Err(ApiError::invalid(text!(
                "errors.built_partition_cannot_removed_turn",
                "The built-in partition cannot be removed; turn it off in the settings instead."
            )));
        }
        let parts: Vec<Arc<Partition>> = self
            .partitions
            .read()
            .values()
            .filter(|p| p.module.id == module_id)
            .cloned()
            .collect();
        for p in parts {
            let _ = self.logout(&p.id).await;
            self.partitions.write().remove(&p.id);
        }
        self.modules.write().retain(|m| m.id != module_id);
        let mut s = self.settings();
        let path = lm.path.display().to_string();
        s.modules.retain(|m| m != &path);
        s.save(&self.config.settings_file())?;
        *self.settings.write() = s;
        self.record(Event::new("module.remove", "module").resource(path))
            .await;
        Ok(())
    }

    pub fn module_ref(&self, id: &str) -> ApiResult<Arc<LoadedModule>> {
        self.modules
            .read()
            .iter()
            .find(|m| m.id == id)
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::PartitionNotFound,
                    text!(
                        "errors.no_module_loaded",
                        "No module {{id}} is loaded.",
                        id = id
                    ),
                )
                .suggest(text!(
                    "errors.add_module_connections_first",
                    "Add the module in Connections first."
                ))
            })
    }

    pub fn list_modules(&self) -> Vec<ModuleView> {
        self.modules.read().iter().map(|m| module_view(m)).collect()
    }

    /// Every module with its slots (the Connections view).
    pub async fn connections(&self) -> Vec<ConnectionView> {
        let mods: Vec<_> = self.modules.read().clone();
        let mut out = Vec::new();
        for m in mods {
            match self.slots(&m.id).await {
                Ok(slots) => out.push(ConnectionView {
                    module: module_view(&m),
                    slots,
                    error: None,
                }),
                Err(e) => out.push(ConnectionView {
                    module: module_view(&m),
                    slots: Vec::new(),
                    error: Some(e),
                }),
            }
        }
        out
    }

    /// The module's slots with their tokens; every token becomes a partition.
    pub async fn slots(&self, module_id: &str) -> ApiResult<Vec<SlotView>> {
        let lm = self.module_ref(module_id)?;
        let m = lm.module.clone();
        let raw = blocking(
            move || -> p11::Result<Vec<(SlotId, p11::SlotInfo, Option<p11::TokenInfo>)>> {
                let mut out = Vec::new();
                for s in m.slots(false)? {
                    let si = m.slot_info(s)?;
                    let ti = if si.token_present() {
                        m.token_info(s).ok()
                    } else {
                        None
                    };
                    out.push((s, si, ti));
                }
                Ok(out)
            },
        )
        .await??;
        let mut views = Vec::new();
        for (slot, si, ti) in raw {
            // The built-in module's audit slot is the console's own, not a partition.
            if lm.builtin
                && ti
                    .as_ref()
                    .is_some_and(|t| t.label == builtin::AUDIT_TOKEN_LABEL)
            {
                continue;
            }
            let partition_id = ti
                .as_ref()
                .filter(|t| t.initialized())
                .map(|t| self.register_partition(&lm, slot, t).id.clone());
            views.push(SlotView {
                slot_id: slot,
                description: si.description.clone(),
                manufacturer: si.manufacturer.clone(),
                token_present: si.token_present(),
                hardware: si.hardware(),
                removable: si.removable(),
                token: ti.as_ref().map(TokenView::from),
                partition_id,
            });
        }
        Ok(views)
    }

    fn register_partition(
        &self,
        lm: &Arc<LoadedModule>,
        slot: SlotId,
        t: &p11::TokenInfo,
    ) -> Arc<Partition> {
        let serial = if t.serial_number.trim().is_empty() {
            slot_name(slot)
        } else {
            t.serial_number.trim().to_string()
        };
        let id = format!("{}:{}", lm.id, serial);
        if let Some(p) = self.partitions.read().get(&id) {
            return p.clone();
        }
        let size = self.settings.read().pool_size;
        let pool = Pool::new(
            lm.module.clone(),
            slot,
            PoolConfig {
                size,
                ..PoolConfig::default()
            },
        );
        let p = Arc::new(Partition {
            id: id.clone(),
            module: lm.clone(),
            serial,
            label: t.label.trim().to_string(),
            pool,
            key_refs: Default::default(),
            logged_in: Mutex::new(None),
            holds_audit: AtomicBool::new(false),
        });
        self.partitions.write().entry(id).or_insert(p).clone()
    }

    /// The partition with this ID (listing the slots first when it is not known yet).
    pub async fn partition_ref(&self, id: &str) -> ApiResult<Arc<Partition>> {
        if let Some(p) = self.partitions.read().get(id) {
            return Ok(p.clone());
        }
        if let Some((mid, _)) = id.split_once(':') {
            if self.module_ref(mid).is_ok() {
                self.slots(mid).await?;
                if let Some(p) = self.partitions.read().get(id) {
                    return Ok(p.clone());
                }
            }
        }
        Err(ApiError::new(
            ErrorCode::PartitionNotFound,
            text!(
                "errors.no_partition_known",
                "No partition {{id}} is known.",
                id = id
            ),
        )
        .suggest(text!(
            "errors.refresh_connections_view_token_may",
            "Refresh the Connections view; the token may have been removed."
        )))
    }

    /// All partitions known so far.
    pub fn partitions(&self) -> Vec<Arc<Partition>> {
        let mut v: Vec<_> = self.partitions.read().values().cloned().collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }

    /// A module by `builtin`, module ID or library path (loaded on first use).
    pub async fn module_for(&self, module: &str) -> ApiResult<Arc<LoadedModule>> {
        if module == "builtin" {
            self.module_ref("builtin")
        } else if let Ok(m) = self.module_ref(module) {
            Ok(m)
        } else {
            self.load_module(module, false).await
        }
    }

    /// Find a partition the way `hsmc` names one: module (`builtin`, a path or a module ID),
    /// then slot number or token label; the first initialized token when neither is given.
    pub async fn select_partition(
        &self,
        module: &str,
        slot: Option<u64>,
        token: Option<&str>,
    ) -> ApiResult<Arc<Partition>> {
        let lm = self.module_for(module).await?;
        let slots = self.slots(&lm.id).await?;
        let found = slots.iter().find(|s| {
            s.partition_id.is_some()
                && slot.is_none_or(|n| s.slot_id == n)
                && token.is_none_or(|l| {
                    s.token
                        .as_ref()
                        .map(|t| t.label.trim() == l.trim())
                        .unwrap_or(false)
                })
        });
        match found {
            Some(s) => {
                self.partition_ref(s.partition_id.as_deref().expect("checked"))
                    .await
            }
            None => Err(ApiError::new(
                ErrorCode::PartitionNotFound,
                match (slot, token) {
                    (Some(n), _) => text!(
                        "hsm.console.slot_has_no_token",
                        "Slot {{slot}} of {{module}} has no initialized token.",
                        slot = n,
                        module = lm.path.display()
                    ),
                    (_, Some(l)) => text!(
                        "hsm.console.no_token_labelled",
                        "No token labelled '{{label}}' in {{module}}.",
                        label = l,
                        module = lm.path.display()
                    ),
                    _ => text!(
                        "hsm.console.module_has_no_token",
                        "{{module}} has no initialized token.",
                        module = lm.path.display()
                    ),
                },
            )
            .suggest(text!(
                "errors.list_them_hsmc_slots",
                "List them with `hsmc slots`."
            ))),
        }
    }

    /// Token info, pool state, Luna extras.
    pub async fn partition(&self, id: &str) -> ApiResult<PartitionView> {
        let p = self.partition_ref(id).await?;
        let m = p.module.module.clone();
        let slot = p.slot();
        let (token, luna, mech_count) = blocking(
            move || -> ApiResult<(p11::TokenInfo, Option<LunaView>, usize)> {
                let t = m.token_info(slot)?;
                let n = m.mechanisms(slot).map(|v| v.len()).unwrap_or(0);
                let luna = m.vendor().is_luna().then(|| luna_view(&m, slot));
                Ok((t, luna, n))
            },
        )
        .await??;
        Ok(PartitionView {
            id: p.id.clone(),
            module_id: p.module.id.clone(),
            module_path: p.module.path.display().to_string(),
            slot_id: slot,
            builtin: p.module.builtin,
            token: TokenView::from(&token),
            logged_in: p.logged_in(),
            role_name: p
                .logged_in()
                .map(|u| u.role().name(p.module.module.family()).to_string()),
            roles: hsm::roles::Role::offered(p.module.module.family())
                .into_iter()
                .map(UserKind::of)
                .collect(),
            permissions: crate::core::views::permissions(p.logged_in(), p.module.module.family()),
            pool: p.pool.status(),
            luna,
            vendor_functions: p
                .module
                .module
                .vendor()
                .offered()
                .into_iter()
                .map(String::from)
                .collect(),
            holds_audit_key: p.holds_audit_key(),
            mechanism_count: mech_count as u64,
        })
    }

    /// Every mechanism the token lists, named where a name is known.
    pub async fn mechanisms(&self, id: &str) -> ApiResult<Vec<MechanismView>> {
        let p = self.partition_ref(id).await?;
        let m = p.module.module.clone();
        let slot = p.slot();
        blocking(move || -> ApiResult<Vec<MechanismView>> {
            let family = m.family();
            let mut out = Vec::new();
            for code in m.mechanisms(slot)? {
                let name =
                    p11::names::name(p11::names::Kind::Mechanism, code, family).map(String::from);
                let (min, max, flags, err) = match m.mechanism_info(slot, code) {
                    Ok(i) => (
                        i.min_key_size,
                        i.max_key_size,
                        mechanism_flags(i.flags),
                        None,
                    ),
                    Err(e) => (0, 0, Vec::new(), Some(e.to_string())),
                };
                out.push(MechanismView {
                    code,
                    hex: format!("0x{code:08X}"),
                    name,
                    min_key_size: min,
                    max_key_size: max,
                    flags,
                    info_error: err,
                });
            }
            Ok(out)
        })
        .await?
    }

    /// Log in. A wrong PIN is reported once, with what the token says about the attempts
    /// left, and never retried. A user login also opens the audit trail's key when this
    /// partition holds it (or creates it, on a new trail).
    pub async fn login(&self, id: &str, user: UserKind, pin: p11::Pin) -> ApiResult<LoginResult> {
        let p = self.partition_ref(id).await?;
        let family = p.module.module.family();
        if !user.role().offered_by(family) {
            let role = crate::core::role_texts::role_name(user.role(), family);
            return Err(ApiError::invalid(
                text!(
                    "errors.role_only_on_luna",
                    "The {{role}} is a role of Luna partitions; this module ({{family}}) knows only the user and the security officer.",
                    role = &role.text,
                    family = crate::core::views::ModuleFamily::from(family)
                )
                .nest("role", &role),
            )
            .suggest(text!(
                "errors.role_only_on_luna_hint",
                "Log in as the user (crypto officer) or the security officer."
            )));
        }
        // A PIN no token accepts is refused here, before it could count as a failed attempt.
        let pin_len = secrecy::ExposeSecret::expose_secret(&pin).len();
        if pin_len > MAX_PIN_BYTES {
            self.record(
                Event::new("login", "partition")
                    .resource(&p.id)
                    .meta("user", user)
                    .meta("token", &p.label)
                    .failed(crate::core::error::ErrorCode::PinInvalid.to_string())
                    .meta("error", "PIN too long; not sent to the HSM"),
            )
            .await;
            return Err(ApiError::new(
                ErrorCode::PinInvalid,
                text!("errors.pin_bytes_long_tokens_accept", "The PIN is {{pin_len}} bytes long; tokens accept at most {{max_pin_bytes}}. It was not sent to the HSM and no attempt was used.", pin_len = pin_len, max_pin_bytes = MAX_PIN_BYTES),
            )
            .suggest(text!("errors.check_what_pasted_into_pin", "Check what was pasted into the PIN field.")));
        }
        let pool = p.pool.clone();
        let r = blocking(move || pool.login(user.p11(), pin)).await?;
        let ev = Event::new("login", "partition")
            .resource(&p.id)
            .meta("user", user)
            .meta("token", &p.label);
        match r {
            Ok(()) => {
                *p.logged_in.lock() = Some(user);
                self.record(ev).await;
            }
            Err(e) => {
                let mut err: ApiError = e.into();
                if matches!(err.code, ErrorCode::PinIncorrect | ErrorCode::PinLocked) {
                    if let Some(note) = self.pin_attempts_note(&p, user).await {
                        err = err.details(note);
                    }
                }
                self.record(ev.failed(err.code.to_string()).meta("error", &err.message))
                    .await;
                return Err(err);
            }
        }
        let token = self.token_view(&p).await;
        let pin_to_be_changed = token.as_ref().is_some_and(|t| user.pin_to_be_changed(t));
        // The trail's key is opened by the roles that use keys — not while the token wants
        // the PIN changed first (it would refuse with CKR_PIN_EXPIRED); the change opens it.
        let uses_keys =
            hsm::roles::check(Some(user.role()), hsm::roles::Action::UseKeys, family).is_ok();
        let audit = if uses_keys && !pin_to_be_changed {
            self.attach_audit(&p).await
        } else {
            self.audit
                .key_status()
                .await
                .map(Into::into)
                .map_err(Into::into)
        };
        let audit = match audit {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!("audit key not opened on {}: {}", p.id, e.message);
                self.audit
                    .key_status()
                    .await
                    .map(Into::into)
                    .unwrap_or(AuditKeyView::NoKeyYet)
            }
        };
        self.emit(ConsoleEvent::PartitionChanged {
            partition_id: p.id.clone(),
        });
        self.emit(ConsoleEvent::AuditKey {
            state: audit.clone(),
        });
        Ok(LoginResult {
            partition_id: p.id.clone(),
            user,
            role_name: user.role().name(family).to_string(),
            audit,
            pin_to_be_changed,
            pin_change_reason: pin_to_be_changed.then(|| pin_change_reason(&p, user)),
        })
    }

    /// The token's information as the UI shows it (`None` when it cannot be read).
    pub(crate) async fn token_view(&self, p: &Partition) -> Option<TokenView> {
        let m = p.module.module.clone();
        let slot = p.slot();
        blocking(move || m.token_info(slot))
            .await
            .ok()?
            .ok()
            .map(|t| TokenView::from(&t))
    }

    /// What the token's flags say about the PIN's remaining attempts.
    pub(crate) async fn pin_attempts_note(&self, p: &Partition, user: UserKind) -> Option<Text> {
        let m = p.module.module.clone();
        let slot = p.slot();
        let t = blocking(move || m.token_info(slot)).await.ok()?.ok()?;
        let v = TokenView::from(&t);
        let (low, last, locked) = match user {
            UserKind::CryptoUser | UserKind::LimitedCryptoOfficer => {
                return Some(text!(
                    "errors.attempts_not_reported_for_role",
                    "The token does not report the attempts left for this role."
                ))
            }
            UserKind::User => (
                v.user_pin_count_low,
                v.user_pin_final_try,
                v.user_pin_locked,
            ),
            UserKind::So => (v.so_pin_count_low, v.so_pin_final_try, v.so_pin_locked),
        };
        Some(if locked {
            text!("errors.attempts_now_locked", "The PIN is now locked.")
        } else if last {
            text!(
                "errors.attempts_final_try",
                "The token says one attempt is left before the PIN locks."
            )
        } else if low {
            text!(
                "errors.attempts_count_low",
                "The token says wrong PINs were entered; fewer attempts remain."
            )
        } else {
            text!(
                "errors.attempts_not_said",
                "The token does not say how many attempts remain."
            )
        })
    }

    pub async fn logout(&self, id: &str) -> ApiResult<()> {
        let p = self.partition_ref(id).await?;
        if p.holds_audit_key() {
            // The last records of this login are sealed and checkpointed while the key is here.
            let _ = self.audit.checkpoint().await;
        }
        self.record(Event::new("logout", "partition").resource(&p.id))
            .await;
        if p.holds_audit.swap(false, Ordering::AcqRel) {
            self.audit.lock().await;
            *self.audit_signer_spki.write() = None;
            self.close_audit_slot(&p).await;
            self.emit(ConsoleEvent::AuditKey {
                state: self
                    .audit
                    .key_status()
                    .await
                    .map(Into::into)
                    .unwrap_or(AuditKeyView::NoKeyYet),
            });
        }
        let pool = p.pool.clone();
        let r = blocking(move || pool.logout()).await?;
        *p.logged_in.lock() = None;
        self.emit(ConsoleEvent::PartitionChanged {
            partition_id: p.id.clone(),
        });
        r.map_err(Into::into)
    }

    /// The checkpoint key pinned from the HSM at unlock.
    pub fn audit_signer_spki(&self) -> Option<Vec<u8>> {
        self.audit_signer_spki.read().clone()
    }
}

/// Why the token wants the PIN changed, in words.
fn pin_change_reason(p: &Partition, user: UserKind) -> String {
    let who = user.role().name(p.module.module.family());
    if p.module.module.family() == p11::Family::Luna {
        format!("The security officer set this {who} PIN, and the partition's policy 21 (\u{201c}Force user PIN change after set/reset\u{201d}) wants it changed before anything else: keys, objects and the audit trail's key stay out of reach until it is.")
    } else {
        format!("The token reports that the {who} PIN must be changed before anything else.")
    }
}

fn module_view(m: &LoadedModule) -> ModuleView {
    let info = m.module.info().ok();
    let (interface, version) = match m.module.entry_point() {
        p11::EntryPoint::Interface32 => ("C_GetInterface", "3.2"),
        p11::EntryPoint::Interface30 => ("C_GetInterface", "3.0"),
        p11::EntryPoint::FunctionList => ("C_GetFunctionList", "2.x"),
    };
    ModuleView {
        id: m.id.clone(),
        path: m.path.display().to_string(),
        builtin: m.builtin,
        manufacturer: info
            .as_ref()
            .map(|i| i.manufacturer.clone())
            .unwrap_or_default(),
        library_description: info
            .as_ref()
            .map(|i| i.library_description.clone())
            .unwrap_or_default(),
        library_version: info
            .as_ref()
            .map(|i| i.library_version.to_string())
            .unwrap_or_default(),
        cryptoki_version: info
            .as_ref()
            .map(|i| i.cryptoki_version.to_string())
            .unwrap_or_default(),
        interface: format!("{interface} {version}"),
        family: m.module.family().into(),
        vendor_functions: m
            .module
            .vendor()
            .offered()
            .into_iter()
            .map(String::from)
            .collect(),
    }
}

fn named(m: &Module, slot: SlotId, capability: bool, values: Vec<(u64, u64)>) -> Vec<NamedSetting> {
    values
        .into_iter()
        .map(|(id, value)| {
            let d = m
                .ca_element_description(slot, !capability, capability, id)
                .ok();
            NamedSetting {
                id,
                value,
                name: d.as_ref().map(|d| d.description.clone()),
                destructive: d.map(|d| d.destructive),
            }
        })
        .collect()
}

fn luna_view(m: &Module, slot: SlotId) -> LunaView {
    LunaView {
        firmware: m
            .ca_firmware_version(slot)
            .ok()
            .map(|(a, b, c)| format!("{a}.{b}.{c}")),
        hsm_storage: m.ca_hsm_storage(slot).ok().map(Into::into),
        token_storage: m.ca_token_storage(slot).ok().map(Into::into),
        partition_policies: m
            .ca_token_policies(slot)
            .ok()
            .map(|v| named(m, slot, false, v)),
        hsm_capabilities: m
            .ca_hsm_capabilities(slot)
            .ok()
            .map(|v| named(m, slot, true, v)),
        token_status_flags: m.ca_token_status(slot).ok().map(|s| s.flags),
    }
}

impl Core {
    /// Every object the session can see, summarized (public objects only until login).
    /// Mechanism and profile objects (PKCS#11 3.x modules such as Kryoptic publish one per
    /// mechanism) describe the module, not its keys, and are left out.
    pub async fn list_keys(&self, partition: &str) -> ApiResult<Vec<ObjectSummary>> {
        let p = self.partition_ref(partition).await?;
        let mut v = p
            .pool
            .run_idempotent_async("keys.list", |s| {
                hk::list_objects(s, &mut p11::Template::new())
            })
            .await?;
        v.retain(|o| o.class != "MECHANISM" && o.class != "PROFILE");
        p.key_refs.learn(&v);
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_named_by_its_serial_or_without_one_by_its_whole_partition() {
        assert_eq!(token_name("m-1a2b:0f0aea212282d895"), "0f0aea212282d895");
        // The same token through its module loaded from another path.
        assert_eq!(token_name("m-9f8e:0f0aea212282d895"), "0f0aea212282d895");
        // No serial: named by its slot, which another module's token may share.
        assert_eq!(
            token_name(&format!("m-1a2b:{}", slot_name(3))),
            "m-1a2b:slot3"
        );
        // A serial that merely begins like a slot's name is a serial.
        assert_eq!(token_name("m-1a2b:slotted"), "slotted");
        assert_eq!(token_name("m-1a2b:slot"), "slot");
    }
}
