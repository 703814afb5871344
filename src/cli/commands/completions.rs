//! `curate completions SHELL` and `curate man`: generated from the clap definitions.

use crate::cli::args::Cli;
use crate::cli::exit::ExitCode;
use crate::cli::printer::stdout;
use crate::error::{Error, Result};

/// Prints shell completions.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "curate", &mut buf);
    stdout(&String::from_utf8_lossy(&buf))?;
    Ok(ExitCode::Ready)
}

/// Prints the man page.
pub fn man() -> Result<ExitCode> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .map_err(|source| Error::Write {
            path: "<stdout>".into(),
            source,
        })?;
    stdout(&String::from_utf8_lossy(&buf))?;
    Ok(ExitCode::Ready)
}
