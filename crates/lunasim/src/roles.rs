//! Luna's partition roles and policy 21, as lunasim models them.
//!
//! The inner module knows two users (`CKU_SO`, `CKU_USER`). A Luna partition has more: the
//! Crypto Officer (`CKU_USER`), the Crypto User (`CKU_CRYPTO_USER` = `0x80000001`, legacy
//! `0x8000001`) and the Limited Crypto Officer (`0x80000003`). lunasim keeps the two extra
//! roles itself: the Crypto Officer sets their PINs with `CA_InitRolePIN`; logging in as one
//! of them checks the PIN here and logs the inner module in as its user with the Crypto
//! Officer's PIN, which lunasim keeps sealed in its store from the moment the roles exist.
//! What each role may do is [`allowed`]; refusals are Luna's `CKR_USER_NOT_AUTHORIZED`.
//!
//! Partition policy 21 ("Force user PIN change after set/reset", on by default on a Luna,
//! off here unless `force_user_pin_change = true`): after the SO sets or resets the Crypto
//! Officer's PIN (`C_InitPIN`), the token reports `CKF_USER_PIN_TO_BE_CHANGED`, and a
//! Crypto Officer logged in with that PIN gets `CKR_PIN_EXPIRED` for everything but
//! `C_SetPIN` and logging out.
//!
//! Not a security boundary (see the README): PIN verifiers are salted SHA-256, the sealed
//! PIN is XORed with a key stream from a key file next to it.

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use cryptoki_sys::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use p11::names::luna;

/// Who is logged in to a slot, as lunasim sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    SecurityOfficer,
    CryptoOfficer,
    CryptoUser,
    LimitedCryptoOfficer,
}

impl Role {
    /// The role a `C_Login` user type asks for (`None`: not a user type Luna knows).
    pub fn from_user_type(user: CK_USER_TYPE) -> Option<Role> {
        match user {
            CKU_SO => Some(Role::SecurityOfficer),
            CKU_USER => Some(Role::CryptoOfficer),
            luna::CKU_CRYPTO_USER | luna::CKU_CRYPTO_USER_LEGACY => Some(Role::CryptoUser),
            luna::CKU_LIMITED_CRYPTO_OFFICER => Some(Role::LimitedCryptoOfficer),
            _ => None,
        }
    }

    /// Roles lunasim keeps itself (the inner module only has SO and user).
    fn is_extra(self) -> bool {
        matches!(self, Role::CryptoUser | Role::LimitedCryptoOfficer)
    }
}

/// What a call does with objects, for the role rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Find, read attributes, sign, verify, encrypt, decrypt, encapsulate.
    Use,
    /// Create, generate, unwrap, derive, copy.
    Create,
    /// Change attributes.
    Modify,
    Destroy,
    /// Wrap (export) a key.
    Wrap,
}

/// May `role` do `action`? The Crypto User uses keys and reads; the Limited Crypto Officer
/// also creates and changes objects but neither destroys nor exports them; the Crypto
/// Officer does everything.
pub fn allowed(role: Role, action: Action) -> bool {
    match role {
        Role::CryptoOfficer | Role::SecurityOfficer => true,
        Role::CryptoUser => action == Action::Use,
        Role::LimitedCryptoOfficer => {
            matches!(action, Action::Use | Action::Create | Action::Modify)
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Credential {
    salt: String,
    verifier: String,
    #[serde(default)]
    failures: u32,
}

/// A slot's role state on disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RoleFile {
    #[serde(default)]
    co_pin_to_be_changed: bool,
    /// The Crypto Officer's PIN, sealed (hex), once another role exists.
    #[serde(default)]
    sealed_co_pin: Option<String>,
    #[serde(default)]
    crypto_user: Option<Credential>,
    #[serde(default)]
    limited_crypto_officer: Option<Credential>,
}

#[derive(Default)]
struct SlotRoles {
    file: RoleFile,
    logged_in: Option<Role>,
    /// The Crypto Officer's PIN while the Crypto Officer is logged in (to seal it when a
    /// role is created).
    co_pin: Option<Zeroizing<Vec<u8>>>,
}

/// Failed logins after which an extra role's PIN locks (policy 20's default).
const MAX_FAILURES: u32 = 10;

/// Every slot's role state (part of the simulator).
#[derive(Default)]
pub struct Roles {
    slots: HashMap<CK_SLOT_ID, SlotRoles>,
}

fn roles_dir(store: &Path) -> PathBuf {
    store.join("roles")
}

fn file_of(store: &Path, slot: CK_SLOT_ID) -> PathBuf {
    roles_dir(store).join(format!("slot-{slot}.json"))
}

fn random(n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    if let Ok(mut f) = fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut b);
    }
    b
}

