//! `curate check`: every committed manifest valid, in budget and (with `--stale`) current.
//!
//! Reads manifests, their locks and the files they name; reports every problem (never only
//! the first) as human text, JSON or GitHub annotations. Writes nothing.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::budget::{self, Caps, Item, Status};
use crate::cli::{CheckArgs, CompileArgs, Format, GlobalArgs};
use crate::error::{ExitCode, Result};
use crate::manifest;
use crate::measure;
use crate::model::{Priority, quoted};
use crate::run::{self, stderr, stdout};
use crate::settings::{self, Workspace};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem found.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub file: String,
    pub line: usize,
    pub severity: Severity,
    pub message: String,
}

/// Runs `curate check`.
pub fn check_cmd(g: &GlobalArgs, a: &CheckArgs) -> Result<ExitCode> {
    let ws = settings::workspace(g)?;
    let mut findings = Vec::new();
    let contracts_file = ws.contracts.describe();
    if let Err(e) = crate::contract::load(ws.contracts.clone(), &ws.root) {
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            message.push_str(&format!("; {s}"));
            source = s.source();
        }
        findings.push(Finding {
            file: contracts_file,
            line: 1,
            severity: Severity::Error,
            message,
        });
    }
    let manifests: Vec<PathBuf> = if a.paths.is_empty() {
        discover(&ws)
    } else {
        a.paths.iter().map(|p| ws.arg_path(p)).collect()
    };
    for path in &manifests {
        check_manifest(&ws, g, path, a.stale, &mut findings);
    }
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    print(g, &findings, manifests.len(), errors)?;
    Ok(if errors > 0 {
        ExitCode::Error
    } else {
        ExitCode::Ready
    })
}

fn print(g: &GlobalArgs, findings: &[Finding], checked: usize, errors: usize) -> Result<()> {
    match g.format {
        Format::Json => stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "valid": errors == 0,
                "manifests": checked,
                "findings": findings,
            }))
            .unwrap_or_default()
        )),
        Format::Github => {
            let mut text = String::new();
            for f in findings {
                let level = match f.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                };
                text.push_str(&format!(
                    "::{level} file={},line={}::{}\n",
                    escape_property(&f.file),
                    f.line,
                    escape_data(&f.message)
                ));
            }
            stdout(&text)
        }
        Format::Human => {
            let style = run::style(g);
            let mut text = String::new();
            for f in findings {
                let label = match f.severity {
                    Severity::Error => style.error("error:"),
                    Severity::Warning => style.warn("warning:"),
                };
                text.push_str(&format!("{}:{}: {label} {}\n", f.file, f.line, f.message));
            }
            if !g.quiet || errors > 0 {
                let warnings = findings.len() - errors;
                text.push_str(&format!(
                    "checked {checked} manifest{}: {errors} error{}, {warnings} warning{}\n",
                    if checked == 1 { "" } else { "s" },
                    if errors == 1 { "" } else { "s" },
                    if warnings == 1 { "" } else { "s" },
                ));
            }
            stderr(&text);
            Ok(())
        }
    }
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

