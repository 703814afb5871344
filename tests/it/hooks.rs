//! `curate hook claude-code|opencode`, `curate use` and `curate init --host`: recorded host
//! inputs → exact stdout and exit 0; the files the hooks write; the OpenCode plugin driven
//! by node against the binary.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use crate::{Output, Repo};

/// A recorded input from `fixtures/hooks/`, with `{{ROOT}}` replaced by the repository.
fn recorded(name: &str, repo: &Repo) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/hooks")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let root = serde_json::to_string(&repo.root.to_string_lossy()).unwrap();
    text.replace("\"{{ROOT}}\"", &root).into_bytes()
}

fn hook(repo: &Repo, host: &str, input: &[u8]) -> Output {
    repo.curate().args(["hook", host]).stdin(input).run()
}

/// Stdout as a snapshot: the one JSON object pretty-printed (proving it is one object),
/// or `(nothing)`.
fn shown(out: &Output) -> String {
    assert_eq!(out.code, 0, "a hook always exits 0:\n{}", out.all());
    if out.stdout.is_empty() {
        return "(nothing)".to_owned();
    }
    assert!(out.stdout.ends_with('\n') && out.stdout.trim_end().lines().count() == 1);
    serde_json::to_string_pretty(&out.json()).unwrap()
}

fn prompt_of(v: &serde_json::Value) -> &str {
    v["hookSpecificOutput"]["updatedInput"]["prompt"]
        .as_str()
        .expect("an updatedInput prompt")
}

#[test]
fn a_worker_dispatch_gets_the_curated_prompt_and_every_original_field() {
    let repo = Repo::fixture("hooks");
    let out = hook(&repo, "claude-code", &recorded("agent-worker.json", &repo));
    insta::assert_snapshot!("hook_agent_worker", shown(&out));
    let v = out.json();
    let input = &v["hookSpecificOutput"]["updatedInput"];
    assert_eq!(input["description"], "Implement login");
    assert_eq!(input["model"], "sonnet");
    assert_eq!(input["run_in_background"], false);
    let p = prompt_of(&v);
    assert!(p.starts_with("role: worker\n<!-- curate:begin role=\"worker\" change=\"demo\" -->\n"));
    assert!(p.contains("\n---\nImplement the password login.\nchange: demo\n"));
    assert!(p.ends_with("<!-- curate:end files=5 lines=22 tokens=166 -->"));
    assert_eq!(p.matches("curate:end").count(), 1);
    // It compiled like `curate compile`: the manifest the sticky names exists, with its lock.
    assert!(repo.exists("changes/demo/analysis/worker-context.jsonl"));
    assert!(repo.exists("changes/demo/analysis/worker-context.lock.json"));
    let check = repo.curate().args(["check", "--stale"]).run();
    assert_eq!(check.code, 0, "{}", check.all());
}

#[test]
fn the_role_comes_from_the_agent_type_as_hosts_spell_it_a_role_line_or_an_alias() {
    let repo = Repo::fixture("hooks");
    let out = hook(
        &repo,
        "claude-code",
        &recorded("task-spelled-by-host.json", &repo),
    );
    let v = out.json();
    assert!(prompt_of(&v).starts_with("role: reviewer\n"));
    assert_eq!(
        v["hookSpecificOutput"]["updatedInput"]["subagent_type"],
        "Curate_Reviewer"
    );

    let out = hook(&repo, "claude-code", &recorded("role-line.json", &repo));
    assert!(prompt_of(&out.json()).starts_with("role: explorer\n"));
    assert!(repo.exists("changes/demo/analysis/explorer-context.jsonl"));

    // `trellis-implement` → `implement`, a `[roles]` alias of the worker contract.
    let out = hook(&repo, "claude-code", &recorded("alias.json", &repo));
    insta::assert_snapshot!("hook_alias", shown(&out));
    assert!(prompt_of(&out.json()).starts_with("role: implement\n"));
    assert!(repo.exists("changes/demo/analysis/implement-context.jsonl"));
}

/// A tree snapshot without `.curate/state/`, where every hook run logs itself.
fn without_hook_log(tree: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    tree.into_iter()
        .filter(|(name, _)| !name.contains(".curate/state"))
        .collect()
}

#[test]
fn nothing_is_printed_or_written_when_role_change_or_tool_is_not_curates() {
    let repo = Repo::fixture("hooks");
    for case in [
        "unknown-type.json",
        "no-change.json",
        "other-tool.json",
        "already-injected.json",
        "subagent-start.json",
    ] {
        let before = without_hook_log(repo.snapshot_tree());
        let out = hook(&repo, "claude-code", &recorded(case, &repo));
        assert_eq!(shown(&out), "(nothing)", "{case}");
        // Nothing but the hook log's line saying why (`.curate/state/`, never committed).
        assert_eq!(
            without_hook_log(repo.snapshot_tree()),
            before,
            "{case} wrote something"
        );
    }
}

