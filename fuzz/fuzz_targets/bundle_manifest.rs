//! `.sig.json` bundles and `SHA256SUMS` manifests: parsed, and a parsed bundle verified
//! against a small file (size, digests, then the signature with the bundle's key).
#![no_main]
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn artifact() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let p = std::env::temp_dir().join(format!("hsmc-fuzz-artifact-{}", std::process::id()));
        std::fs::write(&p, b"release artifact\n").expect("write the fuzz artifact");
        p
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = signing::formats::parse_manifest(text);
    if let Ok(b) = signing::formats::Bundle::parse(text) {
        let _ = b.context();
        let _ = signing::verify::verify_bundle(artifact(), &b, None);
    }
});
