//! Trellis (`.trellis/`, mindfold-ai/Trellis): a task is `.trellis/tasks/<task>/` (archived:
//! `.trellis/tasks/archive/<yyyy-mm>/<task>/`); its author lists the files a sub-agent needs
//! in `implement.jsonl` / `check.jsonl`, which Trellis' hook inlines whole, in file order,
//! cut at the byte caps of `.trellis/config.yaml`, together with the task's `prd.md`,
//! `design.md` and `implement.md`.
//!
//! curate reads the author's rows as layer 2 (kept, in order, with their reasons), writes
//! its result into the same file as rows Trellis reads (its header and notes are rows
//! without a `file` key, which Trellis skips), and budgets in Trellis' bytes.

use crate::trust::tree::Tree;

use crate::model::Lang;

use super::simple_yaml::{self, Value};
use super::{ByteBudget, Located, Reader, Workflow, direct, folders, is_dir};

pub struct Trellis;

const TASKS: &str = ".trellis/tasks";
const ARCHIVE: &str = ".trellis/tasks/archive";
const CONFIG: &str = ".trellis/config.yaml";

/// Trellis' defaults when `.trellis/config.yaml` sets nothing.
pub const DEFAULT_BUDGET: ByteBudget = ByteBudget {
    per_file: 32_768,
    per_artifact: 65_536,
    total: 131_072,
};

/// The task's own files Trellis' hook injects after the listed ones, with the header it
/// gives each and the reason its notice names.
const ARTIFACTS: [(&str, &str, &str); 3] = [
    ("prd.md", "Requirements", "Requirements document"),
    ("design.md", "Technical Design", "Technical design document"),
    ("implement.md", "Execution Plan", "Execution plan document"),
];

/// Where Trellis' own injector is installed, per host.
const INJECTORS: [&str; 4] = [
    ".claude/hooks/inject-subagent-context.py",
    ".cursor/hooks/inject-subagent-context.py",
    ".opencode/plugins/inject-subagent-context.js",
    ".codex/hooks/inject-subagent-context.py",
];

/// True when a Trellis injector is installed and none of those installed reads byte caps
/// (`context_injection` / `max_total_bytes`): the hooks of Trellis 0.6.x inline each file
/// whole, however large.
fn installed_hooks_cap_nothing(root: &Tree) -> bool {
    let hooks: Vec<crate::trust::tree::Bytes> = INJECTORS
        .iter()
        .filter_map(|p| root.read(&root.join(p)).ok()?)
        .collect();
    let caps = |text: &[u8]| {
        memchr::memmem::find(text, b"max_total_bytes").is_some()
            || memchr::memmem::find(text, b"context_injection").is_some()
    };
    !hooks.is_empty() && !hooks.iter().any(|h| caps(h))
}

/// A block as Trellis' hook counts it against its total: `=== <header> ===\n`, the
/// content cut at `cap`, and the notice when cut.
fn block(header: &str, path: &str, injected: u64, whole: u64, cap: u64) -> u64 {
    let mut n = format!("=== {header} ===\n").len() as u64 + injected;
    if injected < whole {
        n += format!("\n[Trellis: truncated at {cap} bytes — read {path} for the full content]")
            .len() as u64;
    }
    n
}

/// The bytes of a notice the hook writes instead of a block: `what` is `binary file`
/// (`_binary_notice`) or `total context limit reached` (`_index_notice`).
fn notice(what: &str, path: &str, size: u64, reason: &str) -> u64 {
    format!("[Trellis: not inlined ({what}) — {path} ({size} bytes): {reason}]").len() as u64
}

/// One of the task's own files as the hook injects it after the list
/// (`_materialize_artifact`).
struct Artifact {
    path: String,
    /// Its block's bytes, cut at the per-artifact cap.
    block: u64,
    /// The file's whole size.
    size: u64,
    /// What the notice standing for it names.
    reason: &'static str,
}

/// The task `folder`'s `prd.md`, `design.md` and `implement.md` that are there, in the
/// hook's order, cut at `cap`.
fn artifact_blocks(root: &Tree, folder: &str, cap: u64) -> Vec<Artifact> {
    ARTIFACTS
        .iter()
        .filter_map(|(name, title, reason)| {
            let path = format!("{folder}/{name}");
            let bytes = root.read(&root.join(&path)).ok().flatten()?;
            let (size, injected) = (
                bytes.len() as u64,
                crate::stages::measure::cut_len(&bytes, cap),
            );
            Some(Artifact {
                block: block(&format!("{path} ({title})"), &path, injected, size, cap),
                path,
                size,
                reason,
            })
        })
        .collect()
}

