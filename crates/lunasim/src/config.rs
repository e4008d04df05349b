//! `LUNASIM_CONF`: a TOML file naming the inner module, the store directory and the
//! behaviour knobs. Every field has a default; without the file lunasim looks for Kryoptic
//! next to itself (`<dir of liblunasim.so>/../pkcs11/libkryoptic_pkcs11.so`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    /// Added to every call, like a network HSM round trip.
    #[serde(default)]
    pub per_call_ms: f64,
    /// Uniform jitter, ± this many milliseconds.
    #[serde(default)]
    pub jitter_ms: f64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PqcQueue {
    /// One service queue for PQC signing (ML-DSA, HSS), as measured on a real Luna.
    #[serde(default)]
    pub enabled: bool,
    /// Service time per PQC signature, in milliseconds.
    #[serde(default = "default_service_ms")]
    pub service_ms: f64,
}

fn default_service_ms() -> f64 {
    15.0
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The PKCS#11 module doing the real cryptography.
    pub inner_module: Option<PathBuf>,
    /// Where HSS keys and HSM statistics live.
    pub store_dir: Option<PathBuf>,
    /// Environment for the inner module (e.g. `KRYOPTIC_CONF`), set before it is loaded.
    #[serde(default)]
    pub inner_env: BTreeMap<String, String>,
    /// Firmware version reported (`major.minor.subminor`).
    pub firmware: Option<String>,
    /// HSM serial number reported.
    pub hsm_serial: Option<u64>,
    /// HSM storage capacity reported, in bytes.
    pub hsm_storage_bytes: Option<u64>,
    #[serde(default)]
    pub latency: Latency,
    #[serde(default)]
    pub pqc_queue: PqcQueue,
    /// Luna partition policy 21, "Force user PIN change after set/reset": after the SO
    /// sets the Crypto Officer's PIN, it must be changed before anything else. On by
    /// default on a Luna; off here unless set, so tokens made by tests and the built-in
    /// partition keep working with the PIN they were given.
    #[serde(default)]
    pub force_user_pin_change: bool,
    /// A file of JSON control commands, re-read when it changes (for tests in other
    /// processes, e.g. the desktop app under WebDriver).
    pub control_file: Option<PathBuf>,
    /// HA groups (`[[ha_group]]`).
    #[serde(default, rename = "ha_group")]
    pub ha_groups: Vec<GroupConfig>,
    /// The `CA_GetHAState` layout: `"current"` (Luna SDK 2018 and later: 20-character
    /// serials) or `"legacy"` (older SDKs: `CK_ULONG` serials).
    pub ha_state_layout: Option<HaStateLayout>,
}

/// One `[[ha_group]]` table: an HA group of member partitions behind one virtual slot. The
/// HA layer gives it its meaning (virtual slot, stores, the checks that refuse a group).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    /// The group's label (the virtual slot's token label).
    pub label: String,
    /// The group serial number (numeric, at most 16 digits: it is the virtual slot's token
    /// serial).
    pub serial: String,
    /// The virtual slot's ID (default 100, 101, … by position).
    pub slot: Option<u64>,
    /// Show only the virtual slot, not the members' own slots (Luna's `HAOnly`).
    #[serde(default)]
    pub ha_only: bool,
    /// Replicate what a member missed as soon as it is back (otherwise on `resync`).
    #[serde(default)]
    pub auto_resync: bool,
    /// Where the group keeps its replication records (default `<store_dir>/ha/<serial>`).
    pub store_dir: Option<PathBuf>,
    #[serde(default, rename = "member")]
    pub members: Vec<MemberConfig>,
}

/// One `[[ha_group.member]]`: a partition of its own, i.e. a slot of the inner module with
/// its own token, and a store of its own (statistics, usage counters).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemberConfig {
    /// The member partition's serial number (numeric, at most 16 digits); its own slot
    /// reports it.
    pub serial: String,
    /// The inner module's slot holding this member's token.
    pub slot: u64,
    /// Default `<group store>/member-<serial>`.
    pub store_dir: Option<PathBuf>,
}

