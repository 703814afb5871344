//! `curate lsp` as the user types: the preview document (written under
//! `.curate/state/preview/`, read-only, shown with `window/showDocument`) follows an unsaved
//! edit of the overrides file and equals `curate preview` byte for byte; a manifest and its
//! lock are checked from the editor's text, cleared when fixed; every bad overrides line is
//! shown; a preview folder that is a link is never written through.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::lsp::{Client, open, preview, uri};
use crate::{Repo, WORKER_MANIFEST};

const OVERRIDES: &str = "changes/add-auth/analysis/worker-context.overrides.jsonl";
const PREVIEW: &str = ".curate/state/preview/add-auth/worker.md";
const LOCK: &str = "changes/add-auth/analysis/worker-context.lock.json";

fn cli_preview(repo: &Repo) -> String {
    let cli = repo
        .curate()
        .args(["preview", "--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    cli.stdout
}

/// The preview file's text once `done` holds of it (the server rewrites it a quarter of a
/// second after the edits rest); the last text seen when it never does, within 20 s.
fn preview_when(repo: &Repo, done: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(repo.root.join(PREVIEW)).unwrap_or_default();
        if done(&text) || start.elapsed() > Duration::from_secs(20) {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn change(c: &mut Client, uri: &str, version: u64, text: &str) {
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
}

#[test]
fn the_preview_document_is_the_prompt_read_only_and_follows_an_unsaved_overrides_edit() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let before = cli_preview(&repo);
    let mut c = Client::start_with(
        &repo,
        &json!({"window": {"showDocument": {"support": true}}}),
    );
    let answer = preview(&mut c);
    assert_eq!(
        answer["result"],
        before.as_str(),
        "the answer: byte for byte"
    );

    // The document: asked to be shown, the prompt byte for byte, read-only, git-ignored.
    let probe = c.request("shutdown-probe", Value::Null);
    assert_eq!(probe["error"]["code"], -32601);
    let ask = c
        .skipped
        .iter()
        .find(|m| m["method"] == "window/showDocument")
        .unwrap_or_else(|| panic!("no window/showDocument: {:?}", c.skipped))
        .clone();
    assert_eq!(ask["params"]["uri"], uri(&repo, PREVIEW));
    assert!(ask["id"].is_string(), "{ask}");
    c.send_raw(
        &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"success": true}}).to_string(),
    );
    assert_eq!(repo.read(PREVIEW), before, "the document: byte for byte");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(repo.root.join(PREVIEW))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o222, 0, "read-only: {mode:o}");
    }
    assert_eq!(repo.read(".curate/state/.gitignore"), "*\n");

    // A scratch copy a stopped server left (a minute old or more): swept; a young one stays.
    let unsaved = repo.root.join(".curate/state/preview/.unsaved");
    std::fs::create_dir_all(&unsaved).unwrap();
    std::fs::write(unsaved.join("1-overrides.jsonl"), "left").unwrap();
    std::fs::File::options()
        .write(true)
        .open(unsaved.join("1-overrides.jsonl"))
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(120))
        .unwrap();
    std::fs::write(unsaved.join("2-overrides.jsonl"), "young").unwrap();

    // "package.json" added in the editor, not saved: the document follows.
    assert!(!before.contains("package.json"));
    let o = uri(&repo, OVERRIDES);
    open(&mut c, &o, "");
    let added = "{\"file\": \"package.json\", \"priority\": \"high\", \"kind\": \"reference\", \"reason\": \"typed\"}\n";
    change(&mut c, &o, 2, added);
    let live = preview_when(&repo, |t| t.contains("package.json"));
    assert!(live.contains("package.json"), "{live}");
    assert!(!repo.exists(OVERRIDES), "nothing of the editor's is saved");
    let left: Vec<String> = std::fs::read_dir(&unsaved)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["2-overrides.jsonl"],
        "no scratch file of ours is left"
    );
    // Saved as typed, `curate preview` prints what the document showed.
    repo.write(OVERRIDES, added);
    assert_eq!(live, cli_preview(&repo), "byte for byte");

    // Undone in the editor (and on disk): the document follows back.
    std::fs::remove_file(repo.root.join(OVERRIDES)).unwrap();
    change(&mut c, &o, 3, "");
    let back = preview_when(&repo, |t| !t.contains("package.json"));
    assert_eq!(back, before);

    // Everything dropped: BLOCKED, and the document is the report, line by line.
    change(&mut c, &o, 4, "{\"drop\": \"**\"}\n");
    let blocked = preview_when(&repo, |t| t.contains("BLOCKED"));
    assert!(blocked.contains("BLOCKED"), "{blocked}");
    assert!(blocked.lines().count() > 2, "{blocked}");
    assert!(!blocked.contains("\\n"), "{blocked}");

    // A line that does not parse: the document says why, and no prompt.
    change(&mut c, &o, 5, "{\"file\": \n");
    let broken = preview_when(&repo, |t| t.starts_with("error:"));
    assert!(broken.contains(OVERRIDES), "{broken}");
    assert!(broken.contains("invalid JSON"), "{broken}");
    c.stop();
}

