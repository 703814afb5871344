//! `curate verify` and `curate receipt check`: the checks after a worker is done.

use std::path::PathBuf;

use serde_json::json;

use crate::cli::{Format, GlobalArgs, VerifyArgs};
use crate::error::{Error, ExitCode, Result};
use crate::receipt;
use crate::run::{stderr, stdout};
use crate::settings;
use crate::verify::{self, Scope};

/// Runs `curate verify`.
pub fn verify_cmd(g: &GlobalArgs, a: &VerifyArgs) -> Result<ExitCode> {
    settings::check_name("change id", &a.change)?;
    let ws = settings::workspace(g)?;
    let (owned, readonly) = match &a.task_file {
        Some(p) => {
            let bytes = settings::read_arg(&ws.arg_path(p))?;
            let task = crate::task::parse(&bytes, p)?;
            (task.files_owned, task.files_readonly)
        }
        None => (a.owns.clone(), a.reads.clone()),
    };
    let scope = Scope::new(&a.change, &owned, &readonly).map_err(failed)?;
    let touched = if let Some(rev) = &a.git_diff {
        verify::git_touched(&ws.root, rev).map_err(failed)?
    } else if let Some(p) = &a.touched_from {
        verify::parse_touched_list(&settings::read_list_arg(&ws, p)?)
    } else {
        a.touched.clone()
    };
    let verdict = verify::verify(&scope, &touched).map_err(failed)?;
    if g.format == Format::Json {
        stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&verdict).unwrap_or_default()
        ))?;
    } else {
        let mut text = String::new();
        for v in &verdict.violations {
            text.push_str(&format!("violation: {v}\n"));
        }
        if !g.quiet || !verdict.valid {
            text.push_str(&format!(
                "{} touched file{} checked: {}\n",
                touched.len(),
                if touched.len() == 1 { "" } else { "s" },
                if verdict.valid {
                    "all inside the write scope".to_owned()
                } else {
                    let n = verdict.violations.len();
                    format!("{n} violation{}", if n == 1 { "" } else { "s" })
                }
            ));
        }
        stderr(&text);
    }
    Ok(if verdict.valid {
        ExitCode::Ready
    } else {
        ExitCode::Error
    })
}

#[allow(clippy::needless_pass_by_value)] // used as `map_err(failed)`
fn failed(e: verify::VerifyError) -> Error {
    Error::Failed(e.to_string())
}

/// Runs `curate receipt check FILE…`.
pub fn receipt_cmd(g: &GlobalArgs, files: &[PathBuf]) -> Result<ExitCode> {
    let ws = settings::workspace(g)?;
    let mut any_error = false;
    let mut report = Vec::new();
    let mut text = String::new();
    for f in files {
        let path = ws.arg_path(f);
        let bytes = settings::read_arg(&path)?;
        let content = String::from_utf8_lossy(&bytes);
        let findings = receipt::check_receipt(&content);
        any_error |= receipt::has_errors(&findings);
        for finding in &findings {
            if g.format == Format::Github {
                let level = match finding.severity {
                    receipt::Severity::Error => "error",
                    receipt::Severity::Warning => "warning",
                };
                text.push_str(&crate::check::annotation(
                    level,
                    &f.display().to_string(),
                    finding.line,
                    &finding.message,
                ));
            } else if !(g.quiet && finding.severity == receipt::Severity::Warning) {
                text.push_str(&format!("{}:{finding}\n", f.display()));
            }
        }
        report.push(json!({"file": f.display().to_string(), "valid": !receipt::has_errors(&findings), "findings": findings}));
    }
    match g.format {
        Format::Json => stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ))?,
        Format::Github => stdout(&text)?,
        Format::Human => {
            let bad = report.iter().filter(|r| r["valid"] == false).count();
            if any_error || !g.quiet {
                text.push_str(&format!(
                    "checked {} receipt{}: {} valid, {bad} invalid\n",
                    files.len(),
                    if files.len() == 1 { "" } else { "s" },
                    files.len() - bad,
                ));
            }
            stderr(&text);
        }
    }
    Ok(if any_error {
        ExitCode::Error
    } else {
        ExitCode::Ready
    })
}
