//! `curate lsp` through its stdio, as an editor's LSP client talks to it: diagnostics on a
//! broken overrides line at its place (and cleared when fixed), the preview equal to
//! `curate preview`'s prompt byte for byte, the code lens, "add to context" changing the next
//! preview, a hover with the entry's fate and tokens, and a malformed message the server
//! survives. `nvim` drives it too, when installed (`lsp_nvim.rs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout};

use serde_json::{Value, json};

use crate::{Repo, WORKER_MANIFEST};

const OVERRIDES: &str = "changes/add-auth/analysis/worker-context.overrides.jsonl";

/// A client of `curate lsp` started in the repository's root.
pub(crate) struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// The messages `request` read before its response (notifications, the server's
    /// requests), in order.
    pub(crate) skipped: Vec<Value>,
}

impl Client {
    pub(crate) fn start(repo: &Repo) -> Client {
        Client::start_with(repo, &json!({}))
    }

    /// Started with the client capabilities `capabilities`.
    pub(crate) fn start_with(repo: &Repo, capabilities: &Value) -> Client {
        let mut child = repo.curate().args(["lsp"]).spawn();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client {
            child,
            stdin,
            stdout,
            next_id: 0,
            skipped: Vec::new(),
        };
        let root = format!("file://{}", repo.root.display());
        let init = c.request(
            "initialize",
            json!({"rootUri": root, "capabilities": capabilities}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "curate", "{init}");
        c.notify("initialized", json!({}));
        c
    }

    pub(crate) fn send_raw(&mut self, body: &str) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        let mut m = json!({"jsonrpc": "2.0", "method": method});
        m["params"] = params;
        self.send_raw(&m.to_string());
    }

    /// Sends a request and returns its response (notifications before it are skipped).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut m = json!({"jsonrpc": "2.0", "id": id, "method": method});
        m["params"] = params;
        self.send_raw(&m.to_string());
        loop {
            let m = self.read();
            if m["id"] == id {
                return m;
            }
            self.skipped.push(m);
        }
    }

    pub(crate) fn read(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server ended"
            );
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// The next diagnostics published for `uri`.
    pub(crate) fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let m = self.read();
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                return m["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    /// Shuts down and exits; the server must exit 0 with nothing more on stdout.
    pub(crate) fn stop(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null, "{r}");
        self.notify("exit", Value::Null);
        let out = self.child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

pub(crate) fn uri(repo: &Repo, rel: &str) -> String {
    format!("file://{}", repo.root.join(rel).display())
}

pub(crate) fn open(c: &mut Client, uri: &str, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "jsonl", "version": 1, "text": text}}),
    );
}

pub(crate) fn preview(c: &mut Client) -> Value {
    c.request(
        "workspace/executeCommand",
        json!({"command": "curate.preview", "arguments": [{"role": "worker", "change": "add-auth"}]}),
    )
}

#[test]
fn a_broken_overrides_line_is_shown_at_its_place_as_typed_and_cleared_when_fixed() {
    let repo = Repo::fixture("aiws-basic");
    let mut c = Client::start(&repo);
    let u = uri(&repo, OVERRIDES);
    let good = "// curation: editor test\n{\"file\": \"src/api/routes.ts\", \"priority\": \"low\", \"kind\": \"reference\"}\n";
    open(&mut c, &u, good);
    assert_eq!(c.diagnostics(&u), Vec::<Value>::new());

    // Typed, not saved: the text in the editor is what is read.
    let broken =
        "// curation: editor test\n  {\"file\": \"src/api/routes.ts\",, \"kind\": \"x\"}\n";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [{"text": broken}]}),
    );
    let d = c.diagnostics(&u);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        d[0]["range"]["start"],
        json!({"line": 1, "character": 31}),
        "at the second comma"
    );
    assert_eq!(d[0]["severity"], 1);
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid JSON"),
        "{d:?}"
    );
    assert!(!repo.exists(OVERRIDES), "nothing is written");

    let unknown = "{\"file\": \"src/api/routes.ts\", \"priority\": \"urgent\", \"kind\": \"x\"}\n";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 3}, "contentChanges": [{"text": unknown}]}),
    );
    let d = c.diagnostics(&u);
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .contains("unknown priority \"urgent\""),
        "{d:?}"
    );

    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 4}, "contentChanges": [{"text": good}]}),
    );
    assert_eq!(c.diagnostics(&u), Vec::<Value>::new(), "cleared when fixed");
    c.stop();
}

