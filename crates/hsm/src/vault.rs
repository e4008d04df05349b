//! HSM-held secrets for other services: wrapping a secret with a non-extractable AES key,
//! signing with a non-extractable key (ML-DSA-65 where the token has it, else ECDSA
//! P-256), and small data objects. The audit trail's key wrapper, checkpoint signer and
//! rollback anchor are built from these (the `console` crate adapts them to `audit`'s
//! traits; this crate knows nothing of the audit trail).
//!
//! Keys are found by (class, CKA_ID) on every use, not by handle: handles do not survive a
//! module reinitialization.

use p11::sys::*;
use p11::{Mechanism, Session, Template};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::algo::{Curve, KeySpec, MlDsaSet};
use crate::error::{HsmError, Result};
use crate::keys;
use crate::pool::Pool;
use crate::pubkey::PublicKey;
use crate::templates::KeyAttrs;

/// How a secret is wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrapMechanism {
    /// `CKM_AES_KEY_WRAP_KWP` (RFC 5649), PKCS#11 3.x.
    Kwp,
    /// Luna's vendor `CKM_AES_KWP`.
    LunaKwp,
    /// `CKM_AES_KEY_WRAP_PAD` (SoftHSM2's name for the padded key wrap).
    Pad,
    /// AES-GCM encryption of the secret (12-byte IV ‖ ciphertext ‖ tag).
    Gcm,
}

impl WrapMechanism {
    pub fn name(self) -> &'static str {
        match self {
            WrapMechanism::Kwp => "CKM_AES_KEY_WRAP_KWP",
            WrapMechanism::LunaKwp => "CKM_AES_KWP",
            WrapMechanism::Pad => "CKM_AES_KEY_WRAP_PAD",
            WrapMechanism::Gcm => "CKM_AES_GCM",
        }
    }

    fn raw(self) -> u64 {
        match self {
            WrapMechanism::Kwp => CKM_AES_KEY_WRAP_KWP,
            WrapMechanism::LunaKwp => p11::names::luna::CKM_AES_KWP,
            WrapMechanism::Pad => CKM_AES_KEY_WRAP_PAD,
            WrapMechanism::Gcm => CKM_AES_GCM,
        }
    }

    /// The best the token offers.
    pub fn choose(mechanisms: &[u64]) -> WrapMechanism {
        [
            WrapMechanism::Kwp,
            WrapMechanism::LunaKwp,
            WrapMechanism::Pad,
        ]
        .into_iter()
        .find(|m| mechanisms.contains(&m.raw()))
        .unwrap_or(WrapMechanism::Gcm)
    }
}

/// A non-extractable AES-256 wrapping key on the token, identified by `CKA_ID`.
#[derive(Debug, Clone)]
pub struct Wrapper {
    pub id: Vec<u8>,
    pub label: String,
    pub mechanism: WrapMechanism,
}

fn find(s: &Session, class: u64, id: &[u8]) -> p11::Result<Option<u64>> {
    let found = s.find_objects(&mut Template::new().ulong(CKA_CLASS, class).bytes(CKA_ID, id))?;
    Ok(found.first().copied())
}

impl Wrapper {
    /// Find the wrapping key with this ID, or generate it (token object, sensitive, never
    /// extractable, wrap/unwrap and encrypt/decrypt only).
    pub fn ensure(pool: &Pool, id: &[u8], label: &str) -> Result<Wrapper> {
        let mechanisms = pool.module().mechanisms(pool.slot())?;
        let mechanism = WrapMechanism::choose(&mechanisms);
        let id = id.to_vec();
        let label = label.to_string();
        pool.run("vault.ensure_wrapper", |s| {
            if find(s, CKO_SECRET_KEY, &id)?.is_none() {
                let mut t = Template::new()
                    .ulong(CKA_CLASS, CKO_SECRET_KEY)
                    .ulong(CKA_KEY_TYPE, CKK_AES)
                    .ulong(CKA_VALUE_LEN, 32)
                    .bool(CKA_TOKEN, true)
                    .bool(CKA_PRIVATE, true)
                    .bool(CKA_SENSITIVE, true)
                    .bool(CKA_EXTRACTABLE, false)
                    .bool(CKA_WRAP, true)
                    .bool(CKA_UNWRAP, true)
                    .bool(CKA_ENCRYPT, true)
                    .bool(CKA_DECRYPT, true)
                    .text(CKA_LABEL, &label)
                    .bytes(CKA_ID, &id);
                s.generate_key(&Mechanism::new(CKM_AES_KEY_GEN), &mut t)?;
            }
            Ok(())
        })?;
        Ok(Wrapper {
            id,
            label,
            mechanism,
        })
    }