/// Trellis' hook's running total (`_Budget`, `_budgeted_block`): a block that does not fit
/// what is left is replaced by a notice naming it, and the notice counts.
struct Total {
    cap: u64,
    used: u64,
    left_out: Vec<String>,
}

impl Total {
    fn offer(&mut self, path: &str, block: u64, size: u64, reason: &str) {
        if self.cap > 0 && self.used + block > self.cap {
            self.used += notice("total context limit reached", path, size, reason);
            self.left_out.push(path.to_owned());
        } else {
            self.used += block;
        }
    }
}

/// The rows Trellis' hook reads from a list (`read_jsonl_entries`): each line that is a JSON
/// object with a `file` (or `path`), as `(path, is a directory, reason)`.
fn hook_rows(rows: &str) -> Vec<(String, bool, String)> {
    rows.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line.trim()).ok())
        .filter_map(|row| {
            let path = [row.get("file"), row.get("path")]
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_str)
                .find(|p| !p.is_empty())?
                .to_owned();
            let directory =
                row.get("type").and_then(serde_json::Value::as_str) == Some("directory");
            let reason = row
                .get("reason")
                .and_then(serde_json::Value::as_str)
                .filter(|r| !r.is_empty())
                .unwrap_or("-")
                .to_owned();
            Some((path, directory, reason))
        })
        .collect()
}

/// `archive/<yyyy-mm>/<task>` (or under `.trellis/tasks/`, or with a trailing `/`) as its
/// month and task.
fn archived_form(id: &str) -> Option<(&str, &str)> {
    let id = id.trim_end_matches('/');
    let id = id.strip_prefix(".trellis/tasks/").unwrap_or(id);
    let (month, task) = id.strip_prefix("archive/")?.split_once('/')?;
    (is_month(month) && !task.contains('/')).then_some((month, task))
}

