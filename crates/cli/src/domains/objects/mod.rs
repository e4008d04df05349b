//! `hsmc objects import|ls|export`: certificates, public keys and data objects.

pub mod args;
mod views;

use std::path::Path;

use console::objects::{ImportRequest, ObjectFormat};
use console::{text, ApiError, ApiResult};

use self::args::{FormatArg, ObjectsCommand};
use self::views::{Exported, Imported, ObjectList, Row, TrialView, UriView};
use crate::context::{Ctx, Login};

pub async fn run(ctx: &Ctx<'_>, cmd: &ObjectsCommand) -> ApiResult<u8> {
    let p = ctx.partition().await?;
    let c = ctx.console();
    match cmd {
        ObjectsCommand::Import {
            file,
            label,
            id,
            data,
            application,
        } => {
            ctx.login(&p, Login::Required).await?;
            let r = c
                .admin()
                .import_objects(
                    &p.id,
                    ImportRequest {
                        path: file.clone(),
                        label: label.clone(),
                        id_hex: id.clone(),
                        data: *data,
                        application: application.clone(),
                    },
                )
                .await?;
            ctx.out.show(&Imported(r))
        }
        ObjectsCommand::Ls { class } => {
            ctx.login(&p, Login::IfPinGiven).await?;
            let mut rows = Vec::new();
            for o in c
                .admin()
                .list_objects(&p.id, class.map(|c| c.class()))
                .await?
            {
                let certificate = if o.class == "CERTIFICATE" {
                    c.admin().certificate_details(&p.id, o.handle).await.ok()
                } else {
                    None
                };
                rows.push(Row {
                    object: o,
                    certificate,
                });
            }
            ctx.out.show(&ObjectList(rows))
        }
        ObjectsCommand::Export {
            object,
            out,
            format,
        } => {
            ctx.login(&p, Login::IfPinGiven).await?;
            let o = c.admin().find_exportable(&p.id, object).await?;
            let format = format_for(*format, out);
            let summary = c.admin().save_object(&p.id, o.handle, format, out).await?;
            ctx.out.show(&Exported {
                label: summary.label,
                class: summary.class,
                format,
                path: out.display().to_string(),
            })
        }
    }
}

/// `hsmc uri KEY [--commands]`.
pub async fn uri(ctx: &Ctx<'_>, key: &str, commands: bool, test: Option<&str>) -> ApiResult<u8> {
    // Testing a line hands the session's PIN to the tool: it needs one.
    let login = match test {
        Some(_) => Login::Required,
        None => Login::IfPinGiven,
    };
    let p = ctx.partition_logged_in(login).await?;
    let c = ctx.console();
    let o = c.admin().find_key(&p.id, key).await?;
    let u = c.signing().object_uri(&p.id, o.handle).await?;
    let Some(test) = test else {
        return ctx.out.show(&UriView { uri: u, commands });
    };
    let tools: Vec<&str> = u.commands.iter().map(|c| c.tool.as_str()).collect();
    let tool = pick_tool(&tools, test).ok_or_else(|| {
        ApiError::invalid(text!(
            "uris.trial_which_tool",
            "'{{tool}}' names no single line of this key; its lines are: {{tools}}.",
            tool = test,
            tools = tools.join(", ")
        ))
    })?;
    let verdict = c.signing().try_tool_line(&p.id, o.handle, tool).await?;
    ctx.out.show(&TrialView(verdict))
}

/// The tool `asked` names: exactly (ignoring case), else the one whose name starts so.
fn pick_tool<'a>(tools: &[&'a str], asked: &str) -> Option<&'a str> {
    let asked = asked.to_lowercase();
    if let Some(t) = tools.iter().find(|t| t.to_lowercase() == asked) {
        return Some(t);
    }
    let mut starting = tools
        .iter()
        .filter(|t| t.to_lowercase().starts_with(&asked));
    match (starting.next(), starting.next()) {
        (Some(t), None) => Some(t),
        _ => None,
    }
}

fn format_for(f: Option<FormatArg>, out: &Path) -> ObjectFormat {
    match f {
        Some(FormatArg::Pem) => ObjectFormat::Pem,
        Some(FormatArg::Der) => ObjectFormat::Der,
        None => match out.extension().and_then(|e| e.to_str()) {
            Some("der" | "cer" | "crt" | "bin") => ObjectFormat::Der,
            _ => ObjectFormat::Pem,
        },
    }
}
