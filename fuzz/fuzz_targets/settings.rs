//! The settings file (hand-edited, half-written by another tool): parsed and validated.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = console::settings::Settings::parse(data) {
        let _ = s.validate();
    }
});
