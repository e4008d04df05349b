//! Offline verification of every format the console writes, with software verifiers only:
//! detached CMS (`.p7s`), raw signatures (`.sig` + a public key), JSON bundles, and signed
//! `SHA256SUMS` manifests. The format is recognised from the signature file's content.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use hsm::pubkey::PublicKey;

use crate::alg::{DigestAlg, SigAlg};
use crate::formats::{parse_manifest, Bundle};
use crate::hashing::hash_file;
use crate::input::check;
use crate::{Result, SignError};

// A report's sentences are `Text`s like every message (the UI's catalogs have
// `verify.details.*`), so each language can write them; `detail` keeps the English.
use hsm::{text, Text};

pub mod succession;

/// The verdict on one artifact.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct VerifyReport {
    pub file: String,
    pub format: SignatureFormat,
    pub valid: bool,
    pub algorithm: Option<String>,
    /// SHA-256 fingerprint of the signer's public key.
    pub key_fingerprint: Option<String>,
    /// The certificate subject (CMS) or key label (bundle).
    pub signer: Option<String>,
    pub signing_time: Option<String>,
    /// Why it failed, or what was checked.
    pub detail: String,
    /// The same as a catalog text (absent when `detail` is an error's own words).
    pub detail_text: Option<Text>,
    /// Manifest: each listed file and whether it matches.
    pub entries: Vec<ManifestEntry>,
    /// The RFC 3161 time-stamp over the signature (CMS, bundle), checked.
    pub timestamp: Option<crate::tsp::TimestampInfo>,
}

/// What kind of signature file was checked (recognised from its content).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum SignatureFormat {
    Cms,
    Raw,
    Bundle,
    Manifest,
    /// OpenPGP: a detached signature (`.asc`, `.gpg`) or a cleartext-signed manifest.
    Openpgp,
    Minisign,
    /// SSHSIG (`.sshsig`, namespace `file`).
    Sshsig,
    /// A key succession statement and the signatures of both its keys.
    Succession,
}

hsm::wire_display!(SignatureFormat);

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ManifestEntry {
    pub name: String,
    pub ok: bool,
    pub detail: String,
    pub detail_text: Option<Text>,
}

fn digest_of(file: &Path, alg: DigestAlg) -> Result<Vec<u8>> {
    let inp = check(file)?;
    let d = hash_file(&inp, &[alg], &|_| {}, &AtomicBool::new(false))?;
    d.get(alg).ok_or_else(|| {
        SignError::Format(hsm::text!(
            "signing.digest_not_computed",
            "digest not computed"
        ))
    })
}

/// Verify `file` against the raw signature `sig` with `pk`.
pub fn verify_raw(file: &Path, sig: &[u8], pk: &PublicKey, context: &[u8]) -> Result<SigAlg> {
    let alg = SigAlg::for_key(pk)?;
    if alg.whole_message() {
        crate::whole::verify_file(alg, pk, file, context, sig)?;
    } else {
        alg.verify_digest(pk, &digest_of(file, alg.digest())?, sig)?;
    }
    Ok(alg)
}

pub(crate) fn report(file: &Path, format: SignatureFormat) -> VerifyReport {
    VerifyReport {
        file: file.display().to_string(),
        format,
        valid: false,
        algorithm: None,
        key_fingerprint: None,
        signer: None,
        signing_time: None,
        detail: String::new(),
        detail_text: None,
        entries: Vec::new(),
        timestamp: None,
    }
}

impl VerifyReport {
    /// Set the detail from a catalog text.
    fn say(&mut self, t: Text) {
        self.detail = t.text.clone();
        self.detail_text = Some(t);
    }
}

