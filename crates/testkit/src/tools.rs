//! Outside PKCS#11 clients of another lineage than the console, run against a test token to
//! read back what the console changed: OpenSC's `pkcs11-tool` and GnuTLS's `p11tool`.

use std::path::Path;
use std::process::{Command, Output};

/// Run `program` with the token's environment (`SOFTHSM2_CONF`, `KRYOPTIC_CONF`,
/// `LUNASIM_CONF`); panics when the tool itself is missing.
fn run(program: &str, env: &[(String, String)], args: &[&str]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap_or_else(|e| {
        panic!("{program} cannot run ({e}); install it (scripts/setup.sh: opensc, gnutls-bin)")
    })
}

/// `pkcs11-tool --module M ARGS…`.
pub fn pkcs11_tool(module: &Path, env: &[(String, String)], args: &[&str]) -> Output {
    let m = module.display().to_string();
    let mut all = vec!["--module", m.as_str()];
    all.extend_from_slice(args);
    run("pkcs11-tool", env, &all)
}

/// `p11tool --batch --provider M ARGS…` (GnuTLS).
pub fn p11tool(module: &Path, env: &[(String, String)], args: &[&str]) -> Output {
    let provider = format!("--provider={}", module.display());
    let mut all = vec!["--batch", provider.as_str()];
    all.extend_from_slice(args);
    run("p11tool", env, &all)
}

/// Does `pkcs11-tool` log in to the token labelled `label` with `pin`?
pub fn pkcs11_tool_logs_in(
    module: &Path,
    env: &[(String, String)],
    label: &str,
    pin: &str,
) -> bool {
    pkcs11_tool(
        module,
        env,
        &[
            "--token-label",
            label,
            "--login",
            "--pin",
            pin,
            "--list-objects",
        ],
    )
    .status
    .success()
}

/// Does `p11tool` log in to the token labelled `label` with `pin`?
pub fn p11tool_logs_in(module: &Path, env: &[(String, String)], label: &str, pin: &str) -> bool {
    let url = format!("pkcs11:token={}", label.replace(' ', "%20"));
    let set_pin = format!("--set-pin={pin}");
    p11tool(
        module,
        env,
        &["--login", set_pin.as_str(), "--list-all", url.as_str()],
    )
    .status
    .success()
}

/// Text of an output (stdout then stderr), for assertions and messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
