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

pub mod admit;
pub mod adopt;
pub mod budget;
pub mod cache;
pub mod commit;
pub mod contract;
pub mod expand;
pub mod ignore;
pub mod manifest;
pub mod measure;
pub mod overrides;
pub mod secrets;
pub mod tokens;
pub mod truth;

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::{Entry, Priority, Sections, generated_reason, quoted};
use crate::model::{Exclusion, Note};
use crate::settings::{CompileSettings, Workspace};
use budget::{Allocation, Caps, Item, Overrun, Rule, Status};
use cache::{Cached, TokenCache};
use contract::{Contracts, Role};
use expand::{Candidate, Origin, Request, Scope};
use manifest::{FileRef, Inputs, Lock, LockContracts, LockEntry};
use measure::{Fate, Limits, Measured};
use overrides::Directive;
use tokens::{Fast, TokenCounter};

use crate::util::paths::RepoPath;

/// A kept entry with its measurements.
#[derive(Debug, Clone, Serialize)]
pub struct Kept {
    #[serde(flatten)]
    pub entry: Entry,
    pub lines: u64,
    pub tokens: u64,
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
    pub excluded: Vec<Exclusion>,
    /// Every curation line of the manifest, overrides' first.
    pub curation: Vec<String>,
    /// This run's notes (a subset of `curation`) with their levels.
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
    traces: Vec<Trace>,
    /// Truth files changed since the change began.
    changed_truth: Vec<String>,
}

impl Ledger {
    fn exclude(&mut self, c: &Candidate, reason: &str) {
        self.traces
            .push(trace(c, None, &format!("excluded: {reason}")));
        self.excluded.push(Exclusion::new(&c.path, reason));
    }
}

/// Runs layers 0–2, secrets, measurement and budgets in memory, one stage a line.
pub fn compile(ws: &Workspace, s: &CompileSettings) -> Result<Compiled> {
    let contracts = ws.load_contracts()?;
    let role = contracts.role(&s.contract_role)?.clone();
    let scope = Scope {
        root: &ws.root,
        changes_root: &ws.changes_root,
        change: &s.change,
        ignore: !s.no_ignore,
    };
    check_contract_globs(&contracts, &role, &scope)?;
    let mut ledger = Ledger::default();
    if let Some(w) = &ws.changes_warning {
        ledger.notes.push(Note::warning(w.clone()));
    }
    let candidates = expand_layers(&scope, &contracts, &role, s, &mut ledger)?;
    let (mut candidates, overrides) = apply_overrides(ws, &scope, s, candidates, &mut ledger)?;
    if !ws.config.sections {
        // The consumer inlines whole files (Trellis): the budget must count what it reads.
        for c in &mut candidates {
            c.sections = Sections::Whole;
        }
    }
    let candidates = exclude_secrets(candidates, &mut ledger);
    let drift = truth::drift(&ws.root, &ws.changes_root, &s.change, s.max_file_size);
    ledger.notes.extend(drift.notes);
    ledger.changed_truth = drift.changed;
    let cache = token_cache(ws);
    let fast = Fast(ws.encoding);
    let counter = Cached::new(&cache, &fast);
    let measured = measure_candidates(ws, s, &counter, candidates, &mut ledger)?;
    let allocation = allocate(&measured, s.caps, &mut ledger);
    let kept = keep(ws, s, &counter, &measured, &allocation, &mut ledger);
    // The cache is an optimisation: a failed save changes nothing else.
    let _ = cache.save();
    Ok(finish(
        ws,
        s,
        &contracts,
        role,
        kept?,
        &allocation,
        overrides,
        ledger,
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
    let embedded = matches!(contracts.source, contract::Source::Embedded);
    let requests = expand::with_plan_file(scope, &requests(role, s, embedded));
    let expanded = expand::expand(scope, &requests)?;
    ledger.notes.extend(expanded.notes);
    ledger.excluded.extend(expanded.excluded);
    Ok(expand::merge(&expanded.picks, &requests))
}

/// The overrides file as read: its curation lines and its path and hash (when it exists).
#[derive(Debug)]
struct OverridesRead {
    curation: Vec<String>,
    file: Option<FileRef>,
}

/// Layer 2: the overrides file, then `--add`, then `--drop`. Returns the candidates and the
/// overrides file that was read (with its curation lines).
fn apply_overrides(
    ws: &Workspace,
    scope: &Scope<'_>,
    s: &CompileSettings,
    mut candidates: Vec<Candidate>,
    ledger: &mut Ledger,
) -> Result<(Vec<Candidate>, OverridesRead)> {
    let (parsed, overrides_file) = read_overrides(ws, s)?;
    let mut directives = parsed.directives;
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
                origin.describe(),
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
    let mut rules = crate::compile::ignore::IgnoreRules::new(&ws.root, !s.no_ignore);
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
        },
    ))
}

