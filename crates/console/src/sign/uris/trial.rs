//! "Test this line": run a key's tool line exactly as printed, against a throwaway file, and
//! then the tool's own check of what it made; the verdict is the tools' exit status and
//! their own words. The PIN is the logged-in session's, handed over in `PIN-FILE` (mode 0600
//! in a folder of mode 0700, deleted afterwards): never shown, logged or audited. The trial
//! itself is recorded in the audit trail before anything runs — another program uses the key.
//!
//! Lines with a caveat may be tried too: the verdict then shows the tool failing as the
//! caveat says, which is what the officer wants to see before relying on it.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use audit::Event;
use secrecy::ExposeSecret;
use serde::Serialize;
use ts_rs::TS;

use crate::core::error::{ApiError, ApiResult, ErrorCode};
use crate::sign::Signing;
use crate::text;
use hsm::keys as hk;

/// The PE the EFI and Authenticode lines sign in a trial: systemd-boot, from Debian's
/// `systemd-boot-efi` package.
pub const EFI_SAMPLE: &str = "/usr/lib/systemd/boot/efi/systemd-bootx64.efi";

/// How long one step may take before it is stopped (a tool that prompts would wait forever;
/// stdin is closed, but some open the terminal).
const STEP_TIMEOUT: Duration = Duration::from_secs(60);

/// What the tools printed is cut to its last this many characters.
const OUTPUT_CHARS: usize = 4000;

/// One command run in a trial.
#[derive(Debug, Clone, Serialize, TS)]
pub struct TrialStep {
    pub command: String,
    /// The exit status; `None` when it was stopped (timeout) or killed by a signal.
    pub exit_code: Option<i32>,
    /// Its standard output then standard error, trimmed; the PIN never appears.
    pub output: String,
}

/// A trial's verdict: the line, then (when it succeeded) the tool's check of what it made.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ToolVerdict {
    pub tool: String,
    /// Every step exited with 0 (the line and its check).
    pub ok: bool,
    pub steps: Vec<TrialStep>,
}

/// The key's material a line may name, read from the token.
struct KeyInputs {
    label: String,
    algorithm: String,
    id_hex: String,
    public_pem: Option<String>,
    certificate_pem: Option<String>,
}

impl Signing<'_> {
    /// Run the `tool` line of the private key `handle` (as [`crate::sign::Signing::object_uri`] prints it)
    /// in a throwaway folder holding the files it names, then the tool's own check. Needs the
    /// user logged in on the partition (the line logs in with the same PIN). Audited first.
    pub async fn try_tool_line(
        self,
        partition: &str,
        handle: u64,
        tool: &str,
    ) -> ApiResult<ToolVerdict> {
        let p = self.partition_ref(partition).await?;
        let pin = p.pool.user_pin().ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotLoggedIn,
                text!(
                    "uris.trial_needs_login",
                    "Testing a line needs the user (crypto officer) logged in on this partition: the line logs in with the PIN of that session."
                ),
            )
            .suggest(text!("uris.trial_log_in", "Log in as the user, then test the line again."))
        })?;
        let u = self.object_uri(partition, handle).await?;
        let line = u
            .commands
            .into_iter()
            .find(|c| c.tool == tool)
            .ok_or_else(|| {
                ApiError::invalid(text!(
                    "uris.trial_unknown_tool",
                    "No {{tool}} line is offered for this key.",
                    tool = tool
                ))
            })?;
        let refs = p.clone();
        let key = p
            .pool
            .run_service_idempotent_async("uris.trial", move |s| {
                let h = refs.key_refs.resolve(s, handle)?;
                let summary = hk::summary(s, h)?;
                let public_pem = hk::public_for_private(s, h)
                    .and_then(|ph| hk::read_public_key(s, ph))
                    .ok()
                    .map(|pk| pk.spki_pem());
                let id = hex::decode(&summary.id_hex).unwrap_or_default();
                let certificate_pem = crate::sign::key::find_certificate(s, &id)?
                    .map(|d| signing::cert::to_pem("CERTIFICATE", &d));
                Ok(KeyInputs {
                    label: summary.label,
                    algorithm: summary.algorithm,
                    id_hex: summary.id_hex,
                    public_pem,
                    certificate_pem,
                })
            })
            .await?;
        let names = format!("{}\n{}", line.command, line.verify.as_deref().unwrap_or(""));
        let inputs = inputs_named(&names, &key)?;
        self.audit_first(
            Event::new("uri.trial", "key")
                .resource(&key.label)
                .algorithm(&key.algorithm)
                .meta("partition", &p.id)
                .meta("key_id", &key.id_hex)
                .meta("tool", &line.tool),
        )
        .await?;
        let dir = TrialDir::new()?;
        dir.write_pin(pin.expose_secret())?;
        for (name, bytes) in inputs {
            std::fs::write(dir.0.join(name), bytes)
                .map_err(|e| ApiError::io(text!("uris.trial_folder", "the trial's folder"), &e))?;
        }
        let mut steps = vec![run_step(&dir.0, &line.command, pin.expose_secret()).await];
        if let (Some(0), Some(verify)) = (steps[0].exit_code, &line.verify) {
            steps.push(run_step(&dir.0, verify, pin.expose_secret()).await);
        }
        let ok = steps.iter().all(|s| s.exit_code == Some(0))
            && steps.len() == 1 + usize::from(line.verify.is_some());
        Ok(ToolVerdict {
            tool: line.tool,
            ok,
            steps,
        })
    }
}

