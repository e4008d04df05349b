//! Key-generation templates that follow what Luna enforces (seed article, measured on
//! firmware 7.9): `CKA_PARAMETER_SET` on both halves of an ML-DSA/ML-KEM/SLH-DSA pair;
//! `CKA_ENCAPSULATE` on the public and `CKA_DECAPSULATE` on the private ML-KEM key; HSS
//! levels and types only in the private template (in the public one Luna answers
//! `CKR_ATTRIBUTE_VALUE_INVALID`). Private and secret keys are sensitive and not extractable,
//! unless made extractable for a backup ([`Export::ForBackup`]): then still sensitive (the
//! value never leaves in the clear), and with `CKA_WRAP_WITH_TRUSTED` where the token has it,
//! so it leaves only wrapped under a key the security officer marked `CKA_TRUSTED`. HSS keys
//! are never extractable (a copy would sign with the same one-time keys again).

use p11::sys::*;
use p11::{Family, Mechanism, Template};

use crate::algo::{Curve, KeySpec};

/// What to name the key and where to keep it.
#[derive(Debug, Clone)]
pub struct KeyAttrs {
    pub label: String,
    pub id: Vec<u8>,
    /// Token object (persistent) or session object (gone with the session).
    pub token: bool,
}

/// Whether a generated secret or private key may leave the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Export {
    /// `CKA_EXTRACTABLE` false: the key never leaves the token (the console's default).
    #[default]
    Never,
    /// `CKA_EXTRACTABLE` true, for a backup by wrapping; `CKA_SENSITIVE` stays true. With
    /// `trusted_only`, `CKA_WRAP_WITH_TRUSTED` true: the token wraps it only under a wrapping
    /// key marked `CKA_TRUSTED` (false where the token does not know the attribute).
    ForBackup { trusted_only: bool },
}

/// The templates for one key generation.
pub struct KeygenTemplates {
    pub mechanism: Mechanism,
    /// `None` for secret keys.
    pub public: Option<Template>,
    pub private: Template,
}

fn common(t: Template, class: u64, key_type: u64, a: &KeyAttrs) -> Template {
    t.ulong(CKA_CLASS, class)
        .ulong(CKA_KEY_TYPE, key_type)
        .bool(CKA_TOKEN, a.token)
        .text(CKA_LABEL, &a.label)
        .bytes(CKA_ID, &a.id)
}

fn public_base(key_type: u64, a: &KeyAttrs) -> Template {
    common(Template::new(), CKO_PUBLIC_KEY, key_type, a).bool(CKA_PRIVATE, false)
}

/// Sensitive always; extractable (and restricted to trusted wrapping keys) only for a backup.
fn export_attrs(t: Template, export: Export) -> Template {
    let t = t.bool(CKA_SENSITIVE, true);
    match export {
        Export::Never => t.bool(CKA_EXTRACTABLE, false),
        Export::ForBackup { trusted_only } => {
            let t = t.bool(CKA_EXTRACTABLE, true);
            if trusted_only {
                t.bool(CKA_WRAP_WITH_TRUSTED, true)
            } else {
                t
            }
        }
    }
}

fn private_base(key_type: u64, a: &KeyAttrs, export: Export) -> Template {
    export_attrs(
        common(Template::new(), CKO_PRIVATE_KEY, key_type, a).bool(CKA_PRIVATE, true),
        export,
    )
}

fn secret_base(key_type: u64, a: &KeyAttrs, export: Export) -> Template {
    export_attrs(
        common(Template::new(), CKO_SECRET_KEY, key_type, a).bool(CKA_PRIVATE, true),
        export,
    )
}

/// Build the templates for `spec`. `family` matters for Ed25519, whose `CKA_EC_PARAMS`
/// SoftHSM2 accepts only as the printable string "edwards25519". The key never leaves the
/// token ([`Export::Never`]); see [`keygen_with`].
pub fn keygen(spec: &KeySpec, a: &KeyAttrs, family: Family) -> KeygenTemplates {
    keygen_with(spec, a, family, Export::Never)
}

