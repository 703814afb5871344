//! The compile: one request ([`CompileSettings`]) in, one [`Compiled`] out, nothing
//! written (the compile operation above writes it). [`compile_then`] reads top-down, one line a
//! stage, each stage a module of `crate::stages`:
//!
//! 1. the contracts and the role (`stages::contract`), their globs checked;
//! 2. layers 0 and 1: the role's baseline and the owned module (`stages::expand`, with
//!    `stages::ignore`), then the files the workflow derives;
//! 3. layer 2: the author's list (`author`), the overrides file, `--add`, `--drop` and
//!    curation comments (`stages::overrides`);
//! 4. related files around the owned ones (`stages::related`), then what the task's own
//!    words name and talk about (`task`, `stages::task_words`); what the consumer injects
//!    itself left out;
//! 5. secrets by name, then the truth files that changed (`stages::truth`);
//! 6. every file read once through the trust boundary and measured (`stages::measure`:
//!    lines, sections, anchors, tokens, with the caches of `caches`);
//! 7. the budget (`stages::budget`, the ladder of `stages::degrade`), the status settled
//!    by the workflow;
//! 8. each file's fate (`fates`): kept, lowered or left out;
//! 9. the manifest's text (`stages::manifest`) and its `lock`, into a [`Compiled`]
//!    (`result`).

mod author;
mod caches;
mod fates;
mod lock;
mod result;
pub mod task;
mod watched;

pub use author::AUTHOR_KIND;
pub use caches::{VERDICTS_FROM, known_files, token_cache, verdict_cache};
pub(crate) use result::Withheld;
pub use result::{Compiled, Dropped, Elsewhere, Kept, Trace, Workflowed};

use author::{
    WriteBack, author_layer, leave_out_injected, read_author_list, reserve_for_injected,
    without_lines_of,
};
use caches::cache_dir;
use fates::{cut_entry, finish, keep};
use lock::lock;
use task::with_task_words;
use watched::ask_watcher;

use crate::stages::{
    anchors, authored, budget, contract, degrade, expand, known, manifest, measure, overrides,
    related, task_words, tokens, truth,
};

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::Caps;
use crate::model::FileRef;
use crate::model::{Entry, Priority, Sections, generated_reason, quoted};
use crate::model::{Exclusion, Note};
use crate::settings::{CompileSettings, Workspace};
use crate::trust::admit::{self, Held};
use crate::util::cache::DigestCache;
use budget::{Allocation, Degraded, Item, Overrun, Rule, Status, Step};
use contract::{Contracts, Role};
use expand::{Candidate, Origin, Request, Scope};
use known::Known;
use manifest::{Inputs, Lock, LockContracts, LockEntry};
use measure::{Fate, Limits, Measured};
use overrides::Directive;
use tokens::Cached;
use tokens::{Fast, TokenCounter};

use crate::model::paths::RepoPath;

/// What the stages decide about files on the way, gathered for the report and the
/// curation lines.
#[derive(Debug, Default)]
struct Ledger {
    notes: Vec<Note>,
    excluded: Vec<Exclusion>,
    dropped: Vec<Dropped>,
    indexed: Vec<Dropped>,
    traces: Vec<Trace>,
    /// Truth files changed since the change began.
    changed_truth: Vec<String>,
    /// Every entry's tokens were counted (`--max-tokens`, `--explain`). Otherwise an entry
    /// the budgets cut is not counted, and its count is not shown even when the token
    /// cache happens to hold it: the report is the same whatever the cache holds.
    counted_all: bool,
}

impl Ledger {
    /// An entry a cap removed: dropped, or named only (`indexed`): its note, trace and row.
    fn cut(&mut self, c: &Candidate, m: &Measured, rule: Rule, indexed: bool) {
        let (note, fate) = if indexed {
            (
                format!(
                    "named {} only ({}, {} lines), not read: an index line, by the {}",
                    quoted(&c.path),
                    c.priority,
                    m.lines,
                    rule.describe()
                ),
                format!("named only (an index line) by the {}", rule.describe()),
            )
        } else {
            (
                format!(
                    "dropped {} ({}, {} lines) by the {}",
                    quoted(&c.path),
                    c.priority,
                    m.lines,
                    rule.describe()
                ),
                format!("dropped by the {}", rule.describe()),
            )
        };
        self.notes.push(Note::info(note));
        let tokens = m.tokens.filter(|_| self.counted_all);
        self.traces.push(Trace {
            tokens,
            ..trace(c, Some(m), &fate)
        });
        let row = cut_entry(c, m, rule, tokens);
        if indexed {
            self.indexed.push(row);
        } else {
            self.dropped.push(row);
        }
    }

