//! Layer 0 and 1: `<id>` substitution, scoped walks, candidates in a stable order.
//!
//! Receives the requests (contract globs, assigned scopes, named files) and returns the
//! picked paths, one merged [`Candidate`] per file, with the notes and exclusions met on the
//! way. Each glob is walked only from its literal prefix (one walk per distinct prefix);
//! literal paths are a stat. Never follows a link out of the repository, never enters
//! `.git/`, never reads file contents.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::path::Path;

use globset::Glob;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::model::paths;
use crate::model::{Exclusion, Note};
use crate::model::{Priority, Sections, quoted};
use crate::stages::ignore::{Chain, IgnoreRules, Present};
use crate::stages::related::{Entries, Kind, Listings};

/// Where a request came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `contextFiles[index]` of the role, with its glob as written.
    Contract { index: usize, glob: String },
    /// `--owns GLOB`.
    Owns(String),
    /// `--reads GLOB`.
    Reads(String),
    /// A path of `--files-from`.
    FilesFrom,
    /// The task file's `files_owned`.
    TaskOwned(String),
    /// The task file's `files_readonly`.
    TaskReadonly(String),
    /// A line of the overrides file (or of a workflow's author list): `file` as notes and
    /// the lock record it (its repository path, or its name alone when it lies outside),
    /// `shown` as errors name it (the path the user gave).
    Override {
        file: String,
        shown: String,
        line: usize,
    },
    /// `--add`.
    Add(String),
    /// `--drop`.
    Drop(String),
    /// Derived by the workflow from the change's content (the path).
    Derived(String),
    /// Ranked from the owned files by `--related`.
    Related,
    /// Named by the task's text, listed by similar tasks, or ranked by its words: how it
    /// scored (`named`, `BM25 7.31 of the best 9.12`).
    TaskWords(String),
}

impl Origin {
    /// The source in words, for notes and `--explain`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Origin::Contract { index, glob } => format!("contextFiles[{index}] {}", quoted(glob)),
            Origin::Owns(g) => format!("--owns {}", quoted(g)),
            Origin::Reads(g) => format!("--reads {}", quoted(g)),
            Origin::FilesFrom => "--files-from".to_owned(),
            Origin::TaskOwned(g) => format!("task files_owned {}", quoted(g)),
            Origin::TaskReadonly(g) => format!("task files_readonly {}", quoted(g)),
            Origin::Override { file, line: 0, .. } => file.clone(),
            Origin::Override { file, line, .. } => format!("{file}:{line}"),
            Origin::Add(a) => format!("--add {}", quoted(a)),
            Origin::Drop(g) => format!("--drop {}", quoted(g)),
            Origin::Derived(p) => format!("the workflow ({})", quoted(p)),
            Origin::Related => "--related".to_owned(),
            Origin::TaskWords(how) => format!("the task's words ({how})"),
        }
    }

    /// The source in words for an error: [`Origin::describe`], but an overrides file
    /// outside the repository is named whole, so that the user can find the line.
    #[must_use]
    pub fn in_errors(&self) -> String {
        match self {
            Origin::Override { shown, line, .. } => Origin::Override {
                file: shown.clone(),
                shown: shown.clone(),
                line: *line,
            }
            .describe(),
            _ => self.describe(),
        }
    }
}

/// One thing to look for.
#[derive(Debug, Clone)]
pub struct Request {
    /// The glob or path as written, with `<id>` not yet substituted.
    pub pattern: String,
    pub origin: Origin,
    pub priority: Priority,
    pub kind: String,
    pub sections: Sections,
    pub reason: Option<String>,
    /// Silent when it finds nothing (a document only some repositories have: the embedded
    /// default contracts name many): no "matched nothing" note, no "missing file" warning.
    pub optional: bool,
}

/// The contract placeholder for a change's plan file (see [`plan_file`]).
pub const PLAN_FILE: &str = "<plan-file>";

