//! Selecting from the task's own words (docs/selection.md): the files the task's text names
//! ([`refs`]: paths, path suffixes with a line, file names, Markdown links, numbered
//! documents; [`idents`]: the files that define the identifiers it names) join as
//! `referenced`; the files the authors of the most similar earlier tasks
//! listed ([`precedent`]), and then the files whose words it uses ([`rank`]: BM25 over each
//! file's path and text; vendored and generated files counted down, [`is_foreign`]), as
//! `related`, best first, within a token budget. Each says why in its reason.
//!
//! Every file is read through admission ([`admit`]): a file it refuses is not selected.
//! Deterministic: the order is the text's (named) and the score's, ties by path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rayon::prelude::*;

use crate::model::paths::RepoPath;
use crate::model::{Range, Sections};
use crate::stages::measure::{count_lines, selected};
use crate::stages::related::foreign::is_foreign;
use crate::stages::tokens::TokenCounter;
use crate::trust::admit::admit;
use crate::trust::secrets::ContentRules;

pub mod graph;
pub mod idents;
pub mod precedent;
pub mod rank;
pub mod refs;

/// A text that describes the task, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Text {
    /// What the reasons name: a repository path (`changes/c/plan/a.md`), `--task-text` or
    /// `the task file`.
    pub source: String,
    /// The repository folder a relative link in it starts from (`None`: the root).
    pub dir: Option<String>,
    pub text: String,
}

/// What the selection derives from the universe alone: its file names and its paths'
/// words. Made once a walk (`curate watch` keeps it while the tree's shape holds).
#[derive(Debug, Default)]
pub struct Prepared {
    names: refs::Names,
    paths: rank::PathWords,
}

impl Prepared {
    /// Of `universe` (sorted).
    #[must_use]
    pub fn new(universe: &[String]) -> Prepared {
        let (names, paths) = rayon::join(
            || refs::Names::new(universe),
            || rank::PathWords::new(universe),
        );
        Prepared { names, paths }
    }
}

/// What [`select`] needs.
pub struct Inputs<'a> {
    pub root: &'a Path,
    /// Every file a selection may name (the walk of `**`: ignore rules, no `.git`, no link
    /// out), repository-relative, sorted.
    pub universe: &'a [String],
    /// [`Prepared::new`] of `universe`.
    pub prepared: &'a Prepared,
    pub texts: &'a [Text],
    /// The workspace's other changes with their lists ([`precedent`]).
    pub precedents: &'a [precedent::Precedent],
    /// Files never selected: those listed already, and the texts' own.
    pub skip: &'a BTreeSet<String>,
    /// Tokens the selected files may take in all.
    pub budget: u64,
    pub max_file_size: u64,
    pub rules: &'a ContentRules,
    pub counter: &'a dyn TokenCounter,
    /// The word index: the files' words as last read ([`rank::rank_files`]).
    pub terms: &'a crate::stages::related::Terms,
    /// The cache folder the `--related` index is kept in (`None`: no cache), for the graph
    /// from the named files.
    pub cache: Option<std::path::PathBuf>,
    /// In `curate watch`: its `--related` index and what it knows did not change.
    pub watched: Option<graph::Watched<'a>>,
}

/// A selected file, as it enters the compile.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Found {
    pub path: String,
    /// `referenced` (named by the text) or `related` (ranked by its words).
    #[serde(deserialize_with = "kind_of")]
    pub kind: std::borrow::Cow<'static, str>,
    pub sections: Sections,
    pub tokens: u64,
    pub reason: String,
    /// How it scored (`named`, `BM25 7.31 of the best 9.12`), for `--explain`.
    pub score: String,
}

/// A [`Found`]'s kind as read back (from `curate watch`): one of the two, nothing else.
fn kind_of<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<std::borrow::Cow<'static, str>, D::Error> {
    let kind = <String as serde::Deserialize>::deserialize(d)?;
    ["referenced", "related"]
        .into_iter()
        .find(|k| *k == kind)
        .map(std::borrow::Cow::Borrowed)
        .ok_or_else(|| serde::de::Error::custom(format!("no such kind: {kind:?}")))
}

