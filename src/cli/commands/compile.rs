//! `curate` / `curate compile`: compile, then write the manifest and its lock (lock first,
//! manifest last), unless the status, `--dry-run`, `--stdout` or a hand edit says otherwise.

use crate::cli::args::{CompileArgs, Format, GlobalArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::compile::Compiled;
use crate::error::{Error, Result};
use crate::ops::compile::{Committed, Mode, commit};
use crate::report;
use crate::stages::budget::Status;

/// Runs `curate` / `curate compile`.
pub fn run(g: &GlobalArgs, a: &CompileArgs) -> Result<ExitCode> {
    let printer = Printer::new(g);
    resolve::names(a)?;
    if a.stdout && printer.format == Format::Json {
        return Err(Error::Usage(
            "--stdout prints the manifest and cannot be combined with --format json".to_owned(),
        ));
    }
    if printer.format == Format::Github {
        return Err(Error::Usage(
            "--format github is for `curate check`".to_owned(),
        ));
    }
    crate::warm::ahead(crate::warm::Then::Compile);
    let (ws, options) = resolve::change_workspace(g, a)?;
    let mode = Mode {
        write: !a.dry_run && !a.stdout,
        adopt: a.adopt,
        force: a.force,
        renders: false,
        take_hand_edit: false,
    };
    let Committed {
        compiled,
        written,
        mut outcome,
        ..
    } = commit(&ws, &options, mode)?;
    if compiled.status == Status::Ready {
        if a.stdout {
            printer.out(compiled.manifest.as_deref().unwrap_or_default())?;
        } else if a.dry_run {
            outcome = format!("dry run: {} not written", compiled.manifest_path);
        }
    }
    emit_report(printer, &compiled, a.explain, written, &outcome)?;
    Ok(ExitCode::of_status(compiled.status))
}

fn emit_report(
    printer: Printer,
    c: &Compiled,
    explain: bool,
    written: bool,
    outcome: &str,
) -> Result<()> {
    if printer.format == Format::Json {
        let v = report::json(c, written, explain);
        printer.out_json(&v)?;
    } else if !printer.quiet || c.status != Status::Ready {
        printer.err(&report::human(
            c,
            printer.style,
            printer.verbose,
            explain,
            outcome,
            Some(&crate::cli::again::this_run_with_profile),
        ));
    }
    Ok(())
}
