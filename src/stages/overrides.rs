//! Layer 2: the delegator's overrides file, `--add` and `--drop`, and the `// curation:`
//! comments carried into the manifest.
//!
//! `parse` reads the overrides text into typed lines (errors name file:line:column);
//! `apply` merges them into the candidates of layers 0–1, in order, then the command line's
//! adds and drops. Pure: the caller checks that named files exist.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::model::Note;
use crate::model::Pos;
use crate::model::{Priority, Range, Sections, quoted};
use crate::stages::expand::{self, Candidate, Origin};

/// One meaningful line of an overrides file (or one `--add` / `--drop`).
#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    /// Update the entry for `file`, or add it at the end.
    Upsert(Upsert),
    /// Remove every entry matching `glob`.
    Drop {
        glob: String,
        why: Option<String>,
        origin: Origin,
    },
}

/// `{"file": …, "reason"?, "sections"?, "priority"?, "kind"?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Upsert {
    pub file: String,
    pub reason: Option<String>,
    /// `Some(Whole)` for an explicit `null`.
    pub sections: Option<Sections>,
    pub priority: Option<Priority>,
    pub kind: Option<String>,
    pub origin: Origin,
}

/// A parsed overrides file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// The `// curation: …` lines, in order, without duplicates (the text after the marker).
    pub curation: Vec<String>,
    pub directives: Vec<Directive>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUpsert {
    file: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default, deserialize_with = "explicit_null")]
    sections: Option<Option<Vec<crate::stages::contract::Section>>>,
    #[serde(default)]
    priority: Option<String>,
    #[serde(default)]
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDrop {
    drop: String,
    #[serde(default)]
    why: Option<String>,
}

fn explicit_null<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> std::result::Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// The prefix of a carried comment.
pub const CURATION: &str = "// curation:";

/// Parses overrides text; `path` (as shown to the user) names it in errors, `recorded` in
/// the notes its lines leave in the manifest. The first problem is the error.
pub fn parse(text: &str, path: &Path, recorded: &str) -> Result<Overrides> {
    let (out, mut problems) = parse_all(text, path, recorded);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems.swap_remove(0))
    }
}

/// Parses overrides text as [`parse`] does, and goes on after a bad line: every line is
/// read on its own (one JSON object a line), so a bad one changes nothing of how the next
/// reads. Returns what the good lines say and every problem, in line order.
pub fn parse_all(text: &str, path: &Path, recorded: &str) -> (Overrides, Vec<Error>) {
    let mut out = Overrides::default();
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        match parse_line(raw, i + 1, path, recorded) {
            Ok(Some(Line::Curation(text))) => {
                if seen.insert(text.clone()) {
                    out.curation.push(text);
                }
            }
            Ok(Some(Line::Directive(d))) => out.directives.push(d),
            Ok(None) => {}
            Err(e) => problems.push(e),
        }
    }
    (out, problems)
}

/// What one line of an overrides file says.
enum Line {
    Curation(String),
    Directive(Directive),
}

/// Line `line_no` (`raw`) of an overrides file: nothing (blank, a plain comment), a
/// curation comment or a directive.
fn parse_line(raw: &str, line_no: usize, path: &Path, recorded: &str) -> Result<Option<Line>> {
    let line = raw.trim();
    if line.is_empty() {
        return Ok(None);
    }
    if let Some(rest) = line.strip_prefix(CURATION) {
        return Ok(Some(Line::Curation(rest.trim().to_owned())));
    }
    if line.starts_with("//") {
        return Ok(None);
    }
    let err = |column: usize, message: String| Error::Syntax {
        path: path.to_owned(),
        pos: Pos {
            line: line_no,
            column,
        },
        message,
    };
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        let lead = raw.len() - raw.trim_start().len();
        err(
            e.column().max(1) + lead,
            format!("invalid JSON: {}", crate::util::jsonpos::json_message(&e)),
        )
    })?;
    if let Some((at, key)) = crate::util::jsonpos::duplicate_key(line) {
        let lead = raw.len() - raw.trim_start().len();
        return Err(err(
            at.column + lead,
            format!(
                "the key {key:?} is written twice; JSON keeps only the last, so the first would be lost without a word: remove one"
            ),
        ));
    }
    let origin = Origin::Override {
        file: recorded.to_owned(),
        shown: path.display().to_string(),
        line: line_no,
    };
    let problem = |message: String| Error::Overrides {
        path: path.to_owned(),
        line: line_no,
        message,
    };
    if value.get("drop").is_some() {
        let d: RawDrop = serde_json::from_value(value).map_err(|e| problem(e.to_string()))?;
        if d.drop.is_empty() {
            return Err(problem("\"drop\" must be a non-empty glob".to_owned()));
        }
        Ok(Some(Line::Directive(Directive::Drop {
            glob: d.drop,
            why: d.why,
            origin,
        })))
    } else if value.get("file").is_some() {
        // A `sections` item no reader takes is named at its column.
        if let Some(i) = unreadable_section(&value) {
            let lead = raw.len() - raw.trim_start().len();
            let column = crate::util::jsonpos::locate(line, &format!("/sections/{i}"))
                .map_or(1, |p| p.column);
            return Err(err(
                column + lead,
                format!(
                    "sections[{i}] is not a section: write a pair of whole line numbers ([25, 50]), a heading (\"## Security\") or {{\"symbol\": \"Name\"}}"
                ),
            ));
        }
        let u: RawUpsert = serde_json::from_value(value).map_err(|e| problem(e.to_string()))?;
        Ok(Some(Line::Directive(Directive::Upsert(
            upsert(u, origin).map_err(problem)?,
        ))))
    } else {
        Err(problem(
            "each line must be an object with \"file\" or \"drop\"".to_owned(),
        ))
    }
}

