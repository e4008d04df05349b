//! Key-generation templates that follow what Luna enforces (seed article, measured on
//! firmware 7.9): `CKA_PARAMETER_SET` on both halves of an ML-DSA/ML-KEM/SLH-DSA pair;
//! `CKA_ENCAPSULATE` on the public and `CKA_DECAPSULATE` on the private ML-KEM key; HSS
//! levels and types only in the private template (in the public one Luna answers
//! `CKR_ATTRIBUTE_VALUE_INVALID`). Private and secret keys are sensitive and not extractable.

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

fn private_base(key_type: u64, a: &KeyAttrs) -> Template {
    common(Template::new(), CKO_PRIVATE_KEY, key_type, a)
        .bool(CKA_PRIVATE, true)
        .bool(CKA_SENSITIVE, true)
        .bool(CKA_EXTRACTABLE, false)
}

fn secret_base(key_type: u64, a: &KeyAttrs) -> Template {
    common(Template::new(), CKO_SECRET_KEY, key_type, a)
        .bool(CKA_PRIVATE, true)
        .bool(CKA_SENSITIVE, true)
        .bool(CKA_EXTRACTABLE, false)
}

/// Build the templates for `spec`. `family` matters for Ed25519, whose `CKA_EC_PARAMS`
/// SoftHSM2 accepts only as the printable string "edwards25519".
pub fn keygen(spec: &KeySpec, a: &KeyAttrs, family: Family) -> KeygenTemplates {
    let mechanism = Mechanism::new(spec.mechanism());
    match spec {
        KeySpec::MlDsa { set } => KeygenTemplates {
            mechanism,
            public: Some(
                public_base(CKK_ML_DSA, a)
                    .ulong(CKA_PARAMETER_SET, set.parameter_set())
                    .bool(CKA_VERIFY, true),
            ),
            private: private_base(CKK_ML_DSA, a)
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
            private: private_base(CKK_SLH_DSA, a)
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
            private: private_base(CKK_ML_KEM, a)
                .ulong(CKA_PARAMETER_SET, set.parameter_set())
                .bool(CKA_DECAPSULATE, true),
        },
        KeySpec::Hss { params } => KeygenTemplates {
            mechanism,
            // Luna 7.9: the HSS attributes belong in the private template only.
            public: Some(public_base(CKK_HSS, a).bool(CKA_VERIFY, true)),
            private: private_base(CKK_HSS, a)
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
                private: private_base(kt, a).bool(CKA_SIGN, true),
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
            private: private_base(CKK_RSA, a).bool(CKA_SIGN, true),
        },
        KeySpec::Aes { bits } => KeygenTemplates {
            mechanism,
            public: None,
            private: secret_base(CKK_AES, a)
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
            private: secret_base(CKK_GENERIC_SECRET, a)
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
        }
    }
}
