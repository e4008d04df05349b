//! The one canonical encoding of a record, and the chain functions over it.
//!
//! Every field except the chain value itself enters the MAC: a domain tag, then each field
//! as a 4-byte big-endian length and its bytes (absent optional fields as length
//! 0xFFFF_FFFF, so "absent" and "empty" differ), with `seq` and `epoch` (8 bytes each)
//! fixed-width. Ad-hoc JSON is never MACed: the metadata's stored text is, byte for byte.
//!
//! `hmac_i = HMAC-SHA256(k_epoch, encode(record_i) ‖ hmac_{i-1})`, `hmac_0 = 32 zero bytes`.
//! A public digest chain `d_i = SHA-256(encode(record_i) ‖ d_{i-1})` over the same bytes is
//! what checkpoints sign next to the HMAC head, so anyone holding only public material can
//! check the records up to the last checkpoint.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::Record;

pub const DOMAIN: &[u8] = b"hsm-console/audit/v1";
pub const GENESIS: [u8; 32] = [0u8; 32];
const ABSENT: u32 = 0xFFFF_FFFF;

fn field(out: &mut Vec<u8>, v: &[u8]) {
    out.extend_from_slice(&(v.len() as u32).to_be_bytes());
    out.extend_from_slice(v);
}

/// A record's fields as borrowed bytes, in column order (how the scanners read them
/// straight from the database's buffers, without an allocation per column).
pub struct Fields<'a> {
    pub log_id: &'a [u8],
    pub seq: i64,
    pub epoch: i64,
    pub timestamp: &'a [u8],
    pub session_id: &'a [u8],
    pub actor_id: Option<&'a [u8]>,
    pub actor_ip: &'a [u8],
    pub action: &'a [u8],
    pub resource_type: &'a [u8],
    pub resource_id: Option<&'a [u8]>,
    pub algorithm: Option<&'a [u8]>,
    pub status: &'a [u8],
    pub error_code: Option<&'a [u8]>,
    pub metadata: &'a [u8],
    pub created_at: &'a [u8],
}

fn opt_bytes(out: &mut Vec<u8>, v: Option<&[u8]>) {
    match v {
        Some(s) => field(out, s),
        None => out.extend_from_slice(&ABSENT.to_be_bytes()),
    }
}

/// The canonical encoding from borrowed fields.
pub fn encode_fields(f: &Fields<'_>, out: &mut Vec<u8>) {
    field(out, DOMAIN);
    field(out, f.log_id);
    out.extend_from_slice(&f.seq.to_be_bytes());
    out.extend_from_slice(&f.epoch.to_be_bytes());
    field(out, f.timestamp);
    field(out, f.session_id);
    opt_bytes(out, f.actor_id);
    field(out, f.actor_ip);
    field(out, f.action);
    field(out, f.resource_type);
    opt_bytes(out, f.resource_id);
    opt_bytes(out, f.algorithm);
    field(out, f.status);
    opt_bytes(out, f.error_code);
    field(out, f.metadata);
    field(out, f.created_at);
}

/// Append the canonical encoding of `r` (without its chain value) to `out`.
pub fn encode_into(r: &Record, out: &mut Vec<u8>) {
    let e = &r.event;
    encode_fields(
        &Fields {
            log_id: r.log_id.as_bytes(),
            seq: r.seq,
            epoch: r.epoch,
            timestamp: e.timestamp.as_bytes(),
            session_id: e.session_id.as_bytes(),
            actor_id: e.actor_id.as_deref().map(str::as_bytes),
            actor_ip: e.actor_ip.as_bytes(),
            action: e.action.as_bytes(),
            resource_type: e.resource_type.as_bytes(),
            resource_id: e.resource_id.as_deref().map(str::as_bytes),
            algorithm: e.algorithm.as_deref().map(str::as_bytes),
            status: e.status.as_bytes(),
            error_code: e.error_code.as_deref().map(str::as_bytes),
            metadata: e.metadata.as_bytes(),
            created_at: r.created_at.as_bytes(),
        },
        out,
    );
}