fn upsert(raw: RawUpsert, origin: Origin) -> std::result::Result<Upsert, String> {
    if raw.file.is_empty() {
        return Err("\"file\" must not be empty".to_owned());
    }
    let priority = match raw.priority {
        None => None,
        Some(p) => Some(
            Priority::parse(&p)
                .ok_or_else(|| format!("unknown priority {p:?}: use high, medium or low"))?,
        ),
    };
    let sections = match raw.sections {
        None => None,
        Some(None) => Some(Sections::Whole),
        Some(Some(items)) => Some(checked_items(items)?),
    };
    if raw.kind.as_deref() == Some("") {
        return Err("\"kind\" must not be empty".to_owned());
    }
    Ok(Upsert {
        file: raw.file,
        reason: raw.reason,
        sections,
        priority,
        kind: raw.kind,
        origin,
    })
}

/// Checks ranges (non-empty list, `start >= 1`, `end >= start`) and normalises them.
pub fn checked_sections(ranges: Vec<Range>) -> std::result::Result<Sections, String> {
    if ranges.is_empty() {
        return Err("\"sections\" must hold at least one [start, end] range (or be null)".into());
    }
    for &[start, end] in &ranges {
        if start == 0 {
            return Err(format!(
                "section [{start}, {end}]: lines are numbered from 1"
            ));
        }
        if end < start {
            return Err(format!("section [{start}, {end}] ends before it starts"));
        }
    }
    Ok(Sections::ranges(ranges))
}

/// An overrides line's `sections`: line pairs (checked as [`checked_sections`]) and
/// Markdown heading anchors (`"## Security"`), resolved when the file is read.
pub fn checked_items(
    items: Vec<crate::stages::contract::Section>,
) -> std::result::Result<Sections, String> {
    use crate::stages::contract::Section;
    let mut ranges = Vec::new();
    let mut anchors = Vec::new();
    for item in items {
        match item {
            Section::Lines(r) => ranges.push(r),
            Section::Heading(h) if crate::stages::anchors::is_anchor(&h) => anchors.push(h),
            Section::Heading(h) => {
                return Err(format!(
                    "section {h:?} is neither a [start, end] pair nor a heading such as \"## Security\""
                ));
            }
            Section::Symbol(s) if crate::stages::anchors::is_symbol_name(&s.symbol) => {
                anchors.push(crate::stages::anchors::symbol_anchor(&s.symbol));
            }
            Section::Symbol(s) => {
                return Err(format!(
                    "symbol {:?} is not a name such as \"LoginService.login\"",
                    s.symbol
                ));
            }
        }
    }
    if anchors.is_empty() {
        return checked_sections(ranges);
    }
    if !ranges.is_empty() {
        checked_sections(ranges.clone())?;
    }
    Ok(Sections::anchored(ranges, anchors))
}