/// Which SDK generation's `CK_HA_STATUS` `CA_GetHAState` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HaStateLayout {
    #[default]
    Current,
    Legacy,
}

impl Config {
    pub fn load() -> Result<(Config, Option<PathBuf>), String> {
        Self::load_beside(None)
    }

    /// The configuration of the library at `library`: a file `<library>.toml` beside it
    /// when there is one (so a copy of `liblunasim.so` can be a second simulated HSM in a
    /// process whose `LUNASIM_CONF` names the first), else `LUNASIM_CONF`, else defaults.
    pub fn load_beside(library: Option<&Path>) -> Result<(Config, Option<PathBuf>), String> {
        let beside = library.map(|l| {
            let mut p = l.as_os_str().to_owned();
            p.push(".toml");
            PathBuf::from(p)
        });
        let path = match beside.filter(|p| p.is_file()) {
            Some(p) => p,
            None => match std::env::var_os("LUNASIM_CONF") {
                Some(p) => PathBuf::from(p),
                None => return Ok((Config::default(), None)),
            },
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read the configuration {}: {e}", path.display()))?;
        let c: Config =
            toml::from_str(&text).map_err(|e| format!("configuration {}: {e}", path.display()))?;
        Ok((c, Some(path)))
    }

    pub fn firmware(&self) -> (u64, u64, u64) {
        let f = self.firmware.as_deref().unwrap_or("7.9.1");
        let mut it = f.split('.').map(|x| x.trim().parse::<u64>().unwrap_or(0));
        (
            it.next().unwrap_or(7),
            it.next().unwrap_or(9),
            it.next().unwrap_or(1),
        )
    }

    pub fn inner_module(&self, own_dir: Option<&Path>) -> Result<PathBuf, String> {
        if let Some(p) = &self.inner_module {
            return Ok(p.clone());
        }
        if let Some(d) = own_dir {
            for candidate in [
                d.join("../pkcs11/libkryoptic_pkcs11.so"),
                d.join("libkryoptic_pkcs11.so"),
            ] {
                if candidate.is_file() {
                    return Ok(candidate);
                }
            }
        }
        Err("no inner module: set inner_module in the file named by LUNASIM_CONF".into())
    }

    pub fn store_dir(&self) -> PathBuf {
        if let Some(d) = &self.store_dir {
            return d.clone();
        }
        let base = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("lunasim")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_file() {
        let c: Config = toml::from_str(
            r#"
            inner_module = "/x/libkryoptic_pkcs11.so"
            store_dir = "/tmp/s"
            firmware = "7.8.4"
            control_file = "/tmp/c.jsonl"
            [inner_env]
            KRYOPTIC_CONF = "/tmp/k.conf"
            [latency]
            per_call_ms = 5
            jitter_ms = 1.5
            [pqc_queue]
            enabled = true
            service_ms = 20
            "#,
        )
        .unwrap();
        assert_eq!(c.firmware(), (7, 8, 4));
        assert_eq!(c.latency.per_call_ms, 5.0);
        assert!(c.pqc_queue.enabled);
        assert_eq!(c.inner_env["KRYOPTIC_CONF"], "/tmp/k.conf");
    }

    #[test]
    fn a_file_beside_the_library_comes_first() {
        let dir = std::env::temp_dir().join(format!("lunasim-beside-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("liblunasim-second.so");
        std::fs::write(
            dir.join("liblunasim-second.so.toml"),
            "firmware = \"7.8.0\"\n",
        )
        .unwrap();
        let (c, p) = Config::load_beside(Some(&lib)).unwrap();
        assert_eq!(c.firmware(), (7, 8, 0));
        assert_eq!(p.unwrap(), dir.join("liblunasim-second.so.toml"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unknown_keys_are_an_error() {
        assert!(toml::from_str::<Config>("inner_modul = 'x'").is_err());
    }

    #[test]
    fn defaults() {
        let c = Config::default();
        assert_eq!(c.firmware(), (7, 9, 1));
        assert!(!c.pqc_queue.enabled);
    }
}
