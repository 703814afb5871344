//! What each MCP tool does, as plain synchronous functions over the library: the same calls
//! `curate preview`, `compile`, `check` and `verify` make, answered as an [`Answer`] (the
//! JSON the command line prints with `--format json`, and a text for the model) or an
//! [`Error`] (a tool error: bad arguments, an unreadable input, a hand-edited manifest).
//!
//! Nothing here prints. Every path argument is contained in the repository ([`crate::trust::admit::contained`])
//! before the library sees it.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::mcp::args::{CheckArgs, CompileArgs, PreviewArgs, Selection, Template, VerifyArgs};
use crate::ops::compile::{Committed, Mode, commit};
use crate::ops::preview::Previewed;
use crate::ops::verify;
use crate::render::{self, ByteCaps};
use crate::report::{self, Style};
use crate::settings::{CompileOptions, CompileSettings, Workspace, WorkspaceOptions, check_name};
use crate::stages::budget::Status;

/// A tool's normal result: `structured` is the `structuredContent` (none: the model reads
/// the text), `text` the text content.
#[derive(Debug)]
pub struct Answer {
    pub structured: Option<Value>,
    pub text: String,
}

/// The most a preview's header (status line and warnings) before its prompt may take.
pub const PREVIEW_HEADER_MAX: usize = 2048;

/// `preview`: compile in memory and render; writes nothing. The text is a status header
/// and the prompt (READY) or the report with its advice; the whole report only with
/// `report`.
pub fn preview(root: &WorkspaceOptions, a: &PreviewArgs) -> Result<Answer> {
    let sel = a.selection();
    let (ws, change) = workspace(root, &sel)?;
    let s = CompileSettings {
        renders: true,
        ..CompileSettings::resolve(&ws, &options(&ws, &sel, &change, false)?)?
    };
    if a.template == Template::Handoff && s.task.is_none() {
        return Err(Error::Usage(
            "the handoff template needs task_file".to_owned(),
        ));
    }
    let lang = a.lang.map_or(ws.config.lang, Into::into);
    let Previewed {
        compiled,
        prompt,
        warnings,
    } = crate::ops::preview::preview(
        &ws,
        &s,
        crate::ops::preview::Source::Compile,
        || render::Template::resolve(&ws, a.template.name(), lang),
        lang,
        ByteCaps::of(&ws.config),
        "call `compile` with the same arguments",
    )?;
    let Some(prompt) = prompt else {
        let mut text = report::human(&compiled, Style { color: false }, false, false, "", None);
        for w in &warnings {
            text.push_str(&format!("warning: {w}\n"));
        }
        return Ok(Answer {
            structured: a
                .report
                .then(|| render::preview_json(&compiled, None, &warnings)),
            text,
        });
    };
    let (files, lines, tokens) = compiled.totals();
    let mut text = format!(
        "READY · role {} · change {} · {files} files, {lines} lines, about {tokens} tokens · manifest {}. Paste everything after the blank line below, whole, as the sub-agent's first message.\n",
        s.role, s.change, compiled.manifest_path
    );
    for w in &warnings {
        text.push_str(&format!("warning: {w}\n"));
    }
    let text = header_bounded(text);
    Ok(Answer {
        structured: a
            .report
            .then(|| render::preview_json(&compiled, Some(&prompt), &warnings)),
        text: format!("{text}\n{prompt}"),
    })
}

/// A preview header kept within [`PREVIEW_HEADER_MAX`] bytes (cut on a character boundary,
/// ending in a newline).
fn header_bounded(mut text: String) -> String {
    if text.len() > PREVIEW_HEADER_MAX {
        let mut end = PREVIEW_HEADER_MAX - "[…]\n".len();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("[…]\n");
    }
    text
}

