//! Codex CLI (`codex exec`), wired with `curate init --host codex` (`.codex/hooks.json`),
//! its model the fake Responses server. Codex runs a project's hooks only in a trusted
//! project and only the hooks the user approved (`hooks.state` in the user's
//! `config.toml`): the test writes the trust and the approvals `curate init` printed, once;
//! without the approvals nothing is injected, and `curate doctor` says why.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::fake_model::{Exchange, FakeModel, Reply};
use crate::{LEAD, Sandbox, TASK, host_binary};

fn codex() -> Option<PathBuf> {
    host_binary("CURATE_CODEX_BIN", "codex")
}

/// The id of the lead's spawn and wait calls.
const SPAWN: &str = "call_spawn";
const WAIT: &str = "call_wait";

/// A child's request carries this header (`collab_spawn`).
fn is_child(x: &Exchange) -> bool {
    x.header("x-openai-subagent").is_some()
}

/// The lead spawns a worker with `task`, waits for it and finishes; the child answers.
fn spawning(task: &'static str) -> impl Fn(&Exchange) -> Reply + Send + Sync {
    spawning_in("multi_agent_v1", task)
}

/// [`spawning`] with the tools of `namespace` (`collaboration` in multi-agent v2, whose
/// spawn needs a `task_name`).
fn spawning_in(
    namespace: &'static str,
    task: &'static str,
) -> impl Fn(&Exchange) -> Reply + Send + Sync {
    move |x: &Exchange| {
        if is_child(x) {
            Reply::text("CHILD-DONE")
        } else if x.result_of(WAIT).is_some() {
            Reply::text("lead finished")
        } else if let Some(out) = x.result_of(SPAWN).filter(|o| o.contains("blocked")) {
            Reply::text(&format!("lead stopped: {}", out.len()))
        } else if let Some(out) = x.result_of(SPAWN) {
            let spawned: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
            let id = spawned["agent_id"].as_str().unwrap_or_default().to_owned();
            // v2 waits on every child, and names none.
            let input = if namespace == "collaboration" {
                json!({"timeout_ms": 30000})
            } else {
                json!({"targets": [id], "timeout_ms": 30000})
            };
            Reply::call(WAIT, &format!("{namespace}/wait_agent"), input)
        } else if x.user_says(LEAD) {
            let mut input = json!({"message": task, "agent_type": "worker"});
            if namespace == "collaboration" {
                input["task_name"] = json!("login");
            }
            Reply::call(SPAWN, &format!("{namespace}/spawn_agent"), input)
        } else {
            Reply::text("ok")
        }
    }
}

/// The fixture wired for Codex; Codex's home (`CODEX_HOME`) with the fake provider, the
/// project trusted, a `worker` agent, and with `approve` the approvals `curate init` printed.
fn wired(model: &FakeModel, approve: bool) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::fixture();
    let home = sandbox.home.join(".codex");
    std::fs::create_dir_all(home.join("agents")).expect("codex home");
    let out = crate::run(
        sandbox
            .command(std::path::Path::new(crate::curate_bin()))
            .args(["init", "--host", "codex"])
            .env("CODEX_HOME", &home),
        crate::HOST_TIMEOUT,
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    // What the user adds by hand, as `init` printed it: the trust and the two approvals.
    let printed: String = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("       "))
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    let (trust, approvals) = printed
        .split_once("[hooks.state.")
        .map(|(t, a)| (t.to_owned(), format!("[hooks.state.{a}")))
        .expect("init prints the trust and the approvals");
    assert_eq!(
        approvals.matches("trusted_hash = \"sha256:").count(),
        2,
        "{printed}"
    );
    let config = format!(
        "model = \"fake-model\"\nmodel_provider = \"fake\"\ncheck_for_update_on_startup = false\n\n\
         [model_providers.fake]\nname = \"fake\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n\
         env_key = \"FAKE_API_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n\
         [analytics]\nenabled = false\n\n{trust}{}",
        model.url(),
        if approve { approvals.as_str() } else { "" }
    );
    std::fs::write(home.join("config.toml"), config).expect("config.toml");
    std::fs::write(
        home.join("agents/worker.toml"),
        "name = \"worker\"\ndescription = \"Implements one change.\"\ndeveloper_instructions = \"You implement changes.\"\n",
    )
    .expect("worker.toml");
    (sandbox, home)
}

/// Runs `codex exec` on the lead's prompt in the sandbox.
fn exec(bin: &std::path::Path, sandbox: &Sandbox, home: &std::path::Path) -> crate::Finished {
    exec_with(bin, sandbox, home, &[], &[])
}

/// [`exec`] with more flags and environment.
fn exec_with(
    bin: &std::path::Path,
    sandbox: &Sandbox,
    home: &std::path::Path,
    flags: &[&str],
    env: &[(&str, &str)],
) -> crate::Finished {
    let mut cmd = sandbox.command(bin);
    cmd.args(["exec", "--skip-git-repo-check", "--json"])
        .args(flags)
        .arg("-C")
        .arg(&sandbox.root)
        .arg(LEAD)
        .env("CODEX_HOME", home)
        .env("FAKE_API_KEY", "sk-fake");
    crate::run_host(&mut cmd, env, "codex exec")
}

/// The child's user message that holds its task.
fn child_message(model: &FakeModel) -> String {
    let child: Vec<Exchange> = model.requests().into_iter().filter(is_child).collect();
    assert!(!child.is_empty(), "no child request");
    child[0]
        .user_texts()
        .into_iter()
        .find(|t| t.contains("Implement the login."))
        .expect("the task in the child's first request")
}

