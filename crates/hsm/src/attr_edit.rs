//! What may be changed on an object with `C_SetAttributeValue`, by PKCS#11's rules: an object
//! with `CKA_MODIFIABLE` false changes nothing; `CKA_SENSITIVE` may be set, never unset;
//! `CKA_EXTRACTABLE` may be unset, never set; `CKA_WRAP_WITH_TRUSTED` may be set, never
//! unset; `CKA_TRUSTED` (on public and secret keys: may this key wrap keys restricted to
//! trusted wrapping keys) is the security officer's to set, which the console's role check
//! enforces (`roles::Action::TrustKeys`); the usage flags of a key may be switched either
//! way. Label, ID and the start/end dates are free text/bytes. The token may still refuse
//! (`CKR_ATTRIBUTE_READ_ONLY`, `CKR_ACTION_PROHIBITED`, a Luna policy); the console checks
//! these rules first so it never sends what the standard forbids.

use p11::sys::*;

/// A boolean attribute the console offers to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditableFlag {
    pub attr: u64,
    /// As `--set` spells it (`sign`, `sensitive`, …).
    pub name: &'static str,
}

pub const FLAGS: [EditableFlag; 11] = [
    EditableFlag {
        attr: CKA_SENSITIVE,
        name: "sensitive",
    },
    EditableFlag {
        attr: CKA_EXTRACTABLE,
        name: "extractable",
    },
    EditableFlag {
        attr: CKA_SIGN,
        name: "sign",
    },
    EditableFlag {
        attr: CKA_VERIFY,
        name: "verify",
    },
    EditableFlag {
        attr: CKA_ENCRYPT,
        name: "encrypt",
    },
    EditableFlag {
        attr: CKA_DECRYPT,
        name: "decrypt",
    },
    EditableFlag {
        attr: CKA_WRAP,
        name: "wrap",
    },
    EditableFlag {
        attr: CKA_UNWRAP,
        name: "unwrap",
    },
    EditableFlag {
        attr: CKA_DERIVE,
        name: "derive",
    },
    EditableFlag {
        attr: CKA_WRAP_WITH_TRUSTED,
        name: "wrap_with_trusted",
    },
    EditableFlag {
        attr: CKA_TRUSTED,
        name: "trusted",
    },
];

/// `CKA_TRUSTED`, which only the security officer changes.
pub const TRUSTED: EditableFlag = FLAGS[10];

/// The flag named `name` (`sign`, `CKA_SIGN`, case-insensitive).
pub fn flag(name: &str) -> Option<EditableFlag> {
    let n = name.trim().to_ascii_lowercase();
    let n = n.strip_prefix("cka_").unwrap_or(&n);
    FLAGS.into_iter().find(|f| f.name == n)
}

/// `ATTR=VALUE` with a boolean value (`true|false|yes|no|1|0|on|off`).
pub fn parse_set(s: &str) -> Result<(EditableFlag, bool), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("--set '{s}': write ATTR=VALUE, e.g. sign=false"))?;
    let f = flag(k).ok_or_else(|| {
        format!(
            "--set '{s}': {k} is not an attribute the console changes ({}; label, ID and dates have their own options)",
            FLAGS.map(|f| f.name).join(", ")
        )
    })?;
    let b = match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => true,
        "false" | "no" | "0" | "off" => false,
        other => return Err(format!("--set '{s}': '{other}' is not true or false")),
    };
    Ok((f, b))
}

/// Why a flag may not be changed (the English is the `Display`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FlagRefusal {
    #[error("{} is a key attribute; this object is not a key", .flag.name)]
    NotAKey { flag: EditableFlag },
    #[error("the object has no {} attribute", .flag.name)]
    Missing { flag: EditableFlag },
    #[error("a sensitive key can never be made non-sensitive (PKCS#11: CKA_SENSITIVE may only be set to true)")]
    SensitiveForever,
    #[error("a non-extractable key can never be made extractable (PKCS#11: CKA_EXTRACTABLE may only be set to false)")]
    ExtractableNever,
    #[error("{} applies to private and secret keys, not public ones", .flag.name)]
    NotOnPublicKeys { flag: EditableFlag },
    #[error("the object is not modifiable (CKA_MODIFIABLE false)")]
    NotModifiable,
    #[error("a key that may leave the token only under a trusted wrapping key keeps that restriction (PKCS#11: CKA_WRAP_WITH_TRUSTED may only be set to true)")]
    WrapWithTrustedForever,
    #[error("trusted applies to the keys that wrap (public and secret keys), not to private keys")]
    TrustedNotOnPrivateKeys,
    #[error("only the security officer marks a key trusted (PKCS#11: CKA_TRUSTED is set by the SO); log in as the SO")]
    TrustedBySoOnly,
}

