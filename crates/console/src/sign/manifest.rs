//! The batch's `SHA256SUMS` (what `sha256sum -c` reads) and its raw signature, and the
//! key's public half beside raw signatures.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use audit::Event;
use signing::output::write_new;

use super::key::{resolve, SigningKey};
use super::{hsm_side, sign_error, FileOutcome, OutputKind, OutputView};
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
    /// Sign and write `SHA256SUMS` + `SHA256SUMS.sig` for the signed files, and with
    /// `cleartext` also `SHA256SUMS.asc` (OpenPGP cleartext-signed). All or none. Audited.
    pub(super) async fn sign_manifest(
        &self,
        p: &Partition,
        key: &Arc<SigningKey>,
        signed: &[&FileOutcome],
        out_dir: Option<&Path>,
        cleartext: bool,
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
        let apath = dir.join("SHA256SUMS.asc");
        let mut paths = vec![&mpath, &spath];
        if cleartext {
            paths.push(&apath);
        }
        for x in paths {
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
        let (sig, asc) = p
            .pool
            .run_service_async("sign.manifest", move |s| {
                let handle = resolve(s, &k.summary)?;
                let r = if k.alg.whole_message() {
                    k.alg.sign(s, handle, &body, &[])
                } else {
                    k.alg.sign_digest(s, handle, &k.alg.digest().digest(&body))
                }?;
                k.alg.verify(&k.pk, &body, &[], &r).map_err(|e| {
                    let why = crate::i18n::Text::from(e.into_msg());
                    hsm::HsmError::TokenMisbehaved(
                        text!(
                            "hsm.console.manifest_signature_does_not_verify",
                            "the manifest signature does not verify: {{error}}",
                            error = &why
                        )
                        .nest("error", &why)
                        .into(),
                    )
                })?;
                let asc = if cleartext {
                    let text = String::from_utf8(body.clone()).expect("the manifest is text");
                    Some(
                        super::openpgp::cleartext_manifest(s, handle, &k, &text)
                            .map_err(hsm_side)?,
                    )
                } else {
                    None
                };
                Ok((r, asc))
            })
            .await?;
        let mut outputs = vec![
            (mpath.clone(), text.into_bytes(), OutputKind::Manifest),
            (spath, sig, OutputKind::ManifestSignature),
        ];
        if let Some(a) = asc {
            outputs.push((apath, a.into_bytes(), OutputKind::ManifestCleartext));
        }
        let mut written = Vec::new();
        for (path, bytes, _) in &outputs {
            if let Err(e) = write_new(path, bytes) {
                for w in &written {
                    let _ = std::fs::remove_file(w);
                }
                return Err(sign_error(e));
            }
            written.push(path.clone());
        }
        self.record(
            Event::new("sign.manifest", "artifact")
                .resource(mpath.display().to_string())
                .algorithm(key.alg.name())
                .meta("files", entries.len())
                .meta("key_id", &key.summary.id_hex)
                .meta("signatures", outputs.len() - 1)
                .meta("partition", &p.id),
        )
        .await;
        Ok(outputs
            .into_iter()
            .map(|(path, _, format)| OutputView {
                format,
                path: path.display().to_string(),
                verified: true,
            })
            .collect())
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
