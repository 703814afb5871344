//! `check`: every committed manifest valid, in budget and (with `--stale`) current.
//!
//! Reads manifests, their locks and the files they name; returns every problem (never only
//! the first) as a [`Finding`] at its line. Writes nothing.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::error::Result;
use crate::model::Caps;
use crate::model::{Priority, quoted};
use crate::settings::{CompileSettings, Workspace};
use crate::stages::budget::{self, Item, Rule};
use crate::stages::manifest;
use crate::stages::measure;
use crate::trust::admit::{Refusal, admit};

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

/// What `check` found.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// How many manifests were checked.
    pub manifests: usize,
    pub findings: Vec<Finding>,
}

impl Checked {
    /// The number of error findings.
    #[must_use]
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }

    /// The JSON report: `{valid, manifests, findings}`.
    #[must_use]
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "valid": self.errors() == 0,
            "manifests": self.manifests,
            "findings": self.findings,
        })
    }
}

/// Checks the contracts and the manifests at `paths` (default: every manifest under the
/// changes root); `stale` also compares with what a compile would write now.
#[must_use]
pub fn check(ws: &Workspace, paths: &[PathBuf], stale: bool) -> Checked {
    let mut findings = Vec::new();
    let contracts_file = ws.contracts.describe();
    if let Err(e) = ws.load_contracts() {
        findings.extend(contract_findings(&contracts_file, &e));
    }
    findings.extend(
        ws.workflow()
            .settings_warnings(&ws.root)
            .into_iter()
            .map(|w| Finding {
                file: w.file,
                line: w.line,
                severity: Severity::Warning,
                message: w.message,
            }),
    );
    let manifests: Vec<PathBuf> = if paths.is_empty() {
        discover(ws)
    } else {
        paths.iter().map(|p| ws.arg_path(p)).collect()
    };
    for path in &manifests {
        check_manifest(ws, path, Given::default(), stale, &mut findings);
    }
    Checked {
        manifests: manifests.len(),
        findings,
    }
}

/// The findings of a contracts file that does not load: one per schema problem, at its line.
fn contract_findings(file: &str, e: &crate::error::Error) -> Vec<Finding> {
    use crate::error::Error;
    let finding = |line: usize, message: String| Finding {
        file: file.to_owned(),
        line,
        severity: Severity::Error,
        message,
    };
    match e {
        Error::Schema { details, .. } => details
            .problems
            .iter()
            .map(|(pos, text)| finding(pos.line, format!("column {}: {text}", pos.column)))
            .collect(),
        Error::Syntax { pos, message, .. } => {
            vec![finding(
                pos.line,
                format!("column {}: {message}", pos.column),
            )]
        }
        other => {
            let mut message = other.to_string();
            let mut source = std::error::Error::source(other);
            while let Some(s) = source {
                message.push_str(&format!(": {s}"));
                source = s.source();
            }
            vec![finding(1, message)]
        }
    }
}

