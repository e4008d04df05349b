//! `hsmc pin change|init` and `hsmc token init`: credentials and the token itself.

pub mod args;
mod views;

use console::credentials::InitTokenRequest;
use console::views::UserKind;
use console::{text, ApiError, ApiResult};

use self::args::{NewPinArgs, PinCommand, PinTarget, TokenCommand};
use self::views::{Initialized, PinChangedView, PinSet};
use crate::context::{Ctx, Login};
use crate::pin::{get_new, NewPinSource};

fn source(a: &NewPinArgs) -> NewPinSource<'_> {
    NewPinSource {
        file: a.new_pin_file.as_deref(),
        fd: a.new_pin_fd,
    }
}

pub async fn pin(ctx: &Ctx<'_>, cmd: &PinCommand) -> ApiResult<u8> {
    let p = ctx.partition().await?;
    let c = ctx.console();
    match cmd {
        PinCommand::Change(a) => {
            // The new PIN first: nothing is tried on the token before both are at hand.
            let new = get_new(&source(a), "PIN")?;
            let old = ctx
                .login_as(&p, ctx.user_kind(), Login::Required)
                .await?
                .ok_or_else(|| {
                    ApiError::invalid(text!(
                        "errors.current_pin_needed",
                        "This command needs the current PIN."
                    ))
                })?;
            ctx.out.show(&PinChangedView(
                c.admin().change_pin(&p.id, old, new).await?,
            ))
        }
        PinCommand::Init { target, new_pin } => {
            let (login_as, target) = match target {
                PinTarget::User => (UserKind::So, UserKind::User),
                PinTarget::Cu => (UserKind::User, UserKind::CryptoUser),
                PinTarget::Lco => (UserKind::User, UserKind::LimitedCryptoOfficer),
            };
            let new = get_new(&source(new_pin), &format!("{target} PIN"))?;
            ctx.login_as(&p, login_as, Login::Required).await?;
            match target {
                UserKind::User => c.admin().set_user_pin(&p.id, new).await?,
                role => c.admin().set_role_pin(&p.id, role, new).await?,
            }
            ctx.out.show(&PinSet {
                partition_id: p.id.clone(),
                target,
            })
        }
    }
}

pub async fn token(ctx: &Ctx<'_>, cmd: &TokenCommand) -> ApiResult<u8> {
    match cmd {
        TokenCommand::Init {
            label,
            yes,
            destroy_audit_key,
        } => {
            let p = ctx.partition().await?;
            if !yes {
                return Err(ApiError::invalid(text!(
                    "errors.token_init_needs_yes",
                    "Initializing '{{label}}' destroys every object on it; add --yes to confirm.",
                    label = p.label
                )));
            }
            let so_pin = ctx.secret(&format!("SO PIN for {}: ", p.label))?;
            let done = ctx
                .console()
                .admin()
                .init_token(
                    &p.id,
                    so_pin,
                    InitTokenRequest {
                        label: label.clone(),
                        confirmation: p.label.clone(),
                        destroy_audit_key: *destroy_audit_key,
                    },
                )
                .await?;
            ctx.out.show(&Initialized(done))
        }
    }
}
