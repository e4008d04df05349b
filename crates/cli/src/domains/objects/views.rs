//! What `hsmc objects …` shows.

use console::objects::{CertificateDetails, ImportResult, ObjectFormat};
use console::ApiResult;
use hsm::keys::ObjectSummary;
use serde::Serialize;

use crate::render::{Page, Render};
use console::i18n::InLang;

/// `objects import`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Imported(pub ImportResult);

impl Render for Imported {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        for o in &self.0.objects {
            let what = match (&o.certificate, o.authority) {
                (Some(c), true) => format!("CA certificate {}", c.subject),
                (Some(c), false) => format!("certificate {}", c.subject),
                (None, _) => o.kind.replace('_', " "),
            };
            let whose = match &o.key_label {
                Some(k) => format!(" — the certificate of key '{k}'"),
                None if o.certificate.is_some() && !o.authority => {
                    " — matches no key on the token".to_string()
                }
                None => String::new(),
            };
            writeln!(
                page,
                "imported {what} as '{}' id:{} (handle {}){whose}",
                o.label, o.id_hex, o.handle
            );
        }
        Ok(())
    }
}

/// One row of `objects ls`.
#[derive(Debug, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub object: ObjectSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<CertificateDetails>,
}

/// `objects ls`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ObjectList(pub Vec<Row>);

impl Render for ObjectList {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        if self.0.is_empty() {
            writeln!(
                page,
                "No objects of that kind visible (log in with HSMC_PIN to see private ones)."
            );
            return Ok(());
        }
        let rows: Vec<Vec<String>> = self
            .0
            .iter()
            .map(|r| {
                let o = &r.object;
                let detail = match &r.certificate {
                    Some(c) => {
                        let validity = if c.info.expired {
                            format!("EXPIRED {}", c.info.not_after)
                        } else {
                            format!("expires in {} days", c.info.days_left)
                        };
                        let key = c
                            .key_label
                            .as_ref()
                            .map(|k| format!("key '{k}'"))
                            .unwrap_or_else(|| {
                                if c.info.is_ca {
                                    "CA".into()
                                } else {
                                    "no key".into()
                                }
                            });
                        format!("{} ({validity}; {key})", c.info.subject)
                    }
                    None => o.algorithm.clone(),
                };
                vec![
                    o.handle.to_string(),
                    o.class.to_lowercase().replace('_', " "),
                    o.label.clone(),
                    o.id_hex.clone(),
                    detail,
                ]
            })
            .collect();
        page.table(&["HANDLE", "CLASS", "LABEL", "ID", "DETAIL"], &rows);
        Ok(())
    }
}

/// `objects export`.
#[derive(Debug, Serialize)]
pub struct Exported {
    pub label: String,
    pub class: String,
    pub format: ObjectFormat,
    pub path: String,
}

impl Render for Exported {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        writeln!(
            page,
            "wrote {} '{}' ({}) to {}",
            self.class.to_lowercase().replace('_', " "),
            self.label,
            self.format,
            self.path
        );
        Ok(())
    }
}

/// `uri`: the object's URI (and with `--commands`, other tools' command lines).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct UriView {
    pub uri: console::uris::ObjectUri,
    #[serde(skip)]
    pub commands: bool,
}

impl Render for UriView {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        writeln!(page, "{}", self.uri.uri);
        if self.commands {
            writeln!(page, "# token:  {}", self.uri.token_uri);
            writeln!(
                page,
                "# module: {} ({})",
                self.uri.module_uri, self.uri.module_path
            );
            let lang = page.lang();
            if !self.uri.commands.is_empty() {
                let note = console::text!(
                    "uris.pin_file_note",
                    "PIN-FILE holds the PIN alone, without a line break (printf '%s' \"$PIN\" > PIN-FILE; chmod 600 PIN-FILE)."
                );
                writeln!(page, "# {}", note.in_lang(lang));
            }
            for c in &self.uri.commands {
                writeln!(page, "\n# {} — {}", c.tool, c.purpose.in_lang(lang));
                if let Some(caveat) = &c.caveat {
                    writeln!(page, "# ! {}", caveat.in_lang(lang));
                }
                writeln!(page, "{}", c.command);
                if let Some(verify) = &c.verify {
                    let then = console::text!("uris.then_check", "then check what it made:");
                    writeln!(page, "# {}\n{verify}", then.in_lang(lang));
                }
            }
        }
        Ok(())
    }
}

/// `uri --test TOOL`: the tools' verdict on a line.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct TrialView(pub console::uris::ToolVerdict);

impl Render for TrialView {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        let lang = page.lang();
        let verdict = if self.0.ok {
            console::text!(
                "objects.trial_ok",
                "It works: the line, and the tool's check where there is one, exited with 0."
            )
        } else {
            console::text!("objects.trial_failed", "It failed; the tool says:")
        };
        writeln!(page, "# {} — {}", self.0.tool, verdict.in_lang(lang));
        for s in &self.0.steps {
            let status = match s.exit_code {
                Some(code) => {
                    console::text!("objects.trial_exit", "exit status {{code}}", code = code)
                }
                None => console::text!("objects.trial_stopped", "stopped (no answer in time)"),
            };
            writeln!(page, "\n$ {}\n# {}", s.command, status.in_lang(lang));
            if !s.output.is_empty() {
                writeln!(page, "{}", s.output);
            }
        }
        Ok(())
    }

    fn exit_code(&self) -> u8 {
        u8::from(!self.0.ok)
    }
}
