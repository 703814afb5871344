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
use std::path::Path;
use std::time::SystemTime;

use rayon::prelude::*;

use crate::model::paths::RepoPath;
use crate::model::{Range, Sections};
use crate::outline::{Lang, Named, Symbols, Tags};
use crate::stages::measure::selected;
use crate::stages::tokens::TokenCounter;
use crate::trust::admit::{Refusal, admit, is_binary, judge_text, read_unjudged};
use crate::trust::secrets::ContentRules;

pub mod ask;
mod codec;
mod index;
mod listings;
pub mod literals;
mod terms;
mod words;

pub use index::Index;
use index::{Base, Entry, Keep, Parsed, Seen, Stamp, Words};
pub use listings::{Entries, Kind, Listings};
pub use terms::{Counted, Kept, Terms};
use words::{Held, Names, Query};

/// What a process that stays (`curate watch`) knows has not changed since its last run,
/// told by the kernel: a kept stamp it vouches for is taken as the file's or folder's own,
/// without asking the system. Anything it does not vouch for is stamped as in any run.
pub trait Unchanged: Send + Sync + std::fmt::Debug {
    /// True when the folder `rel` (repository-relative, `""` the root) and its entries are
    /// as its last listing in this process found them.
    fn folder(&self, rel: &str) -> bool;
    /// True when the file `rel` is as this process last stamped it.
    fn file(&self, rel: &str) -> bool;
    /// Called before the folder `rel` is stamped or listed: from then on, its changes are told.
    fn before_listing(&self, rel: &str);
}

/// Names shorter than this carry no edge (as in the ranking).
const MIN_NAME: usize = 3;
/// At most this many ranked files are considered for the budget.
const CONSIDERED: usize = 200;
/// A related file's outline takes at most this part of the budget (so one large file does
/// not crowd out the rest), and never less than [`MIN_PER_FILE`] tokens.
const PER_FILE: u64 = 4;
const MIN_PER_FILE: u64 = 200;

/// A related file, as it enters the compile.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
    pub universe: &'a [String],
    /// The owned files (admitted already, or refused here).
    pub owned: Vec<String>,
    /// Tokens the related files' outlines may take in all.
    pub budget: u64,
    pub max_file_size: u64,
    pub rules: &'a ContentRules,
    pub counter: &'a dyn TokenCounter,
    /// What is known of the repository's files from earlier runs.
    pub index: &'a Index,
    /// What a process that stays knows has not changed (`None`: every file is stamped).
    pub unchanged: Option<&'a dyn Unchanged>,
}

