//! The console's core: what every domain stands on and nothing above it is needed for —
//! the loaded modules and their partitions, logins and sessions, the engine that records
//! and applies every change ([`change`]), the settings, the audit trail's handle and its keys
//! on the HSM, the one error type and the catalog-backed message type. Domains (`admin`,
//! `sign`, `observe`, `trail`, `ha`) are services over a [`Core`]; none imports another, and
//! the core imports none of them.

pub mod audit_hsm;
pub mod audit_slot;
pub mod builtin;
pub mod change;
pub mod error;
pub mod ha_views;
pub mod i18n;
pub mod key_refs;
pub mod partitions;
pub mod ports;
pub mod role_texts;
pub mod settings;
pub mod views;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use sha2::{Digest, Sha256};
use tokio::sync::broadcast;

use audit::{AuditConfig, AuditLog, Event};
use error::{ApiError, ApiResult, ErrorCode};
use partitions::{LoadedModule, Partition};
use settings::Settings;
use views::{AppInfo, AuditStoreKind, ConsoleEvent, RecordView};

use crate::text;

/// A domain's service: a view of the [`Core`] (plus the domain's own state, when it keeps
/// any) that the domain's operations are methods of. Derefs to the core, so an operation
/// reads partitions, sessions, settings and the trail as `self.…`.
macro_rules! domain_service {
    ($(#[$doc:meta])* $name:ident $(, $state:ty)?) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name<'c> {
            core: &'c $crate::core::Core,
            $(state: &'c $state,)?
        }

        impl<'c> $name<'c> {
            pub(crate) fn new(core: &'c $crate::core::Core $(, state: &'c $state)?) -> Self {
                $name { core $(, state: { let s: &'c $state = state; s })? }
            }
        }

        impl std::ops::Deref for $name<'_> {
            type Target = $crate::core::Core;
            fn deref(&self) -> &$crate::core::Core {
                self.core
            }
        }
    };
}
pub(crate) use domain_service;

/// How to start a console.
#[derive(Debug, Clone)]
pub struct ConsoleConfig {
    /// Settings, the default audit store, the built-in partition.
    pub data_dir: PathBuf,
    /// Settings file; default `data_dir/settings.json`.
    pub settings_path: Option<PathBuf>,
    /// Overrides the settings' audit location (`hsmc --audit-db`).
    pub audit_location: Option<String>,
    /// Offer the built-in lunasim partition (if the settings allow it too).
    pub builtin: bool,
    pub lunasim_path: Option<PathBuf>,
    pub kryoptic_path: Option<PathBuf>,
    /// A bundle's resource directory (holds `pkcs11/`).
    pub resource_dir: Option<PathBuf>,
    /// Load the modules remembered in the settings.
    pub load_saved_modules: bool,
    /// Who is acting (recorded with every audit record).
    pub context: audit::Context,
}

impl ConsoleConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        ConsoleConfig {
            data_dir: data_dir.into(),
            settings_path: None,
            audit_location: None,
            builtin: true,
            lunasim_path: None,
            kryoptic_path: None,
            resource_dir: None,
            load_saved_modules: true,
            context: audit::Context::local(),
        }
    }

    /// `$XDG_DATA_HOME/hsm-console` (or `~/.local/share/hsm-console`).
    pub fn default_data_dir() -> PathBuf {
        if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
            return PathBuf::from(d).join("hsm-console");
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        home.join(".local/share/hsm-console")
    }

    pub fn settings_file(&self) -> PathBuf {
        self.settings_path
            .clone()
            .unwrap_or_else(|| self.data_dir.join("settings.json"))
    }
}

/// The state every domain reads: loaded modules, their partitions, the audit trail, the
/// settings, and the channel events go out on.
pub struct Core {
    config: ConsoleConfig,
    settings: RwLock<Settings>,
    pub(crate) modules: RwLock<Vec<Arc<LoadedModule>>>,
    pub(crate) partitions: RwLock<HashMap<String, Arc<Partition>>>,
    audit: Arc<AuditLog>,
    audit_location: String,
    /// The checkpoint key's SPKI as read from the HSM at unlock (pins verification).
    audit_signer_spki: RwLock<Option<Vec<u8>>>,
    /// The built-in module's audit slot, when it has one (see `builtin::AUDIT_TOKEN_LABEL`).
    audit_slot: RwLock<Option<Arc<audit_slot::AuditSlot>>>,
    events: broadcast::Sender<ConsoleEvent>,
    builtin_note: RwLock<Option<String>>,
    startup_warnings: RwLock<Vec<String>>,
}

