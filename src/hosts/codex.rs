//! Codex CLI's wiring: the hook entries of `.codex/hooks.json`, the MCP server of
//! `.codex/config.toml`, and what Codex needs before it runs them: the project trusted and
//! each hook approved in the user's `config.toml` (`$CODEX_HOME`, default `~/.codex/`).
//!
//! An approval is `hooks.state."<key>".trusted_hash` there, `<key>` =
//! `<hooks file>:<event label>:<group index>:<handler index>` and the hash = `sha256:` and
//! the hex SHA-256 of the hook's identity as compact JSON with sorted keys: `event_name`,
//! `matcher` (as written, when there is one) and `hooks` = the one handler (`type`,
//! `command` as written, `timeout` in seconds (600 when unset, at least 1), `async`,
//! `statusMessage` when set). An edit of the entry (its place, command, matcher, timeout)
//! changes the key or the hash, and Codex then skips the hook without a word. curate
//! recomputes both to report each hook's state; it never writes an approval.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::hosts::Wiring;

/// The project's hooks file.
pub const HOOKS_PATH: &str = ".codex/hooks.json";

/// The project's Codex configuration (MCP servers).
pub const CONFIG_PATH: &str = ".codex/config.toml";

/// The matcher of the spawn: multi-agent v1 reports `spawn_agent`, v2
/// `collaborationspawn_agent` (an `Agent` matcher misses the second).
pub const SPAWN_MATCHER: &str = "spawn_agent|collaborationspawn_agent";

/// curate's entries: event, its label in an approval key, matcher, timeout (s).
pub const ENTRIES: [(&str, &str, &str, u64); 2] = [
    ("PreToolUse", "pre_tool_use", SPAWN_MATCHER, 30),
    ("SubagentStart", "subagent_start", "*", 15),
];

/// The hook command running `program`.
#[must_use]
pub fn hook_command(program: &str) -> String {
    format!("{} hook codex", super::shell_quoted(program))
}

/// `.codex/hooks.json` with curate's two entries merged in (foreign entries kept); `None`:
/// it holds them already.
///
/// # Errors
/// The file is not a JSON object of hooks (with its line and column).
pub fn wire_hooks(current: Option<&str>, program: &str) -> Result<Option<Wiring>> {
    let events: Vec<(&str, &str, u64)> = ENTRIES.iter().map(|e| (e.0, e.2, e.3)).collect();
    super::merge_hooks(
        HOOKS_PATH,
        current,
        "codex",
        &hook_command(program),
        &events,
    )
}

/// The label of an event in an approval key (`PreToolUse` → `pre_tool_use`).
#[must_use]
pub fn event_label(event: &str) -> Option<&'static str> {
    Some(match event {
        "PreToolUse" => "pre_tool_use",
        "PermissionRequest" => "permission_request",
        "PostToolUse" => "post_tool_use",
        "PreCompact" => "pre_compact",
        "PostCompact" => "post_compact",
        "SessionStart" => "session_start",
        "UserPromptSubmit" => "user_prompt_submit",
        "SubagentStart" => "subagent_start",
        "SubagentStop" => "subagent_stop",
        "Stop" => "stop",
        _ => return None,
    })
}

