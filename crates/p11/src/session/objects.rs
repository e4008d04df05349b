//! Object management: searching, reading and writing attributes, creating and destroying.

use cryptoki_sys::*;

use super::Session;
use crate::attr::{attr_kind, fixed_len, AttrValue, Template};
use crate::error::Result;
use crate::module::func::{p11_fn, NamedFn};
use crate::types::*;

/// Objects fetched per `C_FindObjects` call.
const FIND_BATCH: usize = 256;
/// Largest attribute value we accept from a module (a certificate chain fits easily).
const MAX_ATTRIBUTE_LEN: u64 = 16 << 20;

/// The prototype of `C_GetAttributeValue`.
type GetAttributeValue =
    unsafe extern "C" fn(CK_SESSION_HANDLE, CK_OBJECT_HANDLE, *mut CK_ATTRIBUTE, CK_ULONG) -> CK_RV;

/// A `C_GetAttributeValue` entry for `ty` writing into `buf` (a length query when `buf` is
/// empty).
fn attribute_into(ty: AttributeType, buf: &mut [u8]) -> CK_ATTRIBUTE {
    CK_ATTRIBUTE {
        type_: ty,
        pValue: if buf.is_empty() {
            std::ptr::null_mut()
        } else {
            buf.as_mut_ptr() as *mut _
        },
        ulValueLen: buf.len() as CK_ULONG,
    }
}

impl Session {
    /// All objects matching the template, fetched in batches.
    pub fn find_objects(&self, template: &mut Template) -> Result<Vec<ObjectHandle>> {
        let find_init = p11_fn!(self.module, C_FindObjectsInit)?;
        let find = p11_fn!(self.module, C_FindObjects)?;
        let find_final = p11_fn!(self.module, C_FindObjectsFinal)?;
        // SAFETY: the template's raw array and values live as long as `template`.
        let rv = unsafe { (find_init.f)(self.handle, template.as_mut_ptr(), template.count()) };
        find_init.check(rv)?;
        let mut out = Vec::new();
        let mut batch = [0 as CK_OBJECT_HANDLE; FIND_BATCH];
        let result = loop {
            let mut n: CK_ULONG = 0;
            // SAFETY: batch has FIND_BATCH entries, as we tell the module.
            let rv = unsafe {
                (find.f)(
                    self.handle,
                    batch.as_mut_ptr(),
                    FIND_BATCH as CK_ULONG,
                    &mut n,
                )
            };
            if let Err(e) = find.check(rv) {
                break Err(e);
            }
            if n as usize > FIND_BATCH {
                break Err(find.malformed(format!("returned {n} objects for room of {FIND_BATCH}")));
            }
            if n == 0 {
                break Ok(());
            }
            let given: Result<Vec<ObjectHandle>> = batch[..n as usize]
                .iter()
                .map(|&raw| self.given_out("C_FindObjects", raw))
                .collect();
            match given {
                Ok(v) => out.extend(v),
                Err(e) => break Err(e),
            }
        };
        // SAFETY: ends the search started above; always called so the session stays usable.
        let rv = unsafe { (find_final.f)(self.handle) };
        result?;
        find_final.check(rv)?;
        Ok(out)
    }

    /// Read several attributes of one object. Fixed-size attributes get a buffer in the
    /// first call; only variable-length ones need a second. Per attribute, "sensitive",
    /// "no such attribute" and "unavailable" stay distinct.
    pub fn get_attributes(
        &self,
        object: ObjectHandle,
        types: &[AttributeType],
    ) -> Result<Vec<AttrValue>> {
        self.get_attributes_with(object, types, true)
    }

    /// As [`Session::get_attributes`]; with `probe` false, unavailable attributes are not
    /// asked about one by one (a listing does not need to know why), so the cost stays at
    /// one or two calls per object whatever the object lacks.
    pub fn get_attributes_with(
        &self,
        object: ObjectHandle,
        types: &[AttributeType],
        probe: bool,
    ) -> Result<Vec<AttrValue>> {
        let object = self.on_token(object)?;
        let get = p11_fn!(self.module, C_GetAttributeValue)?;
        let mut bufs: Vec<Vec<u8>> = types
            .iter()
            .map(|t| {
                fixed_len(attr_kind(*t))
                    .map(|n| vec![0u8; n])
                    .unwrap_or_default()
            })
            .collect();
        let mut raw: Vec<CK_ATTRIBUTE> = types
            .iter()
            .zip(bufs.iter_mut())
            .map(|(t, b)| attribute_into(*t, b))
            .collect();
        // SAFETY: every non-null pValue points to a buffer of ulValueLen bytes.
        let first_rv =
            unsafe { (get.f)(self.handle, object, raw.as_mut_ptr(), raw.len() as CK_ULONG) };
        match first_rv {
            CKR_OK
            | CKR_ATTRIBUTE_SENSITIVE
            | CKR_ATTRIBUTE_TYPE_INVALID
            | CKR_BUFFER_TOO_SMALL => {}
            rv => return Err(get.error(rv)),
        }
        self.fetch_variable_length(&get, object, &mut raw, &mut bufs)?;
        self.attribute_values(object, &raw, bufs, first_rv, probe)
    }

