//! minisign for Ed25519 keys: `FILE.minisig` per file (the prehashed `ED` signature and the
//! global signature, both by the HSM) and the key's `minisign.pub`.

use serde::Serialize;
use ts_rs::TS;

use audit::Event;
use signing::minisign::{self, MinisignKey};
use signing::SignError;

use super::formats::{FileSigning, Format};
use super::key::{key_material, SigningKey};
use super::sign_error;
use crate::core::error::ApiResult;
use crate::sign::Signing;

/// A key's `minisign.pub`.
#[derive(Debug, Clone, Serialize, TS)]
pub struct MinisignPublicKey {
    pub text: String,
    /// As minisign prints it (16 hex digits).
    pub key_id: String,
}

impl Signing<'_> {
    /// The `minisign.pub` of an Ed25519 key (refused for any other). Recorded.
    pub async fn minisign_public_key(
        self,
        partition: &str,
        handle: u64,
    ) -> ApiResult<MinisignPublicKey> {
        let p = self.partition_ref(partition).await?;
        let (summary, pk) = p
            .pool
            .run_service_idempotent_async("minisign.pub", move |s| key_material(s, handle))
            .await?;
        let k = MinisignKey::new(&pk).map_err(sign_error)?;
        self.record(
            Event::new("key.export_public", "key")
                .resource(&summary.label)
                .algorithm(pk.algorithm())
                .meta("partition", &p.id)
                .meta("id", &summary.id_hex)
                .meta("format", "minisign")
                .meta("minisign_key_id", k.key_id_hex()),
        )
        .await;
        Ok(MinisignPublicKey {
            text: k.public_key_file(),
            key_id: k.key_id_hex(),
        })
    }
}

/// `FILE.minisig`.
pub(super) struct Minisign;

impl Format for Minisign {
    fn suffix(&self) -> &'static str {
        ".minisig"
    }
    /// The signature over the file's BLAKE2b-512 and the global signature.
    fn own_signatures(&self) -> u64 {
        2
    }
    fn uses_message_signature(&self) -> bool {
        false
    }
    fn accepts(&self, key: &SigningKey) -> Result<(), SignError> {
        MinisignKey::new(&key.pk).map(|_| ())
    }
    fn render(&self, file: &mut FileSigning<'_>) -> Result<Vec<u8>, SignError> {
        let key = MinisignKey::new(&file.key.pk)?;
        let hash = minisign::prehash(file.input, &file.digests.sha256)?;
        let trusted =
            minisign::trusted_comment(&file.input.name(), super::openpgp::unix_now().into())?;
        let text = minisign::signature_file(&key, &hash, &trusted, &mut |m| file.sign_bytes(m))?;
        minisign::verify_file(&file.input.path, &text, &key.public_key_file())
            .map_err(SignError::into_self_check)?;
        Ok(text.into_bytes())
    }
}
