//! `hsmc usage`: Luna keys with a usage limit — uses left, burn rate, projected
//! exhaustion; `hsmc usage set KEY --limit N`: set or raise one.

pub mod args;
mod views;

use console::ApiResult;

use self::args::{UsageArgs, UsageCommand};
use self::views::{UsageKeys, UsageSet};
use crate::context::{Ctx, Login};

pub async fn run(ctx: &Ctx<'_>, a: &UsageArgs) -> ApiResult<u8> {
    match &a.command {
        None => {
            ctx.partition_logged_in(Login::IfPinGiven).await?;
            ctx.out
                .show(&UsageKeys(ctx.console().observe().usage_keys().await?))
        }
        Some(UsageCommand::Set { key, limit }) => {
            let p = ctx.partition_logged_in(Login::Required).await?;
            let c = ctx.console();
            let k = ctx.key_to_change(&p, key).await?;
            ctx.out.show(&UsageSet(
                c.observe().set_usage_limit(&p.id, k.handle, *limit).await?,
            ))
        }
    }
}
