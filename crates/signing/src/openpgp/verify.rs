//! OpenPGP verification with rpgp — another implementation than the encoder in this
//! module's parent, used for the check before anything is written and for `hsmc verify`.

use std::io::Read;

use pgp::composed::{CleartextSignedMessage, Deserializable, DetachedSignature, SignedPublicKey};
use pgp::packet::{Packet, PacketParser, SignatureType};

/// A public key as rpgp holds it.
pub use pgp::packet::PublicKey as RpgpKey;
use pgp::types::{KeyDetails, VerifyingKey};

use crate::{Result, SignError};

/// What kind of OpenPGP data a signature file holds, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `-----BEGIN PGP SIGNATURE-----`
    Armored,
    /// `-----BEGIN PGP SIGNED MESSAGE-----`
    Cleartext,
    /// A binary signature packet (parsed to be sure).
    Binary,
}

/// Whether `bytes` is an OpenPGP signature, and which form. A raw signature is never taken
/// for a binary one: that needs a whole, well-formed v4 signature packet.
pub fn kind(bytes: &[u8]) -> Option<Kind> {
    let text = std::str::from_utf8(bytes).ok();
    let starts = |p: &str| text.is_some_and(|t| t.trim_start().starts_with(p));
    if starts("-----BEGIN PGP SIGNATURE-----") {
        return Some(Kind::Armored);
    }
    if starts("-----BEGIN PGP SIGNED MESSAGE-----") {
        return Some(Kind::Cleartext);
    }
    if whole_v4_signature(bytes) {
        return Some(Kind::Binary);
    }
    None
}

/// One v4 signature packet that rpgp understands and that is exactly `bytes` (rpgp takes
/// a packet of an unknown version, or leaves trailing bytes, as parsed: a raw signature
/// could look like that). The packet's length may be written in any of the encodings
/// RFC 9580 §4.2 allows (old or new format, a length field longer than needed): rpgp
/// writes the header again in its own way, so only the body is compared.
fn whole_v4_signature(bytes: &[u8]) -> bool {
    use pgp::ser::Serialize;
    let Some(body) = packet_body(bytes) else {
        return false;
    };
    let Ok(sig) = DetachedSignature::from_bytes(bytes) else {
        return false;
    };
    sig.signature.version() == pgp::packet::SignatureVersion::V4
        && sig.signature.config().is_some()
        && sig.signature.to_bytes().is_ok_and(|b| b == body)
}

/// The body of the signature packet (tag 2) that `bytes` is from its first to its last
/// byte: `None` when the header's length says otherwise, or is a partial length (which
/// only data packets may have).
fn packet_body(bytes: &[u8]) -> Option<&[u8]> {
    let (&first, rest) = bytes.split_first()?;
    let be = |n: usize| -> Option<(usize, usize)> {
        let len = rest
            .get(..n)?
            .iter()
            .fold(0usize, |l, b| l << 8 | *b as usize);
        Some((n, len))
    };
    let (header, len) = match first {
        // Old format, tag 2: one, two or four length octets, or the rest of the file.
        0x88 => be(1)?,
        0x89 => be(2)?,
        0x8A => be(4)?,
        0x8B => (0, rest.len()),
        // New format, tag 2.
        0xC2 => match *rest.first()? {
            l @ 0..=191 => (1, l as usize),
            l @ 192..=223 => (2, ((l as usize - 192) << 8) + *rest.get(1)? as usize + 192),
            255 => (
                5,
                u32::from_be_bytes(rest.get(1..5)?.try_into().ok()?) as usize,
            ),
            _ => return None,
        },
        _ => return None,
    };
    let body = &rest[header..];
    (body.len() == len).then_some(body)
}

