//! `doctor`: is every dispatch curated? The wiring of each host (the binary it runs,
//! found as the host will look for it; the hook entries or the plugin), other injectors,
//! the workflow detected, and the last hook runs of `.curate/state/hooks.jsonl`. Exit 1
//! when a dispatch would go uncurated (a wired host whose binary is not found, a partial
//! wiring, nothing wired, the last run of a host crashed or past its deadline).

use serde_json::Value;

use std::path::PathBuf;

use crate::hosts::{self, HostKind};
use crate::settings::Workspace;
use crate::stages::related::ask::Watching;
use crate::state::HookRun;

/// How many of the last hook runs are shown.
const LAST_RUNS: usize = 10;

/// One host's wiring as found.
pub struct Wired {
    pub host: &'static str,
    pub file: &'static str,
    /// What is wired (events, the plugin, the server), empty: nothing.
    pub entries: Vec<String>,
    /// The program it runs, and where the host finds it.
    pub program: Option<String>,
    pub found: Option<PathBuf>,
    pub problems: Vec<String>,
}

/// What `doctor` found: each host's wiring, the other injectors, the last hook runs, the
/// watcher, and the problems that leave a dispatch uncurated (none: ok).
pub struct Diagnosis {
    pub root: PathBuf,
    pub workflow: &'static str,
    /// This binary's path (redacted), and a warning about it.
    pub binary: (String, Option<String>),
    pub wired: Vec<Wired>,
    pub injectors: Vec<String>,
    pub runs: Vec<HookRun>,
    /// `curate watch` for this repository; `None`: no cache folder.
    pub watching: Option<Watching>,
    pub problems: Vec<String>,
}

impl Wired {
    fn new(host: &'static str, file: &'static str) -> Wired {
        Wired {
            host,
            file,
            entries: Vec::new(),
            program: None,
            found: None,
            problems: Vec::new(),
        }
    }
}

/// Looks at the wiring of every host in `ws` (resolved without its config: a broken config
/// is one of the things a user runs `doctor` for).
#[must_use]
pub fn diagnose(ws: &Workspace) -> Diagnosis {
    let root = &ws.root;
    let read = |rel: &str| -> Option<String> {
        crate::trust::admit::read_repo_file(root, &root.join(rel))
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    // A host file that is there but not JSON: a problem naming its place, for the host
    // cannot read it either.
    let json = |file: &str, problems: &mut Vec<String>, host: &str| -> Option<Value> {
        let text = read(file)?;
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                problems.push(format!(
                    "{file}:{}: invalid JSON: {}: {host} cannot read it",
                    crate::util::jsonpos::json_pos(&e),
                    crate::util::jsonpos::json_message_of(&text, &e)
                ));
                None
            }
        }
    };
    let mut wired = Vec::new();
    // A workflow whose own injector reads the lists at the dispatch (Trellis' hook): the
    // hosts must compile a list right after the lead edits it.
    let lists_read_by = ws
        .workflow()
        .authored()
        .then(|| ws.workflow().injector(root))
        .flatten();

    // Claude Code: the project's settings and the local ones.
    let mut claude = Wired::new("claude-code", ".claude/settings.json");
    for file in [".claude/settings.json", ".claude/settings.local.json"] {
        if let Some(v) = json(file, &mut claude.problems, "Claude Code") {
            for (event, program) in hosts::claude_hook_programs(&v) {
                claude.entries.push(event);
                claude.program.get_or_insert(program);
            }
        }
    }
    if !claude.entries.is_empty() {
        for event in ["PreToolUse", "SubagentStart"] {
            if !claude.entries.iter().any(|e| e == event) {
                claude.problems.push(format!(
                    "no {event} entry runs curate's hook: run `curate init --host claude-code`"
                ));
            }
        }
        if let Some(injector) = &lists_read_by
            && !claude.entries.iter().any(|e| e == "PostToolUse")
        {
            claude.problems.push(format!(
                "no PostToolUse entry runs curate's hook: {injector} reads a task's list at the dispatch, so a list the lead edits reaches it before curate compiles it; run `curate init --host claude-code`"
            ));
        }
    }
    wired.push(claude);

    // OpenCode: curate's plugin (CURATE_BIN, when set, wins in the plugin too).
    let mut open = Wired::new("opencode", HostKind::Opencode.path());
    if let Some(text) = read(HostKind::Opencode.path()) {
        open.entries.push("plugin".to_owned());
        if !hosts::is_our_plugin(&text) {
            open.problems.push(format!(
                "{} differs from curate's plugin (a hand edit, or an older curate's): `curate init --host opencode --force` writes it anew",
                HostKind::Opencode.path()
            ));
        } else if let Some(injector) = &lists_read_by
            && !hosts::is_current_plugin(&text)
        {
            open.problems.push(format!(
                "{} is an earlier curate's plugin, which does not compile a list after the lead edits it, before {injector} reads it: `curate init --host opencode` writes the current one",
                HostKind::Opencode.path()
            ));
        }
        open.program = std::env::var("CURATE_BIN")
            .ok()
            .filter(|b| !b.is_empty())
            .or_else(|| hosts::plugin_program(&text));
    }
    wired.push(open);

    // MCP: `.mcp.json`.
    let mut mcp = Wired::new("mcp", HostKind::Mcp.path());
    if let Some(v) = json(HostKind::Mcp.path(), &mut mcp.problems, "an MCP client")
        && let Some(command) = v["mcpServers"]["curate"]["command"].as_str()
    {
        mcp.entries.push("mcpServers.curate".to_owned());
        mcp.program = Some(command.to_owned());
    }
    wired.push(mcp);
    wired.extend(fourth_round(root, &read));

    look_for_programs(&mut wired);
    let injectors = hosts::other_injectors(root);
    let runs = crate::state::last_hook_runs(root, LAST_RUNS);
    let problems = problems(&wired, &runs);
    let this = hosts::this_binary();
    Diagnosis {
        root: root.to_path_buf(),
        workflow: ws.workflow().name(),
        binary: (
            crate::trust::redact::redact_path(&this.program),
            this.warning,
        ),
        wired,
        injectors,
        runs,
        // `curate watch` (docs/budgets.md#related-files): information, never a problem.
        watching: crate::util::cache::DigestCache::default_dir()
            .filter(|_| !ws.no_cache)
            .map(|dir| crate::stages::related::ask::watching(&dir, root)),
        problems,
    }
}
/// Where each host finds the program it runs; a problem for one it does not find.
fn look_for_programs(wired: &mut [Wired]) {
    for w in wired.iter_mut() {
        if let Some(p) = &w.program {
            w.found = hosts::resolve_program(p, None);
            if w.found.is_none() {
                // `.mcp.json` names `curate` by name on purpose: `init` again changes nothing.
                let fix = if w.host == "mcp" && !p.contains('/') {
                    format!(
                        "put the curate binary on the PATH the MCP client runs with, or name it in {}'s \"command\"",
                        HostKind::Mcp.path()
                    )
                } else {
                    format!(
                        "run `curate init --host {}` with the curate you mean to use",
                        w.host
                    )
                };
                w.problems.push(format!(
                    "{p} is not found{}: every dispatch goes uncurated; {fix}",
                    if p.contains('/') { "" } else { " on this PATH" },
                ));
            }
        }
    }
}