/// Verify `file` with the signature in `sig_path`. `pubkey` is required for raw signatures
/// and pins the key for the others.
pub fn verify_file(
    file: &Path,
    sig_path: &Path,
    pubkey: Option<&PublicKey>,
    context: &[u8],
) -> Result<VerifyReport> {
    let sig = std::fs::read(sig_path).map_err(|e| SignError::Input {
        path: sig_path.display().to_string(),
        reason: hsm::text!(
            "errors.inputs.unreadable",
            "cannot be read: {{error}}",
            error = e
        ),
    })?;
    // A bundle is a JSON document. A raw signature may start with the byte '{' too (one in
    // 256 do), so only JSON is taken for a bundle.
    if let Some(text) = bundle_text(&sig) {
        return verify_bundle(file, &Bundle::parse(text)?, pubkey);
    }
    if let Ok(signers) = crate::cms::parse_signers(&sig) {
        return match signers.as_slice() {
            [one] => verify_cms(file, one, pubkey),
            _ => verify_cms_signers(file, &signers, pubkey),
        };
    }
    let pk = pubkey.ok_or_else(|| {
        SignError::Format(hsm::text!(
            "signing.raw_needs_public_key",
            "a raw signature needs the signer's public key (--pub KEY.pem)"
        ))
    })?;
    let mut r = report(file, SignatureFormat::Raw);
    r.key_fingerprint = Some(pk.fingerprint());
    match verify_raw(file, &sig, pk, context) {
        Ok(alg) => {
            r.valid = true;
            r.algorithm = Some(alg.name());
            r.say(text!(
                "verify.details.raw_ok",
                "{{algorithm}} signature over the file verifies",
                algorithm = alg.name()
            ));
        }
        Err(e) => r.detail = e.to_string(),
    }
    Ok(r)
}

/// A detached CMS signer over `file`: its certificate's key (or `pinned`, which must be
/// it), the file's digest in the signed attributes, the signature over them, its token.
fn verify_cms(
    file: &Path,
    parsed: &crate::cms::Parsed,
    pinned: Option<&PublicKey>,
) -> Result<VerifyReport> {
    let mut r = report(file, SignatureFormat::Cms);
    r.signing_time = parsed.signing_time.clone();
    r.signer = crate::cms::certificate(parsed).map(|c| c.tbs_certificate().subject().to_string());
    let digest = digest_of(file, parsed.digest_alg)?;
    match crate::cms::verify(parsed, &digest, pinned) {
        Ok((pk, alg)) => {
            r.valid = true;
            r.algorithm = Some(alg.name());
            r.key_fingerprint = Some(pk.fingerprint());
            r.say(text!("verify.details.cms_ok", "the signed attributes carry the file's {{digest}} digest and the {{algorithm}} signature over them verifies", digest = parsed.digest_alg, algorithm = alg.name()));
            check_timestamp(&mut r, parsed.timestamp_token.as_deref(), &parsed.signature);
        }
        Err(e) => r.detail = e.to_string(),
    }
    Ok(r)
}

/// A `.p7s` with several signers (dual signing: one per key). With `pinned`, the signer
/// whose certificate carries that key is checked (the others are not: a verifier that
/// trusts one key asks about that one); without, every signer must verify.
fn verify_cms_signers(
    file: &Path,
    signers: &[crate::cms::Parsed],
    pinned: Option<&PublicKey>,
) -> Result<VerifyReport> {
    let count = signers.len();
    if let Some(pk) = pinned {
        let key_of = |p: &crate::cms::Parsed| {
            p.certificate
                .as_deref()
                .and_then(|c| crate::cert::public_key(c).ok())
                .map(|(_, k)| k)
        };
        let Some(p) = signers.iter().find(|p| key_of(p).as_ref() == Some(pk)) else {
            let mut r = report(file, SignatureFormat::Cms);
            r.say(text!(
                "verify.details.cms_no_pinned_signer",
                "none of its {{count}} signers has the expected public key",
                count = count
            ));
            return Ok(r);
        };
        let mut r = verify_cms(file, p, Some(pk))?;
        if r.valid {
            let stamped = r
                .timestamp
                .as_ref()
                .map(|t| format!("; time-stamped {} by {}", t.time, t.tsa_subject));
            r.say(text!("verify.details.cms_pinned_signer_ok", "the signer with the expected key, one of {{count}}, verifies: its signed attributes carry the file's {{digest}} digest and the {{algorithm}} signature over them verifies", count = count, digest = p.digest_alg, algorithm = r.algorithm.clone().unwrap_or_default()));
            r.detail.extend(stamped);
        }
        return Ok(r);
    }
    let mut all = report(file, SignatureFormat::Cms);
    let (mut algorithms, mut subjects, mut keys) = (Vec::new(), Vec::new(), Vec::new());
    for (i, p) in signers.iter().enumerate() {
        let one = verify_cms(file, p, None)?;
        if !one.valid {
            all.algorithm = one.algorithm;
            all.signer = one.signer;
            all.say(text!(
                "verify.details.cms_signer_bad",
                "signer {{n}} of {{count}} does not verify: {{error}}",
                n = i + 1,
                count = count,
                error = &one.detail
            ));
            return Ok(all);
        }
        algorithms.extend(one.algorithm);
        subjects.extend(one.signer);
        keys.extend(one.key_fingerprint);
        all.signing_time = all.signing_time.or(one.signing_time);
        all.timestamp = all.timestamp.or(one.timestamp);
    }
    all.valid = true;
    all.algorithm = Some(algorithms.join(" + "));
    all.signer = Some(subjects.join("; "));
    all.key_fingerprint = Some(keys.join(" + "));
    all.say(text!("verify.details.cms_signers_ok", "all {{count}} signers verify: the signed attributes of each carry the file's digest and each signature over them verifies ({{algorithms}})", count = count, algorithms = algorithms.join(", ")));
    Ok(all)
}

