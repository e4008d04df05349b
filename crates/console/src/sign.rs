//! Signing release artifacts with an HSM key: checked inputs, streamed digests, one session
//! for the whole batch, every signature verified in software before it is written, outputs
//! written atomically beside the files (never over existing ones), HSS budgets checked
//! before anything is signed, and every signature recorded in the audit trail.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::SystemTime;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use audit::Event;
use hsm::keys as hk;
use hsm::pubkey::PublicKey;
use p11::sys::*;
use p11::{Session, Template};
use signing::alg::SigAlg;
use signing::formats::{Bundle, BundleFile, BundleKey, BUNDLE_FORMAT};
use signing::hashing::Digests;
use signing::input::InputFile;
use signing::output::{beside, write_new};
use signing::SignError;

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::Console;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SignFormat {
    /// Detached CMS `.p7s` with the signer's certificate.
    Cms,
    /// Raw `.sig` and the public key as PEM.
    Raw,
    /// JSON bundle `.sig.json`.
    Bundle,
}

impl SignFormat {
    /// What the output's name adds to the artifact's.
    pub fn suffix(self) -> &'static str {
        match self {
            SignFormat::Cms => ".p7s",
            SignFormat::Raw => ".sig",
            SignFormat::Bundle => ".sig.json",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    Stop,
    Continue,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct SignRequest {
    /// The signing key: `id:HEX` (stable across reconnections), `label:NAME` or `handle:N`.
    pub key: String,
    pub files: Vec<String>,
    pub formats: Vec<SignFormat>,
    /// Also write a `SHA256SUMS` of the batch and its raw signature.
    pub manifest: bool,
    /// Write outputs here instead of beside each file.
    pub out_dir: Option<String>,
    /// ML-DSA context string (raw and bundle formats; CMS requires none).
    pub context: Option<String>,
    pub on_error: OnError,
    /// Signing with an HSS key uses up one-time signatures: the officer confirms it.
    pub confirm_hss: bool,
}

/// A key the signing view can offer.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SigningKeyView {
    pub handle: u64,
    pub label: String,
    pub id_hex: String,
    pub algorithm: String,
    pub scheme: SigAlg,
    pub fingerprint: String,
    pub hss_remaining: Option<u64>,
    pub hss_capacity: Option<String>,
    pub has_certificate: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct OutputView {
    pub format: String,
    pub path: String,
    /// Verified in software before it was written.
    pub verified: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct FileOutcome {
    pub path: String,
    pub name: String,
    pub size: Option<u64>,
    pub sha256: Option<String>,
    pub outputs: Vec<OutputView>,
    pub error: Option<ApiError>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct SignReport {
    pub key: SigningKeyView,
    pub files: Vec<FileOutcome>,
    pub manifest: Vec<OutputView>,
    pub manifest_error: Option<ApiError>,
    /// The batch stopped at the first failure (as asked).
    pub stopped: bool,
    pub cancelled: bool,
    pub hss_remaining_after: Option<u64>,
    pub signatures_made: u64,
}

/// Progress of a batch, per file.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum SignProgress {
    Hashing { index: usize, done: u64, total: u64 },
    Signing { index: usize },
    Done { index: usize },
    Failed { index: usize, message: String },
}

fn sign_error(e: SignError) -> ApiError {
    match e {
        SignError::Hsm(h) => h.into(),
        SignError::Cancelled => {
            ApiError::new(ErrorCode::Cancelled, "Cancelled; nothing more was signed.")
        }
        SignError::Exists(p) => {
            ApiError::invalid(format!("{p} already exists; nothing was overwritten."))
                .suggest("Move the old signature away or choose another output folder.")
        }
        SignError::Input { path, reason } => ApiError::invalid(format!("{path} {reason}.")),
        SignError::Changed(p) => ApiError::invalid(format!("{p} changed while it was being read."))
            .suggest("Sign it again once it is complete."),
        SignError::Write { path, reason } => {
            ApiError::new(ErrorCode::Io, format!("Cannot write {path}: {reason}."))
                .details("Nothing was half-written.")
        }
        SignError::SelfCheck(m) => ApiError::new(
            ErrorCode::SignatureInvalid,
            format!("The HSM's signature did not verify in software ({m}); it was not written."),
        )
        .suggest("Check the key and the module; report this to the HSM's administrator."),
        SignError::Invalid(m) => ApiError::new(ErrorCode::SignatureInvalid, m),
        SignError::Unsupported(m) | SignError::Format(m) => {
            ApiError::new(ErrorCode::Unsupported, m)
        }
    }
}

/// The public key of a private key object and its scheme.
fn key_material(s: &Session, handle: u64) -> hsm::Result<(hk::ObjectSummary, PublicKey)> {
    let summary = hk::summary(s, handle)?;
    if summary.class != "PRIVATE_KEY" || !summary.capabilities.sign {
        return Err(hsm::HsmError::InvalidInput(format!(
            "'{}' is not a private key that may sign",
            summary.label
        )));
    }
    let ph = hk::public_for_private(s, handle)?;
    Ok((summary, hk::read_public_key(s, ph)?))
}

fn find_certificate(s: &Session, id: &[u8]) -> p11::Result<Option<Vec<u8>>> {
    if id.is_empty() {
        return Ok(None);
    }
    let found = s.find_objects(
        &mut Template::new()
            .ulong(CKA_CLASS, CKO_CERTIFICATE)
            .bytes(CKA_ID, id),
    )?;
    for h in found {
        if let Some(v) = s.get_attribute(h, CKA_VALUE)?.bytes() {
            return Ok(Some(v.to_vec()));
        }
    }
    Ok(None)
}

fn store_certificate(s: &Session, id: &[u8], label: &str, der_bytes: &[u8]) -> p11::Result<()> {
    let (cert, _) = signing::cert::public_key(der_bytes)
        .map_err(|e| p11::Error::InvalidArgument(e.to_string()))?;
    let subject = der::Encode::to_der(cert.tbs_certificate().subject())
        .map_err(|e| p11::Error::InvalidArgument(e.to_string()))?;
    let mut t = Template::new()
        .ulong(CKA_CLASS, CKO_CERTIFICATE)
        .ulong(CKA_CERTIFICATE_TYPE, CKC_X_509)
        .bool(CKA_TOKEN, true)
        .bool(CKA_PRIVATE, false)
        .text(CKA_LABEL, label)
        .bytes(CKA_ID, id)
        .bytes(CKA_SUBJECT, &subject)
        .bytes(CKA_VALUE, der_bytes);
    s.create_object(&mut t).map(|_| ())
}

fn view(
    summary: &hk::ObjectSummary,
    pk: &PublicKey,
    scheme: SigAlg,
    has_cert: bool,
) -> SigningKeyView {
    SigningKeyView {
        handle: summary.handle,
        label: summary.label.clone(),
        id_hex: summary.id_hex.clone(),
        algorithm: summary.algorithm.clone(),
        scheme,
        fingerprint: pk.fingerprint(),
        hss_remaining: summary.hss_keys_remaining,
        hss_capacity: summary.hss_capacity.clone(),
        has_certificate: has_cert,
    }
}

/// Certificate issued on the fly, for the report and the audit trail.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CertificateView {
    pub pem: String,
    pub subject: String,
    pub serial: String,
    pub not_after: String,
    pub fingerprint: String,
    pub stored_on_token: bool,
}

struct Batch {
    alg: SigAlg,
    pk: PublicKey,
    summary: hk::ObjectSummary,
    cert: Option<Vec<u8>>,
    context: Vec<u8>,
    formats: Vec<SignFormat>,
    out_dir: Option<PathBuf>,
    serial: String,
}

/// The private key by its `CKA_ID` (handles do not survive a module reinitialization, which
/// the pool may do between two files of a batch).
fn resolve(s: &Session, summary: &hk::ObjectSummary) -> hsm::Result<u64> {
    let sel = if summary.id_hex.is_empty() {
        hk::KeySelector::Label(summary.label.clone())
    } else {
        hk::KeySelector::Id(hex::decode(&summary.id_hex).unwrap_or_default())
    };
    hk::find_one(s, &sel, Some(CKO_PRIVATE_KEY))
}

impl Batch {
    /// Sign one file in every requested format, on `s`. Each signature is checked in
    /// software first; outputs are written only when all of this file's signatures exist.
    fn sign_file(
        &self,
        s: &Session,
        key: u64,
        input: &InputFile,
        d: &Digests,
    ) -> Result<Vec<(SignFormat, PathBuf, Vec<u8>)>, SignError> {
        // Refuse before the HSM signs: a file already signed (a batch run again after a
        // crash) must not cost signatures — one-time keys, for HSS. Writing checks again.
        for f in &self.formats {
            let out = beside(&input.path, self.out_dir.as_deref(), f.suffix());
            if std::fs::symlink_metadata(&out).is_ok() {
                return Err(SignError::Exists(out.display().to_string()));
            }
        }
        let mut outs = Vec::new();
        let mut whole: Option<Vec<u8>> = None;
        let mut message_sig = |this: &Batch| -> Result<Vec<u8>, SignError> {
            if this.alg.whole_message() {
                if input.size() > signing::MAX_WHOLE_MESSAGE {
                    return Err(SignError::Unsupported(format!(
                        "{} signs whole messages and tokens take at most {} MiB at once; {} is larger — choose the CMS format for it",
                        this.alg.name(),
                        signing::MAX_WHOLE_MESSAGE >> 20,
                        input.name()
                    )));
                }
                if whole.is_none() {
                    let bytes = std::fs::read(&input.path).map_err(|e| SignError::Input {
                        path: input.path.display().to_string(),
                        reason: format!("cannot be read: {e}"),
                    })?;
                    // The bytes signed must be the bytes hashed.
                    if hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)) != d.sha256 {
                        return Err(SignError::Changed(input.path.display().to_string()));
                    }
                    whole = Some(bytes);
                }
                let m = whole.as_ref().expect("read");
                let sig = this.alg.sign(s, key, m, &this.context)?;
                this.alg
                    .verify(&this.pk, m, &this.context, &sig)
                    .map_err(|e| SignError::SelfCheck(e.to_string()))?;
                Ok(sig)
            } else {
                let digest = d
                    .get(this.alg.digest())
                    .ok_or_else(|| SignError::Format("digest missing".into()))?;
                let sig = this.alg.sign_digest(s, key, &digest)?;
                this.alg
                    .verify_digest(&this.pk, &digest, &sig)
                    .map_err(|e| SignError::SelfCheck(e.to_string()))?;
                Ok(sig)
            }
        };
        let mut raw_sig: Option<Vec<u8>> = None;
        for f in &self.formats {
            match f {
                SignFormat::Cms => {
                    let cert = self
                        .cert
                        .as_ref()
                        .ok_or_else(|| SignError::Format("no certificate for CMS".into()))?;
                    let digest = d
                        .get(self.alg.digest())
                        .ok_or_else(|| SignError::Format("digest missing".into()))?;
                    let p7s = signing::cms::build(
                        self.alg,
                        cert,
                        &digest,
                        SystemTime::now(),
                        &mut |m| Ok(self.alg.sign(s, key, m, &[])?),
                    )?;
                    outs.push((
                        SignFormat::Cms,
                        beside(
                            &input.path,
                            self.out_dir.as_deref(),
                            SignFormat::Cms.suffix(),
                        ),
                        p7s,
                    ));
                }
                SignFormat::Raw | SignFormat::Bundle => {
                    // Raw and bundle carry the same signature over the file (one HSS
                    // one-time key, not two).
                    let sig = match &raw_sig {
                        Some(sig) => sig.clone(),
                        None => message_sig(self)?,
                    };
                    raw_sig = Some(sig.clone());
                    if *f == SignFormat::Raw {
                        outs.push((
                            SignFormat::Raw,
                            beside(
                                &input.path,
                                self.out_dir.as_deref(),
                                SignFormat::Raw.suffix(),
                            ),
                            sig,
                        ));
                    } else {
                        use base64::Engine;
                        let b = Bundle {
                            format: BUNDLE_FORMAT.into(),
                            file: BundleFile {
                                name: input.name(),
                                size: d.size,
                                sha256: d.sha256.clone(),
                                sha512: d.sha512.clone(),
                            },
                            algorithm: self.alg.name(),
                            scheme: self.alg,
                            parameters: Bundle::parameters_for(self.alg, &self.context),
                            signed: "file".into(),
                            key: BundleKey {
                                label: self.summary.label.clone(),
                                id: self.summary.id_hex.clone(),
                                fingerprint: self.pk.fingerprint(),
                                public_key: self.pk.spki_pem(),
                            },
                            signature: base64::engine::general_purpose::STANDARD.encode(&sig),
                            signed_at: audit::now_rfc3339(),
                            console_version: env!("CARGO_PKG_VERSION").into(),
                            token_serial: self.serial.clone(),
                        };
                        let text = serde_json::to_vec_pretty(&b)
                            .map_err(|e| SignError::Format(e.to_string()))?;
                        outs.push((
                            SignFormat::Bundle,
                            beside(
                                &input.path,
                                self.out_dir.as_deref(),
                                SignFormat::Bundle.suffix(),
                            ),
                            text,
                        ));
                    }
                }
            }
        }
        Ok(outs)
    }
}

