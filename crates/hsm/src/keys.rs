//! Objects on a token: listing with decoded summaries, every attribute of one object,
//! finding keys by label or ID, generating from presets (with the public-key size check),
//! destroying, reading public keys.
//!
//! Labels are not unique in PKCS#11: objects are identified by (class, CKA_ID, label) and
//! duplicate labels are flagged, never silently resolved.

use std::collections::HashMap;

use p11::sys::*;
use p11::{attr_kind, AttrKind, AttrValue, Family, ObjectHandle, Session, Template};
use serde::Serialize;

use crate::algo::{Curve, KeySpec, LmotsType, LmsType, MlDsaSet, MlKemSet, SlhDsaSet};
use crate::error::{HsmError, Result};
use crate::pubkey::PublicKey;
use crate::templates::{self, KeyAttrs};

/// How an officer or a script names a key: `label:NAME`, `id:HEX`, or a raw handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySelector {
    Label(String),
    Id(Vec<u8>),
    /// The token's identity of the object ([`ObjectSummary::unique_id`]).
    UniqueId(String),
    Handle(ObjectHandle),
    /// A PKCS#11 URI (RFC 7512): its `object`, `id` and `type` select within the partition.
    Uri {
        text: String,
        label: Option<String>,
        id: Option<Vec<u8>>,
        class: Option<u64>,
    },
}

impl KeySelector {
    pub fn parse(s: &str) -> Result<KeySelector> {
        if let Some(l) = s.strip_prefix("label:") {
            if l.is_empty() {
                return Err(HsmError::Refused(crate::text!(
                    "errors.selector_empty_label",
                    "an empty label selects nothing"
                )));
            }
            Ok(KeySelector::Label(l.to_string()))
        } else if let Some(h) = s.strip_prefix("id:") {
            hex::decode(h.trim()).map(KeySelector::Id).map_err(|_| {
                HsmError::Refused(crate::text!(
                    "errors.selector_id_not_hex",
                    "'{{id}}' is not a hexadecimal key ID",
                    id = h
                ))
            })
        } else if let Some(u) = s.strip_prefix("uid:") {
            if u.trim().is_empty() {
                return Err(HsmError::Refused(crate::text!(
                    "errors.selector_empty_uid",
                    "an empty unique ID selects nothing"
                )));
            }
            Ok(KeySelector::UniqueId(u.trim().to_string()))
        } else if s.starts_with("pkcs11:") {
            let u = crate::uri::Pkcs11Uri::parse(s).map_err(HsmError::Refused)?;
            let (label, id, class) = (
                u.text("object"),
                u.get("id").map(<[u8]>::to_vec),
                u.class().map_err(HsmError::Refused)?,
            );
            if label.is_none() && id.is_none() {
                return Err(HsmError::Refused(crate::text!(
                    "errors.selector_uri_names_nothing",
                    "'{{uri}}' names no object; add object=LABEL or id=%XX",
                    uri = s
                )));
            }
            Ok(KeySelector::Uri {
                text: s.to_string(),
                label,
                id,
                class,
            })
        } else if let Some(h) = s.strip_prefix("handle:") {
            h.parse().map(KeySelector::Handle).map_err(|_| {
                HsmError::Refused(crate::text!(
                    "errors.selector_not_handle",
                    "'{{handle}}' is not an object handle",
                    handle = h
                ))
            })
        } else {
            Err(HsmError::Refused(crate::text!(
                "errors.selector_unknown",
                "'{{selector}}' is not a key selector; use label:NAME, id:HEX, uid:UNIQUE-ID or a pkcs11: URI",
                selector = s
            )))
        }
    }

    fn template(&self, class: Option<u64>, family: Family) -> Template {
        let t = Template::new().maybe(class, |t, c| t.ulong(CKA_CLASS, c));
        match self {
            KeySelector::Label(l) => t.text(CKA_LABEL, l),
            KeySelector::Id(id) => t.bytes(CKA_ID, id),
            KeySelector::UniqueId(u) => match unique_id_attribute(family, u) {
                Some((a, v)) => t.bytes(a, &v),
                // Cannot be any object's: a search that finds nothing.
                None => t.bytes(p11::names::luna::CKA_OUID, &[]),
            },
            KeySelector::Handle(_) => t,
            KeySelector::Uri {
                label,
                id,
                class: c,
                ..
            } => {
                let t = match (c, class) {
                    (Some(c), None) => t.ulong(CKA_CLASS, *c),
                    _ => t,
                };
                let t = t.maybe(label.as_ref(), |t, l| t.text(CKA_LABEL, l));
                t.maybe(id.as_ref(), |t, i| t.bytes(CKA_ID, i))
            }
        }
    }

    /// The class a URI's `type=` asks for (`None` for other selectors).
    pub fn uri_class(&self) -> Option<u64> {
        match self {
            KeySelector::Uri { class, .. } => *class,
            _ => None,
        }
    }
}

impl std::fmt::Display for KeySelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySelector::Label(l) => write!(f, "label:{l}"),
            KeySelector::Id(id) => write!(f, "id:{}", hex::encode(id)),
            KeySelector::UniqueId(u) => write!(f, "uid:{u}"),
            KeySelector::Handle(h) => write!(f, "handle:{h}"),
            KeySelector::Uri { text, .. } => f.write_str(text),
        }
    }
}

