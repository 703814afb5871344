//! OpenCode (`opencode run`), wired with `curate init --host opencode` (the plugin) or an
//! `mcp` entry in `opencode.json`, its model the fake server as an OpenAI-compatible
//! provider (`@ai-sdk/openai-compatible`, bundled in the binary).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::fake_model::{Exchange, FakeModel, Reply};
use crate::{
    DISPATCH, Dispatch, LEAD, PREVIEW, PREVIEW_LEAD, Sandbox, TASK, TRELLIS_TASK, host_binary,
};

fn opencode() -> Option<PathBuf> {
    host_binary("CURATE_OPENCODE_BIN", "opencode")
}

/// `opencode.json`: the fake provider as the only model, a `worker` sub-agent that may be
/// dispatched without asking, and `extra` merged in.
fn configure(sandbox: &Sandbox, model: &FakeModel, extra: &Value) {
    let mut config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "model": "fake/lead",
        "small_model": "fake/lead",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": format!("{}/v1", model.url()), "apiKey": "fake-key-for-tests"},
            "models": {"lead": {"name": "lead", "tool_call": true}}
        }},
        "agent": {"worker": {"description": "Implements one change.", "mode": "subagent",
                             "prompt": "You implement changes."}},
        "permission": {"task": "allow"}
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        config[k] = v.clone();
    }
    sandbox.write("opencode.json", &config.to_string());
    // OpenCode runs npm in each config folder that has no `node_modules` (to add
    // `@opencode-ai/plugin`, which curate's plugin does not import). Marked as installed,
    // the folders need no registry and the run takes seconds, not half a minute.
    for dir in [
        sandbox.root.join(".opencode"),
        sandbox.home.join(".config/opencode"),
    ] {
        std::fs::create_dir_all(dir.join("node_modules")).expect("node_modules");
        std::fs::write(dir.join("package.json"), "{}\n").expect("package.json");
        let lock = json!({"packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}});
        std::fs::write(dir.join("package-lock.json"), lock.to_string()).expect("lock");
    }
}

/// The fixture wired with curate's plugin.
fn wired(model: &FakeModel) -> Sandbox {
    let sandbox = Sandbox::fixture();
    sandbox.curate(&["init", "--host", "opencode"]);
    configure(&sandbox, model, &json!({}));
    sandbox
}

/// The lead dispatches `task` to the worker and ends its turn on the result; the sub-agent
/// answers "done"; a request without tools (the title) gets a title.
fn dispatching(task: &'static str) -> impl Fn(&Exchange) -> Reply + Send + Sync {
    move |x: &Exchange| {
        if x.tools().is_empty() {
            Reply::text("A title")
        } else if x.result_of(DISPATCH).is_some() {
            Reply::text("lead finished")
        } else if x.user_says(LEAD) {
            Reply::call(
                DISPATCH,
                "task",
                json!({"description": "Implement login", "prompt": task, "subagent_type": "worker"}),
            )
        } else if x.user_says(task) {
            Reply::text("done")
        } else {
            Reply::text("ok")
        }
    }
}

/// Runs `opencode run prompt` in the sandbox, offline but for the fake model; the texts the
/// lead answered.
fn opencode_run(bin: &Path, sandbox: &Sandbox, prompt: &str, env: &[(&str, &str)]) -> Vec<String> {
    let mut cmd = sandbox.command(bin);
    let home = &sandbox.home;
    cmd.args(["run", "--format", "json", prompt])
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_CLAUDE_CODE", "1")
        .env("OPENCODE_DISABLE_SHARE", "1");
    let out = crate::run_host(&mut cmd, env, "opencode run");
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "text")
        .filter_map(|e| e["part"]["text"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_dispatch_hands_the_sub_agent_the_bundle_and_not_the_lead() {
    let Some(bin) = opencode() else { return };
    let model = FakeModel::start(dispatching(TASK));
    let sandbox = wired(&model);
    assert_eq!(opencode_run(&bin, &sandbox, LEAD, &[]), ["lead finished"]);

    let d = Dispatch::of(&model, TASK);
    let received = d.received(TASK);
    crate::assert_one_bundle(&received, &sandbox);

    d.assert_lead_kept_its_call(TASK);
    let growth = d.next.size.saturating_sub(d.lead.size);
    eprintln!(
        "opencode: lead request {} -> {} bytes after the dispatch (+{growth}); the sub-agent's prompt {} bytes",
        d.lead.size,
        d.next.size,
        received.len()
    );
    assert!(growth <= 2048, "the lead's context grew by {growth} bytes");
    assert_eq!(sandbox.hook_runs(), ["task READY"]);
}

#[test]
fn a_dispatch_without_a_change_goes_through_unchanged() {
    let Some(bin) = opencode() else { return };
    let task = "Implement the login.";
    let model = FakeModel::start(dispatching(task));
    let sandbox = wired(&model);
    assert_eq!(opencode_run(&bin, &sandbox, LEAD, &[]), ["lead finished"]);
    let d = Dispatch::of(&model, task);
    assert_eq!(d.received(task), task);
    d.assert_lead_kept_its_call(task);
    assert_eq!(sandbox.hook_runs(), ["task skipped"]);
}

#[test]
fn the_kill_switch_leaves_the_dispatch_unchanged() {
    let Some(bin) = opencode() else { return };
    let model = FakeModel::start(dispatching(TASK));
    let sandbox = wired(&model);
    let texts = opencode_run(&bin, &sandbox, LEAD, &[("CURATE_HOOKS", "0")]);
    assert_eq!(texts, ["lead finished"]);
    let d = Dispatch::of(&model, TASK);
    assert_eq!(d.received(TASK), TASK);
    d.assert_lead_kept_its_call(TASK);
    // Turned off, the hook still reads its input, for the log's event and folder.
    assert_eq!(sandbox.hook_runs(), ["task off"]);
}

#[test]
fn a_missing_curate_binary_leaves_the_dispatch_unchanged() {
    let Some(bin) = opencode() else { return };
    let model = FakeModel::start(dispatching(TASK));
    let sandbox = wired(&model);
    let plugin = sandbox.read(".opencode/plugins/curate.js");
    let missing = sandbox.bin.join("no-such-curate");
    let moved = plugin.replace(crate::curate_bin(), &missing.to_string_lossy());
    assert_ne!(moved, plugin, "the plugin names curate's path");
    sandbox.write(".opencode/plugins/curate.js", &moved);
    assert_eq!(opencode_run(&bin, &sandbox, LEAD, &[]), ["lead finished"]);
    let d = Dispatch::of(&model, TASK);
    assert_eq!(d.received(TASK), TASK);
    d.assert_lead_kept_its_call(TASK);
    assert!(sandbox.hook_runs().is_empty());
}

#[test]
fn the_mcp_preview_result_is_the_status_and_the_prompt() {
    let Some(bin) = opencode() else { return };
    let model = FakeModel::start(|x: &Exchange| {
        if x.tools().is_empty() {
            Reply::text("A title")
        } else if x.result_of(PREVIEW).is_some() {
            Reply::text("previewed")
        } else if x.user_says(PREVIEW_LEAD) && x.offers("curate_preview") {
            Reply::call(
                PREVIEW,
                "curate_preview",
                json!({"role": "worker", "change": "add-auth"}),
            )
        } else {
            Reply::text("no preview tool")
        }
    });
    let sandbox = Sandbox::fixture();
    let mcp = json!({"mcp": {"curate": {"type": "local", "command": ["curate", "mcp"]}}});
    configure(&sandbox, &model, &mcp);
    assert_eq!(
        opencode_run(&bin, &sandbox, PREVIEW_LEAD, &[]),
        ["previewed"]
    );

    crate::assert_preview_result(&model, &sandbox, "opencode");
}

/// A plugin that, like the aiws plugin without a manifest, rewrites the `task` prompt in
/// place with its fallback scaffold; named to load before curate's.
const FALLBACK_PLUGIN: &str = r#"export default async () => ({
  "tool.execute.before": async (input, output) => {
    if (input.tool !== "task") return
    output.args.prompt = `<aiws-context-fallback>
No curated context JSONL for role "worker".
</aiws-context-fallback>

<aiws-context-instruction>
Use Glob.
</aiws-context-instruction>

---

` + output.args.prompt
  },
})
"#;

#[test]
fn beside_a_fallback_injector_the_sub_agent_gets_one_bundle() {
    let Some(bin) = opencode() else { return };
    let model = FakeModel::start(dispatching(TASK));
    let sandbox = wired(&model);
    sandbox.write(".opencode/plugins/aiws-inject-context.js", FALLBACK_PLUGIN);
    assert_eq!(opencode_run(&bin, &sandbox, LEAD, &[]), ["lead finished"]);
    let d = Dispatch::of(&model, TASK);
    let received = d.received(TASK);
    assert!(!received.contains("aiws-context-fallback"), "{received}");
    crate::assert_one_bundle(&received, &sandbox);
    // The other plugin ran: rewriting `args` in place, it left its scaffold in the lead's
    // stored call; curate's bundle is not there.
    let (_, input) = d.next.call(DISPATCH).expect("the dispatch in the history");
    let stored = input["prompt"].as_str().unwrap_or_default();
    assert!(stored.starts_with("<aiws-context-fallback>"), "{stored}");
    assert!(!d.next.body.to_string().contains("curate:begin"));
    assert_eq!(sandbox.hook_runs(), ["task READY"]);
}

const READ: &str = "call_read";
const WRITE: &str = "call_write";
const TRELLIS_LEAD: &str = "Add the settings to the task's list, then dispatch the implementer.";

/// The stand-in for Trellis' OpenCode plugin, where curate looks for it: at a `task` it
/// reads the task's list as it stands and puts it before the prompt, behind the marker.
const FAKE_TRELLIS_PLUGIN: &str = r#"import fs from "node:fs"
export default async ({ directory } = {}) => ({
  "tool.execute.before": async (input, output) => {
    if (input.tool !== "task") return
    const task = /Active task: (\S+)/.exec(output.args.prompt || "")
    if (!task) return
    const list = fs.readFileSync(`${directory}/${task[1]}/implement.jsonl`, "utf8")
    output.args.prompt = `<!-- trellis-hook-injected -->\n=== implement.jsonl ===\n${list}\n` + output.args.prompt
  },
})
"#;

/// A Trellis task whose lead adds a row to the list (`read`, then `write`) and dispatches:
/// Trellis' plugin reads the list at the `task` call, before curate's plugin runs, and reads
/// it compiled, since curate compiled it after the `write` (`tool.execute.after`).
#[test]
fn trellis_reads_the_list_curate_compiled_after_the_leads_edit() {
    let Some(bin) = opencode() else { return };
    let sandbox = Sandbox::of("trellis");
    let list = sandbox.root.join(format!("{TRELLIS_TASK}/implement.jsonl"));
    let edited = format!(
        "{}{{\"file\": \".env\", \"reason\": \"The settings\"}}\n",
        sandbox.read(&format!("{TRELLIS_TASK}/implement.jsonl"))
    );
    let model = FakeModel::start(move |x: &Exchange| {
        if x.tools().is_empty() {
            Reply::text("A title")
        } else if x.result_of(DISPATCH).is_some() {
            Reply::text("lead finished")
        } else if x.result_of(WRITE).is_some() {
            Reply::call(
                DISPATCH,
                "task",
                json!({"description": "Implement the limit", "prompt": crate::TRELLIS_PROMPT,
                       "subagent_type": "trellis-implement"}),
            )
        } else if x.result_of(READ).is_some() {
            Reply::call(WRITE, "write", json!({"filePath": list, "content": edited}))
        } else if x.user_says(TRELLIS_LEAD) {
            Reply::call(READ, "read", json!({"filePath": list}))
        } else if x.user_says("Implement the rate limit.") {
            Reply::text("done")
        } else {
            Reply::text("ok")
        }
    });
    sandbox.write(".env", "DATABASE_URL=postgres://app:hunter2@db/app\n");
    sandbox.write(
        ".opencode/plugins/inject-subagent-context.js",
        FAKE_TRELLIS_PLUGIN,
    );
    sandbox.curate(&["init", "--host", "opencode"]);
    configure(
        &sandbox,
        &model,
        &json!({
            "agent": {"trellis-implement": {"description": "Implements one task.",
                      "mode": "subagent", "prompt": "You implement tasks."}},
            "permission": {"task": "allow", "edit": "allow", "read": "allow",
                           "external_directory": "allow"}
        }),
    );
    assert_eq!(
        opencode_run(&bin, &sandbox, TRELLIS_LEAD, &[]),
        ["lead finished"]
    );

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
    assert_eq!(sandbox.hook_runs(), ["edit READY", "task skipped"]);
}