fn verifier(salt: &[u8], pin: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(b"lunasim/role-pin/v1");
    h.update(salt);
    h.update(pin);
    hex::encode(h.finalize())
}

/// XOR `data` with a key stream from the store's seal key (sealing and unsealing alike).
fn seal(store: &Path, slot: CK_SLOT_ID, data: &[u8]) -> Vec<u8> {
    let key_path = roles_dir(store).join("seal.key");
    let key = match fs::read(&key_path) {
        Ok(k) if k.len() == 32 => k,
        _ => {
            let k = random(32);
            let _ = fs::create_dir_all(roles_dir(store));
            let _ = fs::write(&key_path, &k);
            k
        }
    };
    let mut out = Vec::with_capacity(data.len());
    for (block, chunk) in data.chunks(32).enumerate() {
        let mut h = Sha256::new();
        h.update(&key);
        h.update(slot.to_le_bytes());
        h.update((block as u64).to_le_bytes());
        let ks = h.finalize();
        out.extend(chunk.iter().zip(ks.iter()).map(|(a, b)| a ^ b));
    }
    out
}

impl Roles {
    fn slot(&mut self, store: &Path, slot: CK_SLOT_ID) -> &mut SlotRoles {
        self.slots.entry(slot).or_insert_with(|| SlotRoles {
            file: fs::read(file_of(store, slot))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default(),
            ..Default::default()
        })
    }

    fn save(&mut self, store: &Path, slot: CK_SLOT_ID) -> CK_RV {
        let text = match serde_json::to_vec_pretty(&self.slot(store, slot).file) {
            Ok(t) => t,
            Err(_) => return CKR_GENERAL_ERROR,
        };
        let path = file_of(store, slot);
        let tmp = path.with_extension("tmp");
        let ok = fs::create_dir_all(roles_dir(store)).is_ok()
            && fs::write(&tmp, text).is_ok()
            && fs::rename(&tmp, &path).is_ok();
        if ok {
            CKR_OK
        } else {
            CKR_DEVICE_ERROR
        }
    }

    /// The role logged in to `slot`, given what the inner module says (`inner`: the inner
    /// session's login state, `None` when public).
    pub fn current(&mut self, store: &Path, slot: CK_SLOT_ID, inner: Option<Role>) -> Option<Role> {
        let st = self.slot(store, slot);
        match inner {
            None => {
                st.logged_in = None;
                None
            }
            Some(Role::SecurityOfficer) => Some(Role::SecurityOfficer),
            Some(_) => Some(st.logged_in.unwrap_or(Role::CryptoOfficer)),
        }
    }

    /// Is the Crypto Officer's PIN flagged to be changed (policy 21)?
    pub fn co_pin_to_be_changed(&mut self, store: &Path, slot: CK_SLOT_ID) -> bool {
        self.slot(store, slot).file.co_pin_to_be_changed
    }

    /// The answer for `action` by the session's role: `None` to go on, else the refusal.
    pub fn refusal(
        &mut self,
        store: &Path,
        slot: CK_SLOT_ID,
        role: Option<Role>,
        action: Action,
    ) -> Option<CK_RV> {
        let role = role?;
        if role == Role::CryptoOfficer && self.co_pin_to_be_changed(store, slot) {
            return Some(CKR_PIN_EXPIRED);
        }
        (!allowed(role, action)).then_some(luna::CKR_USER_NOT_AUTHORIZED)
    }

    /// A successful inner login as SO or Crypto Officer.
    pub fn logged_in(&mut self, store: &Path, slot: CK_SLOT_ID, role: Role, pin: &[u8]) {
        let st = self.slot(store, slot);
        st.logged_in = Some(role);
        st.co_pin = (role == Role::CryptoOfficer).then(|| Zeroizing::new(pin.to_vec()));
    }

    pub fn logged_out(&mut self, store: &Path, slot: CK_SLOT_ID) {
        let st = self.slot(store, slot);
        st.logged_in = None;
        st.co_pin = None;
    }

