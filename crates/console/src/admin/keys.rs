//! Keys on a partition: listing, details, generation from presets, deletion with typed
//! confirmation, public-key export. Generation and deletion are audited before they
//! happen (refused when the trail cannot record them) and their outcome after.

use std::path::Path;
use std::time::Instant;

use audit::Event;
use hsm::algo::KeySpec;
use hsm::keys::{self as hk, KeySelector, ObjectSummary};
use hsm::pubkey::PublicKeyFormat;
use hsm::templates::{Export, KeyAttrs};
use p11::sys::*;

use crate::admin::Admin;
use crate::core::change::{Change, ChangeKind, Settled};
use crate::core::error::{ApiError, ApiResult};
use crate::core::i18n::Text;
use crate::core::views::*;
use crate::core::{partitions::Partition, Core};
use crate::text;
use parking_lot::Mutex;
use std::sync::Arc;

/// (done, total) of the generation of `label` in lunasim's `hss_progress` answer.
fn keygen_progress_of(answer: &str, label: &str) -> Option<(u64, u64)> {
    let v: serde_json::Value = serde_json::from_str(answer).ok()?;
    let job = v["keygens"]
        .as_array()?
        .iter()
        .find(|j| j["label"].as_str() == Some(label))?;
    Some((job["done"].as_u64()?, job["total"].as_u64()?))
}

/// Labels: printable, at most 128 characters.
pub fn validate_label(label: &str) -> ApiResult<()> {
    if label.trim().is_empty() {
        return Err(
            ApiError::invalid(text!("errors.key_needs_label", "A key needs a label.")).suggest(
                text!(
                "errors.use_suggested_purpose_algorithm_date",
                "Use the suggested purpose_algorithm_date label, e.g. release_ml_dsa_65_2026_11."
            ),
            ),
        );
    }
    if label.chars().count() > 128 {
        return Err(ApiError::invalid(text!(
            "errors.labels_at_most_characters",
            "Labels are at most 128 characters."
        )));
    }
    if label.chars().any(char::is_control) {
        return Err(ApiError::invalid(text!(
            "errors.labels_cannot_contain_control_characters",
            "Labels cannot contain control characters."
        )));
    }
    Ok(())
}

/// What the officer must type to confirm deleting these objects: the label when they all
/// share one, else `delete N objects`.
pub fn expected_confirmation(labels: &[String]) -> String {
    let mut distinct: Vec<&String> = labels.iter().collect();
    distinct.sort();
    distinct.dedup();
    match distinct.as_slice() {
        [one] if !one.is_empty() => (*one).clone(),
        _ => format!("delete {} objects", labels.len()),
    }
}

/// Result of a deletion: what went, what stayed and why.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct DestroyResult {
    pub destroyed: Vec<u64>,
    pub failed: Vec<DestroyFailure>,
}

#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct DestroyFailure {
    pub handle: u64,
    pub label: String,
    pub error: ApiError,
}

