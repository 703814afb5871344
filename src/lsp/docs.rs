//! The editor's documents: what each is to curate (a manifest, its lock or overrides file,
//! the contracts, a task file) and the diagnostics its parser or `check` finds in it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::error::Error;
use crate::ops::check::{Given, Severity, check_given};
use crate::settings::Workspace;

/// What a document is to curate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Manifest(Pair),
    Lock(Pair),
    Overrides(Pair),
    Contracts,
    Task,
    Other,
}

/// A role and a change: whose context a manifest (or its lock, or overrides file) is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair {
    pub role: String,
    pub change: String,
}

/// What `path` (absolute) is in `ws`.
pub fn kind(ws: &Workspace, path: &Path) -> Kind {
    let Some(rel) = ws.relative(path) else {
        return contracts_or_other(ws, path, None);
    };
    if let Some(stem) = rel.strip_suffix(".overrides.jsonl") {
        if let Some(p) = pair_of(ws, &format!("{stem}.jsonl")) {
            return Kind::Overrides(p);
        }
    } else if let Some(stem) = rel.strip_suffix(".lock.json") {
        if let Some(p) = pair_of(ws, &format!("{stem}.jsonl")) {
            return Kind::Lock(p);
        }
    } else if let Some(p) = pair_of(ws, &rel) {
        return Kind::Manifest(p);
    }
    contracts_or_other(ws, path, Some(&rel))
}

fn contracts_or_other(ws: &Workspace, path: &Path, rel: Option<&str>) -> Kind {
    use crate::stages::contract::Source;
    let contracts = match &ws.contracts {
        Source::Repo(r) => rel == Some(r.as_str()),
        Source::Flag(p) | Source::Env(p) => ws.arg_path(p) == path,
        Source::Embedded(_) => false,
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if contracts {
        Kind::Contracts
    } else if Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        && name.contains("task")
        && !name.ends_with(".lock.json")
    {
        Kind::Task
    } else {
        Kind::Other
    }
}

/// The role and change whose manifest is at `rel` (repository-relative), by the config's
/// manifest template.
pub fn pair_of(ws: &Workspace, rel: &str) -> Option<Pair> {
    const C: &str = "\u{1}CHANGE\u{1}";
    const R: &str = "\u{1}ROLE\u{1}";
    let filled = crate::model::paths::fill(&ws.config.manifest, &ws.changes_root, C, R);
    let filled = crate::model::paths::normalize(&filled).unwrap_or(filled);
    let pattern = regex::escape(&filled)
        .replacen(C, "(?P<change>[^/]+)", 1)
        .replacen(R, "(?P<role>[^/]+)", 1)
        .replace(C, "[^/]+")
        .replace(R, "[^/]+");
    let re = regex::Regex::new(&format!("^{pattern}$")).ok()?;
    let caps = re.captures(rel)?;
    let pair = Pair {
        role: caps.name("role")?.as_str().to_owned(),
        change: caps.name("change")?.as_str().to_owned(),
    };
    // The template read back must name this very file.
    (ws.manifest_path(&pair.change, &pair.role) == rel).then_some(pair)
}

/// The change whose folder (under the changes root) holds `rel`, a file of it.
pub fn change_of(ws: &Workspace, rel: &str) -> Option<String> {
    let rest = rel.strip_prefix(&format!("{}/", ws.changes_root))?;
    let (id, inside) = rest.split_once('/')?;
    (!inside.is_empty() && crate::settings::check_change_id(id).is_ok()).then(|| id.to_owned())
}

/// One problem at a 1-based line and column (characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub column: usize,
    pub error: bool,
    pub message: String,
}

