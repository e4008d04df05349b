//! `hsmc hss` and `hsmc stats`: how the keys and the HSM are holding up.

mod views;

use std::time::Duration;

use console::ApiResult;

use self::views::{HssKeys, StatsSample};
use crate::context::{Ctx, Login};

/// Every HSS key visible: what is left, the burn rate, the audit trail's count.
pub async fn hss(ctx: &Ctx<'_>) -> ApiResult<HssKeys> {
    ctx.partition_logged_in(Login::IfPinGiven).await?;
    Ok(HssKeys(ctx.console().hss_keys().await?))
}

/// One sample, or one every `watch` seconds until interrupted.
pub async fn stats(ctx: &Ctx<'_>, watch: Option<u64>) -> ApiResult<u8> {
    let p = ctx.partition_logged_in(Login::IfPinGiven).await?;
    loop {
        ctx.out
            .show(&StatsSample(ctx.console().stats(&p.id).await?))?;
        match watch {
            Some(n) => tokio::time::sleep(Duration::from_secs(n.max(1))).await,
            None => return Ok(0),
        }
    }
}
