//! OpenPGP (RFC 9580) v4 certificates and signatures made with an HSM key, in the forms
//! gpg 2.2 and Sequoia 0.27 read: Ed25519 as the legacy EdDSA algorithm 22 (curve OID
//! 1.3.6.1.4.1.11591.15.1), ECDSA 19 on P-256/P-384, RSA 1 (PKCS#1 v1.5).
//!
//! The encoder is written here rather than taken from an OpenPGP library: the console has
//! to verify each output with code of another lineage than the code that made it, and that
//! verifier is rpgp ([`verify`]); the HSM also signs a digest this module computes while
//! it streams the file, which an OpenPGP library's signing builder (it wants the secret key
//! or a signer object it drives itself) would hide. The wire format of what we write is
//! small: a public-key packet, a user ID packet, signature packets, ASCII armor.
//!
//! - [`PgpKey`]: the public-key packet of an HSM key with its fixed creation time, its
//!   fingerprint (SHA-1 over `0x99 ‖ length ‖ body`) and key ID.
//! - [`PendingSignature`]: a v4 signature being made — data, then the hashed part, then the
//!   trailer `0x04 0xFF ‖ length`, whose digest the HSM signs ([`token`]).
//! - [`certificate`], [`detached`], [`cleartext_signed`]: what the console writes;
//!   [`cleartext::read_text`]: a file's text to cleartext-sign (apt's `InRelease`).

pub mod armor;
pub mod cleartext;
mod packet;
pub mod report;
pub mod token;
pub mod verify;

use serde::Serialize;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};

use hsm::algo::Curve;
use hsm::pubkey::PublicKey;

use crate::alg::DigestAlg;
use crate::input::InputFile;
use crate::{Result, SignError};

use packet::{mpi, subpacket as sp, Subpackets};

/// Curve OIDs as OpenPGP writes them (the DER content octets).
const OID_ED25519_LEGACY: &[u8] = &[0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x0F, 0x01];
const OID_P256: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];
const OID_P384: &[u8] = &[0x2B, 0x81, 0x04, 0x00, 0x22];

/// The OpenPGP public-key algorithm of an HSM key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PgpAlgorithm {
    /// Ed25519 as EdDSALegacy (algorithm 22): what gpg 2.2 and sq 0.27 read.
    EddsaLegacy,
    EcdsaP256,
    EcdsaP384,
    /// RSA with PKCS#1 v1.5 signatures.
    Rsa,
}

hsm::wire_display!(PgpAlgorithm);

impl PgpAlgorithm {
    /// The algorithm for a key, or why the key has no OpenPGP form here.
    pub fn for_key(pk: &PublicKey) -> Result<PgpAlgorithm> {
        match pk {
            PublicKey::Ec {
                curve: Curve::Ed25519,
                ..
            } => Ok(PgpAlgorithm::EddsaLegacy),
            PublicKey::Ec {
                curve: Curve::P256,
                ..
            } => Ok(PgpAlgorithm::EcdsaP256),
            PublicKey::Ec {
                curve: Curve::P384,
                ..
            } => Ok(PgpAlgorithm::EcdsaP384),
            PublicKey::Rsa { .. } => Ok(PgpAlgorithm::Rsa),
            other => Err(SignError::Unsupported(hsm::text!(
                "signing.openpgp.key_unsupported",
                "OpenPGP signatures are made with Ed25519, ECDSA P-256/P-384 and RSA keys; a {{key}} key has no OpenPGP form that gpg 2.2 and Sequoia 0.27 read",
                key = other.algorithm()
            ))),
        }
    }

    /// RFC 9580 §9.1.
    pub fn id(self) -> u8 {
        match self {
            PgpAlgorithm::EddsaLegacy => 22,
            PgpAlgorithm::EcdsaP256 | PgpAlgorithm::EcdsaP384 => 19,
            PgpAlgorithm::Rsa => 1,
        }
    }

    /// The digest of its signatures: SHA-512 with Ed25519 and P-384 (gpg wants a hash at
    /// least as long as an ECDSA curve's order), SHA-256 with P-256 and RSA.
    pub fn hash(self) -> PgpHash {
        match self {
            PgpAlgorithm::EddsaLegacy | PgpAlgorithm::EcdsaP384 => PgpHash::Sha512,
            PgpAlgorithm::EcdsaP256 | PgpAlgorithm::Rsa => PgpHash::Sha256,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PgpAlgorithm::EddsaLegacy => "EdDSA (Ed25519)",
            PgpAlgorithm::EcdsaP256 => "ECDSA P-256",
            PgpAlgorithm::EcdsaP384 => "ECDSA P-384",
            PgpAlgorithm::Rsa => "RSA",
        }
    }
}