/// What a key may do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Capabilities {
    pub sign: bool,
    pub verify: bool,
    pub encrypt: bool,
    pub decrypt: bool,
    pub wrap: bool,
    pub unwrap: bool,
    pub derive: bool,
    pub encapsulate: bool,
    pub decapsulate: bool,
}

/// One row of the keys table.
#[derive(Debug, Clone, Default, Serialize, ts_rs::TS)]
pub struct ObjectSummary {
    pub handle: u64,
    pub class: String,
    pub key_type: Option<String>,
    pub label: String,
    pub id_hex: String,
    /// "ML-DSA-65", "ECDSA P-256", "RSA-3072", "AES-256", "HSS/LMS H5/H5", …
    pub algorithm: String,
    pub parameter_set: Option<String>,
    pub token: bool,
    pub private: bool,
    pub sensitive: Option<bool>,
    pub extractable: Option<bool>,
    pub local: Option<bool>,
    pub capabilities: Capabilities,
    pub hss_keys_remaining: Option<u64>,
    /// HSS: signatures the key can make in total (decimal; can exceed 2^64), from its LMS
    /// types.
    pub hss_capacity: Option<String>,
    /// Another object of the same class carries the same label.
    pub duplicate_label: bool,
    /// Luna's per-key usage limit (`CKA_USAGE_LIMIT`), on Luna modules, when the key has one.
    pub usage_limit: Option<u64>,
    /// Uses so far (`CKA_USAGE_COUNT`), with the limit.
    pub usage_count: Option<u64>,
    /// The object's identity on its token, where the token gives one: Luna's `CKA_OUID`
    /// (hexadecimal) on Luna modules, else PKCS#11 3.0's `CKA_UNIQUE_ID`. `hsmc` selects
    /// an object by it with `uid:VALUE`; it outlives handles (see [`unique_id_attribute`]).
    pub unique_id: Option<String>,
    /// `CKA_TRUSTED`: the security officer marked this (public or secret) key as one that
    /// may wrap keys restricted to trusted wrapping keys. `None`: the object has no such
    /// attribute (a private key, or a token that does not know it).
    pub trusted: Option<bool>,
    /// `CKA_WRAP_WITH_TRUSTED`: the key leaves the token only wrapped under a trusted key.
    pub wrap_with_trusted: Option<bool>,
    /// `CKA_START_DATE` and `CKA_END_DATE` (`YYYY-MM-DD`) of a key, where set: the period
    /// it is meant to be used in (PKCS#11 leaves enforcing them to the application).
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    /// `CKA_ALWAYS_AUTHENTICATE` of a private key: each signature wants a context-specific
    /// login (the PIN again). `None`: not a private key, or the token does not say.
    #[ts(optional)]
    pub always_authenticate: Option<bool>,
}

/// The attribute and value that find the object whose [`ObjectSummary::unique_id`] is
/// `uid` on a module of `family`: `CKA_OUID` (bytes) on Luna, `CKA_UNIQUE_ID` (text)
/// elsewhere. `None` when `uid` cannot be one (not hexadecimal on Luna).
pub fn unique_id_attribute(family: Family, uid: &str) -> Option<(u64, Vec<u8>)> {
    if family == Family::Luna {
        hex::decode(uid)
            .ok()
            .map(|b| (p11::names::luna::CKA_OUID, b))
    } else {
        Some((CKA_UNIQUE_ID, uid.as_bytes().to_vec()))
    }
}

/// Attributes read for the listing (one `C_GetAttributeValue` round per object).
const SUMMARY_ATTRS: &[u64] = &[
    CKA_CLASS,
    CKA_KEY_TYPE,
    CKA_LABEL,
    CKA_ID,
    CKA_TOKEN,
    CKA_PRIVATE,
    CKA_SENSITIVE,
    CKA_EXTRACTABLE,
    CKA_LOCAL,
    CKA_SIGN,
    CKA_VERIFY,
    CKA_ENCRYPT,
    CKA_DECRYPT,
    CKA_WRAP,
    CKA_UNWRAP,
    CKA_DERIVE,
    CKA_ENCAPSULATE,
    CKA_DECAPSULATE,
    CKA_PARAMETER_SET,
    CKA_MODULUS_BITS,
    CKA_MODULUS,
    CKA_VALUE_LEN,
    CKA_EC_PARAMS,
    CKA_HSS_LMS_TYPES,
    CKA_HSS_LMOTS_TYPES,
    CKA_HSS_LMS_TYPE,
    CKA_HSS_KEYS_REMAINING,
    CKA_CERTIFICATE_TYPE,
    p11::names::luna::CKA_USAGE_LIMIT,
    p11::names::luna::CKA_USAGE_COUNT,
    CKA_UNIQUE_ID,
    p11::names::luna::CKA_OUID,
    CKA_TRUSTED,
    CKA_WRAP_WITH_TRUSTED,
    CKA_START_DATE,
    CKA_END_DATE,
    CKA_ALWAYS_AUTHENTICATE,
];

