//! The validated values a compile runs on: where it runs ([`Workspace`]) and what it
//! compiles ([`CompileSettings`]), built from plain options by any front-end (the command
//! line, a hook, the MCP server) or from a lock's recorded inputs (`check --stale`).
//!
//! Ids and roles are checked before any path is built from them. Relative file arguments
//! are taken relative to the working folder (`-C DIR` like `git -C`); the repository root is
//! the git top-level of that folder, else the folder itself. Every file read here goes
//! through the bounded reader.

mod task_text;

use task_text::read_task_text;
pub use task_text::{PROMPT, TextSource};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::config::{self, Config, Given, Origin, Wf};
use crate::error::{Error, Result};
use crate::model::Caps;
use crate::model::Encoding;
use crate::model::FileRef;
use crate::stages::contract;
use crate::stages::manifest::Lock;
use crate::stages::overrides::{self, Upsert};
use crate::task::{self, Task};
use crate::trust::tree::Tree;
use crate::util::read::{INPUT_CAP, read_capped, read_stdin};

/// Where curate runs.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The working folder (after `-C`), canonical.
    pub cwd: PathBuf,
    /// The repository root, canonical, with what this run's workflow read there.
    pub root: Tree,
    /// The changes root, repository-relative, `/`-separated.
    pub changes_root: String,
    /// True when `--changes-dir` named it; else it is chosen per change
    /// ([`Workspace::for_change`]).
    pub changes_root_given: bool,
    /// A warning about the choice of the changes root, for the report.
    pub changes_warning: Option<String>,
    /// Where the contracts come from.
    pub contracts: contract::Source,
    pub encoding: Encoding,
    pub no_cache: bool,
    /// A progress bar may be shown: stderr is a terminal, the report is human, not `-q`.
    pub progress: bool,
    /// The resolved settings (`.curate/config.toml`, its profile, `CURATE_*`, flags).
    pub config: Config,
    /// The workflows the repository shows, with what gave each away.
    pub present: Vec<(Wf, String)>,
    /// The folders a change was looked for in ([`Workspace::for_change`]), for a BLOCKED
    /// report.
    pub looked: Vec<String>,
    /// Other workflows' folders that hold the change, for the report's hint.
    pub elsewhere: Vec<(Wf, String)>,
    /// Changes of the workflow whose ids look like the one not found (a typo, a part).
    pub similar: Vec<String>,
    /// `--run`: the run a lane is looked for in (Guild).
    pub run: Option<String>,
    /// The config file as read, and the flags, to resolve the settings again for another
    /// workflow (several present: the one that holds the change wins).
    file: Option<Arc<config::File>>,
    given: Given,
    /// `--contracts`, resolved against the working folder.
    contracts_flag: Option<PathBuf>,
    /// The contracts once loaded from `contracts`, shared by the workspace's clones (a hook
    /// names the role, then compiles; `check --stale` compiles every manifest).
    loaded: Arc<Mutex<Loaded>>,
}

/// Contracts loaded, with the source they were loaded from.
type Loaded = Option<(contract::Source, Arc<contract::Contracts>)>;

impl Workspace {
    /// The contracts of [`Workspace::contracts`], loaded and validated once: later calls
    /// (and the workspace's clones) get the same value while the source is the same.
    pub fn load_contracts(&self) -> Result<Arc<contract::Contracts>> {
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((source, contracts)) = loaded.as_ref()
            && *source == self.contracts
        {
            return Ok(Arc::clone(contracts));
        }
        let contracts = Arc::new(contract::load(self.contracts.clone(), &self.root)?);
        *loaded = Some((self.contracts.clone(), Arc::clone(&contracts)));
        Ok(contracts)
    }

    /// A path argument resolved against the working folder.
    #[must_use]
    pub fn arg_path(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_owned()
        } else {
            self.cwd.join(p)
        }
    }

    /// `path` (absolute) as a repository-relative `/` path, when it lies inside the root.
    #[must_use]
    pub fn relative(&self, path: &Path) -> Option<String> {
        crate::model::paths::relative_to(&self.root, path)
    }

    /// `path` for messages: repository-relative when inside, else as given.
    #[must_use]
    pub fn shown(&self, path: &Path) -> String {
        self.relative(path)
            .unwrap_or_else(|| path.display().to_string())
    }

    /// The manifest's repository-relative path for a change and role (the config's
    /// template, `{changes}/{change}/analysis/{role}-context.jsonl` by default).
    #[must_use]
    pub fn manifest_path(&self, change: &str, role: &str) -> String {
        let path =
            crate::model::paths::fill(&self.config.manifest, &self.changes_root, change, role);
        crate::model::paths::normalize(&path).unwrap_or(path)
    }

    /// The overrides file beside a manifest: the same stem, `.overrides.jsonl`.
    #[must_use]
    pub fn overrides_path(&self, change: &str, role: &str) -> String {
        crate::stages::manifest::overrides_path(&self.manifest_path(change, role))
    }
}