/// A signing error inside a pool job, where errors are the pool's: the HSM's own stays
/// as it is, anything else (a subject the certificate builder refused…) is invalid input.
fn hsm_side(e: SignError) -> hsm::HsmError {
    match e {
        SignError::Hsm(h) => h,
        other => hsm::HsmError::InvalidInput(other.to_string()),
    }
}

/// How many signatures a batch will use (the HSS budget check).
fn signatures_needed(files: u64, formats: &[SignFormat], manifest: bool, issue_cert: bool) -> u64 {
    // CMS signs its own attributes; raw and bundle share one signature over the file.
    let per_file = formats.iter().filter(|f| **f == SignFormat::Cms).count() as u64
        + u64::from(formats.iter().any(|f| *f != SignFormat::Cms));
    files * per_file + u64::from(manifest) + u64::from(issue_cert)
}

impl Console {
    /// Private keys on the partition that can sign in the formats the console writes.
    pub async fn signing_keys(&self, partition: &str) -> ApiResult<Vec<SigningKeyView>> {
        let p = self.partition_ref(partition).await?;
        Ok(p.pool
            .run_service_idempotent_async("sign.keys", |s| {
                let mut out = Vec::new();
                for o in
                    hk::list_objects(s, &mut Template::new().ulong(CKA_CLASS, CKO_PRIVATE_KEY))?
                {
                    if !o.capabilities.sign {
                        continue;
                    }
                    let (summary, pk) = match key_material(s, o.handle) {
                        Ok(m) => m,
                        Err(e) => {
                            // Not offered for signing; say why where someone can look.
                            tracing::warn!("'{}' is not offered for signing: {e}", o.label);
                            continue;
                        }
                    };
                    let Ok(alg) = SigAlg::for_key(&pk) else {
                        continue;
                    };
                    let id = hex::decode(&summary.id_hex).unwrap_or_default();
                    let has_cert = find_certificate(s, &id)?.is_some();
                    out.push(view(&summary, &pk, alg, has_cert));
                }
                Ok(out)
            })
            .await?)
    }

