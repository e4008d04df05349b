//! Key management and random numbers on a virtual session. A key is made on the next
//! member in turn (generated, unwrapped, derived, encapsulated or decapsulated there),
//! then replicated to every alive member ([`replicate`]); HSS keys are refused, as Luna
//! refuses keys that cannot be cloned in an HA group.

#![allow(non_snake_case)]

use cryptoki_sys::*;

use super::{give_id, put_handle, session_call, UNREACHABLE};
use crate::ha::replicate;
use crate::ha::session::VSession;
use crate::outer;
use crate::tpl::Tpl;

fn mechanism(m: *mut CK_MECHANISM) -> Option<CK_MECHANISM_TYPE> {
    // SAFETY: a non-null mechanism points to a CK_MECHANISM per contract.
    (!m.is_null()).then(|| unsafe { (*m).mechanism })
}

/// Read a caller's template.
fn template(t: *mut CK_ATTRIBUTE, n: CK_ULONG) -> Result<Tpl, CK_RV> {
    // SAFETY: the caller's template is valid for reading.
    unsafe { Tpl::from_raw(t, n) }
}

/// Make a key on the next member with `make(member session, readable template, out)`,
/// then replicate it with the caller's template.
fn make_key(
    vs: &VSession,
    name: &'static str,
    mut requested: Tpl,
    make: impl FnOnce(CK_SESSION_HANDLE, usize, &mut Tpl, &mut CK_OBJECT_HANDLE) -> CK_RV,
) -> Result<CK_OBJECT_HANDLE, CK_RV> {
    give_id(vs, &mut requested)?;
    let m = vs.group.next_member().ok_or(UNREACHABLE)?;
    let mut readable = replicate::readable(&requested);
    let mut made: CK_OBJECT_HANDLE = 0;
    let ih = vs.inner(m)?;
    let rv = make(ih, m, &mut readable, &mut made);
    vs.group.record_served(m, name);
    if rv != CKR_OK {
        return Err(rv);
    }
    replicate::secret_made(vs, m, made, &requested)
}

pub fn C_GenerateKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_GenerateKey", h, |vs| {
        if m.is_null() || out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let requested = match template(t, n) {
            Ok(t) => t,
            Err(rv) => return rv,
        };
        let r = make_key(vs, "C_GenerateKey", requested, |ih, _, gen, made| {
            gen.with_raw(|p, n| outer::C_GenerateKey(ih, m, p, n, made))
        });
        put_handle(out, r)
    })
}

#[allow(clippy::too_many_arguments)]
pub fn C_GenerateKeyPair(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    pt: *mut CK_ATTRIBUTE,
    pn: CK_ULONG,
    st: *mut CK_ATTRIBUTE,
    sn: CK_ULONG,
    ph: *mut CK_OBJECT_HANDLE,
    sh: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_GenerateKeyPair", h, |vs| {
        let Some(mech) = mechanism(m) else {
            return CKR_ARGUMENTS_BAD;
        };
        if ph.is_null() || sh.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        if mech == CKM_HSS_KEY_PAIR_GEN {
            eprintln!(
                "lunasim: {}: HSS keys cannot be cloned, so they cannot be made in an HA group; make the key on a member's own slot",
                vs.group.name()
            );
            return CKR_ACTION_PROHIBITED;
        }
        let (mut public, mut private) = match (template(pt, pn), template(st, sn)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(rv), _) | (_, Err(rv)) => return rv,
        };
        public.set_ulong(CKA_CLASS, CKO_PUBLIC_KEY);
        private.set_ulong(CKA_CLASS, CKO_PRIVATE_KEY);
        // Both halves get one ID: the caller's (either half's) or a random one.
        let id = match private.get(CKA_ID).or(public.get(CKA_ID)) {
            Some(id) if !id.is_empty() => id.to_vec(),
            _ => match vs.group.primary().map(|p| replicate::random(vs, p, 16)) {
                Some(Ok(id)) => id,
                Some(Err(rv)) => return rv,
                None => return UNREACHABLE,
            },
        };
        public.set(CKA_ID, id.clone());
        private.set(CKA_ID, id);
        let Some(member) = vs.group.next_member() else {
            return UNREACHABLE;
        };
        let ih = match vs.inner(member) {
            Ok(ih) => ih,
            Err(rv) => return rv,
        };
        let (mut gp, mut gs) = (replicate::readable(&public), replicate::readable(&private));
        let (mut hp, mut hs): (CK_OBJECT_HANDLE, CK_OBJECT_HANDLE) = (0, 0);
        let rv = gp.with_raw(|p, pn| {
            gs.with_raw(|q, qn| outer::C_GenerateKeyPair(ih, m, p, pn, q, qn, &mut hp, &mut hs))
        });
        vs.group.record_served(member, "C_GenerateKeyPair");
        if rv != CKR_OK {
            return rv;
        }
        match replicate::pair_made(vs, member, (hp, hs), (&public, &private)) {
            Ok((vp, vsk)) => {
                // SAFETY: both out pointers were checked non-null above.
                unsafe {
                    *ph = vp;
                    *sh = vsk;
                }
                CKR_OK
            }
            Err(rv) => rv,
        }
    })
}

pub fn C_WrapKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    wrapping: CK_OBJECT_HANDLE,
    key: CK_OBJECT_HANDLE,
    out: *mut CK_BYTE,
    len: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_WrapKey", h, |vs| {
        let Some(member) = vs.group.next_member() else {
            return UNREACHABLE;
        };
        let (w, k) = match (vs.resolve(wrapping, member), vs.resolve(key, member)) {
            (Ok(w), Ok(k)) => (w, k),
            (Err(_), _) => return CKR_WRAPPING_KEY_HANDLE_INVALID,
            (_, Err(_)) => return CKR_KEY_HANDLE_INVALID,
        };
        vs.on(member, "C_WrapKey", |ih| {
            outer::C_WrapKey(ih, m, w, k, out, len)
        })
    })
}