/// The options a workspace is resolved from.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceOptions {
    /// `-C DIR`: the working folder (default: the process's).
    pub dir: Option<PathBuf>,
    /// `--contracts FILE`.
    pub contracts: Option<PathBuf>,
    /// `--changes-dir DIR`.
    pub changes_dir: Option<PathBuf>,
    /// `--encoding` (default: the config's).
    pub encoding: Option<Encoding>,
    pub no_cache: bool,
    pub progress: bool,
    /// Do not read `.curate/config.toml` (`init`, which may replace a broken one).
    pub ignore_config: bool,
    /// `--profile`: the workflow, instead of the one detected.
    pub profile: Option<Wf>,
    /// `--run`: the run a lane is looked for in (Guild).
    pub run: Option<String>,
}

/// The changes roots a workspace may use when none is given, in order of preference.
pub const CHANGES_ROOTS: [&str; 2] = crate::workflow::curate::ROOTS;

impl Workspace {
    /// The workflow this workspace follows.
    #[must_use]
    pub fn workflow(&self) -> Wf {
        self.config.profile
    }

    /// The caps of a compile with nothing given: the config's, with the consumer's byte
    /// caps when its workflow cuts in bytes (Trellis' `.trellis/config.yaml`); then the
    /// line cap is off unless the config sets one.
    #[must_use]
    pub fn caps(&self) -> Caps {
        let c = &self.config;
        let mut caps = Caps {
            max_files: c.max_files,
            max_lines: c.max_lines,
            max_tokens: c.max_tokens,
            max_bytes: 0,
            file_bytes: 0,
            degrade: c.degrade,
        };
        if let Some(b) = self.workflow().byte_budget(&self.root) {
            caps.max_bytes = b.total;
            caps.file_bytes = b.per_file;
            if c.origins.get("budget.max_lines") == Some(&Origin::Default) {
                caps.max_lines = 0;
            }
        }
        caps
    }

