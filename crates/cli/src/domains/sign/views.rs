//! What `sign`, `verify` and `timestamp` show.

use console::sign::{RestampReport, SignReport};
use console::ApiResult;
use serde::Serialize;
use signing::verify::VerifyReport;

use crate::render::{Page, Render};
use console::i18n::InLang;

/// `sign`: each file's outputs or why it was not signed, and the verifier kit when one was
/// asked for (exit 1 if a file was not signed or the kit was not written).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Signed(pub SignReport);

impl Render for Signed {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let r = &self.0;
        // With several keys, a shared output (the .p7s) names its signers.
        let several = r.keys.len() > 1;
        let signers = |o: &console::sign::OutputView| {
            if several && o.signed_by.len() > 1 {
                format!("  ({})", o.signed_by.join(" + "))
            } else {
                String::new()
            }
        };
        for f in &r.files {
            match &f.error {
                None => {
                    writeln!(
                        page,
                        "{}  sha256 {}",
                        f.path,
                        f.sha256.clone().unwrap_or_default()
                    );
                    for o in &f.outputs {
                        writeln!(page, "    {:<7} {}{}", o.format, o.path, signers(o));
                    }
                    if let Some(why) = &f.unstamped {
                        writeln!(page, "    note: {}", why.in_lang(page.lang()));
                    }
                }
                Some(e) => {
                    let why = e.message_in(page.lang());
                    match &f.failed_key {
                        Some(k) => writeln!(page, "{}  NOT SIGNED ({k}): {why}", f.path),
                        None => writeln!(page, "{}  NOT SIGNED: {why}", f.path),
                    }
                }
            }
        }
        for o in &r.manifest {
            writeln!(page, "{:<22} {}", o.format, o.path);
        }
        if let Some(e) = &r.manifest_error {
            writeln!(page, "manifest: {}", e.message_in(page.lang()));
        }
        let keys: Vec<String> = r
            .keys
            .iter()
            .map(|k| format!("{} ({})", k.key.label, k.key.algorithm))
            .collect();
        let keys = match keys.is_empty() {
            true => format!("{} ({})", r.key.label, r.key.algorithm),
            false => keys.join(" and "),
        };
        writeln!(
            page,
            "{} signature(s) with {keys}, each verified in software before it was written",
            r.signatures_made
        );
        if several {
            for k in r.keys.iter().filter(|k| k.hss_remaining_after.is_some()) {
                let left = k.hss_remaining_after.unwrap_or_default();
                writeln!(page, "HSS signatures left on {}: {left}", k.key.label);
            }
        } else if let Some(left) = r.hss_remaining_after {
            writeln!(page, "HSS signatures left on this key: {left}");
        }
        if r.stopped {
            writeln!(
                page,
                "stopped at the first failure (use --continue-on-error to go on)"
            );
        }
        if let Some(k) = &r.kit {
            writeln!(
                page,
                "verifier kit {}: {} files, {} checks (run {}/verify.sh)",
                k.dir,
                k.files.len(),
                k.checks.len(),
                k.dir
            );
        }
        if let Some(e) = &r.kit_error {
            writeln!(page, "verifier kit: {}", e.message_in(page.lang()));
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        let r = &self.0;
        if r.files.iter().any(|f| f.error.is_some())
            || r.manifest_error.is_some()
            || r.kit_error.is_some()
        {
            1
        } else {
            0
        }
    }
}

/// `verify`: the verdict and what it rests on (exit 3 if the signature does not hold).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct SignatureCheck(pub VerifyReport);

