//! The drift check of an HA group: what each member holds, object by object, and where the
//! members differ. Nothing in Luna's tools compares members this way; LunaCM shows one
//! "needs sync" flag per group, and a key missing on one member fails only on the day that
//! member serves the request.
//!
//! Per object: class, key type, label, `CKA_ID`, the public-key fingerprint (SHA-256 of
//! the SPKI for public keys, of `CKA_VALUE` for certificates), the KCV of secret keys and
//! `CKA_MODIFIABLE` / `CKA_EXTRACTABLE` / `CKA_SENSITIVE`; per partition: its policies.
//! Objects are matched across members by class and `CKA_ID` (by label when the ID is
//! empty), so a label changed on one member shows as a difference, not as two objects.

use std::collections::{BTreeMap, BTreeSet};

use p11::sys::*;
use p11::{Family, Mechanism, Session, Template};
use serde::Serialize;
use sha2::{Digest, Sha256};
use ts_rs::TS;

use crate::keys::{self, ObjectSummary};

/// How the console computes a key check value, said wherever a KCV is shown.
pub const KCV_METHOD: &str =
    "KCV = the first 3 bytes of the AES-ECB encryption of a zero block (DES3-ECB for triple-DES keys)";

/// What one member holds for one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct ObjectFacts {
    pub class: String,
    pub key_type: Option<String>,
    pub label: String,
    pub id_hex: String,
    pub modifiable: Option<bool>,
    pub extractable: Option<bool>,
    pub sensitive: Option<bool>,
    /// Public keys: `SHA256:` of the SPKI; certificates: of `CKA_VALUE`.
    pub fingerprint: Option<String>,
    /// Secret keys: see [`KCV_METHOD`].
    pub kcv: Option<String>,
    /// Why a secret key has no KCV.
    pub kcv_note: Option<String>,
}

/// The KCV of a secret key, or why there is none. A key with a Luna usage limit gets
/// none: the encryption would spend one of its uses.
fn kcv(s: &Session, o: &ObjectSummary, usage_limited: bool) -> (Option<String>, Option<String>) {
    let (mech, block) = match o.key_type.as_deref() {
        Some("AES") => (CKM_AES_ECB, 16),
        Some("DES3") => (CKM_DES3_ECB, 8),
        Some(other) => return (None, Some(format!("no KCV for {other} keys"))),
        None => return (None, None),
    };
    if usage_limited {
        return (
            None,
            Some("not computed: the key has a usage limit and a KCV would use one".into()),
        );
    }
    if !o.capabilities.encrypt {
        return (None, Some("not computed: the key may not encrypt".into()));
    }
    match s.encrypt(&Mechanism::new(mech), o.handle, &vec![0u8; block]) {
        Ok(ct) if ct.len() >= 3 => (Some(hex::encode(&ct[..3])), None),
        Ok(_) => (None, Some("the token returned a short block".into())),
        Err(e) => (None, Some(format!("not computed: {e}"))),
    }
}

/// Everything a session sees on one member, as the drift check compares it.
pub fn snapshot(s: &Session) -> crate::Result<Vec<ObjectFacts>> {
    let family = s.module().family();
    let mut out = Vec::new();
    for o in keys::list_objects(s, &mut Template::new())? {
        if o.class == "MECHANISM" || o.class == "PROFILE" {
            continue;
        }
        let mut asked = vec![CKA_MODIFIABLE];
        if family == Family::Luna {
            asked.push(p11::names::luna::CKA_USAGE_LIMIT);
        }
        let v = match s.get_attributes(o.handle, &asked) {
            Ok(v) => v,
            Err(e) if e.class() == p11::ErrorClass::KeyNotFound => continue,
            Err(e) => return Err(e.into()),
        };
        let usage_limited = v.get(1).and_then(|x| x.as_ulong()).is_some();
        let fingerprint = match o.class.as_str() {
            "PUBLIC_KEY" => keys::read_public_key(s, o.handle)
                .ok()
                .map(|pk| pk.fingerprint()),
            "CERTIFICATE" => s.get_attribute(o.handle, CKA_VALUE).ok().and_then(|v| {
                v.bytes()
                    .map(|b| format!("SHA256:{}", hex::encode(Sha256::digest(b))))
            }),
            _ => None,
        };
        let (kcv, kcv_note) = if o.class == "SECRET_KEY" {
            kcv(s, &o, usage_limited)
        } else {
            (None, None)
        };
        out.push(ObjectFacts {
            class: o.class.clone(),
            key_type: o.key_type.clone(),
            label: o.label.clone(),
            id_hex: o.id_hex.clone(),
            modifiable: v[0].as_bool(),
            extractable: o.extractable,
            sensitive: o.sensitive,
            fingerprint,
            kcv,
            kcv_note,
        });
    }
    Ok(out)
}