impl Request {
    /// The request of a role's `contextFiles[index]`.
    #[must_use]
    pub fn from_contract(index: usize, cf: &crate::stages::contract::ContextFile) -> Request {
        Request {
            pattern: cf.glob.clone(),
            origin: Origin::Contract {
                index,
                glob: cf.glob.clone(),
            },
            priority: cf.priority,
            kind: cf.kind.clone(),
            sections: cf.sections(),
            reason: None,
            optional: false,
        }
    }
}

/// The requests with the placeholder `<plan-file>` replaced by the change's plan file
/// ([`plan_file`]); a request without it is returned as it is.
#[must_use]
pub fn with_plan_file(scope: &Scope<'_>, requests: &[Request]) -> Vec<Request> {
    if !requests.iter().any(|r| r.pattern == PLAN_FILE) {
        return requests.to_vec();
    }
    let (pattern, reason) = plan_file(scope);
    requests
        .iter()
        .map(|r| {
            if r.pattern == PLAN_FILE {
                Request {
                    pattern: pattern.clone(),
                    reason: r.reason.clone().or_else(|| reason.clone()),
                    optional: true,
                    ..r.clone()
                }
            } else {
                r.clone()
            }
        })
        .collect()
}

/// The plan file of a change, for the contract placeholder `<plan-file>`: the file that the
/// change's `proposal.md` names on its `Plan_File:` line (relative to the folder above the
/// changes root: `.aiws/` for `.aiws/changes`), when it exists inside the repository; else
/// the glob `<that folder>/plan/*<id>*.md`. Returns the pattern and, for a named file, the
/// reason that says where it came from.
#[must_use]
pub fn plan_file(scope: &Scope<'_>) -> (String, Option<String>) {
    let base = scope
        .changes_root
        .rsplit_once('/')
        .map_or("", |(parent, _)| parent);
    let join = |rel: &str| {
        if base.is_empty() {
            rel.to_owned()
        } else {
            format!("{base}/{rel}")
        }
    };
    let proposal = format!("{}/{}/proposal.md", scope.changes_root, scope.change);
    let named = crate::trust::admit::read_repo_file(scope.root, &scope.root.join(&proposal))
        .ok()
        .flatten()
        .and_then(|bytes| {
            String::from_utf8_lossy(&bytes).lines().find_map(|line| {
                let rest = line.trim().trim_start_matches(['>', '-', '*', ' ']);
                let value = rest.strip_prefix("Plan_File:")?.trim().trim_matches('`');
                (!value.is_empty()).then(|| value.to_owned())
            })
        });
    if let Some(value) = named
        && let Ok(rel) = paths::normalize(&join(&value))
        && !paths::has_glob_chars(&rel)
        && matches!(
            resolve(scope.root, &rel),
            Resolved::Inside { is_dir: false }
        )
    {
        let reason = format!(
            "the change's plan, named by {} (Plan_File: {value})",
            quoted(&proposal)
        );
        return (rel, Some(reason));
    }
    (join(&format!("plan/*{}*.md", scope.change)), None)
}

/// A file one request reached.
#[derive(Debug, Clone)]
pub struct Pick {
    pub path: String,
    pub request: usize,
}

/// One file, merged from every source that reached it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub path: String,
    pub priority: Priority,
    pub kind: String,
    pub sections: Sections,
    pub reason: Option<String>,
    /// The winning source.
    pub origin: Origin,
    /// The sources merged into this one.
    pub merged: Vec<Origin>,
}

/// What expansion found.
#[derive(Debug, Default)]
pub struct Expanded {
    pub picks: Vec<Pick>,
    pub notes: Vec<Note>,
    pub excluded: Vec<Exclusion>,
}

/// Where and how to expand.
#[derive(Debug)]
pub struct Scope<'a> {
    /// The canonical repository root.
    pub root: &'a Path,
    /// The changes root, repository-relative (`changes`, `.aiws/changes`, …).
    pub changes_root: &'a str,
    /// The change id `<id>` becomes.
    pub change: &'a str,
    /// False with `--no-ignore`.
    pub ignore: bool,
    /// What the manifest template names for this change, with any role, and the lock and
    /// overrides file beside it: curate's own.
    pub own: OwnFiles,
}

