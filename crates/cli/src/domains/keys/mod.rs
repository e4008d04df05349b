//! `hsmc keys …`: list, show, generate, delete, certify and export keys.

pub mod args;
mod views;

use std::io::IsTerminal;
use std::path::Path;

use console::views::GenerateRequest;
use console::{ApiError, ApiResult, Partition};

use self::args::{CertArgs, GenArgs, KeysCommand, PubFormat, SetArgs};
use self::views::{
    AttributesSet, CertificateOutput, Deleted, Kcv, KeyAttributes, KeyList, MinisignOutput, NewKey,
    OpenPgpOutput, PublicKeyOutput, SshOutput, UnwrappedView, Wrapped,
};
use crate::context::{Ctx, Login};
use console::text;

pub async fn run(ctx: &Ctx<'_>, cmd: &KeysCommand) -> ApiResult<u8> {
    let p = ctx.partition().await?;
    let out = ctx.out;
    match cmd {
        KeysCommand::Ls => out.show(&list(ctx, &p).await?),
        KeysCommand::Show { key } => out.show(&show(ctx, &p, key).await?),
        KeysCommand::Gen(a) => out.show(&generate(ctx, &p, a).await?),
        KeysCommand::Rm { key, yes } => out.show(&remove(ctx, &p, key, *yes).await?),
        KeysCommand::Cert(a) => out.show(&certificate(ctx, &p, a).await?),
        KeysCommand::Set(a) => out.show(&set(ctx, &p, a).await?),
        KeysCommand::Wrap {
            key,
            with,
            out: path,
            oaep_hash,
            confirm_untrusted,
        } => {
            ctx.login(&p, Login::Required).await?;
            let c = ctx.console();
            let k = ctx.key_to_change(&p, key).await?;
            let w = ctx.key_to_change(&p, with).await?;
            let f = c
                .admin()
                .wrap_key(
                    &p.id,
                    k.handle,
                    w.handle,
                    path,
                    oaep_hash.map(Into::into),
                    *confirm_untrusted,
                )
                .await?;
            out.show(&Wrapped {
                file: f,
                path: path.display().to_string(),
            })
        }
        KeysCommand::Unwrap { file, with, label } => {
            ctx.login(&p, Login::Required).await?;
            let c = ctx.console();
            let w = ctx.key_to_change(&p, with).await?;
            out.show(&UnwrappedView(
                c.admin()
                    .unwrap_key(&p.id, file, w.handle, label.clone())
                    .await?,
            ))
        }
        KeysCommand::Kcv { key } => {
            ctx.login(&p, Login::Required).await?;
            let c = ctx.console();
            let k = c.admin().find_key(&p.id, key).await?;
            out.show(&Kcv {
                label: k.label.clone(),
                kcv: c.admin().key_check_value(&p.id, k.handle).await?,
            })
        }
        KeysCommand::Openpgp {
            key,
            uid,
            out: path,
        } => out.show(&openpgp(ctx, &p, key, uid, path.as_deref()).await?),
        KeysCommand::Succession {
            old,
            new,
            out: path,
            from,
            until,
            yes_hss,
        } => {
            ctx.login(&p, Login::Required).await?;
            let req = console::sign::SuccessionRequest {
                old_key: old.clone(),
                new_key: new.clone(),
                out: path.display().to_string(),
                new_key_signs_from: from.clone(),
                transition_ends: until.clone(),
                confirm_hss: *yes_hss,
            };
            out.show(&views::Succession(
                ctx.console().signing().key_succession(&p.id, req).await?,
            ))
        }
        KeysCommand::MinisignPub { key, out: path } => {
            out.show(&minisign_pub(ctx, &p, key, path.as_deref()).await?)
        }
        KeysCommand::SshPub {
            key,
            allowed_signers,
            namespaces,
            comment,
            out: path,
        } => {
            let allowed =
                allowed_signers
                    .as_deref()
                    .map(|principal| console::sign::AllowedSigner {
                        principal,
                        namespaces,
                    });
            out.show(&ssh_pub(ctx, &p, key, comment.as_deref(), allowed, path.as_deref()).await?)
        }
        KeysCommand::ExportPub {
            key,
            format,
            out: path,
        } => out.show(&export_public(ctx, &p, key, *format, path.as_deref()).await?),
    }
}