    /// The workspace for change `id`, and the change's name there. The id may be written
    /// as the workflow accepts it (Trellis: with its `archive/<yyyy-mm>/` prefix); it is
    /// checked as a name before any path is built. With several workflows present and none
    /// named, the one whose layout holds the change is used (none or several: an error
    /// naming them). The changes root is the one a flag, `CURATE_CHANGES` or the config
    /// file set; else where the workflow finds the change (archives included); else the
    /// workflow's default. A change folder that does not exist is a warning, whatever set
    /// the root, naming any other workflow's folder that holds the id.
    pub fn for_change(&self, id: &str) -> Result<(Workspace, String)> {
        let mut ws = self.clone();
        check_change_id(id)?;
        let named = !matches!(
            ws.config.origins.get("profile"),
            Some(Origin::Detected | Origin::Default) | None
        );
        if !named && self.present.len() > 1 {
            for (w, _) in &self.present {
                refuse_reserved(*w, w.normalize_id(id))?;
            }
            let holding: Vec<&(Wf, String)> = self
                .present
                .iter()
                .filter(|(w, _)| {
                    w.locate(&self.root, w.normalize_id(id), self.run.as_deref())
                        .is_some()
                })
                .collect();
            match holding.as_slice() {
                [(w, _)] => ws.switch(*w)?,
                _ => {
                    let names: Vec<String> = self
                        .present
                        .iter()
                        .map(|(w, e)| format!("{} ({e})", w.name()))
                        .collect();
                    return Err(Error::Failed(format!(
                        "this repository follows several workflows ({}) and {} of them hold{} the change {id:?}: name one with --profile",
                        names.join(", "),
                        if holding.is_empty() {
                            "none".to_owned()
                        } else {
                            holding.len().to_string()
                        },
                        if holding.len() == 1 { "s" } else { "" }
                    )));
                }
            }
        }
        let wf = ws.workflow();
        let change = wf.normalize_id(id).to_owned();
        check_name("change id", &change)?;
        check_no_secret("change id", &change)?;
        refuse_reserved(wf, &change)?;
        let set_by_user = matches!(
            ws.config.origins.get("changes"),
            Some(Origin::Flag | Origin::Env | Origin::File)
        );
        let mut found = None;
        if set_by_user {
            ws.looked = vec![format!("{}/{change}", ws.changes_root)];
            if self.root.join(&ws.changes_root).join(&change).is_dir() {
                found = Some(change.clone());
            }
        } else if wf.changes_root().is_none() {
            ws.choose_root(&change)?;
            found = ws
                .root
                .join(&ws.changes_root)
                .join(&change)
                .is_dir()
                .then(|| change.clone());
        } else if let Some(pinned) = wf.pinned(id) {
            // The id names the change's folder: there, or nowhere.
            ws.looked = vec![format!("{pinned}/{change}")];
            ws.changes_root_given = true;
            if self.root.join(&pinned).join(&change).is_dir() {
                found = Some(change.clone());
            }
            ws.changes_root = pinned;
        } else if let Some(l) = wf.locate(&self.root, &change, self.run.as_deref()) {
            ws.looked = vec![l.path()];
            ws.changes_root = l.changes_root;
            ws.changes_root_given = true;
            found = Some(l.folder);
        } else if let Some(root) = wf.changes_root() {
            root.clone_into(&mut ws.changes_root);
            ws.changes_root_given = true;
            ws.looked = wf.looked(&change);
        }
        if found.is_none()
            && let Some(why) = wf.ambiguous(&self.root, &change, self.run.as_deref())
        {
            return Err(Error::Failed(why));
        }
        let Some(folder) = found else {
            ws.elsewhere = crate::workflow::elsewhere(&self.root, id, wf);
            // A folder whose name holds a token is never offered (nor shown).
            let ids: Vec<String> = wf
                .change_ids(&self.root, &ws.changes_root)
                .into_iter()
                .filter(|id| crate::trust::secrets::rule_of_text(id).is_none())
                .collect();
            ws.similar = crate::model::similar::similar(&change, &ids);
            let folder = format!("{}/{change}", ws.changes_root);
            let mut warning = if ws.looked.is_empty() || ws.looked.contains(&folder) {
                format!("the change folder {folder} does not exist")
            } else {
                format!("the change {change:?} is not in {}", ws.looked.join(", "))
            };
            if let Some((first, rest)) = ws.similar.split_first() {
                warning.push_str(&format!("; did you mean {first}?"));
                if !rest.is_empty() {
                    warning.push_str(&format!(" (or {})", rest.join(", ")));
                }
            }
            for (w, path) in &ws.elsewhere {
                warning.push_str(&format!(
                    "; {path} holds it (the {} layout): use --profile {}",
                    w.name(),
                    w.name()
                ));
            }
            ws.changes_warning = Some(warning);
            return Ok((ws, change));
        };
        Ok((ws, folder))
    }

    /// The plain layout's root for `change`: the one of `changes` and `.aiws/changes` that
    /// holds the folder (both, and not the same folder: an error naming both); neither keeps
    /// the default.
    fn choose_root(&mut self, change: &str) -> Result<()> {
        let holding: Vec<&str> = CHANGES_ROOTS
            .iter()
            .copied()
            .filter(|r| {
                // A folder holding only what curate wrote there (a manifest template that
                // writes under `changes/`) is no change.
                let folder = self.root.join(r).join(change);
                folder.is_dir() && !crate::workflow::only_curates_output(&folder)
            })
            .collect();
        self.looked = CHANGES_ROOTS
            .iter()
            .map(|r| format!("{r}/{change}"))
            .collect();
        match holding.as_slice() {
            [one] => (*one).clone_into(&mut self.changes_root),
            [a, b] => {
                let same = self.root.join(a).join(change).canonicalize().ok()
                    == self.root.join(b).join(change).canonicalize().ok();
                if !same {
                    return Err(Error::Failed(format!(
                        "the change {change:?} exists under both {a}/ and {b}/: name the one to use with --changes-dir"
                    )));
                }
                (*a).clone_into(&mut self.changes_root);
            }
            _ => {}
        }
        Ok(())
    }