/// `<task>/workstreams/<n>` (a task kept inside another's folder, as AgentDash keeps a
/// task's batches): the folder that holds it under `.trellis/tasks/`, and its name. Every
/// part a plain name; the first not `archive` (see [`archived_form`]).
fn nested_form(id: &str) -> Option<(&str, &str)> {
    let id = id.trim_end_matches('/');
    let id = id.strip_prefix(".trellis/tasks/").unwrap_or(id);
    let (parent, task) = id.rsplit_once('/')?;
    let plain = |part: &str| {
        part.len() <= 128
            && part.starts_with(|c: char| c.is_ascii_alphanumeric())
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    (!parent.starts_with("archive/") && parent != "archive" && id.split('/').all(plain))
        .then_some((parent, task))
}

impl Workflow for Trellis {
    fn name(&self) -> &'static str {
        "trellis"
    }

    fn detect(&self, root: &Tree) -> Option<String> {
        if is_dir(root, TASKS) {
            Some(format!("{TASKS}/"))
        } else {
            is_dir(root, ".trellis").then(|| ".trellis/".to_owned())
        }
    }

    fn locate(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<Located> {
        direct(root, TASKS, id).or_else(|| {
            // The newest month first: a task archived twice is the later one.
            folders(root, ARCHIVE)
                .into_iter()
                .rev()
                .find_map(|month| direct(root, &format!("{ARCHIVE}/{month}"), id))
        })
    }

    fn changes_root(&self) -> Option<&'static str> {
        Some(TASKS)
    }

    fn more_roots(&self) -> &'static [&'static str] {
        &[".trellis/tasks/archive/*"]
    }

    fn reserved(&self) -> Option<(&'static str, &'static str)> {
        Some((
            "archive",
            "archive/<yyyy-mm>/<task>, or the task's own name",
        ))
    }

    /// `archive/2026-11/<task>` (the path `task.py list-archive` lists under) and
    /// `.trellis/tasks/<task>/` (as `task.py current` prints it) are the task.
    fn normalize_id<'a>(&self, id: &'a str) -> &'a str {
        match archived_form(id).or_else(|| nested_form(id)) {
            Some((_, task)) => task,
            None => {
                let id = id.trim_end_matches('/');
                id.strip_prefix(".trellis/tasks/").unwrap_or(id)
            }
        }
    }

    /// `archive/2026-11/<task>` is that month's task, even when a live task or another
    /// month's has the same name; `<task>/workstreams/<n>` is the task in that folder.
    fn pinned(&self, id: &str) -> Option<String> {
        archived_form(id)
            .map(|(month, _)| format!("{ARCHIVE}/{month}"))
            .or_else(|| nested_form(id).map(|(parent, _)| format!("{TASKS}/{parent}")))
    }

    /// Trellis' agents and its own injectors read the task from the dispatch prompt's
    /// `Active task: <path>` line (`ACTIVE_TASK_HINT_RE` in its OpenCode plugin).
    fn task_line(&self) -> Option<&'static str> {
        Some("active task")
    }

    fn manifest(&self) -> &'static str {
        "{changes}/{change}/{role}.jsonl"
    }

    fn sections(&self) -> bool {
        false
    }

    fn roles(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("implement", "worker"),
            ("check", "reviewer"),
            ("research", "explorer"),
            ("trellis-implement", "worker"),
            ("trellis-check", "reviewer"),
            ("trellis-research", "explorer"),
        ]
    }

    fn normalize_role<'a>(&self, role: &'a str) -> &'a str {
        role.strip_prefix("trellis-").unwrap_or(role)
    }

    fn contracts(&self) -> &'static str {
        include_str!("../../contracts/workflows/trellis.json")
    }

    fn injected(&self) -> &'static [&'static str] {
        &["prd.md", "design.md", "implement.md"]
    }

    fn block_bytes(&self, path: &str, injected: u64, whole: u64, cap: u64) -> u64 {
        block(path, path, injected, whole, cap)
    }

    fn reserved_bytes(&self, root: &Tree, folder: &str) -> u64 {
        let Some(caps) = self.byte_budget(root) else {
            return 0;
        };
        let cap = caps.per_artifact;
        artifact_blocks(root, folder, cap)
            .iter()
            .map(|a| a.block)
            .sum()
    }

    /// `get_implement_context` / `get_check_context`: the list's files in its order (a
    /// folder's `.md` files as [`crate::stages::authored::directory_members`] gives them),
    /// each cut at the per-file cap, then `prd.md`, `design.md` and `implement.md` cut at the
    /// per-artifact cap, against the total.
    fn left_out(&self, root: &Tree, folder: &str, rows: &str, read: Reader<'_>) -> Vec<String> {
        let Some(caps) = self.byte_budget(root).filter(|c| c.total > 0) else {
            return Vec::new();
        };
        let mut total = Total {
            cap: caps.total,
            used: 0,
            left_out: Vec::new(),
        };
        for (path, directory, reason) in hook_rows(rows) {
            let files = if directory {
                crate::stages::authored::directory_members(root, &path)
            } else {
                vec![path]
            };
            for path in files {
                let Some(bytes) = read(&path) else { continue };
                let size = bytes.len() as u64;
                if bytes.contains(&0) || std::str::from_utf8(&bytes).is_err() {
                    total.used += notice("binary file", &path, size, &reason);
                    continue;
                }
                let injected = crate::stages::measure::cut_len(&bytes, caps.per_file);
                total.offer(
                    &path,
                    block(&path, &path, injected, size, caps.per_file),
                    size,
                    &reason,
                );
            }
        }
        for a in artifact_blocks(root, folder, caps.per_artifact) {
            total.offer(&a.path, a.block, a.size, a.reason);
        }
        total.left_out
    }

    /// In a monorepo (`packages:` in `.trellis/config.yaml`), the spec folders of the
    /// packages the task is not in (`.trellis/spec/<package>/`).
    fn out_of_scope(&self, root: &Tree, change: &Located) -> Vec<(String, String)> {
        let read = |rel: &str| root.read(&root.join(rel)).ok().flatten();
        let config = read(CONFIG).map(|b| String::from_utf8_lossy(&b).into_owned());
        let task = read(&format!("{}/task.json", change.path()));
        let Some((package, packages)) = task_package(
            &config.unwrap_or_default(),
            task.as_deref().map(Vec::as_slice),
        ) else {
            return Vec::new();
        };
        packages
            .into_iter()
            .filter(|p| *p != package)
            .map(|p| {
                (
                    format!(".trellis/spec/{p}/"),
                    format!("the spec of package {p}; the task is in package {package}"),
                )
            })
            .collect()
    }

    fn injector(&self, root: &Tree) -> Option<String> {
        INJECTORS
            .iter()
            .find(|p| root.join(p).is_file())
            .map(|p| (*p).to_owned())
    }

    fn authored(&self) -> bool {
        true
    }

    /// The hook's byte caps (`.trellis/config.yaml`'s `context_injection:`, else Trellis'
    /// defaults); none when every hook installed is of a generation that has none (0.6.x
    /// hooks inline every file whole): curate's line cap bounds the list then.
    fn byte_budget(&self, root: &Tree) -> Option<ByteBudget> {
        if installed_hooks_cap_nothing(root) {
            return None;
        }
        let path = root.join(CONFIG);
        let text = root
            .read(&path)
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        Some(budget_of(&text))
    }

    fn settings_warnings(&self, root: &Tree) -> Vec<super::SettingsWarning> {
        let Ok(Some(bytes)) = root.read(&root.join(CONFIG)) else {
            return Vec::new();
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut defaults = DEFAULT_BUDGET;
        // A key's line, for the person who opens the file: the first one under
        // `context_injection:` (a key of that name elsewhere is another setting).
        let lines: Vec<&str> = text.lines().collect();
        let section = lines
            .iter()
            .position(|l| l.starts_with("context_injection:"))
            .unwrap_or(0);
        read_caps(&text)
            .1
            .into_iter()
            .map(|(key, shown)| {
                let default = cap_mut(&mut defaults, &key).map_or(0, |c| *c);
                let line = lines[section..]
                    .iter()
                    .position(|l| l.trim_start().starts_with(&format!("{key}:")))
                    .map_or(0, |i| section + i + 1);
                super::SettingsWarning {
                    file: CONFIG.to_owned(),
                    line,
                    message: format!(
                        "context_injection.{key} {shown} is not a whole number of bytes (0 or more): Trellis' hook uses its default, {default} bytes, and so does curate"
                    ),
                }
            })
            .collect()
    }

    fn describes(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => {
                "the files this task's author listed, the project's specs and the module assigned to you; the task's own prd.md, design.md and implement.md sit beside the list and are read too"
            }
            Lang::Zh => {
                "本任务作者列出的文件、项目规范与分配模块；任务自己的 prd.md、design.md 与 implement.md 就在该清单旁，也要读取"
            }
        }
    }
}

