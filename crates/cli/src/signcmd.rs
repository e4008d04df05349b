//! `hsmc sign` and `hsmc verify`: the console's signing service with progress bars on a
//! terminal, and its offline verifier.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use console::sign::{OnError, SignFormat, SignProgress, SignRequest};
use console::{ApiResult, Console};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::args::{Global, SigFormat, SignArgs, VerifyArgs};
use crate::commands::{login, partition};
use crate::output;

pub async fn sign(c: &Console, g: &Global, a: &SignArgs) -> ApiResult<u8> {
    let p = partition(c, g).await?;
    login(c, g, &p, true).await?;
    let formats = a
        .format
        .iter()
        .map(|f| match f {
            SigFormat::Cms => SignFormat::Cms,
            SigFormat::Raw => SignFormat::Raw,
            SigFormat::Bundle => SignFormat::Bundle,
        })
        .collect();
    let req = SignRequest {
        key: a.key.clone(),
        files: a.files.iter().map(|f| f.display().to_string()).collect(),
        formats,
        manifest: a.manifest,
        out_dir: a.out.as_ref().map(|d| d.display().to_string()),
        context: a.context.clone(),
        on_error: if a.continue_on_error {
            OnError::Continue
        } else {
            OnError::Stop
        },
        confirm_hss: a.yes_hss,
    };
    // One bar per file on a terminal; nothing when piped.
    let multi = MultiProgress::with_draw_target(if std::io::stderr().is_terminal() && !g.json {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    });
    let style = ProgressStyle::with_template("{prefix:30!} {bar:30} {bytes}/{total_bytes} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    let bars: Vec<ProgressBar> = a
        .files
        .iter()
        .map(|f| {
            let b = multi.add(ProgressBar::new(0));
            b.set_style(style.clone());
            b.set_prefix(
                f.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
            b
        })
        .collect();
    let bars2 = bars.clone();
    let progress = Arc::new(move |p: SignProgress| match p {
        SignProgress::Hashing { index, done, total } => {
            if let Some(b) = bars2.get(index) {
                b.set_length(total);
                b.set_position(done);
                b.set_message("hashing");
            }
        }
        SignProgress::Signing { index } => {
            if let Some(b) = bars2.get(index) {
                b.set_message("signing on the HSM");
            }
        }
        SignProgress::Done { index } => {
            if let Some(b) = bars2.get(index) {
                b.finish_with_message("signed, verified");
            }
        }
        SignProgress::Failed { index, message } => {
            if let Some(b) = bars2.get(index) {
                b.abandon_with_message(format!("FAILED: {message}"));
            }
        }
    });
    let r = c
        .sign_files(&p.id, req, progress, Arc::new(AtomicBool::new(false)))
        .await?;
    multi.clear().ok();
    let failed = r.files.iter().any(|f| f.error.is_some()) || r.manifest_error.is_some();
    if g.json {
        output::json(&r);
    } else {
        for f in &r.files {
            match &f.error {
                None => {
                    println!(
                        "{}  sha256 {}",
                        f.path,
                        f.sha256.clone().unwrap_or_default()
                    );
                    for o in &f.outputs {
                        println!("    {:<7} {}", o.format, o.path);
                    }
                }
                Some(e) => println!("{}  NOT SIGNED: {}", f.path, e.message),
            }
        }
        for o in &r.manifest {
            println!("{:<22} {}", o.format, o.path);
        }
        if let Some(e) = &r.manifest_error {
            println!("manifest: {}", e.message);
        }
        println!(
            "{} signature(s) with {} ({}), each verified in software before it was written",
            r.signatures_made, r.key.label, r.key.algorithm
        );
        if let Some(left) = r.hss_remaining_after {
            println!("HSS signatures left on this key: {left}");
        }
        if r.stopped {
            println!("stopped at the first failure (use --continue-on-error to go on)");
        }
    }
    Ok(if failed { 1 } else { 0 })
}

pub async fn verify(c: &Console, g: &Global, a: &VerifyArgs) -> ApiResult<u8> {
    let pubkey = a.public_key.as_ref().map(|p| p.display().to_string());
    let r = c
        .verify_signature(
            &a.file.display().to_string(),
            &a.sig.display().to_string(),
            pubkey.as_deref(),
            a.context.as_deref(),
        )
        .await?;
    if g.json {
        output::json(&r);
    } else {
        println!(
            "{}: {} ({})",
            if r.valid { "VALID" } else { "INVALID" },
            r.file,
            r.format
        );
        if let Some(alg) = &r.algorithm {
            println!("  algorithm   {alg}");
        }
        if let Some(s) = &r.signer {
            println!("  signer      {s}");
        }
        if let Some(f) = &r.key_fingerprint {
            println!("  key         {f}");
        }
        if let Some(t) = &r.signing_time {
            println!("  signed at   {t}");
        }
        println!("  {}", r.detail);
        for e in &r.entries {
            println!(
                "  {} {} {}",
                if e.ok { "ok  " } else { "FAIL" },
                e.name,
                if e.ok { "" } else { &e.detail }
            );
        }
    }
    Ok(if r.valid { 0 } else { 3 })
}
