//! The graph seeded by what the text names: the files the named code files use and are
//! used by (the `--related` ranking, [`related::related`], from the named files as if
//! owned), joined with the word ranking by their ranks (reciprocal rank fusion: a file high
//! in either list comes early, one in both earlier still).
//!
//! Deterministic: both lists are; the fused one ties by path.

use std::collections::BTreeMap;
use std::path::Path;

use crate::stages::related;
use crate::stages::tokens::TokenCounter;
use crate::trust::secrets::ContentRules;

/// A rank's weight is `1 / (FUSE + rank)`: larger, the lists' heads count less against
/// their tails.
const FUSE: f64 = 10.0;

/// A file of the graph: its place in the graph's ranking and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Linked {
    pub path: String,
    pub reason: String,
}

/// What [`linked`] needs.
pub struct Seeds<'a> {
    pub root: &'a Path,
    pub universe: &'a [String],
    /// The named code files.
    pub named: Vec<String>,
    pub budget: u64,
    pub max_file_size: u64,
    pub rules: &'a ContentRules,
    pub counter: &'a dyn TokenCounter,
}

/// The files linked to the named ones, best first, vendored and generated ones after the
/// rest (none when no named file is code).
#[must_use]
pub fn linked(s: &Seeds<'_>) -> Vec<Linked> {
    let named: Vec<String> = s
        .named
        .iter()
        .filter(|p| {
            crate::outline::lang_for(p).is_some_and(|l| l != crate::outline::Lang::Markdown)
        })
        .cloned()
        .collect();
    if named.is_empty() {
        return Vec::new();
    }
    let index = related::Index::open(None, s.root);
    let mut found = related::related(&related::Inputs {
        root: s.root,
        universe: s.universe,
        owned: named,
        budget: s.budget,
        max_file_size: s.max_file_size,
        rules: s.rules,
        counter: s.counter,
        index: &index,
        unchanged: None,
    });
    found.sort_by_key(|f| super::trees::is_foreign(&f.path));
    found
        .into_iter()
        .map(|f| Linked {
            path: f.path,
            // Its reason, said of the named files (the sections are chosen later).
            reason: f
                .reason
                .replacen("related to the owned files", "linked to the named files", 1)
                .trim_end_matches(" (outline)")
                .to_owned(),
        })
        .collect()
}

/// `words` (the word ranking's paths, best first) and `graph` fused by rank: each file
/// scores `1 / (FUSE + rank)` in each list it is in, summed; best first, ties by path.
#[must_use]
pub fn fuse<'a>(words: &[&'a str], graph: &[&'a str]) -> Vec<&'a str> {
    let mut score: BTreeMap<&str, f64> = BTreeMap::new();
    for list in [words, graph] {
        for (rank, p) in list.iter().enumerate() {
            *score.entry(p).or_default() += 1.0 / (FUSE + rank as f64);
        }
    }
    let mut out: Vec<(&str, f64)> = score.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    out.into_iter().map(|(p, _)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_in_both_lists_comes_first() {
        let fused = fuse(&["a", "b", "c"], &["c", "d"]);
        // c: 1/12 + 1/10; a: 1/10; b and d: 1/11, by path.
        assert_eq!(fused, ["c", "a", "b", "d"]);
        assert_eq!(fuse(&["a", "b"], &[]), ["a", "b"]);
    }
}
