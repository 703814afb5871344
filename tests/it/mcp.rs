//! `curate mcp` through a real MCP client (rmcp's, over the child process): the handshake,
//! the tool list, each tool on the fixture, what the model reads of a preview (the status and
//! the prompt, at most the prompt + 2 KiB), BLOCKED / OVER_BUDGET as results, bad arguments
//! as tool errors the server survives, and a clean exit when stdin ends.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::{Repo, WORKER_MANIFEST};

type Client = RunningService<RoleClient, ()>;

/// A client connected to `curate mcp` started in the repository's root.
async fn connect(repo: &Repo) -> Client {
    let cmd = tokio::process::Command::from(repo.curate().args(["mcp"]).command());
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start curate mcp");
    ().serve(transport).await.expect("initialize")
}

/// Calls tool `name` with `args` (an object); a protocol error fails the test.
async fn call(client: &Client, name: &'static str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: protocol error {e}"))
}

/// The one text content of a result.
fn text(r: &CallToolResult) -> String {
    assert_eq!(r.content.len(), 1, "{r:?}");
    r.content[0].as_text().expect("text content").text.clone()
}

/// A normal result: not an error, with structured content.
fn ok(r: &CallToolResult) -> &Value {
    assert_eq!(r.is_error, Some(false), "{}", text(r));
    r.structured_content.as_ref().expect("structuredContent")
}

/// A READY preview as the model reads it: no structured content (Claude Code would hand
/// the model that instead of the text), a status header within 2 KiB, a blank line, the
/// prompt. Returns the header and the prompt.
fn ready_preview(r: &CallToolResult) -> (String, String) {
    assert_eq!(r.is_error, Some(false), "{}", text(r));
    assert!(r.structured_content.is_none(), "{r:?}");
    let t = text(r);
    let (header, prompt) = t
        .split_once("\n\n")
        .expect("a header, a blank line, the prompt");
    assert!(header.starts_with("READY · "), "{header}");
    assert!(header.len() < 2048, "{header}");
    (header.to_owned(), prompt.to_owned())
}

/// A tool error: `isError`, no structured content, the message as text.
fn tool_error(r: &CallToolResult) -> String {
    assert_eq!(r.is_error, Some(true), "not an error: {r:?}");
    assert!(r.structured_content.is_none());
    text(r)
}

fn worker() -> Value {
    json!({"role": "worker", "change": "add-auth"})
}