/// May `f` go from `current` to `new` on a key of `class`? The reason when not.
pub fn check_flag(
    f: EditableFlag,
    class: u64,
    current: Option<bool>,
    new: bool,
) -> Result<(), FlagRefusal> {
    if !matches!(class, CKO_PRIVATE_KEY | CKO_SECRET_KEY | CKO_PUBLIC_KEY) {
        return Err(FlagRefusal::NotAKey { flag: f });
    }
    let Some(cur) = current else {
        return Err(FlagRefusal::Missing { flag: f });
    };
    if cur == new {
        return Ok(());
    }
    match (f.attr, new) {
        (CKA_SENSITIVE, false) => Err(FlagRefusal::SensitiveForever),
        (CKA_EXTRACTABLE, true) => Err(FlagRefusal::ExtractableNever),
        (CKA_WRAP_WITH_TRUSTED, false) => Err(FlagRefusal::WrapWithTrustedForever),
        (CKA_SENSITIVE | CKA_EXTRACTABLE | CKA_WRAP_WITH_TRUSTED, _) if class == CKO_PUBLIC_KEY => {
            Err(FlagRefusal::NotOnPublicKeys { flag: f })
        }
        (CKA_TRUSTED, _) if class == CKO_PRIVATE_KEY => Err(FlagRefusal::TrustedNotOnPrivateKeys),
        _ => Ok(()),
    }
}

/// May the role logged in (`so`: the security officer) change `f`? `CKA_TRUSTED` is the
/// security officer's (PKCS#11 lets only the SO set it to true; the console leaves both ways
/// to the SO, so which keys are trusted is one role's decision).
pub fn check_flag_role(f: EditableFlag, so: bool) -> Result<(), FlagRefusal> {
    if f == TRUSTED && !so {
        Err(FlagRefusal::TrustedBySoOnly)
    } else {
        Ok(())
    }
}

/// A date that is not `YYYY-MM-DD`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{input}' is not a date such as 2027-12-31")]
pub struct NotADate {
    pub input: String,
}

/// `YYYY-MM-DD` as `CK_DATE` (8 ASCII digits); empty clears the date.
pub fn parse_date(s: &str) -> Result<Vec<u8>, NotADate> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let ok = s.len() == 10
        && s.as_bytes()[4] == b'-'
        && s.as_bytes()[7] == b'-'
        && s.chars()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    let month: u32 = s.get(5..7).and_then(|m| m.parse().ok()).unwrap_or(0);
    let day: u32 = s.get(8..10).and_then(|d| d.parse().ok()).unwrap_or(0);
    if !ok || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(NotADate { input: s.into() });
    }
    Ok(s.replace('-', "").into_bytes())
}

/// One boolean as the edit dialog offers it: its value, and why it cannot be switched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagOffer {
    pub flag: EditableFlag,
    pub value: bool,
    /// `None`: may be switched to the other value.
    pub refusal: Option<FlagRefusal>,
}

