//! `hsmc verify` and the Verify view for OpenPGP: a detached signature over a file, a
//! cleartext-signed `SHA256SUMS.asc` and the files it lists, or any other cleartext-signed
//! text (apt's `InRelease`), with the signer's certificate.

use std::path::Path;

use super::verify::{self, Certificate, Kind};
use crate::formats::parse_manifest;
use crate::verify::{check_listed, cleartext_verified, report, SignatureFormat, VerifyReport};
use crate::{Result, SignError};

fn time(secs: Option<u32>) -> Option<String> {
    let t = time::OffsetDateTime::from_unix_timestamp(secs?.into()).ok()?;
    t.format(&time::format_description::well_known::Rfc3339)
        .ok()
}

/// Verify `file` with the OpenPGP signature `sig` (of `kind`) and the certificate in
/// `cert` (armored or binary; required: a signature names its key only by fingerprint).
/// For a cleartext-signed message `file` is the signed file (whose text must be the signed
/// text: `SHA256SUMS`, apt's `Release`) or the message itself; the files a manifest lists
/// are checked beside it.
pub fn verify_file(
    file: &Path,
    sig: &[u8],
    kind: Kind,
    cert: Option<&[u8]>,
) -> Result<VerifyReport> {
    let cert = cert.ok_or_else(|| {
        SignError::Format(hsm::text!(
            "signing.openpgp.needs_certificate",
            "an OpenPGP signature needs the signer's certificate (--pub KEY.asc, from `hsmc keys openpgp`)"
        ))
    })?;
    let c = Certificate::read(cert)?;
    let mut r = report(file, SignatureFormat::Openpgp);
    r.signer = c.user_ids().into_iter().next();
    r.key_fingerprint = Some(c.fingerprint());
    r.algorithm = Some(format!("OpenPGP {:?}", c.primary_public_algorithm()));
    match kind {
        Kind::Armored | Kind::Binary => {
            let data = std::fs::File::open(file).map_err(|e| SignError::Input {
                path: file.display().to_string(),
                reason: hsm::text!(
                    "errors.inputs.unreadable",
                    "cannot be read: {{error}}",
                    error = e
                ),
            })?;
            match verify::check_detached(c.primary(), sig, std::io::BufReader::new(data)) {
                Ok(v) => {
                    r.valid = true;
                    r.signing_time = time(v.created);
                    r.detail = format!(
                        "OpenPGP signature ({}) over the file verifies with {}",
                        v.hash, v.fingerprint
                    );
                }
                Err(e) => r.detail = e.to_string(),
            }
        }
        Kind::Cleartext => {
            let text = std::str::from_utf8(sig).map_err(|_| {
                SignError::Format(hsm::text!(
                    "signing.openpgp.cleartext_not_text",
                    "a cleartext-signed message is text"
                ))
            })?;
            let (signed, v) = match verify::check_cleartext(c.primary(), text) {
                Ok(x) => x,
                Err(e) => {
                    r.detail = e.to_string();
                    return Ok(r);
                }
            };
            r.signing_time = time(v.created);
            let given = std::fs::read(file).map_err(|e| SignError::Input {
                path: file.display().to_string(),
                reason: hsm::text!(
                    "errors.inputs.unreadable",
                    "cannot be read: {{error}}",
                    error = e
                ),
            })?;
            if given != sig {
                let given = String::from_utf8_lossy(&given);
                if given.strip_suffix('\n').unwrap_or(&given) != signed {
                    r.detail =
                        "the signature verifies, but over other text than this file's".into();
                    return Ok(r);
                }
            }
            // A manifest's listed files are checked; any other text (apt's `InRelease`)
            // is what the signature covers, and that verified.
            match parse_manifest(&signed) {
                Ok(listed) if !listed.is_empty() => {
                    check_listed(&mut r, file.parent().unwrap_or(Path::new(".")), &signed)?
                }
                _ => cleartext_verified(&mut r),
            }
        }
    }
    Ok(r)
}
