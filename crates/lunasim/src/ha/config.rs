//! What `[[ha_group]]` in `LUNASIM_CONF` means (the tables themselves are read with the
//! rest of the file, [`crate::config::GroupConfig`]): a group's virtual slot and stores,
//! and the checks that refuse a group lunasim cannot start (one member, duplicate member
//! serials, a member whose inner token is missing). A refused group does not stop the
//! module: its virtual slot shows no token and says why, and the other slots work.

use std::path::{Path, PathBuf};

use crate::config::{GroupConfig, MemberConfig};

/// The first virtual slot's ID when a group names none (the next group gets the next ID).
pub const FIRST_VIRTUAL_SLOT: u64 = 100;

/// What the inner module says about a slot, for the checks.
pub trait InnerSlots {
    /// `None`: no such slot; `Some(false)`: a slot without an initialized token.
    fn token_initialized(&self, slot: u64) -> Option<bool>;
}

/// Serials are numeric and fit `CK_TOKEN_INFO.serialNumber` (16 characters).
fn numeric_serial(s: &str) -> bool {
    !s.is_empty() && s.len() <= 16 && s.bytes().all(|b| b.is_ascii_digit())
}

/// Why a group is refused: a few words for its slot's description (64 characters), and
/// the full message for lunasim's standard error and the `ha_state` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub short: String,
    pub message: String,
}

impl GroupConfig {
    /// The virtual slot's ID for the group at `index`.
    pub fn virtual_slot(&self, index: usize) -> u64 {
        self.slot.unwrap_or(FIRST_VIRTUAL_SLOT + index as u64)
    }

    pub fn group_store(&self, store: &Path) -> PathBuf {
        self.store_dir
            .clone()
            .unwrap_or_else(|| store.join("ha").join(&self.serial))
    }

    pub fn member_store(&self, store: &Path, m: &MemberConfig) -> PathBuf {
        m.store_dir
            .clone()
            .unwrap_or_else(|| self.group_store(store).join(format!("member-{}", m.serial)))
    }

    /// Why lunasim refuses to start this group, naming it; `None` when it can start.
    /// `taken` holds the slot IDs already in use (inner slots and earlier virtual slots).
    pub fn refusal(&self, index: usize, inner: &dyn InnerSlots, taken: &[u64]) -> Option<Refusal> {
        let message = self.refusal_message(index, inner, taken)?;
        let why = message.split_once(": ").map(|(_, w)| w).unwrap_or(&message);
        let mut short = why.split(';').next().unwrap_or(why).to_string();
        // "member 2 (serial 1280000102): …" → "member 2: …"
        while let Some(at) = short.find(" (serial ") {
            let end = short[at..]
                .find(')')
                .map(|e| at + e + 1)
                .unwrap_or(short.len());
            short.replace_range(at..end, "");
        }
        Some(Refusal { short, message })
    }

