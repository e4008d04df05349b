//! Luna's per-key usage limits (thalesdocs Luna 7 SDK, "Object Usage Count"):
//! `CKA_USAGE_LIMIT` (CKA_VENDOR_DEFINED + 0x200) is the number of cryptographic
//! operations a key may perform, 1 to 0xFFFFFFFF; setting it also sets
//! `CKA_USAGE_COUNT` (CKA_VENDOR_DEFINED + 0x101) to 0; every sign, verify, encrypt and
//! decrypt with the key counts one; once the count reaches the limit the key answers
//! `CKR_KEY_NOT_ACTIVE`. The Crypto Officer (or the SO) sets the limit, on a read-write
//! session.
//!
//! The inner module knows neither attribute, so lunasim keeps them: one book per token
//! (`<store>/usage/<token serial>.json`, the member's store for an HA member), keyed by
//! the object's `CKA_UNIQUE_ID`, written durably after every counted use — the count
//! survives restarts, and a book another process wrote is read again before it is used. A
//! use is reserved when its operation starts, so concurrent sessions cannot overrun the
//! limit.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cryptoki_sys::*;
use p11::names::luna::{CKA_USAGE_COUNT, CKA_USAGE_LIMIT, CKR_KEY_NOT_ACTIVE};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::raw;
use crate::sim::{self, Sim};
use crate::tpl::Tpl;

/// The largest limit Luna accepts.
pub const MAX_LIMIT: u64 = 0xFFFF_FFFF;

/// The operations that count a use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Use {
    Sign,
    Verify,
    Encrypt,
    Decrypt,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
struct Entry {
    limit: u64,
    count: u64,
}

/// A key in a book: the book's file and the key's `CKA_UNIQUE_ID`.
type KeyRef = (PathBuf, String);

/// A token's book as last read or written, with the file's modification time: another
/// process using the same token (a second client) may have written it since.
struct Book {
    keys: BTreeMap<String, Entry>,
    seen: Option<std::time::SystemTime>,
}

#[derive(Default)]
struct State {
    /// Slot → its token's book (the token serial is asked once per slot).
    paths: HashMap<CK_SLOT_ID, PathBuf>,
    books: HashMap<PathBuf, Book>,
    /// Uses reserved by operations in progress.
    reserved: HashMap<KeyRef, u64>,
    /// Which key each session's counted operation uses.
    ops: HashMap<(CK_SESSION_HANDLE, Use), KeyRef>,
}

fn state() -> &'static Mutex<State> {
    static S: OnceLock<Mutex<State>> = OnceLock::new();
    S.get_or_init(Default::default)
}

fn is_usage(ty: CK_ATTRIBUTE_TYPE) -> bool {
    ty == CKA_USAGE_LIMIT || ty == CKA_USAGE_COUNT
}

fn book_path(s: &Sim, slot: CK_SLOT_ID) -> Option<PathBuf> {
    if let Some(p) = state().lock().paths.get(&slot) {
        return Some(p.clone());
    }
    let path = crate::books::path(s, slot, "usage")?;
    state().lock().paths.insert(slot, path.clone());
    Some(path)
}

/// The token in `slot` was initialized again: its book is another one now.
pub fn forget_slot(slot: CK_SLOT_ID) {
    state().lock().paths.remove(&slot);
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The token's book, read again when the file changed since we last saw it.
fn book<'a>(st: &'a mut State, path: &Path) -> &'a mut BTreeMap<String, Entry> {
    let now = modified(path);
    let b = st.books.entry(path.to_path_buf()).or_insert(Book {
        keys: BTreeMap::new(),
        seen: None,
    });
    if b.seen != now {
        b.keys = fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        b.seen = now;
    }
    &mut b.keys
}