/// Whether a key file holds an OpenPGP certificate.
pub fn is_certificate(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|t| {
        t.trim_start()
            .starts_with("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    }) || matches!(bytes.first(), Some(0xC6 | 0x98 | 0x99))
}

/// A certificate as rpgp reads it, its self-signatures checked.
pub struct Certificate {
    pub key: SignedPublicKey,
}

impl Certificate {
    /// Armored or binary. Every binding signature must verify.
    pub fn read(bytes: &[u8]) -> Result<Certificate> {
        let key = match std::str::from_utf8(bytes) {
            Ok(t) if t.trim_start().starts_with("-----BEGIN") => {
                SignedPublicKey::from_string(t)
                    .map_err(|e| {
                        SignError::Format(hsm::text!(
                            "signing.openpgp.not_certificate",
                            "not an OpenPGP certificate: {{error}}",
                            error = e
                        ))
                    })?
                    .0
            }
            _ => SignedPublicKey::from_bytes(bytes).map_err(|e| {
                SignError::Format(hsm::text!(
                    "signing.openpgp.not_certificate",
                    "not an OpenPGP certificate: {{error}}",
                    error = e
                ))
            })?,
        };
        key.verify_bindings().map_err(|e| {
            SignError::Invalid(hsm::text!(
                "signing.openpgp.self_signature_invalid",
                "the certificate's self-signature does not verify: {{error}}",
                error = e
            ))
        })?;
        if key.details.users.is_empty() {
            return Err(SignError::Format(hsm::text!(
                "signing.openpgp.no_user_id",
                "the certificate has no user ID"
            )));
        }
        Ok(Certificate { key })
    }

    pub fn fingerprint(&self) -> String {
        format!("{:X}", self.key.primary_key.fingerprint())
    }

    pub fn user_ids(&self) -> Vec<String> {
        self.key
            .details
            .users
            .iter()
            .map(|u| String::from_utf8_lossy(u.id.id()).into_owned())
            .collect()
    }

    pub fn created(&self) -> u32 {
        self.key.primary_key.created_at().as_secs()
    }

    pub fn primary(&self) -> &RpgpKey {
        &self.key.primary_key
    }

    pub fn primary_public_algorithm(&self) -> pgp::crypto::public_key::PublicKeyAlgorithm {
        self.key.primary_key.algorithm()
    }
}

/// A public-key packet as rpgp reads it (the check of a signature before a certificate
/// exists: the packet the console would put in it).
pub fn public_key_packet(bytes: &[u8]) -> Result<RpgpKey> {
    match PacketParser::new(bytes).next() {
        Some(Ok(Packet::PublicKey(k))) => Ok(k),
        Some(Ok(_)) => Err(SignError::Format(hsm::text!(
            "signing.openpgp.public_key_packet_first",
            "expected a public-key packet first"
        ))),
        Some(Err(e)) => Err(SignError::Format(hsm::text!(
            "signing.openpgp.not_public_key_packet",
            "not a public-key packet: {{error}}",
            error = e
        ))),
        None => Err(SignError::Format(hsm::text!(
            "signing.openpgp.no_packet",
            "no packet"
        ))),
    }
}

/// Our key as rpgp reads its public-key packet, with the fingerprint rpgp computes checked
/// against ours.
pub fn read_key(key: &super::PgpKey) -> Result<RpgpKey> {
    let k = public_key_packet(&key.packet())?;
    if format!("{:X}", k.fingerprint()) != key.fingerprint_hex() {
        return Err(SignError::Invalid(hsm::text!(
            "signing.openpgp.fingerprint_differs",
            "rpgp computes another fingerprint for the key"
        )));
    }
    Ok(k)
}

/// What a signature that verified says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The signer's fingerprint (40 hex digits).
    pub fingerprint: String,
    /// Signature creation time, seconds since 1970.
    pub created: Option<u32>,
    pub hash: String,
}

fn verdict(key: &impl KeyDetails, sig: &pgp::packet::Signature) -> Verdict {
    Verdict {
        fingerprint: format!("{:X}", key.fingerprint()),
        created: sig.created().map(|t| t.as_secs()),
        hash: sig.hash_alg().map(|h| format!("{h:?}")).unwrap_or_default(),
    }
}

/// A detached signature (armored or binary) over `data`, with `key`.
pub fn check_detached(
    key: &impl VerifyingKey,
    signature: &[u8],
    data: impl Read,
) -> Result<Verdict> {
    let binary = match kind(signature) {
        Some(Kind::Armored) => dearmor_signature(signature)?,
        Some(Kind::Binary) => signature.to_vec(),
        _ => {
            return Err(SignError::Format(hsm::text!(
                "signing.openpgp.not_detached_signature",
                "not a detached OpenPGP signature"
            )))
        }
    };
    let sig = DetachedSignature::from_bytes(&binary[..]).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.openpgp.not_signature",
            "not an OpenPGP signature: {{error}}",
            error = e
        ))
    })?;
    let s = sig.signature;
    if s.typ() != Some(SignatureType::Binary) {
        return Err(SignError::Invalid(hsm::text!(
            "signing.openpgp.not_binary_signature",
            "a {{kind}} signature, not one over a binary document",
            kind = format!("{:?}", s.typ())
        )));
    }
    s.verify(key, data).map_err(|e| {
        SignError::Invalid(hsm::text!(
            "signing.openpgp.does_not_verify",
            "the OpenPGP signature does not verify: {{error}}",
            error = e
        ))
    })?;
    Ok(verdict(key, &s))
}

/// The packet an armored detached signature carries, held to the rule of a binary one
/// ([`kind`]): one whole v4 signature packet. Read more loosely (rpgp checks the first
/// signature and ignores what follows), an `.asc` would verify where the same bytes in a
/// `.sig` are refused, and a second signature or trailing bytes would pass unseen.
fn dearmor_signature(armored: &[u8]) -> Result<Vec<u8>> {
    let mut d = pgp::armor::Dearmor::new(armored);
    let mut bytes = Vec::new();
    d.read_to_end(&mut bytes).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.openpgp.not_signature",
            "not an OpenPGP signature: {{error}}",
            error = e
        ))
    })?;
    if d.typ != Some(pgp::armor::BlockType::Signature) {
        return Err(SignError::Format(hsm::text!(
            "signing.openpgp.armor_not_signature",
            "not an OpenPGP signature: the armor is not a PGP SIGNATURE block"
        )));
    }
    if !whole_v4_signature(&bytes) {
        return Err(SignError::Format(hsm::text!(
            "signing.openpgp.armor_not_one_packet",
            "not a detached OpenPGP signature: the armor must hold one v4 signature packet and nothing else"
        )));
    }
    Ok(bytes)
}

/// A cleartext-signed message with `key`: the signed text (LF line ends) and the verdict.
pub fn check_cleartext(key: &impl VerifyingKey, message: &str) -> Result<(String, Verdict)> {
    let (msg, _) = CleartextSignedMessage::from_string(message).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.openpgp.not_cleartext",
            "not a cleartext-signed message: {{error}}",
            error = e
        ))
    })?;
    let sig = msg.verify(key).map_err(|e| {
        SignError::Invalid(hsm::text!(
            "signing.openpgp.cleartext_does_not_verify",
            "the cleartext signature does not verify: {{error}}",
            error = e
        ))
    })?;
    let v = verdict(key, sig);
    Ok((msg.signed_text().replace("\r\n", "\n"), v))
}
