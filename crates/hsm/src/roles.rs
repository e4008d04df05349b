//! Who may do what on a partition: the PKCS#11 users (security officer, user) and Luna's
//! partition roles (Crypto Officer = `CKU_USER`, Crypto User = `0x80000001`, Limited Crypto
//! Officer = `0x80000003`), and the checks made before a PIN reaches the token.
//!
//! The console asks [`check`] before it offers or runs an action, so a role that cannot do
//! something sees the button disabled with the reason, and a script gets the same reason
//! as an error. The token stays the authority: when it refuses anyway (a real Luna
//! configured otherwise), its answer (`CKR_USER_NOT_AUTHORIZED`) is explained instead.
//! The Luna roles follow what `lunasim` implements (its `roles` module): the Crypto User
//! uses keys and reads objects; the Limited Crypto Officer also generates, imports and
//! changes objects, but neither deletes nor exports keys nor sets other roles' PINs.

use p11::names::luna;
use p11::{Family, UserType};
use serde::{Deserialize, Serialize};

/// Who is logged in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    SecurityOfficer,
    /// `CKU_USER`: the user of any module, Luna's Crypto Officer.
    CryptoOfficer,
    /// Luna's Crypto User (`CKU_CRYPTO_USER` = `0x80000001`).
    CryptoUser,
    /// Luna's Limited Crypto Officer (`0x80000003`).
    LimitedCryptoOfficer,
}

impl Role {
    pub fn user_type(self) -> UserType {
        match self {
            Role::SecurityOfficer => UserType::SecurityOfficer,
            Role::CryptoOfficer => UserType::User,
            Role::CryptoUser => UserType::Vendor(luna::CKU_CRYPTO_USER),
            Role::LimitedCryptoOfficer => UserType::Vendor(luna::CKU_LIMITED_CRYPTO_OFFICER),
        }
    }

    /// The role's name as the module's own documentation calls it.
    pub fn name(self, family: Family) -> &'static str {
        match (self, family) {
            (Role::SecurityOfficer, Family::Luna) => "Partition Security Officer",
            (Role::SecurityOfficer, _) => "security officer",
            (Role::CryptoOfficer, Family::Luna) => "Crypto Officer",
            (Role::CryptoOfficer, _) => "user",
            (Role::CryptoUser, _) => "Crypto User",
            (Role::LimitedCryptoOfficer, _) => "Limited Crypto Officer",
        }
    }

    /// Whether the module knows this role at all (the two extra roles are Luna's).
    pub fn offered_by(self, family: Family) -> bool {
        match self {
            Role::CryptoUser | Role::LimitedCryptoOfficer => family == Family::Luna,
            _ => true,
        }
    }

    /// The roles a module of this family offers, in the order a login dialog lists them.
    pub fn offered(family: Family) -> Vec<Role> {
        [
            Role::CryptoOfficer,
            Role::CryptoUser,
            Role::LimitedCryptoOfficer,
            Role::SecurityOfficer,
        ]
        .into_iter()
        .filter(|r| r.offered_by(family))
        .collect()
    }
}

/// The administrative and key actions the console offers, checked against the role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// See private objects, sign, verify, encrypt, decrypt.
    UseKeys,
    GenerateKeys,
    /// Import certificates, public keys and data objects.
    ImportObjects,
    EditAttributes,
    DeleteObjects,
    /// Export a key wrapped under another.
    WrapKeys,
    /// Import a wrapped key.
    UnwrapKeys,
    /// Change the PIN of the role logged in.
    ChangeOwnPin,
    /// The SO sets or resets the user's (Crypto Officer's) PIN.
    SetUserPin,
    /// The Crypto Officer sets the Crypto User's or Limited Crypto Officer's PIN (Luna).
    SetRolePin,
    /// Initialize the token (needs the SO PIN; every session is closed first).
    InitToken,
    /// Mark a wrapping key trusted or not (`CKA_TRUSTED`, which PKCS#11 lets only the
    /// security officer set): the keys made extractable for backup leave only under those.
    TrustKeys,
}

crate::wire_display!(Action);

impl Action {
    pub const ALL: [Action; 12] = [
        Action::UseKeys,
        Action::GenerateKeys,
        Action::ImportObjects,
        Action::EditAttributes,
        Action::DeleteObjects,
        Action::WrapKeys,
        Action::UnwrapKeys,
        Action::ChangeOwnPin,
        Action::SetUserPin,
        Action::SetRolePin,
        Action::InitToken,
        Action::TrustKeys,
    ];

