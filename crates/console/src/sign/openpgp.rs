//! OpenPGP for HSM keys: the key's creation time, fixed once and kept on the token (so its
//! fingerprint never changes), its certificate with a user ID the officer types, and the
//! signatures of the signing pipeline: detached (`FILE.asc` armored, `FILE.gpg` binary) and
//! cleartext-signed text (`FILE.clearsigned`). An apt repository's `Release` gets the names
//! apt reads: `Release.gpg` (armored) and `InRelease`.
//!
//! The binary form is `FILE.gpg`, not gpg's habitual `FILE.sig`: `.sig` is the raw
//! format's, and a name like `FILE.pgp.sig` would be the raw signature of a file called
//! `FILE.pgp` in the same folder. `.gpg` ends no other suffix and no other ends it, so two
//! outputs of one batch can never share a name.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use ts_rs::TS;

use audit::Event;
use hsm::keys as hk;
use hsm::pubkey::PublicKey;
use p11::sys::*;
use p11::{Session, Template};
use signing::input::InputFile;
use signing::openpgp::{self, armor, cleartext, token, verify, PgpAlgorithm, PgpKey};
use signing::output::beside;
use signing::SignError;

use super::formats::{FileSigning, Format};
use super::key::{key_material, SigningKey};
use super::{hsm_side, sign_error, SignFormat};
use crate::core::change::{Change, ChangeKind};
use crate::core::error::{ApiError, ApiResult};
use crate::core::{partitions::Partition, Core};
use crate::sign::Signing;
use crate::text;
use hsm::roles::Action;
use std::sync::Arc;

/// `CKA_APPLICATION` of the data object that holds a key's OpenPGP creation time.
const APPLICATION: &str = "hsm-console/openpgp-key-creation-time";

/// What the data object holds (JSON): the key it belongs to and its creation time.
#[derive(Debug, Serialize, serde::Deserialize)]
struct CreationRecord {
    /// The key's `CKA_ID`, hex.
    key_id: String,
    /// Seconds since 1970.
    created: u32,
    fingerprint: String,
}

pub(crate) fn unix_now() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as u32)
        .unwrap_or(0)
}

