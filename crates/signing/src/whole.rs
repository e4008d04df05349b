//! The schemes that sign the message itself (ML-DSA, HSS/LMS, Ed25519), for files of any
//! size a token takes: which way the token is given the file, and the software check,
//! which reads the file again — both stream it, so a file of gigabytes needs no more
//! memory than a part of it.
//!
//! - HSS: one `C_Sign` up to Luna's single-part limit (48,108 bytes), `C_SignUpdate` /
//!   `C_SignFinal` above (the token hashes as the parts come).
//! - ML-DSA: one `C_Sign` up to 64 KiB; above, multi-part where the token takes it; where
//!   it refuses (Kryoptic over OpenSSL 3.5 buffers multi-part ML-DSA and stops at 1 MiB),
//!   external μ (FIPS 204 §6.2: μ = SHAKE256(tr ‖ M′) computed here, the token signs μ)
//!   where it offers a mechanism for that (Luna's `CKM_EXTMU_ML_DSA`, the PKCS#11 3.3
//!   draft's `CKM_ML_DSA_EXTERNAL_MU`); otherwise a refusal that says so.
//! - Ed25519 (PureEdDSA reads the message twice): one `C_Sign` up to 1 MiB; above,
//!   multi-part where the token takes PureEdDSA in parts (Kryoptic keeps the message until
//!   `C_SignFinal`); otherwise a refusal that names the limit and CMS.
//!
//! Which way was used ([`SignPath`]) goes into the bundle and the audit record. The
//! signature is the same either way: a verifier cannot tell and need not know.

use std::fs::File;
use std::io::Read;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sha3::digest::{ExtendableOutput, Update as _, XofReader};

use hsm::algo::MlDsaSet;
use hsm::pubkey::PublicKey;
use p11::sys::*;
use p11::{Family, Mechanism, ObjectHandle, Session};

use crate::alg::{ml_dsa_set, SigAlg};
use crate::input::InputFile;
use crate::{Result, SignError, MAX_WHOLE_MESSAGE};

/// How the token was given the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
pub enum SignPath {
    /// The whole message in one `C_Sign`.
    SinglePart,
    /// `C_SignUpdate` per part, then `C_SignFinal`.
    MultiPart,
    /// μ computed by the console, signed by the token (ML-DSA).
    ExternalMu,
}

hsm::wire_display!(SignPath);

/// Luna's single-part `CKM_HSS` limit (the seed article; lunasim enforces it).
pub const HSS_SINGLE_PART_MAX: u64 = 48_108;
/// ML-DSA messages up to this go in one call (what every token here takes at once).
pub const ML_DSA_SINGLE_PART_MAX: u64 = 64 << 10;
/// The PKCS#11 3.3 draft's external-μ ML-DSA mechanism (`identifier_db/pkcs11v3.3`).
pub const CKM_ML_DSA_EXTERNAL_MU: CK_MECHANISM_TYPE = 0x403C;
/// Bytes read and given to the token per part.
const PART: usize = 1 << 20;

/// A signature over a file, checked in software, and how the token made it.
#[derive(Debug, Clone)]
pub struct Signed {
    pub signature: Vec<u8>,
    pub path: SignPath,
}

/// The file's bytes, read in parts, each part also hashed so the caller can tell they are
/// the bytes that were hashed before.
struct Parts {
    file: File,
    sha256: Sha256,
    buf: Vec<u8>,
    path: String,
}

impl Parts {
    fn open(input: &InputFile) -> Result<Parts> {
        let path = input.path.display().to_string();
        let file = File::open(&input.path).map_err(|e| SignError::Input {
            path: path.clone(),
            reason: hsm::text!(
                "errors.inputs.unreadable",
                "cannot be read: {{error}}",
                error = e
            ),
        })?;
        Ok(Parts {
            file,
            sha256: Sha256::new(),
            buf: vec![0; PART],
            path,
        })
    }

    /// The next part (empty at the end).
    fn next(&mut self) -> Result<&[u8]> {
        let mut n = 0;
        while n < self.buf.len() {
            match self.file.read(&mut self.buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(SignError::Input {
                        path: self.path.clone(),
                        reason: hsm::text!(
                            "errors.inputs.unreadable",
                            "cannot be read: {{error}}",
                            error = e
                        ),
                    })
                }
            }
        }
        Digest::update(&mut self.sha256, &self.buf[..n]);
        Ok(&self.buf[..n])
    }

    /// Refuse bytes that are not the ones hashed before.
    fn check(self, sha256: &str) -> Result<()> {
        if hex::encode(self.sha256.finalize()) != sha256 {
            return Err(SignError::Changed(self.path));
        }
        Ok(())
    }
}

