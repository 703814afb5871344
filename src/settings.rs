//! The validated values a compile runs on: where it runs ([`Workspace`]) and what it
//! compiles ([`CompileSettings`]), built from plain options by any front-end (the command
//! line, a hook, the MCP server) or from a lock's recorded inputs (`check --stale`).
//!
//! Ids and roles are checked before any path is built from them. Relative file arguments
//! are taken relative to the working folder (`-C DIR` like `git -C`); the repository root is
//! the git top-level of that folder, else the folder itself. Every file read here goes
//! through the bounded reader.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::compile::budget::Caps;
use crate::compile::contract;
use crate::compile::manifest::{FileRef, Lock};
use crate::compile::overrides::{self, Upsert};
use crate::compile::tokens::Encoding;
use crate::config::{self, Config, Given};
use crate::error::{Error, Result};
use crate::task::{self, Task};
use crate::util::read::{INPUT_CAP, read_capped, read_stdin};

/// Where curate runs.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The working folder (after `-C`), canonical.
    pub cwd: PathBuf,
    /// The repository root, canonical.
    pub root: PathBuf,
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
        crate::util::paths::relative_to(&self.root, path)
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
        let path = config::fill(&self.config.manifest, &self.changes_root, change, role);
        crate::util::paths::normalize(&path).unwrap_or(path)
    }

    /// The overrides file beside a manifest: the same stem, `.overrides.jsonl`.
    #[must_use]
    pub fn overrides_path(&self, change: &str, role: &str) -> String {
        let manifest = self.manifest_path(change, role);
        let stem = manifest.strip_suffix(".jsonl").unwrap_or(&manifest);
        format!("{stem}.overrides.jsonl")
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
}

/// The changes roots a workspace may use when none is given, in order of preference.
pub const CHANGES_ROOTS: [&str; 2] = ["changes", ".aiws/changes"];

impl Workspace {
    /// The workspace with the changes root chosen for `change` (when `--changes-dir` did not
    /// name one): the one of `changes` and `.aiws/changes` that holds the folder `<change>`;
    /// both holding it (and not the same folder) is an error naming both; neither keeps the
    /// default and warns that the change folder does not exist.
    pub fn for_change(&self, change: &str) -> Result<Workspace> {
        let mut ws = self.clone();
        if self.changes_root_given {
            return Ok(ws);
        }
        let holding: Vec<&str> = CHANGES_ROOTS
            .iter()
            .copied()
            .filter(|r| self.root.join(r).join(change).is_dir())
            .collect();
        match holding.as_slice() {
            [one] => (*one).clone_into(&mut ws.changes_root),
            [a, b] => {
                let same = self.root.join(a).join(change).canonicalize().ok()
                    == self.root.join(b).join(change).canonicalize().ok();
                if same {
                    (*a).clone_into(&mut ws.changes_root);
                } else {
                    return Err(Error::Failed(format!(
                        "the change {change:?} exists under both {a}/ and {b}/: name the one to use with --changes-dir"
                    )));
                }
            }
            _ => {
                ws.changes_warning = Some(format!(
                    "the change folder {}/{change} does not exist",
                    ws.changes_root
                ));
            }
        }
        Ok(ws)
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
        let root = cwd
            .ancestors()
            .find(|a| a.join(".git").exists())
            .unwrap_or(&cwd)
            .to_owned();
        let flag_changes = match &o.changes_dir {
            Some(dir) => {
                let abs = if dir.is_absolute() {
                    dir.clone()
                } else {
                    cwd.join(dir)
                };
                match crate::util::paths::relative_to(&root, &abs) {
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
            config::load(&root)?
        };
        let config = Config::resolve(
            file.as_ref(),
            &Given {
                changes: flag_changes,
                encoding: o.encoding,
            },
            &|name| std::env::var(name).ok(),
        )?;
        let mut ws = Workspace {
            cwd,
            root,
            changes_root: String::new(),
            changes_root_given: false,
            changes_warning: None,
            contracts: contract::Source::Embedded,
            encoding: config.encoding,
            no_cache: o.no_cache,
            progress: o.progress,
            config,
            loaded: Arc::default(),
        };
        ws.changes_root = match &ws.config.changes {
            Some(changes) => {
                ws.changes_root_given = true;
                crate::util::paths::normalize(changes).map_err(|e| Error::Escape {
                    origin: "changes".to_owned(),
                    path: changes.clone(),
                    problem: e.problem(),
                })?
            }
            None => {
                if !ws.root.join("changes").exists() && ws.root.join(".aiws/changes").is_dir() {
                    ".aiws/changes".to_owned()
                } else {
                    "changes".to_owned()
                }
            }
        };
        let flag = o.contracts.as_ref().map(|p| ws.arg_path(p));
        let env = std::env::var_os("CURATE_CONTRACTS")
            .filter(|v| !v.is_empty())
            .map(|v| ws.arg_path(Path::new(&v)));
        ws.contracts = match (&flag, &env, &ws.config.contracts) {
            (None, None, Some(rel)) => {
                let rel = crate::util::paths::normalize(rel).map_err(|e| Error::Escape {
                    origin: format!("contracts in {}", config::PATH),
                    path: rel.clone(),
                    problem: e.problem(),
                })?;
                contract::Source::Repo(rel)
            }
            _ => contract::discover(flag, env, &ws.root),
        };
        Ok(ws)
    }
}

/// Checks an id or a role: `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`.
pub fn check_name(what: &'static str, value: &str) -> Result<()> {
    let bytes = value.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= 128
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidName {
            what,
            value: value.to_owned(),
        })
    }
}

