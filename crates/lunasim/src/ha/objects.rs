//! Objects seen through a group's virtual slot. A virtual handle stands for "this object
//! on every member": the copies are found on each member by their identity — class and
//! `CKA_ID` (and the label when the ID is empty or ambiguous). Luna finds them by its
//! object UID; lunasim gives objects created in a group a random `CKA_ID` when the
//! template has none, so that the identity is unique.

use std::collections::HashMap;

use cryptoki_sys::*;
use serde::{Deserialize, Serialize};

use super::call;
use crate::tpl::Tpl;

/// Virtual object handles: 0x4841_0000 ("HA") and up.
pub const VOBJECT_BASE: CK_OBJECT_HANDLE = 0x4841_0000;

/// How the copies of one object are recognised on each member.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Identity {
    pub class: CK_OBJECT_CLASS,
    #[serde(with = "hex_bytes")]
    pub id: Vec<u8>,
    #[serde(with = "hex_bytes")]
    pub label: Vec<u8>,
}

pub(crate) mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(v))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        hex::decode(s).map_err(serde::de::Error::custom)
    }
}

/// Keys and certificates carry `CKA_ID`; data objects do not have it.
pub fn has_id(class: CK_OBJECT_CLASS) -> bool {
    matches!(
        class,
        CKO_PRIVATE_KEY | CKO_PUBLIC_KEY | CKO_SECRET_KEY | CKO_CERTIFICATE
    )
}

impl Identity {
    /// The identity a creation template gives an object.
    pub fn of_template(t: &Tpl) -> Identity {
        Identity {
            class: t.ulong(CKA_CLASS).unwrap_or(CKO_DATA),
            id: t.get(CKA_ID).unwrap_or_default().to_vec(),
            label: t.get(CKA_LABEL).unwrap_or_default().to_vec(),
        }
    }

    /// Read an object's identity on a member (and whether it is a token object).
    pub fn read(h: CK_SESSION_HANDLE, obj: CK_OBJECT_HANDLE) -> Result<(Identity, bool), CK_RV> {
        let class = call::attr(h, obj, CKA_CLASS)?
            .as_deref()
            .and_then(crate::raw::as_ulong)
            .unwrap_or(CKO_DATA);
        let id = if has_id(class) {
            call::attr(h, obj, CKA_ID)?.unwrap_or_default()
        } else {
            Vec::new()
        };
        let label = call::attr(h, obj, CKA_LABEL)?.unwrap_or_default();
        let token = call::attr(h, obj, CKA_TOKEN)?
            .as_deref()
            .and_then(crate::raw::as_bool)
            .unwrap_or(false);
        Ok((Identity { class, id, label }, token))
    }

    /// The search template that finds the copies on a member.
    pub fn search(&self, token: bool) -> Tpl {
        let mut t = Tpl::default();
        t.set_ulong(CKA_CLASS, self.class);
        if !self.id.is_empty() && has_id(self.class) {
            t.set(CKA_ID, self.id.clone());
        } else {
            t.set(CKA_LABEL, self.label.clone());
        }
        t.set_bool(CKA_TOKEN, token);
        t
    }

    /// "private key 'fw_sign' (id 0a0b…)", as the HA state lists it.
    pub fn describe(&self) -> String {
        let class = match self.class {
            CKO_PRIVATE_KEY => "private key",
            CKO_PUBLIC_KEY => "public key",
            CKO_SECRET_KEY => "secret key",
            CKO_CERTIFICATE => "certificate",
            CKO_DATA => "data object",
            _ => "object",
        };
        format!(
            "{class} '{}' (id {})",
            String::from_utf8_lossy(&self.label),
            if self.id.is_empty() {
                "none".to_string()
            } else {
                hex::encode(&self.id)
            }
        )
    }
}

/// One object of the virtual slot.
#[derive(Debug, Clone)]
pub struct VObject {
    pub handle: CK_OBJECT_HANDLE,
    pub identity: Identity,
    pub token: bool,
    /// The replication record of a token object created in the group.
    pub uid: Option<String>,
    /// The virtual session that made this session object (gone with it).
    pub owner: Option<CK_SESSION_HANDLE>,
    /// The copy's handle on each member, once known.
    pub on: HashMap<usize, CK_OBJECT_HANDLE>,
}

