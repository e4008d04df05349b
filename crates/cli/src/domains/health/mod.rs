//! `hsmc hss` and `hsmc stats`: how the keys and the HSM are holding up.

mod views;

use std::time::Duration;

use console::{ApiResult, Partition};

use self::views::{HssKeys, StatsSample};
use crate::context::{Ctx, Login};

/// Every HSS key visible: what is left, the burn rate, the audit trail's count.
pub async fn hss(ctx: &Ctx<'_>) -> ApiResult<HssKeys> {
    ctx.partition_logged_in(Login::IfPinGiven).await?;
    Ok(HssKeys(ctx.console().observe().hss_keys().await?))
}

/// `stats`: one sample, or one every `watch` seconds until interrupted. A stream of
/// views, so this router shows each as it comes rather than returning one.
pub async fn stats(ctx: &Ctx<'_>, watch: Option<u64>) -> ApiResult<u8> {
    let p = ctx.partition_logged_in(Login::IfPinGiven).await?;
    loop {
        ctx.out.show(&sample(ctx, &p).await?)?;
        match watch {
            Some(n) => tokio::time::sleep(Duration::from_secs(n.max(1))).await,
            None => return Ok(0),
        }
    }
}

async fn sample(ctx: &Ctx<'_>, p: &Partition) -> ApiResult<StatsSample> {
    Ok(StatsSample(ctx.console().stats(&p.id).await?))
}