/// "HSS/LMS H5/W8+H5/W8" (SHA-256), "HSS/LMS SHA-256/192 H5/W8" (every level M24), and for
/// levels of both: "HSS/LMS H10/W4+H5/W8 (level 1 SHA-256/192)".
fn hss_name(lms: &[u64], ots: &[u64]) -> String {
    let types: Vec<Option<LmsType>> = lms.iter().map(|l| LmsType::from_code(*l)).collect();
    let levels: Vec<String> = lms
        .iter()
        .zip(ots.iter().chain(std::iter::repeat(&0)))
        .map(|(l, o)| {
            let l = LmsType::from_code(*l)
                .map(|t| format!("H{}", t.height()))
                .unwrap_or_else(|| format!("LMS#{l}"));
            let o = LmotsType::from_code(*o)
                .map(|t| format!("W{}", t.w()))
                .unwrap_or_default();
            if o.is_empty() {
                l
            } else {
                format!("{l}/{o}")
            }
        })
        .collect();
    let short: Vec<usize> = (0..types.len())
        .filter(|i| types[*i].is_some_and(|t| t.m() == 24))
        .collect();
    if short.is_empty() {
        format!("HSS/LMS {}", levels.join("+"))
    } else if short.len() == types.len() {
        format!("HSS/LMS SHA-256/192 {}", levels.join("+"))
    } else {
        let which: Vec<String> = short.iter().map(|i| (i + 1).to_string()).collect();
        format!(
            "HSS/LMS {} (level {} SHA-256/192)",
            levels.join("+"),
            which.join(", ")
        )
    }
}

/// Describe a key's algorithm from its attributes.
fn describe(
    key_type: Option<u64>,
    v: &HashMap<u64, &AttrValue>,
    family: Family,
) -> (String, Option<String>) {
    let ulong = |a: u64| v.get(&a).and_then(|x| x.as_ulong());
    let pset = ulong(CKA_PARAMETER_SET);
    match key_type {
        Some(CKK_ML_DSA) => {
            let s = pset.and_then(MlDsaSet::from_parameter_set);
            (
                s.map(|s| s.name().to_string()).unwrap_or("ML-DSA".into()),
                s.map(|s| s.name().into()),
            )
        }
        Some(CKK_ML_KEM) => {
            let s = pset.and_then(MlKemSet::from_parameter_set);
            (
                s.map(|s| s.name().to_string()).unwrap_or("ML-KEM".into()),
                s.map(|s| s.name().into()),
            )
        }
        Some(CKK_SLH_DSA) => {
            let s = pset.and_then(SlhDsaSet::from_parameter_set);
            (
                s.map(|s| s.name().to_string()).unwrap_or("SLH-DSA".into()),
                s.map(|s| s.name().into()),
            )
        }
        Some(CKK_HSS) => {
            let lms = v
                .get(&CKA_HSS_LMS_TYPES)
                .and_then(|x| x.as_ulongs())
                .or_else(|| ulong(CKA_HSS_LMS_TYPE).map(|t| vec![t]));
            let ots = v
                .get(&CKA_HSS_LMOTS_TYPES)
                .and_then(|x| x.as_ulongs())
                .or_else(|| ulong(CKA_HSS_LMOTS_TYPE).map(|t| vec![t]));
            match lms {
                Some(l) => (hss_name(&l, &ots.unwrap_or_default()), None),
                None => ("HSS/LMS".into(), None),
            }
        }
        Some(CKK_EC) | Some(CKK_EC_EDWARDS) => {
            let curve = v
                .get(&CKA_EC_PARAMS)
                .and_then(|x| x.bytes())
                .and_then(Curve::from_ec_params);
            match curve {
                Some(Curve::Ed25519) => ("Ed25519".into(), Some("Ed25519".into())),
                Some(c) => (format!("ECDSA {}", c.name()), Some(c.name().into())),
                None if key_type == Some(CKK_EC_EDWARDS) => ("EdDSA".into(), None),
                None => ("EC".into(), None),
            }
        }
        // A key made by C_CreateObject or C_UnwrapKey (an import, an HA group's copy) may
        // answer no CKA_MODULUS_BITS, which is a generation attribute: its modulus says it.
        Some(CKK_RSA) => match ulong(CKA_MODULUS_BITS).or_else(|| {
            let m = v.get(&CKA_MODULUS).and_then(|x| x.bytes())?;
            Some(crate::pubkey::significant_bits(m) as u64).filter(|b| *b > 0)
        }) {
            Some(b) => (format!("RSA-{b}"), None),
            None => ("RSA".into(), None),
        },
        Some(CKK_AES) => match ulong(CKA_VALUE_LEN) {
            Some(n) => (format!("AES-{}", n * 8), None),
            None => ("AES".into(), None),
        },
        Some(CKK_GENERIC_SECRET) => match ulong(CKA_VALUE_LEN) {
            Some(n) => (format!("Generic secret ({} bits)", n * 8), None),
            None => ("Generic secret".into(), None),
        },
        Some(kt) => (
            p11::names::key_type_name(kt, family)
                .trim_start_matches("CKK_")
                .to_string(),
            None,
        ),
        None => (String::new(), None),
    }
}

