//! Where outputs go, and writing them: completely or not at all, never over an existing
//! file (the `outfile` crate, with signing's error).

use std::path::{Path, PathBuf};

use crate::{Result, SignError};

/// Write `bytes` to `path`, which must not exist.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    outfile::write_new(path, bytes).map_err(SignError::from)
}

/// Write `bytes` to `path` in one step, replacing the regular file of that name (a new
/// file renamed over it: a reader sees the old bytes or the new, never part of them).
pub fn write_replace(path: &Path, bytes: &[u8]) -> Result<()> {
    outfile::write_replace(path, bytes).map_err(SignError::from)
}

impl From<outfile::WriteError> for SignError {
    fn from(e: outfile::WriteError) -> Self {
        match e {
            outfile::WriteError::Exists(p) => SignError::Exists(p.display().to_string()),
            other => SignError::Write {
                path: other.path().display().to_string(),
                reason: match &other {
                    outfile::WriteError::Io { source, .. } if source.raw_os_error() == Some(28) => {
                        hsm::text!("signing.disk_full", "the disk is full")
                    }
                    outfile::WriteError::Io { source, .. } => {
                        hsm::text!("signing.write_failed", "{{error}}", error = source)
                    }
                    _ => hsm::text!("signing.write_failed", "{{error}}", error = other),
                },
            },
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
    fn an_existing_output_is_named_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.sig");
        write_new(&p, b"first").unwrap();
        match write_new(&p, b"second") {
            Err(SignError::Exists(name)) => assert!(name.ends_with("a.sig")),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
        assert!(matches!(
            write_new(&d.path().join("missing/a.sig"), b"x"),
            Err(SignError::Write { .. })
        ));
    }

    #[test]
    fn outputs_go_beside_or_into_the_folder() {
        let input = Path::new("/dist/app.tar.gz");
        assert_eq!(
            beside(input, None, ".p7s"),
            Path::new("/dist/app.tar.gz.p7s")
        );
        assert_eq!(
            beside(input, Some(Path::new("/sigs")), ".sig"),
            Path::new("/sigs/app.tar.gz.sig")
        );
    }
}
