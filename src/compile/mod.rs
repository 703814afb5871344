//! The whole compile, one stage a line: contracts → expand → merge → overrides → secrets →
//! measure → budget → tokens → manifest text and lock.
//!
//! Returns a [`Compiled`] value and writes nothing; a front-end decides whether to write it.
//!
//! The stages, in order, each a module of this folder: [`contract`] (load and validate the
//! delegation contracts) → [`expand`] (globs, with [`ignore`] rules) → [`overrides`] (the
//! delegator's layer 2) → [`secrets`] by name → [`measure`] (read each file once, through
//! the admission checks, with [`tokens`] and the on-disk [`cache`]) → [`budget`] (caps) →
//! [`manifest`] (text and lock). [`adopt`] turns a hand-edited manifest back into
//! overrides; [`commit`] compiles and writes, for every front-end that writes.

use crate::stages::{
    anchors, authored, budget, contract, degrade, expand, known, manifest, measure, overrides,
    related, tokens, truth,
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

/// A kept entry with its measurements.
#[derive(Debug, Clone, Serialize)]
pub struct Kept {
    #[serde(flatten)]
    pub entry: Entry,
    pub lines: u64,
    pub tokens: u64,
    /// Bytes as the consumer counts them, when it counts bytes (Trellis).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The heading anchors of its sections, with the lines each resolved to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<(String, crate::model::Range)>,
    /// Cut down the budget ladder (to its outline), when a cap did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degraded: Option<Degraded>,
    /// The consumer's per-file cap, when it cuts this file there (Trellis' hook inlines
    /// its first `cut_at` bytes; `lines` and `tokens` are of those).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_at: Option<u64>,
    #[serde(skip)]
    pub sha256: String,
}

/// An entry a budget rule or a drop removed.
#[derive(Debug, Clone, Serialize)]
pub struct Dropped {
    pub file: String,
    pub priority: Priority,
    pub kind: String,
    pub lines: Option<u64>,
    pub tokens: Option<u64>,
    /// `soft_cap`, `hard_cap`, `token_cap` or `override`.
    pub rule: String,
    pub by: String,
}

/// One candidate with its source and fate, for `--explain`.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub file: String,
    pub source: String,
    pub priority: Option<Priority>,
    pub kind: Option<String>,
    pub lines: Option<u64>,
    pub tokens: Option<u64>,
    pub fate: String,
}

/// The result of a compile.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub status: Status,
    pub role: Role,
    pub change: String,
    pub contracts_source: String,
    pub manifest_path: String,
    pub kept: Vec<Kept>,
    pub dropped: Vec<Dropped>,
    /// Entries a cap cut to an index line: named in the prompt, not read.
    pub indexed: Vec<Dropped>,
    pub excluded: Vec<Exclusion>,
    /// Every curation line of the manifest, overrides' first.
    pub curation: Vec<String>,
    /// This run's notes with their levels (those in the manifest are in `curation`).
    pub notes: Vec<Note>,
    pub caps: Caps,
    pub overrun: Option<Overrun>,
    pub candidates: Vec<Trace>,
    /// The manifest text (when READY).
    pub manifest: Option<String>,
    pub lock: Option<Lock>,
    /// The overrides file, when it existed.
    pub overrides_file: Option<FileRef>,
    /// Truth files that changed since the change began (see [`truth`]).
    pub changed_truth: Vec<String>,
    /// The role's name as the caller gave it (a `[roles]` alias, or the contract role).
    pub role_name: String,
    /// The workflow, and how it was chosen (`detected: .trellis/tasks/`, `profile`, …).
    pub workflow: Workflowed,
    /// The bytes admitted, for the render (empty for a manifest read back).
    pub held: std::sync::Arc<Held>,
}

/// Another workflow's folder that holds the change.
#[derive(Debug, Clone, Serialize)]
pub struct Elsewhere {
    pub folder: String,
    pub workflow: &'static str,
}

/// The workflow a compile ran under, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct Workflowed {
    pub name: &'static str,
    /// `flag`, `env`, `file`, `detected` or `default`.
    pub chosen_by: String,
    /// What gave it away, when detected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// The folders the change was looked for in.
    pub looked: Vec<String>,
    /// Other workflows' folders that hold the change.
    pub elsewhere: Vec<Elsewhere>,
    /// The workflow's changes whose ids look like the one not found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub similar: Vec<String>,
    /// The change's folder is not where it was looked for (BLOCKED in a workflow whose own
    /// tools make changes; a warning in the plain layout).
    pub change_missing: bool,
    /// The change is missing in a workflow whose own tools make changes: that BLOCKED it.
    #[serde(skip)]
    pub missing_blocks: bool,
}

