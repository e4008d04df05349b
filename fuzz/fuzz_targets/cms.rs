//! A `.p7s` dropped on the Verify view: the CMS reader, the certificate inside, and the
//! signature check against the digest the signature claims.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(parsed) = signing::cms::parse(data) {
        let _ = signing::cms::certificate(&parsed);
        let digest = parsed.message_digest.clone();
        let _ = signing::cms::verify(&parsed, &digest, None);
    }
});