/// The files the manifest template (the config's `manifest`) names for one change with any
/// role, the lock and the overrides file beside each, as the text before and after where
/// the role stands; made once a compile, matched for every file a walk meets.
#[derive(Debug, Default)]
pub struct OwnFiles(Vec<(String, Option<String>)>);

impl OwnFiles {
    /// Of `template` (`{changes}`, `{change}`, `{role}`) for `change` under `changes_root`.
    #[must_use]
    pub fn new(template: &str, changes_root: &str, change: &str) -> OwnFiles {
        const ROLE: &str = "\u{0}";
        if template.is_empty() {
            return OwnFiles::default();
        }
        let manifest = crate::model::paths::fill(template, changes_root, change, ROLE);
        let forms = [
            crate::stages::manifest::lock_path(&manifest),
            crate::stages::manifest::overrides_path(&manifest),
            manifest,
        ];
        OwnFiles(
            forms
                .into_iter()
                .map(|f| match f.split_once(ROLE) {
                    Some((before, after)) => (before.to_owned(), Some(after.to_owned())),
                    // No `{role}`: the one path, matched whole.
                    None => (f, None),
                })
                .collect(),
        )
    }

    /// Whether `path` is one of them (a name where the role stands).
    fn holds(&self, path: &str) -> bool {
        self.0.iter().any(|(before, after)| match after {
            Some(after) => path
                .strip_prefix(before.as_str())
                .and_then(|rest| rest.strip_suffix(after.as_str()))
                .is_some_and(crate::model::paths::is_name),
            None => path == before,
        })
    }
}

impl Scope<'_> {
    /// `<id>` substituted, the path normalised and refused when it escapes, and a leading
    /// `changes/` moved under the changes root. An absolute path into the repository (as an
    /// editor or a shell's completion writes it) is the path below the root, but in the
    /// contracts, which other machines read.
    pub fn resolve(&self, pattern: &str, origin: &Origin) -> Result<String> {
        let below = match origin {
            Origin::Contract { .. } => None,
            _ => self.below_root(pattern),
        };
        let pattern = below.as_deref().unwrap_or(pattern);
        let substituted = pattern.replace("<id>", self.change);
        let normal = paths::normalize(&substituted).map_err(|e| Error::Escape {
            origin: origin.in_errors(),
            path: pattern.to_owned(),
            problem: e.problem(),
        })?;
        Ok(self.under_changes_root(normal))
    }

    /// `pattern` below the root when it is an absolute path that starts there: the root as
    /// given, or the path's longest existing part resolved through links to the root or
    /// inside it (`/tmp/repo/src/**` when the root is `/private/tmp/repo`).
    fn below_root(&self, pattern: &str) -> Option<String> {
        let path = Path::new(pattern);
        if !path.is_absolute() {
            return None;
        }
        if let Ok(rest) = path.strip_prefix(self.root) {
            return rest.to_str().map(str::to_owned);
        }
        let ancestor = path.ancestors().find(|a| a.exists())?;
        let real = ancestor.canonicalize().ok()?;
        let inside = real.strip_prefix(self.root).ok()?;
        inside
            .join(path.strip_prefix(ancestor).ok()?)
            .to_str()
            .map(str::to_owned)
    }

    fn under_changes_root(&self, path: String) -> String {
        if self.changes_root == "changes" {
            return path;
        }
        match path.strip_prefix("changes/") {
            Some(rest) => format!("{}/{rest}", self.changes_root),
            None if path == "changes" => self.changes_root.to_owned(),
            None => path,
        }
    }

    /// True for curate's own files (and temporary files) under the changes root, and for
    /// what the manifest template names for this change (any role; its lock and overrides
    /// file beside it): a Trellis task's `implement.jsonl`, a `manifest = "docs/{change}/
    /// {role}.jsonl"`'s files.
    #[must_use]
    pub fn is_own_file(&self, path: &str) -> bool {
        self.own.holds(path)
            || path.strip_prefix(self.changes_root).is_some_and(|rest| {
                let name = path.rsplit('/').next().unwrap_or(path);
                rest.starts_with('/')
                    && (name.ends_with("-context.jsonl")
                        || name.ends_with("-context.lock.json")
                        || name.ends_with("-context.overrides.jsonl")
                        || crate::util::atomic::is_temp_name(name))
            })
    }
}

