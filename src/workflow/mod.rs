//! Workflows: everything curate knows about one way of working, one file each.
//!
//! A [`Workflow`] says how a repository that follows it is recognised, where a change (a
//! task, a lane) lives and how its id resolves (archives included), which embedded baseline
//! its roles start from, the role names its hosts use, where and in what form its consumer
//! reads curate's result, what that consumer injects on its own, and in which units it cuts.
//! The compile pipeline, render, check and the hooks ask the workflow; none of them names
//! one. Adding a workflow is adding a file here and a line to [`ALL`].

mod aiws;
mod aiws_legacy;
mod bmad;
pub mod curate;
mod guild;
mod kiro;
mod openspec;
mod simple_yaml;
mod spec_kit;
pub mod trellis;

use std::fmt;
use std::path::Path;

pub use crate::trust::tree::Tree;

use crate::model::Lang;

/// The plain layout's manifest path template.
pub const DEFAULT_MANIFEST: &str = "{changes}/{change}/analysis/{role}-context.jsonl";

/// Every workflow, in the order detection tries them (the most specific layout first).
pub static ALL: &[&dyn Workflow] = &[
    &trellis::Trellis,
    &guild::Guild,
    &openspec::OpenSpec,
    &spec_kit::SpecKit,
    &kiro::Kiro,
    &bmad::Bmad,
    &aiws::Aiws,
    &aiws_legacy::AiwsLegacy,
    &curate::Curate,
];

/// Where a change was found: its changes root and its folder's name there (an archived
/// change's root is its archive folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Repository-relative, `/`-separated.
    pub changes_root: String,
    /// The change folder's name under `changes_root`.
    pub folder: String,
}

impl Located {
    /// The change folder, repository-relative.
    #[must_use]
    pub fn path(&self) -> String {
        format!("{}/{}", self.changes_root, self.folder)
    }
}

/// A file the workflow derives from a change's content (OpenSpec: the current spec of each
/// capability a delta spec changes), added to the baseline as a literal path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    /// Repository-relative.
    pub path: String,
    pub priority: crate::model::Priority,
    pub kind: String,
    pub reason: String,
    pub sections: crate::model::Sections,
}

/// What [`Workflow::derived_for`] is given: the contract role, the files layers 0 and 1
/// selected, and the task's own words.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    pub role: &'a str,
    pub selected: &'a [&'a str],
    pub task_text: &'a str,
}

/// A listed file's bytes as the consumer will read them (`None`: it finds none).
pub type Reader<'a> = &'a dyn Fn(&str) -> Option<std::sync::Arc<Vec<u8>>>;

/// The units a consumer cuts its injected text in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ByteBudget {
    /// Bytes a file may have before the consumer cuts it (0: no cap).
    pub per_file: u64,
    /// Bytes each of the change's own files the consumer injects may have (0: no cap).
    pub per_artifact: u64,
    /// Bytes of the whole injection (0: no cap).
    pub total: u64,
}

/// A warning about a workflow's own settings file, at its line (0: the whole file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsWarning {
    /// Repository-relative.
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for SettingsWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

/// One way of working. Every method but [`Workflow::name`], [`Workflow::detect`] and
/// [`Workflow::locate`] has the plain layout's answer as its default.
pub trait Workflow: Sync + std::panic::RefUnwindSafe {
    /// The name `profile` takes (`trellis`).
    fn name(&self) -> &'static str;

    /// What the repository shows when it follows this workflow (the folder or file that
    /// gave it away), or `None`.
    fn detect(&self, root: &Tree) -> Option<String>;

    /// Finds the change `id` (already checked as a name) in this workflow's layout,
    /// archives included; `run` narrows it to one run where the workflow has runs (Guild).
    fn locate(&self, root: &Tree, id: &str, run: Option<&str>) -> Option<Located>;

    /// Why `id` was not located although it is there more than once (Guild: a lane in two
    /// runs), with the option that picks one; `None` when it is simply not there.
    fn ambiguous(&self, _root: &Tree, _id: &str, _run: Option<&str>) -> Option<String> {
        None
    }

    /// The change the workflow's own tools would work on now, when no change is named (spec-kit:
    /// `.specify/feature.json`, `SPECIFY_FEATURE`, the current git branch), as a change id
    /// that is there; `None` when its tools name none.
    fn current(&self, _root: &Tree) -> Option<String> {
        None
    }

