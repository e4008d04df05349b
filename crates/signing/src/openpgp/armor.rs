//! ASCII armor (RFC 9580 §6) and the cleartext signature framework (§7).

use base64::Engine;

/// What an armored block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    PublicKey,
    Signature,
}

impl Block {
    fn label(self) -> &'static str {
        match self {
            Block::PublicKey => "PGP PUBLIC KEY BLOCK",
            Block::Signature => "PGP SIGNATURE",
        }
    }
}

/// CRC-24 of RFC 9580 §6.1.1 (kept for readers of RFC 4880, such as gpg 2.2).
fn crc24(data: &[u8]) -> u32 {
    let mut crc: u32 = 0x00B7_04CE;
    for b in data {
        crc ^= (*b as u32) << 16;
        for _ in 0..8 {
            crc <<= 1;
            if crc & 0x0100_0000 != 0 {
                crc ^= 0x0186_4CFB;
            }
        }
    }
    crc & 0x00FF_FFFF
}

/// `bytes` armored: header line, blank line, base64 in lines of 64, checksum, footer.
pub fn armor(block: Block, bytes: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut out = format!("-----BEGIN {}-----\n\n", block.label());
    let body = b64.encode(bytes);
    for line in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    let crc = crc24(bytes).to_be_bytes();
    out.push('=');
    out.push_str(&b64.encode(&crc[1..]));
    out.push('\n');
    out.push_str(&format!("-----END {}-----\n", block.label()));
    out
}

/// The text a cleartext signature covers (RFC 9580 §7.2): trailing spaces and tabs removed
/// from every line, lines joined with CRLF, no line ending after the last line.
pub fn canonical_text(text: &str) -> String {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| l.trim_end_matches('\r').trim_end_matches([' ', '\t']))
        .collect::<Vec<_>>()
        .join("\r\n")
}

/// A cleartext-signed message: `text` dash-escaped, then the armored signature.
pub fn cleartext(hash_name: &str, text: &str, signature: &[u8]) -> String {
    let mut out = format!("-----BEGIN PGP SIGNED MESSAGE-----\nHash: {hash_name}\n\n");
    let body = text.strip_suffix('\n').unwrap_or(text);
    for line in body.split('\n') {
        if line.starts_with('-') {
            out.push_str("- ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&armor(Block::Signature, signature));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc24_of_the_rfc_check_string() {
        // The CRC-24/OPENPGP check value.
        assert_eq!(crc24(b"123456789"), 0x21CF02);
    }

    #[test]
    fn armor_wraps_at_64_and_ends_with_the_checksum() {
        let a = armor(Block::Signature, &[0u8; 60]);
        let lines: Vec<&str> = a.lines().collect();
        assert_eq!(lines[0], "-----BEGIN PGP SIGNATURE-----");
        assert_eq!(lines[1], "");
        assert_eq!(lines[2].len(), 64);
        assert_eq!(lines[3].len(), 16);
        assert!(lines[4].starts_with('=') && lines[4].len() == 5);
        assert_eq!(lines[5], "-----END PGP SIGNATURE-----");
    }

    #[test]
    fn cleartext_is_canonicalized_and_dash_escaped() {
        assert_eq!(canonical_text("a  \nb\t\n\nc\n"), "a\r\nb\r\n\r\nc");
        let m = cleartext("SHA256", "-x\nok\n", &[1, 2, 3]);
        assert!(m.starts_with("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n- -x\nok\n-----BEGIN PGP SIGNATURE-----\n"));
    }
}
