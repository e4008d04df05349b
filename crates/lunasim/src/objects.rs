//! HSS key objects: the ones lunasim owns (the inner module has no HSS). They merge with
//! the inner module's objects under handles from a range the inner module never uses.
//!
//! A token key pair is one file `<store>/hss/slot-<N>/<uid>.json`, replaced atomically
//! (write temp, fsync, rename, fsync the directory) every time the private state advances,
//! **before** the signature is handed out: a crash can lose a one-time key, never reuse one.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use cryptoki_sys::*;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::hss;

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
    /// hbs-lms private key (counter ‖ parameters ‖ seed); absent once the private key is
    /// destroyed.
    private_state: Option<String>,
    public_present: bool,
    aux: Option<String>,
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
    pub private_state: Option<Zeroizing<Vec<u8>>>,
    pub public_present: bool,
    pub aux: Vec<u8>,
    pub handle: CK_OBJECT_HANDLE,
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

    /// Signatures already made. hbs-lms keeps the counter in the first 8 bytes, then the
    /// compressed parameters (one byte per possible level, 0xFF = no level), then the seed;
    /// after the last one-time key it wipes the state (no levels, zero seed), so a wiped
    /// state is an exhausted key.
    pub fn used(&self) -> u128 {
        match &self.private_state {
            Some(s) if s.len() >= 16 && s[8..16].iter().all(|b| *b == 0xFF) => self.capacity(),
            Some(s) if s.len() >= 8 => u64::from_be_bytes(s[..8].try_into().unwrap()) as u128,
            _ => 0,
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
        let private_state = match kf.private_state {
            Some(s) => Some(Zeroizing::new(hex::decode(s).ok()?)),
            None => None,
        };
        Some(HssKey {
            uid,
            slot,
            token: true,
            owner: None,
            label: hex::decode(kf.label).unwrap_or_default(),
            id: hex::decode(kf.id).unwrap_or_default(),
            levels: kf.levels,
            public_key: hex::decode(kf.public_key).ok()?,
            private_state,
            public_present: kf.public_present,
            aux: kf.aux.and_then(|a| hex::decode(a).ok()).unwrap_or_default(),
            handle,
        })
    }

    /// Sign with the key's next one-time key. The advanced private state is written to
    /// disk (token keys) inside hbs-lms's update callback, which runs before the signature
    /// is returned; if that write fails, no signature is produced.
    pub fn sign(&mut self, store: &Path, message: &[u8]) -> Result<Vec<u8>, CK_RV> {
        hss::with_big_stack(move || self.sign_here(store, message))
    }

    fn sign_here(&mut self, store: &Path, message: &[u8]) -> Result<Vec<u8>, CK_RV> {
        let Some(state) = self.private_state.clone() else {
            return Err(CKR_KEY_HANDLE_INVALID);
        };
        if self.remaining() == 0 {
            return Err(CKR_KEY_EXHAUSTED);
        }
        let mut persist_error = false;
        let mut aux = std::mem::take(&mut self.aux);
        let signature = {
            let mut update = |new_state: &[u8]| -> Result<(), ()> {
                self.private_state = Some(Zeroizing::new(new_state.to_vec()));
                if self.persist(store).is_err() {
                    persist_error = true;
                    return Err(());
                }
                Ok(())
            };
            hss::sign(message, &state, &mut update, &mut aux)
        };
        self.aux = aux;
        match signature {
            Some(sig) => Ok(sig),
            // The write failed, so hbs-lms released no signature. Disk holds the old state
            // or the new one (rename is atomic), memory holds the new one: either way no
            // one-time key has signed anything that left, so nothing can be reused harmfully.
            None if persist_error => Err(CKR_DEVICE_ERROR),
            None => Err(if self.remaining() == 0 {
                CKR_KEY_EXHAUSTED
            } else {
                CKR_FUNCTION_FAILED
            }),
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
        if self.private_state.is_none() && !self.public_present {
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            return File::open(&dir)?.sync_all();
        }
        let kf = KeyFile {
            label: hex::encode(&self.label),
            id: hex::encode(&self.id),
            levels: self.levels.clone(),
            public_key: hex::encode(&self.public_key),
            private_state: self
                .private_state
                .as_ref()
                .map(|s| hex::encode(s.as_slice())),
            public_present: self.public_present,
            aux: if self.aux.is_empty() {
                None
            } else {
                Some(hex::encode(&self.aux))
            },
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
            Part::Private => k.private_state.is_some(),
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
        HssKey {
            uid: "k".into(),
            slot: 0,
            token: true,
            owner: None,
            label: Vec::new(),
            id: Vec::new(),
            levels,
            public_key: vec![1; 60],
            private_state: Some(Zeroizing::new(vec![0; 64])),
            public_present: true,
            aux: Vec::new(),
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
        assert_eq!(back.private_state.as_deref(), k.private_state.as_deref());
        let text = String::from_utf8(text).unwrap();
        for bad in [
            text.replace("[[5,4]]", "[[9,4]]"),
            text.replace("[[5,4]]", "[]"),
            text.replace(&"00".repeat(64), "zz"),
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