#[test]
fn bad_input_of_every_kind_gives_nothing_and_exit_0() {
    let repo = Repo::fixture("hooks");
    let huge = {
        let mut v = recorded("agent-worker.json", &repo);
        v.extend(std::iter::repeat_n(b' ', 9 * 1024 * 1024));
        v
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("garbage", b"}{ not json".to_vec()),
        ("array", b"[1,2]".to_vec()),
        ("invalid UTF-8", b"{\"hook_event_name\": \"PreToolUse\xff\xfe\"}".to_vec()),
        ("huge (over 8 MiB)", huge),
        (
            "prompt not a string",
            br#"{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":7,"subagent_type":"worker"}}"#.to_vec(),
        ),
        (
            "cwd that does not exist",
            br#"{"hook_event_name":"PreToolUse","cwd":"/no/such/folder","tool_name":"Agent","tool_input":{"prompt":"change: demo","subagent_type":"worker"}}"#.to_vec(),
        ),
        (
            "change id that escapes",
            br#"{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"change: ../../etc","subagent_type":"worker"}}"#.to_vec(),
        ),
    ];
    for (name, input) in cases {
        let out = hook(&repo, "claude-code", &input);
        assert_eq!(shown(&out), "(nothing)", "{name}");
        assert_eq!(out.stderr, "", "{name}");
        let out = hook(&repo, "opencode", &input);
        assert_eq!(out.code, 0, "{name}");
        assert_eq!(out.stdout, "{}\n", "{name}");
    }
    assert!(!repo.exists("changes/demo/analysis/worker-context.jsonl"));
}

#[test]
fn blocked_and_over_budget_tell_the_lead_or_deny_when_configured() {
    let repo = Repo::fixture("empty-change");
    let out = hook(&repo, "claude-code", &recorded("blocked.json", &repo));
    insta::assert_snapshot!("hook_blocked", shown(&out));
    let v = out.json();
    assert!(v["hookSpecificOutput"].get("updatedInput").is_none());
    assert!(v["hookSpecificOutput"].get("permissionDecision").is_none());
    assert_eq!(
        v["systemMessage"],
        "curate: BLOCKED (see the hook's context)"
    );
    assert!(!repo.exists("changes"), "a hook makes no change folder");

    // A typo of an existing change: BLOCKED with the ids that look like it, nothing made
    // (the plain layout would have made `changes/demoo/` and dispatched it READY).
    let repo = Repo::fixture("hooks");
    let input = br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"Do it.\nchange: demoo","subagent_type":"worker"}}"#;
    let out = hook(&repo, "claude-code", input);
    let context = out.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        context.contains(
            "BLOCKED: the change folder changes/demoo does not exist; did you mean demo?"
        ),
        "{context}"
    );
    assert!(!repo.exists("changes/demoo"));

    let repo = Repo::fixture("over-budget");
    let input = br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"Plan it.\nchange: big","subagent_type":"planner"}}"#;
    let out = hook(&repo, "claude-code", input);
    let v = out.json();
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.starts_with("curate: the curated context for this dispatch is OVER_BUDGET"));
    assert!(context.contains("hint: add `sections`"));
    assert!(!repo.exists("changes/big/analysis/planner-context.jsonl"));

    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .env("CURATE_ON_NOT_READY", "deny")
        .stdin(input)
        .run();
    let v = out.json();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("OVER_BUDGET")
    );
}

