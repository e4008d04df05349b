//! `hsmc git-ssh`: the program git runs for `gpg.format ssh` (`gpg.ssh.program`, through
//! a wrapper script, as git runs one program without arguments of its own). `-Y sign`
//! makes the SSHSIG with the HSM key whose public key git passes (`user.signingkey`,
//! matched against the partition's keys), audited with the repository, the object type
//! and the payload's hash; everything else — verification — is ssh-keygen's, unchanged.
//! `hsmc git-gpg` ([`gpg`]) is the same for `gpg.format openpgp`.

pub mod args;
pub mod gpg;
pub mod gpg_args;

use std::io::{Read, Write};
use std::path::Path;

use console::text;
use console::{ApiError, ApiResult, ErrorCode};
use serde::Serialize;

use self::args::{GitSsh, GitSshArgs, SignRequest};
use crate::context::{Ctx, Login};
use crate::render::{Page, Render};

/// What needs no console and no HSM: verification passed to ssh-keygen, or why the
/// arguments are refused. `None` for a signature.
pub fn without_console(a: &GitSshArgs) -> Option<ApiResult<u8>> {
    match a.parse() {
        Ok(GitSsh::Sign(_)) => None,
        Ok(GitSsh::PassThrough) => Some(pass_through(a)),
        Err(e) => Some(Err(e)),
    }
}

/// Run ssh-keygen (or HSMC_SSH_KEYGEN) with the arguments unchanged; its exit code.
pub fn pass_through(a: &GitSshArgs) -> ApiResult<u8> {
    let program = std::env::var_os("HSMC_SSH_KEYGEN").unwrap_or_else(|| "ssh-keygen".into());
    let status = std::process::Command::new(&program)
        .args(&a.args)
        .status()
        .map_err(|e| {
            ApiError::io(
                text!(
                    "cli.git_ssh.cannot_run_ssh_keygen",
                    "cannot run {{program}}",
                    program = Path::new(&program).display()
                ),
                &e,
            )
        })?;
    Ok(status.code().map_or(1, |c| c.clamp(0, 255) as u8))
}

/// One signed file.
#[derive(Debug, Serialize)]
pub struct SignedPayload {
    pub file: String,
    /// Where the signature went (`-` for standard output).
    pub signature: String,
    pub key_label: String,
    pub fingerprint: String,
    pub namespace: String,
    pub sha512: String,
    /// "commit" or "tag" when the payload is one (namespace git).
    pub object_type: Option<&'static str>,
}

/// What `git-ssh -Y sign` did; said on standard error, as ssh-keygen does (git shows
/// standard error when signing fails, and passes standard output through).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Signed(pub Vec<SignedPayload>);

impl Render for Signed {
    fn text(&self, page: &mut Page) -> ApiResult<()> {
        for s in &self.0 {
            writeln!(
                page.err(),
                "Signed {} with the HSM key {} ({}); wrote {}",
                s.file,
                s.key_label,
                s.fingerprint,
                s.signature
            );
        }
        Ok(())
    }
}

/// The largest payload read: git's commits and tags are far smaller, and a payload is held
/// in memory while it is signed.
pub const MAX_PAYLOAD: u64 = 64 << 20;

/// A payload to sign: the file, or standard input for `-`; refused beyond [`MAX_PAYLOAD`].
fn read_payload(file: &str) -> ApiResult<Vec<u8>> {
    let unreadable = |e: std::io::Error| {
        ApiError::io(
            text!(
                "cli.git_ssh.cannot_read_payload",
                "cannot read {{path}}",
                path = file
            ),
            &e,
        )
    };
    let source: Box<dyn Read> = if file == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(file).map_err(unreadable)?)
    };
    let mut b = Vec::new();
    source
        .take(MAX_PAYLOAD + 1)
        .read_to_end(&mut b)
        .map_err(unreadable)?;
    if b.len() as u64 > MAX_PAYLOAD {
        return Err(ApiError::invalid(text!(
            "cli.git.payload_too_large",
            "The payload to sign is larger than {{max}} MiB; git's commits and tags are far smaller. Nothing was signed.",
            max = MAX_PAYLOAD >> 20
        )));
    }
    Ok(b)
}

/// The repository git runs the program in (its working folder).
fn repository() -> String {
    std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default()
}

/// The object a git payload is: a commit starts with its tree, a tag with its object.
fn object_type(payload: &[u8]) -> Option<&'static str> {
    if payload.starts_with(b"tree ") {
        Some("commit")
    } else if payload.starts_with(b"object ") {
        Some("tag")
    } else {
        None
    }
}

pub async fn run(ctx: &Ctx<'_>, a: &GitSshArgs) -> ApiResult<u8> {
    match a.parse()? {
        GitSsh::PassThrough => pass_through(a),
        GitSsh::Sign(req) => {
            let r = sign(ctx, &req).await?;
            ctx.out.show(&r)
        }
    }
}

async fn sign(ctx: &Ctx<'_>, req: &SignRequest) -> ApiResult<Signed> {
    let key_text = std::fs::read_to_string(&req.key_file).map_err(|e| {
        ApiError::io(
            text!(
                "cli.git_ssh.cannot_read_key_file",
                "cannot read the key file {{path}}",
                path = req.key_file.display()
            ),
            &e,
        )
    })?;
    if key_text.contains("PRIVATE KEY") {
        return Err(ApiError::invalid(text!(
            "cli.git_ssh.private_key_file",
            "{{path}} is a private key file; hsmc git-ssh signs with HSM keys: set user.signingkey to the key's public line (hsmc keys ssh-pub KEY).",
            path = req.key_file.display()
        )));
    }
    let p = ctx.partition().await?;
    ctx.login(&p, Login::Required).await?;
    let c = ctx.console();
    let key = c.signing().find_ssh_key(&p.id, &key_text).await?;
    let repository = repository();
    let mut done = Vec::new();
    for file in &req.files {
        let payload = read_payload(file)?;
        let object = if req.namespace == "git" {
            object_type(&payload)
        } else {
            None
        };
        let resource = match object {
            Some(o) => format!("git {o}"),
            None => file.clone(),
        };
        let s = c
            .signing()
            .sign_ssh(
                &p.id,
                key.handle,
                &req.namespace,
                &payload,
                &resource,
                vec![
                    ("signer", "hsmc git-ssh".into()),
                    ("repository", repository.clone().into()),
                    ("object_type", object.into()),
                    ("path", file.clone().into()),
                ],
            )
            .await?;
        let signature = if file == "-" {
            std::io::stdout()
                .write_all(s.armored.as_bytes())
                .map_err(|e| ApiError::new(ErrorCode::Io, e.to_string()))?;
            "-".to_string()
        } else {
            // As ssh-keygen: FILE.sig, replaced if it exists (git reads it, then removes it).
            let out = format!("{file}.sig");
            outfile::write_replace(Path::new(&out), s.armored.as_bytes())
                .map_err(ApiError::from)?;
            out
        };
        done.push(SignedPayload {
            file: file.clone(),
            signature,
            key_label: s.key_label,
            fingerprint: s.fingerprint,
            namespace: s.namespace,
            sha512: s.sha512,
            object_type: object,
        });
    }
    Ok(Signed(done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_payloads_say_what_they_are() {
        assert_eq!(object_type(b"tree 4b825dc6\nparent"), Some("commit"));
        assert_eq!(object_type(b"object 4b825dc6\ntype commit"), Some("tag"));
        assert_eq!(object_type(b"anything"), None);
    }
}
