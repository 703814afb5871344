//! A host's wiring, as `curate init --host` writes it: the two hook entries merged into
//! `.claude/settings.json`, the OpenCode plugin `.opencode/plugins/curate.js`, and the MCP
//! server entry merged into `.mcp.json`.
//!
//! Merging keeps every foreign entry and key order; curate recognises its own entries by
//! their command, so a second run changes nothing. A file curate cannot parse is never
//! overwritten: the error names its line and column.
//!
//! The hook entries and the plugin run the binary `init` was run from, by its absolute
//! path ([`this_binary`]): a bare `curate` that is not on the host's `PATH` would leave
//! every dispatch uncurated without a word.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::util::jsonpos;

pub mod codex;

/// A host `curate init --host` wires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HostKind {
    /// `.claude/settings.json`: `PreToolUse` (`Agent|Task`) and `SubagentStart` hooks.
    ClaudeCode,
    /// `.opencode/plugins/curate.js`: the plugin that forwards `task` dispatches.
    Opencode,
    /// `.mcp.json` (and Codex's `.codex/config.toml`): the `curate mcp` server.
    Mcp,
    /// `.codex/hooks.json`: `PreToolUse` (`spawn_agent|collaborationspawn_agent`) and
    /// `SubagentStart` hooks (Codex runs them in a trusted project, once approved).
    Codex,
    /// `.github/hooks/curate.json`: GitHub Copilot CLI's `preToolUse` (`task`) and
    /// `subagentStart` hooks.
    Copilot,
    /// `.gemini/settings.json`: Gemini CLI's `BeforeTool` hook on `invoke_agent`.
    Gemini,
}

/// curate's own hooks file for GitHub Copilot CLI.
pub const COPILOT_PATH: &str = ".github/hooks/curate.json";

/// The OpenCode plugin, as written.
pub const OPENCODE_PLUGIN: &str = include_str!("../hosts/opencode/curate.js");

/// The command the Claude Code hook entries run, after the binary.
pub const HOOK_ARGS: &str = "hook claude-code";

/// What a hook command ends with where a failing command blocks the call: GitHub Copilot
/// CLI denies a tool call whose `preToolUse` command exits non-zero (a missing binary's 127
/// included), and runs `.claude/settings.json`'s entries too.
pub const FAIL_OPEN: &str = " || true";

/// The plugin's line naming the binary, as embedded (`curate` from `PATH`).
const PLUGIN_BIN_LINE: &str = "const CURATE = \"curate\"";

/// The binary a host's wiring runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    /// The program: an absolute path, or `curate` (from the host's `PATH`) when this
    /// process's own path is unknown.
    pub program: String,
    /// Why the program may not be found when the host runs it.
    pub warning: Option<String>,
}

/// This process's binary, absolute and with links resolved; a warning when its path is
/// unknown (then `curate` from `PATH`) or looks temporary (a temp folder, a cargo target).
#[must_use]
pub fn this_binary() -> Binary {
    match std::env::current_exe().and_then(std::fs::canonicalize) {
        Err(e) => Binary {
            program: "curate".to_owned(),
            warning: Some(format!(
                "cannot tell this binary's own path ({e}): the wiring runs `curate` from the host's PATH; check it with `curate doctor`"
            )),
        },
        Ok(path) => {
            let warning = temporary(&path).map(|why| {
                format!(
                    "the wiring runs {} ({why}): it may move or vanish; install curate (for example `cargo install --path .`) and run `curate init --host` again",
                    path.display()
                )
            });
            Binary {
                program: path.to_string_lossy().into_owned(),
                warning,
            }
        }
    }
}

/// Why `path` looks like a binary that will not stay where it is.
fn temporary(path: &Path) -> Option<&'static str> {
    // A cargo build folder first: a clone under the temporary folder is still one.
    let parts: Vec<_> = path
        .components()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    if parts
        .windows(2)
        .any(|w| w[0] == "target" && (w[1] == "debug" || w[1] == "release"))
    {
        return Some("a cargo build folder");
    }
    let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| std::env::temp_dir());
    path.starts_with(&temp).then_some("a temporary folder")
}