pub(crate) fn rfc3339(secs: u32) -> String {
    time::OffsetDateTime::from_unix_timestamp(secs.into())
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

/// The creation time stored for the key with `CKA_ID` `id_hex` whose public half is `pk`.
/// A record whose fingerprint is not this key's (another key reusing the ID) is ignored.
pub(super) fn stored_creation_time(
    s: &Session,
    id_hex: &str,
    pk: &PublicKey,
) -> p11::Result<Option<u32>> {
    if id_hex.is_empty() {
        return Ok(None);
    }
    let found = s.find_objects(
        &mut Template::new()
            .ulong(CKA_CLASS, CKO_DATA)
            .text(CKA_APPLICATION, APPLICATION),
    )?;
    for h in found {
        let Some(v) = s.get_attribute(h, CKA_VALUE)?.bytes().map(<[u8]>::to_vec) else {
            continue;
        };
        let Ok(r) = serde_json::from_slice::<CreationRecord>(&v) else {
            continue;
        };
        if r.key_id != id_hex {
            continue;
        }
        match PgpKey::new(pk, r.created) {
            Ok(k) if k.fingerprint_hex() == r.fingerprint => return Ok(Some(r.created)),
            _ => tracing::warn!("OpenPGP creation record for id {id_hex} is for another key"),
        }
    }
    Ok(None)
}

/// The key's creation time: the stored one, or now, stored as a token data object. The
/// second value says whether it was made now (a change to the token).
fn fix_creation_time(
    s: &Session,
    summary: &hk::ObjectSummary,
    pk: &PublicKey,
    create: bool,
) -> hsm::Result<Option<(u32, bool)>> {
    if let Some(t) = stored_creation_time(s, &summary.id_hex, pk)? {
        return Ok(Some((t, false)));
    }
    if !create {
        return Ok(None);
    }
    if summary.id_hex.is_empty() {
        return Err(hsm::HsmError::Refused(crate::text!(
            "errors.openpgp_key_without_id",
            "'{{label}}' has no CKA_ID to tie its OpenPGP creation time to",
            label = summary.label
        )));
    }
    let created = unix_now();
    let key = PgpKey::new(pk, created).map_err(hsm_side)?;
    let record = CreationRecord {
        key_id: summary.id_hex.clone(),
        created,
        fingerprint: key.fingerprint_hex(),
    };
    let value = serde_json::to_vec(&record).expect("serializes");
    s.create_object(
        &mut Template::new()
            .ulong(CKA_CLASS, CKO_DATA)
            .bool(CKA_TOKEN, true)
            .bool(CKA_PRIVATE, false)
            .text(
                CKA_LABEL,
                &format!("OpenPGP creation time of {}", summary.label),
            )
            .text(CKA_APPLICATION, APPLICATION)
            .bytes(CKA_VALUE, &value),
    )?;
    Ok(Some((created, true)))
}

/// A key's OpenPGP identity, for the detail pane.
#[derive(Debug, Clone, Serialize, TS)]
pub struct OpenPgpKeyView {
    pub algorithm: PgpAlgorithm,
    /// Set once the creation time is fixed (by the first certificate or signature).
    pub fingerprint: Option<String>,
    pub created: Option<String>,
}

/// An exported certificate.
#[derive(Debug, Clone, Serialize, TS)]
pub struct OpenPgpCertificate {
    /// ASCII-armored transferable public key.
    pub armored: String,
    pub fingerprint: String,
    pub user_id: String,
    pub created: String,
    /// The creation time was fixed by this export (stored on the token now).
    pub creation_time_stored: bool,
}

/// An OpenPGP user ID the officer typed: refused (with what to do) unless it is one line.
pub fn check_openpgp_user_id(uid: &str) -> ApiResult<()> {
    use openpgp::UserIdProblem as P;
    let Some(problem) = openpgp::user_id_problem(uid) else {
        return Ok(());
    };
    let message = match problem {
        P::Empty => text!(
            "errors.openpgp_user_id_empty",
            "An OpenPGP user ID is needed, e.g. \"Release Signing <release@example.org>\"."
        ),
        P::NotOneLine => text!(
            "errors.openpgp_user_id_not_one_line",
            "An OpenPGP user ID is one line of text: it cannot contain a newline or other control characters."
        ),
        P::TooLong => text!(
            "errors.openpgp_user_id_too_long",
            "An OpenPGP user ID is at most {{max}} bytes.",
            max = openpgp::MAX_USER_ID
        ),
    };
    Err(ApiError::invalid(message).suggest(text!(
        "errors.openpgp_user_id_hint",
        "Type it as Name <address>, on one line."
    )))
}

impl Signing<'_> {
    /// The key's OpenPGP algorithm and, once fixed, its fingerprint. Changes nothing.
    pub async fn openpgp_key(self, partition: &str, handle: u64) -> ApiResult<OpenPgpKeyView> {
        let p = self.partition_ref(partition).await?;
        let (pk, created) = p
            .pool
            .run_service_idempotent_async("openpgp.key", move |s| {
                let (summary, pk) = key_material(s, handle)?;
                let created = stored_creation_time(s, &summary.id_hex, &pk)?;
                Ok((pk, created))
            })
            .await?;
        let algorithm = PgpAlgorithm::for_key(&pk).map_err(sign_error)?;
        let fingerprint = match created {
            Some(t) => Some(PgpKey::new(&pk, t).map_err(sign_error)?.fingerprint_hex()),
            None => None,
        };
        Ok(OpenPgpKeyView {
            algorithm,
            fingerprint,
            created: created.map(rfc3339),
        })
    }

    /// An OpenPGP certificate for a key: the public key with its fixed creation time (fixed
    /// and stored on the token the first time), the user ID and a positive certification
    /// made by the HSM; checked with rpgp before it is returned. Audited before it acts.
    pub async fn openpgp_certificate(
        self,
        partition: &str,
        handle: u64,
        user_id: &str,
    ) -> ApiResult<OpenPgpCertificate> {
        self.changes()
            .apply(
                partition,
                MakeOpenPgpCertificate {
                    handle,
                    user_id: user_id.to_string(),
                    target: None,
                },
            )
            .await
    }

    /// Write the certificate to `path` (replacing a file there, never half-written).
    pub async fn save_openpgp_certificate(
        self,
        partition: &str,
        handle: u64,
        user_id: &str,
        path: &std::path::Path,
    ) -> ApiResult<OpenPgpCertificate> {
        check_openpgp_user_id(user_id)?;
        let c = self.openpgp_certificate(partition, handle, user_id).await?;
        outfile::write_replace(path, c.armored.as_bytes())?;
        Ok(c)
    }

    /// Batch step: the signing key's OpenPGP creation time, fixed on the token (audited
    /// before) if it is not yet.
    pub(super) async fn ensure_openpgp_creation_time(
        self,
        partition: &Arc<Partition>,
        key: &SigningKey,
    ) -> ApiResult<u32> {
        if let Some(t) = key.openpgp_created {
            return Ok(t);
        }
        self.changes()
            .apply_on(
                partition,
                &mut FixCreationTime {
                    target: key.summary.clone(),
                    pk: key.pk.clone(),
                },
            )
            .await
    }
}

