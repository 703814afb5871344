//! Markdown, read by a line scanner: ATX headings (`# Title`) and setext headings (a
//! paragraph line underlined by `===` or `---`), outside fenced code blocks and a leading
//! YAML front matter.

use std::collections::BTreeMap;

use crate::model::Range;

/// One heading: its level (1–6), its text (markers and closing hashes stripped) and the
/// lines it occupies (one for ATX, two for setext).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heading {
    pub level: u8,
    pub text: String,
    pub lines: Range,
}

/// A fence opener or closer: the character and run length, when `line` is one.
fn fence(line: &str) -> Option<(u8, usize)> {
    let t = strip_indent(line)?;
    let c = *t.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = t.bytes().take_while(|&b| b == c).count();
    // A backtick fence's info string may not hold a backtick.
    (n >= 3 && (c == b'~' || !t[n..].contains('`'))).then_some((c, n))
}

/// The line without up to three leading spaces; `None` when it is indented four or more
/// (an indented code line) or by a tab.
fn strip_indent(line: &str) -> Option<&str> {
    let n = line.bytes().take_while(|&b| b == b' ').count();
    (n <= 3 && !line[n..].starts_with('\t')).then(|| &line[n..])
}

/// An ATX heading's level and text.
fn atx(line: &str) -> Option<(u8, String)> {
    let t = strip_indent(line)?;
    let n = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&n) {
        return None;
    }
    let rest = &t[n..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let mut text = rest.trim();
    // A closing sequence of hashes, preceded by a space (or the whole text).
    let trimmed = text.trim_end_matches('#');
    if trimmed.is_empty() || trimmed.ends_with([' ', '\t']) {
        text = trimmed.trim_end();
    }
    Some((n as u8, text.to_owned()))
}

/// A setext underline's level: `=` runs make 1, `-` runs make 2.
fn underline(line: &str) -> Option<u8> {
    let t = strip_indent(line)?.trim_end();
    let c = *t.as_bytes().first()?;
    let level = match c {
        b'=' => 1,
        b'-' => 2,
        _ => return None,
    };
    t.bytes().all(|b| b == c).then_some(level)
}

/// Whether a line can be a setext heading's text: a paragraph line, not a block opener.
fn paragraph_line(line: &str) -> bool {
    let Some(t) = strip_indent(line) else {
        return false;
    };
    let t = t.trim_end();
    !t.is_empty()
        && !t.starts_with(['>', '#', '|', '<'])
        && !t.starts_with("- ")
        && !t.starts_with("* ")
        && !t.starts_with("+ ")
        && underline(t).is_none()
        && fence(t).is_none()
        && !t.split_once(['.', ')']).is_some_and(|(n, rest)| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with(' ')
        })
}

/// The lines a leading YAML front matter holds: `---` on the first line through the next
/// `---` or `...` (the index of that closing line), `None` without one.
pub(crate) fn front_matter_end(lines: &[&str]) -> Option<usize> {
    if lines.first().is_none_or(|l| l.trim_end() != "---") {
        return None;
    }
    lines
        .iter()
        .skip(1)
        .position(|l| matches!(l.trim_end(), "---" | "..."))
        .map(|n| n + 1)
}

/// Every heading, in document order.
pub(crate) fn headings(text: &str) -> Vec<Heading> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = front_matter_end(&lines).map_or(0, |end| end + 1);
    let mut open: Option<(u8, usize)> = None;
    let mut prev_paragraph = false;
    while i < lines.len() {
        let line = lines[i];
        let number = i as u64 + 1;
        i += 1;
        if let Some((c, n)) = open {
            if fence(line).is_some_and(|(c2, n2)| {
                c2 == c && n2 >= n && strip_indent(line).is_some_and(|t| t.trim()[n2..].is_empty())
            }) {
                open = None;
            }
            continue;
        }
        if let Some(f) = fence(line) {
            open = Some(f);
            prev_paragraph = false;
            continue;
        }
        if let Some((level, text)) = atx(line) {
            out.push(Heading {
                level,
                text,
                lines: [number, number],
            });
            prev_paragraph = false;
            continue;
        }
        if prev_paragraph && let Some(level) = underline(line) {
            out.push(Heading {
                level,
                text: lines[i - 2].trim().to_owned(),
                lines: [number - 1, number],
            });
            prev_paragraph = false;
            continue;
        }
        // Only a paragraph's single line before the underline is taken as its text: a
        // longer paragraph's underline still makes a heading, of its last line.
        prev_paragraph = paragraph_line(line);
    }
    out
}

/// The heading lines; `None` when there is none.
pub(crate) fn outline(text: &str) -> Option<Vec<Range>> {
    let hs = headings(text);
    if hs.is_empty() {
        return None;
    }
    Some(hs.iter().map(|h| h.lines).collect())
}

/// Strips the markers a caller may have copied with the name (`## Security`).
fn bare(name: &str) -> &str {
    name.trim().trim_start_matches('#').trim()
}