/// `program` quoted for `sh -c` (as Claude Code runs a hook command).
#[must_use]
pub fn shell_quoted(program: &str) -> String {
    let plain = !program.is_empty()
        && program
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b));
    if plain {
        program.to_owned()
    } else {
        format!("'{}'", program.replace('\'', "'\\''"))
    }
}

/// The Claude Code hook command running `program`; exit 0 even when the binary is gone.
#[must_use]
pub fn hook_command(program: &str) -> String {
    format!("{} {HOOK_ARGS}{FAIL_OPEN}", shell_quoted(program))
}

/// The OpenCode plugin running `program`.
#[must_use]
pub fn opencode_plugin(program: &str) -> String {
    OPENCODE_PLUGIN.replacen(
        PLUGIN_BIN_LINE,
        &format!(
            "const CURATE = {}",
            serde_json::to_string(program).unwrap_or_default()
        ),
        1,
    )
}

/// True when `text` is curate's plugin, whatever binary it names.
#[must_use]
pub fn is_our_plugin(text: &str) -> bool {
    let normal = plugin_without_program(text);
    normal == OPENCODE_PLUGIN.trim_end()
        || EARLIER_PLUGINS.contains(&crate::util::digest::hex(normal.as_bytes()).as_str())
}

/// True when `text` is this curate's plugin (not an earlier one's), whatever binary it names.
#[must_use]
pub fn is_current_plugin(text: &str) -> bool {
    plugin_without_program(text) == OPENCODE_PLUGIN.trim_end()
}

/// A plugin's text with its `const CURATE` line as [`PLUGIN_BIN_LINE`], the end trimmed.
fn plugin_without_program(text: &str) -> String {
    let normal: String = text
        .lines()
        .map(|l| {
            if l.starts_with("const CURATE = ") {
                PLUGIN_BIN_LINE
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    normal.trim_end().to_owned()
}

/// The SHA-256 of each plugin an earlier curate wrote (its `const CURATE` line as
/// [`PLUGIN_BIN_LINE`], the end trimmed): `init` replaces one without `--force`.
const EARLIER_PLUGINS: [&str; 1] =
    ["12b8d1ba9e391786fe19cf4e61c906264375a0a60cca90eb6d209cd67a1d76c0"];

/// The program of a curate plugin (`const CURATE = "…"`), if `text` is one.
#[must_use]
pub fn plugin_program(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("const CURATE = "))?;
    serde_json::from_str(line.trim_start_matches("const CURATE = ").trim()).ok()
}

impl HostKind {
    /// The file this host's wiring lives in, relative to the repository root.
    #[must_use]
    pub fn path(self) -> &'static str {
        match self {
            HostKind::ClaudeCode => ".claude/settings.json",
            HostKind::Opencode => ".opencode/plugins/curate.js",
            HostKind::Mcp => ".mcp.json",
            HostKind::Codex => codex::HOOKS_PATH,
            HostKind::Copilot => COPILOT_PATH,
            HostKind::Gemini => ".gemini/settings.json",
        }
    }
}

/// What wiring a host needs: the new text of its file and the lines saying what changed,
/// or `None` when the file already holds it.
#[derive(Debug, PartialEq, Eq)]
pub struct Wiring {
    pub text: String,
    pub changes: Vec<String>,
}

/// The wiring of `host` given the file's current text (`None`: no file). With `on_edit`
/// (a workflow whose own injector reads the author's lists: Trellis), Claude Code also runs
/// the hook after `Write`, `Edit`, `MultiEdit` and `Bash`, which compiles a list the lead
/// just edited.
///
/// # Errors
/// The file is not a JSON object (with its line and column), or (OpenCode, MCP) holds a
/// different curate entry and `force` is not set.
pub fn wire(
    host: HostKind,
    current: Option<&str>,
    force: bool,
    program: &str,
    on_edit: bool,
) -> Result<Option<Wiring>> {
    match host {
        HostKind::ClaudeCode => claude_code(current, program, on_edit),
        HostKind::Opencode => opencode(current, force, program),
        HostKind::Mcp => mcp(current, force),
        HostKind::Codex => codex::wire_hooks(current, program),
        HostKind::Copilot => copilot(current, force, program),
        // Gemini's timeouts are in milliseconds.
        HostKind::Gemini => merge_hooks(
            HostKind::Gemini.path(),
            current,
            "gemini",
            &format!("{} hook gemini{FAIL_OPEN}", shell_quoted(program)),
            &[("BeforeTool", "^invoke_agent$", 30_000)],
        ),
    }
}

fn parse_object(path: &str, text: Option<&str>) -> Result<Map<String, Value>> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        // Written back from the parsed object, a key written twice would lose its first
        // value (a person's hook) without a word.
        Ok(Value::Object(_)) if let Some((at, key)) = jsonpos::duplicate_key(text) => {
            Err(Error::Syntax {
                path: path.into(),
                pos: at.into(),
                message: format!(
                    "the key {key:?} is written twice in one object; JSON keeps only the last, and rewriting the file would lose the first: curate leaves the file as it is"
                ),
            })
        }
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(left_alone(path, "not a JSON object")),
        Err(e) => Err(Error::Syntax {
            path: path.into(),
            pos: jsonpos::json_pos(&e),
            message: format!(
                "invalid JSON: {}; curate leaves the file as it is",
                jsonpos::json_message_of(text, &e)
            ),
        }),
    }
}