fn summarize(handle: ObjectHandle, values: &[AttrValue], family: Family) -> ObjectSummary {
    let v: HashMap<u64, &AttrValue> = SUMMARY_ATTRS.iter().copied().zip(values.iter()).collect();
    let b = |a: u64| v.get(&a).and_then(|x| x.as_bool());
    let class = v.get(&CKA_CLASS).and_then(|x| x.as_ulong());
    let key_type = v.get(&CKA_KEY_TYPE).and_then(|x| x.as_ulong());
    let (mut algorithm, parameter_set) = describe(key_type, &v, family);
    if algorithm.is_empty() && class == Some(CKO_CERTIFICATE) {
        algorithm = match v.get(&CKA_CERTIFICATE_TYPE).and_then(|x| x.as_ulong()) {
            Some(CKC_X_509) => "X.509 certificate".into(),
            _ => "certificate".into(),
        };
    }
    ObjectSummary {
        handle,
        class: class
            .map(|c| {
                p11::names::object_class_name(c, family)
                    .trim_start_matches("CKO_")
                    .to_string()
            })
            .unwrap_or_else(|| "?".into()),
        key_type: key_type.map(|k| {
            p11::names::key_type_name(k, family)
                .trim_start_matches("CKK_")
                .to_string()
        }),
        label: v
            .get(&CKA_LABEL)
            .and_then(|x| x.as_text())
            .unwrap_or_default(),
        id_hex: v
            .get(&CKA_ID)
            .and_then(|x| x.bytes())
            .map(hex::encode)
            .unwrap_or_default(),
        algorithm,
        parameter_set,
        token: b(CKA_TOKEN).unwrap_or(false),
        private: b(CKA_PRIVATE).unwrap_or(false),
        sensitive: b(CKA_SENSITIVE),
        extractable: b(CKA_EXTRACTABLE),
        local: b(CKA_LOCAL),
        capabilities: Capabilities {
            sign: b(CKA_SIGN).unwrap_or(false),
            verify: b(CKA_VERIFY).unwrap_or(false),
            encrypt: b(CKA_ENCRYPT).unwrap_or(false),
            decrypt: b(CKA_DECRYPT).unwrap_or(false),
            wrap: b(CKA_WRAP).unwrap_or(false),
            unwrap: b(CKA_UNWRAP).unwrap_or(false),
            derive: b(CKA_DERIVE).unwrap_or(false),
            encapsulate: b(CKA_ENCAPSULATE).unwrap_or(false),
            decapsulate: b(CKA_DECAPSULATE).unwrap_or(false),
        },
        hss_keys_remaining: v.get(&CKA_HSS_KEYS_REMAINING).and_then(|x| x.as_ulong()),
        hss_capacity: v
            .get(&CKA_HSS_LMS_TYPES)
            .and_then(|x| x.as_ulongs())
            .or_else(|| {
                v.get(&CKA_HSS_LMS_TYPE)
                    .and_then(|x| x.as_ulong())
                    .map(|t| vec![t])
            })
            .and_then(|l| swverify::hss::capacity(&l.iter().map(|&t| t as u32).collect::<Vec<_>>()))
            .map(|c| c.to_string()),
        duplicate_label: false,
        // Vendor attribute numbers mean something else elsewhere: read them on Luna only.
        usage_limit: (family == Family::Luna)
            .then(|| {
                v.get(&p11::names::luna::CKA_USAGE_LIMIT)
                    .and_then(|x| x.as_ulong())
            })
            .flatten(),
        usage_count: (family == Family::Luna)
            .then(|| {
                v.get(&p11::names::luna::CKA_USAGE_COUNT)
                    .and_then(|x| x.as_ulong())
            })
            .flatten(),
        unique_id: unique_id_of(&v, family),
        trusted: b(CKA_TRUSTED),
        wrap_with_trusted: b(CKA_WRAP_WITH_TRUSTED),
        start_date: v.get(&CKA_START_DATE).and_then(|x| x.as_date()),
        end_date: v.get(&CKA_END_DATE).and_then(|x| x.as_date()),
        always_authenticate: b(CKA_ALWAYS_AUTHENTICATE),
    }
}

/// See [`ObjectSummary::unique_id`].
fn unique_id_of(v: &HashMap<u64, &AttrValue>, family: Family) -> Option<String> {
    let ouid = (family == Family::Luna)
        .then(|| v.get(&p11::names::luna::CKA_OUID).and_then(|x| x.bytes()))
        .flatten()
        .filter(|b| !b.is_empty())
        .map(hex::encode);
    if family == Family::Luna {
        return ouid;
    }
    v.get(&CKA_UNIQUE_ID)
        .and_then(|x| x.as_text())
        .filter(|t| !t.is_empty())
}

/// Every object visible to the session (or those matching `filter`), summarized.
pub fn list_objects(s: &Session, filter: &mut Template) -> p11::Result<Vec<ObjectSummary>> {
    let handles = s.find_objects(filter)?;
    let family = s.module().family();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        match s.get_attributes_with(h, SUMMARY_ATTRS, false) {
            Ok(values) => out.push(summarize(h, &values, family)),
            // Destroyed between the search and the read: not an error for a listing.
            Err(e) if e.class() == p11::ErrorClass::KeyNotFound => continue,
            Err(e) => return Err(e),
        }
    }
    mark_duplicates(&mut out);
    Ok(out)
}

/// The listing row of one object (duplicate flag not computed).
pub fn summary(s: &Session, handle: ObjectHandle) -> p11::Result<ObjectSummary> {
    let values = s.get_attributes_with(handle, SUMMARY_ATTRS, false)?;
    Ok(summarize(handle, &values, s.module().family()))
}

