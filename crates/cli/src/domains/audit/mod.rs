//! `hsmc audit …`: read, verify and export the audit trail.

pub mod args;
mod views;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use console::ApiResult;

use self::args::AuditCommand;
use self::views::{CheckpointKey, Checkpoints, Exported, Records, TrailCheck, TrailStatus};
use crate::context::{Ctx, Login};

pub async fn run(ctx: &Ctx<'_>, cmd: &AuditCommand) -> ApiResult<u8> {
    let out = ctx.out;
    match cmd {
        AuditCommand::Tail { lines } => out.show(&tail(ctx, *lines).await?),
        AuditCommand::Status => out.show(&TrailStatus(ctx.console().trail().audit_status().await?)),
        AuditCommand::Verify { export } => out.show(&verify(ctx, export.as_deref()).await?),
        AuditCommand::Checkpoints => out.show(&checkpoints(ctx).await?),
        AuditCommand::PublicKey { out: path } => out.show(&public_key(ctx, path).await?),
        AuditCommand::Export {
            out: path,
            format,
            from,
            to,
        } => {
            // The export carries the pinned checkpoint key when the holder is logged in.
            ctx.partition_logged_in(Login::IfPinGiven).await?;
            let range = audit::export::Range {
                from_time: from.clone(),
                to_time: to.clone(),
            };
            let summary = ctx
                .console()
                .trail()
                .audit_export((*format).into(), range, path)
                .await?;
            out.show(&Exported(summary))
        }
    }
}

/// The newest `lines` records, oldest first.
async fn tail(ctx: &Ctx<'_>, lines: u64) -> ApiResult<Records> {
    Ok(Records(ctx.console().trail().audit_tail(lines).await?))
}

/// Verify the store (with a progress bar) or an exported file.
async fn verify(ctx: &Ctx<'_>, export: Option<&Path>) -> ApiResult<TrailCheck> {
    let c = ctx.console();
    // An export carries what its check needs: no HSM, no PIN (an auditor's machine).
    if let Some(path) = export {
        let v = c.trail().audit_verify_export(path).await?;
        return Ok(TrailCheck::of_export(v));
    }
    ctx.partition_logged_in(Login::Required).await?;
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("verifying {bar:40} {pos}/{len} records")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let b2 = bar.clone();
    let progress = move |done: i64, total: i64| {
        b2.set_length(total.max(0) as u64);
        b2.set_position(done.max(0) as u64);
    };
    let cancel = AtomicBool::new(false);
    let verdict = c.trail().audit_verify(&progress, &cancel).await?;
    bar.finish_and_clear();
    Ok(TrailCheck::of_store(verdict))
}

async fn checkpoints(ctx: &Ctx<'_>) -> ApiResult<Checkpoints> {
    // With a PIN, each checkpoint is also compared with the key the HSM holds; a wrong
    // PIN is an error, not a quiet fallback.
    ctx.partition_logged_in(Login::IfPinGiven).await?;
    Ok(Checkpoints(
        ctx.console().trail().audit_checkpoints().await?,
    ))
}

async fn public_key(ctx: &Ctx<'_>, out: &Option<PathBuf>) -> ApiResult<CheckpointKey> {
    // With a PIN the HSM's key, else the newest checkpoint's.
    ctx.partition_logged_in(Login::IfPinGiven).await?;
    let pem = ctx.console().trail().audit_public_key_pem().await?;
    Ok(match out {
        Some(path) => {
            outfile::write_replace(path, pem.as_bytes()).map_err(console::ApiError::from)?;
            CheckpointKey::Written { path: path.clone() }
        }
        None => CheckpointKey::Shown { pem },
    })
}