    /// The changes root when the change is not found (`None`: chosen per change among
    /// `changes` and `.aiws/changes`).
    fn changes_root(&self) -> Option<&'static str> {
        None
    }

    /// Globs of the other folders changes sit in (archives; Guild's runs), as changes roots:
    /// `check` looks there too.
    fn more_roots(&self) -> &'static [&'static str] {
        &[]
    }

    /// Changes roots the workflow's own settings name (BMAD: `devStoryLocation`), beside
    /// [`Workflow::changes_root`]: `check` looks there too.
    fn roots_in(&self, _root: &Tree) -> Vec<String> {
        Vec::new()
    }

    /// Where a change that is not found was looked for, in words for the report.
    fn looked(&self, id: &str) -> Vec<String> {
        self.changes_root()
            .map(|r| vec![format!("{r}/{id}")])
            .unwrap_or_default()
    }

    /// The ids of the changes there are (not the archived ones), for a "did you mean" when
    /// a change is not found: the folders of `changes_root`.
    fn change_ids(&self, root: &Tree, changes_root: &str) -> Vec<String> {
        folders(root, changes_root)
            .into_iter()
            .filter(|f| f != "archive")
            .collect()
    }

    /// What is wrong in the workflow's own settings that its tools pass over without a word
    /// (a cap that is not a number, which the consumer replaces by its default).
    fn settings_warnings(&self, _root: &Tree) -> Vec<SettingsWarning> {
        Vec::new()
    }

    /// An id as a user may write it, reduced to the change's name (Trellis accepts
    /// `archive/2026-11/<task>`). Returns the id unchanged when there is nothing to strip.
    fn normalize_id<'a>(&self, id: &'a str) -> &'a str {
        id
    }

    /// The folder an id written as a path names as the change's place (Trellis:
    /// `archive/2026-11/<task>` names `.trellis/tasks/archive/2026-11`): the change is looked
    /// for there only, not where [`Workflow::locate`] would find a change of the same name.
    fn pinned(&self, _id: &str) -> Option<String> {
        None
    }

    /// Folder names in the changes root that are not changes (`archive`), with what holds
    /// the archived ones, for the message that refuses them as an id.
    fn reserved(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// The name a change had in the live changes root, given its archived folder's name
    /// (OpenSpec archives `add-2fa` as `2026-12-04-add-2fa`); the name itself by default.
    fn live_name<'a>(&self, archived: &'a str) -> &'a str {
        archived
    }

    /// The prompt line (its key, matched without regard to case) by which the workflow's
    /// lead names the change a sub-agent is dispatched onto (Trellis: `Active task: <path>`).
    fn task_line(&self) -> Option<&'static str> {
        None
    }

    /// A role name as a user or host may write it, reduced to the name the manifest's file
    /// is named after (Trellis: `trellis-implement` is `implement`).
    fn normalize_role<'a>(&self, role: &'a str) -> &'a str {
        role
    }

    /// The manifest path template (`{changes}`, `{change}`, `{role}`).
    fn manifest(&self) -> &'static str {
        DEFAULT_MANIFEST
    }

    /// Whether the consumer honours `sections` (false: it inlines whole files).
    fn sections(&self) -> bool {
        true
    }

    /// Role names the workflow's hosts use, mapped to contract roles.
    fn roles(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// The embedded contracts the roles' baselines come from when the repository has no
    /// contracts file of its own.
    fn contracts(&self) -> &'static str {
        include_str!("../../contracts/workflow-delegation-contracts.json")
    }

    /// Files derived from the change's content, added after the role's baseline.
    fn derived(&self, _root: &Tree, _change: &Located) -> Vec<Derived> {
        Vec::new()
    }

    /// Files the workflow adds for contract role `role` once layers 0 and 1 are known, after
    /// [`Workflow::derived`] (Kiro: a steering file whose `fileMatchPattern` matches one of
    /// `selected`, or that `task_text` names; BMAD: what its `core-config.yaml` gives the
    /// role). `task_text`: `--task-text` and the task file's words.
    fn derived_for(&self, _root: &Tree, _change: &Located, _for: &Selection<'_>) -> Vec<Derived> {
        Vec::new()
    }

    /// Role names found in the repository (Guild: each specialist of `.guild/agents/`),
    /// mapped to contract roles.
    fn dynamic_roles(&self, _root: &Tree) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Folders of the baseline that are not this change's (Trellis: the spec folders of a
    /// monorepo's other packages), each with why: what only the contracts bring from them is
    /// left out. Repository-relative, ending in `/`.
    fn out_of_scope(&self, _root: &Tree, _change: &Located) -> Vec<(String, String)> {
        Vec::new()
    }

    /// What the change still lacks that its sub-agent will need (Guild: the receipt of a
    /// lane it depends on), each a warning.
    fn missing(&self, _root: &Tree, _change: &Located) -> Vec<String> {
        Vec::new()
    }

    /// A second file the consumer reads, rendered from the compile beside the manifest
    /// (Guild: the lane's `guild.context_bundle.v1` bundle): its repository-relative path
    /// and the template it is rendered with.
    fn companion(&self, _change: &Located, _role: &str) -> Option<(String, &'static str)> {
        None
    }

    /// Values a workflow's own templates use (`workflow.values`; Guild: the run id, spec
    /// and plan of a lane).
    fn template_values(&self, _root: &Tree, _change: &Located) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// True when the workflow's tools date a change by its files' newest modification time
    /// (OpenSpec's `list` sorts and shows changes so): the files curate writes into a change
    /// take that time, so that a compile does not make the change look just edited.
    fn dates_changes_by_files(&self) -> bool {
        false
    }

    /// The files of a change folder the consumer injects on its own (names relative to the
    /// change folder): never listed, but they count as context (a change holding one is
    /// not BLOCKED).
    fn injected(&self) -> &'static [&'static str] {
        &[]
    }

    /// True when the manifest file is also the author's list (Trellis' `implement.jsonl`):
    /// its entries are read as layer 2 and kept, and curate's notes are written as JSON
    /// rows without a `file` key instead of `//` lines.
    fn authored(&self) -> bool {
        false
    }

    /// The consumer's byte caps, read from the repository (`None`: it counts nothing).
    fn byte_budget(&self, _root: &Tree) -> Option<ByteBudget> {
        None
    }

    /// The bytes the consumer counts for a listed file: `injected` of its `whole` bytes
    /// after its per-file cut at `cap`, with whatever frame it adds (Trellis: a header line
    /// and, when cut, a notice).
    fn block_bytes(&self, _path: &str, injected: u64, _whole: u64, _cap: u64) -> u64 {
        injected
    }

    /// The bytes of the consumer's total its own injections of change `folder`
    /// (repository-relative) take, so that they still fit after curate's selection.
    fn reserved_bytes(&self, _root: &Tree, _folder: &str) -> u64 {
        0
    }

    /// The files the consumer's hook will name instead of inlining once its byte total is
    /// reached, in its order: it reads `rows` (the list as curate writes it) and then change
    /// `folder`'s own files. `read` gives a listed file's bytes (`None`: the hook finds none).
    /// Empty where the consumer counts no total.
    fn left_out(&self, _root: &Tree, _folder: &str, _rows: &str, _read: Reader<'_>) -> Vec<String> {
        Vec::new()
    }

    /// The consumer's own injector, when one is installed in the repository (a path): curate
    /// then writes its result for it and does not inject a second time.
    fn injector(&self, _root: &Tree) -> Option<String> {
        None
    }

    /// What the listed files are, in the sticky instruction's words and language.
    fn describes(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => {
                "the project's constraints, the delegation contract, the change plan and the module assigned to you"
            }
            Lang::Zh => "项目约束、委托合同、变更计划与分配模块",
        }
    }
}

