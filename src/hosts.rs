//! A host's wiring, as `curate init --host` writes it: the two hook entries merged into
//! `.claude/settings.json`, the OpenCode plugin `.opencode/plugins/curate.js`, and the MCP
//! server entry merged into `.mcp.json`.
//!
//! Merging keeps every foreign entry and key order; curate recognises its own entries by
//! their command, so a second run changes nothing. A file curate cannot parse is never
//! overwritten: the error names its line and column.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::util::jsonpos;

/// A host `curate init --host` wires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HostKind {
    /// `.claude/settings.json`: `PreToolUse` (`Agent|Task`) and `SubagentStart` hooks.
    ClaudeCode,
    /// `.opencode/plugins/curate.js`: the plugin that forwards `task` dispatches.
    Opencode,
    /// `.mcp.json`: the `curate mcp` server.
    Mcp,
}

/// The OpenCode plugin, as written.
pub const OPENCODE_PLUGIN: &str = include_str!("../hosts/opencode/curate.js");

/// The command the Claude Code hook entries run.
pub const HOOK_COMMAND: &str = "curate hook claude-code";

impl HostKind {
    /// The file this host's wiring lives in, relative to the repository root.
    #[must_use]
    pub fn path(self) -> &'static str {
        match self {
            HostKind::ClaudeCode => ".claude/settings.json",
            HostKind::Opencode => ".opencode/plugins/curate.js",
            HostKind::Mcp => ".mcp.json",
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

/// The wiring of `host` given the file's current text (`None`: no file).
///
/// # Errors
/// The file is not a JSON object (with its line and column), or (OpenCode, MCP) holds a
/// different curate entry and `force` is not set.
pub fn wire(host: HostKind, current: Option<&str>, force: bool) -> Result<Option<Wiring>> {
    match host {
        HostKind::ClaudeCode => claude_code(current),
        HostKind::Opencode => opencode(current, force),
        HostKind::Mcp => mcp(current, force),
    }
}

fn parse_object(path: &str, text: Option<&str>) -> Result<Map<String, Value>> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(left_alone(path, "not a JSON object")),
        Err(e) => Err(Error::Syntax {
            path: path.into(),
            pos: jsonpos::json_pos(&e),
            message: format!(
                "invalid JSON: {}; curate leaves the file as it is",
                jsonpos::json_message(&e)
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

/// True when a matcher group holds a handler running `curate hook claude-code`.
fn is_ours(group: &Value) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hooks| {
            hooks.iter().any(|h| {
                h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| c.trim_start().starts_with(HOOK_COMMAND))
                    || (h.get("command").and_then(Value::as_str) == Some("curate")
                        && h.get("args").and_then(Value::as_array).is_some_and(|a| {
                            a.first().and_then(Value::as_str) == Some("hook")
                                && a.get(1).and_then(Value::as_str) == Some("claude-code")
                        }))
            })
        })
}

fn claude_code(current: Option<&str>) -> Result<Option<Wiring>> {
    let path = HostKind::ClaudeCode.path();
    let mut root = parse_object(path, current)?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(left_alone(path, "`hooks` is not an object"));
    };
    let mut changes = Vec::new();
    for (event, matcher, timeout) in [("PreToolUse", "Agent|Task", 30), ("SubagentStart", "*", 15)]
    {
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(groups) = groups.as_array_mut() else {
            return Err(left_alone(
                path,
                &format!("`hooks.{event}` is not an array"),
            ));
        };
        if groups.iter().any(is_ours) {
            continue;
        }
        groups.push(json!({
            "matcher": matcher,
            "hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": timeout}],
        }));
        changes.push(format!(
            "+ hooks.{event}: matcher {matcher:?} → `{HOOK_COMMAND}` (timeout {timeout} s)"
        ));
    }
    Ok((!changes.is_empty()).then(|| Wiring {
        text: pretty(&root),
        changes,
    }))
}

