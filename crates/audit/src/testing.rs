//! Software stand-ins for the HSM pieces, for the audit crate's own tests and benchmarks
//! (feature `test-support`; the console never enables it). The real ones live in `hsm`.

use std::sync::Mutex;

use hmac::{Hmac, KeyInit, Mac};
use p256::ecdsa::signature::Signer;
use p256::pkcs8::EncodePublicKey;
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::{CheckpointSigner, KeyWrapper};

/// Wraps with an HMAC-derived keystream and a tag (a test double for AES key wrap).
pub struct SoftWrapper {
    kek: [u8; 32],
    id: Vec<u8>,
    pub fail: Mutex<bool>,
}

impl SoftWrapper {
    pub fn new(kek: [u8; 32], id: &[u8]) -> Self {
        SoftWrapper {
            kek,
            id: id.to_vec(),
            fail: Mutex::new(false),
        }
    }

    fn stream(&self, nonce: &[u8]) -> [u8; 32] {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.kek).unwrap();
        m.update(b"stream");
        m.update(nonce);
        m.finalize().into_bytes().into()
    }

    fn tag(&self, c: &[u8]) -> [u8; 32] {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.kek).unwrap();
        m.update(b"tag");
        m.update(c);
        m.finalize().into_bytes().into()
    }
}

impl KeyWrapper for SoftWrapper {
    fn holder(&self) -> String {
        "software test wrapper".into()
    }
    fn kek_id(&self) -> Vec<u8> {
        self.id.clone()
    }
    fn mechanism(&self) -> String {
        "TEST-SOFT-WRAP".into()
    }
    fn wrap(&self, key: &[u8]) -> Result<Vec<u8>, String> {
        if *self.fail.lock().unwrap() {
            return Err("wrapping key unavailable".into());
        }
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).unwrap();
        let s = self.stream(&nonce);
        let mut out = nonce.to_vec();
        out.extend(key.iter().zip(s.iter().cycle()).map(|(a, b)| a ^ b));
        let t = self.tag(&out);
        out.extend_from_slice(&t);
        Ok(out)
    }
    fn unwrap(&self, wrapped: &[u8]) -> Result<Zeroizing<Vec<u8>>, String> {
        if *self.fail.lock().unwrap() || wrapped.len() < 48 {
            return Err("cannot unwrap".into());
        }
        let (body, tag) = wrapped.split_at(wrapped.len() - 32);
        if self.tag(body) != tag {
            return Err("wrapped key corrupted or wrapped by another key".into());
        }
        let (nonce, c) = body.split_at(16);
        let s = self.stream(nonce);
        Ok(Zeroizing::new(
            c.iter().zip(s.iter().cycle()).map(|(a, b)| a ^ b).collect(),
        ))
    }
}

/// ECDSA P-256 checkpoint signer in software.
pub struct SoftSigner {
    key: p256::ecdsa::SigningKey,
}

impl SoftSigner {
    pub fn new(seed: [u8; 32]) -> Self {
        SoftSigner {
            key: p256::ecdsa::SigningKey::from_slice(&seed).expect("valid scalar"),
        }
    }
}

impl CheckpointSigner for SoftSigner {
    fn algorithm(&self) -> String {
        "ECDSA-P256".into()
    }
    fn public_key_spki(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_public_key_der()
            .unwrap()
            .as_bytes()
            .to_vec()
    }
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        let sig: p256::ecdsa::Signature = self.key.sign(message);
        Ok(sig.to_der().as_bytes().to_vec())
    }
}
