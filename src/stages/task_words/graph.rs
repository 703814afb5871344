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
    /// Where the `--related` index is kept (`None`: built for this run only).
    pub cache: Option<std::path::PathBuf>,
    /// In `curate watch`: its `--related` index, and what it knows did not change.
    pub watched: Option<Watched<'a>>,
}

/// What a process that stays lends the graph: its loaded `--related` index (nothing opened
/// or saved), and what the kernel told it did not change (not stamped).
#[derive(Clone, Copy)]
pub struct Watched<'a> {
    pub index: &'a related::Index,
    pub unchanged: &'a dyn related::Unchanged,
}

/// The files linked to the named ones, best first, vendored and generated ones after the
/// rest (none when no named file is code).
#[must_use]
pub fn linked(s: &Seeds<'_>) -> Vec<Linked> {
    let named: Vec<String> = s.named.iter().filter(|p| is_code(p)).cloned().collect();
    if named.is_empty() {
        return Vec::new();
    }
    let opened;
    let (index, unchanged) = match s.watched {
        Some(w) => (w.index, Some(w.unchanged)),
        None => {
            opened = related::Index::open(s.cache.clone(), s.root);
            (&opened, None)
        }
    };
    // The graph alone: the word ranking, not the central files, fills the rest.
    let mut found = related::linked(&related::Inputs {
        root: s.root,
        universe: s.universe,
        owned: named,
        budget: s.budget,
        max_file_size: s.max_file_size,
        rules: s.rules,
        counter: s.counter,
        index,
        unchanged,
    });
    // The index is an optimisation, as for `--related`: a failed save changes nothing else.
    // (A watcher saves its own after the answer.)
    if s.watched.is_none() {
        let _ = index.save();
    }
    found.sort_by_key(|f| related::foreign::is_foreign(&f.path));
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

/// True for a file the graph can start from: code in a language parsed for its tags.
fn is_code(path: &str) -> bool {
    crate::outline::lang_for(path).is_some_and(|l| l != crate::outline::Lang::Markdown)
}

/// What a file shares with the named ones: its score, the literals, the named files.
type Shared<'a> = (f64, Vec<&'a str>, Vec<&'a str>);

/// A literal in more files than this ties nothing in particular.
const MAX_LITERAL_FILES: usize = 8;

/// The files that share a string literal with the named ones ([`related::literals`]),
/// best first: each scores, for each literal it shares, how rare the literal is (`ln(n /
/// files with it)`), summed; ties by path. `named`: each named file's literals' keys;
/// `files`: the others' paths and keys.
#[must_use]
pub fn sharing(named: &[(&str, Vec<String>)], files: &[(&str, &[String])]) -> Vec<Linked> {
    let wanted: BTreeMap<&str, &str> = named
        .iter()
        .flat_map(|(p, keys)| keys.iter().map(move |k| (k.as_str(), *p)))
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut holders: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (path, keys) in files {
        for k in *keys {
            if wanted.contains_key(k.as_str()) {
                holders.entry(k.as_str()).or_default().push(path);
            }
        }
    }
    let n = files.len().max(1) as f64;
    let mut by_file: BTreeMap<&str, Shared<'_>> = BTreeMap::new();
    for (k, paths) in &holders {
        if paths.len() > MAX_LITERAL_FILES {
            continue;
        }
        let weight = (n / paths.len() as f64).ln().max(0.1);
        for p in paths {
            let e = by_file.entry(p).or_default();
            e.0 += weight;
            e.1.push(k);
            if !e.2.contains(&wanted[k]) {
                e.2.push(wanted[k]);
            }
        }
    }
    let mut out: Vec<(&str, Shared<'_>)> = by_file.into_iter().collect();
    out.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.0.cmp(b.0)));
    out.into_iter()
        .map(|(path, (_, keys, by))| {
            let shown: Vec<String> = keys.iter().take(3).map(|k| format!("{k:?}")).collect();
            Linked {
                path: path.to_owned(),
                reason: format!(
                    "linked to the named files: shares {} with {}",
                    shown.join(", "),
                    by.iter().take(2).copied().collect::<Vec<_>>().join(", ")
                ),
            }
        })
        .collect()
}

/// The lists (the word ranking's paths, the graph's, best first) fused by rank: each file
/// scores `1 / (FUSE + rank)` in each list it is in, summed; best first, ties by path.
#[must_use]
pub fn fuse<'a>(lists: &[&[&'a str]]) -> Vec<&'a str> {
    let mut score: BTreeMap<&str, f64> = BTreeMap::new();
    for list in lists {
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
        let fused = fuse(&[&["a", "b", "c"], &["c", "d"]]);
        // c: 1/12 + 1/10; a: 1/10; b and d: 1/11, by path.
        assert_eq!(fused, ["c", "a", "b", "d"]);
        assert_eq!(fuse(&[&["a", "b"], &[]]), ["a", "b"]);
    }

    #[test]
    fn a_rare_shared_literal_links_more_than_a_common_one() {
        let keys = |k: &[&str]| k.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let named = [("server/src/main.rs", keys(&["/api/logs", "app.ready"]))];
        let web = keys(&["/api/logs"]);
        let common = keys(&["app.ready"]);
        let none: Vec<String> = Vec::new();
        let mut files: Vec<(&str, &[String])> = vec![
            ("web/src/App.svelte", &web),
            ("a.ts", &common),
            ("b.ts", &common),
        ];
        for p in ["c.ts", "d.ts", "e.ts", "f.ts"] {
            files.push((p, &none));
        }
        let got = sharing(&named, &files);
        let order: Vec<&str> = got.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(order, ["web/src/App.svelte", "a.ts", "b.ts"]);
        assert_eq!(
            got[0].reason,
            "linked to the named files: shares \"/api/logs\" with server/src/main.rs"
        );
    }
}
