//! The stored formats, pinned byte for byte: the canonical encoding that feeds the MAC, an
//! export's record line, a spooled event, a checkpoint's signed message. Trails and exports
//! written by earlier versions verify only as long as none of these changes.
//!
//! The records are built from the pinned text itself, so these tests say nothing about how
//! the types are declared, only about what they read and write.

use audit::encode::{self, ChainKey, GENESIS};
use audit::export::Line;
use audit::{Checkpoint, Prepared};

/// An export's record line.
const RECORD_LINE: &str = r#"{"type":"record","log_id":"log_0123456789abcdef01234567","seq":42,"epoch":1,"timestamp":"2026-11-30T15:00:00.000Z","session_id":"sess_00112233","actor_id":"officer@console","actor_ip":"127.0.0.1","action":"file.sign","resource_type":"artifact","resource_id":"release-1.tar.gz","algorithm":null,"status":"success","error_code":null,"metadata":"{\"size\":1000,\"note\":\"tab\\there\"}","hmac_chain":"f56761ff47e27876fa376b09f20f3cd8d106fd5bd045c2d5e4c78e983286e063","created_at":"2026-11-30T15:00:00.001Z"}"#;

/// The canonical encoding of the record in [`RECORD_LINE`].
const RECORD_ENCODING: &str = concat!(
    "0000001468736d2d636f6e736f6c652f61756469742f7631", // domain tag
    "0000001c6c6f675f303132333435363738396162636465663031323334353637", // log_id
    "000000000000002a",                                 // seq 42
    "0000000000000001",                                 // epoch 1
    "00000018323032362d31312d33305431353a30303a30302e3030305a", // timestamp
    "0000000d736573735f3030313132323333",               // session_id
    "0000000f6f66666963657240636f6e736f6c65",           // actor_id
    "000000093132372e302e302e31",                       // actor_ip
    "0000000966696c652e7369676e",                       // action
    "000000086172746966616374",                         // resource_type
    "0000001072656c656173652d312e7461722e677a",         // resource_id
    "ffffffff",                                         // algorithm absent
    "0000000773756363657373",                           // status
    "ffffffff",                                         // error_code absent
    "000000207b2273697a65223a313030302c226e6f7465223a227461625c7468657265227d", // metadata
    "00000018323032362d31312d33305431353a30303a30302e3030315a", // created_at
);

/// An event waiting in the pending spool (`audit_pending.event`).
const SPOOLED_EVENT: &str = r#"{"timestamp":"2026-11-30T15:00:00.000Z","session_id":"sess_00112233","actor_id":null,"actor_ip":"127.0.0.1","action":"session.login","resource_type":"partition","resource_id":null,"algorithm":null,"status":"failure","error_code":"CKR_PIN_INCORRECT","metadata":"{}"}"#;

#[test]
fn record_line_reads_and_writes_unchanged() {
    let line: Line = serde_json::from_str(RECORD_LINE).unwrap();
    assert_eq!(serde_json::to_string(&line).unwrap(), RECORD_LINE);
    let Line::Record(r) = line else {
        panic!("not a record line")
    };
    assert_eq!((r.seq, r.epoch), (42, 1));
    // A record on its own serializes as the line without its tag.
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        RECORD_LINE.replacen(r#""type":"record","#, "", 1)
    );
}

#[test]
fn record_encoding_is_pinned() {
    let Line::Record(r) = serde_json::from_str(RECORD_LINE).unwrap() else {
        panic!("not a record line")
    };
    let e = encode::encode(&r);
    assert_eq!(hex::encode(&e), RECORD_ENCODING);
    // The stored chain value is the MAC of the encoding (onto genesis, under the key of 7s).
    assert_eq!(
        hex::encode(ChainKey::new(&[7u8; 32]).link(&e, &GENESIS)),
        r.hmac_chain
    );
    assert_eq!(
        hex::encode(encode::digest_link(&e, &GENESIS)),
        "310b07d31174ab2309cdcb3294734a5699e1eaf89f4c1feb0e6ac483e03303ea"
    );
}

#[test]
fn spooled_event_reads_and_writes_unchanged() {
    let p: Prepared = serde_json::from_str(SPOOLED_EVENT).unwrap();
    assert_eq!(p.error_code.as_deref(), Some("CKR_PIN_INCORRECT"));
    assert_eq!(serde_json::to_string(&p).unwrap(), SPOOLED_EVENT);
}

#[test]
fn checkpoint_message_is_pinned() {
    let c = Checkpoint {
        log_id: "log_0123456789abcdef01234567".into(),
        checkpoint_no: 3,
        seq: 300,
        head_hmac: "11".repeat(32),
        head_digest: "22".repeat(32),
        time: "2026-11-30T15:10:00.000Z".into(),
        epoch: 1,
        algorithm: "ECDSA-P256".into(),
        public_key: String::new(),
        signature: String::new(),
    };
    let m = audit::verify::checkpoint_message(&c).unwrap();
    let pinned = concat!(
        "0000001f68736d2d636f6e736f6c652f61756469742d636865636b706f696e742f7631", // domain tag
        "0000001c6c6f675f303132333435363738396162636465663031323334353637",       // log_id
        "0000000000000003",                                                       // checkpoint_no
        "000000000000012c",                                                       // seq 300
        "1111111111111111111111111111111111111111111111111111111111111111",       // head_hmac
        "2222222222222222222222222222222222222222222222222222222222222222",       // head_digest
        "00000018323032362d31312d33305431353a31303a30302e3030305a",               // time
        "0000000000000001",                                                       // epoch
    );
    assert_eq!(hex::encode(m), pinned);
}