/// A host file whose shape curate cannot merge into: named, and left as it is.
fn left_alone(path: &str, what: &str) -> Error {
    Error::Invalid {
        path: path.into(),
        message: format!("{what}; curate leaves the file as it is"),
    }
}

fn pretty(v: &Map<String, Value>) -> String {
    let mut text = serde_json::to_string_pretty(v).unwrap_or_default();
    text.push('\n');
    text
}

/// True when a hook handler runs `curate hook claude-code` (any curate binary, in the
/// shell form or the exec form).
#[must_use]
pub fn is_our_handler(h: &Value) -> bool {
    is_handler_of(h, "claude-code")
}

/// True when a hook handler runs `curate hook <host>` (any curate binary, in the shell
/// form or the exec form).
#[must_use]
pub fn is_handler_of(h: &Value, host: &str) -> bool {
    let hook_args = format!("hook {host}");
    let names_curate = |program: &str| {
        Path::new(program.trim_matches('\''))
            .file_name()
            .is_some_and(|n| n == "curate")
    };
    let Some(command) = h.get("command").and_then(Value::as_str) else {
        return false;
    };
    let command = command.trim();
    let command = command.strip_suffix(FAIL_OPEN).unwrap_or(command);
    if let Some(program) = command.trim().strip_suffix(&hook_args) {
        return names_curate(program.trim());
    }
    names_curate(command)
        && h.get("args").and_then(Value::as_array).is_some_and(|a| {
            a.first().and_then(Value::as_str) == Some("hook")
                && a.get(1).and_then(Value::as_str) == Some(host)
        })
}