#[test]
fn a_client_that_shows_no_document_is_told_where_it_is_and_add_and_watched_changes_are_followed() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let watching = json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let mut c = Client::start_with(&repo, &watching);
    assert!(preview(&mut c)["result"].is_string());
    let probe = c.request("shutdown-probe", Value::Null);
    assert_eq!(probe["error"]["code"], -32601);
    let register = c
        .skipped
        .iter()
        .find(|m| m["method"] == "client/registerCapability")
        .unwrap_or_else(|| panic!("{:?}", c.skipped));
    assert_eq!(
        register["params"]["registrations"][0]["method"],
        "workspace/didChangeWatchedFiles"
    );
    assert!(
        !c.skipped
            .iter()
            .any(|m| m["method"] == "window/showDocument"),
        "{:?}",
        c.skipped
    );
    let told = c
        .skipped
        .iter()
        .find(|m| m["method"] == "window/showMessage")
        .unwrap_or_else(|| panic!("{:?}", c.skipped));
    assert!(
        told["params"]["message"]
            .as_str()
            .unwrap()
            .contains(PREVIEW),
        "{told}"
    );
    // "add to context" through the server: the document follows at once.
    let done = c.request(
        "workspace/executeCommand",
        json!({"command": "curate.add",
               "arguments": [{"role": "worker", "change": "add-auth", "file": "package.json"}]}),
    );
    assert!(done["result"].is_string(), "{done}");
    let live = preview_when(&repo, |t| t.contains("package.json"));
    assert_eq!(live, cli_preview(&repo), "byte for byte");

    // Changed on disk by another program, the change watched: the document follows.
    let text = repo.read(OVERRIDES);
    repo.write(
        OVERRIDES,
        &format!("{text}{{\"drop\": \"package.json\"}}\n"),
    );
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&repo, OVERRIDES), "type": 2}]}),
    );
    let live = preview_when(&repo, |t| t.contains("- package.json: dropped by "));
    assert_eq!(live, cli_preview(&repo), "byte for byte");
    c.stop();
}

#[test]
fn a_manifest_and_its_lock_are_checked_as_typed_and_cleared_when_fixed() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let text = repo.read(WORKER_MANIFEST);
    let lock = repo.read(LOCK);
    let mut client = Client::start(&repo);
    let manifest = uri(&repo, WORKER_MANIFEST);
    open(&mut client, &manifest, &text);
    assert_eq!(client.diagnostics(&manifest), Vec::<Value>::new());

    // An entry taken out in the editor, not saved.
    let gone = text.lines().rfind(|l| l.starts_with('{')).unwrap();
    let edited = text.replace(&format!("{gone}\n"), "");
    change(&mut client, &manifest, 2, &edited);
    let d = client.diagnostics(&manifest);
    assert!(
        d.iter()
            .any(|d| d["message"].as_str().unwrap().contains("edited by hand")),
        "{d:?}"
    );
    assert_eq!(repo.read(WORKER_MANIFEST), text, "nothing is written");

    // Put back: cleared.
    change(&mut client, &manifest, 3, &text);
    assert_eq!(
        client.diagnostics(&manifest),
        Vec::<Value>::new(),
        "cleared when fixed"
    );

    // The lock's digest changed in the editor: a stale lock, on the lock and on the
    // manifest open beside it.
    let lock_uri = uri(&repo, LOCK);
    open(&mut client, &lock_uri, &lock);
    assert_eq!(client.diagnostics(&lock_uri), Vec::<Value>::new());
    let v: Value = serde_json::from_str(&lock).unwrap();
    let digest = v["digest"].as_str().unwrap();
    let stale = lock.replacen(digest, &"0".repeat(digest.len()), 1);
    change(&mut client, &lock_uri, 2, &stale);
    let mut on_lock = None;
    let mut on_manifest = None;
    while on_lock.is_none() || on_manifest.is_none() {
        let msg = client.read();
        if msg["method"] != "textDocument/publishDiagnostics" {
            continue;
        }
        let d = msg["params"]["diagnostics"].clone();
        if msg["params"]["uri"] == lock_uri {
            on_lock = Some(d);
        } else if msg["params"]["uri"] == manifest {
            on_manifest = Some(d);
        }
    }
    for d in [on_lock.unwrap(), on_manifest.unwrap()] {
        assert!(
            d.as_array()
                .unwrap()
                .iter()
                .any(|d| d["message"].as_str().unwrap().contains("stale lock")),
            "{d}"
        );
    }
    change(&mut client, &lock_uri, 3, &lock);
    assert_eq!(
        client.diagnostics(&lock_uri),
        Vec::<Value>::new(),
        "cleared when fixed"
    );
    client.stop();
}

