//! The keys of a batch: one, or several signing the same files (dual signing — typically a
//! classical and a post-quantum key during a transition). All are read and checked before
//! anything is hashed or signed, and a set that cannot sign is refused naming the key:
//!
//! - the same key twice, or two keys whose labels give the same file name stem
//!   ([`signing::verify::succession::label_stem`]: their outputs would collide);
//! - a format none of the keys can make, or a key that can make none of the formats asked
//!   for (a format only some keys can make — OpenPGP, minisign, SSHSIG — is made by those);
//! - an HSS key without the officer's confirmation (its budget is checked per key later);
//! - an ML-DSA context with no ML-DSA key (it goes to the ML-DSA keys only);
//! - chain files (`--chain`) with several keys: they are checked as one key's chain.
//!
//! A single key is checked exactly as before (the same refusals, the same names).

use std::sync::Arc;

use parking_lot::Mutex;
use signing::alg::SigAlg;
use signing::verify::succession::label_stem;

use super::{read_key, Checked};
use crate::core::error::{ApiError, ApiResult};
use crate::core::partitions::Partition;
use crate::sign::key::SigningKey;
use crate::sign::{sign_error, SignFormat, SignRequest, SigningKeyView};
use crate::text;

/// One key of the batch and what it signs.
pub(in crate::sign) struct Signer {
    /// Until the batch signs; then shared with the pool jobs.
    pub key: Option<SigningKey>,
    /// For the report after the key is shared.
    pub view: SigningKeyView,
    /// The formats it makes (of those asked for).
    pub formats: Vec<SignFormat>,
    /// Its outputs are `FILE.<stem><suffix>` (several keys, or a succession statement).
    pub stem: Option<String>,
    pub signatures_made: u64,
    /// Its object handle for a module generation, found once per generation.
    pub handle: Arc<Mutex<Option<(u64, u64)>>>,
}

impl Signer {
    fn new(key: SigningKey, formats: Vec<SignFormat>) -> Signer {
        Signer {
            view: key.view(),
            key: Some(key),
            formats,
            stem: None,
            signatures_made: 0,
            handle: Arc::new(Mutex::new(None)),
        }
    }

    pub fn key(&self) -> &SigningKey {
        self.key
            .as_ref()
            .expect("the key is read when the batch opens")
    }

    pub fn key_mut(&mut self) -> &mut SigningKey {
        self.key
            .as_mut()
            .expect("the key is read when the batch opens")
    }

    /// Name its outputs for it.
    pub fn name_outputs(&mut self) {
        self.stem = Some(label_stem(&self.view.label));
    }
}

/// Read and check the request's keys (see the module documentation).
pub(super) async fn open(
    partition: &Arc<Partition>,
    req: &SignRequest,
    checked: &Checked,
) -> ApiResult<Vec<Signer>> {
    if req.also_keys.is_empty() {
        return Ok(vec![one_key(partition, req, checked).await?]);
    }
    let mut keys = Vec::new();
    for selector in std::iter::once(&req.key).chain(&req.also_keys) {
        keys.push(read_key(partition, selector, checked.context.clone()).await?);
    }
    if !checked.chain.is_empty() {
        return Err(ApiError::invalid(text!(
            "errors.dual_chain_files",
            "Certificate chain files go with one signing key; with several keys, keep each key's issuers on the token (Objects → Import)."
        )));
    }
    distinct(&keys)?;
    context_for_ml_dsa(&mut keys)?;
    let formats = formats_per_key(&keys, &checked.formats)?;
    for k in keys.iter().filter(|k| k.alg == SigAlg::Hss) {
        if !req.confirm_hss {
            return Err(ApiError::invalid(text!(
                "errors.dual_hss_confirm",
                "'{{label}}' is an HSS key: signing with it uses up one-time signatures for good; confirm it to go on.",
                label = &k.summary.label
            )));
        }
    }
    Ok(keys
        .into_iter()
        .zip(formats)
        .map(|(k, f)| {
            let mut s = Signer::new(k, f);
            s.name_outputs();
            s
        })
        .collect())
}

