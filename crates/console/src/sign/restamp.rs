//! Time-stamping a signature made earlier (`hsmc timestamp FILE.p7s|FILE.sig.json`): each
//! signature value without a token is sent to the TSA, the answer is checked as at signing
//! time ([`Tsa::stamp`]: status, imprint, nonce, the TSA's signature, its certificate and
//! its binding to the token, the CA file's chain), and the signature is written back under
//! the same name through a new file and a rename — never when it changed meanwhile, and
//! never the HSM: nothing is signed again.

use std::path::Path;

use audit::Event;
use serde::Serialize;
use signing::restamp::{BundleRestamp, CmsRestamp, RestampError};
use signing::tsp::TimestampInfo;

use super::sign_error;
use super::timestamp::Tsa;
use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::core::settings::TimestampAuthority;
use crate::sign::Signing;
use crate::text;

/// What `timestamp_signature` added.
#[derive(Debug, Clone, Serialize)]
pub struct RestampReport {
    /// The signature file, rewritten.
    pub path: String,
    /// `cms` or `bundle`.
    pub format: String,
    pub tsa: String,
    /// What each added token says (one per CMS signer that had none; one for a bundle).
    pub timestamps: Vec<TimestampInfo>,
}

impl Signing<'_> {
    /// Add an RFC 3161 token from `authority` to a CMS signature (every signer without
    /// one) or a JSON bundle, in place. Refused when it already has one. Recorded.
    pub async fn timestamp_signature(
        self,
        signature: &str,
        authority: &TimestampAuthority,
    ) -> ApiResult<RestampReport> {
        let tsa = Tsa::open(authority)?;
        let ev = Event::new("sign.timestamp", "artifact")
            .resource(signature)
            .meta("tsa", &tsa.url);
        let path = signature.to_string();
        let r = tokio::task::spawn_blocking(move || restamp_file(&path, &tsa))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
            .and_then(|r| r);
        let ev = match &r {
            Ok(report) => ev
                .meta("format", &report.format)
                .meta("tokens", report.timestamps.len()),
            Err(_) => ev,
        };
        self.record_outcome(ev, &r).await;
        r
    }
}

fn refused(path: &str, e: RestampError) -> ApiError {
    let reason = e.msg();
    ApiError::invalid(
        text!(
            "hsm.console.restamp_refused",
            "{{path}} cannot be time-stamped: {{reason}}.",
            path = path,
            reason = &reason
        )
        .nest("reason", &reason),
    )
}

/// Read, stamp, check nothing changed, write back.
fn restamp_file(path: &str, tsa: &Tsa) -> ApiResult<RestampReport> {
    let read = || {
        std::fs::read(path).map_err(|e| {
            ApiError::io(
                text!(
                    "hsm.console.cannot_read",
                    "cannot read {{path}}",
                    path = path
                ),
                &e,
            )
        })
    };
    let before = read()?;
    let mut timestamps = Vec::new();
    let mut stamp = |alg, signature: &[u8]| {
        tsa.stamp(alg, signature)
            .map(|(token, info)| {
                timestamps.push(info);
                token
            })
            .map_err(sign_error)
    };
    let is_json = before
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    let (after, format) = if is_json {
        let text = std::str::from_utf8(&before)
            .map_err(|e| refused(path, RestampError::NotASignature(e.to_string())))?;
        let b = BundleRestamp::open(text).map_err(|e| refused(path, e))?;
        let w = b.wanted().map_err(|e| refused(path, e))?;
        let token = stamp(w.alg, &w.signature)?;
        (
            b.with_token(&token).map_err(|e| refused(path, e))?,
            "bundle",
        )
    } else {
        let c = CmsRestamp::open(&before).map_err(|e| refused(path, e))?;
        let mut tokens = Vec::new();
        for (i, w) in c.wanted().map_err(|e| refused(path, e))? {
            tokens.push((i, stamp(w.alg, &w.signature)?));
        }
        (c.with_tokens(&tokens).map_err(|e| refused(path, e))?, "cms")
    };
    // The TSA took its time: the file must still be the one the tokens are for.
    if read()? != before {
        return Err(ApiError::invalid(text!(
            "hsm.console.restamp_changed",
            "{{path}} changed while its time-stamp was fetched; it was not rewritten. Time-stamp it again.",
            path = path
        )));
    }
    outfile::write_replace(Path::new(path), &after).map_err(|e| {
        ApiError::new(
            ErrorCode::Io,
            text!(
                "hsm.console.restamp_not_written",
                "{{path}} was not rewritten ({{error}}); it is as it was.",
                path = path,
                error = e
            ),
        )
    })?;
    Ok(RestampReport {
        path: path.to_string(),
        format: format.to_string(),
        tsa: tsa.url.clone(),
        timestamps,
    })
}