async fn list(ctx: &Ctx<'_>, p: &Partition) -> ApiResult<KeyList> {
    ctx.login(p, Login::IfPinGiven).await?;
    Ok(KeyList(ctx.console().list_keys(&p.id).await?))
}

async fn show(ctx: &Ctx<'_>, p: &Partition, key: &str) -> ApiResult<KeyAttributes> {
    ctx.login(p, Login::IfPinGiven).await?;
    let c = ctx.console();
    let s = c.admin().find_key(&p.id, key).await?;
    Ok(KeyAttributes(c.admin().key_details(&p.id, s.handle).await?))
}

async fn set(ctx: &Ctx<'_>, p: &Partition, a: &SetArgs) -> ApiResult<AttributesSet> {
    let mut flags = Vec::new();
    for s in &a.set {
        let (f, value) = hsm::attr_edit::parse_set(s).map_err(ApiError::invalid)?;
        flags.push(console::attributes::FlagChange {
            name: f.name.into(),
            value,
        });
    }
    ctx.login(p, Login::Required).await?;
    let c = ctx.console();
    let o = ctx.key_to_change(p, &a.key).await?;
    let r = c
        .admin()
        .set_attributes(
            &p.id,
            o.handle,
            console::attributes::AttributeChanges {
                label: a.label.clone(),
                id_hex: a.id.clone(),
                start_date: a.start_date.clone(),
                end_date: a.end_date.clone(),
                flags,
            },
        )
        .await?;
    Ok(AttributesSet(r))
}

async fn generate(ctx: &Ctx<'_>, p: &Partition, a: &GenArgs) -> ApiResult<NewKey> {
    let req = a.key_request()?;
    if let Some(w) = &req.warning {
        ctx.out.note(format!("note: {w}"));
    }
    ctx.login(p, Login::Required).await?;
    let key = ctx
        .console()
        .admin()
        .generate_key(
            &p.id,
            GenerateRequest {
                spec: req.spec,
                label: a.label.clone(),
                token: a.persistent,
                extractable: a.extractable,
                always_authenticate: a.always_authenticate,
            },
        )
        .await?;
    Ok(NewKey {
        key,
        token_object: a.persistent,
    })
}

/// Delete a key; a private key's public half (same ID) goes with it.
async fn remove(ctx: &Ctx<'_>, p: &Partition, key: &str, yes: bool) -> ApiResult<Deleted> {
    if !yes {
        return Err(ApiError::invalid(text!(
            "errors.deleting_cannot_undone_add_yes",
            "Deleting {{key}} cannot be undone; add --yes to confirm.",
            key = key
        )));
    }
    ctx.login(p, Login::Required).await?;
    let c = ctx.console();
    let s = ctx.key_to_change(p, key).await?;
    let mut handles = vec![s.handle];
    let mut labels = vec![s.label.clone()];
    if s.class == "PRIVATE_KEY" && !s.id_hex.is_empty() {
        for o in c.list_keys(&p.id).await? {
            if o.class == "PUBLIC_KEY" && o.id_hex == s.id_hex {
                handles.push(o.handle);
                labels.push(o.label.clone());
            }
        }
    }
    let confirm = console::keys::expected_confirmation(&labels);
    Ok(Deleted(
        c.admin().destroy_keys(&p.id, &handles, &confirm).await?,
    ))
}

/// Issue a self-signed certificate (or a signing request), kept in a file with `--out`.
async fn certificate(ctx: &Ctx<'_>, p: &Partition, a: &CertArgs) -> ApiResult<CertificateOutput> {
    ctx.login(p, Login::Required).await?;
    let c = ctx.console();
    let k = ctx.key_to_change(p, &a.key).await?;
    let (pem, issued) = if a.csr {
        (
            c.signing()
                .certificate_request(&p.id, k.handle, &a.subject)
                .await?,
            None,
        )
    } else {
        let v = c
            .signing()
            .issue_certificate(&p.id, k.handle, &a.subject, a.days, !a.no_store)
            .await?;
        (v.pem.clone(), Some(v))
    };
    Ok(match (&a.out, issued) {
        (Some(path), _) => {
            outfile::write_replace(path, pem.as_bytes()).map_err(ApiError::from)?;
            CertificateOutput::Written {
                kind: if a.csr { "csr" } else { "certificate" },
                path: path.clone(),
            }
        }
        (None, Some(v)) => CertificateOutput::Issued(v),
        (None, None) => CertificateOutput::Request { pem },
    })
}

