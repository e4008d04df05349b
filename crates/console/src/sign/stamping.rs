//! Time-stamp tokens for a file's fresh signatures, asked for after the HSM signed and its
//! session went back to the pool: a TSA exchange (which may take up to its timeout) never
//! holds an HSM session. The CMS and bundle outputs are made unstamped on the session and
//! gain their tokens here, the way `hsmc timestamp` adds tokens to signatures made earlier
//! (`signing::restamp`), each token checked before it is added.

use signing::restamp::{BundleRestamp, CmsRestamp};
use signing::tsp::TimestampInfo;
use signing::SignError;

use super::timestamp::Tsa;
use super::SignFormat;

/// Where a file's signatures stand after the TSA was asked.
pub(super) struct Stamped {
    /// The tokens added, checked (for the audit record).
    pub timestamps: Vec<TimestampInfo>,
    /// Why the signatures carry no token although one was asked for: the TSA failed and
    /// the officer made it optional, or the key is an HSS key (its one-time key is spent:
    /// the signature is kept, `hsmc timestamp` adds the token later).
    pub unstamped: Option<String>,
}

/// Add a token to every CMS and bundle output in `files` (format, bytes). A TSA failure
/// fails the file, unless `keep_unstamped`: then the outputs stay as they are (the rest
/// are not asked for again) and [`Stamped::unstamped`] says why.
pub(super) fn stamp_outputs(
    files: &mut [(SignFormat, Vec<u8>)],
    tsa: &Tsa,
    keep_unstamped: bool,
) -> Result<Stamped, SignError> {
    let mut stamped = Stamped {
        timestamps: Vec::new(),
        unstamped: None,
    };
    for (format, bytes) in files.iter_mut() {
        let r = match format {
            SignFormat::Cms => stamp_cms(bytes, tsa),
            SignFormat::Bundle => stamp_bundle(bytes, tsa),
            _ => continue,
        };
        match r {
            Ok((with_token, info)) => {
                *bytes = with_token;
                stamped.timestamps.extend(info);
            }
            Err(SignError::Timestamp { tsa, reason }) if keep_unstamped => {
                stamped.unstamped = Some(format!("{tsa} {reason}"));
                stamped.timestamps.clear();
                return Ok(stamped);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(stamped)
}

fn restamp_failed(e: signing::restamp::RestampError) -> SignError {
    SignError::Format(e.msg())
}

fn stamp_cms(p7s: &[u8], tsa: &Tsa) -> Result<(Vec<u8>, Vec<TimestampInfo>), SignError> {
    let c = CmsRestamp::open(p7s).map_err(restamp_failed)?;
    let mut tokens = Vec::new();
    let mut infos = Vec::new();
    for (i, w) in c.wanted().map_err(restamp_failed)? {
        let (token, info) = tsa.stamp(w.alg, &w.signature)?;
        tokens.push((i, token));
        infos.push(info);
    }
    Ok((c.with_tokens(&tokens).map_err(restamp_failed)?, infos))
}

fn stamp_bundle(json: &[u8], tsa: &Tsa) -> Result<(Vec<u8>, Vec<TimestampInfo>), SignError> {
    let text = std::str::from_utf8(json).map_err(|e| {
        SignError::Format(hsm::text!(
            "signing.bundle_not_written",
            "{{error}}",
            error = e
        ))
    })?;
    let b = BundleRestamp::open(text).map_err(restamp_failed)?;
    let w = b.wanted().map_err(restamp_failed)?;
    let (token, info) = tsa.stamp(w.alg, &w.signature)?;
    Ok((b.with_token(&token).map_err(restamp_failed)?, vec![info]))
}