/// Parses `--add FILE:PRIORITY:KIND[:REASON]`: FILE is the text before the first `:high:`,
/// `:medium:` or `:low:`; REASON may hold `:`. An `--add` written as a JSON object
/// (`{"file": …, "sections": ["## Install"], …}`) is one overrides line
/// ([`parse_add_line`]): the form that carries sections and heading anchors.
pub fn parse_add(arg: &str) -> Result<Upsert> {
    if is_add_line(arg) {
        return parse_add_line(arg);
    }
    let bad = || {
        Error::Usage(format!(
            "invalid --add {arg:?}: expected FILE:PRIORITY:KIND[:REASON] with PRIORITY high, medium or low"
        ))
    };
    let (at, priority) = ["high", "medium", "low"]
        .iter()
        .filter_map(|p| arg.find(&format!(":{p}:")).map(|i| (i, *p)))
        .min_by_key(|(i, _)| *i)
        .ok_or_else(bad)?;
    let file = &arg[..at];
    let rest = &arg[at + priority.len() + 2..];
    let (kind, reason) = match rest.split_once(':') {
        Some((k, r)) => (k, Some(r.to_owned())),
        None => (rest, None),
    };
    if file.is_empty() || kind.is_empty() {
        return Err(bad());
    }
    Ok(Upsert {
        file: file.to_owned(),
        reason,
        sections: None,
        priority: Priority::parse(priority),
        kind: Some(kind.to_owned()),
        origin: Origin::Add(arg.to_owned()),
    })
}

/// True when an `--add` is written as an overrides line: a JSON object, `{` to `}`.
#[must_use]
pub fn is_add_line(arg: &str) -> bool {
    let arg = arg.trim();
    arg.starts_with('{') && arg.ends_with('}')
}

/// Parses an `--add` written as an overrides line: `{"file", "reason"?, "sections"?,
/// "priority"?, "kind"?}` as the overrides file reads it (a new entry needs `priority` and
/// `kind`); a `drop` belongs in `--drop`. A malformed one is a usage error naming it.
pub fn parse_add_line(arg: &str) -> Result<Upsert> {
    let bad = |message: String| Error::Usage(format!("invalid --add {arg:?}: {message}"));
    let value: serde_json::Value = serde_json::from_str(arg.trim()).map_err(|e| {
        bad(format!(
            "invalid JSON: {}",
            crate::util::jsonpos::json_message(&e)
        ))
    })?;
    if value.get("drop").is_some() {
        return Err(bad("write a drop as --drop GLOB".to_owned()));
    }
    if let Some((_, key)) = crate::util::jsonpos::duplicate_key(arg.trim()) {
        return Err(bad(format!("the key {key:?} is written twice")));
    }
    if let Some(i) = unreadable_section(&value) {
        return Err(bad(format!(
            "sections[{i}] is not a section: write a pair of whole line numbers ([25, 50]), a heading (\"## Security\") or {{\"symbol\": \"Name\"}}"
        )));
    }
    let raw: RawUpsert = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
    upsert(raw, Origin::Add(arg.to_owned())).map_err(bad)
}

/// The index of the first `sections` item of an overrides line that no reader takes.
fn unreadable_section(value: &serde_json::Value) -> Option<usize> {
    let items = value
        .get("sections")
        .and_then(serde_json::Value::as_array)?;
    items.iter().position(|item| {
        serde_json::from_value::<crate::stages::contract::Section>(item.clone()).is_err()
    })
}

/// What applying the directives did.
#[derive(Debug, Default)]
pub struct Applied {
    pub notes: Vec<Note>,
    /// Entries removed by a drop, with the drop's origin.
    pub dropped: Vec<(Candidate, Origin)>,
}

