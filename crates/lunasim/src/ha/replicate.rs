//! Replication: an object made in a group exists on every alive member with the same
//! attributes and `CKA_ID`. A key is made on one member (generated, unwrapped, derived,
//! decapsulated), its material is read there and the key is then created from that
//! material on every alive member — the member's own copy included, so all copies carry
//! exactly the caller's template. (A Luna clones the key over its secure channel; the
//! inner module here can neither clone nor wrap every key type, so lunasim moves the
//! material itself.) Token objects get a replication record in the group's store, from
//! which a member that missed them is brought up to date ([`resync`]).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use cryptoki_sys::*;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::call;
use super::group::{Group, Missed};
use super::objects::{self, has_id, Identity};
use super::session::VSession;
use crate::tpl::Tpl;

/// Attributes that only generation takes; a creation template must not carry them.
const GENERATION_ONLY: &[CK_ATTRIBUTE_TYPE] = &[CKA_VALUE_LEN, CKA_MODULUS_BITS];

/// The attributes that carry a key's material, by class and key type.
fn material(class: CK_OBJECT_CLASS, key_type: CK_KEY_TYPE) -> &'static [CK_ATTRIBUTE_TYPE] {
    match (class, key_type) {
        (CKO_SECRET_KEY, _) => &[CKA_VALUE],
        (CKO_PRIVATE_KEY, CKK_EC | CKK_EC_EDWARDS | CKK_EC_MONTGOMERY) => {
            &[CKA_EC_PARAMS, CKA_VALUE]
        }
        (CKO_PUBLIC_KEY, CKK_EC | CKK_EC_EDWARDS | CKK_EC_MONTGOMERY) => {
            &[CKA_EC_PARAMS, CKA_EC_POINT]
        }
        (CKO_PRIVATE_KEY, CKK_RSA) => &[
            CKA_MODULUS,
            CKA_PUBLIC_EXPONENT,
            CKA_PRIVATE_EXPONENT,
            CKA_PRIME_1,
            CKA_PRIME_2,
            CKA_EXPONENT_1,
            CKA_EXPONENT_2,
            CKA_COEFFICIENT,
        ],
        (CKO_PUBLIC_KEY, CKK_RSA) => &[CKA_MODULUS, CKA_PUBLIC_EXPONENT],
        (CKO_PRIVATE_KEY, CKK_ML_DSA | CKK_ML_KEM | CKK_SLH_DSA) => {
            &[CKA_PARAMETER_SET, CKA_VALUE, CKA_SEED]
        }
        (CKO_PUBLIC_KEY, CKK_ML_DSA | CKK_ML_KEM | CKK_SLH_DSA) => &[CKA_PARAMETER_SET, CKA_VALUE],
        _ => &[],
    }
}

/// The template a key is made with on its first member: readable, so its material can
/// be copied (the copies get the caller's own template).
pub fn readable(requested: &Tpl) -> Tpl {
    let mut t = requested.clone();
    t.remove(p11::names::luna::CKA_USAGE_LIMIT);
    if t.ulong(CKA_CLASS) != Some(CKO_PUBLIC_KEY) {
        t.set_bool(CKA_SENSITIVE, false);
        t.set_bool(CKA_EXTRACTABLE, true);
    }
    t
}

/// Give keys and certificates made in a group a `CKA_ID` when the caller gave none.
pub fn ensure_id(t: &mut Tpl, id: &[u8]) {
    let class = t.ulong(CKA_CLASS).unwrap_or(CKO_DATA);
    if has_id(class) && t.get(CKA_ID).is_none_or(|v| v.is_empty()) {
        t.set(CKA_ID, id.to_vec());
    }
}

/// A fresh random value from a member's RNG.
pub fn random(vs: &VSession, member: usize, n: usize) -> Result<Vec<u8>, CK_RV> {
    call::random(vs.inner(member)?, n)
}

/// A creation template holding key material (wiped when dropped).
type Material = Zeroizing<Vec<(CK_ATTRIBUTE_TYPE, Vec<u8>)>>;