#[tokio::test(flavor = "current_thread")]
async fn initialize_names_the_server_version_and_its_advice() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    let info = client.peer_info().expect("server info");
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, "curate");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(
        info.instructions.as_deref(),
        Some(
            "curate selects the files (and lines) a sub-agent must read first. Before dispatching a sub-agent: call compile with its role and change (it writes the context manifest the prompt names), then preview with the same inputs and paste the prompt its answer holds, whole, as the sub-agent's first message. preview alone writes nothing, so without compile its prompt names a manifest that does not exist. BLOCKED or OVER_BUDGET: do not dispatch; act on the advice. check and verify report on manifests and on a worker's write boundary."
        )
    );
    assert!(info.capabilities.tools.is_some());
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn the_four_tools_are_listed_with_their_inputs_and_hints() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    let mut tools = client.list_all_tools().await.unwrap();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["check", "compile", "preview", "verify"]);
    let props = |i: usize| -> Vec<String> {
        let mut p: Vec<String> = tools[i].input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        p.sort();
        p
    };
    let required = |i: usize| tools[i].input_schema.get("required").cloned();
    assert_eq!(props(0), ["paths", "stale"]);
    assert_eq!(required(0), None);
    let selection = [
        "add",
        "change",
        "drop",
        "max_files",
        "max_lines",
        "max_tokens",
        "owns",
        "reads",
        "role",
        "task_file",
    ];
    let mut compile: Vec<&str> = selection.to_vec();
    compile.extend(["dry_run", "explain"]);
    compile.sort_unstable();
    assert_eq!(props(1), compile);
    let mut preview: Vec<&str> = selection.to_vec();
    preview.extend(["lang", "report", "template"]);
    preview.sort_unstable();
    assert_eq!(props(2), preview);
    assert_eq!(required(2), Some(json!(["role", "change"])));
    assert_eq!(
        props(3),
        [
            "change",
            "git_diff",
            "owns",
            "reads",
            "task_file",
            "touched"
        ]
    );
    assert_eq!(required(3), Some(json!(["change"])));
    // Field docs are the descriptions; the template is one of three names.
    let role = &tools[2].input_schema["properties"]["role"];
    assert!(
        role["description"]
            .as_str()
            .unwrap()
            .starts_with("The role of the sub-agent"),
        "{role}"
    );
    let schema = serde_json::to_string(&*tools[2].input_schema).unwrap();
    assert!(
        schema.contains(r#"["bundle","sticky","handoff"]"#),
        "{schema}"
    );
    // Read-only but for compile, which writes the manifest.
    let read_only: Vec<Option<bool>> = tools
        .iter()
        .map(|t| t.annotations.as_ref().and_then(|a| a.read_only_hint))
        .collect();
    assert_eq!(read_only, [Some(true), Some(false), Some(true), Some(true)]);
    assert_eq!(
        tools[2]
            .meta
            .as_ref()
            .map(|m| m.0["anthropic/maxResultSizeChars"].clone()),
        Some(json!(500_000))
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn preview_answers_the_status_and_the_prompt_only_and_writes_nothing() {
    let repo = Repo::fixture("aiws-basic");
    let before = repo.snapshot_tree();
    let client = connect(&repo).await;
    let r = call(&client, "preview", worker()).await;
    let (header, prompt) = ready_preview(&r);
    // Asked for, the whole report comes as structured content, with the same prompt.
    let mut args = worker();
    args["report"] = json!(true);
    let full = call(&client, "preview", args).await;
    let v = ok(&full).clone();
    client.cancel().await.unwrap();
    assert!(
        header.starts_with("READY · role worker · change add-auth · "),
        "{header}"
    );
    // No manifest yet: the header says the prompt names one that does not exist.
    assert!(
        header.contains("\nwarning: the instruction names changes/add-auth/analysis/worker-context.jsonl, which does not exist"),
        "{header}"
    );
    assert!(
        prompt.starts_with(
            "role: worker\n<!-- curate:begin role=\"worker\" change=\"add-auth\" -->\n"
        )
    );
    assert_eq!(v["status"], "READY");
    assert_eq!(v["prompt"].as_str(), Some(prompt.as_str()));
    assert_eq!(ready_preview_text(&full), text(&r));
    // One code path: the CLI's answer on the same repository is the same object.
    let cli = repo
        .curate()
        .args([
            "preview", "--role", "worker", "--change", "add-auth", "--format", "json",
        ])
        .run();
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    // But for what a warning says to do: a shell command there, the tool to call here.
    let mut cli = cli.json();
    assert_eq!(
        cli["warnings"][0],
        "the instruction names changes/add-auth/analysis/worker-context.jsonl, which does not \
         exist: run `curate --role worker --change add-auth --format json` first"
    );
    assert_eq!(
        v["warnings"][0],
        "the instruction names changes/add-auth/analysis/worker-context.jsonl, which does not \
         exist: call `compile` with the same arguments first"
    );
    cli["warnings"] = v["warnings"].clone();
    assert_eq!(cli, v);
    assert_eq!(repo.snapshot_tree(), before, "preview wrote something");
}

/// The text of a preview answered with `report: true` (its structured content aside).
fn ready_preview_text(r: &CallToolResult) -> String {
    assert!(r.structured_content.is_some());
    text(r)
}

#[tokio::test(flavor = "current_thread")]
async fn compile_then_preview_gives_a_prompt_whose_manifest_exists() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    ok(&call(&client, "compile", worker()).await);
    let (header, prompt) = ready_preview(&call(&client, "preview", worker()).await);
    client.cancel().await.unwrap();
    assert!(!header.contains("warning"), "{header}");
    assert!(prompt.contains(&format!("`{WORKER_MANIFEST}`")), "{prompt}");
    assert!(repo.exists(WORKER_MANIFEST));
}

#[tokio::test(flavor = "current_thread")]
async fn preview_takes_the_template_and_language() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    let mut args = worker();
    args["template"] = json!("sticky");
    args["lang"] = json!("zh");
    let r = call(&client, "preview", args).await;
    client.cancel().await.unwrap();
    let cli = repo
        .curate()
        .args([
            "preview",
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--template",
            "sticky",
            "--lang",
            "zh",
        ])
        .run();
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    assert_eq!(ready_preview(&r).1, cli.stdout);
}

