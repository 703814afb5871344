//! `curate hook opencode`: the answer to the shim that `curate init --host opencode` writes
//! to `.opencode/plugins/curate.js`. Input: `{tool, sessionID, callID, directory, args}` of
//! OpenCode's `tool.execute.before`; output `{"prompt": P}` (the shim writes it into
//! `output.args.prompt` in place) or `{}`. After an edit the shim sends `{event: "edit",
//! tool, directory, args}` (`args` holding `filePath`, `command` or `patchText`); the answer
//! is `{"context": C}` (the shim adds it to the tool's result, for the lead) or `{}`.

use serde_json::{Value, json};

use crate::hook::edit::Edit;
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
    let Ok(v) = serde_json::from_slice::<Value>(input) else {
        let cwd = crate::hook::first_field(input, "directory");
        return crate::hook::malformed(cwd.as_deref(), o, trace, "not one JSON object");
    };
    let bad = |what: &str| crate::hook::malformed(folder(&v), o, trace, what);
    let event = event(&v);
    trace.note(|t| t.event = Some(event.to_owned()));
    if event == "edit" {
        return after_edit(&v, o, trace);
    }
    if !v
        .get("tool")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("task"))
    {
        return None;
    }
    let (prompt, agent_type) = match crate::hook::prompt_and_agent(&v, "args") {
        Ok(found) => found,
        Err(what) => return bad(&what),
    };
    if folder(&v).is_some_and(|c| std::path::Path::new(c).is_file()) {
        return bad("\"directory\" is no folder");
    }
    let d = Dispatch {
        cwd: folder(&v).map(Into::into),
        session: v.get("sessionID").and_then(Value::as_str),
        agent_type,
        prompt,
    };
    match prepare(&d, o, trace)? {
        Prepared::Ready { prompt, .. } => Some(json!({ "prompt": prompt })),
        Prepared::NotReady { .. } => None,
    }
}

/// After an edit: the lists it touched are compiled ([`crate::hook::edit`]).
fn after_edit(v: &Value, o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    let args = v.get("args")?;
    let arg = |k: &str| args.get(k).and_then(Value::as_str);
    let edit = match v.get("tool").and_then(Value::as_str)? {
        "write" | "edit" | "multiedit" => Edit::File(arg("filePath")?),
        "bash" => Edit::Command(arg("command")?),
        // A patch names its files in its text, as a command names its paths.
        "apply_patch" | "patch" => Edit::Command(arg("patchText")?),
        tool => return trace.skip(&format!("tool {tool} edits no list")),
    };
    let cwd = folder(v).map(std::path::Path::new);
    let context = crate::hook::edit::after_edit(cwd, edit, o, trace)?;
    Some(json!({ "context": context }))
}