fn opencode(current: Option<&str>, force: bool) -> Result<Option<Wiring>> {
    match current {
        Some(text) if text == OPENCODE_PLUGIN => Ok(None),
        Some(_) if !force => Err(Error::Failed(format!(
            "{} exists and differs from curate's plugin (a hand edit?); not overwriting it (use --force to overwrite)",
            HostKind::Opencode.path()
        ))),
        existing => Ok(Some(Wiring {
            text: OPENCODE_PLUGIN.to_owned(),
            changes: vec![if existing.is_some() {
                "~ replaced with curate's plugin (--force)".to_owned()
            } else {
                "+ the plugin that passes `task` dispatches through `curate hook opencode`"
                    .to_owned()
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
pub fn install(root: &Path, host: HostKind, force: bool) -> Result<Vec<String>> {
    let path = root.join(host.path());
    let current = crate::compile::admit::read_repo_file(root, &path)?;
    let current = match current {
        None => None,
        Some(bytes) => Some(String::from_utf8(bytes).map_err(|_| Error::Invalid {
            path: host.path().into(),
            message: "is not UTF-8; curate leaves the file as it is".to_owned(),
        })?),
    };
    let Some(w) = wire(host, current.as_deref(), force)? else {
        return Ok(Vec::new());
    };
    crate::util::atomic::write_bounded(
        &path,
        crate::util::atomic::Bound::Inside(root),
        w.text.as_bytes(),
    )?;
    Ok(w.changes)
}

/// Other injectors wired into the same host, which would inject a dispatch a second time
/// (the aiws OpenCode plugin does not look for an earlier injection): one warning each.
#[must_use]
pub fn conflicts(root: &Path, host: HostKind) -> Vec<String> {
    const AIWS_PLUGINS: [&str; 2] = [
        ".opencode/plugins/aiws-inject-context.js",
        ".opencode/plugin/aiws-inject-context.js",
    ];
    if host != HostKind::Opencode {
        return Vec::new();
    }
    AIWS_PLUGINS
        .iter()
        .filter(|p| std::fs::symlink_metadata(root.join(p)).is_ok())
        .map(|p| {
            format!(
                "{p} also injects context into every `task` dispatch: with both plugins a dispatch gets its context twice; remove one of them (or set AIWS_HOOKS=0 for the aiws plugin)"
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_settings_keep_foreign_entries_and_a_second_run_changes_nothing() {
        let before = r#"{
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]
  }
}"#;
        let w = wire(HostKind::ClaudeCode, Some(before), false)
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&w.text).unwrap();
        assert_eq!(v["permissions"]["allow"][0], "Bash(ls)");
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash");
        assert_eq!(v["hooks"]["PreToolUse"][1]["matcher"], "Agent|Task");
        assert_eq!(
            v["hooks"]["SubagentStart"][0]["hooks"][0]["command"],
            HOOK_COMMAND
        );
        assert_eq!(w.changes.len(), 2);
        assert_eq!(
            wire(HostKind::ClaudeCode, Some(&w.text), false).unwrap(),
            None
        );
    }

    #[test]
    fn a_broken_settings_file_is_named_with_its_position_and_left_alone() {
        let e = wire(HostKind::ClaudeCode, Some("{\n  \"hooks\": [,\n}"), false).unwrap_err();
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
        )
        .unwrap()
        .unwrap();
        let v: Value = serde_json::from_str(&w.text).unwrap();
        assert_eq!(v["mcpServers"]["x"]["command"], "x");
        assert_eq!(v["mcpServers"]["curate"]["args"][0], "mcp");
        assert_eq!(wire(HostKind::Mcp, Some(&w.text), false).unwrap(), None);
        let mine = r#"{"mcpServers": {"curate": {"command": "/opt/curate", "args": ["mcp"]}}}"#;
        assert!(wire(HostKind::Mcp, Some(mine), false).is_err());
        assert!(wire(HostKind::Mcp, Some(mine), true).unwrap().is_some());
    }

    #[test]
    fn the_opencode_plugin_is_never_written_over_a_hand_edit() {
        assert!(wire(HostKind::Opencode, None, false).unwrap().is_some());
        assert_eq!(
            wire(HostKind::Opencode, Some(OPENCODE_PLUGIN), false).unwrap(),
            None
        );
        assert!(wire(HostKind::Opencode, Some("// mine"), false).is_err());
    }
}