#[tokio::test(flavor = "current_thread")]
async fn compile_writes_the_manifest_and_check_then_finds_it_valid() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    let mut dry = worker();
    dry["dry_run"] = json!(true);
    let r = call(&client, "compile", dry).await;
    assert_eq!(ok(&r)["written"], false);
    assert!(!repo.exists(WORKER_MANIFEST), "dry_run wrote the manifest");

    let r = call(&client, "compile", worker()).await;
    let v = ok(&r);
    assert_eq!(v["status"], "READY");
    assert_eq!(v["manifest"], WORKER_MANIFEST);
    assert_eq!(v["written"], true);
    assert_eq!(
        serde_json::from_str::<Value>(&text(&r)).unwrap(),
        *v,
        "the text is the JSON report"
    );
    assert!(repo.exists(WORKER_MANIFEST));
    assert!(repo.exists(crate::WORKER_LOCK));
    // The CLI writes the same bytes.
    let written = repo.read(WORKER_MANIFEST);
    let cli = repo.compile_worker(&["--stdout"]);
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    assert_eq!(cli.stdout, written);

    let r = call(&client, "check", json!({"stale": true})).await;
    assert_eq!(
        *ok(&r),
        json!({"valid": true, "manifests": 1, "findings": []})
    );
    let r = call(&client, "check", json!({"paths": [WORKER_MANIFEST]})).await;
    assert_eq!(ok(&r)["manifests"], 1);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn a_failing_check_is_a_result_and_a_hand_edit_stops_compile() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    ok(&call(&client, "compile", worker()).await);
    let edited = format!("{}not json\n", repo.read(WORKER_MANIFEST));
    repo.write(WORKER_MANIFEST, &edited);

    let r = call(&client, "check", json!({})).await;
    let v = ok(&r);
    assert_eq!(v["valid"], false);
    assert_eq!(v["manifests"], 1);
    let findings = v["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["file"] == WORKER_MANIFEST && f["severity"] == "error"),
        "{v}"
    );

    let message = tool_error(&call(&client, "compile", worker()).await);
    assert!(
        message.starts_with(&format!(
            "error: {WORKER_MANIFEST} was edited by hand (its digest does not match its content)"
        )),
        "{message}"
    );
    assert_eq!(
        repo.read(WORKER_MANIFEST),
        edited,
        "the hand edit was overwritten"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn verify_reports_a_violation_as_a_result() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    let r = call(
        &client,
        "verify",
        json!({
            "change": "add-auth",
            "owns": ["src/auth/**"],
            "reads": ["src/api/routes.ts"],
            "touched": ["src/auth/login.ts", "src/api/routes.ts", "README.md"],
        }),
    )
    .await;
    assert_eq!(
        *ok(&r),
        json!({"valid": false, "violations": [
            {"file": "README.md", "rule": "outside_owned", "type": "scope_creep"},
            {"file": "src/api/routes.ts", "rule": "read_only", "type": "readonly_touched"},
        ]})
    );
    let r = call(
        &client,
        "verify",
        json!({"change": "add-auth", "owns": ["src/auth/**"], "touched": ["src/auth/login.ts"]}),
    )
    .await;
    assert_eq!(*ok(&r), json!({"valid": true, "violations": []}));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn over_budget_is_a_result_with_the_advice_and_nothing_written() {
    let repo = Repo::fixture("over-budget");
    let client = connect(&repo).await;
    let args = json!({"role": "planner", "change": "big"});
    let r = call(&client, "preview", args.clone()).await;
    assert_eq!(r.is_error, Some(false));
    assert!(r.structured_content.is_none(), "the report only when asked");
    let advice = text(&r);
    assert!(advice.contains("OVER_BUDGET"), "{advice}");
    assert!(advice.contains("hint: add `sections`"), "{advice}");

    let r = call(&client, "compile", args).await;
    let v = ok(&r);
    assert_eq!(v["status"], "OVER_BUDGET");
    assert_eq!(v["written"], false);
    assert!(text(&r).contains("nothing written"), "{}", text(&r));
    assert!(!repo.exists("changes/big/analysis/planner-context.jsonl"));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn bad_arguments_are_tool_errors_and_the_server_goes_on() {
    let repo = Repo::fixture("aiws-basic");
    std::os::unix::fs::symlink("/etc/passwd", repo.root.join("task.json")).unwrap();
    let fifo = repo.root.join("fifo.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let client = connect(&repo).await;
    let with = |key: &str, value: Value| {
        let mut a = worker();
        a[key] = value;
        a
    };

    let e = tool_error(&call(&client, "preview", with("role", json!("nope"))).await);
    assert_eq!(
        e,
        "error: unknown role \"nope\" in embedded default\nhint: the roles are: planner, explorer, worker, reviewer, integrator"
    );
    let e = tool_error(&call(&client, "compile", with("change", json!("../x"))).await);
    assert_eq!(
        e,
        "error: invalid change id \"../x\": it must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
    );
    for (path, problem) in [
        ("/etc/passwd", "is an absolute path outside the repository"),
        ("../../x", "climbs out of the repository with `..`"),
        (
            "task.json",
            "leads out of the repository through a link: never read",
        ),
    ] {
        let e = tool_error(&call(&client, "preview", with("task_file", json!(path))).await);
        assert!(
            e.starts_with(&format!("error: task_file: {path:?} {problem}\n")),
            "{e}"
        );
        let e = tool_error(
            &call(
                &client,
                "verify",
                json!({"change": "add-auth", "task_file": path, "touched": []}),
            )
            .await,
        );
        assert!(
            e.starts_with(&format!("error: task_file: {path:?} {problem}")),
            "{e}"
        );
        let e = tool_error(&call(&client, "check", json!({"paths": [path]})).await);
        assert!(
            e.starts_with(&format!("error: paths: {path:?} {problem}")),
            "{e}"
        );
    }
    let e = tool_error(&call(&client, "preview", with("task_file", json!("fifo.json"))).await);
    assert!(
        e.ends_with("is not a regular file (a FIFO); only regular files are read"),
        "{e}"
    );
    let e = tool_error(&call(&client, "preview", with("task_file", json!(".env"))).await);
    assert!(e.starts_with("error: .env: never read: secret"), "{e}");
    let e = tool_error(&call(&client, "preview", with("owns", json!(["/etc/*"]))).await);
    assert!(
        e.contains("is an absolute path outside the repository"),
        "{e}"
    );
    let e = tool_error(&call(&client, "preview", json!({"role": "worker"})).await);
    assert!(e.contains("missing field `change`"), "{e}");
    let e = tool_error(&call(&client, "preview", with("template", json!("/etc/x.tera"))).await);
    assert!(
        e.contains("expected one of `bundle`, `sticky`, `handoff`"),
        "{e}"
    );
    let e = tool_error(
        &call(
            &client,
            "verify",
            json!({"change": "add-auth", "owns": ["src/**"], "git_diff": "--output=/tmp/x"}),
        )
        .await,
    );
    assert!(e.contains("a revision must not start with '-'"), "{e}");

    // Still serving.
    ready_preview(&call(&client, "preview", worker()).await);
    client.cancel().await.unwrap();
}

/// Waits for the server to exit 0 (its stdin closed); returns its stderr.
fn exits_0(child: std::process::Child) -> String {
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

/// One JSON-RPC line of the server, parsed.
fn read_message(out: &mut impl BufRead) -> Value {
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line:?}"))
}

#[test]
fn older_protocol_versions_are_accepted_and_stdin_eof_exits_0() {
    let repo = Repo::fixture("aiws-basic");
    for version in ["2025-06-18", "2025-03-26"] {
        let mut child = repo.curate().args(["mcp"]).spawn();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let send = |stdin: &mut std::process::ChildStdin, v: Value| {
            writeln!(stdin, "{v}").unwrap();
        };
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}),
        );
        let init = read_message(&mut stdout);
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "preview", "arguments": worker()}}),
        );
        let answer = read_message(&mut stdout);
        assert_eq!(answer["id"], 2);
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.starts_with("READY · "), "{answer}");
        drop(stdin);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
        assert_eq!(rest, "", "stdout carries the protocol only");
        let stderr = exits_0(child);
        assert_eq!(stderr, "", "a quiet stderr");
    }
}

