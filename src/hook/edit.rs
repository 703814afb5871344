//! After an edit: the lists of a workflow whose own injector reads them (Trellis'
//! `implement.jsonl`, `check.jsonl`) are compiled as soon as an edit touches them.
//!
//! Trellis' injector reads a task's list at the very dispatch where curate's hook runs, and
//! no host lets curate go first (Claude Code runs the hooks of one event in parallel;
//! OpenCode runs Trellis' plugin before the sub-agent's first message). Compiled when the
//! lead writes the list (`Write`, `Edit`, a `task.py add-context` in `Bash`), the list is
//! curate's by the time the lead dispatches.

use std::path::{Path, PathBuf};

use crate::hook::{Trace, compile_list, known_roles, workspace};
use crate::settings::{CompileOptions, Workspace, WorkspaceOptions, check_name};
use crate::stages::budget::Status;

/// The most lists one edit compiles (a command naming many tasks compiles the first ones).
const MOST_LISTS: usize = 8;

/// What a tool did, as the host reports it after the call.
#[derive(Debug, Clone, Copy)]
pub enum Edit<'a> {
    /// A file written or edited (absolute, or relative to the host's folder).
    File(&'a str),
    /// A shell command that ran.
    Command(&'a str),
}

impl Edit<'_> {
    /// Whether the edit may touch a list at all, before the repository is even looked for:
    /// a `.jsonl` file, or a command that mentions the workflow's tools or folders.
    fn may_touch_lists(self) -> bool {
        match self {
            Edit::File(path) => Path::new(path)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("jsonl")),
            Edit::Command(command) => command.contains("trellis"),
        }
    }
}

/// Compiles the lists `edit` touched, writing them as `curate compile` does. Returns the
/// advice for the lead when one of them is not READY (BLOCKED, OVER_BUDGET): it reads it
/// right after its edit, before it dispatches.
#[must_use]
pub fn after_edit(
    cwd: Option<&Path>,
    edit: Edit<'_>,
    o: &WorkspaceOptions,
    trace: &Trace,
) -> Option<String> {
    if !edit.may_touch_lists() {
        return trace.skip("the edit touches no list");
    }
    let ws = workspace(cwd, o)?;
    trace.note(|t| t.root = Some(ws.root.to_path_buf()));
    let w = ws.workflow();
    if !w.authored() {
        return trace.skip(&format!("the {} workflow has no author's list", w.name()));
    }
    let Some(injector) = w.injector(&ws.root) else {
        return trace.skip("no workflow injector reads the lists: the dispatch compiles them");
    };
    let lists = touched(&ws, cwd, edit);
    if lists.is_empty() {
        return trace.skip("the edit touches no list");
    }
    let mut roles = Vec::new();
    let mut changes = Vec::new();
    let mut not_ready = Vec::new();
    let mut worst = Status::Ready;
    for (change, role) in lists.into_iter().take(MOST_LISTS) {
        let Ok((ws, change)) = ws.for_change(&change) else {
            continue;
        };
        let compiled = match compile_list(&ws, &CompileOptions::defaults(&ws, &role, &change)) {
            Ok((compiled, _)) => compiled,
            Err(reason) => {
                trace.note(|t| t.reason = Some(reason));
                continue;
            }
        };
        if !roles.contains(&role) {
            roles.push(role.clone());
        }
        if !changes.contains(&change) {
            changes.push(change.clone());
        }
        if compiled.status != Status::Ready {
            if worst == Status::Ready {
                worst = compiled.status;
            }
            let style = crate::report::Style { color: false };
            let outcome = format!(
                "nothing written: {injector} injects the list as it stands at the next dispatch"
            );
            let report = crate::report::human(&compiled, style, false, false, &outcome, None);
            not_ready.push(format!(
                "curate: the list {} is {}: {}.\n{}",
                compiled.manifest_path,
                compiled.status.name(),
                match compiled.status {
                    Status::Blocked => "give the missing inputs, then dispatch",
                    _ => "narrow the entries to sections, drop some, or split the task, then dispatch",
                },
                crate::hook::truncate(report, 3_000),
            ));
        }
    }
    if roles.is_empty() {
        return None;
    }
    trace.note(|t| {
        t.role = Some(roles.join(","));
        t.change = Some(changes.join(","));
        t.status = Some(worst.name());
    });
    (!not_ready.is_empty()).then(|| not_ready.join("\n"))
}

/// The (change, role) of each list `edit` touched: the list file itself, or every list of
/// each task a command names. Only roles the repository knows, and only lists that exist
/// (a command never makes curate write a list nobody started).
fn touched(ws: &Workspace, cwd: Option<&Path>, edit: Edit<'_>) -> Vec<(String, String)> {
    let Some(known) = known_roles(ws) else {
        return Vec::new();
    };
    let Some(tasks) = ws.workflow().changes_root() else {
        return Vec::new();
    };
    let mut lists = Vec::new();
    match edit {
        Edit::File(path) => {
            let Some(rel) = inside(&ws.root, cwd, path) else {
                return lists;
            };
            let Some((folder, file)) = rel.rsplit_once('/') else {
                return lists;
            };
            if let (Some(change), Some(role)) =
                (task_of(tasks, folder), file.strip_suffix(".jsonl"))
                && known(role)
            {
                lists.push((change, role.to_owned()));
            }
        }
        Edit::Command(command) => {
            let mut seen = Vec::new();
            for word in words(command) {
                let Some(change) = task_named(ws, tasks, cwd, word) else {
                    continue;
                };
                if seen.contains(&change) {
                    continue;
                }
                for role in roles_listed(&ws.root.join(tasks).join(&change)) {
                    if known(&role) {
                        lists.push((change.clone(), role));
                    }
                }
                seen.push(change);
            }
        }
    }
    lists
}