/// A compiled glob of one request.
struct Pattern {
    request: usize,
    /// The glob as resolved (repository-relative).
    glob: String,
    matcher: globset::GlobMatcher,
    /// Segments below the prefix, or `None` when `**` lets it go any depth.
    depth: Option<usize>,
}

/// Expands every request, in order; matches are sorted (byte order) within a request.
pub fn expand(scope: &Scope<'_>, requests: &[Request]) -> Result<Expanded> {
    expand_listed(scope, requests, &Listings::none())
}

/// [`expand`], each folder listed through `listings` (a folder whose stamp is kept is not
/// listed again).
pub fn expand_listed(
    scope: &Scope<'_>,
    requests: &[Request],
    listings: &Listings,
) -> Result<Expanded> {
    let mut out = Expanded::default();
    let mut rules = IgnoreRules::new(scope.root, scope.ignore);
    let mut per_request: Vec<Vec<String>> = vec![Vec::new(); requests.len()];
    // prefix -> patterns sharing it (one walk each)
    let mut walks: BTreeMap<String, Vec<Pattern>> = BTreeMap::new();

    let requests = &with_plan_file(scope, requests);
    for (index, request) in requests.iter().enumerate() {
        let path = scope.resolve(&request.pattern, &request.origin)?;
        let literal = !paths::has_glob_chars(&path) || scope.root.join(&path).is_file();
        if literal {
            match literal_file(scope, &mut rules, &path, request, &mut out) {
                Literal::File(p) => per_request[index].push(p),
                Literal::Folder => add_walk(&mut walks, index, &format!("{path}/**"), request)?,
                Literal::None => {}
            }
        } else {
            add_walk(&mut walks, index, &path, request)?;
        }
    }

    for (prefix, patterns) in &walks {
        walk(
            scope,
            &mut rules,
            listings,
            prefix,
            patterns,
            &mut per_request,
            &mut out,
        );
    }

    for (index, mut paths) in per_request.into_iter().enumerate() {
        paths.sort_unstable();
        paths.dedup();
        let request = &requests[index];
        if paths.is_empty() && paths::has_glob_chars(&request.pattern) && !request.optional {
            out.notes.push(Note::info(format!(
                "glob {} matched nothing ({})",
                quoted(&scope.resolve(&request.pattern, &request.origin)?),
                request.origin.describe()
            )));
        }
        out.picks.extend(paths.into_iter().map(|path| Pick {
            path,
            request: index,
        }));
    }
    Ok(out)
}

fn add_walk(
    walks: &mut BTreeMap<String, Vec<Pattern>>,
    index: usize,
    path: &str,
    request: &Request,
) -> Result<()> {
    let glob = compile_glob(path, &request.origin)?;
    let prefix = paths::literal_prefix(path).to_owned();
    let below = if prefix.is_empty() {
        path
    } else {
        &path[prefix.len() + 1..]
    };
    let depth = (!below.contains("**")).then(|| below.split('/').count());
    walks.entry(prefix).or_default().push(Pattern {
        request: index,
        glob: path.to_owned(),
        matcher: glob.compile_matcher(),
        depth,
    });
    Ok(())
}

/// Compiles a glob the way the spec reads it: `*` does not cross `/`, `**` does.
pub fn compile_glob(pattern: &str, origin: &Origin) -> Result<Glob> {
    crate::util::glob::compile(pattern).map_err(|source| Error::Glob {
        glob: pattern.to_owned(),
        origin: origin.in_errors(),
        source,
    })
}

