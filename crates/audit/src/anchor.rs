//! Anchors: the latest checkpoint remembered outside the store. Rolling the store back to
//! an older copy cannot roll these back too, so verification sees a checkpoint newer than
//! the store. The console keeps one in a file next to its settings and one as a data object
//! on the HSM (implemented in `hsm`, which owns PKCS#11).

use std::io::Write;
use std::path::PathBuf;

use crate::Checkpoint;

pub trait Anchor: Send + Sync {
    fn load(&self) -> Result<Option<Checkpoint>, String>;
    /// Remember `cp` if it is newer than what is remembered.
    fn save(&self, cp: &Checkpoint) -> Result<(), String>;
}

/// A JSON file, replaced atomically, only ever moving forward.
pub struct FileAnchor {
    path: PathBuf,
}

impl FileAnchor {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileAnchor { path: path.into() }
    }
}

impl Anchor for FileAnchor {
    fn load(&self) -> Result<Option<Checkpoint>, String> {
        match std::fs::read(&self.path) {
            Ok(b) => serde_json::from_slice(&b)
                .map(Some)
                .map_err(|e| format!("{}: {e}", self.path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", self.path.display())),
        }
    }

    fn save(&self, cp: &Checkpoint) -> Result<(), String> {
        if let Ok(Some(old)) = self.load() {
            if old.log_id == cp.log_id && old.checkpoint_no >= cp.checkpoint_no {
                return Ok(());
            }
        }
        let dir = self
            .path
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_else(|| PathBuf::from("."));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let tmp = self.path.with_extension("tmp");
        let mut f = std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
        f.write_all(&serde_json::to_vec_pretty(cp).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        f.sync_all().map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, &self.path).map_err(|e| e.to_string())?;
        std::fs::File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| e.to_string())
    }
}
