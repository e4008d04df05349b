//! `hsmc ha`: the module's HA groups with their members, state and statistics;
//! `hsmc ha drift`: the drift check of one group.

pub mod args;
mod views;

use console::{ApiError, ApiResult, Partition};

use self::args::{HaArgs, HaCommand};
pub use self::views::group_text;
use self::views::{DriftView, HaGroups};
use crate::context::{Ctx, Login};

pub async fn run(ctx: &Ctx<'_>, a: &HaArgs) -> ApiResult<u8> {
    match a.command {
        None => ctx.out.show(&groups(ctx).await?),
        Some(HaCommand::Drift) => ctx.out.show(&drift(ctx).await?),
    }
}

/// The groups of `--module` (only the one `--slot`/`--token` names, when given), each
/// logged in when a PIN is at hand (which logs in its visible members too).
async fn group_partitions(ctx: &Ctx<'_>) -> ApiResult<Vec<std::sync::Arc<Partition>>> {
    let m = ctx.module().await?;
    let c = ctx.console();
    let named = if ctx.names_a_partition() {
        Some(ctx.partition().await?.id.clone())
    } else {
        None
    };
    let mut out = Vec::new();
    for g in c.ha().ha_groups().await? {
        if g.module_id != m.id || named.as_ref().is_some_and(|n| *n != g.partition_id) {
            continue;
        }
        out.push(c.partition_ref(&g.partition_id).await?);
    }
    if out.is_empty() {
        return Err(ApiError::invalid(match named {
            Some(n) => console::text!(
                "hsm.console.not_ha_virtual_slot",
                "{{name}} is not an HA group's virtual slot.",
                name = n
            ),
            None => console::text!(
                "hsm.console.module_shows_no_ha_group",
                "{{module}} shows no HA group.",
                module = m.path.display()
            ),
        })
        .suggest(console::text!(
            "hsm.console.ha_list_slots_hint",
            "List the slots with `hsmc slots`; a Luna client shows HA groups as virtual slots."
        )));
    }
    Ok(out)
}

async fn groups(ctx: &Ctx<'_>) -> ApiResult<HaGroups> {
    let mut out = Vec::new();
    for p in group_partitions(ctx).await? {
        ctx.login(&p, Login::IfPinGiven).await?;
        if let Some(g) = ctx.console().ha().ha_group(&p.id).await? {
            out.push(g);
        }
    }
    Ok(HaGroups(out))
}

async fn drift(ctx: &Ctx<'_>) -> ApiResult<DriftView> {
    let p = group_partitions(ctx).await?.remove(0);
    ctx.login(&p, Login::IfPinGiven).await?;
    Ok(DriftView(ctx.console().ha().ha_drift(&p.id).await?))
}