impl Core {
    /// Open the core: settings, audit trail, built-in partition, remembered modules.
    /// Only a damaged settings file or an unreachable audit store stop it; a module that
    /// cannot be loaded is reported and skipped.
    pub async fn open(config: ConsoleConfig) -> ApiResult<Core> {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| {
            ApiError::io(
                crate::text!(
                    "hsm.console.cannot_create_data_folder",
                    "cannot create the data folder {{path}}",
                    path = config.data_dir.display()
                ),
                &e,
            )
        })?;
        let settings = Settings::load(&config.settings_file())?;
        let audit_location = config
            .audit_location
            .clone()
            .or_else(|| settings.audit.location.clone())
            .unwrap_or_else(|| config.data_dir.join("audit.db").display().to_string());
        let mut ac = AuditConfig::new(audit_location.clone());
        ac.checkpoint_every = settings.audit.checkpoint_every;
        ac.checkpoint_interval = Duration::from_secs(settings.audit.checkpoint_minutes * 60);
        let log = AuditLog::open(ac, config.context.clone()).await.map_err(|e| {
            ApiError::new(ErrorCode::AuditUnavailable, text!("errors.audit_trail_at_cannot_opened", "The audit trail at {{audit_location}} cannot be opened.", audit_location = redact_url(&audit_location)))
                .details(e.to_string())
                .suggest(text!("errors.check_audit_store_settings_audit", "Check the audit store in the settings (or --audit-db). The console does not work without its audit trail."))
        })?;
        // A file next to the data outside the store remembers the newest checkpoint
        // (the partition holding the key remembers it too, once logged in).
        let anchor_name = format!(
            "audit-anchor-{}.json",
            &hex::encode(Sha256::digest(log.log_id().as_bytes()))[..12]
        );
        log.add_anchor(Arc::new(audit::FileAnchor::new(
            config.data_dir.join(anchor_name),
        )));
        let (events, _) = broadcast::channel(256);
        let core = Core {
            settings: RwLock::new(settings.clone()),
            modules: RwLock::new(Vec::new()),
            partitions: RwLock::new(HashMap::new()),
            audit: Arc::new(log),
            audit_location,
            audit_signer_spki: RwLock::new(None),
            audit_slot: RwLock::new(None),
            events,
            builtin_note: RwLock::new(None),
            startup_warnings: RwLock::new(Vec::new()),
            config,
        };
        if core.config.builtin && settings.builtin_enabled {
            if let Err(e) = core.load_builtin().await {
                tracing::warn!("built-in partition unavailable: {e}");
                *core.builtin_note.write() = Some(format!(
                    "{}{}",
                    e.message,
                    e.details
                        .as_ref()
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                ));
            }
        }
        if core.config.load_saved_modules {
            for path in settings.modules.iter() {
                if let Err(e) = core.load_module(path, false).await {
                    core.startup_warnings
                        .write()
                        .push(format!("{path}: {}", e.message));
                }
            }
        }
        Ok(core)
    }

    /// `PartitionChanged` for each partition whose module generation moved since `seen`.
    pub(crate) fn announce_reconnects(&self, seen: &mut HashMap<String, u64>) {
        let now: Vec<(String, u64)> = self
            .partitions
            .read()
            .values()
            .map(|p| (p.id.clone(), p.pool.module().generation()))
            .collect();
        for (id, generation) in &now {
            if seen.get(id).is_some_and(|g| g != generation) {
                tracing::info!("{id}: the HSM reconnected; the window reads the partition again");
                self.emit(ConsoleEvent::PartitionChanged {
                    partition_id: id.clone(),
                });
            }
        }
        *seen = now.into_iter().collect();
    }

    /// Write the final checkpoint, log out and release the store.
    pub(crate) async fn close(&self) {
        if let Err(e) = self.audit.close().await {
            tracing::warn!("final audit checkpoint not written: {e}");
        }
        let parts: Vec<_> = self.partitions.read().values().cloned().collect();
        for p in parts {
            let pool = p.pool.clone();
            let _ = tokio::task::spawn_blocking(move || pool.logout()).await;
        }
    }

    pub fn config(&self) -> &ConsoleConfig {
        &self.config
    }

    pub fn audit(&self) -> &Arc<AuditLog> {
        &self.audit
    }

    pub fn subscribe(&self) -> broadcast::Receiver<ConsoleEvent> {
        self.events.subscribe()
    }

    pub(crate) fn emit(&self, e: ConsoleEvent) {
        let _ = self.events.send(e);
    }

    pub fn app_info(&self) -> AppInfo {
        AppInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            data_dir: self.config.data_dir.display().to_string(),
            audit_location: redact_url(&self.audit_location),
            audit_store: AuditStoreKind::of(&self.audit),
            builtin_available: self.modules.read().iter().any(|m| m.builtin),
            builtin_note: self.builtin_note.read().clone(),
            startup_warnings: self.startup_warnings.read().clone(),
        }
    }

    // ---- settings ----

    pub fn settings(&self) -> Settings {
        self.settings.read().clone()
    }

    /// Validate, store, audit. Changes to the audit store take effect at the next start.
    pub async fn update_settings(&self, new: Settings) -> ApiResult<Settings> {
        new.validate()?;
        let old = self.settings();
        if old == new {
            return Ok(new);
        }
        if new.audit.location != old.audit.location {
            if let Some(loc) = &new.audit.location {
                let store = audit::store::Store::connect(loc, Duration::from_secs(5)).await.map_err(|e| {
                    ApiError::new(ErrorCode::AuditUnavailable, text!("errors.audit_store_cannot_used", "The audit store {{loc}} cannot be used: {{error}}", loc = redact_url(loc), error = e)).suggest(text!("errors.check_path_url_database_exists", "Check the path or URL (and that the database exists and accepts this user); the settings were not changed."))
                })?;
                store.close().await;
            }
        }
        let changed = settings::changed_fields(&old, &new);
        self.record(Event::new("settings.update", "settings").meta("changed", &changed))
            .await;
        new.save(&self.config.settings_file())?;
        *self.settings.write() = new.clone();
        Ok(new)
    }

    // ---- audit helpers ----

    /// Write an audit record before a privileged action. Fails closed: when the record
    /// cannot be written the caller must not act.
    pub(crate) async fn audit_first(&self, e: Event) -> ApiResult<()> {
        let r = self.audit.append(e).await?;
        self.emit(ConsoleEvent::AuditRecord {
            record: Box::new(RecordView::from(r)),
        });
        Ok(())
    }

    /// Record an event whatever the key's state (spooled until the key is unlocked). A
    /// failure here is logged, never hidden from the officer: the event is retried into
    /// the spool, and the UI's audit badge shows the store's state.
    pub(crate) async fn record(&self, e: Event) {
        match self.audit.record(e.clone()).await {
            Ok(()) => self.emit(ConsoleEvent::AuditChanged {}),
            Err(err) => {
                tracing::error!("audit record for {} not written: {err}", e.action);
                let _ = self
                    .audit
                    .store()
                    .push_pending(self.audit.log_id(), &self.audit.prepare(&e))
                    .await;
            }
        }
    }

    /// Record the outcome of an action: success or the error that stopped it.
    pub(crate) async fn record_outcome<T>(&self, e: Event, r: &ApiResult<T>) {
        let e = match r {
            Ok(_) => e,
            Err(err) => {
                let settled = e
                    .metadata
                    .get("settled_after_reconnect")
                    .and_then(|v| v.as_bool())
                    == Some(true);
                let e = e.failed(err.code.to_string()).meta("error", &err.message);
                if err.code == ErrorCode::HsmDisconnected && !settled {
                    // The HSM may have done it before the answer was lost.
                    e.status(audit::Status::Unknown)
                        .meta("outcome", "unknown — check the token")
                } else {
                    e
                }
            }
        };
        self.record(e).await;
    }
}

/// Strip the password from a PostgreSQL URL before showing it.
pub fn redact_url(s: &str) -> String {
    if let Some(rest) = s
        .strip_prefix("postgres://")
        .or_else(|| s.strip_prefix("postgresql://"))
    {
        if let Some((cred, host)) = rest.split_once('@') {
            let user = cred.split(':').next().unwrap_or("");
            return format!("postgres://{user}:***@{host}");
        }
    }
    s.to_string()
}

/// A short, stable ID for a module path.
pub(crate) fn module_id(path: &Path) -> String {
    format!(
        "m-{}",
        &hex::encode(Sha256::digest(path.as_os_str().as_encoded_bytes()))[..8]
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn urls_lose_their_password() {
        assert_eq!(
            super::redact_url("postgres://audit:s3cret@db:5432/trail"),
            "postgres://audit:***@db:5432/trail"
        );
        assert_eq!(super::redact_url("/var/lib/audit.db"), "/var/lib/audit.db");
    }
}
