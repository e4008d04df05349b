//! OpenPGP wire encoding (RFC 9580 §3, §4): packet framing in the OpenPGP (new) format,
//! multiprecision integers, and signature subpackets.

/// Packet tags used here.
pub const TAG_SIGNATURE: u8 = 2;
pub const TAG_PUBLIC_KEY: u8 = 6;
pub const TAG_USER_ID: u8 = 13;

/// A packet: the header (tag, length) in the OpenPGP format, then the body.
pub fn packet(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![0xC0 | tag];
    out.extend(body_length(body.len()));
    out.extend_from_slice(body);
    out
}

/// RFC 9580 §4.2.1: one, two or five octets.
fn body_length(n: usize) -> Vec<u8> {
    if n < 192 {
        vec![n as u8]
    } else if n < 8384 {
        let m = n - 192;
        vec![((m >> 8) + 192) as u8, (m & 0xFF) as u8]
    } else {
        let mut v = vec![0xFF];
        v.extend((n as u32).to_be_bytes());
        v
    }
}

/// RFC 9580 §3.2: the bit count, then the big-endian value without leading zero octets.
pub fn mpi(value: &[u8]) -> Vec<u8> {
    let v = match value.iter().position(|b| *b != 0) {
        Some(i) => &value[i..],
        None => &[][..],
    };
    let bits = match v.first() {
        Some(b) => (v.len() - 1) * 8 + (8 - b.leading_zeros() as usize),
        None => 0,
    };
    let mut out = (bits as u16).to_be_bytes().to_vec();
    out.extend_from_slice(v);
    out
}

/// Signature subpacket types (RFC 9580 §5.2.3.7).
pub mod subpacket {
    pub const CREATION_TIME: u8 = 2;
    pub const PREFERRED_SYMMETRIC: u8 = 11;
    pub const ISSUER_KEY_ID: u8 = 16;
    pub const PREFERRED_HASH: u8 = 21;
    pub const PREFERRED_COMPRESSION: u8 = 22;
    pub const PRIMARY_USER_ID: u8 = 25;
    pub const KEY_FLAGS: u8 = 27;
    pub const FEATURES: u8 = 30;
    pub const ISSUER_FINGERPRINT: u8 = 33;
}

/// A subpacket area: each subpacket is its length (type included), its type, its data.
#[derive(Default)]
pub struct Subpackets(Vec<u8>);

impl Subpackets {
    pub fn push(mut self, typ: u8, data: &[u8]) -> Self {
        self.0.extend(body_length(data.len() + 1));
        self.0.push(typ);
        self.0.extend_from_slice(data);
        self
    }

    /// The area with its two-octet length.
    pub fn area(&self) -> Vec<u8> {
        let mut out = (self.0.len() as u16).to_be_bytes().to_vec();
        out.extend_from_slice(&self.0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_mpis_follow_rfc_9580() {
        assert_eq!(body_length(191), vec![191]);
        assert_eq!(body_length(192), vec![192, 0]);
        assert_eq!(body_length(8383), vec![223, 255]);
        assert_eq!(body_length(8384), vec![0xFF, 0, 0, 0x20, 0xC0]);
        // RFC 9580 §3.2's examples: 1 is [00 01 01], 511 is [00 09 01 FF].
        assert_eq!(mpi(&[0, 0, 1]), vec![0, 1, 1]);
        assert_eq!(mpi(&[0x01, 0xFF]), vec![0, 9, 1, 0xFF]);
        assert_eq!(mpi(&[0x40, 1]), vec![0, 15, 0x40, 1]);
        assert_eq!(mpi(&[0, 0]), vec![0, 0]);
        assert_eq!(packet(13, b"ab"), vec![0xCD, 2, b'a', b'b']);
    }
}
