//! Objects the console has shown by handle, found again after the module reconnects.
//!
//! PKCS#11 handles live as long as the module's initialization: after a reconnect
//! (`C_Finalize` + `C_Initialize`, which the pool does by itself) a token may number its
//! objects anew, and the number the window or a script holds names nothing, or another
//! object. The binding tags every handle it gives out with the module generation it was
//! given out in and refuses to send a handle of another generation (`p11`'s
//! `session::handles`), so an old handle can never reach another object. This map is what
//! lets an old handle still work: per handle the console has handed out, what the object
//! is — its unique ID where the token gives one (Luna's `CKA_OUID`, PKCS#11 3.0's
//! `CKA_UNIQUE_ID`), and its class, `CKA_ID` and label. A call with a handle of an earlier
//! generation finds the object again by those and goes on with its new handle; when that
//! is not exactly one object the call fails with `KeyNotFound` ("refresh the key list"):
//! the console never guesses.

use std::collections::HashMap;

use hsm::keys::{self as hk, ObjectSummary};
use hsm::HsmError;
use p11::sys::CKA_ID;
use p11::{Session, Template};
use parking_lot::Mutex;

/// What a handle named when the console handed it out.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Known {
    /// The handle that names it now (the one handed out, until a reconnect moves it).
    handle: u64,
    unique_id: Option<String>,
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
    /// Remember objects read for the officer (a listing, a lookup).
    pub fn learn(&self, objects: &[ObjectSummary]) {
        let mut known = self.known.lock();
        for o in objects {
            let id = hex::decode(&o.id_hex).unwrap_or_default();
            if id.is_empty() && o.unique_id.is_none() {
                continue; // nothing to find it by
            }
            if known.len() >= MAX_KNOWN {
                known.clear();
            }
            known.insert(
                o.handle,
                Known {
                    handle: o.handle,
                    unique_id: o.unique_id.clone(),
                    class: o.class.clone(),
                    id,
                    label: o.label.clone(),
                },
            );
        }
    }

    /// The handle that names, on `s`, the object handed out as `shown`: itself when it
    /// was handed out in `s`'s module generation, else the same object found again.
    /// `KeyNotFound` when that object is not there any more, or not exactly once, or the
    /// console never handed `shown` out (then nothing says which object it was).
    pub fn resolve(&self, s: &Session, shown: u64) -> hsm::Result<u64> {
        let k = self.known.lock().get(&shown).cloned();
        let current = |h: u64| s.gave_out(h);
        match k {
            _ if current(shown) => Ok(shown),
            Some(k) if current(k.handle) => Ok(k.handle),
            Some(k) => {
                let now = find_again(s, &k, shown)?;
                if let Some(e) = self.known.lock().get_mut(&shown) {
                    e.handle = now;
                }
                Ok(now)
            }
            // Refused as the binding refuses it, naming the handle.
            None => Err(HsmError::from(p11::Error::StaleHandle {
                handle: shown,
                given_in: p11::handle_generation(shown),
                now: s.generation(),
            })),
        }
    }
}

/// The object `k` describes, on `s`: by its unique ID where it has one, else by class and
/// `CKA_ID` (the label decides only between several: it may have been edited since).
fn find_again(s: &Session, k: &Known, shown: u64) -> hsm::Result<u64> {
    let same_kind: Vec<ObjectSummary> = match k
        .unique_id
        .as_deref()
        .and_then(|u| hk::unique_id_attribute(s.module().family(), u))
    {
        Some((attr, value)) => hk::list_objects(s, &mut Template::new().bytes(attr, &value))?,
        None => hk::list_objects(s, &mut Template::new().bytes(CKA_ID, &k.id))?,
    }
    .into_iter()
    .filter(|o| o.class == k.class)
    .collect();
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
    Ok(now)
}