impl Admin<'_> {
    /// Resolve `label:…`, `id:…`, `uid:…` or `handle:…` to one object (private/secret key
    /// preferred for IDs shared by a pair).
    pub async fn find_key(self, partition: &str, selector: &str) -> ApiResult<ObjectSummary> {
        let sel = KeySelector::parse(selector)?;
        let p = self.partition_ref(partition).await?;
        let refs = p.clone();
        let found = p
            .pool
            .run_service_idempotent_async("keys.find", move |s| {
                let found = |h| Ok(hk::summary(s, h)?);
                if let KeySelector::Handle(h) = sel {
                    return found(refs.key_refs.resolve(s, h)?);
                }
                let mut last = None;
                for class in [
                    Some(CKO_PRIVATE_KEY),
                    Some(CKO_SECRET_KEY),
                    Some(CKO_PUBLIC_KEY),
                    None,
                ] {
                    match hk::find_one(s, &sel, class) {
                        Ok(h) => return found(h),
                        Err(e @ hsm::HsmError::KeyNotFound(_)) => last = Some(e),
                        Err(e) => return Err(e),
                    }
                }
                Err(last
                    .unwrap_or_else(|| hsm::HsmError::KeyNotFound(hsm::keys::selector_msg(&sel))))
            })
            .await?;
        p.key_refs.learn(std::slice::from_ref(&found));
        Ok(found)
    }

    /// Every attribute of one object, decoded, and its public key where there is one.
    pub async fn key_details(self, partition: &str, handle: u64) -> ApiResult<KeyDetails> {
        let p = self.partition_ref(partition).await?;
        let refs = p.clone();
        Ok(p.pool
            .run_service_idempotent_async("keys.details", move |s| {
                let handle = refs.key_refs.resolve(s, handle)?;
                let summary = hk::summary(s, handle)?;
                let attributes = hk::object_details(s, handle)?;
                let public_key = public_handle(s, handle, &summary)
                    .ok()
                    .and_then(|h| hk::read_public_key(s, h).ok())
                    .map(|pk| PublicKeyView::from(&pk));
                Ok(KeyDetails {
                    summary,
                    attributes,
                    public_key,
                })
            })
            .await?)
    }

    /// Generate a key. The request is recorded first (refused if it cannot be), then the
    /// outcome. HSS keys of large trees take minutes to hours; the call runs off the UI
    /// thread and cannot be interrupted once the HSM has started (PKCS#11 offers no way).
    pub async fn generate_key(
        self,
        partition: &str,
        req: GenerateRequest,
    ) -> ApiResult<GeneratedKey> {
        self.changes().apply(partition, GenerateKey::new(req)).await
    }

    /// How far the generation of the key labelled `label` has come, where the module can
    /// say: lunasim counts the leaves of the HSS trees it has built (`LUNASIM_Control`
    /// `{"op":"hss_progress"}`), since a PKCS#11 call reports nothing while it runs. `None`
    /// for every other module and for keys it is not generating — the caller shows the
    /// elapsed time then.
    pub async fn keygen_progress(self, partition: &str, label: &str) -> Option<(u64, u64)> {
        let p = self.partition_ref(partition).await.ok()?;
        let module = p.module.module.clone();
        let answer =
            tokio::task::spawn_blocking(move || module.sim_control(r#"{"op":"hss_progress"}"#))
                .await
                .ok()?
                .ok()?;
        keygen_progress_of(&answer, label)
    }

    /// The phrase the officer must type to delete these objects (labels read from the token).
    pub async fn deletion_phrase(self, partition: &str, handles: &[u64]) -> ApiResult<String> {
        let p = self.partition_ref(partition).await?;
        let hs = handles.to_vec();
        let refs = p.clone();
        let labels = p
            .pool
            .run_service_idempotent_async("keys.destroy.read", move |s| {
                hs.iter()
                    .map(|h| Ok(hk::summary(s, refs.key_refs.resolve(s, *h)?)?.label))
                    .collect::<hsm::Result<Vec<_>>>()
            })
            .await?;
        Ok(expected_confirmation(&labels))
    }

    /// Delete objects. `confirmation` must be what [`expected_confirmation`] asks for, read
    /// from the token (not from the caller's copy of the labels).
    pub async fn destroy_keys(
        self,
        partition: &str,
        handles: &[u64],
        confirmation: &str,
    ) -> ApiResult<DestroyResult> {
        if handles.is_empty() {
            return Err(ApiError::invalid(text!(
                "errors.select_keys_delete",
                "Select the keys to delete."
            )));
        }
        let p = self.partition_ref(partition).await?;
        self.require(&p, hsm::roles::Action::DeleteObjects)?;
        let hs = handles.to_vec();
        let refs = p.clone();
        let summaries = p
            .pool
            .run_service_idempotent_async("keys.destroy.read", move |s| {
                hs.iter()
                    .map(|h| Ok(hk::summary(s, refs.key_refs.resolve(s, *h)?)?))
                    .collect::<hsm::Result<Vec<_>>>()
            })
            .await?;
        p.key_refs.learn(&summaries);
        let labels: Vec<String> = summaries.iter().map(|s| s.label.clone()).collect();
        let expected = expected_confirmation(&labels);
        if confirmation.trim() != expected {
            return Err(ApiError::invalid(text!(
                "errors.delete_confirm",
                "Type “{{phrase}}” to confirm the deletion.",
                phrase = &expected
            ))
            .details(text!("errors.nothing_deleted", "Nothing was deleted.")));
        }
        let mut result = DestroyResult {
            destroyed: Vec::new(),
            failed: Vec::new(),
        };
        // One change per object: each is found again by what the officer confirmed (class,
        // ID, label) right before it is destroyed, and has its own request and outcome.
        for s in summaries {
            let h = s.handle;
            let label = s.label.clone();
            let r = self
                .changes()
                .apply_on(
                    &p,
                    &mut DestroyObject {
                        target: s,
                        phrase: expected.clone(),
                        settled_by_reading: false,
                    },
                )
                .await;
            match r {
                Ok(()) => result.destroyed.push(h),
                Err(error) => result.failed.push(DestroyFailure {
                    handle: h,
                    label,
                    error,
                }),
            }
        }
        Ok(result)
    }

    /// A key's public half in PEM (SPKI), DER or the raw encoding. Audited.
    pub async fn export_public_key(
        self,
        partition: &str,
        handle: u64,
        format: PublicKeyFormat,
    ) -> ApiResult<ExportedPublicKey> {
        let p = self.partition_ref(partition).await?;
        let refs = p.clone();
        let (pk, summary) = p
            .pool
            .run_service_idempotent_async("keys.export_public", move |s| {
                let handle = refs.key_refs.resolve(s, handle)?;
                let summary = hk::summary(s, handle)?;
                let h = public_handle(s, handle, &summary)?;
                Ok((hk::read_public_key(s, h)?, summary))
            })
            .await?;
        let bytes = pk.export(format);
        let base = sanitize_file_stem(if summary.label.is_empty() {
            &summary.id_hex
        } else {
            &summary.label
        });
        let (file_name, text, b64) = match format {
            PublicKeyFormat::Pem => (
                format!("{base}.pub.pem"),
                Some(String::from_utf8_lossy(&bytes).into_owned()),
                None,
            ),
            PublicKeyFormat::Der => (format!("{base}.pub.der"), None, Some(base64_encode(&bytes))),
            PublicKeyFormat::Raw => (format!("{base}.pub.raw"), None, Some(base64_encode(&bytes))),
        };
        self.record(
            Event::new("key.export_public", "key")
                .resource(&summary.label)
                .algorithm(pk.algorithm())
                .meta("partition", &p.id)
                .meta("id", &summary.id_hex)
                .meta("format", format)
                .meta("fingerprint", pk.fingerprint()),
        )
        .await;
        Ok(ExportedPublicKey {
            format,
            file_name,
            text,
            base64: b64,
            fingerprint: pk.fingerprint(),
        })
    }

    /// Export and write to `path` atomically (never half a file, never over a directory).
    pub async fn save_public_key(
        self,
        partition: &str,
        handle: u64,
        format: PublicKeyFormat,
        path: &Path,
    ) -> ApiResult<ExportedPublicKey> {
        let e = self.export_public_key(partition, handle, format).await?;
        let bytes = match (&e.text, &e.base64) {
            (Some(t), _) => t.as_bytes().to_vec(),
            (None, Some(b)) => base64_decode(b)?,
            _ => Vec::new(),
        };
        outfile::write_replace(path, &bytes)?;
        Ok(e)
    }
}

/// The public key object for `handle`: itself when it is one, the pair's public half for a
/// private key.
/// The key an interrupted generation made, if it made one: found by the `CKA_ID` it was
/// given (random, 16 bytes) and its label.
fn generated_before(
    s: &p11::Session,
    id: &[u8],
    label: &str,
) -> hsm::Result<Option<hk::Generated>> {
    let objects = hk::list_objects(s, &mut p11::Template::new().bytes(CKA_ID, id))?;
    let of = |class: &str| {
        objects
            .iter()
            .find(|o| o.class == class && o.label == label)
            .map(|o| o.handle)
    };
    let Some(private) = of("PRIVATE_KEY").or_else(|| of("SECRET_KEY")) else {
        return Ok(None);
    };
    let public = of("PUBLIC_KEY");
    Ok(Some(hk::Generated {
        public,
        private,
        public_key: public.and_then(|h| hk::read_public_key(s, h).ok()),
    }))
}

/// Generate a key extractable for backup, with `CKA_WRAP_WITH_TRUSTED` where the token has
/// it. Whether it has it is found by asking: a token that does not know the attribute
/// answers `CKR_ATTRIBUTE_TYPE_INVALID` (PKCS#11 §5.2), and the key is then made without it
/// (extractable under any wrapping key, which the wrap dialog says and asks to confirm). A
/// probe of the token's capabilities cannot tell: PKCS#11 lists mechanisms, not the
/// attributes a token knows. The answer is read back from the key made
/// ([`wrap_with_trusted_of`]), so a token that ignored it is not believed.
fn generate_for_backup(
    s: &p11::Session,
    spec: &KeySpec,
    attrs: &KeyAttrs,
    always_authenticate: bool,
) -> hsm::Result<hk::Generated> {
    let trusted = Export::ForBackup { trusted_only: true };
    match hk::generate_opts(s, spec, attrs, trusted, always_authenticate) {
        Err(hsm::HsmError::P11(e)) if e.rv() == Some(CKR_ATTRIBUTE_TYPE_INVALID) => {
            let any = Export::ForBackup {
                trusted_only: false,
            };
            hk::generate_opts(s, spec, attrs, any, always_authenticate)
        }
        r => r,
    }
}

/// A token that would not make a key that wants the PIN for each signature: said so, in
/// words (the PKCS#11 answer stays in the error).
fn per_use_refused(e: ApiError, label: &str) -> ApiError {
    let refused = e.pkcs11.as_ref().map(|p| p.code).is_some_and(|rv| {
        matches!(
            rv,
            CKR_ATTRIBUTE_TYPE_INVALID | CKR_ATTRIBUTE_VALUE_INVALID | CKR_TEMPLATE_INCONSISTENT
        )
    });
    if !refused {
        return e;
    }
    e.details(text!(
        "errors.always_authenticate_refused",
        "The token does not make '{{label}}' as a key that wants the PIN for each signature (CKA_ALWAYS_AUTHENTICATE); nothing was made.",
        label = label
    ))
    .suggest(text!(
        "errors.always_authenticate_refused_hint",
        "Generate it without that option, or on a token that supports such keys."
    ))
}

/// `CKA_WRAP_WITH_TRUSTED` of a key as the token answers it (`None`: it has none, or it
/// cannot be read).
fn wrap_with_trusted_of(s: &p11::Session, key: u64) -> Option<bool> {
    s.get_attributes_with(key, &[CKA_WRAP_WITH_TRUSTED], false)
        .ok()?
        .first()?
        .as_bool()
}

fn public_handle(s: &p11::Session, handle: u64, summary: &ObjectSummary) -> hsm::Result<u64> {
    match summary.class.as_str() {
        "PUBLIC_KEY" => Ok(handle),
        "PRIVATE_KEY" => hk::public_for_private(s, handle),
        other => {
            let class = class_word(other);
            Err(hsm::HsmError::Refused(
                text!(
                    "errors.object_has_no_public_key",
                    "a {{class}} object has no public key",
                    class = class
                )
                .nest("class", &class),
            ))
        }
    }
}

/// An object class (`ObjectSummary::class`: `SECRET_KEY`, `CERTIFICATE`…) as a word of the
/// officer's language; a class the catalogs do not name stays in lower case English.
pub(crate) fn class_word(class: &str) -> Text {
    match class {
        "PRIVATE_KEY" => text!("errors.class_word.private_key", "private key"),
        "PUBLIC_KEY" => text!("errors.class_word.public_key", "public key"),
        "SECRET_KEY" => text!("errors.class_word.secret_key", "secret key"),
        "CERTIFICATE" => text!("errors.class_word.certificate", "certificate"),
        "DATA" => text!("errors.class_word.data", "data"),
        other => Text {
            key: String::new(),
            args: Default::default(),
            text: other.to_ascii_lowercase().replace('_', " "),
        },
    }
}

fn sanitize_file_stem(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let t = t.trim_start_matches('.').to_string();
    if t.is_empty() {
        "key".into()
    } else {
        t
    }
}

pub fn base64_encode(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

pub fn base64_decode(s: &str) -> ApiResult<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| {
            ApiError::invalid(text!(
                "errors.not_base64",
                "not base64: {{error}}",
                error = e
            ))
        })
}

