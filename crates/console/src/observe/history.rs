//! Key histories: the trail's records of each key, as the HSS and usage views read them.
//!
//! A record names a key by the token it was made on and the key's `CKA_ID`, both exactly:
//! its metadata's `partition` (`<module>:<token serial>`; the serial, not the module's path,
//! so a module loaded from another path keeps its history; for a token without a serial, the
//! whole partition, since such a token is named by its slot number) and the id of the key it
//! is about (`key_id`, `id` or `key.id`), or of a key listed beside it (a batch's other
//! signers, `also[].key.id`). Matching the id as text inside the metadata would credit a key
//! with `CKA_ID` `01` with every record holding `01` anywhere (a digest, another key's id),
//! and a key of the same id on another token with this one's signatures: its burn rate
//! wrong, and its HSS check hiding signatures made outside the console or inventing them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use hsm::keys::ObjectSummary;
use serde_json::Value;

use crate::core::error::ApiResult;
use crate::core::partitions::{token_name, Partition};
use crate::observe::Observe;

/// A key as the trail names it: its token ([`token_name`]: the serial, or the partition ID of
/// a token without one) and its `CKA_ID` in hex.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct KeyName {
    pub token: String,
    pub id_hex: String,
}

impl KeyName {
    /// The name of `key` on the token named `token`; none for a key without an ID, since no
    /// record can be told to be its.
    pub(crate) fn of(token: &str, key: &ObjectSummary) -> Option<KeyName> {
        (!key.id_hex.is_empty()).then(|| KeyName {
            token: token.to_string(),
            id_hex: key.id_hex.clone(),
        })
    }
}

/// The names of the keys in `listed` (by partition; `key` finds each entry's key). Collected,
/// not lazy: an iterator's closures would live in the caller's future across its await, and
/// the compiler cannot then prove that future `Send`.
pub(crate) fn names<T>(
    listed: &[(Arc<Partition>, Vec<T>)],
    key: impl Fn(&T) -> &ObjectSummary,
) -> Vec<KeyName> {
    listed
        .iter()
        .flat_map(|(p, keys)| {
            keys.iter()
                .filter_map(|k| KeyName::of(p.token_name(), key(k)))
        })
        .collect()
}

/// A trail record as one key's history reads it.
#[derive(Debug, Clone)]
pub(crate) struct KeyRecord {
    pub record: audit::Record,
    /// The record's metadata, parsed once, when the key is what the record is about: the
    /// signatures or uses it counts are then the key's. `None` for a key listed beside it
    /// (another signer of a batch), which spent none by it.
    subject: Option<Value>,
    /// The key's count of one-time signatures when the record was written, as the record
    /// gives it for this key (`hss_remaining`, the subject's or its own entry's).
    pub hss_remaining: Option<u64>,
}

impl KeyRecord {
    /// Is the key what the record is about (not only listed beside it)?
    pub(crate) fn is_subject(&self) -> bool {
        self.subject.is_some()
    }

    /// Is the record the key's successful generation, where its history starts?
    pub(crate) fn is_generation(&self) -> bool {
        let e = &self.record.event;
        self.is_subject() && e.action == "key.generate" && e.status == "success"
    }

    /// A number the record gives of the key it is about (`signatures`, `from`, `used`);
    /// none for a key only listed beside it.
    pub(crate) fn subject_u64(&self, field: &str) -> Option<u64> {
        self.subject.as_ref()?.get(field)?.as_u64()
    }
}

/// The trail's records of some keys, each key's oldest first.
#[derive(Debug, Default)]
pub(crate) struct KeyHistories {
    by_key: HashMap<KeyName, Vec<KeyRecord>>,
}

impl KeyHistories {
    /// The records of the key `id_hex` on the token named `token` (none for a key without an ID).
    pub(crate) fn of(&self, token: &str, id_hex: &str) -> &[KeyRecord] {
        let name = KeyName {
            token: token.to_string(),
            id_hex: id_hex.to_string(),
        };
        self.by_key.get(&name).map_or(&[], Vec::as_slice)
    }

