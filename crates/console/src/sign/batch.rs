//! A signing batch as a pipeline. [`crate::sign::Signing::sign_files`] reads top to bottom as the steps:
//!
//! 1. [`SignBatch::open`] — the request checked, the partition, the login, the keys (one,
//!    or several for dual signing: [`signers`]), their public halves and certificates, the
//!    input files checked;
//! 2. [`SignBatch::stop_on_bad_input`], [`SignBatch::check_budget`],
//!    [`SignBatch::prepare_context_logins`] (keys that want the PIN for each signature:
//!    [`per_use`]) — nothing signed yet;
//! 3. [`SignBatch::hash`] — every file streamed once (SHA-256/384/512), with progress, for
//!    every key;
//! 4. [`SignBatch::record_request`] — the write-ahead audit record of the whole batch
//!    (`sign.batch`); [`SignBatch::record_consents`] — a per-use key's consent
//!    (`sign.consent`);
//! 5. [`SignBatch::ensure_certificate`] — a self-signed certificate for CMS if none exists;
//!    [`SignBatch::ensure_openpgp_creation_time`] — the key's OpenPGP creation time fixed
//!    on the token if an OpenPGP format is asked for and it is not yet (per key);
//! 6. [`SignBatch::sign_each`] — per file and key, one pool job: sign in every format (each
//!    signature verified in software); then, with the session back in the pool, the
//!    time-stamp tokens (`stamping`) → write the outputs ([`outputs`]) → record. With a
//!    stateful (HSS) key each file is a change to the token and goes through the change
//!    engine (`stateful`): `sign.request` before the HSM is asked, `sign` with the one-time
//!    keys it spent after. With several keys a file is signed by each in turn (the CMS
//!    signers join one `.p7s`), and by every key or by none;
//! 7. [`SignBatch::sign_manifest`], [`SignBatch::write_public_key`], [`SignBatch::finish`].
//!
//! Each file's outputs are on disk and in the audit trail before the next file is signed: a
//! crash or kill loses at most the file in flight, never a finished one. A file whose
//! outputs exist is refused before the HSM signs it, so a batch run again after a crash
//! finishes without spending signatures (one-time keys, for HSS).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use audit::Event;
use hsm::keys as hk;
use p11::sys::{CKO_PRIVATE_KEY, CKR_USER_NOT_LOGGED_IN};
use signing::alg::{DigestAlg, SigAlg};
use signing::hashing::Digests;
use signing::input::{ChangeSeen, InputFile};
use signing::SignError;

use super::formats::{signatures_needed, FileSigning};
use super::key::{find_certificate, find_chain, key_material, resolve, SigningKey};
use super::manifest::{batch_dir, write_public_key};
use super::timestamp::Tsa;
use super::{
    sign_error, BatchKey, FileOutcome, OnError, OutputKind, OutputView, SignFormat, SignProgress,
    SignReport, SignRequest,
};
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::core::{partitions::Partition, Core};
use crate::sign::Signing;
use crate::text;

mod outputs;
mod per_use;
mod signers;
mod stateful;

use per_use::{is_pin_error, stopped_by_pin, PerUse};
pub use per_use::{ContextPinAsk, ContextPins};

pub(super) use outputs::Outputs;
use outputs::{render_all, still_the_signed_file, write_outputs, CmsSoFar, Naming};
use signers::Signer;

type Progress = Arc<dyn Fn(SignProgress) + Send + Sync>;

