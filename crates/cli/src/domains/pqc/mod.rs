//! `hsmc pqc`: post-quantum readiness — every key's algorithm, NIST category and quantum
//! class, judged under a policy (NIST IR 8547, CNSA 2.0, or a file); exit 1 when anything
//! is past due. `--cbom FILE` writes a CycloneDX 1.6 CBOM of the keys instead.

pub mod args;
mod views;

use console::ApiResult;

use self::args::PqcArgs;
use self::views::{CbomWritten, ReadinessView};
use crate::context::{Ctx, Login};

pub async fn run(ctx: &Ctx<'_>, a: &PqcArgs) -> ApiResult<u8> {
    let c = ctx.console();
    // The policy first: a bad file is refused before any HSM is asked.
    c.observe().pqc_policy(&a.policy)?;
    let p = ctx.partition_logged_in(Login::IfPinGiven).await?;
    let ids: Vec<String> = if a.all {
        c.partitions().iter().map(|p| p.id.clone()).collect()
    } else {
        vec![p.id.clone()]
    };
    if let Some(path) = &a.cbom {
        let bytes = c.observe().pqc_cbom(&ids, &a.policy).await?;
        outfile::write_new(path, &bytes).map_err(console::ApiError::from)?;
        return ctx.out.show(&CbomWritten::of(path, &bytes));
    }
    ctx.out.show(&ReadinessView(
        c.observe().pqc_readiness(&ids, &a.policy).await?,
    ))
}
