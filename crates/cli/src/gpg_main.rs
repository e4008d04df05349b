//! `hsmc-gpg`: git's `gpg.program` for OpenPGP signatures made by the HSM. git runs it with
//! gpg's arguments only (`--status-fd=2 -bsau KEYID` to sign, `--verify` to check), so it
//! runs `hsmc git-gpg` — the `hsmc` beside it, else the one on PATH — with them unchanged;
//! `hsmc`'s own options come from its `HSMC_*` variables.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use console::{text, ApiError};

fn main() -> ExitCode {
    let hsmc = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("hsmc")))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("hsmc"));
    // `--`: every argument is gpg's, none is taken for one of hsmc's own options.
    let e = Command::new(&hsmc)
        .arg("git-gpg")
        .arg("--")
        .args(std::env::args_os().skip(1))
        .exec();
    let err = ApiError::io(
        text!(
            "cli.git_gpg.cannot_run_hsmc",
            "hsmc-gpg cannot run {{program}}",
            program = hsmc.display()
        ),
        &e,
    );
    eprintln!("error: {}", err.message_in(console::i18n::Lang::from_env()));
    ExitCode::from(2)
}