impl Workflowed {
    /// The workflow of `ws`.
    #[must_use]
    pub fn of(ws: &Workspace) -> Workflowed {
        let w = ws.workflow();
        let chosen_by = ws
            .config
            .origins
            .get("profile")
            .map_or_else(|| "default".to_owned(), ToString::to_string);
        Workflowed {
            name: w.name(),
            evidence: ws
                .present
                .iter()
                .find(|(p, _)| p.name() == w.name())
                .map(|(_, e)| e.clone()),
            chosen_by,
            looked: ws.looked.clone(),
            elsewhere: ws
                .elsewhere
                .iter()
                .map(|(w, p)| Elsewhere {
                    folder: p.clone(),
                    workflow: w.name(),
                })
                .collect(),
            similar: ws.similar.clone(),
            change_missing: ws.changes_warning.is_some(),
            missing_blocks: missing_change_blocks(ws),
        }
    }

    /// `trellis (detected: .trellis/tasks/)`.
    #[must_use]
    pub fn describe(&self) -> String {
        match &self.evidence {
            Some(e) if self.chosen_by == "detected" => format!("{} (detected: {e})", self.name),
            _ if self.chosen_by == "default" => self.name.to_owned(),
            _ => format!("{} ({})", self.name, self.chosen_by),
        }
    }
}

impl Compiled {
    /// Totals of the kept entries: files, lines, tokens.
    #[must_use]
    pub fn totals(&self) -> (usize, u64, u64) {
        (
            self.kept.len(),
            self.kept.iter().map(|k| k.lines).sum(),
            self.kept.iter().map(|k| k.tokens).sum(),
        )
    }

