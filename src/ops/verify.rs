//! Verify: the files a worker touched stay inside its write scope (the owned globs of its
//! task file, or the globs given), and, when asked, the task file's success criteria pass.
//! The command line and the MCP server say what to check; this does it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::settings::{Workspace, check_name};
use crate::util::read::{INPUT_CAP, read_capped};
use crate::verify::{self, Scope, Verdict};

/// Where the write scope comes from.
#[derive(Debug, Clone)]
pub enum ScopeFrom {
    /// A task file (its `files_owned`, `files_readonly` and `success_criteria`): the path to
    /// read, and the path as the caller named it (for its messages).
    Task { path: PathBuf, named: PathBuf },
    /// Globs given as they are.
    Globs {
        owns: Vec<String>,
        reads: Vec<String>,
    },
}

/// Which files were touched.
#[derive(Debug, Clone)]
pub enum Touched {
    /// A list, as given (a front-end reads a file or standard input into it).
    List(Vec<String>),
    /// What `git diff --name-only REV` lists in the repository.
    GitDiff(String),
}

/// One verification.
#[derive(Debug, Clone)]
pub struct Request {
    pub change: String,
    pub scope: ScopeFrom,
    pub touched: Touched,
    /// Run the task file's success criteria, each stopped at this timeout.
    pub criteria: Option<Duration>,
}

/// The verdict (secrets in a touched path or a criterion's output hidden by their rule) and
/// how many touched files were checked.
#[derive(Debug)]
pub struct Verified {
    pub verdict: Verdict,
    pub touched: usize,
}

/// Verifies `r` in `ws`.
///
/// # Errors
/// A bad change id, an unreadable or invalid task file, a glob or path that does not
/// parse, a failed `git diff`.
pub fn verify(ws: &Workspace, r: &Request) -> Result<Verified> {
    check_name("change id", &r.change)?;
    let (owned, readonly, criteria) = match &r.scope {
        ScopeFrom::Task { path, named } => {
            let bytes = read_capped(path, INPUT_CAP)?;
            let task = crate::task::parse(&bytes, named)?;
            (task.files_owned, task.files_readonly, task.success_criteria)
        }
        ScopeFrom::Globs { owns, reads } => (owns.clone(), reads.clone(), Vec::new()),
    };
    let scope = Scope::new(&r.change, &owned, &readonly).map_err(failed)?;
    let touched = match &r.touched {
        Touched::List(list) => list.clone(),
        Touched::GitDiff(rev) => verify::git_touched(&ws.root, rev).map_err(failed)?,
    };
    let mut verdict = verify::verify(&scope, &touched).map_err(failed)?;
    if let Some(timeout) = r.criteria {
        verdict = verdict.with_criteria(crate::criteria::run_all(&ws.root, &criteria, timeout));
    }
    Ok(Verified {
        verdict: verdict.hiding_secrets(crate::trust::secrets::rule_of_text),
        touched: touched.len(),
    })
}

/// A task file named by `named`, read at `path`.
#[must_use]
pub fn task(path: PathBuf, named: &Path) -> ScopeFrom {
    ScopeFrom::Task {
        path,
        named: named.to_owned(),
    }
}

#[allow(clippy::needless_pass_by_value)] // used as `map_err(failed)`
fn failed(e: verify::VerifyError) -> Error {
    Error::Failed(e.to_string())
}
