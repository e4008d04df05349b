//! Objects the console has shown by handle, found again after the module reconnects.
//!
//! PKCS#11 handles live as long as the module's initialization: after a reconnect
//! (`C_Finalize` + `C_Initialize`, which the pool does by itself) a token may number its
//! objects anew, and the handle the window or a script holds names nothing, or another
//! object. The console remembers, per handle it has handed out, the module generation it was
//! valid in and what the object is (class, `CKA_ID`, label). A call by handle in a later
//! generation looks the object up by those and goes on with its new handle; when it is not
//! exactly one object the call fails with `KeyNotFound` ("refresh the key list"): the old
//! number may name another object now, and the console never guesses.

use std::collections::HashMap;

use hsm::keys::{self as hk, ObjectSummary};
use hsm::HsmError;
use p11::sys::CKA_ID;
use p11::{Session, Template};
use parking_lot::Mutex;

/// What a handle named when the console handed it out.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Known {
    generation: u64,
    /// The handle in `generation` (the one handed out, until a reconnect moves it).
    handle: u64,
    class: String,
    id: Vec<u8>,
    label: String,
}

/// Handles handed out on one partition (see the module documentation).
#[derive(Debug, Default)]
pub struct KeyRefs {
    known: Mutex<HashMap<u64, Known>>,
}

/// More than any token's listing; the map is emptied rather than grown past it.
const MAX_KNOWN: usize = 100_000;

impl KeyRefs {
    /// Remember objects read in module generation `generation` (a listing, a lookup).
    pub fn learn(&self, generation: u64, objects: &[ObjectSummary]) {
        for o in objects {
            if let Ok(id) = hex::decode(&o.id_hex) {
                self.learn_one(generation, o.handle, &o.class, &id, &o.label);
            }
        }
    }

    /// Remember one object (`class` as [`ObjectSummary`] names it: `PRIVATE_KEY`, …).
    pub fn learn_one(&self, generation: u64, handle: u64, class: &str, id: &[u8], label: &str) {
        if id.is_empty() {
            return; // nothing to find it by
        }
        let mut known = self.known.lock();
        if known.len() >= MAX_KNOWN {
            known.clear();
        }
        known.insert(
            handle,
            Known {
                generation,
                handle,
                class: class.into(),
                id: id.to_vec(),
                label: label.into(),
            },
        );
    }

    /// The handle that names, on `s`, the object handed out as `shown`: itself in the
    /// generation it was handed out in (or when the console never saw it), else the same
    /// object found again. `KeyNotFound` when that object is not there any more, or not
    /// exactly once — the old number may name another object now.
    pub fn resolve(&self, s: &Session, shown: u64) -> hsm::Result<u64> {
        let Some(k) = self.known.lock().get(&shown).cloned() else {
            return Ok(shown);
        };
        if k.generation == s.generation() {
            return Ok(k.handle);
        }
        let same_kind: Vec<ObjectSummary> =
            hk::list_objects(s, &mut Template::new().bytes(CKA_ID, &k.id))?
                .into_iter()
                .filter(|o| o.class == k.class)
                .collect();
        // Class and ID say which object it is; the label decides only between several (it
        // may have been edited since).
        let found: Vec<u64> = match &same_kind[..] {
            [one] => vec![one.handle],
            many => many
                .iter()
                .filter(|o| o.label == k.label)
                .map(|o| o.handle)
                .collect(),
        };
        let [now] = found[..] else {
            let what = hsm::keys::class_msg_named(&k.class);
            return Err(HsmError::KeyNotFound(
                hsm::text!(
                    "errors.handle_gone_after_reconnect",
                    "the {{what}} '{{label}}' (ID {{id}}) that handle {{handle}} named before the HSM reconnected: {{n}} such objects now",
                    what = what,
                    label = k.label,
                    id = hex::encode(&k.id),
                    handle = shown,
                    n = found.len()
                )
                .nest("what", &what),
            ));
        };
        if let Some(e) = self.known.lock().get_mut(&shown) {
            e.generation = s.generation();
            e.handle = now;
        }
        Ok(now)
    }
}