/// What leaves a dispatch uncurated: each host's problems, no host wired, a last hook run
/// that crashed or ran past its deadline.
fn problems(wired: &[Wired], runs: &[HookRun]) -> Vec<String> {
    let mut problems: Vec<String> = wired
        .iter()
        .flat_map(|w| w.problems.iter().map(move |p| format!("{}: {p}", w.host)))
        .collect();
    if wired.iter().all(|w| w.entries.is_empty()) {
        problems.push(
            "no host is wired: dispatches are not curated (`curate init --host claude-code`, `--host codex`, `--host opencode` or `--host mcp`)"
                .to_owned(),
        );
    }
    for host in ["claude-code", "opencode", "codex", "copilot", "gemini"] {
        if let Some(last) = runs.iter().rev().find(|r| r.host == host)
            && matches!(last.status.as_str(), "crashed" | "deadline")
        {
            problems.push(format!(
                "{host}: the last hook run ({}) {}: that dispatch went uncurated",
                last.time,
                if last.status == "crashed" {
                    "crashed"
                } else {
                    "ran past its deadline (CURATE_HOOK_DEADLINE_MS)"
                }
            ));
        }
    }
    problems
}

/// The hosts of the fourth round: Codex, Copilot CLI, Gemini CLI.
fn fourth_round(root: &std::path::Path, read: &dyn Fn(&str) -> Option<String>) -> [Wired; 3] {
    [
        codex(root, read(hosts::codex::HOOKS_PATH)),
        copilot(read(hosts::COPILOT_PATH)),
        gemini(read(HostKind::Gemini.path())),
    ]
}

/// Gemini CLI: curate's `BeforeTool` entry in `.gemini/settings.json` (`text`).
fn gemini(text: Option<String>) -> Wired {
    let mut w = Wired::new("gemini", HostKind::Gemini.path());
    let Some(v) = text.and_then(|t| serde_json::from_str::<Value>(&t).ok()) else {
        return w;
    };
    for (event, groups) in v["hooks"].as_object().into_iter().flatten() {
        for h in groups
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
        {
            if hosts::is_handler_of(h, "gemini") {
                w.entries.push(event.clone());
                let command = h["command"].as_str().unwrap_or_default().trim();
                let command = command.strip_suffix(hosts::FAIL_OPEN).unwrap_or(command);
                w.program.get_or_insert_with(|| {
                    command
                        .trim()
                        .strip_suffix("hook gemini")
                        .unwrap_or(command)
                        .trim()
                        .trim_matches('\'')
                        .to_owned()
                });
            }
        }
    }
    if !w.entries.is_empty() && !w.entries.iter().any(|e| e == "BeforeTool") {
        w.problems.push(
            "no BeforeTool entry runs curate's hook: run `curate init --host gemini`".to_owned(),
        );
    }
    w
}

