//! The vocabulary every layer shares: priorities, sections and manifest entries
//! (here), repository paths ([`paths`]), the caps ([`caps`]), the encodings
//! ([`encoding`]) and positions in a text ([`pos`]).
//!
//! Pure data with its invariants (sections sorted and merged, paths normalised); nothing
//! here touches the disk.

pub mod caps;
pub mod encoding;
pub mod paths;
pub mod pos;
pub mod similar;

pub use caps::Caps;
pub use encoding::Encoding;
pub use paths::{FileRef, RepoPath};
pub use pos::Pos;

use std::fmt;

use serde::{Deserialize, Serialize};

/// An entry's priority. Orders `High < Medium < Low`, so an ascending sort puts high first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    High,
    Medium,
    Low,
}

impl Priority {
    /// Parses `high`, `medium` or `low` (exactly, lower case).
    #[must_use]
    pub fn parse(text: &str) -> Option<Priority> {
        match text {
            "high" => Some(Priority::High),
            "medium" => Some(Priority::Medium),
            "low" => Some(Priority::Low),
            _ => None,
        }
    }

    /// The lower-case name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Priority::High => "high",
            Priority::Medium => "medium",
            Priority::Low => "low",
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An inclusive, 1-based line range.
pub type Range = [u64; 2];

/// Which lines of a file an entry selects: all of them, or a sorted, merged list of ranges.
/// Before a file is read its selection may also name Markdown headings
/// ([`Sections::Anchored`]); reading it resolves them to ranges (the compile's anchors stage).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Sections {
    #[default]
    Whole,
    Ranges(Vec<Range>),
    /// Ranges and heading anchors (`"## Security|安全与边界"`), not resolved yet.
    Anchored {
        ranges: Vec<Range>,
        anchors: Vec<String>,
    },
}

impl Sections {
    /// Sections from raw ranges: sorted, with overlapping and adjacent ranges merged.
    #[must_use]
    pub fn ranges(mut ranges: Vec<Range>) -> Sections {
        ranges.sort_unstable();
        let mut merged: Vec<Range> = Vec::with_capacity(ranges.len());
        for [start, end] in ranges {
            match merged.last_mut() {
                Some(last) if start <= last[1].saturating_add(1) => last[1] = last[1].max(end),
                _ => merged.push([start, end]),
            }
        }
        Sections::Ranges(merged)
    }

    /// Ranges and anchors; plain ranges when there is no anchor.
    #[must_use]
    pub fn anchored(ranges: Vec<Range>, mut anchors: Vec<String>) -> Sections {
        if anchors.is_empty() {
            return Sections::ranges(ranges);
        }
        let mut seen = std::collections::HashSet::new();
        anchors.retain(|a| seen.insert(a.clone()));
        match Sections::ranges(ranges) {
            Sections::Ranges(ranges) => Sections::Anchored { ranges, anchors },
            other => other,
        }
    }

    /// The ranges and anchors of a list (empty for a whole file).
    fn parts(&self) -> (&[Range], &[String]) {
        match self {
            Sections::Whole => (&[], &[]),
            Sections::Ranges(r) => (r, &[]),
            Sections::Anchored { ranges, anchors } => (ranges, anchors),
        }
    }

    /// The union of two selections; a whole file wins over any list.
    #[must_use]
    pub fn union(&self, other: &Sections) -> Sections {
        if matches!(self, Sections::Whole) || matches!(other, Sections::Whole) {
            return Sections::Whole;
        }
        let ((ra, aa), (rb, ab)) = (self.parts(), other.parts());
        Sections::anchored(
            ra.iter().chain(rb).copied().collect(),
            aa.iter().chain(ab).cloned().collect(),
        )
    }

    /// The ranges clamped to a file of `lines` lines: a range wholly past the end is removed
    /// and reported in `removed`, one that runs past the end is cut and reported in `cut`.
    #[must_use]
    pub fn clamp(&self, lines: u64) -> Clamped {
        if matches!(self, Sections::Whole) {
            return Clamped {
                sections: Sections::Whole,
                removed: Vec::new(),
                cut: Vec::new(),
            };
        }
        let (ranges, _) = self.parts();
        let mut kept = Vec::new();
        let mut removed = Vec::new();
        let mut cut = Vec::new();
        for &[start, end] in ranges {
            if start > lines {
                removed.push([start, end]);
            } else if end > lines {
                cut.push([start, end]);
                kept.push([start, lines]);
            } else {
                kept.push([start, end]);
            }
        }
        Clamped {
            sections: Sections::Ranges(kept),
            removed,
            cut,
        }
    }

    /// The number of lines selected from a file of `lines` lines (after clamping).
    #[must_use]
    pub fn line_count(&self, lines: u64) -> u64 {
        match self {
            Sections::Whole => lines,
            _ => self
                .parts()
                .0
                .iter()
                .map(|&[s, e]| if s > lines { 0 } else { e.min(lines) - s + 1 })
                .sum(),
        }
    }

    /// The ranges, or `None` for a whole file.
    #[must_use]
    pub fn as_ranges(&self) -> Option<&[Range]> {
        match self {
            Sections::Whole => None,
            _ => Some(self.parts().0),
        }
    }

    /// True when a range list is left with no range.
    #[must_use]
    pub fn is_empty_list(&self) -> bool {
        matches!(self, Sections::Ranges(r) if r.is_empty())
            || matches!(self, Sections::Anchored { ranges, anchors } if ranges.is_empty() && anchors.is_empty())
    }

    /// `lines 25-50, 95-106`, or `whole file`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Sections::Whole => "whole file".to_owned(),
            _ => {
                let (r, a) = self.parts();
                let mut parts: Vec<String> = r.iter().map(|[s, e]| format!("{s}-{e}")).collect();
                parts.extend(a.iter().map(|a| format!("{a:?}")));
                format!("lines {}", parts.join(", "))
            }
        }
    }
}