/// Every manifest the config's template names (`{change}` and `{role}` as wildcards) under
/// the changes root (both `changes` and `.aiws/changes` when it is chosen per change),
/// sorted; an overrides file beside one is not a manifest.
fn discover(ws: &Workspace) -> Vec<PathBuf> {
    let roots: Vec<String> = if ws.changes_root_given {
        let mut roots = vec![ws.changes_root.clone()];
        roots.extend(ws.workflow().more_roots().iter().map(|r| (*r).to_owned()));
        roots.extend(ws.workflow().roots_in(&ws.root));
        roots
    } else {
        crate::settings::CHANGES_ROOTS
            .iter()
            .map(|r| (*r).to_owned())
            .collect()
    };
    let mut out = Vec::new();
    for root in &roots {
        let pattern = crate::model::paths::fill(&ws.config.manifest, root, "*", "*");
        let Ok(pattern) = crate::model::paths::normalize(&pattern) else {
            continue;
        };
        let Ok(matcher) = crate::util::glob::matcher(&pattern) else {
            continue;
        };
        // A lock whose manifest is gone names a manifest that should be there.
        let lock_pattern = format!(
            "{}.lock.json",
            pattern.strip_suffix(".jsonl").unwrap_or(&pattern)
        );
        let lock_matcher = crate::util::glob::matcher(&lock_pattern).ok();
        let prefix = crate::model::paths::literal_prefix(&pattern);
        let depth =
            pattern.split('/').count() - prefix.split('/').filter(|s| !s.is_empty()).count();
        for e in walkdir::WalkDir::new(ws.root.join(prefix))
            .max_depth(depth)
            .into_iter()
            .flatten()
        {
            let Ok(rel) = e.path().strip_prefix(&ws.root) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if e.file_type().is_file()
                && matcher.is_match(&rel)
                && !rel.ends_with(".overrides.jsonl")
            {
                out.push(e.path().to_owned());
            } else if e.file_type().is_file()
                && lock_matcher.as_ref().is_some_and(|m| m.is_match(&rel))
                && let Some(stem) = rel.strip_suffix(".lock.json")
            {
                out.push(ws.root.join(format!("{stem}.jsonl")));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Texts an editor holds, not saved: checked in the place of the files on disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct Given<'a> {
    pub manifest: Option<&'a str>,
    pub lock: Option<&'a str>,
}

/// What `check` finds in the manifest at `path` (absolute) with the texts `given` in the
/// place of the manifest's and its lock's on disk (an editor's, as typed). The files its
/// entries name are read as `check` reads them. Writes nothing.
#[must_use]
pub fn check_given(ws: &Workspace, path: &Path, given: Given<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    check_manifest(ws, path, given, false, &mut findings);
    findings
}

/// The lock of the manifest at `rel`: `given`'s text, or the file's; `None` when it does
/// not read.
fn lock_of(ws: &Workspace, rel: Option<&str>, given: Option<&str>) -> Option<manifest::Lock> {
    match given {
        Some(text) => serde_json::from_str(text).ok(),
        None => manifest::read_lock(&ws.root, rel?),
    }
}

/// The findings of one manifest: each names the manifest (redacted) and, while an entry is
/// being checked, that entry's file.
struct Findings<'a> {
    out: &'a mut Vec<Finding>,
    shown: String,
    /// The entry being checked: its findings name its file, not only the manifest's line.
    entry: Option<String>,
}

impl Findings<'_> {
    fn add(&mut self, line: usize, severity: Severity, message: String) {
        let message = match self.entry.as_deref() {
            Some(file) if !message.contains(&quoted(file)) => {
                format!("entry {}: {message}", quoted(file))
            }
            _ => message,
        };
        self.out.push(Finding {
            file: self.shown.clone(),
            line,
            severity,
            message,
        });
    }

    /// An error under `--stale`, else a warning.
    fn stale(&mut self, stale: bool, message: String) {
        let severity = if stale {
            Severity::Error
        } else {
            Severity::Warning
        };
        self.add(1, severity, message);
    }
}

/// What every entry of one manifest is checked against.
struct Context<'a> {
    ws: &'a Workspace,
    /// The workflow's author's list is also the manifest (Trellis).
    authored: bool,
    has_header: bool,
    /// The archived change the manifest is in: its changes root and change.
    archived: Option<(&'a str, &'a str)>,
    stale: bool,
    lock: Option<&'a manifest::Lock>,
    caps: Caps,
    max_file_size: u64,
    encoding: crate::model::Encoding,
    rules: &'a crate::trust::secrets::ContentRules,
}

/// What the entries add up to: the budget's items, the files changed since curation, the
/// paths seen (with their line) for duplicates.
#[derive(Default)]
struct Tally {
    items: Vec<Item>,
    stale_files: Vec<(usize, String)>,
    seen: Vec<(usize, String)>,
}