/// Secrets by name, whoever named the file (the content rules run while reading).
fn exclude_secrets(candidates: Vec<Candidate>, ledger: &mut Ledger) -> Vec<Candidate> {
    candidates
        .into_iter()
        .filter(|c| match secrets::by_path(&c.path) {
            Some(rule) => {
                ledger.exclude(c, &format!("secret: {rule}"));
                false
            }
            None => true,
        })
        .collect()
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
    s: &CompileSettings,
    counter: &dyn TokenCounter,
    candidates: Vec<Candidate>,
    ledger: &mut Ledger,
) -> Result<Vec<(Candidate, Measured)>> {
    let rules = crate::compile::admit::rules()?;
    let inputs: Vec<(RepoPath, Sections)> = candidates
        .iter()
        .map(|c| Ok((repo_path(c)?, c.sections.clone())))
        .collect::<Result<_>>()?;
    let fates = measure::read_all(
        &ws.root,
        &inputs,
        Limits {
            max_file_size: s.max_file_size,
        },
        rules,
        counter,
        s.caps.max_tokens > 0 || s.explain,
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

/// The budget rules, in the order of the spec.
fn allocate(measured: &[(Candidate, Measured)], caps: Caps, ledger: &mut Ledger) -> Allocation {
    let items: Vec<Item> = measured
        .iter()
        .map(|(c, m)| Item {
            priority: c.priority,
            lines: m.lines,
            tokens: m.tokens,
        })
        .collect();
    let allocation = budget::allocate(&items, caps);
    ledger
        .notes
        .extend(allocation.decisions.iter().cloned().map(Note::warning));
    allocation
}

/// The survivors, with tokens counted for those not counted yet, in manifest order (high →
/// low, then position); the dropped ones go to the ledger.
fn keep(
    ws: &Workspace,
    s: &CompileSettings,
    counter: &dyn TokenCounter,
    measured: &[(Candidate, Measured)],
    allocation: &Allocation,
    ledger: &mut Ledger,
) -> Result<Vec<Kept>> {
    let to_count: Vec<(RepoPath, Sections, String)> = measured
        .iter()
        .zip(&allocation.dropped)
        .filter(|((_, m), d)| d.is_none() && m.tokens.is_none())
        .map(|((c, m), _)| Ok((repo_path(c)?, m.sections.clone(), m.sha256.clone())))
        .collect::<Result<_>>()?;
    let limits = Limits {
        max_file_size: s.max_file_size,
    };
    let mut counted = measure::count_tokens(&ws.root, &to_count, limits, counter).into_iter();
    let mut kept: Vec<(usize, Kept)> = Vec::new();
    for (position, ((c, m), rule)) in measured.iter().zip(&allocation.dropped).enumerate() {
        if let Some(rule) = rule {
            ledger.notes.push(Note::info(format!(
                "dropped {} ({}, {} lines) by the {}",
                quoted(&c.path),
                c.priority,
                m.lines,
                rule.describe()
            )));
            ledger.traces.push(trace(
                c,
                Some(m),
                &format!("dropped by the {}", rule.describe()),
            ));
            ledger.dropped.push(Dropped {
                file: c.path.clone(),
                priority: c.priority,
                kind: c.kind.clone(),
                lines: Some(m.lines),
                tokens: m.tokens,
                rule: rule_name(*rule).to_owned(),
                by: rule.describe().to_owned(),
            });
            continue;
        }
        let tokens = match m.tokens {
            Some(t) => t,
            None => counted
                .next()
                .unwrap_or_else(|| Err("token count missing".to_owned()))
                .map_err(Error::Failed)?,
        };
        let reason = c
            .reason
            .clone()
            .unwrap_or_else(|| generated_reason(&c.kind, &m.sections));
        let mut t = trace(c, Some(m), "kept");
        t.tokens = Some(tokens);
        ledger.traces.push(t);
        kept.push((
            position,
            Kept {
                entry: Entry {
                    file: c.path.clone(),
                    reason,
                    sections: m.sections.clone(),
                    priority: c.priority,
                    kind: c.kind.clone(),
                },
                lines: m.lines,
                tokens,
                sha256: m.sha256.clone(),
            },
        ));
    }
    kept.sort_by_key(|(position, k)| (k.entry.priority, *position));
    Ok(kept.into_iter().map(|(_, k)| k).collect())
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
    ledger: Ledger,
) -> Compiled {
    let OverridesRead {
        mut curation,
        file: overrides_file,
    } = overrides;
    // Once each, in order; a set keeps this linear for a hundred thousand notes.
    let mut seen: std::collections::HashSet<String> = curation.iter().cloned().collect();
    for n in &ledger.notes {
        if seen.insert(n.text.clone()) {
            curation.push(n.text.clone());
        }
    }
    let manifest_path = ws.manifest_path(&s.change, &s.role);
    let status = allocation.status;
    let (manifest, lock) = if status == Status::Ready {
        let entries: Vec<Entry> = kept.iter().map(|k| k.entry.clone()).collect();
        let text = manifest::format(&contracts.hash12(), &curation, &entries);
        let lock = lock(
            ws,
            s,
            contracts,
            &manifest_path,
            &text,
            &kept,
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
    }
}

/// The on-disk token cache of this run (disabled by `--no-cache`).
#[must_use]
pub fn token_cache(ws: &Workspace) -> TokenCache {
    TokenCache::open(
        if ws.no_cache {
            None
        } else {
            TokenCache::default_dir()
        },
        ws.encoding,
    )
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
fn refuse_copied_secrets(text: &str, path: &Path) -> Result<()> {
    let rules = crate::compile::admit::rules()?;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with("//") && !t.starts_with(overrides::CURATION) {
            continue;
        }
        if let Some(hit) = rules.scan(line.as_bytes()) {
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
    let parsed = overrides::parse(&text, Path::new(&s.overrides.shown))?;
    Ok((
        parsed,
        Some(FileRef {
            path: s.overrides.shown.clone(),
            sha256: crate::util::digest::hex(&bytes),
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
    curation: &[String],
    overrides_file: Option<FileRef>,
) -> Lock {
    let (_, body) = manifest::split_header(text);
    Lock {
        curate: env!("CARGO_PKG_VERSION").to_owned(),
        manifest: manifest_path.to_owned(),
        digest: crate::util::digest::hex(body.as_bytes()),
        contracts: LockContracts {
            source: contracts.source.describe(),
            sha256: crate::util::digest::hex(&contracts.bytes),
        },
        inputs: Inputs {
            role: s.role.clone(),
            change: s.change.clone(),
            changes_root: ws.changes_root.clone(),
            encoding: ws.encoding,
            caps: s.caps,
            max_file_size: s.max_file_size,
            no_ignore: s.no_ignore,
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
                encoding: ws.encoding,
            })
            .collect(),
        curation: curation.to_vec(),
        written: kept.iter().map(|k| k.entry.clone()).collect(),
    }
}
