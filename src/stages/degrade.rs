//! The lower rungs of the budget ladder (docs/budgets.md) for one entry: its outline, as
//! sections of the original file (signatures and doc lines of code, the headings of
//! Markdown), and an index line (named in the prompt, no lines).
//!
//! Runs only when a cap bites, for the medium and low entries: the file is read again
//! through admission's checks and must hash as it did when admitted (else it has no outline
//! rung, only its index line). Pure apart from that read; nothing is written.

use std::path::Path;

use crate::model::paths::RepoPath;
use crate::model::{Range, Sections};
use crate::stages::budget::{Rung, Step};
use crate::stages::measure::{Measured, count_lines, cut_len, selected};
use crate::stages::tokens::TokenCounter;
use crate::trust::admit::Held;

/// An entry's rungs below where it stands, and the outline's sections when it has one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lowered {
    pub rungs: Vec<Rung>,
    pub outline: Option<Sections>,
}

/// How the rungs are measured.
#[derive(Clone, Copy)]
pub struct Measuring<'a> {
    pub max_file_size: u64,
    /// The consumer's per-file cut in bytes (0: none).
    pub cut_bytes: u64,
    /// Count the outline's tokens (a token cap is set).
    pub tokens: bool,
    /// The consumer reads sections (else it inlines whole files: no outline rung).
    pub sections: bool,
    pub counter: &'a dyn TokenCounter,
    /// What the compile admitted: the outline is cut from the same bytes.
    pub held: &'a Held,
}

/// The rungs of the entry `path` measured as `m`: its outline (when its language has one,
/// it parses, and it is smaller than the entry as it stands), then its index line.
#[must_use]
pub fn lower(
    root: &Path,
    path: &RepoPath,
    m: &Measured,
    how: Measuring<'_>,
    consumer_bytes: &dyn Fn(u64, u64) -> u64,
) -> Lowered {
    let mut out = Lowered::default();
    if how.sections
        && let Ok(bytes) = how.held.read(root, path, how.max_file_size, &m.sha256)
        && let Some(ranges) = outline(path.as_str(), &String::from_utf8_lossy(&bytes))
    {
        let ranges = match m.sections.as_ranges() {
            None => ranges,
            Some(within) => intersect(&ranges, within),
        };
        let sections = Sections::ranges(ranges);
        let lines = sections.line_count(count_lines(&bytes));
        if lines > 0 && lines < m.lines {
            let text = selected(&bytes, &sections);
            out.rungs.push(Rung {
                step: Step::Outline,
                lines,
                tokens: how.tokens.then(|| how.counter.count(&text)),
                bytes: consumer_bytes(cut_len(&text, how.cut_bytes), text.len() as u64),
            });
            out.outline = Some(sections);
        }
    }
    out.rungs.push(INDEX);
    out
}

/// The last rung: named in the prompt, no lines.
pub const INDEX: Rung = Rung {
    step: Step::Index,
    lines: 0,
    tokens: Some(0),
    bytes: 0,
};

/// The outline of a file's text as line ranges, when its language has one.
fn outline(path: &str, text: &str) -> Option<Vec<Range>> {
    crate::outline::outline(crate::outline::lang_for(path)?, text)
}

/// The lines of `a` that lie in `b` (both sorted, merged).
fn intersect(a: &[Range], b: &[Range]) -> Vec<Range> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let start = a[i][0].max(b[j][0]);
        let end = a[i][1].min(b[j][1]);
        if start <= end {
            out.push([start, end]);
        }
        if a[i][1] < b[j][1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersect_keeps_the_common_lines() {
        assert_eq!(
            intersect(&[[1, 3], [5, 9], [20, 20]], &[[2, 6], [8, 30]]),
            vec![[2, 3], [5, 6], [8, 9], [20, 20]]
        );
        assert_eq!(intersect(&[[1, 3]], &[[4, 9]]), Vec::<Range>::new());
    }

    #[test]
    fn a_markdown_outline_is_its_heading_lines() {
        let text = "# A\ntext\n\n## B\nmore\n```\n# not\n```\n";
        assert_eq!(outline("docs/x.md", text), Some(vec![[1, 1], [4, 4]]));
        assert_eq!(outline("docs/x.md", "no heading\n"), None);
        assert_eq!(outline("src/x.bin", text), None);
    }

    #[test]
    fn a_source_outline_keeps_the_signatures_at_their_lines() {
        let text =
            "use std::fmt;\n\n/// Adds.\npub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n";
        let ranges = outline("src/lib.rs", text).unwrap();
        assert!(ranges.iter().any(|r| r[0] <= 4 && 4 <= r[1]), "{ranges:?}");
        assert!(
            !ranges.iter().any(|r| r[0] <= 5 && 5 <= r[1]),
            "no body: {ranges:?}"
        );
    }
}