/// The hashes the console's OpenPGP signatures are made with: SHA-2 only (RFC 9580 §9.5
/// defines no SHAKE), a narrower type than [`DigestAlg`] so no other digest can reach the
/// packet code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgpHash {
    Sha256,
    Sha384,
    Sha512,
}

impl PgpHash {
    pub fn digest(self) -> DigestAlg {
        match self {
            PgpHash::Sha256 => DigestAlg::Sha256,
            PgpHash::Sha384 => DigestAlg::Sha384,
            PgpHash::Sha512 => DigestAlg::Sha512,
        }
    }
}

/// RFC 9580 §9.5 hash algorithm IDs (gpg's `SIG_CREATED` status line names them too).
pub fn hash_id(d: PgpHash) -> u8 {
    match d {
        PgpHash::Sha256 => 8,
        PgpHash::Sha384 => 9,
        PgpHash::Sha512 => 10,
    }
}

/// The name in a cleartext message's `Hash:` header.
pub fn hash_name(d: PgpHash) -> &'static str {
    match d {
        PgpHash::Sha256 => "SHA256",
        PgpHash::Sha384 => "SHA384",
        PgpHash::Sha512 => "SHA512",
    }
}

#[derive(Clone)]
enum Hasher {
    Sha256(Sha256),
    Sha384(Sha384),
    Sha512(Sha512),
}

impl Hasher {
    fn new(d: PgpHash) -> Hasher {
        match d {
            PgpHash::Sha256 => Hasher::Sha256(Sha256::new()),
            PgpHash::Sha384 => Hasher::Sha384(Sha384::new()),
            PgpHash::Sha512 => Hasher::Sha512(Sha512::new()),
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Hasher::Sha256(h) => h.update(data),
            Hasher::Sha384(h) => h.update(data),
            Hasher::Sha512(h) => h.update(data),
        }
    }

    fn finish(self) -> Vec<u8> {
        match self {
            Hasher::Sha256(h) => h.finalize().to_vec(),
            Hasher::Sha384(h) => h.finalize().to_vec(),
            Hasher::Sha512(h) => h.finalize().to_vec(),
        }
    }
}

/// An HSM key as an OpenPGP v4 primary key with a fixed creation time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgpKey {
    pub alg: PgpAlgorithm,
    /// Seconds since 1970 (UTC); part of the fingerprint.
    pub created: u32,
    body: Vec<u8>,
    fingerprint: [u8; 20],
}

impl PgpKey {
    pub fn new(pk: &PublicKey, created: u32) -> Result<PgpKey> {
        let alg = PgpAlgorithm::for_key(pk)?;
        let mut body = vec![4];
        body.extend(created.to_be_bytes());
        body.push(alg.id());
        match (alg, pk) {
            (PgpAlgorithm::EddsaLegacy, PublicKey::Ec { point, .. }) => {
                if point.len() != 32 {
                    return Err(SignError::Format(hsm::text!(
                        "signing.ed25519_key_length",
                        "an Ed25519 key is 32 bytes"
                    )));
                }
                body.push(OID_ED25519_LEGACY.len() as u8);
                body.extend_from_slice(OID_ED25519_LEGACY);
                // The native point format: 0x40 ‖ the key.
                let mut p = vec![0x40];
                p.extend_from_slice(point);
                body.extend(mpi(&p));
            }
            (PgpAlgorithm::EcdsaP256 | PgpAlgorithm::EcdsaP384, PublicKey::Ec { point, .. }) => {
                let oid = if alg == PgpAlgorithm::EcdsaP256 {
                    OID_P256
                } else {
                    OID_P384
                };
                if point.first() != Some(&0x04) {
                    return Err(SignError::Format(hsm::text!(
                        "signing.openpgp.ec_point_compressed",
                        "the EC point is not uncompressed SEC1"
                    )));
                }
                body.push(oid.len() as u8);
                body.extend_from_slice(oid);
                body.extend(mpi(point));
            }
            (PgpAlgorithm::Rsa, PublicKey::Rsa { modulus, exponent }) => {
                body.extend(mpi(modulus));
                body.extend(mpi(exponent));
            }
            _ => unreachable!("for_key matched the key"),
        }
        let mut h = Sha1::new();
        h.update(Self::framed(&body));
        let fingerprint = h.finalize().into();
        Ok(PgpKey {
            alg,
            created,
            body,
            fingerprint,
        })
    }