/// The problems of a document of kind `kind` whose text is `text`: from its parser
/// (overrides files, task files, contracts), or from `check` (manifests and locks), all
/// on the editor's text. `open` gives the text of another open document (a manifest's
/// lock, a lock's manifest), read in the place of the file.
pub fn problems<'t>(
    ws: &Workspace,
    path: &Path,
    kind: &Kind,
    text: &str,
    open: &dyn Fn(&Path) -> Option<&'t str>,
) -> Vec<Problem> {
    let shown = ws.shown(path);
    let parsed = match kind {
        Kind::Overrides(_) => return overrides_problems(text, &shown),
        Kind::Task => crate::task::parse(text.as_bytes(), Path::new(&shown)).map(|_| ()),
        Kind::Contracts => {
            crate::stages::contract::parse(text.as_bytes(), Path::new(&shown)).map(|_| ())
        }
        Kind::Lock(p) => {
            // A lock that does not read is no lock to `check` (it says so on the manifest):
            // its own problem is shown here, at its place.
            return match serde_json::from_str::<crate::stages::manifest::Lock>(text) {
                Ok(_) => lock_findings(ws, p, text, open),
                Err(e) => vec![Problem {
                    line: e.line().max(1),
                    column: e.column().max(1),
                    error: true,
                    message: format!(
                        "not a lock curate reads: {}; `curate compile` writes it anew",
                        crate::util::jsonpos::json_message(&e)
                    ),
                }],
            };
        }
        Kind::Manifest(_) => {
            let lock = ws
                .root
                .join(crate::stages::manifest::lock_path(&ws.shown(path)));
            let given = Given {
                manifest: Some(text),
                lock: open(&lock),
            };
            return checked(ws, path, given, &shown);
        }
        Kind::Other => Ok(()),
    };
    parsed.err().map(|e| of_error(&e)).unwrap_or_default()
}

/// Every problem of an overrides file: its parser's, each bad line's (it reads on after
/// one), and each line that holds a secret (the compile refuses it: it would be copied
/// into the manifest and the prompt), in line order.
fn overrides_problems(text: &str, shown: &str) -> Vec<Problem> {
    let path = Path::new(shown);
    let (_, errors) = crate::stages::overrides::parse_all(text, path, shown);
    let lines: Vec<&str> = text.lines().collect();
    let mut found: Vec<Problem> = errors
        .iter()
        .flat_map(of_error)
        .map(|p| match lines.get(p.line - 1) {
            Some(line) if p.column == 1 => Problem {
                column: value_column(line, &p.message).unwrap_or(1),
                ..p
            },
            _ => p,
        })
        .collect();
    for (i, line) in text.lines().enumerate() {
        if let Err(e) = crate::compile::refuse_copied_secrets(line, path) {
            found.extend(
                of_error(&e)
                    .into_iter()
                    .map(|p| Problem { line: i + 1, ..p }),
            );
        }
    }
    found.sort_by_key(|p| (p.line, p.column));
    found
}

/// The column of the member an overrides line's problem is about (`message` names its key:
/// `unknown priority …`, `"kind" must not be empty`, serde's ``unknown field `x` ``), in
/// `line` as written; `None` when it names none.
fn value_column(line: &str, message: &str) -> Option<usize> {
    let key = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
        .map(str::to_owned)
        .or_else(|| {
            [
                "priority", "kind", "file", "drop", "sections", "reason", "why",
            ]
            .into_iter()
            .find(|k| {
                message.starts_with(&format!("\"{k}\""))
                    || message.starts_with(&format!("unknown {k} "))
                    || (*k == "sections" && message.starts_with("section"))
                    || (*k == "sections" && message.starts_with("symbol "))
            })
            .map(str::to_owned)
        })?;
    let lead = line.chars().count() - line.trim_start().chars().count();
    // A member's place is its key's (where a person looks).
    let at = crate::util::jsonpos::locate(line.trim(), &format!("/{key}"))?;
    (at.line == 1 && at.column > 1).then_some(at.column + lead)
}

/// The findings of `check` on the manifest of `pair` that are about its lock (whose text
/// is `text`, the manifest's the editor's when open): shown on the lock's first line.
fn lock_findings<'t>(
    ws: &Workspace,
    pair: &Pair,
    text: &str,
    open: &dyn Fn(&Path) -> Option<&'t str>,
) -> Vec<Problem> {
    let manifest = ws.root.join(ws.manifest_path(&pair.change, &pair.role));
    let given = Given {
        manifest: open(&manifest),
        lock: Some(text),
    };
    if given.manifest.is_none() && !manifest.is_file() {
        return Vec::new();
    }
    let shown = ws.shown(&manifest);
    checked(ws, &manifest, given, &shown)
        .into_iter()
        .filter(|p| p.message.starts_with("the lock ") || p.message.starts_with("no lock "))
        .map(|p| Problem { line: 1, ..p })
        .collect()
}

