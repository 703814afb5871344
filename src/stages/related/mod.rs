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
pub mod central;
mod codec;
pub mod foreign;
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
    /// Offered as one of the repository's central files ([`central`]), not for an edge to
    /// the owned ones.
    #[serde(default)]
    pub central: bool,
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

/// The related files, best first, whose outlines fit the budget together: those the graph
/// from the owned files ranks, then, in what they leave of the budget (all of it when an
/// owned file has no edge or none is parsed), the repository's central files near them
/// ([`central`]).
#[must_use]
pub fn related(i: &Inputs<'_>) -> Vec<Found> {
    ranked(i, true)
}

/// [`related`]'s files from the graph alone: no central file fills the budget (the task's
/// words, docs/selection.md, fill it from the text instead).
#[must_use]
pub fn linked(i: &Inputs<'_>) -> Vec<Found> {
    ranked(i, false)
}

/// The graph's files, then the central ones when `central` and the graph leaves any of the
/// budget.
fn ranked(i: &Inputs<'_>, central: bool) -> Vec<Found> {
    if i.budget == 0 {
        return Vec::new();
    }
    let owned: Vec<(String, Tags)> = i
        .owned
        .iter()
        .filter_map(|p| Some((p.clone(), owned_tags(i, p)?)))
        .collect();
    let mut parses = Parses {
        symbols: Symbols::new(i.index.vocab()),
        files: Vec::new(),
        admitted: BTreeMap::new(),
    };
    let started = SystemTime::now();
    let (mut out, searched) = if owned.is_empty() {
        (Vec::new(), None)
    } else {
        let (out, kept) = by_graph(i, &owned, &mut parses);
        (out, Some(kept))
    };
    let used: u64 = out.iter().map(|f| f.tokens).sum();
    let left = i.budget.saturating_sub(used);
    let mut parsed = Vec::new();
    if central && left > 0 {
        let (central, kept) = by_centrality(i, &mut parses, &out, left);
        out.extend(central);
        parsed = kept;
    }
    if i.index.is_enabled() {
        keep(i, searched, parsed, started);
    }
    out
}

/// Sets what the index keeps of this run: what the search learnt of each file (`searched`,
/// `None` when nothing was searched), and the central candidates parsed (`parsed`), whose
/// entries, with their tags, stand before the search's of the same files.
fn keep(i: &Inputs<'_>, searched: Option<Vec<Keep>>, parsed: Vec<Keep>, started: SystemTime) {
    match searched {
        Some(searched) => i.index.keep(parsed.into_iter().chain(searched), started),
        None if !parsed.is_empty() => {
            // Nothing was searched: every source file's entry stays as loaded.
            let code: Vec<&String> = i
                .universe
                .iter()
                .filter(|p| crate::outline::lang_for(p).is_some_and(|l| l != Lang::Markdown))
                .collect();
            let loaded = i
                .index
                .get_each(&code)
                .into_iter()
                .flatten()
                .map(|(at, _)| Keep::Loaded(at));
            i.index.keep(parsed.into_iter().chain(loaded), started);
        }
        None => {}
    }
}

/// The files parsed in a run, for the rankings: names as ids (the index's as loaded, those
/// of this run's parses numbered after them), each file's tags, and the hash each file was
/// admitted with (its outline is read again as those bytes) with the outline of its parse.
struct Parses<'v> {
    symbols: Symbols<'v>,
    files: Vec<(String, Named)>,
    admitted: BTreeMap<String, (String, Option<Vec<Range>>)>,
}

/// The files the graph from the `owned` files (with their tags) ranks, best first, within
/// the budget, and what the index is to keep of the files searched; what it parsed is left
/// in `parses`.
fn by_graph(
    i: &Inputs<'_>,
    owned: &[(String, Tags)],
    parses: &mut Parses<'_>,
) -> (Vec<Found>, Vec<Keep>) {
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
        return (Vec::new(), Vec::new());
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
    let mut kept: Vec<Keep> = Vec::new();
    for (p, l) in others.iter().zip(looked) {
        kept.extend(l.entry);
        if let Some(parse) = l.found {
            parses.take((*p).clone(), *parse);
        }
    }
    let symbols = &mut parses.symbols;
    let owned: Vec<(String, Named)> = owned
        .iter()
        .map(|(p, t)| (p.clone(), symbols.number(t)))
        .collect();
    let owned_names: BTreeSet<u32> = names.iter().map(|n| symbols.id(n.as_bytes())).collect();
    parses.files.extend(owned.iter().cloned());
    let (files, symbols, admitted) = (&parses.files, &parses.symbols, &parses.admitted);
    let owned_paths: Vec<String> = owned.iter().map(|(p, _)| p.clone()).collect();
    let ranked = crate::outline::rank_named(files, symbols, &owned_paths, CONSIDERED);
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
            Some(t) => reason(t, &owned, symbols),
            None => "related to the owned files".to_owned(),
        };
        out.push(Found {
            path: path.clone(),
            sections,
            tokens,
            reason,
            score: *score,
            central: false,
        });
    }
    (out, kept)
}