/// `C_GenerateKey(Pair)`.
struct GenerateKey {
    req: GenerateRequest,
    /// The new key's `CKA_ID`, once an attempt has chosen it (shared with the pool's
    /// retries, and read when settling a lost answer).
    tried: Arc<Mutex<Option<Vec<u8>>>>,
    started: Instant,
    /// A retry found the key an earlier attempt made.
    settled_by_reading: bool,
    /// `CKA_WRAP_WITH_TRUSTED` of the key made, as read back (extractable keys).
    wrap_with_trusted: Option<bool>,
}

impl GenerateKey {
    fn new(req: GenerateRequest) -> GenerateKey {
        GenerateKey {
            req,
            tried: Arc::default(),
            started: Instant::now(),
            settled_by_reading: false,
            wrap_with_trusted: None,
        }
    }

    fn view(&self, g: hk::Generated, id: &[u8]) -> GeneratedKey {
        GeneratedKey {
            private_handle: g.private,
            public_handle: g.public,
            label: self.req.label.clone(),
            id_hex: hex::encode(id),
            algorithm: self.req.spec.display(),
            expected_public_key_len: g.public_key.as_ref().map(|k| k.raw().len()),
            public_key: g.public_key.as_ref().map(PublicKeyView::from),
            elapsed_ms: self.started.elapsed().as_millis() as u64,
            extractable: self.req.extractable,
            wrap_with_trusted: self.wrap_with_trusted,
        }
    }

