//! `curate watch` (docs/budgets.md#related-files): a compile with `--related` asks the
//! watcher and gets the list it would have made itself, before and after the tree changes
//! in every way a tree changes (a file written in place with its old modification time, a
//! file added, removed, a folder renamed, an ignore file); a second watcher is refused; the
//! socket goes with the process; a question that is not one does not stop it.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant, SystemTime};

use crate::Repo;
use crate::related_index::{aged_fixture, set_mtime};

/// The note a compile answered by the watcher prints.
const ANSWERED: &str = "answered by `curate watch`";

/// A running `curate watch`, killed when dropped.
struct Watcher {
    child: Child,
    socket: PathBuf,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `curate watch` in `repo` and waits for its socket.
fn watch(repo: &Repo) -> Watcher {
    let mut cmd = repo.curate().args(["watch"]).command();
    let child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start curate watch");
    let socket =
        socket_of(repo).unwrap_or_else(|| panic!("no socket in {}", repo.cache_dir().display()));
    Watcher { child, socket }
}

/// The watcher's socket in the repository's cache folder, once it is there (10 s at most).
fn socket_of(repo: &Repo) -> Option<PathBuf> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if let Ok(dir) = std::fs::read_dir(repo.cache_dir()) {
            for e in dir.flatten() {
                if e.file_name().to_string_lossy().starts_with("watch-") {
                    return Some(e.path());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// A day ago.
fn past() -> SystemTime {
    crate::related_index::past(24)
}

/// `--related 3000` from the login module: the manifest (stdout) and the report (stderr).
fn related(repo: &Repo, extra: &[&str]) -> (String, String) {
    let mut args = vec!["--related", "3000", "--max-files", "0", "--stdout"];
    args.extend_from_slice(extra);
    let out = crate::compile::related(repo, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    (out.stdout, out.stderr)
}

/// The watcher's answer and a run that asks nobody (`--no-cache`) give the same manifest.
fn assert_as_alone(repo: &Repo, what: &str) {
    let (watched, report) = related(repo, &["-v"]);
    assert!(
        report.contains(ANSWERED),
        "{what}: not answered by the watcher:\n{report}"
    );
    let (alone, report) = related(repo, &["--no-cache", "-v"]);
    assert!(!report.contains(ANSWERED), "{report}");
    assert_eq!(
        watched, alone,
        "{what}: the watcher's answer differs from a run's"
    );
}

fn related_files(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .filter(|l| l.contains("\"kind\":\"related\""))
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            Some(v["file"].as_str()?.to_owned())
        })
        .collect()
}

#[test]
fn the_watchers_answer_is_the_runs_and_follows_every_change() {
    let repo = aged_fixture();
    let _w = watch(&repo);
    // The first run stamps everything, the next ones take what the events vouch for.
    assert_as_alone(&repo, "first run");
    assert_as_alone(&repo, "second run");
    let (before, _) = related(&repo, &[]);
    assert!(related_files(&before).contains(&"src/auth/credentials.ts".to_owned()));

    // Written in place, its modification time put back: only the change time and the event
    // tell (a kept stamp taken on trust would keep it related).
    let credentials = repo.root.join("src/auth/credentials.ts");
    std::fs::write(&credentials, "export const unrelated = 1;\n").unwrap();
    set_mtime(&credentials, past());
    assert_as_alone(&repo, "a file written in place");
    let (after, _) = related(&repo, &[]);
    assert!(
        !related_files(&after).contains(&"src/auth/credentials.ts".to_owned()),
        "{after}"
    );

    // The same for a file that was not related and now uses the owned module: a kept
    // stamp taken on trust would keep its old words, and leave it out.
    let legacy = repo.root.join("src/auth/legacy_client.ts");
    assert!(!related_files(&after).contains(&"src/auth/legacy_client.ts".to_owned()));
    std::fs::write(
        &legacy,
        "import { LoginService } from './login';\nexport function legacyLogin(s: LoginService): LoginService {\n  return s;\n}\n",
    )
    .unwrap();
    set_mtime(&legacy, past());
    assert_as_alone(&repo, "a file written in place to use the owned module");
    let (now, _) = related(&repo, &[]);
    assert!(
        related_files(&now).contains(&"src/auth/legacy_client.ts".to_owned()),
        "{now}"
    );

    // A new file in a new folder that uses the owned module.
    repo.write(
        "src/audit/trail.ts",
        "import { LoginService } from '../auth/login';\nexport function auditLogin(s: LoginService): LoginService {\n  return s;\n}\n",
    );
    assert_as_alone(&repo, "a file added in a new folder");
    let (added, _) = related(&repo, &[]);
    assert!(
        related_files(&added).contains(&"src/audit/trail.ts".to_owned()),
        "{added}"
    );

    // Removed, and a folder renamed.
    std::fs::remove_file(repo.root.join("src/api/routes.ts")).unwrap();
    assert_as_alone(&repo, "a file removed");
    std::fs::rename(repo.root.join("tests"), repo.root.join("spec")).unwrap();
    assert_as_alone(&repo, "a folder renamed");
    let (renamed, _) = related(&repo, &[]);
    assert!(
        related_files(&renamed)
            .iter()
            .all(|f| !f.starts_with("tests/")),
        "{renamed}"
    );

    // An ignore file that now leaves a related file out.
    let gitignore = repo.root.join(".gitignore");
    let mut text = std::fs::read_to_string(&gitignore).unwrap();
    text.push_str("src/audit/\n");
    std::fs::write(&gitignore, text).unwrap();
    set_mtime(&gitignore, past());
    assert_as_alone(&repo, "an ignore file changed");
    let (ignored, _) = related(&repo, &[]);
    assert!(
        !related_files(&ignored).contains(&"src/audit/trail.ts".to_owned()),
        "{ignored}"
    );
}

#[test]
fn the_watchers_answer_to_the_task_words_is_the_runs_and_follows_every_change() {
    use crate::task_index::{TEXT, aged, related};
    let repo = aged();
    let _w = watch(&repo);
    let run = |extra: &[&str]| {
        let out = crate::task_words::with_text(&repo, TEXT, extra);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out
    };
    // The watcher's answer, and the same bytes from a run that asks nobody.
    let as_alone = |what: &str| {
        let watched = run(&["-v"]);
        assert!(
            watched
                .stderr
                .contains("the task's words: answered by `curate watch`"),
            "{what}: not answered by the watcher:\n{}",
            watched.stderr
        );
        let alone = run(&["--no-cache", "-v"]);
        assert!(!alone.stderr.contains(ANSWERED), "{}", alone.stderr);
        assert_eq!(
            watched.stdout, alone.stdout,
            "{what}: the watcher's answer differs"
        );
        watched
    };
    // The first run stamps everything, the next ones take what the events vouch for.
    assert_eq!(related(&as_alone("first run")), ["docs/auth.md"]);
    assert_eq!(related(&as_alone("second run")), ["docs/auth.md"]);

    // Written in place with new words, its modification time put back: the event tells.
    repo.write(
        "docs/deploy.md",
        "# Lockout\n\nAccounts lock; failed logins.\n",
    );
    set_mtime(&repo.root.join("docs/deploy.md"), past());
    let out = as_alone("a file written in place");
    assert!(
        related(&out).contains(&"docs/deploy.md".to_owned()),
        "{}",
        out.stdout
    );

    // A file that came to hold a secret: neither selected nor served, never printed.
    let key = "aws_access_key_id = AKIA4Q7ZK2M5XWT3RJ6L\naws_secret_access_key = \"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\"\n";
    let text = format!("{}{key}", repo.read("docs/auth.md"));
    repo.write("docs/auth.md", &text);
    set_mtime(&repo.root.join("docs/auth.md"), past());
    let out = as_alone("a file that came to hold a secret");
    assert!(
        !related(&out).contains(&"docs/auth.md".to_owned()),
        "{}",
        out.stdout
    );
    assert!(!out.all().contains("AKIA4Q7ZK2M5XWT3RJ6L"));

    // A new file in a new folder.
    repo.write(
        "guides/lockout.md",
        "# Lockout\n\nFailed logins lock accounts.\n",
    );
    let out = as_alone("a file added in a new folder");
    assert!(
        related(&out).contains(&"guides/lockout.md".to_owned()),
        "{}",
        out.stdout
    );
}

#[test]
fn a_second_watcher_is_refused_and_the_socket_goes_with_the_process() {
    let repo = aged_fixture();
    let mut w = watch(&repo);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&w.socket).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "the socket is this user's only");
    let second = repo.curate().args(["watch"]).run();
    assert_eq!(second.code, 1, "{}", second.stderr);
    assert!(
        second.stderr.contains("watched already"),
        "{}",
        second.stderr
    );
    // One line a question answered, on its stderr.
    let _ = related(&repo, &[]);
    // SIGTERM, as a service manager stops it.
    let pid = w.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let (code, told) = ended(&mut w);
    assert_eq!(code, Some(130), "{told}");
    assert!(!w.socket.exists(), "the socket outlived the watcher");
    assert!(
        told.contains("curate watch: change add-auth: 4 related files for 1 owned, "),
        "{told}"
    );
    // With no watcher, a compile ranks alone (and says nothing of a watcher).
    let (_, report) = related(&repo, &["-v"]);
    assert!(!report.contains(ANSWERED), "{report}");
}

#[test]
fn a_question_that_is_not_one_is_answered_with_an_error_and_the_watcher_goes_on() {
    let repo = aged_fixture();
    let w = watch(&repo);
    let question = |asking: serde_json::Value, root: &str| {
        serde_json::json!({
            "version": concat!(env!("CARGO_PKG_VERSION"), "/related-2"),
            "root": root, "changes_root": "changes", "change": "add-auth", "ignore": true,
            "manifest": "{changes}/{change}/analysis/{role}-context.jsonl",
            "max_file_size": 0, "encoding": "o200k_base", "asking": asking
        })
        .to_string()
    };
    let related =
        |owned: &str| serde_json::json!({"kind": "related", "owned": [owned], "budget": 3000});
    let root = repo.root.to_string_lossy().into_owned();
    let outside = question(related("../../../etc/passwd"), &root);
    let other_repo = question(related("src/auth/login.ts"), "/");
    // The task's words: a text whose links start outside, a selected file outside.
    let task = |dir: &str, skip: &str| {
        serde_json::json!({"kind": "task", "budget": 3000, "skip": [skip],
            "texts": [{"source": "--task-text", "dir": dir, "text": "see [x](../../etc/passwd)"}]})
    };
    let text_outside = question(task("../..", "src/a.ts"), &root);
    let skip_outside = question(task("docs", "/etc/passwd"), &root);
    for junk in [
        &b"not json\n"[..],
        b"{\"version\":\"0.0.0/related-2\"}\n",
        b"",
        outside.as_bytes(),
        other_repo.as_bytes(),
        text_outside.as_bytes(),
        skip_outside.as_bytes(),
    ] {
        let mut s = std::os::unix::net::UnixStream::connect(&w.socket).unwrap();
        s.write_all(junk).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert!(v["error"].is_string(), "{answer}");
        assert!(v["found"].as_array().is_some_and(Vec::is_empty), "{answer}");
    }
    assert_as_alone(&repo, "after junk");
}

#[test]
fn doctor_says_whether_a_watcher_answers() {
    let repo = aged_fixture();
    let before = repo.curate().args(["doctor"]).run();
    assert!(
        before.stdout.contains("curate watch: not running"),
        "{}",
        before.stdout
    );
    let w = watch(&repo);
    let during = repo.curate().args(["doctor", "--format", "json"]).run();
    let v: serde_json::Value = serde_json::from_str(&during.stdout).unwrap();
    assert_eq!(v["watch"]["answering"], true, "{}", during.stdout);
    assert_eq!(v["watch"]["socket"], w.socket.display().to_string());
    // The watcher still answers after doctor's connection.
    assert_as_alone(&repo, "after doctor");
}

#[test]
fn a_repository_made_after_the_watcher_started_has_its_exclude_file_followed() {
    let repo = aged_fixture();
    let _w = watch(&repo);
    assert_as_alone(&repo, "first run");
    // `git init` after the watcher started: `.git/info/exclude` is an ignore file too.
    std::fs::create_dir_all(repo.root.join(".git/info")).unwrap();
    assert_as_alone(&repo, "a .git folder made");
    std::fs::write(repo.root.join(".git/info/exclude"), "src/auth/session.ts\n").unwrap();
    assert_as_alone(&repo, "an exclude file written");
    let (excluded, _) = related(&repo, &[]);
    assert!(
        !related_files(&excluded).contains(&"src/auth/session.ts".to_owned()),
        "{excluded}"
    );
    std::fs::write(repo.root.join(".git/info/exclude"), "").unwrap();
    assert_as_alone(&repo, "the exclude file emptied");
}

#[test]
fn the_watcher_ends_when_its_repository_goes_even_before_any_run() {
    let repo = aged_fixture();
    let mut w = watch(&repo);
    let moved = repo.root.with_file_name("moved");
    std::fs::rename(&repo.root, &moved).unwrap();
    let (code, stderr) = ended(&mut w);
    std::fs::rename(&moved, &repo.root).unwrap();
    assert_eq!(code, Some(1));
    assert!(stderr.contains("was removed or moved"), "{stderr}");
    assert!(!w.socket.exists(), "the socket outlived the watcher");
}

/// Waits for the watcher to end (10 s at most): its exit code and what it said.
fn ended(w: &mut Watcher) -> (Option<i32>, String) {
    let start = Instant::now();
    let status = loop {
        if let Some(status) = w.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the watcher did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut told = String::new();
    w.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut told)
        .unwrap();
    (status.code(), told)
}

#[test]
fn the_watcher_ends_when_its_repository_is_removed_under_it_or_its_socket_goes() {
    // Removed while the watcher's own working folder is in it (no event comes): a
    // repository made again at the same path is never answered from the old one.
    let repo = aged_fixture();
    let mut w = watch(&repo);
    assert_as_alone(&repo, "first run");
    std::fs::remove_dir_all(&repo.root).unwrap();
    let (code, told) = ended(&mut w);
    assert_eq!(code, Some(1), "{told}");
    assert!(told.contains("was removed or moved"), "{told}");
    // The cache folder removed: no compile can reach it, and it says so.
    let repo = aged_fixture();
    let mut w = watch(&repo);
    std::fs::remove_dir_all(repo.cache_dir()).unwrap();
    let (code, told) = ended(&mut w);
    assert_eq!(code, Some(1), "{told}");
    assert!(told.contains("was removed or replaced"), "{told}");
}

#[test]
fn a_stopped_watcher_is_not_waited_for() {
    let repo = aged_fixture();
    let w = watch(&repo);
    let pid = w.child.id().to_string();
    let signal = |s: &str| {
        assert!(
            std::process::Command::new("kill")
                .args([s, &pid])
                .status()
                .unwrap()
                .success()
        );
    };
    signal("-STOP");
    let start = Instant::now();
    let (watched, report) = related(&repo, &["-v"]);
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "waited {:?} for a stopped watcher",
        start.elapsed()
    );
    assert!(
        report.contains(&format!("it is stopped, pid {pid}")),
        "{report}"
    );
    let (alone, _) = related(&repo, &["--no-cache"]);
    assert_eq!(watched, alone);
    let doctor = repo.curate().args(["doctor"]).run();
    assert!(
        doctor
            .stdout
            .contains(&format!("curate watch: stopped (pid {pid}")),
        "{}",
        doctor.stdout
    );
    signal("-CONT");
    assert_as_alone(&repo, "continued");
}

