//! `curate lsp`: the Language Server on stdin/stdout, until `exit` or the end of stdin
//! (then exit 0).

use crate::cli::args::GlobalArgs;
use crate::cli::exit::ExitCode;
use crate::error::Result;

/// Runs `curate lsp`.
pub fn run(g: &GlobalArgs) -> Result<ExitCode> {
    crate::lsp::serve(crate::cli::resolve::workspace_options(g))?;
    Ok(ExitCode::Ready)
}
