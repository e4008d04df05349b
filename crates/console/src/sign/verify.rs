//! Verifying a file against a signature offline, with the software verifiers only.

use std::path::PathBuf;

use audit::Event;
use hsm::pubkey::PublicKey;

use super::sign_error;
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::sign::Signing;
use crate::text;

impl Signing<'_> {
    /// Verify a file against a signature offline (software verifiers only). Recorded.
    pub async fn verify_signature(
        self,
        file: &str,
        signature: &str,
        public_key_pem: Option<&str>,
        context: Option<&str>,
    ) -> ApiResult<signing::verify::VerifyReport> {
        // The format is recognised from the content; an unreadable file is the classic
        // verifier's to report.
        let sig = std::fs::read(signature).unwrap_or_default();
        let r = if let Some(kind) = signing::openpgp::verify::kind(&sig) {
            let cert = read_key_file(public_key_pem)?;
            let f = PathBuf::from(file);
            blocking(move || signing::openpgp::report::verify_file(&f, &sig, kind, cert.as_deref()))
                .await?
        } else if signing::minisign::is_signature(&sig) {
            let pk = read_key_file(public_key_pem)?;
            let f = PathBuf::from(file);
            blocking(move || signing::minisign::report(&f, &sig, pk.as_deref())).await?
        } else if signing::sshsig::is_signature(&sig) {
            let pk = read_key_file(public_key_pem)?;
            let f = PathBuf::from(file);
            blocking(move || signing::sshsig::report(&f, &sig, pk.as_deref())).await?
        } else {
            self.verify_classic(file, signature, public_key_pem, context)
                .await?
        };
        self.record_verification(file, signature, &r).await;
        Ok(r)
    }

    /// Verify a signed `SHA256SUMS` whose listed files are in `files_dir` (`hsmc verify
    /// --files`, what a verifier kit runs on its copy of the manifest). Recorded.
    pub async fn verify_manifest_files(
        self,
        manifest: &str,
        signature: &str,
        public_key_pem: &str,
        files_dir: &str,
    ) -> ApiResult<signing::verify::VerifyReport> {
        let pk = read_public_key(public_key_pem)?;
        let (m, s, d) = (
            PathBuf::from(manifest),
            PathBuf::from(signature),
            PathBuf::from(files_dir),
        );
        let r = blocking(move || signing::verify::verify_manifest_in(&m, &s, &pk, &d)).await?;
        self.record_verification(manifest, signature, &r).await;
        Ok(r)
    }

    /// The audit record of a verification.
    pub(super) async fn record_verification(
        self,
        file: &str,
        signature: &str,
        r: &signing::verify::VerifyReport,
    ) {
        let ev = Event::new("verify", "artifact")
            .resource(file)
            .meta("signature", signature)
            .meta("format", r.format)
            .meta("detail", &r.detail);
        let ev = match &r.algorithm {
            Some(a) => ev.algorithm(a),
            None => ev,
        };
        self.record(if r.valid {
            ev
        } else {
            ev.failed(ErrorCode::SignatureInvalid.to_string())
        })
        .await;
    }

    /// CMS, raw, bundle and manifest signatures.
    async fn verify_classic(
        self,
        file: &str,
        signature: &str,
        public_key_pem: Option<&str>,
        context: Option<&str>,
    ) -> ApiResult<signing::verify::VerifyReport> {
        let pk = public_key_pem.map(read_public_key).transpose()?;
        let (f, s, ctx) = (
            PathBuf::from(file),
            PathBuf::from(signature),
            context.unwrap_or("").as_bytes().to_vec(),
        );
        let r = tokio::task::spawn_blocking(move || {
            let is_manifest = f.file_name().map(|n| n == "SHA256SUMS").unwrap_or(false);
            match (is_manifest, &pk) {
                (true, Some(k)) => signing::verify::verify_manifest(&f, &s, k),
                _ => signing::verify::verify_file(&f, &s, pk.as_ref(), &ctx),
            }
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(sign_error)?;
        Ok(r)
    }
}

/// A public key named for verification: PEM SPKI, or a certificate's.
pub(super) fn read_public_key(p: &str) -> ApiResult<PublicKey> {
    let text = std::fs::read_to_string(p).map_err(|e| {
        ApiError::io(
            text!("hsm.console.cannot_read", "cannot read {{path}}", path = p),
            &e,
        )
    })?;
    let bad = |e: &dyn std::fmt::Display| {
        ApiError::invalid(text!(
            "errors.path_error",
            "{{path}}: {{error}}",
            path = p,
            error = e
        ))
    };
    if text.contains("BEGIN CERTIFICATE") {
        let der_bytes = der::pem::decode_vec(text.as_bytes())
            .map_err(|e| bad(&e))?
            .1;
        Ok(signing::cert::public_key(&der_bytes).map_err(sign_error)?.1)
    } else {
        PublicKey::from_spki_pem(&text).map_err(|e| bad(&e))
    }
}

/// The bytes of a key file named for verification (an OpenPGP certificate, a
/// `minisign.pub`).
fn read_key_file(path: Option<&str>) -> ApiResult<Option<Vec<u8>>> {
    path.map(|p| {
        std::fs::read(p).map_err(|e| {
            ApiError::io(
                text!("hsm.console.cannot_read", "cannot read {{path}}", path = p),
                &e,
            )
        })
    })
    .transpose()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> signing::Result<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(sign_error)
}
