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
    let tag_2 = matches!(bytes.first(), Some(0xC2 | 0x88 | 0x89 | 0x8A));
    if tag_2 && whole_v4_signature(bytes) {
        return Some(Kind::Binary);
    }
    None
}

/// One v4 signature packet that rpgp understands and that is exactly `bytes` (rpgp takes
/// a packet of an unknown version, or leaves trailing bytes, as parsed: a raw signature
/// could look like that).
fn whole_v4_signature(bytes: &[u8]) -> bool {
    use pgp::ser::Serialize;
    let Ok(sig) = DetachedSignature::from_bytes(bytes) else {
        return false;
    };
    sig.signature.version() == pgp::packet::SignatureVersion::V4
        && sig.signature.config().is_some()
        && sig.to_bytes().is_ok_and(|b| b == bytes)
}

/// Whether a key file holds an OpenPGP certificate.
pub fn is_certificate(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|t| {
        t.trim_start()
            .starts_with("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    }) || matches!(bytes.first(), Some(0xC6 | 0x98 | 0x99))
}

fn invalid(what: &str, e: impl std::fmt::Display) -> SignError {
    SignError::Invalid(format!("{what}: {e}"))
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
                    .map_err(|e| SignError::Format(format!("not an OpenPGP certificate: {e}")))?
                    .0
            }
            _ => SignedPublicKey::from_bytes(bytes)
                .map_err(|e| SignError::Format(format!("not an OpenPGP certificate: {e}")))?,
        };
        key.verify_bindings()
            .map_err(|e| invalid("the certificate's self-signature does not verify", e))?;
        if key.details.users.is_empty() {
            return Err(SignError::Format("the certificate has no user ID".into()));
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
        Some(Ok(_)) => Err(SignError::Format(
            "expected a public-key packet first".into(),
        )),
        Some(Err(e)) => Err(SignError::Format(format!("not a public-key packet: {e}"))),
        None => Err(SignError::Format("no packet".into())),
    }
}

/// Our key as rpgp reads its public-key packet, with the fingerprint rpgp computes checked
/// against ours.
pub fn read_key(key: &super::PgpKey) -> Result<RpgpKey> {
    let k = public_key_packet(&key.packet())?;
    if format!("{:X}", k.fingerprint()) != key.fingerprint_hex() {
        return Err(SignError::Invalid(
            "rpgp computes another fingerprint for the key".into(),
        ));
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
    let sig = match kind(signature) {
        Some(Kind::Armored) => {
            DetachedSignature::from_armor_single(signature)
                .map_err(|e| SignError::Format(format!("not an OpenPGP signature: {e}")))?
                .0
        }
        Some(Kind::Binary) => DetachedSignature::from_bytes(signature)
            .map_err(|e| SignError::Format(format!("not an OpenPGP signature: {e}")))?,
        _ => return Err(SignError::Format("not a detached OpenPGP signature".into())),
    };
    let s = sig.signature;
    if s.typ() != Some(SignatureType::Binary) {
        return Err(SignError::Invalid(format!(
            "a {:?} signature, not one over a binary document",
            s.typ()
        )));
    }
    s.verify(key, data)
        .map_err(|e| invalid("the OpenPGP signature does not verify", e))?;
    Ok(verdict(key, &s))
}

/// A cleartext-signed message with `key`: the signed text (LF line ends) and the verdict.
pub fn check_cleartext(key: &impl VerifyingKey, message: &str) -> Result<(String, Verdict)> {
    let (msg, _) = CleartextSignedMessage::from_string(message)
        .map_err(|e| SignError::Format(format!("not a cleartext-signed message: {e}")))?;
    let sig = msg
        .verify(key)
        .map_err(|e| invalid("the cleartext signature does not verify", e))?;
    let v = verdict(key, sig);
    Ok((msg.signed_text().replace("\r\n", "\n"), v))
}
