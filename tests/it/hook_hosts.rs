//! The hooks of the fourth round of hosts (SPEC §9.3): everything under `curate hook` exits
//! 0 (a host reads exit 2 as "block the tool call"); VS Code's calls through the Claude Code
//! entry; Codex's `curate hook codex`, `init --host codex` and what `doctor` says of it.

use crate::{Output, Repo};

/// The hook log's lines, parsed.
fn hook_log(repo: &Repo) -> Vec<serde_json::Value> {
    let path = repo.root.join(".curate/state/hooks.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn codex_input(repo: &Repo, tool_input: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "session_id": "01a2b3",
        "turn_id": "01a2b4",
        "transcript_path": null,
        "cwd": repo.root,
        "hook_event_name": "PreToolUse",
        "model": "fake-model",
        "permission_mode": "bypassPermissions",
        "tool_name": "spawn_agent",
        "tool_use_id": "call_fake_1",
        "tool_input": tool_input,
    }))
    .unwrap()
}

/// Exit 0, nothing on stdout, one warning line on stderr.
fn fails_open(out: &Output, what: &str) {
    assert_eq!(out.code, 0, "{what}: {}", out.all());
    assert_eq!(out.stdout, "", "{what}: {}", out.all());
    assert_eq!(out.stderr.lines().count(), 1, "{what}: {}", out.all());
    assert!(
        out.stderr.starts_with("curate: warning: hook "),
        "{what}: {}",
        out.all()
    );
}

#[test]
fn a_hook_this_curate_cannot_answer_exits_0_says_why_and_logs_it() {
    let repo = Repo::fixture("hooks");
    let input = codex_input(
        &repo,
        &serde_json::json!({"message": "change: demo\nDo it.", "agent_type": "worker"}),
    );
    let cases: [(&[&str], &str); 4] = [
        (
            &["hook", "no-such-host"],
            "answers no host \"no-such-host\"",
        ),
        (
            &["hook", "claude-code", "--bogus"],
            "unexpected argument '--bogus'",
        ),
        (&["hook"], "no host named"),
        (
            &["--role", "worker", "hook", "claude-code"],
            "compile options",
        ),
    ];
    for (i, (args, why)) in cases.iter().enumerate() {
        let out = repo.curate().args(*args).stdin(&input).run();
        fails_open(&out, &args.join(" "));
        assert!(out.stderr.contains(why), "{}", out.all());
        // The repository the input names has the line, whatever the command line was.
        let log = hook_log(&repo);
        assert_eq!(log.len(), i + 1, "{log:?}");
        let last = &log[i];
        assert_eq!(last["status"], "skipped");
        assert_eq!(last["event"], "PreToolUse");
        assert!(last["reason"].as_str().unwrap().contains(why), "{last}");
    }
    assert_eq!(hook_log(&repo)[0]["host"], "no-such-host");
    // Nothing compiled: no manifest for the worker.
    assert!(!repo.exists("changes/demo/analysis/worker-context.jsonl"));
    // Outside `curate hook`, a usage error is still one (exit 2).
    let out = repo.curate().args(["check", "--bogus"]).run();
    assert_eq!(out.code, 2, "{}", out.all());
}

/// VS Code's agent runs `.claude/settings.json`'s entries on every tool call, matchers
/// ignored, in either casing.
fn vscode_input(
    repo: &Repo,
    camel: bool,
    event: &str,
    tool: &str,
    input: &serde_json::Value,
) -> Vec<u8> {
    let (event_key, session_key) = if camel {
        ("hookEventName", "sessionId")
    } else {
        ("hook_event_name", "session_id")
    };
    serde_json::to_vec(&serde_json::json!({
        "timestamp": "2026-09-01T10:00:00.000Z",
        "cwd": repo.root,
        event_key: event,
        session_key: "vscode-1",
        "transcript_path": "/home/u/.vscode/t.json",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "t1",
    }))
    .unwrap()
}

