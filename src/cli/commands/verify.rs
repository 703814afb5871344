//! `curate verify`: a worker's touched files stay inside its owned globs.

use crate::cli::args::{Format, GlobalArgs, VerifyArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::error::Result;
use crate::model::one_line;
use crate::ops::verify;
use crate::settings::check_name;
use crate::util::read::{INPUT_CAP, read_capped, read_stdin};

/// Runs `curate verify`.
pub fn run(g: &GlobalArgs, a: &VerifyArgs) -> Result<ExitCode> {
    let printer = Printer::new(g);
    if a.run_criteria && a.task_file.is_none() {
        // (clap's `requires` does not hold a flag here: checked before anything runs.)
        return Err(crate::error::Error::Usage(
            "--run-criteria runs a task file's success criteria: give --task-file".to_owned(),
        ));
    }
    check_name("change id", &a.change)?;
    let ws = resolve::workspace(g)?;
    let scope = match &a.task_file {
        Some(p) => verify::task(ws.arg_path(p), p),
        None => verify::ScopeFrom::Globs {
            owns: a.owns.clone(),
            reads: a.reads.clone(),
        },
    };
    let touched = if let Some(rev) = &a.git_diff {
        verify::Touched::GitDiff(rev.clone())
    } else if let Some(p) = &a.touched_from {
        verify::Touched::List(crate::verify::parse_touched_list(
            &if p.as_os_str() == "-" {
                read_stdin(INPUT_CAP)?
            } else {
                read_capped(&ws.arg_path(p), INPUT_CAP)?
            },
        ))
    } else {
        verify::Touched::List(a.touched.clone())
    };
    let request = verify::Request {
        change: a.change.clone(),
        scope,
        touched,
        criteria: a
            .run_criteria
            .then(|| std::time::Duration::from_secs(a.criteria_timeout)),
    };
    let verify::Verified { verdict, touched } = verify::verify(&ws, &request)?;
    if printer.format == Format::Json {
        printer.out_json(&verdict)?;
    } else {
        let mut text = String::new();
        for o in &verdict.criteria {
            text.push_str(&format!(
                "criterion {}: {} (exit {})\n",
                if o.passed { "passed" } else { "failed" },
                one_line(&o.criterion),
                match (o.exit_code, o.timed_out) {
                    (_, true) => "none: stopped at the timeout".to_owned(),
                    (Some(c), _) => c.to_string(),
                    (None, _) => "none: killed by a signal".to_owned(),
                }
            ));
            if !o.passed && !o.output_tail.is_empty() {
                for line in o
                    .output_tail
                    .lines()
                    .rev()
                    .take(10)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    text.push_str(&format!("  | {}\n", one_line(line)));
                }
            }
        }
        for v in &verdict.violations {
            // A touched path is anyone's: it starts no line of its own.
            text.push_str(&format!("violation: {}\n", one_line(&v.to_string())));
        }
        if !printer.quiet || !verdict.valid {
            text.push_str(&format!(
                "{} touched file{} checked: {}\n",
                touched,
                if touched == 1 { "" } else { "s" },
                if verdict.valid {
                    "all inside the write scope".to_owned()
                } else {
                    let n = verdict.violations.len();
                    format!("{n} violation{}", if n == 1 { "" } else { "s" })
                }
            ));
        }
        printer.err(&text);
    }
    Ok(if verdict.valid {
        ExitCode::Ready
    } else {
        ExitCode::Error
    })
}