    /// The action in words, as it ends "The Crypto User cannot …".
    pub fn words(self) -> &'static str {
        match self {
            Action::UseKeys => "use keys",
            Action::GenerateKeys => "generate keys",
            Action::ImportObjects => "import objects",
            Action::EditAttributes => "change attributes",
            Action::DeleteObjects => "delete objects",
            Action::WrapKeys => "export keys wrapped",
            Action::UnwrapKeys => "import wrapped keys",
            Action::ChangeOwnPin => "change its PIN",
            Action::SetUserPin => "set the user PIN",
            Action::SetRolePin => "set other roles' PINs",
            Action::InitToken => "initialize the token",
            Action::TrustKeys => "mark wrapping keys trusted",
        }
    }
}

/// Why a role may not do an action: the rule that refuses it, so the console can say it in
/// the officer's language (the English is [`Refusal`]'s `Display`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The security officer manages the token and its PINs; keys are the user's.
    SoManagesToken,
    /// Only the security officer sets or resets the user PIN.
    OnlySoSetsUserPin,
    /// Only Luna partitions have the other roles.
    NoOtherRoles,
    /// The Crypto User uses keys and reads objects, nothing more.
    CryptoUserUsesOnly,
    /// The Limited Crypto Officer neither deletes nor exports keys nor sets PINs.
    LimitedOfficerLimits,
    /// Only the security officer marks keys trusted (`CKA_TRUSTED`).
    OnlySoTrusts,
}

impl Rule {
    pub fn words(self) -> &'static str {
        match self {
            Rule::SoManagesToken => "the security officer manages the token and its PINs; keys are the user's (log in as the user or Crypto Officer).",
            Rule::OnlySoSetsUserPin => "only the security officer sets or resets it (log in as the SO).",
            Rule::NoOtherRoles => "only Luna partitions have other roles.",
            Rule::CryptoUserUsesOnly => "the Crypto User may use keys and read objects; creating, changing, exporting and deleting them is for the Crypto Officer.",
            Rule::LimitedOfficerLimits => "the Limited Crypto Officer neither deletes nor exports keys nor sets other roles' PINs; that is for the Crypto Officer.",
            Rule::OnlySoTrusts => "only the security officer marks keys trusted; log in as the SO.",
        }
    }
}

/// What [`check`] refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Nobody is logged in.
    #[error("Log in first to {}.", .action.words())]
    NotLoggedIn { action: Action },
    /// The role logged in may not.
    #[error("The {} cannot {}: {}", .role.name(*.family), .action.words(), .rule.words())]
    Role {
        role: Role,
        family: Family,
        action: Action,
        rule: Rule,
    },
}

/// May `role` (`None`: nobody logged in) do `action` on a module of `family`? The refusal
/// says why not, in words an officer can act on.
pub fn check(role: Option<Role>, action: Action, family: Family) -> Result<(), Refusal> {
    use Action as A;
    let Some(role) = role else {
        return match action {
            // Initializing asks for the SO PIN itself and needs every session closed.
            A::InitToken => Ok(()),
            _ => Err(Refusal::NotLoggedIn { action }),
        };
    };
    let refuse = |rule| {
        Err(Refusal::Role {
            role,
            family,
            action,
            rule,
        })
    };
    match (role, action) {
        (_, A::ChangeOwnPin) => Ok(()),
        (_, A::InitToken) => Ok(()),
        (Role::SecurityOfficer, A::SetUserPin | A::TrustKeys) => Ok(()),
        (Role::SecurityOfficer, _) => refuse(Rule::SoManagesToken),
        (_, A::SetUserPin) => refuse(Rule::OnlySoSetsUserPin),
        (_, A::TrustKeys) => refuse(Rule::OnlySoTrusts),
        (Role::CryptoOfficer, A::SetRolePin) if family != Family::Luna => {
            refuse(Rule::NoOtherRoles)
        }
        (Role::CryptoOfficer, _) => Ok(()),
        (Role::CryptoUser, A::UseKeys) => Ok(()),
        (Role::CryptoUser, _) => refuse(Rule::CryptoUserUsesOnly),
        (
            Role::LimitedCryptoOfficer,
            A::UseKeys | A::GenerateKeys | A::ImportObjects | A::EditAttributes | A::UnwrapKeys,
        ) => Ok(()),
        (Role::LimitedCryptoOfficer, _) => refuse(Rule::LimitedOfficerLimits),
    }
}