/// The handlers of a matcher group.
fn handlers(group: &Value) -> &[Value] {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The tools after which a list may have changed (`PostToolUse`).
pub const EDIT_TOOLS: &str = "Write|Edit|MultiEdit|Bash";

fn claude_code(current: Option<&str>, program: &str, on_edit: bool) -> Result<Option<Wiring>> {
    let mut events = vec![("PreToolUse", "Agent|Task", 30), ("SubagentStart", "*", 15)];
    if on_edit {
        events.push(("PostToolUse", EDIT_TOOLS, 30));
    }
    merge_hooks(
        HostKind::ClaudeCode.path(),
        current,
        "claude-code",
        &hook_command(program),
        &events,
    )
}

/// Merges curate's hook handlers (`command`, run as `curate hook <host>`) into a hooks
/// file of Claude Code's shape (`{"hooks": {"<Event>": [{"matcher", "hooks": [handler]}]}}`):
/// one group per `(event, matcher, timeout)` appended where the event has no curate
/// handler, a curate handler running another binary moved to this one, everything else
/// kept as it is. `None`: the file already holds them.
pub fn merge_hooks(
    path: &str,
    current: Option<&str>,
    host: &str,
    command: &str,
    events: &[(&str, &str, u64)],
) -> Result<Option<Wiring>> {
    let mut root = parse_object(path, current)?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(left_alone(path, "`hooks` is not an object"));
    };
    let mut changes = Vec::new();
    for &(event, matcher, timeout) in events {
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(groups) = groups.as_array_mut() else {
            return Err(left_alone(
                path,
                &format!("`hooks.{event}` is not an array"),
            ));
        };
        let ours = groups
            .iter_mut()
            .filter_map(|g| g.get_mut("hooks").and_then(Value::as_array_mut))
            .flatten()
            .find(|h| is_handler_of(h, host));
        if let Some(h) = ours {
            // Ours, but running another binary (a bare `curate`, an older path): this one.
            if h.get("command").and_then(Value::as_str) != Some(command) {
                let before = h
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                if let Some(o) = h.as_object_mut() {
                    o.remove("args");
                    o.insert("command".to_owned(), Value::String(command.to_owned()));
                }
                changes.push(format!("~ hooks.{event}: `{before}` → `{command}`"));
            }
            continue;
        }
        groups.push(json!({
            "matcher": matcher,
            "hooks": [{"type": "command", "command": command, "timeout": timeout}],
        }));
        let unit = if host == "gemini" { "ms" } else { "s" };
        changes.push(format!(
            "+ hooks.{event}: matcher {matcher:?} → `{command}` (timeout {timeout} {unit})"
        ));
    }
    Ok((!changes.is_empty()).then(|| Wiring {
        text: pretty(&root),
        changes,
    }))
}

fn opencode(current: Option<&str>, force: bool, program: &str) -> Result<Option<Wiring>> {
    let plugin = opencode_plugin(program);
    match current {
        Some(text) if text == plugin => Ok(None),
        Some(text) if is_our_plugin(text) => Ok(Some(Wiring {
            text: plugin,
            changes: vec![format!("~ the plugin now runs {program}")],
        })),
        Some(_) if !force => Err(Error::Failed(format!(
            "{} exists and differs from curate's plugin (a hand edit, or an older curate's plugin?); not overwriting it (use --force to overwrite)",
            HostKind::Opencode.path()
        ))),
        existing => Ok(Some(Wiring {
            text: plugin,
            changes: vec![if existing.is_some() {
                "~ replaced with curate's plugin (--force)".to_owned()
            } else {
                format!(
                    "+ the plugin that passes each `task` dispatch's first message through `{program} hook opencode`"
                )
            }],
        })),
    }
}

/// curate's Copilot CLI hooks file running `program` (a failing command would deny the
/// dispatch: it exits 0 even when the binary is gone).
#[must_use]
pub fn copilot_hooks(program: &str) -> String {
    let command = format!("{} hook copilot{FAIL_OPEN}", shell_quoted(program));
    let v = json!({"version": 1, "hooks": {
        "preToolUse": [{"type": "command", "matcher": "task", "command": command, "timeoutSec": 30}],
        "subagentStart": [{"type": "command", "command": command, "timeoutSec": 15}],
    }});
    let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
    text.push('\n');
    text
}

/// The program of curate's Copilot hooks file, if `text` is one (every handler runs
/// `curate hook copilot`).
#[must_use]
pub fn copilot_program(text: &str) -> Option<String> {
    let v: Value = serde_json::from_str(text).ok()?;
    let handlers: Vec<&Value> = v["hooks"]
        .as_object()?
        .values()
        .filter_map(Value::as_array)
        .flatten()
        .collect();
    if handlers.is_empty() || !handlers.iter().all(|h| is_handler_of(h, "copilot")) {
        return None;
    }
    let command = handlers[0]["command"].as_str()?.trim();
    let command = command.strip_suffix(FAIL_OPEN).unwrap_or(command);
    Some(
        command
            .trim()
            .strip_suffix("hook copilot")?
            .trim()
            .trim_matches('\'')
            .to_owned(),
    )
}

