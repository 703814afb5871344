//! The README's sections a task's text talks about: what an ad-hoc dispatch takes of the
//! README beside the repository's instruction files (docs/selection.md).
//!
//! The README is `README.md` or `README.markdown` at the root, in any case (the first by
//! byte order when several are there): a file whose headings are Markdown's. It is read
//! through admission, bounded, like any file: a link out of the repository, a secret by name
//! or content, a binary or an over-large one is refused, and nothing of it is taken.
//!
//! Its sections (a heading to the next heading of its level or higher, as a heading anchor
//! resolves it; the document's title, whose section holds all the others, is not one) are
//! ranked against the text's words ([`rank`]: BM25, a heading's words counted
//! three times, a section's own text up to its first sub-heading). The best few are taken,
//! within a token budget, each as a heading anchor that resolves to it and to nothing before
//! it, so a compile and `check --stale` find the section again where it moves. Pure, but for
//! [`find`] and [`read`].

use std::path::Path;

use crate::model::paths::RepoPath;
use crate::model::{Range, Sections};
use crate::stages::anchors;
use crate::stages::measure::selected;
use crate::stages::task_words::rank::{Doc, rank};
use crate::stages::tokens::TokenCounter;
use crate::trust::admit::{Refusal, admit};
use crate::trust::secrets::ContentRules;

/// The most sections taken.
const MAX_SECTIONS: usize = 3;

/// A section is taken when it scores at least this share of the best one's score.
const NEAR_THE_BEST: f64 = 0.5;

/// The most headings read as sections: each anchor is checked against the headings before
/// it, so a README of many thousands would cost their square.
const MAX_HEADINGS: usize = 1000;

/// The most matched words a reason names for a section.
const SHOWN_WORDS: usize = 4;

/// A README's section the text matches.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    /// The heading anchor that resolves to it (`"## Install"`).
    pub anchor: String,
    /// Its lines, heading included.
    pub lines: Range,
    /// The text's words it holds, the weightiest first.
    pub words: Vec<String>,
    /// Its tokens.
    pub tokens: u64,
}

/// The README at `root`, by its name there, when there is one.
#[must_use]
pub fn find(root: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| is_readme(n))
        .collect();
    names.sort();
    names.into_iter().next()
}

/// True for a README's name: `README.md` or `README.markdown`, in any case.
fn is_readme(name: &str) -> bool {
    ["readme.md", "readme.markdown"]
        .iter()
        .any(|r| name.eq_ignore_ascii_case(r))
}

