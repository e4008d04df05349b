//! `hsmc git-ssh`: ssh-keygen's command line as git calls it for `gpg.format ssh`.

use std::path::PathBuf;

use clap::Args;
use console::text;
use console::{ApiError, ApiResult};

#[derive(Debug, Args)]
pub struct GitSshArgs {
    /// ssh-keygen's arguments as git passes them: `-Y sign -n git -f KEYFILE [-U] FILE`.
    /// Any other operation (`-Y verify`, `-Y find-principals`, `-Y check-novalidate`, …)
    /// is run by ssh-keygen itself, unchanged (HSMC_SSH_KEYGEN names another program).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "SSH-KEYGEN ARGS"
    )]
    pub args: Vec<String>,
}

/// `-Y sign` as git calls it.
#[derive(Debug, PartialEq, Eq)]
pub struct SignRequest {
    pub namespace: String,
    /// `-f`: the public key file git wrote (`user.signingkey`).
    pub key_file: PathBuf,
    /// The files to sign (`-` is standard input, signed to standard output).
    pub files: Vec<String>,
}

/// What the arguments ask for.
#[derive(Debug, PartialEq, Eq)]
pub enum GitSsh {
    Sign(SignRequest),
    /// Verification (`-Y verify`, `find-principals`, `check-novalidate`,
    /// `match-principals`): ssh-keygen's business.
    PassThrough,
}

/// The `-Y` operations git runs to verify, passed to ssh-keygen. Anything else is refused:
/// ssh-keygen without `-Y` would, for one, start generating a key.
const PASSED_THROUGH: &[&str] = &[
    "verify",
    "find-principals",
    "check-novalidate",
    "match-principals",
];

/// ssh-keygen's options that take a value (getopt's `X:`), as far as `-Y` uses them.
const WITH_VALUE: &[char] = &['Y', 'n', 'f', 'O', 'I', 's', 'r'];

impl GitSshArgs {
    /// Parse as ssh-keygen's getopt does (`-Y sign` or `-Ysign`; flags combined as `-Uv`).
    pub fn parse(&self) -> ApiResult<GitSsh> {
        let mut op = None;
        let (mut namespace, mut key_file) = (None, None);
        let mut options = Vec::new();
        let mut files = Vec::new();
        let mut it = self.args.iter();
        while let Some(a) = it.next() {
            if a == "--" {
                files.extend(it.by_ref().cloned());
                break;
            }
            let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) else {
                files.push(a.clone());
                continue;
            };
            for (i, c) in flags.char_indices() {
                if !WITH_VALUE.contains(&c) {
                    // -U (the key is in an agent), -q, -v: nothing for the HSM to do.
                    continue;
                }
                let rest = &flags[i + c.len_utf8()..];
                let value = if rest.is_empty() {
                    it.next().cloned().ok_or_else(|| {
                        ApiError::invalid(text!(
                            "cli.git_ssh.option_needs_value",
                            "-{{option}} needs a value.",
                            option = c
                        ))
                    })?
                } else {
                    rest.to_string()
                };
                match c {
                    'Y' => op = Some(value),
                    'n' => namespace = Some(value),
                    'f' => key_file = Some(PathBuf::from(value)),
                    'O' => options.push(value),
                    _ => {}
                }
                break;
            }
        }
        match op.as_deref() {
            Some("sign") => {}
            Some(o) if PASSED_THROUGH.contains(&o) => return Ok(GitSsh::PassThrough),
            _ => {
                return Err(ApiError::invalid(text!(
                    "cli.git_ssh.unsupported_operation",
                    "hsmc git-ssh signs (-Y sign) and passes -Y verify, find-principals, check-novalidate and match-principals to ssh-keygen; it does not run: {{args}}",
                    args = self.args.join(" ")
                )))
            }
        }
        for o in &options {
            check_sign_option(o)?;
        }
        let namespace = namespace.ok_or_else(|| {
            ApiError::invalid(text!(
                "cli.git_ssh.needs_namespace",
                "-Y sign needs a namespace (-n git)."
            ))
        })?;
        let key_file = key_file.ok_or_else(|| {
            ApiError::invalid(text!(
                "cli.git_ssh.needs_key_file",
                "-Y sign needs the public key file (-f KEYFILE): git passes user.signingkey."
            ))
        })?;
        if files.is_empty() {
            return Err(ApiError::invalid(text!(
                "cli.git_ssh.needs_file",
                "-Y sign needs the file to sign."
            )));
        }
        Ok(GitSsh::Sign(SignRequest {
            namespace,
            key_file,
            files,
        }))
    }
}

/// `-O` options of `-Y sign`: the hash is SHA-512 (ssh-keygen's default); others are
/// refused rather than ignored.
fn check_sign_option(o: &str) -> ApiResult<()> {
    match o {
        "hashalg=sha512" => Ok(()),
        _ => Err(ApiError::invalid(text!(
            "cli.git_ssh.unsupported_option",
            "-O {{option}} is not supported: only hashalg=sha512 is (SSHSIG's default).",
            option = o
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> ApiResult<GitSsh> {
        GitSshArgs {
            args: a.iter().map(|s| s.to_string()).collect(),
        }
        .parse()
    }

    #[test]
    fn git_s_sign_call_is_read_and_the_rest_passes_through() {
        let want = GitSsh::Sign(SignRequest {
            namespace: "git".into(),
            key_file: "/tmp/.git_signing_key_tmpX".into(),
            files: vec!["/tmp/.git_signing_buffer_tmpY".into()],
        });
        let git = [
            "-Y",
            "sign",
            "-n",
            "git",
            "-f",
            "/tmp/.git_signing_key_tmpX",
            "-U",
            "/tmp/.git_signing_buffer_tmpY",
        ];
        assert_eq!(parse(&git).unwrap(), want);
        assert_eq!(
            parse(&[
                "-Ysign",
                "-ngit",
                "-f/tmp/.git_signing_key_tmpX",
                "/tmp/.git_signing_buffer_tmpY"
            ])
            .unwrap(),
            want
        );
        for verify in [
            &["-Y", "verify", "-n", "git", "-f", "a", "-I", "x", "-s", "s"][..],
            &["-Y", "find-principals", "-f", "a", "-s", "s"],
            &[
                "-Y",
                "verify",
                "-n",
                "git",
                "-Overify-time=20260101",
                "-s",
                "s",
            ],
            &["-Y", "check-novalidate", "-n", "git", "-s", "s"],
        ] {
            assert_eq!(parse(verify).unwrap(), GitSsh::PassThrough);
        }
        // Not git's: ssh-keygen alone would generate a key.
        for other in [&[][..], &["-l", "-f", "key.pub"], &["-Y", "sign-agent"]] {
            assert!(parse(other).is_err(), "{other:?}");
        }
        assert!(parse(&["-Y", "sign", "-f", "k", "file"]).is_err());
        assert!(parse(&["-Y", "sign", "-n", "git", "file"]).is_err());
        assert!(parse(&["-Y", "sign", "-n", "git", "-f", "k"]).is_err());
        assert!(parse(&[
            "-Y",
            "sign",
            "-n",
            "git",
            "-f",
            "k",
            "-O",
            "hashalg=sha256",
            "f"
        ])
        .is_err());
    }
}
