//! `curate hook claude-code`: `PreToolUse` on `Agent`/`Task` rewrites the dispatch prompt;
//! `SubagentStart` points the sub-agent at its manifest when the host dropped the rewrite;
//! `PostToolUse` compiles a workflow's list right after the lead edits it.

use serde_json::{Value, json};

use crate::hook::edit::Edit;
use crate::hook::{Dispatch, Prepared, Trace, normalize_role, prepare};
use crate::settings::WorkspaceOptions;

/// The most characters of a `SubagentStart` answer.
const START_CONTEXT_MAX: usize = 4_000;

/// The answer to one hook input (`None`: print nothing).
#[must_use]
pub fn answer(input: &[u8], o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    let (v, event) = match crate::hook::read_input(input, o, trace, event, NO_EVENT, folder) {
        Ok(read) => read,
        Err(answer) => return answer,
    };
    match event.as_str() {
        "PreToolUse" => pre_tool_use(&v, o, trace),
        "SubagentStart" => subagent_start(&v, o, trace),
        "PostToolUse" => post_tool_use(&v, o, trace),
        _ => None,
    }
}

/// The input's event (`hook_event_name`; VS Code's agent may spell it `hookEventName`).
/// What is said of an input with no event.
pub const NO_EVENT: &str = "no \"hook_event_name\" string";

/// The input's event (`hook_event_name`, or VS Code's `hookEventName`).
pub fn event(v: &Value) -> Option<&str> {
    str_field(v, "hook_event_name").or_else(|| str_field(v, "hookEventName"))
}

/// The tools that dispatch a sub-agent: Claude Code's `Agent` (`Task` before), VS Code's
/// `runSubagent` (its agent runs the entries of `.claude/settings.json` on every tool call,
/// matchers ignored).
const DISPATCH_TOOLS: [&str; 3] = ["Agent", "Task", "runSubagent"];

/// The tools after which a list may have changed.
const EDIT_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "Bash"];

/// Why an input is not worth more than this glance (a tool call that is no dispatch and
/// edits no list, an event curate does not answer), decided from the input alone before
/// anything else: VS Code's agent runs this hook on every one of its tool calls. `None`:
/// go on (malformed input included, to be logged as such).
#[must_use]
pub fn glance(v: &Value) -> Option<String> {
    let tool = str_field(v, "tool_name").or_else(|| str_field(v, "toolName"));
    match event(v)? {
        "PreToolUse" => tool
            .filter(|t| !DISPATCH_TOOLS.contains(t))
            .map(|t| format!("tool {t} is no dispatch")),
        "PostToolUse" => tool
            .filter(|t| !EDIT_TOOLS.contains(t))
            .map(|t| format!("tool {t} edits no list")),
        "SubagentStart" => None,
        other => Some(format!("event {other} is not curate's")),
    }
}

/// The session (`session_id`; VS Code's agent may spell it `sessionId`).
fn session_of(v: &Value) -> Option<&str> {
    str_field(v, "session_id").or_else(|| str_field(v, "sessionId"))
}

/// The folder the host runs in (`cwd`).
pub fn folder(v: &Value) -> Option<&str> {
    str_field(v, "cwd")
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn pre_tool_use(v: &Value, o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    let tool = str_field(v, "tool_name")?;
    if !DISPATCH_TOOLS.contains(&tool) {
        return trace.skip(&format!("tool {tool} is no dispatch"));
    }
    let bad = |what: &str| crate::hook::malformed(folder(v), o, trace, what);
    // VS Code's `runSubagent` names its agent `agentName`; Copilot CLI, running this
    // entry of `.claude/settings.json` for its `task` tool (reported as `Agent`), names it
    // `agent_type`, where Claude Code says `subagent_type`.
    let input = v.get("tool_input");
    let copilot =
        input.is_some_and(|i| i.get("agent_type").is_some() && i.get("subagent_type").is_none());
    let agent_key = if tool == "runSubagent" {
        "agentName"
    } else if copilot {
        "agent_type"
    } else {
        "subagent_type"
    };
    if copilot
        && let Some(ws) = crate::hook::workspace(folder(v).map(std::path::Path::new), o)
        && std::fs::symlink_metadata(ws.root.join(crate::hosts::COPILOT_PATH)).is_ok()
    {
        // Copilot keeps a rewrite in the lead's history: curate's own Copilot entry hands
        // the context to the sub-agent's start instead, once.
        trace.note(|t| t.root = Some(ws.root.to_path_buf()));
        return trace.skip(&format!(
            "Copilot CLI runs curate's own entry ({}): one injection",
            crate::hosts::COPILOT_PATH
        ));
    }
    let (prompt, agent_type) =
        match crate::hook::prompt_and_agent_at(v, "tool_input", "prompt", agent_key) {
            Ok(found) => found,
            Err(what) => return bad(&what),
        };
    let session = session_of(v);
    let d = Dispatch {
        cwd: folder(v).map(Into::into),
        session,
        agent_type,
        prompt,
    };
    match prepare(&d, o, trace)? {
        Prepared::Ready {
            prompt,
            root,
            crumb,
        } => {
            // An object: `prompt_and_agent` checked it.
            let mut updated = v["tool_input"].as_object().cloned().unwrap_or_default();
            updated.insert("prompt".to_owned(), Value::String(prompt));
            if session.is_some() {
                // Best effort: without it the sub-agent still has its prompt.
                let _ = crate::state::leave_breadcrumb(&root, crumb);
            }
            Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "updatedInput": Value::Object(updated),
                }
            }))
        }
        Prepared::NotReady {
            status,
            report,
            deny,
        } => Some(not_ready(status, &report, deny)),
    }
}