    fn exclude(&mut self, c: &Candidate, reason: &str) {
        self.traces
            .push(trace(c, None, &format!("excluded: {reason}")));
        self.excluded.push(Exclusion::new(&c.path, reason));
    }
}

/// Runs layers 0–2, secrets, measurement and budgets in memory, one stage a line.
pub fn compile(ws: &Workspace, s: &CompileSettings) -> Result<Compiled> {
    compile_then(ws, s, |_, _| {})
}

/// [`compile`], calling `on_kept` with what a READY compile keeps and the bytes it holds as
/// soon as the budgets have decided (before the manifest's text and the rest are made): a
/// render starts reading its excerpts there.
pub fn compile_then(
    ws: &Workspace,
    s: &CompileSettings,
    on_kept: impl FnOnce(&[Kept], &std::sync::Arc<Held>),
) -> Result<Compiled> {
    let contracts = ws.load_contracts()?;
    let role = ws.contract_role_of(&contracts, &s.contract_role)?.clone();
    let scope = Scope {
        root: &ws.root,
        changes_root: &ws.changes_root,
        change: &s.change,
        ignore: !s.no_ignore,
        own: expand::OwnFiles::new(&ws.config.manifest, &ws.changes_root, &s.change),
    };
    check_contract_globs(&contracts, &role, &scope)?;
    let mut ledger = Ledger {
        counted_all: s.caps.max_tokens > 0 || s.explain,
        ..Ledger::default()
    };
    if let Some(w) = &ws.changes_warning {
        // Not in the manifest: writing it makes the folder, and the next compile, the same
        // in all else, would differ from it.
        ledger.notes.push(Note::warning(w.clone()).report_only());
    }
    let candidates = expand_layers(&scope, &contracts, &role, s, &mut ledger)?;
    let candidates = with_derived(ws, s, candidates, &mut ledger);
    let author = read_author_list(ws, s)?;
    let (candidates, overrides) =
        apply_overrides(ws, &scope, s, candidates, author.as_ref(), &mut ledger)?;
    let cache = token_cache(ws);
    let fast = Fast(ws.encoding);
    let counter = Cached::new(&cache, &fast);
    // Walked once, and only when `--related` or the task's words rank the repository.
    let universe = Universe {
        ws,
        scope: &scope,
        walked: std::sync::OnceLock::new(),
    };
    let candidates = with_related(ws, &universe, s, &counter, candidates, &mut ledger)?;
    let mut candidates = with_task_words(ws, &universe, s, &counter, candidates, &mut ledger)?;
    let consumer_injects = leave_out_injected(ws, s, &mut candidates, &mut ledger);
    if !ws.config.sections {
        // The consumer inlines whole files (Trellis): the budget must count what it reads.
        for c in &mut candidates {
            c.sections = Sections::Whole;
        }
    }
    let candidates = exclude_secrets(candidates, &mut ledger)?;
    let drift = truth::drift(&ws.root, &ws.changes_root, &s.change, s.max_file_size);
    ledger.notes.extend(drift.notes);
    ledger.changed_truth = drift.changed;
    let held = held_for(s);
    let verdicts = verdict_cache(ws, candidates.len());
    let known = known_files(ws, candidates.len());
    let reading = measure::Reading {
        root: &ws.root,
        limits: Limits {
            max_file_size: s.max_file_size,
            cut_bytes: s.caps.file_bytes,
        },
        rules: admit::rules()?,
        verdicts: &verdicts,
        counter: &counter,
        count_all: ledger.counted_all,
        held: &held,
        known: &known,
    };
    let measured = measure_candidates(ws, reading, candidates, &mut ledger)?;
    ledger.notes.extend(
        ws.workflow()
            .settings_warnings(&ws.root)
            .into_iter()
            .map(|w| Note::warning(w.to_string())),
    );
    let caps = reserve_for_injected(ws, s, &mut ledger);
    let (mut allocation, lowered) = allocate(ws, s, reading, &measured, caps, &mut ledger);
    settle_status(ws, &mut allocation, consumer_injects, &mut ledger);
    let kept = keep(
        ws,
        s,
        reading,
        &measured,
        &allocation,
        &lowered,
        &mut ledger,
    );
    if let Ok(kept) = &kept
        && allocation.status == Status::Ready
    {
        on_kept(kept, &held);
    }
    if s.related > 0 {
        note_related_only_named(kept.as_ref().ok(), caps, &mut ledger);
    }
    // The caches are an optimisation: a failed save changes nothing else.
    let _ = cache.save();
    let _ = verdicts.save();
    let _ = known.save();
    Ok(finish(
        ws,
        s,
        &contracts,
        role,
        kept?,
        &allocation,
        overrides,
        ledger,
        held,
    ))
}

