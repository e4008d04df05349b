//! `console` — the console's services as officers use them: modules and partitions,
//! logins, keys, the audit trail, settings. Every action that changes something is written
//! to the audit trail first (and refused when it cannot be); the desktop app's commands and
//! `hsmc`'s subcommands are thin adapters over [`Console`].

pub mod attributes;
pub mod audit_hsm;
pub mod audit_ops;
pub mod audit_slot;
pub mod backup;
pub mod builtin;
pub mod change;
pub mod credentials;
pub mod error;
pub mod findings;
pub mod ha;
pub mod health;
pub mod i18n;
/// `text!(KEY, TEMPLATE, name = value, …)`: a [`i18n::Text`] (the workspace's one macro).
pub use hsm::text;
pub mod key_refs;
pub mod keys;
pub mod objects;
pub mod overview;
pub mod partitions;
pub mod pqc;
pub mod probe_verdict;
pub mod probes;
pub mod role_texts;
pub mod settings;
pub mod sign;
pub mod uris;
pub mod usage;
pub mod views;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use sha2::{Digest, Sha256};
use tokio::sync::broadcast;

use audit::{AuditConfig, AuditLog, Event};
pub use error::{ApiError, ApiResult, ErrorCode};
use settings::Settings;
use views::{AppInfo, ConsoleEvent, RecordView};

pub use partitions::{LoadedModule, Partition};

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

/// The console: loaded modules, their partitions, the audit trail, the settings.
pub struct Console {
    config: ConsoleConfig,
    settings: RwLock<Settings>,
    modules: RwLock<Vec<Arc<LoadedModule>>>,
    partitions: RwLock<HashMap<String, Arc<Partition>>>,
    audit: Arc<AuditLog>,
    audit_location: String,
    /// The checkpoint key's SPKI as read from the HSM at unlock (pins verification).
    audit_signer_spki: RwLock<Option<Vec<u8>>>,
    /// The built-in module's audit slot, when it has one (see `builtin::AUDIT_TOKEN_LABEL`).
    audit_slot: RwLock<Option<Arc<audit_slot::AuditSlot>>>,
    events: broadcast::Sender<ConsoleEvent>,
    builtin_note: RwLock<Option<String>>,
    startup_warnings: RwLock<Vec<String>>,
    stats_state: parking_lot::Mutex<health::StatsState>,
    probe_db: parking_lot::Mutex<Option<sqlx::SqlitePool>>,
    last_verification: RwLock<Option<audit_ops::LastVerification>>,
    /// Scheduled verifications that could not run in a row, and when the next may try.
    verify_retry: parking_lot::Mutex<Option<(u32, std::time::Instant)>>,
    ticker: parking_lot::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// HA groups: which partitions are groups, their last drift checks.
    ha: parking_lot::Mutex<ha::HaMemory>,
}

impl Console {
    /// Open the console: settings, audit trail, built-in partition, remembered modules.
    /// Only a damaged settings file or an unreachable audit store stop it; a module that
    /// cannot be loaded is reported and skipped.
    pub async fn open(config: ConsoleConfig) -> ApiResult<Arc<Console>> {
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
        let console = Arc::new(Console {
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
            stats_state: parking_lot::Mutex::new(health::StatsState::default()),
            probe_db: parking_lot::Mutex::new(None),
            last_verification: RwLock::new(None),
            verify_retry: parking_lot::Mutex::new(None),
            ticker: parking_lot::Mutex::new(None),
            ha: parking_lot::Mutex::new(ha::HaMemory::default()),
            config,
        });
        if console.config.builtin && settings.builtin_enabled {
            if let Err(e) = console.load_builtin().await {
                tracing::warn!("built-in partition unavailable: {e}");
                *console.builtin_note.write() = Some(format!(
                    "{}{}",
                    e.message,
                    e.details
                        .as_ref()
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                ));
            }
        }
        if console.config.load_saved_modules {
            for path in settings.modules.iter() {
                if let Err(e) = console.load_module(path, false).await {
                    console
                        .startup_warnings
                        .write()
                        .push(format!("{path}: {}", e.message));
                }
            }
        }
        console.start_ticker();
        Ok(console)
    }