/// The approval hash of one command handler of a group (`matcher` as the group writes it).
#[must_use]
pub fn approval_hash(label: &str, matcher: Option<&str>, handler: &Value) -> String {
    let timeout = handler
        .get("timeout")
        .or_else(|| handler.get("timeoutSec"))
        .and_then(Value::as_u64)
        .unwrap_or(600)
        .max(1);
    let mut h = Map::new();
    h.insert(
        "async".to_owned(),
        Value::Bool(
            handler
                .get("async")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
    );
    h.insert(
        "command".to_owned(),
        handler.get("command").cloned().unwrap_or(Value::Null),
    );
    for optional in ["statusMessage", "additionalContextLimit"] {
        if let Some(v) = handler.get(optional).filter(|v| !v.is_null()) {
            h.insert(optional.to_owned(), v.clone());
        }
    }
    h.insert("timeout".to_owned(), json!(timeout));
    h.insert("type".to_owned(), json!("command"));
    let mut identity = Map::new();
    identity.insert("event_name".to_owned(), json!(label));
    identity.insert("hooks".to_owned(), json!([Value::Object(h)]));
    if let Some(m) = matcher {
        identity.insert("matcher".to_owned(), json!(m));
    }
    let text = serde_json::to_string(&sorted(Value::Object(identity))).unwrap_or_default();
    format!("sha256:{}", crate::util::digest::hex(text.as_bytes()))
}

/// `v` with every object's keys in byte order.
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut pairs: Vec<(String, Value)> = m.into_iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(pairs.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// Whether Codex runs one of curate's hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Its `trusted_hash` is its hash.
    Approved,
    /// A `trusted_hash` is stored for its key but differs: an edit un-approved it.
    Modified,
    /// No approval for its key.
    Unapproved,
    /// `enabled = false` for its key.
    Disabled,
}

/// One of curate's handlers in a hooks file, and its approval.
#[derive(Debug, Clone)]
pub struct Hook {
    pub event: String,
    pub key: String,
    pub hash: String,
    pub approval: Approval,
}

/// Whether Codex reads the project's `.codex/` at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    Trusted,
    /// `trust_level = "untrusted"` (the user said no).
    Untrusted,
    /// No entry for the project or a folder above it.
    Unknown,
}

/// Codex's home: `CODEX_HOME`, else `~/.codex`.
#[must_use]
pub fn home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")))
}

/// The user's Codex configuration (`<home>/config.toml`), parsed; `Ok(None)`: none.
///
/// # Errors
/// It cannot be read, or is no TOML (its line and column).
pub fn user_config(home: &Path) -> Result<Option<toml::Table>> {
    let path = home.join("config.toml");
    let Some(bytes) = crate::trust::admit::read_host_config(&path)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    text.parse::<toml::Table>()
        .map(Some)
        .map_err(|e| Error::Invalid {
            path: path.clone(),
            message: format!("is no TOML ({}): Codex cannot read it either", e.message()),
        })
}

/// The project's trust in the user's configuration: its own entry, else the nearest folder
/// above it that has one.
#[must_use]
pub fn trust(config: Option<&toml::Table>, root: &Path) -> Trust {
    let Some(projects) = config
        .and_then(|c| c.get("projects"))
        .and_then(toml::Value::as_table)
    else {
        return Trust::Unknown;
    };
    for dir in root.ancestors() {
        let level = projects
            .get(dir.to_string_lossy().as_ref())
            .and_then(|p| p.get("trust_level"))
            .and_then(toml::Value::as_str);
        match level {
            Some("trusted") => return Trust::Trusted,
            Some("untrusted") => return Trust::Untrusted,
            _ => {}
        }
    }
    Trust::Unknown
}

/// curate's handlers in a hooks file (`hooks`: its parsed JSON; `source`: its absolute path
/// as Codex names it) with their approval in the user's configuration.
#[must_use]
pub fn hooks(source: &Path, hooks: &Value, config: Option<&toml::Table>) -> Vec<Hook> {
    let state = config
        .and_then(|c| c.get("hooks"))
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table);
    let mut found = Vec::new();
    let Some(events) = hooks.get("hooks").and_then(Value::as_object) else {
        return found;
    };
    for (event, groups) in events {
        let Some(label) = event_label(event) else {
            continue;
        };
        for (g, group) in groups
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .enumerate()
        {
            let matcher = group.get("matcher").and_then(Value::as_str);
            for (h, handler) in super::handlers(group).iter().enumerate() {
                if !super::is_handler_of(handler, "codex") {
                    continue;
                }
                let key = format!("{}:{label}:{g}:{h}", source.display());
                let hash = approval_hash(label, matcher, handler);
                let entry = state.and_then(|s| s.get(&key));
                let enabled = entry
                    .and_then(|e| e.get("enabled"))
                    .and_then(toml::Value::as_bool);
                let stored = entry
                    .and_then(|e| e.get("trusted_hash"))
                    .and_then(toml::Value::as_str);
                let approval = match (enabled, stored) {
                    (Some(false), _) => Approval::Disabled,
                    (_, Some(s)) if s == hash => Approval::Approved,
                    (_, Some(_)) => Approval::Modified,
                    (_, None) => Approval::Unapproved,
                };
                found.push(Hook {
                    event: event.clone(),
                    key,
                    hash,
                    approval,
                });
            }
        }
    }
    found
}

