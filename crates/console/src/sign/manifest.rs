//! The batch's `SHA256SUMS` (what `sha256sum -c` reads) and its raw signature, and the
//! key's public half beside raw signatures.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use audit::Event;
use hsm::roles::Action;
use signing::alg::SigAlg;
use signing::output::write_new;

use super::key::{resolve, SigningKey};
use super::stateful::Spending;
use super::{hsm_side, sign_error, FileOutcome, OutputKind, OutputView};
use crate::core::change::{Change, ChangeKind, Settled};
use crate::core::error::{ApiError, ApiResult};
use crate::core::{partitions::Partition, Core};
use crate::sign::Signing;
use crate::text;

/// Where a batch's shared outputs go: the output folder, or the first signed file's folder.
pub(super) fn batch_dir(out_dir: Option<&Path>, signed: &[&FileOutcome]) -> PathBuf {
    out_dir.map(Path::to_path_buf).unwrap_or_else(|| {
        Path::new(&signed[0].path)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    })
}

/// How one key of the batch signs its manifest.
pub(super) struct PlanFor<'a> {
    /// `SHA256SUMS.<stem>.sig` (several keys) instead of `SHA256SUMS.sig`.
    pub stem: Option<&'a str>,
    /// An earlier key of this batch wrote `SHA256SUMS` (it must hold the same text).
    pub text_written: bool,
    /// Also the OpenPGP cleartext-signed `SHA256SUMS.asc` (`SHA256SUMS.<stem>.asc`).
    pub cleartext: bool,
    /// The key's label, for the report.
    pub label: &'a str,
}

/// A batch's manifest as it will be written: its entries (hash, name) sorted by name, its
/// text, and the files it goes to (none of which exists yet; `SHA256SUMS` itself exists
/// when an earlier key of the batch wrote it).
struct ManifestPlan {
    entries: usize,
    text: String,
    manifest: PathBuf,
    /// Whether this key writes `SHA256SUMS` (the first key does).
    writes_text: bool,
    signature: PathBuf,
    /// `SHA256SUMS.asc`, OpenPGP cleartext-signed, when asked for.
    cleartext: Option<PathBuf>,
    label: String,
}

impl ManifestPlan {
    fn new(
        signed: &[&FileOutcome],
        out_dir: Option<&Path>,
        how: &PlanFor<'_>,
    ) -> ApiResult<ManifestPlan> {
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
        let named = |ext: &str| match how.stem {
            Some(k) => dir.join(format!("SHA256SUMS.{k}.{ext}")),
            None => dir.join(format!("SHA256SUMS.{ext}")),
        };
        let plan = ManifestPlan {
            entries: entries.len(),
            text: signing::formats::manifest(&entries),
            manifest: dir.join("SHA256SUMS"),
            writes_text: !how.text_written,
            signature: named("sig"),
            cleartext: how.cleartext.then(|| named("asc")),
            label: how.label.to_string(),
        };
        if how.text_written
            && std::fs::read_to_string(&plan.manifest).ok().as_deref() != Some(&plan.text)
        {
            return Err(ApiError::invalid(text!(
                "errors.manifest_changed_between_keys",
                "{{x}} changed after the batch's first key signed it; the other keys did not sign it.",
                x = plan.manifest.display()
            )));
        }
        let mut paths = vec![&plan.signature];
        paths.extend(plan.writes_text.then_some(&plan.manifest));
        paths.extend(&plan.cleartext);
        if let Some(x) = paths.iter().find(|x| std::fs::symlink_metadata(x).is_ok()) {
            return Err(ApiError::invalid(text!(
                "errors.already_exists_manifest_not_written",
                "{{x}} already exists; the manifest was not written.",
                x = x.display()
            )));
        }
        Ok(plan)
    }

    /// The signatures it takes: the raw one, and the cleartext one when asked for.
    fn signatures(&self) -> u64 {
        1 + u64::from(self.cleartext.is_some())
    }

    /// Its `sign.manifest` record, before the outcome is known.
    fn event(&self, p: &Partition, key: &SigningKey) -> Event {
        Event::new("sign.manifest", "artifact")
            .resource(self.manifest.display().to_string())
            .algorithm(key.alg.name())
            .meta("files", self.entries)
            .meta("key_id", &key.summary.id_hex)
            .meta("partition", &p.id)
    }