/// `compile`: compile, then write the manifest and lock unless `dry_run` (or not
/// READY); a hand-edited manifest is an error, as on the command line.
pub fn compile(root: &WorkspaceOptions, a: &CompileArgs) -> Result<Answer> {
    let sel = a.selection();
    let (ws, change) = workspace(root, &sel)?;
    let o = options(&ws, &sel, &change, a.explain)?;
    let mode = Mode {
        write: !a.dry_run,
        ..Mode::default()
    };
    let Committed {
        compiled,
        written,
        mut outcome,
        ..
    } = commit(&ws, &o, mode)?;
    if a.dry_run && compiled.status == Status::Ready {
        outcome = format!("dry run: {} not written", compiled.manifest_path);
    }
    let structured = report::json(&compiled, written, a.explain);
    let text = if compiled.status == Status::Ready {
        pretty(&structured)
    } else {
        report::human(
            &compiled,
            Style { color: false },
            false,
            a.explain,
            &outcome,
            None,
        )
    };
    Ok(Answer {
        structured: Some(structured),
        text,
    })
}

/// `check`: the findings as `{valid, manifests, findings}`; a failing check is a
/// normal answer.
pub fn check(root: &WorkspaceOptions, a: &CheckArgs) -> Result<Answer> {
    let ws = Workspace::resolve(root)?;
    let paths = a
        .paths
        .iter()
        .map(|p| Ok(crate::trust::admit::contained(&ws.root, "paths", p)?))
        .collect::<Result<Vec<_>>>()?;
    let checked = crate::ops::check::check(&ws, &paths, a.stale);
    // The same object as `curate check --format json`.
    let structured = checked.json();
    Ok(Answer {
        text: pretty(&structured),
        structured: Some(structured),
    })
}

/// `verify`: the verdict `{valid, violations}`; violations are a normal answer.
pub fn verify(root: &WorkspaceOptions, a: &VerifyArgs) -> Result<Answer> {
    check_name("change id", &a.change)?;
    let ws = Workspace::resolve(root)?;
    let scope = match &a.task_file {
        Some(_) if !a.owns.is_empty() || !a.reads.is_empty() => {
            return Err(Error::Usage(
                "give task_file or owns/reads, not both".to_owned(),
            ));
        }
        Some(p) => {
            let path = crate::trust::admit::contained(&ws.root, "task_file", p)?;
            verify::task(path, Path::new(p))
        }
        None if a.owns.is_empty() => {
            return Err(Error::Usage(
                "give owns (the owned globs) or task_file".to_owned(),
            ));
        }
        None => verify::ScopeFrom::Globs {
            owns: a.owns.clone(),
            reads: a.reads.clone(),
        },
    };
    let touched = match (&a.touched, &a.git_diff) {
        (Some(list), None) => verify::Touched::List(list.clone()),
        (None, Some(rev)) => verify::Touched::GitDiff(rev.clone()),
        _ => {
            return Err(Error::Usage(
                "give exactly one of touched (a list of files) and git_diff (a revision)"
                    .to_owned(),
            ));
        }
    };
    let request = verify::Request {
        change: a.change.clone(),
        scope,
        touched,
        criteria: None,
    };
    let verdict = verify::verify(&ws, &request)?.verdict;
    let structured = serde_json::to_value(&verdict).unwrap_or(Value::Null);
    Ok(Answer {
        text: pretty(&structured),
        structured: Some(structured),
    })
}

/// The workspace for a selection's change (its id checked before any path is built).
fn workspace(root: &WorkspaceOptions, sel: &Selection) -> Result<(Workspace, String)> {
    check_name("role", &sel.role)?;
    crate::settings::check_change_id(&sel.change)?;
    Workspace::resolve(root)?.for_change(&sel.change)
}

/// The compile options of a selection: the config's budgets unless given, the task file
/// contained in the repository.
fn options(ws: &Workspace, sel: &Selection, change: &str, explain: bool) -> Result<CompileOptions> {
    let task_file = match &sel.task_file {
        Some(p) => Some(crate::trust::admit::contained(&ws.root, "task_file", p)?),
        None => None,
    };
    let d = CompileOptions::defaults(ws, &sel.role, change);
    Ok(CompileOptions {
        owns: sel.owns.clone(),
        reads: sel.reads.clone(),
        task_file,
        add: sel.add.clone(),
        drop: sel.drop.clone(),
        caps: d
            .caps
            .overridden(sel.max_files, sel.max_lines, sel.max_tokens),
        explain,
        ..d
    })
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}