    /// What the new objects are, read where they were made, for [`crate::core::key_refs`]
    /// (a read that fails leaves that handle unknown: valid until the next reconnect).
    fn read_made(s: &p11::Session, g: &hk::Generated) -> Vec<ObjectSummary> {
        std::iter::once(g.private)
            .chain(g.public)
            .filter_map(|h| hk::summary(s, h).ok())
            .collect()
    }
}

impl Change for GenerateKey {
    type Output = GeneratedKey;

    fn kind(&self) -> ChangeKind {
        ChangeKind::KeyGenerate
    }

    fn permission(&self) -> Option<hsm::roles::Action> {
        Some(hsm::roles::Action::GenerateKeys)
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        validate_label(&self.req.label)?;
        if let KeySpec::Hss { params } = &self.req.spec {
            hsm::algo::HssParams::new(params.levels.clone()).map_err(ApiError::invalid)?;
            if self.req.extractable {
                return Err(ApiError::invalid(text!(
                    "errors.extractable_hss_never",
                    "An HSS key is never extractable: a copy would sign with the same one-time keys again and break its security. Generate it without extractable."
                )));
            }
        }
        self.started = Instant::now();
        let ev = Event::new("key.generate", "key")
            .resource(&self.req.label)
            .algorithm(self.req.spec.display())
            .meta("partition", &p.id)
            .meta("token_object", self.req.token);
        let ev = match self.req.always_authenticate {
            true => ev.meta("always_authenticate", true),
            false => ev,
        };
        Ok(if self.req.extractable {
            ev.meta("extractable", "for_backup")
        } else {
            ev
        })
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<GeneratedKey> {
        let spec = self.req.spec.clone();
        let (label, token) = (self.req.label.clone(), self.req.token);
        let extractable = self.req.extractable;
        let always_authenticate = self.req.always_authenticate;
        let tried = self.tried.clone();
        // Not idempotent: after a reconnect interrupted an attempt, the token is read first
        // (by the new key's CKA_ID), so a key that came to be is not made twice.
        let (made, g, id, found) = p
            .pool
            .run_service_idempotent_async("keys.generate", move |s| {
                let before = tried.lock().clone();
                if let Some(id) = &before {
                    if let Some(g) = generated_before(s, id, &label)? {
                        return Ok((Self::read_made(s, &g), g, id.clone(), true));
                    }
                }
                let id = match before {
                    Some(id) => id,
                    None => hk::new_key_id(s)?,
                };
                *tried.lock() = Some(id.clone());
                let attrs = KeyAttrs {
                    label: label.clone(),
                    id: id.clone(),
                    token,
                };
                let g = if extractable {
                    generate_for_backup(s, &spec, &attrs, always_authenticate)?
                } else {
                    let never = Export::Never;
                    hk::generate_opts(s, &spec, &attrs, never, always_authenticate)?
                };
                Ok((Self::read_made(s, &g), g, id, false))
            })
            .await
            .map_err(|e| match always_authenticate {
                true => per_use_refused(e.into(), &self.req.label),
                false => ApiError::from(e),
            })?;
        self.settled_by_reading = found;
        if extractable {
            let private = g.private;
            self.wrap_with_trusted = p
                .pool
                .run_service_idempotent_async("keys.generate.read_back", move |s| {
                    Ok(wrap_with_trusted_of(s, private))
                })
                .await
                .ok()
                .flatten();
        }
        p.key_refs.learn(&made);
        Ok(self.view(g, &id))
    }

    /// The answer is lost and the pool could not try again: the token is read for a key
    /// with the ID the attempt chose.
    async fn settle(
        &mut self,
        _c: &Core,
        p: &Arc<Partition>,
        lost: ApiError,
    ) -> Settled<GeneratedKey> {
        let Some(id) = self.tried.lock().clone() else {
            return Settled::NotDone(lost); // no attempt reached the token
        };
        let label = self.req.label.clone();
        let id2 = id.clone();
        let read = p
            .pool
            .run_service_idempotent_async("keys.generate.settle", move |s| {
                Ok(generated_before(s, &id2, &label)?.map(|g| (Self::read_made(s, &g), g)))
            })
            .await;
        match read {
            Ok(Some((made, g))) => {
                p.key_refs.learn(&made);
                Settled::Done(self.view(g, &id))
            }
            Ok(None) => Settled::NotDone(lost),
            Err(_) => Settled::Unknown(lost),
        }
    }

    fn outcome(&self, ev: Event, r: Result<&GeneratedKey, &ApiError>) -> Event {
        let mut ev = ev.meta("elapsed_ms", self.started.elapsed().as_millis() as u64);
        if self.req.extractable && r.is_ok() {
            ev = ev.meta("wrap_with_trusted", self.wrap_with_trusted == Some(true));
        }
        if self.settled_by_reading {
            ev = ev.meta("settled_after_reconnect", true);
        }
        if let Ok(k) = r {
            ev = ev.meta("id", &k.id_hex).meta(
                "fingerprint",
                k.public_key.as_ref().map(|pk| pk.fingerprint.clone()),
            );
        }
        ev
    }
}

/// `C_DestroyObject` of one object the officer confirmed.
struct DestroyObject {
    /// The object as it was read for the confirmation.
    target: ObjectSummary,
    /// The phrase the officer typed (the request names the whole selection by it).
    phrase: String,
    settled_by_reading: bool,
}

impl Change for DestroyObject {
    type Output = ();