    /// The role names the repository gives its workflow (Guild's specialists), under the
    /// ones the config names.
    /// The contracts' role `s.contract_role`; an unknown one's error lists the names a
    /// role may also be given by here (`[roles]` aliases, Guild's specialists) beside the
    /// contracts' own, for its "did you mean" and its list.
    pub fn contract_role_of<'c>(
        &self,
        contracts: &'c contract::Contracts,
        id: &str,
    ) -> Result<&'c contract::Role> {
        contracts.role(id).map_err(|e| match e {
            Error::UnknownRole {
                role,
                source_name,
                mut known,
            } => {
                // The contracts' roles in their order, then the other names (sorted).
                let more: Vec<String> = self
                    .config
                    .roles
                    .iter()
                    .filter(|(name, to)| contracts.role(to).is_ok() && !known.contains(name))
                    .map(|(name, _)| name.clone())
                    .collect();
                known.extend(more);
                Error::UnknownRole {
                    role,
                    source_name,
                    known,
                }
            }
            other => other,
        })
    }

    fn add_dynamic_roles(&mut self) {
        for (name, role) in self.workflow().dynamic_roles(&self.root) {
            self.config.roles.entry(name).or_insert(role);
        }
    }

    /// Resolves the settings again for workflow `w` (the flags, environment and config file
    /// as before).
    fn switch(&mut self, w: Wf) -> Result<()> {
        let given = Given {
            detected: Some(w),
            ..self.given.clone()
        };
        self.config = Config::resolve(self.file.as_deref(), &given, &|name| {
            std::env::var(name).ok()
        })?;
        self.changes_root = default_root(&self.root, &self.config)?;
        self.changes_root_given = self.config.changes.is_some();
        self.contracts = contracts_source(self)?;
        self.loaded = Arc::default();
        self.add_dynamic_roles();
        Ok(())
    }

    /// Resolves the working folder, repository root, changes root and contracts source.
    pub fn resolve(o: &WorkspaceOptions) -> Result<Workspace> {
        let start = match &o.dir {
            Some(d) => d.clone(),
            None => std::env::current_dir().map_err(|source| Error::Read {
                path: PathBuf::from("."),
                source,
            })?,
        };
        let cwd = start.canonicalize().map_err(|source| Error::Read {
            path: start.clone(),
            source,
        })?;
        if !cwd.is_dir() {
            return Err(Error::Failed(format!(
                "{} is not a folder",
                start.display()
            )));
        }
        let root = Tree::new(
            cwd.ancestors()
                .find(|a| a.join(".git").exists())
                .unwrap_or(&cwd)
                .to_owned(),
        );
        let flag_changes = match &o.changes_dir {
            Some(dir) => {
                let abs = if dir.is_absolute() {
                    dir.clone()
                } else {
                    cwd.join(dir)
                };
                match crate::model::paths::relative_to(&root, &abs) {
                    Some(rel) if !rel.is_empty() => Some(rel),
                    _ => {
                        return Err(Error::Escape {
                            origin: "--changes-dir".to_owned(),
                            path: dir.display().to_string(),
                            problem: "is not a folder inside the repository",
                        });
                    }
                }
            }
            None => None,
        };
        let file = if o.ignore_config {
            None
        } else {
            config::load(&root)?.map(Arc::new)
        };
        let present = crate::workflow::detect(&root);
        let given = Given {
            changes: flag_changes,
            encoding: o.encoding,
            profile: o.profile,
            // Several present: the first for now; the change decides (`for_change`).
            detected: present.first().map(|(w, _)| *w),
        };
        let config = Config::resolve(file.as_deref(), &given, &|name| std::env::var(name).ok())?;
        // An aiws repository whose manifest cannot tell its version would be taken for the
        // plain layout without a word, and its manifests written where aiws never reads.
        if config.origins.get("profile") == Some(&Origin::Default)
            && let Some((file, pos, problem)) = crate::workflow::unreadable_marker(&root)
        {
            return Err(Error::Syntax {
                path: file.into(),
                pos,
                message: format!(
                    "{problem}: aiws is recognised by the version this file records, so no workflow is detected; fix it, or name the workflow with --profile"
                ),
            });
        }
        let mut ws = Workspace {
            cwd,
            changes_root: default_root(&root, &config)?,
            changes_root_given: config.changes.is_some(),
            root,
            changes_warning: None,
            contracts: contract::Source::Embedded(contract::DEFAULT),
            encoding: config.encoding,
            no_cache: o.no_cache,
            progress: o.progress,
            config,
            present,
            looked: Vec::new(),
            elsewhere: Vec::new(),
            similar: Vec::new(),
            run: o.run.clone(),
            file,
            given,
            contracts_flag: None,
            loaded: Arc::default(),
        };
        if let Some(run) = &o.run {
            check_name("run id", run)?;
            check_no_secret("run id", run)?;
        }
        // They name folders, manifests and locks as the ids do.
        check_no_secret("changes root", &ws.changes_root)?;
        check_no_secret("manifest path", &ws.config.manifest)?;
        ws.contracts_flag = o.contracts.as_ref().map(|p| ws.arg_path(p));
        ws.contracts = contracts_source(&ws)?;
        ws.add_dynamic_roles();
        Ok(ws)
    }
}