enum Literal {
    File(String),
    Folder,
    None,
}

/// Where a path really leads.
enum Resolved {
    Inside { is_dir: bool },
    Outside,
    Dangling,
    Missing,
}

fn resolve(root: &Path, rel: &str) -> Resolved {
    let full = root.join(rel);
    match full.canonicalize() {
        Ok(real) => {
            if real.starts_with(root) {
                Resolved::Inside {
                    is_dir: real.is_dir(),
                }
            } else {
                Resolved::Outside
            }
        }
        Err(_) => {
            if full.symlink_metadata().is_ok() {
                Resolved::Dangling
            } else {
                Resolved::Missing
            }
        }
    }
}

fn literal_file(
    scope: &Scope<'_>,
    rules: &mut IgnoreRules,
    path: &str,
    request: &Request,
    out: &mut Expanded,
) -> Literal {
    let origin = &request.origin;
    if paths::has_control_char(path) {
        out.excluded
            .push(Exclusion::new(path, "the path holds a control character"));
        return Literal::None;
    }
    match resolve(scope.root, path) {
        // Overrides and `--add` never come here: layer 2 checks its own files (a missing
        // one is an error there); a missing baseline or assigned file is a warning.
        Resolved::Missing if request.optional => Literal::None,
        Resolved::Missing => {
            out.notes.push(Note::warning(format!(
                "missing file {} ({})",
                quoted(path),
                origin.describe()
            )));
            Literal::None
        }
        Resolved::Dangling => {
            out.excluded
                .push(Exclusion::new(path, "a dangling link, never read"));
            Literal::None
        }
        Resolved::Outside => {
            out.excluded.push(Exclusion::new(
                path,
                "a link out of the repository, never read",
            ));
            Literal::None
        }
        Resolved::Inside { is_dir: true } => Literal::Folder,
        Resolved::Inside { is_dir: false } => {
            if scope.is_own_file(path) {
                return Literal::None;
            }
            if rules.is_ignored(path, false) {
                out.notes.push(Note::info(format!(
                    "{} is ignored by the ignore rules but named literally ({}), so it is taken",
                    quoted(path),
                    origin.describe()
                )));
            }
            Literal::File(path.to_owned())
        }
    }
}

/// Walks from the literal `prefix` the patterns that share it, adding their picks to
/// `per_request` and what it left out to `out`; a prefix that is a link out is reported, one
/// that is missing, ignored or inside `.git` walks nothing.
fn walk(
    scope: &Scope<'_>,
    rules: &mut IgnoreRules,
    listings: &Listings,
    prefix: &str,
    patterns: &[Pattern],
    per_request: &mut [Vec<String>],
    out: &mut Expanded,
) {
    if !prefix.is_empty() {
        match resolve(scope.root, prefix) {
            Resolved::Inside { is_dir: true } => {}
            Resolved::Outside => {
                out.excluded.push(Exclusion::new(
                    prefix,
                    "a link out of the repository, never read",
                ));
                return;
            }
            _ => return,
        }
        if prefix.split('/').any(|s| s == ".git") || rules.is_ignored(prefix, true) {
            return;
        }
    }
    let max_depth = patterns
        .iter()
        .map(|p| p.depth)
        .try_fold(0, |acc, d| d.map(|d| acc.max(d)));
    // The rules of the folders above the start (each looked for once); the walk lists the
    // start and every folder below, and so knows their ignore files without looking.
    let chain = if prefix.is_empty() {
        Chain::default()
    } else {
        rules.chain_above(prefix)
    };
    let walk = Walk {
        scope,
        rules,
        listings,
        patterns,
        max_depth,
    };
    let found = walk.folder(prefix, 1, &chain);
    for (request, path) in found.picks {
        per_request[request].push(path);
    }
    out.excluded.extend(found.excluded);
}