/// A time-stamp token over `signature`, if the signature carries one: shown in the report,
/// and a token that does not check makes the verdict invalid (the TSA's certificate is
/// checked for its `timeStamping` use, not against a CA: the verifier names none).
fn check_timestamp(r: &mut VerifyReport, token: Option<&[u8]>, signature: &[u8]) {
    let Some(token) = token else { return };
    match crate::tsp::verify_token_for(token, signature, None) {
        Ok(info) => {
            // The translated sentence stays as it was: the UI shows the time and the
            // authority in rows of their own.
            r.detail = format!(
                "{}; time-stamped {} by {}",
                r.detail, info.time, info.tsa_subject
            );
            r.timestamp = Some(info);
        }
        Err(e) => {
            r.valid = false;
            r.say(text!(
                "verify.details.timestamp_bad",
                "the signature verifies but its time-stamp does not: {{error}}",
                error = e
            ));
        }
    }
}

fn bundle_text(sig: &[u8]) -> Option<&str> {
    if sig.first() != Some(&b'{') {
        return None;
    }
    let text = std::str::from_utf8(sig).ok()?;
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .map(|_| text)
}

/// Verify a bundle: the file's size and digests, and the signature with the bundle's key (or
/// `pinned`, which must be that key).
pub fn verify_bundle(file: &Path, b: &Bundle, pinned: Option<&PublicKey>) -> Result<VerifyReport> {
    let mut r = report(file, SignatureFormat::Bundle);
    r.signer = Some(b.key.label.clone());
    r.signing_time = Some(b.signed_at.clone());
    r.algorithm = Some(b.algorithm.clone());
    let pk = PublicKey::from_spki_pem(&b.key.public_key).map_err(crate::unusable_key)?;
    r.key_fingerprint = Some(pk.fingerprint());
    if let Some(p) = pinned {
        if p != &pk {
            r.say(text!(
                "verify.details.bundle_other_key",
                "the bundle's key is not the expected public key"
            ));
            return Ok(r);
        }
    }
    let inp = check(file)?;
    let d = hash_file(&inp, &[DigestAlg::Sha512], &|_| {}, &AtomicBool::new(false))?;
    if d.size != b.file.size
        || d.sha256 != b.file.sha256
        || d.sha512.as_deref() != Some(b.file.sha512.as_str())
    {
        r.say(text!("verify.details.bundle_file_differs", "the file's size or digests differ from the bundle's: it is not the file that was signed"));
        return Ok(r);
    }
    use base64::Engine;
    let sig = base64::engine::general_purpose::STANDARD
        .decode(&b.signature)
        .map_err(|e| {
            SignError::Format(hsm::text!(
                "signing.signature_not_base64",
                "signature is not base64: {{error}}",
                error = e
            ))
        })?;
    match verify_raw(file, &sig, &pk, &b.context()) {
        Ok(alg) if alg == b.scheme => {
            r.valid = true;
            r.say(text!(
                "verify.details.bundle_ok",
                "{{algorithm}} signature over the file verifies; size and SHA-256/512 match",
                algorithm = alg.name()
            ));
            match b
                .timestamp_token
                .as_deref()
                .map(|t| base64::engine::general_purpose::STANDARD.decode(t))
            {
                None => {}
                Some(Ok(token)) => check_timestamp(&mut r, Some(&token), &sig),
                Some(Err(e)) => {
                    r.valid = false;
                    r.say(text!(
                        "verify.details.timestamp_not_base64",
                        "the time-stamp token is not base64: {{error}}",
                        error = e
                    ));
                }
            }
        }
        Ok(alg) => r.say(text!(
            "verify.details.bundle_scheme_differs",
            "the bundle says {{said}} but the key signs {{algorithm}}",
            said = b.scheme.name(),
            algorithm = alg.name()
        )),
        Err(e) => r.detail = e.to_string(),
    }
    Ok(r)
}