/// What is admitted, held for the count, the outlines and the render: read once (spooled
/// past the memory hold when a render follows).
fn held_for(s: &CompileSettings) -> std::sync::Arc<Held> {
    std::sync::Arc::new(if s.renders {
        Held::spooling(admit::HOLD_BYTES, crate::trust::spool::SPOOL_BYTES)
    } else {
        Held::new(admit::HOLD_BYTES)
    })
}

/// The status the budget gave, settled by what the workflow says: a consumer that injects
/// the change's own files is not BLOCKED by an empty list; a change the workflow has not
/// created is; an author's list over the consumer's bytes is the author's to cut.
fn settle_status(
    ws: &Workspace,
    allocation: &mut Allocation,
    consumer_injects: bool,
    ledger: &mut Ledger,
) {
    if allocation.status == Status::Blocked && consumer_injects {
        // Nothing to list, but the consumer injects the change's own files: not BLOCKED.
        allocation.status = Status::Ready;
    }
    if missing_change_blocks(ws) {
        // A workflow's changes are made by its own tools: curate does not create one (and
        // writes nothing that would look like one).
        ledger.notes.push(Note::warning(format!(
            "nothing is written for a change that {} has not created",
            ws.workflow().name()
        )));
        allocation.status = Status::Blocked;
        allocation.overrun = None;
    }
    if ws.workflow().authored() && allocation.overrun.is_some_and(|o| o.measure == "bytes") {
        // The author's list is the author's: the consumer cuts it as it always does, and
        // the report says what it will leave out (`fates::left_out`).
        allocation.overrun = None;
        allocation.status = Status::Ready;
    }
}

/// A warning when `--related` found files but the soft cap let none be read (each is only
/// named on its index line).
fn note_related_only_named(kept: Option<&Vec<Kept>>, caps: Caps, ledger: &mut Ledger) {
    let related_read = kept.map_or(0, |k| {
        k.iter().filter(|k| k.entry.kind == "related").count()
    });
    if related_read == 0
        && ledger
            .indexed
            .iter()
            .any(|d| d.kind == "related" && d.rule == "soft_cap")
    {
        ledger.notes.push(Note::warning(format!(
            "--related: the soft cap names every related file only (more than {} high and medium files): raise --max-files to read their outlines",
            caps.max_files
        )));
    }
}

/// Layers 0 and 1: the role's baseline and the assigned module, expanded and merged.
fn expand_layers(
    scope: &Scope<'_>,
    contracts: &Contracts,
    role: &Role,
    s: &CompileSettings,
    ledger: &mut Ledger,
) -> Result<Vec<Candidate>> {
    let embedded = matches!(contracts.source, contract::Source::Embedded(_));
    let requests = expand::with_plan_file(scope, &requests(role, s, embedded));
    let expanded = expand::expand(scope, &requests)?;
    ledger.notes.extend(expanded.notes);
    ledger.excluded.extend(expanded.excluded);
    Ok(expand::merge(&expanded.picks, &requests))
}

/// The overrides file as read: its curation lines and its path and hash (when it exists),
/// and how the author's list is written back (a workflow whose authors write it).
#[derive(Debug)]
struct OverridesRead {
    curation: Vec<String>,
    file: Option<FileRef>,
    write_back: Option<WriteBack>,
}

