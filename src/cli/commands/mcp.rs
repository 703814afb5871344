//! `curate mcp`: the MCP server on stdin/stdout, until stdin ends (then exit 0).

use crate::cli::args::GlobalArgs;
use crate::cli::exit::ExitCode;
use crate::error::Result;

/// Runs `curate mcp`.
#[cfg(feature = "mcp")]
pub fn run(g: &GlobalArgs) -> Result<ExitCode> {
    crate::mcp::serve(crate::cli::resolve::workspace_options(g))?;
    Ok(ExitCode::Ready)
}

/// Runs `curate mcp` in a build without the server.
#[cfg(not(feature = "mcp"))]
pub fn run(_: &GlobalArgs) -> Result<ExitCode> {
    Err(crate::error::Error::Usage(
        "curate was built without the mcp feature: install it with default features to get `curate mcp`"
            .to_owned(),
    ))
}