#[test]
fn an_answer_that_is_none_is_said_and_the_compile_ranks_alone() {
    let repo = aged_fixture();
    let mut w = watch(&repo);
    // The watcher killed without a word, its socket taken by something that answers junk.
    w.child.kill().unwrap();
    let _ = w.child.wait();
    let _ = std::fs::remove_file(&w.socket);
    let listener = std::os::unix::net::UnixListener::bind(&w.socket).unwrap();
    let server = std::thread::spawn(move || {
        for stream in listener.incoming().take(2) {
            let mut s = stream.unwrap();
            let mut question = Vec::new();
            let _ = s.read_to_end(&mut question);
            let _ = s.write_all(b"{\"found\": 7}\n");
        }
    });
    let (watched, report) = related(&repo, &["-v"]);
    assert!(
        report.contains("`curate watch` gave no answer (an answer that does not decode"),
        "{report}"
    );
    let (alone, _) = related(&repo, &["--no-cache"]);
    assert_eq!(watched, alone);
    let (_, quiet) = related(&repo, &[]);
    assert!(
        quiet.contains("gave no answer"),
        "a warning shows without -v: {quiet}"
    );
    server.join().unwrap();
}

#[test]
fn a_cache_folder_too_deep_for_a_socket_is_named_with_the_way_out() {
    let repo = Repo::fixture("aiws-basic");
    let deep = repo.cache_dir().join("d".repeat(100));
    let out = repo
        .curate()
        .args(["watch"])
        .env("CURATE_CACHE_DIR", &deep.to_string_lossy())
        .run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("set CURATE_CACHE_DIR to a shorter folder"),
        "{}",
        out.stderr
    );
}