fn is_month(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 7
        && b[4] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || c.is_ascii_digit())
}

/// The `context_injection:` caps of `.trellis/config.yaml`, read the way Trellis' own
/// `config.py` reads them; each cap Trellis' default where absent or not a number.
#[must_use]
pub fn budget_of(text: &str) -> ByteBudget {
    read_caps(text).0
}

/// The cap a `context_injection` key sets in `budget`.
fn cap_mut<'a>(budget: &'a mut ByteBudget, key: &str) -> Option<&'a mut u64> {
    match key {
        "max_file_bytes" => Some(&mut budget.per_file),
        "max_artifact_bytes" => Some(&mut budget.per_artifact),
        "max_total_bytes" => Some(&mut budget.total),
        _ => None,
    }
}

/// The caps (see [`budget_of`]), and each cap key whose value Trellis replaces by its
/// default because it is not a whole number, with the value as written.
fn read_caps(text: &str) -> (ByteBudget, Vec<(String, String)>) {
    let mut budget = DEFAULT_BUDGET;
    let mut bad = Vec::new();
    let config = simple_yaml::parse(text);
    let Some(Value::Map(caps)) = simple_yaml::get(&config, "context_injection") else {
        return (budget, bad);
    };
    for (key, value) in caps {
        let Some(cap) = cap_mut(&mut budget, key) else {
            continue;
        };
        match value {
            Value::Str(v) => match python_int(v) {
                Some(n) => *cap = n,
                None => bad.push((key.clone(), format!("{v:?}"))),
            },
            _ => bad.push((key.clone(), "not a number".to_owned())),
        }
    }
    (budget, bad)
}

/// A cap as Python's `int(raw)` reads it, and Trellis keeps it (a negative one is not kept):
/// blanks around, a sign, `_` between digits (`1_024`).
fn python_int(raw: &str) -> Option<u64> {
    let text = raw.trim();
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let well_formed = !digits.is_empty()
        && digits
            .split('_')
            .all(|run| !run.is_empty() && run.bytes().all(|b| b.is_ascii_digit()));
    if !well_formed {
        return None;
    }
    let n: u64 = digits.replace('_', "").parse().ok()?;
    (!negative || n == 0).then_some(n)
}

