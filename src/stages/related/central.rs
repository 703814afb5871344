//! Central files: what `--related` offers when the owned files give the graph few or no
//! edges (a Svelte page, which no parser here reads; a module no other file names), so the
//! budget is not left empty. A file is central when many other files use what it defines:
//! its score is the number of distinct files that reference a name it defines
//! (`central: referenced by 14 files`): the in-degree of the definition/reference graph,
//! which a reason can say, where aider's map, unpersonalised, runs PageRank over it.
//!
//! Bounded: only the [`MAX_PARSED`] code files nearest the owned ones (by the folders their
//! paths share) are looked at, and none vendored or generated ([`super::foreign`]) is ever
//! offered. Deterministic: candidates by nearness then path; the most referrers first, the
//! nearer of two alike, then by path.

use std::collections::BTreeMap;

use super::foreign::is_foreign;
use crate::outline::{Lang, Named, Symbols};

/// At most this many candidate files are parsed for the central ranking.
pub const MAX_PARSED: usize = 2_000;
/// A name defined in more files than this is too common to make any of them central
/// (`new`, `String`, `Error` in each crate).
const MAX_DEFINERS: usize = 4;
/// Names shorter than this carry no edge (as in the ranking).
const MIN_NAME: usize = 3;

/// True for a file never to be offered as central (it is counted as a referrer still).
pub type Exclude<'a> = dyn Fn(&str) -> bool + 'a;
/// A path's [`nearness`] to the owned files.
pub type Near<'a> = dyn Fn(&str) -> usize + 'a;

/// A central file: how many other files use its definitions, and the lines of the
/// definitions they use (its outline is cut to them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Central {
    pub path: String,
    pub referrers: u32,
    pub lines: Vec<u64>,
}

/// The code files of `universe` a central ranking looks at: not vendored or generated, not
/// in `skip`, at most [`MAX_PARSED`], nearest the `owned` paths first (the most leading
/// folders shared with one of them), ties by path.
#[must_use]
pub fn candidates<'u>(
    universe: &'u [String],
    owned: &[String],
    skip: &dyn Fn(&str) -> bool,
) -> Vec<(&'u String, Lang)> {
    let mut near: Vec<(usize, &String, Lang)> = universe
        .iter()
        .filter(|p| !skip(p) && !is_foreign(p))
        .filter_map(|p| {
            let lang = crate::outline::lang_for(p).filter(|&l| l != Lang::Markdown)?;
            Some((nearness(owned, p), p, lang))
        })
        .collect();
    near.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    near.truncate(MAX_PARSED);
    near.into_iter().map(|(_, p, l)| (p, l)).collect()
}

/// How near `path` is to the `owned` paths: the most leading folders it shares with one.
#[must_use]
pub fn nearness(owned: &[String], path: &str) -> usize {
    owned
        .iter()
        .map(|o| shared_folders(o, path))
        .max()
        .unwrap_or(0)
}

/// How many leading folders `a` and `b` share (`web/src/a.ts`, `web/src/lib/b.ts`: 2).
fn shared_folders(a: &str, b: &str) -> usize {
    fn folders(p: &str) -> std::str::Split<'_, char> {
        p.rsplit_once('/').map_or("", |(f, _)| f).split('/')
    }
    if !a.contains('/') || !b.contains('/') {
        return 0;
    }
    folders(a)
        .zip(folders(b))
        .take_while(|(x, y)| x == y)
        .count()
}