/// The fields of a canonical encoding, borrowed from it: the inverse of [`encode_fields`].
/// Strict, so that `encode_fields(decode_fields(e)) == e` for every `e` it accepts: the
/// domain tag, every length within the bytes, and nothing after the last field. `None` for
/// anything else (a damaged sealed block).
pub fn decode_fields(enc: &[u8]) -> Option<Fields<'_>> {
    let mut r = Reader(enc);
    if r.field()? != DOMAIN {
        return None;
    }
    let f = Fields {
        log_id: r.field()?,
        seq: r.int()?,
        epoch: r.int()?,
        timestamp: r.field()?,
        session_id: r.field()?,
        actor_id: r.opt()?,
        actor_ip: r.field()?,
        action: r.field()?,
        resource_type: r.field()?,
        resource_id: r.opt()?,
        algorithm: r.opt()?,
        status: r.field()?,
        error_code: r.opt()?,
        metadata: r.field()?,
        created_at: r.field()?,
    };
    r.0.is_empty().then_some(f)
}

/// Reads an encoding front to back.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn len(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn opt(&mut self) -> Option<Option<&'a [u8]>> {
        match self.len()? {
            ABSENT => Some(None),
            n => self.take(n as usize).map(Some),
        }
    }

    fn field(&mut self) -> Option<&'a [u8]> {
        self.opt()?
    }

    fn int(&mut self) -> Option<i64> {
        Some(i64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }
}

pub fn encode(r: &Record) -> Vec<u8> {
    let mut v = Vec::with_capacity(256 + r.event.metadata.len());
    encode_into(r, &mut v);
    v
}

/// A keyed MAC context; clone it per record (cheaper than re-keying).
#[derive(Clone)]
pub struct ChainKey(Hmac<Sha256>);

