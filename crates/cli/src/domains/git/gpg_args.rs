//! `hsmc git-gpg` (and `hsmc-gpg`): gpg's command line as git calls it for `gpg.format
//! openpgp` — `--status-fd=2 -bsau KEYID` to sign; `--verify` is gpg's own.

use clap::Args;
use console::text;
use console::{ApiError, ApiResult};

#[derive(Debug, Args)]
pub struct GitGpgArgs {
    /// gpg's arguments as git passes them: `--status-fd=2 -bsau KEYID` (the payload on
    /// standard input, the armored signature on standard output). Any call with `--verify`
    /// is run by gpg itself, unchanged (HSMC_GPG names another program); any other option
    /// is refused by name.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "GPG ARGS"
    )]
    pub args: Vec<String>,
}

/// A detached signature as git asks for it.
#[derive(Debug, PartialEq, Eq)]
pub struct GpgSignRequest {
    /// `-u`/`--local-user`: `user.signingkey`.
    pub key: String,
    /// `--status-fd`: where the `[GNUPG:]` status lines go.
    pub status_fd: Option<u32>,
}

/// What the arguments ask for.
#[derive(Debug, PartialEq, Eq)]
pub enum GitGpg {
    Sign(GpgSignRequest),
    /// `--verify`: gpg's business, run unchanged.
    PassThrough,
}

/// What one option did to the request being read.
#[derive(Default)]
struct Seen {
    detach: bool,
    armor: bool,
    key: Option<String>,
    status_fd: Option<String>,
    refused: Vec<String>,
}

impl Seen {
    /// A long option (`--name` or `--name=value`); `next` yields a separate value.
    fn long(&mut self, opt: &str, next: &mut dyn FnMut() -> Option<String>) -> ApiResult<()> {
        let (name, inline) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (opt, None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(&mut *next)
                .ok_or_else(|| needs_value(name))
        };
        match name {
            "--detach-sign" => self.detach = true,
            "--sign" => {}
            "--armor" => self.armor = true,
            "--local-user" => self.key = Some(value()?),
            "--status-fd" => self.status_fd = Some(value()?),
            _ => self.refused.push(name.to_string()),
        }
        Ok(())
    }

    /// A cluster of short options (`-bsau KEY`, `-uKEY`).
    fn short(&mut self, flags: &str, next: &mut dyn FnMut() -> Option<String>) -> ApiResult<()> {
        for (i, c) in flags.char_indices() {
            match c {
                'b' => self.detach = true,
                's' => {}
                'a' => self.armor = true,
                'u' => {
                    let rest = &flags[i + 1..];
                    let key = if rest.is_empty() {
                        next().ok_or_else(|| needs_value("-u"))?
                    } else {
                        rest.to_string()
                    };
                    self.key = Some(key);
                    return Ok(());
                }
                other => self.refused.push(format!("-{other}")),
            }
        }
        Ok(())
    }
}

fn needs_value(option: &str) -> ApiError {
    ApiError::invalid(text!(
        "cli.git_gpg.option_needs_value",
        "{{option}} needs a value.",
        option = option
    ))
}

impl GitGpgArgs {
    /// Parse as gpg does the part git uses: short flags combined (`-bsau KEY`) or apart,
    /// long ones with `=` or a separate value. A call with `--verify` passes through whole.
    pub fn parse(&self) -> ApiResult<GitGpg> {
        if self.args.iter().any(|a| a == "--verify") {
            return Ok(GitGpg::PassThrough);
        }
        let mut seen = Seen::default();
        let mut it = self.args.iter().cloned();
        while let Some(a) = it.next() {
            let mut next = || it.next();
            if a.starts_with("--") && a.len() > 2 {
                seen.long(&a, &mut next)?;
            } else if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
                seen.short(flags, &mut next)?;
            } else {
                seen.refused.push(a);
            }
        }
        if !seen.refused.is_empty() {
            return Err(ApiError::invalid(text!(
                "cli.git_gpg.unsupported",
                "hsmc-gpg makes detached armored signatures (--status-fd=N -bsau KEYID, the payload on standard input) and passes --verify to gpg; it does not implement: {{options}}",
                options = seen.refused.join(" ")
            )));
        }
        if !(seen.detach && seen.armor) {
            return Err(ApiError::invalid(text!(
                "cli.git_gpg.detached_armored_only",
                "hsmc-gpg makes detached, ASCII-armored signatures only: give -b and -a (git passes -bsau KEYID)."
            )));
        }
        let key = seen.key.ok_or_else(|| {
            ApiError::invalid(text!(
                "cli.git_gpg.needs_key",
                "-u KEYID is needed: git passes user.signingkey, the key's OpenPGP fingerprint."
            ))
        })?;
        let status_fd = match seen.status_fd {
            None => None,
            Some(v) => Some(v.parse::<u32>().map_err(|_| {
                ApiError::invalid(text!(
                    "cli.git_gpg.bad_status_fd",
                    "--status-fd takes a file descriptor number, not {{value}}.",
                    value = v
                ))
            })?),
        };
        Ok(GitGpg::Sign(GpgSignRequest { key, status_fd }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> ApiResult<GitGpg> {
        GitGpgArgs {
            args: a.iter().map(|s| s.to_string()).collect(),
        }
        .parse()
    }

    fn sign(key: &str, fd: Option<u32>) -> GitGpg {
        GitGpg::Sign(GpgSignRequest {
            key: key.into(),
            status_fd: fd,
        })
    }

    #[test]
    fn git_s_sign_call_is_read_in_each_spelling() {
        let k = "0123456789ABCDEF";
        assert_eq!(
            parse(&["--status-fd=2", "-bsau", k]).unwrap(),
            sign(k, Some(2))
        );
        assert_eq!(
            parse(&["--status-fd", "2", "-b", "-s", "-a", "-u", k]).unwrap(),
            sign(k, Some(2))
        );
        assert_eq!(
            parse(&["--detach-sign", "--armor", "--local-user", k]).unwrap(),
            sign(k, None)
        );
        assert_eq!(
            parse(&["--local-user=0x1", "--sign", "--detach-sign", "--armor"]).unwrap(),
            sign("0x1", None)
        );
        assert_eq!(parse(&["-bsau0x1"]).unwrap(), sign("0x1", None));
    }

    #[test]
    fn verification_passes_through_and_anything_else_is_refused_by_name() {
        for v in [
            &[
                "--keyid-format=long",
                "--status-fd=1",
                "--verify",
                "sig",
                "-",
            ][..],
            &["--verify", "sig", "-"],
            &["--verify"],
        ] {
            assert_eq!(parse(v).unwrap(), GitGpg::PassThrough);
        }
        let refused = |a: &[&str], named: &str| {
            let e = parse(a).unwrap_err();
            assert!(e.message.contains(named), "{a:?}: {}", e.message);
        };
        refused(
            &["--status-fd=2", "-bsau", "K", "--clearsign"],
            "--clearsign",
        );
        refused(&["-bsau", "K", "--list-keys"], "--list-keys");
        refused(&["-bseau", "K"], "-e");
        refused(&["-bsau", "K", "file.txt"], "file.txt");
        assert!(parse(&["-bsu", "K"]).is_err(), "binary output");
        assert!(parse(&["-sau", "K"]).is_err(), "not detached");
        assert!(parse(&["-bsa"]).is_err(), "no key");
        assert!(parse(&["-bsau"]).is_err(), "-u without its value");
        assert!(parse(&["--status-fd=x", "-bsau", "K"]).is_err());
        assert!(parse(&[]).is_err());
    }
}