impl fmt::Debug for dyn Workflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for dyn Workflow {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

/// The plain layout: curate's own.
#[must_use]
pub fn plain() -> &'static dyn Workflow {
    &curate::Curate
}

/// The workflow called `name`.
#[must_use]
pub fn by_name(name: &str) -> Option<&'static dyn Workflow> {
    ALL.iter().copied().find(|w| w.name() == name)
}

/// Every workflow's name, for messages and completions.
#[must_use]
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|w| w.name()).collect()
}

/// Parses a workflow name (the `--profile` flag, `CURATE_PROFILE`, the config's `profile`).
///
/// # Errors
/// A message listing the names when `name` is none of them.
pub fn parse(name: &str) -> Result<&'static dyn Workflow, String> {
    by_name(name.trim()).ok_or_else(|| {
        format!(
            "unknown profile {:?}: use one of {}",
            name.trim(),
            names().join(", ")
        )
    })
}

/// A workflow's marker that is there but cannot be read for what detection needs (aiws'
/// `.aiws/manifest.json` that is no JSON, or records its version as no version): the file,
/// the place and the problem. Detection would pass over it without a word.
#[must_use]
pub fn unreadable_marker(root: &Tree) -> Option<(&'static str, crate::model::Pos, String)> {
    aiws::manifest_problem(root).map(|(pos, problem)| (".aiws/manifest.json", pos, problem))
}