#[test]
fn vs_codes_other_tool_calls_get_nothing_and_touch_nothing() {
    let repo = Repo::fixture("hooks");
    let before = repo.snapshot_tree();
    for camel in [true, false] {
        for (event, tool, input) in [
            (
                "PreToolUse",
                "create_file",
                serde_json::json!({"filePath": "/x/a.ts", "content": "change: demo"}),
            ),
            (
                "PreToolUse",
                "run_in_terminal",
                serde_json::json!({"command": "ls"}),
            ),
            (
                "PostToolUse",
                "replace_string_in_file",
                serde_json::json!({"filePath": "a"}),
            ),
            ("UserPromptSubmit", "", serde_json::json!({})),
        ] {
            let out = repo
                .curate()
                .args(["hook", "claude-code"])
                .stdin(&vscode_input(&repo, camel, event, tool, &input))
                .run();
            assert_eq!(
                (out.code, out.stdout.as_str(), out.stderr.as_str()),
                (0, "", ""),
                "{tool}"
            );
        }
    }
    // No compile, no log line: the repository is as it was.
    assert_eq!(repo.snapshot_tree(), before);
}

#[test]
fn vs_codes_sub_agent_tool_gets_the_curated_prompt_and_its_pointer() {
    let repo = Repo::fixture("hooks");
    let input = serde_json::json!({
        "prompt": "Implement the password login.\nchange: demo",
        "description": "Implement login",
        "agentName": "worker",
    });
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(&vscode_input(
            &repo,
            true,
            "PreToolUse",
            "runSubagent",
            &input,
        ))
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let v = out.json();
    let updated = &v["hookSpecificOutput"]["updatedInput"];
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
    assert_eq!(updated["description"], "Implement login");
    assert_eq!(updated["agentName"], "worker");
    assert_eq!(updated.as_object().unwrap().len(), 3, "{updated}");
    let p = updated["prompt"].as_str().unwrap();
    assert!(p.starts_with("role: worker\n<!-- curate:begin role=\"worker\" change=\"demo\" -->\n"));
    assert!(p.ends_with("-->") && p.matches("curate:end").count() == 1);
    // VS Code's SubagentStart, camelCase: the pointer at the manifest.
    let start = serde_json::json!({
        "hookEventName": "SubagentStart",
        "sessionId": "vscode-1",
        "cwd": repo.root,
        "agent_id": "a1",
        "agent_type": "worker",
    });
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(&serde_json::to_vec(&start).unwrap())
        .run();
    let v = out.json();
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("changes/demo/analysis/worker-context.jsonl"),
        "{context}"
    );
}

fn codex_hook(repo: &Repo, input: &[u8]) -> Output {
    repo.curate().args(["hook", "codex"]).stdin(input).run()
}

#[test]
fn a_codex_spawn_gets_the_curated_message_and_keeps_every_other_field() {
    let repo = Repo::fixture("hooks");
    let spawn = serde_json::json!({
        "message": "Implement the password login.\nchange: demo",
        "agent_type": "worker",
        "fork_context": false,
        "reasoning_effort": "low",
    });
    let out = codex_hook(&repo, &codex_input(&repo, &spawn));
    assert_eq!(out.code, 0, "{}", out.all());
    let v = out.json();
    let hso = &v["hookSpecificOutput"];
    // Codex accepts `updatedInput` only with "allow", and nothing else beside them.
    assert_eq!(hso["hookEventName"], "PreToolUse");
    assert_eq!(hso["permissionDecision"], "allow");
    assert_eq!(v.as_object().unwrap().len(), 1, "{v}");
    let updated = hso["updatedInput"].as_object().unwrap();
    assert_eq!(updated.len(), 4, "{updated:?}");
    assert_eq!(updated["agent_type"], "worker");
    assert_eq!(updated["fork_context"], false);
    assert_eq!(updated["reasoning_effort"], "low");
    let message = updated["message"].as_str().unwrap();
    // The same prompt as Claude Code's, whose end marker is last and only.
    let claude = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(
            &serde_json::to_vec(&serde_json::json!({
                "session_id": "s2", "cwd": repo.root, "hook_event_name": "PreToolUse",
                "tool_name": "Agent",
                "tool_input": {"prompt": spawn["message"], "subagent_type": "worker"},
            }))
            .unwrap(),
        )
        .run()
        .json();
    assert_eq!(
        message,
        claude["hookSpecificOutput"]["updatedInput"]["prompt"]
    );
    assert!(
        message
            .starts_with("role: worker\n<!-- curate:begin role=\"worker\" change=\"demo\" -->\n")
    );
    assert!(
        message.contains("\n---\nImplement the password login.\nchange: demo\n<!-- curate:end ")
    );
    assert_eq!(message.matches("curate:end").count(), 1);
    assert_eq!(hook_log(&repo)[0]["host"], "codex");
    assert_eq!(hook_log(&repo)[0]["status"], "READY");

    // SubagentStart (the parent's session id, the child's agent type): the pointer, within
    // Codex's 2,500-token cap.
    let start = serde_json::json!({
        "session_id": "01a2b3", "turn_id": "t", "cwd": repo.root, "model": "fake-model",
        "hook_event_name": "SubagentStart", "permission_mode": "bypassPermissions",
        "agent_id": "019a", "agent_type": "worker",
    });
    let out = codex_hook(&repo, &serde_json::to_vec(&start).unwrap());
    let context = out.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        context.contains("changes/demo/analysis/worker-context.jsonl"),
        "{context}"
    );
    assert!(context.len() < 10_000);
    // Used once.
    let again = codex_hook(&repo, &serde_json::to_vec(&start).unwrap());
    assert_eq!(again.stdout, "");
}