fn read_all(input: &InputFile, sha256: &str) -> Result<Vec<u8>> {
    let bytes = std::fs::read(&input.path).map_err(|e| SignError::Input {
        path: input.path.display().to_string(),
        reason: hsm::text!(
            "errors.inputs.unreadable",
            "cannot be read: {{error}}",
            error = e
        ),
    })?;
    if hex::encode(Sha256::digest(&bytes)) != sha256 {
        return Err(SignError::Changed(input.path.display().to_string()));
    }
    Ok(bytes)
}

/// What the token is asked to sign a whole file with.
pub struct FileSigner<'a> {
    pub alg: SigAlg,
    pub session: &'a Session,
    pub key: ObjectHandle,
    pub pk: &'a PublicKey,
    /// ML-DSA's context string (empty for none).
    pub context: &'a [u8],
}

impl FileSigner<'_> {
    /// Sign the file's bytes, which must hash to `sha256` (the digest the batch recorded),
    /// and check the signature in software over the file before returning it.
    pub fn sign(&self, input: &InputFile, sha256: &str) -> Result<Signed> {
        let signed = match self.alg {
            SigAlg::Hss => self.sign_hss(input, sha256)?,
            SigAlg::MlDsa { set } => self.sign_ml_dsa(set, input, sha256)?,
            SigAlg::Ed25519 => self.sign_ed25519(input, sha256)?,
            _ => self.sign_single(input, sha256)?,
        };
        verify_file(
            self.alg,
            self.pk,
            &input.path,
            self.context,
            &signed.signature,
        )
        .map_err(SignError::into_self_check)?;
        Ok(signed)
    }

    fn sign_single(&self, input: &InputFile, sha256: &str) -> Result<Signed> {
        refuse_beyond(self.alg, input, MAX_WHOLE_MESSAGE)?;
        let bytes = read_all(input, sha256)?;
        Ok(Signed {
            signature: self
                .alg
                .sign(self.session, self.key, &bytes, self.context)?,
            path: SignPath::SinglePart,
        })
    }

    fn sign_hss(&self, input: &InputFile, sha256: &str) -> Result<Signed> {
        if input.size() <= HSS_SINGLE_PART_MAX {
            return self.sign_single(input, sha256);
        }
        let signature = self.multi_part(&Mechanism::new(CKM_HSS), input, sha256)?;
        Ok(Signed {
            signature,
            path: SignPath::MultiPart,
        })
    }

    /// Up to 1 MiB in one `C_Sign`; above, multi-part where the token takes PureEdDSA in
    /// parts (it keeps the message until `C_SignFinal`, as PureEdDSA hashes it twice), and
    /// a refusal naming the limit and CMS where it does not.
    fn sign_ed25519(&self, input: &InputFile, sha256: &str) -> Result<Signed> {
        if input.size() <= MAX_WHOLE_MESSAGE {
            return self.sign_single(input, sha256);
        }
        match self.multi_part(&Mechanism::new(CKM_EDDSA), input, sha256) {
            Ok(signature) => Ok(Signed {
                signature,
                path: SignPath::MultiPart,
            }),
            Err(SignError::Hsm(e)) => Err(SignError::Unsupported(hsm::text!(
                "signing.ed25519_too_large_for_token",
                "{{file}} is {{size}} bytes; this token signs Ed25519 messages of at most {{mib}} MiB at once and refused it in parts ({{error}}) — choose the CMS format for it",
                file = input.name(),
                size = input.size(),
                mib = MAX_WHOLE_MESSAGE >> 20,
                error = e
            ))),
            Err(other) => Err(other),
        }
    }

    fn sign_ml_dsa(&self, set: MlDsaSet, input: &InputFile, sha256: &str) -> Result<Signed> {
        if input.size() <= ML_DSA_SINGLE_PART_MAX {
            return self.sign_single(input, sha256);
        }
        let refused = match self.multi_part(&ml_dsa_mechanism(self.context), input, sha256) {
            Ok(signature) => {
                return Ok(Signed {
                    signature,
                    path: SignPath::MultiPart,
                })
            }
            // The token's refusal of the size, or a fault: either way not a signature.
            Err(SignError::Hsm(e)) => e,
            Err(other) => return Err(other),
        };
        let Some(mech) = external_mu_mechanism(self.session) else {
            return Err(SignError::Unsupported(hsm::text!(
                "signing.ml_dsa_too_large_for_token",
                "{{file}} is {{size}} bytes; this token refused it as a multi-part ML-DSA message ({{error}}) and offers no external-μ signing (Luna's CKM_EXTMU_ML_DSA) — choose the CMS format for it",
                file = input.name(),
                size = input.size(),
                error = refused
            )));
        };
        let PublicKey::MlDsa { key: pk, .. } = self.pk else {
            return Err(SignError::Format(hsm::text!(
                "signing.ml_dsa_without_public_key",
                "an ML-DSA key without its public key"
            )));
        };
        let mu = external_mu(pk, self.context, input, sha256)?;
        let signature = self.session.sign(&Mechanism::new(mech), self.key, &mu)?;
        if signature.len() != ml_dsa_set(set).signature_len() {
            return Err(SignError::SelfCheck(hsm::text!(
                "signing.external_mu_signature_length",
                "the token's external-μ signature has {{got}} bytes, not {{want}}",
                got = signature.len(),
                want = ml_dsa_set(set).signature_len()
            )));
        }
        Ok(Signed {
            signature,
            path: SignPath::ExternalMu,
        })
    }

    /// `C_SignInit`, the file in parts through `C_SignUpdate`, `C_SignFinal`.
    fn multi_part(&self, mech: &Mechanism, input: &InputFile, sha256: &str) -> Result<Vec<u8>> {
        let mut parts = Parts::open(input)?;
        self.session.sign_init(mech, self.key)?;
        loop {
            let part = parts.next()?;
            if part.is_empty() {
                break;
            }
            self.session.sign_update(part)?;
        }
        let signature = self.session.sign_final()?;
        // Signed already (for HSS: a one-time key is spent), but over other bytes than the
        // ones hashed: it is not written.
        parts.check(sha256)?;
        Ok(signature)
    }
}

