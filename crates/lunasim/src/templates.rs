//! Luna's template rules as pure functions over parsed templates, so the exported entry
//! points stay thin and the rules can be fuzzed without a module, a token or a session
//! (`fuzz/fuzz_targets/lunasim_templates.rs`).

use cryptoki_sys::*;

use crate::hss;
use crate::objects::{self, AttrOut, HssKey, Part};
use crate::raw;

/// The ML-DSA parameter set a Luna applies when `CKA_PARAMETER_SET` is missing from one
/// half of the key pair template (the trap the seed article describes).
pub const ML_DSA_DEFAULT_PARAMETER_SET: CK_ULONG = CKP_ML_DSA_44;

/// Parsed template values: (type, value bytes).
pub type Values = Vec<(CK_ATTRIBUTE_TYPE, Vec<u8>)>;

/// What an HSS key pair template asks for, once Luna's rules accept it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HssRequest {
    /// (LMS type, LM-OTS type) per level, top first.
    pub levels: Vec<(u32, u32)>,
    pub token: bool,
    pub label: Vec<u8>,
    pub id: Vec<u8>,
}

/// Check an HSS key pair template the way Luna 7.9 does: the HSS parameters belong in the
/// private template only, class and key type must agree, the private key is never
/// extractable and always sensitive.
pub fn hss_request(
    public: &[(CK_ATTRIBUTE_TYPE, Vec<u8>)],
    private: &[(CK_ATTRIBUTE_TYPE, Vec<u8>)],
) -> Result<HssRequest, CK_RV> {
    for a in [
        CKA_HSS_LEVELS,
        CKA_HSS_LMS_TYPES,
        CKA_HSS_LMOTS_TYPES,
        CKA_HSS_LMS_TYPE,
        CKA_HSS_LMOTS_TYPE,
    ] {
        if raw::find(public, a).is_some() {
            return Err(CKR_ATTRIBUTE_VALUE_INVALID);
        }
    }
    let (Some(levels), Some(lms), Some(ots)) = (
        raw::find(private, CKA_HSS_LEVELS).and_then(raw::as_ulong),
        raw::find(private, CKA_HSS_LMS_TYPES).and_then(raw::as_ulongs),
        raw::find(private, CKA_HSS_LMOTS_TYPES).and_then(raw::as_ulongs),
    ) else {
        return Err(CKR_TEMPLATE_INCOMPLETE);
    };
    let levels = hss::validate(levels, &lms, &ots)?;
    for (t, want) in [(private, CKO_PRIVATE_KEY), (public, CKO_PUBLIC_KEY)] {
        if let Some(c) = raw::find(t, CKA_CLASS).and_then(raw::as_ulong) {
            if c != want {
                return Err(CKR_TEMPLATE_INCONSISTENT);
            }
        }
        if let Some(k) = raw::find(t, CKA_KEY_TYPE).and_then(raw::as_ulong) {
            if k != CKK_HSS {
                return Err(CKR_TEMPLATE_INCONSISTENT);
            }
        }
    }
    // The simulator's own HSS keys take no per-use login (`CKA_ALWAYS_AUTHENTICATE`):
    // asked for one, the generation is refused rather than the key made without it.
    if raw::find(private, CKA_EXTRACTABLE).and_then(raw::as_bool) == Some(true)
        || raw::find(private, CKA_SENSITIVE).and_then(raw::as_bool) == Some(false)
        || raw::find(private, CKA_ALWAYS_AUTHENTICATE).and_then(raw::as_bool) == Some(true)
    {
        return Err(CKR_ATTRIBUTE_VALUE_INVALID);
    }
    let token = raw::find(private, CKA_TOKEN)
        .and_then(raw::as_bool)
        .unwrap_or(false);
    let label = raw::find(private, CKA_LABEL)
        .or_else(|| raw::find(public, CKA_LABEL))
        .unwrap_or_default()
        .to_vec();
    let id = raw::find(private, CKA_ID)
        .or_else(|| raw::find(public, CKA_ID))
        .unwrap_or_default()
        .to_vec();
    Ok(HssRequest {
        levels,
        token,
        label,
        id,
    })
}