/// Whether a difference is an object some member lacks, or a value that differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DifferenceKind {
    Missing,
    Different,
}

crate::wire_display!(DifferenceKind);

/// One member's value in a difference (`None`: the member lacks the object or value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct MemberValue {
    pub member: u32,
    pub value: Option<String>,
}

/// One way the members differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct Difference {
    /// "private key 'fw_sign' (id 0a0b…)" or "policy 21 (Allow high availability recovery)".
    pub object: String,
    /// The same in a form each language translates.
    pub object_text: crate::Text,
    pub kind: DifferenceKind,
    /// The attribute that differs (`label`, `kcv`, …); `None` for a missing object.
    pub field: Option<String>,
    /// The same in a form each language translates.
    pub field_text: Option<crate::Text>,
    pub values: Vec<MemberValue>,
    /// The members that drifted: those lacking the object, or holding another value than
    /// most members (than the first member when there is no majority).
    pub members: Vec<u32>,
}

/// One member's objects, by its 1-based position in the group.
pub struct MemberObjects {
    pub member: u32,
    pub objects: Vec<ObjectFacts>,
}

/// An object class in words ("private key"); a class without an entry is its own name
/// lowercased, as English only.
fn class_words(class: &str) -> crate::Text {
    match class {
        "PRIVATE_KEY" => crate::text!("hsm.drift.class.private_key", "private key"),
        "PUBLIC_KEY" => crate::text!("hsm.drift.class.public_key", "public key"),
        "SECRET_KEY" => crate::text!("hsm.drift.class.secret_key", "secret key"),
        "CERTIFICATE" => crate::text!("hsm.drift.class.certificate", "certificate"),
        "DATA" => crate::text!("hsm.drift.class.data", "data"),
        other => crate::Text {
            text: other.to_lowercase().replace('_', " "),
            ..crate::Text::default()
        },
    }
}

/// "private key 'fw_sign' (id 0a0b…)".
fn describe(o: &ObjectFacts) -> crate::Text {
    let class = class_words(&o.class);
    if o.id_hex.is_empty() {
        crate::text!(
            "hsm.drift.object_no_id",
            "{{class}} '{{label}}' (id none)",
            class = &class,
            label = &o.label
        )
        .nest("class", &class)
    } else {
        crate::text!(
            "hsm.drift.object",
            "{{class}} '{{label}}' (id {{id}})",
            class = &class,
            label = &o.label,
            id = &o.id_hex
        )
        .nest("class", &class)
    }
}

/// A compared field's name as the officer reads it.
fn field_text(name: &str) -> crate::Text {
    match name {
        "key type" => crate::text!("hsm.drift.field.key_type", "key type"),
        "label" => crate::text!("hsm.drift.field.label", "label"),
        "fingerprint" => crate::text!("hsm.drift.field.fingerprint", "fingerprint"),
        "kcv" => crate::text!("hsm.drift.field.kcv", "kcv"),
        "modifiable" => crate::text!("hsm.drift.field.modifiable", "modifiable"),
        "extractable" => crate::text!("hsm.drift.field.extractable", "extractable"),
        "sensitive" => crate::text!("hsm.drift.field.sensitive", "sensitive"),
        "value" => crate::text!("hsm.drift.field.value", "value"),
        other => crate::Text {
            text: other.to_string(),
            ..crate::Text::default()
        },
    }
}

/// The key objects are matched by, and repeated keys numbered (`#2`) so duplicates on one
/// member are compared too.
fn keyed(objects: &[ObjectFacts]) -> BTreeMap<String, &ObjectFacts> {
    let mut out = BTreeMap::new();
    for o in objects {
        let base = if o.id_hex.is_empty() {
            format!("{}|label:{}", o.class, o.label)
        } else {
            format!("{}|id:{}", o.class, o.id_hex)
        };
        let mut k = base.clone();
        let mut n = 1;
        while out.contains_key(&k) {
            n += 1;
            k = format!("{base}#{n}");
        }
        out.insert(k, o);
    }
    out
}

fn show_bool(b: Option<bool>) -> Option<String> {
    b.map(|b| b.to_string())
}

