//! `curate use <id> [--session ID]`: bind the change the hooks compile for.

use crate::cli::args::{GlobalArgs, UseArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::error::Result;
use crate::state;

/// Runs `curate use`.
pub fn run(g: &GlobalArgs, a: &UseArgs) -> Result<ExitCode> {
    let printer = Printer::new(g);
    let ws = resolve::workspace(g)?;
    let session = a.session.as_deref();
    if a.clear {
        let removed = state::unbind(&ws.root, session)?;
        printer.report(&match removed {
            Some(p) => format!("removed {p}\n"),
            None => "no binding to remove\n".to_owned(),
        });

        return Ok(ExitCode::Ready);
    }
    let change = a.change.as_deref().unwrap_or_default();
    let path = state::bind(&ws.root, change, session)?;
    printer.report(&format!(
        "wrote {path}: the hooks now compile change {change} {}\n",
        match session {
            Some(_) => "for that session",
            None => "for every session without its own binding",
        }
    ));

    Ok(ExitCode::Ready)
}