/// The files of `files` that others use, best first (most referrers, then the [`nearness`]
/// `near` gives, then by path), at most `limit`; a file in `exclude`, or vendored or
/// generated, is counted as a referrer but never returned.
#[must_use]
pub fn rank(
    files: &[(String, Named)],
    symbols: &Symbols<'_>,
    (exclude, near): (&Exclude<'_>, &Near<'_>),
    limit: usize,
) -> Vec<Central> {
    // Per name: the files defining it (with the line) and those referencing it.
    let mut definers: BTreeMap<u32, Vec<(usize, u64)>> = BTreeMap::new();
    for (k, (_, t)) in files.iter().enumerate() {
        for &(d, line) in &t.defs {
            if symbols.chars(d) >= MIN_NAME {
                let v = definers.entry(d).or_default();
                if v.last().is_none_or(|&(f, _)| f != k) {
                    v.push((k, line));
                }
            }
        }
    }
    definers.retain(|_, v| v.len() <= MAX_DEFINERS);
    let mut referrers: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
    let mut lines: Vec<Vec<u64>> = vec![Vec::new(); files.len()];
    for (k, (_, t)) in files.iter().enumerate() {
        for &(name, _) in &t.refs {
            let Some(defs) = definers.get(&name) else {
                continue;
            };
            if defs.iter().any(|&(f, _)| f == k) {
                continue;
            }
            for &(f, line) in defs {
                referrers[f].push(k);
                lines[f].push(line);
            }
        }
    }
    let mut out: Vec<Central> = files
        .iter()
        .zip(referrers.into_iter().zip(lines))
        .filter(|((p, _), _)| !exclude(p) && !is_foreign(p))
        .filter_map(|((p, _), (mut by, mut at))| {
            by.sort_unstable();
            by.dedup();
            at.sort_unstable();
            at.dedup();
            let referrers = u32::try_from(by.len()).ok().filter(|&n| n > 0)?;
            Some(Central {
                path: p.clone(),
                referrers,
                lines: at,
            })
        })
        .collect();
    out.sort_by_cached_key(|c| {
        (
            std::cmp::Reverse((c.referrers, near(&c.path))),
            c.path.clone(),
        )
    });
    out.truncate(limit);
    out
}

/// `central: referenced by 14 files (outline)`.
#[must_use]
pub fn reason(c: &Central) -> String {
    format!(
        "central: referenced by {} file{} (outline)",
        c.referrers,
        if c.referrers == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::{Def, Tags, Vocab};

    fn tags(defs: &[&str], refs: &[&str]) -> Tags {
        Tags {
            defs: defs
                .iter()
                .enumerate()
                .map(|(k, d)| Def {
                    name: (*d).to_owned(),
                    kind: "definition",
                    line: k as u64 + 1,
                })
                .collect(),
            refs: refs.iter().map(|r| (*r).to_owned()).collect(),
            ref_counts: vec![1; refs.len()],
        }
    }

    #[test]
    fn the_file_most_others_use_comes_first() {
        let base = Vocab::default();
        let mut symbols = Symbols::new(&base);
        let files: Vec<(String, Named)> = [
            ("src/db.rs", tags(&["open_db", "Row"], &[])),
            ("src/api.rs", tags(&["route"], &["open_db", "Row"])),
            ("src/main.rs", tags(&["main"], &["open_db", "route"])),
            ("src/cli.rs", tags(&[], &["Row"])),
            ("vendor/kit/row.rs", tags(&["row_helper"], &["Row"])),
            ("src/b.rs", tags(&[], &["row_helper"])),
            ("src/c.rs", tags(&[], &["row_helper"])),
        ]
        .iter()
        .map(|(p, t)| ((*p).to_owned(), symbols.number(t)))
        .collect();
        let got = rank(&files, &symbols, (&|p| p == "src/cli.rs", &|_| 0), 10);
        let order: Vec<(&str, u32)> = got.iter().map(|c| (c.path.as_str(), c.referrers)).collect();
        // The vendored file, which three files use, is never central.
        assert_eq!(order, [("src/db.rs", 4), ("src/api.rs", 1)]);
        assert_eq!(got[0].lines, [1, 2]);
        assert_eq!(reason(&got[0]), "central: referenced by 4 files (outline)");
    }

    #[test]
    fn candidates_are_the_nearest_code_and_never_vendored() {
        let universe: Vec<String> = [
            "README.md",
            "server/src/db.rs",
            "vendor/x/lib.go",
            "web/src/App.svelte",
            "web/src/lib/api.ts",
            "web/src/main.ts",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let owned = ["web/src/App.svelte".to_owned()];
        let got: Vec<&str> = candidates(&universe, &owned, &|p| owned.iter().any(|o| o == p))
            .into_iter()
            .map(|(p, _)| p.as_str())
            .collect();
        assert_eq!(
            got,
            ["web/src/lib/api.ts", "web/src/main.ts", "server/src/db.rs"]
        );
    }
}
