//! RFC 3161 time-stamps from a time-stamp authority (TSA): the HTTP exchange (RFC 3161 §3.4,
//! `application/timestamp-query` POSTed, `application/timestamp-reply` back), bounded by the
//! settings' timeout. Every answer is checked before its token goes into a signature
//! (`signing::tsp::check_response`: status granted, the imprint and nonce sent, the TSA's
//! signature, its `timeStamping` certificate, the CA file's chain when one is set); a TSA
//! that does not answer, or answers wrong, fails the file with its URL and the reason.

use std::time::Duration;

use signing::alg::DigestAlg;
use signing::tsp::Certificate;
use signing::tsp::TimestampInfo;
use signing::SignError;

use crate::error::{ApiError, ApiResult};
use crate::settings::TimestampAuthority;

/// The largest answer read from a TSA (a token with a certificate chain is a few kB).
const MAX_ANSWER: u64 = 1024 * 1024;

/// Why a TSA setting cannot be used (before anything is signed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TsaConfigError {
    #[error("the time-stamp authority URL '{0}' is not an http:// or https:// URL")]
    NotHttp(String),
    #[error("the time-stamp authority timeout must be between 1 and 300 seconds")]
    Timeout,
    #[error("the TSA CA file {path}: {reason}")]
    CaFile { path: String, reason: String },
}

impl From<TsaConfigError> for ApiError {
    fn from(e: TsaConfigError) -> Self {
        ApiError::invalid(format!("{}.", capitalize(&e.to_string())))
            .suggest("Check Settings → Timestamp authority (or hsmc sign --tsa).")
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The URL is `http://` or `https://` with a host, the timeout sensible.
pub fn check_authority(a: &TimestampAuthority) -> Result<(), TsaConfigError> {
    let uri: ureq::http::Uri = a
        .url
        .trim()
        .parse()
        .map_err(|_| TsaConfigError::NotHttp(a.url.clone()))?;
    let http = matches!(uri.scheme_str(), Some("http") | Some("https"));
    if !http || uri.host().is_none_or(str::is_empty) {
        return Err(TsaConfigError::NotHttp(a.url.clone()));
    }
    if !(1..=300).contains(&a.timeout_seconds) {
        return Err(TsaConfigError::Timeout);
    }
    Ok(())
}

/// A TSA ready to be asked: its URL, the CA its answers must chain to, an HTTP agent.
pub struct Tsa {
    pub url: String,
    ca: Option<Vec<Certificate>>,
    agent: ureq::Agent,
}

impl Tsa {
    /// Check the settings and read the CA file.
    pub fn open(a: &TimestampAuthority) -> ApiResult<Tsa> {
        check_authority(a)?;
        let ca = a.ca_file.as_deref().map(read_ca).transpose()?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(a.timeout_seconds)))
            .http_status_as_error(false)
            .max_redirects(0)
            .build()
            .into();
        Ok(Tsa {
            url: a.url.trim().to_string(),
            ca,
            agent,
        })
    }

    pub fn ca_checked(&self) -> bool {
        self.ca.is_some()
    }

    /// A checked token over `signature` (hashed with `alg`), or why there is none.
    pub fn stamp(
        &self,
        alg: DigestAlg,
        signature: &[u8],
    ) -> Result<(Vec<u8>, TimestampInfo), SignError> {
        let fail = |reason: String| SignError::Timestamp {
            tsa: self.url.clone(),
            reason,
        };
        let req = signing::tsp::request(alg, signature).map_err(|e| fail(e.to_string()))?;
        let answer = self.post(&req.der).map_err(fail)?;
        signing::tsp::check_response(&answer, &req, self.ca.as_deref())
            .map_err(|e| fail(e.to_string()))
    }

    fn post(&self, query: &[u8]) -> Result<Vec<u8>, String> {
        let mut resp = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/timestamp-query")
            .send(query)
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => "did not answer in time".to_string(),
                ureq::Error::Io(io) => format!("cannot be reached ({io})"),
                ureq::Error::ConnectionFailed => "cannot be reached (connection failed)".into(),
                ureq::Error::HostNotFound => "cannot be reached (host not found)".into(),
                other => format!("cannot be asked ({other})"),
            })?;
        let status = resp.status();
        if status != 200 {
            return Err(format!("answered HTTP {status}, not a time-stamp"));
        }
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !content_type.starts_with("application/timestamp-reply") {
            return Err(format!(
                "answered '{content_type}', not application/timestamp-reply"
            ));
        }
        resp.body_mut()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => "did not finish its answer in time".to_string(),
                other => format!("sent an answer that cannot be read ({other})"),
            })
    }
}

fn read_ca(path: &str) -> Result<Vec<Certificate>, TsaConfigError> {
    let err = |reason: String| TsaConfigError::CaFile {
        path: path.to_string(),
        reason,
    };
    let pem = std::fs::read(path).map_err(|e| err(format!("cannot be read ({e})")))?;
    let certs =
        signing::tsp::load_ca(&pem).map_err(|e| err(format!("is not PEM certificates ({e})")))?;
    if certs.is_empty() {
        return Err(err("holds no certificate".into()));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(url: &str) -> TimestampAuthority {
        TimestampAuthority {
            url: url.into(),
            ca_file: None,
            timeout_seconds: 5,
        }
    }

    #[test]
    fn only_http_urls_with_a_host() {
        for good in [
            "http://127.0.0.1:3180/",
            "https://tsa.example/ts",
            "HTTP://tsa.example",
        ] {
            assert_eq!(check_authority(&a(good)), Ok(()), "{good}");
        }
        for bad in [
            "ftp://tsa.example/",
            "tsa.example",
            "file:///tmp/x",
            "",
            "http://",
            "javascript:alert(1)",
        ] {
            assert_eq!(
                check_authority(&a(bad)),
                Err(TsaConfigError::NotHttp(bad.into())),
                "{bad}"
            );
        }
        let mut slow = a("http://tsa.example");
        slow.timeout_seconds = 0;
        assert_eq!(check_authority(&slow), Err(TsaConfigError::Timeout));
        let e = ApiError::from(TsaConfigError::NotHttp("ftp://x".into()));
        assert_eq!(e.code, crate::ErrorCode::InvalidInput);
        assert!(
            e.message
                .starts_with("The time-stamp authority URL 'ftp://x'"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_missing_ca_file_is_refused_before_signing() {
        let mut x = a("http://127.0.0.1:1/");
        x.ca_file = Some("/nonexistent/ca.pem".into());
        let e = Tsa::open(&x).err().unwrap();
        assert!(e.message.contains("/nonexistent/ca.pem"), "{}", e.message);
    }
}