/// Layer 2: the overrides file, then `--add`, then `--drop`. Returns the candidates and the
/// overrides file that was read (with its curation lines).
fn apply_overrides(
    ws: &Workspace,
    scope: &Scope<'_>,
    s: &CompileSettings,
    mut candidates: Vec<Candidate>,
    author: Option<&(String, authored::Authored)>,
    ledger: &mut Ledger,
) -> Result<(Vec<Candidate>, OverridesRead)> {
    let (parsed, overrides_file) = read_overrides(ws, s)?;
    // The author's list first, in the author's order and ahead of the baseline (a baseline
    // file the author lists is the author's entry); then the delegator's overrides, then the
    // command line.
    let (mut directives, write_back) = match author {
        Some((rel, list)) => {
            let (mut entries, drops, back) = author_layer(ws, scope, rel, list, ledger);
            for c in candidates {
                match entries.iter_mut().find(|a| a.path == c.path) {
                    Some(a) => a.merged.push(c.origin),
                    None => entries.push(c),
                }
            }
            candidates = entries;
            (drops, Some(back))
        }
        None => (Vec::new(), None),
    };
    directives.extend(parsed.directives);
    directives.extend(s.add.iter().cloned().map(Directive::Upsert));
    directives.extend(s.drop.iter().map(|g| Directive::Drop {
        glob: g.clone(),
        why: None,
        origin: Origin::Drop(g.clone()),
    }));
    let mut named: Vec<(String, Origin)> = Vec::new();
    let mut resolve_file = |file: &str, origin: &Origin| -> Result<String> {
        let path = scope.resolve(file, origin)?;
        if !ws.root.join(&path).exists() {
            return Err(Error::Failed(format!(
                "{}: {} does not exist",
                origin.in_errors(),
                quoted(&path)
            )));
        }
        named.push((path.clone(), origin.clone()));
        Ok(path)
    };
    let pattern = |glob: &str, origin: &Origin| scope.resolve(glob, origin);
    let applied = overrides::apply(&mut candidates, &directives, &mut resolve_file, &pattern)?;
    ledger.notes.extend(applied.notes);
    // A file named literally is taken even when the ignore rules would hide it, with a note
    // (as for contract and assigned literals).
    let mut rules = crate::stages::ignore::IgnoreRules::new(&ws.root, !s.no_ignore);
    for (path, origin) in &named {
        if rules.is_ignored(path, false) {
            ledger.notes.push(Note::info(format!(
                "{} is ignored by the ignore rules but named literally ({}), so it is taken",
                quoted(path),
                origin.describe()
            )));
        }
    }
    for (c, origin) in applied.dropped {
        ledger.traces.push(trace(
            &c,
            None,
            &format!("dropped by {}", origin.describe()),
        ));
        ledger.dropped.push(Dropped {
            file: c.path,
            priority: c.priority,
            kind: c.kind,
            lines: None,
            tokens: None,
            rule: "override".to_owned(),
            by: origin.describe(),
        });
    }
    Ok((
        candidates,
        OverridesRead {
            curation: parsed.curation,
            file: overrides_file,
            write_back,
        },
    ))
}

/// `--related`: the files most related to the owned ones, as low-priority outlines within
/// the token budget, after the layers (a file already selected stays as it is).
fn with_related(
    ws: &Workspace,
    universe: &Universe<'_, '_>,
    s: &CompileSettings,
    counter: &dyn TokenCounter,
    mut candidates: Vec<Candidate>,
    ledger: &mut Ledger,
) -> Result<Vec<Candidate>> {
    if s.related == 0 {
        return Ok(candidates);
    }
    let is_owned = |o: &Origin| matches!(o, Origin::Owns(_) | Origin::TaskOwned(_));
    let owned: Vec<String> = candidates
        .iter()
        .filter(|c| is_owned(&c.origin) || c.merged.iter().any(is_owned))
        .map(|c| c.path.clone())
        .collect();
    if owned.is_empty() {
        ledger.notes.push(Note::warning(
            "--related: no owned file to rank from (give --owns or a task file's files_owned)"
                .to_owned(),
        ));
        return Ok(candidates);
    }
    let dir = cache_dir(ws);
    let asking = related::ask::Asking::Related {
        owned: owned.clone(),
        budget: s.related,
    };
    // A watcher's answer is the list this run would make (docs/budgets.md#related-files).
    let found = match ask_watcher(
        ws,
        universe.scope,
        s.max_file_size,
        asking,
        "--related",
        ledger,
    ) {
        Some(answer) => answer.found,
        None => {
            // The index loads while the tree is walked.
            let (walked, index) =
                rayon::join(|| universe.get(), || related::Index::open(dir, &ws.root));
            let found = related::related(&related::Inputs {
                root: &ws.root,
                universe: walked?,
                owned,
                budget: s.related,
                max_file_size: s.max_file_size,
                rules: admit::rules()?,
                counter,
                index: &index,
                unchanged: None,
            });
            // The index is an optimisation: a failed save changes nothing else.
            let _ = index.save();
            found
        }
    };
    let tokens: u64 = found.iter().map(|f| f.tokens).sum();
    // The central files that filled what the graph left, said apart.
    let central = match found.iter().filter(|f| f.central).count() {
        0 => String::new(),
        n => format!(" ({n} of them central)"),
    };
    ledger.notes.push(Note::info(format!(
        "--related {}: {} file{} related to the owned ones{central}, {tokens} tokens of outlines",
        s.related,
        found.len(),
        if found.len() == 1 { "" } else { "s" }
    )));
    for f in found {
        if candidates.iter().any(|c| c.path == f.path) {
            continue;
        }
        candidates.push(Candidate {
            path: f.path,
            priority: Priority::Low,
            kind: "related".to_owned(),
            sections: f.sections,
            reason: Some(f.reason),
            origin: Origin::Related,
            merged: Vec::new(),
        });
    }
    Ok(candidates)
}

