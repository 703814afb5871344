//! Rendering through tera templates: the sticky first instruction, the context bundle and
//! the WorkerHandoff envelope (`render`, `preview`).
//!
//! Receives a finished compile (or an existing manifest) and writes the prompt to stdout or,
//! atomically, to a file. File text is data: it comes from the `excerpt` template function,
//! one entry at a time, so `{{` inside a file is printed as it is; the output is streamed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};

pub use crate::model::Lang;

use crate::compile::{self, Compiled, Kept};
use crate::error::{Error, Result};
use crate::model::{Entry, Priority, Sections, quoted};
use crate::settings::{CompileSettings, Workspace};
use crate::stages::budget::Status;
use crate::stages::measure;
use crate::task::Task;
use crate::trust::admit::{Held, admit};
use crate::trust::secrets::ContentRules;

/// The embedded templates, by file name.
pub const TEMPLATES: [(&str, &str); 5] = [
    (
        "sticky.en.tera",
        include_str!("../templates/sticky.en.tera"),
    ),
    (
        "sticky.zh.tera",
        include_str!("../templates/sticky.zh.tera"),
    ),
    ("bundle.tera", include_str!("../templates/bundle.tera")),
    ("handoff.tera", include_str!("../templates/handoff.tera")),
    (
        "guild-bundle.tera",
        include_str!("../templates/guild-bundle.tera"),
    ),
];

/// Byte caps of the bundle (0 = off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteCaps {
    pub per_file: u64,
    pub total: u64,
}

impl ByteCaps {
    /// The caps `[render]` of the config sets (or their defaults).
    #[must_use]
    pub fn of(config: &crate::config::Config) -> ByteCaps {
        ByteCaps {
            per_file: config.max_file_bytes,
            total: config.max_total_bytes,
        }
    }
}

/// Finds a template's text: the repository's `.curate/templates/<name>.<lang>.tera`, then
/// `<name>.tera`, then the embedded ones in the same order.
fn lookup(root: &Path, name: &str, lang: Lang) -> Result<Option<Found>> {
    let candidates = [
        format!("{name}.{}.tera", lang.code()),
        format!("{name}.tera"),
    ];
    for file in &candidates {
        let path = root.join(".curate/templates").join(file);
        // A repository template is an input like any other: never through a link out of
        // the repository, never a FIFO or a device, never past the input cap.
        if let Some(bytes) = crate::trust::admit::read_repo_file(root, &path)? {
            let text = String::from_utf8(bytes).map_err(|_| Error::Invalid {
                path: path.clone(),
                message: "the template is not UTF-8".to_owned(),
            })?;
            return Ok(Some(Found {
                shown: format!(".curate/templates/{file}"),
                text: text.into(),
                embedded: None,
            }));
        }
    }
    for file in &candidates {
        if let Some(index) = TEMPLATES.iter().position(|(n, _)| n == file) {
            return Ok(Some(Found {
                shown: file.clone(),
                text: TEMPLATES[index].1.into(),
                embedded: Some(index),
            }));
        }
    }
    Ok(None)
}

/// A template [`lookup`] found: its name as shown, its text, and which embedded template it
/// is (`None`: the repository's own).
struct Found {
    shown: String,
    text: Cow<'static, str>,
    embedded: Option<usize>,
}

/// The embedded templates, each parsed at most once a process under each name a render adds
/// it as (its file name, or `sticky` for the bundle's include): tera's parser costs about a
/// millisecond a template, a copy of the parsed one some microseconds. `None`: it does not
/// parse (the tests rule that out), and the render parses it again for the error.
fn parsed(index: usize, as_sticky: bool) -> Option<&'static tera::Tera> {
    static PARSED: [[OnceLock<Option<tera::Tera>>; 2]; TEMPLATES.len()] =
        [const { [const { OnceLock::new() }; 2] }; TEMPLATES.len()];
    let (file, text) = TEMPLATES.get(index)?;
    PARSED[index][usize::from(as_sticky)]
        .get_or_init(|| {
            let mut tera = tera::Tera::default();
            let name = if as_sticky { "sticky" } else { file };
            tera.add_raw_template(name, text).ok()?;
            Some(tera)
        })
        .as_ref()
}

/// Parses the embedded templates a bundle of `lang` uses (ahead of the render, on another
/// thread that warms the process up).
pub fn warm(lang: Option<Lang>) {
    let langs = lang.map_or_else(|| vec![Lang::En, Lang::Zh], |lang| vec![lang]);
    if let Some(bundle) = TEMPLATES.iter().position(|(n, _)| *n == "bundle.tera") {
        parsed(bundle, false);
    }
    for lang in langs {
        let sticky = format!("sticky.{}.tera", lang.code());
        if let Some(index) = TEMPLATES.iter().position(|(n, _)| *n == sticky) {
            parsed(index, true);
        }
    }
}

/// Adds a found template to `tera` as `name`: the embedded ones already parsed.
fn add_found(tera: &mut tera::Tera, name: &str, found: &Found) -> Result<()> {
    let as_sticky = name == "sticky";
    if let Some(parsed) = found.embedded.and_then(|index| parsed(index, as_sticky))
        && (as_sticky || name == found.shown)
    {
        return tera.extend(parsed).map_err(|source| Error::Template {
            name: name.to_owned(),
            line: None,
            source,
        });
    }
    add(tera, name, &found.text)
}

/// The language of a fence for a file name.
#[must_use]
pub fn fence_language(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map_or("", |(_, e)| e)
        .to_ascii_lowercase();
    match ext.as_str() {
        "md" | "markdown" => "markdown",
        "rs" => "rust",
        "ts" | "tsx" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "py" => "python",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" | "cxx" => "cpp",
        "json" | "jsonl" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "sh" | "bash" => "bash",
        "patch" | "diff" => "diff",
        "html" | "htm" => "html",
        "css" => "css",
        "sql" => "sql",
        "rb" => "ruby",
        "kt" => "kotlin",
        "swift" => "swift",
        "tera" | "j2" | "jinja" => "jinja",
        "xml" => "xml",
        _ => "text",
    }
}

/// The label of a line in an excerpt, `{n:>width$} |`, counted up in place from one line to
/// the next (formatting each number anew was a tenth of a bulk bundle's render).
struct Numbering {
    /// `width` characters: the number's digits, spaces on the left.
    digits: String,
}

impl Numbering {
    fn new(first: u64, width: usize) -> Self {
        Self {
            digits: format!("{first:>width$}"),
        }
    }

    /// Writes the label, `digits |`.
    fn write(&self, out: &mut String) {
        out.push_str(&self.digits);
        out.push_str(" |");
    }

    /// The next number: the last digit replaced, carried left past each 9. Within a range
    /// the numbers never grow wider than the label, whose width is that of the range's last
    /// line.
    fn advance(&mut self) {
        let mut nines = 0;
        while let Some(last) = self.digits.pop() {
            match last {
                '9' => nines += 1,
                ' ' => {
                    self.digits.push('1');
                    break;
                }
                _ => {
                    let next = last.to_digit(10).and_then(|d| char::from_digit(d + 1, 10));
                    self.digits.push(next.unwrap_or(last));
                    break;
                }
            }
        }
        for _ in 0..nines {
            self.digits.push('0');
        }
    }
}

/// The lines of a text in order, numbered from 1, each without its line end (`\n`, and any
/// `\r` before it): read forward only, one `memchr` a line, nothing built per line.
struct LineWalk<'a> {
    text: &'a str,
    /// Where line `next` starts.
    at: usize,
    next: u64,
}

