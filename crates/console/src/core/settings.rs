//! Remembered settings: the modules an officer added, the audit store, thresholds and
//! intervals, UI preferences. A JSON file in the data directory, written atomically. PINs
//! are never stored here (or anywhere).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::core::error::{ApiError, ApiResult};
use crate::core::i18n::Text;
use crate::text;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum AutoVerify {
    Off,
    Hourly,
    Daily,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    System,
    Light,
    Dark,
}

/// The window's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub enum Language {
    #[serde(rename = "en")]
    En,
    /// 繁體中文
    #[serde(rename = "zh-Hant")]
    ZhHant,
    /// 简体中文
    #[serde(rename = "zh-Hans")]
    ZhHans,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
pub struct AuditSettings {
    /// SQLite file or `postgres://` URL; `None` = `audit.db` in the data directory.
    pub location: Option<String>,
    #[ts(type = "number")]
    pub checkpoint_every: u64,
    #[ts(type = "number")]
    pub checkpoint_minutes: u64,
    pub auto_verify: AutoVerify,
}

impl Default for AuditSettings {
    fn default() -> Self {
        AuditSettings {
            location: None,
            checkpoint_every: 100,
            checkpoint_minutes: 10,
            auto_verify: AutoVerify::Daily,
        }
    }
}

/// A time-stamp authority (RFC 3161) asked for a token over each CMS and bundle signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TimestampAuthority {
    /// `http://` or `https://`; requests are POSTed as `application/timestamp-query`.
    pub url: String,
    /// PEM file of the CA (or CAs) the TSA's certificate must chain to; without one, the
    /// TSA's certificate is checked for its `timeStamping` use but not for who issued it.
    pub ca_file: Option<String>,
    /// How long to wait for an answer, seconds.
    #[ts(type = "number")]
    pub timeout_seconds: u64,
    /// When the TSA fails, write the signature without a time-stamp (the file's outcome and
    /// its record say so) instead of failing the file and discarding the signature.
    #[serde(default)]
    #[ts(optional)]
    pub optional: Option<bool>,
}

/// Settings → Timestamp authority; off by default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default)]
pub struct TimestampSettings {
    pub enabled: bool,
    pub url: String,
    pub ca_file: Option<String>,
    #[ts(type = "number")]
    pub timeout_seconds: u64,
    /// Sign without a time-stamp when the TSA fails (see [`TimestampAuthority::optional`]).
    pub optional: bool,
}

impl Default for TimestampSettings {
    fn default() -> Self {
        TimestampSettings {
            enabled: false,
            url: String::new(),
            ca_file: None,
            timeout_seconds: 10,
            optional: false,
        }
    }
}

