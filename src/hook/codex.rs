//! `curate hook codex`: Codex CLI's `PreToolUse` on `spawn_agent` (multi-agent v1) and
//! `collaborationspawn_agent` (v2 reports the spawn under that name) rewrites the child's
//! first message; `SubagentStart` points the child at its manifest when the rewrite did not
//! reach it.
//!
//! Codex's input is Claude Code's shape with its own arguments: the task is
//! `tool_input.message`, or the `text` parts of `tool_input.items`; the agent type is
//! `tool_input.agent_type`, absent for Codex's `default` agent. READY answers
//! `permissionDecision: "allow"` with `updatedInput` (Codex needs both together): every
//! original field, the message replaced by the curated prompt (or the text parts by one
//! part holding it, the other parts kept in place).

use serde_json::{Value, json};

use crate::hook::{Dispatch, Prepared, Trace, prepare};
use crate::settings::WorkspaceOptions;

/// Codex's agent type when the spawn names none.
const DEFAULT_AGENT: &str = "default";

/// True for the tool names Codex reports a spawn under (`spawn_agent` in multi-agent v1,
/// `collaborationspawn_agent` in v2; a namespace glued on in front).
#[must_use]
pub fn is_spawn(tool: &str) -> bool {
    tool.ends_with("spawn_agent")
}

/// Why an input needs no more than a glance; `None`: go on.
#[must_use]
pub fn glance(v: &Value) -> Option<String> {
    match super::claude_code::event(v)? {
        "PreToolUse" => v
            .get("tool_name")
            .and_then(Value::as_str)
            .filter(|t| !is_spawn(t))
            .map(|t| format!("tool {t} is no dispatch")),
        "SubagentStart" => None,
        other => Some(format!("event {other} is not curate's")),
    }
}

/// The answer to one hook input (`None`: print nothing).
#[must_use]
pub fn answer(input: &[u8], o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    use super::claude_code::{NO_EVENT, event, folder};
    let (v, event) = match crate::hook::read_input(input, o, trace, event, NO_EVENT, folder) {
        Ok(read) => read,
        Err(answer) => return answer,
    };
    match event.as_str() {
        "PreToolUse" => pre_tool_use(&v, o, trace),
        "SubagentStart" => super::claude_code::subagent_start(&v, o, trace),
        _ => None,
    }
}

/// The task of a spawn: `message`, else the `text` parts of `items` joined by newlines.
fn task_of(input: &serde_json::Map<String, Value>) -> Result<String, String> {
    match (input.get("message"), input.get("items")) {
        (Some(Value::String(m)), _) => Ok(m.clone()),
        (Some(Value::Null) | None, Some(Value::Array(items))) => {
            let texts: Vec<&str> = items.iter().filter_map(text_of).collect();
            if texts.is_empty() {
                Err("\"tool_input.items\" holds no text".to_owned())
            } else {
                Ok(texts.join("\n"))
            }
        }
        (Some(_), _) => Err("\"tool_input.message\" is no string".to_owned()),
        _ => Err("\"tool_input\" has neither \"message\" nor \"items\"".to_owned()),
    }
}

/// The text of an `items` part of type `text`.
fn text_of(item: &Value) -> Option<&str> {
    (item.get("type").and_then(Value::as_str) == Some("text"))
        .then(|| item.get("text").and_then(Value::as_str))
        .flatten()
}

/// The spawn's arguments with the task replaced by `prompt`: `message` when the spawn had
/// one, else one text part where the first was (the others dropped, the non-text parts
/// kept in their order).
#[must_use]
pub fn rewritten(input: &serde_json::Map<String, Value>, prompt: String) -> Value {
    let mut out = input.clone();
    if let Some(Value::Array(items)) = input.get("items")
        && !input.get("message").is_some_and(Value::is_string)
    {
        let mut parts = Vec::with_capacity(items.len());
        let mut prompt = Some(prompt);
        for item in items {
            if text_of(item).is_some() {
                if let Some(p) = prompt.take() {
                    parts.push(json!({"type": "text", "text": p}));
                }
            } else {
                parts.push(item.clone());
            }
        }
        out.insert("items".to_owned(), Value::Array(parts));
    } else {
        out.insert("message".to_owned(), Value::String(prompt));
    }
    Value::Object(out)
}

fn pre_tool_use(v: &Value, o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    let tool = v.get("tool_name").and_then(Value::as_str)?;
    if !is_spawn(tool) {
        return trace.skip(&format!("tool {tool} is no dispatch"));
    }
    let bad = |what: &str| crate::hook::malformed(super::claude_code::folder(v), o, trace, what);
    let Some(input) = v.get("tool_input").and_then(Value::as_object) else {
        return bad("\"tool_input\" is no object");
    };
    let task = match task_of(input) {
        Ok(t) => t,
        Err(what) => return bad(&what),
    };
    let agent_type = match input.get("agent_type") {
        None | Some(Value::Null) => DEFAULT_AGENT,
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return bad("\"tool_input.agent_type\" is no string"),
    };
    let session = v.get("session_id").and_then(Value::as_str);
    let d = Dispatch {
        cwd: super::claude_code::folder(v).map(Into::into),
        session,
        agent_type: Some(agent_type),
        prompt: &task,
    };
    match prepare(&d, o, trace)? {
        Prepared::Ready {
            prompt,
            root,
            crumb,
        } => {
            if session.is_some() {
                // Best effort: without it the child still has its message.
                let _ = crate::state::leave_breadcrumb(&root, crumb);
            }
            Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "updatedInput": rewritten(input, prompt),
                }
            }))
        }
        Prepared::NotReady {
            status,
            report,
            deny,
        } => Some(super::claude_code::not_ready(status, &report, deny)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spawn_is_known_by_both_of_codexs_names() {
        assert!(is_spawn("spawn_agent"));
        assert!(is_spawn("collaborationspawn_agent"));
        assert!(!is_spawn("multi_agent_v1wait_agent"));
        assert!(!is_spawn("shell"));
    }

    #[test]
    fn items_keep_their_other_parts_and_get_one_text_part() {
        let input = json!({
            "items": [
                {"type": "mention", "name": "x"},
                {"type": "text", "text": "change: demo"},
                {"type": "local_image", "path": "a.png"},
                {"type": "text", "text": "Do it."},
            ],
            "fork_context": false,
        });
        let input = input.as_object().unwrap();
        assert_eq!(task_of(input).unwrap(), "change: demo\nDo it.");
        let out = rewritten(input, "P".to_owned());
        assert_eq!(
            out,
            json!({
                "items": [
                    {"type": "mention", "name": "x"},
                    {"type": "text", "text": "P"},
                    {"type": "local_image", "path": "a.png"},
                ],
                "fork_context": false,
            })
        );
        let msg = json!({"message": "m", "agent_type": "worker", "task_name": "t"});
        assert_eq!(
            rewritten(msg.as_object().unwrap(), "P".to_owned()),
            json!({"message": "P", "agent_type": "worker", "task_name": "t"})
        );
        assert!(task_of(json!({"items": []}).as_object().unwrap()).is_err());
        assert!(task_of(json!({"message": 3}).as_object().unwrap()).is_err());
    }
}