/// The changes root before a change is known: the config's (flag, environment, file,
/// workflow), else `changes`, or `.aiws/changes` where only that exists.
fn default_root(root: &Path, config: &Config) -> Result<String> {
    match &config.changes {
        Some(changes) => crate::model::paths::normalize(changes).map_err(|e| Error::Escape {
            origin: "changes".to_owned(),
            path: changes.clone(),
            problem: e.problem(),
        }),
        None => Ok(
            if !root.join("changes").exists() && root.join(".aiws/changes").is_dir() {
                ".aiws/changes".to_owned()
            } else {
                "changes".to_owned()
            },
        ),
    }
}

/// Where the contracts come from: `--contracts`, `CURATE_CONTRACTS`, the config file's, the
/// repository's, else the workflow's embedded baseline.
fn contracts_source(ws: &Workspace) -> Result<contract::Source> {
    let flag = ws.contracts_flag.clone();
    let env = std::env::var_os("CURATE_CONTRACTS")
        .filter(|v| !v.is_empty())
        .map(|v| ws.arg_path(Path::new(&v)));
    Ok(match (&flag, &env, &ws.config.contracts) {
        (None, None, Some(rel)) => {
            let rel = crate::model::paths::normalize(rel).map_err(|e| Error::Escape {
                origin: format!("contracts in {}", config::PATH),
                path: rel.clone(),
                problem: e.problem(),
            })?;
            // Named where the config names it: the file is the config's mistake.
            if let Some(pos) = ws.config.contracts_place {
                let path = ws.root.join(&rel);
                let problem = match std::fs::symlink_metadata(&path) {
                    Err(_) => Some("no such file in the repository".to_owned()),
                    Ok(m) if m.is_dir() => Some("a folder, not a file".to_owned()),
                    // A link is followed only while it stays inside the repository.
                    Ok(_) => crate::trust::admit::read_repo_file(&ws.root, &path)
                        .err()
                        .map(|e| e.to_string()),
                };
                if let Some(problem) = problem {
                    return Err(Error::Syntax {
                        path: config::PATH.into(),
                        pos,
                        message: format!("contracts = {rel:?}: {problem}"),
                    });
                }
            }
            contract::Source::Repo(rel)
        }
        _ => match contract::discover(flag, env, &ws.root) {
            contract::Source::Embedded(_) => contract::Source::Embedded(contract::Baseline {
                workflow: ws.workflow().name(),
                text: ws.workflow().contracts(),
            }),
            other => other,
        },
    })
}

/// Refuses an id that is a folder `wf` keeps in its changes root and is not a change
/// (`archive`), naming the forms that reach an archived change.
fn refuse_reserved(wf: Wf, id: &str) -> Result<()> {
    match wf.reserved() {
        Some((name, how)) if name == id => Err(Error::Usage(format!(
            "{name:?} is the folder of archived changes ({}), not a change: name an archived one as {how}",
            wf.name()
        ))),
        _ => Ok(()),
    }
}

/// Checks an id or a role: `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`.
pub fn check_name(what: &'static str, value: &str) -> Result<()> {
    if crate::model::paths::is_name(value) {
        Ok(())
    } else {
        Err(Error::InvalidName {
            what,
            value: value.to_owned(),
        })
    }
}

/// A `[roles]` alias of the config file whose role the contracts do not have: an error at
/// the alias's place in the file (the contracts' own "unknown role" names neither).
pub fn check_alias(ws: &Workspace, alias: &str) -> Result<()> {
    let Some(pos) = ws.config.role_places.get(alias) else {
        return Ok(());
    };
    let role = ws.config.contract_role(alias);
    match ws.load_contracts()?.role(role) {
        Err(Error::UnknownRole {
            source_name, known, ..
        }) => {
            let like = crate::model::similar::similar(role, &known);
            let hint = like
                .first()
                .map_or(String::new(), |l| format!("did you mean {l:?}? "));
            Err(Error::Syntax {
                path: crate::config::PATH.into(),
                pos: *pos,
                message: format!(
                    "roles.{alias} = {role:?}: {source_name} has no such role ({hint}the roles are: {})",
                    known.join(", ")
                ),
            })
        }
        _ => Ok(()),
    }
}