/// A batch of one key, checked as it always was.
async fn one_key(p: &Arc<Partition>, req: &SignRequest, checked: &Checked) -> ApiResult<Signer> {
    let mut key = read_key(p, &req.key, checked.context.clone()).await?;
    crate::sign::chain::apply(&mut key, &checked.chain)?;
    if !key.context.is_empty() && !matches!(key.alg, SigAlg::MlDsa { .. }) {
        return Err(only_ml_dsa_context());
    }
    for f in &checked.formats {
        f.format().accepts(&key).map_err(sign_error)?;
    }
    if matches!(key.alg, SigAlg::Hss) && !req.confirm_hss {
        return Err(ApiError::invalid(text!(
            "errors.signing_hss_key_uses_up",
            "Signing with an HSS key uses up one-time signatures for good; confirm it to go on."
        )));
    }
    Ok(Signer::new(key, checked.formats.clone()))
}

fn only_ml_dsa_context() -> ApiError {
    ApiError::invalid(text!(
        "errors.only_ml_dsa_signatures_take",
        "Only ML-DSA signatures take a context."
    ))
}

/// No key twice, and no two keys whose outputs would have the same names.
fn distinct(keys: &[SigningKey]) -> ApiResult<()> {
    for (i, a) in keys.iter().enumerate() {
        for b in &keys[..i] {
            if a.pk.fingerprint() == b.pk.fingerprint() {
                return Err(ApiError::invalid(text!(
                    "errors.dual_same_key",
                    "'{{label}}' is named twice (as '{{other}}'); each key signs a batch once.",
                    label = &a.summary.label,
                    other = &b.summary.label
                )));
            }
            if label_stem(&a.summary.label) == label_stem(&b.summary.label) {
                return Err(ApiError::invalid(text!(
                    "errors.dual_same_stem",
                    "'{{label}}' and '{{other}}' would give their signatures the same name (FILE.{{stem}}.sig); give one of them another label first.",
                    label = &b.summary.label,
                    other = &a.summary.label,
                    stem = label_stem(&a.summary.label)
                )));
            }
        }
    }
    Ok(())
}

/// The ML-DSA context goes to the ML-DSA keys; refused when there is none.
fn context_for_ml_dsa(keys: &mut [SigningKey]) -> ApiResult<()> {
    let ml_dsa = |k: &SigningKey| matches!(k.alg, SigAlg::MlDsa { .. });
    if keys.iter().any(|k| !k.context.is_empty()) && !keys.iter().any(ml_dsa) {
        return Err(only_ml_dsa_context());
    }
    for k in keys.iter_mut().filter(|k| !ml_dsa(k)) {
        k.context.clear();
    }
    Ok(())
}

/// The formats each key makes: every format asked for that it can make. Refused when no
/// key can make a format, or a key can make none of them.
fn formats_per_key(keys: &[SigningKey], asked: &[SignFormat]) -> ApiResult<Vec<Vec<SignFormat>>> {
    for f in asked {
        let refusals: Vec<_> = keys
            .iter()
            .filter_map(|k| f.format().accepts(k).err())
            .collect();
        if refusals.len() == keys.len() {
            let labels: Vec<&str> = keys.iter().map(|k| k.summary.label.as_str()).collect();
            let reason = refusals[0].clone().into_msg();
            return Err(ApiError::invalid(
                text!(
                    "errors.dual_no_key_makes_format",
                    "None of the keys ({{labels}}) can make {{format}} signatures: {{reason}}",
                    labels = labels.join(", "),
                    format = f,
                    reason = &reason
                )
                .nest("reason", &reason),
            ));
        }
    }
    let mut out = Vec::new();
    for k in keys {
        let made: Vec<SignFormat> = asked
            .iter()
            .copied()
            .filter(|f| f.format().accepts(k).is_ok())
            .collect();
        if made.is_empty() {
            let wanted: Vec<String> = asked.iter().map(|f| f.to_string()).collect();
            return Err(ApiError::invalid(text!(
                "errors.dual_key_makes_nothing",
                "'{{label}}' ({{algorithm}}) can make none of the formats asked for ({{formats}}).",
                label = &k.summary.label,
                algorithm = k.alg.name(),
                formats = wanted.join(", ")
            )));
        }
        out.push(made);
    }
    Ok(out)
}