    /// Checkpoints on time even when nothing happens (the audit log decides when one is due),
    /// every 30 s; and every second, a partition whose module reconnected (the pool
    /// reinitialized it) is announced as changed, so the window reads its objects again —
    /// their handles may be new numbers.
    fn start_ticker(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let h = tokio::spawn(async move {
            let mut iv = tokio::time::interval(Duration::from_secs(1));
            let mut generations: HashMap<String, u64> = HashMap::new();
            let mut ticks = 0u64;
            iv.tick().await;
            loop {
                iv.tick().await;
                ticks += 1;
                let Some(c) = weak.upgrade() else { break };
                c.announce_reconnects(&mut generations);
                if ticks % 30 != 0 {
                    continue;
                }
                match c.audit.tick().await {
                    Ok(true) => c.emit(ConsoleEvent::AuditChanged {}),
                    Ok(false) => {}
                    Err(e) => tracing::debug!("audit checkpoint not written: {e}"),
                }
                c.scheduled_verification().await;
            }
        });
        *self.ticker.lock() = Some(h);
    }

    /// `PartitionChanged` for each partition whose module generation moved since `seen`.
    fn announce_reconnects(&self, seen: &mut HashMap<String, u64>) {
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

    /// Verify the trail on the schedule in the settings (hourly, daily) when a verification
    /// is due and the trail's key is open. The ticker calls this every 30 s; returns whether
    /// a verification ran.
    pub async fn scheduled_verification(&self) -> bool {
        let every = match self.settings().audit.auto_verify {
            settings::AutoVerify::Off => return false,
            settings::AutoVerify::Hourly => time::Duration::hours(1),
            settings::AutoVerify::Daily => time::Duration::days(1),
        };
        // The in-memory check first: most ticks end here without asking the store.
        let due = match self.last_verification.read().as_ref() {
            None => true,
            Some(v) => {
                time::OffsetDateTime::parse(&v.at, &time::format_description::well_known::Rfc3339)
                    .map(|t| time::OffsetDateTime::now_utc() - t >= every)
                    .unwrap_or(true)
            }
        };
        // After a run that could not finish (the store unreachable…), wait 1, 2, 4… minutes,
        // at most the schedule's interval, instead of trying again on every 30 s tick.
        let backing_off = self
            .verify_retry
            .lock()
            .is_some_and(|(_, at)| std::time::Instant::now() < at);
        if !due
            || backing_off
            || !matches!(
                self.audit.key_status().await,
                Ok(audit::KeyStatus::Unlocked { .. })
            )
        {
            return false;
        }
        let r = self
            .audit_verify_as(
                &|_, _| {},
                &std::sync::atomic::AtomicBool::new(false),
                audit_ops::VerifyTrigger::Scheduled,
            )
            .await;
        let mut retry = self.verify_retry.lock();
        match r {
            Ok(_) => *retry = None,
            Err(e) => {
                let failures = retry.map_or(1, |(n, _)| n + 1);
                let wait = Duration::from_secs(60 << (failures - 1).min(10))
                    .min(Duration::from_secs(every.whole_seconds().max(60) as u64));
                *retry = Some((failures, std::time::Instant::now() + wait));
                tracing::warn!(
                    "scheduled audit verification failed ({failures} in a row; next try in {} s): {}",
                    wait.as_secs(),
                    e.message
                );
            }
        }
        drop(retry);
        self.emit(ConsoleEvent::AuditChanged {});
        true
    }

    /// Write the final checkpoint, log out and release the store. Call before exit.
    pub async fn close(&self) {
        if let Some(h) = self.ticker.lock().take() {
            h.abort();
        }
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
            audit_store: audit_ops::AuditStoreKind::of(&self.audit),
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
