//! Related files (`--related TOKENS`, docs/budgets.md#related-files): from the owned files,
//! the repository's other source files ranked by the definition/reference graph
//! ([`crate::outline::rank`], as aider's repo map ranks them), added as low-priority
//! `related` entries read as their outlines, within a token budget.
//!
//! Scoped: only the files that name an identifier the owned files define or reference (one
//! Aho-Corasick pass over each file admitted) are parsed; their tags are cached on disk by
//! content hash. Every read goes through admission ([`admit`]); a file it refuses is
//! not related. Deterministic: ranks tie by path; the result does not depend on `-j`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::compile::admit::{admit, reread};
use crate::compile::measure::selected;
use crate::compile::secrets::ContentRules;
use crate::compile::tokens::TokenCounter;
use crate::model::Sections;
use crate::outline::{Def, Lang, Tags};
use crate::util::paths::RepoPath;

/// Names shorter than this carry no edge (as in the ranking).
const MIN_NAME: usize = 3;
/// At most this many ranked files are considered for the budget.
const CONSIDERED: usize = 200;
/// A related file's outline takes at most this part of the budget (so one large file does
/// not crowd out the rest), and never less than [`MIN_PER_FILE`] tokens.
const PER_FILE: u64 = 4;
const MIN_PER_FILE: u64 = 200;
/// The tags cache holds at most this many files.
const CACHE_ENTRIES: usize = 50_000;

/// A related file, as it enters the compile.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub path: String,
    /// Its outline.
    pub sections: Sections,
    pub tokens: u64,
    pub reason: String,
    pub score: f64,
}

/// What [`related`] needs.
pub struct Inputs<'a> {
    pub root: &'a Path,
    /// Every file of the repository a glob could select (expansion's walk: ignore rules,
    /// no `.git`, no link out), repository-relative.
    pub universe: Vec<String>,
    /// The owned files (admitted already, or refused here).
    pub owned: Vec<String>,
    /// Tokens the related files' outlines may take in all.
    pub budget: u64,
    pub max_file_size: u64,
    pub rules: &'a ContentRules,
    pub counter: &'a dyn TokenCounter,
    pub cache: &'a TagsCache,
}

/// The related files, best first, whose outlines fit the budget together.
#[must_use]
pub fn related(i: &Inputs<'_>) -> Vec<Found> {
    let owned: Vec<(String, Tags)> = i
        .owned
        .iter()
        .filter_map(|p| {
            let (tags, _) = read_tags(i, p, None)?;
            Some((p.clone(), tags))
        })
        .collect();
    if owned.is_empty() || i.budget == 0 {
        return Vec::new();
    }
    // The names the owned files define or reference: a file that holds none of them has no
    // edge to or from them, and is not parsed.
    let names: BTreeSet<&str> = owned
        .iter()
        .flat_map(|(_, t)| {
            t.defs
                .iter()
                .map(|d| d.name.as_str())
                .chain(t.refs.iter().map(String::as_str))
        })
        .filter(|n| n.chars().count() >= MIN_NAME)
        .collect();
    let Ok(matcher) = AhoCorasick::new(&names) else {
        return Vec::new();
    };
    let owned_set: BTreeSet<&str> = owned.iter().map(|(p, _)| p.as_str()).collect();
    let others: Vec<&String> = i
        .universe
        .iter()
        .filter(|p| !owned_set.contains(p.as_str()))
        .filter(|p| crate::outline::lang_for(p).is_some_and(|l| l != Lang::Markdown))
        .collect();
    let read: Vec<(String, Tags, String)> = others
        .par_iter()
        .filter_map(|p| {
            let (tags, sha) = read_tags(i, p, Some(&matcher))?;
            Some(((*p).clone(), tags, sha))
        })
        .collect();
    // The hash each file was admitted with: its outline is read again as those bytes.
    let admitted: BTreeMap<String, String> = read
        .iter()
        .map(|(p, _, sha)| (p.clone(), sha.clone()))
        .collect();
    let mut files: Vec<(String, Tags)> = read.into_iter().map(|(p, t, _)| (p, t)).collect();
    files.extend(owned.iter().cloned());
    let owned_paths: Vec<String> = owned.iter().map(|(p, _)| p.clone()).collect();
    let ranked = crate::outline::rank(&files, &owned_paths, CONSIDERED);
    let by_path: BTreeMap<&str, &Tags> = files.iter().map(|(p, t)| (p.as_str(), t)).collect();
    let outlined: Vec<Option<(Sections, u64)>> = ranked
        .par_iter()
        .map(|(p, _)| {
            // The definitions the owned files share with it: its outline is cut to their
            // parts (all of it when none is in the outline).
            let shared: Vec<u64> = by_path.get(p.as_str()).map_or_else(Vec::new, |t| {
                t.defs
                    .iter()
                    .filter(|d| names.contains(d.name.as_str()))
                    .map(|d| d.line)
                    .collect()
            });
            outline_of(i, p, admitted.get(p.as_str())?, &shared)
        })
        .collect();
    let mut out = Vec::new();
    let mut used = 0u64;
    for ((path, score), outline) in ranked.iter().zip(outlined) {
        let Some((sections, tokens)) = outline else {
            continue;
        };
        if used + tokens > i.budget {
            continue;
        }
        used += tokens;
        let reason = match by_path.get(path.as_str()) {
            Some(t) => reason(t, &owned),
            None => "related to the owned files".to_owned(),
        };
        out.push(Found {
            path: path.clone(),
            sections,
            tokens,
            reason,
            score: *score,
        });
    }
    out
}