    /// Check an extra role's PIN; the Crypto Officer's PIN to log the inner module in with.
    pub fn open_extra(
        &mut self,
        store: &Path,
        slot: CK_SLOT_ID,
        role: Role,
        pin: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, CK_RV> {
        debug_assert!(role.is_extra());
        let st = self.slot(store, slot);
        let sealed = st.file.sealed_co_pin.clone();
        let cred = match role {
            Role::CryptoUser => st.file.crypto_user.as_mut(),
            _ => st.file.limited_crypto_officer.as_mut(),
        }
        .ok_or(CKR_USER_PIN_NOT_INITIALIZED)?;
        if cred.failures >= MAX_FAILURES {
            return Err(CKR_PIN_LOCKED);
        }
        let salt = hex::decode(&cred.salt).map_err(|_| CKR_GENERAL_ERROR)?;
        if verifier(&salt, pin) != cred.verifier {
            cred.failures += 1;
            self.save(store, slot);
            return Err(CKR_PIN_INCORRECT);
        }
        cred.failures = 0;
        let sealed = sealed
            .and_then(|h| hex::decode(h).ok())
            .ok_or(CKR_GENERAL_ERROR)?;
        self.save(store, slot);
        Ok(Zeroizing::new(seal(store, slot, &sealed)))
    }

    /// The inner login as the Crypto Officer on behalf of an extra role succeeded.
    pub fn extra_logged_in(&mut self, store: &Path, slot: CK_SLOT_ID, role: Role) {
        let st = self.slot(store, slot);
        st.logged_in = Some(role);
        st.co_pin = None;
    }

    /// `CA_InitRolePIN` by the Crypto Officer: set an extra role's PIN.
    pub fn init_extra(&mut self, store: &Path, slot: CK_SLOT_ID, role: Role, pin: &[u8]) -> CK_RV {
        let st = self.slot(store, slot);
        let Some(co_pin) = st.co_pin.clone() else {
            return luna::CKR_USER_NOT_AUTHORIZED;
        };
        let salt = random(16);
        let cred = Credential {
            verifier: verifier(&salt, pin),
            salt: hex::encode(&salt),
            failures: 0,
        };
        match role {
            Role::CryptoUser => st.file.crypto_user = Some(cred),
            _ => st.file.limited_crypto_officer = Some(cred),
        }
        st.file.sealed_co_pin = Some(hex::encode(seal(store, slot, &co_pin)));
        self.save(store, slot)
    }

    /// An extra role changes its own PIN (`C_SetPIN` while logged in as it).
    pub fn set_extra(
        &mut self,
        store: &Path,
        slot: CK_SLOT_ID,
        role: Role,
        old: &[u8],
        new: &[u8],
    ) -> CK_RV {
        let st = self.slot(store, slot);
        let Some(cred) = (match role {
            Role::CryptoUser => st.file.crypto_user.as_mut(),
            _ => st.file.limited_crypto_officer.as_mut(),
        }) else {
            return CKR_USER_PIN_NOT_INITIALIZED;
        };
        let salt = hex::decode(&cred.salt).unwrap_or_default();
        if verifier(&salt, old) != cred.verifier {
            return CKR_PIN_INCORRECT;
        }
        let salt = random(16);
        cred.verifier = verifier(&salt, new);
        cred.salt = hex::encode(salt);
        self.save(store, slot)
    }

    /// The Crypto Officer's PIN became `pin`: set by the SO (`reset`: policy 21 may flag it)
    /// or changed by the Crypto Officer (clears the flag). The sealed copy follows it.
    pub fn co_pin_set(
        &mut self,
        store: &Path,
        slot: CK_SLOT_ID,
        pin: &[u8],
        reset: bool,
        policy_21: bool,
    ) -> CK_RV {
        let st = self.slot(store, slot);
        st.file.co_pin_to_be_changed = reset && policy_21;
        if st.file.sealed_co_pin.is_some() {
            st.file.sealed_co_pin = Some(hex::encode(seal(store, slot, pin)));
        }
        if st.logged_in == Some(Role::CryptoOfficer) {
            st.co_pin = Some(Zeroizing::new(pin.to_vec()));
        }
        self.save(store, slot)
    }

    /// The token was initialized: every role is gone with its objects.
    pub fn wipe(&mut self, store: &Path, slot: CK_SLOT_ID) {
        self.slots.remove(&slot);
        let _ = fs::remove_file(file_of(store, slot));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crypto_user_uses_keys_only() {
        assert!(allowed(Role::CryptoUser, Action::Use));
        for a in [
            Action::Create,
            Action::Modify,
            Action::Destroy,
            Action::Wrap,
        ] {
            assert!(!allowed(Role::CryptoUser, a), "{a:?}");
        }
        assert!(allowed(Role::LimitedCryptoOfficer, Action::Create));
        assert!(!allowed(Role::LimitedCryptoOfficer, Action::Destroy));
        assert!(!allowed(Role::LimitedCryptoOfficer, Action::Wrap));
        assert!(allowed(Role::CryptoOfficer, Action::Destroy));
    }

    #[test]
    fn user_types() {
        assert_eq!(Role::from_user_type(0x8000_0001), Some(Role::CryptoUser));
        assert_eq!(Role::from_user_type(0x0800_0001), Some(Role::CryptoUser));
        assert_eq!(
            Role::from_user_type(0x8000_0003),
            Some(Role::LimitedCryptoOfficer)
        );
        assert_eq!(Role::from_user_type(CKU_USER), Some(Role::CryptoOfficer));
        assert_eq!(Role::from_user_type(0x8000_0002), None);
    }

    #[test]
    fn sealing_round_trips_and_hides() {
        let d = tempfile::tempdir().unwrap();
        let pin = b"a-crypto-officer-pin-longer-than-one-block-of-32-bytes";
        let sealed = seal(d.path(), 3, pin);
        assert_ne!(&sealed[..], &pin[..]);
        assert_eq!(seal(d.path(), 3, &sealed), pin);
    }

    #[test]
    fn extra_roles_check_their_pin_and_lock() {
        let d = tempfile::tempdir().unwrap();
        let mut r = Roles::default();
        assert_eq!(
            r.open_extra(d.path(), 1, Role::CryptoUser, b"x")
                .unwrap_err(),
            CKR_USER_PIN_NOT_INITIALIZED
        );
        // Only a logged-in Crypto Officer can create a role.
        assert_eq!(
            r.init_extra(d.path(), 1, Role::CryptoUser, b"cu-pin"),
            luna::CKR_USER_NOT_AUTHORIZED
        );
        r.logged_in(d.path(), 1, Role::CryptoOfficer, b"co-pin");
        assert_eq!(
            r.init_extra(d.path(), 1, Role::CryptoUser, b"cu-pin"),
            CKR_OK
        );
        // A fresh state (another process) reads the file.
        let mut r2 = Roles::default();
        assert_eq!(
            &r2.open_extra(d.path(), 1, Role::CryptoUser, b"cu-pin")
                .unwrap()[..],
            b"co-pin"
        );
        assert_eq!(
            r2.open_extra(d.path(), 1, Role::CryptoUser, b"wrong")
                .unwrap_err(),
            CKR_PIN_INCORRECT
        );
        for _ in 1..MAX_FAILURES {
            let _ = r2.open_extra(d.path(), 1, Role::CryptoUser, b"wrong");
        }
        assert_eq!(
            r2.open_extra(d.path(), 1, Role::CryptoUser, b"cu-pin")
                .unwrap_err(),
            CKR_PIN_LOCKED
        );
    }

    #[test]
    fn policy_21_flags_a_reset_and_a_change_clears_it() {
        let d = tempfile::tempdir().unwrap();
        let mut r = Roles::default();
        r.co_pin_set(d.path(), 1, b"new", true, true);
        assert!(r.co_pin_to_be_changed(d.path(), 1));
        assert_eq!(
            r.refusal(d.path(), 1, Some(Role::CryptoOfficer), Action::Use),
            Some(CKR_PIN_EXPIRED)
        );
        r.co_pin_set(d.path(), 1, b"newer", false, true);
        assert!(!r.co_pin_to_be_changed(d.path(), 1));
        assert_eq!(
            r.refusal(d.path(), 1, Some(Role::CryptoOfficer), Action::Use),
            None
        );
        // Without the policy a reset flags nothing.
        r.co_pin_set(d.path(), 1, b"again", true, false);
        assert!(!r.co_pin_to_be_changed(d.path(), 1));
    }
}
