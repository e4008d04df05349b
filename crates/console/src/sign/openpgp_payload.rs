//! OpenPGP signatures over a payload in memory, for git (`hsmc git-gpg`): the key named by
//! its OpenPGP fingerprint or key ID (`user.signingkey`) among the partition's keys whose
//! certificate the console made, and one detached signature over the payload, checked with
//! rpgp and recorded as every payload signature is ([`super::payload`]).

use serde::Serialize;

use hsm::keys as hk;
use p11::sys::*;
use p11::Template;
use signing::alg::DigestAlg;
use signing::openpgp::{self, armor, token, verify, PgpKey};

use super::key::resolve;
use super::openpgp::{stored_creation_time, unix_now};
use super::payload::PayloadRecord;
use super::{hsm_side, sign_error};
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::sign::Signing;
use crate::text;

/// A fingerprint (40 hex digits) or long key ID (16), as `user.signingkey` holds it: `0x`
/// optional, any case, spaces between groups and gpg's trailing `!` allowed. Upper case.
pub fn openpgp_key_ref(s: &str) -> Option<String> {
    let t = s.trim();
    let t = t.strip_suffix('!').unwrap_or(t);
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    let t: String = t.chars().filter(|c| *c != ' ').collect();
    ((t.len() == 40 || t.len() == 16) && t.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| t.to_ascii_uppercase())
}

/// The key a fingerprint or key ID named.
#[derive(Debug, Clone, Serialize)]
pub struct OpenPgpSigner {
    pub summary: hk::ObjectSummary,
    pub fingerprint: String,
}

/// One detached signature made for a caller (git).
#[derive(Debug, Clone, Serialize)]
pub struct OpenPgpPayloadSignature {
    /// `-----BEGIN PGP SIGNATURE-----` …
    pub armored: String,
    pub key_label: String,
    pub fingerprint: String,
    /// Signature creation time, seconds since 1970.
    pub created: u32,
    /// RFC 9580 public-key and hash algorithm IDs (gpg's `SIG_CREATED` line).
    pub pk_algo: u8,
    pub hash_algo: u8,
    /// SHA-512 of what was signed (hex).
    pub sha512: String,
}

