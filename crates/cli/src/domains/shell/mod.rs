//! `hsmc completions`, `hsmc man` and `hsmc reference`: the command line describing itself,
//! from the same definition clap parses with.

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

/// The command reference as Markdown: `hsmc.md` (every command, one line each) and a page
/// per command (`hsmc-keys.md`, …: usage, arguments, options and its subcommands), written
/// into `dir`. The book's reference is this output; a test fails when they differ.
pub fn reference(dir: &std::path::Path) -> ApiResult<Verbatim> {
    let cli = Cli::command();
    let io = |e: std::io::Error| {
        ApiError::io(
            text!(
                "hsm.console.cannot_write_reference",
                "cannot write the command reference"
            ),
            &e,
        )
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut index = String::from(
        "# hsmc command reference\n\nGenerated from the command line's definition (`hsmc reference --out DIR`).\n\n| command | what it does |\n|---|---|\n",
    );
    let mut written = Vec::new();
    for sub in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = sub.get_name();
        // Without clap's `help` subcommands, which repeat the page.
        let sub = sub
            .clone()
            .disable_help_subcommand(true)
            .bin_name(format!("hsmc {name}"))
            .display_name(format!("hsmc {name}"));
        let file = format!("hsmc-{name}.md");
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        index.push_str(&format!("| [`hsmc {name}`]({file}) | {about} |\n"));
        let options = clap_markdown::MarkdownOptions::new()
            .title(format!("hsmc {name}"))
            .show_footer(false)
            .show_table_of_contents(false);
        let page = clap_markdown::help_markdown_command_custom(&sub, &options);
        std::fs::write(dir.join(&file), page).map_err(io)?;
        written.push(file);
    }
    index.push_str(
        "\n## Options of every command\n\nGiven before the command (`hsmc --json keys ls`).\n\n",
    );
    for a in cli.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(long) = a.get_long() else { continue };
        let value = match a.get_value_names() {
            Some(v) if a.get_action().takes_values() => format!(" <{}>", v.join(" ")),
            _ => String::new(),
        };
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        let env = a
            .get_env()
            .map(|e| format!(" (`{}`)", e.to_string_lossy()))
            .unwrap_or_default();
        index.push_str(&format!("* `--{long}{value}` — {help}{env}\n"));
    }
    std::fs::write(dir.join("hsmc.md"), index).map_err(io)?;
    Ok(Verbatim(format!(
        "{} pages written to {}\n",
        written.len() + 1,
        dir.display()
    )))
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