#[allow(clippy::too_many_arguments)]
pub fn C_UnwrapKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    unwrapping: CK_OBJECT_HANDLE,
    wrapped: *mut CK_BYTE,
    wl: CK_ULONG,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_UnwrapKey", h, |vs| {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let requested = match template(t, n) {
            Ok(t) => t,
            Err(rv) => return rv,
        };
        let r = make_key(
            vs,
            "C_UnwrapKey",
            requested,
            |ih, member, gen, made| match vs.resolve(unwrapping, member) {
                Ok(u) => gen.with_raw(|p, n| outer::C_UnwrapKey(ih, m, u, wrapped, wl, p, n, made)),
                Err(_) => CKR_UNWRAPPING_KEY_HANDLE_INVALID,
            },
        );
        put_handle(out, r)
    })
}

pub fn C_DeriveKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    base: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_DeriveKey", h, |vs| {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let requested = match template(t, n) {
            Ok(t) => t,
            Err(rv) => return rv,
        };
        let r = make_key(
            vs,
            "C_DeriveKey",
            requested,
            |ih, member, gen, made| match vs.resolve(base, member) {
                Ok(b) => gen.with_raw(|p, n| outer::C_DeriveKey(ih, m, b, p, n, made)),
                Err(_) => CKR_KEY_HANDLE_INVALID,
            },
        );
        put_handle(out, r)
    })
}

#[allow(clippy::too_many_arguments)]
pub fn C_EncapsulateKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    pk: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    ct: *mut CK_BYTE,
    ctl: *mut CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_EncapsulateKey", h, |vs| {
        if ct.is_null() {
            // A length query makes no key: any member answers it.
            let Some(member) = vs.group.next_member() else {
                return UNREACHABLE;
            };
            return vs.with_object(pk, member, |k| match vs.inner(member) {
                Ok(ih) => outer::C_EncapsulateKey(ih, m, k, t, n, ct, ctl, out),
                Err(rv) => rv,
            });
        }
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let requested = match template(t, n) {
            Ok(t) => t,
            Err(rv) => return rv,
        };
        let r = make_key(
            vs,
            "C_EncapsulateKey",
            requested,
            |ih, member, gen, made| match vs.resolve(pk, member) {
                Ok(k) => {
                    gen.with_raw(|p, n| outer::C_EncapsulateKey(ih, m, k, p, n, ct, ctl, made))
                }
                Err(_) => CKR_KEY_HANDLE_INVALID,
            },
        );
        put_handle(out, r)
    })
}

#[allow(clippy::too_many_arguments)]
pub fn C_DecapsulateKey(
    h: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    sk: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    ct: *mut CK_BYTE,
    ctl: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_DecapsulateKey", h, |vs| {
        if out.is_null() {
            return CKR_ARGUMENTS_BAD;
        }
        let requested = match template(t, n) {
            Ok(t) => t,
            Err(rv) => return rv,
        };
        let r = make_key(
            vs,
            "C_DecapsulateKey",
            requested,
            |ih, member, gen, made| match vs.resolve(sk, member) {
                Ok(k) => {
                    gen.with_raw(|p, n| outer::C_DecapsulateKey(ih, m, k, p, n, ct, ctl, made))
                }
                Err(_) => CKR_KEY_HANDLE_INVALID,
            },
        );
        put_handle(out, r)
    })
}

#[allow(clippy::too_many_arguments)]
pub fn C_WrapKeyAuthenticated(
    h: CK_SESSION_HANDLE,
    _m: *mut CK_MECHANISM,
    _w: CK_OBJECT_HANDLE,
    _k: CK_OBJECT_HANDLE,
    _a: *mut CK_BYTE,
    _al: CK_ULONG,
    _o: *mut CK_BYTE,
    _ol: *mut CK_ULONG,
) -> CK_RV {
    session_call("C_WrapKeyAuthenticated", h, |_| CKR_FUNCTION_NOT_SUPPORTED)
}

#[allow(clippy::too_many_arguments)]
pub fn C_UnwrapKeyAuthenticated(
    h: CK_SESSION_HANDLE,
    _m: *mut CK_MECHANISM,
    _u: CK_OBJECT_HANDLE,
    _w: *mut CK_BYTE,
    _wl: CK_ULONG,
    _t: *mut CK_ATTRIBUTE,
    _n: CK_ULONG,
    _a: *mut CK_BYTE,
    _al: CK_ULONG,
    _o: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    session_call("C_UnwrapKeyAuthenticated", h, |_| {
        CKR_FUNCTION_NOT_SUPPORTED
    })
}

pub fn C_SeedRandom(h: CK_SESSION_HANDLE, seed: *mut CK_BYTE, len: CK_ULONG) -> CK_RV {
    session_call("C_SeedRandom", h, |vs| match vs.group.next_member() {
        Some(member) => vs.on(member, "C_SeedRandom", |ih| {
            outer::C_SeedRandom(ih, seed, len)
        }),
        None => UNREACHABLE,
    })
}

pub fn C_GenerateRandom(h: CK_SESSION_HANDLE, out: *mut CK_BYTE, len: CK_ULONG) -> CK_RV {
    session_call("C_GenerateRandom", h, |vs| match vs.group.next_member() {
        Some(member) => vs.on(member, "C_GenerateRandom", |ih| {
            outer::C_GenerateRandom(ih, out, len)
        }),
        None => UNREACHABLE,
    })
}
