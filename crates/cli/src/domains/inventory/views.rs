//! What `info`, `slots` and `mechanisms` show.

use console::views::{AppInfo, MechanismView, ModuleView, SlotView};
use console::ApiResult;
use serde::Serialize;

use crate::render::{Page, Render};

/// The module behind the partition, and the console that loaded it.
#[derive(Debug, Serialize)]
pub struct ModuleInfo {
    pub module: ModuleView,
    pub app: AppInfo,
}

impl Render for ModuleInfo {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let m = &self.module;
        writeln!(page, "module        {}", m.path);
        writeln!(page, "manufacturer  {}", m.manufacturer);
        writeln!(
            page,
            "library       {} {}",
            m.library_description, m.library_version
        );
        writeln!(
            page,
            "cryptoki      {} via {}",
            m.cryptoki_version, m.interface
        );
        writeln!(page, "family        {}", m.family);
        if !m.vendor_functions.is_empty() {
            writeln!(page, "Luna calls    {}", m.vendor_functions.join(", "));
        }
        if m.builtin {
            writeln!(
                page,
                "note          software emulator (lunasim) - not for production keys"
            );
        }
        Ok(())
    }

    fn json(&self, page: &mut Page) {
        page.sorted_document(self);
    }
}

#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct SlotList(pub Vec<SlotView>);

impl Render for SlotList {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let rows: Vec<Vec<String>> = self.0.iter().map(slot_row).collect();
        page.table(&["SLOT", "TOKEN", "SERIAL", "MODEL", "FLAGS"], &rows);
        Ok(())
    }
}

fn slot_row(s: &SlotView) -> Vec<String> {
    let t = s.token.as_ref();
    let mut flags = Vec::new();
    if let Some(t) = t {
        if t.user_pin_locked {
            flags.push("USER PIN LOCKED");
        } else if t.user_pin_final_try {
            flags.push("user PIN: final try");
        } else if t.user_pin_count_low {
            flags.push("user PIN: count low");
        }
        if t.so_pin_locked {
            flags.push("SO PIN LOCKED");
        }
        if !t.initialized {
            flags.push("not initialized");
        }
    }
    vec![
        s.slot_id.to_string(),
        t.map(|t| t.label.clone())
            .unwrap_or_else(|| "(no token)".into()),
        t.map(|t| t.serial.clone()).unwrap_or_default(),
        t.map(|t| t.model.clone()).unwrap_or_default(),
        flags.join(", "),
    ]
}

#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct MechanismList(pub Vec<MechanismView>);

impl Render for MechanismList {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let rows: Vec<Vec<String>> = self
            .0
            .iter()
            .map(|m| {
                vec![
                    m.hex.clone(),
                    m.name.clone().unwrap_or_else(|| "(unnamed)".into()),
                    format!("{}..{}", m.min_key_size, m.max_key_size),
                    m.flags.join(" "),
                ]
            })
            .collect();
        page.table(&["CODE", "NAME", "KEY SIZES", "FLAGS"], &rows);
        Ok(())
    }
}