    fn kind(&self) -> ChangeKind {
        ChangeKind::KeyDestroy
    }

    fn permission(&self) -> Option<hsm::roles::Action> {
        Some(hsm::roles::Action::DeleteObjects)
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        let s = &self.target;
        Ok(Event::new("key.destroy", "key")
            .resource(&s.label)
            .algorithm(&s.algorithm)
            .meta("partition", &p.id)
            .meta("id", &s.id_hex)
            .meta("class", &s.class)
            .meta("handle", s.handle)
            .meta("confirmed_as", &self.phrase))
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<()> {
        let target = self.target.clone();
        let refs = p.clone();
        let mut tried = false;
        // Not idempotent: after a reconnect the token is read first. The object gone
        // means the first attempt took effect; there, it is destroyed (once).
        let destroyed = p
            .pool
            .run_service_idempotent_async("keys.destroy", move |sess| {
                let now = match crate::core::change::locate(sess, &refs, &target) {
                    Err(hsm::HsmError::KeyNotFound(_)) if tried => return Ok(false),
                    r => r?,
                };
                tried = true;
                sess.destroy_object(now)?;
                Ok(true)
            })
            .await?;
        self.settled_by_reading = !destroyed;
        Ok(())
    }

    /// The answer is lost: the object still there (by its ID and label) means it was not
    /// destroyed; gone means it was.
    async fn settle(&mut self, _c: &Core, p: &Arc<Partition>, lost: ApiError) -> Settled<()> {
        let target = self.target.clone();
        let read = p
            .pool
            .run_service_idempotent_async("keys.destroy.settle", move |s| {
                crate::core::change::still_there(s, &target)
            })
            .await;
        match read {
            Ok(true) => Settled::NotDone(lost),
            Ok(false) => Settled::Done(()),
            Err(_) => Settled::Unknown(lost),
        }
    }

    fn outcome(&self, ev: Event, _r: Result<&(), &ApiError>) -> Event {
        if self.settled_by_reading {
            ev.meta("settled_after_reconnect", true)
        } else {
            ev
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keygen_progress_is_found_by_label() {
        let answer = r#"{"keygens":[{"label":"a","done":5,"total":64,"elapsed_ms":3},{"label":"fw","done":1000,"total":1049600,"elapsed_ms":9}]}"#;
        assert_eq!(keygen_progress_of(answer, "fw"), Some((1000, 1_049_600)));
        assert_eq!(keygen_progress_of(answer, "other"), None);
        assert_eq!(keygen_progress_of(r#"{"keygens":[]}"#, "fw"), None);
        assert_eq!(keygen_progress_of("not json", "fw"), None);
    }

    #[test]
    fn confirmation_phrases() {
        assert_eq!(expected_confirmation(&["a".into()]), "a");
        assert_eq!(expected_confirmation(&["a".into(), "a".into()]), "a");
        assert_eq!(
            expected_confirmation(&["a".into(), "b".into()]),
            "delete 2 objects"
        );
        assert_eq!(expected_confirmation(&["".into()]), "delete 1 objects");
    }

    #[test]
    fn labels_are_checked() {
        assert!(validate_label("release_ml_dsa_65_2026_11").is_ok());
        assert!(validate_label(" ").is_err());
        assert!(validate_label("a\nb").is_err());
        assert!(validate_label(&"x".repeat(129)).is_err());
    }

    #[test]
    fn file_stems_are_safe() {
        assert_eq!(sanitize_file_stem("../etc/passwd"), "_etc_passwd");
        assert_eq!(sanitize_file_stem("release key"), "release_key");
    }
}
