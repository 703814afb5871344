//! Claude Code (`claude -p`), wired with `curate init --host claude-code` (the hooks) or
//! `curate init --host mcp` (`.mcp.json`), its model the fake Anthropic server.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::fake_model::{Exchange, FakeModel, Reply};
use crate::{
    DISPATCH, Dispatch, LEAD, PREVIEW, PREVIEW_LEAD, Sandbox, TASK, TRELLIS_TASK, host_binary,
};

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
    let out = crate::run_host(&mut cmd, env, "claude -p");
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
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
    crate::assert_one_bundle(&received, &sandbox);

    // SubagentStart's pointer reaches the sub-agent too (beside its prompt).
    assert!(
        d.sub
            .body
            .to_string()
            .contains("curate prepared this sub-agent's context for change `add-auth`")
    );
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
    // Turned off, the hook still reads its input, for the log's event and folder.
    assert_eq!(sandbox.hook_runs(), ["PreToolUse off", "SubagentStart off"]);
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

    crate::assert_preview_result(&model, &sandbox, "claude-code");
}

const READ: &str = "toolu_read";
const WRITE: &str = "toolu_write";
const TRELLIS_LEAD: &str = "Add the settings to the task's list, then dispatch the implementer.";

/// The stand-in for Trellis' injector, as a Claude Code `PreToolUse` command.
const FAKE_TRELLIS_HOOK: &str = r#"import fs from "node:fs"
const input = JSON.parse(fs.readFileSync(0, "utf8"))
const args = input.tool_input || {}
const task = /Active task: (\S+)/.exec(args.prompt || "")
if (task) {
  const list = fs.readFileSync(`${input.cwd}/${task[1]}/implement.jsonl`, "utf8")
  const prompt = `<!-- trellis-hook-injected -->\n=== implement.jsonl ===\n${list}\n${args.prompt}`
  process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse",
    permissionDecision: "allow", updatedInput: { ...args, prompt } } }))
}
"#;

/// A Trellis task whose lead adds a row to the list (`Read`, then `Write`) and dispatches
/// at once: Trellis' injector reads the list at the dispatch, beside curate's hook, and
/// reads it compiled, since curate compiled it right after the `Write` (`PostToolUse`).
#[test]
fn trellis_reads_the_list_curate_compiled_after_the_leads_edit() {
    let Some(bin) = claude() else { return };
    let sandbox = Sandbox::of("trellis");
    sandbox.write(".env", "DATABASE_URL=postgres://app:hunter2@db/app\n");
    // Curate finds Trellis' injector by its path; the stand-in does what it does.
    sandbox.write(
        ".claude/hooks/inject-subagent-context.py",
        "# Trellis' hook\n",
    );
    sandbox.write(".claude/hooks/fake-trellis.mjs", FAKE_TRELLIS_HOOK);
    sandbox.write(
        ".claude/agents/trellis-implement.md",
        "---\nname: trellis-implement\ndescription: Implements one task.\n---\nYou implement tasks.\n",
    );
    sandbox.curate(&["init", "--host", "claude-code"]);
    let mut settings: Value = serde_json::from_str(&sandbox.read(".claude/settings.json")).unwrap();
    settings["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(
            json!({"matcher": "Agent|Task", "hooks": [{"type": "command",
            "command": "node \"$CLAUDE_PROJECT_DIR/.claude/hooks/fake-trellis.mjs\""}]}),
        );
    sandbox.write(".claude/settings.json", &settings.to_string());

    let list = sandbox.root.join(format!("{TRELLIS_TASK}/implement.jsonl"));
    let edited = format!(
        "{}{{\"file\": \".env\", \"reason\": \"The settings\"}}\n",
        sandbox.read(&format!("{TRELLIS_TASK}/implement.jsonl"))
    );
    let model = FakeModel::start(move |x: &Exchange| {
        if x.result_of(DISPATCH).is_some() {
            Reply::text("lead finished")
        } else if x.result_of(WRITE).is_some() {
            let tool = if x.offers("Agent") { "Agent" } else { "Task" };
            Reply::call(
                DISPATCH,
                tool,
                json!({"description": "Implement the limit", "prompt": crate::TRELLIS_PROMPT,
                       "subagent_type": "trellis-implement", "run_in_background": false}),
            )
        } else if x.result_of(READ).is_some() {
            Reply::call(
                WRITE,
                "Write",
                json!({"file_path": list, "content": edited}),
            )
        } else if x.user_says(TRELLIS_LEAD) {
            Reply::call(READ, "Read", json!({"file_path": list}))
        } else if x.user_says("Implement the rate limit.") {
            Reply::text("done")
        } else {
            Reply::text("ok")
        }
    });
    let result = claude_p(
        &bin,
        &sandbox,
        &model,
        TRELLIS_LEAD,
        "Read Write Agent",
        &[],
    );
    assert_eq!(result["result"], "lead finished", "{result}");

    let sub = model
        .requests()
        .into_iter()
        .find(|x| {
            !x.tools().is_empty()
                && !x.user_says(TRELLIS_LEAD)
                && x.user_says("Implement the rate limit.")
        })
        .expect("the sub-agent's request");
    let received = sub
        .first_user_message()
        .expect("a user message")
        .texts
        .into_iter()
        .find(|t| t.contains("Implement the rate limit."))
        .expect("the task");
    crate::trellis_read_the_compiled_list(&received);
    assert_eq!(
        sandbox.hook_runs(),
        [
            "PostToolUse READY",
            "PreToolUse skipped",
            "SubagentStart skipped"
        ]
    );
}
