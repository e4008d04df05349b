//! `hsmc sign` and `hsmc verify`: the console's signing service with progress bars on a
//! terminal, and its offline verifier; `hsmc timestamp`: an RFC 3161 token added to a
//! signature made earlier (no HSM involved).

pub mod args;
mod progress;
mod views;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use console::settings::TimestampAuthority;
use console::sign::{ContextLogin, KitRequest, OnError, SignRequest};
use console::text;
use console::{ApiError, ApiResult};

use self::args::{ContextLoginArg, SignArgs, TimestampArgs, VerifyArgs};
use self::progress::FileBars;
use self::views::{Restamped, SignatureCheck, Signed};
use crate::context::{Ctx, Login};

pub async fn sign(ctx: &Ctx<'_>, a: &SignArgs) -> ApiResult<Signed> {
    let formats = a.formats()?;
    let p = ctx.partition_logged_in(Login::Required).await?;
    let req = SignRequest {
        key: a.key[0].clone(),
        also_keys: a.key[1..].to_vec(),
        files: a.files.iter().map(|f| f.display().to_string()).collect(),
        formats,
        manifest: a.manifest,
        out_dir: a.out.as_ref().map(|d| d.display().to_string()),
        context: a.context.clone(),
        on_error: if a.continue_on_error {
            OnError::Continue
        } else {
            OnError::Stop
        },
        confirm_hss: a.yes_hss,
        timestamp: a.tsa.as_ref().map(|url| TimestampAuthority {
            url: url.clone(),
            ca_file: a.tsa_ca.as_ref().map(|f| f.display().to_string()),
            timeout_seconds: a.tsa_timeout,
            optional: Some(a.tsa_optional),
        }),
        kit: a.kit.as_ref().map(|dir| KitRequest {
            dir: dir.display().to_string(),
            user_id: a.uid.clone(),
            tsa_ca: a.tsa_ca.as_ref().map(|f| f.display().to_string()),
            context: a.context.clone(),
            succession: a.succession.as_ref().map(|f| f.display().to_string()),
        }),
        chain: a.chain.iter().map(|f| f.display().to_string()).collect(),
        context_login: a.context_login.map(|c| match c {
            ContextLoginArg::Once => ContextLogin::OncePerBatch,
            ContextLoginArg::Each => ContextLogin::PerSignature,
        }),
    };
    if req.formats.contains(&console::sign::SignFormat::Cms) {
        for key in &a.key {
            warn_about_certificate(ctx, &p.id, key).await;
        }
    }
    let bars = FileBars::new(&a.files, ctx.out.draws_progress());
    let report = ctx
        .console()
        .signing()
        .sign_files_with_pins(
            &p.id,
            req,
            bars.callback(),
            Arc::new(AtomicBool::new(false)),
            crate::pin::context_pins(ctx.global()),
        )
        .await?;
    bars.clear();
    Ok(Signed(report))
}

/// Before signing: why the certificate CMS signatures will carry should not sign code
/// (expired, no digitalSignature key usage, no codeSigning EKU).
async fn warn_about_certificate(ctx: &Ctx<'_>, partition: &str, key: &str) {
    let c = ctx.console();
    let Ok(k) = c.admin().find_key(partition, key).await else {
        return;
    };
    let Ok(keys) = c.signing().signing_keys(partition).await else {
        return;
    };
    for w in keys
        .iter()
        .filter(|s| s.handle == k.handle)
        .flat_map(|s| &s.certificate_warnings)
    {
        ctx.out.note(format!("warning: {w}"));
    }
}

pub async fn verify(ctx: &Ctx<'_>, a: &VerifyArgs) -> ApiResult<SignatureCheck> {
    let pubkey = a.public_key.as_ref().map(|p| p.display().to_string());
    let file = a.file.display().to_string();
    let Some(sig) = &a.sig else {
        // Without --sig: a key succession statement, which names its signatures.
        return match ctx
            .console()
            .signing()
            .verify_succession(&file, pubkey.as_deref())
            .await?
        {
            Some(report) => Ok(SignatureCheck(report)),
            None => Err(ApiError::invalid(text!(
                "hsm.console.verify_needs_sig",
                "{{file}} is not a key succession statement: name its signature with --sig.",
                file = &file
            ))),
        };
    };
    let sig = sig.display().to_string();
    let report = match (&a.files, &pubkey) {
        (Some(dir), Some(pk)) => {
            let dir = dir.display().to_string();
            ctx.console()
                .signing()
                .verify_manifest_files(&file, &sig, pk, &dir)
                .await?
        }
        _ => {
            ctx.console()
                .signing()
                .verify_signature(&file, &sig, pubkey.as_deref(), a.context.as_deref())
                .await?
        }
    };
    Ok(SignatureCheck(report))
}

/// `hsmc timestamp`: the TSA from `--tsa` (and `--tsa-ca`, `--tsa-timeout`), else the
/// settings' when a URL is set there; the signature is rewritten without opening a
/// partition.
pub async fn timestamp(ctx: &Ctx<'_>, a: &TimestampArgs) -> ApiResult<Restamped> {
    let st = ctx.console().settings().timestamp;
    let authority = match &a.tsa {
        Some(url) => TimestampAuthority {
            url: url.clone(),
            ca_file: a.tsa_ca.as_ref().map(|f| f.display().to_string()),
            timeout_seconds: a.tsa_timeout.unwrap_or(10),
            optional: None,
        },
        None if !st.url.trim().is_empty() => TimestampAuthority {
            url: st.url.clone(),
            ca_file: a
                .tsa_ca
                .as_ref()
                .map(|f| f.display().to_string())
                .or(st.ca_file.clone()),
            timeout_seconds: a.tsa_timeout.unwrap_or(st.timeout_seconds),
            optional: None,
        },
        None => {
            return Err(ApiError::invalid(text!(
                "hsm.console.timestamp_needs_tsa",
                "hsmc timestamp needs --tsa URL (or a time-stamp authority in the settings)."
            )))
        }
    };
    let report = ctx
        .console()
        .signing()
        .timestamp_signature(&a.sig.display().to_string(), &authority)
        .await?;
    Ok(Restamped(report))
}