/// Codex: curate's entries in `.codex/hooks.json` (`text`), the project's trust and each
/// hook's approval in the user's `config.toml` (approval hashes recomputed as Codex
/// computes them). Never approves anything.
fn codex(root: &std::path::Path, text: Option<String>) -> Wired {
    use hosts::codex::{self as cx, Approval, Trust};
    let mut w = Wired::new("codex", cx::HOOKS_PATH);
    let Some(text) = text else { return w };
    let source = root.join(cx::HOOKS_PATH);
    let hooks_json = match serde_json::from_str::<Value>(&text) {
        Ok(v) => v,
        Err(e) => {
            w.problems.push(format!(
                "{}:{}: invalid JSON: {}: Codex cannot read it",
                cx::HOOKS_PATH,
                crate::util::jsonpos::json_pos(&e),
                crate::util::jsonpos::json_message_of(&text, &e)
            ));
            return w;
        }
    };
    // A hooks file of others' entries only: not curate's business (nor the user's config).
    if cx::hooks(&source, &hooks_json, None).is_empty() {
        return w;
    }
    let home = cx::home();
    let config_path = home.as_ref().map_or_else(
        || "~/.codex/config.toml".to_owned(),
        |h| h.join("config.toml").display().to_string(),
    );
    let config = match home.as_deref().map(cx::user_config).transpose() {
        Ok(c) => c.flatten(),
        Err(e) => {
            w.problems.push(format!(
                "{}: trust and approvals unknown",
                e.to_string().lines().next().unwrap_or_default()
            ));
            None
        }
    };
    let found = cx::hooks(&source, &hooks_json, config.as_ref());
    for h in &found {
        let state = match h.approval {
            Approval::Approved => "approved",
            Approval::Modified => "edited since approved",
            Approval::Unapproved => "not approved",
            Approval::Disabled => "disabled",
        };
        w.entries.push(format!("{} ({state})", h.event));
        let fix = format!(
            "approve it in Codex's hooks review, or add to {config_path}: {}",
            cx::approval_lines(std::slice::from_ref(h))
                .replace('\n', " ")
                .trim_end()
        );
        match h.approval {
            Approval::Approved => {}
            Approval::Modified => w.problems.push(format!(
                "the {} hook was approved, but its entry changed since (an edit un-approves it: {}): `codex exec` skips it without a word; {fix}",
                h.event, h.key
            )),
            Approval::Unapproved => w.problems.push(format!(
                "the {} hook is not approved ({}): `codex exec` skips it without a word; {fix}",
                h.event, h.key
            )),
            Approval::Disabled => w.problems.push(format!(
                "the {} hook is disabled (`enabled = false` for {} in {config_path})",
                h.event, h.key
            )),
        }
    }
    for (event, ..) in cx::ENTRIES {
        if !found.iter().any(|h| h.event == event) {
            w.problems.push(format!(
                "no {event} entry runs curate's hook: run `curate init --host codex`"
            ));
        }
    }
    match cx::trust(config.as_ref(), root) {
        Trust::Trusted => {}
        Trust::Untrusted => w.problems.push(format!(
            "the project is marked untrusted in {config_path}: Codex reads nothing in .codex/; set its trust_level to \"trusted\""
        )),
        Trust::Unknown => w.problems.push(format!(
            "the project is not trusted in {config_path}: Codex reads nothing in .codex/; accept Codex's trust prompt when `codex` starts here (or `codex exec --trust`)"
        )),
    }
    w.program = hooks_json["hooks"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .filter_map(Value::as_array)
        .flatten()
        .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
        .filter(|h| hosts::is_handler_of(h, "codex"))
        .find_map(|h| h["command"].as_str())
        .map(|c| {
            c.trim()
                .strip_suffix("hook codex")
                .unwrap_or(c)
                .trim()
                .trim_matches('\'')
                .to_owned()
        });
    w
}

/// GitHub Copilot CLI: curate's `.github/hooks/curate.json` (`text`) and the program it runs.
fn copilot(text: Option<String>) -> Wired {
    let mut w = Wired::new("copilot", hosts::COPILOT_PATH);
    let Some(text) = text else { return w };
    w.entries.push("preToolUse, subagentStart".to_owned());
    w.program = hosts::copilot_program(&text);
    if w.program.is_none() {
        w.problems.push(format!(
            "{} is not curate's (a hand edit?): `curate init --host copilot --force` writes it anew",
            hosts::COPILOT_PATH
        ));
    }
    w
}
