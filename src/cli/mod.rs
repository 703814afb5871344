//! The command line: clap structs ([`args`]), flags → settings ([`resolve`]), where words go
//! ([`printer`]), exit codes ([`exit`]), and one module per command ([`commands`]).
//!
//! It only translates: every rule lives in the library below it.

pub mod again;
pub mod args;
pub mod commands;
pub mod exit;
pub mod printer;
pub mod resolve;

use crate::cli::args::{Cli, Command, ReceiptCommand};
use crate::cli::exit::ExitCode;
use crate::error::{Error, Result};

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    commands::threads(cli.global.threads);
    let g = cli.global;
    if let Some(Command::Hook { host }) = &cli.command {
        // Whatever else the line holds, a hook exits 0.
        if cli.compile.any_given() {
            commands::hook::refused(
                host,
                "compile options are not read by `curate hook`",
                &resolve::workspace_options(&g),
            );
            return Ok(ExitCode::Ready);
        }
        return commands::hook::run(&g, host);
    }
    if cli.command.is_some() && cli.compile.any_given() {
        return Err(Error::Usage(
            "compile options go after the subcommand (for example `curate render --role R --change ID`)"
                .to_owned(),
        ));
    }
    match cli.command {
        None => commands::compile::run(&g, &cli.compile),
        Some(Command::Compile(a)) => commands::compile::run(&g, &a),
        Some(Command::Render(a)) => commands::render::run(&g, &a, false),
        Some(Command::Preview(a)) => commands::render::run(&g, &a, true),
        Some(Command::Check(a)) => commands::check::run(&g, &a),
        Some(Command::Verify(a)) => commands::verify::run(&g, &a),
        Some(Command::Receipt(ReceiptCommand::Check { files })) => {
            commands::receipt::run(&g, &files)
        }
        Some(Command::Contracts { action }) => commands::contracts::run(&g, action),
        Some(Command::Init(a)) => commands::init::run(&g, &a),
        Some(Command::Config { .. }) => commands::config::show(&g),
        Some(Command::Hook { host }) => commands::hook::run(&g, &host),
        Some(Command::Use(a)) => commands::use_change::run(&g, &a),
        Some(Command::Doctor) => commands::doctor::run(&g),
        Some(Command::Mcp) => commands::mcp::run(&g),
        Some(Command::Lsp) => commands::lsp::run(&g),
        Some(Command::Watch) => commands::watch::run(&g),
        Some(Command::Completions { shell }) => commands::completions::completions(shell),
        Some(Command::Man) => commands::completions::man(),
    }
}
