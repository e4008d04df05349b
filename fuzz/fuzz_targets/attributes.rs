//! Attribute values as a token returns them (any length, any bytes) decoded for the key
//! details pane, for every module family's vendor tables.
#![no_main]
use libfuzzer_sys::fuzz_target;
use p11::{AttrValue, Family};

fuzz_target!(|data: &[u8]| {
    let Some((&f, mut rest)) = data.split_first() else {
        return;
    };
    let family = [
        Family::Generic,
        Family::Luna,
        Family::ProtectToolkit,
        Family::SoftHsm,
        Family::Kryoptic,
    ][f as usize % 5];
    let mut values = Vec::new();
    for _ in hsm::keys::detail_attributes() {
        let Some((&tag, r)) = rest.split_first() else {
            break;
        };
        let n = (tag >> 2) as usize;
        let take = n.min(r.len());
        values.push(match tag & 3 {
            0 => AttrValue::Value(r[..take].to_vec()),
            1 => AttrValue::Sensitive,
            2 => AttrValue::Invalid,
            _ => AttrValue::Unavailable,
        });
        rest = &r[if tag & 3 == 0 { take } else { 0 }..];
    }
    let _ = hsm::keys::describe_attributes(family, &values);
});
