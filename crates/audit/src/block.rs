//! Sealed blocks: a trail's older records packed many to a row.
//!
//! Reading a record row costs the store more than the HMAC the verifier does over it
//! (PostgreSQL's server spent 1.3–1.6 µs per 16-column row, the HMAC 0.4 µs). So once a
//! trail has grown a whole block past it, a block of records (`AuditConfig::block_size`,
//! 1,024 by default) moves into one `audit_block` row, and its rows in `audit_log` are
//! emptied to stubs that keep only `(log_id, seq)`: the primary key still refuses a second
//! record at a sealed position, which is what keeps concurrent writers on one chain.
//!
//! The block's body is the records themselves, each as the bytes the chain MACs: a 4-byte
//! big-endian length and the canonical encoding (`encode`), then a 4-byte length and the
//! stored chain value (hex), exactly as the row held it. So a sealed record is the same
//! record: verifying it reads its encoding and MACs it, with no re-encoding, and shows the
//! officer what the verifier checked. Positions up to the last block's `last_seq` are read
//! from blocks only, everywhere (browse, export, verify); the stubs are never read.

use crate::encode::{self, Fields};
use crate::Record;

/// One record of a body, borrowed from it.
pub struct Entry<'a> {
    /// The canonical encoding, as MACed.
    pub encoded: &'a [u8],
    pub fields: Fields<'a>,
    /// The stored chain value (hex, as the row held it).
    pub hmac_chain: &'a [u8],
}

/// Add a record to a body.
pub fn push(body: &mut Vec<u8>, encoded: &[u8], hmac_chain: &[u8]) {
    body.extend_from_slice(&(encoded.len() as u32).to_be_bytes());
    body.extend_from_slice(encoded);
    body.extend_from_slice(&(hmac_chain.len() as u32).to_be_bytes());
    body.extend_from_slice(hmac_chain);
}

/// A body's records in order. An entry that does not parse (its lengths run past the body,
/// or its encoding does not decode) yields `Err(())` once and ends the iteration: nothing
/// after it can be located.
pub fn entries(body: &[u8]) -> Entries<'_> {
    Entries { rest: body }
}

pub struct Entries<'a> {
    rest: &'a [u8],
}

impl<'a> Entries<'a> {
    fn piece(&mut self) -> Option<&'a [u8]> {
        let len = u32::from_be_bytes(self.rest.get(..4)?.try_into().ok()?) as usize;
        let piece = self.rest.get(4..4 + len)?;
        self.rest = &self.rest[4 + len..];
        Some(piece)
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Entry<'a>, ()>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let entry = (|| {
            let encoded = self.piece()?;
            let hmac_chain = self.piece()?;
            let fields = encode::decode_fields(encoded)?;
            Some(Entry {
                encoded,
                fields,
                hmac_chain,
            })
        })();
        match entry {
            Some(e) => Some(Ok(e)),
            None => {
                self.rest = &[];
                Some(Err(()))
            }
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl Entry<'_> {
    /// The record as the store's other reads return it. Text that is not UTF-8 (only
    /// possible in a damaged block, which verification names) is shown with replacement
    /// characters.
    pub fn record(&self) -> Record {
        let f = &self.fields;
        let opt = |b: Option<&[u8]>| b.map(text);
        Record {
            log_id: text(f.log_id),
            seq: f.seq,
            epoch: f.epoch,
            event: crate::Prepared {
                timestamp: text(f.timestamp),
                session_id: text(f.session_id),
                actor_id: opt(f.actor_id),
                actor_ip: text(f.actor_ip),
                action: text(f.action),
                resource_type: text(f.resource_type),
                resource_id: opt(f.resource_id),
                algorithm: opt(f.algorithm),
                status: text(f.status),
                error_code: opt(f.error_code),
                metadata: text(f.metadata),
            },
            hmac_chain: text(self.hmac_chain),
            created_at: text(f.created_at),
        }
    }
}

/// The records of a body that parse, in order (reads stop at a damaged entry).
pub fn records(body: &[u8]) -> impl Iterator<Item = Record> + '_ {
    entries(body).map_while(Result::ok).map(|e| e.record())
}

/// The body holding `records`, in their order.
pub fn body_of(records: &[Record]) -> Vec<u8> {
    let mut body = Vec::with_capacity(records.len() * 400);
    let mut enc = Vec::with_capacity(512);
    for r in records {
        enc.clear();
        encode::encode_into(r, &mut enc);
        push(&mut body, &enc, r.hmac_chain.as_bytes());
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::ChainKey;

    fn sample(n: i64) -> Vec<Record> {
        let key = ChainKey::new(&[3u8; 32]);
        let mut prev = encode::GENESIS;
        (1..=n)
            .map(|seq| {
                let r = crate::testing::sample_record("log_a", seq, 0, &key, &prev);
                prev = encode::hex32(&r.hmac_chain).unwrap();
                r
            })
            .collect()
    }

    #[test]
    fn a_body_gives_back_its_records_and_their_encodings() {
        let recs = sample(5);
        let body = body_of(&recs);
        let back: Vec<Record> = records(&body).collect();
        assert_eq!(back, recs);
        for (e, r) in entries(&body).zip(&recs) {
            assert_eq!(e.unwrap().encoded, encode::encode(r));
        }
        assert_eq!(entries(&[]).count(), 0);
    }

    #[test]
    fn a_damaged_entry_ends_the_body() {
        let recs = sample(3);
        let body = body_of(&recs);
        let first = 4 + encode::encode(&recs[0]).len() + 4 + 64;
        // The second record's length runs past the body.
        let mut cut = body.clone();
        cut[first..first + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        let got: Vec<bool> = entries(&cut).map(|e| e.is_ok()).collect();
        assert_eq!(got, [true, false]);
        // The second record's domain tag is altered: its encoding does not decode.
        let mut tag = body.clone();
        tag[first + 4 + 4] ^= 0x20;
        assert_eq!(records(&tag).count(), 1);
        // A body cut inside its last record.
        assert_eq!(
            entries(&body[..body.len() - 1])
                .map(|e| e.is_ok())
                .collect::<Vec<_>>(),
            [true, true, false]
        );
    }
}
