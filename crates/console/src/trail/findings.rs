//! The audit verifier's findings in the officer's language. `audit::verify::Finding::explain`
//! writes the English (what `hsmc audit verify` and the records show); [`finding_text`] is
//! the same sentence as a [`Text`] with a catalog key (`audit.findings.<kind>`) whose
//! arguments are the finding's own fields, so the UI (from the serialized finding) and
//! `hsmc --lang` translate it. A test holds the two to the same English.

use audit::verify::Finding;

#[cfg(test)]
use crate::core::i18n::InLang;
use crate::core::i18n::Text;
use crate::text;

/// A finding as a catalog message; its English text is `f.explain()`.
pub fn finding_text(f: &Finding) -> Text {
    match f {
        Finding::Modified { seq } => text!(
            "audit.findings.modified",
            "Record {{seq}} was changed after it was written: its content no longer matches its seal.",
            seq = seq
        ),
        Finding::Missing { seq } => text!(
            "audit.findings.missing",
            "Record {{seq}} is missing: it was deleted from the trail.",
            seq = seq
        ),
        Finding::Inserted { seq } => text!(
            "audit.findings.inserted",
            "Record {{seq}} was inserted into the trail afterwards; the console never wrote it there.",
            seq = seq
        ),
        Finding::Reordered { seq, belongs_at } => text!(
            "audit.findings.reordered",
            "Record {{seq}} is out of place: it was written as record {{belongs_at}}.",
            seq = seq,
            belongs_at = belongs_at
        ),
        Finding::Grafted { seq, foreign_log } => text!(
            "audit.findings.grafted",
            "A record numbered {{seq}} from another trail ({{foreign_log}}) was copied into this one.",
            seq = seq,
            foreign_log = foreign_log
        ),
        Finding::TruncatedTail { last_seq, checkpoint_seq } => text!(
            "audit.findings.truncated_tail",
            "The trail ends at record {{last_seq}}, but a signed checkpoint vouches for records up to {{checkpoint_seq}}: the newest records were removed.",
            last_seq = last_seq,
            checkpoint_seq = checkpoint_seq
        ),
        Finding::Rollback { store_seq, anchor_seq, anchor_checkpoint } => text!(
            "audit.findings.rollback",
            "The store was rolled back to an older copy: it ends at record {{store_seq}}, while checkpoint {{anchor_checkpoint}}, remembered outside the store, covers records up to {{anchor_seq}}.",
            store_seq = store_seq,
            anchor_seq = anchor_seq,
            anchor_checkpoint = anchor_checkpoint
        ),
        Finding::CheckpointSignatureInvalid { checkpoint_no, .. } => text!(
            "audit.findings.checkpoint_signature_invalid",
            "Checkpoint {{checkpoint_no}} has an invalid signature: it was forged or altered.",
            checkpoint_no = checkpoint_no
        ),
        Finding::CheckpointKeyReplaced { checkpoint_no, .. } => text!(
            "audit.findings.checkpoint_key_replaced",
            "Checkpoint {{checkpoint_no}} is signed with a public key other than the HSM's checkpoint key: the key in the store was replaced.",
            checkpoint_no = checkpoint_no
        ),
        Finding::CheckpointMismatch { checkpoint_no, seq } => text!(
            "audit.findings.checkpoint_mismatch",
            "Checkpoint {{checkpoint_no}} does not match record {{seq}} as stored: the records or the checkpoint were altered.",
            checkpoint_no = checkpoint_no,
            seq = seq
        ),
        Finding::ModifiedBetween {
            from_seq,
            to_seq,
            checkpoint_no,
        } => text!(
            "audit.findings.modified_between",
            "One or more of records {{from_seq}}–{{to_seq}} were changed after they were written: they no longer match what checkpoint {{checkpoint_no}} signed. Without the trail's key (it stays in the HSM) an export cannot tell which one.",
            from_seq = from_seq,
            to_seq = to_seq,
            checkpoint_no = checkpoint_no
        ),
        Finding::TornLastWrite { seq } => text!(
            "audit.findings.torn_last_write",
            "The last record ({{seq}}) is incomplete: the console was probably interrupted while writing it. This looks like a crash, not tampering; all records before it are intact.",
            seq = seq
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::i18n::Lang;

    /// One finding of every kind (the match in [`finding_text`] is exhaustive, so a new
    /// kind cannot be added without a text; add it here too).
    fn every_kind() -> Vec<Finding> {
        vec![
            Finding::Modified { seq: 7 },
            Finding::Missing { seq: 8 },
            Finding::Inserted { seq: 9 },
            Finding::Reordered {
                seq: 10,
                belongs_at: 12,
            },
            Finding::Grafted {
                seq: 11,
                foreign_log: "log-b".into(),
            },
            Finding::TruncatedTail {
                last_seq: 40,
                checkpoint_seq: 50,
            },
            Finding::Rollback {
                store_seq: 30,
                anchor_seq: 45,
                anchor_checkpoint: 4,
            },
            Finding::CheckpointSignatureInvalid {
                checkpoint_no: 2,
                seq: 20,
            },
            Finding::CheckpointKeyReplaced {
                checkpoint_no: 3,
                seq: 21,
            },
            Finding::CheckpointMismatch {
                checkpoint_no: 5,
                seq: 22,
            },
            Finding::ModifiedBetween {
                from_seq: 23,
                to_seq: 30,
                checkpoint_no: 6,
            },
            Finding::TornLastWrite { seq: 60 },
        ]
    }

    #[test]
    fn every_finding_reads_as_the_verifier_writes_it_and_in_each_language() {
        let kinds = every_kind();
        assert_eq!(kinds.len(), 12, "every Finding variant is listed");
        for f in kinds {
            let t = finding_text(&f);
            assert_eq!(t.text, f.explain(), "{}", f.kind());
            assert_eq!(t.key, format!("audit.findings.{}", f.kind()));
            // The UI translates from the serialized finding: its fields are the arguments.
            let fields = serde_json::to_value(&f).unwrap();
            for name in t.args.keys() {
                assert!(fields.get(name).is_some(), "{}: {name}", f.kind());
            }
            for lang in [Lang::ZhHant, Lang::ZhHans] {
                let s = t.in_lang(lang);
                assert_ne!(s, t.text, "{} in {}", f.kind(), lang.tag());
                assert!(!s.contains("{{"), "{s}");
                for v in t.args.values() {
                    assert!(
                        s.contains(v.as_str()),
                        "{} in {}: {v} in {s}",
                        f.kind(),
                        lang.tag()
                    );
                }
            }
        }
    }
}