/// A new PIN the token would refuse for its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PinLengthRefusal {
    #[error("The new PIN is empty.")]
    Empty,
    #[error("The new PIN is {len} characters long; this token needs at least {min}.")]
    TooShort { len: u64, min: u64 },
    #[error("The new PIN is {len} characters long; this token accepts at most {max}.")]
    TooLong { len: u64, max: u64 },
}

/// Check a new PIN against the token's limits before it is sent (`CK_TOKEN_INFO`'s
/// `ulMinPinLen`/`ulMaxPinLen`, in bytes; a token reporting 0 for the maximum sets none).
pub fn check_pin_length(len: usize, min: u64, max: u64) -> Result<(), PinLengthRefusal> {
    let len = len as u64;
    if len == 0 {
        return Err(PinLengthRefusal::Empty);
    }
    if len < min {
        return Err(PinLengthRefusal::TooShort { len, min });
    }
    if max > 0 && len > max {
        return Err(PinLengthRefusal::TooLong { len, max });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luna_roles_only_on_luna() {
        assert_eq!(
            Role::offered(Family::SoftHsm),
            vec![Role::CryptoOfficer, Role::SecurityOfficer]
        );
        assert_eq!(Role::offered(Family::Luna).len(), 4);
        assert_eq!(Role::CryptoUser.user_type().raw(), 0x8000_0001);
        assert_eq!(Role::LimitedCryptoOfficer.user_type().raw(), 0x8000_0003);
        assert_eq!(Role::CryptoOfficer.user_type().raw(), p11::sys::CKU_USER);
    }

    #[test]
    fn what_each_role_may_do() {
        let l = Family::Luna;
        assert!(check(Some(Role::CryptoUser), Action::UseKeys, l).is_ok());
        let why = check(Some(Role::CryptoUser), Action::GenerateKeys, l).unwrap_err();
        assert!(
            why.to_string().contains("Crypto User cannot generate keys"),
            "{why}"
        );
        assert!(matches!(
            why,
            Refusal::Role {
                rule: Rule::CryptoUserUsesOnly,
                ..
            }
        ));
        assert!(check(Some(Role::LimitedCryptoOfficer), Action::ImportObjects, l).is_ok());
        assert!(check(Some(Role::LimitedCryptoOfficer), Action::DeleteObjects, l).is_err());
        assert!(check(Some(Role::CryptoOfficer), Action::SetRolePin, l).is_ok());
        assert!(check(
            Some(Role::CryptoOfficer),
            Action::SetRolePin,
            Family::SoftHsm
        )
        .is_err());
        assert!(check(Some(Role::CryptoOfficer), Action::SetUserPin, l).is_err());
        assert!(check(Some(Role::SecurityOfficer), Action::SetUserPin, l).is_ok());
        assert!(check(Some(Role::SecurityOfficer), Action::GenerateKeys, l).is_err());
        assert!(check(None, Action::InitToken, l).is_ok());
        assert!(check(Some(Role::SecurityOfficer), Action::TrustKeys, l).is_ok());
        for r in [
            Role::CryptoOfficer,
            Role::CryptoUser,
            Role::LimitedCryptoOfficer,
        ] {
            let why = check(Some(r), Action::TrustKeys, l).unwrap_err();
            assert!(
                matches!(
                    why,
                    Refusal::Role {
                        rule: Rule::OnlySoTrusts,
                        ..
                    }
                ),
                "{r:?}: {why}"
            );
        }
        assert!(check(
            Some(Role::CryptoOfficer),
            Action::TrustKeys,
            Family::SoftHsm
        )
        .unwrap_err()
        .to_string()
        .contains("only the security officer marks keys trusted"));
        assert!(check(None, Action::UseKeys, l)
            .unwrap_err()
            .to_string()
            .starts_with("Log in first"));
        for r in Role::offered(l) {
            assert!(check(Some(r), Action::ChangeOwnPin, l).is_ok(), "{r:?}");
            assert!(check(Some(r), Action::InitToken, l).is_ok(), "{r:?}");
        }
    }

    #[test]
    fn pin_lengths() {
        assert!(check_pin_length(8, 4, 255).is_ok());
        assert!(check_pin_length(3, 4, 255)
            .unwrap_err()
            .to_string()
            .contains("at least 4"));
        assert!(check_pin_length(300, 4, 255)
            .unwrap_err()
            .to_string()
            .contains("at most 255"));
        assert!(check_pin_length(300, 4, 0).is_ok());
        assert!(check_pin_length(0, 0, 0).is_err());
    }
}