/// The compared fields of an object, by name.
fn fields(o: &ObjectFacts) -> [(&'static str, Option<String>); 7] {
    [
        ("key type", o.key_type.clone()),
        ("label", Some(o.label.clone())),
        ("fingerprint", o.fingerprint.clone()),
        ("kcv", o.kcv.clone()),
        ("modifiable", show_bool(o.modifiable)),
        ("extractable", show_bool(o.extractable)),
        ("sensitive", show_bool(o.sensitive)),
    ]
}

/// The members holding another value than most (than the first member on a tie).
fn outliers(values: &[MemberValue]) -> Vec<u32> {
    let mut counts: BTreeMap<&Option<String>, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(&v.value).or_default() += 1;
    }
    let best = counts.values().copied().max().unwrap_or(0);
    let tied: Vec<&Option<String>> = counts
        .iter()
        .filter(|(_, n)| **n == best)
        .map(|(v, _)| *v)
        .collect();
    let reference = if tied.len() == 1 {
        tied[0]
    } else {
        &values[0].value
    };
    values
        .iter()
        .filter(|v| &v.value != reference)
        .map(|v| v.member)
        .collect()
}

/// Compare the members' objects: what is missing where, and what differs.
pub fn compare_objects(members: &[MemberObjects]) -> Vec<Difference> {
    let keyed: Vec<(u32, BTreeMap<String, &ObjectFacts>)> = members
        .iter()
        .map(|m| (m.member, keyed(&m.objects)))
        .collect();
    let all: BTreeSet<&String> = keyed.iter().flat_map(|(_, k)| k.keys()).collect();
    let mut out = Vec::new();
    for key in all {
        let held: Vec<(u32, Option<&ObjectFacts>)> = keyed
            .iter()
            .map(|(m, k)| (*m, k.get(key).copied()))
            .collect();
        let first = held.iter().find_map(|(_, o)| *o).expect("held somewhere");
        let object = describe(first);
        let lacking: Vec<u32> = held
            .iter()
            .filter(|(_, o)| o.is_none())
            .map(|(m, _)| *m)
            .collect();
        if !lacking.is_empty() {
            out.push(Difference {
                object: object.text.clone(),
                object_text: object.clone(),
                kind: DifferenceKind::Missing,
                field: None,
                field_text: None,
                values: held
                    .iter()
                    .map(|(m, o)| MemberValue {
                        member: *m,
                        value: o.map(|_| "present".to_string()),
                    })
                    .collect(),
                members: lacking,
            });
        }
        let present: Vec<(u32, &ObjectFacts)> = held
            .iter()
            .filter_map(|(m, o)| o.map(|o| (*m, o)))
            .collect();
        for (i, (name, _)) in fields(first).iter().enumerate() {
            let values: Vec<MemberValue> = present
                .iter()
                .map(|(m, o)| MemberValue {
                    member: *m,
                    value: fields(o)[i].1.clone(),
                })
                .collect();
            if values.windows(2).any(|w| w[0].value != w[1].value) {
                out.push(Difference {
                    object: object.text.clone(),
                    object_text: object.clone(),
                    kind: DifferenceKind::Different,
                    field: Some((*name).to_string()),
                    field_text: Some(field_text(name)),
                    members: outliers(&values),
                    values,
                });
            }
        }
    }
    out
}

