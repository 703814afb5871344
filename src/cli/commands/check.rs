//! `curate check`: the findings of [`crate::ops::check`] as human text, JSON or GitHub
//! annotations; exit 1 when any is an error.

use crate::cli::args::{CheckArgs, Format, GlobalArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::error::Result;
use crate::model::one_line;
use crate::ops::check::{self, Checked, Severity};

/// Runs `curate check`.
pub fn run(g: &GlobalArgs, a: &CheckArgs) -> Result<ExitCode> {
    let ws = resolve::workspace(g)?;
    let checked = check::check(&ws, &a.paths, a.stale);
    print(Printer::new(g), &checked)?;
    Ok(ExitCode::of_check(checked.errors() == 0))
}

fn print(printer: Printer, checked: &Checked) -> Result<()> {
    let (findings, errors, count) = (&checked.findings, checked.errors(), checked.manifests);
    match printer.format {
        Format::Json => printer.out_json(&checked.json()),
        Format::Github => {
            let mut text = String::new();
            for f in findings {
                let level = match f.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                };
                text.push_str(&annotation(level, &f.file, f.line, &f.message));
            }
            printer.out(&text)
        }
        Format::Human => {
            let style = printer.style;
            let mut text = String::new();
            for f in findings {
                if printer.quiet && f.severity == Severity::Warning {
                    continue;
                }
                let label = match f.severity {
                    Severity::Error => style.error("error:"),
                    Severity::Warning => style.warn("warning:"),
                };
                // A file name or message holds no line break or escape of its own.
                text.push_str(&format!(
                    "{}:{}: {label} {}\n",
                    one_line(&f.file),
                    f.line,
                    one_line(&f.message)
                ));
            }
            if !printer.quiet || errors > 0 {
                let warnings = findings.len() - errors;
                text.push_str(&format!(
                    "checked {count} manifest{}: {errors} error{}, {warnings} warning{}\n",
                    if count == 1 { "" } else { "s" },
                    if errors == 1 { "" } else { "s" },
                    if warnings == 1 { "" } else { "s" },
                ));
            }
            printer.err(&text);
            Ok(())
        }
    }
}

/// One GitHub Actions annotation line (`::error file=…,line=…::message`), escaped so that no
/// file name or message can break out of it.
#[must_use]
pub fn annotation(level: &str, file: &str, line: usize, message: &str) -> String {
    format!(
        "::{level} file={},line={line}::{}\n",
        escape_property(file),
        escape_data(message)
    )
}

/// GitHub workflow-command escaping of a message.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub workflow-command escaping of a property value.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}
