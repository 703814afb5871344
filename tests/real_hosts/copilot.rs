//! GitHub Copilot CLI (`copilot -p`, bring-your-own-key against the fake Chat Completions
//! server, `COPILOT_OFFLINE`), wired with `curate init --host copilot`
//! (`.github/hooks/curate.json`) and, as many repositories are, `--host claude-code`:
//! Copilot runs `.claude/settings.json`'s entries too.

use std::path::PathBuf;

use serde_json::json;

use crate::fake_model::{Exchange, FakeModel, Reply};
use crate::{LEAD, Sandbox, host_binary};

fn copilot() -> Option<PathBuf> {
    host_binary("CURATE_COPILOT_BIN", "copilot")
}

/// Copilot's built-in agent types are fixed: the role comes from a `role:` line.
const TASK: &str = "role: worker\nchange: add-auth\nImplement the login.";
const CALL: &str = "call_task";

/// The lead calls `task` with `task`, then finishes on its result; the sub-agent answers.
fn dispatching(task: &'static str) -> impl Fn(&Exchange) -> Reply + Send + Sync {
    move |x: &Exchange| {
        if x.result_of(CALL).is_some() {
            Reply::text("lead finished")
        } else if x.user_says(LEAD) {
            Reply::call(
                CALL,
                "task",
                json!({"name": "worker", "prompt": task, "agent_type": "general-purpose",
                       "description": "Implement login"}),
            )
        } else {
            Reply::text("CHILD-DONE")
        }
    }
}

fn wired(hosts: &[&str]) -> Sandbox {
    let sandbox = Sandbox::fixture();
    for host in hosts {
        sandbox.curate(&["init", "--host", host]);
    }
    sandbox
}

fn copilot_p(bin: &std::path::Path, sandbox: &Sandbox, model: &FakeModel, env: &[(&str, &str)]) {
    let mut cmd = sandbox.command(bin);
    cmd.args(["-p", LEAD, "--allow-all-tools", "--trust-folder"])
        .env("COPILOT_HOME", sandbox.home.join(".copilot"))
        .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", model.url()))
        .env("COPILOT_PROVIDER_TYPE", "openai")
        .env("COPILOT_PROVIDER_API_KEY", "sk-fake")
        .env("COPILOT_MODEL", "fake-model")
        .env("COPILOT_OFFLINE", "true");
    crate::run_host(&mut cmd, env, "copilot -p");
}

/// The sub-agent's first user message.
fn received(model: &FakeModel) -> String {
    let sub: Vec<Exchange> = model
        .requests()
        .into_iter()
        .filter(|x| !x.user_says(LEAD) && x.user_says("Implement the login."))
        .collect();
    assert_eq!(sub.len(), 1, "the sub-agent's requests");
    sub[0].user_texts().concat()
}

/// The lead's request after the dispatch: its call as written, no bundle.
fn assert_lead_clean(model: &FakeModel) {
    let next: Vec<Exchange> = model
        .requests()
        .into_iter()
        .filter(|x| x.result_of(CALL).is_some())
        .collect();
    assert_eq!(next.len(), 1);
    let first = model
        .requests()
        .into_iter()
        .next()
        .expect("the lead's first");
    eprintln!(
        "copilot: the lead's requests {} bytes, after the dispatch {} bytes",
        first.size, next[0].size
    );
    let (_, input) = next[0].call(CALL).expect("the call in the history");
    assert_eq!(input["prompt"], TASK);
    assert!(!next[0].body.to_string().contains("curate:begin"));
}

/// What the sub-agent receives: Copilot's date line, curate's context (the bundle closed
/// by its end marker, then `---`), a blank line, the task as the lead wrote it.
fn assert_context_then_task(received: &str, sandbox: &Sandbox) {
    let composed = sandbox.expected_dispatch(TASK);
    let (rest, end) = composed.rsplit_once('\n').expect("an end marker");
    let head = rest
        .strip_suffix(&format!("---\n{TASK}"))
        .expect("the task after the bundle");
    let expected = format!("{head}{end}\n---\n\n{TASK}");
    let (date, message) = received.split_once("\n\n").expect("a date line");
    assert!(date.starts_with("<current_datetime>"), "{date}");
    assert_eq!(message, expected);
    assert_eq!(received.matches("<!-- curate:end").count(), 1);
    eprintln!(
        "copilot: the sub-agent's first message {} bytes",
        received.len()
    );
}

#[test]
fn the_sub_agent_gets_the_context_once_and_the_lead_keeps_its_call() {
    let Some(bin) = copilot() else { return };
    // Both wirings: Copilot runs `.claude/settings.json` too; one injection.
    let sandbox = wired(&["copilot", "claude-code"]);
    let model = FakeModel::start(dispatching(TASK));
    copilot_p(&bin, &sandbox, &model, &[]);
    assert_context_then_task(&received(&model), &sandbox);
    assert_lead_clean(&model);
    let runs = sandbox.hook_runs();
    assert!(runs.contains(&"preToolUse READY".to_owned()), "{runs:?}");
    assert!(runs.contains(&"subagentStart READY".to_owned()), "{runs:?}");
    assert!(runs.contains(&"PreToolUse skipped".to_owned()), "{runs:?}");
}

#[test]
fn a_missing_curate_never_blocks_a_dispatch() {
    let Some(bin) = copilot() else { return };
    let sandbox = wired(&["copilot", "claude-code"]);
    let missing = sandbox.bin.join("no-such-curate");
    for file in [".github/hooks/curate.json", ".claude/settings.json"] {
        let text = sandbox.read(file);
        let moved = text.replace(crate::curate_bin(), &missing.to_string_lossy());
        assert_ne!(moved, text);
        sandbox.write(file, &moved);
    }
    let model = FakeModel::start(dispatching(TASK));
    copilot_p(&bin, &sandbox, &model, &[]);
    // Not denied: the sub-agent ran on the task as written.
    assert!(received(&model).ends_with(&format!("\n\n{TASK}")));
    assert_lead_clean(&model);
}

#[test]
fn the_kill_switch_leaves_the_dispatch_as_written() {
    let Some(bin) = copilot() else { return };
    let sandbox = wired(&["copilot"]);
    let model = FakeModel::start(dispatching(TASK));
    copilot_p(&bin, &sandbox, &model, &[("CURATE_HOOKS", "0")]);
    let got = received(&model);
    assert!(!got.contains("curate:begin"), "{got}");
    assert!(got.ends_with(&format!("\n\n{TASK}")));
}
