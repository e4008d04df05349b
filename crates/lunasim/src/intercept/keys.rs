//! Key management: key pairs (HSS generated here from the private template and the
//! token's RNG; ML-DSA with Luna's default parameter set), and the rest passed through and
//! counted; HSS keys are never wrapped.

use cryptoki_sys::*;
use p11::vendor::bin;
use zeroize::Zeroizing;

use super::session::session_info;
use crate::entry;
use crate::extmu;
use crate::hss;
use crate::objects::{self, HssKey, PrivateHalf};
use crate::raw;
use crate::roles::Action;
use crate::sim::Sim;
use crate::stats::count_if;
use crate::templates;

/// Run `f` with a raw template built from owned values.
pub(crate) fn with_template<R>(
    vals: &mut [(CK_ATTRIBUTE_TYPE, Vec<u8>)],
    f: impl FnOnce(*mut CK_ATTRIBUTE, CK_ULONG) -> R,
) -> R {
    let mut raw: Vec<CK_ATTRIBUTE> = vals
        .iter_mut()
        .map(|(ty, v)| CK_ATTRIBUTE {
            type_: *ty,
            pValue: if v.is_empty() {
                std::ptr::null_mut()
            } else {
                v.as_mut_ptr() as *mut _
            },
            ulValueLen: v.len() as CK_ULONG,
        })
        .collect();
    f(
        if raw.is_empty() {
            std::ptr::null_mut()
        } else {
            raw.as_mut_ptr()
        },
        raw.len() as CK_ULONG,
    )
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn C_GenerateKeyPair(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    pt: *mut CK_ATTRIBUTE,
    pn: CK_ULONG,
    st: *mut CK_ATTRIBUTE,
    sn: CK_ULONG,
    ph: *mut CK_OBJECT_HANDLE,
    sh: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    entry::call("C_GenerateKeyPair", |s| {
        if m.is_null() || ph.is_null() || sh.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let making = match (super::auth::making(pt, pn), super::auth::making(st, sn)) {
            (Action::Use, Action::Use) => Action::Use,
            _ => Action::Create,
        };
        if let Some(rv) = super::auth::refusal(s, h, making) {
            return rv;
        }
        // SAFETY: m is non-null and points to a CK_MECHANISM.
        let mech = unsafe { (*m).mechanism };
        // SAFETY: the caller's templates are valid for reading.
        let (mut pubv, mut privv) = match unsafe {
            (
                raw::values(raw::template(pt, pn)),
                raw::values(raw::template(st, sn)),
            )
        } {
            (Ok(a), Ok(b)) => (a, b),
            (Err(rv), _) | (_, Err(rv)) => return rv,
        };
        let rv = if mech == CKM_HSS_KEY_PAIR_GEN {
            hss_keygen(s, h, &pubv, &privv, ph, sh)
        } else if mech == CKM_ML_DSA_KEY_PAIR_GEN {
            templates::apply_ml_dsa_default(&mut pubv, &mut privv);
            match ml_dsa_keygen(s, h, pubv, privv) {
                Ok((p, q)) => {
                    // SAFETY: both out pointers were checked non-null above.
                    unsafe {
                        *ph = p;
                        *sh = q;
                    }
                    CKR_OK
                }
                Err(rv) => rv,
            }
        } else {
            match s.f().C_GenerateKeyPair {
                // SAFETY: pass-through.
                Some(f) => unsafe { f(h, m, pt, pn, st, sn, ph, sh) },
                None => CKR_FUNCTION_NOT_SUPPORTED,
            }
        };
        count_if(rv, true, bin::KEY_GENERATION)
    })
}

/// An ML-DSA key pair made as [`crate::extmu`] describes: the seed from the token's RNG,
/// the pair created in the inner module from it, the seed kept for external μ.
fn ml_dsa_keygen(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    mut pubv: templates::Values,
    mut privv: templates::Values,
) -> Result<(CK_OBJECT_HANDLE, CK_OBJECT_HANDLE), CK_RV> {
    let set = templates::ml_dsa_pair(&pubv, &privv)?;
    let (slot, _, _) = session_info(s, h)?;
    let mut seed = Zeroizing::new([0u8; 32]);
    let rng = s.f().C_GenerateRandom.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
    // SAFETY: seed has 32 writable bytes.
    let rv = unsafe { rng(h, seed.as_mut_ptr(), 32) };
    if rv != CKR_OK {
        return Err(rv);
    }
    let pk = extmu::public_key(set, &seed).ok_or(CKR_ATTRIBUTE_VALUE_INVALID)?;
    let ul = |v: CK_ULONG| v.to_ne_bytes().to_vec();
    pubv.retain(|(t, _)| !matches!(*t, CKA_CLASS | CKA_KEY_TYPE | CKA_VALUE));
    pubv.extend([
        (CKA_CLASS, ul(CKO_PUBLIC_KEY)),
        (CKA_KEY_TYPE, ul(CKK_ML_DSA)),
        (CKA_VALUE, pk),
    ]);
    privv.retain(|(t, _)| !matches!(*t, CKA_CLASS | CKA_KEY_TYPE | CKA_VALUE | CKA_SEED));
    if raw::find(&privv, CKA_SENSITIVE).is_none() {
        // A Luna's private keys are sensitive unless asked otherwise.
        privv.push((CKA_SENSITIVE, vec![CK_TRUE]));
    }
    privv.extend([
        (CKA_CLASS, ul(CKO_PRIVATE_KEY)),
        (CKA_KEY_TYPE, ul(CKK_ML_DSA)),
        (CKA_SEED, seed.to_vec()),
    ]);
    let privv = Zeroizing::new(privv);
    let create = s.f().C_CreateObject.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
    let destroy = |o| {
        if let Some(d) = s.f().C_DestroyObject {
            // SAFETY: an object this call just created, on the caller's session.
            let _ = unsafe { d(h, o) };
        }
    };
    let make = |vals: &templates::Values| {
        let mut vals = Zeroizing::new(vals.clone());
        let mut o: CK_OBJECT_HANDLE = 0;
        // SAFETY: a template of owned values alive for the call; `o` is ours.
        let rv = with_template(&mut vals, |t, n| unsafe { create(h, t, n, &mut o) });
        (rv == CKR_OK).then_some(o).ok_or(rv)
    };
    let p = make(&pubv)?;
    let q = make(&privv).inspect_err(|_| destroy(p))?;
    let recorded = extmu::record_pair(s, h, slot, (p, q), set, &seed);
    if let Err(rv) = recorded {
        destroy(q);
        destroy(p);
        return Err(rv);
    }
    Ok((p, q))
}

fn hss_keygen(
    s: &Sim,
    h: CK_SESSION_HANDLE,
    pubv: &[(CK_ATTRIBUTE_TYPE, Vec<u8>)],
    privv: &[(CK_ATTRIBUTE_TYPE, Vec<u8>)],
    ph: *mut CK_OBJECT_HANDLE,
    sh: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    let req = match templates::hss_request(pubv, privv) {
        Ok(r) => r,
        Err(rv) => return rv,
    };
    let (slot, user, rw) = match session_info(s, h) {
        Ok(v) => v,
        Err(rv) => return rv,
    };
    if !user {
        return CKR_USER_NOT_LOGGED_IN;
    }
    if req.token && !rw {
        return CKR_SESSION_READ_ONLY;
    }
    // The seed comes from the token's own RNG.
    let mut seed = Zeroizing::new(vec![0u8; 32]);
    let Some(rng) = s.f().C_GenerateRandom else {
        return CKR_FUNCTION_NOT_SUPPORTED;
    };
    // SAFETY: seed has 32 writable bytes.
    let rv = unsafe { rng(h, seed.as_mut_ptr(), 32) };
    if rv != CKR_OK {
        return rv;
    }
    // Counted for `{"op":"hss_progress"}` while the trees are built (all cores).
    let running = hss::progress::start(&req.label, hss::keygen_leaves(&req.levels));
    let new = match hss::keygen(&req.levels, &seed, &running) {
        Ok(v) => v,
        Err(rv) => return rv,
    };
    let mut objects = s.objects.lock();
    objects.ensure_loaded(&s.store, slot);
    let handle = objects.next_handle();
    let uid = hex::encode(&seed[..8]) + &format!("{handle:x}");
    let key = HssKey {
        uid,
        slot,
        token: req.token,
        owner: (!req.token).then_some(h),
        label: req.label,
        id: req.id,
        public_key: new.public_key,
        private: Some(PrivateHalf {
            seed: new.seed,
            position: Some(vec![0; req.levels.len()]),
            engine: Some(new.engine),
        }),
        levels: req.levels,
        public_present: true,
        handle,
    };
    if key.persist_trees(&s.store).is_err() || key.persist(&s.store).is_err() {
        return CKR_DEVICE_ERROR;
    }
    drop(running);
    let (p, q) = (key.public_handle(), key.private_handle());
    objects.keys.push(key);
    // SAFETY: both out pointers were checked non-null by the caller function.
    unsafe {
        *ph = p;
        *sh = q;
    }
    CKR_OK
}

pub extern "C" fn C_WrapKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    wrapping: CK_OBJECT_HANDLE,
    key: CK_OBJECT_HANDLE,
    out: *mut CK_BYTE,
    len: *mut CK_ULONG,
) -> CK_RV {
    entry::call("C_WrapKey", |s| {
        if let Some(rv) = super::auth::refusal(s, h, Action::Wrap) {
            return rv;
        }
        if objects::is_ours(key) {
            return CKR_KEY_UNEXTRACTABLE;
        }
        if objects::is_ours(wrapping) {
            return CKR_WRAPPING_KEY_TYPE_INCONSISTENT;
        }
        if let Err(rv) = crate::trust::may_wrap(s, h, wrapping, key) {
            return rv;
        }
        let mut translated = CK_MECHANISM::default();
        let m = match luna_kwp(m, &mut translated) {
            Ok(m) => m,
            Err(rv) => return rv,
        };
        match s.f().C_WrapKey {
            // SAFETY: pass-through; `m` is the caller's mechanism or `translated`, alive here.
            Some(f) => unsafe { f(h, m, wrapping, key, out, len) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

/// Luna's vendor `CKM_AES_KWP` (AES key wrap with padding, RFC 5649).
pub const LUNA_AES_KWP: CK_MECHANISM_TYPE = p11::names::luna::CKM_AES_KWP as CK_MECHANISM_TYPE;

/// Luna names the padded AES key wrap `CKM_AES_KWP` (a vendor mechanism, parameterless); the
/// inner module knows it as PKCS#11 3.0's `CKM_AES_KEY_WRAP_KWP`, which Luna's table lacks
/// (so lunasim refuses it, as it is absent from its mechanism list). Returns the mechanism
/// to pass on: `m` itself, or `store` filled with the standard one.
pub(super) fn luna_kwp(
    m: *mut CK_MECHANISM,
    store: &mut CK_MECHANISM,
) -> Result<*mut CK_MECHANISM, CK_RV> {
    if m.is_null() {
        return Ok(m);
    }
    // SAFETY: non-null, per contract a CK_MECHANISM the caller keeps alive for the call.
    let given = unsafe { &*m };
    match given.mechanism {
        CKM_AES_KEY_WRAP_KWP | CKM_AES_KEY_WRAP_PKCS7 => Err(CKR_MECHANISM_INVALID),
        LUNA_AES_KWP => {
            *store = CK_MECHANISM {
                mechanism: CKM_AES_KEY_WRAP_KWP,
                pParameter: given.pParameter,
                ulParameterLen: given.ulParameterLen,
            };
            Ok(store)
        }
        _ => Ok(m),
    }
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn C_UnwrapKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    unwrapping: CK_OBJECT_HANDLE,
    wrapped: *mut CK_BYTE,
    wl: CK_ULONG,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    entry::call("C_UnwrapKey", |s| {
        if let Some(rv) = super::auth::refusal(s, h, super::auth::making(t, n)) {
            return rv;
        }
        let mut translated = CK_MECHANISM::default();
        let m = match luna_kwp(m, &mut translated) {
            Ok(m) => m,
            Err(rv) => return rv,
        };
        match s.f().C_UnwrapKey {
            // SAFETY: pass-through; `m` is the caller's mechanism or `translated`, alive here.
            Some(f) => unsafe { f(h, m, unwrapping, wrapped, wl, t, n, out) },
            None => CKR_FUNCTION_NOT_SUPPORTED,
        }
    })
}

guarded!(C_GenerateKey, super::auth::making(t, n), h, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, t: *mut CK_ATTRIBUTE, n: CK_ULONG, out: *mut CK_OBJECT_HANDLE), bin::KEY_GENERATION, out);
guarded!(C_DeriveKey, Use, h, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, base: CK_OBJECT_HANDLE, t: *mut CK_ATTRIBUTE, n: CK_ULONG, out: *mut CK_OBJECT_HANDLE), bin::KEY_DERIVATION, out);
guarded!(C_EncapsulateKey, Use, h, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, pk: CK_OBJECT_HANDLE, t: *mut CK_ATTRIBUTE, n: CK_ULONG, ct: *mut CK_BYTE, ctl: *mut CK_ULONG, out: *mut CK_OBJECT_HANDLE), bin::KEY_DERIVATION, ct);
guarded!(C_DecapsulateKey, Use, h, (h: CK_SESSION_HANDLE, m: *mut CK_MECHANISM, sk: CK_OBJECT_HANDLE, t: *mut CK_ATTRIBUTE, n: CK_ULONG, ct: *mut CK_BYTE, ctl: CK_ULONG, out: *mut CK_OBJECT_HANDLE), bin::KEY_DERIVATION, out);