/// A secret in a path argument is a tool error naming the argument and the rule, never the
/// value, and nothing is written.
#[tokio::test(flavor = "current_thread")]
async fn a_secret_in_a_path_argument_is_a_tool_error_without_the_value() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    let token = format!("ghp_{}", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d");
    let r = call(
        &client,
        "compile",
        json!({"role": "worker", "change": "add-auth", "owns": [format!("src/{token}")], "drop": [token]}),
    )
    .await;
    let message = tool_error(&r);
    assert!(
        message.contains("--owns #1: holds a secret (github-pat)"),
        "{message}"
    );
    assert!(!message.contains(&token));
    assert!(!repo.exists(WORKER_MANIFEST));
    client.cancel().await.unwrap();
}

/// A token given as the change id: refused, never echoed, nothing written.
#[tokio::test(flavor = "current_thread")]
async fn a_secret_as_the_change_id_is_a_tool_error_without_the_value() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    let token = format!("ghp_{}", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d");
    for tool in ["compile", "preview"] {
        let r = call(&client, tool, json!({"role": "worker", "change": token})).await;
        let message = tool_error(&r);
        assert!(
            message.contains("the change id holds a secret (github-pat)"),
            "{message}"
        );
        assert!(!message.contains(&token));
        assert!(!repo.exists(&format!("changes/{token}")));
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn a_token_in_a_path_argument_is_never_echoed() {
    let repo = Repo::fixture("aiws-basic");
    let client = connect(&repo).await;
    let token = "ghp_R7mK2pQ9xV4nL8wT3yH6jB1cF5dG0sZeAa9u";
    let mut said = Vec::new();
    for (tool, args) in [
        ("check", json!({"paths": [format!("../{token}")]})),
        (
            "verify",
            json!({"change": "add-auth", "task_file": format!("../{token}/t.json"), "touched": ["a"]}),
        ),
        (
            "verify",
            json!({"change": "add-auth", "task_file": format!("{token}/t.json"), "touched": ["a"]}),
        ),
    ] {
        said.push(tool_error(&call(&client, tool, args).await));
    }
    let r = call(
        &client,
        "check",
        json!({"paths": [format!("{token}/x.jsonl")]}),
    )
    .await;
    said.push(serde_json::to_string(&r).unwrap());
    for text in &said {
        assert!(!text.contains("R7mK2pQ9"), "{text}");
        assert!(text.contains("<secret: github-pat>"), "{text}");
    }
    assert!(
        said[0].contains("climbs out of the repository"),
        "{}",
        said[0]
    );
    client.cancel().await.unwrap();
}

/// Every malformed line gets the JSON-RPC answer named for it, with the request's id when it
/// has one; a line over 16 MiB is answered (by its id, which a client's SDK writes last) and
/// skipped without being held; the server goes on serving, and a request still running
/// when stdin ends is answered before the exit.
#[test]
fn malformed_and_oversized_messages_are_answered_and_the_server_goes_on() {
    let repo = Repo::fixture("aiws-basic");
    let mut child = repo.curate().args(["mcp"]).spawn();
    let mut stdin = child.stdin.take().unwrap();
    // Read on a thread of its own, so that an answer that never comes fails the test
    // instead of hanging it.
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stdout = stdout;
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let next = || -> Value {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("an answer (none came)");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line:?}"))
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}});
    writeln!(stdin, "{init}").unwrap();
    assert_eq!(next()["id"], 1);
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    let cases: [(&str, Value, i64); 5] = [
        ("{not json", Value::Null, -32700),
        ("[1, 2]", Value::Null, -32600),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#,
            json!(3),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":5}"#,
            json!(4),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a","method":"no/such"}"#,
            json!("a"),
            -32601,
        ),
    ];
    for (line, id, code) in cases {
        writeln!(stdin, "{line}").unwrap();
        let answer = next();
        assert_eq!(answer["id"], id, "{line}: {answer}");
        assert!(answer.as_object().unwrap().contains_key("id"), "{answer}");
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
    }
    // Over the cap, the id last (as JSON.stringify writes `{...request, jsonrpc, id}`).
    let huge = "x".repeat(17 << 20);
    writeln!(
        stdin,
        r#"{{"method":"tools/call","params":{{"name":"check","arguments":{{"paths":["{huge}"]}}}},"jsonrpc":"2.0","id":7}}"#
    )
    .unwrap();
    drop(huge);
    let answer = next();
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over 16 MiB"),
        "{answer}"
    );
    // Still serving; the last request is answered although stdin ends right after it.
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
            "name": "preview", "arguments": worker()}})
    )
    .unwrap();
    drop(stdin);
    let answer = next();
    assert_eq!(answer["id"], 8, "{answer}");
    exits_0(child);
}