/// A group's virtual objects.
#[derive(Debug, Default)]
pub struct Table {
    objects: HashMap<CK_OBJECT_HANDLE, VObject>,
    next: CK_OBJECT_HANDLE,
}

impl Table {
    pub fn get(&self, h: CK_OBJECT_HANDLE) -> Option<&VObject> {
        self.objects.get(&h)
    }

    pub fn get_mut(&mut self, h: CK_OBJECT_HANDLE) -> Option<&mut VObject> {
        self.objects.get_mut(&h)
    }

    pub fn remove(&mut self, h: CK_OBJECT_HANDLE) -> Option<VObject> {
        self.objects.remove(&h)
    }

    /// The virtual handle for an identity, made on first sight.
    pub fn handle_for(&mut self, identity: &Identity, token: bool) -> CK_OBJECT_HANDLE {
        if let Some(o) = self
            .objects
            .values()
            .find(|o| o.identity == *identity && o.token == token)
        {
            return o.handle;
        }
        if self.next < VOBJECT_BASE {
            self.next = VOBJECT_BASE;
        }
        let h = self.next;
        self.next += 1;
        self.objects.insert(
            h,
            VObject {
                handle: h,
                identity: identity.clone(),
                token,
                uid: None,
                owner: None,
                on: HashMap::new(),
            },
        );
        h
    }

    /// Forget the member handles of every object (a member's sessions were reset).
    pub fn forget_member(&mut self, member: usize) {
        for o in self.objects.values_mut() {
            o.on.remove(&member);
        }
    }

    /// Forget the session objects a virtual session made (`None`: all session objects):
    /// their copies went with its member sessions.
    pub fn forget_session_objects(&mut self, owner: Option<CK_SESSION_HANDLE>) {
        self.objects
            .retain(|_, o| o.token || (owner.is_some() && o.owner != owner));
    }
}

/// Find the copy of `identity` on a member through one of its sessions: the object with
/// that identity, preferring the exact label when several share class and ID.
pub fn locate(
    h: CK_SESSION_HANDLE,
    identity: &Identity,
    token: bool,
) -> Result<Option<CK_OBJECT_HANDLE>, CK_RV> {
    let found = call::find(h, &mut identity.search(token))?;
    if found.len() <= 1 {
        return Ok(found.first().copied());
    }
    for obj in &found {
        if call::attr(h, *obj, CKA_LABEL)?.unwrap_or_default() == identity.label {
            return Ok(Some(*obj));
        }
    }
    Ok(found.first().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_handle_per_identity() {
        let mut t = Table::default();
        let a = Identity {
            class: CKO_PRIVATE_KEY,
            id: vec![1],
            label: b"k".to_vec(),
        };
        let b = Identity {
            class: CKO_PUBLIC_KEY,
            ..a.clone()
        };
        let ha = t.handle_for(&a, true);
        assert!(ha >= VOBJECT_BASE);
        assert_eq!(t.handle_for(&a, true), ha);
        assert_ne!(t.handle_for(&b, true), ha);
        assert_ne!(
            t.handle_for(&a, false),
            ha,
            "session and token objects differ"
        );
    }

    #[test]
    fn searches_use_the_id_when_there_is_one() {
        let with_id = Identity {
            class: CKO_SECRET_KEY,
            id: vec![9, 9],
            label: b"x".to_vec(),
        };
        let s = with_id.search(true);
        assert_eq!(s.get(CKA_ID), Some(&[9u8, 9][..]));
        assert!(s.get(CKA_LABEL).is_none());
        let data = Identity {
            class: CKO_DATA,
            id: vec![],
            label: b"d".to_vec(),
        };
        assert_eq!(data.search(true).get(CKA_LABEL), Some(&b"d"[..]));
        assert!(with_id.describe().contains("secret key 'x' (id 0909)"));
    }
}
