//! Claude Code (`claude -p`), wired with `curate init --host claude-code` (the hooks) or
//! `curate init --host mcp` (`.mcp.json`), its model the fake Anthropic server.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::fake_model::{Exchange, FakeModel, Reply};
use crate::{HOST_TIMEOUT, Sandbox, host_binary, run};

/// What the user asks the lead.
const LEAD: &str = "Dispatch the worker for the login.";
/// The lead's dispatch call.
const DISPATCH: &str = "toolu_dispatch";
const TASK: &str = "change: add-auth\nImplement the login.";

fn claude() -> Option<PathBuf> {
    host_binary("CURATE_CLAUDE_BIN", "claude")
}

/// The fixture wired for Claude Code, with a `worker` agent to dispatch.
fn wired() -> Sandbox {
    let sandbox = Sandbox::fixture();
    sandbox.curate(&["init", "--host", "claude-code"]);
    sandbox.write(
        ".claude/agents/worker.md",
        "---\nname: worker\ndescription: Implements one change.\n---\nYou implement changes.\n",
    );
    sandbox
}

/// The lead dispatches `task` to the worker (in the foreground) and ends its turn on the
/// result; the sub-agent answers "done"; anything else (a side request) gets "ok".
fn dispatching(task: &'static str) -> impl Fn(&Exchange) -> Reply + Send + Sync {
    move |x: &Exchange| {
        if x.result_of(DISPATCH).is_some() {
            Reply::text("lead finished")
        } else if x.user_says(LEAD) {
            let tool = if x.offers("Agent") { "Agent" } else { "Task" };
            Reply::call(
                DISPATCH,
                tool,
                json!({"description": "Implement login", "prompt": task,
                       "subagent_type": "worker", "run_in_background": false}),
            )
        } else if x.user_says(task) {
            Reply::text("done")
        } else {
            Reply::text("ok")
        }
    }
}