    /// `0x99 ‖ two-octet length ‖ body`, as fingerprints and key signatures hash it.
    fn framed(body: &[u8]) -> Vec<u8> {
        let mut v = vec![0x99];
        v.extend((body.len() as u16).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    pub fn fingerprint(&self) -> [u8; 20] {
        self.fingerprint
    }

    /// Forty hex digits, upper case, as gpg prints them.
    pub fn fingerprint_hex(&self) -> String {
        hex::encode_upper(self.fingerprint)
    }

    /// The low 64 bits of the fingerprint.
    pub fn key_id(&self) -> [u8; 8] {
        self.fingerprint[12..].try_into().expect("8 bytes")
    }

    /// The public-key packet.
    pub fn packet(&self) -> Vec<u8> {
        packet::packet(packet::TAG_PUBLIC_KEY, &self.body)
    }
}

/// Signature types (RFC 9580 §5.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigType {
    Binary = 0x00,
    Text = 0x01,
    PositiveCertification = 0x13,
}

/// A v4 signature being made: the hashed part is fixed first, then the data is hashed.
pub struct PendingSignature<'k> {
    key: &'k PgpKey,
    hash: PgpHash,
    hashed_part: Vec<u8>,
    unhashed: Vec<u8>,
    hasher: Hasher,
}

impl<'k> PendingSignature<'k> {
    /// Creation time and issuer fingerprint hashed (plus `extra`), the issuer key ID
    /// unhashed.
    fn new(key: &'k PgpKey, typ: SigType, created: u32, extra: Subpackets) -> Self {
        let hash = key.alg.hash();
        let mut fpr = vec![4];
        fpr.extend_from_slice(&key.fingerprint);
        let hashed = extra
            .push(sp::CREATION_TIME, &created.to_be_bytes())
            .push(sp::ISSUER_FINGERPRINT, &fpr);
        let mut hashed_part = vec![4, typ as u8, key.alg.id(), hash_id(hash)];
        hashed_part.extend(hashed.area());
        let unhashed = Subpackets::default()
            .push(sp::ISSUER_KEY_ID, &key.key_id())
            .area();
        PendingSignature {
            key,
            hash,
            hashed_part,
            unhashed,
            hasher: Hasher::new(hash),
        }
    }

    pub fn update(&mut self, data: &[u8]) {
        self.hasher.update(data);
    }

    /// The digest the key signs: the data, the hashed part, the trailer.
    pub fn digest(&self) -> Vec<u8> {
        let mut h = self.hasher.clone();
        h.update(&self.hashed_part);
        h.update(&[4, 0xFF]);
        h.update(&(self.hashed_part.len() as u32).to_be_bytes());
        h.finish()
    }

    /// The signature packet, from the digest and the token's signature over it (EdDSA and
    /// ECDSA: `r ‖ s`; RSA: the PKCS#1 v1.5 signature).
    pub fn finish(self, digest: &[u8], raw: &[u8]) -> Result<Vec<u8>> {
        let mpis = match self.key.alg {
            PgpAlgorithm::EddsaLegacy | PgpAlgorithm::EcdsaP256 | PgpAlgorithm::EcdsaP384 => {
                if raw.is_empty() || raw.len() % 2 != 0 {
                    return Err(SignError::Format(hsm::text!(
                        "signing.openpgp.signature_length",
                        "the token's {{alg}} signature has {{bytes}} bytes",
                        alg = self.key.alg.name(),
                        bytes = raw.len()
                    )));
                }
                let (r, s) = raw.split_at(raw.len() / 2);
                [mpi(r), mpi(s)].concat()
            }
            PgpAlgorithm::Rsa => mpi(raw),
        };
        let mut body = self.hashed_part;
        body.extend(self.unhashed);
        body.extend_from_slice(&digest[..2]);
        body.extend(mpis);
        Ok(packet::packet(packet::TAG_SIGNATURE, &body))
    }

    pub fn hash(&self) -> PgpHash {
        self.hash
    }
}

/// Sign a digest: the caller's HSM call (see [`token::sign_digest`]).
pub type DigestSigner<'a> = dyn FnMut(&[u8]) -> Result<Vec<u8>> + 'a;

/// A user ID an officer typed: one line of printable text, `Name <mail>` by convention.
/// What makes a user ID unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UserIdProblem {
    #[error("an OpenPGP user ID is needed, e.g. \"Release Signing <release@example.org>\"")]
    Empty,
    #[error("an OpenPGP user ID is one line of text: it cannot contain a newline or other control characters")]
    NotOneLine,
    #[error("an OpenPGP user ID is at most {MAX_USER_ID} bytes")]
    TooLong,
}

impl UserIdProblem {
    /// The problem as the officer reads it (its English is the `Display`).
    pub fn msg(self) -> hsm::Text {
        match self {
            UserIdProblem::Empty => hsm::text!(
                "signing.openpgp.user_id_empty",
                "an OpenPGP user ID is needed, e.g. \"Release Signing <release@example.org>\""
            ),
            UserIdProblem::NotOneLine => hsm::text!(
                "signing.openpgp.user_id_not_one_line",
                "an OpenPGP user ID is one line of text: it cannot contain a newline or other control characters"
            ),
            UserIdProblem::TooLong => hsm::text!(
                "signing.openpgp.user_id_too_long",
                "an OpenPGP user ID is at most {{max}} bytes",
                max = MAX_USER_ID
            ),
        }
    }
}

