//! The batch's `SHA256SUMS` (what `sha256sum -c` reads) and its raw signature, and the
//! key's public half beside raw signatures.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use audit::Event;
use signing::output::write_new;

use super::key::{resolve, SigningKey};
use super::{sign_error, FileOutcome, OutputKind, OutputView};
use crate::error::{ApiError, ApiResult};
use crate::text;
use crate::{Console, Partition};

/// Where a batch's shared outputs go: the output folder, or the first signed file's folder.
pub(super) fn batch_dir(out_dir: Option<&Path>, signed: &[&FileOutcome]) -> PathBuf {
    out_dir.map(Path::to_path_buf).unwrap_or_else(|| {
        Path::new(&signed[0].path)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    })
}

impl Console {
    /// Sign and write `SHA256SUMS` + `SHA256SUMS.sig` for the signed files. Audited.
    pub(super) async fn sign_manifest(
        &self,
        p: &Partition,
        key: &Arc<SigningKey>,
        signed: &[&FileOutcome],
        out_dir: Option<&Path>,
    ) -> ApiResult<Vec<OutputView>> {
        let mut entries: Vec<(String, String)> = signed
            .iter()
            .map(|o| (o.sha256.clone().unwrap_or_default(), o.name.clone()))
            .collect();
        entries.sort_by(|a, b| a.1.cmp(&b.1));
        if entries.windows(2).any(|w| w[0].1 == w[1].1) {
            return Err(ApiError::invalid(text!(
                "errors.two_signed_files_have_same",
                "Two signed files have the same name; a SHA256SUMS manifest needs unique names."
            ))
            .suggest(text!(
                "errors.sign_them_separate_batches_choose",
                "Sign them in separate batches or choose an output folder per batch."
            )));
        }
        let dir = batch_dir(out_dir, signed);
        let text = signing::formats::manifest(&entries);
        let (mpath, spath) = (dir.join("SHA256SUMS"), dir.join("SHA256SUMS.sig"));
        for x in [&mpath, &spath] {
            if std::fs::symlink_metadata(x).is_ok() {
                return Err(ApiError::invalid(text!(
                    "errors.already_exists_manifest_not_written",
                    "{{x}} already exists; the manifest was not written.",
                    x = x.display()
                )));
            }
        }
        let k = key.clone();
        let body = text.clone().into_bytes();
        let sig = p
            .pool
            .run_service_async("sign.manifest", move |s| {
                let handle = resolve(s, &k.summary)?;
                let r = if k.alg.whole_message() {
                    k.alg.sign(s, handle, &body, &[])
                } else {
                    k.alg.sign_digest(s, handle, &k.alg.digest().digest(&body))
                }?;
                k.alg.verify(&k.pk, &body, &[], &r).map_err(|e| {
                    hsm::HsmError::TokenMisbehaved(format!(
                        "the manifest signature does not verify: {e}"
                    ))
                })?;
                Ok(r)
            })
            .await?;
        write_new(&mpath, text.as_bytes()).map_err(sign_error)?;
        if let Err(e) = write_new(&spath, &sig) {
            let _ = std::fs::remove_file(&mpath);
            return Err(sign_error(e));
        }
        self.record(
            Event::new("sign.manifest", "artifact")
                .resource(mpath.display().to_string())
                .algorithm(key.alg.name())
                .meta("files", entries.len())
                .meta("key_id", &key.summary.id_hex)
                .meta("signatures", 1)
                .meta("partition", &p.id),
        )
        .await;
        Ok(vec![
            OutputView {
                format: OutputKind::Manifest,
                path: mpath.display().to_string(),
                verified: true,
            },
            OutputView {
                format: OutputKind::ManifestSignature,
                path: spath.display().to_string(),
                verified: true,
            },
        ])
    }
}

/// The key's public half as `LABEL.pub.pem` in `dir`, once: an existing file with the
/// same key is fine, one with another key is an error (nothing is overwritten).
pub(super) fn write_public_key(key: &SigningKey, dir: &Path) -> ApiResult<Option<OutputView>> {
    let stem: String = key
        .summary
        .label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let pem_path = dir.join(format!("{stem}.pub.pem"));
    let pem = key.pk.spki_pem();
    match std::fs::read_to_string(&pem_path) {
        Ok(existing) if existing.trim() == pem.trim() => Ok(None),
        Ok(_) => Err(ApiError::invalid(text!(
            "errors.exists_holds_another_key_public",
            "{{pem_path}} exists and holds another key; the public key was not written.",
            pem_path = pem_path.display()
        ))),
        Err(_) => {
            write_new(&pem_path, pem.as_bytes()).map_err(sign_error)?;
            Ok(Some(OutputView {
                format: OutputKind::PublicKey,
                path: pem_path.display().to_string(),
                verified: true,
            }))
        }
    }
}
