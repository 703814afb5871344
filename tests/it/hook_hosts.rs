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