/// The longest user ID accepted, in bytes.
pub const MAX_USER_ID: usize = 1024;

/// Why `uid` cannot be a user ID, if it cannot.
pub fn user_id_problem(uid: &str) -> Option<UserIdProblem> {
    if uid.trim().is_empty() {
        Some(UserIdProblem::Empty)
    } else if uid.chars().any(char::is_control) {
        Some(UserIdProblem::NotOneLine)
    } else if uid.len() > MAX_USER_ID {
        Some(UserIdProblem::TooLong)
    } else {
        None
    }
}

pub fn check_user_id(uid: &str) -> Result<()> {
    match user_id_problem(uid) {
        Some(p) => Err(SignError::Format(p.msg())),
        None => Ok(()),
    }
}

/// A transferable public key (RFC 9580 §10.1): the key, the user ID and its positive
/// certification made by the key itself (key flags certify + sign), dated `when` — give the
/// key's creation time, so that the binding holds for every signature the key made before
/// this certificate was exported. Binary; armor it with [`armor::armor`].
pub fn certificate(key: &PgpKey, uid: &str, when: u32, sign: &mut DigestSigner) -> Result<Vec<u8>> {
    check_user_id(uid)?;
    let prefs = Subpackets::default()
        .push(sp::KEY_FLAGS, &[0x03])
        .push(sp::PREFERRED_HASH, &[10, 8, 9])
        .push(sp::PREFERRED_SYMMETRIC, &[9, 7])
        .push(sp::PREFERRED_COMPRESSION, &[0])
        .push(sp::FEATURES, &[0x01])
        .push(sp::PRIMARY_USER_ID, &[1]);
    let mut p = PendingSignature::new(key, SigType::PositiveCertification, when, prefs);
    p.update(&PgpKey::framed(&key.body));
    p.update(&[0xB4]);
    p.update(&(uid.len() as u32).to_be_bytes());
    p.update(uid.as_bytes());
    let digest = p.digest();
    let raw = sign(&digest)?;
    let mut out = key.packet();
    out.extend(packet::packet(packet::TAG_USER_ID, uid.as_bytes()));
    out.extend(p.finish(&digest, &raw)?);
    Ok(out)
}

/// A detached binary-document signature (type 0x00) over a file, which is read again and
/// must be the file hashed before (`expected_sha256`). Binary; armor it for `.asc`.
pub fn detached(
    key: &PgpKey,
    input: &InputFile,
    expected_sha256: &str,
    now: u32,
    sign: &mut DigestSigner,
) -> Result<Vec<u8>> {
    let mut p = PendingSignature::new(key, SigType::Binary, now, Subpackets::default());
    crate::reread::stream_same(input, expected_sha256, &mut |b| p.update(b))?;
    let digest = p.digest();
    let raw = sign(&digest)?;
    p.finish(&digest, &raw)
}

/// A detached signature over bytes in memory (tests, small texts).
pub fn detached_bytes(
    key: &PgpKey,
    data: &[u8],
    now: u32,
    sign: &mut DigestSigner,
) -> Result<Vec<u8>> {
    let mut p = PendingSignature::new(key, SigType::Binary, now, Subpackets::default());
    p.update(data);
    let digest = p.digest();
    let raw = sign(&digest)?;
    p.finish(&digest, &raw)
}

/// A cleartext-signed message (type 0x01 over the canonical text), e.g. `SHA256SUMS.asc`.
/// Lines with trailing spaces or tabs are refused: the signature would cover other text
/// than the file shows.
pub fn cleartext_signed(
    key: &PgpKey,
    text: &str,
    now: u32,
    sign: &mut DigestSigner,
) -> Result<String> {
    if text.lines().any(|l| l.ends_with([' ', '\t', '\r'])) {
        return Err(SignError::Format(hsm::text!(
            "signing.openpgp.trailing_whitespace",
            "a line ends with whitespace, which a cleartext signature does not cover"
        )));
    }
    let mut p = PendingSignature::new(key, SigType::Text, now, Subpackets::default());
    p.update(armor::canonical_text(text).as_bytes());
    let hash = p.hash();
    let digest = p.digest();
    let raw = sign(&digest)?;
    Ok(armor::cleartext(
        hash_name(hash),
        text,
        &p.finish(&digest, &raw)?,
    ))
}

#[cfg(test)]
mod tests;
