//! Attribute templates (owned buffers with stable addresses) and attribute read results.

use cryptoki_sys::*;

use crate::types::AttributeType;

/// How an attribute's value is shaped, for decoding and for the single-call fast path of
/// `get_attributes` (fixed-size values get a buffer straight away).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrKind {
    Bool,
    Ulong,
    /// An array of CK_ULONG (the HSS type lists).
    Ulongs,
    /// UTF-8 text (labels, application names).
    Text,
    /// CK_DATE (8 ASCII digits, YYYYMMDD).
    Date,
    Bytes,
}

/// The shape of the attributes the console reads. Everything else is read as bytes.
pub fn attr_kind(ty: AttributeType) -> AttrKind {
    match ty {
        CKA_TOKEN
        | CKA_PRIVATE
        | CKA_MODIFIABLE
        | CKA_COPYABLE
        | CKA_DESTROYABLE
        | CKA_SENSITIVE
        | CKA_EXTRACTABLE
        | CKA_LOCAL
        | CKA_NEVER_EXTRACTABLE
        | CKA_ALWAYS_SENSITIVE
        | CKA_ENCRYPT
        | CKA_DECRYPT
        | CKA_SIGN
        | CKA_VERIFY
        | CKA_SIGN_RECOVER
        | CKA_VERIFY_RECOVER
        | CKA_WRAP
        | CKA_UNWRAP
        | CKA_DERIVE
        | CKA_TRUSTED
        | CKA_WRAP_WITH_TRUSTED
        | CKA_ALWAYS_AUTHENTICATE
        | CKA_ENCAPSULATE
        | CKA_DECAPSULATE => AttrKind::Bool,
        CKA_CLASS
        | CKA_KEY_TYPE
        | CKA_CERTIFICATE_TYPE
        | CKA_MODULUS_BITS
        | CKA_VALUE_LEN
        | CKA_KEY_GEN_MECHANISM
        | CKA_PARAMETER_SET
        | CKA_HSS_LEVELS
        | CKA_HSS_LMS_TYPE
        | CKA_HSS_LMOTS_TYPE
        | CKA_HSS_KEYS_REMAINING
        | CKA_CERTIFICATE_CATEGORY
        | CKA_PRIME_BITS
        | CKA_SUBPRIME_BITS
        | CKA_OBJECT_VALIDATION_FLAGS => AttrKind::Ulong,
        CKA_HSS_LMS_TYPES | CKA_HSS_LMOTS_TYPES | CKA_ALLOWED_MECHANISMS => AttrKind::Ulongs,
        CKA_LABEL | CKA_APPLICATION | CKA_URL => AttrKind::Text,
        CKA_START_DATE | CKA_END_DATE => AttrKind::Date,
        _ => AttrKind::Bytes,
    }
}

pub(crate) fn fixed_len(kind: AttrKind) -> Option<usize> {
    match kind {
        AttrKind::Bool => Some(std::mem::size_of::<CK_BBOOL>()),
        AttrKind::Ulong => Some(std::mem::size_of::<CK_ULONG>()),
        AttrKind::Date => Some(8),
        _ => None,
    }
}

/// A template: a list of attributes whose values live in owned heap buffers, so the raw
/// `CK_ATTRIBUTE` array can point into them for as long as the template lives.
#[derive(Debug, Default)]
pub struct Template {
    raw: Vec<CK_ATTRIBUTE>,
    store: Vec<Box<[u8]>>,
}

// SAFETY: the raw pointers in `raw` point only into `store`, which this value owns; nothing
// else aliases them, so moving the template to another thread moves the whole graph.
unsafe impl Send for Template {}

/// The same attributes in buffers of its own (what the copy's raw array points into).
impl Clone for Template {
    fn clone(&self) -> Self {
        self.raw
            .iter()
            .zip(&self.store)
            .fold(Template::new(), |t, (a, b)| {
                t.push_bytes(a.type_, b.clone())
            })
    }
}

impl Template {
    pub fn new() -> Self {
        Template::default()
    }

    fn push_bytes(mut self, ty: AttributeType, bytes: Box<[u8]>) -> Self {
        let len = bytes.len() as CK_ULONG;
        let ptr = if bytes.is_empty() {
            std::ptr::null_mut()
        } else {
            bytes.as_ptr() as *mut u8
        };
        self.store.push(bytes);
        self.raw.push(CK_ATTRIBUTE {
            type_: ty,
            pValue: ptr as *mut _,
            ulValueLen: len,
        });
        self
    }

    pub fn bool(self, ty: AttributeType, value: bool) -> Self {
        self.push_bytes(ty, Box::new([if value { CK_TRUE } else { CK_FALSE }]))
    }

    pub fn ulong(self, ty: AttributeType, value: u64) -> Self {
        let v: CK_ULONG = value;
        self.push_bytes(ty, Box::from(v.to_ne_bytes()))
    }

    pub fn ulongs(self, ty: AttributeType, values: &[u64]) -> Self {
        let bytes: Vec<u8> = values
            .iter()
            .flat_map(|v| (*v as CK_ULONG).to_ne_bytes())
            .collect();
        self.push_bytes(ty, bytes.into_boxed_slice())
    }

    pub fn bytes(self, ty: AttributeType, value: &[u8]) -> Self {
        self.push_bytes(ty, Box::from(value))
    }

    pub fn text(self, ty: AttributeType, value: &str) -> Self {
        self.bytes(ty, value.as_bytes())
    }

