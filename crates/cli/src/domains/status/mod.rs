//! `hsmc status`: the app's Overview on the command line — every partition and what needs
//! attention across them; exit 1 when anything does (for cron jobs and monitoring checks).

mod views;

use clap::Args;
use console::{ApiResult, ErrorCode};

use self::views::Status;
use crate::context::{Ctx, Login};

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Every module remembered in the settings too, not only the one --module names.
    #[arg(long)]
    pub all: bool,
}

/// Log in where a PIN is given (so keys and certificates are looked at), then compose the
/// overview. A module without an initialized token is not an error here: it is reported.
pub async fn status(ctx: &Ctx<'_>, a: &StatusArgs) -> ApiResult<Status> {
    let c = ctx.console();
    if a.all {
        for path in c.settings().modules {
            // One that cannot be loaded is on the list of what needs attention.
            if let Err(e) = c.module_for(&path).await {
                ctx.out
                    .note(format!("{path}: {}", e.message_in(ctx.out.lang())));
            }
        }
    }
    match ctx.partition().await {
        Ok(p) => ctx.login(&p, Login::IfPinGiven).await?,
        Err(e) if e.code == ErrorCode::PartitionNotFound => {}
        Err(e) => return Err(e),
    }
    Ok(Status(c.overview().await?))
}