impl Signing<'_> {
    /// Sign a batch of files. See the module documentation.
    pub async fn sign_files(
        self,
        partition: &str,
        req: SignRequest,
        progress: Progress,
        cancel: Arc<AtomicBool>,
    ) -> ApiResult<SignReport> {
        self.sign_batch(partition, req, progress, cancel, false, None)
            .await
    }

    /// [`crate::sign::Signing::sign_files`] with where the PINs of keys that want one for each signature
    /// come from (`CKA_ALWAYS_AUTHENTICATE`; see [`SignRequest::context_login`]).
    pub async fn sign_files_with_pins(
        self,
        partition: &str,
        req: SignRequest,
        progress: Progress,
        cancel: Arc<AtomicBool>,
        pins: ContextPins,
    ) -> ApiResult<SignReport> {
        self.sign_batch(partition, req, progress, cancel, false, Some(pins))
            .await
    }

    /// [`crate::sign::Signing::sign_files`]; with `key_in_names` each output is named for the key too
    /// (`FILE.<key label>.sig`), so signatures of several keys stand side by side.
    pub(super) async fn sign_batch(
        self,
        partition: &str,
        req: SignRequest,
        progress: Progress,
        cancel: Arc<AtomicBool>,
        key_in_names: bool,
        pins: Option<ContextPins>,
    ) -> ApiResult<SignReport> {
        let kit = req.kit.clone();
        let context_login = req.context_login;
        let mut b = SignBatch::open(self, partition, req, progress, cancel).await?;
        if key_in_names {
            b.signers.iter_mut().for_each(Signer::name_outputs);
        }
        if b.stop_on_bad_input() {
            return Ok(b.report_unsigned());
        }
        b.check_budget()?;
        b.prepare_context_logins(context_login, pins.as_ref())?;
        b.hash().await?;
        if b.cancelled {
            return Ok(b.report_unsigned());
        }
        b.record_request().await?;
        b.record_consents().await?;
        b.ensure_certificate().await?;
        b.ensure_openpgp_creation_time().await?;
        let keys: Vec<Arc<SigningKey>> = b
            .signers
            .iter_mut()
            .map(|s| Arc::new(s.key.take().expect("the key is read when the batch opens")))
            .collect();
        b.sign_each(&keys).await;
        b.sign_manifest(&keys).await;
        b.write_public_key(&keys);
        let mut report = b.finish(&keys).await;
        if let Some(k) = kit {
            let certs = keys
                .iter()
                .map(|key| key.cert.clone().map(|c| (c, key.chain.clone())))
                .collect();
            self.attach_kit(partition, &mut report, &k, certs).await;
        }
        Ok(report)
    }
}

/// The request, checked before the HSM is asked anything.
pub(super) struct Checked {
    formats: Vec<SignFormat>,
    context: Vec<u8>,
    out_dir: Option<PathBuf>,
    /// The certificates of the chain files, read and parsed (linked once the key is read).
    chain: Vec<signing::chain::GivenCertificate>,
}

fn check_request(req: &SignRequest) -> ApiResult<Checked> {
    if req.files.is_empty() {
        return Err(ApiError::invalid(text!(
            "errors.choose_drop_files_sign",
            "Choose or drop the files to sign."
        )));
    }
    let mut formats = req.formats.clone();
    formats.dedup();
    if formats.is_empty() {
        return Err(ApiError::invalid(text!(
            "errors.choose_at_least_one_signature",
            "Choose at least one signature format."
        )));
    }
    let context = req.context.clone().unwrap_or_default().into_bytes();
    if !context.is_empty() && formats.contains(&SignFormat::Cms) {
        return Err(ApiError::invalid(text!("errors.cms_signatures_carry_no_ml", "CMS signatures carry no ML-DSA context (RFC 9882); use the raw or bundle format for a context.")));
    }
    if context.len() > 255 {
        return Err(ApiError::invalid(text!(
            "errors.ml_dsa_contexts_at_most",
            "ML-DSA contexts are at most 255 bytes."
        )));
    }
    let out_dir = match &req.out_dir {
        Some(d) => {
            let d = PathBuf::from(d);
            if !d.is_dir() {
                return Err(ApiError::invalid(text!(
                    "errors.output_folder_does_not_exist",
                    "The output folder {{d}} does not exist.",
                    d = d.display()
                )));
            }
            Some(d)
        }
        None => None,
    };
    if let Some(k) = &req.kit {
        k.check_before_signing(&formats)?;
    }
    let chain = super::chain::read_files(&req.chain, &formats)?;
    Ok(Checked {
        formats,
        context,
        out_dir,
        chain,
    })
}

/// The state a batch carries from step to step.
struct SignBatch<'c> {
    console: Signing<'c>,
    partition: Arc<Partition>,
    on_error: OnError,
    manifest_requested: bool,
    /// The formats asked for (each key makes those it can: [`Signer::formats`]).
    formats: Vec<SignFormat>,
    out_dir: Option<PathBuf>,
    /// The keys, the request's `key` first.
    signers: Vec<Signer>,
    inputs: Vec<Result<InputFile, SignError>>,
    digests: Vec<Option<Digests>>,
    outcomes: Vec<FileOutcome>,
    progress: Progress,
    cancel: Arc<AtomicBool>,
    stopped: bool,
    cancelled: bool,
    manifest: Vec<OutputView>,
    manifest_error: Option<ApiError>,
    /// The time-stamp authority for CMS and bundle signatures, if any.
    tsa: Option<Arc<Tsa>>,
    /// The chain files given (`--chain`), for the audit record.
    chain_files: Vec<String>,
    /// Per key: how it logs in for each signature, when it wants to ([`per_use`]).
    per_use: Vec<Option<PerUse>>,
}