/// Runs `claude -p prompt` in the sandbox against `model`; its JSON result.
fn claude_p(
    bin: &Path,
    sandbox: &Sandbox,
    model: &FakeModel,
    prompt: &str,
    allowed: &str,
    env: &[(&str, &str)],
) -> Value {
    let mut cmd = sandbox.command(bin);
    cmd.args([
        "-p",
        prompt,
        "--output-format",
        "json",
        "--allowedTools",
        allowed,
    ])
    .env("CLAUDE_CONFIG_DIR", sandbox.home.join(".claude"))
    .env("ANTHROPIC_BASE_URL", model.url())
    .env("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    .env("DISABLE_AUTOUPDATER", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(&mut cmd, HOST_TIMEOUT);
    eprintln!("claude -p took {:.1} s", out.elapsed.as_secs_f64());
    assert_eq!(
        out.code,
        Some(0),
        "claude -p failed or was killed\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

/// A dispatch's three requests: the lead's first, the sub-agent's, the lead's next.
struct Dispatch {
    lead: Exchange,
    sub: Exchange,
    next: Exchange,
}

impl Dispatch {
    fn of(model: &FakeModel, task: &str) -> Dispatch {
        let all = model.requests();
        let find = |what: &str, f: &dyn Fn(&Exchange) -> bool| {
            let found: Vec<&Exchange> = all.iter().filter(|x| f(x)).collect();
            assert_eq!(found.len(), 1, "{what}: {} requests", found.len());
            found[0].clone()
        };
        Dispatch {
            lead: find("the lead's first", &|x| {
                x.user_says(LEAD) && x.result_of(DISPATCH).is_none()
            }),
            sub: find("the sub-agent's", &|x| {
                !x.user_says(LEAD) && x.user_says(task)
            }),
            next: find("the lead's next", &|x| x.result_of(DISPATCH).is_some()),
        }
    }

    /// The text of the sub-agent's first user message that holds its task.
    fn received(&self, task: &str) -> String {
        let first = self.sub.first_user_message().expect("a user message");
        let last_line = task.lines().last().expect("a task");
        first
            .texts
            .into_iter()
            .find(|t| t.contains(last_line))
            .expect("the task in the sub-agent's first message")
    }

    /// The lead's next request: its dispatch call went out as the lead wrote it, with the
    /// sub-agent's answer as its result, and holds no bundle.
    fn assert_lead_kept_its_call(&self, task: &str) {
        let (tool, input) = self
            .next
            .call(DISPATCH)
            .expect("the dispatch in the history");
        assert!(tool == "Agent" || tool == "Task", "{tool}");
        assert_eq!(input["prompt"], task);
        let result = self
            .next
            .result_of(DISPATCH)
            .expect("the dispatch's result");
        assert!(result.contains("done"), "{result}");
        assert!(!self.next.body.to_string().contains("curate:begin"));
    }
}

#[test]
fn a_dispatch_hands_the_sub_agent_the_bundle_and_leaves_the_leads_call_as_written() {
    let Some(bin) = claude() else { return };
    let sandbox = wired();
    let model = FakeModel::start(dispatching(TASK));
    let result = claude_p(&bin, &sandbox, &model, LEAD, "Agent", &[]);
    assert_eq!(result["result"], "lead finished", "{result}");

    let d = Dispatch::of(&model, TASK);
    let received = d.received(TASK);
    assert!(
        received.starts_with(
            "role: worker\n<!-- curate:begin role=\"worker\" change=\"add-auth\" -->\n"
        )
    );
    let last = received.lines().last().unwrap_or_default();
    assert!(last.starts_with("<!-- curate:end files="), "{last}");
    assert_eq!(received.matches("<!-- curate:end").count(), 1);
    assert_eq!(received, sandbox.expected_dispatch(TASK));

    d.assert_lead_kept_its_call(TASK);
    let growth = d.next.size.saturating_sub(d.lead.size);
    eprintln!(
        "claude-code: lead request {} -> {} bytes after the dispatch (+{growth}); the sub-agent's prompt {} bytes",
        d.lead.size,
        d.next.size,
        received.len()
    );
    assert!(growth <= 2048, "the lead's context grew by {growth} bytes");
    assert_eq!(
        sandbox.hook_runs(),
        ["PreToolUse READY", "SubagentStart READY"]
    );
}

#[test]
fn a_dispatch_without_a_change_goes_through_unchanged() {
    let Some(bin) = claude() else { return };
    let sandbox = wired();
    let task = "Implement the login.";
    let model = FakeModel::start(dispatching(task));
    let result = claude_p(&bin, &sandbox, &model, LEAD, "Agent", &[]);
    assert_eq!(result["result"], "lead finished", "{result}");
    let d = Dispatch::of(&model, task);
    assert_eq!(d.received(task), task);
    d.assert_lead_kept_its_call(task);
    assert_eq!(
        sandbox.hook_runs(),
        ["PreToolUse skipped", "SubagentStart skipped"]
    );
}

#[test]
fn the_kill_switch_leaves_the_dispatch_unchanged() {
    let Some(bin) = claude() else { return };
    let sandbox = wired();
    let model = FakeModel::start(dispatching(TASK));
    let result = claude_p(
        &bin,
        &sandbox,
        &model,
        LEAD,
        "Agent",
        &[("CURATE_HOOKS", "0")],
    );
    assert_eq!(result["result"], "lead finished", "{result}");
    let d = Dispatch::of(&model, TASK);
    assert_eq!(d.received(TASK), TASK);
    d.assert_lead_kept_its_call(TASK);
    assert!(
        !sandbox
            .root
            .join("changes/add-auth/analysis/worker-context.jsonl")
            .exists()
    );
}

#[test]
fn a_missing_curate_binary_leaves_the_dispatch_unchanged() {
    let Some(bin) = claude() else { return };
    let sandbox = wired();
    let settings = sandbox.read(".claude/settings.json");
    let missing = sandbox.bin.join("no-such-curate");
    let moved = settings.replace(crate::curate_bin(), &missing.to_string_lossy());
    assert_ne!(moved, settings, "the settings name curate's path");
    sandbox.write(".claude/settings.json", &moved);
    let model = FakeModel::start(dispatching(TASK));
    let result = claude_p(&bin, &sandbox, &model, LEAD, "Agent", &[]);
    assert_eq!(result["result"], "lead finished", "{result}");
    let d = Dispatch::of(&model, TASK);
    assert_eq!(d.received(TASK), TASK);
    d.assert_lead_kept_its_call(TASK);
}

const PREVIEW_LEAD: &str = "Preview the worker's context for add-auth.";
const PREVIEW: &str = "toolu_preview";
const SEARCH: &str = "toolu_search";

#[test]
fn the_mcp_preview_result_is_the_status_and_the_prompt() {
    let Some(bin) = claude() else { return };
    let sandbox = Sandbox::fixture();
    sandbox.curate(&["init", "--host", "mcp"]);
    // Claude Code defers MCP tools behind ToolSearch: the model loads the tool, then calls it.
    let model = FakeModel::start(|x: &Exchange| {
        if x.result_of(PREVIEW).is_some() {
            Reply::text("previewed")
        } else if !x.user_says(PREVIEW_LEAD) {
            Reply::text("ok")
        } else if x.offers("mcp__curate__preview") {
            Reply::call(
                PREVIEW,
                "mcp__curate__preview",
                json!({"role": "worker", "change": "add-auth"}),
            )
        } else if x.offers("ToolSearch") && x.result_of(SEARCH).is_none() {
            Reply::call(
                SEARCH,
                "ToolSearch",
                json!({"query": "select:mcp__curate__preview"}),
            )
        } else {
            Reply::text("no preview tool")
        }
    });
    let result = claude_p(
        &bin,
        &sandbox,
        &model,
        PREVIEW_LEAD,
        "mcp__curate__preview",
        &[],
    );
    assert_eq!(result["result"], "previewed", "{result}");

    let read = model
        .requests()
        .iter()
        .find_map(|x| x.result_of(PREVIEW))
        .expect("the preview's result");
    let prompt = sandbox.curate(&["preview", "--role", "worker", "--change", "add-auth"]);
    let (header, pasted) = read.split_once("\n\n").expect("a header and the prompt");
    assert!(
        header.starts_with("READY · role worker · change add-auth · 8 files"),
        "{header}"
    );
    assert_eq!(pasted, prompt);
    eprintln!(
        "claude-code: the preview's tool result {} bytes, its prompt {} bytes",
        read.len(),
        prompt.len()
    );
    assert!(read.len() <= prompt.len() + 2048, "{} bytes", read.len());
}