impl ChainKey {
    pub fn new(key: &[u8]) -> Self {
        ChainKey(<Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length"))
    }

    /// `HMAC(k, encoded ‖ prev)`.
    pub fn link(&self, encoded: &[u8], prev: &[u8; 32]) -> [u8; 32] {
        let mut m = self.0.clone();
        m.update(encoded);
        m.update(prev);
        m.finalize().into_bytes().into()
    }
}

/// `SHA-256(encoded ‖ prev)`: the public digest chain.
pub fn digest_link(encoded: &[u8], prev: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(encoded);
    h.update(prev);
    h.finalize().into()
}

pub fn hex32(s: &str) -> Option<[u8; 32]> {
    let v = hex::decode(s).ok()?;
    v.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Prepared;

    fn rec() -> Record {
        Record {
            log_id: "L".into(),
            seq: 1,
            epoch: 0,
            event: Prepared {
                timestamp: "2026-11-30T15:00:00.000Z".into(),
                session_id: "s".into(),
                actor_id: None,
                actor_ip: "127.0.0.1".into(),
                action: "key.generate".into(),
                resource_type: "private_key".into(),
                resource_id: Some("k".into()),
                algorithm: Some("ML-DSA-65".into()),
                status: "success".into(),
                error_code: None,
                metadata: "{}".into(),
            },
            hmac_chain: String::new(),
            created_at: "2026-11-30T15:00:00.001Z".into(),
        }
    }

    #[test]
    fn absent_and_empty_differ() {
        let a = rec();
        let mut b = rec();
        b.event.actor_id = Some(String::new());
        assert_ne!(encode(&a), encode(&b));
    }

    #[test]
    fn field_boundaries_are_unambiguous() {
        // Moving a character from one field to the next must change the encoding.
        let mut a = rec();
        a.event.action = "key.gen".into();
        a.event.resource_type = "erateprivate_key".into();
        assert_ne!(encode(&a), encode(&rec()));
    }

    #[test]
    fn every_field_is_covered() {
        let base = encode(&rec());
        type Mutation = Box<dyn Fn(&mut Record)>;
        let mutations: Vec<Mutation> = vec![
            Box::new(|r| r.log_id.push('x')),
            Box::new(|r| r.seq += 1),
            Box::new(|r| r.epoch += 1),
            Box::new(|r| r.event.timestamp.push('x')),
            Box::new(|r| r.event.session_id.push('x')),
            Box::new(|r| r.event.actor_id = Some("a".into())),
            Box::new(|r| r.event.actor_ip.push('x')),
            Box::new(|r| r.event.action.push('x')),
            Box::new(|r| r.event.resource_type.push('x')),
            Box::new(|r| r.event.resource_id = None),
            Box::new(|r| r.event.algorithm = None),
            Box::new(|r| r.event.status.push('x')),
            Box::new(|r| r.event.error_code = Some("E".into())),
            Box::new(|r| r.event.metadata.push(' ')),
            Box::new(|r| r.created_at.push('x')),
        ];
        for (i, m) in mutations.iter().enumerate() {
            let mut r = rec();
            m(&mut r);
            assert_ne!(encode(&r), base, "field {i} is not covered");
        }
        // The chain value itself is not part of the encoding.
        let mut r = rec();
        r.hmac_chain = "ff".into();
        assert_eq!(encode(&r), base);
    }

    /// The encoding of a known record, byte for byte, with its MAC and digest links: stored
    /// trails verify only as long as these never change.
    #[test]
    fn known_record_encodes_as_pinned() {
        let pinned = [
            "0000001468736d2d636f6e736f6c652f61756469742f7631", // domain tag
            "000000014c",                                       // log_id "L"
            "0000000000000001",                                 // seq 1
            "0000000000000000",                                 // epoch 0
            "00000018323032362d31312d33305431353a30303a30302e3030305a", // timestamp
            "0000000173",                                       // session_id "s"
            "ffffffff",                                         // actor_id absent
            "000000093132372e302e302e31",                       // actor_ip
            "0000000c6b65792e67656e6572617465",                 // action
            "0000000b707269766174655f6b6579",                   // resource_type
            "000000016b",                                       // resource_id "k"
            "000000094d4c2d4453412d3635",                       // algorithm
            "0000000773756363657373",                           // status
            "ffffffff",                                         // error_code absent
            "000000027b7d",                                     // metadata "{}"
            "00000018323032362d31312d33305431353a30303a30302e3030315a", // created_at
        ]
        .concat();
        let e = encode(&rec());
        assert_eq!(hex::encode(&e), pinned);
        assert_eq!(
            hex::encode(ChainKey::new(&[7u8; 32]).link(&e, &GENESIS)),
            "5ab31f123fde35b7e9a5fd1046627f2b6e2823f8c3ccf0eef72efd09eaea1d69"
        );
        assert_eq!(
            hex::encode(digest_link(&e, &GENESIS)),
            "946892783ccb7f0a04e6b4477ee8f6a89b0c1fd18b3b3cd3511d467b2452a17c"
        );
    }

    /// Every encoding decodes to fields that encode to it again; anything cut short,
    /// extended or under another domain does not decode.
    #[test]
    fn decoding_inverts_the_encoding() {
        let mut with_all = rec();
        with_all.event.actor_id = Some(String::new());
        with_all.event.error_code = Some("CKR_PIN_INCORRECT".into());
        for r in [rec(), with_all] {
            let e = encode(&r);
            let f = decode_fields(&e).expect("decodes");
            let mut again = Vec::new();
            encode_fields(&f, &mut again);
            assert_eq!(again, e);
            assert_eq!(
                (f.seq, f.actor_id),
                (1, r.event.actor_id.as_deref().map(str::as_bytes))
            );
            for cut in 0..e.len() {
                assert!(decode_fields(&e[..cut]).is_none(), "cut at {cut}");
            }
            let mut longer = e.clone();
            longer.push(0);
            assert!(decode_fields(&longer).is_none());
            let mut other = e.clone();
            other[4] ^= 1;
            assert!(decode_fields(&other).is_none(), "another domain tag");
        }
    }

    #[test]
    fn chain_links_depend_on_key_and_predecessor() {
        let e = encode(&rec());
        let k1 = ChainKey::new(&[1u8; 32]);
        let k2 = ChainKey::new(&[2u8; 32]);
        assert_ne!(k1.link(&e, &GENESIS), k2.link(&e, &GENESIS));
        assert_ne!(k1.link(&e, &GENESIS), k1.link(&e, &[9u8; 32]));
        assert_eq!(k1.link(&e, &GENESIS), k1.link(&e, &GENESIS));
    }
}