/// One glob walk (the patterns sharing a literal prefix): depth first, each folder's
/// entries in the order the folder lists them, no link followed, `.git` and ignored
/// folders not entered. A folder's subfolders are walked in parallel and what they find is
/// put back in the order of the listing, so the result is the same at any `-j`.
struct Walk<'w, 's> {
    scope: &'w Scope<'s>,
    rules: &'w IgnoreRules,
    listings: &'w Listings,
    patterns: &'w [Pattern],
    max_depth: Option<usize>,
}

/// What a walk found: the request each path was picked for, and what it left out.
#[derive(Debug, Default)]
struct Found {
    picks: Vec<(usize, String)>,
    excluded: Vec<Exclusion>,
}

impl Found {
    fn append(&mut self, mut other: Found) {
        self.picks.append(&mut other.picks);
        self.excluded.append(&mut other.excluded);
    }
}

/// Folders this far below a walk's start have their subfolders walked in parallel; deeper
/// ones are walked on one thread with a stack on the heap, so that no folder depth can
/// exhaust a thread's stack.
const PARALLEL_DEPTH: usize = 3;

/// A folder being walked on the heap stack: its entries, the next one, where it is.
struct Frame<'w> {
    entries: Entries<'w>,
    next: usize,
    rel: String,
    depth: usize,
    chain: Chain,
}