impl Render for SignatureCheck {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let r = &self.0;
        writeln!(
            page,
            "{}: {} ({})",
            if r.valid { "VALID" } else { "INVALID" },
            r.file,
            r.format
        );
        if let Some(alg) = &r.algorithm {
            writeln!(page, "  algorithm   {alg}");
        }
        if let Some(s) = &r.signer {
            writeln!(page, "  signer      {s}");
        }
        if let Some(f) = &r.key_fingerprint {
            writeln!(page, "  key         {f}");
        }
        if let Some(t) = &r.signing_time {
            writeln!(page, "  signed at   {t}");
        }
        if let Some(t) = &r.timestamp {
            writeln!(page, "  timestamp   {} (RFC 3161)", t.time);
            writeln!(page, "  TSA         {}", t.tsa_subject);
            if let Some(n) = t.tsa_name.as_ref().filter(|n| **n != t.tsa_subject) {
                writeln!(page, "  TSA name    {n}");
            }
        }
        // The verdict's sentences in the reader's language where they have a catalog text.
        let lang = page.lang();
        let said = |t: &Option<hsm::Text>, english: &str| match t {
            Some(t) => t.in_lang(lang),
            None => english.to_string(),
        };
        writeln!(page, "  {}", said(&r.detail_text, &r.detail));
        for e in &r.entries {
            let detail = said(&e.detail_text, &e.detail);
            writeln!(
                page,
                "  {} {} {}",
                if e.ok { "ok  " } else { "FAIL" },
                e.name,
                // A file that matches needs no words; a signature that verifies says by whom.
                if e.ok && e.detail_text.is_none() {
                    ""
                } else {
                    &detail
                }
            );
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        if self.0.valid {
            0
        } else {
            3
        }
    }
}

/// `timestamp`: the signature rewritten, and the time and TSA of each token it gained.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Restamped(pub RestampReport);