fn mark_duplicates(list: &mut [ObjectSummary]) {
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    for o in list.iter() {
        if !o.label.is_empty() {
            *seen.entry((o.class.clone(), o.label.clone())).or_default() += 1;
        }
    }
    for o in list.iter_mut() {
        o.duplicate_label = seen
            .get(&(o.class.clone(), o.label.clone()))
            .copied()
            .unwrap_or(0)
            > 1;
    }
}

/// How the UI should render an attribute value.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum AttrDisplay {
    Bool,
    Number,
    Text,
    Date,
    Hex,
    /// A named constant (class, key type, mechanism, parameter set, curve).
    Name,
}

/// Whether an attribute's value could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum AttrStatus {
    Value,
    /// The token keeps it secret (`CKR_ATTRIBUTE_SENSITIVE`).
    Sensitive,
    /// The token could not say.
    Unavailable,
}

crate::wire_display!(AttrStatus);

/// One decoded attribute of the detail pane.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct AttributeView {
    pub attribute: String,
    pub code: u64,
    pub status: AttrStatus,
    pub display: AttrDisplay,
    pub value: Option<String>,
}

/// Attributes shown in the detail pane, when the object has them.
const DETAIL_ATTRS: &[u64] = &[
    CKA_CLASS,
    CKA_KEY_TYPE,
    CKA_LABEL,
    CKA_ID,
    CKA_TOKEN,
    CKA_PRIVATE,
    CKA_MODIFIABLE,
    CKA_COPYABLE,
    CKA_DESTROYABLE,
    CKA_LOCAL,
    CKA_KEY_GEN_MECHANISM,
    CKA_START_DATE,
    CKA_END_DATE,
    CKA_SENSITIVE,
    CKA_ALWAYS_SENSITIVE,
    CKA_EXTRACTABLE,
    CKA_NEVER_EXTRACTABLE,
    CKA_SIGN,
    CKA_VERIFY,
    CKA_ENCRYPT,
    CKA_DECRYPT,
    CKA_WRAP,
    CKA_UNWRAP,
    CKA_DERIVE,
    CKA_ENCAPSULATE,
    CKA_DECAPSULATE,
    CKA_TRUSTED,
    CKA_WRAP_WITH_TRUSTED,
    CKA_ALWAYS_AUTHENTICATE,
    CKA_PARAMETER_SET,
    CKA_MODULUS_BITS,
    CKA_MODULUS,
    CKA_PUBLIC_EXPONENT,
    CKA_EC_PARAMS,
    CKA_EC_POINT,
    CKA_VALUE_LEN,
    CKA_VALUE,
    CKA_HSS_LEVELS,
    CKA_HSS_LMS_TYPES,
    CKA_HSS_LMOTS_TYPES,
    CKA_HSS_LMS_TYPE,
    CKA_HSS_LMOTS_TYPE,
    CKA_HSS_KEYS_REMAINING,
    CKA_CERTIFICATE_TYPE,
    CKA_SUBJECT,
    CKA_ISSUER,
    CKA_SERIAL_NUMBER,
    CKA_APPLICATION,
    p11::names::luna::CKA_USAGE_COUNT,
    p11::names::luna::CKA_USAGE_LIMIT,
];

fn name_value(attr: u64, v: &AttrValue, family: Family, key_type: Option<u64>) -> Option<String> {
    let n = v.as_ulong()?;
    Some(match attr {
        CKA_CLASS => p11::names::object_class_name(n, family).into_owned(),
        CKA_KEY_TYPE => p11::names::key_type_name(n, family).into_owned(),
        CKA_KEY_GEN_MECHANISM => p11::names::mechanism_name(n, family).into_owned(),
        CKA_PARAMETER_SET => match key_type {
            Some(CKK_ML_DSA) => MlDsaSet::from_parameter_set(n)
                .map(|s| s.name().to_string())
                .unwrap_or_else(|| n.to_string()),
            Some(CKK_ML_KEM) => MlKemSet::from_parameter_set(n)
                .map(|s| s.name().to_string())
                .unwrap_or_else(|| n.to_string()),
            Some(CKK_SLH_DSA) => SlhDsaSet::from_parameter_set(n)
                .map(|s| s.name().to_string())
                .unwrap_or_else(|| n.to_string()),
            _ => n.to_string(),
        },
        CKA_HSS_LMS_TYPE => LmsType::from_code(n)
            .map(|t| t.name().to_string())
            .unwrap_or_else(|| n.to_string()),
        CKA_HSS_LMOTS_TYPE => LmotsType::from_code(n)
            .map(|t| t.name().to_string())
            .unwrap_or_else(|| n.to_string()),
        CKA_CERTIFICATE_TYPE if n == CKC_X_509 => "CKC_X_509".into(),
        _ => return None,
    })
}

/// Every attribute of one object, decoded for display. Sensitive values stay hidden
/// ([`AttrStatus::Sensitive`]), attributes the object lacks are skipped.
pub fn object_details(s: &Session, handle: ObjectHandle) -> p11::Result<Vec<AttributeView>> {
    let values = s.get_attributes(handle, DETAIL_ATTRS)?;
    Ok(describe_attributes(s.module().family(), &values))
}

