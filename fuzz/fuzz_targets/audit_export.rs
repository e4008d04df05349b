//! The audit export reader (JSON Lines from anyone, e.g. an auditor's copy) and the
//! verifier run over whatever it accepted: errors are fine, panics and hangs are not.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(parsed) = audit::export::parse_jsonl(data) {
        let _ = audit::export::verify_export(&parsed, None, None);
    }
});