fn ml_dsa_mechanism(context: &[u8]) -> Mechanism {
    if context.is_empty() {
        Mechanism::new(CKM_ML_DSA)
    } else {
        Mechanism::with_sign_context(CKM_ML_DSA, context, p11::mechanism::Hedge::Preferred)
    }
}

/// The token's external-μ ML-DSA mechanism, if it lists one: Luna's vendor mechanism on a
/// Luna module (vendor numbers mean other things elsewhere), or the 3.3 draft's.
pub fn external_mu_mechanism(s: &Session) -> Option<CK_MECHANISM_TYPE> {
    let module = s.module();
    let list = module.mechanisms(s.slot()).ok()?;
    if module.family() == Family::Luna && list.contains(&p11::names::luna::CKM_EXTMU_ML_DSA) {
        return Some(p11::names::luna::CKM_EXTMU_ML_DSA);
    }
    list.contains(&CKM_ML_DSA_EXTERNAL_MU)
        .then_some(CKM_ML_DSA_EXTERNAL_MU)
}

/// FIPS 204 Algorithm 2 step 6 and Algorithm 7 step 6: μ = SHAKE256(tr ‖ M′, 64) with
/// tr = SHAKE256(pk, 64) and M′ = 0 ‖ |ctx| ‖ ctx ‖ M, the file streamed into it. Written
/// here (not taken from the verifier's library) so the software check that follows is a
/// second opinion on it.
pub fn external_mu(
    public_key: &[u8],
    context: &[u8],
    input: &InputFile,
    sha256: &str,
) -> Result<[u8; 64]> {
    let mut parts = Parts::open(input)?;
    let mut h = mu_prefix(public_key, context)?;
    loop {
        let part = parts.next()?;
        if part.is_empty() {
            break;
        }
        h.update(part);
    }
    parts.check(sha256)?;
    Ok(mu_finish(h))
}

fn mu_prefix(public_key: &[u8], context: &[u8]) -> Result<sha3::Shake256> {
    let ctx_len = u8::try_from(context.len()).map_err(|_| {
        SignError::Unsupported(hsm::text!(
            "signing.ml_dsa_context_too_long",
            "ML-DSA contexts are at most 255 bytes"
        ))
    })?;
    let mut tr = [0u8; 64];
    let mut t = sha3::Shake256::default();
    t.update(public_key);
    XofReader::read(&mut t.finalize_xof(), &mut tr);
    let mut h = sha3::Shake256::default();
    h.update(&tr);
    h.update(&[0, ctx_len]);
    h.update(context);
    Ok(h)
}

fn mu_finish(h: sha3::Shake256) -> [u8; 64] {
    let mut mu = [0u8; 64];
    XofReader::read(&mut h.finalize_xof(), &mut mu);
    mu
}

fn refuse_beyond(alg: SigAlg, input: &InputFile, limit: u64) -> Result<()> {
    if input.size() > limit {
        return Err(SignError::Unsupported(hsm::text!(
            "signing.whole_message_too_large",
            "{{alg}} signs whole messages and tokens take at most {{mib}} MiB at once; {{file}} is larger — choose the CMS format for it",
            alg = alg.name(),
            mib = limit >> 20,
            file = input.name()
        )));
    }
    Ok(())
}