/// The workflows the repository shows, each with its evidence, in [`ALL`]'s order (the
/// plain layout is never listed: it is what is left).
#[must_use]
pub fn detect(root: &Tree) -> Vec<(&'static dyn Workflow, String)> {
    ALL.iter()
        .copied()
        .filter(|w| w.name() != plain().name())
        .filter_map(|w| w.detect(root).map(|e| (w, e)))
        .collect()
}

/// Every other workflow's folder that holds `id`, as `(workflow, folder)`, for a warning
/// that says where the change is and how to use it.
#[must_use]
pub fn elsewhere(
    root: &Tree,
    id: &str,
    except: &dyn Workflow,
) -> Vec<(&'static dyn Workflow, String)> {
    let mut out: Vec<(&'static dyn Workflow, String)> = Vec::new();
    for w in ALL.iter().copied().filter(|w| w.name() != except.name()) {
        if let Some(found) = w.locate(root, w.normalize_id(id), None) {
            let path = found.path();
            if !out.iter().any(|(_, p)| *p == path) {
                out.push((w, path));
            }
        }
    }
    out
}

/// A path into change `change`'s folder as it was before the change was archived under
/// `changes_root` (under its live name, [`Workflow::live_name`]), moved to the archived
/// folder when only that holds it (as Trellis' `task.py validate` reads such rows); any
/// other path as it is.
#[must_use]
pub fn archived_path(
    root: &Path,
    w: &dyn Workflow,
    changes_root: &str,
    change: &str,
    path: String,
) -> String {
    let Some(live) = w.changes_root() else {
        return path;
    };
    if live == changes_root || root.join(&path).exists() {
        return path;
    }
    match path.strip_prefix(&format!("{live}/{}/", w.live_name(change))) {
        Some(rest) => {
            let moved = format!("{changes_root}/{change}/{rest}");
            if root.join(&moved).exists() {
                moved
            } else {
                path
            }
        }
        None => path,
    }
}

/// The archived change repository path `rel` lies in: its changes root (a folder one of
/// [`Workflow::more_roots`] matches) and the change's folder there.
#[must_use]
pub fn archived_change<'a>(w: &dyn Workflow, rel: &'a str) -> Option<(&'a str, &'a str)> {
    let roots: Vec<_> = w
        .more_roots()
        .iter()
        .filter_map(|g| crate::util::glob::matcher(g).ok())
        .collect();
    let (end, _) = rel
        .match_indices('/')
        .find(|(end, _)| roots.iter().any(|m| m.is_match(&rel[..*end])))?;
    let (change, rest) = rel[end + 1..].split_once('/')?;
    (!rest.is_empty()).then_some((&rel[..end], change))
}

/// A folder `root/rel` exists (the admission rules apply to whatever is read from it).
fn is_dir(root: &Path, rel: &str) -> bool {
    folder_inside(root, rel).is_some()
}

/// `root/rel` when it is a folder inside the repository once links are followed: a folder
/// reached through a link that leaves the repository is neither listed nor taken for a
/// change, as a file there is never read.
fn folder_inside(root: &Path, rel: &str) -> Option<std::path::PathBuf> {
    let path = root.join(rel);
    let real = path.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    (real.starts_with(&root) && real.is_dir()).then_some(path)
}