fn check_manifest(
    ws: &Workspace,
    path: &Path,
    given: Given<'_>,
    stale: bool,
    findings: &mut Vec<Finding>,
) {
    let mut f = Findings {
        out: findings,
        // A path someone gave may hold a token: it is never shown.
        shown: crate::trust::redact::redact(&ws.shown(path)),
        entry: None,
    };
    let Some(text) = read_manifest(ws, path, given.manifest, &mut f) else {
        return;
    };
    let authored = ws.workflow().authored();
    let parsed = manifest::parse(&text);
    if authored && parsed.header.is_none() {
        // The author's own list, untouched by curate: the workflow's own rules judge it.
        return;
    }
    for (line, column, message) in &parsed.errors {
        f.add(
            *line,
            Severity::Error,
            format!("column {column}: {message}"),
        );
    }
    let rel = ws.relative(path);
    // An archived change (`openspec archive`, `task.py archive`) is the record of what was
    // given: it took its files along, and it is not compiled again, so nothing in it is stale.
    let archived = rel
        .as_deref()
        .and_then(|rel| crate::workflow::archived_change(ws.workflow(), rel));
    let stale = stale && archived.is_none();
    let lock = lock_of(ws, rel.as_deref(), given.lock);
    let caps = judge_lock(&text, lock.as_ref(), stale, &mut f);
    // The rules guard secrets: when they fail to build, nothing is read (fail closed).
    let rules = match crate::trust::secrets::ContentRules::shared() {
        Ok(rules) => rules,
        Err(e) => {
            f.add(1, Severity::Error, format!("cannot check entries: {e}"));
            return;
        }
    };
    let cx = Context {
        ws,
        authored,
        has_header: parsed.header.is_some(),
        archived,
        stale,
        lock: lock.as_ref(),
        caps,
        max_file_size: lock
            .as_ref()
            .map_or(crate::stages::measure::DEFAULT_MAX_FILE_SIZE, |l| {
                l.inputs.max_file_size
            }),
        encoding: lock.as_ref().map_or(ws.encoding, |l| l.inputs.encoding),
        rules,
    };
    let mut tally = Tally::default();
    for (line, value) in &parsed.entries {
        f.entry = None;
        check_entry(&cx, *line, value, &mut f, &mut tally);
    }
    if parsed.entries.is_empty() {
        f.add(
            1,
            Severity::Error,
            "no entry: a manifest needs at least one".to_owned(),
        );
    }
    f.entry = None;
    for problem in over_budget(&tally.items, caps) {
        f.add(1, Severity::Error, problem);
    }
    for (line, file) in tally.stale_files {
        f.add(
            line,
            Severity::Error,
            format!(
                "stale: {} changed since curation; its sections may point at the wrong lines",
                quoted(&file)
            ),
        );
    }
    if stale && let Some(l) = &lock {
        replay(ws, l, &text, &mut f);
    }
}

/// The manifest's text, or `given`'s (an editor's): one in the repository is read only
/// from inside it; one named elsewhere is read where it was named. Either way bounded, and
/// a regular file only. `None` (with its finding) when it cannot be read.
fn read_manifest(
    ws: &Workspace,
    path: &Path,
    given: Option<&str>,
    f: &mut Findings<'_>,
) -> Option<String> {
    let read = if let Some(text) = given {
        Ok(text.as_bytes().to_vec())
    } else if path.starts_with(&ws.root) {
        crate::trust::admit::read_repo_file(&ws.root, path)
            .map_err(crate::error::Error::from)
            .and_then(|b| {
            b.ok_or_else(|| {
                crate::error::Error::Failed(
                    "the manifest does not exist where the manifest template puts it (a lock for it does, or it was named): compile it again".to_owned(),
                )
            })
        })
    } else {
        crate::util::read::read_capped(path, crate::util::read::INPUT_CAP).map_err(Into::into)
    };
    match read {
        Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Err(e) => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                message.push_str(&format!(": {s}"));
                source = s.source();
            }
            f.add(1, Severity::Error, format!("cannot read: {message}"));
            None
        }
    }
}