/// An OpenPGP certificate of the key the officer chose (its creation time fixed on the
/// token the first time).
struct MakeOpenPgpCertificate {
    handle: u64,
    user_id: String,
    target: Option<hk::ObjectSummary>,
}

impl Change for MakeOpenPgpCertificate {
    type Output = OpenPgpCertificate;

    fn kind(&self) -> ChangeKind {
        ChangeKind::OpenPgpCertificate
    }

    fn permission(&self) -> Option<Action> {
        Some(Action::UseKeys)
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        check_openpgp_user_id(&self.user_id)?;
        let target = crate::core::change::read_target(p, "openpgp.cert.key", self.handle).await?;
        let ev = Event::new("openpgp.cert", "key")
            .resource(&target.label)
            .algorithm(&target.algorithm)
            .meta("partition", &p.id)
            .meta("key_id", &target.id_hex)
            .meta("user_id", &self.user_id);
        self.target = Some(target);
        Ok(ev)
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<OpenPgpCertificate> {
        let (uid, refs) = (self.user_id.clone(), p.clone());
        let target = self.target.clone().expect("resolved");
        // Safe to repeat after the pool recovered: the creation time is read before it is
        // stored (a lost attempt's is found and kept), and a certificate is signed again.
        let (key, cert, stored) = p
            .pool
            .run_service_idempotent_async("openpgp.cert", move |s| {
                let handle = crate::core::change::locate(s, &refs, &target)?;
                let (summary, pk) = key_material(s, handle)?;
                PgpAlgorithm::for_key(&pk).map_err(hsm_side)?;
                let (created, stored) =
                    fix_creation_time(s, &summary, &pk, true)?.expect("created when missing");
                let key = PgpKey::new(&pk, created).map_err(hsm_side)?;
                // The self-signature is dated at the key's creation: signatures made since
                // then, before this export, find the binding in force (Sequoia checks that).
                let cert = openpgp::certificate(&key, &uid, key.created, &mut |d| {
                    Ok(token::sign_digest(s, handle, key.alg, key.alg.hash(), d)?)
                })
                .map_err(hsm_side)?;
                Ok((key, cert, stored))
            })
            .await?;
        let armored = armor::armor(armor::Block::PublicKey, &cert);
        check_certificate(&armored, &key, &self.user_id).map_err(sign_error)?;
        Ok(OpenPgpCertificate {
            armored,
            fingerprint: key.fingerprint_hex(),
            user_id: self.user_id.clone(),
            created: rfc3339(key.created),
            creation_time_stored: stored,
        })
    }

    fn outcome(&self, ev: Event, r: Result<&OpenPgpCertificate, &ApiError>) -> Event {
        match r {
            Ok(c) => ev
                .meta("signatures", 1)
                .meta("openpgp_fingerprint", &c.fingerprint)
                .meta("creation_time_stored", c.creation_time_stored),
            Err(_) => ev,
        }
    }
}

/// The signing key's OpenPGP creation time, fixed and stored on the token.
struct FixCreationTime {
    target: hk::ObjectSummary,
    pk: PublicKey,
}

impl Change for FixCreationTime {
    type Output = u32;

