//! What `sign` and `verify` show.

use console::sign::SignReport;
use console::ApiResult;
use serde::Serialize;
use signing::verify::VerifyReport;

use crate::render::{Page, Render};

/// `sign`: each file's outputs or why it was not signed (exit 1 if any was not).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Signed(pub SignReport);

impl Render for Signed {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let r = &self.0;
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
                        writeln!(page, "    {:<7} {}", o.format, o.path);
                    }
                }
                Some(e) => writeln!(page, "{}  NOT SIGNED: {}", f.path, e.message),
            }
        }
        for o in &r.manifest {
            writeln!(page, "{:<22} {}", o.format, o.path);
        }
        if let Some(e) = &r.manifest_error {
            writeln!(page, "manifest: {}", e.message);
        }
        writeln!(
            page,
            "{} signature(s) with {} ({}), each verified in software before it was written",
            r.signatures_made, r.key.label, r.key.algorithm
        );
        if let Some(left) = r.hss_remaining_after {
            writeln!(page, "HSS signatures left on this key: {left}");
        }
        if r.stopped {
            writeln!(
                page,
                "stopped at the first failure (use --continue-on-error to go on)"
            );
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        let r = &self.0;
        if r.files.iter().any(|f| f.error.is_some()) || r.manifest_error.is_some() {
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
        writeln!(page, "  {}", r.detail);
        for e in &r.entries {
            writeln!(
                page,
                "  {} {} {}",
                if e.ok { "ok  " } else { "FAIL" },
                e.name,
                if e.ok { "" } else { &e.detail }
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
