//! `hsmc completions` and `hsmc man`: the command line describing itself, from the same
//! definition clap parses with.

use clap::CommandFactory;
use console::{ApiError, ApiResult};

use crate::args::Cli;
use crate::render::Verbatim;
use console::text;

pub fn completions(shell: clap_complete::Shell) -> ApiResult<Verbatim> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "hsmc", &mut buf);
    text(buf, "completions")
}

pub fn man() -> ApiResult<Verbatim> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut buf)
        .map_err(|e| {
            ApiError::io(
                text!(
                    "hsm.console.cannot_render_man_page",
                    "cannot render the man page"
                ),
                &e,
            )
        })?;
    text(buf, "man page")
}

fn text(buf: Vec<u8>, what: &str) -> ApiResult<Verbatim> {
    String::from_utf8(buf).map(Verbatim).map_err(|e| {
        ApiError::invalid(text!(
            "errors.not_utf",
            "the {{what}} are not UTF-8: {{error}}",
            what = what,
            error = e
        ))
    })
}