async fn export_public(
    ctx: &Ctx<'_>,
    p: &Partition,
    key: &str,
    format: PubFormat,
    out: Option<&Path>,
) -> ApiResult<PublicKeyOutput> {
    ctx.login(p, Login::IfPinGiven).await?;
    let c = ctx.console();
    let s = c.admin().find_key(&p.id, key).await?;
    Ok(match out {
        Some(path) => {
            let e = c
                .admin()
                .save_public_key(&p.id, s.handle, format.into(), path)
                .await?;
            PublicKeyOutput::Written {
                fingerprint: e.fingerprint,
                format: e.format,
                path: path.to_path_buf(),
            }
        }
        None => {
            let e = c
                .admin()
                .export_public_key(&p.id, s.handle, format.into())
                .await?;
            if e.text.is_none() && !std::io::stdout().is_terminal() {
                PublicKeyOutput::Bytes(e)
            } else {
                PublicKeyOutput::Shown(e)
            }
        }
    })
}

/// The key's OpenPGP certificate, shown or written (`--out`).
async fn openpgp(
    ctx: &Ctx<'_>,
    p: &Partition,
    key: &str,
    uid: &str,
    out: Option<&Path>,
) -> ApiResult<OpenPgpOutput> {
    ctx.login(p, Login::Required).await?;
    let c = ctx.console();
    let s = ctx.key_to_change(p, key).await?;
    Ok(match out {
        Some(path) => OpenPgpOutput::Written {
            certificate: c
                .signing()
                .save_openpgp_certificate(&p.id, s.handle, uid, path)
                .await?,
            path: path.to_path_buf(),
        },
        None => OpenPgpOutput::Shown(
            c.signing()
                .openpgp_certificate(&p.id, s.handle, uid)
                .await?,
        ),
    })
}

/// The key's `minisign.pub`, shown or written (`--out`).
async fn minisign_pub(
    ctx: &Ctx<'_>,
    p: &Partition,
    key: &str,
    out: Option<&Path>,
) -> ApiResult<MinisignOutput> {
    ctx.login(p, Login::IfPinGiven).await?;
    let c = ctx.console();
    let s = c.admin().find_key(&p.id, key).await?;
    let k = c.signing().minisign_public_key(&p.id, s.handle).await?;
    Ok(match out {
        Some(path) => {
            outfile::write_replace(path, k.text.as_bytes()).map_err(ApiError::from)?;
            MinisignOutput::Written {
                key_id: k.key_id,
                path: path.to_path_buf(),
            }
        }
        None => MinisignOutput::Shown(k),
    })
}

/// The key's OpenSSH public key line or `allowed_signers` line, shown or written (`--out`).
async fn ssh_pub(
    ctx: &Ctx<'_>,
    p: &Partition,
    key: &str,
    comment: Option<&str>,
    allowed: Option<console::sign::AllowedSigner<'_>>,
    out: Option<&Path>,
) -> ApiResult<SshOutput> {
    ctx.login(p, Login::IfPinGiven).await?;
    let c = ctx.console();
    let s = c.admin().find_key(&p.id, key).await?;
    let k = c
        .signing()
        .ssh_public_key(&p.id, s.handle, comment, allowed)
        .await?;
    Ok(match out {
        Some(path) => {
            let line = format!("{}\n", k.allowed_signers.as_deref().unwrap_or(&k.line));
            outfile::write_replace(path, line.as_bytes()).map_err(ApiError::from)?;
            SshOutput::Written {
                key: k,
                path: path.to_path_buf(),
            }
        }
        None => SshOutput::Shown(k),
    })
}