/// Refuses a role, change or run id that holds a secret (a token pasted in its place):
/// curate names folders, manifests, locks, reports and prompts by it. Never echoes it.
pub fn check_no_secret(what: &'static str, value: &str) -> Result<()> {
    match crate::trust::admit::rules()?.scan_path(value) {
        Some(rule) => Err(Error::Failed(format!(
            "the {what} holds a secret ({rule}); curate would name folders, manifests and prompts by it"
        ))),
        None => Ok(()),
    }
}

/// Checks a change id as a user may write it: a name, or a name in a form some workflow
/// accepts (Trellis: `archive/<yyyy-mm>/<task>`).
pub fn check_change_id(id: &str) -> Result<()> {
    let plain = check_name("change id", id);
    if plain.is_ok()
        || crate::workflow::ALL.iter().any(|w| {
            w.normalize_id(id) != id && check_name("change id", w.normalize_id(id)).is_ok()
        })
    {
        return Ok(());
    }
    plain
}

/// Where the overrides come from.
#[derive(Debug, Clone)]
pub struct OverridesFile {
    /// Absolute path.
    pub path: PathBuf,
    /// As shown in messages: repository-relative, or the whole path when outside.
    pub shown: String,
    /// As recorded in the lock: repository-relative, or the file's name alone when
    /// outside, so a committed lock never holds a machine's absolute path.
    pub recorded: String,
    /// Outside the repository: recorded by its name alone.
    pub outside: bool,
    /// Given with `--overrides` (then it must exist).
    pub explicit: bool,
}

/// The validated inputs of one compile.
#[derive(Debug, Clone)]
pub struct CompileSettings {
    /// The role's name as the caller gave it (`{role}` in the manifest path).
    pub role: String,
    /// The contract role it stands for (through `[roles]` aliases; else the same).
    pub contract_role: String,
    pub change: String,
    pub owns: Vec<String>,
    pub reads: Vec<String>,
    pub files_from: Vec<String>,
    pub task: Option<(FileRef, Task)>,
    pub overrides: OverridesFile,
    pub add: Vec<Upsert>,
    pub add_raw: Vec<String>,
    pub drop: Vec<String>,
    pub caps: Caps,
    pub max_file_size: u64,
    pub no_ignore: bool,
    pub explain: bool,
    /// Tokens the related files' outlines may take (`--related`; 0: none).
    pub related: u64,
    /// Text that describes the task beyond the workflow's own documents (`--task-text`).
    pub task_text: String,
    /// Where `task_text` came from, when not `--task-text`: `the prompt` (a hook's ad-hoc
    /// dispatch); empty otherwise.
    pub task_text_from: String,
    /// Tokens the files the task's text names or talks about may take (0: not selected).
    pub task_tokens: u64,
    /// A render that writes the admitted text follows: what does not fit the compile's
    /// memory hold is spooled, so each file is read once ([`crate::trust::spool`]).
    pub renders: bool,
}

/// Where a list of paths comes from (`--files-from`).
#[derive(Debug, Clone)]
pub enum ListSource {
    /// A file, relative to the working folder.
    File(PathBuf),
    /// Standard input (`-`).
    Stdin,
    /// Already read (a lock's recorded list).
    Given(Vec<String>),
}

/// The options of one compile, as a front-end gives them (before any file is read).
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    pub role: String,
    pub change: String,
    pub owns: Vec<String>,
    pub reads: Vec<String>,
    pub files_from: Option<ListSource>,
    pub task_file: Option<PathBuf>,
    pub overrides: Option<PathBuf>,
    pub add: Vec<String>,
    pub drop: Vec<String>,
    pub caps: Caps,
    pub max_file_size: u64,
    pub no_ignore: bool,
    pub explain: bool,
    /// Tokens the related files' outlines may take (`--related`; 0: none).
    pub related: u64,
    /// `--task-text`.
    pub task_text: Option<TextSource>,
    /// Tokens for the files the task names or talks about (0: off).
    pub task_tokens: u64,
}