impl Serialize for Sections {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Sections::Whole => serializer.serialize_none(),
            _ => self.parts().0.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Sections {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: Option<Vec<Range>> = Option::deserialize(deserializer)?;
        Ok(match raw {
            None => Sections::Whole,
            Some(r) => Sections::ranges(r),
        })
    }
}

/// The result of [`Sections::clamp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clamped {
    pub sections: Sections,
    pub removed: Vec<Range>,
    pub cut: Vec<Range>,
}

/// One line of the manifest, in the key order of the manifest format (docs/manifest.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub file: String,
    pub reason: String,
    pub sections: Sections,
    pub priority: Priority,
    pub kind: String,
}

/// The generated reason of an entry of `kind` with `sections`.
#[must_use]
pub fn generated_reason(kind: &str, sections: &Sections) -> String {
    let why = match kind {
        "truth" => "project truth: constraints and rules",
        "contract" => "delegation contract: role boundaries",
        "adapter" => "tool adapter rules",
        "assigned" => "the module assigned to this task",
        "plan" => "change plan: goals, non-goals, scope, steps, verification",
        "analysis" => "analysis of the change: impact and options",
        "evidence" => "verification evidence baseline",
        "handoff" => "handoff notes",
        _ => "",
    };
    let what = if why.is_empty() {
        format!("{kind} file")
    } else {
        why.to_owned()
    };
    match sections {
        Sections::Whole => what,
        _ => format!("{what} ({})", sections.describe()),
    }
}

/// Formats a file name for a note: as a JSON string, so no name can break a line.
#[must_use]
pub fn quoted(path: &str) -> String {
    let json = serde_json::to_string(path).unwrap_or_else(|_| format!("{path:?}"));
    // JSON leaves DEL and the C1 controls as they are; a terminal or a line reader may not.
    if json.chars().any(char::is_control) {
        json.chars()
            .map(|c| {
                if c.is_control() {
                    format!("\\u{:04x}", u32::from(c))
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        json
    }
}

/// [`one_line`], borrowed when there is nothing to escape (a report's column, a label).
#[must_use]
pub fn one_line_cow(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(char::is_control) {
        std::borrow::Cow::Owned(one_line(text))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// The text with control characters escaped (a newline as the two characters `\` `n`).
#[must_use]
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// How loud a note is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
}

/// A decision of this run, in plain words with the numbers (becomes a curation line unless
/// it is the report's only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    pub level: Level,
    pub text: String,
    /// Written in the manifest as a `// curation:` line.
    #[serde(skip)]
    pub in_manifest: bool,
}

impl Note {
    /// An informational note.
    #[must_use]
    pub fn info(text: String) -> Note {
        Note {
            level: Level::Info,
            text,
            in_manifest: true,
        }
    }

    /// A note that is also a warning.
    #[must_use]
    pub fn warning(text: String) -> Note {
        Note {
            level: Level::Warning,
            text,
            in_manifest: true,
        }
    }

    /// The same note, in the report only (what it says stops being true once the manifest
    /// is written).
    #[must_use]
    pub fn report_only(self) -> Note {
        Note {
            in_manifest: false,
            ..self
        }
    }

    /// True for warnings.
    #[must_use]
    pub fn is_warning(&self) -> bool {
        self.level == Level::Warning
    }
}

/// A file kept out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exclusion {
    pub file: String,
    pub reason: String,
}

impl Exclusion {
    /// An exclusion of `file` for `reason`.
    #[must_use]
    pub fn new(file: &str, reason: &str) -> Exclusion {
        Exclusion {
            file: file.to_owned(),
            reason: reason.to_owned(),
        }
    }
}

/// Languages of the built-in templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    #[default]
    En,
    Zh,
}

impl Lang {
    /// The code used in template file names.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_sorted_and_merged_when_overlapping_or_adjacent() {
        let s = Sections::ranges(vec![[95, 106], [25, 50], [40, 60], [61, 61], [200, 210]]);
        assert_eq!(s, Sections::Ranges(vec![[25, 61], [95, 106], [200, 210]]));
    }

    #[test]
    fn whole_file_wins_a_union() {
        let a = Sections::ranges(vec![[1, 5]]);
        assert_eq!(a.union(&Sections::Whole), Sections::Whole);
        assert_eq!(
            a.union(&Sections::ranges(vec![[6, 9]])),
            Sections::Ranges(vec![[1, 9]])
        );
    }

    #[test]
    fn clamp_cuts_and_removes() {
        let s = Sections::ranges(vec![[1, 10], [15, 30], [40, 50]]);
        let c = s.clamp(20);
        assert_eq!(c.sections, Sections::Ranges(vec![[1, 10], [15, 20]]));
        assert_eq!(c.cut, vec![[15, 30]]);
        assert_eq!(c.removed, vec![[40, 50]]);
        assert_eq!(s.line_count(20), 16);
    }

    #[test]
    fn entries_serialise_in_spec_key_order_without_escaping_non_ascii() {
        let e = Entry {
            file: "docs/设计.md".into(),
            reason: "r".into(),
            sections: Sections::Whole,
            priority: Priority::High,
            kind: "truth".into(),
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"file":"docs/设计.md","reason":"r","sections":null,"priority":"high","kind":"truth"}"#
        );
    }

    #[test]
    fn generated_reasons_name_the_sections() {
        assert_eq!(
            generated_reason("truth", &Sections::ranges(vec![[25, 50], [95, 106]])),
            "project truth: constraints and rules (lines 25-50, 95-106)"
        );
        assert_eq!(generated_reason("odd", &Sections::Whole), "odd file");
    }
}