    fn kind(&self) -> ChangeKind {
        ChangeKind::OpenPgpCreationTime
    }

    fn permission(&self) -> Option<Action> {
        Some(Action::UseKeys)
    }

    async fn resolve(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<Event> {
        Ok(Event::new("openpgp.key.created", "key")
            .resource(&self.target.label)
            .meta("partition", &p.id)
            .meta("key_id", &self.target.id_hex))
    }

    async fn act(&mut self, _c: &Core, p: &Arc<Partition>) -> ApiResult<u32> {
        let (summary, pk) = (self.target.clone(), self.pk.clone());
        // Storing a time that is there already changes nothing: repeated after a reconnect.
        Ok(p.pool
            .run_service_idempotent_async("openpgp.created", move |s| {
                Ok(fix_creation_time(s, &summary, &pk, true)?
                    .expect("created when missing")
                    .0)
            })
            .await?)
    }
}

/// The certificate as rpgp reads it: its self-signature, fingerprint and user ID.
fn check_certificate(armored: &str, key: &PgpKey, uid: &str) -> Result<(), SignError> {
    let c = verify::Certificate::read(armored.as_bytes()).map_err(SignError::into_self_check)?;
    if c.fingerprint() != key.fingerprint_hex() || c.user_ids() != [uid.to_string()] {
        return Err(SignError::SelfCheck(text!(
            "hsm.console.rpgp_reads_other_certificate",
            "rpgp reads another fingerprint or user ID than was written"
        )));
    }
    Ok(())
}

/// Whether the batch's formats ask for OpenPGP (and so for `SHA256SUMS.asc`).
pub(super) fn wanted(formats: &[SignFormat]) -> bool {
    formats.iter().any(|f| f.is_openpgp())
}

/// The name of an apt repository's release file: apt fetches its signatures as `InRelease`
/// (cleartext-signed) and `Release.gpg` (armored, detached) beside it, under no other name.
const APT_RELEASE: &str = "Release";

fn is_apt_release(input: &InputFile) -> bool {
    input.path.file_name().is_some_and(|n| n == APT_RELEASE)
}

/// `NAME` in `out_dir`, or beside `input`.
fn named(input: &InputFile, out_dir: Option<&Path>, name: &str) -> PathBuf {
    match out_dir {
        Some(d) => d.join(name),
        None => input.path.with_file_name(name),
    }
}

/// The key as an OpenPGP key, with the creation time the batch fixed.
pub(super) fn pgp_key(key: &SigningKey) -> Result<PgpKey, SignError> {
    let created = key.openpgp_created.ok_or_else(|| {
        SignError::Format(hsm::text!(
            "signing.openpgp.creation_time_not_fixed",
            "the OpenPGP creation time is not fixed"
        ))
    })?;
    PgpKey::new(&key.pk, created)
}

/// The public-key packet as rpgp reads it, with the fingerprint checked.
fn rpgp_key(key: &PgpKey) -> Result<verify::RpgpKey, SignError> {
    verify::read_key(key).map_err(SignError::into_self_check)
}

/// A detached OpenPGP signature per file.
pub(super) struct OpenPgp {
    pub armored: bool,
}

impl Format for OpenPgp {
    fn suffix(&self) -> &'static str {
        if self.armored {
            ".asc"
        } else {
            ".gpg"
        }
    }
    fn own_signatures(&self) -> u64 {
        1
    }
    fn uses_message_signature(&self) -> bool {
        false
    }
    fn accepts(&self, key: &SigningKey) -> Result<(), SignError> {
        PgpAlgorithm::for_key(&key.pk).map(|_| ())
    }
    /// apt reads a `Release` file's detached signature as `Release.gpg`, armored only (apt
    /// 2.6 refuses a binary one, which gpgv would accept): the armored signature of
    /// `Release` is `Release.gpg`, and a binary one is refused before anything is signed.
    fn output_path(&self, input: &InputFile, out_dir: Option<&Path>) -> Result<PathBuf, SignError> {
        match (is_apt_release(input), self.armored) {
            (false, _) => Ok(beside(&input.path, out_dir, self.suffix())),
            (true, true) => Ok(named(input, out_dir, "Release.gpg")),
            (true, false) => Err(SignError::Input {
                path: input.path.display().to_string(),
                reason: hsm::text!(
                    "errors.inputs.apt_release_binary",
                    "is apt's Release file, whose Release.gpg apt reads only ASCII-armored (apt 2.6 refuses a binary one); sign it with the armored OpenPGP format, which writes Release.gpg as apt reads it"
                ),
            }),
        }
    }
    fn render(&self, file: &mut FileSigning<'_>) -> Result<Vec<u8>, SignError> {
        let key = pgp_key(file.key)?;
        let (s, h) = (file.session, file.handle);
        let sig = openpgp::detached(
            &key,
            file.input,
            &file.digests.sha256,
            unix_now(),
            &mut |d| Ok(token::sign_digest(s, h, key.alg, key.alg.hash(), d)?),
        )?;
        let out = if self.armored {
            armor::armor(armor::Block::Signature, &sig).into_bytes()
        } else {
            sig
        };
        let data = std::fs::File::open(&file.input.path).map_err(|e| SignError::Input {
            path: file.input.path.display().to_string(),
            reason: hsm::text!(
                "errors.inputs.unreadable",
                "cannot be read: {{error}}",
                error = e
            ),
        })?;
        verify::check_detached(&rpgp_key(&key)?, &out, std::io::BufReader::new(data))
            .map_err(SignError::into_self_check)?;
        Ok(out)
    }
}

/// A file cleartext-signed, as `gpg --clearsign` makes it: `InRelease` for apt's `Release`,
/// `FILE.clearsigned` for any other text file — not `FILE.asc`, the armored detached
/// signature's name, and a suffix that ends no other (nor any other it). Only text a
/// cleartext signature covers exactly is signed (`signing::openpgp::cleartext`).
pub(super) struct Cleartext;

impl Format for Cleartext {
    fn suffix(&self) -> &'static str {
        ".clearsigned"
    }
    fn own_signatures(&self) -> u64 {
        1
    }
    fn uses_message_signature(&self) -> bool {
        false
    }
    fn accepts(&self, key: &SigningKey) -> Result<(), SignError> {
        PgpAlgorithm::for_key(&key.pk).map(|_| ())
    }
    fn output_path(&self, input: &InputFile, out_dir: Option<&Path>) -> Result<PathBuf, SignError> {
        Ok(if is_apt_release(input) {
            named(input, out_dir, "InRelease")
        } else {
            beside(&input.path, out_dir, self.suffix())
        })
    }
    fn check_file(&self, file: &FileSigning<'_>) -> Result<(), SignError> {
        cleartext::read_text(file.input, &file.digests.sha256).map(|_| ())
    }
    fn render(&self, file: &mut FileSigning<'_>) -> Result<Vec<u8>, SignError> {
        let text = cleartext::read_text(file.input, &file.digests.sha256)?;
        Ok(cleartext_checked(file.session, file.handle, file.key, &text)?.into_bytes())
    }
}