/// The answer to a dispatch that is not READY: the status and advice for the lead as
/// `additionalContext` (and a `systemMessage`), or with `deny` a denial and its reason.
/// Codex reads the same shape.
#[must_use]
pub fn not_ready(status: crate::stages::budget::Status, report: &str, deny: bool) -> Value {
    let advice = format!(
        "curate: the curated context for this dispatch is {}; the sub-agent would start without it. {}\n{report}",
        status.name(),
        match status {
            crate::stages::budget::Status::Blocked =>
                "Give the missing inputs (or fix the contracts), then dispatch again.",
            _ =>
                "Narrow the entries to sections, drop some, or split the task, then dispatch again.",
        }
    );
    let mut answer = json!({"hookEventName": "PreToolUse"});
    if deny {
        answer["permissionDecision"] = json!("deny");
        answer["permissionDecisionReason"] = json!(advice);
    } else {
        answer["additionalContext"] = json!(advice);
    }
    json!({
        "hookSpecificOutput": answer,
        "systemMessage": format!("curate: {} (see the hook's context)", status.name()),
    })
}

/// After `Write`, `Edit`, `MultiEdit` or `Bash`: the workflow's lists the call touched are
/// compiled ([`crate::hook::edit`]); the lead is told when one is not READY.
fn post_tool_use(v: &Value, o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    let tool = str_field(v, "tool_name")?;
    let input = v.get("tool_input")?;
    let edit = match tool {
        "Write" | "Edit" | "MultiEdit" => Edit::File(str_field(input, "file_path")?),
        "Bash" => Edit::Command(str_field(input, "command")?),
        _ => return trace.skip(&format!("tool {tool} edits no list")),
    };
    let cwd = folder(v).map(std::path::Path::new);
    let advice = crate::hook::edit::after_edit(cwd, edit, o, trace)?;
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": advice,
        }
    }))
}

/// `SubagentStart` (Claude Code's, VS Code's, Codex's): a pointer at the manifest of the
/// breadcrumb the session's READY dispatch left for this agent type.
#[must_use]
pub fn subagent_start(v: &Value, o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    let session = session_of(v)?;
    let agent_type = normalize_role(str_field(v, "agent_type")?);
    let ws = crate::hook::workspace(folder(v).map(std::path::Path::new), o)?;
    trace.note(|t| t.root = Some(ws.root.to_path_buf()));
    let alias = ws.config.contract_role(&agent_type).to_owned();
    let names = [agent_type.as_str(), alias.as_str()];
    let Some(crumb) = crate::state::take_breadcrumb(&ws.root, session, &names) else {
        return trace.skip("no breadcrumb of this session and agent type");
    };
    trace.note(|t| {
        t.role = Some(crumb.role.clone());
        t.change = Some(crumb.change.clone());
        t.status = Some("READY");
    });
    let text = format!(
        "curate prepared this sub-agent's context for change `{}`, role `{}`: the manifest `{}` ({} files, {} lines, about {} tokens). \
         If your task prompt already holds a `<!-- curate:begin` block, that block is this context and nothing more is needed. \
         Otherwise read the manifest's files first, in its order, only the sections it lists, before anything else.",
        crumb.change, crumb.role, crumb.manifest, crumb.files, crumb.lines, crumb.tokens
    );
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "SubagentStart",
            "additionalContext": super::truncate(text, START_CONTEXT_MAX),
        }
    }))
}