fn copilot(current: Option<&str>, force: bool, program: &str) -> Result<Option<Wiring>> {
    let ours = copilot_hooks(program);
    match current {
        Some(text) if text == ours => Ok(None),
        Some(text) if copilot_program(text).is_some() => Ok(Some(Wiring {
            text: ours,
            changes: vec![format!("~ the hooks now run {program}")],
        })),
        Some(_) if !force => Err(Error::Failed(format!(
            "{COPILOT_PATH} exists and is not curate's (a hand edit?); not overwriting it (use --force to overwrite)"
        ))),
        existing => Ok(Some(Wiring {
            text: ours,
            changes: vec![if existing.is_some() {
                "~ replaced with curate's hooks (--force)".to_owned()
            } else {
                format!(
                    "+ preToolUse (task) and subagentStart → `{program} hook copilot`: the sub-agent's start gets the curated context"
                )
            }],
        })),
    }
}

fn mcp(current: Option<&str>, force: bool) -> Result<Option<Wiring>> {
    let path = HostKind::Mcp.path();
    let mut root = parse_object(path, current)?;
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(left_alone(path, "`mcpServers` is not an object"));
    };
    let ours = json!({"command": "curate", "args": ["mcp"]});
    let change = match servers.get("curate") {
        Some(v) if *v == ours => return Ok(None),
        Some(_) if !force => {
            return Err(Error::Failed(format!(
                "{path} already has an `mcpServers.curate` entry that differs; not changing it (use --force to replace it)"
            )));
        }
        Some(_) => "~ mcpServers.curate: replaced with `curate mcp` (--force)",
        None => "+ mcpServers.curate: `curate mcp` (stdio)",
    };
    servers.insert("curate".to_owned(), ours);
    Ok(Some(Wiring {
        text: pretty(&root),
        changes: vec![change.to_owned()],
    }))
}

/// Reads the host file under `root` (through the one admission path for curate's own
/// files), wires it, and writes it atomically inside the repository. Returns what changed
/// (empty: nothing to do).
///
/// # Errors
/// As [`wire`], plus reads and writes that fail or would leave the repository.
pub fn install(
    root: &Path,
    host: HostKind,
    force: bool,
    program: &str,
    on_edit: bool,
) -> Result<Vec<String>> {
    let path = root.join(host.path());
    let current = crate::trust::admit::read_repo_file(root, &path)?;
    let current = match current {
        None => None,
        Some(bytes) => Some(String::from_utf8(bytes).map_err(|_| Error::Invalid {
            path: host.path().into(),
            message: "is not UTF-8; curate leaves the file as it is".to_owned(),
        })?),
    };
    let Some(w) = wire(host, current.as_deref(), force, program, on_edit)? else {
        return Ok(Vec::new());
    };
    crate::util::atomic::write_bounded(
        &path,
        crate::util::atomic::Bound::Inside(root),
        w.text.as_bytes(),
    )?;
    Ok(w.changes)
}

/// The aiws OpenCode plugin, where OpenCode loads it from.
pub const AIWS_PLUGINS: [&str; 2] = [
    ".opencode/plugins/aiws-inject-context.js",
    ".opencode/plugin/aiws-inject-context.js",
];

/// Other injectors wired into the same host: one line each, naming it and how to keep
/// exactly one. (Trellis' own hooks are the workflow's injector, named apart.)
#[must_use]
pub fn conflicts(root: &Path, host: HostKind) -> Vec<String> {
    if host != HostKind::Opencode {
        return Vec::new();
    }
    AIWS_PLUGINS
        .iter()
        .filter(|p| std::fs::symlink_metadata(root.join(p)).is_ok())
        .map(|p| {
            format!(
                "{p} (the aiws plugin) also injects context into `task` dispatches. Keep exactly one injector: remove {p} (curate's plugin injects the same manifest, compiled fresh for every dispatch) or set AIWS_HOOKS=0; or keep it and remove .opencode/plugins/curate.js, running `curate compile` before each dispatch. With both, a dispatch still carries one bundle: curate's plugin runs at the sub-agent's first message, after every plugin, and stands down when the aiws plugin injected a manifest (its no-manifest fallback is replaced by curate's bundle)"
            )
        })
        .collect()
}