#[test]
fn a_codex_spawn_by_items_multi_agent_v2_and_the_default_agent() {
    let repo = Repo::fixture("hooks");
    // `items`: the text parts become one part holding the prompt, the others kept.
    let spawn = serde_json::json!({
        "items": [
            {"type": "text", "text": "Implement the password login."},
            {"type": "mention", "name": "src", "path": "src"},
            {"type": "text", "text": "role: worker\nchange: demo"},
        ],
    });
    let v = codex_hook(&repo, &codex_input(&repo, &spawn)).json();
    let items = v["hookSpecificOutput"]["updatedInput"]["items"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[1]["type"], "mention");
    let text = items[0]["text"].as_str().unwrap();
    assert!(text.contains(
        "---\nImplement the password login.\nrole: worker\nchange: demo\n<!-- curate:end"
    ));
    // Multi-agent v2 reports the spawn as `collaborationspawn_agent`, with `task_name`.
    let mut input: serde_json::Value = serde_json::from_slice(&codex_input(
        &repo,
        &serde_json::json!({"task_name": "login", "message": "role: worker\nchange: demo\nDo it.", "fork_turns": "none"}),
    ))
    .unwrap();
    input["tool_name"] = "collaborationspawn_agent".into();
    let v = codex_hook(&repo, &serde_json::to_vec(&input).unwrap()).json();
    let updated = &v["hookSpecificOutput"]["updatedInput"];
    assert_eq!(updated["task_name"], "login");
    assert_eq!(updated["fork_turns"], "none");
    assert!(
        updated["message"]
            .as_str()
            .unwrap()
            .starts_with("role: worker\n")
    );
    // Another of Codex's tools, and a spawn with no role: nothing.
    input["tool_name"] = "multi_agent_v1wait_agent".into();
    assert_eq!(
        codex_hook(&repo, &serde_json::to_vec(&input).unwrap()).stdout,
        ""
    );
    let plain = codex_input(
        &repo,
        &serde_json::json!({"message": "change: demo\nDo it."}),
    );
    let out = codex_hook(&repo, &plain);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.all());
}

#[test]
fn a_codex_spawn_not_ready_tells_the_lead_or_is_denied_and_the_kill_switch_holds() {
    let repo = Repo::fixture("hooks");
    let spawn = serde_json::json!({"message": "change: nope\nDo it.", "agent_type": "worker"});
    let out = codex_hook(&repo, &codex_input(&repo, &spawn));
    let v = out.json();
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.starts_with("curate: the curated context for this dispatch is BLOCKED"),
        "{context}"
    );
    assert!(
        v["hookSpecificOutput"].get("permissionDecision").is_none(),
        "{v}"
    );
    let out = repo
        .curate()
        .args(["hook", "codex"])
        .env("CURATE_ON_NOT_READY", "deny")
        .stdin(&codex_input(&repo, &spawn))
        .run();
    let v = out.json();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        !v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    let ready = serde_json::json!({"message": "change: demo\nDo it.", "agent_type": "worker"});
    let out = repo
        .curate()
        .args(["hook", "codex"])
        .env("CURATE_HOOKS", "0")
        .stdin(&codex_input(&repo, &ready))
        .run();
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert_eq!(hook_log(&repo).last().unwrap()["status"], "off");
    // Garbage: nothing, exit 0.
    let out = codex_hook(&repo, b"{\"hook_event_name\": 3");
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
}