/// Read the material of `made` on `member`, destroy that copy, and return the creation
/// template: the caller's template with class, key type and material.
fn take_material(
    vs: &VSession,
    member: usize,
    made: CK_OBJECT_HANDLE,
    requested: &Tpl,
) -> Result<Material, CK_RV> {
    let h = vs.inner(member)?;
    let read = || -> Result<Tpl, CK_RV> {
        let ulong = |ty| -> Result<Option<u64>, CK_RV> {
            Ok(call::attr(h, made, ty)?
                .as_deref()
                .and_then(crate::raw::as_ulong))
        };
        let class = ulong(CKA_CLASS)?.ok_or(CKR_GENERAL_ERROR)?;
        let key_type = ulong(CKA_KEY_TYPE)?.ok_or(CKR_GENERAL_ERROR)?;
        let mut t = requested.clone();
        for ty in GENERATION_ONLY {
            t.remove(*ty);
        }
        t.set_ulong(CKA_CLASS, class);
        t.set_ulong(CKA_KEY_TYPE, key_type);
        for ty in material(class, key_type) {
            if let Some(v) = call::attr(h, made, *ty)? {
                t.set(*ty, v);
            }
        }
        if material(class, key_type).is_empty()
            || t.get(CKA_VALUE)
                .or(t.get(CKA_EC_POINT))
                .or(t.get(CKA_MODULUS))
                .is_none()
        {
            eprintln!(
                "lunasim: {}: a key of type {key_type:#x} cannot be replicated (its material is not readable)",
                vs.group.name()
            );
            return Err(CKR_MECHANISM_INVALID);
        }
        Ok(t)
    };
    let r = read();
    let _ = call::destroy(h, made);
    r.map(|t| Zeroizing::new(t.0))
}

/// A secret key made on `member`: replicated to every alive member.
pub fn secret_made(
    vs: &VSession,
    member: usize,
    made: CK_OBJECT_HANDLE,
    requested: &Tpl,
) -> Result<CK_OBJECT_HANDLE, CK_RV> {
    let t = take_material(vs, member, made, requested)?;
    create_everywhere(vs, &Tpl(t.to_vec()))
}

/// A key pair made on `member`: both halves replicated to every alive member.
pub fn pair_made(
    vs: &VSession,
    member: usize,
    made: (CK_OBJECT_HANDLE, CK_OBJECT_HANDLE),
    requested: (&Tpl, &Tpl),
) -> Result<(CK_OBJECT_HANDLE, CK_OBJECT_HANDLE), CK_RV> {
    let public = take_material(vs, member, made.0, requested.0);
    let private = take_material(vs, member, made.1, requested.1);
    let (public, private) = (public?, private?);
    let vp = create_everywhere(vs, &Tpl(public.to_vec()))?;
    match create_everywhere(vs, &Tpl(private.to_vec())) {
        Ok(vs_) => Ok((vp, vs_)),
        Err(rv) => {
            destroy_everywhere(vs, vp);
            Err(rv)
        }
    }
}

/// Create an object on every alive member; a token object gets a replication record and
/// is noted as missed by the members that are down.
pub fn create_everywhere(vs: &VSession, t: &Tpl) -> Result<CK_OBJECT_HANDLE, CK_RV> {
    let g = &vs.group;
    let alive = g.alive();
    if alive.is_empty() {
        return Err(p11::names::luna::CKR_UNABLE_TO_CONNECT);
    }
    let mut made = Vec::new();
    for m in alive {
        let r = vs
            .inner(m)
            .and_then(|h| call::create(h, t).map(|o| (m, h, o)));
        match r {
            Ok(x) => {
                g.record_served(m, "C_CreateObject");
                made.push(x)
            }
            Err(rv) => {
                for (_, h, o) in made {
                    let _ = call::destroy(h, o);
                }
                return Err(rv);
            }
        }
    }
    let token = t.bool(CKA_TOKEN).unwrap_or(false);
    let identity = Identity::of_template(t);
    let uid = if token {
        let uid = new_uid(vs, made[0].0);
        if let Err(e) = save(&g.store, &uid, &identity, t) {
            eprintln!("lunasim: {}: replication record not written: {e}", g.name());
            for (_, h, o) in made {
                let _ = call::destroy(h, o);
            }
            return Err(CKR_DEVICE_ERROR);
        }
        g.missed_by_down_members(|| Missed::Created {
            uid: uid.clone(),
            identity: identity.clone(),
        });
        Some(uid)
    } else {
        None
    };
    let mut table = g.objects.lock();
    let vh = table.handle_for(&identity, token);
    if let Some(o) = table.get_mut(vh) {
        o.uid = uid;
        o.owner = (!token).then_some(vs.handle);
        o.on = made.iter().map(|(m, _, h)| (*m, *h)).collect();
    }
    Ok(vh)
}

