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

use crate::core::error::ApiResult;
use crate::core::i18n::Text;
use crate::core::settings::{check_authority, TimestampAuthority, TsaConfigError};
use crate::text;

/// The largest answer read from a TSA (a token with a certificate chain is a few kB).
const MAX_ANSWER: u64 = 1024 * 1024;

/// A TSA ready to be asked: its URL, the CA its answers must chain to, an HTTP agent.
pub struct Tsa {
    pub url: String,
    /// Sign without a token when this TSA fails (the officer chose so).
    pub optional: bool,
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
            optional: a.optional.unwrap_or(false),
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
        let fail = |reason: hsm::Text| SignError::Timestamp {
            tsa: self.url.clone(),
            reason,
        };
        let req = signing::tsp::request(alg, signature).map_err(|e| fail(e.msg()))?;
        let answer = self.post(&req.der).map_err(&fail)?;
        signing::tsp::check_response(&answer, &req, self.ca.as_deref()).map_err(|e| fail(e.msg()))
    }

    /// The TSA's answer, or why there is none (the rest of the sentence "The time-stamp
    /// authority URL …").
    fn post(&self, query: &[u8]) -> Result<Vec<u8>, Text> {
        let mut resp = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/timestamp-query")
            .send(query)
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => {
                    text!(
                        "hsm.console.tsa_no_answer_in_time",
                        "did not answer in time"
                    )
                }
                ureq::Error::Io(io) => text!(
                    "hsm.console.tsa_unreachable",
                    "cannot be reached ({{error}})",
                    error = io
                ),
                ureq::Error::ConnectionFailed => text!(
                    "hsm.console.tsa_connection_failed",
                    "cannot be reached (connection failed)"
                ),
                ureq::Error::HostNotFound => text!(
                    "hsm.console.tsa_host_not_found",
                    "cannot be reached (host not found)"
                ),
                other => text!(
                    "hsm.console.tsa_cannot_be_asked",
                    "cannot be asked ({{error}})",
                    error = other
                ),
            })?;
        let status = resp.status();
        if status != 200 {
            return Err(text!(
                "hsm.console.tsa_http_status",
                "answered HTTP {{status}}, not a time-stamp",
                status = status
            ));
        }
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !content_type.starts_with("application/timestamp-reply") {
            return Err(text!(
                "hsm.console.tsa_wrong_content_type",
                "answered '{{content_type}}', not application/timestamp-reply",
                content_type = content_type
            ));
        }
        resp.body_mut()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => text!(
                    "hsm.console.tsa_answer_not_finished",
                    "did not finish its answer in time"
                ),
                other => text!(
                    "hsm.console.tsa_answer_unreadable",
                    "sent an answer that cannot be read ({{error}})",
                    error = other
                ),
            })
    }
}

fn read_ca(path: &str) -> Result<Vec<Certificate>, TsaConfigError> {
    let err = |reason: Text| TsaConfigError::CaFile {
        path: path.to_string(),
        reason,
    };
    let pem = std::fs::read(path).map_err(|e| {
        err(text!(
            "hsm.console.tsa_ca_unreadable",
            "cannot be read ({{error}})",
            error = e
        ))
    })?;
    let certs = signing::tsp::load_ca(&pem).map_err(|e| {
        err(text!(
            "hsm.console.tsa_ca_not_pem",
            "is not PEM certificates ({{error}})",
            error = e
        ))
    })?;
    if certs.is_empty() {
        return Err(err(text!(
            "hsm.console.tsa_ca_no_certificate",
            "holds no certificate"
        )));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ApiError;

    fn a(url: &str) -> TimestampAuthority {
        TimestampAuthority {
            url: url.into(),
            ca_file: None,
            timeout_seconds: 5,
            optional: None,
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
        assert_eq!(e.code, crate::core::error::ErrorCode::InvalidInput);
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