    /// Issue a self-signed certificate for a key (and keep it on the token by its CKA_ID,
    /// where the CMS format finds it). Audited.
    pub async fn issue_certificate(
        &self,
        partition: &str,
        handle: u64,
        subject: &str,
        days: u32,
        store: bool,
    ) -> ApiResult<CertificateView> {
        signing::cert::parse_subject(subject).map_err(sign_error)?;
        let p = self.partition_ref(partition).await?;
        self.audit_first(
            Event::new("cert.issue.request", "key")
                .resource(subject)
                .meta("partition", &p.id)
                .meta("handle", handle),
        )
        .await?;
        let subject = subject.to_string();
        let r = p
            .pool
            .run_service_async("sign.cert", move |s| {
                let (summary, pk) = key_material(s, handle)?;
                let alg =
                    SigAlg::for_key(&pk).map_err(|e| hsm::HsmError::Unsupported(e.to_string()))?;
                let der_bytes = signing::cert::self_signed(&pk, alg, &subject, days, &mut |m| {
                    Ok(alg.sign(s, handle, m, &[])?)
                })
                .map_err(hsm_side)?;
                if store {
                    store_certificate(
                        s,
                        &hex::decode(&summary.id_hex).unwrap_or_default(),
                        &summary.label,
                        &der_bytes,
                    )?;
                }
                Ok((summary, der_bytes))
            })
            .await
            .map_err(ApiError::from)
            .and_then(|(summary, der_bytes)| {
                let (c, pk) = signing::cert::public_key(&der_bytes).map_err(sign_error)?;
                Ok((
                    summary,
                    CertificateView {
                        pem: signing::cert::to_pem("CERTIFICATE", &der_bytes),
                        subject: c.tbs_certificate().subject().to_string(),
                        serial: c.tbs_certificate().serial_number().to_string(),
                        not_after: c.tbs_certificate().validity().not_after.to_string(),
                        fingerprint: pk.fingerprint(),
                        stored_on_token: store,
                    },
                ))
            });
        let ev = Event::new("cert.issue", "key").meta("partition", &p.id);
        let ev = match &r {
            Ok((s, c)) => ev
                .resource(&s.label)
                .algorithm(&s.algorithm)
                .meta("key_id", &s.id_hex)
                .meta("signatures", 1)
                .meta("subject", &c.subject)
                .meta("serial", &c.serial),
            Err(_) => ev.resource(handle.to_string()),
        };
        self.record_outcome(ev, &r).await;
        r.map(|(_, c)| c)
    }

