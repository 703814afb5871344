//! `curate hook opencode`: the answer to the shim that `curate init --host opencode` writes
//! to `.opencode/plugins/curate.js`. Input: `{tool, sessionID, callID, directory, args}` of
//! OpenCode's `tool.execute.before`; output `{"prompt": P}` (the shim writes it into
//! `output.args.prompt` in place) or `{}`.

use serde_json::{Value, json};

use crate::hook::{Dispatch, Prepared, Trace, prepare};
use crate::settings::WorkspaceOptions;

/// The input's event (`event`; the shim's calls are `task` when it names none).
pub fn event(v: &Value) -> &str {
    v.get("event").and_then(Value::as_str).unwrap_or("task")
}

/// The folder OpenCode runs in (`directory`).
pub fn folder(v: &Value) -> Option<&str> {
    v.get("directory").and_then(Value::as_str)
}

/// The answer to one input (`None`: the shim receives `{}`).
#[must_use]
pub fn answer(input: &[u8], o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    let v: Value = serde_json::from_slice(input).ok()?;
    let event = event(&v);
    trace.note(|t| t.event = Some(event.to_owned()));
    if !v
        .get("tool")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("task"))
    {
        return None;
    }
    let args = v.get("args")?.as_object()?;
    let d = Dispatch {
        cwd: folder(&v).map(Into::into),
        session: v.get("sessionID").and_then(Value::as_str),
        agent_type: args.get("subagent_type").and_then(Value::as_str),
        prompt: args.get("prompt")?.as_str()?,
    };
    match prepare(&d, o, trace)? {
        Prepared::Ready { prompt, .. } => Some(json!({ "prompt": prompt })),
        Prepared::NotReady { .. } => None,
    }
}
