//! Key backup wrap files (`hsmc keys unwrap FILE`, the unwrap dialog): JSON from another
//! token, a colleague or a damaged disk, read as the unwrap reads it before any token is
//! asked. What is accepted is of the console's format, names one of the schemes the console
//! writes, gives the key's ID in hexadecimal (a damaged one used to restore the key with an
//! empty CKA_ID), carries canonical base64 (it encodes back to the same text), and
//! round-trips: written again as `hsmc keys wrap` writes it, it reads back to the same file.
#![no_main]
use console::backup::{parse_wrap_file, WrapFile, WRAP_FORMAT};
use libfuzzer_sys::fuzz_target;

/// Every scheme name a wrap file may carry (the three names tokens give RFC 5649, and the
/// two RSA schemes with each OAEP hash).
const SCHEMES: [&str; 7] = [
    "CKM_AES_KEY_WRAP_KWP",
    "CKM_AES_KWP",
    "CKM_AES_KEY_WRAP_PAD",
    "CKM_RSA_PKCS_OAEP(SHA-1)",
    "CKM_RSA_PKCS_OAEP(SHA-256)",
    "CKM_RSA_AES_KEY_WRAP(SHA-1)",
    "CKM_RSA_AES_KEY_WRAP(SHA-256)",
];

fn value(f: &WrapFile) -> serde_json::Value {
    serde_json::to_value(f).expect("a wrap file serializes")
}

fuzz_target!(|data: &[u8]| {
    let Ok((f, wrapped)) = parse_wrap_file(data) else {
        return;
    };
    assert_eq!(f.format, WRAP_FORMAT);
    assert!(
        SCHEMES.contains(&f.mechanism.as_str()),
        "scheme {:?}",
        f.mechanism
    );
    assert!(
        f.id_hex.len() % 2 == 0 && f.id_hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "the key's ID {:?} is not hexadecimal",
        f.id_hex
    );
    assert_eq!(
        console::keys::base64_encode(&wrapped),
        f.wrapped,
        "the wrapped key's base64 is not canonical"
    );
    // Written as `hsmc keys wrap` writes it, and compactly: both read back the same.
    for json in [
        serde_json::to_vec_pretty(&f).expect("serializes"),
        serde_json::to_vec(&f).expect("serializes"),
    ] {
        let (again, wrapped_again) = parse_wrap_file(&json).unwrap_or_else(|e| {
            panic!(
                "a written wrap file is refused: {e}\n{}",
                String::from_utf8_lossy(&json)
            )
        });
        assert_eq!(value(&again), value(&f));
        assert_eq!(wrapped_again, wrapped);
    }
});
