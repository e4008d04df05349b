//! Objects other than generated keys: public keys and certificates brought onto a token
//! (`C_CreateObject` templates), and finding what they belong to — the key pair whose
//! public key a certificate certifies, a certificate already on the token.

use p11::sys::*;
use p11::{Family, ObjectHandle, Session, Template};

use crate::algo::Curve;
use crate::keys::read_public_key;
use crate::pubkey::PublicKey;
use crate::{HsmError, Result};

/// `CKA_CERTIFICATE_CATEGORY` values (PKCS#11 3.0 §4.6.2).
pub const CATEGORY_UNSPECIFIED: u64 = 0;
pub const CATEGORY_TOKEN_USER: u64 = 1;
pub const CATEGORY_AUTHORITY: u64 = 2;
pub const CATEGORY_OTHER_ENTITY: u64 = 3;

/// A token public-key object for `pk` (RSA, EC P-256/P-384, Ed25519), usable to verify,
/// encrypt and wrap (a wrapping key imported from another token).
pub fn public_key_template(
    pk: &PublicKey,
    family: Family,
    label: &str,
    id: &[u8],
) -> Result<Template> {
    let base = |kt: u64| {
        Template::new()
            .ulong(CKA_CLASS, CKO_PUBLIC_KEY)
            .ulong(CKA_KEY_TYPE, kt)
            .bool(CKA_TOKEN, true)
            .bool(CKA_PRIVATE, false)
            .text(CKA_LABEL, label)
            .bytes(CKA_ID, id)
            .bool(CKA_VERIFY, true)
    };
    Ok(match pk {
        PublicKey::Rsa { modulus, exponent } => base(CKK_RSA)
            .bytes(CKA_MODULUS, modulus)
            .bytes(CKA_PUBLIC_EXPONENT, exponent)
            .bool(CKA_ENCRYPT, true)
            .bool(CKA_WRAP, true),
        PublicKey::Ec { curve, point } => {
            let kt = if *curve == Curve::Ed25519 {
                CKK_EC_EDWARDS
            } else {
                CKK_EC
            };
            // CKA_EC_POINT is the DER OCTET STRING of the point.
            let mut octets = vec![0x04, point.len() as u8];
            octets.extend_from_slice(point);
            base(kt)
                .bytes(CKA_EC_PARAMS, curve.ec_params(family == Family::SoftHsm))
                .bytes(CKA_EC_POINT, &octets)
        }
        other => {
            return Err(HsmError::NotSupported(crate::text!(
                "errors.import_public_key_unsupported",
                "importing {{algorithm}} public keys is not supported (RSA, EC P-256/P-384 and Ed25519 are)",
                algorithm = other.algorithm()
            )))
        }
    })
}

/// The key pair on the token whose public key is `pk`: its `CKA_ID` and label.
pub fn key_pair_for(s: &Session, pk: &PublicKey) -> Result<Option<(Vec<u8>, String)>> {
    let publics = s.find_objects(&mut Template::new().ulong(CKA_CLASS, CKO_PUBLIC_KEY))?;
    for h in publics {
        if read_public_key(s, h).ok().as_ref() != Some(pk) {
            continue;
        }
        let v = s.get_attributes(h, &[CKA_ID, CKA_LABEL])?;
        let id = v[0].bytes().unwrap_or_default().to_vec();
        // A key *pair*: a private key shares the ID (an imported public key alone is not).
        let privates = s.find_objects(
            &mut Template::new()
                .ulong(CKA_CLASS, CKO_PRIVATE_KEY)
                .bytes(CKA_ID, &id),
        )?;
        if !id.is_empty() && !privates.is_empty() {
            let label = s
                .get_attribute(privates[0], CKA_LABEL)?
                .as_text()
                .unwrap_or_else(|| v[1].as_text().unwrap_or_default());
            return Ok(Some((id, label)));
        }
    }
    Ok(None)
}

/// Every X.509 certificate on the token: handle, label and DER.
pub fn certificates(s: &Session) -> Result<Vec<(ObjectHandle, String, Vec<u8>)>> {
    let found = s.find_objects(
        &mut Template::new()
            .ulong(CKA_CLASS, CKO_CERTIFICATE)
            .ulong(CKA_CERTIFICATE_TYPE, CKC_X_509),
    )?;
    let mut out = Vec::new();
    for h in found {
        let v = s.get_attributes(h, &[CKA_LABEL, CKA_VALUE])?;
        if let Some(d) = v[1].bytes() {
            out.push((h, v[0].as_text().unwrap_or_default(), d.to_vec()));
        }
    }
    Ok(out)
}

/// A data object (`CKO_DATA`) holding `value`, tagged with `application`.
pub fn data_template(label: &str, application: &str, value: &[u8], private: bool) -> Template {
    Template::new()
        .ulong(CKA_CLASS, CKO_DATA)
        .bool(CKA_TOKEN, true)
        .bool(CKA_PRIVATE, private)
        .text(CKA_LABEL, label)
        .text(CKA_APPLICATION, application)
        .bytes(CKA_VALUE, value)
}

/// Read an object's `CKA_VALUE` (a certificate's DER, a data object's bytes).
pub fn value(s: &Session, h: ObjectHandle) -> Result<Vec<u8>> {
    s.get_attribute(h, CKA_VALUE)?
        .bytes()
        .map(<[u8]>::to_vec)
        .ok_or_else(|| {
            HsmError::Refused(crate::text!(
                "errors.object_does_not_reveal_value",
                "the object does not reveal its value"
            ))
        })
}