impl<'a> LineWalk<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            at: 0,
            next: 1,
        }
    }

    /// Line `n` (at or after the next one; `""` past the end).
    fn line(&mut self, n: u64) -> &'a str {
        while self.next < n {
            self.step();
        }
        self.step()
    }

    fn step(&mut self) -> &'a str {
        let rest = self.text.get(self.at..).unwrap_or_default();
        let line = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(end) => {
                self.at += end + 1;
                rest.get(..end).unwrap_or_default()
            }
            None => {
                self.at = self.text.len();
                rest
            }
        };
        self.next += 1;
        // `\r` is one byte: cut before the last of them is a character boundary.
        let kept = line.len() - line.bytes().rev().take_while(|&b| b == b'\r').count();
        line.get(..kept).unwrap_or_default()
    }
}

/// What a whole file's excerpt holds, counted over its bytes without a line's own: for a
/// text without `\r` (whose lines are then exactly the bytes between `\n`s).
struct Whole {
    /// Each line's bytes and one newline.
    used: u64,
    lines: usize,
    /// The lines that are not empty (a space between number and text).
    spaced: usize,
}

impl Whole {
    fn of(text: &[u8], lines: u64) -> Option<Whole> {
        if memchr::memchr(b'\r', text).is_some() {
            return None;
        }
        let lines = usize::try_from(lines).ok()?;
        // An empty line is a `\n` at the start or right after another; counted in blocks a
        // byte-wide sum holds (which the compiler turns into vector code).
        let pairs = text.get(1..).unwrap_or_default();
        let empty = usize::from(text.first() == Some(&b'\n'))
            + text
                .chunks(255)
                .zip(pairs.chunks(255))
                .map(|(a, b)| {
                    let block = a.iter().zip(b).fold(0u8, |n, (a, b)| {
                        n + (u8::from(*a == b'\n') & u8::from(*b == b'\n'))
                    });
                    usize::from(block)
                })
                .sum::<usize>();
        Some(Whole {
            used: text.len() as u64 + u64::from(text.last().is_some_and(|&b| b != b'\n')),
            lines,
            spaced: lines - empty,
        })
    }
}

/// The numbered, fenced text of one entry's selected lines, and whether it was cut.
#[must_use]
pub fn excerpt_text(path: &str, bytes: &[u8], sections: &Sections, per_file: u64) -> String {
    let text = crate::util::read::text_of(bytes);
    let count = measure::count_lines(text.as_bytes());
    // Most files hold no backtick: then no line needs looking at for the fence.
    let backticks = memchr::memchr(b'`', text.as_bytes()).is_some();
    let ranges: Vec<[u64; 2]> = match sections.as_ranges() {
        None => {
            if count == 0 {
                vec![]
            } else {
                vec![[1, count]]
            }
        }
        Some(r) => r
            .iter()
            .filter(|[s, _]| *s <= count)
            .map(|&[s, e]| [s, e.min(count)])
            .collect(),
    };
    let width = ranges.last().map_or(1, |[_, e]| e.to_string().len());
    // First pass: which lines fit the byte cap, and the longest backtick run among them
    // (the fence must be longer). Second pass: write them, with no copy per line.
    let mut used: u64 = 0;
    let (mut shown, mut spaced): (usize, usize) = (0, 0);
    let mut cut = None;
    let mut longest_run = 0;
    let mut lines = LineWalk::new(&text);
    let whole = (!backticks && sections.as_ranges().is_none() && per_file == 0)
        .then(|| Whole::of(text.as_bytes(), count))
        .flatten();
    let measured = match whole {
        // Nearly every file of a bulk bundle: counted over the bytes, not line by line.
        Some(whole) => {
            (used, shown, spaced) = (whole.used, whole.lines, whole.spaced);
            &[][..]
        }
        _ => &ranges[..],
    };
    'measure: for &[s, e] in measured {
        for n in s..=e {
            let line = lines.line(n);
            let size = line.len() as u64 + 1;
            if per_file > 0 && used + size > per_file {
                cut = Some(n);
                break 'measure;
            }
            used += size;
            shown += 1;
            spaced += usize::from(!line.is_empty());
            if backticks && line.contains('`') {
                let run = line.split(|c| c != '`').map(str::len).max().unwrap_or(0);
                longest_run = longest_run.max(run);
            }
        }
    }
    let fence = "`".repeat((longest_run + 1).max(3));
    // Exactly what is written below, but for the cut note: each line with its number and
    // " |" (its newline is in `used`), a space before a line's text, "...\n" between
    // ranges, the two fences.
    let capacity = usize::try_from(used).unwrap_or(0)
        + shown * (width + 2)
        + spaced
        + ranges.len().saturating_sub(1) * 4
        + 2 * fence.len()
        + fence_language(path).len()
        + 1;
    let mut out = String::with_capacity(capacity);
    out.push_str(&fence);
    out.push_str(fence_language(path));
    out.push('\n');
    let mut lines = LineWalk::new(&text);
    'write: for (i, &[s, e]) in ranges.iter().enumerate() {
        if i > 0 {
            out.push_str("...\n");
        }
        let mut number = Numbering::new(s, width);
        for n in s..=e {
            if Some(n) == cut {
                break 'write;
            }
            let line = lines.line(n);
            number.write(&mut out);
            number.advance();
            if !line.is_empty() {
                out.push(' ');
                out.push_str(line);
            }
            out.push('\n');
        }
    }
    out.push_str(&fence);
    if let Some(n) = cut {
        let total: usize = bytes.len();
        let _ = write!(
            out,
            "\n[curate: cut before line {n}: this entry's selected text is over --max-file-bytes {per_file} ({total} bytes in the file)]"
        );
    }
    out
}

/// A reason as a prompt shows it, on its entry's line: a control character escaped (`\n`,
/// `\u{1b}`: no line of its own, no terminal sequence), and `</` as `<\/`, so that no
/// reason closes the bundle's block (`</aiws-context-injection>`) or any other tag early.
/// Borrowed when there is nothing to escape (nearly always).
fn shown_reason(reason: &str) -> std::borrow::Cow<'_, str> {
    if !reason.chars().any(char::is_control) && !reason.contains("</") {
        return std::borrow::Cow::Borrowed(reason);
    }
    std::borrow::Cow::Owned(crate::model::one_line(reason).replace("</", "<\\/"))
}

/// What a template sees of an entry (borrowed: serialised once, into the context).
#[derive(Debug, Serialize)]
struct EntryView<'a> {
    file: &'a str,
    /// As [`shown_reason`] makes it.
    reason: std::borrow::Cow<'a, str>,
    sections: &'a Sections,
    priority: crate::model::Priority,
    /// As [`shown_reason`] makes it.
    kind: std::borrow::Cow<'a, str>,
    lines: u64,
    tokens: u64,
}

/// Everything a render needs.
pub struct Job<'a> {
    pub ws: &'a Workspace,
    pub role: &'a crate::stages::contract::Role,
    /// The role's name as the caller gave it.
    pub role_name: &'a str,
    pub change: &'a str,
    pub manifest_path: &'a str,
    pub kept: &'a [Kept],
    pub status: Status,
    pub task: Option<&'a Task>,
    pub owned: Vec<String>,
    pub readonly: Vec<String>,
    pub lang: Lang,
    pub caps: ByteCaps,
    /// Truth files that changed since the change began: the sub-agent reads them whole.
    pub changed_truth: &'a [String],
    /// The size cap of a file read for an excerpt (`--max-file-size`).
    pub max_file_size: u64,
    /// What the sub-agent is not given, and why (dropped by a cap, excluded).
    pub not_given: Vec<NotGiven>,
    /// The bytes the compile admitted: an excerpt is taken from them, not read again.
    pub held: std::sync::Arc<Held>,
}

/// A file the sub-agent is not given, for the end of the bundle's context part.
#[derive(Debug, Clone, Serialize)]
pub struct NotGiven {
    pub file: String,
    pub why: String,
}

/// At most this many not-given files are named; the rest are counted.
pub const NOT_GIVEN_SHOWN: usize = 50;