/// `id` as a folder directly under `changes_root` that holds a change: one that holds only
/// curate's own output (a manifest and its lock written there by an earlier compile) is
/// none, so that what a compile writes never makes the next one find the change twice.
fn direct(root: &Path, changes_root: &str, id: &str) -> Option<Located> {
    let rel = format!("{changes_root}/{id}");
    (is_dir(root, &rel) && !only_curates_output(&root.join(&rel))).then(|| Located {
        changes_root: changes_root.to_owned(),
        folder: id.to_owned(),
    })
}

/// How many entries [`only_curates_output`] looks at before it takes a folder for a change.
const OWN_OUTPUT_ENTRIES: usize = 256;

/// True when `dir` holds files and all of them, in it and in its folders, are curate's own
/// output: a lock (`<stem>.lock.json`), the manifest or overrides file beside a lock
/// (`<stem>.jsonl`, `<stem>.overrides.jsonl`) and curate's temporary files. Anything else
/// (a link, another file, an empty folder alone, more entries than are looked at) makes it
/// a change, as does an entry that cannot be read.
#[must_use]
pub fn only_curates_output(dir: &Path) -> bool {
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    let (mut seen, mut locks) = (0usize, 0usize);
    while let Some((folder, depth)) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&folder) else {
            return false;
        };
        let mut files = Vec::new();
        for entry in read {
            seen += 1;
            let Ok(entry) = entry else { return false };
            let (Ok(kind), Ok(name)) = (entry.file_type(), entry.file_name().into_string()) else {
                return false;
            };
            if seen > OWN_OUTPUT_ENTRIES || kind.is_symlink() {
                return false;
            }
            if kind.is_dir() && depth < 4 {
                stack.push((entry.path(), depth + 1));
            } else if kind.is_file() {
                files.push(name);
            } else {
                return false;
            }
        }
        let has = |name: &str| files.iter().any(|f| f == name);
        for name in &files {
            let own = if name.ends_with(".lock.json") {
                locks += 1;
                true
            } else if let Some(stem) = name
                .strip_suffix(".overrides.jsonl")
                .or_else(|| name.strip_suffix(".jsonl"))
            {
                has(&format!("{stem}.lock.json"))
            } else {
                crate::util::atomic::is_temp_name(name)
            };
            if !own {
                return false;
            }
        }
    }
    locks > 0
}

/// The names of the folders in `root/rel` that are names ([`crate::model::paths::is_name`]),
/// sorted in byte order (an empty list when `rel` is not a folder).
fn folders(root: &Path, rel: &str) -> Vec<String> {
    use crate::util::read::{Entries, names_in};
    let Some(folder) = folder_inside(root, rel) else {
        return Vec::new();
    };
    names_in(&folder, Entries::Folders)
        .into_iter()
        .filter(|n| crate::model::paths::is_name(n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_in_an_archive_names_its_archived_change() {
        let (o, t) = (&openspec::OpenSpec, &trellis::Trellis);
        let m = "openspec/changes/archive/2026-12-04-add-2fa/analysis/worker-context.jsonl";
        assert_eq!(
            archived_change(o, m),
            Some(("openspec/changes/archive", "2026-12-04-add-2fa"))
        );
        assert_eq!(o.live_name("2026-12-04-add-2fa"), "add-2fa");
        assert_eq!(
            archived_change(o, "openspec/changes/add-2fa/analysis/worker-context.jsonl"),
            None
        );
        // The archive folder itself, or a file directly in it, is no change.
        assert_eq!(
            archived_change(o, "openspec/changes/archive/notes.md"),
            None
        );
        let task = ".trellis/tasks/archive/2026-11/11-28-login/implement.jsonl";
        assert_eq!(
            archived_change(t, task),
            Some((".trellis/tasks/archive/2026-11", "11-28-login"))
        );
        assert_eq!(t.live_name("11-28-login"), "11-28-login");
    }

    #[test]
    fn names_are_unique_and_parse_back() {
        let names = names();
        for n in &names {
            assert_eq!(parse(n).unwrap().name(), *n);
        }
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        let e = parse("guilds").unwrap_err();
        assert!(e.contains("trellis") && e.contains("guild"), "{e}");
    }

    #[test]
    fn every_baseline_is_valid_contracts() {
        for w in ALL {
            crate::stages::contract::parse(w.contracts().as_bytes(), Path::new(w.name()))
                .unwrap_or_else(|e| panic!("{}: {e}", w.name()));
        }
    }
}
