//! What may be signed: a regular, readable, non-empty file. Everything else is refused with
//! a reason an officer can act on — before anything is hashed or signed.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::{Result, SignError};

/// What identifies a file's content for "did it change while we read it".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
}

impl Identity {
    pub fn of(m: &std::fs::Metadata) -> Identity {
        Identity {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
        }
    }
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

    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string())
    }
}

fn refuse(path: &Path, reason: hsm::Msg) -> SignError {
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