/// The related files, best first, whose outlines fit the budget together.
#[must_use]
pub fn related(i: &Inputs<'_>) -> Vec<Found> {
    let owned: Vec<(String, Tags)> = i
        .owned
        .iter()
        .filter_map(|p| Some((p.clone(), owned_tags(i, p)?)))
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
    let listed: Vec<&str> = names.iter().copied().collect();
    let Some(search) = Names::new(&listed) else {
        return Vec::new();
    };
    let query = search.query(|w| i.index.id_of(w));
    let owned_set: BTreeSet<&str> = owned.iter().map(|(p, _)| p.as_str()).collect();
    let (others, langs): (Vec<&String>, Vec<Lang>) = i
        .universe
        .iter()
        .filter(|p| !owned_set.contains(p.as_str()))
        .filter_map(|p| {
            Some((
                p,
                crate::outline::lang_for(p).filter(|&l| l != Lang::Markdown)?,
            ))
        })
        .unzip();
    let started = SystemTime::now();
    let entries = i.index.get_each(&others);
    let base = Base::open(i.root);
    let looked: Vec<Looked> = others
        .par_iter()
        .zip(langs)
        .zip(entries)
        .map_init(Vec::new, |ids, ((p, lang), e)| {
            look(i, &base, (p, lang), e, (&search, &query), ids)
        })
        .collect();
    // Names as ids: the index's as loaded, those of this run's parses numbered after them.
    let mut symbols = Symbols::new(i.index.vocab());
    // The hash each file was admitted with (its outline is read again as those bytes) and
    // the outline of its parse.
    let mut admitted: BTreeMap<String, (String, Option<Vec<Range>>)> = BTreeMap::new();
    let mut files: Vec<(String, Named)> = Vec::new();
    let mut kept: Vec<Keep> = Vec::new();
    for (p, l) in others.iter().zip(looked) {
        kept.extend(l.entry);
        let ((named, outline), sha) = match l.found.map(|p| *p) {
            Some(Parse::Kept {
                named,
                outline,
                sha,
            }) => ((named, outline), sha),
            Some(Parse::Fresh { tags, sha }) => match index::number(&tags, &mut symbols) {
                Some(numbered) => (numbered, sha),
                None => continue,
            },
            None => continue,
        };
        admitted.insert((*p).clone(), (sha, outline));
        files.push(((*p).clone(), named));
    }
    if i.index.is_enabled() {
        i.index.keep(kept, started);
    }
    let owned: Vec<(String, Named)> = owned
        .iter()
        .map(|(p, t)| (p.clone(), symbols.number(t)))
        .collect();
    let owned_names: BTreeSet<u32> = names.iter().map(|n| symbols.id(n.as_bytes())).collect();
    files.extend(owned.iter().cloned());
    let owned_paths: Vec<String> = owned.iter().map(|(p, _)| p.clone()).collect();
    let ranked = crate::outline::rank_named(&files, &symbols, &owned_paths, CONSIDERED);
    let by_path: BTreeMap<&str, &Named> = files.iter().map(|(p, t)| (p.as_str(), t)).collect();
    let outlined: Vec<Option<(Sections, u64)>> = ranked
        .par_iter()
        .map(|(p, _)| {
            // The definitions the owned files share with it: its outline is cut to their
            // parts (all of it when none is in the outline).
            let shared: Vec<u64> = by_path.get(p.as_str()).map_or_else(Vec::new, |t| {
                t.defs
                    .iter()
                    .filter(|(d, _)| owned_names.contains(d))
                    .map(|&(_, line)| line)
                    .collect()
            });
            let (sha, outline) = admitted.get(p.as_str())?;
            outline_of(i, p, sha, outline.as_deref()?, &shared)
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
            Some(t) => reason(t, &owned, &symbols),
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

/// An owned file's tags: read through admission, parsed (or as the index has them for the
/// same bytes).
fn owned_tags(i: &Inputs<'_>, path: &str) -> Option<Tags> {
    let lang = crate::outline::lang_for(path)?;
    let repo_path = RepoPath::new(path).ok()?;
    if crate::trust::secrets::by_path(path).is_some() {
        return None;
    }
    let bytes = admit(i.root, &repo_path, i.max_file_size, i.rules).ok()?;
    if let Some(Entry {
        seen:
            Seen::Admitted {
                parsed: Parsed::Tags { sha, tags },
                ..
            },
        ..
    }) = i.index.get(path)
        && *sha == crate::util::digest::hex(&bytes)
        && let Some(t) = i.index.tags(tags)
    {
        return Some(t);
    }
    crate::outline::tags(lang, &String::from_utf8_lossy(&bytes))
}

/// What the search made of one file: its parse when it names an owned identifier; what the
/// index keeps of it.
#[derive(Default)]
struct Looked {
    found: Option<Box<Parse>>,
    entry: Option<Keep>,
}

/// A candidate's parse: its tags and outline, and the hash of the bytes they are of.
enum Parse {
    /// As the index keeps them: names as ids of its vocabulary.
    Kept {
        named: Named,
        outline: Option<Vec<Range>>,
        sha: String,
    },
    /// Parsed in this run, encoded with their names as text (one buffer a file, numbered
    /// once the search is done).
    Fresh { tags: index::Encoded, sha: String },
}

/// Searches one file: through the index's entry for it, `kept`, when its stamp is the one
/// kept, else read.
fn look(
    i: &Inputs<'_>,
    base: &Base,
    (path, lang): (&str, Lang),
    kept: Option<(u32, &Entry)>,
    (names, query): (&Names<'_>, &Query),
    ids: &mut Vec<u32>,
) -> Looked {
    let none = Looked::default();
    // A walk's path: normal, or nothing is stamped or read by it.
    if !crate::model::paths::is_normal(path) || crate::trust::secrets::by_path(path).is_some() {
        return none;
    }
    // Read only when its path holds no token (checked here, not before the index's entry:
    // a path is judged when its file is first read, and the index keeps none that fails).
    let read_as = || {
        RepoPath::new(path)
            .ok()
            .filter(|_| i.rules.scan_path(path).is_none())
    };
    if !i.index.is_enabled() {
        return Looked {
            found: read_as()
                .and_then(|p| read_found(i, &p, lang, names))
                .map(Box::new),
            entry: None,
        };
    }
    // Taken before the read: a change after it moves the stamp, and is read next time. A
    // process that stays takes the kept one where it knows the file did not change.
    let stamp = match (i.unchanged, kept) {
        (Some(u), Some((_, e))) if u.file(path) => Some(e.stamp),
        _ => base.file(path),
    };
    if let Some(s) = stamp
        && i.max_file_size > 0
        && s.size > i.max_file_size
    {
        // Refused by its size, as admission would.
        return none;
    }
    if let (Some(s), Some((at, e))) = (stamp, kept)
        && e.stamp == s
    {
        let Seen::Admitted { words, parsed } = &e.seen else {
            return Looked {
                found: None,
                entry: Some(Keep::Loaded(at)),
            };
        };
        // Words that do not decode cannot decide: the file is read.
        let held = match i.index.word_ids(words, ids) {
            Some(()) => query.held(ids),
            None => Held::Maybe,
        };
        match (held, parsed) {
            (Held::No, _) | (Held::Yes, Parsed::Nothing) => {
                return Looked {
                    found: None,
                    entry: Some(Keep::Loaded(at)),
                };
            }
            (Held::Yes, Parsed::Tags { sha, tags }) => {
                if let Some((named, outline)) = i.index.named(tags) {
                    return Looked {
                        found: Some(Box::new(Parse::Kept {
                            named,
                            outline,
                            sha: sha.clone(),
                        })),
                        entry: Some(Keep::Loaded(at)),
                    };
                }
            }
            // Only the bytes can tell, or they were never parsed.
            _ => {}
        }
    }
    match read_as() {
        Some(p) => read_entry(i, &p, lang, names, stamp),
        None => none,
    }
}

/// A file read (no index): its parse when it names an owned identifier and admission lets
/// its text in. The names are looked for first: a file that holds none is not scanned, its
/// text going nowhere.
fn read_found(i: &Inputs<'_>, path: &RepoPath, lang: Lang, names: &Names<'_>) -> Option<Parse> {
    let bytes = read_unjudged(i.root, path, i.max_file_size).ok()?;
    if is_binary(&bytes) || !names.held_in(&bytes) {
        return None;
    }
    judge_text(&bytes, i.rules).ok()?;
    let sha = crate::util::digest::hex(&bytes);
    let (tags, outline) = crate::outline::tags_and_outline(lang, &String::from_utf8_lossy(&bytes))?;
    Some(Parse::Fresh {
        tags: index::encode_tags(&tags, outline.as_deref()),
        sha,
    })
}

/// A file read for the index: judged whole (its words are kept only when its text passes),
/// searched, parsed when it names an owned identifier; with the entry to keep when it has a
/// stamp.
fn read_entry(
    i: &Inputs<'_>,
    path: &RepoPath,
    lang: Lang,
    names: &Names<'_>,
    stamp: Option<Stamp>,
) -> Looked {
    let entry = |seen| {
        stamp.map(|stamp| {
            Keep::from(Entry {
                path: path.as_str().to_owned(),
                stamp,
                seen,
            })
        })
    };
    let Ok(bytes) = read_unjudged(i.root, path, i.max_file_size) else {
        return Looked::default();
    };
    match judge_text(&bytes, i.rules) {
        Ok(()) => {}
        Err(Refusal::Binary | Refusal::SecretContent { .. }) => {
            return Looked {
                found: None,
                entry: entry(Seen::Refused),
            };
        }
        Err(_) => return Looked::default(),
    }
    let words = Words::read(&words::words(&bytes));
    if !names.held_in(&bytes) {
        return Looked {
            found: None,
            entry: entry(Seen::Admitted {
                words,
                parsed: Parsed::Not,
            }),
        };
    }
    let sha = crate::util::digest::hex(&bytes);
    let tags = crate::outline::tags_and_outline(lang, &String::from_utf8_lossy(&bytes))
        .map(|(t, outline)| index::encode_tags(&t, outline.as_deref()));
    let parsed = match &tags {
        Some(tags) => Parsed::Tags {
            sha: sha.clone(),
            tags: tags.clone(),
        },
        None => Parsed::Nothing,
    };
    Looked {
        found: tags.map(|tags| Box::new(Parse::Fresh { tags, sha })),
        entry: entry(Seen::Admitted { words, parsed }),
    }
}

/// A related file's outline (`ranges`, from the parse its tags came from), cut to the ranges
/// that hold one of the `shared` definition lines when any does, and its tokens; read again
/// as the bytes admitted (hash `sha256`).
fn outline_of(
    i: &Inputs<'_>,
    path: &str,
    sha256: &str,
    ranges: &[Range],
    shared: &[u64],
) -> Option<(Sections, u64)> {
    let repo_path = RepoPath::new(path).ok()?;
    // Admitted whole (its text may come from the index, judged in an earlier run), and the
    // bytes searched and parsed, or nothing if the file changed since.
    let bytes = admit(i.root, &repo_path, i.max_file_size, i.rules).ok()?;
    if crate::util::digest::hex(&bytes) != sha256 {
        return None;
    }
    let focused: Vec<Range> = ranges
        .iter()
        .copied()
        .filter(|[a, b]| shared.iter().any(|l| a <= l && l <= b))
        .collect();
    let mut ranges = if focused.is_empty() {
        ranges.to_vec()
    } else {
        focused
    };
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
fn reason(t: &Named, owned: &[(String, Named)], symbols: &Symbols<'_>) -> String {
    let long = |k: u32| symbols.chars(k) >= MIN_NAME;
    let name = |k: u32| String::from_utf8_lossy(symbols.name(k));
    let mut provides: BTreeMap<std::borrow::Cow<'_, str>, u32> = BTreeMap::new();
    let mut users: BTreeSet<&str> = BTreeSet::new();
    for &(d, _) in &t.defs {
        if !long(d) {
            continue;
        }
        for (p, o) in owned {
            let n = o.ref_count(d);
            if n > 0 {
                *provides.entry(name(d)).or_default() += n;
                users.insert(p.as_str());
            }
        }
    }
    let mut uses: BTreeMap<std::borrow::Cow<'_, str>, u32> = BTreeMap::new();
    for (_, o) in owned {
        for &(d, _) in &o.defs {
            let n = t.ref_count(d);
            if n > 0 && long(d) {
                *uses.entry(name(d)).or_default() += n;
            }
        }
    }
    let top = |m: BTreeMap<std::borrow::Cow<'_, str>, u32>| -> Vec<String> {
        let mut v: Vec<(std::borrow::Cow<'_, str>, u32)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
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
