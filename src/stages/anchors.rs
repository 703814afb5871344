//! Anchors: a `sections` item written as a Markdown heading (`"## Security"`,
//! `"## Security|安全与边界"`) or a code symbol (`{"symbol": "LoginService.login"}`) instead
//! of a line pair, resolved against the file's text when it is read, so an edit that moves
//! the heading or the definition moves the lines.
//!
//! A symbol anchor is kept among the anchors as `symbol:NAME` (the lock records it so); it
//! resolves to its definition's lines (from its doc comment through its end) by the file's
//! outline parser ([`crate::outline`]).
//!
//! An anchor matches the first heading of its level (ATX or setext, outside fenced code and
//! a front matter, as the Markdown outline reads them) whose text
//! holds every word of one of its `|`-separated alternatives, case-insensitively; its
//! section runs from the heading to the line before the next heading of the same or a
//! higher level (or the end of the file), trailing blank lines left out. Pure.

use crate::model::{Range, Sections};

/// A heading anchor, as written: `#`s, a space, then the words.
#[must_use]
pub fn is_anchor(text: &str) -> bool {
    parse(text).is_some()
}

/// How a symbol anchor is kept among the anchors.
const SYMBOL: &str = "symbol:";

/// The anchor of symbol `name`.
#[must_use]
pub fn symbol_anchor(name: &str) -> String {
    format!("{SYMBOL}{name}")
}

/// The symbol a kept anchor names, when it names one.
#[must_use]
pub fn symbol_of(anchor: &str) -> Option<&str> {
    anchor.strip_prefix(SYMBOL)
}