/// Where `init --host` found an injector other than curate (the aiws plugin, the Trellis
/// hooks and plugin), relative to the root.
#[must_use]
pub fn other_injectors(root: &Path) -> Vec<String> {
    const TRELLIS: [&str; 4] = [
        ".claude/hooks/inject-subagent-context.py",
        ".opencode/plugins/inject-subagent-context.js",
        ".cursor/hooks/inject-subagent-context.py",
        ".codex/hooks/inject-subagent-context.py",
    ];
    AIWS_PLUGINS
        .iter()
        .chain(TRELLIS.iter())
        .filter(|p| std::fs::symlink_metadata(root.join(p)).is_ok())
        .map(|p| (*p).to_owned())
        .collect()
}

/// The program a Claude Code settings value runs for curate's hook, if it holds one.
#[must_use]
pub fn claude_hook_programs(settings: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return found;
    };
    for (event, groups) in hooks {
        for g in groups.as_array().map_or(&[][..], Vec::as_slice) {
            for h in handlers(g).iter().filter(|h| is_our_handler(h)) {
                let command = h.get("command").and_then(Value::as_str).unwrap_or_default();
                let command = command.trim();
                let program = command
                    .strip_suffix(FAIL_OPEN)
                    .unwrap_or(command)
                    .trim()
                    .strip_suffix(HOOK_ARGS)
                    .unwrap_or(command)
                    .trim()
                    .trim_matches('\'')
                    .to_owned();
                found.push((event.clone(), program));
            }
        }
    }
    found
}

