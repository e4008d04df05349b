//! One signature over a payload a caller hands over in memory (git's commits and tags, for
//! `hsmc git-ssh` and `hsmc git-gpg`): recorded before the HSM is asked (nothing is signed
//! when the trail cannot record it) and after, with the payload's size and SHA-512 and what
//! the caller says it is.

use std::future::Future;

use audit::Event;
use signing::alg::DigestAlg;

use crate::core::error::ApiResult;
use crate::sign::Signing;

/// What both records of one payload signature say.
pub(super) struct PayloadRecord<'a> {
    pub partition: &'a str,
    /// What was signed, as the trail's resource (`git commit`, a file name).
    pub resource: &'a str,
    pub algorithm: &'a str,
    /// `sshsig`, `openpgp`.
    pub format: &'static str,
    pub payload: &'a [u8],
    /// The key: label, ID and fingerprint.
    pub key: serde_json::Value,
    /// The format's own fields and the caller's context (signer, repository, object type).
    pub fields: Vec<(&'a str, serde_json::Value)>,
}

impl PayloadRecord<'_> {
    fn event(&self, action: &str) -> Event {
        let mut ev = Event::new(action, "artifact");
        for (k, v) in &self.fields {
            ev = ev.meta(k, v);
        }
        ev.resource(self.resource)
            .algorithm(self.algorithm)
            .meta("partition", self.partition)
            .meta("format", self.format)
            .meta("size", self.payload.len())
            .meta(
                "sha512",
                hex::encode(DigestAlg::Sha512.digest(self.payload)),
            )
            .meta("key", &self.key)
    }
}

impl Signing<'_> {
    /// `sign` (the HSM's part, checked in software before it returns), between a
    /// `sign.request` record that must be written first and a `sign` record of its outcome.
    pub(super) async fn sign_payload_recorded<T>(
        self,
        rec: &PayloadRecord<'_>,
        sign: impl Future<Output = ApiResult<T>>,
    ) -> ApiResult<T> {
        self.audit_first(rec.event("sign.request")).await?;
        let r = sign.await;
        match &r {
            Ok(_) => {
                self.record(rec.event("sign").meta("signatures", 1).meta(
                    "verified",
                    "software verifier accepted the signature before it was returned",
                ))
                .await
            }
            Err(e) => {
                self.record(
                    rec.event("sign")
                        .failed(e.code.to_string())
                        .meta("error", &e.message),
                )
                .await
            }
        }
        r
    }
}
