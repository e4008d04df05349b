//! What may be signed: a regular, readable, non-empty file. Everything else is refused with
//! a reason an officer can act on — before anything is hashed or signed.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::{Result, SignError};

/// What identifies a file's content for "did it change since we read it": the file
/// (device, inode), its size, and its modification and status-change times. A rewrite in
/// place moves the modification time, a replacement by rename the inode, and anything that
/// sets the modification time back (`touch -d`, `cp -p`) still moves the change time, which
/// no caller can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

impl Identity {
    pub fn of(m: &std::fs::Metadata) -> Identity {
        Identity {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
            ctime_ns: m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128,
        }
    }

    /// What differs in `now` from this identity, in the officer's words (the most telling
    /// difference first); `None` when it is the same file, unchanged.
    pub fn change_to(&self, now: &Identity) -> Option<hsm::Text> {
        if (self.dev, self.ino) != (now.dev, now.ino) {
            return Some(hsm::text!(
                "errors.inputs.changed.replaced",
                "another file was put in its place (renamed or copied over it)"
            ));
        }
        if self.size != now.size {
            return Some(hsm::text!(
                "errors.inputs.changed.size",
                "its size went from {{before}} to {{after}} bytes",
                before = self.size,
                after = now.size
            ));
        }
        if self.mtime_ns != now.mtime_ns {
            return Some(hsm::text!(
                "errors.inputs.changed.modified",
                "it was written to (its modification time changed)"
            ));
        }
        if self.ctime_ns != now.ctime_ns {
            return Some(hsm::text!(
                "errors.inputs.changed.status",
                "its status changed (permissions, owner, links or a time set back)"
            ));
        }
        None
    }
}

/// When a file was seen to have changed after it was hashed, which decides what the
/// signer does about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeSeen {
    /// Right before the HSM was asked to sign it: nothing was signed (no one-time key of a
    /// stateful key was spent).
    BeforeSigning,
    /// While the HSM signed it, by a format that reads the file again as it signs: nothing
    /// was written for it.
    WhileSigning,
    /// After its signatures were written: they are removed again.
    AfterWriting,
}

/// A file that passed the checks.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// The path as given (symlinks are followed when opened).
    pub path: PathBuf,
    /// The real file (for duplicate detection).
    pub canonical: PathBuf,
    pub identity: Identity,
}

impl InputFile {
    pub fn size(&self) -> u64 {
        self.identity.size
    }

    /// Look at the path again: `Ok` when it still names this file, unchanged since it was
    /// checked; otherwise [`SignError::ChangedSinceHashed`] naming what changed, with
    /// `stage` saying what the caller does about it.
    pub fn recheck(&self, stage: ChangeSeen) -> Result<()> {
        let what = match std::fs::metadata(&self.path) {
            Ok(m) => self.identity.change_to(&Identity::of(&m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(hsm::text!(
                "errors.inputs.changed.removed",
                "it was removed"
            )),
            Err(e) => Some(hsm::text!(
                "errors.inputs.unexaminable",
                "cannot be examined: {{error}}",
                error = e
            )),
        };
        match what {
            None => Ok(()),
            Some(what) => Err(SignError::ChangedSinceHashed {
                path: self.path.display().to_string(),
                what,
                stage,
            }),
        }
    }

    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string())
    }
}

fn refuse(path: &Path, reason: hsm::Text) -> SignError {
    SignError::Input {
        path: path.display().to_string(),
        reason,
    }
}