/// The words of a shell command, quotes and the usual separators taken off (no expansion:
/// a `$TASK` names nothing).
fn words(command: &str) -> impl Iterator<Item = &str> {
    command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '='))
        .map(|w| w.trim_matches(|c| matches!(c, '"' | '\'' | '`')))
        .filter(|w| !w.is_empty())
}

/// The repository-relative form of a path the host names (relative to `cwd` when not
/// absolute), when it is inside the repository: its folder is resolved (links included),
/// the file itself is not followed.
fn inside(root: &Path, cwd: Option<&Path>, path: &str) -> Option<String> {
    let path = Path::new(path);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.map_or_else(|| root.join(path), |c| c.join(path))
    };
    let folder = path.parent()?.canonicalize().ok()?;
    let rel = folder.strip_prefix(root).ok()?.join(path.file_name()?);
    let rel = rel.to_str()?.replace('\\', "/");
    Some(rel)
}

/// The change a task folder is (`<tasks>/<task>` → `<task>`, `<tasks>/archive/<m>/<task>` →
/// `archive/<m>/<task>`), when it is one.
fn task_of(tasks: &str, folder: &str) -> Option<String> {
    let id = folder.strip_prefix(tasks)?.strip_prefix('/')?;
    let parts: Vec<&str> = id.split('/').collect();
    let ok = match parts.as_slice() {
        [task] => *task != "archive",
        ["archive", _, _] => true,
        _ => false,
    };
    (ok && parts.iter().all(|p| check_name("change id", p).is_ok())).then(|| id.to_owned())
}

/// The task a command's word names: a path into the tasks folder (to the task or to a file
/// in it; absolute only inside this repository), or a bare task name that is a folder
/// there.
fn task_named(ws: &Workspace, tasks: &str, cwd: Option<&Path>, word: &str) -> Option<String> {
    let word = word.trim_end_matches('/');
    if !word.contains('/') {
        return (check_name("change id", word).is_ok()
            && word != "archive"
            && ws.root.join(tasks).join(word).is_dir())
        .then(|| word.to_owned());
    }
    let rel = if Path::new(word).is_absolute() || cwd.is_some_and(|c| c != ws.root.path()) {
        let full = if Path::new(word).is_absolute() {
            PathBuf::from(word)
        } else {
            cwd?.join(word)
        };
        full.strip_prefix(&ws.root).ok()?.to_str()?.to_owned()
    } else {
        word.strip_prefix("./").unwrap_or(word).to_owned()
    };
    let rest = rel.strip_prefix(tasks)?.strip_prefix('/')?;
    let parts: Vec<&str> = rest.split('/').collect();
    let depth = if parts.first() == Some(&"archive") {
        3
    } else {
        1
    };
    let folder = format!("{tasks}/{}", parts.get(..depth)?.join("/"));
    let change = task_of(tasks, &folder)?;
    ws.root.join(&folder).is_dir().then_some(change)
}

/// The roles a task folder holds a list of (`<role>.jsonl`, regular files only), sorted.
fn roles_listed(folder: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut roles: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".jsonl")
                .map(str::to_owned)
        })
        .collect();
    roles.sort();
    roles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_folder_is_a_live_or_an_archived_task() {
        let t = ".trellis/tasks";
        assert_eq!(
            task_of(t, ".trellis/tasks/11-28-x").as_deref(),
            Some("11-28-x")
        );
        assert_eq!(
            task_of(t, ".trellis/tasks/archive/2026-11/11-28-x").as_deref(),
            Some("archive/2026-11/11-28-x")
        );
        assert_eq!(task_of(t, ".trellis/tasks/archive"), None);
        assert_eq!(task_of(t, ".trellis/tasks/x/research"), None);
        assert_eq!(task_of(t, ".trellis/tasks/../x"), None);
        assert_eq!(task_of(t, ".trellis/spec/x"), None);
    }

    #[test]
    fn a_commands_words_lose_their_quotes_and_separators() {
        let w: Vec<&str> = words(
            "cd /r && python3 ./.trellis/scripts/task.py add-context \".trellis/tasks/a b\" implement 'src/x.ts' \"Why\";echo T=$T",
        )
        .collect();
        assert_eq!(
            w,
            [
                "cd",
                "/r",
                "python3",
                "./.trellis/scripts/task.py",
                "add-context",
                ".trellis/tasks/a",
                "b",
                "implement",
                "src/x.ts",
                "Why",
                "echo",
                "T",
                "$T"
            ]
        );
    }

    #[test]
    fn only_a_jsonl_file_or_a_command_naming_trellis_is_looked_at() {
        assert!(Edit::File("/r/.trellis/tasks/x/implement.jsonl").may_touch_lists());
        assert!(!Edit::File("/r/src/main.rs").may_touch_lists());
        assert!(Edit::Command("python3 .trellis/scripts/task.py add-context x").may_touch_lists());
        assert!(!Edit::Command("cargo test").may_touch_lists());
    }
}