#[test]
fn a_secret_in_scope_never_reaches_the_prompt() {
    let repo = Repo::fixture("hooks");
    let key = "AKIAQ3EGUWJBYZUN7R5Q";
    let secret = "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";
    repo.write(
        "changes/demo/analysis/deploy.md",
        &format!("# Deploy\n\naws_access_key_id = {key}\naws_secret_access_key = {secret}\n"),
    );
    // A link out of the repository, to a file that holds a key.
    std::fs::write(
        repo.root.with_file_name("outside.md"),
        format!("TOKEN={secret}\n"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../../../../outside.md",
        repo.root.join("changes/demo/analysis/env.md"),
    )
    .unwrap();
    let out = hook(&repo, "claude-code", &recorded("agent-worker.json", &repo));
    insta::assert_snapshot!("hook_secret_in_scope", shown(&out));
    let p = prompt_of(&out.json()).to_owned();
    assert!(p.contains("=== changes/demo/analysis/impact.md ==="));
    for leaked in [key, secret] {
        assert!(!out.stdout.contains(leaked), "the hook printed a secret");
        assert!(
            !repo
                .read("changes/demo/analysis/worker-context.jsonl")
                .contains(leaked)
        );
    }
    assert!(
        !p.contains("deploy.md ==="),
        "the file holding a key was inlined"
    );
    assert!(
        !p.contains("env.md ==="),
        "the link out of the repository was followed"
    );
}

#[test]
fn the_change_comes_from_the_environment_then_the_session_binding_then_the_repository() {
    let repo = Repo::fixture("hooks");
    let input = recorded("no-change.json", &repo);
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .env("CURATE_CHANGE", "demo")
        .stdin(&input)
        .run();
    assert!(prompt_of(&out.json()).contains("change=\"demo\""));

    // `curate use` for another session does not apply; for this one it does.
    let used = repo
        .curate()
        .args(["use", "demo", "--session", "other"])
        .run();
    assert_eq!(used.code, 0, "{}", used.all());
    assert_eq!(shown(&hook(&repo, "claude-code", &input)), "(nothing)");
    let used = repo
        .curate()
        .args(["use", "demo", "--session", "sess-none"])
        .run();
    assert_eq!(used.code, 0, "{}", used.all());
    assert!(used.stderr.contains(".curate/state/session-sess-none.json"));
    assert_eq!(
        repo.read(".curate/state/session-sess-none.json"),
        "{\"change\":\"demo\"}\n"
    );
    assert_eq!(repo.read(".curate/state/.gitignore"), "*\n");
    assert!(prompt_of(&hook(&repo, "claude-code", &input).json()).contains("change=\"demo\""));

    // The repository-wide binding serves every session without its own.
    let cleared = repo
        .curate()
        .args(["use", "--clear", "--session", "sess-none"])
        .run();
    assert_eq!(cleared.code, 0, "{}", cleared.all());
    assert_eq!(shown(&hook(&repo, "claude-code", &input)), "(nothing)");
    repo.curate().args(["use", "demo"]).run();
    assert!(prompt_of(&hook(&repo, "claude-code", &input).json()).contains("change=\"demo\""));

    let bad = repo.curate().args(["use", "../x"]).run();
    assert_eq!(bad.code, 2, "{}", bad.all());
}

#[test]
fn subagent_start_points_at_the_manifest_once_for_its_session() {
    let repo = Repo::fixture("hooks");
    hook(&repo, "claude-code", &recorded("agent-worker.json", &repo));
    let other = hook(
        &repo,
        "claude-code",
        &recorded("subagent-start-other-session.json", &repo),
    );
    assert_eq!(shown(&other), "(nothing)");
    let out = hook(
        &repo,
        "claude-code",
        &recorded("subagent-start.json", &repo),
    );
    insta::assert_snapshot!("hook_subagent_start", shown(&out));
    let text = out.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.chars().count() <= 4_000);
    // Used once.
    let again = hook(
        &repo,
        "claude-code",
        &recorded("subagent-start.json", &repo),
    );
    assert_eq!(shown(&again), "(nothing)");
}

#[test]
fn the_kill_switch_and_the_deadline_give_nothing() {
    let repo = Repo::fixture("hooks");
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .env("CURATE_HOOKS", "0")
        .stdin(&recorded("agent-worker.json", &repo))
        .run();
    assert_eq!(shown(&out), "(nothing)");
    assert!(!repo.exists("changes/demo/analysis/worker-context.jsonl"));

    // A host that never closes stdin: the deadline covers reading it.
    let mut child = repo
        .curate()
        .args(["hook", "claude-code"])
        .env("CURATE_HOOK_DEADLINE_MS", "300")
        .spawn();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"hook_event_name\":").unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the hook did not give up at its deadline"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(out.stdout.is_empty());
}

#[test]
fn opencode_answers_the_prompt_or_an_empty_object() {
    let repo = Repo::fixture("hooks");
    let input = format!(
        r#"{{"tool":"task","sessionID":"ses_1","callID":"call_1","directory":{},"args":{{"description":"login","prompt":"Implement it.\nchange: demo","subagent_type":"worker"}}}}"#,
        serde_json::to_string(&repo.root).unwrap()
    );
    let out = hook(&repo, "opencode", input.as_bytes());
    assert_eq!(out.code, 0);
    let v = out.json();
    let p = v["prompt"].as_str().unwrap();
    assert!(p.starts_with("role: worker\n<!-- curate:begin role=\"worker\" change=\"demo\" -->\n"));
    assert!(
        p.ends_with("Implement it.\nchange: demo\n<!-- curate:end files=5 lines=22 tokens=166 -->")
    );
    assert_eq!(v.as_object().unwrap().len(), 1);

    let other = input.replace("\"tool\":\"task\"", "\"tool\":\"bash\"");
    assert_eq!(hook(&repo, "opencode", other.as_bytes()).stdout, "{}\n");
}

/// Node, when the machine has it (`.ci/run` installs it and sets `CURATE_REQUIRE_NODE`).
fn node() -> Option<std::path::PathBuf> {
    let found = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CURATE_REQUIRE_NODE").is_none(),
            "CURATE_REQUIRE_NODE is set but node is not found"
        );
        eprintln!("skipped: node not found");
        return None;
    }
    Some("node".into())
}