    /// Add an attribute only when the value is present.
    pub fn maybe<T>(self, value: Option<T>, f: impl FnOnce(Self, T) -> Self) -> Self {
        match value {
            Some(v) => f(self, v),
            None => self,
        }
    }

    pub fn len(&self) -> usize {
        self.raw.len()
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    pub fn types(&self) -> impl Iterator<Item = AttributeType> + '_ {
        self.raw.iter().map(|a| a.type_)
    }

    /// The raw value bytes of one attribute in the template.
    pub fn get(&self, ty: AttributeType) -> Option<&[u8]> {
        self.raw
            .iter()
            .zip(&self.store)
            .find(|(a, _)| a.type_ == ty)
            .map(|(_, s)| &s[..])
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut CK_ATTRIBUTE {
        if self.raw.is_empty() {
            std::ptr::null_mut()
        } else {
            self.raw.as_mut_ptr()
        }
    }

    pub(crate) fn count(&self) -> CK_ULONG {
        self.raw.len() as CK_ULONG
    }
}

/// The outcome of reading one attribute. The three failure kinds stay distinct: the UI
/// shows "sensitive" very differently from "this object has no such attribute".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrValue {
    Value(Vec<u8>),
    /// `CKR_ATTRIBUTE_SENSITIVE`: exists, may not be revealed.
    Sensitive,
    /// `CKR_ATTRIBUTE_TYPE_INVALID`: the object has no such attribute.
    Invalid,
    /// Length reported as unavailable for another reason.
    Unavailable,
}

impl AttrValue {
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            AttrValue::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        self.bytes().and_then(|b| b.first()).map(|&b| b != CK_FALSE)
    }

    pub fn as_ulong(&self) -> Option<u64> {
        let b = self.bytes()?;
        const N: usize = std::mem::size_of::<CK_ULONG>();
        if b.len() == N {
            let mut a = [0u8; N];
            a.copy_from_slice(b);
            Some(CK_ULONG::from_ne_bytes(a))
        } else if b.len() == 4 {
            // Some modules hand back 32-bit values; accept them rather than lose data.
            Some(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as u64)
        } else {
            None
        }
    }

    pub fn as_ulongs(&self) -> Option<Vec<u64>> {
        const N: usize = std::mem::size_of::<CK_ULONG>();
        let b = self.bytes()?;
        if b.len() % N != 0 {
            return None;
        }
        Some(
            b.chunks_exact(N)
                .map(|c| {
                    let mut a = [0u8; N];
                    a.copy_from_slice(c);
                    CK_ULONG::from_ne_bytes(a)
                })
                .collect(),
        )
    }

    pub fn as_text(&self) -> Option<String> {
        self.bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    /// A CK_DATE as `YYYY-MM-DD`; empty dates (length 0) are `None`.
    pub fn as_date(&self) -> Option<String> {
        let b = self.bytes()?;
        if b.len() != 8 || !b.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let s = std::str::from_utf8(b).ok()?;
        Some(format!("{}-{}-{}", &s[0..4], &s[4..6], &s[6..8]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_points_into_buffers_of_its_own() {
        let t = Template::new()
            .text(CKA_LABEL, "release")
            .bool(CKA_TOKEN, true);
        let mut c = t.clone();
        drop(t);
        assert_eq!(c.get(CKA_LABEL), Some(&b"release"[..]));
        assert_eq!(c.get(CKA_TOKEN), Some(&[CK_TRUE][..]));
        let raw = c.as_mut_ptr();
        // SAFETY: `c` has two attributes; the pointers are read, not followed.
        let (label, token) = unsafe { ((*raw).pValue, (*raw.add(1)).pValue) };
        assert_eq!(label as *const u8, c.store[0].as_ptr());
        assert_eq!(token as *const u8, c.store[1].as_ptr());
    }

    #[test]
    fn template_points_into_its_own_buffers() {
        let t = Template::new()
            .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
            .bool(CKA_TOKEN, true)
            .text(CKA_LABEL, "release_ml_dsa_65")
            .ulongs(CKA_HSS_LMS_TYPES, &[5, 5]);
        assert_eq!(t.len(), 4);
        for (a, s) in t.raw.iter().zip(&t.store) {
            assert_eq!(a.pValue as *const u8, s.as_ptr());
            assert_eq!(a.ulValueLen as usize, s.len());
        }
        assert_eq!(t.get(CKA_LABEL), Some(&b"release_ml_dsa_65"[..]));
        assert_eq!(
            AttrValue::Value(t.get(CKA_HSS_LMS_TYPES).unwrap().to_vec()).as_ulongs(),
            Some(vec![5, 5])
        );
    }

    #[test]
    fn decoders() {
        assert_eq!(AttrValue::Value(vec![1]).as_bool(), Some(true));
        assert_eq!(AttrValue::Value(vec![0]).as_bool(), Some(false));
        assert_eq!(
            AttrValue::Value(42u64.to_ne_bytes().to_vec()).as_ulong(),
            Some(42)
        );
        assert_eq!(
            AttrValue::Value(b"20261130".to_vec()).as_date().as_deref(),
            Some("2026-11-30")
        );
        assert_eq!(AttrValue::Value(vec![]).as_date(), None);
        assert_eq!(AttrValue::Sensitive.as_bool(), None);
        assert_eq!(AttrValue::Value(vec![1, 2, 3]).as_ulongs(), None);
    }
}