impl CompileOptions {
    /// A compile of `role` on `change` with nothing else given: no scopes, no additions,
    /// the config's budgets, the default size cap.
    #[must_use]
    pub fn defaults(ws: &Workspace, role: &str, change: &str) -> CompileOptions {
        CompileOptions {
            role: role.to_owned(),
            change: change.to_owned(),
            owns: Vec::new(),
            reads: Vec::new(),
            files_from: None,
            task_file: None,
            overrides: None,
            add: Vec::new(),
            drop: Vec::new(),
            caps: ws.caps(),
            max_file_size: crate::stages::measure::DEFAULT_MAX_FILE_SIZE,
            no_ignore: false,
            explain: false,
            related: ws.config.related_tokens,
            task_text: None,
            task_tokens: ws.config.task_tokens,
        }
    }
}

impl CompileSettings {
    /// Checks the role and change id (before anything else), then reads the small inputs:
    /// the task file and the list of `--files-from`.
    pub fn resolve(ws: &Workspace, o: &CompileOptions) -> Result<CompileSettings> {
        check_name("role", &o.role)?;
        check_name("change id", &o.change)?;
        check_no_secret("role", &o.role)?;
        check_no_secret("change id", &o.change)?;
        let role = ws.workflow().normalize_role(&o.role).to_owned();
        check_name("role", &role)?;
        let change = o.change.clone();
        let rules = crate::trust::admit::rules()?;
        // Text curate copies into a manifest and a prompt holds no secret: an addition, and
        // every path or glob given (a note names one that matched nothing).
        let refuse = |flag: &str, values: &[String]| -> Result<()> {
            for (i, value) in values.iter().enumerate() {
                if let Some(rule) = rules.scan_path(value) {
                    return Err(Error::Failed(format!(
                        "{flag} #{}: holds a secret ({rule}); curate would copy it into the manifest and the prompt",
                        i + 1,
                    )));
                }
            }
            Ok(())
        };
        refuse("--add", &o.add)?;
        refuse("--owns", &o.owns)?;
        refuse("--reads", &o.reads)?;
        refuse("--drop", &o.drop)?;
        let add = o
            .add
            .iter()
            .map(|s| overrides::parse_add(s))
            .collect::<Result<Vec<_>>>()?;
        let task = match &o.task_file {
            Some(p) => {
                let path = ws.arg_path(p);
                let bytes = read_capped(&path, INPUT_CAP)?;
                let task = task::parse(&bytes, p)?;
                // Its texts go into the handoff envelope, and so into a prompt.
                // As written, and its fields' text decoded, as the envelope shows them.
                let decoded = || {
                    let v = serde_json::to_value(&task).ok()?;
                    rules.scan(crate::trust::secrets::json_text(&v).as_bytes())
                };
                if let Some(hit) = rules.scan(&bytes) {
                    return Err(Error::Invalid {
                        path: path.clone(),
                        message: format!(
                            "holds a secret ({} on line {}); its text would go into the handoff envelope",
                            hit.rule, hit.line
                        ),
                    });
                }
                if let Some(hit) = decoded() {
                    return Err(Error::Invalid {
                        path: path.clone(),
                        message: format!(
                            "holds a secret ({}, in a string); its text would go into the handoff envelope",
                            hit.rule
                        ),
                    });
                }
                // Inside the repository by its repository path; outside by its name alone
                // (a committed lock never holds a machine's folders), marked so.
                let inside = path.canonicalize().ok().and_then(|real| ws.relative(&real));
                let named = path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                Some((
                    FileRef {
                        outside: inside.is_none(),
                        path: inside.unwrap_or(named),
                        sha256: crate::util::digest::hex(&bytes),
                    },
                    task,
                ))
            }
            None => None,
        };
        let files_from = match &o.files_from {
            None => Vec::new(),
            Some(ListSource::Given(list)) => list.clone(),
            Some(ListSource::Stdin) => crate::verify::parse_touched_list(&read_stdin(INPUT_CAP)?),
            Some(ListSource::File(p)) => {
                crate::verify::parse_touched_list(&read_capped(&ws.arg_path(p), INPUT_CAP)?)
            }
        };
        refuse("--files-from", &files_from)?;
        let task_text = read_task_text(ws, o, rules)?;
        let overrides = match &o.overrides {
            Some(p) => {
                let path = ws.arg_path(p);
                OverridesFile {
                    outside: ws.relative(&path).is_none(),
                    recorded: ws.relative(&path).unwrap_or_else(|| {
                        path.file_name().map_or_else(
                            || path.display().to_string(),
                            |n| n.to_string_lossy().into_owned(),
                        )
                    }),
                    shown: ws.shown(&path),
                    path,
                    explicit: true,
                }
            }
            None => {
                let rel = ws.overrides_path(&change, &role);
                OverridesFile {
                    path: ws.root.join(&rel),
                    recorded: rel.clone(),
                    shown: rel,
                    explicit: false,
                    outside: false,
                }
            }
        };
        let contract_role = ws.config.contract_role(&role).to_owned();
        check_alias(ws, &role)?;
        Ok(CompileSettings {
            role,
            contract_role,
            change,
            owns: o.owns.clone(),
            reads: o.reads.clone(),
            files_from,
            task,
            overrides,
            add,
            add_raw: o.add.clone(),
            drop: o.drop.clone(),
            caps: o.caps,
            max_file_size: o.max_file_size,
            no_ignore: o.no_ignore,
            explain: o.explain,
            related: o.related,
            task_text,
            task_text_from: match &o.task_text {
                Some(TextSource::Prompt(_)) => PROMPT.to_owned(),
                _ => String::new(),
            },
            task_tokens: o.task_tokens,
            renders: false,
        })
    }