#[test]
fn the_opencode_plugin_curates_the_childs_first_message_not_the_leads_call_and_fails_open() {
    let Some(node) = node() else { return };
    let repo = Repo::fixture("hooks");
    let init = repo.curate().args(["init", "--host", "opencode"]).run();
    assert_eq!(init.code, 0, "{}", init.all());
    // Node needs the `.mjs` name to load an ES module outside a package.
    let plugin = repo.root.with_file_name("curate.mjs");
    std::fs::copy(repo.root.join(".opencode/plugins/curate.js"), &plugin).unwrap();
    // As OpenCode 1.18 runs a dispatch: `tool.execute.before` on the lead's `task` call
    // (its `args` are the lead's stored call), then the task tool creates the child session
    // and its first message: `chat.message` with that message's parts.
    let driver = r#"
const [plugin, root] = process.argv.slice(1)
const mod = await import(plugin)
if (Object.keys(mod).join() !== "default") throw new Error("more than one export")
const hooks = await mod.default({ directory: root })
const run = async (tool, args, rewrite) => {
  const output = { args }
  await hooks["tool.execute.before"]({ tool, sessionID: "ses_lead", callID: "c" }, output)
  if (rewrite) args.prompt = rewrite(args.prompt)
  const lead = args.prompt
  const parts = [{ type: "text", text: args.prompt }]
  await hooks["chat.message"]({ sessionID: "ses_child", agent: args.subagent_type }, { message: {}, parts })
  return { lead, child: parts[0].text }
}
const fallback = (p) => `<aiws-context-fallback>
No curated context JSONL.
</aiws-context-fallback>

<aiws-context-instruction>
Use Glob.
</aiws-context-instruction>

---

` + p
const aiws = (p) => `<aiws-context-meta>
role: worker
</aiws-context-meta>

---

` + p
const out = {
  task: await run("task", { prompt: "Implement it.\nchange: demo", subagent_type: "worker" }),
  bash: await run("bash", { prompt: "change: demo", subagent_type: "worker" }),
  unknown: await run("task", { prompt: "Look.\nchange: demo", subagent_type: "Explore" }),
  fallback: await run("task", { prompt: "Fix it.\nchange: demo", subagent_type: "worker" }, fallback),
  aiws: await run("task", { prompt: "Fix it.\nchange: demo", subagent_type: "worker" }, aiws),
}
process.env.CURATE_BIN = "/no/such/curate"
out.missing = await run("task", { prompt: "Implement it.\nchange: demo", subagent_type: "worker" })
console.log(JSON.stringify(out))
"#;
    let mut node = Command::new(node);
    node.args(["--input-type=module", "-e", driver])
        .arg(plugin.to_string_lossy().as_ref())
        .arg(repo.root.to_string_lossy().as_ref())
        // Not on PATH: the plugin runs the binary `init` was run from.
        .env("PATH", "/usr/bin:/bin")
        .env("CURATE_CACHE_DIR", repo.cache_dir())
        .current_dir(&repo.root);
    for inherited in crate::DEVELOPER_ENV {
        node.env_remove(inherited);
    }
    let out = node.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let child = v["task"]["child"].as_str().unwrap();
    assert!(
        child.starts_with("role: worker\n<!-- curate:begin"),
        "{child}"
    );
    assert!(child.ends_with("<!-- curate:end files=5 lines=22 tokens=166 -->"));
    // The lead's stored call is as the lead wrote it: no bundle in the lead's context.
    assert_eq!(v["task"]["lead"], "Implement it.\nchange: demo");
    assert_eq!(v["bash"]["child"], "change: demo");
    assert_eq!(v["unknown"]["child"], "Look.\nchange: demo");
    // The aiws plugin's no-manifest fallback is replaced by curate's bundle, whatever the
    // plugin order; its real injection is left alone: one bundle either way.
    let child = v["fallback"]["child"].as_str().unwrap();
    assert!(
        child.starts_with("role: worker\n<!-- curate:begin"),
        "{child}"
    );
    assert!(!child.contains("aiws-context-fallback"), "{child}");
    assert!(
        child.contains("---\nFix it.\nchange: demo\n<!-- curate:end"),
        "{child}"
    );
    assert_eq!(v["aiws"]["child"], v["aiws"]["lead"]);
    assert_eq!(
        v["missing"]["child"], "Implement it.\nchange: demo",
        "fails open"
    );
}