/// Every file `--related` and the task's words may rank ([`related_universe`]), walked
/// once a compile, when one of them first asks.
struct Universe<'a, 's> {
    ws: &'a Workspace,
    scope: &'a Scope<'s>,
    walked: std::sync::OnceLock<Vec<String>>,
}

impl Universe<'_, '_> {
    fn get(&self) -> Result<&[String]> {
        if let Some(walked) = self.walked.get() {
            return Ok(walked);
        }
        // The folders are listed as kept when their stamps are; a cache, as the index: a
        // failed save changes nothing else.
        let listings = related::Listings::open(cache_dir(self.ws), &self.ws.root);
        let walked = related_universe(self.scope, &listings)?;
        let _ = listings.save();
        Ok(self.walked.get_or_init(|| walked))
    }
}

/// Every file `--related` may rank: the walk of `**` in `scope`, folders listed through
/// `listings`.
pub fn related_universe(scope: &Scope<'_>, listings: &related::Listings) -> Result<Vec<String>> {
    let every = Request {
        pattern: "**".to_owned(),
        origin: Origin::Related,
        priority: Priority::Low,
        kind: "related".to_owned(),
        sections: Sections::Whole,
        reason: None,
        optional: true,
    };
    let walked = expand::expand_listed(scope, &[every], listings)?;
    Ok(walked.picks.into_iter().map(|p| p.path).collect())
}

/// Secrets by name, whoever named the file (the content rules run while reading).
fn exclude_secrets(candidates: Vec<Candidate>, ledger: &mut Ledger) -> Result<Vec<Candidate>> {
    use rayon::prelude::*;
    let rules = admit::rules()?;
    let mut withheld = Withheld::default();
    // The rules looked up in parallel (a bulk bundle has thousands of paths), the verdicts
    // taken in order.
    let verdicts: Vec<(Option<&'static str>, Option<&'static str>)> = candidates
        .par_iter()
        .map(
            |c: &Candidate| match crate::trust::secrets::by_path(&c.path) {
                Some(rule) => (Some(rule), None),
                None => (None, rules.scan_path(&c.path)),
            },
        )
        .collect();
    let candidates = candidates
        .into_iter()
        .zip(verdicts)
        .filter(|(c, verdict)| match *verdict {
            (Some(rule), _) => {
                ledger.exclude(c, &format!("secret: {rule}"));
                false
            }
            (None, withheld_by) => withheld.counts(withheld_by),
        })
        .map(|(c, _)| c)
        .collect();
    ledger.excluded.retain(|e| withheld.keeps(rules, &e.file));
    ledger.notes.extend(withheld.notes());
    Ok(candidates)
}

/// Reads every candidate in parallel: lines, sections, content rules, and tokens when a
/// token cap or `--explain` needs them all (or the cache already has them).
/// A candidate's path as the admission functions take it (expansion normalised it already;
/// this only makes the type say so).
fn repo_path(c: &Candidate) -> Result<RepoPath> {
    RepoPath::new(&c.path).map_err(|e| Error::Escape {
        origin: c.origin.describe(),
        path: c.path.clone(),
        problem: e.problem(),
    })
}