impl Render for Restamped {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let r = &self.0;
        writeln!(
            page,
            "{} ({}): {} time-stamp token(s) added from {}",
            r.path,
            r.format,
            r.timestamps.len(),
            r.tsa
        );
        for t in &r.timestamps {
            writeln!(page, "  timestamp   {} (RFC 3161)", t.time);
            writeln!(page, "  TSA         {}", t.tsa_subject);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use console::sign::{BatchKey, FileOutcome, OutputView, SigningKeyView};
    use console::ApiError;
    use signing::alg::SigAlg;
    use signing::verify::ManifestEntry;

    use super::*;
    use crate::render::testing::{json, text};

    fn report(manifest_error: Option<ApiError>) -> SignReport {
        let key = SigningKeyView {
            handle: 1,
            label: "rel".into(),
            id_hex: "0a".into(),
            algorithm: "Ed25519".into(),
            scheme: SigAlg::Ed25519,
            fingerprint: "SHA256:ab".into(),
            hss_remaining: None,
            hss_capacity: None,
            has_certificate: false,
            certificate_subject: None,
            certificate_warnings: Vec::new(),
            certificate_warnings_text: Vec::new(),
            always_authenticate: false,
        };
        SignReport {
            keys: vec![BatchKey {
                key: key.clone(),
                formats: vec![console::sign::SignFormat::Raw],
                name_stem: None,
                signatures_made: 1,
                hss_remaining_after: None,
            }],
            key,
            files: vec![FileOutcome {
                path: "/r/a.bin".into(),
                name: "a.bin".into(),
                size: Some(3),
                sha256: Some("cd".into()),
                outputs: vec![OutputView {
                    format: console::sign::OutputKind::Raw,
                    path: "/r/a.bin.sig".into(),
                    verified: true,
                    signed_by: vec!["rel".into()],
                }],
                error: None,
                unstamped: None,
                failed_key: None,
            }],
            manifest: Vec::new(),
            manifest_error,
            stopped: false,
            cancelled: false,
            hss_remaining_after: None,
            signatures_made: 1,
            kit: None,
            kit_error: None,
        }
    }

    #[test]
    fn a_failed_manifest_fails_the_batch() {
        let ok = Signed(report(None));
        assert_eq!(
            text(&ok).0,
            "/r/a.bin  sha256 cd\n    raw     /r/a.bin.sig\n1 signature(s) with rel (Ed25519), each verified in software before it was written\n"
        );
        assert_eq!(ok.exit_code(), 0);
        let failed = Signed(report(Some(ApiError::invalid("SHA256SUMS exists"))));
        assert!(text(&failed).0.contains("manifest: SHA256SUMS exists\n"));
        assert_eq!(failed.exit_code(), 1);
        assert!(json(&failed).0.starts_with("{\n  \"key\": {"));
    }

    /// With two keys: the shared `.p7s` names its signers, a file one key could not sign
    /// names that key, the summary names both keys and each HSS key's count.
    #[test]
    fn a_dual_signed_batch_names_its_keys() {
        let mut r = report(None);
        let mut pq = r.keys[0].clone();
        pq.key.label = "pq".into();
        pq.key.algorithm = "HSS".into();
        pq.hss_remaining_after = Some(7);
        r.keys.push(pq);
        r.files[0].outputs = vec![OutputView {
            format: console::sign::OutputKind::Cms,
            path: "/r/a.bin.p7s".into(),
            verified: true,
            signed_by: vec!["rel".into(), "pq".into()],
        }];
        let mut failed = r.files[0].clone();
        failed.path = "/r/b.bin".into();
        failed.error = Some(ApiError::invalid("b.bin.pq.sig already exists"));
        failed.failed_key = Some("pq".into());
        r.files.push(failed);
        assert_eq!(
            text(&Signed(r)).0,
            "/r/a.bin  sha256 cd\n    cms     /r/a.bin.p7s  (rel + pq)\n\
             /r/b.bin  NOT SIGNED (pq): b.bin.pq.sig already exists\n\
             1 signature(s) with rel (Ed25519) and pq (HSS), each verified in software before it was written\n\
             HSS signatures left on pq: 7\n"
        );
    }

    #[test]
    fn an_invalid_manifest_lists_each_file_and_exits_3() {
        let v = SignatureCheck(VerifyReport {
            file: "SHA256SUMS".into(),
            format: signing::verify::SignatureFormat::Manifest,
            valid: false,
            algorithm: None,
            key_fingerprint: None,
            signer: None,
            signing_time: None,
            detail: "some files do not match".into(),
            detail_text: None,
            entries: vec![
                ManifestEntry {
                    name: "a".into(),
                    ok: true,
                    detail: String::new(),
                    detail_text: None,
                },
                ManifestEntry {
                    name: "b".into(),
                    ok: false,
                    detail: "changed".into(),
                    detail_text: None,
                },
            ],
            timestamp: None,
        });
        assert_eq!(
            text(&v).0,
            "INVALID: SHA256SUMS (manifest)\n  some files do not match\n  ok   a \n  FAIL b changed\n"
        );
        assert_eq!(v.exit_code(), 3);
        assert!(json(&v).0.contains("\"valid\": false"));
    }

    #[test]
    fn a_timestamp_shows_its_time_and_tsa() {
        let v = SignatureCheck(VerifyReport {
            file: "a.bin".into(),
            format: signing::verify::SignatureFormat::Cms,
            valid: true,
            algorithm: Some("ECDSA P-256 SHA-256".into()),
            key_fingerprint: None,
            signer: None,
            signing_time: None,
            detail: "verifies".into(),
            detail_text: None,
            entries: Vec::new(),
            timestamp: Some(signing::tsp::TimestampInfo {
                time: "2026-12-01T12:00:00Z".into(),
                tsa_subject: "CN=Test TSA".into(),
                tsa_name: Some("CN=Test TSA".into()),
                policy: "1.2.3.4.1".into(),
                serial: "01".into(),
                hash: signing::alg::DigestAlg::Sha256,
                ca_checked: false,
            }),
        });
        assert_eq!(
            text(&v).0,
            "VALID: a.bin (cms)\n  algorithm   ECDSA P-256 SHA-256\n  timestamp   2026-12-01T12:00:00Z (RFC 3161)\n  TSA         CN=Test TSA\n  verifies\n"
        );
        assert!(json(&v).0.contains("\"tsa_subject\": \"CN=Test TSA\""));
    }
}
