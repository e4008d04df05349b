//! The role and PIN checks' refusals (`hsm::roles`) in the officer's language: the role's
//! name, the action and the rule are each a catalog text nested in the sentence, so a
//! language orders them as it needs.

use hsm::roles::{Action, PinLengthRefusal, Refusal, Role, Rule};
use p11::Family;

#[cfg(test)]
use crate::core::i18n::InLang;
use crate::core::i18n::Text;
use crate::text;

/// The role's name as its module's documentation calls it (`Role::name`).
pub fn role_name(role: Role, family: Family) -> Text {
    match (role, family) {
        (Role::SecurityOfficer, Family::Luna) => {
            text!("roles.partition_so", "Partition Security Officer")
        }
        (Role::SecurityOfficer, _) => text!("roles.security_officer", "security officer"),
        (Role::CryptoOfficer, Family::Luna) => text!("roles.crypto_officer", "Crypto Officer"),
        (Role::CryptoOfficer, _) => text!("roles.plain_user", "user"),
        (Role::CryptoUser, _) => text!("roles.crypto_user", "Crypto User"),
        (Role::LimitedCryptoOfficer, _) => {
            text!("roles.limited_crypto_officer", "Limited Crypto Officer")
        }
    }
}

/// The action as it ends "The Crypto User cannot …" (`Action::words`).
pub fn action(a: Action) -> Text {
    match a {
        Action::UseKeys => text!("roles.actions.use_keys", "use keys"),
        Action::GenerateKeys => text!("roles.actions.generate_keys", "generate keys"),
        Action::ImportObjects => text!("roles.actions.import_objects", "import objects"),
        Action::EditAttributes => text!("roles.actions.edit_attributes", "change attributes"),
        Action::DeleteObjects => text!("roles.actions.delete_objects", "delete objects"),
        Action::WrapKeys => text!("roles.actions.wrap_keys", "export keys wrapped"),
        Action::UnwrapKeys => text!("roles.actions.unwrap_keys", "import wrapped keys"),
        Action::ChangeOwnPin => text!("roles.actions.change_own_pin", "change its PIN"),
        Action::SetUserPin => text!("roles.actions.set_user_pin", "set the user PIN"),
        Action::SetRolePin => text!("roles.actions.set_role_pin", "set other roles' PINs"),
        Action::InitToken => text!("roles.actions.init_token", "initialize the token"),
        Action::TrustKeys => text!("roles.actions.trust_keys", "mark wrapping keys trusted"),
    }
}

/// The rule that refuses (`Rule::words`).
pub fn rule(r: Rule) -> Text {
    match r {
        Rule::SoManagesToken => text!("roles.rules.so_manages_token", "the security officer manages the token and its PINs; keys are the user's (log in as the user or Crypto Officer)."),
        Rule::OnlySoSetsUserPin => text!("roles.rules.only_so_sets_user_pin", "only the security officer sets or resets it (log in as the SO)."),
        Rule::NoOtherRoles => text!("roles.rules.no_other_roles", "only Luna partitions have other roles."),
        Rule::CryptoUserUsesOnly => text!("roles.rules.crypto_user_uses_only", "the Crypto User may use keys and read objects; creating, changing, exporting and deleting them is for the Crypto Officer."),
        Rule::LimitedOfficerLimits => text!("roles.rules.limited_officer_limits", "the Limited Crypto Officer neither deletes nor exports keys nor sets other roles' PINs; that is for the Crypto Officer."),
        Rule::OnlySoTrusts => text!("roles.rules.only_so_trusts", "only the security officer marks keys trusted; log in as the SO."),
    }
}

/// A refusal of [`hsm::roles::check`], whole.
pub fn refusal(r: &Refusal) -> Text {
    match *r {
        Refusal::NotLoggedIn { action: a } => {
            let a = action(a);
            text!(
                "roles.log_in_first_to",
                "Log in first to {{action}}.",
                action = &a.text
            )
            .nest("action", &a)
        }
        Refusal::Role {
            role,
            family,
            action: a,
            rule: why,
        } => {
            let (name, a, why) = (role_name(role, family), action(a), rule(why));
            text!(
                "roles.cannot",
                "The {{role}} cannot {{action}}: {{why}}",
                role = &name.text,
                action = &a.text,
                why = &why.text
            )
            .nest("role", &name)
            .nest("action", &a)
            .nest("why", &why)
        }
    }
}

/// A new PIN refused for its length ([`hsm::roles::check_pin_length`]).
pub fn pin_length(r: &PinLengthRefusal) -> Text {
    match *r {
        PinLengthRefusal::Empty => text!("errors.new_pin_empty", "The new PIN is empty."),
        PinLengthRefusal::TooShort { len, min } => text!(
            "errors.new_pin_too_short",
            "The new PIN is {{len}} characters long; this token needs at least {{min}}.",
            len = len,
            min = min
        ),
        PinLengthRefusal::TooLong { len, max } => text!(
            "errors.new_pin_too_long",
            "The new PIN is {{len}} characters long; this token accepts at most {{max}}.",
            len = len,
            max = max
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::i18n::Lang;
    use hsm::roles::check;

    /// Every refusal the checks can give has the same English as the rule's own words, and
    /// reads without English words in both Chinese catalogs.
    #[test]
    fn every_refusal_in_every_language() {
        for family in [Family::Luna, Family::SoftHsm] {
            let roles = [None]
                .into_iter()
                .chain(Role::offered(family).into_iter().map(Some));
            for role in roles {
                for a in Action::ALL {
                    let Err(r) = check(role, a, family) else {
                        continue;
                    };
                    let t = refusal(&r);
                    assert_eq!(t.text, r.to_string());
                    for lang in [Lang::ZhHant, Lang::ZhHans] {
                        let s = t.in_lang(lang);
                        // Only names stay in Latin letters: PIN, SO, Luna.
                        let rest = ["PIN", "SO", "Luna"]
                            .iter()
                            .fold(s.clone(), |s, name| s.replace(name, ""));
                        assert!(
                            !rest.chars().any(|c| c.is_ascii_alphabetic()),
                            "{lang:?}: {s} (from {})",
                            t.text
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn pin_lengths_in_words() {
        for (len, min, max) in [(0, 4, 8), (3, 4, 8), (9, 4, 8)] {
            let r = hsm::roles::check_pin_length(len, min, max).unwrap_err();
            let t = pin_length(&r);
            assert_eq!(t.text, r.to_string());
            assert_ne!(t.in_lang(Lang::ZhHant), t.text);
        }
    }
}