/// What `check` finds in the manifest at `manifest` (with the texts `given`) that names
/// the file shown as `shown`.
fn checked(ws: &Workspace, manifest: &Path, given: Given<'_>, shown: &str) -> Vec<Problem> {
    check_given(ws, manifest, given)
        .into_iter()
        .filter(|f| f.file == shown)
        .map(|f| {
            let (column, message) = column_of(&f.message);
            Problem {
                line: f.line.max(1),
                column,
                error: f.severity == Severity::Error,
                message,
            }
        })
        .collect()
}

/// A message's leading `column N: ` (as `check` writes a contracts problem), taken out.
fn column_of(message: &str) -> (usize, String) {
    message
        .strip_prefix("column ")
        .and_then(|rest| rest.split_once(": "))
        .and_then(|(n, m)| Some((n.parse().ok()?, m.to_owned())))
        .unwrap_or((1, message.to_owned()))
}

/// The problems a parser's error names, each at its place.
fn of_error(e: &Error) -> Vec<Problem> {
    let at = |line: usize, column: usize, message: String| Problem {
        line: line.max(1),
        column: column.max(1),
        error: true,
        message,
    };
    match e {
        Error::Syntax { pos, message, .. } => vec![at(pos.line, pos.column, message.clone())],
        Error::Overrides { line, message, .. } => vec![at(*line, 1, message.clone())],
        Error::Schema { details, .. } => details
            .problems
            .iter()
            .map(|(pos, text)| at(pos.line, pos.column, text.clone()))
            .collect(),
        other => vec![at(
            1,
            1,
            crate::error::render(other, "error:").trim_end().to_owned(),
        )],
    }
}

/// The LSP diagnostics of `problems` in `text`: each from its column to the end of its line
/// (UTF-16 positions), its message redacted.
pub fn diagnostics(problems: &[Problem], text: &str) -> Vec<Value> {
    let lines: Vec<&str> = text.lines().collect();
    problems
        .iter()
        .map(|p| {
            let line = lines.get(p.line - 1).copied().unwrap_or("");
            let start: usize = line.chars().take(p.column - 1).map(char::len_utf16).sum();
            let end = line.encode_utf16().count().max(start);
            json!({
                "range": {
                    "start": {"line": p.line - 1, "character": start},
                    "end": {"line": p.line - 1, "character": end},
                },
                "severity": if p.error { 1 } else { 2 },
                "source": "curate",
                "message": super::redacted(&p.message),
            })
        })
        .collect()
}

/// The path of a `file://` URI (percent-decoded); `None` for any other scheme.
pub fn path_of(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///path` on Unix; a host part is not a local file.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(h) = bytes.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(std::str::from_utf8(h).unwrap_or("zz"), 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    let text = String::from_utf8(out).ok()?;
    Some(PathBuf::from(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_uri_is_its_path_decoded() {
        assert_eq!(
            path_of("file:///tmp/a%20b/c.jsonl"),
            Some(PathBuf::from("/tmp/a b/c.jsonl"))
        );
        assert_eq!(path_of("untitled:Untitled-1"), None);
        assert_eq!(path_of("file://server/share"), None);
    }

    #[test]
    fn a_problem_is_placed_in_utf16_from_its_column() {
        let p = Problem {
            line: 2,
            column: 3,
            error: true,
            message: "bad".to_owned(),
        };
        let d = diagnostics(&[p], "first\né€x}\n");
        assert_eq!(d[0]["range"]["start"], json!({"line": 1, "character": 2}));
        assert_eq!(d[0]["range"]["end"], json!({"line": 1, "character": 4}));
        assert_eq!(d[0]["severity"], 1);
    }
}