    /// Sign (each signature verified) and write it all, or none of it.
    async fn sign_and_write(&self, p: &Partition, key: &Arc<SigningKey>) -> ApiResult<Written> {
        let k = key.clone();
        let body = self.text.clone().into_bytes();
        let cleartext = self.cleartext.is_some();
        let (sig, asc) = p
            .pool
            .run_service_async("sign.manifest", move |s| {
                let handle = resolve(s, &k.summary)?;
                let sig = sign_verified(s, handle, &k, &body)?;
                let asc = if cleartext {
                    let text = String::from_utf8(body.clone()).expect("the manifest is text");
                    Some(
                        super::openpgp::cleartext_manifest(s, handle, &k, &text)
                            .map_err(hsm_side)?,
                    )
                } else {
                    None
                };
                Ok((sig, asc))
            })
            .await?;
        let mut outputs = Vec::new();
        if self.writes_text {
            outputs.push((
                self.manifest.clone(),
                self.text.clone().into_bytes(),
                OutputKind::Manifest,
            ));
        }
        outputs.push((self.signature.clone(), sig, OutputKind::ManifestSignature));
        if let (Some(path), Some(a)) = (&self.cleartext, asc) {
            outputs.push((path.clone(), a.into_bytes(), OutputKind::ManifestCleartext));
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
        Ok(outputs
            .into_iter()
            .map(|(path, _, format)| OutputView {
                format,
                path: path.display().to_string(),
                verified: true,
                signed_by: match format {
                    OutputKind::Manifest => Vec::new(),
                    _ => vec![self.label.clone()],
                },
            })
            .collect())
    }
}

/// The outputs of a manifest, written.
type Written = Vec<OutputView>;

/// The manifest's raw signature, checked in software before it is kept.
fn sign_verified(
    s: &p11::Session,
    handle: u64,
    k: &SigningKey,
    body: &[u8],
) -> hsm::Result<Vec<u8>> {
    let r = if k.alg.whole_message() {
        k.alg.sign(s, handle, body, &[])
    } else {
        k.alg.sign_digest(s, handle, &k.alg.digest().digest(body))
    }?;
    k.alg.verify(&k.pk, body, &[], &r).map_err(|e| {
        let why = e.into_msg();
        hsm::HsmError::TokenMisbehaved(
            text!(
                "hsm.console.manifest_signature_does_not_verify",
                "the manifest signature does not verify: {{error}}",
                error = &why
            )
            .nest("error", &why),
        )
    })?;
    Ok(r)
}

impl Signing<'_> {
    /// Sign and write `SHA256SUMS` + `SHA256SUMS.sig` for the signed files, and with
    /// `how.cleartext` also `SHA256SUMS.asc` (OpenPGP cleartext-signed); with several keys
    /// each key's signatures are named for it and `SHA256SUMS` is written by the first.
    /// All or none. Audited; with a stateful (HSS) key, a change run by the change engine.
    pub(super) async fn sign_manifest(
        self,
        p: &Arc<Partition>,
        key: &Arc<SigningKey>,
        signed: &[&FileOutcome],
        out_dir: Option<&Path>,
        how: PlanFor<'_>,
    ) -> ApiResult<Vec<OutputView>> {
        let plan = ManifestPlan::new(signed, out_dir, &how)?;
        if key.alg == SigAlg::Hss {
            let mut change = StatefulManifest {
                spending: Spending::new(key),
                key: key.clone(),
                plan,
            };
            return self.changes().apply_on(p, &mut change).await;
        }
        let outputs = plan.sign_and_write(p, key).await?;
        self.record(plan.event(p, key).meta("signatures", plan.signatures()))
            .await;
        Ok(outputs)
    }
}

/// A manifest signed with an HSS key (see [`super::stateful`]).
struct StatefulManifest {
    key: Arc<SigningKey>,
    plan: ManifestPlan,
    spending: Spending,
}

impl Change for StatefulManifest {
    type Output = Written;

    fn kind(&self) -> ChangeKind {
        ChangeKind::HssManifest
    }

    fn permission(&self) -> Option<Action> {
        Some(Action::UseKeys)
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let what = self.plan.manifest.display().to_string();
        let left = self
            .spending
            .before(p, self.plan.signatures(), &what)
            .await?;
        Ok(self.plan.event(p, &self.key).meta("hss_remaining", left))
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Written> {
        let r = self.plan.sign_and_write(p, &self.key).await;
        self.spending.after(p).await;
        r
    }

    async fn settle(&mut self, _c: &Core, p: &Arc<Partition>, lost: ApiError) -> Settled<Written> {
        self.spending.settle(p, lost).await
    }

    fn outcome(&self, ev: Event, _r: Result<&Written, &ApiError>) -> Event {
        self.spending.record(ev)
    }
}

/// The key's public half as `LABEL.pub.pem` in `dir`, once: an existing file with the
/// same key is fine, one with another key is an error (nothing is overwritten).
pub(super) fn write_public_key(key: &SigningKey, dir: &Path) -> ApiResult<Option<OutputView>> {
    let stem = signing::verify::succession::label_stem(&key.summary.label);
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
                signed_by: vec![key.summary.label.clone()],
            }))
        }
    }
}
