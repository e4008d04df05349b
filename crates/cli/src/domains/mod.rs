//! The subcommands, one module per domain. A handler sets up what it needs through
//! [`Ctx`] (partition, login), calls the console's services and returns a view; a router
//! hands the view to the renderer. Domains whose commands are top-level (`inventory`,
//! `sign`, `health`) are routed from [`route`]; a subcommand group (`keys`, `audit`) or a
//! command with modes (`probe`) has its own `run`.
//!
//! A new domain is a folder here: `mod.rs` (router and handlers), `args.rs` (its clap
//! arguments, if any), `views.rs` (what it shows, each a [`crate::render::Render`]), and
//! one line in [`route`].

pub mod admin;
pub mod audit;
pub mod git;
pub mod ha;
pub mod health;
pub mod inventory;
pub mod keys;
pub mod objects;
pub mod pqc;
pub mod probe;
pub mod shell;
pub mod sign;
pub mod status;
pub mod usage;

use console::ApiResult;

use crate::args::{Cli, Command, HsmCommand, ShellCommand};
use crate::context::Ctx;
use crate::domains::audit::args::AuditCommand;
use crate::render::Renderer;

/// Run one command; the exit code on success (3 for a failed verification, …).
pub async fn run(cli: &Cli, out: Renderer) -> ApiResult<u8> {
    // Verification through `git-ssh` is ssh-keygen's: no console, no HSM.
    if let Command::Hsm(HsmCommand::GitSsh(a)) = &cli.command {
        if let Some(r) = git::without_console(a) {
            return r;
        }
    }
    // So is gpg's, through `git-gpg`.
    if let Command::Hsm(HsmCommand::GitGpg(a)) = &cli.command {
        if let Some(r) = git::gpg::without_console(a) {
            return r;
        }
    }
    match &cli.command {
        Command::Shell(ShellCommand::Completions { shell }) => {
            out.show(&shell::completions(*shell)?)
        }
        Command::Shell(ShellCommand::Man) => out.show(&shell::man()?),
        Command::Shell(ShellCommand::Reference { out: dir }) => out.show(&shell::reference(dir)?),
        Command::Hsm(command) => {
            // `timestamp` and the offline check of an exported trail use no HSM: the console
            // opens without the built-in partition (an auditor has no HSM and no PIN).
            let ctx = match command {
                HsmCommand::Timestamp(_)
                | HsmCommand::Audit(AuditCommand::Verify { export: Some(_) }) => {
                    Ctx::open_offline(&cli.global, out).await?
                }
                _ => Ctx::open(&cli.global, out).await?,
            };
            let r = route(&ctx, command).await;
            ctx.close().await;
            r
        }
    }
}

async fn route(ctx: &Ctx<'_>, command: &HsmCommand) -> ApiResult<u8> {
    let out = ctx.out;
    match command {
        HsmCommand::Info => out.show(&inventory::info(ctx).await?),
        HsmCommand::Slots => out.show(&inventory::slots(ctx).await?),
        HsmCommand::Mechanisms => out.show(&inventory::mechanisms(ctx).await?),
        HsmCommand::Keys(k) => keys::run(ctx, k).await,
        HsmCommand::Sign(a) => out.show(&sign::sign(ctx, a).await?),
        HsmCommand::Verify(a) => out.show(&sign::verify(ctx, a).await?),
        HsmCommand::Timestamp(a) => out.show(&sign::timestamp(ctx, a).await?),
        HsmCommand::GitSsh(a) => git::run(ctx, a).await,
        HsmCommand::GitGpg(a) => git::gpg::run(ctx, a).await,
        HsmCommand::Status(a) => out.show(&status::status(ctx, a).await?),
        HsmCommand::Hss => out.show(&health::hss(ctx).await?),
        HsmCommand::Stats { watch } => health::stats(ctx, *watch).await,
        HsmCommand::Probe(a) => probe::run(ctx, a).await,
        HsmCommand::Audit(a) => audit::run(ctx, a).await,
        HsmCommand::Pin(a) => admin::pin(ctx, a).await,
        HsmCommand::Token(a) => admin::token(ctx, a).await,
        HsmCommand::Objects(a) => objects::run(ctx, a).await,
        HsmCommand::Uri {
            key,
            commands,
            test,
        } => objects::uri(ctx, key, *commands, test.as_deref()).await,
        HsmCommand::Ha(a) => ha::run(ctx, a).await,
        HsmCommand::Usage(a) => usage::run(ctx, a).await,
        HsmCommand::Pqc(a) => pqc::run(ctx, a).await,
    }
}
