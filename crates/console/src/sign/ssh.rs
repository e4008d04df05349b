//! SSH with HSM keys (Ed25519, ECDSA P-256): the OpenSSH public key and `allowed_signers`
//! lines, `FILE.sshsig` in a signing batch (namespace `file`), and one SSHSIG over a
//! payload for git (`hsmc git-ssh`, namespace `git`), each signature audited.

use serde::Serialize;

use audit::Event;
use hsm::keys as hk;
use p11::sys::*;
use p11::Template;
use signing::alg::{DigestAlg, SigAlg};
use signing::sshsig::{self, SshKey};
use signing::SignError;

use super::formats::{FileSigning, Format};
use super::key::{key_material, resolve, SigningKey};
use super::payload::PayloadRecord;
use super::{hsm_side, sign_error};
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::sign::Signing;
use crate::text;

/// A key's OpenSSH public key line, and its `allowed_signers` line when asked for.
#[derive(Debug, Clone, Serialize)]
pub struct SshPublicKey {
    /// `ssh-ed25519 AAAA… comment`.
    pub line: String,
    /// `ssh-ed25519` or `ecdsa-sha2-nistp256`.
    pub algorithm: String,
    /// `SHA256:…`, as `ssh-keygen -l` prints it.
    pub fingerprint: String,
    /// `PRINCIPAL namespaces="…" ssh-ed25519 AAAA…`.
    pub allowed_signers: Option<String>,
}

/// An `allowed_signers` line's principal and namespaces.
pub struct AllowedSigner<'a> {
    pub principal: &'a str,
    pub namespaces: &'a str,
}

/// One SSHSIG made for a caller (git).
#[derive(Debug, Clone, Serialize)]
pub struct SshSignature {
    /// `-----BEGIN SSH SIGNATURE-----` …
    pub armored: String,
    pub key_label: String,
    pub fingerprint: String,
    pub namespace: String,
    /// SHA-512 of what was signed (hex).
    pub sha512: String,
}

/// A key label as an SSH comment (one line).
fn comment_of(label: &str) -> String {
    label
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect()
}

