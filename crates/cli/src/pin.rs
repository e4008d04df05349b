//! Where a PIN comes from: `HSMC_PIN`, `--pin-file`, `--pin-fd`, or a prompt on the
//! terminal. Never from an argument (it would be in the process list and shell history).

use std::io::{BufRead, BufReader, IsTerminal};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use console::ApiError;
use zeroize::Zeroize;

use crate::args::Global;
use console::text;

fn first_line(r: impl std::io::Read, what: &str) -> Result<p11::Pin, ApiError> {
    let mut line = String::new();
    BufReader::new(r).read_line(&mut line).map_err(|e| {
        ApiError::invalid(text!(
            "errors.cannot_read_pin_from",
            "cannot read the PIN from {{what}}: {{error}}",
            what = what,
            error = e
        ))
    })?;
    let pin = line.trim_end_matches(['\n', '\r']).to_string();
    line.zeroize();
    if pin.is_empty() {
        return Err(ApiError::invalid(text!(
            "errors.holds_no_pin",
            "{{what}} holds no PIN",
            what = what
        )));
    }
    Ok(p11::pin(pin))
}

/// A second zeroizing copy of a PIN (one for the login, one for the call that needs the
/// same PIN again).
pub fn duplicate(pin: &p11::Pin) -> p11::Pin {
    p11::pin(secrecy::ExposeSecret::expose_secret(pin).to_string())
}

/// Where a new PIN comes from: `HSMC_NEW_PIN`, `--new-pin-file`, `--new-pin-fd`, or a
/// prompt on the terminal asked twice (the two must match).
pub struct NewPinSource<'a> {
    pub file: Option<&'a Path>,
    pub fd: Option<u32>,
}

pub fn get_new(src: &NewPinSource<'_>, what: &str) -> Result<p11::Pin, ApiError> {
    if let Some(path) = src.file {
        let f = std::fs::File::open(path).map_err(|e| {
            ApiError::invalid(text!(
                "errors.cannot_open_new_pin_file",
                "cannot open the new-PIN file {{path}}: {{error}}",
                path = path.display(),
                error = e
            ))
        })?;
        return first_line(f, &path.display().to_string());
    }
    if let Some(fd) = src.fd {
        let p = format!("/proc/self/fd/{fd}");
        let f = std::fs::File::open(Path::new(&p)).map_err(|e| {
            ApiError::invalid(text!(
                "errors.file_descriptor_cannot_read",
                "file descriptor {{fd}} cannot be read: {{error}}",
                fd = fd,
                error = e
            ))
        })?;
        return first_line(f, &format!("file descriptor {fd}"));
    }
    if let Ok(mut v) = std::env::var("HSMC_NEW_PIN") {
        let pin = p11::pin(v.clone());
        v.zeroize();
        if secrecy::ExposeSecret::expose_secret(&pin).is_empty() {
            return Err(ApiError::invalid(text!(
                "errors.new_pin_env_empty",
                "HSMC_NEW_PIN is empty"
            )));
        }
        return Ok(pin);
    }
    if std::io::stdin().is_terminal() {
        let unreadable = |e: std::io::Error| {
            ApiError::invalid(text!(
                "errors.cannot_read_pin",
                "cannot read the PIN: {{error}}",
                error = e
            ))
        };
        let mut a = rpassword::prompt_password(format!("New {what}: ")).map_err(unreadable)?;
        let mut b =
            rpassword::prompt_password(format!("New {what} again: ")).map_err(unreadable)?;
        let same = a == b;
        let pin = p11::pin(a.clone());
        a.zeroize();
        b.zeroize();
        if !same {
            return Err(ApiError::invalid(text!(
                "errors.new_pins_differ",
                "The two new PINs differ; nothing was changed."
            )));
        }
        return Ok(pin);
    }
    Err(ApiError::invalid(text!(
        "errors.new_pin_needed",
        "This command needs the new {{what}}.",
        what = what
    ))
    .suggest(text!(
        "errors.new_pin_needed_hint",
        "Set HSMC_NEW_PIN, or use --new-pin-file / --new-pin-fd, or run it on a terminal to be asked twice."
    )))
}

/// Set when standard input is not the person's (`git-gpg` reads the payload there): a
/// prompt is then asked on the controlling terminal when there is one.
static ON_THE_TERMINAL: AtomicBool = AtomicBool::new(false);