#[test]
fn the_preview_is_curate_previews_prompt_and_add_to_context_changes_the_next_one() {
    let repo = Repo::fixture("aiws-basic");
    repo.compile_worker(&[]);
    let cli = repo
        .curate()
        .args(["preview", "--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    let mut c = Client::start(&repo);
    let p = preview(&mut c);
    let prompt = p["result"].as_str().unwrap_or_else(|| panic!("{p}"));
    // The CLI's output has the root replaced by [ROOT]; the prompt names no absolute path.
    assert_eq!(prompt, cli.stdout, "byte for byte");

    // The code lens on the manifest's first line runs the same preview.
    let m = uri(&repo, WORKER_MANIFEST);
    open(&mut c, &m, &repo.read(WORKER_MANIFEST));
    let lens = c.request("textDocument/codeLens", json!({"textDocument": {"uri": m}}));
    let lens = &lens["result"][0];
    assert_eq!(lens["range"]["start"]["line"], 0);
    assert_eq!(lens["command"]["command"], "curate.preview");
    assert_eq!(
        lens["command"]["arguments"][0],
        json!({"role": "worker", "change": "add-auth"})
    );

    // A hover on the manifest's first entry: its fate, lines and tokens.
    let text = repo.read(WORKER_MANIFEST);
    let (at, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with('{'))
        .unwrap();
    let first: Value = serde_json::from_str(line).unwrap();
    let h = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": m}, "position": {"line": at, "character": 3}}),
    );
    let hover = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("{h}"));
    assert!(hover.contains(first["file"].as_str().unwrap()), "{hover}");
    assert!(hover.contains("kept · "), "{hover}");
    assert!(hover.contains(" tokens"), "{hover}");

    // "add to worker's context for add-auth" on a file not in it.
    let other = "package.json";
    assert!(!prompt.contains(other), "not in the prompt yet");
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&repo, other)},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    let add = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "add to worker's context for add-auth")
        .unwrap_or_else(|| panic!("{actions}"))
        .clone();
    let done = c.request("workspace/executeCommand", add["command"].clone());
    assert!(done["result"].as_str().is_some(), "{done}");
    assert!(repo.read(OVERRIDES).contains("\"file\":\"package.json\""));
    let after = preview(&mut c);
    assert!(
        after["result"].as_str().unwrap().contains(other),
        "the next preview has it"
    );
    let cli = repo
        .curate()
        .args(["preview", "--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(
        after["result"],
        cli.stdout.as_str(),
        "as curate preview sees it"
    );
    c.stop();
}

#[test]
fn a_malformed_message_is_a_parse_error_and_the_server_goes_on() {
    let repo = Repo::fixture("aiws-basic");
    let mut c = Client::start(&repo);
    c.send_raw("{\"jsonrpc\": \"2.0\", \"id\": ");
    let e = c.read();
    assert_eq!(e["error"]["code"], -32700, "{e}");
    assert_eq!(e["id"], Value::Null);
    let bad = c.request(
        "workspace/executeCommand",
        json!({"command": "curate.preview", "arguments": [{"role": "../x", "change": "add-auth"}]}),
    );
    assert!(bad["error"]["message"].as_str().is_some(), "{bad}");
    let unknown = c.request("textDocument/rename", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // Still serving.
    assert!(preview(&mut c)["result"].as_str().is_some());
    c.stop();
}

#[test]
fn a_hand_edited_manifest_shows_check_s_finding_and_is_adopted_by_its_code_action() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    // An entry taken out by hand, saved.
    let text = repo.read(WORKER_MANIFEST);
    let gone = text
        .lines()
        .rfind(|l| l.starts_with('{'))
        .unwrap()
        .to_owned();
    let file = serde_json::from_str::<Value>(&gone).unwrap()["file"]
        .as_str()
        .unwrap()
        .to_owned();
    let edited = text.replace(&format!("{gone}\n"), "");
    repo.write(WORKER_MANIFEST, &edited);
    let mut c = Client::start(&repo);
    let m = uri(&repo, WORKER_MANIFEST);
    open(&mut c, &m, &edited);
    let d = c.diagnostics(&m);
    assert!(
        d.iter()
            .any(|d| d["message"].as_str().unwrap().contains("edited by hand")),
        "{d:?}"
    );
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": m},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    let adopt = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == format!("adopt the hand edits into {OVERRIDES}"))
        .unwrap_or_else(|| panic!("{actions}"))
        .clone();
    let done = c.request("workspace/executeCommand", adopt["command"].clone());
    assert!(done["result"].as_str().is_some(), "{done}");
    assert!(
        repo.read(OVERRIDES)
            .contains(&format!("\"drop\":\"{file}\"")),
        "{}",
        repo.read(OVERRIDES)
    );
    let check = repo.curate().args(["check"]).run();
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    c.stop();
}