#[test]
fn init_host_codex_merges_says_what_is_left_and_doctor_recomputes_the_approvals() {
    let repo = Repo::fixture("hooks");
    let home = repo.root.with_file_name("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let home_s = home.to_string_lossy().into_owned();
    repo.write(
        ".codex/hooks.json",
        r#"{"hooks": {"PreToolUse": [{"matcher": "shell", "hooks": [{"type": "command", "command": "lint"}]}]}}"#,
    );
    let init = || {
        repo.curate()
            .args(["init", "--host", "codex"])
            .env("CODEX_HOME", &home_s)
            .run()
    };
    let out = init();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr
            .contains("+ hooks.PreToolUse: matcher \"spawn_agent|collaborationspawn_agent\""),
        "{}",
        out.all()
    );
    assert!(
        out.stderr.contains("trust_level = \"trusted\""),
        "{}",
        out.all()
    );
    assert!(
        out.stderr.contains("curate approves nothing itself"),
        "{}",
        out.all()
    );
    let hooks: serde_json::Value = serde_json::from_str(&repo.read(".codex/hooks.json")).unwrap();
    assert_eq!(
        hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "lint"
    );
    assert!(
        hooks["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with(" hook codex")
    );
    let written = repo.read(".codex/hooks.json");
    let again = init();
    assert!(
        again
            .stderr
            .contains(".codex/hooks.json already wired; nothing changed"),
        "{}",
        again.all()
    );
    assert_eq!(repo.read(".codex/hooks.json"), written);
    // Nothing approved by curate: the user's configuration is untouched.
    assert!(!home.join("config.toml").exists());

    let doctor = || {
        repo.curate()
            .args(["doctor", "--format", "json"])
            .env("CODEX_HOME", &home_s)
            .run()
    };
    let out = doctor();
    assert_eq!(out.code, 1, "{}", out.all());
    let problems = out.json()["problems"].to_string();
    assert!(
        problems.contains("the project is not trusted"),
        "{problems}"
    );
    assert!(
        problems.contains("the PreToolUse hook is not approved"),
        "{problems}"
    );
    // The user trusts the project and approves the hooks with the lines `init` printed.
    // (Output shows the repository as `[ROOT]`.)
    let lines: String = init()
        .stderr
        .lines()
        .skip_while(|l| !l.contains("[projects."))
        .filter(|l| l.starts_with("       "))
        .map(|l| {
            format!(
                "{}\n",
                l.trim().replace("[ROOT]", &repo.root.to_string_lossy())
            )
        })
        .collect();
    assert_eq!(
        lines.matches("trusted_hash = \"sha256:").count(),
        2,
        "{lines}"
    );
    std::fs::write(home.join("config.toml"), &lines).unwrap();
    let out = doctor();
    let v = out.json();
    let codex = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == "codex")
        .unwrap()
        .clone();
    assert_eq!(
        codex["entries"],
        serde_json::json!(["PreToolUse (approved)", "SubagentStart (approved)"]),
        "{}",
        out.all()
    );
    assert_eq!(codex["problems"], serde_json::json!([]));
    // An edit of the entry un-approves it, and doctor says so.
    repo.write(
        ".codex/hooks.json",
        &written.replace("\"timeout\": 30", "\"timeout\": 31"),
    );
    let out = doctor();
    let problems = out.json()["problems"].to_string();
    assert!(
        problems.contains("the PreToolUse hook was approved, but its entry changed since"),
        "{problems}"
    );
    assert_eq!(out.code, 1);
}