/// Destroy an object on every alive member (the members that are down miss it).
pub fn destroy_everywhere(vs: &VSession, obj: CK_OBJECT_HANDLE) -> CK_RV {
    let g = &vs.group;
    let Some(o) = g.objects.lock().get(obj).cloned() else {
        return CKR_OBJECT_HANDLE_INVALID;
    };
    let mut first_err = None;
    let mut destroyed = 0;
    for m in g.alive() {
        let rv = vs.with_object(obj, m, |h| {
            let ih = match vs.inner(m) {
                Ok(ih) => ih,
                Err(rv) => return rv,
            };
            call::destroy(ih, h)
        });
        g.record_served(m, "C_DestroyObject");
        match rv {
            CKR_OK => destroyed += 1,
            // Missing on this member already: nothing to destroy there.
            CKR_OBJECT_HANDLE_INVALID => {}
            rv => {
                first_err.get_or_insert(rv);
            }
        }
    }
    if let Some(rv) = first_err {
        return rv;
    }
    if destroyed == 0 {
        return CKR_OBJECT_HANDLE_INVALID;
    }
    if o.token {
        if let Some(uid) = &o.uid {
            remove(&g.store, uid);
        } else {
            remove_identity(&g.store, &o.identity);
        }
        g.missed_by_down_members(|| Missed::Destroyed {
            identity: o.identity.clone(),
        });
    }
    g.objects.lock().remove(obj);
    CKR_OK
}

/// Set attributes on every alive member's copy (the members that are down miss it).
pub fn set_everywhere(vs: &VSession, obj: CK_OBJECT_HANDLE, changes: &Tpl) -> CK_RV {
    let g = &vs.group;
    let Some(o) = g.objects.lock().get(obj).cloned() else {
        return CKR_OBJECT_HANDLE_INVALID;
    };
    let mut result = CKR_OBJECT_HANDLE_INVALID;
    for m in g.alive() {
        let rv = vs.with_object(obj, m, |h| match vs.inner(m) {
            Ok(ih) => call::set(ih, h, changes),
            Err(rv) => rv,
        });
        g.record_served(m, "C_SetAttributeValue");
        match rv {
            CKR_OK => result = CKR_OK,
            CKR_OBJECT_HANDLE_INVALID => {}
            rv => return rv,
        }
    }
    if result != CKR_OK || !o.token {
        return result;
    }
    let mut identity = o.identity.clone();
    if let Some(l) = changes.get(CKA_LABEL) {
        identity.label = l.to_vec();
    }
    if let Some(id) = changes.get(CKA_ID) {
        identity.id = id.to_vec();
    }
    if let Some(uid) = &o.uid {
        if let Some((_, mut t)) = load(&g.store, uid) {
            t.merge(changes);
            let _ = save(&g.store, uid, &identity, &t);
        }
    }
    g.missed_by_down_members(|| Missed::Changed {
        identity: o.identity.clone(),
        attrs: changes.0.clone(),
    });
    if let Some(v) = g.objects.lock().get_mut(obj) {
        v.identity = identity;
    }
    CKR_OK
}

fn new_uid(vs: &VSession, member: usize) -> String {
    let r = random(vs, member, 8).unwrap_or_else(|_| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos().to_be_bytes()[8..].to_vec())
            .unwrap_or_default()
    });
    hex::encode(r)
}

// ---- replication records -------------------------------------------------------------

#[derive(Serialize, Deserialize)]
struct Record {
    identity: Identity,
    /// (attribute type, hex value): the creation template.
    attrs: Vec<(u64, String)>,
}

fn records_dir(store: &Path) -> PathBuf {
    store.join("objects")
}

/// Write a record durably (temp file, fsync, rename, fsync the directory).
pub fn save(store: &Path, uid: &str, identity: &Identity, t: &Tpl) -> std::io::Result<()> {
    let dir = records_dir(store);
    fs::create_dir_all(&dir)?;
    let r = Record {
        identity: identity.clone(),
        attrs: t.0.iter().map(|(ty, v)| (*ty, hex::encode(v))).collect(),
    };
    let text = Zeroizing::new(serde_json::to_vec(&r).map_err(std::io::Error::other)?);
    let tmp = dir.join(format!(".{uid}.tmp"));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, dir.join(format!("{uid}.json")))?;
    File::open(&dir)?.sync_all()
}