    /// The settings a lock recorded, for a compile that should write the same manifest
    /// again (`check --stale`). Returns them with the workspace they ran in.
    pub fn from_lock(ws: &Workspace, lock: &Lock) -> Result<(Workspace, CompileSettings)> {
        let i = &lock.inputs;
        if let Some(f) = i.overrides.as_ref().filter(|f| f.outside) {
            // Its name alone is recorded: the file of that name here is another one.
            return Err(Error::Failed(format!(
                "the overrides file {} was read from outside the repository; it cannot be read again from the lock",
                crate::model::quoted(&f.path)
            )));
        }
        if let Some(f) = i.task_file.as_ref().filter(|f| f.outside) {
            return Err(Error::Failed(format!(
                "the task file {} was read from outside the repository; it cannot be read again from the lock",
                crate::model::quoted(&f.path)
            )));
        }
        // A lock is a file of the repository anyone may edit: the task file it names is
        // read only inside the repository (no `..`, no absolute path, no link out).
        let task_file = match &i.task_file {
            Some(f) => Some(crate::trust::admit::contained(
                &ws.root,
                "the lock's task file",
                &f.path,
            )?),
            None => None,
        };
        if lock.contracts.outside {
            return Err(Error::Failed(format!(
                "the contracts {} were read from outside the repository; they cannot be read again from the lock",
                crate::model::quoted(&lock.contracts.source)
            )));
        }
        let mut ws = ws.clone();
        // Contracts named on the command line (or by the environment) are named again.
        if let Some(file) = &lock.contracts.file {
            ws.contracts = contract::Source::Flag(ws.root.join(file));
        }
        ws.changes_root.clone_from(&i.changes_root);
        ws.changes_root_given = true;
        ws.encoding = i.encoding;
        let default_overrides = ws.overrides_path(&i.change, &i.role);
        let options = CompileOptions {
            role: i.role.clone(),
            change: i.change.clone(),
            owns: i.owns.clone(),
            reads: i.reads.clone(),
            files_from: Some(ListSource::Given(i.files_from.clone())),
            task_file,
            // The default overrides file is found again by its default path (it may be
            // gone now); only one named with --overrides is passed on.
            overrides: i
                .overrides
                .as_ref()
                .filter(|f| f.path != default_overrides)
                .map(|f| ws.root.join(&f.path)),
            add: i.add.clone(),
            drop: i.drop.clone(),
            caps: i.caps,
            max_file_size: i.max_file_size,
            no_ignore: i.no_ignore,
            explain: false,
            related: i.related,
            task_text: Some(if i.task_text_from == PROMPT {
                TextSource::Prompt(i.task_text.clone())
            } else {
                TextSource::Given(i.task_text.clone())
            }),
            task_tokens: i.task_tokens,
        };
        let s = CompileSettings::resolve(&ws, &options)?;
        Ok((ws, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_pattern() {
        assert!(check_name("id", "add-auth").is_ok());
        assert!(check_name("id", "A.b_c-1").is_ok());
        assert!(check_name("id", &"a".repeat(128)).is_ok());
        for bad in ["", "-x", ".x", "a/b", "../x", "a b", "é", &"a".repeat(129)] {
            assert!(check_name("id", bad).is_err(), "{bad:?}");
        }
    }
}