impl TimestampSettings {
    /// The authority to ask, when time-stamps are on.
    pub fn authority(&self) -> Option<TimestampAuthority> {
        self.enabled.then(|| TimestampAuthority {
            url: self.url.clone(),
            ca_file: self.ca_file.clone().filter(|f| !f.trim().is_empty()),
            timeout_seconds: self.timeout_seconds,
            optional: Some(self.optional),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
pub struct Settings {
    /// PKCS#11 modules the officer added (paths), loaded at start.
    pub modules: Vec<String>,
    /// Offer the built-in lunasim partition.
    pub builtin_enabled: bool,
    pub audit: AuditSettings,
    /// HSS thresholds, in per cent of the key's total signatures left.
    pub hss_warning_percent: f64,
    pub hss_critical_percent: f64,
    /// Sessions per partition pool.
    pub pool_size: usize,
    /// Statistics polling interval, seconds.
    pub stats_poll_seconds: u64,
    pub theme: Theme,
    /// The window's language; `None` follows the system's locale.
    pub language: Option<Language>,
    /// Where signatures were last written (a folder), when not beside the files.
    pub last_output_dir: Option<String>,
    /// RFC 3161 time-stamps on CMS and bundle signatures.
    pub timestamp: TimestampSettings,
    /// The post-quantum policy the Overview and `hsmc status` judge keys under: `nist`,
    /// `cnsa2`, or a policy file (see `console::pqc`).
    pub pqc_policy: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            modules: Vec::new(),
            builtin_enabled: true,
            audit: AuditSettings::default(),
            hss_warning_percent: 10.0,
            hss_critical_percent: 1.0,
            pool_size: 4,
            stats_poll_seconds: 5,
            theme: Theme::System,
            language: None,
            last_output_dir: None,
            timestamp: TimestampSettings::default(),
            pqc_policy: "nist".into(),
        }
    }
}

impl Settings {
    /// Read the file; a missing file is the defaults. A damaged file is an error that says
    /// so, never silently replaced (it might hold the only record of the modules in use).
    pub fn load(path: &Path) -> ApiResult<Settings> {
        match std::fs::read(path) {
            Ok(b) => Settings::parse(&b).map_err(|e| {
                ApiError::invalid(text!(
                    "errors.settings_file_damaged",
                    "The settings file {{path}} is damaged: {{error}}",
                    path = path.display(),
                    error = e
                ))
                .suggest(text!(
                    "errors.fix_move_file_away_console",
                    "Fix or move the file away; the console will start with defaults."
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
            Err(e) => Err(ApiError::io(
                text!(
                    "hsm.console.cannot_read",
                    "cannot read {{path}}",
                    path = path.display()
                ),
                &e,
            )),
        }
    }

    /// Parse the settings file's bytes (anything may be in the file).
    pub fn parse(bytes: &[u8]) -> Result<Settings, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// Write atomically (temp file, fsync, rename).
    pub fn save(&self, path: &Path) -> ApiResult<()> {
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        std::fs::create_dir_all(&dir).map_err(|e| {
            ApiError::io(
                text!(
                    "hsm.console.cannot_create_settings_folder",
                    "cannot create the settings folder"
                ),
                &e,
            )
        })?;
        let tmp = path.with_extension("json.tmp");
        let mut f = std::fs::File::create(&tmp).map_err(|e| {
            ApiError::io(
                text!("hsm.console.cannot_write_settings", "cannot write settings"),
                &e,
            )
        })?;
        f.write_all(&serde_json::to_vec_pretty(self).expect("settings serialize"))
            .map_err(|e| {
                ApiError::io(
                    text!("hsm.console.cannot_write_settings", "cannot write settings"),
                    &e,
                )
            })?;
        f.sync_all().map_err(|e| {
            ApiError::io(
                text!("hsm.console.cannot_write_settings", "cannot write settings"),
                &e,
            )
        })?;
        std::fs::rename(&tmp, path).map_err(|e| {
            ApiError::io(
                text!("hsm.console.cannot_write_settings", "cannot write settings"),
                &e,
            )
        })
    }

    /// Reject values that make no sense before they are stored.
    pub fn validate(&self) -> ApiResult<()> {
        if !(0.0..=100.0).contains(&self.hss_warning_percent)
            || !(0.0..=100.0).contains(&self.hss_critical_percent)
        {
            return Err(ApiError::invalid(text!(
                "errors.hss_thresholds_percentages_between",
                "HSS thresholds are percentages between 0 and 100"
            )));
        }
        if self.hss_critical_percent > self.hss_warning_percent {
            return Err(ApiError::invalid(text!(
                "errors.critical_hss_threshold_must_not",
                "the critical HSS threshold must not exceed the warning threshold"
            )));
        }
        if !(1..=64).contains(&self.pool_size) {
            return Err(ApiError::invalid(text!(
                "errors.pool_size_must_between_sessions",
                "the pool size must be between 1 and 64 sessions"
            )));
        }
        if !(1..=3600).contains(&self.stats_poll_seconds) {
            return Err(ApiError::invalid(text!(
                "errors.polling_interval_must_between_seconds",
                "the polling interval must be between 1 and 3600 seconds"
            )));
        }
        if self.audit.checkpoint_every == 0 || self.audit.checkpoint_minutes == 0 {
            return Err(ApiError::invalid(text!(
                "errors.checkpoint_intervals_must_at_least",
                "checkpoint intervals must be at least 1"
            )));
        }
        if let Some(tsa) = self.timestamp.authority() {
            check_authority(&tsa)?;
        }
        Ok(())
    }
}

/// Names of the top-level settings that differ (for the audit record).
pub fn changed_fields(old: &Settings, new: &Settings) -> Vec<String> {
    let (a, b) = (
        serde_json::to_value(old).unwrap_or_default(),
        serde_json::to_value(new).unwrap_or_default(),
    );
    let mut out = Vec::new();
    if let (Some(a), Some(b)) = (a.as_object(), b.as_object()) {
        for (k, v) in b {
            if a.get(k) != Some(v) {
                out.push(k.clone());
            }
        }
    }
    out
}

/// Why a TSA setting cannot be used (before anything is signed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TsaConfigError {
    #[error("the time-stamp authority URL '{0}' is not an http:// or https:// URL")]
    NotHttp(String),
    #[error("the time-stamp authority timeout must be between 1 and 300 seconds")]
    Timeout,
    #[error("the TSA CA file {path}: {reason}")]
    CaFile { path: String, reason: Text },
}

impl From<TsaConfigError> for ApiError {
    fn from(e: TsaConfigError) -> Self {
        let message = match e {
            TsaConfigError::NotHttp(url) => text!(
                "errors.tsa_url_not_http",
                "The time-stamp authority URL '{{url}}' is not an http:// or https:// URL.",
                url = url
            ),
            TsaConfigError::Timeout => text!(
                "errors.tsa_timeout_range",
                "The time-stamp authority timeout must be between 1 and 300 seconds."
            ),
            TsaConfigError::CaFile { path, reason } => text!(
                "errors.tsa_ca_file",
                "The TSA CA file {{path}}: {{reason}}.",
                path = path,
                reason = &reason
            )
            .nest("reason", &reason),
        };
        ApiError::invalid(message).suggest(text!(
            "errors.tsa_settings_hint",
            "Check Settings → Timestamp authority (or hsmc sign --tsa)."
        ))
    }
}

/// The URL is `http://` or `https://` with a host, the timeout sensible.
pub fn check_authority(a: &TimestampAuthority) -> Result<(), TsaConfigError> {
    let uri: ureq::http::Uri = a
        .url
        .trim()
        .parse()
        .map_err(|_| TsaConfigError::NotHttp(a.url.clone()))?;
    let http = matches!(uri.scheme_str(), Some("http") | Some("https"));
    if !http || uri.host().is_none_or(str::is_empty) {
        return Err(TsaConfigError::NotHttp(a.url.clone()));
    }
    if !(1..=300).contains(&a.timeout_seconds) {
        return Err(TsaConfigError::Timeout);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        assert_eq!(Settings::load(&p).unwrap(), Settings::default());
        let mut s = Settings::default();
        s.modules.push("/usr/lib/softhsm/libsofthsm2.so".into());
        s.save(&p).unwrap();
        assert_eq!(Settings::load(&p).unwrap(), s);
        std::fs::write(&p, "{ not json").unwrap();
        assert!(Settings::load(&p).unwrap_err().message.contains("damaged"));
    }

    #[test]
    fn validation() {
        let mut s = Settings::default();
        assert!(s.validate().is_ok());
        s.hss_critical_percent = 20.0;
        assert!(s.validate().is_err());
    }

    #[test]
    fn timestamps_are_off_by_default_and_need_an_http_url() {
        let mut s = Settings::default();
        assert_eq!(s.timestamp.authority(), None);
        // Settings files written before time-stamps existed read as "off".
        let old = Settings::parse(br#"{"pool_size": 4}"#).unwrap();
        assert_eq!(old.timestamp, TimestampSettings::default());
        s.timestamp.enabled = true;
        s.timestamp.url = "ftp://tsa.example/".into();
        let e = s.validate().unwrap_err();
        assert!(e.message.contains("http:// or https://"), "{}", e.message);
        s.timestamp.url = "http://127.0.0.1:3180/tsa".into();
        assert!(s.validate().is_ok());
        s.timestamp.timeout_seconds = 0;
        assert!(s.validate().is_err());
        // Off, whatever the URL says.
        s.timestamp = TimestampSettings {
            url: "nonsense".into(),
            ..TimestampSettings::default()
        };
        assert!(s.validate().is_ok());
    }
}
