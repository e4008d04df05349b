//! Luna's external-μ ML-DSA mechanism, `CKM_EXTMU_ML_DSA` (vendor 0x80000175, firmware
//! 7.9.0 and later): `C_Sign` and `C_Verify` take μ — FIPS 204's 64-byte
//! SHAKE256(tr ‖ M′), computed by the caller over a message of any size — instead of the
//! message. The inner module (Kryoptic over OpenSSL 3.5) has no such mechanism, so lunasim
//! does it with RustCrypto's `ml-dsa`.
//!
//! Signing from μ needs the private key, which the inner module never hands out. So
//! lunasim makes ML-DSA key pairs itself ([`keygen`]): the 32-byte seed ξ from the token's
//! RNG, the pair created in the inner module from it (`CKA_SEED` on the private key,
//! `CKA_VALUE` on the public key) so every standard ML-DSA mechanism still runs there, and
//! the seed kept beside it — token keys in a book per token
//! (`<store>/mldsa/<token serial>.json`, hex, written durably as the HSS key files are),
//! session keys in memory — keyed by the private key's `CKA_UNIQUE_ID`. Objects created so
//! answer as generated ones do on a Luna: `CKA_LOCAL` and `CKA_KEY_GEN_MECHANISM` on both
//! halves, `CKA_ALWAYS_SENSITIVE` / `CKA_NEVER_EXTRACTABLE` as the private key was made
//! ([`fill_generated`]). A private key lunasim did not make (imported, unwrapped, made by
//! an earlier lunasim) has no seed here: `CKM_EXTMU_ML_DSA` refuses it with
//! `CKR_KEY_FUNCTION_NOT_PERMITTED` rather than sign wrongly. Verification needs only the
//! public key and works with any ML-DSA public key.
//!
//! Signatures are hedged (FIPS 204's default, and PKCS#11 3.2's `CKH_HEDGE_PREFERRED`):
//! the 32 random bytes come from the token's RNG. A `CK_SIGN_ADDITIONAL_CONTEXT` parameter
//! with `CKH_DETERMINISTIC_REQUIRED` asks for the deterministic variant; a context string
//! is refused (it is inside μ already).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cryptoki_sys::*;
use ml_dsa::{
    Keypair, MlDsa44, MlDsa65, MlDsa87, MlDsaParams, Signature, SigningKey, VerifyingKey,
};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::raw;
use crate::sim::Sim;

/// Luna's vendor mechanism number.
pub const CKM_EXTMU_ML_DSA: CK_MECHANISM_TYPE =
    p11::names::luna::CKM_EXTMU_ML_DSA as CK_MECHANISM_TYPE;
/// Bytes of μ.
pub const MU_LEN: usize = 64;

/// Does the configured firmware have the mechanism (7.9.0 and later)?
pub fn offered(s: &Sim) -> bool {
    let (major, minor, _) = s.config.firmware();
    (major, minor) >= (7, 9)
}

/// What lunasim keeps about one object of a key pair it made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Made {
    /// The seed ξ (hex), on the private key's entry only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// `CKP_ML_DSA_44/65/87`.
    pub set: u64,
    /// The private key's `CKA_SENSITIVE` when it was made.
    #[serde(default)]
    pub always_sensitive: bool,
    /// The private key's `CKA_EXTRACTABLE` was false when it was made.
    #[serde(default)]
    pub never_extractable: bool,
}

type Book = BTreeMap<String, Made>;

#[derive(Default)]
struct State {
    /// Token books, with the modification time they were read at.
    books: HashMap<PathBuf, (Option<std::time::SystemTime>, Book)>,
    /// Session objects' entries (gone with the process).
    session: Book,
}

fn state() -> &'static Mutex<State> {
    static S: OnceLock<Mutex<State>> = OnceLock::new();
    S.get_or_init(Default::default)
}

fn modified(p: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The token book at `path`, read again when another process changed it.
fn book<'a>(st: &'a mut State, path: &Path) -> &'a mut Book {
    let now = modified(path);
    let fresh = st.books.get(path).is_some_and(|(t, _)| *t == now);
    if !fresh {
        let b = std::fs::read(path)
            .ok()
            .and_then(|t| serde_json::from_slice::<Book>(&t).ok())
            .unwrap_or_default();
        st.books.insert(path.to_path_buf(), (now, b));
    }
    &mut st.books.get_mut(path).expect("inserted").1
}

fn book_path(s: &Sim, slot: CK_SLOT_ID) -> Option<PathBuf> {
    crate::books::path(s, slot, "mldsa")
}

