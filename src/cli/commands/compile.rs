//! `curate` / `curate compile`: compile, then write the manifest and its lock (lock first,
//! manifest last), unless the status, `--dry-run`, `--stdout` or a hand edit says otherwise.

use crate::cli::args::{CompileArgs, Format, GlobalArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::{Printer, stderr, stdout};
use crate::cli::resolve;
use crate::compile::Compiled;
use crate::compile::budget::Status;
use crate::compile::commit::{Committed, Mode, commit};
use crate::error::{Error, Result};
use crate::report;

/// Runs `curate` / `curate compile`.
pub fn run(g: &GlobalArgs, a: &CompileArgs) -> Result<ExitCode> {
    let (_, change) = resolve::names(a)?;
    if a.stdout && g.format == Format::Json {
        return Err(Error::Usage(
            "--stdout prints the manifest and cannot be combined with --format json".to_owned(),
        ));
    }
    if g.format == Format::Github {
        return Err(Error::Usage(
            "--format github is for `curate check`".to_owned(),
        ));
    }
    let ws = resolve::workspace(g)?.for_change(&change)?;
    let options = resolve::compile_options(&ws, a)?;
    let mode = Mode {
        write: !a.dry_run && !a.stdout,
        adopt: a.adopt,
        force: a.force,
    };
    let Committed {
        compiled,
        written,
        mut outcome,
        ..
    } = commit(&ws, &options, mode)?;
    if compiled.status == Status::Ready {
        if a.stdout {
            stdout(compiled.manifest.as_deref().unwrap_or_default())?;
        } else if a.dry_run {
            outcome = format!("dry run: {} not written", compiled.manifest_path);
        }
    }
    emit_report(g, &compiled, a.explain, written, &outcome)?;
    Ok(ExitCode::of_status(compiled.status))
}

fn emit_report(
    g: &GlobalArgs,
    c: &Compiled,
    explain: bool,
    written: bool,
    outcome: &str,
) -> Result<()> {
    if g.format == Format::Json {
        let v = report::json(c, written, explain);
        stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        ))?;
    } else if !g.quiet || c.status != Status::Ready {
        stderr(&report::human(
            c,
            Printer::new(g).style,
            g.verbose,
            explain,
            outcome,
        ));
    }
    Ok(())
}