/// Lines of a named file shown around a line the text points at, on each side.
const AROUND: u64 = 40;
/// One file takes at most this part of the budget (its outline when it is larger).
const PER_FILE: u64 = 3;
/// At most this many ranked files are read for the budget.
const CONSIDERED: usize = 100;
/// A ranked file scores at least this part of the best one's score (the tail of a ranking
/// is files that share a common word or two with the text). Chosen on the benchmark's tuned
/// part (`bench/task-quality.py`), as [`CONSIDERED`] was.
const MIN_SHARE: f64 = 0.1;
/// At most this many files are read for the ranking (the first, by path); the rest are
/// ranked by their path alone.
const MAX_READ: usize = 20_000;
/// A vendored or generated file's score counts this much ([`is_foreign`]).
const FOREIGN: f64 = 0.1;

/// A file offered to the budget, and why.
struct Offer {
    path: String,
    /// How it scored, for `--explain`.
    score: String,
    /// Lines the text points at (shown with [`AROUND`] lines on each side).
    lines: Vec<u64>,
    kind: &'static str,
    reason: String,
}

/// The selected files: what most of the workspace's tasks list ([`precedent::conventional`]),
/// then the named ones in the order named, then those similar tasks listed,
/// then the files that define the identifiers named, then the ranked ones (the words'
/// ranking fused with the graph from the named files), best first, as long as they fit the
/// budget together.
#[must_use]
pub fn select(i: &Inputs<'_>) -> Vec<Found> {
    if i.budget == 0 || i.texts.iter().all(|t| t.text.trim().is_empty()) {
        return Vec::new();
    }
    let files = refs::Files::new(i.universe, &i.prepared.names);
    // The workspace's convention first (what most of its tasks list), then what the text
    // names.
    let lists = i.precedents.len();
    let mut offers: Vec<Offer> = precedent::conventional(i.precedents)
        .into_iter()
        .filter(|(p, _)| !i.skip.contains(p))
        .map(|(path, n)| Offer {
            path,
            lines: Vec::new(),
            kind: "related",
            reason: format!("listed by {n} of the workspace's {lists} tasks with a list"),
            score: format!("listed by {n} of {lists} tasks"),
        })
        .collect();
    let mut taken: BTreeSet<String> = offers.iter().map(|o| o.path.clone()).collect();
    offers.extend(
        refs::named(i.texts, &files)
            .into_iter()
            .filter(|n| !i.skip.contains(&n.path) && !taken.contains(&n.path))
            .map(|n| Offer {
                path: n.path,
                lines: n.lines,
                kind: "referenced",
                reason: format!("named in {}", n.at),
                score: "named".to_owned(),
            }),
    );
    taken.extend(offers.iter().map(|o| o.path.clone()));
    let literals = offers
        .iter()
        .any(|o| o.kind == "referenced" && is_code(&o.path));
    let read = read_all(i, &taken, literals);
    // The definitions of the names it gives come after what similar tasks listed: a task's
    // text names many identifiers, and those lists are the workspace's own curation.
    let defined: Vec<Offer> = definitions(&read.idents, &read.files)
        .into_iter()
        .filter(|o| taken.insert(o.path.clone()))
        .collect();
    let query = query(i.texts);
    let listed = precedent::listed(&query, i.precedents);
    for l in listed.into_iter().take(CONSIDERED) {
        if i.skip.contains(&l.path) || !taken.insert(l.path.clone()) {
            continue;
        }
        offers.push(Offer {
            path: l.path,
            lines: Vec::new(),
            kind: "related",
            reason: format!("listed by similar tasks: {}", names(&l.by)),
            score: format!(
                "listed by {} similar tasks, score {:.2}",
                l.by.len(),
                l.score
            ),
        });
    }
    offers.extend(defined);
    let sources = sources(i.texts);
    let seeds: Vec<String> = offers
        .iter()
        .filter(|o| o.kind == "referenced")
        .map(|o| o.path.clone())
        .collect();
    let sharing = shared_literals(i, &seeds, &read.files, &taken);
    let ranked = ranked(i, &query, &taken);
    let best = ranked.first().map_or(0.0, |r| r.score);
    let linked: Vec<graph::Linked> = graph::linked(&graph::Seeds {
        root: i.root,
        universe: i.universe,
        named: seeds,
        budget: i.budget,
        max_file_size: i.max_file_size,
        rules: i.rules,
        counter: i.counter,
        cache: i.cache.clone(),
        watched: i.watched,
    })
    .into_iter()
    .filter(|l| !i.skip.contains(&l.path) && !taken.contains(&l.path))
    .collect();
    let by_words: BTreeMap<&str, &rank::Ranked> =
        ranked.iter().map(|r| (r.path.as_str(), r)).collect();
    let mut by_graph: BTreeMap<&str, &graph::Linked> =
        linked.iter().map(|l| (l.path.as_str(), l)).collect();
    for l in &sharing {
        by_graph.entry(l.path.as_str()).or_insert(l);
    }
    let order = graph::fuse(&[
        &ranked.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
        &linked.iter().map(|l| l.path.as_str()).collect::<Vec<_>>(),
        &sharing.iter().map(|l| l.path.as_str()).collect::<Vec<_>>(),
    ]);
    for path in order {
        let (reason, score) = match (by_words.get(path), by_graph.get(path)) {
            (Some(r), None) => {
                let words: Vec<String> =
                    r.matched.iter().take(3).map(|w| format!("{w:?}")).collect();
                (
                    format!("matches {} ({sources})", words.join(", ")),
                    format!("BM25 {:.2} of the best {best:.2}", r.score),
                )
            }
            (r, Some(l)) => (
                l.reason.clone(),
                match r {
                    Some(r) => format!(
                        "linked to the named files; BM25 {:.2} of the best {best:.2}",
                        r.score
                    ),
                    None => "linked to the named files".to_owned(),
                },
            ),
            (None, None) => continue,
        };
        offers.push(Offer {
            path: path.to_owned(),
            lines: Vec::new(),
            kind: "related",
            reason,
            score,
        });
    }
    fit(i, offers)
}

