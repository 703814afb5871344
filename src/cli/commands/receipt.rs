//! `curate receipt check FILE…`: each receipt holds exactly one valid handoff block.

use std::path::PathBuf;

use serde_json::json;

use crate::cli::args::{Format, GlobalArgs};
use crate::cli::commands::check::annotation;
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::error::Result;
use crate::receipt;
use crate::util::read::{INPUT_CAP, ReadError, read_capped};

/// Runs `curate receipt check FILE…`.
pub fn run(g: &GlobalArgs, files: &[PathBuf]) -> Result<ExitCode> {
    let printer = Printer::new(g);
    let ws = resolve::workspace(g)?;
    let mut any_error = false;
    let mut report = Vec::new();
    let mut text = String::new();
    for f in files {
        let path = ws.arg_path(f);
        // An unreadable file is its own finding, as `check`'s: the rest are still checked.
        let findings = match read_capped(&path, INPUT_CAP) {
            Ok(bytes) => receipt::check_receipt(&String::from_utf8_lossy(&bytes)),
            Err(e) => {
                // Named as given, as the finding's file column names it.
                let why = match &e {
                    ReadError::Io { source, .. } => source.to_string(),
                    ReadError::NotRegular { kind, .. } => format!("not a regular file ({kind})"),
                    ReadError::TooLarge { cap, .. } => format!("larger than {cap} bytes"),
                };
                vec![receipt::Finding::unreadable(&format!(
                    "cannot read {}: {why}",
                    f.display()
                ))]
            }
        };
        any_error |= receipt::has_errors(&findings);
        for finding in &findings {
            if printer.format == Format::Github {
                let level = match finding.severity {
                    receipt::Severity::Error => "error",
                    receipt::Severity::Warning => "warning",
                };
                text.push_str(&annotation(
                    level,
                    &f.display().to_string(),
                    finding.line,
                    &finding.message,
                ));
            } else if !(printer.quiet && finding.severity == receipt::Severity::Warning) {
                text.push_str(&format!("{}:{finding}\n", f.display()));
            }
        }
        report.push(json!({"file": f.display().to_string(), "valid": !receipt::has_errors(&findings), "findings": findings}));
    }
    match printer.format {
        Format::Json => printer.out_json(&report)?,
        Format::Github => printer.out(&text)?,
        Format::Human => {
            let bad = report.iter().filter(|r| r["valid"] == false).count();
            if any_error || !printer.quiet {
                text.push_str(&format!(
                    "checked {} receipt{}: {} valid, {bad} invalid\n",
                    files.len(),
                    if files.len() == 1 { "" } else { "s" },
                    files.len() - bad,
                ));
            }
            printer.err(&text);
        }
    }
    Ok(if any_error {
        ExitCode::Error
    } else {
        ExitCode::Ready
    })
}