#[test]
fn every_bad_overrides_line_is_shown_at_its_place() {
    let repo = Repo::fixture("aiws-basic");
    let mut c = Client::start(&repo);
    let o = uri(&repo, OVERRIDES);
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let text = format!(
        "// curation: three problems\n{{\"file\": \"a.md\" \"kind\": \"x\"}}\n{{\"drop\": \"b.md\"}}\n{{\"file\": \"c.md\", \"priority\": \"urgent\"}}\n{{\"drop\": \"d.md\", \"why\": \"{token}\"}}\n"
    );
    open(&mut c, &o, &text);
    let d = c.diagnostics(&o);
    let lines: Vec<u64> = d
        .iter()
        .map(|d| d["range"]["start"]["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, vec![1, 3, 4], "{d:?}");
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid JSON")
    );
    assert!(
        d[1]["message"]
            .as_str()
            .unwrap()
            .contains("unknown priority")
    );
    assert_eq!(
        d[1]["range"]["start"]["character"], 17,
        "at the priority: {d:?}"
    );
    let secret = d[2]["message"].as_str().unwrap();
    assert!(secret.contains("holds a secret"), "{secret}");
    assert!(!secret.contains(&token), "{secret}");
    c.stop();
}

#[cfg(unix)]
#[test]
fn a_preview_folder_that_is_a_link_is_never_written_through() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let outside = repo.root.with_file_name("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(repo.root.join(".curate/state")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.root.join(".curate/state/preview")).unwrap();
    let mut c = Client::start_with(
        &repo,
        &json!({"window": {"showDocument": {"support": true}}}),
    );
    let answer = preview(&mut c);
    assert_eq!(
        answer["result"],
        cli_preview(&repo).as_str(),
        "it still answers"
    );
    let probe = c.request("shutdown-probe", Value::Null);
    assert_eq!(probe["error"]["code"], -32601);
    let warned = c
        .skipped
        .iter()
        .find(|m| m["method"] == "window/showMessage")
        .unwrap_or_else(|| panic!("{:?}", c.skipped));
    assert!(
        warned["params"]["message"]
            .as_str()
            .unwrap()
            .contains("a link or a file"),
        "{warned}"
    );
    assert!(
        !c.skipped
            .iter()
            .any(|m| m["method"] == "window/showDocument")
    );
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing written"
    );
    c.stop();
}

#[test]
fn a_task_file_s_preview_document_follows_its_unsaved_text() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let task = "changes/add-auth/worker-task.json";
    let first = r#"{"task_id": "login-1", "title": "Login", "your_role": "worker", "files_owned": ["src/auth/login.ts"], "files_readonly": [], "success_criteria": ["tests pass"]}"#;
    repo.write(task, first);
    let mut c = Client::start(&repo);
    let t = uri(&repo, task);
    open(&mut c, &t, first);
    let lens = c.request("textDocument/codeLens", json!({"textDocument": {"uri": t}}));
    let command = lens["result"][0]["command"].clone();
    let answer = c.request("workspace/executeCommand", command);
    assert!(answer["result"].is_string(), "{answer}");
    let probe = c.request("shutdown-probe", Value::Null);
    assert_eq!(probe["error"]["code"], -32601);
    let told = c
        .skipped
        .iter()
        .find(|m| m["method"] == "window/showMessage")
        .unwrap_or_else(|| panic!("{:?}", c.skipped));
    let message = told["params"]["message"].as_str().unwrap();
    let doc = message
        .split_whitespace()
        .find(|w| w.starts_with(".curate/state/preview/add-auth/worker.worker-task-"))
        .unwrap_or_else(|| panic!("{message}"))
        .trim_end_matches(';')
        .to_owned();
    assert_eq!(repo.read(&doc), answer["result"].as_str().unwrap());

    // A file owned, typed, not saved: the document follows.
    let typed = first.replace(
        "\"src/auth/login.ts\"]",
        "\"src/auth/login.ts\", \"src/auth/session.ts\"]",
    );
    let owned = "=== src/auth/session.ts === (the module assigned to this task)";
    change(&mut c, &t, 2, &typed);
    let start = Instant::now();
    let mut live = repo.read(&doc);
    while !live.contains(owned) && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
        live = repo.read(&doc);
    }
    assert!(live.contains(owned), "{live}");
    assert_eq!(repo.read(task), first, "nothing of the editor's is saved");
    // The task file is named as itself, never as the scratch copy.
    assert!(!live.contains(".unsaved"), "{live}");
    repo.write(task, &typed);
    let cli = repo
        .curate()
        .args(["preview", "--role", "worker", "--change", "add-auth"])
        .args(["--task-file", task])
        .run();
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    assert_eq!(live, cli.stdout, "byte for byte");
    c.stop();
}