/// The text of the README `name` (under the canonical `root`), read through admission, at
/// most `max_file_size` bytes.
pub fn read(
    root: &Path,
    name: &str,
    max_file_size: u64,
    rules: &ContentRules,
) -> Result<String, Refusal> {
    let path = RepoPath::new(name).map_err(|_| Refusal::Outside)?;
    let bytes = admit(root, &path, max_file_size, rules)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The sections of `readme` that `text`'s words match, best first: at most
/// [`MAX_SECTIONS`], each scoring at least half the best, none overlapping another, their
/// tokens (`counter`) within `budget` together.
#[must_use]
pub fn matched(readme: &str, text: &str, budget: u64, counter: &dyn TokenCounter) -> Vec<Matched> {
    let sections = sections(readme);
    let docs: Vec<(String, Doc)> = sections
        .iter()
        .enumerate()
        .map(|(i, s)| (key(i), Doc::new(&s.heading, Some(&s.own_text))))
        .collect();
    let ranked = rank(text, &docs);
    let best = ranked.first().map_or(0.0, |r| r.score);
    let mut taken: Vec<Matched> = Vec::new();
    let mut left = budget;
    for r in ranked.iter().filter(|r| r.score >= best * NEAR_THE_BEST) {
        if taken.len() == MAX_SECTIONS {
            break;
        }
        let Some(s) = r.path.parse::<usize>().ok().and_then(|i| sections.get(i)) else {
            continue;
        };
        if taken.iter().any(|t| overlaps(t.lines, s.lines)) {
            continue;
        }
        // Counted as the compile measures the entry: the lines' bytes, their ends included.
        let tokens = counter.count(&selected(
            readme.as_bytes(),
            &Sections::Ranges(vec![s.lines]),
        ));
        if tokens > left {
            continue;
        }
        left -= tokens;
        taken.push(Matched {
            anchor: s.anchor.clone(),
            lines: s.lines,
            words: r.matched.iter().take(SHOWN_WORDS).cloned().collect(),
            tokens,
        });
    }
    taken
}

/// Why the sections were taken, for the entry's reason: `README section "## Install"
/// matches "install", "docker"`.
#[must_use]
pub fn reason(taken: &[Matched]) -> String {
    let words = |m: &Matched| {
        m.words
            .iter()
            .map(|w| format!("{w:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match taken {
        [one] => format!(
            "README section {} matches {}",
            anchors::shown(&one.anchor),
            words(one)
        ),
        many => format!(
            "README sections {}",
            many.iter()
                .map(|m| format!("{} (matches {})", anchors::shown(&m.anchor), words(m)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A section as the ranking reads it.
struct Section {
    anchor: String,
    /// The heading's text.
    heading: String,
    /// From the line after the heading to the next heading of any level.
    own_text: String,
    lines: Range,
}

/// The sections of a Markdown text that a heading anchor finds again: the title's left out
/// (its section holds every other heading), and a heading an earlier one of its level would
/// take the anchor of.
fn sections(text: &str) -> Vec<Section> {
    let heads = crate::outline::markdown_headings(text);
    let outline = anchors::Outline::new(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, (line, level, heading)) in heads.iter().enumerate().take(MAX_HEADINGS) {
        let Some(anchor) = anchor_of(*level, heading) else {
            continue;
        };
        // An anchor resolves to the first heading it fits: this one, or it names another.
        let Some(span) = outline.resolve(&anchor).filter(|r| r[0] == *line) else {
            continue;
        };
        if heads.iter().all(|(l, ..)| span[0] <= *l && *l <= span[1]) {
            continue;
        }
        let next = heads.get(i + 1).map_or(lines.len() as u64 + 1, |h| h.0);
        out.push(Section {
            anchor,
            heading: heading.clone(),
            own_text: text_of(&lines, [line + 1, next - 1]),
            lines: span,
        });
    }
    out
}

/// The anchor of a heading of `level` that reads `heading`: its words as written, `|`
/// (which separates an anchor's alternatives) left out.
fn anchor_of(level: u8, heading: &str) -> Option<String> {
    let words: Vec<&str> = heading
        .split(|c: char| c.is_whitespace() || c == '|')
        .filter(|w| !w.is_empty())
        .collect();
    let anchor = format!("{} {}", "#".repeat(usize::from(level)), words.join(" "));
    anchors::is_anchor(&anchor).then_some(anchor)
}

/// Lines `[start, end]` (1-based, inclusive) of `lines`, joined; empty when there are none.
fn text_of(lines: &[&str], [start, end]: Range) -> String {
    let from = usize::try_from(start.saturating_sub(1)).unwrap_or(usize::MAX);
    let to = usize::try_from(end).unwrap_or(usize::MAX).min(lines.len());
    lines.get(from..to).map_or(String::new(), |l| l.join("\n"))
}

/// True when two line ranges share a line.
fn overlaps(a: Range, b: Range) -> bool {
    a[0] <= b[1] && b[0] <= a[1]
}

/// A section's key in the ranking: its place, so that ties go in the document's order.
fn key(i: usize) -> String {
    format!("{i:06}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts a byte as a token: enough to test the budget.
    struct Bytes;
    impl TokenCounter for Bytes {
        fn count(&self, bytes: &[u8]) -> u64 {
            bytes.len() as u64
        }
    }

    const README: &str = "# Demo\n\nA demo service.\n\n## Install\n\nRun the installer, or pull the docker image.\n\n### From source\n\ncargo build\n\n## Usage\n\nStart the server with `demo serve`.\n\n## Install notes\n\nOld docker notes.\n";

    #[test]
    fn the_sections_the_text_talks_about_are_taken_best_first() {
        let taken = matched(README, "Install it with docker", 10_000, &Bytes);
        let anchors: Vec<&str> = taken.iter().map(|m| m.anchor.as_str()).collect();
        // "## Install notes" resolves as "## Install" would not: its anchor is its own.
        assert_eq!(anchors, ["## Install", "## Install notes"]);
        assert_eq!(taken[0].lines, [5, 11]);
        assert_eq!(taken[0].words, ["install", "docker"]);
        assert_eq!(
            reason(&taken[..1]),
            "README section \"## Install\" matches \"install\", \"docker\""
        );
        assert!(reason(&taken).starts_with("README sections \"## Install\" (matches "));
    }

    #[test]
    fn nothing_matched_nothing_taken_and_the_title_is_no_section() {
        assert!(
            matched(
                README,
                "fix the lockout after failed logins",
                10_000,
                &Bytes
            )
            .is_empty()
        );
        // "demo" is in the title and the usage: the title's section is the whole file.
        let taken = matched(README, "demo", 10_000, &Bytes);
        assert_eq!(
            taken.iter().map(|m| m.anchor.as_str()).collect::<Vec<_>>(),
            ["## Usage"]
        );
    }

    #[test]
    fn the_budget_and_overlaps_leave_sections_out() {
        // "## Install" (7 lines) does not fit; its sub-section does.
        let taken = matched(README, "install from source", 30, &Bytes);
        assert_eq!(
            taken.iter().map(|m| m.anchor.as_str()).collect::<Vec<_>>(),
            ["### From source"]
        );
        let taken = matched(README, "install from source", 10_000, &Bytes);
        assert!(!taken.is_empty());
        for (i, a) in taken.iter().enumerate() {
            for b in &taken[i + 1..] {
                assert!(!overlaps(a.lines, b.lines), "{taken:?}");
            }
        }
    }

    #[test]
    fn a_readme_of_many_headings_is_read_to_a_bound() {
        let many: String = (0..5000)
            .map(|i| format!("## Part {i}\n\ntext {i}\n\n"))
            .collect();
        let s = sections(&many);
        assert_eq!(s.len(), MAX_HEADINGS);
        assert_eq!(s[999].lines, [3997, 3999]);
    }

    #[test]
    fn a_readme_is_found_in_any_case() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find(dir.path()), None);
        std::fs::write(dir.path().join("readme.md"), "x").unwrap();
        std::fs::write(dir.path().join("README.txt"), "x").unwrap();
        assert_eq!(find(dir.path()).as_deref(), Some("readme.md"));
        std::fs::write(dir.path().join("Readme.markdown"), "x").unwrap();
        assert_eq!(find(dir.path()).as_deref(), Some("Readme.markdown"));
    }
}