/// A notification or a response sent before `initialize` is dropped (rmcp would end the
/// server on it: the client's `initialize` went unanswered, exit 1); a non-integer id is
/// answered -32600 with the id; stdin that ends before any session exits 0 after the
/// screen's answers are written.
#[test]
fn messages_before_initialize_do_not_end_the_server() {
    let repo = Repo::fixture("aiws-basic");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}});
    let lines = [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}),
        json!({"jsonrpc": "2.0", "id": 9, "result": {}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        init,
        json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = repo.curate().args(["mcp"]).stdin(input.as_bytes()).run();
    assert_eq!(out.code, 0, "{}", out.all());
    let answers: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The screen answers at once, rmcp in its turn: found by id.
    assert_eq!(answers.len(), 3, "{}", out.stdout);
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).expect("answered");
    assert!(by_id(json!(1))["result"]["serverInfo"].is_object());
    assert_eq!(by_id(json!(1.5))["error"]["code"], -32600);
    assert_eq!(
        *by_id(json!(2)),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    assert!(!out.stderr.contains("Notification"), "{}", out.stderr);

    // No session at all: what was screened is answered, and the exit is 0.
    let out = repo.curate().args(["mcp"]).stdin(b"{oops\n").run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(out.stdout.contains("-32700"), "{}", out.stdout);
    let out = repo.curate().args(["mcp"]).stdin(b"").run();
    assert_eq!(out.code, 0, "{}", out.all());
}