    /// Add the records of `named` to the histories of the keys they name.
    fn add(&mut self, named: Vec<(KeyName, KeyRecord)>) {
        for (name, kr) in named {
            self.by_key.entry(name).or_default().push(kr);
        }
    }
}

/// The keys of `wanted` a record names (see the module's comment), each with what the
/// record says of it. A record without a partition (none is written so today) names the key
/// of that id on every token. The metadata is parsed once, here.
fn named_by(r: audit::Record, wanted: &HashSet<KeyName>) -> Vec<(KeyName, KeyRecord)> {
    let Ok(m) = serde_json::from_str::<Value>(&r.event.metadata) else {
        return Vec::new();
    };
    let token = m["partition"].as_str().map(token_name);
    fn id_of(v: &Value) -> Option<&str> {
        v["key_id"]
            .as_str()
            .or_else(|| v["id"].as_str())
            .or_else(|| v["key"]["id"].as_str())
    }
    let subject = id_of(&m).map(|id| (id, true, m["hss_remaining"].as_u64()));
    let beside = m["also"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| id_of(e).map(|id| (id, false, e["hss_remaining"].as_u64())));
    let mut names = Vec::new();
    for (id_hex, is_subject, hss_remaining) in subject.into_iter().chain(beside) {
        if id_hex.is_empty() {
            continue;
        }
        match token {
            Some(token) => {
                let name = KeyName {
                    token: token.to_string(),
                    id_hex: id_hex.to_string(),
                };
                if wanted.contains(&name) {
                    names.push((name, is_subject, hss_remaining));
                }
            }
            None => names.extend(
                wanted
                    .iter()
                    .filter(|w| w.id_hex == id_hex)
                    .map(|w| (w.clone(), is_subject, hss_remaining)),
            ),
        }
    }
    // The record itself is moved into the last of its keys' histories, copied for the others.
    let mut record = Some(r);
    let last = names.len().saturating_sub(1);
    names
        .into_iter()
        .enumerate()
        .map(|(i, (name, is_subject, hss_remaining))| {
            let kr = KeyRecord {
                record: if i == last {
                    record.take().expect("moved once, into the last")
                } else {
                    record.clone().expect("not yet moved")
                },
                subject: is_subject.then(|| m.clone()),
                hss_remaining,
            };
            (name, kr)
        })
        .collect()
}