/// The package a task is in, by Trellis' rules (`packages_context.py`): its `task.json`
/// `package` when `packages:` declares it, else `default_package` when declared; `None` in a
/// single-repository project. With the declared packages.
fn task_package(config: &str, task_json: Option<&[u8]>) -> Option<(String, Vec<String>)> {
    let config = simple_yaml::parse(config);
    let Some(Value::Map(declared)) = simple_yaml::get(&config, "packages") else {
        return None;
    };
    // A package is an entry whose value is a mapping (`get_packages` drops the others).
    let packages: Vec<String> = declared
        .iter()
        .filter(|(_, v)| matches!(v, Value::Map(_)))
        .map(|(k, _)| k.clone())
        .collect();
    let of_task = task_json
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok())
        .and_then(|t| t.get("package")?.as_str().map(str::to_owned));
    let default = match simple_yaml::get(&config, "default_package") {
        Some(Value::Str(p)) => Some(p.clone()),
        _ => None,
    };
    let chosen = [of_task, default]
        .into_iter()
        .flatten()
        .find(|p| packages.contains(p))?;
    Some((chosen, packages))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archived_ids_reduce_to_the_task() {
        let t = Trellis;
        assert_eq!(t.normalize_id("archive/2026-11/12-01-login"), "12-01-login");
        assert_eq!(t.normalize_id(".trellis/tasks/12-01-login"), "12-01-login");
        assert_eq!(t.normalize_id(".trellis/tasks/12-01-login/"), "12-01-login");
        assert_eq!(t.normalize_id("12-01-login"), "12-01-login");
        assert_eq!(t.normalize_id("archive/26-11/x"), "archive/26-11/x");
        assert_eq!(t.normalize_id("archive/2026-11/a/b"), "archive/2026-11/a/b");
        assert_eq!(
            t.pinned(".trellis/tasks/archive/2026-11/12-01-login/")
                .as_deref(),
            Some(".trellis/tasks/archive/2026-11")
        );
        assert_eq!(t.pinned("12-01-login"), None);
        assert_eq!(t.pinned("archive/26-11/x"), None);
    }

    #[test]
    fn a_task_kept_in_another_tasks_folder_is_pinned_there() {
        let t = Trellis;
        let id = "04-20-big-task/workstreams/2";
        assert_eq!(t.normalize_id(id), "2");
        assert_eq!(
            t.pinned(id).as_deref(),
            Some(".trellis/tasks/04-20-big-task/workstreams")
        );
        assert_eq!(
            t.pinned(".trellis/tasks/04-20-big-task/workstreams/2/")
                .as_deref(),
            Some(".trellis/tasks/04-20-big-task/workstreams")
        );
        // Never a way out, nor a name that is no name.
        for bad in ["../x/y", "a/../b", "a//b", "a/.hidden", "archive/x/y"] {
            assert_eq!(t.pinned(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_hook_reads_rows_with_a_file_or_a_path() {
        let rows = "{\"_curate\":\"x\"}\n  {\"file\": \"a.md\", \"reason\": \"why\"}\nnot json\n{\"path\": \"b/\", \"type\": \"directory\"}\n{\"file\": \"\", \"path\": \"c.md\", \"reason\": \"\"}\n";
        assert_eq!(
            hook_rows(rows),
            [
                ("a.md".to_owned(), false, "why".to_owned()),
                ("b/".to_owned(), true, "-".to_owned()),
                ("c.md".to_owned(), false, "-".to_owned()),
            ]
        );
        // A block that does not fit what is left is named, and its notice counts.
        let mut total = Total {
            cap: 100,
            used: 0,
            left_out: Vec::new(),
        };
        total.offer("big.md", 90, 80, "r");
        total.offer("next.md", 20, 10, "r");
        assert_eq!(total.left_out, ["next.md"]);
        assert_eq!(
            total.used,
            90 + notice("total context limit reached", "next.md", 10, "r")
        );
    }

    #[test]
    fn the_caps_come_from_context_injection() {
        assert_eq!(budget_of(""), DEFAULT_BUDGET);
        let b = budget_of(
            "session:\n  max_file_bytes: 1\ncontext_injection:\n  max_file_bytes: 4096 # cut\n  max_total_bytes: \"16384\"\nother: 3\n",
        );
        assert_eq!(
            b,
            ByteBudget {
                per_file: 4096,
                per_artifact: 65_536,
                total: 16384
            }
        );
    }

    /// Each value as Python's `int()` reads it (checked against `int()` by hand), and what
    /// Trellis then keeps: not a negative one.
    #[test]
    fn a_cap_is_read_as_pythons_int_reads_it() {
        for (raw, want) in [
            ("1_024", Some(1024)),
            (" +100 ", Some(100)),
            ("-0", Some(0)),
            ("0", Some(0)),
            ("007", Some(7)),
            ("-5", None),
            ("1__024", None),
            ("_1024", None),
            ("1024_", None),
            ("4096.0", None),
            ("0x10", None),
            ("", None),
            ("+", None),
        ] {
            assert_eq!(python_int(raw), want, "{raw:?}");
        }
        assert_eq!(
            budget_of("context_injection:\n  max_file_bytes: 1_024\n").per_file,
            1024
        );
    }
}