/// What the dialog offers for an object of `class` with these flag values, to the role
/// logged in (`so`: the security officer).
pub fn offers(
    class: u64,
    modifiable: bool,
    so: bool,
    values: &[(EditableFlag, Option<bool>)],
) -> Vec<FlagOffer> {
    values
        .iter()
        .filter_map(|(f, v)| v.map(|v| (*f, v)))
        // A private key's CKA_TRUSTED (certificates have one too) means nothing for wrapping.
        .filter(|(f, _)| !(*f == TRUSTED && class == CKO_PRIVATE_KEY))
        .map(|(flag, value)| FlagOffer {
            flag,
            value,
            refusal: if modifiable {
                check_flag(flag, class, Some(value), !value)
                    .and_then(|()| check_flag_role(flag, so))
                    .err()
            } else {
                Some(FlagRefusal::NotModifiable)
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standards_one_way_flags() {
        let s = flag("sensitive").unwrap();
        let x = flag("CKA_EXTRACTABLE").unwrap();
        assert!(check_flag(s, CKO_SECRET_KEY, Some(false), true).is_ok());
        assert_eq!(
            check_flag(s, CKO_SECRET_KEY, Some(true), false),
            Err(FlagRefusal::SensitiveForever)
        );
        assert!(check_flag(x, CKO_PRIVATE_KEY, Some(true), false).is_ok());
        assert!(check_flag(x, CKO_PRIVATE_KEY, Some(false), true)
            .unwrap_err()
            .to_string()
            .contains("never"));
        assert!(check_flag(flag("sign").unwrap(), CKO_CERTIFICATE, Some(true), false).is_err());
        assert!(check_flag(flag("sign").unwrap(), CKO_PRIVATE_KEY, Some(true), false).is_ok());
    }

    #[test]
    fn trust_is_the_security_officers_and_one_way_where_the_standard_says() {
        let t = flag("trusted").unwrap();
        let w = flag("CKA_WRAP_WITH_TRUSTED").unwrap();
        assert_eq!(t, TRUSTED);
        assert!(check_flag(t, CKO_PUBLIC_KEY, Some(false), true).is_ok());
        assert!(check_flag(t, CKO_SECRET_KEY, Some(true), false).is_ok());
        assert_eq!(
            check_flag(t, CKO_PRIVATE_KEY, Some(false), true),
            Err(FlagRefusal::TrustedNotOnPrivateKeys)
        );
        assert_eq!(check_flag_role(t, false), Err(FlagRefusal::TrustedBySoOnly));
        assert!(check_flag_role(t, false)
            .unwrap_err()
            .to_string()
            .contains("security officer"));
        assert!(check_flag_role(t, true).is_ok());
        assert!(check_flag_role(flag("sign").unwrap(), false).is_ok());
        assert!(check_flag(w, CKO_SECRET_KEY, Some(false), true).is_ok());
        assert_eq!(
            check_flag(w, CKO_PRIVATE_KEY, Some(true), false),
            Err(FlagRefusal::WrapWithTrustedForever)
        );
        assert_eq!(parse_set("trusted=true").unwrap(), (t, true));
        // The dialog: the user sees trusted but may not switch it, the SO may.
        let vals = [(t, Some(false)), (flag("verify").unwrap(), Some(true))];
        let user = offers(CKO_PUBLIC_KEY, true, false, &vals);
        assert_eq!(user[0].refusal, Some(FlagRefusal::TrustedBySoOnly));
        assert!(user[1].refusal.is_none());
        assert!(offers(CKO_PUBLIC_KEY, true, true, &vals)[0]
            .refusal
            .is_none());
        assert!(offers(CKO_PRIVATE_KEY, true, true, &vals)
            .iter()
            .all(|o| o.flag != t));
    }

    #[test]
    fn set_and_dates_parse() {
        assert!(!parse_set("sign=false").unwrap().1);
        assert_eq!(parse_set("CKA_DERIVE=yes").unwrap().0.attr, CKA_DERIVE);
        assert!(parse_set("sign").unwrap_err().contains("ATTR=VALUE"));
        assert!(parse_set("modulus=1")
            .unwrap_err()
            .contains("not an attribute"));
        assert!(parse_set("sign=maybe")
            .unwrap_err()
            .contains("not true or false"));
        assert_eq!(parse_date("2027-12-31").unwrap(), b"20271231");
        assert!(parse_date("2027-13-01").is_err());
        assert!(parse_date("31.12.2027").is_err());
        assert!(parse_date("").unwrap().is_empty());
    }

    #[test]
    fn offers_follow_modifiable() {
        let vals = [
            (flag("sensitive").unwrap(), Some(true)),
            (flag("sign").unwrap(), Some(true)),
        ];
        let o = offers(CKO_PRIVATE_KEY, true, false, &vals);
        assert!(o[0].refusal.is_some() && o[1].refusal.is_none());
        let o = offers(CKO_PRIVATE_KEY, false, false, &vals);
        assert!(o
            .iter()
            .all(|f| f.refusal == Some(FlagRefusal::NotModifiable)));
    }
}
