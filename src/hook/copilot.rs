//! `curate hook copilot`: GitHub Copilot CLI's own hook events, as
//! `curate init --host copilot` writes them into `.github/hooks/curate.json`.
//!
//! Copilot keeps a `preToolUse` rewrite (`modifiedArgs`) in the lead's history: the whole
//! bundle would stay in the lead's context. So the `preToolUse` pass on `task` (input
//! `{sessionId, timestamp, cwd, toolName, toolArgs}`, `toolArgs` an object or a JSON
//! string) compiles and renders, rewrites nothing, and leaves the curated context in a
//! breadcrumb; `subagentStart` (`{sessionId, cwd, agentName, …}`, the lead's session)
//! answers `{"additionalContext": C}`, which Copilot puts before the sub-agent's prompt.
//! C is the `role:` line, the begin marker, the bundle, the end marker and a line `---`;
//! the task follows it in the sub-agent's first message. Not ready: nothing (Copilot drops
//! a `preToolUse` context), or with `on_not_ready = "deny"` a denial and its reason.

use serde_json::{Value, json};

use crate::hook::{Dispatch, Prepared, Trace, normalize_role, prepare};
use crate::settings::WorkspaceOptions;

/// The dispatch tool.
const TASK_TOOL: &str = "task";

/// Why an input needs no more than a glance; `None`: go on.
#[must_use]
pub fn glance(v: &Value) -> Option<String> {
    match v.get("toolName").and_then(Value::as_str) {
        Some(TASK_TOOL) => None,
        Some(tool) => Some(format!("tool {tool} is no dispatch")),
        None if v.get("agentName").is_some() => None,
        None => Some("neither a tool call nor a sub-agent's start".to_owned()),
    }
}

/// The input's event, for the log: `preToolUse` or `subagentStart`.
#[must_use]
pub fn event(v: &Value) -> Option<&'static str> {
    if v.get("toolName").is_some() {
        Some("preToolUse")
    } else if v.get("agentName").is_some() {
        Some("subagentStart")
    } else {
        None
    }
}

/// The answer to one hook input (`None`: print nothing).
#[must_use]
pub fn answer(input: &[u8], o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    let (v, event) = match crate::hook::read_input(
        input,
        o,
        trace,
        event,
        "neither \"toolName\" nor \"agentName\"",
        super::claude_code::folder,
    ) {
        Ok(read) => read,
        Err(answer) => return answer,
    };
    let folder = super::claude_code::folder(&v);
    let bad = |what: &str| crate::hook::malformed(folder, o, trace, what);
    if event == "subagentStart" {
        return subagent_start(&v, o, trace);
    }
    let tool = v.get("toolName").and_then(Value::as_str)?;
    if tool != TASK_TOOL {
        return trace.skip(&format!("tool {tool} is no dispatch"));
    }
    // `toolArgs` is an object, or the same as a JSON string.
    let args = match v.get("toolArgs") {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).unwrap_or(Value::Null),
        Some(a) => a.clone(),
        None => Value::Null,
    };
    let (prompt, agent_type) = match crate::hook::prompt_and_agent_at(
        &json!({ "a": args }),
        "a",
        "prompt",
        "agent_type",
    ) {
        Ok((p, a)) => (p.to_owned(), a.map(str::to_owned)),
        Err(what) => return bad(&what.replace("\"a", "\"toolArgs")),
    };
    let session = v.get("sessionId").and_then(Value::as_str);
    let d = Dispatch {
        cwd: folder.map(Into::into),
        session,
        agent_type: agent_type.as_deref(),
        prompt: &prompt,
    };
    match prepare(&d, o, trace)? {
        Prepared::Ready {
            prompt: composed,
            root,
            mut crumb,
        } => {
            if session.is_none() {
                trace.note(|t| t.status = None);
                return trace.skip("no sessionId: the sub-agent's start cannot be matched");
            }
            crumb.context = context_of(&composed, crate::hook::without_fallback(&prompt));
            if crumb.context.is_none() || crate::state::leave_breadcrumb(&root, crumb).is_err() {
                trace.note(|t| t.status = None);
                return trace.skip("the context could not be left for the sub-agent's start");
            }
            // Nothing rewritten: the lead's history keeps its call as written.
            None
        }
        Prepared::NotReady {
            status,
            report,
            deny: true,
        } => Some(json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": format!(
                "curate: the curated context for this dispatch is {}; the sub-agent would start without it.\n{report}",
                status.name()
            ),
        })),
        Prepared::NotReady { .. } => None,
    }
}

/// The context of a composed prompt for a host that puts it before the task: the prompt
/// without its `---`, task and end marker, the end marker after the bundle, then `---`.
#[must_use]
pub fn context_of(composed: &str, original: &str) -> Option<String> {
    let end_at = composed.rfind("\n<!-- curate:end")?;
    let end = &composed[end_at + 1..];
    let tail = format!("---\n{}\n", original.trim_end_matches(['\n', '\r']));
    let head = composed[..=end_at].strip_suffix(&tail)?;
    Some(format!("{head}{end}\n---"))
}

fn subagent_start(v: &Value, o: &WorkspaceOptions, trace: &Trace) -> Option<Value> {
    let session = v.get("sessionId").and_then(Value::as_str)?;
    let agent = normalize_role(v.get("agentName").and_then(Value::as_str)?);
    let folder = v
        .get("cwd")
        .and_then(Value::as_str)
        .map(std::path::Path::new);
    let ws = crate::hook::workspace(folder, o)?;
    trace.note(|t| t.root = Some(ws.root.to_path_buf()));
    let alias = ws.config.contract_role(&agent).to_owned();
    let Some(crumb) = crate::state::take_breadcrumb(&ws.root, session, &[&agent, &alias]) else {
        return trace.skip("no breadcrumb of this session and agent");
    };
    trace.note(|t| {
        t.role = Some(crumb.role.clone());
        t.change = Some(crumb.change.clone());
        t.status = Some("READY");
    });
    Some(json!({ "additionalContext": crumb.context? }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_is_the_bundle_closed_by_its_end_marker() {
        let composed = crate::hook::compose(
            "worker",
            "c",
            "role: worker\nbody\n<!-- curate:end files=1 lines=2 tokens=3 -->\n",
            "the task\n",
            (1, 2, 3),
        );
        assert_eq!(
            context_of(&composed, "the task\n").unwrap(),
            "role: worker\n<!-- curate:begin role=\"worker\" change=\"c\" -->\nbody\n<!-- curate:end files=1 lines=2 tokens=3 -->\n---"
        );
        assert_eq!(context_of(&composed, "another task"), None);
    }
}