/// Where a host would find `program`: itself when it is a path, else the first match on
/// `PATH` (as given, or this process's).
#[must_use]
pub fn resolve_program(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            }
            #[cfg(not(unix))]
            {
                m.is_file()
            }
        })
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return runnable(&p).then_some(p);
    }
    let var = path
        .map(std::ffi::OsStr::to_owned)
        .or_else(|| std::env::var_os("PATH"))?;
    std::env::split_paths(&var)
        .map(|d| d.join(program))
        .find(|p| runnable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_file_with_a_byte_order_mark_is_named_as_such() {
        let err = parse_object(".claude/settings.json", Some("\u{feff}{}")).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains(".claude/settings.json:1:1"), "{shown}");
        assert!(shown.contains("byte-order mark"), "{shown}");
    }

    #[test]
    fn a_binary_that_may_move_is_named_for_why() {
        let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        assert_eq!(
            temporary(&temp.join("ci/target/debug/curate")),
            Some("a cargo build folder"),
            "a clone under the temporary folder is still a cargo build"
        );
        assert_eq!(temporary(&temp.join("curate")), Some("a temporary folder"));
        assert_eq!(temporary(Path::new("/usr/local/bin/curate")), None);
    }

    #[test]
    fn claude_settings_keep_foreign_entries_and_a_second_run_changes_nothing() {
        let before = r#"{
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]
  }
}"#;
        let w = wire(
            HostKind::ClaudeCode,
            Some(before),
            false,
            "/opt/bin/curate",
            false,
        )
        .unwrap()
        .unwrap();
        let v: Value = serde_json::from_str(&w.text).unwrap();
        assert_eq!(v["permissions"]["allow"][0], "Bash(ls)");
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash");
        assert_eq!(v["hooks"]["PreToolUse"][1]["matcher"], "Agent|Task");
        assert_eq!(
            v["hooks"]["SubagentStart"][0]["hooks"][0]["command"],
            "/opt/bin/curate hook claude-code || true"
        );
        assert_eq!(w.changes.len(), 2);
        assert_eq!(
            wire(
                HostKind::ClaudeCode,
                Some(&w.text),
                false,
                "/opt/bin/curate",
                false
            )
            .unwrap(),
            None
        );
        // Another binary (a bare `curate` of an older init): the entries are moved to it.
        let moved = wire(
            HostKind::ClaudeCode,
            Some(&w.text),
            false,
            "/new dir/curate",
            false,
        )
        .unwrap()
        .unwrap();
        let v: Value = serde_json::from_str(&moved.text).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
            "'/new dir/curate' hook claude-code || true"
        );
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            claude_hook_programs(&v),
            [
                ("PreToolUse".to_owned(), "/new dir/curate".to_owned()),
                ("SubagentStart".to_owned(), "/new dir/curate".to_owned())
            ]
        );
    }

    #[test]
    fn a_broken_settings_file_is_named_with_its_position_and_left_alone() {
        let e = wire(
            HostKind::ClaudeCode,
            Some("{\n  \"hooks\": [,\n}"),
            false,
            "curate",
            false,
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.contains(".claude/settings.json"), "{text}");
        assert!(text.contains("2:"), "{text}");
    }

    #[test]
    fn mcp_json_gains_one_server_and_keeps_a_different_one_without_force() {
        let w = wire(
            HostKind::Mcp,
            Some(r#"{"mcpServers": {"x": {"command": "x"}}}"#),
            false,
            "curate",
            false,
        )
        .unwrap()
        .unwrap();
        let v: Value = serde_json::from_str(&w.text).unwrap();
        assert_eq!(v["mcpServers"]["x"]["command"], "x");
        assert_eq!(v["mcpServers"]["curate"]["args"][0], "mcp");
        assert_eq!(
            wire(HostKind::Mcp, Some(&w.text), false, "curate", false).unwrap(),
            None
        );
        let mine = r#"{"mcpServers": {"curate": {"command": "/opt/curate", "args": ["mcp"]}}}"#;
        assert!(wire(HostKind::Mcp, Some(mine), false, "curate", false).is_err());
        assert!(
            wire(HostKind::Mcp, Some(mine), true, "curate", false)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn the_opencode_plugin_is_never_written_over_a_hand_edit() {
        let w = wire(HostKind::Opencode, None, false, "/opt/curate", false)
            .unwrap()
            .unwrap();
        assert!(
            w.text.contains("const CURATE = \"/opt/curate\"\n"),
            "{}",
            w.text
        );
        assert_eq!(plugin_program(&w.text).as_deref(), Some("/opt/curate"));
        assert_eq!(
            wire(
                HostKind::Opencode,
                Some(&w.text),
                false,
                "/opt/curate",
                false
            )
            .unwrap(),
            None
        );
        // curate's plugin naming another binary is moved without --force.
        assert!(is_our_plugin(OPENCODE_PLUGIN));
        // So is the plugin an earlier curate wrote (before the after-edit hook).
        let earlier = include_str!("../fixtures/hooks/opencode-plugin-earlier.js");
        assert!(is_our_plugin(earlier));
        let upgraded = wire(
            HostKind::Opencode,
            Some(earlier),
            false,
            "/opt/curate",
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(upgraded.text, w.text);
        assert!(!is_our_plugin(&earlier.replace("Fail open", "Fail")));
        assert!(
            wire(
                HostKind::Opencode,
                Some(OPENCODE_PLUGIN),
                false,
                "/opt/curate",
                false
            )
            .unwrap()
            .is_some()
        );
        assert!(
            wire(
                HostKind::Opencode,
                Some("// mine"),
                false,
                "/opt/curate",
                false
            )
            .is_err()
        );
    }

    #[test]
    fn programs_are_quoted_for_the_shell_and_found_as_the_host_would() {
        assert_eq!(shell_quoted("/usr/bin/curate"), "/usr/bin/curate");
        assert_eq!(shell_quoted("/a b/it's"), "'/a b/it'\\''s'");
        assert!(resolve_program("/no/such/curate", None).is_none());
        assert!(resolve_program("sh", Some(std::ffi::OsStr::new("/bin:/usr/bin"))).is_some());
        assert!(resolve_program("curate-nowhere", Some(std::ffi::OsStr::new("/bin"))).is_none());
    }
}