/// The Luna trap: with `CKA_PARAMETER_SET` missing on either half of an ML-DSA key pair
/// template, the pair silently gets the default parameter set, whatever the other half
/// asked for. Rewrites both halves when that applies; returns whether it did.
pub fn apply_ml_dsa_default(public: &mut Values, private: &mut Values) -> bool {
    if raw::find(public, CKA_PARAMETER_SET).is_some()
        && raw::find(private, CKA_PARAMETER_SET).is_some()
    {
        return false;
    }
    let default = ML_DSA_DEFAULT_PARAMETER_SET.to_ne_bytes().to_vec();
    for t in [public, private] {
        t.retain(|(ty, _)| *ty != CKA_PARAMETER_SET);
        t.push((CKA_PARAMETER_SET, default.clone()));
    }
    true
}

/// The parameter set of an ML-DSA key pair template (after [`apply_ml_dsa_default`]):
/// both halves must name the same supported set, and class and key type, when given,
/// must agree with the half.
pub fn ml_dsa_pair(public: &Values, private: &Values) -> Result<CK_ULONG, CK_RV> {
    for (t, want) in [(private, CKO_PRIVATE_KEY), (public, CKO_PUBLIC_KEY)] {
        if raw::find(t, CKA_CLASS).is_some_and(|c| raw::as_ulong(c) != Some(want))
            || raw::find(t, CKA_KEY_TYPE).is_some_and(|k| raw::as_ulong(k) != Some(CKK_ML_DSA))
        {
            return Err(CKR_TEMPLATE_INCONSISTENT);
        }
    }
    let set = |t: &Values| raw::find(t, CKA_PARAMETER_SET).and_then(raw::as_ulong);
    match (set(public), set(private)) {
        (Some(a), Some(b)) if a != b => Err(CKR_TEMPLATE_INCONSISTENT),
        (Some(a), _) if matches!(a, CKP_ML_DSA_44 | CKP_ML_DSA_65 | CKP_ML_DSA_87) => Ok(a),
        (Some(_), _) => Err(CKR_PARAMETER_SET_NOT_SUPPORTED),
        (None, _) => Err(CKR_TEMPLATE_INCOMPLETE),
    }
}

/// `C_GetAttributeValue` on an HSS object: fill the caller's template under the PKCS#11
/// rules (NULL value → report the length; too small → `CKR_BUFFER_TOO_SMALL`; unknown →
/// `CKR_ATTRIBUTE_TYPE_INVALID`; secret → `CKR_ATTRIBUTE_SENSITIVE`), never writing more
/// than `ulValueLen` bytes.
///
/// # Safety
/// Each attribute's `pValue` must be NULL or point to `ulValueLen` writable bytes.
pub unsafe fn fill(key: &HssKey, part: Part, attrs: &mut [CK_ATTRIBUTE]) -> CK_RV {
    let mut rv = CKR_OK;
    for a in attrs.iter_mut() {
        match objects::attribute(key, part, a.type_) {
            AttrOut::Invalid => {
                a.ulValueLen = CK_UNAVAILABLE_INFORMATION;
                rv = CKR_ATTRIBUTE_TYPE_INVALID;
            }
            AttrOut::Sensitive => {
                a.ulValueLen = CK_UNAVAILABLE_INFORMATION;
                rv = CKR_ATTRIBUTE_SENSITIVE;
            }
            AttrOut::Value(v) => {
                if a.pValue.is_null() {
                    a.ulValueLen = v.len() as CK_ULONG;
                } else if (a.ulValueLen as usize) < v.len() {
                    a.ulValueLen = CK_UNAVAILABLE_INFORMATION;
                    rv = CKR_BUFFER_TOO_SMALL;
                } else {
                    // SAFETY: pValue has ulValueLen >= v.len() writable bytes (caller).
                    unsafe {
                        std::ptr::copy_nonoverlapping(v.as_ptr(), a.pValue as *mut u8, v.len())
                    };
                    a.ulValueLen = v.len() as CK_ULONG;
                }
            }
        }
    }
    rv
}