/// The manifest against its lock: edited by hand, no lock, a lock that describes another
/// manifest. The caps to check against: the lock's, else the defaults.
fn judge_lock(
    text: &str,
    lock: Option<&manifest::Lock>,
    stale: bool,
    f: &mut Findings<'_>,
) -> Caps {
    // curate's own output (a header, or a lock beside it) that no longer matches its digest
    // was edited by a person; a seed-style manifest without either is simply hand-written.
    let claims_curate = text.starts_with(manifest::HEADER) || lock.is_some();
    let hand_edited = claims_curate && !manifest::is_intact(text);
    if hand_edited {
        f.stale(
            stale,
            "edited by hand: the manifest does not match the digest curate wrote".to_owned(),
        );
    }
    let Some(l) = lock else {
        f.add(
            1,
            Severity::Warning,
            "no lock beside this manifest: checking against the default caps".to_owned(),
        );
        return Caps::default();
    };
    if !hand_edited && !l.matches(text) {
        // A stale lock is a stale finding: an error under --stale.
        f.stale(
            stale,
            "the lock does not describe this manifest (stale lock)".to_owned(),
        );
    }
    l.inputs.caps
}

/// One entry: no secret in it, its fields, its path, the file it names (there, admitted,
/// its sections inside it), counted for the budget as the compile counts it.
fn check_entry(cx: &Context<'_>, line: usize, value: &Value, f: &mut Findings<'_>, t: &mut Tally) {
    let Some(obj) = value.as_object() else {
        return;
    };
    let file = obj.get("file").and_then(Value::as_str);
    if let Some(rule) = file.and_then(crate::trust::secrets::rule_of_text) {
        // Never named: the finding is the line's.
        f.add(
            line,
            Severity::Error,
            format!("the entry's path holds a secret ({rule}); remove the line"),
        );
        return;
    }
    if let Some(hit) = cx
        .rules
        .scan(crate::trust::secrets::json_text(value).as_bytes())
    {
        // Its values are echoed by the findings below: none of them is made.
        f.add(
            line,
            Severity::Error,
            format!("the entry holds a secret ({}); remove the value", hit.rule),
        );
        return;
    }
    f.entry = file.map(str::to_owned);
    // In a file that is also the author's list, a row without a file is the author's
    // (Trellis' seed row, a drop), and a row curate did not mark is the author's entry.
    let author_row =
        cx.authored && obj.get(manifest::BY.0).and_then(Value::as_str) != Some(manifest::BY.1);
    if cx.authored && !obj.contains_key("file") && !obj.contains_key("path") {
        return;
    }
    if author_row && obj.get("type").and_then(Value::as_str) == Some("directory") {
        let folder = obj.get("file").and_then(Value::as_str).unwrap_or_default();
        if crate::stages::authored::directory_members(&cx.ws.root, &cx.moved(folder)).is_empty() {
            f.add(
                line,
                Severity::Error,
                format!("the folder {} holds no .md file", quoted(folder)),
            );
        }
        return;
    }
    let Some((file, priority, sections)) = check_fields(cx, obj, author_row, line, f) else {
        return;
    };
    let Some(repo_path) = check_path(cx, file, author_row, line, f, t) else {
        return;
    };
    let normal = repo_path.as_str().to_owned();
    let bytes = match admit(&cx.ws.root, &repo_path, cx.max_file_size, cx.rules) {
        Ok(bytes) => bytes,
        Err(refusal) => {
            // An author's row that names a missing file too (curate kept it as written):
            // Trellis' `task.py validate` fails on it, and so does this check.
            f.add(line, Severity::Error, refusal_finding(&normal, &refusal));
            return;
        }
    };
    let file_lines = measure::count_lines(&bytes);
    let Some(sections) = sections else { return };
    if let Some(ranges) = sections.as_ranges() {
        for [s, e] in ranges {
            if *e > file_lines {
                f.add(
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
    // Counted as the compile counts them: on what a consumer that cuts files reads.
    let chosen = measure::selected(&bytes, &sections);
    let read = measure::consumed(&chosen, cx.caps.file_bytes);
    let lines = if read.len() < chosen.len() {
        measure::count_lines(read)
    } else {
        sections.line_count(file_lines)
    };
    let tokens = (cx.caps.max_tokens > 0).then(|| {
        crate::stages::tokens::TokenCounter::count(&crate::stages::tokens::Fast(cx.encoding), read)
    });
    if let Some(priority) = priority {
        t.items.push(Item {
            priority,
            lines,
            tokens,
            bytes: read.len() as u64,
        });
    }
    if cx.stale
        && let Some(l) = cx.lock
        && let Some(le) = l.entries.iter().find(|e| e.file == normal)
        && le.sha256 != crate::util::digest::hex(&bytes)
    {
        t.stale_files.push((line, normal));
    }
}

impl Context<'_> {
    /// A path of the manifest as it reads today: of an archived change, where the change
    /// (which took its files along) is now.
    fn moved(&self, path: &str) -> String {
        match self.archived {
            Some((changes_root, change)) => crate::workflow::archived_path(
                &self.ws.root,
                self.ws.workflow(),
                changes_root,
                change,
                path.to_owned(),
            ),
            None => path.to_owned(),
        }
    }
}

/// An entry's fields: those required there, none unknown, each of its type. Its file, its
/// priority and sections when they are valid; `None` when it names no file.
fn check_fields<'v>(
    cx: &Context<'_>,
    obj: &'v serde_json::Map<String, Value>,
    author_row: bool,
    line: usize,
    f: &mut Findings<'_>,
) -> Option<(&'v str, Option<Priority>, Option<crate::model::Sections>)> {
    // curate's own entries carry all five fields; a seed-style one (or an author's row)
    // may leave out `sections` and `kind`.
    let required: &[&str] = if author_row {
        &["file"]
    } else if cx.has_header {
        &["file", "reason", "sections", "priority", "kind"]
    } else {
        &["file", "reason", "priority"]
    };
    for key in required {
        if !obj.contains_key(*key) {
            f.add(line, Severity::Error, format!("missing field \"{key}\""));
        }
    }
    let known: &[&str] = if cx.authored {
        &[
            "file", "reason", "sections", "priority", "kind", "type", "by",
        ]
    } else {
        &["file", "reason", "sections", "priority", "kind", "glob"]
    };
    for key in obj.keys() {
        if !known.contains(&key.as_str()) {
            f.add(
                line,
                Severity::Warning,
                format!("unknown field {}", quoted(key)),
            );
        }
    }
    let Some(file) = obj.get("file").and_then(Value::as_str) else {
        f.add(
            line,
            Severity::Error,
            "\"file\" must be a string".to_owned(),
        );
        return None;
    };
    for key in ["reason", "kind"] {
        if let Some(v) = obj.get(key)
            && !v.is_string()
        {
            f.add(line, Severity::Error, format!("\"{key}\" must be a string"));
        }
    }
    let priority = match obj.get("priority") {
        None => Some(Priority::Medium),
        Some(p) => p.as_str().and_then(Priority::parse).or_else(|| {
            f.add(
                line,
                Severity::Error,
                format!("unknown priority {p}: use high, medium or low"),
            );
            None
        }),
    };
    let sections = match obj.get("sections") {
        None | Some(Value::Null) => Some(crate::model::Sections::Whole),
        Some(s) => match serde_json::from_value::<Vec<[u64; 2]>>(s.clone())
            .map_err(|e| e.to_string())
            .and_then(crate::stages::overrides::checked_sections)
        {
            Ok(s) => Some(s),
            Err(e) => {
                f.add(line, Severity::Error, format!("malformed sections: {e}"));
                None
            }
        },
    };
    Some((file, priority, sections))
}

/// An entry's path: a plain repository path, listed once. The path to read (of an archived
/// change, where it is now); `None` when it is no repository path.
fn check_path(
    cx: &Context<'_>,
    file: &str,
    author_row: bool,
    line: usize,
    f: &mut Findings<'_>,
    t: &mut Tally,
) -> Option<crate::model::paths::RepoPath> {
    let repo_path = match crate::model::paths::RepoPath::new(file) {
        Ok(p) => p,
        Err(e) => {
            f.add(
                line,
                Severity::Error,
                format!("{} {}", quoted(file), e.problem()),
            );
            return None;
        }
    };
    let normal = repo_path.as_str().to_owned();
    // Trellis' hook joins an author's path to the root as written, so `./a` and `a//b`
    // read the plain path (no `..` or `\` to resolve); other readers take the path as
    // written: it must be the plain repository path.
    let joined_as_written =
        author_row && !file.contains('\\') && !file.split('/').any(|part| part == "..");
    if normal != file && !joined_as_written {
        f.add(
            line,
            Severity::Error,
            format!(
                "{} is not a plain repository path: write {}",
                quoted(file),
                quoted(&normal)
            ),
        );
    }
    if let Some((first, _)) = t.seen.iter().find(|(_, p)| *p == normal) {
        f.add(
            line,
            Severity::Error,
            format!(
                "{} is listed twice (first on line {first})",
                quoted(&normal)
            ),
        );
    }
    t.seen.push((line, normal.clone()));
    // A change that was archived took its files along: a row naming one where the change
    // was is read where it is now.
    Some(
        cx.archived
            .and_then(|_| crate::model::paths::RepoPath::new(&cx.moved(&normal)).ok())
            .unwrap_or(repo_path),
    )
}

/// `--stale` with a lock: what a compile with the recorded inputs makes of them today. A
/// file read from outside the repository cannot be read again from the lock.
fn replay(ws: &Workspace, l: &manifest::Lock, text: &str, f: &mut Findings<'_>) {
    let file = |r: &Option<crate::model::FileRef>, what: &str| {
        r.as_ref()
            .filter(|r| r.outside)
            .map(|r| format!("the {what} {} was", quoted(&r.path)))
    };
    let outside = file(&l.inputs.overrides, "overrides file")
        .or_else(|| file(&l.inputs.task_file, "task file"))
        .or_else(|| {
            l.contracts
                .outside
                .then(|| format!("the contracts {} were", quoted(&l.contracts.source)))
        });
    if let Some(what) = outside {
        f.add(
            1,
            Severity::Warning,
            format!(
                "stale check skipped: {what} read from outside the repository, so a compile with the recorded inputs cannot be run here"
            ),
        );
        return;
    }
    match recompile(ws, l) {
        Ok(Some(new_text)) if new_text != text => f.add(
            1,
            Severity::Error,
            format!(
                "stale: a compile with the recorded inputs would now write this manifest differently (run `{}`)",
                replay_command(ws, l)
            ),
        ),
        Ok(None) => f.add(
            1,
            Severity::Error,
            "stale: a compile with the recorded inputs is no longer READY".to_owned(),
        ),
        Err(e) => f.add(1, Severity::Error, format!("stale check failed: {e}")),
        Ok(Some(_)) => {}
    }
}

/// A refusal of the admission checks, as a finding about an entry.
fn refusal_finding(file: &str, refusal: &Refusal) -> String {
    let file = quoted(file);
    match refusal {
        Refusal::SecretName(rule) => format!("{file} is a secret ({rule})"),
        Refusal::SecretContent { rule, line } => {
            format!("{file} holds a secret ({rule} on line {line})")
        }
        Refusal::Missing(_) => format!("{file} does not exist"),
        Refusal::Outside | Refusal::NotRegular(_) => {
            format!("{file} is outside the repository or not a file")
        }
        Refusal::Binary => format!("{file} is binary"),
        other => format!("{file} may not enter: {other}"),
    }
}

/// The budget rules a manifest breaks, in words for a reader of a finished manifest: the
/// compile's own rules ([`budget::allocate`]) decide; a manifest breaks a rule when a
/// compile under the same caps would drop one of its entries or stop OVER_BUDGET.
fn over_budget(items: &[Item], caps: Caps) -> Vec<String> {
    let allocation = budget::allocate(items, caps);
    let by = |rule: Rule| allocation.dropped.contains(&Some(rule));
    let overrun = |measure: &str| allocation.overrun.is_some_and(|o| o.measure == measure);
    let mut out = Vec::new();
    if by(Rule::SoftCap) {
        let high_medium = items.iter().filter(|i| i.priority != Priority::Low).count();
        let lows = items.len() - high_medium;
        out.push(format!(
            "over budget: {high_medium} high+medium entries exceed the file cap of {}, yet {lows} low {} (a compile drops them)",
            caps.max_files,
            if lows == 1 { "entry remains" } else { "entries remain" }
        ));
    }
    if by(Rule::HardCap) || overrun("lines") {
        let lines: u64 = items.iter().map(|i| i.lines).sum();
        out.push(format!(
            "over budget: {lines} lines exceed the line cap of {}",
            caps.max_lines
        ));
    }
    if by(Rule::TokenCap) || overrun("tokens") {
        let tokens: u64 = items.iter().filter_map(|i| i.tokens).sum();
        out.push(format!(
            "over budget: {tokens} tokens exceed the token cap of {}",
            caps.max_tokens
        ));
    }
    out
}

/// The command that compiles with a lock's recorded inputs: each input that differs from
/// what a compile in `ws` takes without options, as its option (a hint that left them out
/// would narrow the manifest, and the next `check --stale` would pass on it).
fn replay_command(ws: &Workspace, lock: &manifest::Lock) -> String {
    let i = &lock.inputs;
    let mut words: Vec<String> = Vec::new();
    let mut option = |name: &str, value: Option<String>| {
        words.push(name.to_owned());
        words.extend(value);
    };
    option("--role", Some(i.role.clone()));
    option("--change", Some(i.change.clone()));
    if let Some(file) = &lock.contracts.file {
        option("--contracts", Some(file.clone()));
    }
    for (name, values) in [
        ("--owns", &i.owns),
        ("--reads", &i.reads),
        ("--add", &i.add),
        ("--drop", &i.drop),
    ] {
        for v in values {
            option(name, Some(v.clone()));
        }
    }
    if let Some(f) = &i.overrides
        && f.path != ws.overrides_path(&i.change, &i.role)
    {
        option("--overrides", Some(f.path.clone()));
    }
    if let Some(f) = &i.task_file {
        option("--task-file", Some(f.path.clone()));
    }
    if !i.files_from.is_empty() {
        // The list itself is in the lock, as read from the file or stdin.
        option("--files-from", Some("FILE".to_owned()));
    }
    if !i.task_text.is_empty() {
        // The text itself is in the lock, as given (a file, stdin, a hook's prompt).
        option("--task-text", Some("FILE".to_owned()));
    }
    // What the task's words get without `--task-tokens`: the default budget once there is a
    // text, unless the config set one.
    let task_tokens = if !i.task_text.is_empty()
        && ws.config.origins.get("select.task_tokens") == Some(&crate::config::Origin::Default)
    {
        crate::config::DEFAULT_TASK_TOKENS
    } else {
        ws.config.task_tokens
    };
    let caps = ws.caps();
    for (name, recorded, bare) in [
        ("--max-files", i.caps.max_files, caps.max_files),
        ("--max-lines", i.caps.max_lines, caps.max_lines),
        ("--max-tokens", i.caps.max_tokens, caps.max_tokens),
        ("--related", i.related, ws.config.related_tokens),
        ("--task-tokens", i.task_tokens, task_tokens),
        (
            "--max-file-size",
            i.max_file_size,
            crate::stages::measure::DEFAULT_MAX_FILE_SIZE,
        ),
    ] {
        if recorded != bare {
            option(name, Some(recorded.to_string()));
        }
    }
    if caps.degrade && !i.caps.degrade {
        option("--no-degrade", None);
    }
    if i.no_ignore {
        option("--no-ignore", None);
    }
    if i.encoding != ws.encoding {
        option("--encoding", Some(i.encoding.name().to_owned()));
    }
    if i.changes_root != ws.changes_root {
        option("--changes-dir", Some(i.changes_root.clone()));
    }
    std::iter::once("curate".to_owned())
        .chain(words.iter().map(|w| crate::report::shell_word(w)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The manifest a compile with the lock's recorded inputs would write now.
fn recompile(ws: &Workspace, lock: &manifest::Lock) -> Result<Option<String>> {
    let (ws, s) = CompileSettings::from_lock(ws, lock)?;
    Ok(crate::compile::compile(&ws, &s)?.manifest)
}