/// The files the line names, with their contents; refuses when one cannot be had.
fn inputs_named(names: &str, key: &KeyInputs) -> ApiResult<Vec<(&'static str, Vec<u8>)>> {
    let mut files: Vec<(&'static str, Vec<u8>)> = Vec::new();
    let mut random = [0u8; 48];
    getrandom::fill(&mut random).map_err(no_randomness)?;
    let sample = format!(
        "A throwaway file the console made to test a tool line: {}\n",
        hex::encode(random)
    );
    files.push(("FILE", sample.into_bytes()));
    if names.contains("PUBLIC.pem") {
        let pem = key.public_pem.clone().ok_or_else(|| {
            ApiError::invalid(text!(
                "uris.trial_needs_public_key",
                "This line's check needs the key's public key, and the token holds none for '{{label}}'.",
                label = &key.label
            ))
        })?;
        files.push(("PUBLIC.pem", pem.into_bytes()));
    }
    if names.contains("CERT.pem") {
        let pem = key.certificate_pem.clone().ok_or_else(|| {
            ApiError::invalid(text!(
                "uris.trial_needs_certificate",
                "This line needs the key's certificate on the token (a certificate with the key's ID), and there is none for '{{label}}'.",
                label = &key.label
            ))
            .suggest(text!(
                "uris.trial_issue_certificate",
                "Issue a self-signed certificate for the key and keep it on the token, or import the certificate your CA issued for it."
            ))
        })?;
        files.push(("CERT.pem", pem.into_bytes()));
    }
    for (needle, name) in [("app.exe", "app.exe"), ("grubx64.efi", "grubx64.efi")] {
        if names.contains(needle) {
            let pe = std::fs::read(EFI_SAMPLE).map_err(|_| {
                ApiError::new(
                    ErrorCode::Unsupported,
                    text!(
                        "uris.trial_needs_efi_sample",
                        "This line signs a Windows/EFI binary; the sample a test signs, {{path}}, is missing.",
                        path = EFI_SAMPLE
                    ),
                )
                .suggest(text!(
                    "uris.trial_install_systemd_boot_efi",
                    "Install Debian's systemd-boot-efi package, which provides it."
                ))
            })?;
            files.push((name, pe));
        }
    }
    Ok(files)
}

fn no_randomness(e: getrandom::Error) -> ApiError {
    ApiError::new(ErrorCode::Internal, format!("no randomness: {e}"))
}

/// A folder only this user can read, removed (with the PIN in it) when dropped.
struct TrialDir(PathBuf);

impl TrialDir {
    fn new() -> ApiResult<TrialDir> {
        let mut random = [0u8; 8];
        getrandom::fill(&mut random).map_err(no_randomness)?;
        let path = std::env::temp_dir().join(format!("hsmc-trial-{}", hex::encode(random)));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| ApiError::io(text!("uris.trial_folder", "the trial's folder"), &e))?;
        Ok(TrialDir(path))
    }

    /// `PIN-FILE`, mode 0600: the PIN alone, without a line break.
    fn write_pin(&self, pin: &str) -> ApiResult<()> {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(self.0.join("PIN-FILE"))
            .and_then(|mut f| f.write_all(pin.as_bytes()))
            .map_err(|e| ApiError::io(text!("uris.trial_folder", "the trial's folder"), &e))
    }
}

impl Drop for TrialDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            tracing::warn!("trial folder {} not removed: {e}", self.0.display());
        }
    }
}

/// Run `command` with `sh -c` in `dir`, stdin closed, in its own process group (stopped
/// whole after [`STEP_TIMEOUT`]); what it printed has `pin` blotted out.
async fn run_step(dir: &Path, command: &str, pin: &str) -> TrialStep {
    let spawned = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        // hsmc may have been given the PIN in its environment: the tools get PIN-FILE only.
        .env_remove("HSMC_PIN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn();
    let child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return TrialStep {
                command: command.to_string(),
                exit_code: None,
                output: format!("sh: {e}"),
            }
        }
    };
    let group = child.id();
    let (exit_code, output) =
        match tokio::time::timeout(STEP_TIMEOUT, child.wait_with_output()).await {
            Ok(Ok(o)) => {
                let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&o.stderr));
                (o.status.code(), text)
            }
            Ok(Err(e)) => (None, e.to_string()),
            Err(_) => {
                if let Some(g) = group {
                    // The whole group: `sh` and the tool it started.
                    let _ = std::process::Command::new("kill")
                        .args(["-KILL", "--", &format!("-{g}")])
                        .status();
                }
                (None, format!("stopped after {} s", STEP_TIMEOUT.as_secs()))
            }
        };
    TrialStep {
        command: command.to_string(),
        exit_code,
        output: scrub(&output, pin),
    }
}

/// Trimmed, its last [`OUTPUT_CHARS`] characters, with the PIN replaced wherever it appears.
fn scrub(output: &str, pin: &str) -> String {
    let mut text = output.trim().to_string();
    if !pin.is_empty() {
        text = text.replace(pin, "••••");
    }
    let n = text.chars().count();
    if n > OUTPUT_CHARS {
        text = format!(
            "…{}",
            text.chars().skip(n - OUTPUT_CHARS).collect::<String>()
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pin_never_leaves_in_the_output() {
        let s = scrub("  Login with 4711-secret failed\n", "4711-secret");
        assert_eq!(s, "Login with •••• failed");
        let long = "x".repeat(OUTPUT_CHARS + 10);
        assert_eq!(scrub(&long, "").chars().count(), OUTPUT_CHARS + 1);
    }
}
