//! Public keys and certificates from files (`--pub KEY.pem`, certificates inside CMS) and
//! CKA_EC_PARAMS from tokens.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(pk) = hsm::pubkey::PublicKey::from_spki_der(data) {
        let _ = pk.fingerprint();
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = hsm::pubkey::PublicKey::from_spki_pem(text);
    }
    let _ = signing::cert::public_key(data);
    let _ = hsm::algo::Curve::from_ec_params(data);
});
