//! `hsmc` — the console's services on the command line. Every subcommand is a thin adapter
//! over `console::Console`: the same binding, pool, audit trail and formats as the app.
//!
//! `args` is the command line, `context` what a command sets up from it, `domains` the
//! subcommands (handlers returning views), `render` the one place that prints them.
//!
//! Exit codes: 0 ok, 1 failure, 2 usage, 3 verification failed, 4 HSM unavailable,
//! 5 audit unavailable.

mod args;
mod context;
mod domains;
mod pin;
mod render;

use std::process::ExitCode;

use clap::Parser;

use args::Cli;
use console::text;
use console::{ApiError, ErrorCode};
use render::Renderer;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HSMC_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, not in a pipeline's log.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let out = Renderer::new(cli.global.json, cli.global.language());
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            out.error(&ApiError::new(
                ErrorCode::Internal,
                text!("errors.cannot_start", "cannot start: {{error}}", error = e),
            ));
            return ExitCode::from(1);
        }
    };
    match rt.block_on(domains::run(&cli, out)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            out.error(&e);
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
