//! `hsmc info`, `hsmc slots`, `hsmc mechanisms`: what a module and its tokens are.

mod views;

use console::ApiResult;

use self::views::{MechanismList, ModuleInfo, SlotList};
use crate::context::Ctx;

pub async fn info(ctx: &Ctx<'_>) -> ApiResult<ModuleInfo> {
    let p = ctx.partition().await?;
    let c = ctx.console();
    let module = c
        .list_modules()
        .into_iter()
        .find(|m| m.id == p.module.id)
        .expect("loaded");
    Ok(ModuleInfo {
        module,
        app: c.app_info(),
    })
}

pub async fn slots(ctx: &Ctx<'_>) -> ApiResult<SlotList> {
    let module_id = ctx.module().await?.id.clone();
    Ok(SlotList(ctx.console().slots(&module_id).await?))
}

pub async fn mechanisms(ctx: &Ctx<'_>) -> ApiResult<MechanismList> {
    let p = ctx.partition().await?;
    Ok(MechanismList(ctx.console().mechanisms(&p.id).await?))
}