/// The attributes `object_details` reads, in order (class and key type first).
pub fn detail_attributes() -> &'static [u64] {
    DETAIL_ATTRS
}

/// Decode the values a token returned for `detail_attributes()` (whatever bytes they hold:
/// the token is not trusted to return well-formed values) for display.
pub fn describe_attributes(family: Family, values: &[AttrValue]) -> Vec<AttributeView> {
    let key_type = values.get(1).and_then(|v| v.as_ulong());
    let mut out = Vec::new();
    for (&a, v) in DETAIL_ATTRS.iter().zip(values.iter()) {
        let attribute = p11::names::attribute_name(a, family).into_owned();
        let (status, display, value) = match v {
            AttrValue::Invalid => continue,
            AttrValue::Sensitive => (AttrStatus::Sensitive, AttrDisplay::Hex, None),
            AttrValue::Unavailable => (AttrStatus::Unavailable, AttrDisplay::Hex, None),
            AttrValue::Value(bytes) => {
                if let Some(named) = name_value(a, v, family, key_type) {
                    (AttrStatus::Value, AttrDisplay::Name, Some(named))
                } else if a == CKA_EC_PARAMS {
                    let c = Curve::from_ec_params(bytes);
                    (
                        AttrStatus::Value,
                        if c.is_some() {
                            AttrDisplay::Name
                        } else {
                            AttrDisplay::Hex
                        },
                        Some(
                            c.map(|c| c.name().to_string())
                                .unwrap_or_else(|| hex::encode(bytes)),
                        ),
                    )
                } else {
                    match attr_kind(a) {
                        AttrKind::Bool => (
                            AttrStatus::Value,
                            AttrDisplay::Bool,
                            v.as_bool().map(|b| b.to_string()),
                        ),
                        AttrKind::Ulong => (
                            AttrStatus::Value,
                            AttrDisplay::Number,
                            v.as_ulong().map(|n| n.to_string()),
                        ),
                        AttrKind::Ulongs => (
                            AttrStatus::Value,
                            AttrDisplay::Text,
                            v.as_ulongs().map(|l| {
                                l.iter()
                                    .map(|n| match a {
                                        CKA_HSS_LMS_TYPES => LmsType::from_code(*n)
                                            .map(|t| t.name().to_string())
                                            .unwrap_or_else(|| n.to_string()),
                                        CKA_HSS_LMOTS_TYPES => LmotsType::from_code(*n)
                                            .map(|t| t.name().to_string())
                                            .unwrap_or_else(|| n.to_string()),
                                        _ => n.to_string(),
                                    })
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            }),
                        ),
                        AttrKind::Text => (AttrStatus::Value, AttrDisplay::Text, v.as_text()),
                        AttrKind::Date => (
                            AttrStatus::Value,
                            AttrDisplay::Date,
                            Some(v.as_date().unwrap_or_else(|| "(not set)".into())),
                        ),
                        AttrKind::Bytes => (
                            AttrStatus::Value,
                            AttrDisplay::Hex,
                            Some(hex::encode(bytes)),
                        ),
                    }
                }
            }
        };
        out.push(AttributeView {
            attribute,
            code: a,
            status,
            display,
            value,
        });
    }
    out
}

/// Find exactly one object of `class` by selector. None or several is an error that says
/// which (several objects with one label is the classic PKCS#11 trap).
pub fn find_one(s: &Session, selector: &KeySelector, class: Option<u64>) -> Result<ObjectHandle> {
    if let KeySelector::Handle(h) = selector {
        return Ok(*h);
    }
    if let (Some(want), Some(asked)) = (selector.uri_class(), class) {
        if want != asked {
            let what = class_msg(class);
            return Err(HsmError::KeyNotFound(
                crate::text!(
                    "errors.no_match_other_class",
                    "no {{what}} matches {{selector}} (its type= asks for another class)",
                    what = what,
                    selector = selector
                )
                .nest("what", &what),
            ));
        }
    }
    let found = s.find_objects(&mut selector.template(class, s.module().family()))?;
    if matches!(selector, KeySelector::Uri { .. }) && found.len() != 1 {
        let listed: Vec<String> = found
            .iter()
            .filter_map(|h| summary(s, *h).ok())
            .map(|o| format!("{} '{}' id:{}", o.class.to_lowercase(), o.label, o.id_hex))
            .collect();
        return Err(if found.is_empty() {
            HsmError::KeyNotFound(no_match(class, selector))
        } else {
            HsmError::Refused(crate::text!(
                "errors.selector_uri_ambiguous",
                "{{selector}} matches {{n}} objects: {{objects}}; add id= or type= to the URI",
                selector = selector,
                n = found.len(),
                objects = listed.join(", ")
            ))
        });
    }
    match found.len() {
        1 => Ok(found[0]),
        0 => Err(HsmError::KeyNotFound(no_match(class, selector))),
        n => {
            let what = class_msg(class);
            Err(HsmError::Refused(
                crate::text!(
                    "errors.selector_ambiguous",
                    "{{n}} {{what}}s match {{selector}}; labels are not unique in PKCS#11 — select by id:HEX instead",
                    n = n,
                    what = what,
                    selector = selector
                )
                .nest("what", &what),
            ))
        }
    }
}