/// Check one path.
pub fn check(path: &Path) -> Result<InputFile> {
    let link = std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            refuse(path, hsm::text!("errors.inputs.missing", "does not exist"))
        }
        _ => refuse(
            path,
            hsm::text!(
                "errors.inputs.unexaminable",
                "cannot be examined: {{error}}",
                error = e
            ),
        ),
    })?;
    let meta = if link.file_type().is_symlink() {
        std::fs::metadata(path).map_err(|_| {
            refuse(
                path,
                hsm::text!(
                    "errors.inputs.dangling_link",
                    "is a symbolic link to a file that does not exist"
                ),
            )
        })?
    } else {
        link
    };
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(refuse(
            path,
            hsm::text!(
                "errors.inputs.folder",
                "is a folder; drop the files inside it (or an archive of it)"
            ),
        ));
    }
    if ft.is_fifo() {
        return Err(refuse(
            path,
            hsm::text!(
                "errors.inputs.fifo",
                "is a named pipe (FIFO); its content is not a file that can be signed"
            ),
        ));
    }
    if ft.is_socket() {
        return Err(refuse(
            path,
            hsm::text!("errors.inputs.socket", "is a socket, not a file"),
        ));
    }
    if ft.is_block_device() || ft.is_char_device() {
        return Err(refuse(
            path,
            hsm::text!("errors.inputs.device", "is a device, not a file"),
        ));
    }
    if !ft.is_file() {
        return Err(refuse(
            path,
            hsm::text!("errors.inputs.not_regular", "is not a regular file"),
        ));
    }
    if meta.len() == 0 {
        return Err(refuse(
            path,
            hsm::text!(
                "errors.inputs.empty",
                "is empty (0 bytes); an empty release artifact is almost certainly a mistake"
            ),
        ));
    }
    // Readable? (Opening proves it; the hash reads it again.)
    std::fs::File::open(path).map_err(|e| {
        refuse(
            path,
            hsm::text!(
                "errors.inputs.unreadable",
                "cannot be read: {{error}}",
                error = e
            ),
        )
    })?;
    let canonical = path.canonicalize().map_err(|e| {
        refuse(
            path,
            hsm::text!(
                "errors.inputs.unresolvable",
                "cannot be resolved: {{error}}",
                error = e
            ),
        )
    })?;
    Ok(InputFile {
        path: path.to_path_buf(),
        canonical,
        identity: Identity::of(&meta),
    })
}

/// Check a batch: each path's verdict, with repeats of the same file (by path or through a
/// link) refused as duplicates of the first.
pub fn check_all(paths: &[PathBuf]) -> Vec<Result<InputFile>> {
    let mut seen: Vec<(u64, u64)> = Vec::new();
    paths
        .iter()
        .map(|p| {
            let f = check(p)?;
            let key = (f.identity.dev, f.identity.ino);
            if seen.contains(&key) {
                return Err(refuse(
                    p,
                    hsm::text!(
                        "errors.inputs.twice",
                        "is in the batch twice; it is signed once"
                    ),
                ));
            }
            seen.push(key);
            Ok(f)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(r: Result<InputFile>) -> String {
        match r {
            Err(SignError::Input { reason, .. }) => reason.text,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn refuses_what_is_not_a_regular_nonempty_file() {
        let d = tempfile::tempdir().unwrap();
        let ok = d.path().join("release.tar.gz");
        std::fs::write(&ok, b"content").unwrap();
        assert!(check(&ok).is_ok());
        assert!(reason(check(d.path())).contains("folder"));
        match check(d.path()) {
            Err(SignError::Input { reason, .. }) => assert_eq!(reason.key, "errors.inputs.folder"),
            other => panic!("expected a refusal, got {other:?}"),
        }
        let empty = d.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert!(reason(check(&empty)).contains("empty"));
        let fifo = d.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert!(reason(check(&fifo)).contains("FIFO"));
        assert!(reason(check(Path::new("/dev/null"))).contains("device"));
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("gone"), &dangling).unwrap();
        assert!(reason(check(&dangling)).contains("symbolic link"));
        assert!(reason(check(&d.path().join("missing"))).contains("does not exist"));
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        let all = check_all(&[ok.clone(), link, ok]);
        assert!(all[0].is_ok());
        assert!(reason(all[1].clone()).contains("twice"));
        assert!(reason(all[2].clone()).contains("twice"));
    }
}
