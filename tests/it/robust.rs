//! Robustness: every bad input gets one clear error and writes nothing; concurrent
//! compiles never expose a partial manifest; an interrupted run leaves no temporary file;
//! odd files (not UTF-8, huge) crash nothing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::{Output, Repo, WORKER_LOCK, WORKER_MANIFEST};

const WORKER: [&str; 4] = ["--role", "worker", "--change", "add-auth"];

/// A file of `fixtures/bad/`.
fn bad(name: &str) -> String {
    format!("{}/fixtures/bad/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A file of `fixtures/contracts/`.
fn contracts(name: &str) -> String {
    format!("{}/fixtures/contracts/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The error shape: a first line `error: …`, then only `caused by: …` and `hint: …` lines;
/// nothing on stdout, except under `--format json`: one object `{status: "ERROR", error,
/// hint?}` whose `error` is the first line's message and `hint` the hint line's.
fn assert_one_clear_error(out: &Output, what: &str) {
    if what.contains("--format json") && !out.stdout.trim().is_empty() {
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{what}: stdout is not one JSON object ({e}):\n{}",
                out.stdout
            )
        });
        assert_eq!(v["status"], "ERROR", "{what}");
        let first = out.stderr.lines().next().unwrap_or_default();
        assert_eq!(
            Some(first.trim_start_matches("error: ")),
            v["error"].as_str(),
            "{what}"
        );
        let hint = out.stderr.lines().find_map(|l| l.strip_prefix("hint: "));
        assert_eq!(v.get("hint").and_then(|h| h.as_str()), hint, "{what}");
        let fields = 2 + usize::from(hint.is_some());
        assert_eq!(
            v.as_object().map(serde_json::Map::len),
            Some(fields),
            "{what}"
        );
    } else {
        assert!(
            out.stdout.trim().is_empty(),
            "{what}: stdout is not empty:\n{}",
            out.stdout
        );
    }
    assert!(
        out.stderr.ends_with('\n'),
        "{what}: stderr does not end a line: {:?}",
        out.stderr
    );
    let mut lines = out.stderr.lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("error: ") && first.len() > "error: ".len(),
        "{what}: the first line is not `error: …`:\n{}",
        out.stderr
    );
    for line in lines {
        assert!(
            line.starts_with("caused by: ") || line.starts_with("hint: "),
            "{what}: line {line:?} is neither `caused by:` nor `hint:`:\n{}",
            out.stderr
        );
    }
    for marker in ["panicked", "RUST_BACKTRACE", "stack backtrace"] {
        assert!(!out.stderr.contains(marker), "{what}:\n{}", out.stderr);
    }
}

/// Every file below `dir` whose name marks it as a temporary file.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .map(|e| e.path().to_owned())
        .collect()
}

/// The curate binary as every test starts it (`Cmd::command`), not waited for.
fn spawn(repo: &Repo, args: &[&str]) -> Child {
    repo.curate()
        .args(args)
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run curate")
}

/// Sends SIGTERM. `kill` fails only when the process is already gone (it finished first),
/// which the callers allow for.
fn terminate(child: &Child) {
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
}