/// A file of the universe as one read saw it: the named identifiers it defines, its
/// string literals. (Its words come from the kept word index: [`ranked`].)
struct Seen {
    path: String,
    /// (the identifier's index, the definition's line, its kind).
    defines: Vec<(usize, u64, &'static str)>,
    /// Its string literals' keys ([`crate::stages::related::literals`]), code only.
    literals: Vec<String>,
}

/// The files of the universe read for what the text names: those that may define a named
/// identifier, and, when a named file is code, the code that may share its literals.
struct Read {
    idents: Vec<idents::Ident>,
    files: Vec<Seen>,
}

/// Reads, once, the files of the universe (but the skipped and `taken`; the first
/// [`MAX_READ`]) that can answer what the text names: code in a language whose definitions
/// are parsed when it names identifiers, and code at all when `literals` (a named file is
/// code). Nothing is read when the text names neither.
fn read_all(i: &Inputs<'_>, taken: &BTreeSet<String>, literals: bool) -> Read {
    let idents = idents::named(i.texts);
    let search = idents::Search::new(&idents);
    if search.is_none() && !literals {
        return Read {
            idents,
            files: Vec::new(),
        };
    }
    let open: Vec<&String> = i
        .universe
        .iter()
        .filter(|p| !i.skip.contains(*p) && !taken.contains(*p))
        .take(MAX_READ)
        .collect();
    let files = open
        .par_iter()
        .filter_map(|p| {
            let lang = crate::outline::lang_for(p);
            let for_literals = literals && is_code(p);
            let for_definitions = search.is_some() && lang.is_some();
            if !for_literals && !for_definitions {
                return None;
            }
            // The word index keeps its literals and the names that may be defined in it,
            // where it holds the file as it is: read only when it may define a name given.
            if let Some(kept) = rank::kept(i.terms, p, i.max_file_size) {
                if kept.refused() {
                    return None;
                }
                let may_define = || {
                    let names = i.terms.marked(kept, rank::DEFINED)?;
                    Some(idents.iter().any(|n| names.binary_search(&n.name).is_ok()))
                };
                let literals = || i.terms.marked(kept, rank::LITERAL);
                match (for_definitions && may_define() != Some(false), for_literals) {
                    (true, _) => {}
                    (false, false) => return None,
                    (false, true) => {
                        if let Some(literals) = literals() {
                            return Some(Seen {
                                path: (*p).clone(),
                                defines: Vec::new(),
                                literals,
                            });
                        }
                    }
                }
            }
            let body = String::from_utf8_lossy(&read(i, p)?).into_owned();
            let defines = match (lang, &search) {
                (Some(lang), Some(s)) => s.definitions(&idents, lang, &body),
                _ => Vec::new(),
            };
            let literals = if for_literals {
                crate::stages::related::literals::keys(&body)
            } else {
                Vec::new()
            };
            Some(Seen {
                path: (*p).clone(),
                defines,
                literals,
            })
        })
        .collect();
    Read { idents, files }
}

/// True for a file whose string literals may be routes, events or keys: code, not a
/// document, a data file or a lock.
fn is_code(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    !path.ends_with('/')
        && !matches!(
            ext.to_ascii_lowercase().as_str(),
            "" | "md"
                | "markdown"
                | "txt"
                | "json"
                | "lock"
                | "svg"
                | "csv"
                | "yaml"
                | "yml"
                | "toml"
                | "xml"
                | "sum"
        )
}

/// The files (read, not taken) that share a string literal with the named ones.
fn shared_literals(
    i: &Inputs<'_>,
    seeds: &[String],
    files: &[Seen],
    taken: &BTreeSet<String>,
) -> Vec<graph::Linked> {
    let by_path: BTreeMap<&str, &Seen> = files.iter().map(|f| (f.path.as_str(), f)).collect();
    let named: Vec<(&str, Vec<String>)> = seeds
        .iter()
        .filter(|p| is_code(p))
        .map(|p| {
            let keys = match by_path.get(p.as_str()) {
                Some(f) => f.literals.clone(),
                None => read(i, p)
                    .map(|b| crate::stages::related::literals::keys(&String::from_utf8_lossy(&b)))
                    .unwrap_or_default(),
            };
            (p.as_str(), keys)
        })
        .collect();
    let others: Vec<(&str, &[String])> = files
        .iter()
        .filter(|f| !taken.contains(&f.path))
        .map(|f| (f.path.as_str(), f.literals.as_slice()))
        .collect();
    graph::sharing(&named, &others)
}

/// The files that define the identifiers the texts name, in the order named: a name
/// defined in more than [`refs::MAX_PLACES`] files is too common to take; one defined in
/// the project's own files as well as in vendored or generated ones is the project's.
fn definitions(idents: &[idents::Ident], files: &[Seen]) -> Vec<Offer> {
    let mut out: Vec<Offer> = Vec::new();
    for (k, ident) in idents.iter().enumerate() {
        let mut places: Vec<(&str, Vec<u64>)> = files
            .iter()
            .filter_map(|f| {
                let lines: Vec<u64> = f.defines.iter().filter(|d| d.0 == k).map(|d| d.1).collect();
                (!lines.is_empty()).then_some((f.path.as_str(), lines))
            })
            .collect();
        if places.iter().any(|(p, _)| !is_foreign(p)) {
            places.retain(|(p, _)| !is_foreign(p));
        }
        if places.len() > refs::MAX_PLACES {
            continue;
        }
        for (path, lines) in places {
            match out.iter_mut().find(|o| o.path == path) {
                Some(o) => {
                    o.lines.extend(lines);
                    o.reason = o
                        .reason
                        .replacen(", named", &format!(", {}, named", ident.name), 1);
                }
                None => out.push(Offer {
                    path: path.to_owned(),
                    lines,
                    kind: "referenced",
                    reason: format!("defines {}, named in {}", ident.name, ident.at),
                    score: "named".to_owned(),
                }),
            }
        }
    }
    out
}

/// The offers that fit the budget together, in their order, each at its largest rung that
/// still fits; each file at most [`PER_FILE`]'s part of it.
fn fit(i: &Inputs<'_>, offers: Vec<Offer>) -> Vec<Found> {
    let per_file = (i.budget / PER_FILE).max(1);
    let read: Vec<Vec<(Sections, u64)>> =
        offers.par_iter().map(|o| fitted(i, o, per_file)).collect();
    let mut out: Vec<Found> = Vec::new();
    let mut used = 0u64;
    for (o, rungs) in offers.into_iter().zip(read) {
        // Its first rung that still fits: the whole (or the lines named), else its outline.
        let Some((sections, tokens)) = rungs.into_iter().find(|(_, t)| used + t <= i.budget) else {
            continue;
        };
        used += tokens;
        out.push(Found {
            path: o.path,
            kind: o.kind.into(),
            sections,
            tokens,
            reason: o.reason,
            score: o.score,
        });
    }
    out
}

/// The tasks' names for a reason: the first three, and how many more.
fn names(by: &[String]) -> String {
    match by.len() {
        0..=3 => by.join(", "),
        n => format!("{} and {} more", by[..3].join(", "), n - 3),
    }
}

/// The texts, one query.
fn query(texts: &[Text]) -> String {
    texts
        .iter()
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The texts' sources for a reason: the first, and how many more.
fn sources(texts: &[Text]) -> String {
    let with_text: Vec<&str> = texts
        .iter()
        .filter(|t| !t.text.trim().is_empty())
        .map(|t| t.source.rsplit('/').next().unwrap_or(&t.source))
        .collect();
    match with_text.as_slice() {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [first, rest @ ..] => format!("{first} and {} more", rest.len()),
    }
}

/// The universe ranked against the texts (each file's words from the kept word index),
/// without the skipped and the taken files, vendored and generated files counted down
/// ([`FOREIGN`]): at most [`CONSIDERED`], best first.
fn ranked(i: &Inputs<'_>, query: &str, taken: &BTreeSet<String>) -> Vec<rank::Ranked> {
    let open: Vec<usize> = (0..i.universe.len())
        .filter(|&k| !i.skip.contains(&i.universe[k]) && !taken.contains(&i.universe[k]))
        .collect();
    let texts = rank::Texts {
        root: i.root,
        max_file_size: i.max_file_size,
        rules: i.rules,
        terms: i.terms,
    };
    let mut ranked = rank::rank_files(
        query,
        i.universe,
        &i.prepared.paths,
        &open,
        MAX_READ,
        &texts,
    );
    for r in &mut ranked {
        if is_foreign(&r.path) {
            r.score *= FOREIGN;
        }
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    let floor = ranked.first().map_or(0.0, |best| best.score * MIN_SHARE);
    ranked.retain(|r| r.score >= floor);
    ranked.truncate(CONSIDERED);
    ranked
}

/// The file's bytes, when admission lets them in.
fn read(i: &Inputs<'_>, path: &str) -> Option<Vec<u8>> {
    let rp = RepoPath::new(path).ok()?;
    admit(i.root, &rp, i.max_file_size, i.rules).ok()
}

/// The rungs of the offer's file that fit `per_file` tokens, largest first, each with its
/// tokens: the lines around those named (else the whole file), then its outline; none when
/// it cannot be read or even its outline is over. [`fit`] takes the first that still fits
/// the budget: a file degrades to its outline before it is dropped.
fn fitted(i: &Inputs<'_>, o: &Offer, per_file: u64) -> Vec<(Sections, u64)> {
    let path = o.path.as_str();
    let Some(bytes) = read(i, path) else {
        return Vec::new();
    };
    let total = count_lines(&bytes);
    let around: Vec<Range> = o
        .lines
        .iter()
        .filter(|&&l| l <= total)
        .map(|&l| [l.saturating_sub(AROUND).max(1), (l + AROUND).min(total)])
        .collect();
    let mut tries = Vec::new();
    if around.is_empty() {
        tries.push(Sections::Whole);
    } else {
        tries.push(Sections::ranges(around));
    }
    if let Some(lang) = crate::outline::lang_for(path)
        && let Ok(text) = std::str::from_utf8(&bytes)
        && let Some(outline) = crate::outline::outline(lang, text)
        && !outline.is_empty()
    {
        tries.push(Sections::ranges(outline));
    }
    tries
        .into_iter()
        .filter_map(|sections| {
            let tokens = i.counter.count(&selected(&bytes, &sections));
            (tokens <= per_file && tokens > 0).then_some((sections, tokens))
        })
        .collect()
}