#[test]
fn init_host_mcp_also_wires_codexs_config_keeping_it_as_written() {
    let repo = Repo::fixture("hooks");
    repo.write(
        ".codex/config.toml",
        "# my settings\nmodel = \"o3\"   # kept\n",
    );
    let out = repo.curate().args(["init", "--host", "mcp"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(out.stderr.contains("+ mcp_servers.curate"), "{}", out.all());
    assert!(out.stderr.contains("not through MCP"), "{}", out.all());
    let text = repo.read(".codex/config.toml");
    assert!(
        text.starts_with("# my settings\nmodel = \"o3\"   # kept\n"),
        "{text}"
    );
    let v: toml::Table = text.parse().unwrap();
    assert_eq!(
        v["mcp_servers"]["curate"]["command"].as_str(),
        Some("curate")
    );
    let out = repo.curate().args(["init", "--host", "mcp"]).run();
    assert!(
        out.stderr
            .contains(".codex/config.toml already wired; nothing changed")
    );
    assert_eq!(repo.read(".codex/config.toml"), text);
    // A broken file is named with its place and left alone.
    repo.write(".codex/config.toml", "model = \n");
    let out = repo.curate().args(["init", "--host", "mcp"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(".codex/config.toml:1:"),
        "{}",
        out.all()
    );
    assert_eq!(repo.read(".codex/config.toml"), "model = \n");
}

#[test]
fn copilots_task_leaves_the_context_for_the_sub_agents_start_and_rewrites_nothing() {
    let repo = Repo::fixture("hooks");
    let args = serde_json::json!({"name": "worker", "prompt": "role: worker\nchange: demo\nDo it.",
                                  "agent_type": "general-purpose", "description": "login"});
    // `toolArgs` as an object and as a JSON string.
    for (session, tool_args) in [
        ("c-1", args.clone()),
        ("c-2", serde_json::json!(args.to_string())),
    ] {
        let pre = serde_json::json!({"sessionId": session, "timestamp": 1_796_675_355_042_u64,
            "cwd": repo.root, "toolName": "task", "toolArgs": tool_args});
        let out = repo
            .curate()
            .args(["hook", "copilot"])
            .stdin(&serde_json::to_vec(&pre).unwrap())
            .run();
        // Nothing rewritten: Copilot would keep the rewrite in the lead's history.
        assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.all());
        let start = serde_json::json!({"sessionId": session, "timestamp": 1, "cwd": repo.root,
            "transcriptPath": "/x/events.jsonl", "agentName": "general-purpose",
            "agentId": "a1", "agentType": "general-purpose"});
        let out = repo
            .curate()
            .args(["hook", "copilot"])
            .stdin(&serde_json::to_vec(&start).unwrap())
            .run();
        let v = out.json();
        assert_eq!(v.as_object().unwrap().len(), 1, "{v}");
        let context = v["additionalContext"].as_str().unwrap();
        assert!(
            context.starts_with(
                "role: worker\n<!-- curate:begin role=\"worker\" change=\"demo\" -->\n"
            )
        );
        assert!(context.ends_with(" -->\n---"), "{context}");
        assert_eq!(context.matches("<!-- curate:end").count(), 1);
        assert!(!context.contains("Do it."), "the task is Copilot's to add");
    }
    let statuses: Vec<String> = hook_log(&repo)
        .iter()
        .map(|l| format!("{} {} {}", l["host"], l["event"], l["status"]).replace('"', ""))
        .collect();
    assert_eq!(
        statuses,
        ["copilot preToolUse READY", "copilot subagentStart READY"].repeat(2)
    );
    // Another tool: nothing, no log line.
    let other = serde_json::json!({"sessionId": "c", "cwd": repo.root, "toolName": "bash", "toolArgs": {"command": "ls"}});
    let out = repo
        .curate()
        .args(["hook", "copilot"])
        .stdin(&serde_json::to_vec(&other).unwrap())
        .run();
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert_eq!(hook_log(&repo).len(), 4);
    // Not ready, deny configured: a denial with its reason.
    let blocked = serde_json::json!({"sessionId": "c", "cwd": repo.root, "toolName": "task",
        "toolArgs": {"prompt": "role: worker\nchange: nope", "agent_type": "general-purpose"}});
    let out = repo
        .curate()
        .args(["hook", "copilot"])
        .env("CURATE_ON_NOT_READY", "deny")
        .stdin(&serde_json::to_vec(&blocked).unwrap())
        .run();
    let v = out.json();
    assert_eq!(v["permissionDecision"], "deny");
    assert!(
        v["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("BLOCKED")
    );
}

#[test]
fn init_host_copilot_writes_curates_file_once_and_doctor_reads_it() {
    let repo = Repo::fixture("hooks");
    let out = repo.curate().args(["init", "--host", "copilot"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    let text = repo.read(".github/hooks/curate.json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["hooks"]["preToolUse"][0]["matcher"], "task");
    // A command that fails would deny the dispatch in Copilot: it exits 0 without curate.
    let command = v["hooks"]["subagentStart"][0]["command"].as_str().unwrap();
    assert!(command.ends_with(" hook copilot || true"), "{command}");
    let again = repo.curate().args(["init", "--host", "copilot"]).run();
    assert!(
        again.stderr.contains("already wired; nothing changed"),
        "{}",
        again.all()
    );
    assert_eq!(repo.read(".github/hooks/curate.json"), text);
    let doctor = repo
        .curate()
        .args(["doctor", "--format", "json"])
        .run()
        .json();
    let copilot = doctor["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == "copilot")
        .unwrap()
        .clone();
    assert_eq!(copilot["wired"], true);
    assert_eq!(copilot["problems"], serde_json::json!([]));
    // A file of the user's own is never written over without --force.
    repo.write(
        ".github/hooks/curate.json",
        "{\"version\": 1, \"hooks\": {}}\n",
    );
    let out = repo.curate().args(["init", "--host", "copilot"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        repo.read(".github/hooks/curate.json"),
        "{\"version\": 1, \"hooks\": {}}\n"
    );
}

#[test]
fn geminis_invoke_agent_gets_the_curated_prompt_and_init_wires_it_once() {
    let repo = Repo::fixture("hooks");
    let input = |tool: &str| {
        serde_json::to_vec(&serde_json::json!({
            "session_id": "g-1", "transcript_path": "/x/chat.jsonl", "cwd": repo.root,
            "hook_event_name": "BeforeTool", "timestamp": "2026-12-07T20:44:02.482Z",
            "tool_name": tool,
            "tool_input": {"agent_name": "generalist", "prompt": "role: worker\nchange: demo\nDo it."},
        }))
        .unwrap()
    };
    let out = repo
        .curate()
        .args(["hook", "gemini"])
        .stdin(&input("invoke_agent"))
        .run();
    let v = out.json();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "BeforeTool");
    let ti = &v["hookSpecificOutput"]["tool_input"];
    assert_eq!(ti["agent_name"], "generalist");
    let p = ti["prompt"].as_str().unwrap();
    assert!(p.starts_with("role: worker\n<!-- curate:begin role=\"worker\" change=\"demo\" -->\n"));
    assert!(p.ends_with("---\nrole: worker\nchange: demo\nDo it.\n<!-- curate:end files=5 lines=22 tokens=166 -->"), "{p}");
    let out = repo
        .curate()
        .args(["hook", "gemini"])
        .stdin(&input("read_file"))
        .run();
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));

    repo.write(".gemini/settings.json", "{\"model\": {\"name\": \"x\"}}\n");
    let out = repo.curate().args(["init", "--host", "gemini"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(out.stderr.contains("(timeout 30000 ms)"), "{}", out.all());
    let text = repo.read(".gemini/settings.json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["model"]["name"], "x");
    assert_eq!(v["hooks"]["BeforeTool"][0]["matcher"], "^invoke_agent$");
    let again = repo.curate().args(["init", "--host", "gemini"]).run();
    assert!(
        again.stderr.contains("already wired; nothing changed"),
        "{}",
        again.all()
    );
    assert_eq!(repo.read(".gemini/settings.json"), text);
}

#[test]
fn the_claude_entry_run_by_copilot_reads_its_agent_type_and_stands_down_beside_curates_own() {
    let repo = Repo::fixture("hooks");
    // What Copilot CLI sends a `.claude/settings.json` entry for its `task` tool.
    let input = serde_json::to_vec(&serde_json::json!({
        "hook_event_name": "PreToolUse", "session_id": "cp-1",
        "timestamp": "2026-12-07T20:29:15.042Z", "cwd": repo.root, "tool_name": "Agent",
        "tool_input": {"prompt": "change: demo\nDo it.", "agent_type": "worker",
                       "name": "worker", "description": "login"},
    }))
    .unwrap();
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(&input)
        .run();
    let v = out.json();
    let updated = &v["hookSpecificOutput"]["updatedInput"];
    assert_eq!(updated["agent_type"], "worker");
    assert_eq!(updated["name"], "worker");
    assert!(
        updated["prompt"]
            .as_str()
            .unwrap()
            .starts_with("role: worker\n")
    );
    // With curate's own Copilot wiring, the context goes through it instead: once.
    repo.curate().args(["init", "--host", "copilot"]).run();
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(&input)
        .run();
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    let last = hook_log(&repo).last().unwrap().clone();
    assert_eq!(last["status"], "skipped");
    assert!(
        last["reason"].as_str().unwrap().contains("one injection"),
        "{last}"
    );
}
