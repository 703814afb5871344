//! Raw flags + environment → one validated [`Workspace`] and [`CompileSettings`], before any
//! file of the compile is read.
//!
//! Ids and roles are checked before any path is built from them. Relative file arguments
//! are taken relative to the working folder (`-C DIR` like `git -C`); the repository root is
//! the git top-level of that folder, else the folder itself.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::budget::Caps;
use crate::cli::{CompileArgs, Encoding, GlobalArgs};
use crate::contract;
use crate::error::{Error, Result};
use crate::manifest::FileRef;
use crate::overrides::{self, Upsert};
use crate::task::{self, Task};

/// Where curate runs.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The working folder (after `-C`), canonical.
    pub cwd: PathBuf,
    /// The repository root, canonical.
    pub root: PathBuf,
    /// The changes root, repository-relative, `/`-separated.
    pub changes_root: String,
    /// Where the contracts come from.
    pub contracts: contract::Source,
    pub encoding: Encoding,
    pub no_cache: bool,
    /// A progress bar may be shown: stderr is a terminal, the report is human, not `-q`.
    pub progress: bool,
}

impl Workspace {
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
        let clean = lexical(path);
        let rel = clean.strip_prefix(&self.root).ok()?;
        let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        Some(parts?.join("/"))
    }

    /// `path` for messages: repository-relative when inside, else as given.
    #[must_use]
    pub fn shown(&self, path: &Path) -> String {
        self.relative(path)
            .unwrap_or_else(|| path.display().to_string())
    }

    /// The manifest's repository-relative path for a change and role.
    #[must_use]
    pub fn manifest_path(&self, change: &str, role: &str) -> String {
        format!(
            "{}/{change}/analysis/{role}-context.jsonl",
            self.changes_root
        )
    }
}

/// Removes `.` and resolves `..` without touching the disk.
#[must_use]
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
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

/// Resolves the working folder, repository root, changes root and contracts source.
pub fn workspace(g: &GlobalArgs) -> Result<Workspace> {
    let start = match &g.dir {
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
    let mut ws = Workspace {
        cwd,
        root,
        changes_root: String::new(),
        contracts: contract::Source::Embedded,
        encoding: g.encoding,
        no_cache: g.no_cache,
        progress: g.format == crate::cli::Format::Human
            && !g.quiet
            && std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    ws.changes_root = match &g.changes_dir {
        Some(dir) => {
            let abs = ws.arg_path(dir);
            match ws.relative(&abs) {
                Some(rel) if !rel.is_empty() => rel,
                _ => {
                    return Err(Error::Escape {
                        origin: "--changes-dir".to_owned(),
                        path: dir.display().to_string(),
                        problem: "is not a folder inside the repository",
                    });
                }
            }
        }
        None => {
            if !ws.root.join("changes").exists() && ws.root.join(".aiws/changes").is_dir() {
                ".aiws/changes".to_owned()
            } else {
                "changes".to_owned()
            }
        }
    };
    let flag = g.contracts.as_ref().map(|p| ws.arg_path(p));
    let env = std::env::var_os("CURATE_CONTRACTS")
        .filter(|v| !v.is_empty())
        .map(|v| ws.arg_path(Path::new(&v)));
    ws.contracts = contract::discover(flag, env, &ws.root);
    Ok(ws)
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
    pub role: String,
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

/// Checks the role and change id (before anything else), then reads the small inputs: the
/// task file and `--files-from`.
pub fn compile_settings(ws: &Workspace, a: &CompileArgs) -> Result<CompileSettings> {
    let (role, change) = names(a)?;
    let add = a
        .add
        .iter()
        .map(|s| overrides::parse_add(s))
        .collect::<Result<Vec<_>>>()?;
    let task = match &a.task_file {
        Some(p) => {
            let path = ws.arg_path(p);
            let bytes = read_arg(&path)?;
            let task = task::parse(&bytes, p)?;
            Some((
                FileRef {
                    path: ws.shown(&path),
                    sha256: crate::digest::hex(&bytes),
                },
                task,
            ))
        }
        None => None,
    };
    let files_from = match &a.files_from {
        Some(p) => crate::verify::parse_touched_list(&read_list_arg(ws, p)?),
        None => Vec::new(),
    };
    let overrides = match &a.overrides {
        Some(p) => {
            let path = ws.arg_path(p);
            OverridesFile {
                shown: ws.shown(&path),
                path,
                explicit: true,
            }
        }
        None => {
            let rel = format!(
                "{}/{change}/analysis/{role}-context.overrides.jsonl",
                ws.changes_root
            );
            OverridesFile {
                path: ws.root.join(&rel),
                shown: rel,
                explicit: false,
            }
        }
    };
    Ok(CompileSettings {
        role,
        change,
        owns: a.owns.clone(),
        reads: a.reads.clone(),
        files_from,
        task,
        overrides,
        add,
        add_raw: a.add.clone(),
        drop: a.drop.clone(),
        caps: Caps {
            max_files: a.max_files,
            max_lines: a.max_lines,
            max_tokens: a.max_tokens.unwrap_or(0),
        },
        max_file_size: a.max_file_size,
        no_ignore: a.no_ignore,
        explain: a.explain,
    })
}

/// The role and change id, checked.
pub fn names(a: &CompileArgs) -> Result<(String, String)> {
    let role = a
        .role
        .clone()
        .ok_or_else(|| Error::Usage("--role is required".to_owned()))?;
    let change = a
        .change
        .clone()
        .ok_or_else(|| Error::Usage("--change is required".to_owned()))?;
    check_name("role", &role)?;
    check_name("change id", &change)?;
    Ok((role, change))
}

/// Reads a list argument: a file relative to the working folder, or `-` for stdin.
pub fn read_list_arg(ws: &Workspace, p: &Path) -> Result<Vec<u8>> {
    if p.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|source| Error::Read {
                path: PathBuf::from("<stdin>"),
                source,
            })?;
        Ok(buf)
    } else {
        read_arg(&ws.arg_path(p))
    }
}

/// Reads a file named on the command line.
pub fn read_arg(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })
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