/// A symbol name: identifiers joined by `.` or `::` (`LoginService.login`, `auth::login`);
/// a JavaScript or TypeScript private member keeps its `#` (`Ky.#fetch`).
#[must_use]
pub fn is_symbol_name(name: &str) -> bool {
    !name.is_empty()
        && name.replace("::", ".").split('.').all(|part| {
            let part = part.strip_prefix('#').unwrap_or(part);
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
}

/// The anchor as a reader writes it: `"## Security"` or `symbol LoginService.login`.
#[must_use]
pub fn shown(anchor: &str) -> String {
    match symbol_of(anchor) {
        Some(name) => format!("symbol {name}"),
        None => format!("{:?}", anchor.split('|').next().unwrap_or(anchor).trim()),
    }
}

/// The level and the alternatives (each a list of lower-case words) of an anchor.
fn parse(text: &str) -> Option<(usize, Vec<Vec<String>>)> {
    let level = text.bytes().take_while(|b| *b == b'#').count();
    let rest = text.get(level..)?;
    if !(1..=6).contains(&level) || !rest.starts_with(' ') {
        return None;
    }
    let alternatives: Vec<Vec<String>> = rest
        .split('|')
        .map(|alt| {
            alt.split_whitespace()
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .collect();
    (!alternatives.is_empty()).then_some((level, alternatives))
}

/// The headings of a Markdown text (the outline's reading: ATX and setext, outside fenced
/// code and a front matter): (1-based first line, level, lower-case text).
fn headings(text: &str) -> Vec<(u64, usize, String)> {
    crate::outline::markdown_headings(text)
        .into_iter()
        .map(|(line, level, body)| (line, usize::from(level), body.to_lowercase()))
        .collect()
}

/// The lines anchor `anchor` names in `text` (of the file `path`), or `None`.
#[must_use]
pub fn resolve_in(path: &str, text: &str, anchor: &str) -> Option<Range> {
    match symbol_of(anchor) {
        Some(name) => symbol_lines(path, text, name),
        None => resolve_one(text, anchor),
    }
}

/// The lines of the definition of `name` in `text`, by its language's parser.
fn symbol_lines(path: &str, text: &str, name: &str) -> Option<Range> {
    crate::outline::symbol(crate::outline::lang_for(path)?, text, name)
}

/// The lines of the section heading anchor `anchor` names in `text`, or `None`.
#[must_use]
pub fn resolve_one(text: &str, anchor: &str) -> Option<Range> {
    Outline::new(text).resolve(anchor)
}

/// A Markdown text's headings, read once, to resolve many heading anchors against.
pub struct Outline<'a> {
    heads: Vec<(u64, usize, String)>,
    lines: Vec<&'a str>,
}

impl<'a> Outline<'a> {
    #[must_use]
    pub fn new(text: &'a str) -> Outline<'a> {
        Outline {
            heads: headings(text),
            lines: text.lines().collect(),
        }
    }

    /// The lines of the section heading anchor `anchor` names, or `None` ([`resolve_one`]).
    #[must_use]
    pub fn resolve(&self, anchor: &str) -> Option<Range> {
        let (level, alternatives) = parse(anchor)?;
        let heads = &self.heads;
        let at = heads.iter().position(|(_, l, body)| {
            *l == level
                && alternatives
                    .iter()
                    .any(|words| words.iter().all(|w| body.contains(w.as_str())))
        })?;
        let start = heads[at].0;
        let lines = &self.lines;
        let mut end = heads[at + 1..]
            .iter()
            .find(|(_, l, _)| *l <= level)
            .map_or(lines.len() as u64, |(n, _, _)| n - 1);
        while end > start && lines[end as usize - 1].trim().is_empty() {
            end -= 1;
        }
        Some([start, end])
    }
}

/// A selection with its anchors resolved against the file's `bytes`: the ranges (anchors' sections and
/// the pairs given), each anchor with its lines, and the anchors that resolve to nothing.
/// Any anchor unresolved makes the whole file the selection.
#[must_use]
pub fn resolve(sections: &Sections, path: &str, bytes: &[u8]) -> Resolved {
    let Sections::Anchored { ranges, anchors } = sections else {
        return Resolved {
            sections: sections.clone(),
            found: Vec::new(),
            missing: Vec::new(),
        };
    };
    let text = String::from_utf8_lossy(bytes);
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for a in anchors {
        match resolve_in(path, &text, a) {
            Some(r) => found.push((a.clone(), r)),
            None => missing.push(a.clone()),
        }
    }
    let sections = if missing.is_empty() {
        Sections::ranges(
            ranges
                .iter()
                .copied()
                .chain(found.iter().map(|(_, r)| *r))
                .collect(),
        )
    } else {
        // The whole file is taken: no anchor's lines stand for it (in the reason, the lock).
        found.clear();
        Sections::Whole
    };
    Resolved {
        sections,
        found,
        missing,
    }
}

/// What [`resolve`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub sections: Sections,
    /// Each anchor that resolved, with its lines; none when one is missing (the whole file
    /// is taken then).
    pub found: Vec<(String, Range)>,
    /// The anchors that resolve to nothing.
    pub missing: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Title\n\n## Project\ntext\n\n## Security and Boundary Rules (mandatory)\n\n### Secrets\nno keys\n\n```md\n## Security in a fence\n```\n\n## Artifacts\nkeep evidence\n## 3) 产物与证据（强制）\n证据\n";

    #[test]
    fn a_heading_anchor_runs_to_the_next_heading_of_its_level() {
        assert_eq!(resolve_one(DOC, "## Security"), Some([6, 13]));
        assert_eq!(resolve_one(DOC, "## security boundary"), Some([6, 13]));
        assert_eq!(resolve_one(DOC, "### Secrets"), Some([8, 13]));
        assert_eq!(resolve_one(DOC, "## Artifacts"), Some([15, 16]));
        assert_eq!(resolve_one(DOC, "## Evidence|产物与证据"), Some([17, 18]));
        assert_eq!(resolve_one(DOC, "# Title"), Some([1, 18]));
    }

    #[test]
    fn a_heading_in_a_fence_or_of_another_level_is_not_one() {
        assert_eq!(resolve_one(DOC, "### Security"), None);
        assert_eq!(resolve_one(DOC, "## fence"), None);
        assert_eq!(resolve_one(DOC, "## Nowhere"), None);
        assert!(!is_anchor("Security"));
        assert!(!is_anchor("##Security"));
        assert!(!is_anchor("####### Deep"));
        assert!(is_anchor("## Security|安全与边界"));
    }

    #[test]
    fn a_moved_or_renamed_heading_and_a_duplicated_one() {
        let moved = format!("intro\n\n{DOC}");
        assert_eq!(resolve_one(&moved, "## Security"), Some([8, 15]));
        let renamed = DOC.replace("## Security and Boundary Rules", "## Safety rules");
        assert_eq!(resolve_one(&renamed, "## Security"), None);
        assert_eq!(resolve_one(&renamed, "## Security|Safety"), Some([6, 13]));
        let twice = format!("{DOC}## Security again\nx\n");
        assert_eq!(
            resolve_one(&twice, "## Security"),
            Some([6, 13]),
            "the first wins"
        );
    }

    #[test]
    fn a_setext_heading_is_one_and_a_front_matter_is_not() {
        let doc = "---\ntitle: ## Security\n---\nIntro\n=====\n\nSecurity rules\n--------------\nno keys\n\nNext\n----\nmore\n";
        // The section of the setext heading starts at its text line.
        assert_eq!(resolve_one(doc, "## Security"), Some([7, 9]));
        assert_eq!(resolve_one(doc, "# Intro"), Some([4, 13]));
        assert_eq!(resolve_one(doc, "## title"), None);
    }

    #[test]
    fn unresolved_anchors_take_the_whole_file() {
        let s = Sections::anchored(vec![[1, 2]], vec!["## Security".into(), "## Gone".into()]);
        let r = resolve(&s, "doc.md", DOC.as_bytes());
        assert_eq!(r.sections, Sections::Whole);
        assert_eq!(r.missing, ["## Gone"]);
        assert!(r.found.is_empty(), "{:?}", r.found);
        let s = Sections::anchored(vec![[1, 2]], vec!["## Security".into()]);
        let r = resolve(&s, "doc.md", DOC.as_bytes());
        assert_eq!(r.sections, Sections::Ranges(vec![[1, 2], [6, 13]]));
        assert_eq!(r.found, [("## Security".to_owned(), [6, 13])]);
    }
}