/// Waits for a child, killing it (and failing) after `limit`.
fn wait_for(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("curate did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Exited by the SIGTERM cleanup handler (130), by the signal itself, or finished (0).
fn assert_ended_by_term_or_finished(status: ExitStatus) {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert!(
            matches!(status.code(), Some(0 | 130)) || status.signal() == Some(15),
            "unexpected end of an interrupted run: {status:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Bad input

/// One bad input: the arguments, the expected exit code, a text the first line must hold,
/// and a file to put in the repository first (path, bytes).
struct Case {
    args: Vec<String>,
    code: i32,
    first_line_has: &'static str,
    setup: Option<(&'static str, Vec<u8>)>,
    env: Option<(&'static str, String)>,
}

fn case(args: &[&str], code: i32, first_line_has: &'static str) -> Case {
    Case {
        args: args.iter().map(|s| (*s).to_owned()).collect(),
        code,
        first_line_has,
        setup: None,
        env: None,
    }
}

/// `--role worker --change add-auth` plus `extra`.
fn worker(extra: &[&str], code: i32, first_line_has: &'static str) -> Case {
    let mut args: Vec<&str> = WORKER.to_vec();
    args.extend_from_slice(extra);
    case(&args, code, first_line_has)
}

fn every_bad_input() -> Vec<Case> {
    let c = |name: &str| contracts(name);
    let b = bad;
    let mut cases = vec![
        // Malformed contracts JSON, with file:line:column.
        worker(
            &["--contracts", &c("malformed.json")],
            1,
            "malformed.json:4:22",
        ),
        worker(
            &["--contracts", &b("contracts-truncated.json")],
            1,
            "contracts-truncated.json:",
        ),
        worker(
            &["--contracts", &b("contracts-not-utf8.json")],
            1,
            "contracts-not-utf8.json:3:",
        ),
        // A contracts file that fails the schema (pointer and line:column on `caused by:`).
        worker(
            &["--contracts", &c("extra-key.json")],
            1,
            "extra-key.json: 1 schema error",
        ),
        worker(&["--contracts", &c("no-roletypes.json")], 1, "schema error"),
        // Sections with start > end, and zero.
        worker(&["--contracts", &c("bad-sections.json")], 1, "schema error"),
        worker(&["--contracts", &c("zero-section.json")], 1, "schema error"),
        // A glob or path in the contracts that escapes the repository.
        worker(
            &["--contracts", &b("contracts-escaping-glob.json")],
            1,
            "../outside/*.md",
        ),
        worker(
            &["--contracts", &b("contracts-absolute-path.json")],
            1,
            "/etc/passwd",
        ),
        worker(
            &["--contracts", &b("contracts-drive-letter.json")],
            1,
            "C:/Windows/win.ini",
        ),
        worker(
            &["--contracts", &b("contracts-hidden-escape.json")],
            1,
            "docs/../../outside.md",
        ),
        // A missing contracts file, and an unknown role.
        worker(&["--contracts", "no/such/contracts.json"], 1, "cannot read"),
        case(
            &["--role", "painter", "--change", "add-auth"],
            1,
            "unknown role",
        ),
        // Escaping globs and paths on the command line.
        worker(&["--owns", "../outside.md"], 1, "--owns"),
        worker(&["--owns", "/etc/passwd"], 1, "--owns"),
        worker(&["--owns", "C:\\x"], 1, "--owns"),
        worker(&["--owns", "src/../../x"], 1, "--owns"),
        worker(&["--reads", "../*.md"], 1, "--reads"),
        worker(&["--add", "../outside.md:high:assigned"], 1, "--add"),
        worker(&["--add", "/etc/passwd:low:notes:why"], 1, "--add"),
        worker(&["--drop", "../*"], 1, "../*"),
        worker(
            &["--files-from", &b("files-from-escaping.txt")],
            1,
            "--files-from",
        ),
        worker(
            &["--files-from", &b("files-from-absolute-nul.txt")],
            1,
            "--files-from",
        ),
        // An --add with an unknown priority is a usage error.
        worker(&["--add", "README.md:urgent:k"], 2, "--add"),
        // Invalid ids and roles: usage errors, before any path is built.
        case(
            &["--role", "worker", "--change", "../x"],
            2,
            "invalid change id",
        ),
        case(
            &["--role", "worker", "--change", "a/b"],
            2,
            "invalid change id",
        ),
        case(
            &["--role", "worker", "--change", ""],
            2,
            "invalid change id",
        ),
        case(
            &["--role", "worker", "--change", ".hidden"],
            2,
            "invalid change id",
        ),
        case(
            &["--role", "a b", "--change", "add-auth"],
            2,
            "invalid role",
        ),
        case(
            &["--role", "../worker", "--change", "add-auth"],
            2,
            "invalid role",
        ),
        case(
            &["--role", "wörker", "--change", "add-auth"],
            2,
            "invalid role",
        ),
        case(
            &["render", "--role", "worker", "--change", "..", "-o", "p.md"],
            2,
            "invalid change id",
        ),
        case(
            &["preview", "--role", "-", "--change", "add-auth"],
            2,
            "invalid role",
        ),
        // Task files: an unknown field, malformed JSON, a missing required field, an
        // escaping owned path, a missing file.
        worker(
            &["--task-file", &b("task-unknown-field.json")],
            1,
            "task-unknown-field.json:5:",
        ),
        worker(
            &["--task-file", &b("task-malformed.json")],
            1,
            "task-malformed.json:4:",
        ),
        worker(
            &["--task-file", &b("task-no-success-criteria.json")],
            1,
            "success_criteria",
        ),
        worker(
            &["--task-file", &b("task-escaping-owned.json")],
            1,
            "../../etc/passwd",
        ),
        worker(&["--task-file", "no-such-task.json"], 1, "cannot read"),
        // A missing repository (and a file where a folder should be).
        case(
            &[
                "-C",
                "no/such/repo",
                "--role",
                "worker",
                "--change",
                "add-auth",
            ],
            1,
            "no/such/repo",
        ),
        case(
            &[
                "-C",
                "AI_PROJECT.md",
                "--role",
                "worker",
                "--change",
                "add-auth",
            ],
            1,
            "AI_PROJECT.md",
        ),
    ];
    // Overrides files (given with --overrides), each with file:line.
    for (name, has) in [
        ("overrides-malformed.jsonl", "overrides-malformed.jsonl:3:"),
        (
            "overrides-unknown-priority.jsonl",
            "overrides-unknown-priority.jsonl:1",
        ),
        (
            "overrides-escaping-file.jsonl",
            "overrides-escaping-file.jsonl:1",
        ),
        (
            "overrides-absolute-file.jsonl",
            "overrides-absolute-file.jsonl:1",
        ),
        (
            "overrides-escaping-drop.jsonl",
            "overrides-escaping-drop.jsonl:1",
        ),
        (
            "overrides-reversed-section.jsonl",
            "overrides-reversed-section.jsonl:1",
        ),
        (
            "overrides-zero-section.jsonl",
            "overrides-zero-section.jsonl:1",
        ),
        (
            "overrides-empty-sections.jsonl",
            "overrides-empty-sections.jsonl:1",
        ),
        (
            "overrides-missing-file.jsonl",
            "overrides-missing-file.jsonl:1",
        ),
        (
            "overrides-add-without-kind.jsonl",
            "overrides-add-without-kind.jsonl:1",
        ),
        (
            "overrides-unknown-key.jsonl",
            "overrides-unknown-key.jsonl:1",
        ),
        (
            "overrides-not-an-object.jsonl",
            "overrides-not-an-object.jsonl:1",
        ),
    ] {
        cases.push(worker(&["--overrides", &b(name)], 1, has));
    }
    cases.push(worker(&["--overrides", "no/such.jsonl"], 1, "cannot read"));
    // The overrides file at its default place in the repository.
    let mut at_home = worker(&[], 1, "worker-context.overrides.jsonl:1");
    at_home.setup = Some((
        "changes/add-auth/analysis/worker-context.overrides.jsonl",
        b"{\"file\":\"AI_PROJECT.md\",\"priority\":\"highest\"}\n".to_vec(),
    ));
    cases.push(at_home);
    // The repository's own contracts file, malformed: no fallback to the embedded one.
    let mut own = worker(&[], 1, "contracts/workflow-delegation-contracts.json:");
    own.setup = Some((
        "contracts/workflow-delegation-contracts.json",
        std::fs::read(c("malformed.json")).unwrap(),
    ));
    cases.push(own);
    // CURATE_CONTRACTS naming a file that fails the schema.
    let mut env = worker(&[], 1, "schema error");
    env.env = Some(("CURATE_CONTRACTS", c("zero-section.json")));
    cases.push(env);
    cases
}

#[test]
fn every_bad_input_gets_one_clear_error_and_writes_nothing() {
    let repo = Repo::fixture("aiws-basic");
    // A manifest and lock from an earlier good run are there to be lost.
    let first = repo.curate().args(WORKER).run();
    assert_eq!(first.code, 0, "{}", first.stderr);
    let previous = repo.read(WORKER_MANIFEST);
    for (i, c) in every_bad_input().into_iter().enumerate() {
        if let Some((rel, bytes)) = &c.setup {
            let p = repo.root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
        }
        let before = repo.snapshot_tree();
        // Each case as a compile, and, for the compile-shaped ones, as render -o and preview.
        let mut runs = vec![c.args.clone()];
        if c.args.first().is_some_and(|a| a == "--role") {
            let mut render = vec!["render".to_owned()];
            render.extend(c.args.iter().cloned());
            render.extend(["-o".to_owned(), "prompt.md".to_owned()]);
            let mut preview = vec!["preview".to_owned()];
            preview.extend(c.args.iter().cloned());
            preview.extend(["--format".to_owned(), "json".to_owned()]);
            runs.push(render);
            runs.push(preview);
        }
        for args in runs {
            let what = format!("case {i} `curate {}`", args.join(" "));
            let mut cmd = repo.curate().args(&args);
            if let Some((k, v)) = &c.env {
                cmd = cmd.env(k, v);
            }
            let out = cmd.run();
            assert_eq!(out.code, c.code, "{what}:\n{}", out.stderr);
            assert_one_clear_error(&out, &what);
            let first = out.stderr.lines().next().unwrap_or_default();
            assert!(
                first.contains(c.first_line_has),
                "{what}: the first line does not name {:?}:\n{}",
                c.first_line_has,
                out.stderr
            );
            assert!(
                repo.snapshot_tree() == before,
                "{what}: the repository changed"
            );
        }
        if let Some((rel, _)) = &c.setup {
            std::fs::remove_file(repo.root.join(rel)).unwrap();
        }
    }
    assert_eq!(repo.read(WORKER_MANIFEST), previous);
    assert!(temp_files(&repo.root).is_empty());
}

// Regression: a raw newline inside a user-supplied string (an unknown key of an overrides line
// or of a contracts item, a glob that does not compile) was copied into the message as it is,
// so the error spanned a line that was neither `caused by:` nor `hint:`.
#[test]
fn newlines_in_user_strings_do_not_break_the_error_shape() {
    let repo = Repo::fixture("aiws-basic");
    let before = repo.snapshot_tree();
    for extra in [
        ["--overrides", &bad("overrides-newline-in-key.jsonl")],
        ["--contracts", &bad("contracts-newline-in-key.json")],
        ["--contracts", &bad("contracts-bad-glob.json")],
    ] {
        let out = repo.curate().args(WORKER).args(extra).run();
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert_one_clear_error(&out, &extra.join(" "));
    }
    assert!(repo.snapshot_tree() == before);
}

// ---------------------------------------------------------------------------------------
// Concurrency

#[test]
fn eight_concurrent_compiles_never_expose_a_partial_manifest() {
    let repo = Repo::fixture("aiws-basic");
    let manifest = repo.root.join(WORKER_MANIFEST);
    let lock = repo.root.join(WORKER_LOCK);
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let stop = Arc::clone(&stop);
        let (manifest, lock) = (manifest.clone(), lock.clone());
        std::thread::spawn(move || {
            let (mut absent, mut whole) = (0u32, 0u32);
            while !stop.load(Ordering::Relaxed) {
                match std::fs::read_to_string(&manifest) {
                    Ok(text) => {
                        assert!(
                            text.starts_with("// curate:"),
                            "a read saw a manifest without its header:\n{text}"
                        );
                        assert!(
                            curate::stages::manifest::is_intact(&text),
                            "a read saw a partial or mixed manifest:\n{text}"
                        );
                        whole += 1;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => absent += 1,
                    Err(e) => panic!("reading the manifest: {e}"),
                }
                match std::fs::read(&lock) {
                    Ok(bytes) => {
                        serde_json::from_slice::<serde_json::Value>(&bytes)
                            .expect("a read saw a partial lock");
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => panic!("reading the lock: {e}"),
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            (absent, whole)
        })
    };
    let args = ["--role", "worker", "--change", "add-auth"];
    let children: Vec<Child> = (0..8).map(|_| spawn(&repo, &args)).collect();
    let mut failures = Vec::new();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !stderr.contains("panicked at"),
            "curate panicked:\n{stderr}"
        );
        if out.status.code() != Some(0) {
            failures.push(format!("{:?}: {stderr}", out.status));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (absent, whole) = reader.join().expect("the reader saw a broken file");
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(whole > 0 || absent > 0);
    // Same inputs, same bytes: whichever run won, the result is the single-run result.
    let text = repo.read(WORKER_MANIFEST);
    assert!(curate::stages::manifest::is_intact(&text));
    let lock: curate::stages::manifest::Lock =
        serde_json::from_str(&repo.read(WORKER_LOCK)).expect("the lock parses");
    assert!(
        lock.matches(&text),
        "the lock does not describe the manifest"
    );
    let again = repo.curate().args(args).args(["--stdout"]).run();
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, text);
    let left = temp_files(&repo.root);
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

// ---------------------------------------------------------------------------------------
// Interruption

/// Writes a text file of about `mib` MiB (short lines of words, no NUL, no secret).
fn write_big(path: &Path, mib: usize) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let words = [
        "alpha", "beta", "gamma", "delta", "let", "x", "=", "+", "(", ")",
    ];
    let mut n = 0usize;
    let mut seed: u32 = 1;
    let mut line = String::new();
    while n < mib * 1024 * 1024 {
        line.clear();
        for _ in 0..10 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            line.push_str(words[(seed >> 16) as usize % words.len()]);
            line.push(' ');
        }
        line.push('\n');
        f.write_all(line.as_bytes()).unwrap();
        n += line.len();
    }
    f.flush().unwrap();
}

/// SIGTERM 100 ms into a compile that reads a 48 MiB assigned file. In a debug build the
/// compile takes many seconds (reading, hashing and tokenising that file), so the signal
/// lands before anything is written: the run must stop, leave no temporary file, and leave
/// the previous manifest and lock exactly as they were. (Where the signal lands is a matter
/// of timing; the assertions hold wherever it lands, so the test cannot flake: a run that
/// finished first must have written an intact manifest.)
#[test]
fn an_interrupted_compile_of_a_huge_file_loses_nothing_and_leaves_no_temporary_file() {
    let repo = Repo::fixture("aiws-basic");
    let first = repo.curate().args(WORKER).run();
    assert_eq!(first.code, 0, "{}", first.stderr);
    let manifest = repo.read(WORKER_MANIFEST);
    let lock = repo.read(WORKER_LOCK);
    write_big(&repo.root.join("src/big.txt"), 48);

    let mut child = spawn(
        &repo,
        &[
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--owns",
            "src/big.txt",
            "--max-lines",
            "0",
            "--max-file-size",
            "100000000",
        ],
    );
    std::thread::sleep(Duration::from_millis(100));
    terminate(&child);
    let status = wait_for(&mut child, Duration::from_secs(120));
    assert_ended_by_term_or_finished(status);

    let left = temp_files(&repo.root);
    assert!(left.is_empty(), "temporary files left: {left:?}");
    let now = repo.read(WORKER_MANIFEST);
    assert!(curate::stages::manifest::is_intact(&now), "{now}");
    if status.code() == Some(0) {
        assert!(now.contains("src/big.txt"));
    } else {
        assert_eq!(now, manifest, "an interrupted run changed the manifest");
        assert_eq!(
            repo.read(WORKER_LOCK),
            lock,
            "an interrupted run changed the lock"
        );
    }
}

/// SIGTERM while a temporary file is open. `render -o` streams a bundle holding a 24 MiB
/// file into its temporary file, which a debug build takes seconds to fill: the test waits
/// until the temporary exists, terminates the run, and requires that the cleanup handler
/// ran (exit 130, not a finished run, not death by the signal's default action), removed
/// the temporary, and wrote no output file. A run that ends before its temporary is seen
/// fails the test: its claim would be untested.
#[test]
fn sigterm_during_the_write_removes_the_temporary_file() {
    let repo = Repo::fixture("aiws-basic");
    write_big(&repo.root.join("src/big.txt"), 24);
    std::fs::create_dir_all(repo.root.join("out")).unwrap();
    let mut child = spawn(
        &repo,
        &[
            "render",
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--owns",
            "src/big.txt",
            "--max-lines",
            "0",
            "--max-file-size",
            "100000000",
            "--no-cache",
            "-o",
            "out/prompt.md",
        ],
    );
    let folder = repo.root.join("out");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("the render ended ({status:?}) before its temporary file was seen");
        }
        let seen = std::fs::read_dir(&folder).is_ok_and(|d| {
            d.filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        });
        if seen {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(240),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    terminate(&child);
    let status = wait_for(&mut child, Duration::from_secs(60));
    assert_eq!(
        status.code(),
        Some(130),
        "the cleanup handler did not end the run: {status:?}"
    );
    let left = temp_files(&repo.root);
    assert!(left.is_empty(), "temporary files left: {left:?}");
    assert!(
        !repo.exists("out/prompt.md"),
        "a partial output was written"
    );
}

/// A run killed outright (SIGKILL: no handler runs) leaves its temporaries behind; the next
/// write into the same folder sweeps those of dead processes and keeps a live writer's.
#[test]
fn temporaries_of_a_killed_run_are_swept_by_the_next_write() {
    let repo = Repo::fixture("aiws-basic");
    let dir = "changes/add-auth/analysis";
    // A process that has ended: its pid is free.
    let mut gone = Command::new("true").spawn().expect("run true");
    let dead = gone.id();
    gone.wait().unwrap();
    let stale_manifest = format!("{dir}/.worker-context.jsonl.tmp-{dead}-aB3dE5gH");
    let stale_lock = format!("{dir}/.worker-context.lock.json.tmp-{dead}-zY8xW6vU");
    // This test process is alive: its temporary must be left alone.
    let live = format!(
        "{dir}/.worker-context.jsonl.tmp-{}-liveLIVE",
        std::process::id()
    );
    for rel in [&stale_manifest, &stale_lock, &live] {
        repo.write(rel, "{\"file\":\"partial");
    }
    let out = repo.curate().args(WORKER).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !repo.exists(&stale_manifest),
        "stale manifest temporary kept"
    );
    assert!(!repo.exists(&stale_lock), "stale lock temporary kept");
    assert!(repo.exists(&live), "a live writer's temporary was removed");
    // Never selected: the temporaries are curate's own files.
    assert!(!repo.read(WORKER_MANIFEST).contains(".tmp-"));
    std::fs::remove_file(repo.root.join(&live)).unwrap();
    assert!(temp_files(&repo.root).is_empty());
}

// ---------------------------------------------------------------------------------------
// Odd files

#[test]
fn a_non_utf8_file_is_counted_and_a_12_mib_file_is_excluded_with_a_note() {
    let repo = Repo::fixture("aiws-basic");
    let latin1: &[u8] =
        b"caf\xe9 cr\xe8me br\xfbl\xe9e\nna\xefve\r\n\n\xff\xfe last line, no newline";
    std::fs::write(repo.root.join("src/latin1.txt"), latin1).unwrap();
    let mut line = vec![b'x'; 99];
    line.push(b'\n');
    let huge = line.repeat(12 * 1024 * 1024 / 100 + 1);
    std::fs::write(repo.root.join("src/huge.txt"), &huge[..12 * 1024 * 1024]).unwrap();

    let out = repo
        .curate()
        .args(WORKER)
        .args([
            "--owns",
            "src/latin1.txt",
            "--owns",
            "src/huge.txt",
            "--format",
            "json",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = out.json();
    let entries = report["entries"].as_array().expect("entries");
    let latin = entries
        .iter()
        .find(|e| e["file"] == "src/latin1.txt")
        .unwrap_or_else(|| panic!("the non-UTF-8 file is not an entry: {report:#}"));
    assert_eq!(latin["lines"], curate::stages::measure::count_lines(latin1));
    assert!(latin["tokens"].as_u64().is_some_and(|t| t > 0), "{latin}");
    assert!(!entries.iter().any(|e| e["file"] == "src/huge.txt"));
    let excluded = report["excluded"].as_array().expect("excluded");
    let note = excluded
        .iter()
        .find(|e| e["file"] == "src/huge.txt")
        .unwrap_or_else(|| panic!("the huge file is not excluded: {report:#}"));
    assert!(
        note.to_string().contains("--max-file-size"),
        "the note does not name --max-file-size: {note}"
    );
    let manifest = repo.read(WORKER_MANIFEST);
    assert!(curate::stages::manifest::is_intact(&manifest));
    assert!(manifest.contains("\"file\":\"src/latin1.txt\""));
    assert!(
        manifest.lines().any(|l| l.starts_with("// curation:")
            && l.contains("\"src/huge.txt\"")
            && l.contains("--max-file-size")),
        "{manifest}"
    );

    // The other commands read the same files without crashing.
    for cmd in ["render", "preview"] {
        let out = repo
            .curate()
            .args([cmd])
            .args(WORKER)
            .args(["--owns", "src/latin1.txt", "--owns", "src/huge.txt"])
            .run();
        assert_eq!(out.code, 0, "{cmd}: {}", out.stderr);
    }
    let out = repo.curate().args(["check"]).run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
}

// Regression: outputs were written through `tempfile`, whose files are created with mode 0600
// and kept it after the rename, so the manifest, the lock and `render -o` output were readable
// by their owner only, whatever the umask (a plain write gives 0644 under umask 022).
#[cfg(unix)]
#[test]
fn written_files_honour_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::fixture("aiws-basic");
    let out = repo.curate().args(WORKER).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    repo.write("plain.txt", "x");
    let mode = |rel: &str| {
        std::fs::metadata(repo.root.join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    let expected = mode("plain.txt");
    for rel in [WORKER_MANIFEST, WORKER_LOCK] {
        assert_eq!(
            format!("{:o}", mode(rel)),
            format!("{expected:o}"),
            "mode of {rel}"
        );
    }
}