fn session_slot(s: &Sim, h: CK_SESSION_HANDLE) -> Option<CK_SLOT_ID> {
    s.sessions.lock().get(&h).map(|st| st.slot)
}

/// lunasim's entry for an inner object, if lunasim made it.
pub fn made(s: &Sim, h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> Option<Made> {
    let uid = crate::usage::unique_id(s, h, obj)?;
    let mut st = state().lock();
    if let Some(m) = st.session.get(&uid) {
        return Some(m.clone());
    }
    let path = book_path(s, session_slot(s, h)?)?;
    book(&mut st, &path).get(&uid).cloned()
}

/// Record the entries of a pair just made; token entries reach the disk before this
/// returns.
fn record(
    s: &Sim,
    slot: CK_SLOT_ID,
    token: bool,
    entries: Vec<(String, Made)>,
) -> std::io::Result<()> {
    let mut st = state().lock();
    if !token {
        st.session.extend(entries);
        return Ok(());
    }
    let path = book_path(s, slot).ok_or_else(|| std::io::Error::other("no token serial"))?;
    let b = book(&mut st, &path);
    b.extend(entries);
    let copy = b.clone();
    crate::books::save(&path, &copy)?;
    st.books.insert(path.clone(), (modified(&path), copy));
    Ok(())
}

/// Record a pair [`crate::intercept`]'s key generation just created from `seed`: the
/// private key's entry with the seed and how it was made, the public key's without.
pub fn record_pair(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    slot: CK_SLOT_ID,
    (public, private): (CK_OBJECT_HANDLE, CK_OBJECT_HANDLE),
    set: u64,
    seed: &[u8; 32],
) -> Result<(), CK_RV> {
    let a = read(s, h, private, &[CKA_TOKEN, CKA_SENSITIVE, CKA_EXTRACTABLE]);
    let (Some(pu), Some(pr)) = (
        crate::usage::unique_id(s, h, public),
        crate::usage::unique_id(s, h, private),
    ) else {
        return Err(CKR_DEVICE_ERROR);
    };
    let token = bool_of(&a[0]).unwrap_or(false);
    let always_sensitive = bool_of(&a[1]).unwrap_or(false);
    let never_extractable = !bool_of(&a[2]).unwrap_or(true);
    let entry = |seed: Option<String>| Made {
        seed,
        set,
        always_sensitive,
        never_extractable,
    };
    let public_token = bool_of(&read(s, h, public, &[CKA_TOKEN])[0]).unwrap_or(false);
    let mut entries = vec![(pr, entry(Some(hex::encode(seed))))];
    let public_entry = (pu, entry(None));
    if public_token == token {
        entries.push(public_entry);
    } else {
        record(s, slot, public_token, vec![public_entry]).map_err(|_| CKR_DEVICE_ERROR)?;
    }
    record(s, slot, token, entries).map_err(|_| CKR_DEVICE_ERROR)
}

/// An object is being destroyed: forget its entry (`uid` read before it went).
pub fn forget(s: &Sim, slot: Option<CK_SLOT_ID>, uid: &str) {
    let mut st = state().lock();
    if st.session.remove(uid).is_some() {
        return;
    }
    let Some(path) = slot.and_then(|slot| book_path(s, slot)) else {
        return;
    };
    let b = book(&mut st, &path);
    if b.remove(uid).is_some() {
        let copy = b.clone();
        let _ = crate::books::save(&path, &copy);
        st.books.insert(path.clone(), (modified(&path), copy));
    }
}

/// A new initialization: session objects are gone, token books are read from disk again.
pub fn reset() {
    *state().lock() = State::default();
}

/// The token was initialized again: its book goes with its objects.
pub fn forget_slot(s: &Sim, slot: CK_SLOT_ID) {
    if let Some(path) = book_path(s, slot) {
        let _ = std::fs::remove_file(&path);
        state().lock().books.remove(&path);
    }
}

/// The public key and signature sizes of a parameter set.
fn sizes(set: u64) -> Option<(usize, usize)> {
    match set {
        CKP_ML_DSA_44 => Some((1312, 2420)),
        CKP_ML_DSA_65 => Some((1952, 3309)),
        CKP_ML_DSA_87 => Some((2592, 4627)),
        _ => None,
    }
}

pub fn signature_len(set: u64) -> Option<usize> {
    sizes(set).map(|(_, s)| s)
}

/// The encoded public key of the seed's key pair.
pub fn public_key(set: u64, seed: &[u8; 32]) -> Option<Vec<u8>> {
    fn pk<P: MlDsaParams>(seed: &[u8; 32]) -> Vec<u8> {
        SigningKey::<P>::from_seed(&(*seed).into())
            .verifying_key()
            .encode()
            .to_vec()
    }
    Some(match set {
        CKP_ML_DSA_44 => pk::<MlDsa44>(seed),
        CKP_ML_DSA_65 => pk::<MlDsa65>(seed),
        CKP_ML_DSA_87 => pk::<MlDsa87>(seed),
        _ => return None,
    })
}

/// The 32 random bytes of one hedged signature, handed to `ml-dsa` as its RNG.
struct Rnd(Option<Zeroizing<[u8; 32]>>);

#[derive(Debug)]
struct Drained;

impl std::fmt::Display for Drained {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("asked for more randomness than one signature takes")
    }
}