fn measure_candidates(
    ws: &Workspace,
    reading: measure::Reading<'_>,
    candidates: Vec<Candidate>,
    ledger: &mut Ledger,
) -> Result<Vec<(Candidate, Measured)>> {
    let inputs: Vec<(RepoPath, Sections)> = candidates
        .iter()
        .map(|c| Ok((repo_path(c)?, c.sections.clone())))
        .collect::<Result<_>>()?;
    let fates = measure::read_all(
        reading,
        &inputs,
        &measure::progress(&ws.root, &inputs, ws.progress),
    );
    let mut measured = Vec::new();
    for (c, fate) in candidates.into_iter().zip(fates) {
        match fate {
            Fate::Measured(m) => {
                ledger.notes.extend(m.notes.iter().cloned());
                measured.push((c, m));
            }
            Fate::Excluded(reason) => ledger.exclude(&c, &reason),
        }
    }
    for ex in &ledger.excluded {
        ledger.notes.push(Note::info(format!(
            "excluded {}: {}",
            quoted(&ex.file),
            ex.reason
        )));
    }
    Ok(measured)
}

/// The budget rules, in the order of the spec; where a cap cuts and degrading is on, with
/// the lower rungs of the medium and low entries (read again, in parallel, in order).
fn allocate(
    ws: &Workspace,
    s: &CompileSettings,
    reading: measure::Reading<'_>,
    measured: &[(Candidate, Measured)],
    caps: Caps,
    ledger: &mut Ledger,
) -> (Allocation, Vec<degrade::Lowered>) {
    use rayon::prelude::*;
    let items: Vec<Item> = measured
        .iter()
        .map(|(c, m)| Item {
            priority: c.priority,
            lines: m.lines,
            tokens: m.tokens,
            bytes: consumer_bytes(ws, c, m, caps),
        })
        .collect();
    let mut allocation = budget::allocate(&items, caps);
    let mut lowered = Vec::new();
    let cut = |rule: Rule| allocation.dropped.contains(&Some(rule));
    let soft_only = cut(Rule::SoftCap)
        && !(cut(Rule::HardCap) || cut(Rule::TokenCap) || cut(Rule::ByteCap))
        && allocation.overrun.is_none();
    if caps.degrade && soft_only {
        // The soft cap counts files: its lows go to their index lines, no outline needed.
        lowered = measured
            .iter()
            .map(|(c, _)| degrade::Lowered {
                rungs: if c.priority == Priority::High {
                    Vec::new()
                } else {
                    vec![degrade::INDEX]
                },
                outline: None,
            })
            .collect();
        let rungs: Vec<Vec<budget::Rung>> = lowered.iter().map(|l| l.rungs.clone()).collect();
        allocation = budget::allocate_ladder(&items, &rungs, caps);
    } else if caps.degrade && allocation.dropped.iter().any(Option::is_some) {
        let how = degrade::Measuring {
            max_file_size: s.max_file_size,
            cut_bytes: caps.file_bytes,
            tokens: caps.max_tokens > 0,
            sections: ws.config.sections,
            counter: reading.counter,
            held: reading.held,
        };
        lowered = measured
            .par_iter()
            .map(|(c, m)| match repo_path(c) {
                Ok(path) if c.priority != Priority::High => {
                    let bytes = |injected: u64, whole: u64| {
                        ws.workflow()
                            .block_bytes(&c.path, injected, whole, caps.file_bytes)
                    };
                    degrade::lower(&ws.root, &path, m, how, &bytes)
                }
                _ => degrade::Lowered::default(),
            })
            .collect();
        let rungs: Vec<Vec<budget::Rung>> = lowered.iter().map(|l| l.rungs.clone()).collect();
        allocation = budget::allocate_ladder(&items, &rungs, caps);
    }
    ledger
        .notes
        .extend(allocation.decisions.iter().cloned().map(Note::warning));
    (allocation, lowered)
}

/// The generated reason of an entry: why its kind matters, and its sections, each anchored
/// one by its heading (`"## Security" 25-50`).
fn reason_for(
    kind: &str,
    sections: &Sections,
    anchors: &[(String, crate::model::Range)],
) -> String {
    if anchors.is_empty() {
        return generated_reason(kind, sections);
    }
    let mut parts: Vec<String> = anchors
        .iter()
        .map(|(a, [s, e])| format!("{} {s}-{e}", anchors::shown(a)))
        .collect();
    let anchored: Vec<&crate::model::Range> = anchors.iter().map(|(_, r)| r).collect();
    for r in sections.as_ranges().unwrap_or_default() {
        if !anchored.iter().any(|a| a[0] <= r[0] && r[1] <= a[1]) {
            parts.push(format!("lines {}-{}", r[0], r[1]));
        }
    }
    format!(
        "{} ({})",
        generated_reason(kind, &Sections::Whole),
        parts.join(", ")
    )
}