/// "no private key matches label:x".
fn no_match(class: Option<u64>, selector: &KeySelector) -> crate::Text {
    let what = class_msg(class);
    crate::text!(
        "errors.no_match",
        "no {{what}} matches {{selector}}",
        what = what,
        selector = selector
    )
    .nest("what", &what)
}

/// A selector as the officer wrote it, as a message (what was not found, when nothing
/// more is known).
pub fn selector_msg(selector: &KeySelector) -> crate::Text {
    crate::text!(
        "errors.selector_as_written",
        "{{selector}}",
        selector = selector
    )
}

/// The class, named as in [`ObjectSummary::class`] (`PRIVATE_KEY`), as a word of the
/// officer's language.
pub fn class_msg_named(name: &str) -> crate::Text {
    class_msg(match name.trim_start_matches("CKO_") {
        "PRIVATE_KEY" => Some(CKO_PRIVATE_KEY),
        "PUBLIC_KEY" => Some(CKO_PUBLIC_KEY),
        "SECRET_KEY" => Some(CKO_SECRET_KEY),
        "CERTIFICATE" => Some(CKO_CERTIFICATE),
        "DATA" => Some(CKO_DATA),
        _ => None,
    })
}

/// The class as a word of the officer's language.
fn class_msg(class: Option<u64>) -> crate::Text {
    match class {
        Some(CKO_PRIVATE_KEY) => crate::text!("errors.class_word.private_key", "private key"),
        Some(CKO_PUBLIC_KEY) => crate::text!("errors.class_word.public_key", "public key"),
        Some(CKO_SECRET_KEY) => crate::text!("errors.class_word.secret_key", "secret key"),
        Some(CKO_CERTIFICATE) => crate::text!("errors.class_word.certificate", "certificate"),
        Some(CKO_DATA) => crate::text!("errors.class_word.data", "data"),
        _ => crate::text!("errors.class_word.object", "object"),
    }
}

/// The public half that belongs with a private key: same CKA_ID (and label, when IDs are
/// empty).
pub fn public_for_private(s: &Session, private: ObjectHandle) -> Result<ObjectHandle> {
    let v = s.get_attributes(private, &[CKA_ID, CKA_LABEL])?;
    let id = v[0].bytes().unwrap_or_default().to_vec();
    let label = v[1].as_text().unwrap_or_default();
    let mut t = Template::new().ulong(CKA_CLASS, CKO_PUBLIC_KEY);
    t = if !id.is_empty() {
        t.bytes(CKA_ID, &id)
    } else {
        t.text(CKA_LABEL, &label)
    };
    let found = s.find_objects(&mut t)?;
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(HsmError::KeyNotFound(crate::text!(
            "errors.no_public_for_private",
            "no public key shares the private key's ID ({{id}})",
            id = hex::encode(&id)
        ))),
        _ => Err(HsmError::Refused(crate::text!(
            "errors.public_keys_share_id",
            "{{n}} public keys share the ID {{id}}",
            n = found.len(),
            id = hex::encode(&id)
        ))),
    }
}

/// Read a public key object (or, for HSS/ML-DSA/…, the public half) as [`PublicKey`].
pub fn read_public_key(s: &Session, handle: ObjectHandle) -> Result<PublicKey> {
    let v = s.get_attributes(handle, &[CKA_KEY_TYPE, CKA_PARAMETER_SET, CKA_EC_PARAMS])?;
    let kt = v[0].as_ulong().ok_or_else(|| {
        HsmError::Refused(crate::text!(
            "errors.object_no_key_type",
            "the object has no key type"
        ))
    })?;
    let pset = v[1].as_ulong();
    let value = |attr: u64| -> Result<Vec<u8>> {
        s.get_attribute(handle, attr)?
            .bytes()
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                HsmError::Refused(crate::text!(
                    "errors.key_does_not_reveal",
                    "the key does not reveal {{attribute}}",
                    attribute = p11::names::attribute_name(attr, Family::Generic)
                ))
            })
    };
    Ok(match kt {
        CKK_RSA => PublicKey::Rsa {
            modulus: value(CKA_MODULUS)?,
            exponent: value(CKA_PUBLIC_EXPONENT)?,
        },
        CKK_EC | CKK_EC_EDWARDS => {
            let curve = v[2]
                .bytes()
                .and_then(Curve::from_ec_params)
                .ok_or_else(|| {
                    HsmError::NotSupported(crate::text!(
                        "errors.key_curve_unsupported",
                        "the key's curve is not one the console supports"
                    ))
                })?;
            let raw = value(CKA_EC_POINT)?;
            let point = crate::algo::ec_point_raw(&raw, curve).ok_or_else(|| {
                HsmError::TokenMisbehaved(crate::text!(
                    "hsm.ec_point_does_not_fit",
                    "CKA_EC_POINT of {{bytes}} bytes does not fit {{curve}}",
                    bytes = raw.len(),
                    curve = curve.name()
                ))
            })?;
            PublicKey::Ec { curve, point }
        }
        CKK_ML_DSA => PublicKey::MlDsa {
            set: pset.and_then(MlDsaSet::from_parameter_set).ok_or_else(|| {
                HsmError::TokenMisbehaved(crate::text!(
                    "hsm.parameter_set_unknown",
                    "{{algorithm}} key without a known parameter set",
                    algorithm = "ML-DSA"
                ))
            })?,
            key: value(CKA_VALUE)?,
        },
        CKK_ML_KEM => PublicKey::MlKem {
            set: pset.and_then(MlKemSet::from_parameter_set).ok_or_else(|| {
                HsmError::TokenMisbehaved(crate::text!(
                    "hsm.parameter_set_unknown",
                    "{{algorithm}} key without a known parameter set",
                    algorithm = "ML-KEM"
                ))
            })?,
            key: value(CKA_VALUE)?,
        },
        CKK_SLH_DSA => PublicKey::SlhDsa {
            set: pset
                .and_then(SlhDsaSet::from_parameter_set)
                .ok_or_else(|| {
                    HsmError::TokenMisbehaved(crate::text!(
                        "hsm.parameter_set_unknown",
                        "{{algorithm}} key without a known parameter set",
                        algorithm = "SLH-DSA"
                    ))
                })?,
            key: value(CKA_VALUE)?,
        },
        CKK_HSS => PublicKey::Hss {
            key: value(CKA_VALUE)?,
        },
        other => {
            return Err(HsmError::NotSupported(crate::text!(
                "errors.public_key_type_not_exported",
                "public keys of type {{key_type}} cannot be exported",
                key_type = p11::names::key_type_name(other, Family::Generic)
            )))
        }
    })
}

