//! Per-token books lunasim keeps beside the inner module's store (usage counts, trust
//! marks): JSON files named by the token's serial under the slot's store, written durably
//! (a temporary file, fsynced, renamed, the directory fsynced) so a crash leaves the old
//! book or the new one, never half of one.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use cryptoki_sys::CK_SLOT_ID;
use serde::Serialize;

use crate::sim::Sim;

/// `<store of the slot>/<kind>/<token serial>.json` (the serial made file-name safe).
pub fn path(s: &Sim, slot: CK_SLOT_ID, kind: &str) -> Option<PathBuf> {
    let serial = s.inner.token_info(slot).ok()?.serial_number;
    let safe: String = serial
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    Some(
        crate::layer::store_of_slot(s, slot)
            .join(kind)
            .join(format!("{safe}.json")),
    )
}

/// Write `book` to `path` as JSON, durably.
pub fn save(path: &Path, book: &impl Serialize) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp)?;
        f.write_all(&serde_json::to_vec(book).map_err(std::io::Error::other)?)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()
}
