//! What every command that talks to an HSM sets up from the global options, in one place:
//! the console, the module and partition `--module`/`--slot`/`--token` name, the login
//! (`--so`, PINs from [`crate::pin`]), and where the output goes.

use std::path::PathBuf;
use std::sync::Arc;

use console::views::UserKind;
use console::{ApiError, ApiResult, Console, ConsoleConfig, ErrorCode, LoadedModule, Partition};
use hsm::keys::ObjectSummary;

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
    /// The global options (where PINs come from, …).
    pub fn global(&self) -> &'a Global {
        self.global
    }

    /// Open the console as the app would (same settings, data folder and audit trail), as
    /// `hsmc`, with the built-in partition only when `--module builtin` asks for it.
    pub async fn open(global: &'a Global, out: Renderer) -> ApiResult<Ctx<'a>> {
        Self::open_with(global, out, true).await
    }

    /// Open the console for a command that uses no HSM (`timestamp`): settings, data
    /// folder and audit trail as [`Ctx::open`], but no built-in partition, so it runs where
    /// none is built.
    pub async fn open_offline(global: &'a Global, out: Renderer) -> ApiResult<Ctx<'a>> {
        Self::open_with(global, out, false).await
    }

    async fn open_with(global: &'a Global, out: Renderer, hsm: bool) -> ApiResult<Ctx<'a>> {
        let module = global.module.trim();
        let mut cfg = ConsoleConfig::new(
            global
                .data_dir
                .clone()
                .unwrap_or_else(ConsoleConfig::default_data_dir),
        );
        cfg.settings_path = global.config.clone();
        cfg.audit_location = global.audit_db.clone();
        cfg.builtin = hsm && module == BUILTIN;
        cfg.load_saved_modules = false;
        if let Some(actor) = cfg.context.actor_id.as_mut() {
            actor.push_str(" (hsmc)");
        }
        let console = Console::open(cfg).await?;
        if hsm && module == BUILTIN && !console.app_info().builtin_available {
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
        let Some(uri) = g
            .token_label
            .as_deref()
            .filter(|t| t.starts_with("pkcs11:"))
        else {
            return self
                .console
                .select_partition(&self.module_arg()?, g.slot, g.token_label.as_deref())
                .await;
        };
        // `--token pkcs11:…`: its token label, slot-id and module-path select; serial,
        // manufacturer and model must then agree.
        let u = hsm::uri::Pkcs11Uri::parse(uri).map_err(|e| {
            let reason = e;
            ApiError::invalid(
                text!(
                    "errors.token_option_bad",
                    "--token: {{reason}}",
                    reason = reason
                )
                .nest("reason", &reason),
            )
        })?;
        let module = match u
            .query("module-path")
            .map(str::to_string)
            .or_else(|| u.text("module-path"))
        {
            Some(m) => m,
            None => self.module_arg()?,
        };
        let slot = match u.text("slot-id") {
            Some(s) => Some(s.parse::<u64>().map_err(|_| {
                ApiError::invalid(text!(
                    "errors.token_option_slot_not_number",
                    "--token: slot-id={{slot}} is not a number",
                    slot = s
                ))
            })?),
            None => g.slot,
        };
        let p = self
            .console
            .select_partition(&module, slot, u.text("token").as_deref())
            .await?;
        let view = self.console.partition(&p.id).await?;
        for (attr, have) in [
            ("serial", &view.token.serial),
            ("manufacturer", &view.token.manufacturer),
            ("model", &view.token.model),
        ] {
            if let Some(want) = u.text(attr) {
                if want.trim() != have.trim() {
                    return Err(ApiError::new(
                        ErrorCode::PartitionNotFound,
                        text!(
                            "hsm.console.token_uri_mismatch",
                            "--token: the URI asks for {{attr}}={{want}}; the token '{{label}}' in slot {{slot}} has {{attr}}={{have}}",
                            attr = attr,
                            want = want,
                            label = p.label,
                            slot = view.slot_id,
                            have = have.trim()
                        ),
                    ));
                }
            }
        }
        Ok(p)
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

    /// The object a change acts on, selected by `selector`. A handle number is refused:
    /// it names an object only while the module stays initialized, and every run of hsmc
    /// initializes it anew — the number a listing printed may name another object now.
    pub async fn key_to_change(&self, p: &Partition, selector: &str) -> ApiResult<ObjectSummary> {
        if selector.trim_start().starts_with("handle:") {
            return Err(ApiError::invalid(text!(
                "errors.handle_for_change",
                "'{{selector}}' selects by handle number, which names an object only until the module restarts, and each run of the command line starts it anew: it may name another object now.",
                selector = selector
            ))
            .suggest(text!(
                "errors.handle_for_change_hint",
                "Select the object to change by uid:, id: or label: (`hsmc keys ls` shows them); handle: is for reading only."
            )));
        }
        self.console().admin().find_key(&p.id, selector).await
    }

    /// Who `--role` / `--so` says logs in (the user when neither is given).
    pub fn user_kind(&self) -> UserKind {
        match (self.global.so, self.global.role) {
            (true, _) => UserKind::So,
            (false, Some(r)) => r.user_kind(),
            (false, None) => UserKind::User,
        }
    }

    /// Log in to `p` as `--role` says (the user by default), once: a wrong PIN is never
    /// tried again.
    pub async fn login(&self, p: &Partition, login: Login) -> ApiResult<()> {
        self.login_as(p, self.user_kind(), login).await.map(|_| ())
    }

    /// Log in to `p` as `user`; the PIN used, for a command that needs it again (`pin
    /// change`), and `None` when no PIN was at hand and none was required.
    pub async fn login_as(
        &self,
        p: &Partition,
        user: UserKind,
        login: Login,
    ) -> ApiResult<Option<p11::Pin>> {
        let role = user.role().name(p.module.module.family());
        let required = login == Login::Required;
        let prompt = format!("PIN for {} ({role}): ", p.label);
        match pin::get(self.global, required, &prompt)? {
            Some(pin) => {
                let again = pin::duplicate(&pin);
                let r = self.console.login(&p.id, user, pin).await?;
                if r.pin_to_be_changed {
                    self.out.note(format!(
                        "note: {} Change it with `hsmc pin change`.",
                        r.pin_change_reason.unwrap_or_default()
                    ));
                }
                Ok(Some(again))
            }
            None if required => Err(ApiError::invalid(text!(
                "errors.command_needs_pin",
                "This command needs a PIN."
            ))
            .suggest(text!(
                "errors.set_hsmc_pin_use_pin",
                "Set HSMC_PIN or HSMC_PIN_FILE, or use --pin-file / --pin-fd, or run it on a terminal to be asked."
            ))),
            None => Ok(None),
        }
    }

    /// A PIN from the sources `--pin-file`, `--pin-fd`, `HSMC_PIN` or a prompt, without
    /// logging in (`token init` hands the SO PIN to `C_InitToken`).
    pub fn secret(&self, prompt: &str) -> ApiResult<p11::Pin> {
        pin::get(self.global, true, prompt)?.ok_or_else(|| {
            ApiError::invalid(text!(
                "errors.command_needs_pin",
                "This command needs a PIN."
            ))
            .suggest(text!(
                "errors.set_hsmc_pin_use_pin",
                "Set HSMC_PIN or HSMC_PIN_FILE, or use --pin-file / --pin-fd, or run it on a terminal to be asked."
            ))
        })
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