/// Applies the directives in order to `candidates`. `resolve` maps a named file to its
/// repository-relative path (checking containment and existence); `pattern` maps a drop
/// glob the same way (`<id>`, changes root, containment) without requiring it to exist.
pub fn apply(
    candidates: &mut Vec<Candidate>,
    directives: &[Directive],
    resolve: &mut dyn FnMut(&str, &Origin) -> Result<String>,
    pattern: &dyn Fn(&str, &Origin) -> Result<String>,
) -> Result<Applied> {
    let mut applied = Applied::default();
    for directive in directives {
        match directive {
            Directive::Upsert(u) => {
                let path = resolve(&u.file, &u.origin)?;
                if let Some(c) = candidates.iter_mut().find(|c| c.path == path) {
                    if let Some(r) = &u.reason {
                        c.reason = Some(r.clone());
                    }
                    if let Some(s) = &u.sections {
                        c.sections = s.clone();
                    }
                    if let Some(p) = u.priority {
                        c.priority = p;
                    }
                    if let Some(k) = &u.kind {
                        c.kind.clone_from(k);
                    }
                    c.merged.push(u.origin.clone());
                } else {
                    let (Some(priority), Some(kind)) = (u.priority, u.kind.clone()) else {
                        return Err(Error::Failed(format!(
                            "{}: {} is not an entry yet, so \"priority\" and \"kind\" are required to add it",
                            u.origin.in_errors(),
                            quoted(&path)
                        )));
                    };
                    candidates.push(Candidate {
                        path,
                        priority,
                        kind,
                        sections: u.sections.clone().unwrap_or_default(),
                        reason: u.reason.clone(),
                        origin: u.origin.clone(),
                        merged: Vec::new(),
                    });
                }
            }
            Directive::Drop { glob, why, origin } => {
                let pattern = pattern(glob, origin)?;
                // A literal path needs no glob machinery (a drop list can be long).
                let matcher = if crate::model::paths::has_glob_chars(&pattern) {
                    Some(expand::compile_glob(&pattern, origin)?.compile_matcher())
                } else {
                    None
                };
                let (removed, kept): (Vec<Candidate>, Vec<Candidate>) = std::mem::take(candidates)
                    .into_iter()
                    .partition(|c| match &matcher {
                        Some(m) => m.is_match(&c.path),
                        None => c.path == pattern,
                    });
                *candidates = kept;
                let why = why.as_ref().map_or(String::new(), |w| format!(": {w}"));
                let text = if removed.is_empty() {
                    format!(
                        "drop {} ({}) matched no entry{why}",
                        quoted(glob),
                        origin.describe()
                    )
                } else {
                    let names: Vec<String> = removed.iter().map(|c| quoted(&c.path)).collect();
                    format!(
                        "dropped {} by {} ({}){why}",
                        names.join(", "),
                        quoted(glob),
                        origin.describe()
                    )
                };
                applied.notes.push(Note::info(text));
                applied
                    .dropped
                    .extend(removed.into_iter().map(|c| (c, origin.clone())));
            }
        }
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(path: &str, priority: Priority) -> Candidate {
        Candidate {
            path: path.to_owned(),
            priority,
            kind: "plan".to_owned(),
            sections: Sections::Whole,
            reason: None,
            origin: Origin::FilesFrom,
            merged: vec![],
        }
    }

    #[test]
    fn parses_every_line_form() {
        let text = "// a plain comment\n// curation: keep the plan\n\n{\"file\":\"a.md\",\"priority\":\"low\"}\n{\"drop\":\"old/*.md\",\"why\":\"stale\"}\n// curation: keep the plan\n";
        let o = parse(text, Path::new("o.jsonl"), "o.jsonl").unwrap();
        assert_eq!(o.curation, vec!["keep the plan"]);
        assert_eq!(o.directives.len(), 2);
        assert!(matches!(&o.directives[1], Directive::Drop { glob, .. } if glob == "old/*.md"));
    }

    #[test]
    fn every_bad_line_is_a_problem_and_the_good_ones_are_read() {
        let text = "{\"file\": \"a.md\" \"kind\": \"x\"}\n{\"drop\": \"b.md\"}\n{\"file\": \"c.md\", \"priority\": \"urgent\"}\n[1]\n";
        let (o, problems) = parse_all(text, Path::new("o.jsonl"), "o.jsonl");
        let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(said[0].starts_with("o.jsonl:1:"), "{said:?}");
        assert!(
            said[1].starts_with("o.jsonl:3: unknown priority"),
            "{said:?}"
        );
        assert!(said[2].starts_with("o.jsonl:4: each line"), "{said:?}");
        assert!(matches!(&o.directives[..], [Directive::Drop { glob, .. }] if glob == "b.md"));
        // `parse` fails at the first.
        assert_eq!(
            parse(text, Path::new("o.jsonl"), "o.jsonl")
                .unwrap_err()
                .to_string(),
            said[0]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse(
            "\n{\"file\":\"a\",\"priority\":\"urgent\"}",
            Path::new("o.jsonl"),
            "o.jsonl",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "o.jsonl:2: unknown priority \"urgent\": use high, medium or low"
        );
        let e = parse(
            "{\"file\":\"a\",\"sections\":[[5,1]]}",
            Path::new("o.jsonl"),
            "o.jsonl",
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("o.jsonl:1: section [5, 1]"),
            "{e}"
        );
        let e = parse(
            "{\"file\":\"a\",\"sections\":[[0,1]]}",
            Path::new("o.jsonl"),
            "o.jsonl",
        )
        .unwrap_err();
        assert!(e.to_string().contains("numbered from 1"), "{e}");
        // A section no reader takes, at its column (the line's indent counted).
        for bad in ["[1e3, 2e3]", "[1, 99999999999999999999999]", "true"] {
            let line = format!("  {{\"file\": \"a\", \"sections\": [[1, 2], {bad}]}}");
            let e = parse(&line, Path::new("o.jsonl"), "o.jsonl").unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("o.jsonl:1:38: sections[1] is not a section: write a pair"),
                "{bad}: {e}"
            );
        }
        let e = parse("{nope}", Path::new("o.jsonl"), "o.jsonl").unwrap_err();
        assert!(
            e.to_string().starts_with("o.jsonl:1:2: invalid JSON"),
            "{e}"
        );
    }

    #[test]
    fn add_splits_at_the_first_priority() {
        let u = parse_add("docs/a:b.md:high:truth:why: because").unwrap();
        assert_eq!(u.file, "docs/a:b.md");
        assert_eq!(u.priority, Some(Priority::High));
        assert_eq!(u.kind.as_deref(), Some("truth"));
        assert_eq!(u.reason.as_deref(), Some("why: because"));
        assert!(parse_add("a.md:urgent:truth").is_err());
    }

    #[test]
    fn an_add_written_as_an_object_is_an_overrides_line() {
        let arg = r###"{"file":"README.md","sections":["## Install",[1,2]],"priority":"medium","kind":"instructions","reason":"a: b"}"###;
        let u = parse_add(arg).unwrap();
        assert_eq!(u.file, "README.md");
        assert_eq!(
            u.sections,
            Some(Sections::anchored(vec![[1, 2]], vec!["## Install".into()]))
        );
        assert_eq!(u.priority, Some(Priority::Medium));
        assert_eq!(u.reason.as_deref(), Some("a: b"));
        assert_eq!(u.origin, Origin::Add(arg.to_owned()));
        let said = |arg: &str| parse_add(arg).unwrap_err().to_string();
        assert!(
            said(r#"{"file":"a.md","sections":["Install"]}"#).ends_with(
                "section \"Install\" is neither a [start, end] pair nor a heading such as \"## Security\""
            ),
            "{}",
            said(r#"{"file":"a.md","sections":["Install"]}"#)
        );
        assert!(
            said(r#"{"file":"a.md","file":"b.md"}"#).ends_with("the key \"file\" is written twice")
        );
        assert!(said(r#"{"file": }"#).contains(": invalid JSON: "));
        // A path that starts with `{` but is no object is read as FILE:PRIORITY:KIND.
        assert_eq!(parse_add("{a}.md:low:k").unwrap().file, "{a}.md");
    }

    #[test]
    fn upsert_updates_in_place_and_adds_at_the_end_and_drop_removes() {
        let mut c = vec![cand("a.md", Priority::High), cand("b.md", Priority::Low)];
        let o = parse(
            "{\"file\":\"a.md\",\"priority\":\"medium\",\"reason\":\"narrower\"}\n{\"file\":\"c.md\",\"priority\":\"high\",\"kind\":\"truth\"}\n{\"drop\":\"b.*\",\"why\":\"stale\"}",
            Path::new("o"),
            "o",
        )
        .unwrap();
        let applied = apply(
            &mut c,
            &o.directives,
            &mut |p, _| Ok(p.to_owned()),
            &|p, _| Ok(p.to_owned()),
        )
        .unwrap();
        let paths: Vec<&str> = c.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["a.md", "c.md"]);
        assert_eq!(c[0].priority, Priority::Medium);
        assert_eq!(c[0].reason.as_deref(), Some("narrower"));
        assert_eq!(applied.notes.len(), 1);
        assert!(applied.notes[0].text.contains("\"b.md\""));
        assert!(applied.notes[0].text.ends_with(": stale"));
    }

    #[test]
    fn adding_a_new_file_needs_priority_and_kind() {
        let mut c = vec![];
        let o = parse("{\"file\":\"x.md\"}", Path::new("o"), "o").unwrap();
        assert!(
            apply(
                &mut c,
                &o.directives,
                &mut |p, _| Ok(p.to_owned()),
                &|p, _| Ok(p.to_owned())
            )
            .is_err()
        );
    }
}