impl Parses<'_> {
    /// Takes a file's parse (numbering its names when parsed in this run); a parse whose
    /// names do not number is left out.
    fn take(&mut self, path: String, parse: Parse) {
        let ((named, outline), sha) = match parse {
            Parse::Kept {
                named,
                outline,
                sha,
            } => ((named, outline), sha),
            Parse::Fresh { tags, sha } => match index::number(&tags, &mut self.symbols) {
                Some(numbered) => (numbered, sha),
                None => return,
            },
        };
        self.admitted.insert(path.clone(), (sha, outline));
        self.files.push((path, named));
    }
}

/// The central files near the owned ones ([`central`]), best first, that are not `taken`
/// already, within `left` tokens, and the index's entries of the candidates parsed here: a
/// candidate not parsed yet is taken as the index keeps it when its stamp is the one kept,
/// else read and parsed.
fn by_centrality(
    i: &Inputs<'_>,
    parses: &mut Parses<'_>,
    taken: &[Found],
    left: u64,
) -> (Vec<Found>, Vec<Keep>) {
    let parsed: BTreeSet<String> = parses.files.iter().map(|(p, _)| p.clone()).collect();
    let skip: BTreeSet<&str> = i
        .owned
        .iter()
        .map(String::as_str)
        .chain(taken.iter().map(|f| f.path.as_str()))
        .collect();
    let candidates = central::candidates(i.universe, &i.owned, &|p| skip.contains(p));
    let fresh: Vec<(&String, Lang)> = candidates
        .iter()
        .filter(|(p, _)| !parsed.contains(p.as_str()))
        .copied()
        .collect();
    let base = Base::open(i.root);
    let found: Vec<Looked> = fresh
        .par_iter()
        .map(|&(p, lang)| parse_candidate(i, &base, p, lang))
        .collect();
    let mut kept = Vec::new();
    for ((p, _), looked) in fresh.iter().zip(found) {
        kept.extend(looked.entry);
        if let Some(parse) = looked.found {
            parses.take((*p).clone(), *parse);
        }
    }
    let ranked = central::rank(
        &parses.files,
        &parses.symbols,
        (&|p| skip.contains(p), &|p| central::nearness(&i.owned, p)),
        CONSIDERED,
    );
    let admitted = &parses.admitted;
    let outlined: Vec<Option<(Sections, u64)>> = ranked
        .par_iter()
        .map(|c| {
            let (sha, outline) = admitted.get(c.path.as_str())?;
            outline_of(i, &c.path, sha, outline.as_deref()?, &c.lines)
        })
        .collect();
    let mut out = Vec::new();
    let mut used = 0u64;
    for (c, outline) in ranked.iter().zip(outlined) {
        let Some((sections, tokens)) = outline else {
            continue;
        };
        if used + tokens > left {
            continue;
        }
        used += tokens;
        out.push(Found {
            path: c.path.clone(),
            sections,
            tokens,
            reason: central::reason(c),
            score: f64::from(c.referrers),
            central: true,
        });
    }
    (out, kept)
}

/// A central candidate's parse: as the index keeps it when its stamp is the one kept, else
/// read through admission and parsed (its path judged first, as [`look`] does), with the
/// entry the index is to keep of it then.
fn parse_candidate(i: &Inputs<'_>, base: &Base, path: &str, lang: Lang) -> Looked {
    let none = Looked::default();
    if !crate::model::paths::is_normal(path)
        || crate::trust::secrets::by_path(path).is_some()
        || i.rules.scan_path(path).is_some()
    {
        return none;
    }
    let kept = i.index.get(path);
    let stamp = if i.index.is_enabled() {
        stamp_of(i, base, path, kept)
    } else {
        None
    };
    if let (
        Some(s),
        Some(Entry {
            stamp,
            seen:
                Seen::Admitted {
                    parsed: Parsed::Tags { sha, tags },
                    ..
                },
            ..
        }),
    ) = (stamp, kept)
        && *stamp == s
        && let Some((named, outline)) = i.index.named(tags)
    {
        return Looked {
            found: Some(Box::new(Parse::Kept {
                named,
                outline,
                sha: sha.clone(),
            })),
            entry: None,
        };
    }
    let Ok(repo_path) = RepoPath::new(path) else {
        return none;
    };
    let Ok(bytes) = admit(i.root, &repo_path, i.max_file_size, i.rules) else {
        return none;
    };
    let sha = crate::util::digest::hex(&bytes);
    let Some((tags, outline)) =
        crate::outline::tags_and_outline(lang, &String::from_utf8_lossy(&bytes))
    else {
        return none;
    };
    let tags = index::encode_tags(&tags, outline.as_deref());
    let entry = stamp.map(|stamp| {
        Keep::from(Entry {
            path: path.to_owned(),
            stamp,
            seen: Seen::Admitted {
                words: Words::read(&words::words(&bytes)),
                parsed: Parsed::Tags {
                    sha: sha.clone(),
                    tags: tags.clone(),
                },
            },
        })
    });
    Looked {
        found: Some(Box::new(Parse::Fresh { tags, sha })),
        entry,
    }
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

/// The stamp of `path` now, `kept` its entry in the index: a process that stays takes the
/// kept one where it knows the file did not change.
fn stamp_of(i: &Inputs<'_>, base: &Base, path: &str, kept: Option<&Entry>) -> Option<Stamp> {
    match (i.unchanged, kept) {
        (Some(u), Some(e)) if u.file(path) => Some(e.stamp),
        _ => base.file(path),
    }
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
    // Taken before the read: a change after it moves the stamp, and is read next time.
    let stamp = stamp_of(i, base, path, kept.map(|(_, e)| e));
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
