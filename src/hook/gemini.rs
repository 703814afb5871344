//! `curate hook gemini`: Gemini CLI's `BeforeTool` on `invoke_agent` (`{agent_name,
//! prompt}`), as `curate init --host gemini` writes it into `.gemini/settings.json`.
//!
//! Gemini merges a hook's `hookSpecificOutput.tool_input` over the model's arguments and
//! runs the sub-agent on the result, while the lead's history keeps its call as written
//! (observed with Gemini CLI 0.61.0): READY answers the arguments with `prompt` = the
//! curated prompt. Not ready: nothing, or with `on_not_ready = "deny"` a denial and its
//! reason. Gemini has no event at a sub-agent's start.

use serde_json::{Value, json};

use crate::hook::{Dispatch, Prepared, Trace, prepare};
use crate::settings::WorkspaceOptions;

/// Gemini's dispatch tool.
pub const DISPATCH_TOOL: &str = "invoke_agent";

/// Why an input needs no more than a glance; `None`: go on.
#[must_use]
pub fn glance(v: &Value) -> Option<String> {
    match super::claude_code::event(v)? {
        "BeforeTool" => v
            .get("tool_name")
            .and_then(Value::as_str)
            .filter(|t| *t != DISPATCH_TOOL)
            .map(|t| format!("tool {t} is no dispatch")),
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
    let bad = |what: &str| crate::hook::malformed(folder(&v), o, trace, what);
    if event != "BeforeTool" {
        return None;
    }
    let tool = v.get("tool_name").and_then(Value::as_str)?;
    if tool != DISPATCH_TOOL {
        return trace.skip(&format!("tool {tool} is no dispatch"));
    }
    let (prompt, agent) =
        match crate::hook::prompt_and_agent_at(&v, "tool_input", "prompt", "agent_name") {
            Ok(found) => found,
            Err(what) => return bad(&what),
        };
    let d = Dispatch {
        cwd: folder(&v).map(Into::into),
        session: v.get("session_id").and_then(Value::as_str),
        agent_type: agent,
        prompt,
    };
    match prepare(&d, o, trace)? {
        Prepared::Ready { prompt, .. } => {
            let mut updated = v["tool_input"].as_object().cloned().unwrap_or_default();
            updated.insert("prompt".to_owned(), Value::String(prompt));
            Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "BeforeTool",
                    "tool_input": Value::Object(updated),
                }
            }))
        }
        Prepared::NotReady {
            status,
            report,
            deny: true,
        } => Some(json!({
            "decision": "deny",
            "reason": format!(
                "curate: the curated context for this dispatch is {}; the sub-agent would start without it.\n{report}",
                status.name()
            ),
        })),
        Prepared::NotReady { .. } => None,
    }
}