#[test]
fn a_secret_in_an_overrides_line_never_reaches_the_editor() {
    let repo = Repo::fixture("aiws-basic");
    let mut c = Client::start(&repo);
    let u = uri(&repo, OVERRIDES);
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let line = format!(
        "{{\"file\": \"src/api/routes.ts\", \"priority\": \"{token}\", \"kind\": \"x\"}}\n"
    );
    open(&mut c, &u, &line);
    let d = c.diagnostics(&u);
    let messages: Vec<&str> = d.iter().map(|d| d["message"].as_str().unwrap()).collect();
    // The line holds a secret (the compile refuses it), and its priority is unknown.
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("holds a secret"), "{messages:?}");
    assert!(messages[1].contains("unknown priority"), "{messages:?}");
    assert!(messages[1].contains("<secret"), "{messages:?}");
    assert!(messages.iter().all(|m| !m.contains(&token)), "{messages:?}");
    c.stop();
}

#[test]
fn the_contracts_show_their_schema_errors_at_their_place_and_a_glob_what_it_selects() {
    let repo = Repo::fixture("aiws-basic");
    let rel = "contracts/workflow-delegation-contracts.json";
    let embedded =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
            .unwrap();
    repo.write(rel, &embedded);
    let mut client = Client::start(&repo);
    let u = uri(&repo, rel);
    open(&mut client, &u, &embedded);
    assert_eq!(client.diagnostics(&u), Vec::<Value>::new());

    // Typed: a glob that is not a string, where `check` puts it (line 59, column 11).
    let broken = embedded.replacen("\"glob\": \"AI_PROJECT.md\"", "\"glob\": 7", 1);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [{"text": broken}]}),
    );
    let d = client.diagnostics(&u);
    let first = embedded
        .lines()
        .position(|l| l.contains("\"glob\": \"AI_PROJECT.md\""))
        .unwrap();
    assert!(!d.is_empty(), "{d:?}");
    assert_eq!(
        d[0]["range"]["start"],
        json!({"line": first, "character": 10}),
        "{d:?}"
    );
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .contains("7 is not of type \"string\""),
        "{d:?}"
    );

    // The glob of REQUIREMENTS.md, for the role and change of an open manifest.
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let m = uri(&repo, WORKER_MANIFEST);
    open(&mut client, &m, &repo.read(WORKER_MANIFEST));
    let line = embedded
        .lines()
        .position(|l| l.contains("\"glob\": \"REQUIREMENTS.md\""))
        .unwrap();
    let h = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": line, "character": 12}}),
    );
    let hover = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("{h}"));
    assert!(hover.contains("worker for add-auth: 1 file(s)"), "{hover}");
    assert!(hover.contains("- REQUIREMENTS.md · "), "{hover}");
    client.stop();
}

#[test]
fn a_plan_and_a_task_file_offer_the_preview_on_their_first_line() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let task = "changes/add-auth/worker-task.json";
    let task_text = r#"{"task_id": "login-1", "title": "Login", "your_role": "worker", "files_owned": ["src/auth/login.ts"], "files_readonly": [], "success_criteria": ["tests pass"]}"#;
    repo.write(task, task_text);
    let mut client = Client::start(&repo);

    let plan = "changes/add-auth/plan/session-20261120-auth-refactor.md";
    let p = uri(&repo, plan);
    open(&mut client, &p, &repo.read(plan));
    let lens = client.request("textDocument/codeLens", json!({"textDocument": {"uri": p}}));
    let args: Vec<Value> = lens["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["arguments"][0].clone())
        .collect();
    assert_eq!(
        args,
        vec![json!({"role": "worker", "change": "add-auth"})],
        "the role whose manifest the change has"
    );
    // The same preview as a code action, for the editors that show no lens.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": p},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    let action = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Preview worker's prompt for add-auth")
        .unwrap_or_else(|| panic!("{actions}"));
    assert_eq!(action["command"], lens["result"][0]["command"]);

    let t = uri(&repo, task);
    open(&mut client, &t, task_text);
    assert_eq!(client.diagnostics(&t), Vec::<Value>::new());
    let lens = client.request("textDocument/codeLens", json!({"textDocument": {"uri": t}}));
    let command = lens["result"][0]["command"].clone();
    assert_eq!(
        command["arguments"][0],
        json!({"role": "worker", "change": "add-auth", "task_file": task})
    );
    let answer = client.request("workspace/executeCommand", command);
    let cli = repo
        .curate()
        .args(["preview", "--role", "worker", "--change", "add-auth"])
        .args(["--task-file", task])
        .run();
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    assert_eq!(answer["result"], cli.stdout.as_str(), "byte for byte");

    // A task file's own errors, as typed.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": t, "version": 2},
               "contentChanges": [{"text": "{\"task_id\": \"x\", \"colour\": 1}"}]}),
    );
    let d = client.diagnostics(&t);
    assert_eq!(d.len(), 1, "{d:?}");
    client.stop();
}