/// Write a book and remember the file's new time (so our own write is not re-read).
fn store(st: &mut State, path: &Path) -> std::io::Result<()> {
    let keys = book(st, path).clone();
    crate::books::save(path, &keys)?;
    if let Some(b) = st.books.get_mut(path) {
        b.seen = modified(path);
    }
    Ok(())
}

/// The object's `CKA_UNIQUE_ID`, asked of the inner module directly (no latency, no
/// counting: this is lunasim's own bookkeeping).
pub(crate) fn unique_id(s: &Sim, h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> Option<String> {
    let f = s.f().C_GetAttributeValue?;
    let mut buf = [0u8; 128];
    let mut a = CK_ATTRIBUTE {
        type_: CKA_UNIQUE_ID,
        pValue: buf.as_mut_ptr() as *mut _,
        ulValueLen: buf.len() as CK_ULONG,
    };
    // SAFETY: one attribute pointing into our own buffer of the stated length.
    let rv = unsafe { f(h, obj, &mut a, 1) };
    (rv == CKR_OK && (a.ulValueLen as usize) <= buf.len())
        .then(|| String::from_utf8_lossy(&buf[..a.ulValueLen as usize]).into_owned())
}

fn session_slot(s: &Sim, h: CK_SESSION_HANDLE) -> Option<CK_SLOT_ID> {
    s.sessions.lock().get(&h).map(|st| st.slot)
}

/// The key's place in its token's book, when the token's book has any limit at all (the
/// common case — no limits — costs a map lookup).
fn key_ref(s: &Sim, h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE, any: bool) -> Option<KeyRef> {
    if crate::objects::is_ours(obj) {
        return None;
    }
    let path = book_path(s, session_slot(s, h)?)?;
    if !any && book(&mut state().lock(), &path).is_empty() {
        return None;
    }
    Some((path, unique_id(s, h, obj)?))
}

fn entry_of(k: &KeyRef) -> Option<Entry> {
    let mut st = state().lock();
    book(&mut st, &k.0).get(&k.1).copied()
}

/// Write one attribute's value under the PKCS#11 output rules; `false` when too small.
///
/// # Safety
/// `a.pValue` must be NULL or have `a.ulValueLen` writable bytes.
unsafe fn put_value(a: &mut CK_ATTRIBUTE, v: u64) -> bool {
    let bytes = (v as CK_ULONG).to_ne_bytes();
    if a.pValue.is_null() {
        a.ulValueLen = bytes.len() as CK_ULONG;
        return true;
    }
    if (a.ulValueLen as usize) < bytes.len() {
        a.ulValueLen = CK_UNAVAILABLE_INFORMATION;
        return false;
    }
    // SAFETY: the caller's buffer has room, checked above.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), a.pValue as *mut u8, bytes.len()) };
    a.ulValueLen = bytes.len() as CK_ULONG;
    true
}

/// `C_GetAttributeValue`: the inner module answers for everything, then the usage
/// attributes of a key that has a limit are filled in (and the return value corrected,
/// since the inner module called them invalid).
pub fn get_attribute_value(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    call: impl FnOnce() -> CK_RV,
) -> CK_RV {
    // SAFETY: the caller's template is valid and writable per contract.
    let asks = unsafe { raw::template(t, n) }
        .iter()
        .any(|a| is_usage(a.type_));
    let rv = call();
    if !asks || !matches!(rv, CKR_OK | CKR_ATTRIBUTE_TYPE_INVALID) {
        return rv;
    }
    let Some(s) = sim::current() else { return rv };
    let Some(e) = key_ref(&s, h, obj, false).and_then(|k| entry_of(&k)) else {
        return rv;
    };
    // SAFETY: as above.
    let attrs = unsafe { raw::template_mut(t, n) };
    let mut small = false;
    for a in attrs.iter_mut().filter(|a| is_usage(a.type_)) {
        let v = if a.type_ == CKA_USAGE_LIMIT {
            e.limit
        } else {
            e.count
        };
        // SAFETY: each pValue is NULL or has ulValueLen writable bytes (contract).
        small |= !unsafe { put_value(a, v) };
    }
    let others_invalid = attrs
        .iter()
        .any(|a| !is_usage(a.type_) && a.ulValueLen == CK_UNAVAILABLE_INFORMATION);
    match (others_invalid, small) {
        (true, _) => rv,
        (false, true) => CKR_BUFFER_TOO_SMALL,
        (false, false) => CKR_OK,
    }
}

/// Luna's rule for changing a limit: the Crypto Officer or the SO, read-write.
fn may_set_limit(s: &Sim, h: CK_SESSION_HANDLE) -> Result<(), CK_RV> {
    let f = s.f().C_GetSessionInfo.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
    // SAFETY: plain old data.
    let mut info: CK_SESSION_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out pointer.
    let rv = unsafe { f(h, &mut info) };
    if rv != CKR_OK {
        return Err(rv);
    }
    match info.state {
        CKS_RW_USER_FUNCTIONS | CKS_RW_SO_FUNCTIONS => Ok(()),
        CKS_RO_USER_FUNCTIONS => Err(CKR_SESSION_READ_ONLY),
        _ => Err(CKR_USER_NOT_LOGGED_IN),
    }
}

fn limit_value(v: &[u8]) -> Result<u64, CK_RV> {
    match raw::as_ulong(v) {
        Some(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        _ => Err(CKR_ATTRIBUTE_VALUE_INVALID),
    }
}

/// Set a key's limit (its count starts at 0 the first time, as on Luna). A limit below
/// what the key already used is refused.
fn set_limit(k: &KeyRef, limit: u64) -> Result<(), CK_RV> {
    let mut st = state().lock();
    let b = book(&mut st, &k.0);
    let count = b.get(&k.1).map(|e| e.count).unwrap_or(0);
    if limit < count {
        return Err(CKR_ATTRIBUTE_VALUE_INVALID);
    }
    b.insert(k.1.clone(), Entry { limit, count });
    store(&mut st, &k.0).map_err(|e| {
        eprintln!("lunasim: usage book {} not written: {e}", k.0.display());
        CKR_DEVICE_ERROR
    })
}

/// `C_SetAttributeValue`: `CKA_USAGE_LIMIT` is lunasim's, the rest goes to the inner
/// module first (nothing changes when it refuses).
pub fn set_attribute_value(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    call: impl FnOnce(*mut CK_ATTRIBUTE, CK_ULONG) -> CK_RV,
) -> CK_RV {
    // SAFETY: the caller's template is valid for reading.
    if !unsafe { raw::template(t, n) }
        .iter()
        .any(|a| is_usage(a.type_))
    {
        return call(t, n);
    }
    // Through the entry point's knobs, as every other call: a test's faults and slow calls
    // reach a usage-limit change too.
    crate::entry::call("C_SetAttributeValue", |s| {
        // SAFETY: as above.
        let mut rest = match unsafe { Tpl::from_raw(t, n) } {
            Ok(v) => v,
            Err(rv) => return rv,
        };
        if rest.get(CKA_USAGE_COUNT).is_some() {
            return CKR_ATTRIBUTE_READ_ONLY;
        }
        let limit = match rest.get(CKA_USAGE_LIMIT).map(limit_value) {
            Some(Ok(l)) => l,
            Some(Err(rv)) => return rv,
            None => return CKR_ATTRIBUTE_VALUE_INVALID,
        };
        if let Err(rv) = may_set_limit(s, h) {
            return rv;
        }
        let Some(k) = key_ref(s, h, obj, true) else {
            return CKR_OBJECT_HANDLE_INVALID;
        };
        if entry_of(&k).is_some_and(|e| limit < e.count) {
            return CKR_ATTRIBUTE_VALUE_INVALID;
        }
        rest.remove(CKA_USAGE_LIMIT);
        if !rest.0.is_empty() {
            let rv = rest.with_raw(call);
            if rv != CKR_OK {
                return rv;
            }
        }
        set_limit(&k, limit).err().unwrap_or(CKR_OK)
    })
}

/// A creation template without the usage attributes, and the limit it asked for.
pub fn strip(t: *mut CK_ATTRIBUTE, n: CK_ULONG) -> Result<Option<(Tpl, u64)>, CK_RV> {
    // SAFETY: the caller's template is valid for reading.
    if !unsafe { raw::template(t, n) }
        .iter()
        .any(|a| is_usage(a.type_))
    {
        return Ok(None);
    }
    // SAFETY: as above.
    let mut tpl = unsafe { Tpl::from_raw(t, n) }?;
    if tpl.get(CKA_USAGE_COUNT).is_some() {
        return Err(CKR_ATTRIBUTE_READ_ONLY);
    }
    let limit = limit_value(tpl.get(CKA_USAGE_LIMIT).unwrap_or_default())?;
    tpl.remove(CKA_USAGE_LIMIT);
    Ok(Some((tpl, limit)))
}

/// Record the limit a creation template asked for on the object just made.
pub fn created(h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE, limit: u64) -> CK_RV {
    let Some(s) = sim::current() else {
        return CKR_CRYPTOKI_NOT_INITIALIZED;
    };
    match key_ref(&s, h, obj, true) {
        Some(k) => set_limit(&k, limit).err().unwrap_or(CKR_OK),
        None => CKR_ATTRIBUTE_TYPE_INVALID,
    }
}

/// Make an object with `make(template, count)`, honouring a `CKA_USAGE_LIMIT` in the
/// template: the inner module gets the template without it, lunasim records it on the
/// object made (destroying the object again if the record cannot be written).
pub fn creating(
    h: CK_SESSION_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    out: *mut CK_OBJECT_HANDLE,
    make: impl FnOnce(*mut CK_ATTRIBUTE, CK_ULONG) -> CK_RV,
    destroy: impl FnOnce(CK_OBJECT_HANDLE),
) -> CK_RV {
    match strip(t, n) {
        Err(rv) => rv,
        Ok(None) => make(t, n),
        Ok(Some((mut tpl, limit))) => {
            let rv = tpl.with_raw(make);
            if rv != CKR_OK || out.is_null() {
                return rv;
            }
            // SAFETY: out is non-null and was written by a successful call.
            let obj = unsafe { *out };
            let r = created(h, obj, limit);
            if r != CKR_OK {
                destroy(obj);
            }
            r
        }
    }
}

/// An operation with `key` starts: refused once the key has used its limit (counting the
/// uses other operations in progress reserved); otherwise a use is reserved.
pub fn op_init(
    h: CK_SESSION_HANDLE,
    key: CK_OBJECT_HANDLE,
    u: Use,
    init: impl FnOnce() -> CK_RV,
) -> CK_RV {
    let k = sim::current().and_then(|s| key_ref(&s, h, key, false));
    let Some(k) = k.filter(|k| entry_of(k).is_some()) else {
        return init();
    };
    {
        let mut st = state().lock();
        let reserved = st.reserved.get(&k).copied().unwrap_or(0);
        let e = book(&mut st, &k.0)
            .get(&k.1)
            .copied()
            .unwrap_or(Entry { limit: 0, count: 0 });
        if e.count + reserved >= e.limit {
            eprintln!(
                "lunasim: key {} has used {} of its {} uses (CKA_USAGE_LIMIT); refused with CKR_KEY_NOT_ACTIVE",
                k.1, e.count, e.limit
            );
            return CKR_KEY_NOT_ACTIVE;
        }
        *st.reserved.entry(k.clone()).or_insert(0) += 1;
    }
    let rv = init();
    let mut st = state().lock();
    if rv == CKR_OK {
        if let Some(old) = st.ops.insert((h, u), k.clone()) {
            release(&mut st, &old);
        }
    } else {
        release(&mut st, &k);
    }
    rv
}

fn release(st: &mut State, k: &KeyRef) {
    if let Some(r) = st.reserved.get_mut(k) {
        *r = r.saturating_sub(1);
    }
}

/// A step of a counted operation: when it ends the operation, the reserved use is
/// released, and counted (durably) if the operation produced its result.
pub fn op_step(
    h: CK_SESSION_HANDLE,
    u: Use,
    out_null: bool,
    call: impl FnOnce() -> CK_RV,
) -> CK_RV {
    let rv = call();
    let ends = !(rv == CKR_BUFFER_TOO_SMALL || (rv == CKR_OK && out_null));
    if !ends {
        return rv;
    }
    let mut st = state().lock();
    let Some(k) = st.ops.remove(&(h, u)) else {
        return rv;
    };
    release(&mut st, &k);
    if rv == CKR_OK || (u == Use::Verify && rv == CKR_SIGNATURE_INVALID) {
        if let Some(e) = book(&mut st, &k.0).get_mut(&k.1) {
            e.count += 1;
        }
        if let Err(e) = store(&mut st, &k.0) {
            eprintln!("lunasim: usage book {} not written: {e}", k.0.display());
            return CKR_DEVICE_ERROR;
        }
    }
    rv
}

/// A session closed: its operations' reservations go.
pub fn session_closed(h: CK_SESSION_HANDLE) {
    let mut st = state().lock();
    let gone: Vec<_> = st.ops.keys().filter(|(s, _)| *s == h).copied().collect();
    for key in gone {
        if let Some(k) = st.ops.remove(&key) {
            release(&mut st, &k);
        }
    }
}

/// `C_DestroyObject`: a destroyed key leaves its book.
pub fn destroying(
    h: CK_SESSION_HANDLE,
    obj: CK_OBJECT_HANDLE,
    call: impl FnOnce() -> CK_RV,
) -> CK_RV {
    let k = sim::current().and_then(|s| key_ref(&s, h, obj, false));
    let rv = call();
    if let (CKR_OK, Some(k)) = (rv, k) {
        let mut st = state().lock();
        if book(&mut st, &k.0).remove(&k.1).is_some() {
            let _ = store(&mut st, &k.0);
        }
    }
    rv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_follow_luna_range() {
        assert_eq!(limit_value(&5u64.to_ne_bytes()), Ok(5));
        assert_eq!(
            limit_value(&0u64.to_ne_bytes()),
            Err(CKR_ATTRIBUTE_VALUE_INVALID)
        );
        assert_eq!(
            limit_value(&(MAX_LIMIT + 1).to_ne_bytes()),
            Err(CKR_ATTRIBUTE_VALUE_INVALID)
        );
        assert_eq!(limit_value(&[1, 2]), Err(CKR_ATTRIBUTE_VALUE_INVALID));
    }

    #[test]
    fn books_survive_a_reload() {
        let dir = std::env::temp_dir().join(format!("lunasim-usage-{}", std::process::id()));
        let k: KeyRef = (dir.join("usage/t.json"), "uid-1".into());
        set_limit(&k, 3).unwrap();
        assert_eq!(entry_of(&k), Some(Entry { limit: 3, count: 0 }));
        {
            let mut st = state().lock();
            book(&mut st, &k.0).get_mut(&k.1).unwrap().count = 2;
            store(&mut st, &k.0).unwrap();
        }
        assert_eq!(
            set_limit(&k, 1),
            Err(CKR_ATTRIBUTE_VALUE_INVALID),
            "below the count"
        );
        state().lock().books.clear(); // as after a restart
        assert_eq!(entry_of(&k), Some(Entry { limit: 3, count: 2 }));
        set_limit(&k, 10).unwrap();
        assert_eq!(
            entry_of(&k),
            Some(Entry {
                limit: 10,
                count: 2
            }),
            "raising keeps the count"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