/// Verify a whole-message signature over the file at `path`, streaming it where the scheme
/// allows (HSS, ML-DSA): the same check for a file of any size.
pub fn verify_file(
    alg: SigAlg,
    pk: &PublicKey,
    path: &std::path::Path,
    context: &[u8],
    signature: &[u8],
) -> Result<()> {
    let input = crate::input::check(path)?;
    let open = || {
        File::open(path).map_err(|e| SignError::Input {
            path: path.display().to_string(),
            reason: hsm::text!(
                "errors.inputs.unreadable",
                "cannot be read: {{error}}",
                error = e
            ),
        })
    };
    let invalid = |e: swverify::VerifyError| {
        SignError::Invalid(hsm::text!(
            "signing.signature_does_not_verify",
            "{{alg}} signature does not verify: {{error}}",
            alg = alg.name(),
            error = e
        ))
    };
    if input.size() <= MAX_WHOLE_MESSAGE {
        let bytes = std::fs::read(path).map_err(|e| SignError::Input {
            path: path.display().to_string(),
            reason: hsm::text!(
                "errors.inputs.unreadable",
                "cannot be read: {{error}}",
                error = e
            ),
        })?;
        return alg.verify(pk, &bytes, context, signature);
    }
    match (alg, pk) {
        (SigAlg::Hss, PublicKey::Hss { key }) => {
            swverify::hss::verify_reader(key, &mut open()?, signature).map_err(invalid)
        }
        (SigAlg::MlDsa { set }, PublicKey::MlDsa { key, .. }) => {
            swverify::ml_dsa_reader(ml_dsa_set(set), key, &mut open()?, context, signature)
                .map_err(invalid)
        }
        (
            SigAlg::Ed25519,
            PublicKey::Ec {
                curve: hsm::algo::Curve::Ed25519,
                point,
            },
        ) => swverify::ed25519_reader(point, &mut open()?, signature).map_err(invalid),
        _ => Err(SignError::Unsupported(hsm::text!(
            "signing.whole_message_verify_too_large",
            "{{alg}} signs whole messages; files over {{mib}} MiB are signed and verified in CMS (.p7s) form",
            alg = alg.name(),
            mib = MAX_WHOLE_MESSAGE >> 20
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mu_follows_fips_204() {
        // μ of "abc" with context "ctx" for a made-up public key, against SHAKE256 of the
        // spelled-out input.
        let pk = [7u8; 1312];
        let mut h = mu_prefix(&pk, b"ctx").unwrap();
        h.update(b"abc");
        let mu = mu_finish(h);
        let mut tr = [0u8; 64];
        let mut t = sha3::Shake256::default();
        t.update(&pk);
        XofReader::read(&mut t.finalize_xof(), &mut tr);
        let mut whole = tr.to_vec();
        whole.extend_from_slice(&[0, 3]);
        whole.extend_from_slice(b"ctx");
        whole.extend_from_slice(b"abc");
        let mut want = [0u8; 64];
        let mut t = sha3::Shake256::default();
        t.update(&whole);
        XofReader::read(&mut t.finalize_xof(), &mut want);
        assert_eq!(mu, want);
        assert!(mu_prefix(&pk, &[0u8; 256]).is_err());
    }

    /// μ from [`external_mu`], signed by RustCrypto's ML-DSA as a token with external μ
    /// would, verifies as pure ML-DSA over the whole file — in memory and streamed.
    #[test]
    fn external_mu_signatures_are_pure_ml_dsa_over_the_file() {
        use ml_dsa::{Keypair, MlDsa65, SigningKey};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("image.bin");
        let data: Vec<u8> = (0..3 * PART as u32 + 17).map(|i| (i % 249) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let input = crate::input::check(&path).unwrap();
        let sha = hex::encode(Sha256::digest(&data));
        let sk = SigningKey::<MlDsa65>::from_seed(&[3u8; 32].into());
        let pk_bytes = sk.verifying_key().encode().to_vec();
        let pk = PublicKey::MlDsa {
            set: MlDsaSet::P65,
            key: pk_bytes.clone(),
        };
        for ctx in [&b""[..], b"release"] {
            let mu = external_mu(&pk_bytes, ctx, &input, &sha).unwrap();
            let sig = sk
                .expanded_key()
                .sign_mu_deterministic(&mu.into())
                .encode()
                .to_vec();
            let alg = SigAlg::MlDsa { set: MlDsaSet::P65 };
            swverify::ml_dsa(swverify::MlDsa::P65, &pk_bytes, &data, ctx, &sig).unwrap();
            verify_file(alg, &pk, &path, ctx, &sig).expect("streamed check");
            assert!(verify_file(alg, &pk, &path, b"other", &sig).is_err());
        }
        // Bytes that are not the hashed ones are refused.
        assert!(matches!(
            external_mu(&pk_bytes, b"", &input, &"00".repeat(32)),
            Err(SignError::Changed(_))
        ));
    }
}