/// The TSA a batch asks: the request's (`hsmc sign --tsa`), else the settings' when on.
/// One asked for explicitly needs a format that carries a token.
fn batch_tsa(
    console: &Core,
    req: &SignRequest,
    formats: &[SignFormat],
) -> ApiResult<Option<Arc<Tsa>>> {
    let carries = formats
        .iter()
        .any(|f| matches!(f, SignFormat::Cms | SignFormat::Bundle));
    let authority = match &req.timestamp {
        Some(a) if !carries => {
            return Err(ApiError::invalid(text!(
                "errors.tsa_needs_cms_or_bundle",
                "Time-stamps from {{url}} go into CMS and bundle signatures; choose one of those formats.",
                url = &a.url
            )))
        }
        Some(a) => Some(a.clone()),
        None if carries => console.settings().timestamp.authority(),
        None => None,
    };
    authority.map(|a| Tsa::open(&a).map(Arc::new)).transpose()
}

impl<'c> SignBatch<'c> {
    /// Step 1: the request, the partition and login, the keys, the inputs.
    async fn open(
        console: Signing<'c>,
        partition: &str,
        req: SignRequest,
        progress: Progress,
        cancel: Arc<AtomicBool>,
    ) -> ApiResult<SignBatch<'c>> {
        let checked = check_request(&req)?;
        let tsa = batch_tsa(&console, &req, &checked.formats)?;
        let partition = console.partition_ref(partition).await?;
        console.require(&partition, hsm::roles::Action::UseKeys)?;
        let signers = signers::open(&partition, &req, &checked).await?;
        let paths: Vec<PathBuf> = req.files.iter().map(PathBuf::from).collect();
        let inputs = signing::input::check_all(&paths);
        let outcomes = paths
            .iter()
            .zip(&inputs)
            .map(|(p, c)| FileOutcome {
                path: p.display().to_string(),
                name: p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                size: c.as_ref().ok().map(|f| f.size()),
                sha256: None,
                outputs: Vec::new(),
                error: c.as_ref().err().map(|e| sign_error(e.clone())),
                unstamped: None,
                failed_key: None,
            })
            .collect();
        Ok(SignBatch {
            console,
            partition,
            on_error: req.on_error,
            manifest_requested: req.manifest,
            formats: checked.formats,
            out_dir: checked.out_dir,
            signers,
            digests: vec![None; inputs.len()],
            inputs,
            outcomes,
            progress,
            cancel,
            stopped: false,
            cancelled: false,
            manifest: Vec::new(),
            manifest_error: None,
            tsa,
            chain_files: req.chain,
            per_use: Vec::new(),
        })
    }

    /// The first key (the one a single-key batch has).
    fn key(&self) -> &SigningKey {
        self.signers[0].key()
    }

    fn several_keys(&self) -> bool {
        self.signers.len() > 1
    }

    fn fail(&self, index: usize, e: &ApiError) {
        (self.progress)(SignProgress::Failed {
            index,
            message: e.message.clone(),
        });
    }

    /// Step 2a: with "stop at the first failure", a file that cannot be signed stops the
    /// batch before anything is hashed or signed.
    fn stop_on_bad_input(&mut self) -> bool {
        let bad_input = self.outcomes.iter().any(|o| o.error.is_some());
        if !(bad_input && self.on_error == OnError::Stop) {
            return false;
        }
        for (i, o) in self.outcomes.iter().enumerate() {
            if let Some(e) = &o.error {
                self.fail(i, e);
            }
        }
        self.stopped = true;
        true
    }

    fn good_inputs(&self) -> u64 {
        self.inputs.iter().filter(|c| c.is_ok()).count() as u64
    }

    fn needs_certificate(s: &Signer) -> bool {
        s.formats.contains(&SignFormat::Cms) && s.key().cert.is_none()
    }

    /// Step 2b: each HSS key must have a one-time signature for everything it signs.
    fn check_budget(&self) -> ApiResult<()> {
        for s in &self.signers {
            let k = s.key();
            let needed = signatures_needed(
                self.good_inputs(),
                &s.formats,
                self.manifest_requested,
                Self::needs_certificate(s),
            );
            match k.summary.hss_keys_remaining {
                Some(left) if left < needed => {
                    return Err(ApiError::new(
                        ErrorCode::InvalidInput,
                        text!(
                        "errors.has_signatures_left_batch_needs",
                        "'{{label}}' has {{left}} signatures left; this batch needs {{needed}}.",
                        label = k.summary.label,
                        left = left,
                        needed = needed
                    ),
                    )
                    .details(text!("errors.nothing_signed", "Nothing was signed."))
                    .suggest(text!(
                        "errors.sign_fewer_files_formats_use",
                        "Sign fewer files or formats, or use another key."
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Step 3: hash every good file, in order, off the async threads (no HSM session),
    /// once for every key and format: SHA-256, each key's digest (SHA-384, SHA-512 or SHAKE
    /// when a key's is one of them) and what a format needs (the bundle's SHA-512).
    async fn hash(&mut self) -> ApiResult<()> {
        let extra: Vec<DigestAlg> = self
            .signers
            .iter()
            .map(|s| s.key().alg.digest())
            .chain(
                self.formats
                    .iter()
                    .flat_map(|f| f.format().digests().iter().copied()),
            )
            .collect();
        for i in 0..self.inputs.len() {
            let input = match &self.inputs[i] {
                Ok(input) => input.clone(),
                Err(_) => {
                    let e = self.outcomes[i]
                        .error
                        .clone()
                        .expect("a bad input has its error");
                    self.fail(i, &e);
                    continue;
                }
            };
            match self.hash_one(i, input, extra.clone()).await? {
                Ok(d) => {
                    self.outcomes[i].sha256 = Some(d.sha256.clone());
                    self.digests[i] = Some(d);
                }
                Err(SignError::Cancelled) => {
                    self.cancelled = true;
                    return Ok(());
                }
                Err(e) => {
                    let e = sign_error(e);
                    self.fail(i, &e);
                    self.outcomes[i].error = Some(e);
                    if self.on_error == OnError::Stop {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    async fn hash_one(
        &self,
        index: usize,
        input: InputFile,
        extra: Vec<DigestAlg>,
    ) -> ApiResult<Result<Digests, SignError>> {
        let (progress, cancel) = (self.progress.clone(), self.cancel.clone());
        let total = input.size();
        tokio::task::spawn_blocking(move || {
            signing::hashing::hash_file(
                &input,
                &extra,
                &|done| progress(SignProgress::Hashing { index, done, total }),
                &cancel,
            )
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
    }

    /// Step 4: the write-ahead record — the batch as it will be signed (with several keys,
    /// the first as `key`, the others under `also`). Refused (and nothing signed) when the
    /// trail cannot record it.
    async fn record_request(&self) -> ApiResult<()> {
        let k = self.key();
        let files: Vec<_> = self
            .outcomes
            .iter()
            .map(|o| serde_json::json!({ "name": o.name, "size": o.size, "sha256": o.sha256 }))
            .collect();
        let mut ev = Event::new("sign.batch", "artifact")
            .resource(format!("{} file(s)", self.good_inputs()))
            .algorithm(k.alg.name())
            .meta("partition", &self.partition.id)
            .meta("key", k.audit_json())
            .meta("formats", &self.formats)
            .meta("files", files)
            .meta("hss_remaining", k.summary.hss_keys_remaining)
            .meta("tsa", self.tsa.as_ref().map(|t| t.url.clone()));
        if self.several_keys() {
            let also: Vec<_> = self.signers[1..]
                .iter()
                .map(|s| {
                    serde_json::json!({
                        "key": s.key().audit_json(),
                        "algorithm": s.key().alg.name(),
                        "formats": s.formats,
                        "hss_remaining": s.key().summary.hss_keys_remaining,
                    })
                })
                .collect();
            ev = ev
                .meta("also", also)
                .meta("key_formats", &self.signers[0].formats);
        }
        if !self.chain_files.is_empty() {
            let subjects: Vec<String> = k
                .cert
                .iter()
                .chain(&k.chain)
                .filter_map(|c| signing::objects::describe(c).ok().map(|i| i.subject))
                .collect();
            ev = ev
                .meta("chain_files", &self.chain_files)
                .meta("certificate_chain", subjects);
        }
        self.console.audit_first(ev).await
    }

    /// Step 5: CMS needs a certificate; issue a self-signed one with each key that has none
    /// (audited, kept on the token).
    async fn ensure_certificate(&mut self) -> ApiResult<()> {
        for i in 0..self.signers.len() {
            if !Self::needs_certificate(&self.signers[i]) {
                continue;
            }
            let summary = &self.signers[i].key().summary;
            let subject = format!(
                "CN={}",
                summary
                    .label
                    .replace([',', '+', '=', '\\', '"', '<', '>', ';'], "_")
            );
            let c = self
                .console
                .issue_certificate(&self.partition.id, summary.handle, &subject, 3 * 365, true)
                .await?;
            let der_bytes = der::pem::decode_vec(c.pem.as_bytes())
                .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
                .1;
            let s = &mut self.signers[i];
            s.signatures_made += 1;
            s.key_mut().cert = Some(der_bytes);
            s.view.has_certificate = true;
            s.view.certificate_subject = Some(c.subject.clone());
        }
        Ok(())
    }

    /// Step 5b: OpenPGP signatures name the key by its fingerprint, which needs the key's
    /// creation time: fixed and stored on the token (audited) the first time.
    async fn ensure_openpgp_creation_time(&mut self) -> ApiResult<()> {
        for i in 0..self.signers.len() {
            let s = &self.signers[i];
            if !super::openpgp::wanted(&s.formats) || s.key().openpgp_created.is_some() {
                continue;
            }
            let t = self
                .console
                .ensure_openpgp_creation_time(&self.partition, s.key())
                .await?;
            self.signers[i].key_mut().openpgp_created = Some(t);
        }
        Ok(())
    }

    /// Step 6: one pool job per file and key; a file's outputs written and recorded before
    /// the next file is signed. After an HSM failure the pool recovers and the batch goes
    /// on (or stops) from the next file, never signing a file twice. With several keys a
    /// file is signed by each in turn; when one fails, what the others signed for it is
    /// removed (a file is signed by every key or by none).
    async fn sign_each(&mut self, keys: &[Arc<SigningKey>]) {
        let work: Vec<(usize, InputFile, Digests)> = (0..self.inputs.len())
            .filter_map(|i| {
                let input = self.inputs[i].as_ref().ok()?.clone();
                Some((i, input, self.digests[i].clone()?))
            })
            .collect();
        for (i, input, digests) in work {
            if self.stopped {
                break;
            }
            if self.cancel.load(Ordering::Relaxed) {
                self.cancelled = true;
                break;
            }
            let mut done: Vec<(usize, Outputs)> = Vec::new();
            let mut failed = None;
            let mut cms: Option<CmsSoFar> = None;
            for (k, key) in keys.iter().enumerate() {
                let file = FileJob {
                    signer: k,
                    index: i,
                    input: input.clone(),
                    digests: digests.clone(),
                    joins: cms.clone(),
                };
                match self.sign_file(key, file).await {
                    Ok(outs) => {
                        cms = outs.cms_written().or(cms);
                        done.push((k, outs));
                    }
                    Err(e) => {
                        failed = Some((k, e));
                        break;
                    }
                }
            }
            match failed {
                None => self.conclude(i, done),
                Some((k, e)) if self.per_use_of(k).is_some() && is_pin_error(&e) => {
                    // Never tried again: the batch stops at this file.
                    let label = self.signers[k].view.label.clone();
                    let signed = self.signed().len();
                    self.conclude_failed(i, done, k, stopped_by_pin(e, &label, signed))
                        .await;
                    self.stopped = true;
                }
                Some((k, e)) => self.conclude_failed(i, done, k, e).await,
            }
        }
    }

    /// How key `k` logs in for each signature, when it wants to.
    fn per_use_of(&self, k: usize) -> Option<&PerUse> {
        self.per_use.get(k).and_then(Option::as_ref)
    }

    /// One file signed by one key, written and recorded: for an HSS key as a change run by
    /// the change engine.
    async fn sign_file(&self, key: &Arc<SigningKey>, file: FileJob) -> ApiResult<Outputs> {
        if key.alg == SigAlg::Hss {
            // Each signature spends one-time keys for good: a change to the token,
            // recorded before and after by the change engine.
            let change = stateful::StatefulFile::new(self, key, file);
            return self
                .console
                .changes()
                .apply_on(&self.partition, &mut { change })
                .await;
        }
        let (k, i) = (file.signer, file.index);
        let made = self.sign_and_write(key, file).await.map_err(sign_error);
        let ev = match &made {
            Ok(outs) => self.signed_event(self.file_event(key, k, i), key, k, outs),
            Err(e) => self
                .file_event(key, k, i)
                .failed(e.code.to_string())
                .meta("error", &e.message),
        };
        self.console.record(ev).await;
        made
    }

    /// Sign one file and write its outputs; removed again when the file changed meanwhile.
    async fn sign_and_write(
        &self,
        key: &Arc<SigningKey>,
        file: FileJob,
    ) -> Result<Outputs, SignError> {
        let (input, digests, joins) =
            (file.input.clone(), file.digests.clone(), file.joins.clone());
        self.sign_one(key, file)
            .await
            .and_then(|outs| write_outputs(outs, joins.as_ref(), &digests))
            .and_then(|outs| still_the_signed_file(&input, outs))
    }

    /// Sign one file in every format of its key on a pool session. HSM failures that need
    /// recovery go to the pool; the file is marked failed by the caller.
    async fn sign_one(&self, key: &Arc<SigningKey>, file: FileJob) -> Result<Outputs, SignError> {
        let hss = key.alg == SigAlg::Hss;
        let signer = &self.signers[file.signer];
        let (key, handle, progress) = (key.clone(), signer.handle.clone(), self.progress.clone());
        let (formats, out_dir) = (signer.formats.clone(), self.out_dir.clone());
        let stem = signer.stem.clone();
        let shared_cms = self.several_keys();
        let per_use = self.per_use_of(file.signer).cloned();
        let name = self.outcomes[file.index].name.clone();
        let FileJob {
            index,
            input,
            digests,
            joins,
            ..
        } = file;
        let joins = joins.map(|j| j.path);
        let mut attempts = 0u32;
        // Signing is safe to repeat: after the pool recovered a session or the module, the
        // file is signed again (an HSS key uses its next one-time key; the record says so).
        let r = self
            .partition
            .pool
            .run_service_idempotent_async("sign.batch", move |s| {
                attempts += 1;
                let retried = attempts > 1;
                let cached = *handle.lock();
                let h = match cached {
                    Some((g, k)) if g == s.generation() => k,
                    _ => {
                        let k = resolve(s, &key.summary)?;
                        *handle.lock() = Some((s.generation(), k));
                        k
                    }
                };
                progress(SignProgress::Signing { index });
                // The file must still be the one hashed: a change seen now costs nothing
                // (no HSS one-time key is spent).
                if let Err(e) = input.recheck(ChangeSeen::BeforeSigning) {
                    return Ok(Err(e));
                }
                let mut file = FileSigning::new(&key, s, h, &input, &digests);
                let naming = Naming {
                    out_dir: out_dir.as_deref(),
                    stem: stem.as_deref(),
                    shared_cms,
                };
                // A key that wants the PIN for each signature: this job's logins.
                s.set_context_auth(per_use.as_ref().map(|p| p.hook(&name)));
                let r = render_all(&mut file, &formats, naming, joins.as_deref());
                s.set_context_auth(None);
                let r = r
                    .map(|mut o| {
                        o.retried_after_recovery = retried;
                        o
                    })
                    // A format that reads the file again saw it change: say what changed.
                    .map_err(|e| match e {
                        SignError::Changed(_) => {
                            input.recheck(ChangeSeen::WhileSigning).err().unwrap_or(e)
                        }
                        e => e,
                    });
                match r {
                    // A key that wants the PIN for each signature answers "not logged in"
                    // when its context login is missing: a PIN error, not a lost session
                    // for the pool to log in again and retry.
                    Err(SignError::Hsm(hsm::HsmError::P11(e)))
                        if per_use.is_some() && e.rv() == Some(CKR_USER_NOT_LOGGED_IN) =>
                    {
                        let e = hsm::HsmError::P11(e);
                        Ok(Err(SignError::Hsm(e)))
                    }
                    Err(SignError::Hsm(e))
                        if matches!(
                            e.class(),
                            p11::ErrorClass::Disconnected | p11::ErrorClass::SessionInvalid
                        ) =>
                    {
                        Err(e)
                    }
                    other => Ok(other),
                }
            })
            .await;
        let outs = match r {
            Ok(made) => made?,
            Err(e) => return Err(SignError::Hsm(e)),
        };
        match &self.tsa {
            Some(tsa) => stamp(outs, tsa.clone(), hss).await,
            None => Ok(outs),
        }
    }

    /// After one file signed by every key: its outcome (each output once, a shared `.p7s`
    /// with every key that signed it) and progress (its audit records are written already).
    fn conclude(&mut self, i: usize, done: Vec<(usize, Outputs)>) {
        for (k, outs) in done {
            let s = &mut self.signers[k];
            s.signatures_made += signatures_needed(1, &s.formats, false, false);
            let label = s.view.label.clone();
            let o = &mut self.outcomes[i];
            for (f, p, _) in &outs.files {
                let path = p.display().to_string();
                match o.outputs.iter_mut().find(|v| v.path == path) {
                    Some(shared) => shared.signed_by.push(label.clone()),
                    None => o.outputs.push(OutputView {
                        format: OutputKind::from(*f),
                        path,
                        verified: true,
                        signed_by: vec![label.clone()],
                    }),
                }
            }
            if let (None, Some(why)) = (&o.unstamped, &outs.unstamped) {
                o.unstamped = Some(text!(
                    "sign.unstamped",
                    "Signed without a time-stamp: the TSA {{reason}}.",
                    reason = why
                ));
            }
        }
        (self.progress)(SignProgress::Done { index: i });
    }

    /// A file key `k` could not sign: what the keys before it signed for it is removed (and
    /// recorded as removed), and the file is marked failed, naming the key when there are
    /// several.
    async fn conclude_failed(
        &mut self,
        i: usize,
        done: Vec<(usize, Outputs)>,
        k: usize,
        e: ApiError,
    ) {
        let removed: Vec<String> = done.iter().flat_map(|(_, outs)| outs.remove()).collect();
        if self.several_keys() {
            self.outcomes[i].failed_key = Some(self.signers[k].view.label.clone());
        }
        if !removed.is_empty() {
            let o = &self.outcomes[i];
            let ev = Event::new("sign.withdrawn", "artifact")
                .resource(&o.name)
                .meta("partition", &self.partition.id)
                .meta("path", &o.path)
                .meta("failed_key", &self.signers[k].view.label)
                .meta("removed", &removed)
                .meta(
                    "why",
                    "a file of a batch with several keys is signed by every key or by none",
                );
            self.console.record(ev).await;
            for (k, _) in &done {
                let s = &mut self.signers[*k];
                s.signatures_made += signatures_needed(1, &s.formats, false, false);
            }
        }
        self.fail(i, &e);
        self.outcomes[i].error = Some(e);
        if self.on_error == OnError::Stop {
            self.stopped = true;
        }
    }

    /// The `sign` record of file `i` by key `k`, before the outcome is known.
    fn file_event(&self, key: &SigningKey, k: usize, i: usize) -> Event {
        let o = &self.outcomes[i];
        let ev = Event::new("sign", "artifact")
            .resource(&o.name)
            .algorithm(key.alg.name())
            .meta("partition", &self.partition.id)
            .meta("path", &o.path)
            .meta("size", o.size)
            .meta("sha256", &o.sha256)
            .meta("key", key.audit_json())
            .meta("key_id", &key.summary.id_hex)
            .meta("formats", &self.signers[k].formats);
        match self.per_use_of(k) {
            Some(p) => ev.meta("context_login", p.mode().as_str()),
            None => ev,
        }
    }

    /// What a file's record adds once its outputs are written.
    fn signed_event(&self, ev: Event, key: &SigningKey, k: usize, outs: &Outputs) -> Event {
        let mut ev = ev
            .meta(
                "outputs",
                outs.files
                    .iter()
                    .map(|(_, p, _)| p.display().to_string())
                    .collect::<Vec<_>>(),
            )
            .meta(
                "signatures",
                signatures_needed(1, &self.signers[k].formats, false, false),
            )
            .meta("signing_path", outs.signing_path)
            .meta("timestamps", &outs.timestamps)
            .meta(
                "verified",
                "software verifier accepted every signature before it was written",
            );
        if let Some(why) = &outs.unstamped {
            ev = ev.meta("timestamp_failed", why);
        }
        if outs.retried_after_recovery {
            ev = ev.meta("retried_after_recovery", true);
            if key.alg == SigAlg::Hss {
                ev = ev.meta(
                    "hss_note",
                    "signed again after a fault: the retry used the next one-time key",
                );
            }
        }
        ev
    }

    fn signed(&self) -> Vec<&FileOutcome> {
        self.outcomes
            .iter()
            .filter(|o| !o.outputs.is_empty())
            .collect()
    }

    /// Step 7a: the signed `SHA256SUMS` of what was signed, by every key (one
    /// `SHA256SUMS`; with several keys `SHA256SUMS.<stem>.sig` per key). When a key cannot
    /// sign it, what the keys before it wrote is removed.
    async fn sign_manifest(&mut self, keys: &[Arc<SigningKey>]) {
        let signed = self.signed();
        if !self.manifest_requested || signed.is_empty() || self.cancelled {
            return;
        }
        // The manifest vouches for the digests hashed at the start: every file it lists
        // must still be that file.
        let changed = self
            .inputs
            .iter()
            .zip(&self.outcomes)
            .filter(|(_, o)| !o.outputs.is_empty())
            .filter_map(|(input, _)| input.as_ref().ok())
            .find_map(|input| input.recheck(ChangeSeen::BeforeSigning).err());
        if let Some(e) = changed {
            self.manifest_error = Some(sign_error(e));
            return;
        }
        let mut written: Vec<OutputView> = Vec::new();
        let mut made = Vec::new();
        for (k, key) in keys.iter().enumerate() {
            let s = &self.signers[k];
            let plan = super::manifest::PlanFor {
                stem: s.stem.as_deref(),
                text_written: k > 0,
                cleartext: super::openpgp::wanted(&s.formats),
                label: &s.view.label,
            };
            let r = self
                .console
                .sign_manifest(&self.partition, key, &signed, self.out_dir.as_deref(), plan)
                .await;
            match r {
                Ok(v) => {
                    let cleartext = v.iter().any(|o| o.format == OutputKind::ManifestCleartext);
                    made.push((k, 1 + u64::from(cleartext)));
                    written.extend(v);
                }
                Err(e) => {
                    for o in &written {
                        let _ = std::fs::remove_file(&o.path);
                    }
                    self.manifest_error = Some(e);
                    return;
                }
            }
        }
        for (k, n) in made {
            self.signers[k].signatures_made += n;
        }
        self.manifest = written;
    }

    /// Step 7b: each key's public half beside raw signatures, once per batch.
    fn write_public_key(&mut self, keys: &[Arc<SigningKey>]) {
        let signed = self.signed();
        if signed.is_empty() {
            return;
        }
        let dir = batch_dir(self.out_dir.as_deref(), &signed);
        for (s, key) in self.signers.iter().zip(keys) {
            if !s.formats.contains(&SignFormat::Raw) {
                continue;
            }
            match write_public_key(key, &dir) {
                Ok(Some(out)) => self.manifest.push(out),
                Ok(None) => {}
                Err(e) => self.manifest_error = Some(e),
            }
        }
    }

    /// The report of a batch that signed nothing (stopped on bad input, or cancelled while
    /// hashing).
    fn report_unsigned(self) -> SignReport {
        let hss = self
            .signers
            .iter()
            .map(|s| s.key().summary.hss_keys_remaining)
            .collect();
        self.report(hss)
    }

    fn report(self, hss_remaining_after: Vec<Option<u64>>) -> SignReport {
        let keys: Vec<BatchKey> = self
            .signers
            .iter()
            .zip(hss_remaining_after)
            .map(|(s, hss)| BatchKey {
                key: s.view.clone(),
                formats: s.formats.clone(),
                name_stem: s.stem.clone(),
                signatures_made: s.signatures_made,
                hss_remaining_after: hss,
            })
            .collect();
        SignReport {
            key: keys[0].key.clone(),
            hss_remaining_after: keys[0].hss_remaining_after,
            signatures_made: keys.iter().map(|k| k.signatures_made).sum(),
            keys,
            files: self.outcomes,
            manifest: self.manifest,
            manifest_error: self.manifest_error,
            stopped: self.stopped,
            cancelled: self.cancelled,
            kit: None,
            kit_error: None,
        }
    }

    /// Step 7c: the report, with each HSS key's counter as the token now has it.
    async fn finish(self, keys: &[Arc<SigningKey>]) -> SignReport {
        let mut after = Vec::new();
        for key in keys {
            after.push(if key.summary.hss_keys_remaining.is_some() {
                super::stateful::remaining(&self.partition, key)
                    .await
                    .ok()
                    .flatten()
            } else {
                None
            });
        }
        self.report(after)
    }
}

/// One file for one key of the batch.
pub(super) struct FileJob {
    /// The key's place in the batch.
    signer: usize,
    index: usize,
    input: InputFile,
    digests: Digests,
    /// The `.p7s` an earlier key wrote for this file, which this key's signer joins.
    joins: Option<CmsSoFar>,
}

/// The key, its public half and its certificate, read in one idempotent pool job.
pub(super) async fn read_key(
    p: &Arc<Partition>,
    selector: &str,
    context: Vec<u8>,
) -> ApiResult<SigningKey> {
    let selector = hk::KeySelector::parse(selector)?;
    let refs = p.clone();
    let (summary, pk, cert, chain, openpgp_created) = p
        .pool
        .run_service_idempotent_async("sign.key", move |s| {
            // A handle the window holds is followed to the object it was handed out for.
            let handle = match selector {
                hk::KeySelector::Handle(h) => refs.key_refs.resolve(s, h)?,
                _ => hk::find_one(s, &selector, Some(CKO_PRIVATE_KEY))?,
            };
            let (summary, pk) = key_material(s, handle)?;
            let cert = find_certificate(s, &hex::decode(&summary.id_hex).unwrap_or_default())?;
            let chain = match &cert {
                Some(c) => find_chain(s, c)?,
                None => Vec::new(),
            };
            let created = super::openpgp::stored_creation_time(s, &summary.id_hex, &pk)?;
            Ok((summary, pk, cert, chain, created))
        })
        .await?;
    let alg = SigAlg::for_key(&pk).map_err(sign_error)?;
    Ok(SigningKey {
        alg,
        pk,
        summary,
        cert,
        chain,
        context,
        token_serial: p.serial.clone(),
        openpgp_created,
    })
}

/// The time-stamp tokens of a file's signatures, asked for off the HSM's session and off
/// the async runtime (the exchange blocks up to the TSA's timeout).
async fn stamp(mut outs: Outputs, tsa: Arc<Tsa>, hss: bool) -> Result<Outputs, SignError> {
    let keep_unstamped = tsa.optional || hss;
    tokio::task::spawn_blocking(move || {
        let mut files: Vec<(SignFormat, Vec<u8>)> = outs
            .files
            .iter_mut()
            .map(|(f, _, bytes)| (*f, std::mem::take(bytes)))
            .collect();
        let stamped = super::stamping::stamp_outputs(&mut files, &tsa, keep_unstamped)?;
        for ((_, _, bytes), (_, stamped)) in outs.files.iter_mut().zip(files) {
            *bytes = stamped;
        }
        outs.timestamps = stamped.timestamps;
        outs.unstamped = stamped.unstamped;
        Ok(outs)
    })
    .await
    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}