/// Ask for a PIN on the controlling terminal (`/dev/tty`, where the prompt is read anyway)
/// rather than only when standard input is a terminal.
pub fn ask_on_the_terminal() {
    ON_THE_TERMINAL.store(true, Ordering::Relaxed);
}

/// Whether a prompt can be answered: standard input is a terminal, or (see
/// [`ask_on_the_terminal`]) the process has a controlling terminal.
fn can_prompt() -> bool {
    std::io::stdin().is_terminal()
        || (ON_THE_TERMINAL.load(Ordering::Relaxed)
            && std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")
                .is_ok())
}

/// The PIN, if one is available without asking (`interactive = false`) or at all.
pub fn get(g: &Global, interactive: bool, prompt: &str) -> Result<Option<p11::Pin>, ApiError> {
    get_from(g.pin_file.as_deref(), g.pin_fd, interactive, prompt)
}

/// [`get`] from these sources.
fn get_from(
    pin_file: Option<&Path>,
    pin_fd: Option<u32>,
    interactive: bool,
    prompt: &str,
) -> Result<Option<p11::Pin>, ApiError> {
    if let Some(path) = pin_file {
        let f = std::fs::File::open(path).map_err(|e| {
            ApiError::invalid(text!(
                "errors.cannot_open_pin_file",
                "cannot open the PIN file {{path}}: {{error}}",
                path = path.display(),
                error = e
            ))
        })?;
        return first_line(f, &path.display().to_string()).map(Some);
    }
    if let Some(fd) = pin_fd {
        // The descriptor is inherited from the caller; reading it through /proc needs no
        // unsafe code and leaves the caller's descriptor as it was.
        let p = format!("/proc/self/fd/{fd}");
        let f = std::fs::File::open(Path::new(&p)).map_err(|e| {
            ApiError::invalid(text!(
                "errors.file_descriptor_cannot_read",
                "file descriptor {{fd}} cannot be read: {{error}}",
                fd = fd,
                error = e
            ))
        })?;
        return first_line(f, &format!("file descriptor {fd}")).map(Some);
    }
    if let Ok(mut v) = std::env::var("HSMC_PIN") {
        let pin = p11::pin(v.clone());
        v.zeroize();
        return Ok(Some(pin));
    }
    if interactive && can_prompt() {
        let mut v = rpassword::prompt_password(prompt).map_err(|e| {
            ApiError::invalid(text!(
                "errors.cannot_read_pin",
                "cannot read the PIN: {{error}}",
                error = e
            ))
        })?;
        let pin = p11::pin(v.clone());
        v.zeroize();
        return Ok(Some(pin));
    }
    Ok(None)
}

/// Where `sign --context-login` gets the PINs of a key that wants one for each signature
/// (`CKA_ALWAYS_AUTHENTICATE`): once for the batch from the same sources as the login's
/// PIN (`HSMC_PIN`, `--pin-file`, `--pin-fd`, else a prompt), or before each signature
/// from the terminal — which only a terminal can answer (without one, `each` is refused
/// before anything is signed).
pub fn context_pins(g: &Global) -> console::sign::ContextPins {
    let (file, fd) = (g.pin_file.clone(), g.pin_fd);
    let each = can_prompt();
    console::sign::ContextPins::new(
        move |ask| {
            let asked = match ask.signatures {
                Some(n) => get_from(
                    file.as_deref(),
                    fd,
                    true,
                    &format!(
                        "PIN for '{}', for the {n} signature(s) of this batch: ",
                        ask.key
                    ),
                ),
                None => rpassword::prompt_password(format!(
                    "PIN for '{}' to sign {}: ",
                    ask.key,
                    ask.file.as_deref().unwrap_or_default()
                ))
                .map(|mut v| {
                    let pin = p11::pin(v.clone());
                    v.zeroize();
                    Some(pin)
                })
                .map_err(|e| {
                    ApiError::invalid(text!(
                        "errors.cannot_read_pin",
                        "cannot read the PIN: {{error}}",
                        error = e
                    ))
                }),
            };
            match asked {
                Ok(pin) => pin,
                Err(e) => {
                    eprintln!("{}", e.message);
                    None
                }
            }
        },
        each,
    )
}