#[test]
fn add_to_context_writes_only_a_repository_file_that_is_no_secret_and_bad_params_are_errors() {
    let repo = Repo::fixture("aiws-basic");
    let mut client = Client::start(&repo);
    let before = repo.snapshot_tree();
    for file in ["../outside.md", "/etc/passwd", ".env", "config/server.key"] {
        let r = client.request(
            "workspace/executeCommand",
            json!({"command": "curate.add",
                   "arguments": [{"role": "worker", "change": "add-auth", "file": file}]}),
        );
        assert!(r["error"]["message"].as_str().is_some(), "{file}: {r}");
    }
    for params in [
        json!({"command": "curate.preview"}),
        json!({"command": "curate.preview", "arguments": [{"role": "worker"}]}),
        json!({"command": "curate.nothing", "arguments": [{"role": "worker", "change": "add-auth"}]}),
        json!([]),
    ] {
        let r = client.request("workspace/executeCommand", params.clone());
        assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
    }
    // Documents the server cannot place, and requests on them, change nothing.
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": "untitled:1", "languageId": "json", "version": 1, "text": "{"}}),
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": 7}}),
    );
    let h = client.request("textDocument/hover", json!([]));
    assert_eq!(h["result"], Value::Null, "{h}");
    assert_eq!(repo.snapshot_tree(), before, "nothing written");
    assert!(preview(&mut client)["result"].as_str().is_some());
    client.stop();
}

#[test]
fn a_lock_that_does_not_read_is_shown_at_its_place() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let lock = "changes/add-auth/analysis/worker-context.lock.json";
    let good = repo.read(lock);
    let mut client = Client::start(&repo);
    let u = uri(&repo, lock);
    open(&mut client, &u, &good);
    assert_eq!(client.diagnostics(&u), Vec::<Value>::new());
    let broken = good.replacen("\"digest\": \"", "\"digest\": 7, \"x\": \"", 1);
    repo.write(lock, &broken);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [{"text": broken}]}),
    );
    client.notify("textDocument/didSave", json!({"textDocument": {"uri": u}}));
    let d = client.diagnostics(&u);
    let line = broken
        .lines()
        .position(|l| l.contains("\"digest\": 7"))
        .unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["range"]["start"]["line"], line, "{d:?}");
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("not a lock curate reads"),
        "{d:?}"
    );
    client.stop();
}

#[test]
fn a_hover_on_an_overrides_drop_says_what_it_dropped_and_drop_from_it_writes_one() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let kept = "changes/add-auth/analysis/impact.md";
    assert!(repo.read(WORKER_MANIFEST).contains(kept));
    let mut client = Client::start(&repo);
    let before = preview(&mut client)["result"].clone();
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&repo, kept)},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    // No manifest open and no role named by the client: nothing to offer.
    assert_eq!(actions["result"], json!([]), "{actions}");
    let m = uri(&repo, WORKER_MANIFEST);
    open(&mut client, &m, &repo.read(WORKER_MANIFEST));
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&repo, kept)},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    let drop = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "drop from worker's context for add-auth")
        .unwrap_or_else(|| panic!("{actions}"))
        .clone();
    let done = client.request("workspace/executeCommand", drop["command"].clone());
    assert!(done["result"].as_str().is_some(), "{done}");
    let text = repo.read(OVERRIDES);
    assert_eq!(
        text,
        format!("{{\"drop\":\"{kept}\",\"why\":\"dropped in the editor\"}}\n")
    );
    let o = uri(&repo, OVERRIDES);
    open(&mut client, &o, &text);
    let h = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": o}, "position": {"line": 0, "character": 3}}),
    );
    let hover = h["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("{h}"));
    assert!(hover.contains(&format!("dropped: {kept}")), "{hover}");
    let after = preview(&mut client)["result"].clone();
    assert!(
        after.is_string() && after != before,
        "the next preview changed"
    );
    client.stop();
}