/// `SHA256SUMS.asc`: the manifest text cleartext-signed on the token, checked with rpgp.
pub(super) fn cleartext_manifest(
    s: &Session,
    handle: u64,
    key: &SigningKey,
    text: &str,
) -> Result<String, SignError> {
    cleartext_checked(s, handle, key, text)
}

/// `text` cleartext-signed on the token, checked with rpgp: the signature verifies and the
/// text it covers is `text` (up to the final line ending, which the message does not keep).
fn cleartext_checked(
    s: &Session,
    handle: u64,
    key: &SigningKey,
    text: &str,
) -> Result<String, SignError> {
    let pk = pgp_key(key)?;
    let msg = openpgp::cleartext_signed(&pk, text, unix_now(), &mut |d| {
        Ok(token::sign_digest(s, handle, pk.alg, pk.alg.hash(), d)?)
    })?;
    let (signed, _) =
        verify::check_cleartext(&rpgp_key(&pk)?, &msg).map_err(SignError::into_self_check)?;
    if signed != text.strip_suffix('\n').unwrap_or(text) {
        return Err(SignError::SelfCheck(text!(
            "hsm.console.cleartext_not_the_text",
            "rpgp reads another text from the cleartext-signed message than was signed"
        )));
    }
    Ok(msg)
}