/// The result of a key generation.
#[derive(Debug, Clone)]
pub struct Generated {
    pub public: Option<ObjectHandle>,
    /// The private key, or the secret key.
    pub private: ObjectHandle,
    pub public_key: Option<PublicKey>,
}

/// Generate a key from a preset. For pairs, the public key is read back and its size is
/// checked against the standard: a token that ignored the parameter set is caught here,
/// and the keys it made are destroyed again.
pub fn generate(s: &Session, spec: &KeySpec, attrs: &KeyAttrs) -> Result<Generated> {
    generate_with(s, spec, attrs, templates::Export::Never)
}

/// As [`generate`], the secret or private key extractable as `export` says
/// ([`templates::keygen_with`]).
pub fn generate_with(
    s: &Session,
    spec: &KeySpec,
    attrs: &KeyAttrs,
    export: templates::Export,
) -> Result<Generated> {
    generate_opts(s, spec, attrs, export, false)
}

/// As [`generate_with`]; with `always_authenticate` the private key gets
/// `CKA_ALWAYS_AUTHENTICATE` true: each signature it makes wants a context-specific login
/// (a token that cannot make such keys refuses the template).
pub fn generate_opts(
    s: &Session,
    spec: &KeySpec,
    attrs: &KeyAttrs,
    export: templates::Export,
    always_authenticate: bool,
) -> Result<Generated> {
    let t = templates::keygen_with(spec, attrs, s.module().family(), export);
    let mut private = if always_authenticate {
        t.private.bool(CKA_ALWAYS_AUTHENTICATE, true)
    } else {
        t.private
    };
    match t.public {
        None => {
            let h = s.generate_key(&t.mechanism, &mut private)?;
            Ok(Generated {
                public: None,
                private: h,
                public_key: None,
            })
        }
        Some(mut public) => {
            let (hp, hs) = s.generate_key_pair(&t.mechanism, &mut public, &mut private)?;
            let pk = match read_public_key(s, hp) {
                Ok(pk) => pk,
                Err(e) => {
                    let _ = s.destroy_object(hs);
                    let _ = s.destroy_object(hp);
                    return Err(e);
                }
            };
            let expected_set = match (spec, &pk) {
                (KeySpec::MlDsa { set }, PublicKey::MlDsa { set: got, .. }) => *set == *got,
                (KeySpec::MlKem { set }, PublicKey::MlKem { set: got, .. }) => *set == *got,
                (KeySpec::SlhDsa { set }, PublicKey::SlhDsa { set: got, .. }) => *set == *got,
                _ => true,
            };
            let size = pk.check_size();
            if !expected_set || size.is_err() {
                let _ = s.destroy_object(hs);
                let _ = s.destroy_object(hp);
                return Err(HsmError::TokenMisbehaved(size.err().unwrap_or_else(|| {
                    crate::text!(
                        "hsm.keygen_other_algorithm",
                        "asked for {{asked}}, the token made {{made}}; the keys were destroyed",
                        asked = spec.display(),
                        made = pk.algorithm()
                    )
                })));
            }
            Ok(Generated {
                public: Some(hp),
                private: hs,
                public_key: Some(pk),
            })
        }
    }
}

/// A fresh random CKA_ID (16 bytes) from the token's RNG.
pub fn new_key_id(s: &Session) -> p11::Result<Vec<u8>> {
    let mut id = vec![0u8; 16];
    s.generate_random(&mut id)?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::hss_name;

    #[test]
    fn hss_names_say_the_hash_where_it_is_sha256_192() {
        assert_eq!(hss_name(&[5, 5], &[4, 4]), "HSS/LMS H5/W8+H5/W8");
        assert_eq!(hss_name(&[11], &[7]), "HSS/LMS SHA-256/192 H10/W4");
        assert_eq!(
            hss_name(&[6, 10], &[3, 8]),
            "HSS/LMS H10/W4+H5/W8 (level 2 SHA-256/192)"
        );
        assert_eq!(hss_name(&[99], &[]), "HSS/LMS LMS#99");
    }
}