/// As [`keygen`], the secret or private key extractable as `export` says — except an HSS
/// key, which is never extractable whatever is asked.
pub fn keygen_with(
    spec: &KeySpec,
    a: &KeyAttrs,
    family: Family,
    export: Export,
) -> KeygenTemplates {
    let mechanism = Mechanism::new(spec.mechanism());
    let x = match spec {
        KeySpec::Hss { .. } => Export::Never,
        _ => export,
    };
    match spec {
        KeySpec::MlDsa { set } => KeygenTemplates {
            mechanism,
            public: Some(
                public_base(CKK_ML_DSA, a)
                    .ulong(CKA_PARAMETER_SET, set.parameter_set())
                    .bool(CKA_VERIFY, true),
            ),
            private: private_base(CKK_ML_DSA, a, x)
                .ulong(CKA_PARAMETER_SET, set.parameter_set())
                .bool(CKA_SIGN, true),
        },
        KeySpec::SlhDsa { set } => KeygenTemplates {
            mechanism,
            public: Some(
                public_base(CKK_SLH_DSA, a)
                    .ulong(CKA_PARAMETER_SET, set.parameter_set())
                    .bool(CKA_VERIFY, true),
            ),
            private: private_base(CKK_SLH_DSA, a, x)
                .ulong(CKA_PARAMETER_SET, set.parameter_set())
                .bool(CKA_SIGN, true),
        },
        KeySpec::MlKem { set } => KeygenTemplates {
            mechanism,
            public: Some(
                public_base(CKK_ML_KEM, a)
                    .ulong(CKA_PARAMETER_SET, set.parameter_set())
                    .bool(CKA_ENCAPSULATE, true),
            ),
            private: private_base(CKK_ML_KEM, a, x)
                .ulong(CKA_PARAMETER_SET, set.parameter_set())
                .bool(CKA_DECAPSULATE, true),
        },
        KeySpec::Hss { params } => KeygenTemplates {
            mechanism,
            // Luna 7.9: the HSS attributes belong in the private template only.
            public: Some(public_base(CKK_HSS, a).bool(CKA_VERIFY, true)),
            private: private_base(CKK_HSS, a, x)
                .bool(CKA_SIGN, true)
                .ulong(CKA_HSS_LEVELS, params.levels.len() as u64)
                .ulongs(CKA_HSS_LMS_TYPES, &params.lms_codes())
                .ulongs(CKA_HSS_LMOTS_TYPES, &params.lmots_codes()),
        },
        KeySpec::Ec { curve } => {
            let kt = if *curve == Curve::Ed25519 {
                CKK_EC_EDWARDS
            } else {
                CKK_EC
            };
            KeygenTemplates {
                mechanism,
                public: Some(
                    public_base(kt, a)
                        .bytes(CKA_EC_PARAMS, curve.ec_params(family == Family::SoftHsm))
                        .bool(CKA_VERIFY, true),
                ),
                private: private_base(kt, a, x).bool(CKA_SIGN, true),
            }
        }
        KeySpec::Rsa { bits } => KeygenTemplates {
            mechanism,
            public: Some(
                public_base(CKK_RSA, a)
                    .ulong(CKA_MODULUS_BITS, *bits as u64)
                    .bytes(CKA_PUBLIC_EXPONENT, &[0x01, 0x00, 0x01])
                    .bool(CKA_VERIFY, true),
            ),
            private: private_base(CKK_RSA, a, x).bool(CKA_SIGN, true),
        },
        KeySpec::Aes { bits } => KeygenTemplates {
            mechanism,
            public: None,
            private: secret_base(CKK_AES, a, x)
                .ulong(CKA_VALUE_LEN, (*bits / 8) as u64)
                .bool(CKA_ENCRYPT, true)
                .bool(CKA_DECRYPT, true)
                .bool(CKA_WRAP, true)
                .bool(CKA_UNWRAP, true),
        },
        KeySpec::GenericSecret { bits } => KeygenTemplates {
            mechanism,
            public: None,
            // Kryoptic defaults CKA_SIGN to false for generic secrets; say it.
            private: secret_base(CKK_GENERIC_SECRET, a, x)
                .ulong(CKA_VALUE_LEN, (*bits / 8) as u64)
                .bool(CKA_SIGN, true)
                .bool(CKA_VERIFY, true),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::*;

    fn attrs() -> KeyAttrs {
        KeyAttrs {
            label: "k".into(),
            id: vec![1, 2],
            token: true,
        }
    }

    #[test]
    fn ml_dsa_parameter_set_on_both_halves() {
        let t = keygen(
            &KeySpec::MlDsa { set: MlDsaSet::P65 },
            &attrs(),
            Family::Generic,
        );
        let p = p11::AttrValue::Value(
            t.public
                .as_ref()
                .unwrap()
                .get(CKA_PARAMETER_SET)
                .unwrap()
                .to_vec(),
        );
        let s = p11::AttrValue::Value(t.private.get(CKA_PARAMETER_SET).unwrap().to_vec());
        assert_eq!(p.as_ulong(), Some(CKP_ML_DSA_65));
        assert_eq!(s.as_ulong(), Some(CKP_ML_DSA_65));
    }

    #[test]
    fn ml_kem_capabilities_on_the_right_halves() {
        let t = keygen(
            &KeySpec::MlKem {
                set: MlKemSet::P768,
            },
            &attrs(),
            Family::Generic,
        );
        assert!(t.public.as_ref().unwrap().get(CKA_ENCAPSULATE).is_some());
        assert!(t.public.as_ref().unwrap().get(CKA_DECAPSULATE).is_none());
        assert!(t.private.get(CKA_DECAPSULATE).is_some());
        assert!(t.private.get(CKA_SIGN).is_none());
    }

    #[test]
    fn hss_attributes_only_in_the_private_template() {
        let params = HssParams::new(vec![
            (LmsType::H5, LmotsType::W8),
            (LmsType::H10, LmotsType::W4),
        ])
        .unwrap();
        let t = keygen(&KeySpec::Hss { params }, &attrs(), Family::Luna);
        let public = t.public.unwrap();
        for a in [CKA_HSS_LEVELS, CKA_HSS_LMS_TYPES, CKA_HSS_LMOTS_TYPES] {
            assert!(public.get(a).is_none());
            assert!(t.private.get(a).is_some());
        }
        let lms = p11::AttrValue::Value(t.private.get(CKA_HSS_LMS_TYPES).unwrap().to_vec());
        assert_eq!(lms.as_ulongs(), Some(vec![5, 6]));
    }

    #[test]
    fn private_keys_are_sensitive_and_not_extractable() {
        for spec in [
            KeySpec::Ec { curve: Curve::P256 },
            KeySpec::Aes { bits: 256 },
            KeySpec::Rsa { bits: 2048 },
        ] {
            let t = keygen(&spec, &attrs(), Family::Generic);
            assert_eq!(t.private.get(CKA_SENSITIVE), Some(&[CK_TRUE][..]));
            assert_eq!(t.private.get(CKA_EXTRACTABLE), Some(&[CK_FALSE][..]));
            assert_eq!(t.private.get(CKA_WRAP_WITH_TRUSTED), None);
        }
    }

    #[test]
    fn backup_keys_are_extractable_sensitive_and_trusted_only_where_asked() {
        let backup = |trusted_only| Export::ForBackup { trusted_only };
        for spec in [
            KeySpec::Ec { curve: Curve::P256 },
            KeySpec::Aes { bits: 256 },
        ] {
            let t = keygen_with(&spec, &attrs(), Family::Generic, backup(true));
            assert_eq!(t.private.get(CKA_SENSITIVE), Some(&[CK_TRUE][..]));
            assert_eq!(t.private.get(CKA_EXTRACTABLE), Some(&[CK_TRUE][..]));
            assert_eq!(t.private.get(CKA_WRAP_WITH_TRUSTED), Some(&[CK_TRUE][..]));
            if let Some(public) = &t.public {
                assert_eq!(public.get(CKA_EXTRACTABLE), None, "public halves unchanged");
            }
            let t = keygen_with(&spec, &attrs(), Family::Generic, backup(false));
            assert_eq!(t.private.get(CKA_EXTRACTABLE), Some(&[CK_TRUE][..]));
            assert_eq!(t.private.get(CKA_WRAP_WITH_TRUSTED), None);
        }
        let params = HssParams::new(vec![(LmsType::H5, LmotsType::W8)]).unwrap();
        let t = keygen_with(
            &KeySpec::Hss { params },
            &attrs(),
            Family::Luna,
            backup(true),
        );
        assert_eq!(t.private.get(CKA_EXTRACTABLE), Some(&[CK_FALSE][..]));
        assert_eq!(t.private.get(CKA_WRAP_WITH_TRUSTED), None);
    }
}