    /// A PKCS#10 request for a key, signed by it. Audited.
    pub async fn certificate_request(
        &self,
        partition: &str,
        handle: u64,
        subject: &str,
    ) -> ApiResult<String> {
        signing::cert::parse_subject(subject).map_err(sign_error)?;
        let p = self.partition_ref(partition).await?;
        self.audit_first(
            Event::new("cert.csr.request", "key")
                .resource(subject)
                .meta("partition", &p.id)
                .meta("handle", handle),
        )
        .await?;
        let subject = subject.to_string();
        let r = p
            .pool
            .run_service_async("sign.csr", move |s| {
                let (_, pk) = key_material(s, handle)?;
                let alg =
                    SigAlg::for_key(&pk).map_err(|e| hsm::HsmError::Unsupported(e.to_string()))?;
                signing::cert::csr(&pk, alg, &subject, &mut |m| {
                    Ok(alg.sign(s, handle, m, &[])?)
                })
                .map_err(hsm_side)
            })
            .await
            .map_err(ApiError::from)
            .map(|d| signing::cert::to_pem("CERTIFICATE REQUEST", &d));
        self.record_outcome(
            Event::new("cert.csr", "key")
                .resource(handle.to_string())
                .meta("partition", &p.id),
            &r,
        )
        .await;
        r
    }

