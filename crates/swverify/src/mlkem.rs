//! ML-KEM (FIPS 203) encapsulation against a token's public key, with RustCrypto's
//! `ml-kem`: a token that decapsulates our ciphertext to the same secret has implemented
//! ML-KEM, not just agreed with itself.

use crate::{Result, VerifyError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MlKem {
    P512,
    P768,
    P1024,
}

impl MlKem {
    pub fn public_key_len(self) -> usize {
        match self {
            MlKem::P512 => 800,
            MlKem::P768 => 1184,
            MlKem::P1024 => 1568,
        }
    }
    pub fn ciphertext_len(self) -> usize {
        match self {
            MlKem::P512 => 768,
            MlKem::P768 => 1088,
            MlKem::P1024 => 1568,
        }
    }
}

/// Encapsulate to `public_key` with the 32 bytes of randomness `m`; returns
/// (ciphertext, shared secret).
pub fn encapsulate(set: MlKem, public_key: &[u8], m: &[u8; 32]) -> Result<(Vec<u8>, [u8; 32])> {
    match set {
        MlKem::P512 => <ml_kem::EncapsulationKey<ml_kem::MlKem512> as EkNew>::encaps(public_key, m),
        MlKem::P768 => <ml_kem::EncapsulationKey<ml_kem::MlKem768> as EkNew>::encaps(public_key, m),
        MlKem::P1024 => {
            <ml_kem::EncapsulationKey<ml_kem::MlKem1024> as EkNew>::encaps(public_key, m)
        }
    }
}

/// Bridges the per-parameter-set key types (their byte arrays are type-level sized).
pub trait EkNew {
    fn encaps(pk: &[u8], m: &[u8; 32]) -> Result<(Vec<u8>, [u8; 32])>;
}

macro_rules! ek_new {
    ($($p:ty),*) => {$(
        impl EkNew for ml_kem::EncapsulationKey<$p> {
            fn encaps(pk: &[u8], m: &[u8; 32]) -> Result<(Vec<u8>, [u8; 32])> {
                let key = pk.try_into().map_err(|_| VerifyError::BadKey(format!("{} bytes", pk.len())))?;
                let ek = ml_kem::EncapsulationKey::<$p>::new(&key).map_err(|_| VerifyError::BadKey("not a valid ML-KEM key".into()))?;
                let (ct, k) = ek.encapsulate_deterministic(&(*m).into());
                let mut secret = [0u8; 32];
                secret.copy_from_slice(k.as_slice());
                Ok((ct.as_slice().to_vec(), secret))
            }
        }
    )*};
}
ek_new!(ml_kem::MlKem512, ml_kem::MlKem768, ml_kem::MlKem1024);