impl<'w> Walk<'w, '_> {
    /// Lists folder `rel` (repository-relative) and adds its rules to `above`: its entries
    /// and the chain of rules for them; `None` when it cannot be read (it holds nothing that
    /// can be selected).
    fn list(&self, rel: &str, above: &Chain) -> Option<(Entries<'w>, Chain)> {
        let entries = self.listings.list(self.scope.root, rel)?;
        let mut present = Present::default();
        for (name, kind) in entries.iter() {
            if kind == Kind::File {
                match name.to_str() {
                    Some(".gitignore") => present.gitignore = true,
                    Some(".ignore") => present.ignore = true,
                    _ => {}
                }
            }
        }
        let mut chain = above.clone();
        chain.push(rel, self.rules.of_listing(rel, present));
        Some((entries, chain))
    }

    /// Walks folder `rel` (repository-relative), whose entries are at `depth` below the
    /// start; `above` holds the rules of the folders above it.
    fn folder(&self, rel: &str, depth: usize, above: &Chain) -> Found {
        if depth > PARALLEL_DEPTH {
            return self.folder_on_one_thread(rel, depth, above);
        }
        let Some((entries, chain)) = self.list(rel, above) else {
            return Found::default();
        };
        // One entry, what it finds (a subfolder: all it holds) added to `found`.
        let take = |(name, kind): (&OsStr, Kind), found: &mut Found| {
            if let Some(sub) = self.entry(name, kind, rel, depth, &chain, found) {
                found.append(self.folder(&sub, depth + 1, &chain));
            }
        };
        let mut found = Found::default();
        // Two subfolders at least, or there is nothing to walk side by side.
        if entries
            .iter()
            .filter(|(_, kind)| *kind == Kind::Folder)
            .nth(1)
            .is_none()
        {
            entries.iter().for_each(|e| take(e, &mut found));
            return found;
        }
        let parts: Vec<Found> = (0..entries.len())
            .into_par_iter()
            .filter_map(|k| entries.get(k))
            .map(|e| {
                let mut part = Found::default();
                take(e, &mut part);
                part
            })
            .collect();
        for part in parts {
            found.append(part);
        }
        found
    }

    /// [`Walk::folder`] depth first on this thread, the folders being walked kept on the
    /// heap: the same finds in the same order as the recursion.
    fn folder_on_one_thread(&self, rel: &str, depth: usize, above: &Chain) -> Found {
        let mut found = Found::default();
        let Some((entries, chain)) = self.list(rel, above) else {
            return found;
        };
        let mut stack = vec![Frame {
            entries,
            next: 0,
            rel: rel.to_owned(),
            depth,
            chain,
        }];
        while let Some(frame) = stack.last_mut() {
            let Some((name, kind)) = frame.entries.get(frame.next) else {
                stack.pop();
                continue;
            };
            frame.next += 1;
            let enter = self.entry(
                name,
                kind,
                &frame.rel,
                frame.depth,
                &frame.chain,
                &mut found,
            );
            if let Some(sub) = enter {
                let depth = frame.depth + 1;
                if let Some((entries, chain)) = self.list(&sub, &frame.chain) {
                    stack.push(Frame {
                        entries,
                        next: 0,
                        rel: sub,
                        depth,
                        chain,
                    });
                }
            }
        }
        found
    }

    /// Takes or leaves out one entry of folder `dir` (what it finds added to `out`); the
    /// repository-relative path of a folder to walk into.
    fn entry(
        &self,
        name: &OsStr,
        kind: Kind,
        dir: &str,
        depth: usize,
        chain: &Chain,
        out: &mut Found,
    ) -> Option<String> {
        let Some(name) = name.to_str() else {
            let name = name.to_string_lossy();
            let lossy = if dir.is_empty() {
                name.into_owned()
            } else {
                format!("{dir}/{name}")
            };
            if kind == Kind::Folder || self.patterns.iter().any(|p| p.matcher.is_match(&lossy)) {
                out.excluded
                    .push(Exclusion::new(&lossy, "the path is not UTF-8"));
            }
            return None;
        };
        let rel = if dir.is_empty() {
            name.to_owned()
        } else {
            format!("{dir}/{name}")
        };
        if kind == Kind::Folder {
            if name == ".git" || self.rules.matches_in(chain, &rel, true) {
                return None;
            }
            return self.max_depth.is_none_or(|max| depth < max).then_some(rel);
        }
        let (scope, patterns) = (self.scope, self.patterns);
        let matching = || {
            patterns
                .iter()
                .filter(|p| p.matcher.is_match(&rel))
                .map(|p| p.request)
        };
        if kind == Kind::Link {
            match resolve(scope.root, &rel) {
                Resolved::Inside { is_dir: false } => {}
                Resolved::Inside { is_dir: true } | Resolved::Missing => return None,
                Resolved::Outside => {
                    // A link out of the tree is reported when a glob names it or when it is
                    // a folder a glob would otherwise have walked into.
                    let folder_in_reach = scope.root.join(&rel).is_dir()
                        && patterns.iter().any(|p| could_descend(&p.glob, &rel));
                    if matching().next().is_some() || folder_in_reach {
                        out.excluded.push(Exclusion::new(
                            &rel,
                            "a link out of the repository, never read",
                        ));
                    }
                    return None;
                }
                Resolved::Dangling => {
                    if matching().next().is_some() {
                        out.excluded
                            .push(Exclusion::new(&rel, "a dangling link, never read"));
                    }
                    return None;
                }
            }
        }
        let mut requests = matching();
        let first = requests.next()?;
        if scope.is_own_file(&rel) || self.rules.matches_in(chain, &rel, false) {
            return None;
        }
        if paths::has_control_char(&rel) {
            out.excluded
                .push(Exclusion::new(&rel, "the path holds a control character"));
            return None;
        }
        let at = out.picks.len();
        out.picks.push((first, String::new()));
        for request in requests {
            out.picks.push((request, rel.clone()));
        }
        // The first pick takes the path itself, the others a copy.
        out.picks[at].1 = rel;
        None
    }
}

/// True when `glob` could match something below the folder `dir`: each of the folder's
/// segments matches the glob's segment at the same depth, or a `**` comes first.
fn could_descend(glob: &str, dir: &str) -> bool {
    let parts: Vec<&str> = glob.split('/').collect();
    for (i, segment) in dir.split('/').enumerate() {
        match parts.get(i) {
            None => return false,
            Some(&"**") => return true,
            Some(part) => {
                let matches = crate::util::glob::matcher(part).is_ok_and(|m| m.is_match(segment));
                if !matches {
                    return false;
                }
            }
        }
    }
    parts.len() > dir.split('/').count()
}