    /// Does the token hold this wrapping key?
    pub fn exists(pool: &Pool, id: &[u8]) -> Result<bool> {
        let id = id.to_vec();
        Ok(pool
            .run_idempotent("vault.find_wrapper", |s| find(s, CKO_SECRET_KEY, &id))?
            .is_some())
    }

    fn handle(&self, s: &Session) -> p11::Result<u64> {
        find(s, CKO_SECRET_KEY, &self.id)?.ok_or(p11::Error::InvalidArgument(
            "the wrapping key is gone from the token".into(),
        ))
    }

    /// Wrap `secret` (the secret enters the token as a short-lived session object, is
    /// wrapped, and the object is destroyed).
    pub fn wrap(&self, pool: &Pool, secret: &[u8]) -> Result<Vec<u8>> {
        let mech = self.mechanism;
        pool.run("vault.wrap", |s| {
            let kek = self.handle(s)?;
            if mech == WrapMechanism::Gcm {
                let mut iv = [0u8; 12];
                s.generate_random(&mut iv)?;
                let mut out = iv.to_vec();
                out.extend(s.encrypt(
                    &Mechanism::aes_gcm(&iv, b"hsm-console/vault", 128),
                    kek,
                    secret,
                )?);
                return Ok(out);
            }
            let mut t = Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
                .bool(CKA_TOKEN, false)
                .bool(CKA_EXTRACTABLE, true)
                .bool(CKA_SENSITIVE, false)
                .bytes(CKA_VALUE, secret);
            let tmp = s.create_object(&mut t)?;
            let r = s.wrap_key(&Mechanism::new(mech.raw()), kek, tmp);
            let _ = s.destroy_object(tmp);
            r
        })
    }

    /// Unwrap into zeroizing memory.
    pub fn unwrap(&self, pool: &Pool, wrapped: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
        let mech = self.mechanism;
        pool.run("vault.unwrap", |s| {
            let kek = self.handle(s)?;
            if mech == WrapMechanism::Gcm {
                if wrapped.len() < 12 + 16 {
                    return Err(p11::Error::InvalidArgument(
                        "wrapped secret too short".into(),
                    ));
                }
                let (iv, ct) = wrapped.split_at(12);
                return s
                    .decrypt(&Mechanism::aes_gcm(iv, b"hsm-console/vault", 128), kek, ct)
                    .map(Zeroizing::new);
            }
            let mut t = Template::new()
                .ulong(CKA_CLASS, CKO_SECRET_KEY)
                .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET)
                .bool(CKA_TOKEN, false)
                .bool(CKA_EXTRACTABLE, true)
                .bool(CKA_SENSITIVE, false);
            let tmp = s.unwrap_key(&Mechanism::new(mech.raw()), kek, wrapped, &mut t)?;
            let v = s.get_attribute(tmp, CKA_VALUE);
            let _ = s.destroy_object(tmp);
            v?.bytes()
                .map(|b| Zeroizing::new(b.to_vec()))
                .ok_or(p11::Error::InvalidArgument(
                    "the unwrapped secret is not readable".into(),
                ))
        })
    }
}

/// A non-extractable signing key on the token.
#[derive(Debug, Clone)]
pub struct SigningKey {
    pub id: Vec<u8>,
    pub public_key: PublicKey,
}

