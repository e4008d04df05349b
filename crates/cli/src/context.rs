//! What every command that talks to an HSM sets up from the global options, in one place:
//! the console, the module and partition `--module`/`--slot`/`--token` name, the login
//! (`--so`, PINs from [`crate::pin`]), and where the output goes.

use std::path::PathBuf;
use std::sync::Arc;

use console::views::UserKind;
use console::{ApiError, ApiResult, Console, ConsoleConfig, ErrorCode, LoadedModule, Partition};

use crate::args::Global;
use crate::pin;
use crate::render::Renderer;
use console::text;

/// The module that stands for the built-in partition in `--module`.
const BUILTIN: &str = "builtin";

/// Whether a command logs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Login {
    /// When a PIN is at hand (`HSMC_PIN`, `--pin-file`, `--pin-fd`); otherwise the command
    /// goes on with what is visible without one. A wrong PIN is still an error.
    IfPinGiven,
    /// Always: a PIN is asked for on a terminal, and its absence is a usage error.
    Required,
}

/// An open console and the global options, for one command.
pub struct Ctx<'a> {
    console: Arc<Console>,
    global: &'a Global,
    /// `--module`, trimmed.
    module: &'a str,
    pub out: Renderer,
}

impl<'a> Ctx<'a> {
    /// Open the console as the app would (same settings, data folder and audit trail), as
    /// `hsmc`, with the built-in partition only when `--module builtin` asks for it.
    pub async fn open(global: &'a Global, out: Renderer) -> ApiResult<Ctx<'a>> {
        let module = global.module.trim();
        let mut cfg = ConsoleConfig::new(
            global
                .data_dir
                .clone()
                .unwrap_or_else(ConsoleConfig::default_data_dir),
        );
        cfg.settings_path = global.config.clone();
        cfg.audit_location = global.audit_db.clone();
        cfg.builtin = module == BUILTIN;
        cfg.load_saved_modules = false;
        if let Some(actor) = cfg.context.actor_id.as_mut() {
            actor.push_str(" (hsmc)");
        }
        let console = Console::open(cfg).await?;
        if module == BUILTIN && !console.app_info().builtin_available {
            return Err(ApiError::new(
                ErrorCode::HsmUnavailable,
                text!(
                    "errors.built_partition_not_available",
                    "The built-in partition is not available."
                ),
            )
            .details(console.app_info().builtin_note.unwrap_or_default())
            .suggest(text!(
                "errors.build_make_run_choose_module",
                "Build it (make run) or choose a module with --module."
            )));
        }
        Ok(Ctx {
            console,
            global,
            module,
            out,
        })
    }

    /// Close the console (the audit trail writes its checkpoint).
    pub async fn close(self) {
        self.console.close().await;
    }

    pub fn console(&self) -> &Console {
        &self.console
    }

    /// The module `--module` names, loaded.
    pub async fn module(&self) -> ApiResult<Arc<LoadedModule>> {
        self.console.module_for(&self.module_arg()?).await
    }

    /// The partition `--module`, `--slot` and `--token` name (the first initialized token
    /// when neither slot nor token is given).
    pub async fn partition(&self) -> ApiResult<Arc<Partition>> {
        let g = self.global;
        self.console
            .select_partition(&self.module_arg()?, g.slot, g.token_label.as_deref())
            .await
    }

    /// Whether `--slot` or `--token` names a partition.
    pub fn names_a_partition(&self) -> bool {
        self.global.slot.is_some() || self.global.token_label.is_some()
    }

    /// [`Ctx::partition`], then [`Ctx::login`].
    pub async fn partition_logged_in(&self, login: Login) -> ApiResult<Arc<Partition>> {
        let p = self.partition().await?;
        self.login(&p, login).await?;
        Ok(p)
    }

    /// Log in to `p` as the user (or the security officer with `--so`), once: a wrong PIN
    /// is never tried again.
    pub async fn login(&self, p: &Partition, login: Login) -> ApiResult<()> {
        let (user, role) = if self.global.so {
            (UserKind::So, "security officer")
        } else {
            (UserKind::User, "user")
        };
        let required = login == Login::Required;
        let prompt = format!("PIN for {} ({role}): ", p.label);
        match pin::get(self.global, required, &prompt)? {
            Some(pin) => {
                self.console.login(&p.id, user, pin).await?;
                Ok(())
            }
            None if required => Err(ApiError::invalid(text!(
                "errors.command_needs_pin",
                "This command needs a PIN."
            ))
            .suggest(text!(
                "errors.set_hsmc_pin_use_pin",
                "Set HSMC_PIN, or use --pin-file / --pin-fd, or run it on a terminal to be asked."
            ))),
            None => Ok(()),
        }
    }

    /// `--module`: `builtin`, a path, a module ID, or part of a remembered module's file
    /// name.
    fn module_arg(&self) -> ApiResult<String> {
        let m = self.module;
        if m == BUILTIN || m.starts_with('/') || m.starts_with("m-") {
            return Ok(m.to_string());
        }
        let matches: Vec<String> = self
            .console
            .settings()
            .modules
            .into_iter()
            .filter(|p| {
                PathBuf::from(p)
                    .file_name()
                    .map(|f| {
                        f.to_string_lossy()
                            .to_lowercase()
                            .contains(&m.to_lowercase())
                    })
                    .unwrap_or(false)
            })
            .collect();
        match matches.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(ApiError::invalid(text!(
                "errors.no_remembered_module_called",
                "No remembered module is called '{{detail}}'.",
                detail = m
            ))
            .suggest(text!(
                "errors.give_library_s_full_path",
                "Give the library's full path, or `builtin`."
            ))),
            _ => Err(ApiError::invalid(text!(
                "errors.matches_several_modules",
                "'{{detail}}' matches several modules: {{join}}",
                detail = m,
                join = matches.join(", ")
            ))),
        }
    }
}