/// The files a compile left out: each excluded one with its reason (a secret by its rule
/// only, never a value) first, then each dropped, named-only and outlined one with its rule,
/// high priority first (within one, dropped before named before outlined): past
/// [`NOT_GIVEN_SHOWN`] lines, what is counted and not named is the least of it.
#[must_use]
pub fn not_given(compiled: &Compiled) -> Vec<NotGiven> {
    // A name that holds a control character is written as a JSON string: it cannot break a line.
    let name = |f: &str| {
        if f.chars().any(char::is_control) {
            quoted(f)
        } else {
            f.to_owned()
        }
    };
    let dropped = compiled.dropped.iter().map(|d| {
        let given = NotGiven {
            file: name(&d.file),
            why: match d.lines {
                Some(lines) => format!("dropped by the {} ({}, {lines} lines)", d.by, d.priority),
                None => format!("dropped by {}", d.by),
            },
        };
        ((d.priority, 0), given)
    });
    let indexed = compiled.indexed.iter().map(|d| {
        let given = NotGiven {
            file: name(&d.file),
            why: format!(
                "named only, not read: cut by the {} ({}, {} lines)",
                d.by,
                d.priority,
                d.lines.unwrap_or(0)
            ),
        };
        ((d.priority, 1), given)
    });
    let outlined = compiled.kept.iter().filter_map(|k| {
        let d = k.degraded?;
        let given = NotGiven {
            file: name(&k.entry.file),
            why: format!(
                "outline only: {} of its {} lines, cut by the {}",
                k.lines,
                d.from_lines,
                d.rule.describe()
            ),
        };
        Some(((k.entry.priority, 2), given))
    });
    let mut cut: Vec<((Priority, u8), NotGiven)> = dropped.chain(indexed).chain(outlined).collect();
    // Stable: each rule's own order within a priority and a rung.
    cut.sort_by_key(|(rank, _)| *rank);
    compiled
        .excluded
        .iter()
        .map(|e| NotGiven {
            file: name(&e.file),
            why: format!("excluded: {}", e.reason),
        })
        .chain(cut.into_iter().map(|(_, given)| given))
        .collect()
}

impl<'a> Job<'a> {
    /// The render of `compiled`, compiled with `s` in `ws`.
    #[must_use]
    pub fn new(
        ws: &'a Workspace,
        s: &'a CompileSettings,
        compiled: &'a Compiled,
        lang: Lang,
        caps: ByteCaps,
    ) -> Job<'a> {
        let (owned, readonly) = scopes(s);
        Job {
            ws,
            role: &compiled.role,
            role_name: &s.role,
            change: &compiled.change,
            manifest_path: &compiled.manifest_path,
            kept: &compiled.kept,
            status: compiled.status,
            task: s.task.as_ref().map(|(_, t)| t),
            owned,
            readonly,
            lang,
            caps,
            changed_truth: &compiled.changed_truth,
            max_file_size: s.max_file_size,
            not_given: not_given(compiled),
            held: compiled.held.clone(),
        }
    }
}

