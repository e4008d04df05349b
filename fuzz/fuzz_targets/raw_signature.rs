//! The software verifiers behind every "verified" the console prints, fed arbitrary keys
//! and signatures: a rejection is fine, a panic is not.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    // Split the rest into key | signature | message at two positions taken from it.
    let a = rest.first().copied().unwrap_or(0) as usize;
    let b = rest.get(1).copied().unwrap_or(0) as usize;
    let rest = rest.get(2..).unwrap_or(&[]);
    let k = (a * 16).min(rest.len());
    let (key, rest) = rest.split_at(k);
    let s = (b * 16).min(rest.len());
    let (sig, msg) = rest.split_at(s);
    let _ = match sel % 6 {
        0 => swverify::ml_dsa(swverify::MlDsa::P44, key, msg, b"", sig),
        1 => swverify::ml_dsa(swverify::MlDsa::P65, key, msg, b"ctx", sig),
        2 => swverify::ml_dsa(swverify::MlDsa::P87, key, msg, b"", sig),
        3 => swverify::ecdsa_p256_sha256(key, msg, sig, swverify::EcdsaEncoding::Der),
        4 => swverify::ed25519(key, msg, sig),
        _ => swverify::ecdsa_raw_to_der(32, sig).map(|_| ()),
    };
});