/// Every `*-context.jsonl` under `<changes root>/*/analysis/`, sorted.
fn discover(ws: &Workspace) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(changes) = std::fs::read_dir(ws.root.join(&ws.changes_root)) else {
        return out;
    };
    for change in changes.flatten() {
        let Ok(files) = std::fs::read_dir(change.path().join("analysis")) else {
            continue;
        };
        for f in files.flatten() {
            let name = f.file_name();
            if name.to_string_lossy().ends_with("-context.jsonl") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

fn check_manifest(
    ws: &Workspace,
    g: &GlobalArgs,
    path: &Path,
    stale: bool,
    findings: &mut Vec<Finding>,
) {
    let shown = ws.shown(path);
    let mut add = |line: usize, severity: Severity, message: String| {
        findings.push(Finding {
            file: shown.clone(),
            line,
            severity,
            message,
        });
    };
    let text = match std::fs::read(path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            add(1, Severity::Error, format!("cannot read: {e}"));
            return;
        }
    };
    let parsed = manifest::parse(&text);
    for (line, column, message) in &parsed.errors {
        add(
            *line,
            Severity::Error,
            format!("column {column}: {message}"),
        );
    }
    let has_header = parsed.header.is_some();
    if has_header && !manifest::is_intact(&text) {
        add(
            1,
            Severity::Warning,
            "edited by hand: the digest in the header does not match the content".to_owned(),
        );
    }
    let rel = ws.relative(path);
    let lock = rel.as_deref().and_then(|r| run::read_lock(&ws.root, r));
    let caps = match &lock {
        Some(l) => l.inputs.caps,
        None => {
            add(
                1,
                Severity::Warning,
                "no lock beside this manifest: checking against the default caps".to_owned(),
            );
            Caps::default()
        }
    };
    if let Some(l) = &lock
        && !l.matches(&text)
    {
        add(
            1,
            Severity::Warning,
            "the lock does not describe this manifest (stale lock)".to_owned(),
        );
    }
    let rules = crate::secrets::ContentRules::shared().ok();
    let mut items = Vec::new();
    let mut stale_files = Vec::new();
    for (line, value) in &parsed.entries {
        let line = *line;
        let Some(obj) = value.as_object() else {
            continue;
        };
        if has_header {
            for key in ["file", "reason", "sections", "priority", "kind"] {
                if !obj.contains_key(key) {
                    add(line, Severity::Error, format!("missing field \"{key}\""));
                }
            }
        }
        for key in obj.keys() {
            if !["file", "reason", "sections", "priority", "kind", "glob"].contains(&key.as_str()) {
                add(
                    line,
                    Severity::Warning,
                    format!("unknown field {}", quoted(key)),
                );
            }
        }
        let Some(file) = obj.get("file").and_then(Value::as_str) else {
            add(
                line,
                Severity::Error,
                "\"file\" must be a string".to_owned(),
            );
            continue;
        };
        for key in ["reason", "kind"] {
            if let Some(v) = obj.get(key)
                && !v.is_string()
            {
                add(line, Severity::Error, format!("\"{key}\" must be a string"));
            }
        }
        let priority = match obj.get("priority") {
            None => Priority::Medium,
            Some(p) => match p.as_str().and_then(Priority::parse) {
                Some(p) => p,
                None => {
                    add(
                        line,
                        Severity::Error,
                        format!("unknown priority {p}: use high, medium or low"),
                    );
                    Priority::Low
                }
            },
        };
        let sections = match obj.get("sections") {
            None | Some(Value::Null) => Some(crate::model::Sections::Whole),
            Some(s) => match serde_json::from_value::<Vec<[u64; 2]>>(s.clone())
                .map_err(|e| e.to_string())
                .and_then(crate::overrides::checked_sections)
            {
                Ok(s) => Some(s),
                Err(e) => {
                    add(line, Severity::Error, format!("malformed sections: {e}"));
                    None
                }
            },
        };
        let normal = match crate::paths::normalize(file) {
            Ok(p) => p,
            Err(e) => {
                add(
                    line,
                    Severity::Error,
                    format!("{} {}", quoted(file), e.problem()),
                );
                continue;
            }
        };
        if let Some(rule) = crate::secrets::by_path(&normal) {
            add(
                line,
                Severity::Error,
                format!("{} is a secret ({rule})", quoted(&normal)),
            );
            continue;
        }
        let full = ws.root.join(&normal);
        match full.canonicalize() {
            Ok(real) if real.starts_with(&ws.root) && real.is_file() => {}
            Ok(_) => {
                add(
                    line,
                    Severity::Error,
                    format!(
                        "{} is outside the repository or not a file",
                        quoted(&normal)
                    ),
                );
                continue;
            }
            Err(_) => {
                add(
                    line,
                    Severity::Error,
                    format!("{} does not exist", quoted(&normal)),
                );
                continue;
            }
        }
        let Ok(bytes) = std::fs::read(&full) else {
            add(
                line,
                Severity::Error,
                format!("{} cannot be read", quoted(&normal)),
            );
            continue;
        };
        if measure::is_binary(&bytes) {
            add(
                line,
                Severity::Error,
                format!("{} is binary", quoted(&normal)),
            );
            continue;
        }
        if let Some(hit) = rules.and_then(|r| r.scan(&bytes)) {
            add(
                line,
                Severity::Error,
                format!(
                    "{} holds a secret ({} on line {})",
                    quoted(&normal),
                    hit.rule,
                    hit.line
                ),
            );
            continue;
        }
        let file_lines = measure::count_lines(&bytes);
        let Some(sections) = sections else { continue };
        if let Some(ranges) = sections.as_ranges() {
            for [s, e] in ranges {
                if *e > file_lines {
                    add(
                        line,
                        Severity::Error,
                        format!(
                            "section [{s}, {e}] of {} runs past its {file_lines} lines",
                            quoted(&normal)
                        ),
                    );
                }
            }
        }
        let lines = sections.line_count(file_lines);
        let tokens = if caps.max_tokens > 0 {
            Some(crate::tokens::TokenCounter::count(
                &crate::tokens::Fast(ws.encoding),
                &measure::selected(&bytes, &sections),
            ))
        } else {
            None
        };
        items.push(Item {
            priority,
            lines,
            tokens,
        });
        if stale
            && let Some(l) = &lock
            && let Some(le) = l.entries.iter().find(|e| e.file == normal)
            && le.sha256 != crate::digest::hex(&bytes)
        {
            stale_files.push((line, normal.clone()));
        }
    }
    if parsed.entries.is_empty() {
        add(
            1,
            Severity::Error,
            "no entry: a manifest needs at least one".to_owned(),
        );
    }
    let allocation = budget::allocate(&items, caps);
    if allocation.dropped.iter().any(Option::is_some) || allocation.status != Status::Ready {
        for d in &allocation.decisions {
            add(1, Severity::Error, format!("over budget: {d}"));
        }
        if let Some(o) = allocation.overrun {
            add(
                1,
                Severity::Error,
                format!(
                    "over budget: the high entries hold {} {}, over the cap of {}",
                    o.total, o.measure, o.cap
                ),
            );
        }
    }
    for (line, file) in stale_files {
        add(
            line,
            Severity::Error,
            format!(
                "stale: {} changed since curation; its sections may point at the wrong lines",
                quoted(&file)
            ),
        );
    }
    if stale && let Some(l) = &lock {
        match recompile(ws, g, l) {
            Ok(Some(new_text)) if new_text != text => add(
                1,
                Severity::Error,
                format!(
                    "stale: a compile with the recorded inputs would now write this manifest differently (run `curate --role {} --change {}`)",
                    l.inputs.role, l.inputs.change
                ),
            ),
            Ok(None) => add(
                1,
                Severity::Error,
                "stale: a compile with the recorded inputs is no longer READY".to_owned(),
            ),
            Err(e) => add(1, Severity::Error, format!("stale check failed: {e}")),
            Ok(Some(_)) => {}
        }
    }
}

/// The manifest a compile with the lock's recorded inputs would write now.
fn recompile(ws: &Workspace, g: &GlobalArgs, lock: &manifest::Lock) -> Result<Option<String>> {
    let i = &lock.inputs;
    let mut ws = ws.clone();
    ws.changes_root.clone_from(&i.changes_root);
    ws.encoding = i.encoding;
    let _ = g;
    let args = CompileArgs {
        role: Some(i.role.clone()),
        change: Some(i.change.clone()),
        owns: i.owns.clone(),
        reads: i.reads.clone(),
        files_from: None,
        task_file: i.task_file.as_ref().map(|f| ws.root.join(&f.path)),
        no_ignore: i.no_ignore,
        overrides: i.overrides.as_ref().map(|f| ws.root.join(&f.path)),
        add: i.add.clone(),
        drop: i.drop.clone(),
        max_files: i.caps.max_files,
        max_lines: i.caps.max_lines,
        max_tokens: Some(i.caps.max_tokens),
        max_file_size: i.max_file_size,
        ..CompileArgs::default()
    };
    let mut s = settings::compile_settings(&ws, &args)?;
    s.files_from.clone_from(&i.files_from);
    let compiled = crate::compile::compile(&ws, &s)?;
    Ok(compiled.manifest)
}
