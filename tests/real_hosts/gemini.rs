//! Gemini CLI (`gemini -p`, a Gemini API key against the fake server's `generateContent`),
//! wired with `curate init --host gemini` (`.gemini/settings.json`): `BeforeTool` on
//! `invoke_agent` rewrites the sub-agent's prompt.

use std::path::PathBuf;

use serde_json::json;

use crate::fake_model::{Exchange, FakeModel, Reply};
use crate::{LEAD, Sandbox, host_binary};

fn gemini() -> Option<PathBuf> {
    host_binary("CURATE_GEMINI_BIN", "gemini")
}

/// Gemini's built-in agents are fixed (`generalist`, …): the role comes from a `role:` line.
const TASK: &str = "role: worker\nchange: add-auth\nImplement the login.";
const TOOL: &str = "invoke_agent";

/// The lead invokes the generalist with `task` and finishes on its result; the sub-agent
/// completes at once; Gemini's routing requests get a low score.
fn dispatching(task: &'static str) -> impl Fn(&Exchange) -> Reply + Send + Sync {
    move |x: &Exchange| {
        let system = x.body["systemInstruction"].to_string();
        if system.contains("Task Routing AI") {
            Reply::text(
                &json!({"complexity_reasoning": "a test", "complexity_score": 10}).to_string(),
            )
        } else if x.result_of(TOOL).is_some() {
            Reply::text("lead finished")
        } else if x.user_says(LEAD) {
            Reply::call(
                TOOL,
                TOOL,
                json!({"agent_name": "generalist", "prompt": task}),
            )
        } else if x.offers("complete_task") {
            Reply::call(
                "complete_task",
                "complete_task",
                json!({"result": {"response": "CHILD-DONE"}}),
            )
        } else {
            Reply::text("ok")
        }
    }
}

fn gemini_p(bin: &std::path::Path, sandbox: &Sandbox, model: &FakeModel, env: &[(&str, &str)]) {
    let dot = sandbox.home.join(".gemini");
    std::fs::create_dir_all(&dot).expect("gemini home");
    std::fs::write(
        dot.join("settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
               "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
               "general": {"disableAutoUpdate": true, "disableUpdateNag": true}})
        .to_string(),
    )
    .expect("settings");
    std::fs::write(
        dot.join("trustedFolders.json"),
        json!({ sandbox.root.to_string_lossy(): "TRUST_FOLDER" }).to_string(),
    )
    .expect("trusted folders");
    let mut cmd = sandbox.command(bin);
    cmd.args(["-p", LEAD, "--approval-mode", "yolo"])
        .env("GOOGLE_GEMINI_BASE_URL", model.url())
        .env("GEMINI_API_KEY", "fake-key");
    crate::run_host(&mut cmd, env, "gemini -p");
}

/// The sub-agent's first request: the one whose user text holds the task, not the lead's
/// request nor a routing one.
fn sub_agent(model: &FakeModel) -> Exchange {
    model
        .requests()
        .into_iter()
        .find(|x| {
            !x.user_says(LEAD)
                && x.user_says("Implement the login.")
                && !x.body["systemInstruction"]
                    .to_string()
                    .contains("Task Routing AI")
        })
        .expect("the sub-agent's request")
}

#[test]
fn the_sub_agent_gets_the_curated_prompt_and_the_lead_keeps_its_call() {
    let Some(bin) = gemini() else { return };
    let sandbox = Sandbox::fixture();
    sandbox.curate(&["init", "--host", "gemini"]);
    let model = FakeModel::start(dispatching(TASK));
    gemini_p(&bin, &sandbox, &model, &[]);
    let sub = sub_agent(&model);
    let received = sub
        .user_texts()
        .into_iter()
        .find(|t| t.contains("Implement the login."))
        .expect("the task");
    // `curate preview`'s bundle, `---`, the task, the one end marker last, byte for byte.
    assert_eq!(received, sandbox.expected_dispatch(TASK));
    assert_eq!(received.matches("<!-- curate:end").count(), 1);
    assert!(
        received
            .lines()
            .last()
            .unwrap_or_default()
            .starts_with("<!-- curate:end files=")
    );
    eprintln!(
        "gemini: the sub-agent's first message {} bytes",
        received.len()
    );
    let next: Vec<Exchange> = model
        .requests()
        .into_iter()
        .filter(|x| x.user_says(LEAD) && x.result_of(TOOL).is_some())
        .collect();
    assert!(!next.is_empty(), "the lead's request after the dispatch");
    let (_, input) = next[0].call(TOOL).expect("the call in the history");
    assert_eq!(input["prompt"], TASK);
    assert!(!next[0].body.to_string().contains("curate:begin"));
    assert!(sandbox.hook_runs().contains(&"BeforeTool READY".to_owned()));
}

#[test]
fn the_kill_switch_leaves_the_prompt_as_written() {
    let Some(bin) = gemini() else { return };
    let sandbox = Sandbox::fixture();
    sandbox.curate(&["init", "--host", "gemini"]);
    let model = FakeModel::start(dispatching(TASK));
    gemini_p(&bin, &sandbox, &model, &[("CURATE_HOOKS", "0")]);
    let texts = sub_agent(&model).user_texts();
    assert!(texts.iter().any(|t| t == TASK), "{texts:?}");
}