/// The lines of the user's `config.toml` that approve `hooks` (what Codex's hooks review
/// writes), for the user to add by hand.
#[must_use]
pub fn approval_lines(hooks: &[Hook]) -> String {
    let mut text = String::new();
    for h in hooks {
        let key = serde_json::to_string(&h.key).unwrap_or_default();
        text.push_str(&format!(
            "[hooks.state.{key}]\nenabled = true\ntrusted_hash = \"{}\"\n",
            h.hash
        ));
    }
    text
}

/// The project's `.codex/config.toml` with `[mcp_servers.curate]` (`curate mcp`) merged in,
/// every other line kept as written; `None`: it has it already.
///
/// # Errors
/// The file is no TOML (its line and column), or holds a different curate server and
/// `force` is not set.
pub fn wire_mcp(current: Option<&str>, force: bool) -> Result<Option<Wiring>> {
    let mut doc = current
        .unwrap_or_default()
        .parse::<toml_edit::DocumentMut>()
        .map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            Error::Syntax {
                path: CONFIG_PATH.into(),
                pos: crate::util::jsonpos::position_of(current.unwrap_or_default(), at).into(),
                message: format!(
                    "invalid TOML: {}; curate leaves the file as it is",
                    e.message().trim()
                ),
            }
        })?;
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        toml_edit::Item::Table(t)
    });
    let Some(servers) = servers.as_table_like_mut() else {
        return Err(Error::Invalid {
            path: CONFIG_PATH.into(),
            message: "`mcp_servers` is not a table; curate leaves the file as it is".to_owned(),
        });
    };
    let ours = |t: &dyn toml_edit::TableLike| {
        t.get("command").and_then(toml_edit::Item::as_str) == Some("curate")
            && t.get("args")
                .and_then(toml_edit::Item::as_array)
                .is_some_and(|a| a.len() == 1 && a.get(0).and_then(|v| v.as_str()) == Some("mcp"))
    };
    let change = match servers
        .get("curate")
        .and_then(toml_edit::Item::as_table_like)
    {
        Some(t) if ours(t) => return Ok(None),
        Some(_) if !force => {
            return Err(Error::Failed(format!(
                "{CONFIG_PATH} already has an `mcp_servers.curate` entry that differs; not changing it (use --force to replace it)"
            )));
        }
        Some(_) => "~ mcp_servers.curate: replaced with `curate mcp` (--force)",
        None => "+ mcp_servers.curate: `curate mcp` (stdio)",
    };
    let mut table = toml_edit::Table::new();
    table.insert("command", toml_edit::value("curate"));
    let mut args = toml_edit::Array::new();
    args.push("mcp");
    table.insert("args", toml_edit::value(args));
    servers.insert("curate", toml_edit::Item::Table(table));
    Ok(Some(Wiring {
        text: doc.to_string(),
        changes: vec![change.to_owned()],
    }))
}