/// Merges picks of the same file: one candidate at the position of the winning source (the
/// highest priority, the first on a tie), keeping its kind and reason; sections unioned.
#[must_use]
pub fn merge(picks: &[Pick], requests: &[Request]) -> Vec<Candidate> {
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, pick) in picks.iter().enumerate() {
        groups.entry(pick.path.as_str()).or_default().push(i);
    }
    let mut merged: Vec<(usize, Candidate)> = groups
        .into_values()
        .map(|members| {
            let winner = members
                .iter()
                .copied()
                .min_by_key(|&i| (requests[picks[i].request].priority, i))
                .unwrap_or(members[0]);
            let w = &requests[picks[winner].request];
            let mut sections = w.sections.clone();
            let mut others = Vec::new();
            for &i in &members {
                if i != winner {
                    let r = &requests[picks[i].request];
                    sections = sections.union(&r.sections);
                    others.push(r.origin.clone());
                }
            }
            (
                winner,
                Candidate {
                    path: picks[winner].path.clone(),
                    priority: w.priority,
                    kind: w.kind.clone(),
                    sections,
                    reason: w.reason.clone(),
                    origin: w.origin.clone(),
                    merged: others,
                },
            )
        })
        .collect();
    merged.sort_by_key(|(winner, _)| *winner);
    merged.into_iter().map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(pattern: &str, priority: Priority, sections: Sections) -> Request {
        Request {
            pattern: pattern.to_owned(),
            origin: Origin::Owns(pattern.to_owned()),
            priority,
            kind: "k".to_owned(),
            sections,
            reason: None,
            optional: false,
        }
    }

    #[test]
    fn merge_keeps_the_highest_priority_first_source_and_unions_sections() {
        let requests = vec![
            req("a", Priority::Medium, Sections::ranges(vec![[1, 5]])),
            req("b", Priority::High, Sections::ranges(vec![[10, 20]])),
            req("c", Priority::High, Sections::ranges(vec![[30, 40]])),
        ];
        let picks = vec![
            Pick {
                path: "x".into(),
                request: 0,
            },
            Pick {
                path: "y".into(),
                request: 0,
            },
            Pick {
                path: "x".into(),
                request: 1,
            },
            Pick {
                path: "x".into(),
                request: 2,
            },
        ];
        let merged = merge(&picks, &requests);
        assert_eq!(merged.len(), 2);
        assert_eq!(
            merged[0].path, "y",
            "x moved to its winning source's position"
        );
        assert_eq!(merged[1].path, "x");
        assert_eq!(merged[1].priority, Priority::High);
        assert_eq!(merged[1].origin, Origin::Owns("b".into()));
        assert_eq!(
            merged[1].sections,
            Sections::Ranges(vec![[1, 5], [10, 20], [30, 40]])
        );
    }

    #[test]
    fn only_folders_a_glob_could_enter_are_in_reach() {
        assert!(could_descend("docs/**/*.md", "docs/external"));
        assert!(could_descend("**/*.rs", "docs/external"));
        assert!(could_descend("docs/*/x.md", "docs/external"));
        assert!(!could_descend("[st]*/**/*.rs", "docs/external"));
        assert!(!could_descend("docs/*.md", "docs/external"));
        assert!(!could_descend("src/**", "docs/external"));
    }

    #[test]
    fn changes_globs_move_under_the_changes_root() {
        let root = Path::new("/r");
        let scope = Scope {
            root,
            changes_root: ".aiws/changes",
            change: "c1",
            ignore: true,
            own: OwnFiles::default(),
        };
        let o = Origin::FilesFrom;
        assert_eq!(
            scope.resolve("changes/<id>/plan/*.md", &o).unwrap(),
            ".aiws/changes/c1/plan/*.md"
        );
        assert_eq!(scope.resolve("./src//x", &o).unwrap(), "src/x");
        assert!(scope.resolve("../x", &o).is_err());
        assert!(scope.is_own_file(".aiws/changes/c1/analysis/worker-context.jsonl"));
        assert!(!scope.is_own_file("docs/worker-context.jsonl"));
    }
}