impl SigningKey {
    /// `ML-DSA-65` or `ECDSA-P256`.
    pub fn algorithm(&self) -> &'static str {
        match self.public_key {
            PublicKey::MlDsa { .. } => "ML-DSA-65",
            _ => "ECDSA-P256",
        }
    }

    /// The key pair with this ID, if the token holds both halves (never generates one).
    pub fn find(pool: &Pool, id: &[u8]) -> Result<Option<SigningKey>> {
        let id = id.to_vec();
        let public_key = pool.run_idempotent("vault.find_signer", |s| {
            match (
                find(s, CKO_PUBLIC_KEY, &id)?,
                find(s, CKO_PRIVATE_KEY, &id)?,
            ) {
                (Some(h), Some(_)) => keys::read_public_key(s, h).map(Some).map_err(to_p11),
                _ => Ok(None),
            }
        })?;
        Ok(public_key.map(|public_key| SigningKey { id, public_key }))
    }

    /// Find the key pair with this ID or generate one: ML-DSA-65 when the token lists
    /// `CKM_ML_DSA_KEY_PAIR_GEN`, else ECDSA P-256.
    pub fn ensure(pool: &Pool, id: &[u8], label: &str) -> Result<SigningKey> {
        let mechanisms = pool.module().mechanisms(pool.slot())?;
        let spec =
            if mechanisms.contains(&CKM_ML_DSA_KEY_PAIR_GEN) && mechanisms.contains(&CKM_ML_DSA) {
                KeySpec::MlDsa { set: MlDsaSet::P65 }
            } else {
                KeySpec::Ec { curve: Curve::P256 }
            };
        let (id, label) = (id.to_vec(), label.to_string());
        let public_key = pool.run("vault.ensure_signer", |s| {
            let existing = find(s, CKO_PUBLIC_KEY, &id)?;
            let handle = match existing {
                Some(h) if find(s, CKO_PRIVATE_KEY, &id)?.is_some() => h,
                _ => {
                    let attrs = KeyAttrs {
                        label: label.clone(),
                        id: id.clone(),
                        token: true,
                    };
                    keys::generate(s, &spec, &attrs)
                        .map_err(to_p11)?
                        .public
                        .expect("a key pair")
                }
            };
            keys::read_public_key(s, handle).map_err(to_p11)
        })?;
        Ok(SigningKey {
            id: id.clone(),
            public_key,
        })
    }

    /// Sign the message itself. ML-DSA: pure, empty context. ECDSA: over SHA-256 of the
    /// message, returned DER-encoded.
    pub fn sign(&self, pool: &Pool, message: &[u8]) -> Result<Vec<u8>> {
        let id = self.id.clone();
        let ml_dsa = matches!(self.public_key, PublicKey::MlDsa { .. });
        pool.run("vault.sign", |s| {
            let key = find(s, CKO_PRIVATE_KEY, &id)?.ok_or(p11::Error::InvalidArgument(
                "the signing key is gone from the token".into(),
            ))?;
            if ml_dsa {
                s.sign(&Mechanism::new(CKM_ML_DSA), key, message)
            } else {
                let raw = s.sign(&Mechanism::new(CKM_ECDSA), key, &Sha256::digest(message))?;
                swverify::ecdsa_raw_to_der(32, &raw)
                    .map_err(|e| p11::Error::InvalidArgument(e.to_string()))
            }
        })
    }
}

fn to_p11(e: HsmError) -> p11::Error {
    match e {
        HsmError::P11(e) | HsmError::Disconnected { error: e, .. } => e,
        other => p11::Error::InvalidArgument(other.to_string()),
    }
}

/// A small token data object (`CKO_DATA`), e.g. the audit trail's rollback anchor.
pub struct DataObject {
    pub application: String,
    pub label: String,
}

impl DataObject {
    fn template(&self) -> Template {
        Template::new()
            .ulong(CKA_CLASS, CKO_DATA)
            .text(CKA_APPLICATION, &self.application)
            .text(CKA_LABEL, &self.label)
    }

    pub fn read(&self, pool: &Pool) -> Result<Option<Vec<u8>>> {
        pool.run_idempotent("vault.read_data", |s| {
            let found = s.find_objects(&mut self.template())?;
            match found.first() {
                Some(h) => Ok(s.get_attribute(*h, CKA_VALUE)?.bytes().map(<[u8]>::to_vec)),
                None => Ok(None),
            }
        })
    }

    /// Replace the object's value (create it the first time).
    pub fn write(&self, pool: &Pool, value: &[u8]) -> Result<()> {
        pool.run("vault.write_data", |s| {
            let found = s.find_objects(&mut self.template())?;
            let mut t = self
                .template()
                .bool(CKA_TOKEN, true)
                .bool(CKA_PRIVATE, true)
                .bool(CKA_MODIFIABLE, true)
                .bytes(CKA_VALUE, value);
            let new = s.create_object(&mut t)?;
            // Old copies go only after the new one exists: a crash leaves one or two, never none.
            for h in found {
                if h != new {
                    let _ = s.destroy_object(h);
                }
            }
            Ok(())
        })
    }
}

/// Destroy every object of these classes with this `CKA_ID` (the audit trail's keys, once
/// they moved elsewhere). Returns how many were destroyed.
pub fn destroy_by_id(pool: &Pool, classes: &[u64], id: &[u8]) -> Result<usize> {
    pool.run("vault.destroy", |s| {
        let mut destroyed = 0;
        for class in classes {
            for h in
                s.find_objects(&mut Template::new().ulong(CKA_CLASS, *class).bytes(CKA_ID, id))?
            {
                s.destroy_object(h)?;
                destroyed += 1;
            }
        }
        Ok(destroyed)
    })
}

impl DataObject {
    /// Destroy the object (every copy); `true` when there was one.
    pub fn destroy(&self, pool: &Pool) -> Result<bool> {
        pool.run("vault.destroy_data", |s| {
            let found = s.find_objects(&mut self.template())?;
            for h in &found {
                s.destroy_object(*h)?;
            }
            Ok(!found.is_empty())
        })
    }
}
