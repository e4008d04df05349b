//! Output files: written completely or not at all, and never over an existing file.
//!
//! The bytes go to a temporary file in the target folder, are synced, and are then
//! hard-linked to the final name — `link(2)` fails if the name exists, so even a file that
//! appears between the check and the write is not replaced — and the temporary name is
//! removed. A full disk or any other error leaves no partial file behind.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{Result, SignError};

fn write_err(path: &Path, e: &std::io::Error) -> SignError {
    let reason = if e.raw_os_error() == Some(28) {
        "the disk is full".to_string()
    } else {
        e.to_string()
    };
    SignError::Write {
        path: path.display().to_string(),
        reason,
    }
}

/// Write `bytes` to `path`, which must not exist.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(SignError::Exists(path.display().to_string()));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| SignError::Write {
        path: path.display().to_string(),
        reason: "not a file name".into(),
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
        std::fs::hard_link(&tmp, path)?;
        Ok(())
    })();
    let _ = std::fs::remove_file(&tmp);
    match result {
        Ok(()) => {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(SignError::Exists(path.display().to_string()))
        }
        Err(e) => Err(write_err(path, &e)),
    }
}

/// A writer killed between creating its temporary file and removing it (`kill -9`, power
/// loss) leaves `.NAME.PID.partial` behind — never under the final name. The next write into
/// the folder removes those whose process is gone.
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

/// Where an output for `input` goes: beside it, or in `out_dir`, with `suffix` appended.
pub fn beside(input: &Path, out_dir: Option<&Path>, suffix: &str) -> PathBuf {
    let name = format!(
        "{}{suffix}",
        input
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    match out_dir {
        Some(d) => d.join(name),
        None => input.with_file_name(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_overwrites_never_leaves_partials() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.sig");
        write_new(&p, b"first").unwrap();
        assert!(matches!(
            write_new(&p, b"second"),
            Err(SignError::Exists(_))
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
        let e = std::io::Error::from_raw_os_error(28);
        assert!(write_err(Path::new("x"), &e)
            .to_string()
            .contains("disk is full"));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let err = f
            .write_all(&[0u8; 4096])
            .and_then(|_| f.flush())
            .unwrap_err();
        assert!(write_err(Path::new("x"), &err)
            .to_string()
            .contains("disk is full"));
    }
}