/// Compare the members' partition policies (ID → value); `names` says what an ID is.
pub fn compare_policies(
    members: &[(u32, Vec<(u64, u64)>)],
    names: &BTreeMap<u64, String>,
) -> Vec<Difference> {
    let ids: BTreeSet<u64> = members
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(id, _)| *id))
        .collect();
    let mut out = Vec::new();
    for id in ids {
        let values: Vec<MemberValue> = members
            .iter()
            .map(|(m, p)| MemberValue {
                member: *m,
                value: p.iter().find(|(i, _)| *i == id).map(|(_, v)| v.to_string()),
            })
            .collect();
        if values.windows(2).all(|w| w[0].value == w[1].value) {
            continue;
        }
        let missing = values.iter().any(|v| v.value.is_none());
        let object = match names.get(&id) {
            Some(n) => crate::text!(
                "hsm.drift.policy_named",
                "policy {{id}} ({{name}})",
                id = id,
                name = n
            ),
            None => crate::text!("hsm.drift.policy", "policy {{id}}", id = id),
        };
        out.push(Difference {
            object: object.text.clone(),
            object_text: object,
            kind: if missing {
                DifferenceKind::Missing
            } else {
                DifferenceKind::Different
            },
            field: Some("value".into()),
            field_text: Some(field_text("value")),
            members: outliers(&values),
            values,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(class: &str, label: &str, id: &str) -> ObjectFacts {
        ObjectFacts {
            class: class.into(),
            key_type: Some("EC".into()),
            label: label.into(),
            id_hex: id.into(),
            modifiable: Some(true),
            extractable: Some(false),
            sensitive: Some(true),
            fingerprint: None,
            kcv: None,
            kcv_note: None,
        }
    }

    fn member(n: u32, objects: Vec<ObjectFacts>) -> MemberObjects {
        MemberObjects { member: n, objects }
    }

    #[test]
    fn identical_members_are_in_sync() {
        let objs = vec![key("PRIVATE_KEY", "a", "01"), key("PUBLIC_KEY", "a", "01")];
        assert!(compare_objects(&[member(1, objs.clone()), member(2, objs)]).is_empty());
    }

    #[test]
    fn a_missing_object_names_the_member_that_lacks_it() {
        let full = vec![
            key("PRIVATE_KEY", "fw", "0a"),
            key("PUBLIC_KEY", "fw", "0a"),
        ];
        let short = vec![key("PUBLIC_KEY", "fw", "0a")];
        let d = compare_objects(&[member(1, full.clone()), member(2, short), member(3, full)]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind, DifferenceKind::Missing);
        assert_eq!(d[0].members, vec![2]);
        assert_eq!(d[0].object, "private key 'fw' (id 0a)");
    }

    #[test]
    fn a_changed_label_is_a_difference_not_two_objects() {
        let d = compare_objects(&[
            member(1, vec![key("SECRET_KEY", "wrap", "07")]),
            member(2, vec![key("SECRET_KEY", "wrap-old", "07")]),
        ]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind, DifferenceKind::Different);
        assert_eq!(d[0].field.as_deref(), Some("label"));
        assert_eq!(
            d[0].members,
            vec![2],
            "on a tie the first member is the reference"
        );
        let mut k = key("SECRET_KEY", "wrap", "07");
        k.kcv = Some("aabbcc".into());
        let mut other = k.clone();
        other.kcv = Some("000000".into());
        let d = compare_objects(&[
            member(1, vec![other]),
            member(2, vec![k.clone()]),
            member(3, vec![k]),
        ]);
        assert_eq!(
            (d[0].field.as_deref(), d[0].members.clone()),
            (Some("kcv"), vec![1]),
            "the majority wins"
        );
    }

    #[test]
    fn policies_that_differ_are_named() {
        let names = BTreeMap::from([(21, "Allow high availability recovery".to_string())]);
        let d = compare_policies(
            &[(1, vec![(0, 0), (21, 1)]), (2, vec![(0, 0), (21, 0)])],
            &names,
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].object, "policy 21 (Allow high availability recovery)");
        assert_eq!(d[0].members, vec![2]);
    }
    #[test]
    fn object_and_field_texts_keep_the_english() {
        for class in [
            "PRIVATE_KEY",
            "PUBLIC_KEY",
            "SECRET_KEY",
            "CERTIFICATE",
            "DATA",
        ] {
            let t = class_words(class);
            assert_eq!(t.text, class.to_lowercase().replace('_', " "));
            assert!(!t.key.is_empty(), "{class} has a catalog text");
        }
        assert_eq!(class_words("OTP_KEY").text, "otp key");
        let mut o = key("PRIVATE_KEY", "fw", "0a");
        let t = describe(&o);
        assert_eq!(t.text, "private key 'fw' (id 0a)");
        assert_eq!(
            t.args.get("class.key").map(String::as_str),
            Some("hsm.drift.class.private_key")
        );
        o.id_hex.clear();
        assert_eq!(describe(&o).text, "private key 'fw' (id none)");
        for (name, _) in fields(&o).iter().chain([&("value", None)]) {
            let t = field_text(name);
            assert_eq!(&t.text, name);
            assert!(!t.key.is_empty(), "{name} has a catalog text");
        }
        let d = compare_policies(&[(1, vec![(21, 1)]), (2, vec![(21, 0)])], &BTreeMap::new());
        assert_eq!(d[0].object, "policy 21");
        assert_eq!(d[0].object_text.key, "hsm.drift.policy");
        assert_eq!(
            d[0].field_text.as_ref().map(|t| t.text.as_str()),
            Some("value")
        );
    }
}