pub fn load(store: &Path, uid: &str) -> Option<(Identity, Tpl)> {
    let text = Zeroizing::new(fs::read(records_dir(store).join(format!("{uid}.json"))).ok()?);
    let r: Record = serde_json::from_slice(&text).ok()?;
    let attrs = r
        .attrs
        .into_iter()
        .map(|(ty, v)| hex::decode(v).ok().map(|v| (ty, v)))
        .collect::<Option<Vec<_>>>()?;
    Some((r.identity, Tpl(attrs)))
}

pub fn remove(store: &Path, uid: &str) {
    let _ = fs::remove_file(records_dir(store).join(format!("{uid}.json")));
}

fn remove_identity(store: &Path, identity: &Identity) {
    for (uid, id, _) in all(store) {
        if id == *identity {
            remove(store, &uid);
        }
    }
}

/// Every replication record: (uid, identity, creation template).
pub fn all(store: &Path) -> Vec<(String, Identity, Tpl)> {
    let Ok(rd) = fs::read_dir(records_dir(store)) else {
        return Vec::new();
    };
    let mut uids: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .map(str::to_string)
        })
        .collect();
    uids.sort();
    uids.into_iter()
        .filter_map(|u| load(store, &u).map(|(i, t)| (u, i, t)))
        .collect()
}

// ---- resync ---------------------------------------------------------------------------

/// Bring a member up to date: replay what it missed while it was down, then make sure
/// every object the group made exists on it (also one deleted on the member's own slot).
/// Needs the group's login (private objects are only visible logged in). Returns how many
/// changes were applied.
pub fn resync(g: &Group, member: usize) -> Result<usize, String> {
    let m = &g.members[member];
    if !m.alive() {
        return Err(format!(
            "member {} (serial {}) is down",
            member + 1,
            m.serial
        ));
    }
    let (user, pin) = match g.login.lock().as_ref() {
        Some(l) => (l.user, l.pin.clone()),
        None => {
            return Err(format!(
                "{}: log in to the group first; lunasim replicates private objects with the group's login",
                g.name()
            ))
        }
    };
    let h = call::open_session(m.slot, CKF_RW_SESSION)
        .map_err(|rv| format!("cannot open a session on member {}: {rv:#x}", member + 1))?;
    let r = (|| {
        let rv = call::login(h, user, &pin);
        if rv != CKR_OK {
            return Err(format!("login on member {} failed: {rv:#x}", member + 1));
        }
        let missed = m.state.lock().missed.clone();
        let mut applied = 0;
        let fail = |what: &str, rv: CK_RV| format!("{what} on member {}: {rv:#x}", member + 1);
        for x in &missed {
            match x {
                Missed::Created { .. } => {} // covered by the records below
                Missed::Destroyed { identity } => {
                    for token in [true] {
                        if let Some(o) =
                            objects::locate(h, identity, token).map_err(|rv| fail("search", rv))?
                        {
                            let rv = call::destroy(h, o);
                            if rv != CKR_OK {
                                return Err(fail("destroy", rv));
                            }
                            applied += 1;
                        }
                    }
                }
                Missed::Changed { identity, attrs } => {
                    if let Some(o) =
                        objects::locate(h, identity, true).map_err(|rv| fail("search", rv))?
                    {
                        let rv = call::set(h, o, &Tpl(attrs.clone()));
                        if rv != CKR_OK {
                            return Err(fail("set attributes", rv));
                        }
                        applied += 1;
                    }
                }
            }
        }
        for (_, identity, t) in all(&g.store) {
            if objects::locate(h, &identity, true)
                .map_err(|rv| fail("search", rv))?
                .is_none()
            {
                call::create(h, &t)
                    .map_err(|rv| fail(&format!("create {}", identity.describe()), rv))?;
                applied += 1;
            }
        }
        Ok(applied)
    })();
    call::close_session(h);
    let mut st = m.state.lock();
    match &r {
        Ok(_) => {
            st.missed.clear();
            st.resync_error = None;
        }
        Err(e) => st.resync_error = Some(e.clone()),
    }
    drop(st);
    g.objects.lock().forget_member(member);
    r
}