#[test]
fn init_host_merges_shows_what_changed_and_a_second_run_changes_nothing() {
    let repo = Repo::fixture("hooks");
    repo.write(
        ".claude/settings.json",
        "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}\n    ]\n  }\n}\n",
    );
    let out = repo.curate().args(["init", "--host", "claude-code"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    // The entries run this very binary, by its absolute path (here a cargo target: said).
    let bin = env!("CARGO_BIN_EXE_curate");
    let bin = std::fs::canonicalize(bin).unwrap();
    let bin = bin.to_str().unwrap();
    insta::assert_snapshot!("init_host_claude_code", out.stderr.replace(bin, "[CURATE]"));
    insta::assert_snapshot!(
        "init_host_claude_code_file",
        repo.read(".claude/settings.json").replace(bin, "[CURATE]")
    );
    let before = repo.snapshot_tree();
    for host in ["claude-code", "opencode", "mcp"] {
        repo.curate().args(["init", "--host", host]).run();
    }
    let before2 = repo.snapshot_tree();
    for host in ["claude-code", "opencode", "mcp"] {
        let again = repo.curate().args(["init", "--host", host]).run();
        assert_eq!(again.code, 0, "{}", again.all());
        assert!(again.stderr.contains("nothing changed"), "{}", again.stderr);
    }
    assert_eq!(repo.snapshot_tree(), before2);
    assert_ne!(before, before2);
    let mcp: serde_json::Value = serde_json::from_str(&repo.read(".mcp.json")).unwrap();
    assert_eq!(
        mcp,
        serde_json::json!({"mcpServers": {"curate": {"command": "curate", "args": ["mcp"]}}})
    );
    // Only the host's wiring: no contracts, no config.
    assert!(!repo.exists("contracts/workflow-delegation-contracts.json"));

    // The aiws plugin beside curate's would inject every dispatch twice: said, not touched.
    repo.write(
        ".opencode/plugins/aiws-inject-context.js",
        "export default {}\n",
    );
    let out = repo.curate().args(["init", "--host", "opencode"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr
            .contains("warning: .opencode/plugins/aiws-inject-context.js (the aiws plugin) also injects context into `task` dispatches. Keep exactly one injector: remove"),
        "{}",
        out.stderr
    );
    assert_eq!(
        repo.read(".opencode/plugins/aiws-inject-context.js"),
        "export default {}\n"
    );

    // A broken settings file is named with its position and left as it is.
    repo.write(".claude/settings.json", "{\n  \"hooks\": ,\n}\n");
    let out = repo.curate().args(["init", "--host", "claude-code"]).run();
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(".claude/settings.json:2:"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.read(".claude/settings.json"), "{\n  \"hooks\": ,\n}\n");

    // A key written twice hides its first value from a JSON reader; rewriting the file
    // from what was read would delete it: named at the second, left as it is.
    let twice = "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]}],\n  \"PreToolUse\": []}}\n";
    repo.write(".claude/settings.json", twice);
    let out = repo.curate().args(["init", "--host", "claude-code"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(
            ".claude/settings.json:2:3: the key \"PreToolUse\" is written twice in one object"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(repo.read(".claude/settings.json"), twice);
}

fn hook_input() -> impl Strategy<Value = Vec<u8>> {
    let text = prop_oneof![
        Just(String::new()),
        "[ -~]{0,40}",
        Just("change: demo".to_owned()),
        Just("role: worker\nchange: demo".to_owned()),
        Just("change: ../x".to_owned()),
    ];
    let event = prop_oneof![
        Just("PreToolUse"),
        Just("SubagentStart"),
        Just("Stop"),
        Just(""),
    ];
    let tool = prop_oneof![Just("Agent"), Just("Task"), Just("Bash")];
    let agent = prop_oneof![
        Just("worker"),
        Just("Explore"),
        Just("Curate Reviewer"),
        Just(""),
    ];
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        (event, tool, agent, text).prop_map(|(e, t, a, p)| {
            serde_json::json!({
                "session_id": "p",
                "hook_event_name": e,
                "tool_name": t,
                "agent_type": a,
                "tool_input": {"prompt": p, "subagent_type": a},
            })
            .to_string()
            .into_bytes()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// No stdin makes `curate hook` exit non-zero or print anything but one JSON object.
    #[test]
    fn no_input_breaks_the_hook(input in hook_input()) {
        let repo = Repo::fixture("hooks");
        for host in ["claude-code", "opencode"] {
            let out = hook(&repo, host, &input);
            prop_assert_eq!(out.code, 0);
            if !out.stdout.is_empty() {
                prop_assert!(out.stdout.ends_with('\n'));
                prop_assert_eq!(out.stdout.trim_end().lines().count(), 1);
                let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
                prop_assert!(v.is_object());
            }
        }
    }
}

#[test]
fn a_task_line_inside_the_repository_gives_the_write_boundary_and_one_outside_gives_nothing() {
    let repo = Repo::fixture("hooks");
    repo.write(
        "changes/demo/task.json",
        r#"{"task_id": "demo-1", "title": "Login", "files_owned": ["src/app.rs"], "files_readonly": [], "success_criteria": ["tests pass"]}"#,
    );
    std::fs::write(
        repo.root.with_file_name("outside.json"),
        r#"{"task_id": "x", "title": "x", "files_owned": ["**"], "files_readonly": [], "success_criteria": ["x"]}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink("../outside.json", repo.root.join("linked.json")).unwrap();
    let dispatch = |task: &str| {
        let input = serde_json::json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Agent",
            "tool_input": {"prompt": format!("Do it.\nchange: demo\ntask: {task}"), "subagent_type": "worker"},
        });
        hook(&repo, "claude-code", input.to_string().as_bytes())
    };
    let out = dispatch("changes/demo/task.json");
    let p = prompt_of(&out.json()).to_owned();
    assert!(p.contains("`src/app.rs`"), "{p}");
    for outside in [
        "../outside.json",
        "linked.json",
        "/etc/passwd",
        "missing.json",
    ] {
        assert_eq!(shown(&dispatch(outside)), "(nothing)", "{outside}");
    }
}

#[test]
fn without_a_cwd_in_the_input_the_hook_takes_dash_c_and_its_contracts_flag() {
    let repo = Repo::fixture("hooks");
    let input = br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"Do it.\nchange: demo","subagent_type":"worker"}}"#;
    let root = repo.root.to_string_lossy().into_owned();
    let out = repo
        .curate()
        .cwd("changes")
        .args(["-C", &root, "hook", "claude-code"])
        .stdin(input)
        .run();
    assert!(prompt_of(&out.json()).contains("=== REQUIREMENTS.md ==="));
    // A contracts file named on the hook's command line is the one used.
    repo.write(
        "team-contracts.json",
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("contracts/workflow-delegation-contracts.json"),
        )
        .unwrap()
        .replace("\"REQUIREMENTS.md\"", "\"src/app.rs\""),
    );
    let out = repo
        .curate()
        .args(["--contracts", "team-contracts.json", "hook", "claude-code"])
        .stdin(input)
        .run();
    let p = prompt_of(&out.json()).to_owned();
    assert!(p.contains("=== src/app.rs ==="), "{p}");
    assert!(!p.contains("=== REQUIREMENTS.md ==="));
}

#[test]
fn parallel_dispatches_of_one_role_all_get_the_same_prompt_and_leave_a_consistent_manifest() {
    let repo = Repo::fixture("hooks");
    let input = recorded("agent-worker.json", &repo);
    let outs: Vec<Output> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|_| s.spawn(|| hook(&repo, "claude-code", &input)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = prompt_of(&outs[0].json()).to_owned();
    for out in &outs {
        assert_eq!(prompt_of(&out.json()), first);
    }
    let check = repo.curate().args(["check", "--stale"]).run();
    assert_eq!(check.code, 0, "{}", check.all());
    // One breadcrumb a dispatch, each taken once.
    for _ in 0..6 {
        let out = hook(
            &repo,
            "claude-code",
            &recorded("subagent-start.json", &repo),
        );
        assert_ne!(shown(&out), "(nothing)");
    }
    assert_eq!(
        shown(&hook(
            &repo,
            "claude-code",
            &recorded("subagent-start.json", &repo)
        )),
        "(nothing)"
    );
}

#[test]
fn a_hand_edited_manifest_is_rendered_as_it_stands_and_kept() {
    let repo = Repo::fixture("hooks");
    let input = recorded("agent-worker.json", &repo);
    hook(&repo, "claude-code", &input);
    let manifest = "changes/demo/analysis/worker-context.jsonl";
    let edited: String = repo
        .read(manifest)
        .lines()
        .filter(|l| !l.contains("\"changes/demo/analysis/impact.md\""))
        .map(|l| format!("{l}\n"))
        .collect();
    repo.write(manifest, &edited);
    let out = hook(&repo, "claude-code", &input);
    let p = prompt_of(&out.json()).to_owned();
    assert!(
        !p.contains("=== changes/demo/analysis/impact.md ==="),
        "{p}"
    );
    assert!(p.contains("=== changes/demo/tasks.md ==="));
    assert!(
        p.ends_with("<!-- curate:end files=4 lines=19 tokens=157 -->"),
        "{p}"
    );
    assert_eq!(repo.read(manifest), edited, "the hand edit was overwritten");
}

#[test]
fn every_hook_run_appends_one_line_to_the_hook_log() {
    let repo = Repo::fixture("hooks");
    let input = |prompt: &str| {
        format!(
            r#"{{"hook_event_name":"PreToolUse","session_id":"s1","cwd":{},"tool_name":"Agent","tool_input":{{"prompt":{},"subagent_type":"worker"}}}}"#,
            serde_json::to_string(&repo.root).unwrap(),
            serde_json::to_string(prompt).unwrap()
        )
    };
    assert_eq!(
        hook(
            &repo,
            "claude-code",
            input("Do it.\nchange: demo").as_bytes()
        )
        .code,
        0
    );
    assert_eq!(
        hook(&repo, "claude-code", input("Do it.").as_bytes()).code,
        0
    );
    let off = repo
        .curate()
        .args(["hook", "claude-code"])
        .env("CURATE_HOOKS", "0")
        .stdin(input("Do it.\nchange: demo").as_bytes())
        .run();
    assert_eq!((off.code, off.stdout.as_str()), (0, ""));
    let log = repo.read(".curate/state/hooks.jsonl");
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{log}");
    assert_eq!(lines[0]["status"], "READY");
    assert_eq!(lines[0]["host"], "claude-code");
    assert_eq!(lines[0]["event"], "PreToolUse");
    assert_eq!(lines[0]["role"], "worker");
    assert_eq!(lines[0]["change"], "demo");
    assert!(lines[0]["ms"].is_u64() && lines[0]["time"].is_string());
    assert_eq!(lines[1]["status"], "skipped");
    assert!(
        lines[1]["reason"]
            .as_str()
            .unwrap()
            .starts_with("no change"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2]["status"], "off");
    // Off, the input is still read for the log: its event is named.
    assert_eq!(lines[2]["event"], "PreToolUse", "{}", lines[2]);

    // A skip says why in the lead's words: an id that is no id is not "no `change:` line".
    for (prompt, reason) in [
        ("Do it.\nchange: ../demo", "invalid change id \"../demo\""),
        (
            "Do it.\nchange: demo\ntask: ../t.json",
            "task: \"../t.json\" climbs out of the repository",
        ),
    ] {
        assert_eq!(hook(&repo, "claude-code", input(prompt).as_bytes()).code, 0);
        let log = repo.read(".curate/state/hooks.jsonl");
        let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
        assert_eq!(last["status"], "skipped", "{last}");
        assert!(
            last["reason"].as_str().unwrap().starts_with(reason),
            "{last}"
        );
    }
}

/// An input the host never sends still leaves its trace once the repository is known: one
/// `skipped` line saying what was wrong (a dispatch that went uncurated is never silent).
#[test]
fn a_malformed_dispatch_is_logged_with_what_was_wrong() {
    let repo = Repo::fixture("hooks");
    let root = serde_json::to_string(&repo.root).unwrap();
    let file = serde_json::to_string(&repo.root.join("AI_PROJECT.md")).unwrap();
    let claude = |rest: &str| {
        format!(
            r#"{{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","cwd":{root},{rest}}}"#
        )
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "claude-code",
            claude(r#""tool_input":{"prompt":5,"subagent_type":"worker"}"#),
            "\"tool_input.prompt\" is no string",
        ),
        (
            "claude-code",
            claude(r#""tool_input":"str""#),
            "\"tool_input\" is no object",
        ),
        (
            "claude-code",
            claude(r#""tool_input":{"prompt":"change: demo","subagent_type":["worker"]}"#),
            "\"tool_input.subagent_type\" is no string",
        ),
        (
            "claude-code",
            format!(
                r#"{{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","cwd":{file},"tool_input":{{"prompt":"change: demo","subagent_type":"worker"}}}}"#
            ),
            "\"cwd\" is no folder",
        ),
        (
            "claude-code",
            claude(r#""tool_input":{"prompt":"change: demo","subagent_type":"worker"}"#) + " x",
            "not one JSON object",
        ),
        (
            "opencode",
            format!(
                r#"{{"event":"task","tool":"task","sessionID":"a","directory":{root},"args":{{"prompt":7,"subagent_type":"worker"}}}}"#
            ),
            "\"args.prompt\" is no string",
        ),
    ];
    for (host, input, why) in cases {
        let before = if repo.exists(".curate/state/hooks.jsonl") {
            repo.read(".curate/state/hooks.jsonl")
        } else {
            String::new()
        };
        let out = hook(&repo, host, input.as_bytes());
        assert_eq!(out.code, 0, "{input}: {}", out.all());
        let log = repo.read(".curate/state/hooks.jsonl");
        let added: Vec<&str> = log[before.len()..].lines().collect();
        assert_eq!(added.len(), 1, "{input}: {log}");
        let line: serde_json::Value = serde_json::from_str(added[0]).unwrap();
        assert_eq!(line["status"], "skipped", "{line}");
        assert_eq!(
            line["reason"],
            format!("malformed input: {why}"),
            "{input}: {line}"
        );
    }
}

/// `.mcp.json` runs `curate` by name: when it is not on PATH, doctor says to put it there
/// (running `init --host mcp` again would change nothing).
#[test]
fn doctor_tells_how_to_reach_curate_from_an_mcp_client() {
    let repo = Repo::fixture("hooks");
    assert_eq!(repo.curate().args(["init", "--host", "mcp"]).run().code, 0);
    let out = repo
        .curate()
        .args(["doctor"])
        .env("PATH", "/nonexistent")
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.all().contains("curate is not found on this PATH: every dispatch goes uncurated; put the curate binary on the PATH the MCP client runs with"),
        "{}",
        out.all()
    );
}

#[test]
fn a_token_the_dispatch_names_is_never_in_the_hook_log_nor_in_doctor() {
    let repo = Repo::fixture("hooks");
    let token = "ghp_R7mK2pQ9xV4nL8wT3yH6jB1cF5dG0sZeAa9u";
    let input = |prompt: &str, agent: &str| {
        format!(
            r#"{{"hook_event_name":"PreToolUse","session_id":"s1","cwd":{},"tool_name":"Agent","tool_input":{{"prompt":{},"subagent_type":{}}}}}"#,
            serde_json::to_string(&repo.root).unwrap(),
            serde_json::to_string(prompt).unwrap(),
            serde_json::to_string(agent).unwrap()
        )
    };
    for (prompt, agent) in [
        (format!("Do it.\nchange: {token}"), "worker"),
        ("Do it.\nchange: demo".to_owned(), token),
        (
            format!("Do it.\nchange: demo\ntask: docs/{token}.json"),
            "worker",
        ),
        (format!("Do it.\nchange: {token}\nx"), "worker"),
    ] {
        let out = hook(&repo, "claude-code", input(&prompt, agent).as_bytes());
        assert_eq!(out.code, 0, "{}", out.all());
        assert!(!out.all().contains("R7mK2pQ9"), "{}", out.all());
    }
    let log = repo.read(".curate/state/hooks.jsonl");
    assert_eq!(log.lines().count(), 4, "{log}");
    assert!(!log.contains("R7mK2pQ9"), "{log}");
    assert!(log.contains("<secret: github-pat>"), "{log}");
    // A log written before (by an older curate, by hand) is shown redacted too.
    let mut old = log.clone();
    old.push_str(&format!(
        r#"{{"time":"2026-01-01T00:00:00Z","host":"claude-code","event":"PreToolUse","role":"worker","change":"{token}","status":"skipped","reason":"see {token}","ms":1}}"#
    ));
    old.push('\n');
    repo.write(".curate/state/hooks.jsonl", &old);
    for args in [&["doctor"][..], &["doctor", "--format", "json"]] {
        let out = repo.curate().args(args).run();
        assert!(!out.all().contains("R7mK2pQ9"), "{}", out.all());
        assert!(out.all().contains("<secret: github-pat>"), "{}", out.all());
    }
    // A repository whose own path holds a token: doctor names it redacted, its JSON stays JSON.
    let inner = repo.root.join(format!("clones/{token}/app"));
    std::fs::create_dir_all(inner.join(".git")).unwrap();
    let dir = inner.to_string_lossy().into_owned();
    for args in [
        &["-C", &dir, "doctor"][..],
        &["-C", &dir, "doctor", "--format", "json"],
    ] {
        let out = repo.curate().args(args).run();
        assert!(!out.all().contains("R7mK2pQ9"), "{}", out.all());
        assert!(
            out.stdout.contains("<secret: github-pat>"),
            "{}",
            out.stdout
        );
        if args.len() == 5 {
            let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
            // The folders after the token stay: two repositories under it are told apart.
            assert!(
                v["root"]
                    .as_str()
                    .unwrap()
                    .ends_with("<secret: github-pat>/app"),
                "{v}"
            );
        }
    }
}

#[test]
fn doctor_reports_the_wiring_and_fails_when_the_binary_is_gone() {
    let repo = Repo::fixture("hooks");
    let none = repo.curate().args(["doctor"]).run();
    assert_eq!(none.code, 1, "{}", none.all());
    assert!(
        none.stdout.contains("problem: no host is wired"),
        "{}",
        none.stdout
    );

    assert_eq!(
        repo.curate()
            .args(["init", "--host", "claude-code"])
            .run()
            .code,
        0
    );
    let input = format!(
        r#"{{"hook_event_name":"PreToolUse","session_id":"s1","cwd":{},"tool_name":"Agent","tool_input":{{"prompt":"Do it.\nchange: demo","subagent_type":"worker"}}}}"#,
        serde_json::to_string(&repo.root).unwrap()
    );
    hook(&repo, "claude-code", input.as_bytes());
    repo.write(
        ".opencode/plugins/aiws-inject-context.js",
        "export default {}\n",
    );
    let ok = repo.curate().args(["doctor", "--format", "json"]).run();
    assert_eq!(ok.code, 0, "{}", ok.all());
    let v = ok.json();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["workflow"], "curate");
    assert_eq!(v["hosts"][0]["host"], "claude-code");
    assert_eq!(
        v["hosts"][0]["entries"],
        serde_json::json!(["PreToolUse", "SubagentStart"])
    );
    assert!(v["hosts"][0]["found"].is_string());
    assert_eq!(
        v["other_injectors"],
        serde_json::json!([".opencode/plugins/aiws-inject-context.js"])
    );
    assert_eq!(v["last_hook_runs"][0]["status"], "READY");

    // The binary the settings run is gone (moved, a cleaned cargo target): every dispatch
    // would go uncurated, and the doctor says so.
    let settings = repo.read(".claude/settings.json");
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_curate")).unwrap();
    repo.write(
        ".claude/settings.json",
        &settings.replace(bin.to_str().unwrap(), "/no/such/curate"),
    );
    let gone = repo.curate().args(["doctor"]).run();
    assert_eq!(gone.code, 1, "{}", gone.all());
    assert!(
        gone.stdout.contains("claude-code  .claude/settings.json: PreToolUse, SubagentStart → /no/such/curate (NOT FOUND)"),
        "{}",
        gone.stdout
    );
    assert!(
        gone.stdout.contains(
            "problem: claude-code: /no/such/curate is not found: every dispatch goes uncurated"
        ),
        "{}",
        gone.stdout
    );

    // A settings file that is no JSON: named at its place, as `init` names it (Claude Code
    // cannot read its hooks either), not just "not wired".
    repo.write(".claude/settings.json", &format!("{settings},\n"));
    let broken = repo.curate().args(["doctor"]).run();
    assert_eq!(broken.code, 1, "{}", broken.all());
    let line = settings.lines().count() + 1;
    assert!(
        broken.stdout.contains(&format!(
            "problem: claude-code: .claude/settings.json:{line}:1: invalid JSON: trailing characters: Claude Code cannot read it"
        )),
        "{}",
        broken.stdout
    );
}
