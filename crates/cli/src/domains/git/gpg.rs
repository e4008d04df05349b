//! `hsmc git-gpg` (installed as `hsmc-gpg` too): the program git runs for `gpg.format
//! openpgp` (`gpg.program`). `--status-fd=2 -bsau KEYID` makes a detached, armored OpenPGP
//! signature of the payload on standard input with the HSM key whose console-made
//! certificate has that fingerprint or key ID, audited as `git-ssh`'s are; `--verify` is the
//! real gpg's, run unchanged.

use std::io::Write;
use std::path::{Path, PathBuf};

use console::sign::OpenPgpPayloadSignature;
use console::text;
use console::{ApiError, ApiResult, ErrorCode};

use super::gpg_args::{GitGpg, GitGpgArgs, GpgSignRequest};
use super::{object_type, read_payload, repository};
use crate::context::{Ctx, Login};

/// Set in the environment of the gpg run for verification: a `gpg` found on PATH that is
/// `hsmc-gpg` itself would otherwise run itself without end.
const PASSING: &str = "HSMC_GIT_GPG_PASSING";

/// What needs no console and no HSM: verification passed to gpg, or why the arguments are
/// refused. `None` for a signature.
pub fn without_console(a: &GitGpgArgs) -> Option<ApiResult<u8>> {
    match a.parse() {
        Ok(GitGpg::Sign(_)) => None,
        Ok(GitGpg::PassThrough) => Some(pass_through(a)),
        Err(e) => Some(Err(e)),
    }
}

/// The real gpg: HSMC_GPG, else the first `gpg` on PATH that is not this program.
fn real_gpg() -> ApiResult<PathBuf> {
    if let Some(p) = std::env::var_os("HSMC_GPG") {
        return Ok(PathBuf::from(p));
    }
    let me = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
    let wrapper = me
        .as_ref()
        .and_then(|m| m.parent())
        .and_then(|d| d.join("hsmc-gpg").canonicalize().ok());
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("gpg"))
        .filter(|c| c.is_file())
        .find(|c| {
            let real = c.canonicalize().ok();
            real.is_some() && real != me && real != wrapper
        })
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::Unsupported,
                text!(
                    "cli.git_gpg.no_gpg",
                    "No gpg on PATH to verify with (other than hsmc-gpg itself); set HSMC_GPG to the real gpg."
                ),
            )
        })
}

/// Run gpg with the arguments unchanged; its exit code.
pub fn pass_through(a: &GitGpgArgs) -> ApiResult<u8> {
    if std::env::var_os(PASSING).is_some() {
        return Err(ApiError::new(
            ErrorCode::Unsupported,
            text!(
                "cli.git_gpg.runs_itself",
                "The gpg hsmc-gpg runs to verify is hsmc-gpg again; set HSMC_GPG to the real gpg."
            ),
        ));
    }
    let program = real_gpg()?;
    let status = std::process::Command::new(&program)
        .args(&a.args)
        .env(PASSING, "1")
        .status()
        .map_err(|e| {
            ApiError::io(
                text!(
                    "cli.git_gpg.cannot_run_gpg",
                    "cannot run {{program}}",
                    program = program.display()
                ),
                &e,
            )
        })?;
    Ok(status.code().map_or(1, |c| c.clamp(0, 255) as u8))
}

pub async fn run(ctx: &Ctx<'_>, a: &GitGpgArgs) -> ApiResult<u8> {
    match a.parse()? {
        GitGpg::PassThrough => pass_through(a),
        GitGpg::Sign(req) => sign(ctx, &req).await,
    }
}

/// Where gpg's status lines go: standard output, standard error, or an inherited descriptor.
fn status_writer(fd: u32) -> ApiResult<Box<dyn Write>> {
    Ok(match fd {
        1 => Box::new(std::io::stdout()),
        2 => Box::new(std::io::stderr()),
        n => Box::new(
            std::fs::OpenOptions::new()
                .append(true)
                .open(Path::new(&format!("/proc/self/fd/{n}")))
                .map_err(|e| {
                    ApiError::io(
                        text!(
                            "cli.git_gpg.cannot_write_status",
                            "cannot write the status lines to file descriptor {{fd}}",
                            fd = n
                        ),
                        &e,
                    )
                })?,
        ),
    })
}

/// gpg's status lines for a signature made (DETAILS): git looks for `SIG_CREATED` on a line
/// of its own.
fn status_lines(s: &OpenPgpPayloadSignature) -> String {
    format!(
        "[GNUPG:] KEY_CONSIDERED {fpr} 0\n[GNUPG:] BEGIN_SIGNING H{hash}\n[GNUPG:] SIG_CREATED D {pk} {hash} 00 {ts} {fpr}\n",
        fpr = s.fingerprint,
        hash = s.hash_algo,
        pk = s.pk_algo,
        ts = s.created
    )
}

async fn sign(ctx: &Ctx<'_>, req: &GpgSignRequest) -> ApiResult<u8> {
    // The payload first: one too large is refused before the HSM is opened or asked a PIN.
    let payload = read_payload("-")?;
    let object = object_type(&payload);
    let p = ctx.partition().await?;
    // Standard input is the payload: a PIN prompt goes to git's terminal.
    crate::pin::ask_on_the_terminal();
    ctx.login(&p, Login::Required).await?;
    let c = ctx.console();
    let key = c.signing().find_openpgp_key(&p.id, &req.key).await?;
    let resource = match object {
        Some(o) => format!("git {o}"),
        None => "standard input".to_string(),
    };
    let s = c
        .signing()
        .sign_openpgp_payload(
            &p.id,
            &key,
            &payload,
            &resource,
            vec![
                ("signer", "hsmc git-gpg".into()),
                ("repository", repository().into()),
                ("object_type", object.into()),
                ("user_signingkey", req.key.clone().into()),
            ],
        )
        .await?;
    let io = |e: std::io::Error| ApiError::new(ErrorCode::Io, e.to_string());
    let mut out = std::io::stdout();
    out.write_all(s.armored.as_bytes()).map_err(io)?;
    out.flush().map_err(io)?;
    if let Some(fd) = req.status_fd {
        let mut w = status_writer(fd)?;
        w.write_all(status_lines(&s).as_bytes()).map_err(io)?;
        w.flush().map_err(io)?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_lines_are_gpg_s() {
        let s = OpenPgpPayloadSignature {
            armored: String::new(),
            key_label: "k".into(),
            fingerprint: "AB".repeat(20),
            created: 1_700_000_000,
            pk_algo: 22,
            hash_algo: 10,
            sha512: String::new(),
        };
        let fpr = "AB".repeat(20);
        assert_eq!(
            status_lines(&s),
            format!("[GNUPG:] KEY_CONSIDERED {fpr} 0\n[GNUPG:] BEGIN_SIGNING H10\n[GNUPG:] SIG_CREATED D 22 10 00 1700000000 {fpr}\n")
        );
    }
}