impl Observe<'_> {
    /// The trail's records of `keys`, however many: the whole trail is read, page by page,
    /// keeping only these.
    pub(crate) async fn key_histories(self, keys: Vec<KeyName>) -> ApiResult<KeyHistories> {
        let wanted: HashSet<KeyName> = keys.into_iter().collect();
        let mut histories = KeyHistories::default();
        if wanted.is_empty() {
            return Ok(histories);
        }
        // Only a record whose metadata holds one of the ids as text can name its key: the
        // others are passed over without being parsed.
        let ids: HashSet<&str> = wanted.iter().map(|k| k.id_hex.as_str()).collect();
        let pick = |r: audit::Record| {
            ids.iter()
                .any(|id| r.event.metadata.contains(id))
                .then(|| named_by(r, &wanted))
                .filter(|named| !named.is_empty())
        };
        let named = self
            .audit()
            .all_records(&audit::store::Query::default(), pick)
            .await?;
        for n in named {
            histories.add(n);
        }
        Ok(histories)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A record of `action`, `days_old` days ago, with `meta` as its metadata.
    pub(crate) fn rec(seq: i64, action: &str, days_old: i64, meta: Value) -> audit::Record {
        audit::Record {
            log_id: "t".into(),
            seq,
            epoch: 0,
            event: audit::Prepared {
                timestamp: crate::observe::health::days_ago(days_old),
                session_id: "s".into(),
                actor_id: None,
                actor_ip: "127.0.0.1".into(),
                action: action.into(),
                resource_type: "artifact".into(),
                resource_id: None,
                algorithm: None,
                status: "success".into(),
                error_code: None,
                metadata: meta.to_string(),
            },
            hmac_chain: String::new(),
            created_at: String::new(),
        }
    }

    /// `records` sorted into the histories of `keys`, as the trail reader sorts them.
    pub(crate) fn histories(keys: &[(&str, &str)], records: &[audit::Record]) -> KeyHistories {
        let wanted: HashSet<KeyName> = keys
            .iter()
            .map(|(token, id)| KeyName {
                token: token.to_string(),
                id_hex: id.to_string(),
            })
            .collect();
        let mut h = KeyHistories::default();
        for r in records {
            h.add(named_by(r.clone(), &wanted));
        }
        h
    }

    fn seqs(h: &KeyHistories, token: &str, id: &str) -> Vec<(i64, bool, Option<u64>)> {
        h.of(token, id)
            .iter()
            .map(|k| (k.record.seq, k.is_subject(), k.hss_remaining))
            .collect()
    }

    #[test]
    fn a_record_names_a_key_by_its_token_and_whole_id() {
        let records = vec![
            rec(
                1,
                "key.generate",
                3,
                serde_json::json!({ "partition": "m-1:AA", "id": "01" }),
            ),
            // Another key whose id begins with this one's, and a digest holding it.
            rec(
                2,
                "sign",
                2,
                serde_json::json!({ "partition": "m-1:AA", "key_id": "0102", "sha256": "0101" }),
            ),
            // The same id on another token.
            rec(
                3,
                "sign",
                2,
                serde_json::json!({ "partition": "m-1:BB", "key_id": "01" }),
            ),
            // The module loaded from another path: the same token.
            rec(
                4,
                "sign",
                1,
                serde_json::json!({ "partition": "m-2:AA", "key_id": "01" }),
            ),
            rec(
                5,
                "sign.batch",
                1,
                serde_json::json!({ "partition": "m-2:AA", "key": { "id": "01" }, "hss_remaining": 7 }),
            ),
            // Written without a partition: the id alone says.
            rec(6, "sign", 1, serde_json::json!({ "key_id": "01" })),
        ];
        let h = histories(&[("AA", "01"), ("BB", "01"), ("AA", "")], &records);
        assert_eq!(
            seqs(&h, "AA", "01"),
            vec![
                (1, true, None),
                (4, true, None),
                (5, true, Some(7)),
                (6, true, None)
            ]
        );
        assert_eq!(seqs(&h, "BB", "01"), vec![(3, true, None), (6, true, None)]);
        // A key without an ID is named by none.
        assert!(h.of("AA", "").is_empty());
        assert!(KeyName::of(
            "AA",
            &ObjectSummary {
                id_hex: String::new(),
                ..Default::default()
            }
        )
        .is_none());
    }

    #[test]
    fn tokens_without_a_serial_are_told_apart_by_their_module() {
        // Two modules' first slots, neither token with a serial: both named `slot0`.
        let records = vec![
            rec(
                1,
                "sign",
                1,
                serde_json::json!({ "partition": "m-1:slot0", "key_id": "01" }),
            ),
            rec(
                2,
                "sign",
                1,
                serde_json::json!({ "partition": "m-2:slot0", "key_id": "01" }),
            ),
        ];
        let (one, two) = (token_name("m-1:slot0"), token_name("m-2:slot0"));
        assert_ne!(one, two);
        let h = histories(&[(one, "01"), (two, "01")], &records);
        assert_eq!(seqs(&h, one, "01"), vec![(1, true, None)]);
        assert_eq!(seqs(&h, two, "01"), vec![(2, true, None)]);
    }

    #[test]
    fn a_signer_beside_a_batchs_key_has_its_own_count_and_spends_none_of_the_records() {
        let batch = rec(
            1,
            "sign.batch",
            1,
            serde_json::json!({
                "partition": "m-1:AA",
                "key": { "id": "0a" },
                "hss_remaining": 100,
                "signatures": 3,
                "also": [{ "key": { "id": "0b" }, "hss_remaining": 40 }],
            }),
        );
        let h = histories(&[("AA", "0a"), ("AA", "0b")], &[batch]);
        assert_eq!(seqs(&h, "AA", "0a"), vec![(1, true, Some(100))]);
        assert_eq!(seqs(&h, "AA", "0b"), vec![(1, false, Some(40))]);
        assert_eq!(h.of("AA", "0a")[0].subject_u64("signatures"), Some(3));
        assert_eq!(h.of("AA", "0b")[0].subject_u64("signatures"), None);
    }
}