    /// Warning-level notes.
    pub fn warnings(&self) -> impl Iterator<Item = &Note> {
        self.notes.iter().filter(|n| n.is_warning())
    }
}

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
    let mut candidates = with_related(ws, &scope, s, &counter, candidates, &mut ledger)?;
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
    // What is admitted is held for the count, the outlines and the render: read once.
    let held = std::sync::Arc::new(if s.renders {
        Held::spooling(admit::HOLD_BYTES, crate::trust::spool::SPOOL_BYTES)
    } else {
        Held::new(admit::HOLD_BYTES)
    });
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
        // the report says what it will leave out ([`left_out`]).
        allocation.overrun = None;
        allocation.status = Status::Ready;
    }
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
    let related_read = kept.as_ref().map_or(0, |k| {
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
    scope: &Scope<'_>,
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
    let question = related::ask::Question {
        version: related::ask::VERSION.to_owned(),
        root: ws.root.to_string_lossy().into_owned(),
        changes_root: scope.changes_root.to_owned(),
        change: scope.change.to_owned(),
        ignore: scope.ignore,
        manifest: ws.config.manifest.clone(),
        owned: owned.clone(),
        budget: s.related,
        max_file_size: s.max_file_size,
        encoding: ws.encoding,
    };
    // A watcher's answer is the list this run would make (docs/budgets.md#related-files).
    let asked = dir.as_deref().map_or(related::ask::Asked::Nobody, |d| {
        related::ask::ask(d, &question)
    });
    if let related::ask::Asked::Failed(why) = &asked {
        ledger.notes.push(
            Note::warning(format!(
                "--related: `curate watch` gave no answer ({why}): ranked without it"
            ))
            .report_only(),
        );
    }
    let found = match asked {
        related::ask::Asked::Answered(found) => {
            ledger.notes.push(
                Note::info("--related: answered by `curate watch` (files not stamped)".to_owned())
                    .report_only(),
            );
            found
        }
        related::ask::Asked::Nobody | related::ask::Asked::Failed(_) => {
            let listings_dir = dir.clone();
            // The folders are listed as kept when their stamps are; the index loads while
            // the listings do and the tree is walked.
            let ((walked, listings), index) = rayon::join(
                || {
                    let listings = related::Listings::open(listings_dir, &ws.root);
                    (related_universe(scope, &listings), listings)
                },
                || related::Index::open(dir, &ws.root),
            );
            // A cache, as the index: a failed save changes nothing else.
            let _ = listings.save();
            let found = related::related(&related::Inputs {
                root: &ws.root,
                universe: &walked?,
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
    ledger.notes.push(Note::info(format!(
        "--related {}: {} file{} related to the owned ones, {tokens} tokens of outlines",
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

/// The files left out because their path holds a secret: counted by rule, never named (not
/// in a note, the manifest, the lock, the report or the prompt's list of what was not given).
#[derive(Default)]
pub(crate) struct Withheld(std::collections::BTreeMap<&'static str, usize>);

impl Withheld {
    /// False (and counted) when `path` holds a secret.
    pub(crate) fn keeps(
        &mut self,
        rules: &crate::trust::secrets::ContentRules,
        path: &str,
    ) -> bool {
        self.counts(rules.scan_path(path))
    }

    /// False (and counted) when a path's scan found `rule`.
    fn counts(&mut self, rule: Option<&'static str>) -> bool {
        match rule {
            Some(rule) => {
                *self.0.entry(rule).or_default() += 1;
                false
            }
            None => true,
        }
    }

    /// One warning a rule.
    pub(crate) fn notes(&self) -> Vec<Note> {
        self.0
            .iter()
            .map(|(rule, n)| {
                let files = if *n == 1 { "file" } else { "files" };
                Note::warning(format!(
                    "left out {n} {files} whose path holds a secret ({rule}); the path is never shown"
                ))
            })
            .collect()
    }
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
    for d in ws.workflow().derived(&ws.root, &folder) {
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

/// The author's list in the manifest file itself (a workflow whose authors write it:
/// Trellis), with the author's removals of curate's rows since the last run.
fn read_author_list(
    ws: &Workspace,
    s: &CompileSettings,
) -> Result<Option<(String, authored::Authored)>> {
    if !ws.workflow().authored() {
        return Ok(None);
    }
    let rel = ws.manifest_path(&s.change, &s.role);
    let Some(bytes) = admit::read_repo_file(&ws.root, &ws.root.join(&rel))? else {
        return Ok(Some((rel, authored::Authored::default())));
    };
    // Written back row by row: a byte that is not UTF-8 would come back changed.
    let text = crate::model::Pos::utf8(&bytes).map_err(|pos| Error::Syntax {
        path: std::path::PathBuf::from(&rel),
        pos,
        message: "not UTF-8 (Trellis' readers cannot read the list either): save it as UTF-8"
            .to_owned(),
    })?;
    refuse_copied_secrets(text, Path::new(&rel))?;
    let headed = manifest::parse_header(manifest::split_header(text).0).is_some();
    let edited = !manifest::is_intact(text) && headed;
    // The lock is read for the notes curate wrote last even when the list is intact: a note
    // row that is not one of them is the author's.
    let lock = if headed {
        manifest::read_lock(&ws.root, &rel)
    } else {
        None
    };
    let notes = lock.as_ref().map(|l| {
        manifest::body(manifest::Form::Rows, &l.curation, &[])
            .lines()
            .map(str::to_owned)
            .collect::<std::collections::HashSet<String>>()
    });
    let notes = match (headed, &notes) {
        (false, _) => authored::Notes::NoneOurs,
        (true, None) => authored::Notes::AllOurs,
        (true, Some(set)) => authored::Notes::These(set),
    };
    let lock = if edited { lock } else { None };
    // The rows curate wrote last, to tell the author's changes to them.
    let ours: Option<std::collections::HashSet<String>> = lock.as_ref().map(|l| {
        let entries: Vec<Entry> = l.written.clone();
        let lines: Vec<manifest::Line<'_>> = entries
            .iter()
            .filter(|e| e.kind != AUTHOR_KIND)
            .map(|entry| manifest::Line::Entry {
                entry,
                marked: true,
            })
            .collect();
        manifest::body(manifest::Form::Rows, &[], &lines)
            .lines()
            .map(str::to_owned)
            .collect()
    });
    let mut list =
        authored::parse(text, ours.as_ref(), &notes).map_err(|(pos, message)| Error::Syntax {
            path: std::path::PathBuf::from(&rel),
            pos,
            message,
        })?;
    if let Some(lock) = &lock {
        for row in authored::removals(text, &lock.written, AUTHOR_KIND) {
            if let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&row)
                && let Some(glob) = m.get("drop").and_then(|g| g.as_str())
            {
                list.drops.push((
                    0,
                    glob.to_owned(),
                    Some("removed from the list by its author".to_owned()),
                ));
            }
            list.kept.push(row);
        }
    }
    Ok(Some((rel, list)))
}

/// `text` with each `FILE:LINE` (and `FILE:LINE:COLUMN`) of `file` reduced to `FILE`.
fn without_lines_of(text: &str, file: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(file) {
        let end = at + file.len();
        out.push_str(&rest[..end]);
        rest = &rest[end..];
        // At most two `:DIGITS` parts (line, column).
        for _ in 0..2 {
            let digits = rest
                .strip_prefix(':')
                .map_or(0, |r| r.bytes().take_while(u8::is_ascii_digit).count());
            if digits == 0 {
                break;
            }
            rest = &rest[1 + digits..];
        }
    }
    out.push_str(rest);
    out
}

/// The kind of an entry the author listed.
pub const AUTHOR_KIND: &str = "author";

/// The author's rows as layer-2 entries in the author's order (ahead of the baseline), the
/// author's drops, and how each kept file is written back. A row that escapes the
/// repository is left out, one that names nothing that exists is kept as written, a second
/// row for a file is kept withheld (the file is read once); a note each.
fn author_layer(
    ws: &Workspace,
    scope: &Scope<'_>,
    rel: &str,
    list: &authored::Authored,
    ledger: &mut Ledger,
) -> (Vec<Candidate>, Vec<Directive>, WriteBack) {
    let mut entries: Vec<Candidate> = Vec::new();
    let mut back = WriteBack {
        kept: list.kept.clone(),
        crlf: list.crlf,
        ..WriteBack::default()
    };
    // The author's file rows first: of two rows naming one file, a withheld one (written
    // back by an earlier run) is the one kept withheld again.
    let rows = list.rows.iter().filter(|r| !r.withheld);
    for row in rows.chain(list.rows.iter().filter(|r| r.withheld)) {
        let origin = Origin::Override {
            file: rel.to_owned(),
            shown: rel.to_owned(),
            line: row.line,
        };
        let path = match scope.resolve(&row.file, &origin) {
            Ok(p) => crate::workflow::archived_path(
                &ws.root,
                ws.workflow(),
                scope.changes_root,
                scope.change,
                p,
            ),
            Err(e) => {
                // The error names the row's place already.
                ledger
                    .notes
                    .push(Note::warning(format!("{e}: left out of the list")));
                if !row.directory {
                    back.escaped.push(authored::withhold(
                        &row.raw,
                        "outside the repository: never read",
                    ));
                }
                continue;
            }
        };
        let files = if row.directory {
            let members = authored::directory_members(&ws.root, &path);
            if members.is_empty() {
                ledger.notes.push(Note::warning(format!(
                    "{}: the folder {} holds no .md file: kept as written, nothing to read",
                    origin.describe(),
                    quoted(&row.file)
                )));
                back.kept.push(row.raw.clone());
                continue;
            }
            back.folders.push((row.readable(), members.clone()));
            members
        } else if ws.root.join(&path).is_file() {
            // Named by an earlier file row, or by an earlier folder row (whose row Trellis'
            // hook reads the file by already).
            if back.rows.contains_key(&path) || back.folders.iter().any(|(_, m)| m.contains(&path))
            {
                // No line number: the note and the row are written into the list, whose
                // lines move as curate's own rows come and go.
                ledger.notes.push(Note::warning(format!(
                    "{rel}: {} is listed twice: read once, the second row kept withheld",
                    quoted(&path)
                )));
                back.twice.push(authored::withhold(
                    &row.raw,
                    "listed by another row already",
                ));
                continue;
            }
            back.rows.insert(path.clone(), row.readable());
            back.order.push((path.clone(), row.raw.clone()));
            vec![path]
        } else {
            ledger.notes.push(Note::warning(format!(
                "{}: {} does not exist: kept as the author wrote it, nothing to read",
                origin.describe(),
                quoted(&row.file)
            )));
            back.kept.push(row.raw.clone());
            continue;
        };
        for file in files {
            if entries.iter().any(|c| c.path == file) {
                continue;
            }
            entries.push(Candidate {
                path: file,
                priority: Priority::High,
                kind: AUTHOR_KIND.to_owned(),
                sections: Sections::Whole,
                reason: Some(
                    row.reason
                        .clone()
                        .unwrap_or_else(|| "listed by the task's author".to_owned()),
                ),
                origin: origin.clone(),
                merged: Vec::new(),
            });
        }
    }
    let drops = list
        .drops
        .iter()
        .map(|(line, glob, why)| Directive::Drop {
            glob: glob.clone(),
            why: why.clone(),
            origin: Origin::Override {
                file: rel.to_owned(),
                shown: rel.to_owned(),
                line: *line,
            },
        })
        .collect();
    (entries, drops, back)
}

/// How the author's rows are written back: kept rows first, then each kept file as the
/// author's row, a folder's row (when every file of it is kept), or curate's marked entry.
#[derive(Debug, Default)]
struct WriteBack {
    kept: Vec<String>,
    /// A file's own row, as written (a withheld row as a file row again).
    rows: std::collections::HashMap<String, String>,
    /// The file rows in the author's order, as read: those admission keeps out are
    /// written back withheld.
    order: Vec<(String, String)>,
    /// Rows naming a path outside the repository, withheld.
    escaped: Vec<String>,
    /// Rows naming a file an earlier row names, withheld.
    twice: Vec<String>,
    /// A directory row and the files it stands for.
    folders: Vec<(String, Vec<String>)>,
    /// The author's file ends its lines in `\r\n`.
    crlf: bool,
}

impl WriteBack {
    /// The author's file rows kept out of the list (a secret, a link out, outside the
    /// repository), as withheld rows: written in place of the rows, so that the consumer
    /// reads none of them and the next run reads them back and notes them again.
    fn withheld(&self, excluded: &[Exclusion]) -> Vec<String> {
        let mut out = self.escaped.clone();
        for (path, raw) in &self.order {
            if let Some(ex) = excluded.iter().find(|ex| &ex.file == path) {
                out.push(authored::withhold(raw, &ex.reason));
            }
        }
        out.extend(self.twice.iter().cloned());
        out
    }

    fn lines<'a>(
        &'a self,
        entries: &'a [Entry],
        withheld: &'a [String],
    ) -> Vec<manifest::Line<'a>> {
        use manifest::Line;
        let kept: std::collections::HashSet<&str> =
            entries.iter().map(|e| e.file.as_str()).collect();
        let mut out: Vec<Line<'a>> = self
            .kept
            .iter()
            .chain(withheld)
            .map(|r| Line::Verbatim(r))
            .collect();
        let mut folders_written = vec![false; self.folders.len()];
        for e in entries {
            if let Some(raw) = self.rows.get(&e.file) {
                out.push(Line::Verbatim(raw));
                continue;
            }
            if let Some(i) = self.folders.iter().position(|(_, m)| m.contains(&e.file)) {
                let (raw, members) = &self.folders[i];
                if members.iter().all(|m| kept.contains(m.as_str())) {
                    if !folders_written[i] {
                        folders_written[i] = true;
                        out.push(Line::Verbatim(raw));
                    }
                    continue;
                }
            }
            out.push(Line::Entry {
                entry: e,
                marked: e.kind != AUTHOR_KIND,
            });
        }
        out
    }
}

/// What the consumer injects on its own (Trellis: the task's `prd.md`, `design.md`,
/// `implement.md`) is never listed; returns whether the change holds any of it.
fn leave_out_injected(
    ws: &Workspace,
    s: &CompileSettings,
    candidates: &mut Vec<Candidate>,
    ledger: &mut Ledger,
) -> bool {
    let names = ws.workflow().injected();
    if names.is_empty() {
        return false;
    }
    let folder = format!("{}/{}", ws.changes_root, s.change);
    let injected: Vec<String> = names.iter().map(|n| format!("{folder}/{n}")).collect();
    candidates.retain(|c| {
        let theirs = injected.contains(&c.path);
        if theirs {
            ledger.notes.push(Note::info(format!(
                "{} is not listed: {} injects it itself",
                quoted(&c.path),
                ws.workflow().name()
            )));
        }
        !theirs
    });
    injected.iter().any(|p| ws.root.join(p).is_file())
}

/// The caps with room kept in the consumer's byte total for what it injects itself.
fn reserve_for_injected(ws: &Workspace, s: &CompileSettings, ledger: &mut Ledger) -> Caps {
    let mut caps = s.caps;
    if caps.max_bytes == 0 {
        return caps;
    }
    let folder = format!("{}/{}", ws.changes_root, s.change);
    let reserved = ws.workflow().reserved_bytes(&ws.root, &folder);
    if reserved > 0 {
        let left = caps.max_bytes.saturating_sub(reserved).max(1);
        ledger.notes.push(Note::info(format!(
            "{} of the {}-byte total are kept for the task's own files that {} injects after the list: {left} bytes for the list",
            reserved,
            caps.max_bytes,
            ws.workflow().name()
        )));
        caps.max_bytes = left;
    }
    caps
}

/// Where an entry stands after the budget: dropped, named only, or read (as selected or
/// cut to its outline).
enum Standing {
    Dropped(Rule),
    Indexed(Rule),
    Read {
        sections: Sections,
        lines: u64,
        tokens: Option<u64>,
        bytes: u64,
        degraded: Option<Degraded>,
    },
}

fn standing(
    ws: &Workspace,
    caps: Caps,
    (c, m): &(Candidate, Measured),
    dropped: Option<Rule>,
    degraded: Option<(usize, Rule)>,
    lowered: Option<&degrade::Lowered>,
) -> Standing {
    if let Some(rule) = dropped {
        return Standing::Dropped(rule);
    }
    match degraded.zip(lowered) {
        Some(((k, rule), low)) => {
            let rung = low.rungs[k];
            match (rung.step, &low.outline) {
                (Step::Outline, Some(outline)) => Standing::Read {
                    sections: outline.clone(),
                    lines: rung.lines,
                    tokens: rung.tokens,
                    bytes: rung.bytes,
                    degraded: Some(Degraded {
                        to: Step::Outline,
                        from_lines: m.lines,
                        rule,
                    }),
                },
                _ => Standing::Indexed(rule),
            }
        }
        None => Standing::Read {
            sections: m.sections.clone(),
            lines: m.lines,
            tokens: m.tokens,
            bytes: consumer_bytes(ws, c, m, caps),
            degraded: None,
        },
    }
}

/// The survivors, with tokens counted for those not counted yet, in manifest order (high →
/// low, then position); the dropped and the named-only ones go to the ledger.
fn keep(
    ws: &Workspace,
    s: &CompileSettings,
    reading: measure::Reading<'_>,
    measured: &[(Candidate, Measured)],
    allocation: &Allocation,
    lowered: &[degrade::Lowered],
    ledger: &mut Ledger,
) -> Result<Vec<Kept>> {
    let standings: Vec<Standing> = measured
        .iter()
        .enumerate()
        .map(|(i, cm)| {
            standing(
                ws,
                s.caps,
                cm,
                allocation.dropped[i],
                allocation.degraded[i],
                lowered.get(i),
            )
        })
        .collect();
    let to_count: Vec<(RepoPath, Sections, String)> = measured
        .iter()
        .zip(&standings)
        .filter_map(|((c, m), st)| match st {
            Standing::Read {
                sections,
                tokens: None,
                ..
            } => Some(repo_path(c).map(|p| (p, sections.clone(), m.sha256.clone()))),
            _ => None,
        })
        .collect::<Result<_>>()?;
    let mut counted = measure::count_tokens(reading, &to_count).into_iter();
    let mut kept: Vec<(usize, Kept)> = Vec::with_capacity(measured.len());
    ledger.traces.reserve(measured.len());
    for (position, ((c, m), st)) in measured.iter().zip(standings).enumerate() {
        let (sections, lines, tokens, bytes, degraded) = match st {
            Standing::Dropped(rule) => {
                ledger.cut(c, m, rule, false);
                continue;
            }
            Standing::Indexed(rule) => {
                ledger.cut(c, m, rule, true);
                continue;
            }
            Standing::Read {
                sections,
                lines,
                tokens,
                bytes,
                degraded,
            } => (sections, lines, tokens, bytes, degraded),
        };
        let tokens = match tokens {
            Some(t) => t,
            None => counted
                .next()
                .unwrap_or_else(|| Err("token count missing".to_owned()))
                .map_err(Error::Failed)?,
        };
        let mut reason = c
            .reason
            .clone()
            .unwrap_or_else(|| reason_for(&c.kind, &m.sections, &m.anchors));
        let mut t = trace(c, Some(m), "kept");
        if let Some(d) = degraded {
            let cut = format!(
                "cut {} ({}, {} lines) to its outline ({lines} line{}) by the {}",
                quoted(&c.path),
                c.priority,
                d.from_lines,
                if lines == 1 { "" } else { "s" },
                d.rule.describe()
            );
            ledger.notes.push(Note::info(cut));
            reason = format!(
                "{reason} [outline only: {lines} of {} lines, by the {}]",
                d.from_lines,
                d.rule.describe()
            );
            t.fate = format!("cut to its outline by the {}", d.rule.describe());
            t.lines = Some(lines);
        }
        let cut_at = (degraded.is_none() && m.injected < m.bytes).then_some(s.caps.file_bytes);
        if let Some(cap) = cut_at {
            t.fate = format!("kept, cut at {cap} bytes by its consumer");
            t.lines = Some(lines);
        }
        t.tokens = Some(tokens);
        ledger.traces.push(t);
        kept.push((
            position,
            Kept {
                entry: Entry {
                    file: c.path.clone(),
                    reason,
                    sections,
                    priority: c.priority,
                    kind: c.kind.clone(),
                },
                lines,
                tokens,
                bytes: (s.caps.max_bytes > 0 || s.caps.file_bytes > 0).then_some(bytes),
                // An outline replaces the anchored sections.
                anchors: if degraded.is_some() {
                    Vec::new()
                } else {
                    m.anchors.clone()
                },
                degraded,
                cut_at,
                sha256: m.sha256.clone(),
            },
        ));
    }
    kept.sort_by_key(|(position, k)| (k.entry.priority, *position));
    Ok(kept.into_iter().map(|(_, k)| k).collect())
}

/// An entry a cap removed (dropped, or named only), for the report.
fn cut_entry(c: &Candidate, m: &Measured, rule: Rule, tokens: Option<u64>) -> Dropped {
    Dropped {
        file: c.path.clone(),
        priority: c.priority,
        kind: c.kind.clone(),
        lines: Some(m.lines),
        tokens,
        rule: rule_name(rule).to_owned(),
        by: rule.describe().to_owned(),
    }
}

/// The curation lines (the overrides file's, then this run's, once each), the manifest text
/// and its lock when READY, and the report's values.
#[allow(clippy::too_many_arguments)]
fn finish(
    ws: &Workspace,
    s: &CompileSettings,
    contracts: &Contracts,
    role: Role,
    kept: Vec<Kept>,
    allocation: &Allocation,
    overrides: OverridesRead,
    mut ledger: Ledger,
    held: std::sync::Arc<Held>,
) -> Compiled {
    let OverridesRead {
        mut curation,
        file: overrides_file,
        write_back,
    } = overrides;
    let entries: Vec<Entry> = kept.iter().map(|k| k.entry.clone()).collect();
    if allocation.status == Status::Ready
        && let Some(back) = &write_back
    {
        left_out(ws, s, (&kept, &entries), back, &held, &mut ledger);
    }
    // Once each, in order; a set keeps this linear for a hundred thousand notes.
    let mut seen: std::collections::HashSet<String> = curation.iter().cloned().collect();
    let manifest_path = ws.manifest_path(&s.change, &s.role);
    for n in ledger.notes.iter().filter(|n| n.in_manifest) {
        // An author's list is written anew: a line of it as read points at nothing in it as
        // written, and would change the list on the next run.
        let text = match &write_back {
            Some(_) => without_lines_of(&n.text, &manifest_path),
            None => n.text.clone(),
        };
        if seen.insert(text.clone()) {
            curation.push(text);
        }
    }
    let status = allocation.status;
    let (manifest, lock) = if status == Status::Ready {
        let text = match &write_back {
            Some(back) => {
                let withheld = back.withheld(&ledger.excluded);
                let text = manifest::format_lines(
                    manifest::Form::Rows,
                    &contracts.hash12(),
                    &curation,
                    &back.lines(&entries, &withheld),
                );
                if back.crlf {
                    manifest::with_crlf(&text)
                } else {
                    text
                }
            }
            None => manifest::format(&contracts.hash12(), &curation, &entries),
        };
        let lock = lock(
            ws,
            s,
            contracts,
            &manifest_path,
            &text,
            &kept,
            &ledger.indexed,
            &curation,
            overrides_file.clone(),
        );
        (Some(text), Some(lock))
    } else {
        (None, None)
    };
    Compiled {
        status,
        role,
        change: s.change.clone(),
        contracts_source: contracts.source.describe(),
        manifest_path,
        kept,
        dropped: ledger.dropped,
        indexed: ledger.indexed,
        excluded: ledger.excluded,
        curation,
        notes: ledger.notes,
        caps: s.caps,
        overrun: allocation.overrun,
        candidates: ledger.traces,
        manifest,
        lock,
        overrides_file,
        changed_truth: ledger.changed_truth,
        role_name: s.role.clone(),
        workflow: Workflowed::of(ws),
        held,
    }
}

/// What the consumer's hook will name instead of inlining, once its byte total is reached
/// reading the list curate writes back (Trellis: the task's own files after the list, or
/// the list's last files), as a warning.
fn left_out(
    ws: &Workspace,
    s: &CompileSettings,
    (kept, entries): (&[Kept], &[Entry]),
    back: &WriteBack,
    held: &Held,
    ledger: &mut Ledger,
) {
    let withheld = back.withheld(&ledger.excluded);
    let rows = manifest::body(manifest::Form::Rows, &[], &back.lines(entries, &withheld));
    let sha: std::collections::HashMap<&str, &str> = kept
        .iter()
        .map(|k| (k.entry.file.as_str(), k.sha256.as_str()))
        .collect();
    let read = |p: &str| {
        let path = RepoPath::new(p).ok()?;
        match sha.get(path.as_str()) {
            Some(sha256) => held.read(&ws.root, &path, s.max_file_size, sha256).ok(),
            None => admit::read_repo_file(&ws.root, &ws.root.join(path.as_str()))
                .ok()
                .flatten()
                .map(std::sync::Arc::new),
        }
    };
    let folder = format!("{}/{}", ws.changes_root, s.change);
    let out = ws.workflow().left_out(&ws.root, &folder, &rows, &read);
    if out.is_empty() {
        return;
    }
    let names: Vec<String> = out.iter().map(|p| quoted(p)).collect();
    let total = ws.workflow().byte_budget(&ws.root).map_or(0, |b| b.total);
    let (them, files) = if out.len() == 1 {
        ("it", "the file")
    } else {
        ("them", "the files")
    };
    ledger.notes.push(Note::warning(format!(
        "the {} hook will not inline {}: its {total}-byte total is reached before {them}, and it names {files} instead",
        ws.workflow().name(),
        names.join(", "),
    )));
}

/// The on-disk token cache of this run (disabled by `--no-cache`).
#[must_use]
pub fn token_cache(ws: &Workspace) -> DigestCache {
    DigestCache::open(cache_dir(ws), ws.encoding)
}

/// The content scan's clean verdicts kept on disk, for a compile of `files` files
/// (disabled by `--no-cache`, and below [`VERDICTS_FROM`] files: a few small files are
/// scanned sooner than a large verdicts file is loaded, which a hook would pay at every
/// dispatch once a bulk run has filled it).
#[must_use]
pub fn verdict_cache(ws: &Workspace, files: usize) -> DigestCache {
    DigestCache::verdicts(
        cache_dir(ws).filter(|_| files >= VERDICTS_FROM),
        crate::trust::secrets::SCANNER,
    )
}

/// What is known of the repository's files by their stamps ([`known`]), for a compile of
/// `files` files (disabled by `--no-cache`, and below [`VERDICTS_FROM`] files, as the
/// verdicts it relies on: a stamp is still taken, to check a file read again).
#[must_use]
pub fn known_files(ws: &Workspace, files: usize) -> Known {
    Known::open(cache_dir(ws).filter(|_| files >= VERDICTS_FROM), &ws.root)
}

/// The fewest files a compile reads for it to use the kept verdicts.
pub const VERDICTS_FROM: usize = 64;

/// The user cache folder, unless `--no-cache`.
fn cache_dir(ws: &Workspace) -> Option<std::path::PathBuf> {
    if ws.no_cache {
        None
    } else {
        DigestCache::default_dir()
    }
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

#[allow(clippy::too_many_arguments)]
fn lock(
    ws: &Workspace,
    s: &CompileSettings,
    contracts: &Contracts,
    manifest_path: &str,
    text: &str,
    kept: &[Kept],
    indexed: &[Dropped],
    curation: &[String],
    overrides_file: Option<FileRef>,
) -> Lock {
    let (_, body) = manifest::split_header(text);
    Lock {
        curate: env!("CARGO_PKG_VERSION").to_owned(),
        manifest: manifest_path.to_owned(),
        digest: crate::util::digest::hex(body.as_bytes()),
        contracts: {
            let named = match &contracts.source {
                contract::Source::Flag(p) | contract::Source::Env(p) => Some(ws.relative(p)),
                contract::Source::Repo(_) | contract::Source::Embedded(_) => None,
            };
            LockContracts {
                // By its repository path, or its name alone outside (not this machine's
                // folders, as an overrides file from outside).
                source: match &contracts.source {
                    contract::Source::Flag(p) | contract::Source::Env(p) => {
                        let how = if matches!(contracts.source, contract::Source::Flag(_)) {
                            "--contracts"
                        } else {
                            "CURATE_CONTRACTS"
                        };
                        let shown = named.clone().flatten().unwrap_or_else(|| {
                            p.file_name()
                                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                        });
                        format!("{shown} ({how})")
                    }
                    _ => contracts.source.describe(),
                },
                sha256: crate::util::digest::hex(&contracts.bytes),
                outside: matches!(named, Some(None)),
                file: named.flatten(),
            }
        },
        inputs: Inputs {
            role: s.role.clone(),
            change: s.change.clone(),
            changes_root: ws.changes_root.clone(),
            encoding: ws.encoding,
            caps: s.caps,
            max_file_size: s.max_file_size,
            no_ignore: s.no_ignore,
            related: s.related,
            owns: s.owns.clone(),
            reads: s.reads.clone(),
            files_from: s.files_from.clone(),
            overrides: overrides_file,
            add: s.add_raw.clone(),
            drop: s.drop.clone(),
            task_file: s.task.as_ref().map(|(f, _)| f.clone()),
        },
        entries: kept
            .iter()
            .map(|k| LockEntry {
                file: k.entry.file.clone(),
                sha256: k.sha256.clone(),
                lines: k.lines,
                tokens: k.tokens,
                bytes: k.bytes,
                anchors: k.anchors.clone(),
                degraded: k.degraded,
                encoding: ws.encoding,
            })
            .collect(),
        indexed: indexed
            .iter()
            .map(|d| manifest::LockNamed {
                file: d.file.clone(),
                lines: d.lines.unwrap_or(0),
                rule: d.rule.clone(),
                priority: Some(d.priority),
            })
            .collect(),
        curation: curation.to_vec(),
        written: kept.iter().map(|k| k.entry.clone()).collect(),
        companion: None,
    }
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
