//! Where a PIN comes from: `HSMC_PIN`, `--pin-file`, `--pin-fd`, or a prompt on the
//! terminal. Never from an argument (it would be in the process list and shell history).

use std::io::{BufRead, BufReader, IsTerminal};
use std::path::Path;

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

/// The PIN, if one is available without asking (`interactive = false`) or at all.
pub fn get(g: &Global, interactive: bool, prompt: &str) -> Result<Option<p11::Pin>, ApiError> {
    if let Some(path) = &g.pin_file {
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
    if let Some(fd) = g.pin_fd {
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
    if interactive && std::io::stdin().is_terminal() {
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
