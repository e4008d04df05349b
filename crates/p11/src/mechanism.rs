//! Mechanisms with owned parameters. The parameter structs live in boxes so the raw
//! `CK_MECHANISM` can point at them while the `Mechanism` lives.

use cryptoki_sys::*;

use crate::types::MechanismType;

#[derive(Debug)]
enum Param {
    None,
    Bytes(Box<[u8]>),
    Gcm {
        params: Box<CK_GCM_PARAMS>,
        _iv: Box<[u8]>,
        _aad: Box<[u8]>,
    },
    Pss(Box<CK_RSA_PKCS_PSS_PARAMS>),
    Oaep(Box<CK_RSA_PKCS_OAEP_PARAMS>),
    SignContext {
        params: Box<CK_SIGN_ADDITIONAL_CONTEXT>,
        _context: Box<[u8]>,
    },
}

/// A mechanism and its parameter.
#[derive(Debug)]
pub struct Mechanism {
    ty: MechanismType,
    param: Param,
}

// SAFETY: the raw pointers inside the boxed parameter structs point only into boxes owned
// by the same `Mechanism`; moving it to another thread moves everything they refer to.
unsafe impl Send for Mechanism {}

/// ML-DSA/SLH-DSA signing randomness (`CK_HEDGE_TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hedge {
    Preferred,
    Required,
    DeterministicRequired,
}

impl Hedge {
    fn raw(self) -> CK_ULONG {
        match self {
            Hedge::Preferred => CKH_HEDGE_PREFERRED,
            Hedge::Required => CKH_HEDGE_REQUIRED,
            // Not exported for every target by cryptoki-sys; the 3.2 value is 2.
            Hedge::DeterministicRequired => 2,
        }
    }
}

impl Mechanism {
    /// A mechanism without parameter.
    pub fn new(ty: MechanismType) -> Self {
        Mechanism {
            ty,
            param: Param::None,
        }
    }

    /// A mechanism whose parameter is a plain byte string (e.g. an IV, EC params).
    pub fn with_bytes(ty: MechanismType, bytes: &[u8]) -> Self {
        Mechanism {
            ty,
            param: Param::Bytes(Box::from(bytes)),
        }
    }

    /// AES-GCM with the IV, AAD and tag length. `ulIvBits` is set as well: Luna in FIPS
    /// mode refuses to decrypt when it is zero.
    pub fn aes_gcm(iv: &[u8], aad: &[u8], tag_bits: u64) -> Self {
        let iv: Box<[u8]> = Box::from(iv);
        let aad: Box<[u8]> = Box::from(aad);
        let params = Box::new(CK_GCM_PARAMS {
            pIv: iv.as_ptr() as *mut u8,
            ulIvLen: iv.len() as CK_ULONG,
            ulIvBits: (iv.len() * 8) as CK_ULONG,
            pAAD: if aad.is_empty() {
                std::ptr::null_mut()
            } else {
                aad.as_ptr() as *mut u8
            },
            ulAADLen: aad.len() as CK_ULONG,
            ulTagBits: tag_bits,
        });
        Mechanism {
            ty: CKM_AES_GCM,
            param: Param::Gcm {
                params,
                _iv: iv,
                _aad: aad,
            },
        }
    }

    /// RSA-PSS (`CKM_RSA_PKCS_PSS` over a digest, or `CKM_SHA256_RSA_PKCS_PSS` etc.).
    pub fn rsa_pss(ty: MechanismType, hash: MechanismType, mgf: u64, salt_len: u64) -> Self {
        let params = Box::new(CK_RSA_PKCS_PSS_PARAMS {
            hashAlg: hash,
            mgf,
            sLen: salt_len,
        });
        Mechanism {
            ty,
            param: Param::Pss(params),
        }
    }

    /// `CKM_RSA_PKCS_OAEP` with `hash` and `mgf` (e.g. `CKM_SHA256`, `CKG_MGF1_SHA256`) and
    /// no label (`CKZ_DATA_SPECIFIED`, empty).
    pub fn rsa_oaep(hash: MechanismType, mgf: CK_RSA_PKCS_MGF_TYPE) -> Self {
        let params = Box::new(CK_RSA_PKCS_OAEP_PARAMS {
            hashAlg: hash,
            mgf,
            source: CKZ_DATA_SPECIFIED,
            pSourceData: std::ptr::null_mut(),
            ulSourceDataLen: 0,
        });
        Mechanism {
            ty: CKM_RSA_PKCS_OAEP,
            param: Param::Oaep(params),
        }
    }

    /// Pure ML-DSA / SLH-DSA with a context string and hedging choice
    /// (`CK_SIGN_ADDITIONAL_CONTEXT`). Without a context and with the default hedging,
    /// prefer [`Mechanism::new`]: not every module accepts the parameter.
    pub fn with_sign_context(ty: MechanismType, context: &[u8], hedge: Hedge) -> Self {
        let ctx: Box<[u8]> = Box::from(context);
        let params = Box::new(CK_SIGN_ADDITIONAL_CONTEXT {
            hedgeVariant: hedge.raw(),
            pContext: if ctx.is_empty() {
                std::ptr::null_mut()
            } else {
                ctx.as_ptr() as *mut u8
            },
            ulContextLen: ctx.len() as CK_ULONG,
        });
        Mechanism {
            ty,
            param: Param::SignContext {
                params,
                _context: ctx,
            },
        }
    }

    pub fn mechanism_type(&self) -> MechanismType {
        self.ty
    }

    /// The raw structure; valid while `self` lives and is not moved out of its boxes.
    pub(crate) fn raw(&self) -> CK_MECHANISM {
        let (ptr, len): (*const u8, usize) = match &self.param {
            Param::None => (std::ptr::null(), 0),
            Param::Bytes(b) => (b.as_ptr(), b.len()),
            Param::Gcm { params, .. } => (
                params.as_ref() as *const CK_GCM_PARAMS as *const u8,
                std::mem::size_of::<CK_GCM_PARAMS>(),
            ),
            Param::Pss(p) => (
                p.as_ref() as *const CK_RSA_PKCS_PSS_PARAMS as *const u8,
                std::mem::size_of::<CK_RSA_PKCS_PSS_PARAMS>(),
            ),
            Param::Oaep(p) => (
                p.as_ref() as *const CK_RSA_PKCS_OAEP_PARAMS as *const u8,
                std::mem::size_of::<CK_RSA_PKCS_OAEP_PARAMS>(),
            ),
            Param::SignContext { params, .. } => (
                params.as_ref() as *const CK_SIGN_ADDITIONAL_CONTEXT as *const u8,
                std::mem::size_of::<CK_SIGN_ADDITIONAL_CONTEXT>(),
            ),
        };
        CK_MECHANISM {
            mechanism: self.ty,
            pParameter: ptr as *mut _,
            ulParameterLen: len as CK_ULONG,
        }
    }
}