/// Merges `[mcp_servers.curate]` into the project's `.codex/config.toml` (read and written
/// inside the repository only). Returns what changed (empty: nothing).
///
/// # Errors
/// As [`wire_mcp`], plus reads and writes that fail or would leave the repository.
pub fn install_mcp(root: &Path, force: bool) -> Result<Vec<String>> {
    let path = root.join(CONFIG_PATH);
    let current = match crate::trust::admit::read_repo_file(root, &path)? {
        None => None,
        Some(bytes) => Some(String::from_utf8(bytes).map_err(|_| Error::Invalid {
            path: CONFIG_PATH.into(),
            message: "is not UTF-8; curate leaves the file as it is".to_owned(),
        })?),
    };
    let Some(w) = wire_mcp(current.as_deref(), force)? else {
        return Ok(Vec::new());
    };
    crate::util::atomic::write_bounded(
        &path,
        crate::util::atomic::Bound::Inside(root),
        w.text.as_bytes(),
    )?;
    Ok(w.changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_hashes_are_codexs_own() {
        // The vectors computed for curate's entries and accepted by Codex 0.171.0.
        let pre = json!({"type": "command", "command": "curate hook codex", "timeout": 30});
        assert_eq!(
            approval_hash("pre_tool_use", Some(SPAWN_MATCHER), &pre),
            "sha256:41dfa16770eafc9dd86636e8ad2c111d2723ec8076e186e7532f3fb2ea1f4891"
        );
        let start = json!({"type": "command", "command": "curate hook codex", "timeout": 15});
        assert_eq!(
            approval_hash("subagent_start", Some("*"), &start),
            "sha256:e34df95217adc76e474f9c931a7dc285a82762c900fe71ecfa333e1c0183c6a6"
        );
        // The field order as written does not count; the timeout's default does.
        let reordered = json!({"timeout": 15, "command": "curate hook codex", "type": "command"});
        assert_eq!(
            approval_hash("subagent_start", Some("*"), &reordered),
            approval_hash("subagent_start", Some("*"), &start)
        );
        let longer = json!({"type": "command", "command": "curate hook codex", "timeout": 16});
        assert_ne!(
            approval_hash("subagent_start", Some("*"), &longer),
            approval_hash("subagent_start", Some("*"), &start)
        );
    }

    #[test]
    fn an_edited_entry_is_modified_and_an_approved_one_approved() {
        let hooks_json: Value =
            serde_json::from_str(&wire_hooks(None, "curate").unwrap().unwrap().text).unwrap();
        let source = Path::new("/r/.codex/hooks.json");
        let none = hooks(source, &hooks_json, None);
        assert_eq!(none.len(), 2);
        assert!(none.iter().all(|h| h.approval == Approval::Unapproved));
        assert_eq!(none[0].key, "/r/.codex/hooks.json:pre_tool_use:0:0");
        let approved: toml::Table = approval_lines(&none).parse().unwrap();
        let all = hooks(source, &hooks_json, Some(&approved));
        assert!(
            all.iter().all(|h| h.approval == Approval::Approved),
            "{all:?}"
        );
        let mut edited = hooks_json.clone();
        edited["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = json!(60);
        let after = hooks(source, &edited, Some(&approved));
        assert_eq!(after[0].approval, Approval::Modified);
        assert_eq!(after[1].approval, Approval::Approved);
    }

    #[test]
    fn trust_is_the_projects_or_a_folders_above_it() {
        let config: toml::Table = "[projects.\"/a\"]\ntrust_level = \"trusted\"\n[projects.\"/a/b\"]\ntrust_level = \"untrusted\"\n"
            .parse()
            .unwrap();
        assert_eq!(trust(Some(&config), Path::new("/a/c")), Trust::Trusted);
        assert_eq!(trust(Some(&config), Path::new("/a/b/c")), Trust::Untrusted);
        assert_eq!(trust(Some(&config), Path::new("/z")), Trust::Unknown);
        assert_eq!(trust(None, Path::new("/a")), Trust::Unknown);
    }

    #[test]
    fn the_mcp_server_is_merged_keeping_the_file_as_written() {
        let before =
            "# mine\nmodel = \"o3\"  # a comment\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let w = wire_mcp(Some(before), false).unwrap().unwrap();
        assert!(w.text.starts_with(before), "{}", w.text);
        assert!(
            w.text
                .contains("[mcp_servers.curate]\ncommand = \"curate\"\nargs = [\"mcp\"]\n"),
            "{}",
            w.text
        );
        assert_eq!(wire_mcp(Some(&w.text), false).unwrap(), None);
        let theirs = "[mcp_servers.curate]\ncommand = \"/opt/curate\"\nargs = [\"mcp\"]\n";
        assert!(wire_mcp(Some(theirs), false).is_err());
        assert!(wire_mcp(Some(theirs), true).unwrap().is_some());
        let broken = wire_mcp(Some("a = \n"), false).unwrap_err().to_string();
        assert!(broken.contains(".codex/config.toml:1:"), "{broken}");
    }
}
