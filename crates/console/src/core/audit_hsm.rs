//! The audit trail's HSM pieces: its MAC key wrapped by a non-extractable AES key, its
//! checkpoints signed by a non-extractable key, and its rollback anchor kept as a token
//! data object — all on the partition that holds the trail's key. Adapts `hsm::vault` to
//! the `audit` crate's traits.

use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use hsm::vault::{DataObject, SigningKey, Wrapper};
use hsm::Pool;

/// `CKA_ID` of a trail's wrapping key: derived from the trail ID, so a partition can be
/// asked "do you hold this trail's key?".
pub fn kek_id(log_id: &str) -> Vec<u8> {
    Sha256::digest(format!("hsm-console/audit-kek/{log_id}")).as_slice()[..16].to_vec()
}

pub fn signer_id(log_id: &str) -> Vec<u8> {
    Sha256::digest(format!("hsm-console/audit-checkpoint/{log_id}")).as_slice()[..16].to_vec()
}

pub struct HsmKeyWrapper {
    pub pool: Pool,
    pub wrapper: Wrapper,
    pub holder: String,
}

impl audit::KeyWrapper for HsmKeyWrapper {
    fn holder(&self) -> String {
        self.holder.clone()
    }
    fn kek_id(&self) -> Vec<u8> {
        self.wrapper.id.clone()
    }
    fn mechanism(&self) -> String {
        self.wrapper.mechanism.name().to_string()
    }
    fn wrap(&self, key: &[u8]) -> Result<Vec<u8>, String> {
        self.wrapper
            .wrap(&self.pool, key)
            .map_err(|e| e.to_string())
    }
    fn unwrap(&self, wrapped: &[u8]) -> Result<Zeroizing<Vec<u8>>, String> {
        self.wrapper
            .unwrap(&self.pool, wrapped)
            .map_err(|e| e.to_string())
    }
}

pub struct HsmCheckpointSigner {
    pub pool: Pool,
    pub key: SigningKey,
}

impl audit::CheckpointSigner for HsmCheckpointSigner {
    fn algorithm(&self) -> String {
        self.key.algorithm().to_string()
    }
    fn public_key_spki(&self) -> Vec<u8> {
        self.key.public_key.spki_der()
    }
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        self.key
            .sign(&self.pool, message)
            .map_err(|e| e.to_string())
    }
}

/// The latest checkpoint, remembered on the HSM: restoring an old copy of the store does
/// not restore an old copy of the token.
pub struct HsmAnchor {
    pub pool: Pool,
    pub object: DataObject,
}

impl HsmAnchor {
    pub fn new(pool: Pool, log_id: &str) -> Self {
        HsmAnchor {
            pool,
            object: DataObject {
                application: "hsm-console".into(),
                label: format!("audit anchor {log_id}"),
            },
        }
    }
}

impl audit::Anchor for HsmAnchor {
    fn load(&self) -> Result<Option<audit::Checkpoint>, String> {
        match self.object.read(&self.pool).map_err(|e| e.to_string())? {
            Some(b) => serde_json::from_slice(&b)
                .map(Some)
                .map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }
    fn save(&self, cp: &audit::Checkpoint) -> Result<(), String> {
        if let Ok(Some(old)) = self.load() {
            if old.log_id == cp.log_id && old.checkpoint_no >= cp.checkpoint_no {
                return Ok(());
            }
        }
        self.object
            .write(
                &self.pool,
                &serde_json::to_vec(cp).map_err(|e| e.to_string())?,
            )
            .map_err(|e| e.to_string())
    }
}
