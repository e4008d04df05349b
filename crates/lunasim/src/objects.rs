//! HSS key objects: the ones lunasim owns (the inner module has no HSS). They merge with
//! the inner module's objects under handles from a range the inner module never uses.
//!
//! A token key pair is one file `<store>/hss/slot-<N>/<uid>.json` — the master seed and
//! the position (the next leaf of every level) — replaced atomically (write temp, fsync,
//! rename, fsync the directory) every time the position advances, **before** the
//! signature is handed out: a crash can lose a one-time key, never reuse one. Beside it,
//! `<uid>.trees/` caches the trees (see [`hss::cache`]), written before the position too,
//! and `<uid>.lock` serializes signing between processes sharing the store.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use cryptoki_sys::*;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::hss::engine::{self, Engine, Reservation};
use crate::hss::{self, cache};

/// Handles lunasim hands out: 0x4C53_0000 ("LS") and up. Kryoptic and SoftHSM2 number
/// their objects from small integers.
pub const HANDLE_BASE: CK_OBJECT_HANDLE = 0x4C53_0000;

pub fn is_ours(h: CK_OBJECT_HANDLE) -> bool {
    h >= HANDLE_BASE
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Public,
    Private,
}

#[derive(Serialize, Deserialize)]
struct KeyFile {
    label: String,
    id: String,
    levels: Vec<(u32, u32)>,
    public_key: String,
    /// The master seed (hex); absent once the private key is destroyed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seed: Option<String>,
    /// The next leaf of every level, top first; absent once every one-time key is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    position: Option<Vec<u32>>,
    /// Files of lunasim versions that signed with `hbs-lms`: its private key (counter ‖
    /// parameters ‖ seed). Read once; the next write uses `seed` and `position`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    private_state: Option<String>,
    public_present: bool,
}

/// The private half: the seed, how far it has signed, and the signer's trees.
pub struct PrivateHalf {
    pub seed: Zeroizing<[u8; 32]>,
    /// The next leaf of every level; none once exhausted.
    pub position: Option<Vec<u32>>,
    /// Built on the first signature (from the cache on disk where it holds).
    pub engine: Option<Engine>,
}

pub struct HssKey {
    pub uid: String,
    pub slot: CK_SLOT_ID,
    pub token: bool,
    /// Session objects belong to the session that made them.
    pub owner: Option<CK_SESSION_HANDLE>,
    pub label: Vec<u8>,
    pub id: Vec<u8>,
    /// (LMS type, LM-OTS type) per level, top first.
    pub levels: Vec<(u32, u32)>,
    pub public_key: Vec<u8>,
    pub private: Option<PrivateHalf>,
    pub public_present: bool,
    pub handle: CK_OBJECT_HANDLE,
}

/// Signatures made before `position` (levels' heights as a mixed radix), saturated.
fn signatures_before(levels: &[(u32, u32)], position: &[u32]) -> u128 {
    let mut used: u128 = 0;
    for ((l, _), q) in levels.iter().zip(position) {
        let h = hss::height(*l).unwrap_or(0);
        used = used
            .checked_shl(h)
            .filter(|v| v >> h == used)
            .and_then(|v| v.checked_add(*q as u128))
            .unwrap_or(u128::MAX);
    }
    used
}

/// The position an `hbs-lms` private key (counter ‖ parameters ‖ seed) stands at; none
/// for a wiped (exhausted) one. Its counter numbers the signatures made, bottom level in
/// the low bits.
fn from_hbs_lms(state: &[u8], levels: &[(u32, u32)]) -> Option<PrivateHalf> {
    if state.len() != 48 {
        return None;
    }
    let seed: [u8; 32] = state[16..].try_into().ok()?;
    if state[8] == 0xFF {
        return Some(PrivateHalf::new(seed, None));
    }
    for (k, (l, o)) in levels.iter().enumerate() {
        if state[8 + k] != ((*l as u8) << 4) + *o as u8 {
            return None;
        }
    }
    let mut count = u64::from_be_bytes(state[..8].try_into().ok()?);
    let mut position = vec![0; levels.len()];
    for (k, (l, _)) in levels.iter().enumerate().rev() {
        let h = hss::height(*l)?;
        position[k] = (count & ((1 << h) - 1)) as u32;
        count = count.checked_shr(h).unwrap_or(0);
    }
    Some(PrivateHalf::new(seed, Some(position)))
}

impl PrivateHalf {
    fn new(seed: [u8; 32], position: Option<Vec<u32>>) -> PrivateHalf {
        PrivateHalf {
            seed: Zeroizing::new(seed),
            position,
            engine: None,
        }
    }
}