    fn refusal_message(
        &self,
        index: usize,
        inner: &dyn InnerSlots,
        taken: &[u64],
    ) -> Option<String> {
        let name = format!("HA group '{}' (serial {})", self.label, self.serial);
        if !numeric_serial(&self.serial) {
            return Some(format!("{name}: group serial not 1 to 16 digits"));
        }
        if self.members.len() < 2 {
            return Some(format!(
                "{name}: {} member{}; an HA group needs at least two",
                self.members.len(),
                if self.members.len() == 1 { "" } else { "s" }
            ));
        }
        if self.members.len() > 32 {
            return Some(format!(
                "{name}: {} members; Luna's HA state holds at most 32",
                self.members.len()
            ));
        }
        let slot = self.virtual_slot(index);
        if taken.contains(&slot) {
            return Some(format!(
                "{name}: virtual slot {slot} taken; set `slot` to a free ID"
            ));
        }
        for (i, m) in self.members.iter().enumerate() {
            if !numeric_serial(&m.serial) {
                return Some(format!(
                    "{name}: member {} serial '{}' not 1 to 16 digits",
                    i + 1,
                    m.serial
                ));
            }
            if self.members[..i].iter().any(|o| o.serial == m.serial) {
                return Some(format!(
                    "{name}: member serial {} appears twice; each member is a partition of its own",
                    m.serial
                ));
            }
            if self.members[..i].iter().any(|o| o.slot == m.slot) {
                return Some(format!(
                    "{name}: members {} and {} share inner slot {}; each member needs its own token",
                    self.members[..i].iter().position(|o| o.slot == m.slot).unwrap_or(0) + 1,
                    i + 1,
                    m.slot
                ));
            }
            match inner.token_initialized(m.slot) {
                None => {
                    return Some(format!(
                        "{name}: member {} (serial {}): no inner slot {}; the inner module does not have it",
                        i + 1,
                        m.serial,
                        m.slot
                    ))
                }
                Some(false) => {
                    return Some(format!(
                        "{name}: member {} (serial {}): token in inner slot {} missing; initialize it first",
                        i + 1,
                        m.serial,
                        m.slot
                    ))
                }
                Some(true) => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    struct Slots(Vec<(u64, bool)>);
    impl InnerSlots for Slots {
        fn token_initialized(&self, slot: u64) -> Option<bool> {
            self.0.iter().find(|(s, _)| *s == slot).map(|(_, i)| *i)
        }
    }

    fn group(text: &str) -> GroupConfig {
        #[derive(Deserialize)]
        struct F {
            ha_group: Vec<GroupConfig>,
        }
        toml::from_str::<F>(text).unwrap().ha_group.remove(0)
    }

    const TWO: &str = r#"
        [[ha_group]]
        label = "prod"
        serial = "1280000100"
        [[ha_group.member]]
        serial = "1280000101"
        slot = 1
        [[ha_group.member]]
        serial = "1280000102"
        slot = 2
    "#;

    #[test]
    fn a_good_group_starts() {
        let g = group(TWO);
        let inner = Slots(vec![(1, true), (2, true)]);
        assert_eq!(g.refusal(0, &inner, &[1, 2]), None);
        assert_eq!(g.virtual_slot(0), 100);
        assert_eq!(g.virtual_slot(3), 103);
        assert!(!g.ha_only && !g.auto_resync);
        assert_eq!(
            g.member_store(Path::new("/s"), &g.members[1]),
            Path::new("/s/ha/1280000100/member-1280000102")
        );
    }

    #[test]
    fn bad_groups_are_refused_by_name() {
        let inner = Slots(vec![(1, true), (2, true), (3, false)]);
        let one = group(&TWO.replace(
            "[[ha_group.member]]\n        serial = \"1280000102\"\n        slot = 2",
            "",
        ));
        let why = one.refusal(0, &inner, &[]).unwrap();
        assert!(
            why.message.contains("'prod'") && why.message.contains("1 member;"),
            "{why:?}"
        );
        assert_eq!(why.short, "1 member");

        let dup = group(&TWO.replace("1280000102", "1280000101"));
        let why = dup.refusal(0, &inner, &[]).unwrap().message;
        assert!(
            why.contains("'prod'") && why.contains("appears twice"),
            "{why}"
        );

        let missing = group(&TWO.replace("slot = 2", "slot = 3"));
        let why = missing.refusal(0, &inner, &[]).unwrap();
        assert!(
            why.message.contains("'prod'") && why.message.contains("missing"),
            "{why:?}"
        );
        assert_eq!(why.short, "member 2: token in inner slot 3 missing");

        let absent = group(&TWO.replace("slot = 2", "slot = 9"));
        let why = absent.refusal(0, &inner, &[]).unwrap().message;
        assert!(why.contains("does not have"), "{why}");

        let same_slot = group(&TWO.replace("slot = 2", "slot = 1"));
        assert!(same_slot
            .refusal(0, &inner, &[])
            .unwrap()
            .message
            .contains("share inner slot"));

        let taken = group(TWO);
        assert!(taken
            .refusal(0, &inner, &[100])
            .unwrap()
            .short
            .contains("taken"));

        let text = group(&TWO.replace("\"1280000100\"", "\"prod-1\""));
        assert!(text
            .refusal(0, &inner, &[])
            .unwrap()
            .message
            .contains("digits"));
    }
}