/// Renders template `name` into a string (for JSON answers and the hooks).
pub fn render_string(job: &Job<'_>, name: &str) -> Result<String> {
    let mut buf = Vec::new();
    render_to(job, name, &mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Warnings for a READY compile whose manifest on disk is missing or differs (the prompt
/// names that file, so the sub-agent would read something else); `again` says what writes
/// it (``run `curate …` `` with this render's options, or, to an MCP client, the tool to call).
#[must_use]
pub fn manifest_warnings(ws: &Workspace, compiled: &Compiled, again: &str) -> Vec<String> {
    if compiled.status != Status::Ready {
        return Vec::new();
    }
    let on_disk =
        crate::trust::admit::read_repo_file(&ws.root, &ws.root.join(&compiled.manifest_path))
            .ok()
            .flatten();
    match on_disk {
        None => vec![format!(
            "the instruction names {}, which does not exist: {again} first",
            compiled.manifest_path
        )],
        Some(b) if Some(b.as_slice()) != compiled.manifest.as_deref().map(str::as_bytes) => {
            vec![format!(
                "{} differs from this compile: {again} to update it",
                compiled.manifest_path
            )]
        }
        Some(_) => Vec::new(),
    }
}

/// The preview answer `{status, prompt, report, warnings}` (`prompt` null unless READY).
#[must_use]
pub fn preview_json(compiled: &Compiled, prompt: Option<&str>, warnings: &[String]) -> Value {
    json!({
        "status": compiled.status.name(),
        "prompt": prompt,
        "report": crate::report::json(compiled, false, false),
        "warnings": warnings,
    })
}

/// The excerpts of a render read ahead of it, from the moment a compile has decided what it
/// keeps ([`compile::compile_then`]), while the rest of the compile and the render's context
/// are made: for [`render_to_with`].
pub struct ReadAhead {
    excerpt: std::sync::Arc<Excerpt>,
}

impl ReadAhead {
    /// Starts reading the excerpts of `kept` (what a compile of `root` keeps, `held` the
    /// bytes it holds), as a render with these caps shows them.
    pub fn start(
        root: &Path,
        kept: &[Kept],
        held: &std::sync::Arc<Held>,
        max_file_size: u64,
        caps: ByteCaps,
    ) -> Result<ReadAhead> {
        let from = Source {
            root,
            kept,
            held,
            max_file_size,
            caps,
        };
        let excerpt = Excerpt::new(&from, crate::trust::admit::rules()?);
        excerpt.start_producers();
        Ok(ReadAhead {
            excerpt: std::sync::Arc::new(excerpt),
        })
    }

    /// Made for these entries, in this order, with these caps.
    fn serves(&self, job: &Job<'_>) -> bool {
        let shared = &self.excerpt.shared;
        shared.root == job.ws.root
            && shared.max_file_size == job.max_file_size
            && self.excerpt.caps == job.caps
            && shared.order.len() == job.kept.len()
            && shared.order.iter().zip(job.kept).all(|(w, k)| {
                w.file == k.entry.file && w.sha256 == k.sha256 && w.sections == k.entry.sections
            })
    }
}

/// A template named by its path (`a/b`, `x.tera`), not by its name.
fn is_template_path(name: &str) -> bool {
    name.contains('/')
        || Path::new(name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("tera"))
}

/// A template to render, read once: the one at a path, or found by name ([`lookup`]).
pub struct Template(Found);

impl Template {
    /// The template `name` (a name or a path) names.
    pub fn resolve(ws: &Workspace, name: &str, lang: Lang) -> Result<Template> {
        if is_template_path(name) {
            let path = ws.arg_path(Path::new(name));
            let bytes = crate::util::read::read_capped(&path, crate::util::read::INPUT_CAP)?;
            let text = String::from_utf8(bytes).map_err(|_| Error::Invalid {
                path: path.clone(),
                message: "the template is not UTF-8".to_owned(),
            })?;
            return Ok(Template(Found {
                shown: name.to_owned(),
                text: text.into(),
                embedded: None,
            }));
        }
        match lookup(&ws.root, name, lang)? {
            Some(found) => Ok(Template(found)),
            None => Err(Error::Usage(format!(
                "unknown template {name:?}: use sticky, bundle, handoff or a path"
            ))),
        }
    }

    /// Whether it calls `excerpt`, and so reads files' text: a render then reads them
    /// ahead.
    #[must_use]
    pub fn names_excerpt(&self) -> bool {
        self.0.text.contains("excerpt")
    }
}

/// Renders template `name` (a name or a path) into `out`.
pub fn render_to(job: &Job<'_>, name: &str, out: &mut dyn Write) -> Result<()> {
    let template = Template::resolve(job.ws, name, job.lang)?;
    render_to_with(job, &template, out, None)
}

/// Renders `template` into `out`, taking the excerpts from `ahead` when it was started for
/// this job's entries (else reading them during the render).
pub fn render_to_with(
    job: &Job<'_>,
    template: &Template,
    out: &mut dyn Write,
    ahead: Option<ReadAhead>,
) -> Result<()> {
    let mut tera = tera::Tera::default();
    tera.autoescape_on(vec![]);
    let Template(found) = template;
    let main_name = found.shown.as_str();
    let main_text = &found.text;
    add_found(&mut tera, main_name, found)?;
    let mut sources: Vec<(String, String)> = vec![(main_name.to_owned(), main_text.to_string())];
    // `sticky` is available to every template by that name (the bundle includes it).
    if let Some(found) = lookup(&job.ws.root, "sticky", job.lang)? {
        add_found(&mut tera, "sticky", &found)?;
        sources.push(("sticky".to_owned(), found.text.to_string()));
    }
    refuse_include_cycle(&sources)?;
    // The environment may hold secrets, and nothing the template prints from it would pass
    // the scan of the context: tera's `get_env` is not offered.
    tera.register_function("get_env", NoEnv);
    let rules = crate::trust::admit::rules()?;
    let excerpt = match ahead.filter(|a| a.serves(job)) {
        Some(ahead) => ahead.excerpt,
        None => {
            let from = Source {
                root: &job.ws.root,
                kept: job.kept,
                held: &job.held,
                max_file_size: job.max_file_size,
                caps: job.caps,
            };
            let excerpt = Excerpt::new(&from, rules);
            if template.names_excerpt() {
                // Read ahead while the context is made and checked.
                excerpt.start_producers();
            }
            std::sync::Arc::new(excerpt)
        }
    };
    let views: Vec<EntryView> = job
        .kept
        .iter()
        .map(|k| EntryView {
            file: &k.entry.file,
            reason: shown_reason(&k.entry.reason),
            sections: &k.entry.sections,
            priority: k.entry.priority,
            kind: shown_reason(&k.entry.kind),
            lines: k.lines,
            tokens: k.tokens,
        })
        .collect();
    let mut ctx = tera::Context::new();
    // The role's name as the caller gave it (a `[roles]` alias stays an alias): the name
    // the manifest was written under, and the one a plugin reading the prompt looks for.
    ctx.insert("role", job.role_name);
    ctx.insert("change", job.change);
    ctx.insert("manifest_path", job.manifest_path);
    ctx.insert("lang", job.lang.code());
    ctx.insert("owned", &job.owned);
    ctx.insert("readonly", &job.readonly);
    let sub =
        |v: &[String]| -> Vec<String> { v.iter().map(|s| s.replace("<id>", job.change)).collect() };
    ctx.insert(
        "role_scopes",
        &json!({
            "read_scope": sub(&job.role.read_scope),
            "write_scope": sub(&job.role.write_scope),
            "artifact_targets": sub(&job.role.artifact_targets),
        }),
    );
    if let Some(task) = job.task {
        ctx.insert("task", task);
        ctx.insert("envelope", &envelope(task));
    }
    ctx.insert("entries", &views);
    drop(views);
    ctx.insert(
        "totals",
        &json!({
            "files": job.kept.len(),
            "lines": job.kept.iter().map(|k| k.lines).sum::<u64>(),
            "tokens": job.kept.iter().map(|k| k.tokens).sum::<u64>(),
        }),
    );
    ctx.insert("status", job.status.name());
    ctx.insert("changed_truth", job.changed_truth);
    let shown = job.not_given.len().min(NOT_GIVEN_SHOWN);
    ctx.insert("not_given", &job.not_given[..shown]);
    ctx.insert("not_given_more", &(job.not_given.len() - shown));
    let workflow = job.ws.workflow();
    let located = crate::workflow::Located {
        changes_root: job.ws.changes_root.clone(),
        folder: job.change.to_owned(),
    };
    ctx.insert(
        "workflow",
        &json!({
            "name": workflow.name(),
            "describes": workflow.describes(job.lang),
            "values": workflow.template_values(&job.ws.root, &located),
        }),
    );
    let ctx = refuse_secrets(rules, main_name, main_text, ctx)?;
    tera.register_function("excerpt_text", ExcerptText(excerpt.clone()));
    tera.register_function("excerpt", ExcerptFn(excerpt));
    tera.render_to(main_name, &ctx, out)
        .map_err(|source| Error::Template {
            line: undefined_variable_line(&source, main_text),
            name: main_name.to_owned(),
            source,
        })
}

/// The last scan of what curate adds to a prompt (SPEC: every byte that leaves): the
/// template's own text and every variable it is given (reasons, the task's fields, the
/// workflow's values, what was not given). The files' excerpts were admitted, content rules
/// included, when they were read. A hit refuses the whole output, naming the template and
/// the variable or line, and the rule, never the value. The context is handed back as it
/// came (moved through JSON, not copied: a bulk bundle's entries are megabytes).
fn refuse_secrets(
    rules: &ContentRules,
    template: &str,
    text: &str,
    ctx: tera::Context,
) -> Result<tera::Context> {
    let refuse = |what: String, rule: &str| {
        Err(Error::Failed(format!(
            "render: {what} holds a secret ({rule}); the {template:?} output is refused, nothing written"
        )))
    };
    if let Some(hit) = rules.scan(text.as_bytes()) {
        return refuse(format!("line {} of the template", hit.line), hit.rule);
    }
    let vars = ctx.into_json();
    if let Value::Object(vars) = &vars {
        for (name, value) in vars {
            // The text as a template shows it: each string as it is, one a line.
            let shown = crate::trust::secrets::json_text(value);
            if let Some(hit) = rules.scan(shown.as_bytes()) {
                return refuse(format!("the variable `{name}`"), hit.rule);
            }
        }
    }
    tera::Context::from_value(vars).map_err(|e| Error::Failed(format!("render: {e}")))
}

/// tera names an undefined variable but not its line: find the first tag that uses it.
fn undefined_variable_line(e: &tera::Error, text: &str) -> Option<usize> {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(s) = source {
        let message = s.to_string();
        if let Some(rest) = message.strip_prefix("Variable `")
            && let Some((name, _)) = rest.split_once("` not found")
        {
            let root = name.split(['.', '[']).next().unwrap_or(name);
            return text
                .lines()
                .position(|line| {
                    line.split("{{")
                        .skip(1)
                        .chain(line.split("{%").skip(1))
                        .any(|tag| {
                            tag.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                                .any(|word| word == root)
                        })
                })
                .map(|i| i + 1);
        }
        source = s.source();
    }
    None
}

/// Tera's `get_env`, refused.
struct NoEnv;

impl tera::Function for NoEnv {
    fn call(&self, _: &HashMap<String, serde_json::Value>) -> tera::Result<serde_json::Value> {
        Err(tera::Error::msg(
            "get_env is not available in curate's templates: the environment may hold secrets, and what a template prints goes to a sub-agent",
        ))
    }
}

/// The templates `text` includes by name (`{% include "x" %}`, `{% include ["a", "b"] %}`).
fn includes(text: &str) -> Vec<String> {
    static INCLUDE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"\{%-?\s*include\s+(\[[^\]]*\]|"[^"]*"|'[^']*')"#)
            .expect("a valid regex")
    });
    static NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#""([^"]*)"|'([^']*)'"#).expect("a valid regex")
    });
    INCLUDE
        .captures_iter(text)
        .flat_map(|c| {
            NAME.captures_iter(c.get(1).map_or("", |m| m.as_str()))
                .filter_map(|n| n.get(1).or_else(|| n.get(2)).map(|m| m.as_str().to_owned()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A template that includes itself, directly or through another, would recurse until the
/// stack overflows (tera has no guard): an error naming the loop.
fn refuse_include_cycle(sources: &[(String, String)]) -> Result<()> {
    let edges: HashMap<&str, Vec<String>> = sources
        .iter()
        .map(|(name, text)| (name.as_str(), includes(text)))
        .collect();
    for (start, _) in sources {
        // Depth first from `start`, along the templates there are.
        let mut path = vec![start.clone()];
        let mut stack = vec![(start.as_str(), 0usize)];
        while let Some((at, i)) = stack.pop() {
            let next = edges.get(at).and_then(|e| e.get(i));
            let Some(next) = next else {
                path.pop();
                continue;
            };
            stack.push((at, i + 1));
            if next == start {
                path.push(next.clone());
                return Err(Error::Failed(format!(
                    "template {}: {} (a template may not include itself: it would never end)",
                    quoted(start),
                    path.join(" includes ")
                )));
            }
            if let Some((name, _)) = sources.iter().find(|(n, _)| n == next)
                && !path.contains(name)
            {
                path.push(name.clone());
                stack.push((name.as_str(), 0));
            }
        }
    }
    Ok(())
}

fn add(tera: &mut tera::Tera, name: &str, text: &str) -> Result<()> {
    tera.add_raw_template(name, text)
        .map_err(|source| Error::Template {
            name: name.to_owned(),
            line: None,
            source,
        })
}

/// The WorkerHandoff envelope of a task (seed 000).
#[must_use]
pub fn envelope(task: &Task) -> Value {
    let your_role = if task.your_role.is_empty() {
        task.title.clone()
    } else {
        task.your_role.clone()
    };
    json!({
        "contract": {
            "task_id": task.task_id,
            "files_owned": task.files_owned,
            "files_readonly": task.files_readonly,
            "dependencies_completed": task.dependencies_completed,
            "success_criteria": task.success_criteria,
        },
        "context": {
            "epic_summary": task.epic_summary,
            "your_role": your_role,
            "what_others_did": task.what_others_did,
            "what_comes_next": task.what_comes_next,
        },
        "escalation": {
            "blocked_contact": task.blocked_contact,
            "scope_change_protocol": task.scope_change_protocol,
        },
    })
}

/// The excerpts behind the `excerpt(file=…)` and `excerpt_text(file=…)` template functions.
/// Producer threads (one a core; started by [`ReadAhead`] inside the compile, else before the
/// render when the template names `excerpt`, else at the first call) each take the next
/// entry in manifest order, read, check and format it, a bounded window ahead of the
/// template, so the files are read while the template renders on its own thread. An entry
/// the template asks for before any producer took it is made on the template's thread.
struct Excerpt {
    shared: std::sync::Arc<Shared>,
    producers: Mutex<Vec<std::thread::JoinHandle<()>>>,
    caps: ByteCaps,
    used: Mutex<u64>,
    /// The text of the last `excerpt(file=…, text=false)` that was inlined, by file, for
    /// `excerpt_text(file=…)`: handed over, not copied (tera copies a `set` variable's
    /// field at every use: a bulk bundle's whole text once more).
    waiting: Mutex<Option<(String, String)>>,
}

/// The `excerpt(file=…)` template function (see [`Excerpt`]); with `text=false` the text is
/// left waiting for `excerpt_text`.
struct ExcerptFn(std::sync::Arc<Excerpt>);

/// The `excerpt_text(file=…)` template function: the text of one entry's excerpt, the one
/// `excerpt(file=…, text=false)` left waiting, else made as `excerpt(file=…)` makes it
/// (counted against the total byte cap; `""` when not inlined).
struct ExcerptText(std::sync::Arc<Excerpt>);

/// What the template's thread and the producers share.
struct Shared {
    root: std::path::PathBuf,
    held: std::sync::Arc<Held>,
    rules: &'static ContentRules,
    max_file_size: u64,
    per_file: u64,
    /// The bytes of excerpts made ahead and not taken, at most ([`WINDOW_BYTES`]).
    window_bytes: u64,
    /// The entries in manifest order: the order a template most likely asks for them in.
    order: Vec<Wanted>,
    /// An entry's place in `order`, by file.
    place: HashMap<String, usize>,
    ahead: Mutex<Ahead>,
    /// Signalled when an excerpt is ready, and at the end (the template's thread waits).
    ready: std::sync::Condvar,
    /// Signalled when an excerpt is taken, and at the end (the producers wait for room).
    room: std::sync::Condvar,
}

/// What an excerpt needs of an entry.
struct Wanted {
    file: String,
    sections: Sections,
    /// The sha256 the content was admitted with (empty: admit it now).
    sha256: String,
    lines: u64,
}

/// Where each entry's excerpt stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    NotStarted,
    Preparing,
    Ready,
    /// Given to the template (a second call for it is prepared alone).
    Taken,
}

/// The excerpts prepared ahead of the template's calls.
struct Ahead {
    stage: Vec<Stage>,
    ready: HashMap<usize, Prepared>,
    /// The excerpts the producers are making or made and the template has not taken yet,
    /// and the bytes of those made (the window's memory).
    window_files: usize,
    window_bytes: u64,
    /// Where the producers look for the next entry.
    next: usize,
    stop: bool,
    /// Threads waiting on `ready` (the template's) and on `room` (producers): a condition
    /// is signalled only when someone waits on it (each signal is a system call, and a warm
    /// bulk bundle makes 10,000 excerpts).
    waiting_ready: usize,
    waiting_room: usize,
}

/// One entry's excerpt made ahead of its call: the selected size and the text,
/// or why the file may not be read.
type Prepared = std::result::Result<(u64, String), String>;

/// The bytes an excerpt made ahead holds until it is taken.
fn made_bytes(prepared: &Prepared) -> u64 {
    prepared.as_ref().map_or(0, |(_, text)| text.len() as u64)
}

/// Entries the template's thread prepares together when it asks for one never started and
/// no producer runs: at most this many files, read, checked and formatted in parallel…
const BATCH_FILES: usize = 16;
/// … and this many lines between them (the batch's memory).
const BATCH_LINES: u64 = 40_000;
/// The producers take an entry while fewer than this many excerpts are being made or ready
/// and not taken, and those ready hold fewer bytes than the compile's hold had room for when
/// they started (they share its budget: a cold bulk bundle's held bytes leave the floor
/// below, a warm one, nothing held, runs well ahead of the template; the room held bytes
/// leave as they are taken is not given to the window, as the memory they free is seldom
/// the one the producers' threads allocate from), …
const WINDOW_FILES: usize = 4096;
/// … or than this floor, whatever is held.
const WINDOW_BYTES: u64 = 2 << 20;

/// Where the excerpts of a render come from.
struct Source<'a> {
    root: &'a Path,
    kept: &'a [Kept],
    held: &'a std::sync::Arc<Held>,
    /// The size cap of a file read (`--max-file-size`).
    max_file_size: u64,
    caps: ByteCaps,
}

impl Excerpt {
    fn new(from: &Source<'_>, rules: &'static ContentRules) -> Excerpt {
        let order: Vec<Wanted> = from
            .kept
            .iter()
            .map(|k| Wanted {
                file: k.entry.file.clone(),
                sections: k.entry.sections.clone(),
                sha256: k.sha256.clone(),
                lines: k.lines,
            })
            .collect();
        let shared = Shared {
            root: from.root.to_owned(),
            held: from.held.clone(),
            rules,
            max_file_size: from.max_file_size,
            per_file: from.caps.per_file,
            window_bytes: from.held.room().max(WINDOW_BYTES),
            place: order
                .iter()
                .enumerate()
                .map(|(i, wanted)| (wanted.file.clone(), i))
                .collect(),
            ahead: Mutex::new(Ahead {
                stage: vec![Stage::NotStarted; order.len()],
                ready: HashMap::new(),
                window_files: 0,
                window_bytes: 0,
                next: 0,
                stop: false,
                waiting_ready: 0,
                waiting_room: 0,
            }),
            order,
            ready: std::sync::Condvar::new(),
            room: std::sync::Condvar::new(),
        };
        Excerpt {
            shared: std::sync::Arc::new(shared),
            producers: Mutex::new(Vec::new()),
            caps: from.caps,
            used: Mutex::new(0),
            waiting: Mutex::new(None),
        }
    }

    /// The excerpt of `file`: made ahead if it was (or as soon as the producer making it is
    /// done), else made now. The first call starts the producers.
    fn take(&self, file: &str) -> Prepared {
        let shared = &self.shared;
        let Some((from, wanted)) = shared
            .place
            .get(file)
            .and_then(|&from| Some((from, shared.order.get(from)?)))
        else {
            return Err(format!(
                "excerpt(): {} is not an entry of the manifest",
                quoted(file)
            ));
        };
        let mut ahead = shared.lock();
        loop {
            match ahead.stage.get(from).copied().unwrap_or(Stage::Taken) {
                Stage::Ready => {
                    let prepared = ahead
                        .ready
                        .remove(&from)
                        .unwrap_or_else(|| Err(format!("excerpt(): {} was lost", quoted(file))));
                    ahead.window_files -= 1;
                    ahead.window_bytes -= made_bytes(&prepared);
                    ahead.stage[from] = Stage::Taken;
                    if ahead.waiting_room > 0 {
                        shared.room.notify_all();
                    }
                    return prepared;
                }
                Stage::Preparing => {
                    ahead.waiting_ready += 1;
                    ahead = shared
                        .ready
                        .wait(ahead)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    ahead.waiting_ready -= 1;
                }
                Stage::Taken => {
                    drop(ahead);
                    return shared.prepare(wanted);
                }
                Stage::NotStarted if self.has_producers() => {
                    ahead.stage[from] = Stage::Taken;
                    drop(ahead);
                    return shared.prepare(wanted);
                }
                Stage::NotStarted => {
                    let batch = shared.batch(&mut ahead, from, (BATCH_FILES, BATCH_LINES));
                    drop(ahead);
                    let prepared = shared.prepare_all(&batch);
                    let mine = shared.finish(prepared, Some(from));
                    self.start_producers();
                    return mine.unwrap_or_else(|| shared.prepare(wanted));
                }
            }
        }
    }

    fn has_producers(&self) -> bool {
        !self
            .producers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_empty()
    }

    /// Starts the producers once, one a thread of the pool, unless every entry fits in one
    /// batch of the template's.
    fn start_producers(&self) {
        let mut producers = self
            .producers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // On one of the pool's own threads no producer: the template's waits for one would
        // hold a thread of the pool (with `-j 1`, the only one) for nothing.
        if !producers.is_empty()
            || self.shared.order.len() <= BATCH_FILES
            || rayon::current_thread_index().is_some()
        {
            return;
        }
        for _ in 0..rayon::current_num_threads().max(1) {
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("curate-excerpts".to_owned())
                .spawn(move || shared.produce());
            if let Ok(handle) = spawned {
                producers.push(handle);
            }
        }
    }
}

impl Drop for Excerpt {
    /// Stops the producers and waits for them: nothing reads on after the render.
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.room.notify_all();
        let producers = std::mem::take(
            self.producers
                .get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for producer in producers {
            let _ = producer.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Ahead> {
        self.ahead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Read, check and format one entry: the bytes admitted when it was measured
    /// (same hash), or a full admission.
    fn prepare(&self, wanted: &Wanted) -> Prepared {
        let file = &wanted.file;
        let path = crate::model::paths::RepoPath::new(file)
            .map_err(|e| format!("{} {}", quoted(file), e.problem()))?;
        let bytes = if wanted.sha256.is_empty() {
            admit(&self.root, &path, self.max_file_size, self.rules).map(std::sync::Arc::new)
        } else {
            self.held
                .take(&self.root, &path, self.max_file_size, &wanted.sha256)
        }
        .map_err(|r| format!("{} may not be read: {r}", quoted(file)))?;
        let size = measure::selected(&bytes, &wanted.sections).len() as u64;
        Ok((
            size,
            excerpt_text(file, &bytes, &wanted.sections, self.per_file),
        ))
    }

    /// The places of a batch from `from` on (never started ones, `from` first when it is
    /// one; at most `files` of them and `lines` between them), marked as being prepared.
    fn batch(&self, ahead: &mut Ahead, from: usize, (files, lines): (usize, u64)) -> Vec<usize> {
        let mut sum = 0;
        let batch: Vec<usize> = (from..self.order.len())
            .filter(|&place| ahead.stage[place] == Stage::NotStarted)
            .take(files)
            .take_while(|&place| {
                sum += self.order[place].lines;
                place == from || sum <= lines
            })
            .collect();
        for &place in &batch {
            ahead.stage[place] = Stage::Preparing;
        }
        batch
    }

    fn prepare_all(&self, batch: &[usize]) -> Vec<(usize, Prepared)> {
        batch
            .par_iter()
            .map(|&place| (place, self.prepare(&self.order[place])))
            .collect()
    }

    /// Makes a batch's excerpts ready, but for the one at `mine`, which is returned; the
    /// others count in the producers' window until the template takes them.
    fn finish(&self, prepared: Vec<(usize, Prepared)>, mine: Option<usize>) -> Option<Prepared> {
        let mut ahead = self.lock();
        let mut kept = None;
        for (place, excerpt) in prepared {
            if Some(place) == mine {
                ahead.stage[place] = Stage::Taken;
                kept = Some(excerpt);
            } else {
                ahead.stage[place] = Stage::Ready;
                ahead.window_files += 1;
                ahead.window_bytes += made_bytes(&excerpt);
                ahead.ready.insert(place, excerpt);
            }
        }
        self.ready.notify_all();
        kept
    }

    /// A producer: the next entry never started, in manifest order, while the window has
    /// room; each excerpt is ready as soon as it is made.
    fn produce(&self) {
        loop {
            let mut ahead = self.lock();
            let place = loop {
                if ahead.stop {
                    return;
                }
                while ahead
                    .stage
                    .get(ahead.next)
                    .is_some_and(|s| *s != Stage::NotStarted)
                {
                    ahead.next += 1;
                }
                if ahead.next >= self.order.len() {
                    return;
                }
                if ahead.window_files < WINDOW_FILES && ahead.window_bytes < self.window_bytes {
                    let place = ahead.next;
                    ahead.stage[place] = Stage::Preparing;
                    ahead.window_files += 1;
                    break place;
                }
                ahead.waiting_room += 1;
                ahead = self
                    .room
                    .wait(ahead)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                ahead.waiting_room -= 1;
            };
            drop(ahead);
            // Were `prepare` to panic, the place must not stay `Preparing` (the template's
            // thread would wait on it for ever).
            let guard = Unfinished {
                shared: self,
                place,
            };
            let prepared = self.prepare(&self.order[place]);
            std::mem::forget(guard);
            let mut ahead = self.lock();
            ahead.stage[place] = Stage::Ready;
            ahead.window_bytes += made_bytes(&prepared);
            ahead.ready.insert(place, prepared);
            let wake = ahead.waiting_ready > 0;
            drop(ahead);
            if wake {
                self.ready.notify_all();
            }
        }
    }
}

/// An entry while a producer prepares it: on unwinding, it is given back and every producer
/// stops.
struct Unfinished<'a> {
    shared: &'a Shared,
    place: usize,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        let mut ahead = self.shared.lock();
        ahead.stage[self.place] = Stage::NotStarted;
        ahead.window_files -= 1;
        ahead.stop = true;
        self.shared.ready.notify_all();
        self.shared.room.notify_all();
    }
}

impl Excerpt {
    /// One entry's excerpt as the template gets it: whether it is inlined (the total byte
    /// cap), its selected size and its text (`""` when not inlined).
    fn inlined(&self, file: &str) -> tera::Result<(bool, u64, String)> {
        let (size, text) = self.take(file).map_err(tera::Error::msg)?;
        // What this entry adds to the total: its selected bytes, or its cut when capped.
        let shown = if self.caps.per_file > 0 {
            size.min(self.caps.per_file)
        } else {
            size
        };
        let mut used = self
            .used
            .lock()
            .map_err(|_| tera::Error::msg("excerpt(): poisoned lock"))?;
        if self.caps.total > 0 && *used + shown > self.caps.total {
            return Ok((false, size, String::new()));
        }
        *used += shown;
        Ok((true, size, text))
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Option<(String, String)>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The `file=` argument of `function`.
fn file_arg<'a>(args: &'a HashMap<String, Value>, function: &str) -> tera::Result<&'a str> {
    args.get("file")
        .and_then(Value::as_str)
        .ok_or_else(|| tera::Error::msg(format!("{function}() needs file=<an entry's file>")))
}

impl tera::Function for ExcerptFn {
    fn call(&self, args: &HashMap<String, Value>) -> tera::Result<Value> {
        let file = file_arg(args, "excerpt")?;
        let with_text = match args.get("text") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(tera::Error::msg("excerpt(): text= takes true or false")),
        };
        let (inlined, size, text) = self.0.inlined(file)?;
        if with_text {
            return Ok(json!({"inlined": inlined, "size": size, "text": text}));
        }
        *self.0.waiting() = inlined.then(|| (file.to_owned(), text));
        Ok(json!({"inlined": inlined, "size": size}))
    }

    fn is_safe(&self) -> bool {
        true
    }
}

impl tera::Function for ExcerptText {
    fn call(&self, args: &HashMap<String, Value>) -> tera::Result<Value> {
        let file = file_arg(args, "excerpt_text")?;
        let mut waiting = self.0.waiting();
        if let Some((_, text)) = waiting.take_if(|(waited, _)| waited == file) {
            return Ok(Value::String(text));
        }
        drop(waiting);
        Ok(Value::String(self.0.inlined(file)?.2))
    }

    fn is_safe(&self) -> bool {
        true
    }
}

/// The owned and read-only globs of a compile: flags, files-from, task file, as a prompt
/// shows them (a control character escaped: a glob starts no line of the prompt).
pub fn scopes(s: &CompileSettings) -> (Vec<String>, Vec<String>) {
    let mut owned = s.owns.clone();
    owned.extend(s.files_from.iter().cloned());
    let mut readonly = s.reads.clone();
    if let Some((_, t)) = &s.task {
        owned.extend(t.files_owned.iter().cloned());
        readonly.extend(t.files_readonly.iter().cloned());
    }
    let sub = |v: Vec<String>| {
        v.into_iter()
            .map(|g| crate::model::one_line(&g.replace("<id>", &s.change)))
            .collect()
    };
    (sub(owned), sub(readonly))
}

/// A [`Compiled`] from an existing manifest, after the containment and secret checks.
pub fn from_manifest(ws: &Workspace, s: &CompileSettings, path: &Path) -> Result<Compiled> {
    // A file whose name marks a secret (`.env.production`, `creds.key`) is never read, as
    // `check` never reads it: its text would be the prompt's reasons. Judged by its
    // repository path (the target's, past links), or by its name outside the repository.
    let judged = match path.canonicalize() {
        Ok(real) => crate::model::paths::relative_to(&ws.root, &real).unwrap_or_else(|| {
            real.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        }),
        Err(_) => String::new(),
    };
    if let Err(refusal) = crate::trust::admit::judge_name(&judged) {
        return Err(Error::Invalid {
            path: path.to_owned(),
            message: format!("never read: {refusal}"),
        });
    }
    let bytes = crate::util::read::read_capped(path, crate::util::read::INPUT_CAP)?;
    let text = String::from_utf8_lossy(&bytes);
    let parsed = crate::stages::manifest::parse(&text);
    let shown = ws.shown(path);
    if let Some((line, column, message)) = parsed.errors.first() {
        return Err(Error::Syntax {
            path: shown.into(),
            pos: crate::model::Pos {
                line: *line,
                column: *column,
            },
            message: message.clone(),
        });
    }
    let contracts = ws.load_contracts()?;
    let role = ws.contract_role_of(&contracts, &s.contract_role)?.clone();
    let rules = crate::trust::admit::rules()?;
    let cache = compile::token_cache(ws);
    let verdicts = compile::verdict_cache(ws, parsed.entries.len());
    let known = compile::known_files(ws, parsed.entries.len());
    let fast = crate::stages::tokens::Fast(ws.encoding);
    let counter = crate::stages::tokens::Cached::new(&cache, &fast);
    let mut kept = Vec::new();
    let mut excluded = Vec::new();
    let mut withheld = crate::compile::Withheld::default();
    let held = crate::trust::admit::Held::spooling(
        crate::trust::admit::HOLD_BYTES,
        crate::trust::spool::SPOOL_BYTES,
    );
    for (line, value) in &parsed.entries {
        let entry: Entry = lenient_entry(value).map_err(|message| Error::Syntax {
            path: shown.clone().into(),
            pos: crate::model::Pos {
                line: *line,
                column: 1,
            },
            message,
        })?;
        if !withheld.keeps(rules, &entry.file) {
            continue;
        }
        let file = crate::model::paths::RepoPath::new(&entry.file).map_err(|e| Error::Escape {
            origin: format!("{shown}:{line}"),
            path: entry.file.clone(),
            problem: e.problem(),
        })?;
        let reading = measure::Reading {
            root: &ws.root,
            limits: measure::Limits {
                max_file_size: s.max_file_size,
                cut_bytes: s.caps.file_bytes,
            },
            rules,
            verdicts: &verdicts,
            counter: &counter,
            count_all: true,
            held: &held,
            known: &known,
        };
        let fates = measure::read_all(
            reading,
            &[(file.clone(), entry.sections.clone())],
            &indicatif::ProgressBar::hidden(),
        );
        match fates.into_iter().next() {
            Some(measure::Fate::Measured(m)) => kept.push(Kept {
                entry: Entry {
                    file: file.to_string(),
                    sections: m.sections.clone(),
                    ..entry
                },
                lines: m.lines,
                tokens: m.tokens.unwrap_or(0),
                bytes: None,
                anchors: m.anchors,
                degraded: None,
                cut_at: None,
                sha256: m.sha256,
            }),
            Some(measure::Fate::Excluded(reason)) => {
                excluded.push(crate::model::Exclusion::new(file.as_str(), &reason));
            }
            None => {}
        }
    }
    let _ = cache.save();
    let _ = verdicts.save();
    let _ = known.save();
    kept.sort_by_key(|k| k.entry.priority);
    // What the compile named only (its lock says so), and the manifest, edited or not, does
    // not hold: still not given, so still in the prompt's "Not given" list.
    let indexed: Vec<compile::Dropped> = ws
        .relative(path)
        .and_then(|rel| crate::stages::manifest::read_lock(&ws.root, &rel))
        .map(|lock| {
            lock.indexed
                .into_iter()
                .filter(|n| !kept.iter().any(|k| k.entry.file == n.file))
                .map(|n| compile::Dropped {
                    by: n.rule.replace('_', " "),
                    file: n.file,
                    priority: n.priority.unwrap_or(crate::model::Priority::Low),
                    kind: String::new(),
                    lines: Some(n.lines),
                    tokens: None,
                    rule: n.rule,
                })
                .collect()
        })
        .unwrap_or_default();
    let status = if kept.is_empty() {
        Status::Blocked
    } else {
        Status::Ready
    };
    Ok(Compiled {
        status,
        role,
        change: s.change.clone(),
        contracts_source: contracts.source.describe(),
        manifest_path: shown,
        kept,
        dropped: vec![],
        indexed,
        notes: excluded
            .iter()
            .map(|e| {
                crate::model::Note::warning(format!("excluded {}: {}", quoted(&e.file), e.reason))
            })
            .chain(withheld.notes())
            .collect(),
        excluded,
        curation: parsed.curation,
        caps: s.caps,
        overrun: None,
        candidates: vec![],
        manifest: None,
        lock: None,
        overrides_file: None,
        changed_truth: Vec::new(),
        role_name: s.role.clone(),
        workflow: crate::compile::Workflowed::of(ws),
        held: std::sync::Arc::new(held),
    })
}

/// An entry as the aiws plugin reads it: `priority` missing = medium, `kind` missing =
/// `unknown`, `reason` missing = empty. The error says what is wrong with the line.
fn lenient_entry(v: &Value) -> std::result::Result<Entry, String> {
    let file = v
        .get("file")
        .and_then(Value::as_str)
        .ok_or("an entry needs a \"file\" string")?
        .to_owned();
    let priority = match v.get("priority") {
        None => crate::model::Priority::Medium,
        Some(p) => p
            .as_str()
            .and_then(crate::model::Priority::parse)
            .ok_or_else(|| format!("unknown priority {p}: use high, medium or low"))?,
    };
    let sections = match v.get("sections") {
        None | Some(Value::Null) => Sections::Whole,
        Some(s) => {
            let ranges: Vec<[u64; 2]> = serde_json::from_value(s.clone())
                .map_err(|e| format!("malformed sections: {e}"))?;
            crate::stages::overrides::checked_sections(ranges)
                .map_err(|e| format!("malformed sections: {e}"))?
        }
    };
    let text = |key: &str, default: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or(default)
            .to_owned()
    };
    Ok(Entry {
        file,
        reason: text("reason", ""),
        sections,
        priority,
        kind: text("kind", "unknown"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_label_counted_up_is_the_number_formatted() {
        for (first, last) in [
            (1, 1),
            (1, 9),
            (1, 10),
            (7, 1_234),
            (95, 106),
            (9_990, 100_001),
        ] {
            let width = last.to_string().len();
            let mut number = Numbering::new(first, width);
            for n in first..=last {
                let mut label = String::new();
                number.write(&mut label);
                assert_eq!(label, format!("{n:>width$} |"));
                number.advance();
            }
        }
    }

    #[test]
    fn excerpts_number_lines_mark_gaps_and_widen_fences() {
        let text = b"a\n\nc ```x```\nd\ne\n";
        let out = excerpt_text("x.md", text, &Sections::ranges(vec![[1, 3], [5, 9]]), 0);
        assert_eq!(
            out,
            "````markdown\n1 | a\n2 |\n3 | c ```x```\n...\n5 | e\n````"
        );
    }

    #[test]
    fn width_follows_the_largest_line_number_shown() {
        let text: String = (1..=12).map(|i| format!("l{i}\n")).collect();
        let out = excerpt_text("x.rs", text.as_bytes(), &Sections::ranges(vec![[9, 10]]), 0);
        assert_eq!(out, "```rust\n 9 | l9\n10 | l10\n```");
    }

    #[test]
    fn invalid_utf8_is_replaced_and_crlf_lines_lose_their_cr() {
        let out = excerpt_text("x.txt", b"caf\xe9\r\nok\r\nlast", &Sections::Whole, 0);
        assert_eq!(out, "```text\n1 | caf\u{fffd}\n2 | ok\n3 | last\n```");
        // A backtick after invalid bytes still widens the fence.
        let out = excerpt_text("x.txt", b"\xff ```", &Sections::Whole, 0);
        assert_eq!(out, "````text\n1 | \u{fffd} ```\n````");
    }

    #[test]
    fn the_last_line_number_is_the_measured_line_count() {
        for text in [
            &b""[..],
            b"\n",
            b"a",
            b"a\n",
            b"a\n\nb",
            b"a\r\nb\r\n",
            b"\xff\n\xfe",
        ] {
            let out = excerpt_text("x.txt", text, &Sections::Whole, 0);
            let last = out
                .lines()
                .filter_map(|line| line.split(" |").next()?.trim().parse::<u64>().ok())
                .next_back()
                .unwrap_or(0);
            assert_eq!(last, measure::count_lines(text), "{text:?}: {out}");
        }
    }

    #[test]
    fn an_excerpt_is_allocated_once_at_its_size() {
        // A large file's excerpt is held whole (and a batch of them): no doubling, no growth.
        let text: String = (1..=500).map(|i| format!("line {i}\n\n")).collect();
        for sections in [Sections::Whole, Sections::ranges(vec![[1, 3], [9, 700]])] {
            let out = excerpt_text("x.rs", text.as_bytes(), &sections, 0);
            assert_eq!(out.capacity(), out.len(), "{sections:?}");
        }
        let out = excerpt_text("x.txt", b"``` a\r\nb", &Sections::Whole, 0);
        assert_eq!(out.capacity(), out.len());
    }

    #[test]
    fn a_whole_file_counted_over_its_bytes_is_written_as_its_lines_are() {
        // The whole-file excerpt counts its size over the bytes (empty lines in blocks of
        // 255); a range over every line counts line by line: the same text, at its size.
        let mut seed: u64 = 7;
        for n in 0..300 {
            let len = (n * 37) % 900;
            let text: String = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    ['a', 'b', '\n', '\n', ' ', 'é'][((seed >> 33) % 6) as usize]
                })
                .collect();
            let lines = measure::count_lines(text.as_bytes());
            let whole = excerpt_text("x.md", text.as_bytes(), &Sections::Whole, 0);
            let ranged = if lines == 0 {
                Sections::Ranges(vec![])
            } else {
                Sections::ranges(vec![[1, lines]])
            };
            assert_eq!(
                whole,
                excerpt_text("x.md", text.as_bytes(), &ranged, 0),
                "{text:?}"
            );
            assert_eq!(whole.capacity(), whole.len(), "{text:?}");
        }
    }

    #[test]
    fn producers_held_back_by_a_full_window_give_every_excerpt_in_any_order() {
        // A window of one excerpt: the producers wait for room and the template for
        // excerpts being made, on both conditions, in every order it asks in.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let files: Vec<(String, String)> = (0..40)
            .map(|i| {
                let body: String = (0..200).map(|l| format!("file {i} line {l}\n")).collect();
                (format!("f{i:02}.txt"), body)
            })
            .collect();
        let kept: Vec<Kept> = files
            .iter()
            .map(|(file, body)| {
                std::fs::write(root.join(file), body).unwrap();
                Kept {
                    entry: Entry {
                        file: file.clone(),
                        reason: String::new(),
                        sections: Sections::Whole,
                        priority: crate::model::Priority::High,
                        kind: "k".to_owned(),
                    },
                    lines: 200,
                    tokens: 0,
                    bytes: None,
                    anchors: Vec::new(),
                    degraded: None,
                    cut_at: None,
                    sha256: String::new(),
                }
            })
            .collect();
        let held = std::sync::Arc::new(Held::default());
        let from = Source {
            root: &root,
            kept: &kept,
            held: &held,
            max_file_size: 1 << 20,
            caps: ByteCaps::default(),
        };
        let rules = crate::trust::admit::rules().unwrap();
        let forward: Vec<usize> = (0..40).collect();
        let backward: Vec<usize> = (0..40).rev().collect();
        let apart: Vec<usize> = (0..40).map(|i| (i * 7) % 40).collect();
        for order in [forward, backward, apart] {
            let mut excerpt = Excerpt::new(&from, rules);
            std::sync::Arc::get_mut(&mut excerpt.shared)
                .unwrap()
                .window_bytes = 1;
            excerpt.start_producers();
            let (done, finished) = std::sync::mpsc::channel();
            let files = files.clone();
            let asked = order.clone();
            std::thread::spawn(move || {
                for i in asked {
                    let (file, body) = &files[i];
                    let (_, text) = excerpt.take(file).unwrap();
                    assert_eq!(
                        text,
                        excerpt_text(file, body.as_bytes(), &Sections::Whole, 0)
                    );
                }
                drop(excerpt);
                done.send(()).unwrap();
            });
            // A lost wake-up would hang the render: here it fails the test.
            finished
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("the excerpts in order {order:?} never came"));
        }
    }

    #[test]
    fn a_file_over_its_byte_cap_is_cut_at_a_whole_line() {
        let out = excerpt_text("x.txt", b"aaaa\nbbbb\ncccc\n", &Sections::Whole, 11);
        assert!(
            out.starts_with("```text\n1 | aaaa\n2 | bbbb\n```\n[curate: cut before line 3"),
            "{out}"
        );
    }
}