/// Verify a signed `SHA256SUMS`: its signature, then every listed file (next to it).
pub fn verify_manifest(manifest: &Path, sig_path: &Path, pk: &PublicKey) -> Result<VerifyReport> {
    let dir = manifest.parent().unwrap_or(Path::new("."));
    verify_manifest_in(manifest, sig_path, pk, dir)
}

/// As [`verify_manifest`], the listed files in `dir` (a verifier kit's copy of the
/// manifest is not beside the artifacts).
pub fn verify_manifest_in(
    manifest: &Path,
    sig_path: &Path,
    pk: &PublicKey,
    dir: &Path,
) -> Result<VerifyReport> {
    let mut r = report(manifest, SignatureFormat::Manifest);
    r.key_fingerprint = Some(pk.fingerprint());
    let sig = std::fs::read(sig_path).map_err(|e| SignError::Input {
        path: sig_path.display().to_string(),
        reason: hsm::text!(
            "errors.inputs.unreadable",
            "cannot be read: {{error}}",
            error = e
        ),
    })?;
    match verify_raw(manifest, &sig, pk, &[]) {
        Ok(alg) => r.algorithm = Some(alg.name()),
        Err(e) => {
            r.say(text!(
                "verify.details.manifest_signature_bad",
                "the manifest's signature does not verify: {{error}}",
                error = e
            ));
            return Ok(r);
        }
    }
    let text = std::fs::read_to_string(manifest).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.manifest_unreadable",
            "{{error}}",
            error = e
        ))
    })?;
    check_listed(&mut r, dir, &text)?;
    Ok(r)
}

/// Every file a signed manifest lists (in `dir`) against its digest: `r.entries`, and
/// `r.valid` when all match.
/// A cleartext-signed text that lists no files (apt's `InRelease`, any text file): the
/// signature over the text is the verdict.
pub(crate) fn cleartext_verified(r: &mut VerifyReport) {
    r.valid = true;
    r.say(text!(
        "verify.details.cleartext_ok",
        "the cleartext signature over the text verifies"
    ));
}

pub(crate) fn check_listed(r: &mut VerifyReport, dir: &Path, text: &str) -> Result<()> {
    let mut all = true;
    for (sha, name) in parse_manifest(text)? {
        let p = dir.join(&name);
        let (ok, detail, detail_text) = match check(&p)
            .and_then(|inp| hash_file(&inp, &[], &|_| {}, &AtomicBool::new(false)))
        {
            Ok(d) if d.sha256 == sha => {
                let t = text!("verify.details.entry_matches", "matches");
                (true, t.text.clone(), Some(t))
            }
            Ok(_) => {
                let t = text!(
                    "verify.details.entry_differs",
                    "differs from the signed digest"
                );
                (false, t.text.clone(), Some(t))
            }
            Err(e) => (false, e.to_string(), None),
        };
        all &= ok;
        r.entries.push(crate::verify::ManifestEntry {
            name,
            ok,
            detail,
            detail_text,
        });
    }
    r.valid = all;
    let n = r.entries.len();
    r.say(if all {
        text!(
            "verify.details.manifest_ok",
            "signature verifies and all {{files}} files match",
            files = n
        )
    } else {
        text!(
            "verify.details.manifest_some_differ",
            "some files do not match the signed manifest"
        )
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raw_signature_starting_with_a_brace_is_not_taken_for_a_bundle() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("a.bin");
        std::fs::write(&file, b"artifact").unwrap();
        let sig = d.path().join("a.bin.sig");
        // What an ML-DSA signature beginning with 0x7b looks like: not UTF-8, not JSON.
        let mut raw = vec![b'{'];
        raw.extend((0..2419u32).map(|i| (i * 131 % 251) as u8 | 0x80));
        std::fs::write(&sig, &raw).unwrap();
        let e = verify_file(&file, &sig, None, b"").unwrap_err();
        assert!(e.to_string().contains("raw signature needs"), "{e}");
        assert!(bundle_text(br#"{"format": "x"}"#).is_some());
        assert!(bundle_text(b"{not json").is_none());
    }
}
