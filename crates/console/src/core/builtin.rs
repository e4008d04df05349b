//! The built-in partition: `lunasim` over Kryoptic, kept in the console's data directory,
//! so the console is usable on a machine without an HSM. It is a software emulator — the
//! UI says so on every screen — and its PINs are documented demo values.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use p11::{Module, SlotId, UserType};

use crate::core::error::{ApiError, ApiResult};
use crate::text;

pub const TOKEN_LABEL: &str = "Built-in lunasim";
/// The built-in module's second slot, which holds only the audit trail's keys: the
/// officer's partition stays free of the trail's ML-DSA key, which some tools (Debian 12's
/// libp11) cannot enumerate. The console logs in to it itself, with the demo PINs below,
/// once the officer logged in to the built-in partition.
pub const AUDIT_TOKEN_LABEL: &str = "Built-in audit trail";
/// Kryoptic's slot number for it in the built-in configuration.
const AUDIT_INNER_SLOT: u32 = 2;
/// Demo PINs of the built-in partition (documented in the README). Not secrets.
pub const USER_PIN: &str = "12345678";
pub const SO_PIN: &str = "87654321";

/// Where the built-in partition's pieces are.
#[derive(Debug, Clone)]
pub struct BuiltinPaths {
    pub lunasim: PathBuf,
    pub kryoptic: Option<PathBuf>,
}

/// Find `liblunasim.so` and Kryoptic: explicit paths first, then next to the executable
/// (`target/<profile>/` in a build tree, with Kryoptic in `target/pkcs11/`), then a bundle's
/// resource directory.
pub fn locate(
    lunasim: Option<&Path>,
    kryoptic: Option<&Path>,
    resource_dir: Option<&Path>,
) -> Option<BuiltinPaths> {
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    let mut candidates: Vec<PathBuf> = lunasim.map(Path::to_path_buf).into_iter().collect();
    if let Some(d) = &exe_dir {
        candidates.push(d.join("liblunasim.so"));
        candidates.push(d.join("../liblunasim.so")); // test binaries live in target/<profile>/deps
    }
    if let Some(r) = resource_dir {
        candidates.push(r.join("pkcs11/liblunasim.so"));
    }
    let lunasim = candidates.into_iter().find(|p| p.is_file())?;
    let mut kcands: Vec<PathBuf> = kryoptic.map(Path::to_path_buf).into_iter().collect();
    if let Some(d) = lunasim.parent() {
        kcands.push(d.join("../pkcs11/libkryoptic_pkcs11.so"));
        kcands.push(d.join("../../pkcs11/libkryoptic_pkcs11.so"));
        kcands.push(d.join("libkryoptic_pkcs11.so"));
    }
    if let Some(r) = resource_dir {
        kcands.push(r.join("pkcs11/libkryoptic_pkcs11.so"));
    }
    let kryoptic = kcands
        .into_iter()
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok());
    Some(BuiltinPaths {
        lunasim: lunasim.canonicalize().unwrap_or(lunasim),
        kryoptic,
    })
}

/// The line of the built-in partition's `lunasim.toml` below which an officer's own settings
/// (lunasim's top-level keys) survive the console rewriting the file.
pub const KEPT_MARKER: &str = "# Your settings (kept when the console rewrites this file):";

/// Write the built-in partition's configuration under `dir` (once) and point lunasim at it
/// — unless `LUNASIM_CONF` is already set, which then wins (tests and demos use their own).
pub fn configure(dir: &Path, paths: &BuiltinPaths) -> ApiResult<PathBuf> {
    if let Some(existing) = std::env::var_os("LUNASIM_CONF") {
        return Ok(PathBuf::from(existing));
    }
    std::fs::create_dir_all(dir.join("store")).map_err(|e| {
        ApiError::io(
            text!(
                "hsm.console.cannot_create_builtin_folder",
                "cannot create the built-in partition's folder"
            ),
            &e,
        )
    })?;
    let kconf = dir.join("kryoptic.conf");
    // Written whole on every start (data folders from before the audit slot gain it; the
    // partition's own database keeps its name).
    let slot = |n: u32, db: &str| {
        format!(
            "[[slots]]\nslot = {n}\ndbtype = \"sqlite\"\ndbargs = \"{}\"\n",
            dir.join(db).display()
        )
    };
    let kryoptic = format!(
        "{}{}",
        slot(1, "token.sql"),
        slot(AUDIT_INNER_SLOT, "audit.sql")
    );
    if std::fs::read_to_string(&kconf).ok().as_deref() != Some(kryoptic.as_str()) {
        std::fs::write(&kconf, kryoptic).map_err(|e| {
            ApiError::io(
                text!(
                    "hsm.console.cannot_write_builtin_configuration",
                    "cannot write the built-in partition's configuration"
                ),
                &e,
            )
        })?;
    }
    let conf = dir.join("lunasim.toml");
    let inner = paths
        .kryoptic
        .as_ref()
        .map(|k| format!("inner_module = \"{}\"\n", k.display()))
        .unwrap_or_default();
    // The paths are rewritten on every start; settings an officer added below the marker
    // (a firmware version, Luna's policy 21 `force_user_pin_change = true` for training…)
    // are kept.
    let kept = std::fs::read_to_string(&conf)
        .ok()
        .and_then(|old| {
            let (_, after) = old.split_once(KEPT_MARKER)?;
            Some(after.split("[inner_env]").next()?.trim().to_string())
        })
        .unwrap_or_default();
    let text = format!(
        "# The console's built-in partition (a software emulator, not for production keys).\n{inner}store_dir = \"{}\"\ncontrol_file = \"{}\"\n{KEPT_MARKER}\n{kept}\n\n[inner_env]\nKRYOPTIC_CONF = \"{}\"\n",
        dir.join("store").display(),
        dir.join("control.jsonl").display(),
        kconf.display()
    );
    std::fs::write(&conf, text).map_err(|e| {
        ApiError::io(
            text!(
                "hsm.console.cannot_write_builtin_configuration",
                "cannot write the built-in partition's configuration"
            ),
            &e,
        )
    })?;
    // Read by lunasim at C_Initialize; set before the module is loaded.
    std::env::set_var("LUNASIM_CONF", &conf);
    Ok(conf)
}