/// An exclusive lock on a key between processes, held while a signature is reserved.
struct KeyLock(#[allow(dead_code)] File);

impl KeyLock {
    fn take(path: &Path) -> std::io::Result<KeyLock> {
        use std::os::fd::AsRawFd;
        let f = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        // SAFETY: the descriptor is open for the call; flock only locks it. The lock goes
        // with the descriptor when the file is closed.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(KeyLock(f))
    }
}

impl HssKey {
    pub fn private_handle(&self) -> CK_OBJECT_HANDLE {
        self.handle
    }
    pub fn public_handle(&self) -> CK_OBJECT_HANDLE {
        self.handle + 1
    }

    /// Total one-time keys: 2^(sum of heights), saturated. Eight H20 levels are valid and
    /// make 2^160, beyond any integer type here; a plain shift would wrap.
    pub fn capacity(&self) -> u128 {
        let bits: u32 = self
            .levels
            .iter()
            .map(|(l, _)| hss::height(*l).unwrap_or(0))
            .sum();
        1u128.checked_shl(bits).unwrap_or(u128::MAX)
    }

    /// Signatures already made (all of them once exhausted).
    pub fn used(&self) -> u128 {
        match &self.private {
            Some(PrivateHalf {
                position: Some(p), ..
            }) => signatures_before(&self.levels, p),
            Some(PrivateHalf { position: None, .. }) => self.capacity(),
            None => 0,
        }
    }

    pub fn remaining(&self) -> u128 {
        self.capacity().saturating_sub(self.used())
    }

    /// A token key from its file's bytes; `None` for a file that is not a key lunasim
    /// wrote (bad JSON, bad hex in the public key or state, levels Luna would refuse).
    pub fn from_file(
        uid: String,
        slot: CK_SLOT_ID,
        text: &[u8],
        handle: CK_OBJECT_HANDLE,
    ) -> Option<HssKey> {
        let kf = serde_json::from_slice::<KeyFile>(text).ok()?;
        let lms: Vec<u64> = kf.levels.iter().map(|l| l.0 as u64).collect();
        let ots: Vec<u64> = kf.levels.iter().map(|l| l.1 as u64).collect();
        hss::validate(kf.levels.len() as u64, &lms, &ots).ok()?;
        let private = match (&kf.seed, &kf.private_state) {
            (Some(seed), _) => {
                let seed: [u8; 32] = hex::decode(seed).ok()?.try_into().ok()?;
                if kf.position.as_ref().is_some_and(|p| {
                    p.len() != kf.levels.len()
                        || p.iter()
                            .zip(&kf.levels)
                            .any(|(q, (l, _))| *q as u64 >= 1u64 << hss::height(*l).unwrap_or(0))
                }) {
                    return None;
                }
                Some(PrivateHalf::new(seed, kf.position.clone()))
            }
            (None, Some(state)) => Some(from_hbs_lms(
                &Zeroizing::new(hex::decode(state).ok()?),
                &kf.levels,
            )?),
            (None, None) => None,
        };
        let public_key = hex::decode(&kf.public_key).ok()?;
        if public_key.len() != hss::public_key_len(&kf.levels) {
            return None;
        }
        Some(HssKey {
            uid,
            slot,
            token: true,
            owner: None,
            label: hex::decode(kf.label).unwrap_or_default(),
            id: hex::decode(kf.id).unwrap_or_default(),
            levels: kf.levels,
            public_key,
            private,
            public_present: kf.public_present,
            handle,
        })
    }

    /// Take the next one-time key for one signature. The advanced position (and the
    /// trees it needs) is on disk for token keys before this returns; if that write fails,
    /// no reservation — and so no signature — is produced.
    pub fn reserve(&mut self, store: &Path) -> Result<Reservation, CK_RV> {
        if self.private.is_none() {
            return Err(CKR_KEY_HANDLE_INVALID);
        }
        let _lock = if self.token {
            let dir = slot_dir(store, self.slot);
            let lock = fs::create_dir_all(&dir)
                .and_then(|()| KeyLock::take(&dir.join(format!("{}.lock", self.uid))));
            Some(lock.map_err(|_| CKR_DEVICE_ERROR)?)
        } else {
            None
        };
        if self.token {
            self.adopt_disk_position(store);
        }
        let params = hss::parameters(&self.levels);
        let trees = cache::dir_of(&self.file(store));
        let (token, public_key) = (self.token, self.public_key.clone());
        let private = self.private.as_mut().expect("checked above");
        let Some(pos) = private.position.clone() else {
            return Err(CKR_KEY_EXHAUSTED);
        };
        if private.engine.is_none() {
            let cached = if token {
                cache::load(&trees, &private.seed, &params, &public_key)
            } else {
                Vec::new()
            };
            private.engine = Some(Engine::new(params.clone(), &private.seed, cached));
        }
        let engine = private.engine.as_mut().expect("set above");
        let mut dirty = engine.align(&pos, None);
        let reservation = engine.reserve(&pos);
        let next = engine::increment(&pos, &params);
        if let Some(n) = &next {
            dirty.merge(engine.advance(n));
        }
        private.position = next;
        if token {
            // The trees first, then the position: what the file says was used, is used.
            cache::save(&trees, engine, &dirty.trees, &dirty.builders)
                .map_err(|_| CKR_DEVICE_ERROR)?;
            // The write failed: disk holds the old position or the new one (rename is
            // atomic), memory the new one; no signature leaves, so nothing is reused.
            self.persist(store).map_err(|_| CKR_DEVICE_ERROR)?;
        }
        Ok(reservation)
    }

    /// Another process sharing the store may have signed with this key: its position on
    /// disk, when further than ours, is ours.
    fn adopt_disk_position(&mut self, store: &Path) {
        let Ok(text) = fs::read(self.file(store)) else {
            return;
        };
        let Some(disk) = HssKey::from_file(self.uid.clone(), self.slot, &text, self.handle) else {
            return;
        };
        let Some(disk_private) = disk.private else {
            return;
        };
        let disk_used = signatures_before_opt(&self.levels, &disk_private.position);
        if let Some(private) = self.private.as_mut() {
            if disk_private.seed == private.seed
                && disk_used > signatures_before_opt(&self.levels, &private.position)
            {
                private.position = disk_private.position;
            }
        }
    }

    fn file(&self, store: &Path) -> PathBuf {
        slot_dir(store, self.slot).join(format!("{}.json", self.uid))
    }

    /// Write the key durably (token keys only). Returns an error rather than pretending.
    pub fn persist(&self, store: &Path) -> std::io::Result<()> {
        if !self.token {
            return Ok(());
        }
        let dir = slot_dir(store, self.slot);
        fs::create_dir_all(&dir)?;
        let path = self.file(store);
        if self.private.is_none() {
            // No private half, no trees to keep.
            let _ = fs::remove_dir_all(cache::dir_of(&path));
        }
        if self.private.is_none() && !self.public_present {
            for gone in [path.clone(), dir.join(format!("{}.lock", self.uid))] {
                match fs::remove_file(&gone) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
            return File::open(&dir)?.sync_all();
        }
        let kf = KeyFile {
            label: hex::encode(&self.label),
            id: hex::encode(&self.id),
            levels: self.levels.clone(),
            public_key: hex::encode(&self.public_key),
            seed: self
                .private
                .as_ref()
                .map(|p| hex::encode(p.seed.as_slice())),
            position: self.private.as_ref().and_then(|p| p.position.clone()),
            private_state: None,
            public_present: self.public_present,
        };
        let text = Zeroizing::new(serde_json::to_vec(&kf).map_err(std::io::Error::other)?);
        let tmp = dir.join(format!(".{}.tmp", self.uid));
        {
            let mut f = File::create(&tmp)?;
            f.write_all(&text)?;
            f.sync_all()?;
        }
        fs::rename(&tmp, &path)?;
        File::open(&dir)?.sync_all()
    }

    /// A new key's trees on disk (token keys), before the key file names it.
    pub fn persist_trees(&self, store: &Path) -> std::io::Result<()> {
        let Some(PrivateHalf {
            engine: Some(engine),
            ..
        }) = &self.private
        else {
            return Ok(());
        };
        if !self.token {
            return Ok(());
        }
        let all: Vec<usize> = (0..engine.levels.len()).collect();
        cache::save(&cache::dir_of(&self.file(store)), engine, &all, &all)
    }
}

fn signatures_before_opt(levels: &[(u32, u32)], position: &Option<Vec<u32>>) -> u128 {
    match position {
        Some(p) => signatures_before(levels, p),
        None => u128::MAX,
    }
}

fn slot_dir(store: &Path, slot: CK_SLOT_ID) -> PathBuf {
    store.join("hss").join(format!("slot-{slot}"))
}

/// All HSS keys known in this process.
#[derive(Default)]
pub struct ObjectStore {
    pub keys: Vec<HssKey>,
    next: CK_OBJECT_HANDLE,
    loaded: Vec<CK_SLOT_ID>,
}

impl ObjectStore {
    /// An empty store whose handles start `shift` pairs further on (see the `renumber`
    /// control command).
    pub fn starting_after(shift: u64) -> ObjectStore {
        ObjectStore {
            next: HANDLE_BASE + 2 * shift,
            ..ObjectStore::default()
        }
    }

    pub fn next_handle(&mut self) -> CK_OBJECT_HANDLE {
        if self.next < HANDLE_BASE {
            self.next = HANDLE_BASE;
        }
        let h = self.next;
        self.next += 2;
        h
    }

    /// Load a slot's token keys from disk once.
    pub fn ensure_loaded(&mut self, store: &Path, slot: CK_SLOT_ID) {
        if self.loaded.contains(&slot) {
            return;
        }
        self.loaded.push(slot);
        let Ok(rd) = fs::read_dir(slot_dir(store, slot)) else {
            return;
        };
        let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for path in files {
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let Some(uid) = path
                .file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
            else {
                continue;
            };
            let Ok(text) = fs::read(&path) else { continue };
            let handle = self.next_handle();
            if let Some(key) = HssKey::from_file(uid, slot, &text, handle) {
                self.keys.push(key);
            }
        }
    }

    /// Forget (and delete) every key of a slot: the token was re-initialized.
    pub fn wipe_slot(&mut self, store: &Path, slot: CK_SLOT_ID) {
        self.keys.retain(|k| k.slot != slot);
        let _ = fs::remove_dir_all(slot_dir(store, slot));
        self.loaded.retain(|s| *s != slot);
    }

    pub fn find(&self, h: CK_OBJECT_HANDLE) -> Option<(usize, Part)> {
        self.keys
            .iter()
            .position(|k| k.handle == h || k.handle + 1 == h)
            .map(|i| {
                let k = &self.keys[i];
                let part = if k.handle == h {
                    Part::Private
                } else {
                    Part::Public
                };
                (i, part)
            })
    }

    /// Does the object exist (its part not destroyed)?
    pub fn live(&self, h: CK_OBJECT_HANDLE) -> Option<(usize, Part)> {
        let (i, p) = self.find(h)?;
        let k = &self.keys[i];
        let alive = match p {
            Part::Private => k.private.is_some(),
            Part::Public => k.public_present,
        };
        alive.then_some((i, p))
    }
}

/// The value of one attribute of an HSS object.
pub enum AttrOut {
    Value(Vec<u8>),
    Sensitive,
    Invalid,
}

fn b(v: bool) -> AttrOut {
    AttrOut::Value(vec![if v { CK_TRUE } else { CK_FALSE }])
}

fn ul(v: u64) -> AttrOut {
    AttrOut::Value((v as CK_ULONG).to_ne_bytes().to_vec())
}

fn uls(v: impl Iterator<Item = u64>) -> AttrOut {
    AttrOut::Value(v.flat_map(|x| (x as CK_ULONG).to_ne_bytes()).collect())
}

pub fn attribute(k: &HssKey, part: Part, ty: CK_ATTRIBUTE_TYPE) -> AttrOut {
    let private = part == Part::Private;
    match ty {
        CKA_CLASS => ul(if private {
            CKO_PRIVATE_KEY
        } else {
            CKO_PUBLIC_KEY
        }),
        CKA_KEY_TYPE => ul(CKK_HSS),
        CKA_TOKEN => b(k.token),
        CKA_PRIVATE => b(private),
        CKA_LABEL => AttrOut::Value(k.label.clone()),
        CKA_ID => AttrOut::Value(k.id.clone()),
        CKA_MODIFIABLE => b(true),
        CKA_COPYABLE => b(false),
        CKA_DESTROYABLE => b(true),
        CKA_LOCAL => b(true),
        CKA_KEY_GEN_MECHANISM => ul(CKM_HSS_KEY_PAIR_GEN),
        CKA_DERIVE => b(false),
        CKA_START_DATE | CKA_END_DATE => AttrOut::Value(Vec::new()),
        CKA_ALLOWED_MECHANISMS => uls(std::iter::once(CKM_HSS)),
        CKA_HSS_LEVELS => ul(k.levels.len() as u64),
        CKA_SIGN if private => b(true),
        CKA_SENSITIVE | CKA_ALWAYS_SENSITIVE | CKA_NEVER_EXTRACTABLE if private => b(true),
        CKA_EXTRACTABLE | CKA_SIGN_RECOVER | CKA_DECRYPT | CKA_UNWRAP | CKA_WRAP_WITH_TRUSTED
            if private =>
        {
            b(false)
        }
        CKA_ALWAYS_AUTHENTICATE if private => b(false),
        CKA_HSS_LMS_TYPES if private => uls(k.levels.iter().map(|l| l.0 as u64)),
        CKA_HSS_LMOTS_TYPES if private => uls(k.levels.iter().map(|l| l.1 as u64)),
        CKA_HSS_KEYS_REMAINING if private => ul(k.remaining().min(u32::MAX as u128) as u64),
        CKA_VALUE if private => AttrOut::Sensitive,
        CKA_VERIFY if !private => b(true),
        CKA_ENCRYPT | CKA_VERIFY_RECOVER | CKA_WRAP | CKA_TRUSTED if !private => b(false),
        CKA_HSS_LMS_TYPE if !private => ul(k.levels.first().map(|l| l.0 as u64).unwrap_or(0)),
        CKA_HSS_LMOTS_TYPE if !private => ul(k.levels.first().map(|l| l.1 as u64).unwrap_or(0)),
        CKA_VALUE if !private => AttrOut::Value(k.public_key.clone()),
        crate::ouid::CKA_OUID => AttrOut::Value(crate::ouid::derive(
            format!("{}/{}", k.uid, if private { "private" } else { "public" }).as_bytes(),
        )),
        _ => AttrOut::Invalid,
    }
}

/// Does an HSS object match a `C_FindObjectsInit` template?
pub fn matches(k: &HssKey, part: Part, template: &[(CK_ATTRIBUTE_TYPE, Vec<u8>)]) -> bool {
    template
        .iter()
        .all(|(ty, want)| match attribute(k, part, *ty) {
            AttrOut::Value(v) => {
                // Booleans compare by truth, not by byte value.
                if v.len() == 1
                    && want.len() == 1
                    && matches!(p11::attr_kind(*ty), p11::AttrKind::Bool)
                {
                    (v[0] != 0) == (want[0] != 0)
                } else {
                    v == *want
                }
            }
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(levels: Vec<(u32, u32)>) -> HssKey {
        let n = levels.len();
        HssKey {
            uid: "k".into(),
            slot: 0,
            token: true,
            owner: None,
            label: Vec::new(),
            id: Vec::new(),
            levels,
            public_key: vec![1; 60],
            private: Some(PrivateHalf {
                seed: Zeroizing::new([0; 32]),
                position: Some(vec![0; n]),
                engine: None,
            }),
            public_present: true,
            handle: HANDLE_BASE,
        }
    }

    #[test]
    fn capacity_saturates_beyond_128_bits() {
        assert_eq!(key(vec![(5, 4), (6, 4)]).capacity(), 1 << 15);
        // Eight H20 levels are a valid Luna template: 2^160 one-time keys.
        let huge = key(vec![(8, 4); 8]);
        assert_eq!(huge.capacity(), u128::MAX);
        assert_eq!(huge.remaining(), u128::MAX);
        // Seven H20 levels (140 bits) must not wrap to a small number either.
        assert!(key(vec![(8, 4); 7]).capacity() >= key(vec![(8, 4); 6]).capacity());
    }

    #[test]
    fn key_files_lunasim_did_not_write_are_skipped() {
        let k = key(vec![(5, 4)]);
        let dir = std::env::temp_dir().join(format!("lunasim-objects-{}", std::process::id()));
        k.persist(&dir).unwrap();
        let text = fs::read(slot_dir(&dir, 0).join("k.json")).unwrap();
        let back = HssKey::from_file("k".into(), 0, &text, HANDLE_BASE).unwrap();
        assert_eq!(back.levels, k.levels);
        assert_eq!(back.public_key, k.public_key);
        let (a, b) = (back.private.unwrap(), k.private.as_ref().unwrap());
        assert_eq!(a.seed, b.seed);
        assert_eq!(a.position, b.position);
        let text = String::from_utf8(text).unwrap();
        for bad in [
            text.replace("[[5,4]]", "[[9,4]]"),
            text.replace("[[5,4]]", "[]"),
            text.replace(&"00".repeat(32), "zz"),
            text.replace("[0]", "[32]"),
            text[..text.len() / 2].to_string(),
        ] {
            assert!(
                HssKey::from_file("k".into(), 0, bad.as_bytes(), HANDLE_BASE).is_none(),
                "accepted {bad}"
            );
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