#[test]
fn a_secret_typed_into_the_overrides_file_reaches_neither_the_document_nor_the_disk() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let before = cli_preview(&repo);
    let mut c = Client::start(&repo);
    assert_eq!(preview(&mut c)["result"], before.as_str());
    let o = uri(&repo, OVERRIDES);
    open(&mut c, &o, "");
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    change(
        &mut c,
        &o,
        2,
        &format!("// curation: the key is {token}\n{{\"drop\": \"package.json\"}}\n"),
    );
    let shown = preview_when(&repo, |t| t.starts_with("error:"));
    assert!(shown.contains("holds a secret"), "{shown}");
    assert!(!shown.contains(&token), "{shown}");
    // Not in any file curate wrote either.
    for (path, bytes) in repo.snapshot_tree() {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&token),
            "{path} holds the secret"
        );
    }
    c.stop();
}

#[test]
fn the_preview_document_follows_unsaved_contracts() {
    let repo = Repo::fixture("aiws-basic");
    let rel = "contracts/workflow-delegation-contracts.json";
    let embedded =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
            .unwrap();
    repo.write(rel, &embedded);
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let before = cli_preview(&repo);
    let mut c = Client::start(&repo);
    assert_eq!(preview(&mut c)["result"], before.as_str());
    let u = uri(&repo, rel);
    open(&mut c, &u, &embedded);
    // The worker's REQUIREMENTS.md glob made package.json's, typed, not saved.
    let glob = "\"glob\": \"REQUIREMENTS.md\"";
    let worker = embedded.find("\"id\": \"worker\"").unwrap();
    let at = worker + embedded[worker..].find(glob).unwrap();
    let typed = format!(
        "{}\"glob\": \"package.json\"{}",
        &embedded[..at],
        &embedded[at + glob.len()..]
    );
    assert!(!before.contains("=== package.json ==="));
    change(&mut c, &u, 2, &typed);
    let live = preview_when(&repo, |t| t.contains("=== package.json ==="));
    assert!(live.contains("=== package.json ==="), "{live}");
    assert_eq!(repo.read(rel), embedded, "nothing of the editor's is saved");
    assert!(!live.contains(".unsaved"), "{live}");
    repo.write(rel, &typed);
    assert_eq!(live, cli_preview(&repo), "byte for byte");

    // A contracts text that does not load: the document names the contracts file.
    change(&mut c, &u, 3, "{");
    let broken = preview_when(&repo, |t| !t.contains("=== package.json ==="));
    assert!(broken.contains(rel), "{broken}");
    assert!(!broken.contains(".unsaved"), "{broken}");
    c.stop();
}

#[test]
fn a_document_opened_with_unsaved_text_is_previewed_as_the_editor_holds_it() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let mut c = Client::start(&repo);
    // An editor restoring its session opens the overrides file with text never saved.
    let added = "{\"file\": \"package.json\", \"priority\": \"high\", \"kind\": \"reference\", \"reason\": \"typed\"}\n";
    open(&mut c, &uri(&repo, OVERRIDES), added);
    let answer = preview(&mut c);
    let prompt = answer["result"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(prompt.contains("=== package.json ==="), "{prompt}");
    assert!(!repo.exists(OVERRIDES), "nothing of the editor's is saved");
    repo.write(OVERRIDES, added);
    assert_eq!(prompt, cli_preview(&repo), "byte for byte, once saved");
    c.stop();
}