/// Where the overrides come from.
#[derive(Debug, Clone)]
pub struct OverridesFile {
    /// Absolute path.
    pub path: PathBuf,
    /// As shown in notes and errors.
    pub shown: String,
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
            caps: Caps {
                max_files: ws.config.max_files,
                max_lines: ws.config.max_lines,
                max_tokens: ws.config.max_tokens,
            },
            max_file_size: crate::compile::measure::DEFAULT_MAX_FILE_SIZE,
            no_ignore: false,
            explain: false,
        }
    }
}

impl CompileSettings {
    /// Checks the role and change id (before anything else), then reads the small inputs:
    /// the task file and the list of `--files-from`.
    pub fn resolve(ws: &Workspace, o: &CompileOptions) -> Result<CompileSettings> {
        check_name("role", &o.role)?;
        check_name("change id", &o.change)?;
        let (role, change) = (o.role.clone(), o.change.clone());
        let rules = crate::compile::admit::rules()?;
        // Text curate copies into a manifest and a prompt holds no secret.
        for (i, add) in o.add.iter().enumerate() {
            if let Some(hit) = rules.scan(add.as_bytes()) {
                return Err(Error::Failed(format!(
                    "--add #{}: holds a secret ({}); curate would copy it into the manifest and the prompt",
                    i + 1,
                    hit.rule
                )));
            }
        }
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
                if let Some(hit) = rules.scan(&bytes) {
                    return Err(Error::Invalid {
                        path: path.clone(),
                        message: format!(
                            "holds a secret ({} on line {}); its text would go into the handoff envelope",
                            hit.rule, hit.line
                        ),
                    });
                }
                Some((
                    FileRef {
                        path: ws.shown(&path),
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
        let overrides = match &o.overrides {
            Some(p) => {
                let path = ws.arg_path(p);
                OverridesFile {
                    // Repository-relative; outside the repository by its name alone, so a
                    // committed manifest never holds a machine's absolute path.
                    shown: ws.relative(&path).unwrap_or_else(|| {
                        path.file_name().map_or_else(
                            || path.display().to_string(),
                            |n| n.to_string_lossy().into_owned(),
                        )
                    }),
                    path,
                    explicit: true,
                }
            }
            None => {
                let rel = ws.overrides_path(&change, &role);
                OverridesFile {
                    path: ws.root.join(&rel),
                    shown: rel,
                    explicit: false,
                }
            }
        };
        let contract_role = ws.config.contract_role(&role).to_owned();
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
        })
    }

    /// The settings a lock recorded, for a compile that should write the same manifest
    /// again (`check --stale`). Returns them with the workspace they ran in.
    pub fn from_lock(ws: &Workspace, lock: &Lock) -> Result<(Workspace, CompileSettings)> {
        let i = &lock.inputs;
        let mut ws = ws.clone();
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
            task_file: i.task_file.as_ref().map(|f| ws.root.join(&f.path)),
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
