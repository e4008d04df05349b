//! One file's outputs for one key: named, rendered, written — all of them or none — and
//! removed again when the file changed meanwhile. With several keys (dual signing) every
//! output is named for its key (`FILE.<label stem><suffix>`) except the CMS signature: the
//! first key writes `FILE.p7s`, each further key's signer is added to it
//! ([`signing::cms::add_signer`], after checking that the file on disk is the one this
//! batch wrote and that every signer carries this file's digest), and it is replaced in one
//! step (a new file renamed over it), never half-written.

use std::path::{Path, PathBuf};

use signing::hashing::Digests;
use signing::input::{ChangeSeen, InputFile};
use signing::output::{beside, write_new, write_replace};
use signing::whole::SignPath;
use signing::SignError;

use crate::sign::formats::FileSigning;
use crate::sign::SignFormat;

/// One file's outputs, made and verified but not yet written, and how the token was given
/// the file (schemes that sign it whole: one call, parts, external μ).
pub(in crate::sign) struct Outputs {
    pub files: Vec<(SignFormat, PathBuf, Vec<u8>)>,
    pub signing_path: Option<SignPath>,
    /// The RFC 3161 tokens in the outputs, checked.
    pub timestamps: Vec<signing::tsp::TimestampInfo>,
    /// Signed again after the pool recovered from a fault in an earlier attempt.
    pub retried_after_recovery: bool,
    /// Why the signatures carry no time-stamp although one was asked for (optional TSA).
    pub unstamped: Option<String>,
}

/// The `.p7s` an earlier key of the batch wrote for this file, as it wrote it.
#[derive(Debug, Clone)]
pub(in crate::sign) struct CmsSoFar {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

impl Outputs {
    /// Its CMS signature as written (after [`write_outputs`]), for the next key to join.
    pub fn cms_written(&self) -> Option<CmsSoFar> {
        self.files
            .iter()
            .find(|(f, _, _)| *f == SignFormat::Cms)
            .map(|(_, p, b)| CmsSoFar {
                path: p.clone(),
                bytes: b.clone(),
            })
    }

    /// Remove every file it wrote.
    pub fn remove(&self) -> Vec<String> {
        self.files
            .iter()
            .filter(|(_, p, _)| std::fs::remove_file(p).is_ok())
            .map(|(_, p, _)| p.display().to_string())
            .collect()
    }
}

/// How one key names its outputs of a file.
#[derive(Debug, Clone, Copy)]
pub(in crate::sign) struct Naming<'a> {
    pub out_dir: Option<&'a Path>,
    /// `FILE.<stem><suffix>`.
    pub stem: Option<&'a str>,
    /// Several keys share one `.p7s` (`FILE.p7s`, not named for a key).
    pub shared_cms: bool,
}

impl Naming<'_> {
    /// With a key's stem `FILE.<stem><suffix>` (a shared `.p7s` excepted); without, the
    /// format's own name (apt's `Release.gpg` and `InRelease` for a `Release` file).
    pub fn path(&self, input: &InputFile, f: SignFormat) -> Result<PathBuf, SignError> {
        match self.stem {
            Some(_) if f == SignFormat::Cms && self.shared_cms => {
                Ok(beside(&input.path, self.out_dir, f.suffix()))
            }
            Some(k) => Ok(beside(
                &input.path,
                self.out_dir,
                &format!(".{k}{}", f.suffix()),
            )),
            None => f.format().output_path(input, self.out_dir),
        }
    }
}

/// Every requested format for one file. Refused before the HSM signs when an output
/// exists already (a batch run again after a crash must not cost signatures) — but for
/// the `.p7s` an earlier key of this batch wrote (`joins`) — or a format cannot sign this
/// file (its name, not text for a cleartext signature); writing checks again.
pub(in crate::sign) fn render_all(
    file: &mut FileSigning<'_>,
    formats: &[SignFormat],
    naming: Naming<'_>,
    joins: Option<&Path>,
) -> Result<Outputs, SignError> {
    let paths = formats
        .iter()
        .map(|f| naming.path(file.input, *f))
        .collect::<Result<Vec<PathBuf>, SignError>>()?;
    if let Some(p) = paths
        .iter()
        .filter(|p| Some(p.as_path()) != joins)
        .find(|p| std::fs::symlink_metadata(p).is_ok())
    {
        return Err(SignError::Exists(p.display().to_string()));
    }
    for f in formats {
        f.format().check_file(file)?;
    }
    let mut files = Vec::new();
    for (f, path) in formats.iter().zip(paths) {
        files.push((*f, path, f.format().render(file)?));
    }
    Ok(Outputs {
        files,
        signing_path: file.message_path,
        timestamps: Vec::new(),
        retried_after_recovery: false,
        unstamped: None,
    })
}

/// After a file's outputs are written: the file must still be the one that was hashed and
/// signed, else the outputs (signatures over bytes no longer on disk) are removed again.
pub(in crate::sign) fn still_the_signed_file(
    input: &InputFile,
    outs: Outputs,
) -> Result<Outputs, SignError> {
    match input.recheck(ChangeSeen::AfterWriting) {
        Ok(()) => Ok(outs),
        Err(e) => {
            outs.remove();
            Err(e)
        }
    }
}

/// All of a file's outputs, or none: refused if any exists already; a failed write
/// removes the ones written before it. With `joins`, the CMS signature is added as one
/// more signer to the `.p7s` an earlier key wrote, last, and the outputs then hold the
/// whole `.p7s` as written.
pub(in crate::sign) fn write_outputs(
    mut outs: Outputs,
    joins: Option<&CmsSoFar>,
    digests: &Digests,
) -> Result<Outputs, SignError> {
    let joined = |p: &Path| joins.is_some_and(|j| j.path == p);
    if let Some((_, p, _)) = outs
        .files
        .iter()
        .find(|(_, p, _)| !joined(p) && std::fs::symlink_metadata(p).is_ok())
    {
        return Err(SignError::Exists(p.display().to_string()));
    }
    let mut written = Vec::new();
    let undo = |written: &[PathBuf]| {
        for w in written {
            let _ = std::fs::remove_file(w);
        }
    };
    for (_, path, bytes) in outs.files.iter().filter(|(_, p, _)| !joined(p)) {
        if let Err(e) = write_new(path, bytes) {
            undo(&written);
            return Err(e);
        }
        written.push(path.clone());
    }
    if let Some(j) = joins {
        let entry = outs.files.iter_mut().find(|(_, p, _)| *p == j.path);
        if let Some((_, path, bytes)) = entry {
            match join_cms(j, bytes, digests) {
                Ok(merged) => *bytes = merged,
                Err(e) => {
                    undo(&written);
                    return Err(e);
                }
            }
            debug_assert_eq!(path, &j.path);
        }
    }
    Ok(outs)
}

/// The `.p7s` on disk with the signer of `addition` added, written in its place.
fn join_cms(j: &CmsSoFar, addition: &[u8], digests: &Digests) -> Result<Vec<u8>, SignError> {
    let on_disk = std::fs::read(&j.path).map_err(|e| SignError::Write {
        path: j.path.display().to_string(),
        reason: hsm::text!("signing.write_failed", "{{error}}", error = e),
    })?;
    if on_disk != j.bytes {
        return Err(SignError::Format(hsm::text!(
            "signing.cms.merge_changed",
            "{{path}} changed after the batch's first key wrote it; no signer was added",
            path = j.path.display()
        )));
    }
    let merged = signing::cms::add_signer(&j.bytes, addition, &|alg| digests.get(alg))?;
    write_replace(&j.path, &merged)?;
    Ok(merged)
}