impl Signing<'_> {
    /// The OpenSSH public key line of an Ed25519 or ECDSA P-256 key (refused for any
    /// other), commented with `comment` or the key's label. Recorded.
    pub async fn ssh_public_key(
        self,
        partition: &str,
        handle: u64,
        comment: Option<&str>,
        allowed: Option<AllowedSigner<'_>>,
    ) -> ApiResult<SshPublicKey> {
        let p = self.partition_ref(partition).await?;
        let (summary, pk) = p
            .pool
            .run_service_idempotent_async("ssh.pub", move |s| key_material(s, handle))
            .await?;
        let k = SshKey::new(&pk).map_err(sign_error)?;
        let comment = comment
            .map(str::to_string)
            .unwrap_or_else(|| comment_of(&summary.label));
        let line = k.public_key_line(&comment).map_err(sign_error)?;
        let allowed_signers = match &allowed {
            Some(a) => Some(
                k.allowed_signers_line(a.principal, a.namespaces)
                    .map_err(sign_error)?,
            ),
            None => None,
        };
        self.record(
            Event::new("key.export_public", "key")
                .resource(&summary.label)
                .algorithm(pk.algorithm())
                .meta("partition", &p.id)
                .meta("id", &summary.id_hex)
                .meta("format", "ssh")
                .meta("fingerprint", k.fingerprint())
                .meta(
                    "allowed_signers_principal",
                    allowed.as_ref().map(|a| a.principal),
                ),
        )
        .await;
        Ok(SshPublicKey {
            line,
            algorithm: k.algorithm_name(),
            fingerprint: k.fingerprint(),
            allowed_signers,
        })
    }

    /// The private key whose public half is the OpenSSH public key `key_text` (a key line,
    /// a `key::` literal or a public key file's text), among the keys that may sign.
    pub async fn find_ssh_key(
        self,
        partition: &str,
        key_text: &str,
    ) -> ApiResult<hk::ObjectSummary> {
        let want = SshKey::parse(key_text).map_err(sign_error)?;
        let p = self.partition_ref(partition).await?;
        let w = want.clone();
        let found = p
            .pool
            .run_service_idempotent_async("ssh.find_key", move |s| {
                for o in
                    hk::list_objects(s, &mut Template::new().ulong(CKA_CLASS, CKO_PRIVATE_KEY))?
                {
                    if !o.capabilities.sign {
                        continue;
                    }
                    let Ok((summary, pk)) = key_material(s, o.handle) else {
                        continue;
                    };
                    if SshKey::new(&pk).is_ok_and(|k| k == w) {
                        return Ok(Some(summary));
                    }
                }
                Ok(None)
            })
            .await?;
        found.ok_or_else(|| {
            ApiError::new(
                ErrorCode::KeyNotFound,
                text!(
                    "hsm.console.ssh_key_not_found",
                    "No private key on this partition has the SSH public key {{fingerprint}}.",
                    fingerprint = want.fingerprint()
                ),
            )
            .suggest(text!(
                "hsm.console.ssh_key_not_found_hint",
                "Check the partition and log in as the key's owner; hsmc keys ssh-pub prints a key's line."
            ))
        })
    }

    /// One SSHSIG over `payload` in `namespace` with the key at `handle` (this process's):
    /// recorded before it is made (refused when the trail cannot record it) and after,
    /// with the payload's SHA-512 and what the caller says it is (`context`).
    pub async fn sign_ssh(
        self,
        partition: &str,
        handle: u64,
        namespace: &str,
        payload: &[u8],
        resource: &str,
        context: Vec<(&str, serde_json::Value)>,
    ) -> ApiResult<SshSignature> {
        let p = self.partition_ref(partition).await?;
        let (summary, pk) = p
            .pool
            .run_service_idempotent_async("sign.ssh.key", move |s| key_material(s, handle))
            .await?;
        let key = SshKey::new(&pk).map_err(sign_error)?;
        let alg = SigAlg::for_key(&pk).map_err(sign_error)?;
        let sha512 = DigestAlg::Sha512.digest(payload);
        let mut fields = context;
        fields.push(("namespace", namespace.into()));
        let rec = PayloadRecord {
            partition: &p.id,
            resource,
            algorithm: &alg.name(),
            format: "sshsig",
            payload,
            key: serde_json::json!({
                "label": summary.label,
                "id": summary.id_hex,
                "fingerprint": key.fingerprint(),
            }),
            fields,
        };
        let (k, ns, digest, sum) = (
            key.clone(),
            namespace.to_string(),
            sha512.clone(),
            summary.clone(),
        );
        let armored = self
            .sign_payload_recorded(&rec, async {
                p.pool
                    .run_service_async("sign.ssh", move |s| {
                        let h = resolve(s, &sum)?;
                        sshsig::signature_file(&k, &ns, &digest, &mut |m| {
                            Ok(alg.sign(s, h, m, &[])?)
                        })
                        .map_err(hsm_side)
                    })
                    .await
                    .map_err(ApiError::from)
            })
            .await?;
        Ok(SshSignature {
            armored,
            key_label: summary.label.clone(),
            fingerprint: key.fingerprint(),
            namespace: namespace.to_string(),
            sha512: hex::encode(&sha512),
        })
    }
}

/// `FILE.sshsig`: SSHSIG in the `file` namespace, over the file's SHA-512 from the batch.
pub(super) struct Sshsig;

impl Format for Sshsig {
    fn suffix(&self) -> &'static str {
        ".sshsig"
    }
    fn own_signatures(&self) -> u64 {
        1
    }
    fn uses_message_signature(&self) -> bool {
        false
    }
    /// SSHSIG signs the file's SHA-512.
    fn digests(&self) -> &'static [DigestAlg] {
        &[DigestAlg::Sha512]
    }
    fn accepts(&self, key: &SigningKey) -> Result<(), SignError> {
        SshKey::new(&key.pk).map(|_| ())
    }
    fn render(&self, file: &mut FileSigning<'_>) -> Result<Vec<u8>, SignError> {
        let key = SshKey::new(&file.key.pk)?;
        let sha512 = file.digests.get(DigestAlg::Sha512).ok_or_else(|| {
            SignError::Format(hsm::text!("signing.digest_missing", "digest missing"))
        })?;
        let text = sshsig::signature_file(&key, sshsig::FILE_NAMESPACE, &sha512, &mut |m| {
            file.sign_bytes(m)
        })?;
        Ok(text.into_bytes())
    }
}
