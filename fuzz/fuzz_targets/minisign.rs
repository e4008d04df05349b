//! minisign files as `hsmc verify` and the Verify view read them: a `.minisig` against the
//! fixture `minisign.pub`, and a `minisign.pub` against the fixture `.minisig`, over the
//! file they sign (both made by minisign 0.11). A signature that verifies is one `hsmc
//! verify` routes to minisign, names the public key's ID and carries a trusted comment the
//! key signed; and the files the console writes for an HSM key are recognised as minisign's.
#![no_main]
use std::path::PathBuf;
use std::sync::OnceLock;

use hsm::algo::Curve;
use hsm::pubkey::PublicKey;
use libfuzzer_sys::fuzz_target;
use signing::minisign::{self, MinisignKey};

const PUBLIC_KEY: &[u8] = include_bytes!("../fixtures/minisign.pub");
const ARTIFACT: &[u8] = include_bytes!("../fixtures/minisign-artifact");
/// The prehashed seed's signature (fuzz/seeds/minisign/prehashed.minisig).
const SIGNATURE: &[u8] = include_bytes!("../seeds/minisign/prehashed.minisig");
/// The trusted comments the fixture key signed (the two seed signatures).
const SIGNED_COMMENTS: [&str; 2] = [
    "timestamp:1790000000\tfile:artifact\thashed",
    "timestamp:1796164247\tfile:artifact",
];

fn artifact() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let p = std::env::temp_dir().join(format!("hsmc-fuzz-minisign-{}", std::process::id()));
        std::fs::write(&p, ARTIFACT).expect("write the fuzz artifact");
        p
    })
}

/// The key ID minisign printed in the public key's comment.
fn key_id() -> &'static str {
    std::str::from_utf8(PUBLIC_KEY)
        .ok()
        .and_then(|t| t.lines().next())
        .and_then(|l| l.strip_prefix("untrusted comment: minisign public key "))
        .expect("the fixture names its key ID")
}

fuzz_target!(|data: &[u8]| {
    // The input as the signature.
    let r = minisign::report(artifact(), data, Some(PUBLIC_KEY)).expect("a report");
    if r.valid {
        // minisign itself refuses a signature whose first line is not an untrusted comment
        // (`minisign-verify` does not look), so only those must be routed.
        if data.starts_with(b"untrusted comment: ") {
            assert!(
                minisign::is_signature(data),
                "a minisign signature that verifies is not routed to minisign"
            );
        }
        assert_eq!(
            r.key_fingerprint.as_deref(),
            Some(format!("minisign key {}", key_id()).as_str())
        );
        assert!(
            SIGNED_COMMENTS
                .iter()
                .any(|c| r.detail.ends_with(&format!("trusted comment: {c}"))),
            "verified with a trusted comment the key never signed: {}",
            r.detail
        );
    }
    // The input as the public key.
    let r = minisign::report(artifact(), SIGNATURE, Some(data)).expect("a report");
    if r.valid {
        assert_eq!(
            r.key_fingerprint.as_deref(),
            Some(format!("minisign key {}", key_id()).as_str())
        );
    }
    assert!(minisign::report(artifact(), data, None).is_err());
    // What the console writes for an HSM Ed25519 key (any 32 bytes) and a file name.
    let Some((point, name)) = data.split_first_chunk::<32>() else {
        return;
    };
    let key = MinisignKey::new(&PublicKey::Ec {
        curve: Curve::Ed25519,
        point: point.to_vec(),
    })
    .expect("an Ed25519 key");
    let pub_file = key.public_key_file();
    assert!(minisign::is_public_key(pub_file.as_bytes()));
    assert!(!minisign::is_signature(pub_file.as_bytes()));
    let Ok(trusted) = minisign::trusted_comment(&String::from_utf8_lossy(name), 1_790_000_000)
    else {
        return;
    };
    let sig = minisign::signature_file(&key, &[0u8; 64], &trusted, &mut |_| Ok(vec![0u8; 64]))
        .expect("a one-line trusted comment is written");
    assert!(
        minisign::is_signature(sig.as_bytes()),
        "the console's own .minisig is not routed to minisign"
    );
    assert!(!minisign::is_public_key(sig.as_bytes()));
    assert_eq!(
        sig.lines().nth(2),
        Some(format!("trusted comment: {trusted}").as_str())
    );
});