    /// Second round of `C_GetAttributeValue`: the variable-length attributes (and any fixed
    /// one that did not fit), into buffers of the lengths the first round reported.
    fn fetch_variable_length(
        &self,
        get: &NamedFn<'_, GetAttributeValue>,
        object: ObjectHandle,
        raw: &mut [CK_ATTRIBUTE],
        bufs: &mut [Vec<u8>],
    ) -> Result<()> {
        let mut again: Vec<usize> = Vec::new();
        for (i, a) in raw.iter().enumerate() {
            if a.ulValueLen == CK_UNAVAILABLE_INFORMATION {
                continue;
            }
            if a.ulValueLen > MAX_ATTRIBUTE_LEN {
                return Err(get.malformed(format!(
                    "attribute 0x{:X} claims {} bytes",
                    a.type_, a.ulValueLen
                )));
            }
            let have = bufs[i].len() as u64;
            if a.pValue.is_null() || a.ulValueLen > have {
                again.push(i);
            }
        }
        if again.is_empty() {
            return Ok(());
        }
        let mut raw2: Vec<CK_ATTRIBUTE> = Vec::with_capacity(again.len());
        for &i in &again {
            bufs[i] = vec![0u8; raw[i].ulValueLen as usize];
            raw2.push(attribute_into(raw[i].type_, &mut bufs[i]));
        }
        // SAFETY: as above, buffers sized from the module's own length report.
        let rv = unsafe {
            (get.f)(
                self.handle,
                object,
                raw2.as_mut_ptr(),
                raw2.len() as CK_ULONG,
            )
        };
        match rv {
            CKR_OK | CKR_ATTRIBUTE_SENSITIVE | CKR_ATTRIBUTE_TYPE_INVALID => {}
            _ => get.check(rv)?,
        }
        for (k, &i) in again.iter().enumerate() {
            raw[i].ulValueLen = raw2[k].ulValueLen;
        }
        Ok(())
    }

    /// The values read, one per attribute. Attributes reported unavailable: find out why,
    /// one by one (when `probe`), unless the first call's own return value already says
    /// (only one unavailable attribute).
    fn attribute_values(
        &self,
        object: ObjectHandle,
        raw: &[CK_ATTRIBUTE],
        mut bufs: Vec<Vec<u8>>,
        first_rv: CK_RV,
        probe: bool,
    ) -> Result<Vec<AttrValue>> {
        let unavailable = raw
            .iter()
            .filter(|a| a.ulValueLen == CK_UNAVAILABLE_INFORMATION)
            .count();
        let mut out = Vec::with_capacity(raw.len());
        for (i, a) in raw.iter().enumerate() {
            if a.ulValueLen == CK_UNAVAILABLE_INFORMATION {
                let why =
                    if unavailable == 1 && first_rv != CKR_OK && first_rv != CKR_BUFFER_TOO_SMALL {
                        first_rv
                    } else if probe {
                        self.probe_attribute(object, a.type_)?
                    } else {
                        CKR_GENERAL_ERROR
                    };
                out.push(match why {
                    CKR_ATTRIBUTE_SENSITIVE => AttrValue::Sensitive,
                    CKR_ATTRIBUTE_TYPE_INVALID => AttrValue::Invalid,
                    _ => AttrValue::Unavailable,
                });
            } else {
                let mut b = std::mem::take(&mut bufs[i]);
                b.truncate(a.ulValueLen as usize);
                out.push(AttrValue::Value(b));
            }
        }
        Ok(out)
    }

    fn probe_attribute(&self, object: ObjectHandle, ty: AttributeType) -> Result<CK_RV> {
        let get = p11_fn!(self.module, C_GetAttributeValue)?;
        let mut a = CK_ATTRIBUTE {
            type_: ty,
            pValue: std::ptr::null_mut(),
            ulValueLen: 0,
        };
        // SAFETY: a NULL value asks for the length only.
        let rv = unsafe { (get.f)(self.handle, object, &mut a, 1) };
        Ok(rv)
    }

    pub fn get_attribute(&self, object: ObjectHandle, ty: AttributeType) -> Result<AttrValue> {
        Ok(self.get_attributes(object, &[ty])?.remove(0))
    }

    pub fn set_attributes(&self, object: ObjectHandle, template: &mut Template) -> Result<()> {
        let object = self.on_token(object)?;
        let set = p11_fn!(self.module, C_SetAttributeValue)?;
        // SAFETY: template buffers live for the call.
        let rv = unsafe { (set.f)(self.handle, object, template.as_mut_ptr(), template.count()) };
        set.check(rv)
    }

    pub fn create_object(&self, template: &mut Template) -> Result<ObjectHandle> {
        let create = p11_fn!(self.module, C_CreateObject)?;
        let mut h: CK_OBJECT_HANDLE = 0;
        // SAFETY: template buffers live for the call; h is a valid out pointer.
        let rv =
            unsafe { (create.f)(self.handle, template.as_mut_ptr(), template.count(), &mut h) };
        create.check(rv)?;
        self.given_out("C_CreateObject", h)
    }

    pub fn destroy_object(&self, object: ObjectHandle) -> Result<()> {
        let object = self.on_token(object)?;
        let destroy = p11_fn!(self.module, C_DestroyObject)?;
        // SAFETY: handles are integers.
        let rv = unsafe { (destroy.f)(self.handle, object) };
        destroy.check(rv)
    }
}