/// The lead's requests after the spawn: none holds a bundle.
fn assert_lead_clean(model: &FakeModel) {
    let after: Vec<Exchange> = model
        .requests()
        .into_iter()
        .filter(|x| !is_child(x) && x.result_of(SPAWN).is_some())
        .collect();
    assert!(!after.is_empty(), "no lead request after the spawn");
    let first = model
        .requests()
        .into_iter()
        .find(|x| !is_child(x))
        .expect("the lead's first");
    eprintln!(
        "codex: the lead's requests {} bytes, after the spawn {} bytes",
        first.size, after[0].size
    );
    for x in after {
        assert!(
            !x.body.to_string().contains("curate:begin"),
            "the bundle in the lead's history"
        );
        let (name, input) = x.call(SPAWN).expect("the spawn in the history");
        assert_eq!(name, "spawn_agent");
        assert_eq!(input["message"], TASK);
    }
}

#[test]
fn an_approved_spawn_hands_the_child_the_bundle_and_the_lead_keeps_its_call() {
    let Some(bin) = codex() else { return };
    let model = FakeModel::start(spawning(TASK));
    let (sandbox, home) = wired(&model, true);
    exec(&bin, &sandbox, &home);
    let received = child_message(&model);
    crate::assert_one_bundle(&received, &sandbox);
    eprintln!("codex: the child's first message {} bytes", received.len());
    assert_lead_clean(&model);
    // The SubagentStart pointer reached the child, as a developer message.
    let child = model.requests().into_iter().find(is_child).expect("child");
    let pointer = child.body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["role"] == "developer")
        .any(|i| i.to_string().contains("analysis/worker-context.jsonl"));
    assert!(pointer, "no pointer in the child's developer messages");
    let runs = sandbox.hook_runs();
    assert!(runs.contains(&"PreToolUse READY".to_owned()), "{runs:?}");
    assert!(runs.contains(&"SubagentStart READY".to_owned()), "{runs:?}");
    let doctor = sandbox_doctor(&sandbox, &home);
    assert!(
        doctor.contains("PreToolUse (approved), SubagentStart (approved)"),
        "{doctor}"
    );
}

#[test]
fn multi_agent_v2s_spawn_is_curated_too() {
    let Some(bin) = codex() else { return };
    let model = FakeModel::start(spawning_in("collaboration", TASK));
    let (sandbox, home) = wired(&model, true);
    exec_with(&bin, &sandbox, &home, &["--enable", "multi_agent_v2"], &[]);
    let offered = model.requests()[0].tools();
    assert!(
        offered.contains(&"collaboration/spawn_agent".to_owned()),
        "{offered:?}"
    );
    let child: Vec<Exchange> = model.requests().into_iter().filter(is_child).collect();
    assert!(!child.is_empty(), "no child request");
    // The rewritten message reaches the child whole, its end marker last.
    let body = child[0].body.to_string();
    let expected = serde_json::to_string(&sandbox.expected_dispatch(TASK)).expect("json");
    assert!(
        body.contains(expected.trim_matches('"')),
        "the child's request lacks the curated message"
    );
    assert!(sandbox.hook_runs().contains(&"PreToolUse READY".to_owned()));
    assert_lead_clean(&model);
}

#[test]
fn a_spawn_that_is_not_ready_is_denied_with_the_reason_when_so_configured() {
    let Some(bin) = codex() else { return };
    let model = FakeModel::start(spawning("change: no-such-change\nImplement the login."));
    let (sandbox, home) = wired(&model, true);
    exec_with(
        &bin,
        &sandbox,
        &home,
        &[],
        &[("CURATE_ON_NOT_READY", "deny")],
    );
    assert!(model.requests().iter().all(|x| !is_child(x)), "a child ran");
    let result = model
        .requests()
        .iter()
        .find_map(|x| x.result_of(SPAWN))
        .expect("the spawn's result");
    assert!(
        result.starts_with("Tool call blocked by PreToolUse hook: curate:"),
        "{result}"
    );
    assert!(result.contains("BLOCKED"), "{result}");
}

#[test]
fn the_kill_switch_leaves_the_spawn_as_written() {
    let Some(bin) = codex() else { return };
    let model = FakeModel::start(spawning(TASK));
    let (sandbox, home) = wired(&model, true);
    exec_with(&bin, &sandbox, &home, &[], &[("CURATE_HOOKS", "0")]);
    assert_eq!(child_message(&model), TASK);
    let runs = sandbox.hook_runs();
    assert!(runs.contains(&"PreToolUse off".to_owned()), "{runs:?}");
}

#[test]
fn unapproved_hooks_inject_nothing_and_doctor_says_why() {
    let Some(bin) = codex() else { return };
    let model = FakeModel::start(spawning(TASK));
    let (sandbox, home) = wired(&model, false);
    exec(&bin, &sandbox, &home);
    // Codex skipped both hooks without a word: the child got the lead's message as written.
    assert_eq!(child_message(&model), TASK);
    assert_eq!(sandbox.hook_runs(), Vec::<String>::new());
    let doctor = sandbox_doctor(&sandbox, &home);
    assert!(
        doctor.contains("the PreToolUse hook is not approved"),
        "{doctor}"
    );
    assert!(
        doctor.contains("`codex exec` skips it without a word"),
        "{doctor}"
    );
}

/// `curate doctor` in the sandbox with Codex's home; its report (exit code not checked).
fn sandbox_doctor(sandbox: &Sandbox, home: &std::path::Path) -> String {
    let out = crate::run(
        sandbox
            .command(std::path::Path::new(crate::curate_bin()))
            .arg("doctor")
            .env("CODEX_HOME", home),
        crate::HOST_TIMEOUT,
    );
    out.stdout
}