    /// Sign a batch of files. See the module documentation.
    pub async fn sign_files(
        &self,
        partition: &str,
        req: SignRequest,
        progress: Arc<dyn Fn(SignProgress) + Send + Sync>,
        cancel: Arc<AtomicBool>,
    ) -> ApiResult<SignReport> {
        if req.files.is_empty() {
            return Err(ApiError::invalid("Choose or drop the files to sign."));
        }
        let mut formats = req.formats.clone();
        formats.dedup();
        if formats.is_empty() {
            return Err(ApiError::invalid("Choose at least one signature format."));
        }
        let context = req.context.clone().unwrap_or_default().into_bytes();
        if !context.is_empty() && formats.contains(&SignFormat::Cms) {
            return Err(ApiError::invalid("CMS signatures carry no ML-DSA context (RFC 9882); use the raw or bundle format for a context."));
        }
        if context.len() > 255 {
            return Err(ApiError::invalid("ML-DSA contexts are at most 255 bytes."));
        }
        let out_dir = match &req.out_dir {
            Some(d) => {
                let d = PathBuf::from(d);
                if !d.is_dir() {
                    return Err(ApiError::invalid(format!(
                        "The output folder {} does not exist.",
                        d.display()
                    )));
                }
                Some(d)
            }
            None => None,
        };
        let p = self.partition_ref(partition).await?;
        if p.logged_in() != Some(crate::views::UserKind::User) {
            return Err(ApiError::new(
                ErrorCode::NotLoggedIn,
                "Log in as the partition's user to sign.",
            ));
        }
        let selector = hk::KeySelector::parse(&req.key)?;
        // The key, its public half, its certificate.
        let (summary, pk, cert) = p
            .pool
            .run_service_idempotent_async("sign.key", move |s| {
                let handle = hk::find_one(s, &selector, Some(CKO_PRIVATE_KEY))?;
                let (summary, pk) = key_material(s, handle)?;
                let cert = find_certificate(s, &hex::decode(&summary.id_hex).unwrap_or_default())?;
                Ok((summary, pk, cert))
            })
            .await?;
        let alg = SigAlg::for_key(&pk).map_err(sign_error)?;
        if !context.is_empty() && !matches!(alg, SigAlg::MlDsa { .. }) {
            return Err(ApiError::invalid("Only ML-DSA signatures take a context."));
        }
        if matches!(alg, SigAlg::Hss) && !req.confirm_hss {
            return Err(ApiError::invalid("Signing with an HSS key uses up one-time signatures for good; confirm it to go on."));
        }
        // Inputs, checked before anything is hashed or signed.
        let paths: Vec<PathBuf> = req.files.iter().map(PathBuf::from).collect();
        let checked = signing::input::check_all(&paths);
        let mut outcomes: Vec<FileOutcome> = paths
            .iter()
            .zip(&checked)
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
            })
            .collect();
        let bad_input = outcomes.iter().any(|o| o.error.is_some());
        if bad_input && req.on_error == OnError::Stop {
            for (i, o) in outcomes.iter().enumerate() {
                if let Some(e) = &o.error {
                    progress(SignProgress::Failed {
                        index: i,
                        message: e.message.clone(),
                    });
                }
            }
            return Ok(SignReport {
                key: view(&summary, &pk, alg, cert.is_some()),
                files: outcomes,
                manifest: Vec::new(),
                manifest_error: None,
                stopped: true,
                cancelled: false,
                hss_remaining_after: summary.hss_keys_remaining,
                signatures_made: 0,
            });
        }
        let good = checked.iter().filter(|c| c.is_ok()).count() as u64;
        let issue_cert = formats.contains(&SignFormat::Cms) && cert.is_none();
        let needed = signatures_needed(good, &formats, req.manifest, issue_cert);
        if let Some(left) = summary.hss_keys_remaining {
            if left < needed {
                return Err(ApiError::new(
                    ErrorCode::InvalidInput,
                    format!(
                        "'{}' has {left} signatures left; this batch needs {needed}.",
                        summary.label
                    ),
                )
                .details("Nothing was signed.")
                .suggest("Sign fewer files or formats, or use another key."));
            }
        }
        // Hash (no HSM session needed), in order.
        let mut digests: Vec<Option<Digests>> = vec![None; paths.len()];
        let mut cancelled = false;
        for (i, c) in checked.iter().enumerate() {
            let Ok(input) = c else {
                progress(SignProgress::Failed {
                    index: i,
                    message: outcomes[i]
                        .error
                        .as_ref()
                        .map(|e| e.message.clone())
                        .unwrap_or_default(),
                });
                continue;
            };
            let (inp, want384) = (
                input.clone(),
                alg.digest() == signing::alg::DigestAlg::Sha384,
            );
            let (pr, cn) = (progress.clone(), cancel.clone());
            let total = inp.size();
            let r = tokio::task::spawn_blocking(move || {
                signing::hashing::hash_file(
                    &inp,
                    want384,
                    &|done| {
                        pr(SignProgress::Hashing {
                            index: i,
                            done,
                            total,
                        })
                    },
                    &cn,
                )
            })
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
            match r {
                Ok(d) => {
                    outcomes[i].sha256 = Some(d.sha256.clone());
                    digests[i] = Some(d);
                }
                Err(SignError::Cancelled) => {
                    cancelled = true;
                    break;
                }
                Err(e) => {
                    let e = sign_error(e);
                    progress(SignProgress::Failed {
                        index: i,
                        message: e.message.clone(),
                    });
                    outcomes[i].error = Some(e);
                    if req.on_error == OnError::Stop {
                        break;
                    }
                }
            }
        }
        if cancelled {
            return Ok(SignReport {
                key: view(&summary, &pk, alg, cert.is_some()),
                files: outcomes,
                manifest: Vec::new(),
                manifest_error: None,
                stopped: false,
                cancelled: true,
                hss_remaining_after: summary.hss_keys_remaining,
                signatures_made: 0,
            });
        }
        // Write-ahead: the batch as it will be signed.
        self.audit_first(
            Event::new("sign.request", "artifact")
                .resource(format!("{} file(s)", good))
                .algorithm(alg.name())
                .meta("partition", &p.id)
                .meta("key", serde_json::json!({ "label": summary.label, "id": summary.id_hex, "fingerprint": pk.fingerprint() }))
                .meta("formats", &formats)
                .meta("files", outcomes.iter().map(|o| serde_json::json!({ "name": o.name, "size": o.size, "sha256": o.sha256 })).collect::<Vec<_>>())
                .meta("hss_remaining", summary.hss_keys_remaining),
        )
        .await?;
        let mut cert = cert;
        let mut signatures_made = 0u64;
        if issue_cert {
            let subject = format!(
                "CN={}",
                summary
                    .label
                    .replace([',', '+', '=', '\\', '"', '<', '>', ';'], "_")
            );
            let c = self
                .issue_certificate(&p.id, summary.handle, &subject, 3 * 365, true)
                .await?;
            signatures_made += 1;
            cert = Some(
                der::pem::decode_vec(c.pem.as_bytes())
                    .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
                    .1,
            );
        }
        let batch = Arc::new(Batch {
            alg,
            pk: pk.clone(),
            summary: summary.clone(),
            cert,
            context,
            formats: formats.clone(),
            out_dir: out_dir.clone(),
            serial: p.serial.clone(),
        });
        // One pool job per file, its outputs written and recorded before the next file is
        // signed: a crash or kill loses at most the file in flight, never a finished one.
        // After a failure the pool recovers and the batch continues (or stops) from the next
        // file, never signing a file twice.
        let work: Arc<Vec<(usize, InputFile, Digests)>> = checked
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((i, c.as_ref().ok()?.clone(), digests[i].clone()?)))
            .collect::<Vec<_>>()
            .into();
        let state = Arc::new(Mutex::new((
            0usize,
            Vec::<(
                usize,
                Result<Vec<(SignFormat, PathBuf, Vec<u8>)>, SignError>,
            )>::new(),
        )));
        let key_handle: Arc<Mutex<Option<(u64, u64)>>> = Arc::new(Mutex::new(None));
        let mut stopped = false;
        while state.lock().0 < work.len() && !stopped {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                cancelled = true;
                break;
            }
            let (st, b, w, pr, cn, kh) = (
                state.clone(),
                batch.clone(),
                work.clone(),
                progress.clone(),
                cancel.clone(),
                key_handle.clone(),
            );
            let r = p
                .pool
                .run_service_async("sign.batch", move |s| {
                    // Object handles hold for the module's lifetime: find the key once per
                    // module generation (a reinitialization may renumber objects).
                    let cached = *kh.lock();
                    let key = match cached {
                        Some((g, k)) if g == s.generation() => k,
                        _ => {
                            let k = resolve(s, &b.summary)?;
                            *kh.lock() = Some((s.generation(), k));
                            k
                        }
                    };
                    let next = st.lock().0;
                    if next >= w.len() || cn.load(std::sync::atomic::Ordering::Relaxed) {
                        return Ok(());
                    }
                    let (i, input, d) = &w[next];
                    pr(SignProgress::Signing { index: *i });
                    let r = b.sign_file(s, key, input, d);
                    // HSM errors go to the pool (recovery); the file is marked failed outside.
                    if let Err(SignError::Hsm(h)) = &r {
                        if matches!(
                            h.class(),
                            p11::ErrorClass::Disconnected | p11::ErrorClass::SessionInvalid
                        ) {
                            return Err(h.clone());
                        }
                    }
                    let mut g = st.lock();
                    g.1.push((*i, r));
                    g.0 += 1;
                    Ok(())
                })
                .await;
            if let Err(e) = r {
                // The file being signed when the HSM failed.
                let mut g = state.lock();
                let next = g.0;
                if next < work.len() {
                    g.1.push((work[next].0, Err(SignError::Hsm(e))));
                    g.0 += 1;
                }
                if req.on_error == OnError::Stop {
                    stopped = true;
                }
            }
            // Write what was signed and record it, in order.
            let done: Vec<_> = std::mem::take(&mut state.lock().1);
            for (i, r) in done {
                match r.and_then(|outs| {
                    // All of this file's outputs, or none: refuse if any exists already.
                    if let Some((_, p, _)) = outs
                        .iter()
                        .find(|(_, p, _)| std::fs::symlink_metadata(p).is_ok())
                    {
                        return Err(SignError::Exists(p.display().to_string()));
                    }
                    let mut written = Vec::new();
                    for (_, path, bytes) in &outs {
                        if let Err(e) = write_new(path, bytes) {
                            for w in &written {
                                let _ = std::fs::remove_file(w);
                            }
                            return Err(e);
                        }
                        written.push(path.clone());
                    }
                    Ok(outs)
                }) {
                    Ok(outs) => {
                        signatures_made += signatures_needed(1, &formats, false, false);
                        outcomes[i].outputs = outs
                            .iter()
                            .map(|(f, p, _)| OutputView {
                                format: format!("{f:?}").to_lowercase(),
                                path: p.display().to_string(),
                                verified: true,
                            })
                            .collect();
                        progress(SignProgress::Done { index: i });
                        self.record(
                            Event::new("sign", "artifact")
                                .resource(&outcomes[i].name)
                                .algorithm(alg.name())
                                .meta("partition", &p.id)
                                .meta("path", &outcomes[i].path)
                                .meta("size", outcomes[i].size)
                                .meta("sha256", &outcomes[i].sha256)
                                .meta("key", serde_json::json!({ "label": summary.label, "id": summary.id_hex, "fingerprint": pk.fingerprint() }))
                                .meta("formats", &formats)
                                .meta("outputs", outcomes[i].outputs.iter().map(|o| o.path.clone()).collect::<Vec<_>>())
                                .meta("key_id", &summary.id_hex)
                                .meta("signatures", signatures_needed(1, &formats, false, false))
                                .meta("verified", "software verifier accepted every signature before it was written"),
                        )
                        .await;
                    }
                    Err(e) => {
                        let e = sign_error(e);
                        progress(SignProgress::Failed {
                            index: i,
                            message: e.message.clone(),
                        });
                        self.record(
                            Event::new("sign", "artifact")
                                .resource(&outcomes[i].name)
                                .algorithm(alg.name())
                                .meta("partition", &p.id)
                                .meta("sha256", &outcomes[i].sha256)
                                .meta("key_id", &summary.id_hex)
                                .failed(format!("{:?}", e.code))
                                .meta("error", &e.message),
                        )
                        .await;
                        outcomes[i].error = Some(e);
                        if req.on_error == OnError::Stop {
                            stopped = true;
                        }
                    }
                }
            }
            if stopped {
                break;
            }
        }
        // The manifest of what was signed.
        let mut manifest = Vec::new();
        let mut manifest_error = None;
        let signed: Vec<&FileOutcome> = outcomes.iter().filter(|o| !o.outputs.is_empty()).collect();
        if req.manifest && !signed.is_empty() && !cancelled {
            let r = self
                .sign_manifest(&p, &batch, &signed, out_dir.as_deref())
                .await;
            match r {
                Ok(v) => {
                    signatures_made += 1;
                    manifest = v;
                }
                Err(e) => manifest_error = Some(e),
            }
        }
        // The public key beside raw signatures, once per batch.
        if formats.contains(&SignFormat::Raw) && !signed.is_empty() {
            let dir = out_dir.clone().unwrap_or_else(|| {
                Path::new(&signed[0].path)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default()
            });
            let stem: String = summary
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
            match std::fs::read_to_string(&pem_path) {
                Ok(existing) if existing.trim() == pk.spki_pem().trim() => {}
                Ok(_) => {
                    manifest_error = Some(ApiError::invalid(format!(
                        "{} exists and holds another key; the public key was not written.",
                        pem_path.display()
                    )))
                }
                Err(_) => {
                    if let Err(e) = write_new(&pem_path, pk.spki_pem().as_bytes()) {
                        manifest_error = Some(sign_error(e));
                    } else {
                        manifest.push(OutputView {
                            format: "public_key".into(),
                            path: pem_path.display().to_string(),
                            verified: true,
                        });
                    }
                }
            }
        }
        let after = if summary.hss_keys_remaining.is_some() {
            let sm = summary.clone();
            p.pool
                .run_service_idempotent_async("sign.hss_after", move |s| {
                    Ok(hk::summary(s, resolve(s, &sm)?)?.hss_keys_remaining)
                })
                .await
                .ok()
                .flatten()
        } else {
            None
        };
        Ok(SignReport {
            key: view(&summary, &pk, alg, true),
            files: outcomes,
            manifest,
            manifest_error,
            stopped,
            cancelled,
            hss_remaining_after: after,
            signatures_made,
        })
    }

    async fn sign_manifest(
        &self,
        p: &crate::Partition,
        batch: &Arc<Batch>,
        signed: &[&FileOutcome],
        out_dir: Option<&Path>,
    ) -> ApiResult<Vec<OutputView>> {
        let mut entries: Vec<(String, String)> = signed
            .iter()
            .map(|o| (o.sha256.clone().unwrap_or_default(), o.name.clone()))
            .collect();
        entries.sort_by(|a, b| a.1.cmp(&b.1));
        if entries.windows(2).any(|w| w[0].1 == w[1].1) {
            return Err(ApiError::invalid(
                "Two signed files have the same name; a SHA256SUMS manifest needs unique names.",
            )
            .suggest("Sign them in separate batches or choose an output folder per batch."));
        }
        let dir = out_dir.map(Path::to_path_buf).unwrap_or_else(|| {
            Path::new(&signed[0].path)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        });
        let text = signing::formats::manifest(&entries);
        let (mpath, spath) = (dir.join("SHA256SUMS"), dir.join("SHA256SUMS.sig"));
        for x in [&mpath, &spath] {
            if std::fs::symlink_metadata(x).is_ok() {
                return Err(ApiError::invalid(format!(
                    "{} already exists; the manifest was not written.",
                    x.display()
                )));
            }
        }
        let b = batch.clone();
        let body = text.clone().into_bytes();
        let sig = p
            .pool
            .run_service_async("sign.manifest", move |s| {
                let key = resolve(s, &b.summary)?;
                let r = if b.alg.whole_message() {
                    b.alg.sign(s, key, &body, &[])
                } else {
                    b.alg.sign_digest(s, key, &b.alg.digest().digest(&body))
                }?;
                b.alg.verify(&b.pk, &body, &[], &r).map_err(|e| {
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
                .algorithm(batch.alg.name())
                .meta("files", entries.len())
                .meta("key_id", &batch.summary.id_hex)
                .meta("signatures", 1)
                .meta("partition", &p.id),
        )
        .await;
        Ok(vec![
            OutputView {
                format: "manifest".into(),
                path: mpath.display().to_string(),
                verified: true,
            },
            OutputView {
                format: "manifest_signature".into(),
                path: spath.display().to_string(),
                verified: true,
            },
        ])
    }

    /// Verify a file against a signature offline (software verifiers only). Recorded.
    pub async fn verify_signature(
        &self,
        file: &str,
        signature: &str,
        public_key_pem: Option<&str>,
        context: Option<&str>,
    ) -> ApiResult<signing::verify::VerifyReport> {
        let pk = match public_key_pem {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| ApiError::io(&format!("cannot read {p}"), &e))?;
                let k = if text.contains("BEGIN CERTIFICATE") {
                    let der_bytes = der::pem::decode_vec(text.as_bytes())
                        .map_err(|e| ApiError::invalid(format!("{p}: {e}")))?
                        .1;
                    signing::cert::public_key(&der_bytes).map_err(sign_error)?.1
                } else {
                    PublicKey::from_spki_pem(&text)
                        .map_err(|e| ApiError::invalid(format!("{p}: {e}")))?
                };
                Some(k)
            }
            None => None,
        };
        let (f, s, ctx) = (
            PathBuf::from(file),
            PathBuf::from(signature),
            context.unwrap_or("").as_bytes().to_vec(),
        );
        let r = tokio::task::spawn_blocking(move || {
            let is_manifest = f.file_name().map(|n| n == "SHA256SUMS").unwrap_or(false);
            match (is_manifest, &pk) {
                (true, Some(k)) => signing::verify::verify_manifest(&f, &s, k),
                _ => signing::verify::verify_file(&f, &s, pk.as_ref(), &ctx),
            }
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(sign_error)?;
        let ev = Event::new("verify", "artifact")
            .resource(file)
            .meta("signature", signature)
            .meta("format", &r.format)
            .meta("detail", &r.detail);
        let ev = match &r.algorithm {
            Some(a) => ev.algorithm(a),
            None => ev,
        };
        self.record(if r.valid {
            ev
        } else {
            ev.failed("SIGNATURE_INVALID")
        })
        .await;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hss_budget_counts_every_signature() {
        let f = [SignFormat::Cms, SignFormat::Raw, SignFormat::Bundle];
        // CMS one per file, raw and bundle one shared per file; manifest and certificate one each.
        assert_eq!(signatures_needed(3, &f, true, true), 3 * 2 + 2);
        assert_eq!(signatures_needed(3, &[SignFormat::Raw], false, false), 3);
        assert_eq!(signatures_needed(2, &[SignFormat::Cms], false, false), 2);
    }
}