impl Signing<'_> {
    /// The private key whose OpenPGP certificate (made by the console: its creation time is
    /// on the token) has the fingerprint or long key ID `key_ref`. Refused when it is not one,
    /// when no key has it, and when the key it names may not sign.
    pub async fn find_openpgp_key(
        self,
        partition: &str,
        key_ref: &str,
    ) -> ApiResult<OpenPgpSigner> {
        let want = openpgp_key_ref(key_ref).ok_or_else(|| {
            ApiError::invalid(text!(
                "hsm.console.openpgp_key_ref_invalid",
                "{{key}} is not an OpenPGP fingerprint (40 hex digits) or long key ID (16).",
                key = key_ref
            ))
            .suggest(text!(
                "hsm.console.openpgp_key_ref_hint",
                "Set user.signingkey to the fingerprint hsmc keys openpgp printed for the key."
            ))
        })?;
        let p = self.partition_ref(partition).await?;
        let w = want.clone();
        let found = p
            .pool
            .run_service_idempotent_async("openpgp.find_key", move |s| {
                for o in
                    hk::list_objects(s, &mut Template::new().ulong(CKA_CLASS, CKO_PRIVATE_KEY))?
                {
                    let Ok(pk) = hk::public_for_private(s, o.handle)
                        .and_then(|ph| hk::read_public_key(s, ph))
                    else {
                        continue;
                    };
                    let Some(created) = stored_creation_time(s, &o.id_hex, &pk)? else {
                        continue;
                    };
                    let Ok(k) = PgpKey::new(&pk, created) else {
                        continue;
                    };
                    let fpr = k.fingerprint_hex();
                    if fpr.ends_with(&w) {
                        return Ok(Some(OpenPgpSigner {
                            summary: o,
                            fingerprint: fpr,
                        }));
                    }
                }
                Ok(None)
            })
            .await?;
        let Some(signer) = found else {
            return Err(ApiError::new(
                ErrorCode::KeyNotFound,
                text!(
                    "hsm.console.openpgp_key_not_found",
                    "No key on this partition has the OpenPGP fingerprint or key ID {{key}}.",
                    key = want
                ),
            )
            .suggest(text!(
                "hsm.console.openpgp_key_not_found_hint",
                "Check the partition and log in as the key's owner; hsmc keys openpgp makes a key's certificate and prints its fingerprint."
            )));
        };
        if !signer.summary.capabilities.sign {
            return Err(ApiError::new(
                ErrorCode::NotAuthorized,
                text!(
                    "hsm.console.openpgp_key_cannot_sign",
                    "'{{label}}' ({{fingerprint}}) may not sign: its CKA_SIGN is false.",
                    label = signer.summary.label,
                    fingerprint = signer.fingerprint
                ),
            ));
        }
        Ok(signer)
    }

    /// One detached OpenPGP signature (binary document, armored) over `payload` with the
    /// key `find_openpgp_key` found, checked with rpgp; recorded before it is made and
    /// after, with the payload's SHA-512 and what the caller says it is (`context`).
    pub async fn sign_openpgp_payload(
        self,
        partition: &str,
        signer: &OpenPgpSigner,
        payload: &[u8],
        resource: &str,
        context: Vec<(&str, serde_json::Value)>,
    ) -> ApiResult<OpenPgpPayloadSignature> {
        let p = self.partition_ref(partition).await?;
        let handle = signer.summary.handle;
        let (summary, key) = p
            .pool
            .run_service_idempotent_async("sign.openpgp.key", move |s| {
                let (summary, pk) = super::key::key_material(s, handle)?;
                let created = stored_creation_time(s, &summary.id_hex, &pk)?;
                let key = created.map(|t| PgpKey::new(&pk, t).map_err(hsm_side));
                Ok((summary, key.transpose()?))
            })
            .await?;
        let key = key
            .filter(|k| k.fingerprint_hex() == signer.fingerprint)
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::KeyNotFound,
                    text!(
                        "hsm.console.openpgp_key_not_found",
                        "No key on this partition has the OpenPGP fingerprint or key ID {{key}}.",
                        key = signer.fingerprint
                    ),
                )
            })?;
        let rec = PayloadRecord {
            partition: &p.id,
            resource,
            algorithm: key.alg.name(),
            format: "openpgp",
            payload,
            key: serde_json::json!({
                "label": summary.label,
                "id": summary.id_hex,
                "fingerprint": key.fingerprint_hex(),
            }),
            fields: context,
        };
        let created = unix_now();
        let (k, data, sum) = (key.clone(), payload.to_vec(), summary.clone());
        let armored = self
            .sign_payload_recorded(&rec, async {
                let armored = p
                    .pool
                    .run_service_async("sign.openpgp", move |s| {
                        let h = resolve(s, &sum)?;
                        let sig = openpgp::detached_bytes(&k, &data, created, &mut |d| {
                            Ok(token::sign_digest(s, h, k.alg, k.alg.hash(), d)?)
                        })
                        .map_err(hsm_side)?;
                        // Ending with a line end, as gpg's does (git copies it as it is).
                        let mut armored = armor::armor(armor::Block::Signature, &sig);
                        if !armored.ends_with('\n') {
                            armored.push('\n');
                        }
                        Ok(armored)
                    })
                    .await
                    .map_err(ApiError::from)?;
                let rpgp = verify::read_key(&key).map_err(sign_error)?;
                verify::check_detached(&rpgp, armored.as_bytes(), payload)
                    .map_err(|e| sign_error(e.into_self_check()))?;
                Ok(armored)
            })
            .await?;
        Ok(OpenPgpPayloadSignature {
            armored,
            key_label: summary.label,
            fingerprint: key.fingerprint_hex(),
            created,
            pk_algo: key.alg.id(),
            hash_algo: openpgp::hash_id(key.alg.hash()),
            sha512: hex::encode(DigestAlg::Sha512.digest(payload)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_signingkey_is_read_as_gpg_reads_a_fingerprint_or_long_key_id() {
        let fpr = "0123456789ABCDEF0123456789ABCDEF01234567";
        for ok in [
            fpr,
            "0x0123456789abcdef0123456789abcdef01234567",
            "0123 4567 89AB CDEF 0123  4567 89AB CDEF 0123 4567",
            "0123456789ABCDEF0123456789ABCDEF01234567!",
        ] {
            assert_eq!(openpgp_key_ref(ok).as_deref(), Some(fpr), "{ok}");
        }
        assert_eq!(
            openpgp_key_ref("0X89abcdef01234567").as_deref(),
            Some("89ABCDEF01234567")
        );
        for bad in [
            "",
            "89ABCDEF",
            "Dev <dev@example.org>",
            "0123456789ABCDEF0123456789ABCDEF0123456",
            "g123456789ABCDEF",
        ] {
            assert_eq!(openpgp_key_ref(bad), None, "{bad}");
        }
    }
}
