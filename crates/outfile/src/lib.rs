//! Output files — signatures, exported keys, reports, charts — written completely or not at
//! all.
//!
//! The bytes go to a temporary file `.NAME.PID.partial` in the target folder and are synced;
//! then [`write_new`] hard-links it to the final name (`link(2)` fails if the name exists, so
//! even a file that appears between a check and the write is never replaced) and
//! [`write_replace`] renames it over the final name (an existing regular file is replaced
//! in one step). The temporary name is removed either way, and a full disk or any other
//! error leaves no partial file under the final name. A writer killed in between (`kill -9`,
//! power loss) leaves only its `.partial`, which the next write into the folder removes once
//! that process is gone.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// `write_new` found the name taken; nothing was written.
    #[error("{} already exists; nothing was overwritten", .0.display())]
    Exists(PathBuf),
    /// `write_replace` found something that is not a regular file under the name.
    #[error("{} exists and is not a regular file; nothing was written", .0.display())]
    NotAFile(PathBuf),
    #[error("cannot write {}: {}", .path.display(), reason(.source))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl WriteError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            WriteError::Exists(p) | WriteError::NotAFile(p) => p,
            WriteError::Io { path, .. } => path,
        }
    }
}

/// What went wrong writing, in words (a full disk said so).
pub fn reason(e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(28) {
        "the disk is full".to_string()
    } else {
        e.to_string()
    }
}

pub type Result<T> = std::result::Result<T, WriteError>;

/// Write `bytes` to `path`, which must not exist.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(WriteError::Exists(path.to_path_buf()));
    }
    write_via_temp(path, bytes, |tmp, path| std::fs::hard_link(tmp, path)).map_err(|e| {
        if matches!(&e, WriteError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists)
        {
            WriteError::Exists(path.to_path_buf())
        } else {
            e
        }
    })
}

/// Write `bytes` to `path`, replacing a regular file of that name in one step.
pub fn write_replace(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.is_file() {
            return Err(WriteError::NotAFile(path.to_path_buf()));
        }
    }
    write_via_temp(path, bytes, |tmp, path| std::fs::rename(tmp, path))
}

/// Write to a synced temporary file beside `path`, `publish` it under the final name,
/// remove the temporary name, sync the folder.
fn write_via_temp(
    path: &Path,
    bytes: &[u8],
    publish: impl FnOnce(&Path, &Path) -> std::io::Result<()>,
) -> Result<()> {
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    remove_stale_partials(dir);
    let tmp = dir.join(format!(
        ".{}.{}.partial",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        publish(&tmp, path)
    })();
    let _ = std::fs::remove_file(&tmp);
    result.map_err(io)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Remove the `.NAME.PID.partial` files of writers that are gone.
fn remove_stale_partials(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = file
            .strip_prefix('.')
            .and_then(|rest| rest.strip_suffix(".partial"))
            .and_then(|rest| rest.rsplit_once('.'))
            .and_then(|(_, pid)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_new_never_overwrites_never_leaves_partials() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.sig");
        write_new(&p, b"first").unwrap();
        assert!(matches!(
            write_new(&p, b"second"),
            Err(WriteError::Exists(_))
        ));
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
        // A folder that cannot be written: an error, nothing left.
        assert!(write_new(&d.path().join("missing/a.sig"), b"x").is_err());
    }

    #[test]
    fn write_replace_swaps_whole_files_only() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("chart.svg");
        write_replace(&p, b"one").unwrap();
        write_replace(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        // A folder under the name is not replaced.
        assert!(matches!(
            write_replace(d.path(), b"x"),
            Err(WriteError::NotAFile(_))
        ));
    }

    #[test]
    fn partials_of_dead_writers_are_removed_live_ones_kept() {
        // (Any output name in the folder: a killed batch leaves them for other names.)
        let d = tempfile::tempdir().unwrap();
        // A writer that is gone (a PID above the kernel's maximum) and one that is alive.
        let dead = d.path().join(".a.sig.4194305.partial");
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let alive = d.path().join(format!(".a.sig.{}.partial", child.id()));
        let other = d.path().join(".b.sig.4194306.partial");
        let foreign = d.path().join(".b.sig.partial");
        for p in [&dead, &alive, &other, &foreign] {
            std::fs::write(p, b"half").unwrap();
        }
        write_new(&d.path().join("a.sig"), b"whole").unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert!(!dead.exists(), "the dead writer's partial file is gone");
        assert!(alive.exists(), "a running writer's file is left alone");
        assert!(!other.exists(), "another output's dead partial is gone too");
        assert!(foreign.exists(), "a file not named like ours is left alone");
        assert_eq!(std::fs::read(d.path().join("a.sig")).unwrap(), b"whole");
    }

    #[test]
    fn a_full_disk_says_so() {
        // /dev/full answers every write with ENOSPC.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let err = f
            .write_all(&[0u8; 4096])
            .and_then(|_| f.flush())
            .unwrap_err();
        let e = WriteError::Io {
            path: "x".into(),
            source: err,
        };
        assert!(e.to_string().contains("disk is full"), "{e}");
    }
}