/// An MCP call still running when the client's input ends is answered, however long it
/// takes (rmcp alone drops it 5 s after the end): here a compile waits the 5 s a watcher
/// that takes the question and never answers is given.
#[cfg(feature = "mcp")]
#[test]
fn an_mcp_call_still_running_when_stdin_ends_is_answered() {
    use std::io::BufRead;
    let repo = aged_fixture();
    repo.write(".curate/config.toml", "[select]\nrelated_tokens = 3000\n");
    let mut w = watch(&repo);
    w.child.kill().unwrap();
    let _ = w.child.wait();
    let _ = std::fs::remove_file(&w.socket);
    let listener = std::os::unix::net::UnixListener::bind(&w.socket).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let held = stream.unwrap();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(8));
                drop(held);
            });
        }
    });
    let mut child = repo.curate().args(["mcp"]).spawn();
    let mut stdin = child.stdin.take().unwrap();
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}});
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "preview", "arguments": {"role": "worker", "change": "add-auth",
        "owns": ["src/auth/login.ts"]}}});
    // The same id again while the call runs: answered at once as a client's mistake (rmcp
    // would answer only one of the two, and the end of stdin would wait for the other).
    let again = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    writeln!(stdin, "{init}\n{initialized}\n{call}\n{again}").unwrap();
    drop(stdin);
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        start.elapsed() >= Duration::from_secs(5),
        "the compile did not wait"
    );
    let answers: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let call = answers
        .iter()
        .find(|a| a["id"] == 2 && a.get("result").is_some())
        .unwrap_or_else(|| panic!("the call was dropped: {answers:?}"));
    assert!(call["result"].is_object(), "{call}");
    let refused = answers
        .iter()
        .find(|a| a["id"] == 2 && a.get("error").is_some())
        .unwrap_or_else(|| panic!("the second id 2 got no answer: {answers:?}"));
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
}

#[test]
fn watch_needs_the_cache() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo.curate().args(["watch", "--no-cache"]).run();
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("cache folder"), "{}", out.stderr);
}