/// The tags of `path`, read through admission; with a `matcher`, only when the file holds
/// one of its names as a whole word.
fn read_tags(i: &Inputs<'_>, path: &str, matcher: Option<&AhoCorasick>) -> Option<(Tags, String)> {
    let lang = crate::outline::lang_for(path)?;
    let repo_path = RepoPath::new(path).ok()?;
    if crate::compile::secrets::by_path(path).is_some() {
        return None;
    }
    let bytes = admit(i.root, &repo_path, i.max_file_size, i.rules).ok()?;
    if let Some(m) = matcher
        && !holds_word(m, &bytes)
    {
        return None;
    }
    let sha = crate::util::digest::hex(&bytes);
    if let Some(t) = i.cache.get(&sha) {
        return Some((t, sha));
    }
    let tags = crate::outline::tags(lang, &String::from_utf8_lossy(&bytes))?;
    i.cache.put(&sha, &tags);
    Some((tags, sha))
}

/// True when a name of `m` occurs in `bytes` with no identifier character on either side.
fn holds_word(m: &AhoCorasick, bytes: &[u8]) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    m.find_overlapping_iter(bytes).any(|hit| {
        let before = hit.start().checked_sub(1).map(|k| bytes[k]);
        let after = bytes.get(hit.end()).copied();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// A related file's outline, cut to the ranges that hold one of the `shared` definition
/// lines when any does, and its tokens; read again as the bytes admitted (hash `sha256`).
fn outline_of(i: &Inputs<'_>, path: &str, sha256: &str, shared: &[u64]) -> Option<(Sections, u64)> {
    let lang = crate::outline::lang_for(path)?;
    let repo_path = RepoPath::new(path).ok()?;
    // The bytes admitted before (no second scan), or nothing if the file changed since.
    let bytes = reread(i.root, &repo_path, i.max_file_size, sha256).ok()?;
    let ranges = crate::outline::outline(lang, &String::from_utf8_lossy(&bytes))?;
    let focused: Vec<crate::model::Range> = ranges
        .iter()
        .copied()
        .filter(|[a, b]| shared.iter().any(|l| a <= l && l <= b))
        .collect();
    let mut ranges = if focused.is_empty() { ranges } else { focused };
    let mut sections = Sections::ranges(ranges.clone());
    let mut tokens = i.counter.count(&selected(&bytes, &sections));
    // One file takes at most a quarter of the budget: its first ranges, in proportion.
    let cap = (i.budget / PER_FILE).max(MIN_PER_FILE);
    if tokens > cap && ranges.len() > 1 {
        let lines: u64 = ranges.iter().map(|[a, b]| b - a + 1).sum();
        let keep_lines = (lines * cap / tokens).max(1);
        let mut kept = 0;
        ranges.retain(|[a, b]| {
            let take = kept < keep_lines;
            kept += b - a + 1;
            take
        });
        sections = Sections::ranges(ranges);
        tokens = i.counter.count(&selected(&bytes, &sections));
    }
    Some((sections, tokens))
}

/// `defines hashPassword, SessionStore used by src/auth/login.ts; uses login`.
fn reason(t: &Tags, owned: &[(String, Tags)]) -> String {
    let mut provides: BTreeMap<&str, u32> = BTreeMap::new();
    let mut users: BTreeSet<&str> = BTreeSet::new();
    for d in &t.defs {
        if d.name.chars().count() < MIN_NAME {
            continue;
        }
        for (p, o) in owned {
            let n = o.ref_count(&d.name);
            if n > 0 {
                *provides.entry(d.name.as_str()).or_default() += n;
                users.insert(p.as_str());
            }
        }
    }
    let mut uses: BTreeMap<&str, u32> = BTreeMap::new();
    for (_, o) in owned {
        for d in &o.defs {
            let n = t.ref_count(&d.name);
            if n > 0 && d.name.chars().count() >= MIN_NAME {
                *uses.entry(d.name.as_str()).or_default() += n;
            }
        }
    }
    let top = |m: BTreeMap<&str, u32>| -> Vec<String> {
        let mut v: Vec<(&str, u32)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v.into_iter()
            .take(3)
            .map(|(n, _)| format!("`{n}`"))
            .collect()
    };
    let mut parts = Vec::new();
    let provided = top(provides);
    if !provided.is_empty() {
        let by: Vec<&str> = users.into_iter().take(2).collect();
        parts.push(format!(
            "defines {} used by {}",
            provided.join(", "),
            by.join(", ")
        ));
    }
    let used = top(uses);
    if !used.is_empty() {
        parts.push(format!("uses {}", used.join(", ")));
    }
    if parts.is_empty() {
        "related to the owned files (outline)".to_owned()
    } else {
        format!("related to the owned files: {} (outline)", parts.join("; "))
    }
}

/// Tags by the sha256 of the file's bytes, on disk in the user cache folder
/// (`tags-v1.json`), at most [`CACHE_ENTRIES`] files. A definition's kind is not kept (the
/// ranking reads names only): a cached one reads `definition`.
#[derive(Debug)]
pub struct TagsCache {
    file: Option<PathBuf>,
    state: Mutex<CacheState>,
}

#[derive(Debug, Default)]
struct CacheState {
    loaded: bool,
    map: BTreeMap<String, Cached>,
    dirty: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Cached {
    /// (name, line)
    d: Vec<(String, u64)>,
    /// (name, count)
    r: Vec<(String, u32)>,
}

impl TagsCache {
    /// The cache in `dir` (`None`: never hits, never writes).
    #[must_use]
    pub fn open(dir: Option<PathBuf>) -> TagsCache {
        TagsCache {
            file: dir.map(|d| d.join("tags-v1.json")),
            state: Mutex::new(CacheState::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheState> {
        let mut s = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !s.loaded {
            s.loaded = true;
            if let Some(f) = &self.file
                && let Ok(bytes) = std::fs::read(f)
                && let Ok(map) = serde_json::from_slice(&bytes)
            {
                s.map = map;
            }
        }
        s
    }

    fn get(&self, sha: &str) -> Option<Tags> {
        self.file.as_ref()?;
        let s = self.lock();
        let c = s.map.get(sha)?;
        Some(Tags {
            defs: c
                .d
                .iter()
                .map(|(name, line)| Def {
                    name: name.clone(),
                    kind: "definition",
                    line: *line,
                })
                .collect(),
            refs: c.r.iter().map(|(n, _)| n.clone()).collect(),
            ref_counts: c.r.iter().map(|(_, k)| *k).collect(),
        })
    }

    fn put(&self, sha: &str, t: &Tags) {
        if self.file.is_none() {
            return;
        }
        let mut s = self.lock();
        if s.map.len() >= CACHE_ENTRIES {
            return;
        }
        s.map.insert(
            sha.to_owned(),
            Cached {
                d: t.defs.iter().map(|d| (d.name.clone(), d.line)).collect(),
                r: t.refs
                    .iter()
                    .cloned()
                    .zip(t.ref_counts.iter().copied())
                    .collect(),
            },
        );
        s.dirty = true;
    }

    /// Writes the new entries back, atomically. A cache is an optimisation: callers may
    /// ignore the error.
    pub fn save(&self) -> crate::error::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let s = self.lock();
        if !s.dirty {
            return Ok(());
        }
        if let Some(dir) = file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let bytes = serde_json::to_vec(&s.map).unwrap_or_default();
        crate::util::atomic::write(file, &bytes)
    }
}