/// The change does not exist, in a workflow whose changes its own tools make.
fn missing_change_blocks(ws: &Workspace) -> bool {
    ws.changes_warning.is_some() && ws.workflow().changes_root().is_some()
}

/// The bytes the consumer counts for a candidate (its per-file cut and its frame).
fn consumer_bytes(ws: &Workspace, c: &Candidate, m: &Measured, caps: Caps) -> u64 {
    ws.workflow()
        .block_bytes(&c.path, m.injected, m.bytes, caps.file_bytes)
}

/// The files the workflow derives from the change (OpenSpec: the current specs its delta
/// specs change), added after layers 0 and 1 unless already there.
fn with_derived(
    ws: &Workspace,
    s: &CompileSettings,
    mut candidates: Vec<Candidate>,
    ledger: &mut Ledger,
) -> Vec<Candidate> {
    let folder = crate::workflow::Located {
        changes_root: ws.changes_root.clone(),
        folder: s.change.clone(),
    };
    for missing in ws.workflow().missing(&ws.root, &folder) {
        ledger.notes.push(Note::warning(missing));
    }
    for (prefix, why) in ws.workflow().out_of_scope(&ws.root, &folder) {
        let before = candidates.len();
        candidates.retain(|c| {
            let contract_only = std::iter::once(&c.origin)
                .chain(&c.merged)
                .all(|o| matches!(o, Origin::Contract { .. }));
            !(contract_only && c.path.starts_with(&prefix))
        });
        let left = before - candidates.len();
        if left > 0 {
            ledger.notes.push(Note::info(format!(
                "left out {} ({left} file{}): {why}",
                quoted(&prefix),
                if left == 1 { "" } else { "s" }
            )));
        }
    }
    let mut derived = ws.workflow().derived(&ws.root, &folder);
    let selected: Vec<&str> = candidates.iter().map(|c| c.path.as_str()).collect();
    let task_text = task::task_words_of(s);
    let selection = crate::workflow::Selection {
        role: &s.contract_role,
        selected: &selected,
        task_text: &task_text,
    };
    let more = ws.workflow().derived_for(&ws.root, &folder, &selection);
    derived.extend(more);
    for d in derived {
        if candidates.iter().any(|c| c.path == d.path) {
            continue;
        }
        candidates.push(Candidate {
            path: d.path.clone(),
            priority: d.priority,
            kind: d.kind,
            sections: d.sections,
            reason: Some(d.reason),
            origin: Origin::Derived(d.path),
            merged: Vec::new(),
        });
    }
    candidates
}

/// A contract glob that escapes the repository is an error in the contracts file: named by
/// its JSON pointer and line:column there.
fn check_contract_globs(contracts: &Contracts, role: &Role, scope: &Scope<'_>) -> Result<()> {
    let r = contracts
        .roles
        .iter()
        .position(|x| x.id == role.id)
        .unwrap_or_default();
    for (i, cf) in role.context_files.iter().enumerate() {
        let request = Request::from_contract(i, cf);
        if let Err(Error::Escape { problem, .. }) = scope.resolve(&cf.glob, &request.origin) {
            return Err(contracts.error_at(
                &format!("/roleTypes/{r}/contextFiles/{i}/glob"),
                &format!("glob {} {problem}", quoted(&cf.glob)),
            ));
        }
    }
    Ok(())
}

fn rule_name(rule: Rule) -> &'static str {
    match rule {
        Rule::SoftCap => "soft_cap",
        Rule::HardCap => "hard_cap",
        Rule::TokenCap => "token_cap",
        Rule::ByteCap => "byte_cap",
    }
}

fn trace(c: &Candidate, m: Option<&Measured>, fate: &str) -> Trace {
    let mut source = c.origin.describe();
    if !c.merged.is_empty() {
        let others: Vec<String> = c.merged.iter().map(Origin::describe).collect();
        source = format!("{source}; merged with {}", others.join(", "));
    }
    Trace {
        file: c.path.clone(),
        source,
        priority: Some(c.priority),
        kind: Some(c.kind.clone()),
        lines: m.map(|m| m.lines),
        tokens: m.and_then(|m| m.tokens),
        fate: fate.to_owned(),
    }
}

