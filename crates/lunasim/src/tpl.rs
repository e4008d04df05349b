//! An owned PKCS#11 template — (type, value) pairs copied out of a caller's
//! `CK_ATTRIBUTE`s — for code that edits a template before passing it on (usage limits,
//! trust marks, the HA layer's replication).

use cryptoki_sys::*;

use crate::raw;

/// An owned template: (type, value) pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tpl(pub Vec<(CK_ATTRIBUTE_TYPE, Vec<u8>)>);

impl Tpl {
    /// Copy a caller's template.
    ///
    /// # Safety
    /// `t` must point to `n` valid attributes whose values are readable (or be NULL, 0).
    pub unsafe fn from_raw(t: *const CK_ATTRIBUTE, n: CK_ULONG) -> Result<Tpl, CK_RV> {
        // SAFETY: guaranteed by the caller.
        unsafe { raw::values(raw::template(t, n)) }.map(Tpl)
    }

    pub fn get(&self, ty: CK_ATTRIBUTE_TYPE) -> Option<&[u8]> {
        raw::find(&self.0, ty)
    }

    pub fn ulong(&self, ty: CK_ATTRIBUTE_TYPE) -> Option<u64> {
        self.get(ty).and_then(raw::as_ulong)
    }

    pub fn bool(&self, ty: CK_ATTRIBUTE_TYPE) -> Option<bool> {
        self.get(ty).and_then(raw::as_bool)
    }

    pub fn set(&mut self, ty: CK_ATTRIBUTE_TYPE, v: Vec<u8>) {
        self.remove(ty);
        self.0.push((ty, v));
    }

    pub fn set_ulong(&mut self, ty: CK_ATTRIBUTE_TYPE, v: u64) {
        self.set(ty, (v as CK_ULONG).to_ne_bytes().to_vec());
    }

    pub fn set_bool(&mut self, ty: CK_ATTRIBUTE_TYPE, v: bool) {
        self.set(ty, vec![if v { CK_TRUE } else { CK_FALSE }]);
    }

    pub fn remove(&mut self, ty: CK_ATTRIBUTE_TYPE) {
        self.0.retain(|(t, _)| *t != ty);
    }

    /// Values of `other` replace or join ours.
    pub fn merge(&mut self, other: &Tpl) {
        for (ty, v) in &other.0 {
            self.set(*ty, v.clone());
        }
    }

    /// Run `f` with the template as raw `CK_ATTRIBUTE`s pointing into our values.
    pub fn with_raw<R>(&mut self, f: impl FnOnce(*mut CK_ATTRIBUTE, CK_ULONG) -> R) -> R {
        let mut attrs: Vec<CK_ATTRIBUTE> = self
            .0
            .iter_mut()
            .map(|(ty, v)| CK_ATTRIBUTE {
                type_: *ty,
                pValue: if v.is_empty() {
                    std::ptr::null_mut()
                } else {
                    v.as_mut_ptr() as *mut _
                },
                ulValueLen: v.len() as CK_ULONG,
            })
            .collect();
        let p = if attrs.is_empty() {
            std::ptr::null_mut()
        } else {
            attrs.as_mut_ptr()
        };
        f(p, attrs.len() as CK_ULONG)
    }
}
