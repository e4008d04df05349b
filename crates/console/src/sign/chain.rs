//! Certificate chain files given at signing time (`hsmc sign --chain FILE`, the Sign view's
//! "Certificate chain…"): read and parsed when the request is checked, then the path from
//! the signer's certificate through them checked link by link (names and signatures, in
//! software) once the key is read — both before anything is signed. See
//! [`signing::chain`] for the rules (any order, the signer's own certificate allowed,
//! token-held issuers carried once).

use std::path::Path;

use signing::chain::{ChainError, GivenCertificate};

use super::key::SigningKey;
use super::SignFormat;
use crate::core::error::{ApiError, ApiResult};
use crate::text;

/// The certificates of every chain file, in the order given. Refused (naming the file)
/// when a file cannot be read, holds no certificate, a public key or a private key, or
/// when no format carries a chain.
pub(super) fn read_files(
    files: &[String],
    formats: &[SignFormat],
) -> ApiResult<Vec<GivenCertificate>> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    if !formats.contains(&SignFormat::Cms) {
        return Err(ApiError::invalid(text!(
            "errors.chain_needs_cms",
            "A certificate chain goes into CMS signatures; choose the CMS format."
        )));
    }
    let mut out = Vec::new();
    for f in files {
        out.extend(signing::chain::read_file(Path::new(f)).map_err(chain_error)?);
    }
    Ok(out)
}

/// The key's certificate and chain for this batch: the path from its certificate (the
/// token's, or the one a chain file holds for the key) through the given certificates and
/// the token's issuers, each link checked.
pub(super) fn apply(key: &mut SigningKey, given: &[GivenCertificate]) -> ApiResult<()> {
    if given.is_empty() {
        return Ok(());
    }
    let a = signing::chain::assemble(&key.pk, key.cert.as_deref(), &key.chain, given)
        .map_err(chain_error)?;
    key.cert = Some(a.certificate);
    key.chain = a.chain;
    Ok(())
}

/// A chain refused, as the officer reads it; nothing was signed.
fn chain_error(e: ChainError) -> ApiError {
    let message = match &e {
        ChainError::Unreadable { reason, .. } => text!(
            "errors.chain_file_unusable",
            "Cannot use the certificate chain file {{reason}}.",
            reason = reason
        ),
        ChainError::PrivateKey { file } => text!(
            "errors.chain_file_private_key",
            "{{file}} holds a private key; a certificate chain file holds certificates only.",
            file = file
        ),
        ChainError::PublicKey { file } => text!(
            "errors.chain_file_public_key",
            "{{file}} holds a public key; a certificate chain file holds certificates.",
            file = file
        ),
        ChainError::NoSignerCertificate => text!(
            "errors.chain_without_signer_certificate",
            "The key has no certificate on the token and the chain files hold none for it; a chain starts from the signer's certificate."
        ),
        ChainError::DoesNotChain {
            file,
            subject,
            last,
            expected,
        } => text!(
            "errors.chain_does_not_chain",
            "{{file}}: the certificate {{subject}} does not chain to the signing certificate; the path ends at {{last}}, whose issuer is {{expected}}.",
            file = file,
            subject = subject,
            last = last,
            expected = expected
        ),
        ChainError::BadSignature {
            file,
            subject,
            child,
            reason,
        } => text!(
            "errors.chain_bad_signature",
            "{{file}}: {{subject}} has the name of the issuer of {{child}}, but its key does not verify that certificate's signature ({{reason}}).",
            file = file,
            subject = subject,
            child = child,
            reason = reason
        ),
        ChainError::Ambiguous {
            file,
            subject,
            child,
        } => text!(
            "errors.chain_ambiguous",
            "{{file}}: two different certificates could be the one for {{child}} ({{subject}} and another); keep only the one the CA used.",
            file = file,
            subject = subject,
            child = child
        ),
    };
    let suggestion = match e {
        ChainError::NoSignerCertificate => text!(
            "errors.chain_import_signer_certificate",
            "Import the certificate the CA issued for the key (Objects → Import), or add it to the chain file."
        ),
        _ => text!(
            "errors.chain_give_issuers",
            "Give the issuers of the signing certificate up to the root, in PEM or DER, without private keys."
        ),
    };
    ApiError::invalid(message)
        .details(text!("errors.nothing_signed", "Nothing was signed."))
        .suggest(suggestion)
}