/// A heading's section: the heading through the line before the next heading of the same
/// or a higher level (or the end). Exact text first, then ASCII case-insensitive.
pub(crate) fn symbol(text: &str, name: &str, line_count: u64) -> Option<Range> {
    let name = bare(name);
    if name.is_empty() {
        return None;
    }
    let hs = headings(text);
    let at = hs
        .iter()
        .position(|h| h.text == name)
        .or_else(|| hs.iter().position(|h| h.text.eq_ignore_ascii_case(name)))?;
    let h = &hs[at];
    let mut end = hs[at + 1..]
        .iter()
        .find(|n| n.level <= h.level)
        .map_or(line_count, |n| n.lines[0] - 1)
        .max(h.lines[1]);
    // Trailing blank lines left out, as a heading anchor leaves them.
    let lines: Vec<&str> = text.lines().collect();
    while end > h.lines[1]
        && lines
            .get(usize::try_from(end).unwrap_or(usize::MAX) - 1)
            .is_some_and(|l| l.trim().is_empty())
    {
        end -= 1;
    }
    Some([h.lines[0], end])
}

/// Definitions as (name, kind, line).
pub(crate) type Defs = Vec<(String, &'static str, u64)>;

/// The headings as definitions (kind `heading`, at their text's line), and the
/// identifier-like words of inline code spans as references, with their counts.
pub(crate) fn tags(text: &str) -> Option<(Defs, BTreeMap<String, u32>)> {
    let hs = headings(text);
    if hs.is_empty() {
        return None;
    }
    let defs = hs
        .into_iter()
        .map(|h| (h.text, "heading", h.lines[0]))
        .collect();
    let mut refs = BTreeMap::new();
    let mut in_fence: Option<(u8, usize)> = None;
    for line in text.lines() {
        if let Some((c, n)) = in_fence {
            if fence(line).is_some_and(|(c2, n2)| c2 == c && n2 >= n) {
                in_fence = None;
            }
            continue;
        }
        if let Some(f) = fence(line) {
            in_fence = Some(f);
            continue;
        }
        for (k, span) in line.split('`').enumerate() {
            if k % 2 == 1 {
                for word in span.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                    if word.len() >= 2
                        && word.len() <= 128
                        && !word.starts_with(|c: char| c.is_ascii_digit())
                    {
                        *refs.entry(word.to_owned()).or_insert(0) += 1;
                    }
                }
            }
        }
    }
    Some((defs, refs))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "---\ntitle: x\n# not a heading\n---\n# Title\n\nintro\n\n## Security #\n\n```sh\n# a comment\n```\n\nSetext\n======\n\ntext `LoginService::login` here\n\n### Deep\n\n    # indented code\n## Next\nend\n";

    #[test]
    fn headings_skip_front_matter_and_fences() {
        let hs = headings(DOC);
        let t: Vec<(&str, u8, Range)> = hs
            .iter()
            .map(|h| (h.text.as_str(), h.level, h.lines))
            .collect();
        assert_eq!(
            t,
            [
                ("Title", 1, [5, 5]),
                ("Security", 2, [9, 9]),
                ("Setext", 1, [15, 16]),
                ("Deep", 3, [20, 20]),
                ("Next", 2, [23, 23]),
            ]
        );
        assert_eq!(
            outline(DOC).unwrap(),
            vec![[5, 5], [9, 9], [15, 16], [20, 20], [23, 23]]
        );
    }

    #[test]
    fn a_section_runs_to_the_next_heading_of_its_level() {
        let n = DOC.lines().count() as u64;
        // Trailing blank lines left out, as a heading anchor leaves them.
        assert_eq!(symbol(DOC, "## Security", n), Some([9, 13]));
        assert_eq!(symbol(DOC, "security", n), Some([9, 13]));
        assert_eq!(symbol(DOC, "Title", n), Some([5, 13]));
        let doc = "# Guide\n\n## Install\nstep 1\n\n\n## Usage\nuse\n";
        assert_eq!(symbol(doc, "Install", 8), Some([3, 4]));
        assert_eq!(
            crate::stages::anchors::resolve_one(doc, "## Install"),
            Some([3, 4])
        );
        // A heading with nothing under it is its own line.
        assert_eq!(symbol("## A\n\n## B\n", "A", 3), Some([1, 1]));
        assert_eq!(symbol(DOC, "Deep", n), Some([20, 22]));
        assert_eq!(symbol(DOC, "Next", n), Some([23, 24]));
        assert_eq!(symbol(DOC, "Missing", n), None);
        assert_eq!(symbol(DOC, "##", n), None);
    }

    #[test]
    fn no_heading_is_none_and_thematic_breaks_are_not_headings() {
        assert_eq!(outline("just text\n\n---\n\nmore\n"), None);
        assert_eq!(outline(""), None);
        assert_eq!(outline("#hashtag\n"), None);
        assert_eq!(outline("- item\n---\n"), None);
    }

    #[test]
    fn code_spans_are_references() {
        let (defs, refs) = tags(DOC).unwrap();
        assert_eq!(defs[0], ("Title".to_owned(), "heading", 5));
        assert_eq!(refs.get("LoginService"), Some(&1));
        assert_eq!(refs.get("login"), Some(&1));
    }
}