/// Make sure the built-in token is initialized (first run) and return its slot.
pub fn ensure_token(module: &Arc<Module>) -> ApiResult<SlotId> {
    let slots = module.slots(true)?;
    for slot in &slots {
        let ti = module.token_info(*slot)?;
        if ti.initialized() && ti.user_pin_initialized() && ti.label != AUDIT_TOKEN_LABEL {
            return Ok(*slot);
        }
    }
    let slot = *slots.first().ok_or_else(|| {
        ApiError::invalid(text!(
            "errors.built_partition_has_no_slot",
            "the built-in partition has no slot"
        ))
    })?;
    init_with_demo_pins(module, slot, TOKEN_LABEL)
}

/// The audit slot: found by its label, or — when the console wrote the module's
/// configuration (`owned`) — the partition's neighbour, initialized on first use. `None`
/// under a configuration of someone else's (`LUNASIM_CONF`), which then keeps the trail's
/// keys on the partition as before.
pub fn ensure_audit_slot(
    module: &Arc<Module>,
    partition: SlotId,
    owned: bool,
) -> ApiResult<Option<SlotId>> {
    let mut blank = None;
    for slot in module.slots(true)? {
        if slot == partition {
            continue;
        }
        let ti = module.token_info(slot)?;
        if ti.label == AUDIT_TOKEN_LABEL && ti.initialized() && ti.user_pin_initialized() {
            return Ok(Some(slot));
        }
        if !ti.initialized() && blank.is_none() {
            blank = Some(slot);
        }
    }
    match blank {
        Some(slot) if owned => init_with_demo_pins(module, slot, AUDIT_TOKEN_LABEL).map(Some),
        _ => Ok(None),
    }
}

/// `C_InitToken` with the demo SO PIN, then the demo user PIN set; returns the slot the
/// token is in afterwards.
fn init_with_demo_pins(module: &Arc<Module>, slot: SlotId, label: &str) -> ApiResult<SlotId> {
    module.init_token(slot, &p11::pin(SO_PIN), label)?;
    // SoftHSM-style renumbering after initialization: find it by label.
    let slot = module
        .slots(true)?
        .into_iter()
        .find(|s| {
            module
                .token_info(*s)
                .map(|t| t.label == label)
                .unwrap_or(false)
        })
        .unwrap_or(slot);
    let so = module.open_session(slot, true)?;
    so.login(UserType::SecurityOfficer, &p11::pin(SO_PIN))?;
    so.init_pin(&p11::pin(USER_PIN))?;
    so.logout()?;
    Ok(slot)
}

#[cfg(test)]
mod kept_settings {
    use super::*;

    /// The officer's lines below the marker survive every rewrite, once each, outside
    /// `[inner_env]` (where lunasim would read them as the inner module's environment).
    #[test]
    fn settings_below_the_marker_survive_a_restart() {
        std::env::remove_var("LUNASIM_CONF");
        let d = tempfile::tempdir().unwrap();
        let paths = BuiltinPaths {
            lunasim: d.path().join("liblunasim.so"),
            kryoptic: None,
        };
        let conf = configure(d.path(), &paths).unwrap();
        let first = std::fs::read_to_string(&conf).unwrap();
        assert!(first.contains(KEPT_MARKER));
        std::fs::write(
            &conf,
            first.replace(
                KEPT_MARKER,
                &format!("{KEPT_MARKER}\nforce_user_pin_change = true"),
            ),
        )
        .unwrap();
        std::env::remove_var("LUNASIM_CONF");
        configure(d.path(), &paths).unwrap();
        std::env::remove_var("LUNASIM_CONF");
        configure(d.path(), &paths).unwrap();
        let text = std::fs::read_to_string(&conf).unwrap();
        assert_eq!(
            text.matches("force_user_pin_change = true").count(),
            1,
            "{text}"
        );
        let (top, env) = text.split_once("[inner_env]").unwrap();
        assert!(top.contains("force_user_pin_change") && !env.contains("force_user_pin_change"));
        std::env::remove_var("LUNASIM_CONF");
    }
}