impl std::error::Error for Drained {}

impl rand_core::TryRng for Rnd {
    type Error = Drained;
    fn try_next_u32(&mut self) -> Result<u32, Drained> {
        Err(Drained)
    }
    fn try_next_u64(&mut self) -> Result<u64, Drained> {
        Err(Drained)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Drained> {
        match self.0.take() {
            Some(r) if dst.len() == r.len() => {
                dst.copy_from_slice(&r[..]);
                Ok(())
            }
            _ => Err(Drained),
        }
    }
}

impl rand_core::TryCryptoRng for Rnd {}

/// FIPS 204 Algorithm 2 from μ (step 6 done by the caller): hedged with `rnd`, or
/// deterministic without.
pub fn sign_mu(
    set: u64,
    seed: &[u8; 32],
    mu: &[u8; MU_LEN],
    rnd: Option<Zeroizing<[u8; 32]>>,
) -> Option<Vec<u8>> {
    fn sign<P: MlDsaParams>(
        seed: &[u8; 32],
        mu: &[u8; MU_LEN],
        rnd: Option<Zeroizing<[u8; 32]>>,
    ) -> Option<Vec<u8>> {
        let sk = SigningKey::<P>::from_seed(&(*seed).into());
        let key = sk.expanded_key();
        let mu = (*mu).into();
        let sig = match rnd {
            Some(r) => key.sign_mu_randomized(&mu, &mut Rnd(Some(r))).ok()?,
            None => key.sign_mu_deterministic(&mu),
        };
        Some(sig.encode().to_vec())
    }
    match set {
        CKP_ML_DSA_44 => sign::<MlDsa44>(seed, mu, rnd),
        CKP_ML_DSA_65 => sign::<MlDsa65>(seed, mu, rnd),
        CKP_ML_DSA_87 => sign::<MlDsa87>(seed, mu, rnd),
        _ => None,
    }
}

/// FIPS 204 Algorithm 3 from μ.
pub fn verify_mu(set: u64, public_key: &[u8], mu: &[u8; MU_LEN], sig: &[u8]) -> bool {
    fn verify<P: MlDsaParams>(public_key: &[u8], mu: &[u8; MU_LEN], sig: &[u8]) -> bool {
        let (Ok(pk), Ok(sig)) = (public_key.try_into(), Signature::<P>::try_from(sig)) else {
            return false;
        };
        VerifyingKey::<P>::decode(pk).verify_mu(&(*mu).into(), &sig)
    }
    if sizes(set).map(|(pk, _)| pk) != Some(public_key.len()) {
        return false;
    }
    match set {
        CKP_ML_DSA_44 => verify::<MlDsa44>(public_key, mu, sig),
        CKP_ML_DSA_65 => verify::<MlDsa65>(public_key, mu, sig),
        CKP_ML_DSA_87 => verify::<MlDsa87>(public_key, mu, sig),
        _ => false,
    }
}

/// An external-μ operation in progress on a session.
pub enum Op {
    Sign {
        set: u64,
        seed: Zeroizing<[u8; 32]>,
        hedged: bool,
        data: Vec<u8>,
    },
    Verify {
        set: u64,
        public_key: Vec<u8>,
        data: Vec<u8>,
    },
}

/// Read attributes of an inner object through the caller's session: each value, or none
/// when the inner module does not give it.
pub fn read(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    types: &[CK_ATTRIBUTE_TYPE],
) -> Vec<Option<Vec<u8>>> {
    let Some(f) = s.f().C_GetAttributeValue else {
        return vec![None; types.len()];
    };
    types
        .iter()
        .map(|ty| {
            let mut a = CK_ATTRIBUTE {
                type_: *ty,
                pValue: std::ptr::null_mut(),
                ulValueLen: 0,
            };
            // SAFETY: a length query on one attribute of our own.
            if unsafe { f(h, obj, &mut a, 1) } != CKR_OK
                || a.ulValueLen == CK_UNAVAILABLE_INFORMATION
            {
                return None;
            }
            let mut v = vec![0u8; a.ulValueLen as usize];
            a.pValue = v.as_mut_ptr() as *mut _;
            // SAFETY: `v` has `ulValueLen` writable bytes.
            (unsafe { f(h, obj, &mut a, 1) } == CKR_OK).then(|| {
                v.truncate(a.ulValueLen as usize);
                v
            })
        })
        .collect()
}

/// Whether the mechanism's parameter asks for a hedged signature: none (or a
/// `CK_SIGN_ADDITIONAL_CONTEXT` without a context) is accepted; anything else is
/// `CKR_MECHANISM_PARAM_INVALID`.
pub fn hedged(m: &CK_MECHANISM) -> Result<bool, CK_RV> {
    if m.pParameter.is_null() || m.ulParameterLen == 0 {
        return Ok(true);
    }
    if m.ulParameterLen as usize != std::mem::size_of::<CK_SIGN_ADDITIONAL_CONTEXT>() {
        return Err(CKR_MECHANISM_PARAM_INVALID);
    }
    // SAFETY: the caller's parameter has the size of the struct it claims to be.
    let p = unsafe { std::ptr::read_unaligned(m.pParameter as *const CK_SIGN_ADDITIONAL_CONTEXT) };
    if p.ulContextLen != 0 {
        return Err(CKR_MECHANISM_PARAM_INVALID);
    }
    match p.hedgeVariant {
        CKH_HEDGE_PREFERRED | CKH_HEDGE_REQUIRED => Ok(true),
        CKH_DETERMINISTIC_REQUIRED => Ok(false),
        _ => Err(CKR_MECHANISM_PARAM_INVALID),
    }
}

fn ulong_of(v: &Option<Vec<u8>>) -> Option<u64> {
    v.as_deref().and_then(raw::as_ulong)
}

fn bool_of(v: &Option<Vec<u8>>) -> Option<bool> {
    v.as_deref().and_then(raw::as_bool)
}

/// `C_SignInit` with `CKM_EXTMU_ML_DSA`: the key must be an ML-DSA private key allowed to
/// sign, and one lunasim made (its seed is here).
pub fn sign_init(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    m: &CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> Result<Op, CK_RV> {
    let hedged = hedged(m)?;
    let a = read(s, h, key, &[CKA_CLASS, CKA_KEY_TYPE, CKA_SIGN]);
    if ulong_of(&a[0]).is_none() {
        return Err(CKR_KEY_HANDLE_INVALID);
    }
    if ulong_of(&a[0]) != Some(CKO_PRIVATE_KEY) || ulong_of(&a[1]) != Some(CKK_ML_DSA) {
        return Err(CKR_KEY_TYPE_INCONSISTENT);
    }
    if bool_of(&a[2]) != Some(true) {
        return Err(CKR_KEY_FUNCTION_NOT_PERMITTED);
    }
    let made = made(s, h, key).and_then(|m| {
        let seed: [u8; 32] = hex::decode(m.seed.as_deref()?).ok()?.try_into().ok()?;
        Some((m.set, Zeroizing::new(seed)))
    });
    let Some((set, seed)) = made else {
        eprintln!(
            "lunasim: CKM_EXTMU_ML_DSA signs with ML-DSA keys lunasim generated; this key was imported or made elsewhere (no seed): CKR_KEY_FUNCTION_NOT_PERMITTED"
        );
        return Err(CKR_KEY_FUNCTION_NOT_PERMITTED);
    };
    Ok(Op::Sign {
        set,
        seed,
        hedged,
        data: Vec::new(),
    })
}

/// `C_VerifyInit` with `CKM_EXTMU_ML_DSA`: any ML-DSA public key allowed to verify.
pub fn verify_init(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    m: &CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> Result<Op, CK_RV> {
    hedged(m)?;
    let a = read(
        s,
        h,
        key,
        &[
            CKA_CLASS,
            CKA_KEY_TYPE,
            CKA_VERIFY,
            CKA_PARAMETER_SET,
            CKA_VALUE,
        ],
    );
    if ulong_of(&a[0]).is_none() {
        return Err(CKR_KEY_HANDLE_INVALID);
    }
    if ulong_of(&a[0]) != Some(CKO_PUBLIC_KEY) || ulong_of(&a[1]) != Some(CKK_ML_DSA) {
        return Err(CKR_KEY_TYPE_INCONSISTENT);
    }
    if bool_of(&a[2]) != Some(true) {
        return Err(CKR_KEY_FUNCTION_NOT_PERMITTED);
    }
    let (Some(set), Some(public_key)) = (ulong_of(&a[3]), a[4].clone()) else {
        return Err(CKR_KEY_HANDLE_INVALID);
    };
    if sizes(set).map(|(pk, _)| pk) != Some(public_key.len()) {
        return Err(CKR_KEY_TYPE_INCONSISTENT);
    }
    Ok(Op::Verify {
        set,
        public_key,
        data: Vec::new(),
    })
}

/// The attributes lunasim answers for the objects of pairs it made.
pub fn is_generated_attribute(ty: CK_ATTRIBUTE_TYPE) -> bool {
    matches!(
        ty,
        CKA_LOCAL | CKA_KEY_GEN_MECHANISM | CKA_ALWAYS_SENSITIVE | CKA_NEVER_EXTRACTABLE
    )
}

/// After the inner module answered `C_GetAttributeValue` for an object of a pair lunasim
/// made, put in what a generated key answers: `CKA_LOCAL` true, `CKA_KEY_GEN_MECHANISM`
/// `CKM_ML_DSA_KEY_PAIR_GEN`, and on the private key `CKA_ALWAYS_SENSITIVE` and
/// `CKA_NEVER_EXTRACTABLE` as it was made. Returns the call's answer with those fixed.
///
/// # Safety
/// Each attribute's `pValue` must be NULL or point to `ulValueLen` writable bytes, the
/// lengths being the caller's (`asked`, read before the inner module overwrote them).
pub unsafe fn fill_generated(
    made: &Made,
    attrs: &mut [CK_ATTRIBUTE],
    asked: &[(usize, CK_ULONG)],
    rv: CK_RV,
) -> CK_RV {
    let private = made.seed.is_some();
    let mut failed = false;
    for (i, a) in attrs.iter_mut().enumerate() {
        let value: Vec<u8> = match a.type_ {
            CKA_LOCAL => vec![CK_TRUE],
            CKA_KEY_GEN_MECHANISM => CKM_ML_DSA_KEY_PAIR_GEN.to_ne_bytes().to_vec(),
            CKA_ALWAYS_SENSITIVE if private => vec![made.always_sensitive as u8],
            CKA_NEVER_EXTRACTABLE if private => vec![made.never_extractable as u8],
            _ => {
                failed |= a.ulValueLen == CK_UNAVAILABLE_INFORMATION;
                continue;
            }
        };
        let room = asked.iter().find(|(j, _)| *j == i).map(|(_, l)| *l);
        if a.pValue.is_null() {
            a.ulValueLen = value.len() as CK_ULONG;
        } else if room.is_some_and(|r| (r as usize) >= value.len()) {
            // SAFETY: pValue has the caller's `room >= value.len()` writable bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(value.as_ptr(), a.pValue as *mut u8, value.len())
            };
            a.ulValueLen = value.len() as CK_ULONG;
        } else {
            a.ulValueLen = CK_UNAVAILABLE_INFORMATION;
            return CKR_BUFFER_TOO_SMALL;
        }
    }
    if failed {
        rv
    } else {
        CKR_OK
    }
}

/// The caller's buffer lengths of the attributes [`fill_generated`] may answer.
pub fn asked(attrs: &[CK_ATTRIBUTE]) -> Vec<(usize, CK_ULONG)> {
    attrs
        .iter()
        .enumerate()
        .filter(|(_, a)| is_generated_attribute(a.type_))
        .map(|(i, a)| (i, a.ulValueLen))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_from_mu_verify_from_mu_and_as_pure_ml_dsa() {
        let seed = [9u8; 32];
        for set in [CKP_ML_DSA_44, CKP_ML_DSA_65, CKP_ML_DSA_87] {
            let pk = public_key(set, &seed).unwrap();
            assert_eq!(Some(pk.len()), sizes(set).map(|s| s.0));
            let mu = [5u8; MU_LEN];
            let hedged = sign_mu(set, &seed, &mu, Some(Zeroizing::new([1u8; 32]))).unwrap();
            let det = sign_mu(set, &seed, &mu, None).unwrap();
            assert_eq!(Some(det.len()), signature_len(set));
            assert_ne!(hedged, det, "the random bytes change the signature");
            assert!(verify_mu(set, &pk, &mu, &hedged));
            assert!(verify_mu(set, &pk, &mu, &det));
            assert!(!verify_mu(set, &pk, &[6u8; MU_LEN], &det));
        }
    }
}