/// Layer 0 and 1 requests, in position order: contract, assigned, task.
fn requests(role: &Role, s: &CompileSettings, embedded: bool) -> Vec<Request> {
    // The embedded default names documents that only some repositories have: they stay
    // silent when absent. A repository's own contracts are taken at their word.
    let mut out: Vec<Request> = role
        .context_files
        .iter()
        .enumerate()
        .map(|(index, cf)| Request {
            optional: embedded,
            ..Request::from_contract(index, cf)
        })
        .collect();
    let assigned = |pattern: &str, origin: Origin, priority: Priority| Request {
        pattern: pattern.to_owned(),
        origin,
        priority,
        kind: "assigned".to_owned(),
        sections: Sections::Whole,
        reason: None,
        optional: false,
    };
    for g in &s.owns {
        out.push(assigned(g, Origin::Owns(g.clone()), Priority::High));
    }
    for g in &s.reads {
        out.push(assigned(g, Origin::Reads(g.clone()), Priority::Medium));
    }
    for p in &s.files_from {
        out.push(assigned(p, Origin::FilesFrom, Priority::High));
    }
    if let Some((_, task)) = &s.task {
        for g in &task.files_owned {
            out.push(assigned(g, Origin::TaskOwned(g.clone()), Priority::High));
        }
        for g in &task.files_readonly {
            out.push(assigned(
                g,
                Origin::TaskReadonly(g.clone()),
                Priority::Medium,
            ));
        }
    }
    out
}

/// The text of an overrides file that curate copies into a manifest and a prompt (entries'
/// fields, `why`, `// curation:` lines; not plain comments) holds no secret: such a line is
/// an error naming the file and line, never the value.
pub(crate) fn refuse_copied_secrets(text: &str, path: &Path) -> Result<()> {
    let rules = crate::trust::admit::rules()?;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("//") && !t.starts_with(overrides::CURATION) {
            continue;
        }
        // The line as written, and its strings decoded (what the manifest copies).
        let decoded = || {
            let v: serde_json::Value = serde_json::from_str(t).ok()?;
            rules.scan(crate::trust::secrets::json_text(&v).as_bytes())
        };
        if let Some(hit) = rules.scan(line.as_bytes()).or_else(decoded) {
            return Err(Error::Overrides {
                path: path.to_owned(),
                line: i + 1,
                message: format!(
                    "holds a secret ({}): curate copies this line into the manifest and the prompt; remove the value",
                    hit.rule
                ),
            });
        }
    }
    Ok(())
}

fn read_overrides(
    ws: &Workspace,
    s: &CompileSettings,
) -> Result<(overrides::Overrides, Option<FileRef>)> {
    let path = &s.overrides.path;
    let bytes = if s.overrides.explicit {
        // Named by a person: read where they said, bounded, a regular file only.
        crate::util::read::read_capped(path, crate::util::read::INPUT_CAP)?
    } else {
        match admit::read_repo_file(&ws.root, path)? {
            Some(b) => b,
            None => return Ok((overrides::Overrides::default(), None)),
        }
    };
    let text = String::from_utf8(bytes.clone()).map_err(|_| Error::Invalid {
        path: Path::new(&s.overrides.shown).to_owned(),
        message: "the overrides file is not UTF-8".to_owned(),
    })?;
    refuse_copied_secrets(&text, Path::new(&s.overrides.shown))?;
    let parsed = overrides::parse(&text, Path::new(&s.overrides.shown), &s.overrides.recorded)?;
    Ok((
        parsed,
        Some(FileRef {
            path: s.overrides.recorded.clone(),
            sha256: crate::util::digest::hex(&bytes),
            outside: s.overrides.outside,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::without_lines_of;

    #[test]
    fn a_list_s_read_positions_are_left_out_of_its_notes() {
        let list = ".trellis/tasks/t/implement.jsonl";
        assert_eq!(
            without_lines_of(
                &format!("{list}:3:12: \"../x\" climbs out: left out of the list"),
                list
            ),
            format!("{list}: \"../x\" climbs out: left out of the list")
        );
        assert_eq!(
            without_lines_of(&format!("dropped \"a\" ({list}:4): why"), list),
            format!("dropped \"a\" ({list}): why")
        );
        // Another file's line, and a colon without digits, stay.
        assert_eq!(without_lines_of("o.jsonl:2: x: y", list), "o.jsonl:2: x: y");
        assert_eq!(
            without_lines_of(&format!("{list}: x"), list),
            format!("{list}: x")
        );
    }
}
