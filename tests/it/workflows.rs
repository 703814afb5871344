//! Workflows on fixtures that follow the real layouts (Trellis, OpenSpec, aiws), with no
//! config: the workflow is detected, the right entries are picked, and what curate writes
//! is accepted by the workflow's own reader.
//!
//! Trellis' `task.py validate` and its hook are not on a package registry this project can
//! reach (`@mindfoldhq/trellis` is not served), so [`trellis_validate`] and
//! [`trellis_injects`] reproduce their rules from Trellis' source
//! (`.trellis/scripts/common/task_context.py`, `shared-hooks/inject-subagent-context.py`):
//! every non-blank line must be JSON; a row with a truthy `file` must name an existing file
//! (or, with `type: "directory"`, a folder); rows without one are skipped; the hook injects
//! the rows' files in order, a folder as its `*.md` files sorted (at most 20), each block
//! `=== path ===\n` + the content cut at `max_file_bytes` on a character boundary + a
//! notice when cut.

use crate::{Repo, report as compile, report_files as files};

/// Trellis' `task.py validate` on one jsonl file: its errors (empty = it passes).
fn trellis_validate(repo: &Repo, rel: &str) -> Vec<String> {
    let mut errors = Vec::new();
    for (i, line) in repo.read(rel).lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            errors.push(format!("{}: Invalid JSON", i + 1));
            continue;
        };
        let obj = v.as_object().expect("a non-object row crashes task.py");
        let Some(file) = obj
            .get("file")
            .and_then(|f| f.as_str())
            .filter(|f| !f.is_empty())
        else {
            continue;
        };
        let path = repo.root.join(file);
        let dir = obj.get("type").and_then(|t| t.as_str()) == Some("directory");
        if dir && !path.is_dir() {
            errors.push(format!("{}: Directory not found: {file}", i + 1));
        } else if !dir && !path.is_file() {
            errors.push(format!("{}: File not found: {file}", i + 1));
        }
    }
    errors
}

/// What Trellis' hook injects from one jsonl file: each file with the bytes its block
/// counts against the total.
fn trellis_injects(repo: &Repo, rel: &str, cap: usize) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for line in repo
        .read(rel)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(obj) = v.as_object() else { break };
        let Some(file) = obj
            .get("file")
            .or_else(|| obj.get("path"))
            .and_then(|f| f.as_str())
        else {
            continue;
        };
        let files: Vec<String> = if obj.get("type").and_then(|t| t.as_str()) == Some("directory") {
            let mut names: Vec<String> = std::fs::read_dir(repo.root.join(file))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                // Trellis compares the extension case-sensitively, so this does too.
                .filter(|n| {
                    #[allow(clippy::case_sensitive_file_extension_comparisons)]
                    n.ends_with(".md")
                })
                // `os.path.isfile`: links followed.
                .filter(|n| repo.root.join(file).join(n).is_file())
                .collect();
            names.sort();
            names.truncate(20);
            names
                .iter()
                .map(|n| format!("{}/{n}", file.trim_end_matches('/')))
                .collect()
        } else {
            vec![file.to_owned()]
        };
        for f in files {
            let bytes = std::fs::read(repo.root.join(&f)).unwrap();
            let mut end = bytes.len().min(cap);
            while end < bytes.len() && end > 0 && (bytes[end] & 0xC0) == 0x80 {
                end -= 1;
            }
            let mut n = format!("=== {f} ===\n").len() + end;
            if end < bytes.len() {
                n += format!(
                    "\n[Trellis: truncated at {cap} bytes — read {f} for the full content]"
                )
                .len();
            }
            out.push((f, n as u64));
        }
    }
    out
}

const CURATED: &str = ".trellis/tasks/11-28-login-rate-limit";

/// `--change archive` is a usage error (exit 2) that names the form reaching an archived
/// change of `workflow`.
fn archive_is_refused(repo: &Repo, role: &str, workflow: &str, form: &str) {
    let out = repo
        .curate()
        .args(["--role", role, "--change", "archive"])
        .run();
    assert_eq!(out.code, 2, "{}", out.all());
    let said = format!(
        "\"archive\" is the folder of archived changes ({workflow}), not a change: name an archived one as {form}"
    );
    assert!(out.stderr.contains(&said), "{}", out.stderr);
}

/// Trellis' hook reads the list first and the task's `prd.md`, `design.md`, `implement.md`
/// after it, and names each block that no longer fits its total instead of inlining it
/// (`_budgeted_block`; the notice counts too). curate names the same files: the lists below
/// are what Trellis 0.6.15's `get_implement_context` left out of this fixture, run by hand.
#[test]
fn trellis_names_the_files_its_hook_will_not_inline() {
    let repo = Repo::fixture("trellis");
    let warning = |total: u32| {
        let config = repo.read(".trellis/config.yaml");
        let (head, tail) = config.split_once("max_total_bytes: ").unwrap();
        let tail = tail.trim_start_matches(char::is_numeric);
        repo.write(
            ".trellis/config.yaml",
            &format!("{head}max_total_bytes: {total}{tail}"),
        );
        let report = compile(
            &repo,
            &["--role", "implement", "--change", "11-28-login-rate-limit"],
        );
        let found: Vec<String> = report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w.as_str())
            .filter(|w| w.contains("hook will not inline"))
            .map(str::to_owned)
            .collect();
        let list = repo.read(&format!("{CURATED}/implement.jsonl"));
        for w in &found {
            assert!(list.contains(&serde_json::to_string(w).unwrap()), "{list}");
        }
        found
    };
    // The list fits; the task's design.md comes after it and does not.
    assert_eq!(
        warning(16384),
        [format!(
            "the trellis hook will not inline \"{CURATED}/design.md\": its 16384-byte total is reached before it, and it names the file instead"
        )]
    );
    // The author's rows alone are over: the hook names the last of them, and the task's files.
    assert_eq!(
        warning(9000),
        [format!(
            "the trellis hook will not inline \"src/store/userStore.ts\", \"{CURATED}/research/limiter-options.md\", \"{CURATED}/prd.md\", \"{CURATED}/design.md\": its 9000-byte total is reached before them, and it names the files instead"
        )]
    );
    assert_eq!(warning(131_072), Vec::<String>::new());
    // A hook of the generation that reads those caps keeps them.
    repo.write(
        ".claude/hooks/inject-subagent-context.py",
        "cfg = load_config().get('context_injection', {})\nmax_total_bytes = cfg.get('max_total_bytes', 131072)\n",
    );
    assert_eq!(warning(9000).len(), 1);
    // A Trellis 0.6.x hook inlines every file whole, however large: no byte cap is claimed
    // for it, and curate's line cap bounds the list instead.
    repo.write(
        ".claude/hooks/inject-subagent-context.py",
        "def get_implement_context(repo_root, task_dir):\n    return read_all(task_dir)\n",
    );
    assert_eq!(warning(9000), Vec::<String>::new());
    let report = compile(
        &repo,
        &[
            "--role",
            "implement",
            "--change",
            "11-28-login-rate-limit",
            "--dry-run",
        ],
    );
    assert_eq!(report["budget"]["max_lines"], 4000, "{report}");
    assert_eq!(report["budget"]["max_bytes"], 0, "{report}");
}

#[test]
fn trellis_is_detected_and_the_authors_list_reaches_the_sub_agent_in_order() {
    let repo = Repo::fixture("trellis");
    let authored = repo.read(&format!("{CURATED}/implement.jsonl"));
    let report = compile(
        &repo,
        &["--role", "implement", "--change", "11-28-login-rate-limit"],
    );
    assert_eq!(report["workflow"]["name"], "trellis");
    assert_eq!(report["workflow"]["chosen_by"], "detected");
    assert_eq!(report["manifest"], format!("{CURATED}/implement.jsonl"));
    // Every file the author listed, the folder's guidelines as Trellis reads them, in order.
    assert_eq!(
        files(&report),
        [
            ".trellis/spec/backend/index.md",
            ".trellis/spec/backend/error-handling.md",
            ".trellis/spec/backend/logging.md",
            ".trellis/spec/backend/routes.md",
            "src/store/userStore.ts",
            "src/routes/sessions.ts",
            ".trellis/tasks/11-28-login-rate-limit/research/limiter-options.md",
        ]
    );
    // The task's own files are Trellis' to inject: never listed.
    assert!(
        !files(&report)
            .iter()
            .any(|f| f.ends_with("/prd.md") || f.ends_with("/design.md"))
    );
    let written = repo.read(&format!("{CURATED}/implement.jsonl"));
    // Every author row is still there, byte for byte, in the author's order.
    let rows: Vec<&str> = authored.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut at = 0;
    for row in &rows {
        let found = written.lines().skip(at).position(|l| l == *row);
        assert!(found.is_some(), "{row} lost or moved:\n{written}");
        at += found.unwrap() + 1;
    }
    // Trellis' validate accepts the file, and its hook injects exactly curate's selection
    // (the author's folder row and index.md row both name index.md: the hook reads it twice).
    let path = format!("{CURATED}/implement.jsonl");
    assert_eq!(
        trellis_validate(&repo, &path),
        Vec::<String>::new(),
        "{written}"
    );
    let injected = trellis_injects(&repo, &path, 4096);
    let mut once: Vec<&str> = Vec::new();
    for (f, _) in &injected {
        if !once.contains(&f.as_str()) {
            once.push(f);
        }
    }
    assert_eq!(once, files(&report));
    let index = ".trellis/spec/backend/index.md";
    assert_eq!(injected.iter().filter(|(f, _)| f == index).count(), 2);
    // The lock's byte counts are the hook's, cut files included.
    let lock: serde_json::Value =
        serde_json::from_str(&repo.read(&format!("{CURATED}/implement.lock.json"))).unwrap();
    for e in lock["entries"].as_array().unwrap() {
        let file = e["file"].as_str().unwrap();
        let hook = injected.iter().find(|(f, _)| f == file).unwrap().1;
        assert_eq!(e["bytes"].as_u64(), Some(hook), "{file}");
    }
    let cut = lock["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == "src/store/userStore.ts")
        .unwrap();
    assert!(cut["bytes"].as_u64().unwrap() < 4096 + 200);
    // The report says which files the hook cuts, with the lines and tokens it keeps of them.
    let entry = |file: &str| {
        report["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["file"] == file)
            .unwrap()
            .clone()
    };
    let store = entry("src/store/userStore.ts");
    assert_eq!(store["cut_at"], 4096);
    let whole = repo.read("src/store/userStore.ts");
    assert_eq!(whole.lines().count(), 178);
    assert_eq!(store["lines"], whole[..4096].lines().count());
    assert!(entry("src/routes/sessions.ts").get("cut_at").is_none());
    let human = repo
        .curate()
        .args([
            "--role",
            "implement",
            "--change",
            "11-28-login-rate-limit",
            "--dry-run",
        ])
        .run();
    assert!(
        human
            .stderr
            .lines()
            .any(|l| l.contains("src/store/userStore.ts") && l.ends_with("kept, cut at 4096 bytes")),
        "{}",
        human.all()
    );
    let check = repo.curate().args(["check"]).run();
    assert_eq!(check.code, 0, "{}", check.all());

    // A second compile writes the same bytes; the author's later edits are the author's.
    let again = repo
        .curate()
        .args([
            "--role",
            "implement",
            "--change",
            "11-28-login-rate-limit",
            "-q",
        ])
        .run();
    assert_eq!(again.code, 0, "{}", again.all());
    assert_eq!(repo.read(&path), written);
    let added = format!(
        "{written}{{\"file\": \"src/config.ts\", \"reason\": \"added later by the author\"}}\n"
    );
    repo.write(&path, &added);
    let report = compile(
        &repo,
        &["--role", "implement", "--change", "11-28-login-rate-limit"],
    );
    assert!(files(&report).contains(&"src/config.ts".to_owned()));
    assert!(
        repo.read(&path)
            .contains("\"reason\": \"added later by the author\"")
    );
    assert_eq!(trellis_validate(&repo, &path), Vec::<String>::new());
}

#[test]
fn trellis_seeded_prd_only_and_archived_tasks() {
    let repo = Repo::fixture("trellis");
    // Freshly seeded: the seed row stays, curate's baseline is added as marked rows, and
    // every line is JSON for Trellis.
    let task = ".trellis/tasks/12-01-paginate-member-list";
    let seed = repo.read(&format!("{task}/implement.jsonl"));
    compile(
        &repo,
        &[
            "--role",
            "trellis-implement",
            "--change",
            "12-01-paginate-member-list",
        ],
    );
    let written = repo.read(&format!("{task}/implement.jsonl"));
    assert!(written.contains(seed.trim_end()), "{written}");
    assert!(written.starts_with("{\"_curate\":\""), "{written}");
    assert!(written.contains("\"by\":\"curate\""), "{written}");
    assert_eq!(
        trellis_validate(&repo, &format!("{task}/implement.jsonl")),
        Vec::<String>::new()
    );
    // Removing curate's row by hand is the author's drop, kept across compiles.
    let kept: String = written
        .lines()
        .filter(|l| !l.contains(".trellis/spec/guides/index.md"))
        .map(|l| format!("{l}\n"))
        .collect();
    repo.write(&format!("{task}/implement.jsonl"), &kept);
    for _ in 0..2 {
        let report = compile(
            &repo,
            &[
                "--role",
                "implement",
                "--change",
                "12-01-paginate-member-list",
            ],
        );
        assert!(!files(&report).contains(&".trellis/spec/guides/index.md".to_owned()));
    }
    assert!(
        repo.read(&format!("{task}/implement.jsonl"))
            .contains("\"drop\":")
    );

    // Only prd.md: READY, nothing of the task listed (Trellis injects prd.md itself).
    let report = compile(
        &repo,
        &[
            "--role",
            "implement",
            "--change",
            "11-30-fix-health-status-code",
        ],
    );
    assert_eq!(report["status"], "READY");
    assert!(
        !files(&report)
            .iter()
            .any(|f| f.contains("11-30-fix-health-status-code"))
    );

    // Archived: found with or without its archive prefix, written in its own folder, no
    // phantom folder under tasks/.
    for id in [
        "11-12-structured-logging",
        "archive/2026-11/11-12-structured-logging",
    ] {
        let report = compile(&repo, &["--role", "implement", "--change", id]);
        assert_eq!(
            report["manifest"],
            ".trellis/tasks/archive/2026-11/11-12-structured-logging/implement.jsonl"
        );
    }
    assert!(!repo.exists(".trellis/tasks/11-12-structured-logging"));
    // A live task of the same name: the name alone is the live one, the archive path the
    // archived one (Trellis' hook reads that folder's list), another month's path nothing.
    let archived = ".trellis/tasks/archive/2026-11/11-12-structured-logging";
    let live = ".trellis/tasks/11-12-structured-logging";
    repo.write(
        &format!("{live}/task.json"),
        &repo.read(&format!("{archived}/task.json")),
    );
    for (id, manifest) in [
        ("11-12-structured-logging", live),
        ("archive/2026-11/11-12-structured-logging", archived),
        (
            ".trellis/tasks/archive/2026-11/11-12-structured-logging/",
            archived,
        ),
    ] {
        let report = compile(&repo, &["--role", "implement", "--change", id]);
        assert_eq!(
            report["manifest"],
            format!("{manifest}/implement.jsonl"),
            "{id}"
        );
    }
    let out = repo
        .curate()
        .args([
            "--role",
            "implement",
            "--change",
            "archive/2026-10/11-12-structured-logging",
        ])
        .run();
    assert_eq!(out.code, 3, "{}", out.all());
    assert!(
        out.stderr.contains(
            "looked for the change in: .trellis/tasks/archive/2026-10/11-12-structured-logging"
        ),
        "{}",
        out.stderr
    );
    std::fs::remove_dir_all(repo.root.join(live)).unwrap();
    // The archive folder is not a task, also where a second workflow with its own archive
    // folder is present (it is not a change held by both).
    for second in [false, true] {
        if second {
            repo.write("openspec/changes/archive/2026-10-02-x/proposal.md", "# x\n");
        }
        archive_is_refused(&repo, "implement", "trellis", "archive/<yyyy-mm>/<task>");
    }
    std::fs::remove_dir_all(repo.root.join("openspec")).unwrap();
    // A task Trellis has not made: BLOCKED, and no phantom task folder.
    let out = repo
        .curate()
        .args(["--role", "implement", "--change", "12-31-no-such-task"])
        .run();
    assert_eq!(out.code, 3, "{}", out.all());
    assert!(
        out.stderr
            .contains("looked for the change in: .trellis/tasks/12-31-no-such-task")
    );
    assert!(!repo.exists(".trellis/tasks/12-31-no-such-task"));

    // check passes on what curate wrote and leaves author-only files alone.
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
}

/// A note row the author adds to a list curate wrote (`{"_curation": …}`, the form of
/// curate's own) is the author's: kept on this compile and every later one, as written.
#[test]
fn an_authors_note_row_is_kept_across_compiles() {
    let repo = Repo::fixture("trellis");
    let path = format!("{CURATED}/implement.jsonl");
    let args = ["--role", "implement", "--change", "11-28-login-rate-limit"];
    compile(&repo, &args);
    let written = repo.read(&path);
    let note = "{\"_curation\": \"author: keep this\"}";
    let mut lines: Vec<&str> = written.lines().collect();
    lines.insert(2, note);
    repo.write(&path, &(lines.join("\n") + "\n"));
    for run in 1..=2 {
        compile(&repo, &args);
        let list = repo.read(&path);
        assert_eq!(list.matches(note).count(), 1, "run {run}:\n{list}");
    }
    let check = repo.curate().args(["check", "--stale"]).run();
    assert_eq!(check.code, 0, "{}", check.all());
}

/// A row of the author's list that is not JSON stops the compile at its place, with the
/// list left as the author wrote it (Trellis' `task.py validate` reports such a row; a
/// rewrite without it would lose what was meant there).
#[test]
fn a_malformed_row_in_the_authors_list_is_an_error_and_the_list_is_left_alone() {
    let repo = Repo::fixture("trellis");
    let path = format!("{CURATED}/implement.jsonl");
    let first = "{\"file\": \"src/config.ts\"}\n";
    for (text, at) in [
        (
            format!("{first}  {{\"file\": \".trellis/spec/backend/index.md\", \"reason\": }}\n"),
            "2:56: invalid JSON: expected value",
        ),
        (
            format!("{first}[\"not\", \"an\", \"object\"]\n"),
            "2:1: a row must be a JSON object",
        ),
        (format!("{first}garbage text line\n"), "2:1: invalid JSON"),
        // Trellis' `task.py validate` calls both of these invalid JSON.
        (
            format!("{first}\n  // keep the config close\n"),
            "3:3: a `//` comment is not a row",
        ),
        (
            format!("\u{feff}{first}"),
            "1:1: the file starts with a byte-order mark",
        ),
    ] {
        repo.write(&path, &text);
        let out = repo
            .curate()
            .args(["--role", "implement", "--change", "11-28-login-rate-limit"])
            .run();
        assert_eq!(out.code, 1, "{}", out.all());
        assert!(
            out.stderr.contains(&format!("{path}:{at}")),
            "{text:?}: {}",
            out.stderr
        );
        assert_eq!(repo.read(&path), text);
        assert!(!repo.exists(&format!("{CURATED}/implement.lock.json")));
    }
}

/// A row written `./src/config.ts` is the file Trellis' hook reads below the root: kept as
/// written, and `check` takes it. The notes about the author's rows name the list without a
/// line (the list is written anew: a line read would point at another row), so once the row
/// that escapes is gone the list settles: the third run writes the second's bytes.
#[test]
fn an_authors_dotted_row_is_kept_and_the_list_settles() {
    let repo = Repo::fixture("trellis");
    let path = format!("{CURATED}/implement.jsonl");
    repo.write(
        &path,
        concat!(
            "{\"file\": \"./src/config.ts\", \"reason\": \"dot\"}\n",
            "{\"file\": \"src/nope.ts\"}\n",
            "{\"file\": \"../x.md\"}\n",
        ),
    );
    let args = ["--role", "implement", "--change", "11-28-login-rate-limit"];
    let report = compile(&repo, &args);
    assert!(files(&report).contains(&"src/config.ts".to_owned()));
    let first = repo.read(&path);
    assert!(
        first.contains("{\"file\": \"./src/config.ts\", \"reason\": \"dot\"}\n"),
        "{first}"
    );
    assert!(
        first.contains(&format!(
            "{{\"_curation\":\"{path}: \\\"../x.md\\\" climbs out of the repository with `..`: left out of the list\"}}"
        )),
        "{first}"
    );
    let at = format!("{path}:");
    assert!(
        !first
            .match_indices(&at)
            .any(|(i, _)| first[i + at.len()..].starts_with(|c: char| c.is_ascii_digit())),
        "a note names a line of the list: {first}"
    );
    assert!(
        first.contains(
            "{\"withheld\":\"../x.md\",\"why\":\"outside the repository: never read\"}\n"
        ),
        "{first}"
    );
    compile(&repo, &args);
    assert_eq!(repo.read(&path), first, "the second run changed the list");
    assert_eq!(
        trellis_validate(&repo, &path),
        ["5: File not found: src/nope.ts"]
    );
    // As `task.py validate`, check fails on the row naming a missing file, at its line.
    let check = repo.curate().args(["check"]).run();
    assert_eq!(check.code, 1, "{}", check.all());
    assert!(
        check
            .stderr
            .contains(&format!("{path}:5: error: \"src/nope.ts\" does not exist")),
        "{}",
        check.all()
    );
    assert!(
        check.stderr.ends_with("1 error, 0 warnings\n"),
        "{}",
        check.all()
    );
}

/// A folder row whose folder holds a `.md` link out of the repository: Trellis' hook
/// follows links, so the row is written back as the files curate kept, and the hook never
/// reads the link's target.
#[cfg(unix)]
#[test]
fn a_folder_row_holding_a_link_out_is_written_as_its_kept_files() {
    let repo = Repo::fixture("trellis");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("host.md"), "outside the repository\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("host.md"),
        repo.root.join(".trellis/spec/backend/host-link.md"),
    )
    .unwrap();
    let report = compile(
        &repo,
        &["--role", "implement", "--change", "11-28-login-rate-limit"],
    );
    assert!(!files(&report).iter().any(|f| f.contains("host-link")));
    let path = format!("{CURATED}/implement.jsonl");
    let written = repo.read(&path);
    assert!(
        !written.contains("\"type\": \"directory\""),
        "the folder row would let the hook read the link:\n{written}"
    );
    let injected = trellis_injects(&repo, &path, 4096);
    assert!(
        !injected.iter().any(|(f, _)| f.contains("host-link")),
        "{injected:?}"
    );
    assert!(
        injected
            .iter()
            .any(|(f, _)| f.ends_with("backend/logging.md"))
    );
    assert_eq!(trellis_validate(&repo, &path), Vec::<String>::new());
}

#[test]
fn an_untouched_trellis_repository_passes_check() {
    let repo = Repo::fixture("trellis");
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn with_trellis_hook_installed_curate_writes_the_list_and_does_not_inject_again() {
    let repo = Repo::fixture("trellis");
    repo.write(
        ".claude/hooks/inject-subagent-context.py",
        "# Trellis' hook\n",
    );
    let input = br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"Do it.\nchange: 11-28-login-rate-limit","subagent_type":"trellis-implement"}}"#;
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(input)
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.stdout, "", "one injection: Trellis' own");
    assert!(
        repo.read(&format!("{CURATED}/implement.jsonl"))
            .starts_with("{\"_curate\":")
    );
}

/// A `PostToolUse` input as Claude Code sends it after `tool` ran with `input`.
fn post_tool_use(repo: &Repo, tool: &str, input: &serde_json::Value) -> crate::Output {
    let v = serde_json::json!({
        "session_id": "s", "hook_event_name": "PostToolUse", "cwd": repo.root,
        "tool_name": tool, "tool_input": input, "tool_response": {},
    });
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(v.to_string().as_bytes())
        .run();
    assert_eq!(out.code, 0, "a hook always exits 0: {}", out.all());
    out
}

/// With Trellis' injector installed, a list the lead writes (`Write`, `Edit`) or extends
/// (`task.py add-context` in `Bash`) is compiled right after the edit: Trellis' hook, which
/// reads it at the very dispatch curate's hook runs beside, reads it compiled.
#[test]
fn with_trellis_hook_installed_an_edited_list_is_compiled_before_the_dispatch() {
    let repo = Repo::fixture("trellis");
    repo.write(".env", "DATABASE_URL=postgres://app:hunter2@db/app\n");
    let list = format!("{CURATED}/implement.jsonl");
    let check = format!("{CURATED}/check.jsonl");
    let authored = repo.read(&list);
    let checks = repo.read(&check);
    let edit_list = serde_json::json!({"file_path": repo.root.join(&list), "content": ""});

    // Without Trellis' injector, curate's own dispatch hook compiles the list: not the edit.
    assert_eq!(post_tool_use(&repo, "Write", &edit_list).stdout, "");
    assert_eq!(repo.read(&list), authored);
    repo.write(
        ".claude/hooks/inject-subagent-context.py",
        "# Trellis' hook\n",
    );

    // An edit of another file, or of a list outside the tasks: nothing runs, nothing printed.
    for (tool, input) in [
        (
            "Write",
            serde_json::json!({"file_path": repo.root.join("src/app.ts"), "content": ""}),
        ),
        ("Bash", serde_json::json!({"command": "npm test"})),
        ("Bash", serde_json::json!({"command": "ls .trellis/spec"})),
        (
            "Read",
            serde_json::json!({"file_path": repo.root.join(&list)}),
        ),
    ] {
        let out = post_tool_use(&repo, tool, &input);
        assert_eq!(out.stdout, "", "{tool}");
    }
    assert_eq!(repo.read(&list), authored);

    // The lead adds a row by hand: the list is compiled at once, the secret taken out.
    repo.write(
        &list,
        &format!("{authored}{{\"file\": \".env\", \"reason\": \"config\"}}\n"),
    );
    let out = post_tool_use(&repo, "Edit", &edit_list);
    assert_eq!(out.stdout, "", "READY: nothing to tell the lead");
    let written = repo.read(&list);
    assert!(written.starts_with("{\"_curate\":"), "{written}");
    assert!(!written.contains("\"file\": \".env\""), "{written}");
    assert_eq!(repo.read(&check), checks, "only the edited list");
    let log = repo.read(".curate/state/hooks.jsonl");
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "PostToolUse");
    assert_eq!(last["role"], "implement");
    assert_eq!(last["change"], "11-28-login-rate-limit");
    assert_eq!(last["status"], "READY");

    // `task.py add-context` appends to a list: the task's lists are compiled after it.
    repo.write(
        &check,
        &format!("{checks}{{\"file\": \".env\", \"reason\": \"x\"}}\n"),
    );
    let command =
        format!("python3 ./.trellis/scripts/task.py add-context \"{CURATED}\" check .env \"x\"");
    let out = post_tool_use(&repo, "Bash", &serde_json::json!({"command": command}));
    assert_eq!(out.stdout, "");
    let written = repo.read(&check);
    assert!(written.starts_with("{\"_curate\":"), "{written}");
    assert!(!written.contains(".env\", \"reason\": \"x"), "{written}");
}

/// `init --host claude-code` in a Trellis repository also runs the hook after the tools that
/// edit a list; elsewhere it does not.
#[test]
fn init_in_a_trellis_repository_wires_the_hook_after_edits() {
    let repo = Repo::fixture("trellis");
    repo.write(
        ".claude/hooks/inject-subagent-context.py",
        "# Trellis' hook\n",
    );
    let out = repo.curate().args(["init", "--host", "claude-code"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr
            .contains("+ hooks.PostToolUse: matcher \"Write|Edit|MultiEdit|Bash\""),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("a list the lead edits is compiled right after the edit")
    );
    let settings: serde_json::Value =
        serde_json::from_str(&repo.read(".claude/settings.json")).unwrap();
    assert_eq!(
        settings["hooks"]["PostToolUse"][0]["matcher"],
        "Write|Edit|MultiEdit|Bash"
    );

    // OpenCode: the plugin compiles after edits, and init says so.
    let out = repo.curate().args(["init", "--host", "opencode"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains(
            "a list the lead edits is compiled right after the edit (the plugin's tool.execute.after)"
        ),
        "{}",
        out.stderr
    );
    assert!(
        repo.read(".opencode/plugins/curate.js")
            .contains("\"tool.execute.after\"")
    );

    let plain = Repo::fixture("aiws-basic");
    assert_eq!(
        plain
            .curate()
            .args(["init", "--host", "claude-code"])
            .run()
            .code,
        0
    );
    let settings: serde_json::Value =
        serde_json::from_str(&plain.read(".claude/settings.json")).unwrap();
    assert!(settings["hooks"].get("PostToolUse").is_none(), "{settings}");
}

/// Where Trellis' injector reads the lists, `doctor` wants the hook after edits: a Claude
/// Code wiring without `PostToolUse`, or an earlier curate's OpenCode plugin, is a problem
/// (exit 1) until `init` runs again.
#[test]
fn doctor_in_a_trellis_repository_wants_the_lists_compiled_after_edits() {
    let repo = Repo::fixture("trellis");
    repo.write(
        ".claude/hooks/inject-subagent-context.py",
        "# Trellis' hook\n",
    );
    let init = |host: &str| {
        let out = repo.curate().args(["init", "--host", host]).run();
        assert_eq!(out.code, 0, "{}", out.all());
    };
    init("claude-code");
    let ok = repo.curate().args(["doctor"]).run();
    assert_eq!(ok.code, 0, "{}", ok.all());

    // Wired by a curate from before the hook after edits.
    let mut settings: serde_json::Value =
        serde_json::from_str(&repo.read(".claude/settings.json")).unwrap();
    settings["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("PostToolUse");
    repo.write(".claude/settings.json", &settings.to_string());
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_curate")).unwrap();
    repo.write(
        ".opencode/plugins/curate.js",
        &include_str!("../../fixtures/hooks/opencode-plugin-earlier.js").replace(
            "const CURATE = \"/usr/local/bin/curate\"",
            &format!("const CURATE = {}", serde_json::to_string(&bin).unwrap()),
        ),
    );
    let out = repo.curate().args(["doctor"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stdout.contains("problem: claude-code: no PostToolUse entry runs curate's hook: .claude/hooks/inject-subagent-context.py reads a task's list at the dispatch"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "problem: opencode: .opencode/plugins/curate.js is an earlier curate's plugin"
        ),
        "{}",
        out.stdout
    );

    init("claude-code");
    init("opencode");
    let ok = repo.curate().args(["doctor"]).run();
    assert_eq!(ok.code, 0, "{}", ok.all());

    // Without Trellis' injector the lists are compiled at the dispatch: no problem.
    let plain = Repo::fixture("aiws-basic");
    plain.write(".claude/settings.json", &settings.to_string());
    let out = plain.curate().args(["doctor"]).run();
    assert!(!out.stdout.contains("PostToolUse entry"), "{}", out.stdout);
}

/// A list over Trellis' byte total after an edit: the lead is told at once, in the
/// `PostToolUse` context, before it dispatches.
#[test]
fn an_edited_list_that_is_not_ready_is_reported_to_the_lead() {
    let repo = Repo::fixture("trellis");
    repo.write(
        ".claude/hooks/inject-subagent-context.py",
        "# Trellis' hook\n",
    );
    let list = format!("{CURATED}/implement.jsonl");
    let authored = repo.read(&list);
    repo.write(".curate/config.toml", "[budget]\nmax_lines = 50\n");
    let out = post_tool_use(
        &repo,
        "Write",
        &serde_json::json!({
        "file_path": list, "content": ""}),
    );
    let v = out.json();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.starts_with(&format!("curate: the list {list} is OVER_BUDGET: narrow")),
        "{context}"
    );
    assert!(context.contains("\"src/store/userStore.ts\""), "{context}");
    assert!(
        context.contains(
            "nothing written: .claude/hooks/inject-subagent-context.py injects the list as it stands"
        ),
        "{context}"
    );
    assert_eq!(
        repo.read(&list),
        authored,
        "an OVER_BUDGET list is left as it is"
    );
}

/// OpenCode runs curate at the child's first message, after Trellis' plugin injected the
/// list: curate still writes the list (what the author listed that may not enter is gone
/// for the next dispatch and for `task.py validate`), and injects nothing.
#[test]
fn with_trellis_plugin_injected_first_curate_still_writes_the_list() {
    let repo = Repo::fixture("trellis");
    repo.write(
        ".opencode/plugins/inject-subagent-context.js",
        "// Trellis' plugin\n",
    );
    repo.write(".env", "DATABASE_URL=postgres://app:hunter2@db/app\n");
    let list = format!("{CURATED}/implement.jsonl");
    let authored = repo.read(&list);
    repo.write(
        &list,
        &format!("{authored}{{\"file\": \".env\", \"reason\": \"config\"}}\n"),
    );
    let input = format!(
        r#"{{"event":"task","tool":"task","sessionID":"ses_1","callID":"call_1","directory":{},"args":{{"description":"d","prompt":"<!-- trellis-hook-injected -->\n# Implement Agent Task\n\nActive task: {CURATED}","subagent_type":"trellis-implement"}}}}"#,
        serde_json::to_string(&repo.root).unwrap()
    );
    let out = repo
        .curate()
        .args(["hook", "opencode"])
        .stdin(input.as_bytes())
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.stdout, "{}\n", "one injection: Trellis' own");
    let written = repo.read(&list);
    assert!(written.starts_with("{\"_curate\":"), "{written}");
    assert!(!written.contains("\"file\": \".env\""), "{written}");
    let log = repo.read(".curate/state/hooks.jsonl");
    assert!(log.contains("the list is written"), "{log}");
}

/// In a Trellis monorepo (`packages:` in `.trellis/config.yaml`, specs in
/// `.trellis/spec/<package>/`), the baseline brings the task's package's spec and the shared
/// guides, not the other packages' (the task's `package`, else `default_package`, as
/// Trellis' `packages_context.py` picks it); an author's row into another package stays.
#[test]
fn a_trellis_monorepo_task_gets_its_own_packages_spec() {
    let repo = Repo::fixture("trellis");
    let config = repo.read(".trellis/config.yaml");
    repo.write(
        ".trellis/config.yaml",
        &format!("{config}\npackages:\n  api:\n    path: packages/api\n  web:\n    path: packages/web\n  notes: notes\n"),
    );
    for p in ["api", "web"] {
        repo.write(
            &format!(".trellis/spec/{p}/backend/index.md"),
            &format!("# {p} backend\n"),
        );
    }
    let task = ".trellis/tasks/12-01-paginate-member-list";
    let json = repo.read(&format!("{task}/task.json"));
    let specs = |repo: &Repo| {
        let report = compile(
            repo,
            &[
                "--role",
                "implement",
                "--change",
                "12-01-paginate-member-list",
                "--dry-run",
            ],
        );
        let notes: Vec<String> = report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .filter(|n| n.starts_with("left out"))
            .map(str::to_owned)
            .collect();
        let specs: Vec<String> = files(&report)
            .into_iter()
            .filter(|f| f.starts_with(".trellis/spec/"))
            .collect();
        (specs, notes)
    };
    // No package on the task and no default: every package's spec, as before.
    let (all, notes) = specs(&repo);
    assert!(
        all.contains(&".trellis/spec/web/backend/index.md".to_owned()),
        "{all:?}"
    );
    assert!(notes.is_empty(), "{notes:?}");
    repo.write(
        &format!("{task}/task.json"),
        &json.replace("\"package\": null", "\"package\": \"api\""),
    );
    let (got, notes) = specs(&repo);
    assert!(
        got.contains(&".trellis/spec/api/backend/index.md".to_owned()),
        "{got:?}"
    );
    assert!(
        !got.iter().any(|f| f.starts_with(".trellis/spec/web/")),
        "{got:?}"
    );
    assert_eq!(
        notes,
        [
            "left out \".trellis/spec/web/\" (1 file): the spec of package web; the task is in package api"
        ]
    );
    // A package the config does not declare falls back to default_package.
    repo.write(
        &format!("{task}/task.json"),
        &json.replace("\"package\": null", "\"package\": \"mobile\""),
    );
    let config = repo.read(".trellis/config.yaml");
    repo.write(
        ".trellis/config.yaml",
        &format!("{config}default_package: web\n"),
    );
    let (got, _) = specs(&repo);
    assert!(
        got.contains(&".trellis/spec/web/backend/index.md".to_owned()),
        "{got:?}"
    );
    assert!(
        !got.iter().any(|f| f.starts_with(".trellis/spec/api/")),
        "{got:?}"
    );
}

/// An author's list kept in Windows line endings is written back in them: the author's rows
/// byte for byte, curate's rows and notes too, the same bytes on the next run, and `check`
/// and Trellis' readers take it.
#[test]
fn a_trellis_list_in_crlf_stays_crlf() {
    let repo = Repo::fixture("trellis");
    let path = ".trellis/tasks/12-01-paginate-member-list/implement.jsonl";
    let rows = [
        r#"{"file": "src/routes/sessions.ts", "reason": "Style to copy"}"#,
        r#"{"file": ".trellis/spec/guides/index.md", "reason": "Review walk-through"}"#,
    ];
    repo.write(path, &format!("{}\r\n", rows.join("\r\n")));
    let args = [
        "--role",
        "implement",
        "--change",
        "12-01-paginate-member-list",
    ];
    compile(&repo, &args);
    let written = repo.read(path);
    assert!(written.ends_with("\r\n"), "{written:?}");
    assert_eq!(
        written.matches('\n').count(),
        written.matches("\r\n").count(),
        "{written:?}"
    );
    for row in rows {
        assert!(
            written.contains(&format!("\n{row}\r\n")),
            "{row} changed: {written:?}"
        );
    }
    assert_eq!(trellis_validate(&repo, path), Vec::<String>::new());
    assert_eq!(
        trellis_injects(&repo, path, 4096)
            .into_iter()
            .map(|(f, _)| f)
            .collect::<Vec<_>>(),
        [
            "src/routes/sessions.ts",
            ".trellis/spec/guides/index.md",
            ".trellis/spec/backend/index.md",
            // The task's research notes, which its author never listed.
            ".trellis/tasks/12-01-paginate-member-list/research/page-size.md"
        ]
    );
    compile(&repo, &args);
    assert_eq!(repo.read(path), written, "a second run changed the bytes");
    let check = repo.curate().args(["check"]).run();
    assert_eq!(check.code, 0, "{}", check.all());
    assert!(
        check.stderr.ends_with("0 errors, 0 warnings\n"),
        "{}",
        check.all()
    );
}

/// Trellis' lead names the task on the dispatch prompt's first line, `Active task: <path>`
/// (what its agents and its OpenCode plugin read): the hook takes the task from it, as a
/// repository-relative or absolute path, archived or not, when no `change:` line says more.
#[test]
fn the_hook_finds_a_trellis_task_by_its_active_task_line() {
    let repo = Repo::fixture("trellis");
    repo.write(
        ".claude/hooks/inject-subagent-context.py",
        "# Trellis' hook\n",
    );
    // A live task named as the archived one: the archive path still names the archived one.
    repo.write(
        ".trellis/tasks/11-12-structured-logging/implement.jsonl",
        "{\"file\": \"README.md\", \"reason\": \"live\"}\n",
    );
    let root = repo.root.canonicalize().unwrap();
    let absolute = format!("{}/{CURATED}/", root.display());
    for (line, list) in [
        (
            format!("Active task: {CURATED}"),
            format!("{CURATED}/implement.jsonl"),
        ),
        (
            format!("active task: `{absolute}`"),
            format!("{CURATED}/implement.jsonl"),
        ),
        (
            "Active task: .trellis/tasks/archive/2026-11/11-12-structured-logging".to_owned(),
            ".trellis/tasks/archive/2026-11/11-12-structured-logging/implement.jsonl".to_owned(),
        ),
    ] {
        // The author's list as the fixture has it, before each pass.
        let before = Repo::fixture("trellis").read(&list);
        repo.write(&list, &before);
        let prompt = format!("{line}\n\nImplement the throttle.");
        let input = serde_json::json!({
            "session_id": "s",
            "hook_event_name": "PreToolUse",
            "tool_name": "Agent",
            "tool_input": {"prompt": prompt, "subagent_type": "trellis-implement"},
        })
        .to_string();
        let out = repo
            .curate()
            .args(["hook", "claude-code"])
            .stdin(input.as_bytes())
            .run();
        assert_eq!(out.code, 0, "{line}: {}", out.all());
        assert_eq!(out.stdout, "", "{line}: one injection, Trellis' own");
        let after = repo.read(&list);
        assert!(after.starts_with("{\"_curate\":"), "{line}: {after}");
        assert_ne!(before, after, "{line}");
    }
    assert_eq!(
        repo.read(".trellis/tasks/11-12-structured-logging/implement.jsonl"),
        "{\"file\": \"README.md\", \"reason\": \"live\"}\n"
    );
    // A path outside the repository names no task: nothing is written (but the hook's log).
    let tree = || {
        let mut t = repo.snapshot_tree();
        t.retain(|(path, _)| !path.starts_with(".curate/"));
        t
    };
    let before = tree();
    let input = br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"Active task: /tmp/elsewhere/.trellis/tasks/x\nDo it.","subagent_type":"trellis-implement"}}"#;
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(input)
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(tree() == before, "a file changed");
    assert!(
        repo.read(".curate/state/hooks.jsonl")
            .lines()
            .last()
            .unwrap()
            .contains("\"reason\":\"no change: "),
        "{}",
        repo.read(".curate/state/hooks.jsonl")
    );
}

/// OpenSpec (≥ 1.x) also nests capabilities in areas, `specs/<area>/<capability>/spec.md`, in
/// the change and in the current specs alike; a folder without a `spec.md` is no capability.
/// "Did you mean" offers an archived OpenSpec change by its own name (which `--change`
/// finds), and the places looked name the archive.
#[test]
fn an_openspec_typo_is_asked_about_among_archived_changes_too() {
    let repo = Repo::fixture("openspec");
    repo.write(
        "openspec/changes/archive/2025-01-13-add-list-command/proposal.md",
        "# add list\n",
    );
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-list-comand",
            "--dry-run",
        ])
        .run();
    assert!(
        out.stderr.contains("did you mean add-list-command?"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("openspec/changes/archive/<yyyy-mm-dd>-add-list-comand"),
        "{}",
        out.stderr
    );
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-list-command",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
}

/// `openspec list` dates a change by its newest file, the manifest and lock in `analysis/`
/// included: they take the change's own newest time, so a compile does not reorder the
/// list or show the change as "just now".
#[test]
fn an_openspec_change_keeps_its_date_after_a_compile() {
    let repo = Repo::fixture("openspec");
    let day = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_735_732_800);
    let older = day - std::time::Duration::from_secs(86_400);
    for e in walkdir::WalkDir::new(repo.root.join("openspec/changes/add-2fa")) {
        let e = e.unwrap();
        if e.file_type().is_file() {
            let at = if e.path().ends_with("tasks.md") {
                day
            } else {
                older
            };
            std::fs::File::options()
                .write(true)
                .open(e.path())
                .unwrap()
                .set_modified(at)
                .unwrap();
        }
    }
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-2fa"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    for written in [
        "openspec/changes/add-2fa/analysis/worker-context.jsonl",
        "openspec/changes/add-2fa/analysis/worker-context.lock.json",
    ] {
        let t = std::fs::metadata(repo.root.join(written))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(t, day, "{written}");
    }
}

#[test]
fn openspec_nested_capabilities_bring_their_current_specs() {
    let repo = Repo::fixture("openspec");
    let change = "openspec/changes/add-2fa/specs";
    repo.write(
        &format!("{change}/platform/session-layout/spec.md"),
        "## MODIFIED Requirements\n### Requirement: Layout\nThe layout SHALL hold.\n\n#### Scenario: held\n- **WHEN** x\n- **THEN** y\n",
    );
    repo.write(
        "openspec/specs/platform/session-layout/spec.md",
        "# session-layout\n\n## Requirements\n### Requirement: Layout\nThe layout SHALL hold.\n",
    );
    // `platform` itself has a current spec but the change does not touch it.
    repo.write("openspec/specs/platform/spec.md", "# platform\n");
    repo.write(&format!("{change}/notes/readme.md"), "not a delta\n");
    repo.write("openspec/specs/notes/spec.md", "# notes\n");
    let report = compile(
        &repo,
        &["--role", "worker", "--change", "add-2fa", "--dry-run"],
    );
    let current: Vec<(String, String)> = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["file"].as_str().unwrap().starts_with("openspec/specs/"))
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap().to_owned();
            (s("file"), s("reason"))
        })
        .collect();
    assert_eq!(
        current,
        [
            (
                "openspec/specs/auth/spec.md".to_owned(),
                "the current spec of `auth`, which this change's delta spec changes".to_owned()
            ),
            (
                "openspec/specs/platform/session-layout/spec.md".to_owned(),
                "the current spec of `platform/session-layout`, which this change's delta spec changes".to_owned()
            ),
        ]
    );
}

#[test]
fn openspec_worker_gets_the_delta_specs_and_the_specs_they_change() {
    let repo = Repo::fixture("openspec");
    let report = compile(&repo, &["--role", "worker", "--change", "add-2fa"]);
    assert_eq!(report["workflow"]["name"], "openspec");
    let got = files(&report);
    for want in [
        "openspec/project.md",
        "openspec/changes/add-2fa/proposal.md",
        "openspec/changes/add-2fa/design.md",
        "openspec/changes/add-2fa/tasks.md",
        "openspec/changes/add-2fa/specs/auth/spec.md",
        "openspec/specs/auth/spec.md",
    ] {
        assert!(
            got.contains(&want.to_owned()),
            "{want} missing from {got:?}"
        );
    }
    assert!(!got.iter().any(|f| f.contains("notifications")), "{got:?}");
    assert_eq!(
        report["manifest"],
        "openspec/changes/add-2fa/analysis/worker-context.jsonl"
    );
    // An archived change is found by its id, without the date.
    let report = compile(
        &repo,
        &["--role", "worker", "--change", "add-login", "--dry-run"],
    );
    assert!(
        files(&report)
            .iter()
            .any(|f| f.starts_with("openspec/changes/archive/2026-10-02-add-login/")),
        "{report}"
    );
    // ... and by the path `openspec` and the archive folder show.
    for id in [
        "archive/2026-10-02-add-login",
        "2026-10-02-add-login",
        "openspec/changes/add-2fa/",
    ] {
        let report = compile(&repo, &["--role", "worker", "--change", id, "--dry-run"]);
        assert_eq!(report["status"], "READY", "{id}: {report}");
    }

    // The archive folder itself is not a change: refused as a usage error, naming the forms
    // that reach an archived one; nothing written.
    let before = repo.snapshot_tree();
    archive_is_refused(&repo, "worker", "openspec", "archive/<yyyy-mm-dd>-<name>");
    // A file where a change folder would be (`changes/notes.md`) is a change that does not
    // exist, not an I/O error.
    repo.write("openspec/changes/notes.md", "# loose notes\n");
    let before_notes = repo.snapshot_tree();
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "notes.md"])
        .run();
    assert_eq!(out.code, 3, "{}", out.all());
    assert!(
        out.stderr.contains("BLOCKED: the change does not exist"),
        "{}",
        out.all()
    );
    assert!(
        out.stderr
            .contains("looked for the change in: openspec/changes/notes.md"),
        "{}",
        out.stderr
    );
    assert!(!out.all().contains("Not a directory"), "{}", out.all());
    assert_eq!(repo.snapshot_tree(), before_notes);
    assert_ne!(before, before_notes);
}

/// An `.aiws/manifest.json` that cannot tell aiws' version (one stray comma, a version as a
/// number) is an error at its place, not a silent switch to the plain layout, whose
/// manifest would go where aiws' plugin never reads it; a profile named still runs.
#[test]
fn an_aiws_manifest_that_cannot_tell_its_version_is_an_error_at_its_place() {
    let repo = Repo::fixture("aiws-legacy-mismatch");
    let manifest = repo.read(".aiws/manifest.json");
    let line = manifest
        .lines()
        .position(|l| l.contains("\"aiws_version\""))
        .unwrap()
        + 1;
    let args = ["--role", "worker", "--change", "fix-login"];
    for (broken, place, problem) in [
        (
            manifest.replace(
                "\"aiws_version\": \"0.0.96\",",
                "\"aiws_version\": \"0.0.96\",,",
            ),
            format!("{line}:28"),
            "invalid JSON",
        ),
        (
            manifest.replace("\"aiws_version\": \"0.0.96\",", "\"aiws_version\": 96,"),
            format!("{line}:3"),
            "\"aiws_version\" is 96, not a version",
        ),
    ] {
        repo.write(".aiws/manifest.json", &broken);
        let before = repo.snapshot_tree();
        let out = repo.curate().args(args).run();
        assert_eq!(out.code, 1, "{}", out.all());
        assert!(
            out.stderr
                .contains(&format!("error: .aiws/manifest.json:{place}: {problem}")),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("--profile"), "{}", out.stderr);
        assert_eq!(repo.snapshot_tree(), before);
        let named = repo
            .curate()
            .args(["--profile", "aiws"])
            .args(args)
            .args(["--dry-run"])
            .run();
        assert_eq!(named.code, 0, "{}", named.all());
    }
}

/// An aiws workspace that records an older version but keeps its changes under
/// `.aiws/changes/` (aipper/relay records 0.0.39) has the aiws layout: detected as aiws, the
/// change found, the manifest where aiws' plugin reads it. With `changes/` only, it is
/// aiws-legacy; with both, the folder that holds the change decides.
#[test]
fn an_older_aiws_version_with_the_newer_layout_is_detected_by_its_layout() {
    let repo = Repo::fixture("aiws-legacy-mismatch");
    let manifest = repo.read(".aiws/manifest.json");
    repo.write(
        ".aiws/manifest.json",
        &manifest.replace(
            "\"aiws_version\": \"0.0.96\"",
            "\"aiws_version\": \"0.0.39\"",
        ),
    );
    let args = [
        "--role",
        "worker",
        "--change",
        "fix-login",
        "--format",
        "json",
    ];
    let out = repo.curate().args(args).run();
    assert_eq!(out.code, 0, "{}", out.all());
    let report = out.json();
    assert_eq!(report["workflow"]["name"], "aiws", "{report}");
    assert!(
        report["workflow"]["evidence"]
            .as_str()
            .unwrap()
            .contains(".aiws/changes/ (.aiws/manifest.json records aiws 0.0.39)"),
        "{report}"
    );
    assert!(repo.exists("changes/fix-login/analysis/worker-context.jsonl"));
    // `changes/` holding the change (the 0.0.39 layout): aiws-legacy holds it.
    let repo = Repo::fixture("aiws-legacy-mismatch");
    repo.write(
        ".aiws/manifest.json",
        &manifest.replace(
            "\"aiws_version\": \"0.0.96\"",
            "\"aiws_version\": \"0.0.39\"",
        ),
    );
    std::fs::rename(
        repo.root.join(".aiws/changes/fix-login"),
        repo.root.join("fix-login-moved"),
    )
    .unwrap();
    std::fs::create_dir_all(repo.root.join("changes")).unwrap();
    std::fs::rename(
        repo.root.join("fix-login-moved"),
        repo.root.join("changes/fix-login"),
    )
    .unwrap();
    let out = repo.curate().args(args).args(["--dry-run"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(
        out.json()["workflow"]["name"],
        "aiws-legacy",
        "{}",
        out.all()
    );
}

#[test]
fn a_layout_the_profile_does_not_serve_is_named_with_the_command_that_uses_it() {
    let repo = Repo::fixture("aiws-legacy-mismatch");
    let out = repo
        .curate()
        .args([
            "--profile",
            "aiws-legacy",
            "--role",
            "worker",
            "--change",
            "fix-login",
        ])
        .args(["--owns", "src/**"])
        .run();
    assert!(
        out.stderr.contains(
            "the change folder changes/fix-login does not exist; .aiws/changes/fix-login holds it"
        ),
        "{}",
        out.all()
    );
    // A change nobody holds is BLOCKED with every place looked and, where another layout
    // holds it, the same command with that profile.
    let repo = Repo::fixture("openspec");
    let out = repo
        .curate()
        .args([
            "--profile",
            "curate",
            "--role",
            "explorer",
            "--change",
            "add-2fa",
        ])
        .run();
    assert_eq!(out.code, 3, "{}", out.all());
    assert!(
        out.stderr
            .contains("looked for the change in: changes/add-2fa"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: curate --profile openspec --role explorer --change add-2fa"),
        "{}",
        out.stderr
    );
    // Given in clap's other forms, the hint keeps each option's form and drops this profile.
    let out = repo
        .curate()
        .args(["--profile=curate", "--role=explorer", "--change=add-2fa"])
        .run();
    assert_eq!(out.code, 3, "{}", out.all());
    assert!(
        out.stderr
            .contains("hint: curate --profile openspec --role=explorer --change=add-2fa\n"),
        "{}",
        out.stderr
    );
}

const RUN: &str = "run-4b7e2d90-1c3a-4f5e-8a6b-2d9c0e1f3a57";

/// A run whose plan cannot be found (its `plan_slug` names no plan, its `run-state.json` is
/// not JSON) is named, with the file and line, in the BLOCKED compile's report and in
/// `curate check`: "the lane is not in the plans" alone did not say why.
#[test]
fn a_guild_run_whose_plan_is_not_there_is_named() {
    let repo = Repo::fixture("guild");
    let state = format!(".guild/runs/{RUN}/run-state.json");
    let text = repo.read(&state);
    let line = text.lines().position(|l| l.contains("plan_slug")).unwrap() + 1;
    repo.write(
        &state,
        &text.replace("\"bookmark-tags\"", "\"bookmark-tag\""),
    );
    let args = [
        "--role",
        "frontend",
        "--change",
        "T2-frontend",
        "--run",
        RUN,
    ];
    let out = repo.curate().args(args).run();
    assert_eq!(out.code, 3, "{}", out.all());
    let said = format!(
        "{state}:{line}: plan_slug \"bookmark-tag\" names \".guild/plan/bookmark-tag.md\", which is not there"
    );
    assert!(out.stderr.contains(&said), "{}", out.stderr);
    let check = repo.curate().args(["check"]).run();
    assert!(
        check.stderr.contains(&format!(
            "{state}:{line}: warning: plan_slug \"bookmark-tag\""
        )),
        "{}",
        check.stderr
    );
    repo.write(&state, "{oops\n");
    let check = repo.curate().args(["check"]).run();
    assert!(
        check
            .stderr
            .contains(&format!("{state}:1: warning: invalid JSON")),
        "{}",
        check.stderr
    );
    repo.write(&state, &text);
    let check = repo.curate().args(["check"]).run();
    assert!(!check.stderr.contains("run-state.json"), "{}", check.stderr);
}

#[test]
fn a_guild_lane_gets_its_artifacts_and_its_bundle_in_guilds_form() {
    let repo = Repo::fixture("guild");
    let report = compile(&repo, &["--role", "frontend", "--change", "T2-frontend"]);
    assert_eq!(report["workflow"]["name"], "guild");
    let got = files(&report);
    for want in [
        ".guild/agents/frontend.md",
        ".guild/spec/bookmark-tags.md",
        ".guild/prd/bookmark-tags.md",
        ".guild/plan/bookmark-tags.md",
        &format!(".guild/runs/{RUN}/handoffs/backend-T1-backend.md"),
        "src/web/api.ts",
    ] {
        assert!(
            got.contains(&want.to_owned()),
            "{want} missing from {got:?}"
        );
    }
    // Its own task assignment (the run has no task run for it yet); not another lane's
    // agent or assignment, the decoy loop receipt, the dispatch trace nor another lane's bundle.
    assert!(
        got.contains(&format!(".guild/runs/{RUN}/tasks/frontend.json")),
        "{got:?}"
    );
    for not in [
        ".guild/agents/backend.md",
        "tasks/backend.json",
        "task-runs/",
        "round-1-backend.md",
        "dispatch-trace.md",
        ".guild/context/",
    ] {
        assert!(!got.iter().any(|f| f.contains(not)), "{not} in {got:?}");
    }
    // The plan is cut to this lane's section, which starts at its heading.
    let plan = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == ".guild/plan/bookmark-tags.md")
        .unwrap();
    let [start, end] = [
        plan["sections"][0][0].as_u64().unwrap(),
        plan["sections"][0][1].as_u64().unwrap(),
    ];
    let text = repo.read(".guild/plan/bookmark-tags.md");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[start as usize - 1], "## Lane: frontend");
    let section = lines[start as usize - 1..end as usize].join("\n");
    assert!(section.contains("- task-id: T2-frontend"));
    assert!(!section.contains("## Lane: qa") && !section.contains("## Sequencing notes"));

    // Beside the manifest and lock: the lane's bundle, in Guild's form.
    let dir = format!(".guild/context/{RUN}");
    assert_eq!(
        report["manifest"],
        format!("{dir}/frontend-T2-frontend.jsonl")
    );
    assert!(repo.exists(&format!("{dir}/frontend-T2-frontend.lock.json")));
    let bundle = repo.read(&format!("{dir}/frontend-T2-frontend.md"));
    let front = bundle
        .strip_prefix("---\n")
        .and_then(|b| b.split_once("\n---\n"))
        .map(|(f, _)| f)
        .expect("front matter");
    for key in [
        "schema_version: guild.context_bundle.v1",
        &format!("run_id: \"{RUN}\""),
        "specialist: \"frontend\"",
        "task_id: \"T2-frontend\"",
        "spec: \".guild/spec/bookmark-tags.md\"",
        "plan: \".guild/plan/bookmark-tags.md\"",
        "token_estimate: ",
        "layers_included:",
        "source_paths:",
    ] {
        assert!(front.contains(key), "{key} not in\n{front}");
    }
    for path in front.lines().filter_map(|l| l.trim().strip_prefix("- ")) {
        let path: String = serde_json::from_str(path).unwrap();
        assert!(
            repo.root.join(&path).is_file(),
            "{path} is not an in-repository file"
        );
    }
    let layers: Vec<&str> = bundle.lines().filter(|l| l.starts_with("# ")).collect();
    assert_eq!(
        layers,
        [
            "# Universal layer",
            "# Role-dependent layer",
            "# Task-dependent layer"
        ]
    );
    assert!(bundle.trim_end().ends_with("-->"));
    let out = repo.curate().args(["check", "--stale"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
}

/// A mistyped specialist is asked about among the specialists (Guild's roles), not only
/// among the contracts' own roles.
#[test]
fn a_mistyped_guild_specialist_is_asked_about() {
    let repo = Repo::fixture("guild");
    let out = repo
        .curate()
        .args(["--role", "frontent", "--change", "T2-frontend", "--dry-run"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("hint: did you mean \"frontend\"? the roles are: worker, reviewer, backend, frontend, qa"),
        "{}",
        out.stderr
    );
}

/// A lane whose task id is in two runs is not guessed at: the runs are named, with `--run`,
/// and nothing is written; `--run` picks one.
#[test]
fn a_guild_lane_in_two_runs_names_them_and_run_picks_one() {
    let repo = Repo::fixture("guild");
    let state = repo.read(&format!(".guild/runs/{RUN}/run-state.json"));
    repo.write(".guild/runs/run-2099/run-state.json", &state);
    let before = repo.snapshot_tree();
    let out = repo
        .curate()
        .args(["--role", "backend", "--change", "T1-backend"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "the lane \"T1-backend\" is in 2 runs (run-2099, {RUN}): name one with --run"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(repo.snapshot_tree(), before);
    let report = compile(
        &repo,
        &[
            "--run",
            "run-2099",
            "--role",
            "backend",
            "--change",
            "T1-backend",
            "--dry-run",
        ],
    );
    assert_eq!(report["status"], "READY", "{report}");
    assert_eq!(
        report["manifest"],
        ".guild/context/run-2099/backend-T1-backend.jsonl"
    );
}

#[test]
fn runs_that_do_not_name_their_plan_do_not_hide_the_lanes_run() {
    // `guild init` and ideation runs, a folder of research: no run-state.json, so each is
    // given the only plan, yet the lane is the build run's, which names its plan.
    let repo = Repo::fixture("guild");
    repo.write(".guild/runs/run-init-0001/notes.md", "# init\n");
    repo.write(".guild/runs/run-ideate-0002/research/a.md", "# research\n");
    let report = compile(
        &repo,
        &["--role", "backend", "--change", "T1-backend", "--dry-run"],
    );
    assert_eq!(report["status"], "READY", "{report}");
    assert_eq!(
        report["manifest"],
        format!(".guild/context/{RUN}/backend-T1-backend.jsonl")
    );
    // No run names the plan: the plan's own `run_id` picks the run.
    std::fs::remove_file(repo.root.join(format!(".guild/runs/{RUN}/run-state.json"))).unwrap();
    let plan = repo.read(".guild/plan/bookmark-tags.md");
    repo.write(
        ".guild/plan/bookmark-tags.md",
        &plan.replacen("---\n", &format!("---\nrun_id: {RUN}\n"), 1),
    );
    let report = compile(
        &repo,
        &["--role", "backend", "--change", "T1-backend", "--dry-run"],
    );
    assert_eq!(
        report["manifest"],
        format!(".guild/context/{RUN}/backend-T1-backend.jsonl"),
        "{report}"
    );
    // Without either, the runs are named and --run picks one, as before.
    repo.write(".guild/plan/bookmark-tags.md", &plan);
    let out = repo
        .curate()
        .args(["--role", "backend", "--change", "T1-backend"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("is in 3 runs"), "{}", out.stderr);
}

#[test]
fn a_guild_plan_names_its_run_among_several_plans() {
    let repo = Repo::fixture("guild");
    // A second plan, for a run with no run-state.json: its front matter names the run.
    repo.write(
        ".guild/plan/audit.md",
        "---\ntype: plan\nrun_id: run-audit\n---\n\n# Plan: audit\n\n## Lane: qa\n\n- task-id: A1-qa\n- owner: qa\n- depends-on: []\n- scope: audit the tags\n",
    );
    repo.write(".guild/runs/run-audit/notes.md", "# audit\n");
    let report = compile(&repo, &["--role", "qa", "--change", "A1-qa", "--dry-run"]);
    assert_eq!(report["status"], "READY", "{report}");
    assert_eq!(
        report["manifest"],
        ".guild/context/run-audit/qa-A1-qa.jsonl"
    );
    // The build run still has its own plan, by its run-state.json.
    let report = compile(
        &repo,
        &["--role", "backend", "--change", "T1-backend", "--dry-run"],
    );
    assert_eq!(
        report["manifest"],
        format!(".guild/context/{RUN}/backend-T1-backend.jsonl")
    );
}

#[test]
fn a_guild_wiki_of_guild_init_gives_its_overview_as_the_universal_layer() {
    let repo = Repo::fixture("guild");
    std::fs::remove_file(repo.root.join(".guild/wiki/context/project-overview.md")).unwrap();
    repo.write(
        ".guild/wiki/overview.md",
        "# Overview\n\nA bookmark manager.\n",
    );
    let report = compile(
        &repo,
        &["--role", "backend", "--change", "T1-backend", "--dry-run"],
    );
    let files: Vec<&str> = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["file"].as_str())
        .collect();
    assert!(files.contains(&".guild/wiki/overview.md"), "{report}");
}

#[test]
fn a_guild_lane_whose_upstream_receipt_is_missing_says_so() {
    let repo = Repo::fixture("guild");
    let out = repo
        .curate()
        .args([
            "--run",
            RUN,
            "--role",
            "qa",
            "--change",
            "T3-qa",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "this lane depends on T2-frontend, whose receipt .guild/runs/{RUN}/handoffs/frontend-T2-frontend.md does not exist yet"
        )),
        "{}",
        out.stderr
    );
    // A run that is not there: that is what is said, and nothing is written.
    let before = repo.snapshot_tree();
    let out = repo
        .curate()
        .args(["--run", "run-other", "--role", "qa", "--change", "T3-qa"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "error: --run \"run-other\": there is no run .guild/runs/run-other (the runs are: {RUN})"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(repo.snapshot_tree(), before);
    // A run that does not hold the lane: nothing to give.
    repo.write(
        ".guild/runs/run-other/run-state.json",
        "{\"plan_slug\": \"other\"}\n",
    );
    repo.write(
        ".guild/plan/other.md",
        "# Other\n\n## Lane: nobody\n\n- task-id: T9-none\n",
    );
    let out = repo
        .curate()
        .args(["--run", "run-other", "--role", "qa", "--change", "T3-qa"])
        .run();
    assert_eq!(out.code, 3, "{}", out.all());
    assert!(!repo.exists(".guild/context/run-other"));
}

/// Each workflow's fixture, with no config, through compile, render, preview, check and both
/// hooks: the same selection everywhere, and the manifest each consumer reads.
#[test]
fn every_route_serves_each_workflow() {
    let cases: [(&str, &str, &str, &str); 3] = [
        (
            "trellis",
            "implement",
            "11-30-fix-health-status-code",
            ".trellis/tasks/11-30-fix-health-status-code/implement.jsonl",
        ),
        (
            "openspec",
            "worker",
            "add-2fa",
            "openspec/changes/add-2fa/analysis/worker-context.jsonl",
        ),
        (
            "guild",
            "frontend",
            "T2-frontend",
            ".guild/context/run-4b7e2d90-1c3a-4f5e-8a6b-2d9c0e1f3a57/frontend-T2-frontend.jsonl",
        ),
    ];
    for (fixture, role, change, manifest) in cases {
        let repo = Repo::fixture(fixture);
        let sel = ["--role", role, "--change", change];
        let report = compile(&repo, &sel);
        assert_eq!(report["manifest"], manifest, "{fixture}");
        let entries = files(&report);
        // preview: the same entries, nothing written beyond what compile wrote.
        let before = repo.snapshot_tree();
        let out = repo
            .curate()
            .args(["preview"])
            .args(sel)
            .args(["--format", "json"])
            .run();
        assert_eq!(out.code, 0, "{fixture}: {}", out.all());
        let v = out.json();
        assert_eq!(files(&v["report"]), entries, "{fixture}");
        let prompt = v["prompt"].as_str().unwrap();
        assert!(
            prompt.contains(&format!("`{manifest}`")),
            "{fixture}: {prompt}"
        );
        assert_eq!(repo.snapshot_tree(), before, "{fixture}: preview wrote");
        // render: every entry in the bundle, which ends with the end marker.
        let out = repo.curate().args(["render"]).args(sel).args(["-q"]).run();
        assert_eq!(out.code, 0, "{fixture}: {}", out.all());
        for e in &entries {
            assert!(
                out.stdout.contains(&format!("=== {e} ===")),
                "{fixture}: {e}"
            );
        }
        assert!(out.stdout.trim_end().ends_with("-->"));
        // check: green on what curate wrote.
        let out = repo.curate().args(["check", "--stale"]).run();
        assert_eq!(out.code, 0, "{fixture}: {}", out.all());
        // The Claude Code hook and the OpenCode hook inject that bundle.
        let subagent = if fixture == "trellis" {
            "trellis-implement"
        } else {
            role
        };
        let claude = format!(
            r#"{{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","cwd":{},"tool_input":{{"prompt":"Go.\nchange: {change}","subagent_type":"{subagent}"}}}}"#,
            serde_json::to_string(&repo.root).unwrap()
        );
        let out = repo
            .curate()
            .args(["hook", "claude-code"])
            .stdin(claude.as_bytes())
            .run();
        let v = out.json();
        let p = v["hookSpecificOutput"]["updatedInput"]["prompt"]
            .as_str()
            .unwrap_or_else(|| panic!("{fixture}: {v}"));
        assert!(
            p.starts_with(&format!("role: {role}\n<!-- curate:begin")),
            "{fixture}: {p}"
        );
        for e in &entries {
            assert!(p.contains(&format!("=== {e} ===")), "{fixture}: {e}");
        }
        let opencode = format!(
            r#"{{"tool":"task","sessionID":"s","callID":"c","directory":{},"args":{{"prompt":"Go.\nchange: {change}","subagent_type":"{subagent}"}}}}"#,
            serde_json::to_string(&repo.root).unwrap()
        );
        let out = repo
            .curate()
            .args(["hook", "opencode"])
            .stdin(opencode.as_bytes())
            .run();
        let v = out.json();
        let q = v["prompt"]
            .as_str()
            .unwrap_or_else(|| panic!("{fixture}: {v}"));
        assert_eq!(q, p, "{fixture}: both hosts get the same prompt");
    }
}

/// The real OpenSpec CLI (`@fission-ai/openspec` from the npm registry) still accepts the
/// change after curate wrote its manifest, lock and overrides into it. Skipped, with a line
/// saying so, where npm or the registry is not there.
#[test]
fn openspecs_own_validator_accepts_the_change_curate_wrote_into() {
    let Some(cli) = openspec_cli() else {
        eprintln!("skipped: the OpenSpec CLI could not be installed from the npm registry");
        return;
    };
    let repo = Repo::fixture("openspec");
    compile(&repo, &["--role", "worker", "--change", "add-2fa"]);
    compile(&repo, &["--role", "reviewer", "--change", "add-2fa"]);
    assert!(repo.exists("openspec/changes/add-2fa/analysis/worker-context.lock.json"));
    for args in [
        &["validate", "add-2fa", "--strict"][..],
        &["validate", "--all", "--strict"][..],
    ] {
        let out = std::process::Command::new(&cli)
            .args(args)
            .current_dir(&repo.root)
            .env("DO_NOT_TRACK", "1")
            .env("CI", "true")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "openspec {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let list = std::process::Command::new(&cli)
        .arg("list")
        .current_dir(&repo.root)
        .env("DO_NOT_TRACK", "1")
        .env("CI", "true")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.contains("add-2fa"), "{text}");
    assert!(
        !text.contains("analysis"),
        "curate's folder shows as a change: {text}"
    );
}

/// `openspec archive` moves the change to `archive/<date>-<id>/` with curate's manifest in
/// it, and merges its delta specs into the current ones: `check` then reads each row's file
/// where it went, and does not call the archived change stale.
#[test]
fn an_archived_openspec_change_still_checks() {
    let repo = Repo::fixture("openspec");
    compile(&repo, &["--role", "worker", "--change", "add-2fa"]);
    let archived = "openspec/changes/archive/2026-12-04-add-2fa";
    std::fs::rename(
        repo.root.join("openspec/changes/add-2fa"),
        repo.root.join(archived),
    )
    .unwrap();
    repo.write(
        "openspec/specs/auth/spec.md",
        "# auth\n\nmerged by the archive\n",
    );
    for args in [&["check"][..], &["check", "--stale"]] {
        let out = repo.curate().args(args).run();
        assert_eq!(out.code, 0, "{args:?}: {}", out.all());
        assert_eq!(out.stderr, "checked 1 manifest: 0 errors, 0 warnings\n");
    }
    // A file gone from the archive as well is still missing, named as the row names it.
    std::fs::remove_file(repo.root.join(format!("{archived}/design.md"))).unwrap();
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{archived}/analysis/worker-context.jsonl:4: error: \"openspec/changes/add-2fa/design.md\" does not exist"
        )),
        "{}",
        out.all()
    );
}

/// The same after the real `openspec archive`.
#[test]
fn openspecs_own_archive_leaves_a_manifest_that_checks() {
    let Some(cli) = openspec_cli() else {
        eprintln!("skipped: the OpenSpec CLI could not be installed from the npm registry");
        return;
    };
    let repo = Repo::fixture("openspec");
    compile(&repo, &["--role", "worker", "--change", "add-2fa"]);
    let out = std::process::Command::new(&cli)
        .args(["archive", "add-2fa", "--yes"])
        .current_dir(&repo.root)
        .env("DO_NOT_TRACK", "1")
        .env("CI", "true")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!repo.exists("openspec/changes/add-2fa"));
    for args in [&["check"][..], &["check", "--stale"]] {
        let out = repo.curate().args(args).run();
        assert_eq!(out.code, 0, "{args:?}: {}", out.all());
        assert_eq!(out.stderr, "checked 1 manifest: 0 errors, 0 warnings\n");
    }
}

/// The OpenSpec CLI (`@fission-ai/openspec` 1.13.2): the one `.ci/run` installed
/// (`CURATE_OPENSPEC_BIN`), else installed once into the test build's temporary folder.
pub fn openspec_cli() -> Option<std::path::PathBuf> {
    static CLI: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    CLI.get_or_init(|| {
        if let Some(bin) = std::env::var_os("CURATE_OPENSPEC_BIN").map(std::path::PathBuf::from)
            && bin.exists()
        {
            return Some(bin);
        }
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("openspec-cli");
        let bin = dir.join("node_modules/.bin/openspec");
        if !bin.exists() {
            let ok = std::process::Command::new("npm")
                .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .arg("@fission-ai/openspec@1.13.2")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return None;
            }
        }
        bin.exists().then_some(bin)
    })
    .clone()
}

/// A lane's bundle curate did not write (Guild's own, the fixture's lane `T1-backend`) or
/// one edited by hand since is never silently replaced: the compile writes nothing and
/// says so; `--force` replaces it, and curate's own bundle is rewritten freely.
#[test]
fn a_guild_bundle_curate_did_not_write_is_left_alone() {
    let repo = Repo::fixture("guild");
    let run = ".guild/context/run-4b7e2d90-1c3a-4f5e-8a6b-2d9c0e1f3a57";
    let bundle = format!("{run}/backend-T1-backend.md");
    let guilds = repo.read(&bundle);
    let lane = ["--role", "backend", "--change", "T1-backend"];
    let out = repo.curate().args(lane).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{bundle} was not written by curate, or was edited since"
        )),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--force"), "{}", out.stderr);
    assert_eq!(repo.read(&bundle), guilds);
    assert!(!repo.exists(&format!("{run}/backend-T1-backend.jsonl")));
    assert!(!repo.exists(&format!("{run}/backend-T1-backend.lock.json")));
    let out = repo.curate().args(lane).args(["--force"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert_ne!(repo.read(&bundle), guilds);

    // curate's own bundle: compiled again freely; edited by hand: left alone.
    let front = ["--role", "frontend", "--change", "T2-frontend"];
    let mine = format!("{run}/frontend-T2-frontend.md");
    for _ in 0..2 {
        let out = repo.curate().args(front).run();
        assert_eq!(out.code, 0, "{}", out.all());
    }
    let edited = format!("{}HAND NOTE\n", repo.read(&mine));
    repo.write(&mine, &edited);
    let out = repo.curate().args(front).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(repo.read(&mine), edited);
}

/// The JSON report's `workflow.change_missing` says whether the change's folder is where it
/// was looked for, in every workflow: a warning and READY in the plain layout, BLOCKED in
/// a workflow whose own tools make changes.
#[test]
fn change_missing_is_true_whenever_the_change_folder_is_not_there() {
    for (fixture, role, change, missing, status) in [
        ("aiws-basic", "worker", "add-auth", false, "READY"),
        ("aiws-basic", "worker", "nope", true, "READY"),
        ("openspec", "worker", "add-2fa", false, "READY"),
        ("openspec", "worker", "nope", true, "BLOCKED"),
    ] {
        let repo = Repo::fixture(fixture);
        let out = repo
            .curate()
            .args([
                "--role",
                role,
                "--change",
                change,
                "--dry-run",
                "--format",
                "json",
            ])
            .run();
        let report = out.json();
        assert_eq!(
            report["status"],
            status,
            "{fixture} {change}: {}",
            out.all()
        );
        assert_eq!(
            report["workflow"]["change_missing"],
            missing,
            "{fixture} {change}: {}",
            out.all()
        );
    }
}

/// An author's row curate keeps out of the list (a secret, a binary file, a path outside
/// the repository) is written back withheld: Trellis' hook and `task.py validate` skip it
/// (no `file`), and the next run reads it back, so the note stays and a second compile
/// changes nothing; once the file may be read, the row is a file row again.
#[test]
fn a_second_row_for_a_file_is_withheld_with_its_reason_not_lost() {
    let repo = Repo::fixture("trellis");
    let list = format!("{CURATED}/implement.jsonl");
    let authored = repo.read(&list);
    let file = "src/routes/sessions.ts";
    let first_row = authored
        .lines()
        .find(|l| l.contains(file))
        .expect("the route's row");
    repo.write(
        &list,
        &format!(
            "{authored}{{\"file\": \"{file}\", \"reason\": \"Also: the error shape to keep\"}}\n"
        ),
    );
    let args = ["--role", "implement", "--change", "11-28-login-rate-limit"];
    let out = repo.curate().args(args).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{list}: \"{file}\" is listed twice: read once, the second row kept withheld"
        )),
        "{}",
        out.stderr
    );
    let written = repo.read(&list);
    // The first row stays the file row, the second is kept with its reason, withheld.
    assert!(written.lines().any(|l| l == first_row), "{written}");
    assert!(
        written.lines().any(|l| l
            == format!(r#"{{"withheld":"{file}","reason":"Also: the error shape to keep","why":"listed by another row already"}}"#)),
        "{written}"
    );
    assert_eq!(trellis_validate(&repo, &list), Vec::<String>::new());
    let injected = trellis_injects(&repo, &list, 1 << 20);
    assert_eq!(injected.iter().filter(|(f, _)| f == file).count(), 1);
    // Again: the same list, byte for byte.
    let out = repo.curate().args(args).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(repo.read(&list), written);
}

/// A glob over the task folder never takes curate's own output back in (Trellis' lists, the
/// lock beside them, whatever the manifest template names): the same inputs give the same
/// list from the first run on.
#[test]
fn a_glob_over_the_task_folder_never_takes_the_lists_curate_writes() {
    let repo = Repo::fixture("trellis");
    let list = format!("{CURATED}/implement.jsonl");
    let args = [
        "--role",
        "implement",
        "--change",
        "11-28-login-rate-limit",
        "--reads",
        ".trellis/tasks/<id>/**",
        "--max-files",
        "0",
        "-q",
    ];
    let mut seen = Vec::new();
    for _ in 0..3 {
        let out = repo.curate().args(args).run();
        assert_eq!(out.code, 0, "{}", out.all());
        seen.push(repo.read(&list));
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[1], seen[2]);
    for own in ["implement.jsonl", "check.jsonl", "implement.lock.json"] {
        assert!(
            !seen[2].contains(&format!("{CURATED}/{own}")),
            "{own}: {}",
            seen[2]
        );
    }
    // A plain repository whose manifest template is elsewhere: the same.
    let repo = Repo::fixture("aiws-basic");
    let args = [
        "--role", "worker", "--change", "add-auth", "--reads", "docs/**", "-q",
    ];
    let env = ("CURATE_MANIFEST", "docs/{change}/{role}.jsonl");
    assert_eq!(repo.curate().args(args).env(env.0, env.1).run().code, 0);
    let out = repo
        .curate()
        .args(args)
        .args(["--stdout"])
        .env(env.0, env.1)
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        !out.stdout.contains("docs/add-auth/worker"),
        "{}",
        out.stdout
    );
}

/// A file row naming a file an earlier folder row already stands for is the second row for
/// that file: withheld with a warning, the folder row kept where the author wrote it (it
/// brings the folder's later files too), so Trellis' hook reads the file once.
#[test]
fn a_file_row_inside_an_earlier_folder_row_is_the_second_row() {
    for (folder, file) in [
        (
            format!("{CURATED}/research/"),
            format!("{CURATED}/research/limiter-options.md"),
        ),
        (
            ".trellis/spec/backend/".to_owned(),
            ".trellis/spec/backend/error-handling.md".to_owned(),
        ),
    ] {
        let repo = Repo::fixture("trellis");
        let list = format!("{CURATED}/implement.jsonl");
        let folder_row =
            format!(r#"{{"file": "{folder}", "type": "directory", "reason": "All of them"}}"#);
        let file_row = format!(r#"{{"file": "{file}", "reason": "This one first"}}"#);
        repo.write(&list, &format!("{folder_row}\n{file_row}\n"));
        let args = ["--role", "implement", "--change", "11-28-login-rate-limit"];
        let out = repo.curate().args(args).run();
        assert_eq!(out.code, 0, "{}", out.all());
        assert!(
            out.stderr.contains(&format!("\"{file}\" is listed twice")),
            "{}",
            out.stderr
        );
        let written = repo.read(&list);
        // Withheld rows stand first, as every withheld row does.
        let rows: Vec<&str> = written
            .lines()
            .filter(|l| !l.starts_with(r#"{"_curat"#))
            .filter(|l| l.contains(&folder) || l.contains(&file))
            .collect();
        assert_eq!(
            rows,
            [
                &format!(
                    r#"{{"withheld":"{file}","reason":"This one first","why":"listed by another row already"}}"#
                ),
                folder_row.as_str(),
            ],
            "{written}"
        );
        assert_eq!(trellis_validate(&repo, &list), Vec::<String>::new());
        let injected = trellis_injects(&repo, &list, 1 << 20);
        assert_eq!(injected.iter().filter(|(f, _)| *f == file).count(), 1);
        // A file added to the folder later is read by the folder's row.
        repo.write(&format!("{folder}later.md"), "# later\n");
        assert_eq!(repo.curate().args(args).run().code, 0);
        let injected = trellis_injects(&repo, &list, 1 << 20);
        assert!(
            injected
                .iter()
                .any(|(f, _)| *f == format!("{folder}later.md")),
            "{injected:?}"
        );
    }
}

/// `curate check` reads a folder row of an archived task where the task is now, as it does
/// a file row (and as the compile does).
#[test]
fn a_folder_row_of_an_archived_trellis_task_still_checks() {
    let repo = Repo::fixture("trellis");
    let task = "11-28-login-rate-limit";
    repo.write(
        &format!("{CURATED}/check.jsonl"),
        &format!(
            "{{\"file\": \"{CURATED}/research/\", \"type\": \"directory\", \"reason\": \"notes\"}}\n"
        ),
    );
    assert_eq!(
        repo.curate()
            .args(["-q", "--role", "check", "--change", task])
            .run()
            .code,
        0
    );
    assert_eq!(repo.curate().args(["check"]).run().code, 0);
    std::fs::create_dir_all(repo.root.join(".trellis/tasks/archive/2026-12")).unwrap();
    std::fs::rename(
        repo.root.join(CURATED),
        repo.root
            .join(format!(".trellis/tasks/archive/2026-12/{task}")),
    )
    .unwrap();
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(!out.all().contains("holds no .md file"), "{}", out.all());
}

/// An author's list with a byte that is not UTF-8: an error at its line and column, the
/// list left as it is (a lossy read would write the row back changed).
#[test]
fn a_trellis_list_that_is_not_utf8_is_an_error_and_left_as_it_is() {
    let repo = Repo::fixture("trellis");
    let list = format!("{CURATED}/implement.jsonl");
    let mut bytes = repo.read(&list).into_bytes();
    bytes.extend_from_slice(b"{\"file\": \"README.md\", \"reason\": \"caf\xe9\"}\n");
    std::fs::write(repo.root.join(&list), &bytes).unwrap();
    let line = String::from_utf8_lossy(&bytes).lines().count();
    let out = repo
        .curate()
        .args(["--role", "implement", "--change", "11-28-login-rate-limit"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains(&format!("error: {list}:{line}:37: not UTF-8")),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read(repo.root.join(&list)).unwrap(), bytes);
}

#[test]
fn a_row_kept_out_of_a_trellis_list_is_withheld_and_noted_on_every_run() {
    let repo = Repo::fixture("trellis");
    let list = format!("{CURATED}/implement.jsonl");
    repo.write(".env", "DATABASE_URL=postgres://app:hunter2@db/app\n");
    repo.write("docs/dump.md", "a\0binary\n");
    let authored = repo.read(&list);
    repo.write(
        &list,
        &format!(
            "{authored}{{\"file\": \".env\", \"reason\": \"config\"}}\n{{\"reason\": \"the dump\", \"file\": \"docs/dump.md\"}}\n{{\"file\": \"../outside.md\", \"reason\": \"sibling\"}}\n"
        ),
    );
    let args = ["--role", "implement", "--change", "11-28-login-rate-limit"];
    let report = compile(&repo, &args);
    assert!(
        !files(&report)
            .iter()
            .any(|f| f == ".env" || f == "docs/dump.md")
    );
    let first = repo.read(&list);
    for row in [
        r#"{"withheld":".env","reason":"config","why":"secret: `.env` file"}"#,
        r#"{"reason":"the dump","withheld":"docs/dump.md","why":"binary (a NUL byte in the first 8 KiB)"}"#,
        r#"{"withheld":"../outside.md","reason":"sibling","why":"outside the repository: never read"}"#,
    ] {
        assert!(first.lines().any(|l| l == row), "{row} in\n{first}");
    }
    assert!(
        first.contains(r#"{"_curation":"excluded \".env\": secret: `.env` file"}"#),
        "{first}"
    );
    assert!(!first.contains("\"file\": \".env\""), "{first}");
    assert_eq!(trellis_validate(&repo, &list), Vec::<String>::new());
    let injected: Vec<String> = trellis_injects(&repo, &list, 1 << 20)
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    assert!(
        !injected
            .iter()
            .any(|f| f.contains(".env") || f.contains("dump") || f.contains("outside")),
        "{injected:?}"
    );

    // Again: the same list, byte for byte, the notes included.
    compile(&repo, &args);
    assert_eq!(repo.read(&list), first);
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());

    // The dump becomes text: its row is the author's file row again (a folder's too).
    repo.write("docs/dump.md", "# Dump\n\ntext now\n");
    repo.write(
        &list,
        &format!(
            "{}{{\"withheld\": \".trellis/spec/guides/\", \"type\": \"directory\"}}\n",
            repo.read(&list)
        ),
    );
    let report = compile(&repo, &args);
    assert!(files(&report).iter().any(|f| f == "docs/dump.md"));
    let third = repo.read(&list);
    assert!(
        third
            .lines()
            .any(|l| l == r#"{"reason":"the dump","file":"docs/dump.md"}"#),
        "{third}"
    );
    assert!(!third.contains("\"withheld\":\"docs/dump.md\""), "{third}");
    assert!(
        third
            .lines()
            .any(|l| l == r#"{"file":".trellis/spec/guides/","type":"directory"}"#),
        "{third}"
    );
    assert!(
        trellis_injects(&repo, &list, 1 << 20)
            .iter()
            .any(|(f, _)| f.starts_with(".trellis/spec/guides/")),
        "Trellis reads the folder curate lists"
    );
    assert!(third.contains("\"withheld\":\".env\""), "{third}");
}

/// A change id that is not there, but close to one that is: the warning asks "did you
/// mean", in each workflow's own terms (Guild: the lanes of the runs' plans), and the JSON
/// report lists the ids; an id like none lists nothing.
#[test]
fn a_change_not_found_suggests_the_ids_that_look_like_it() {
    for (fixture, role, given, meant) in [
        (
            "trellis",
            "implement",
            "11-28-login",
            "11-28-login-rate-limit",
        ),
        ("openspec", "worker", "add-2af", "add-2fa"),
        ("guild", "backend", "T1", "T1-backend"),
        ("aiws-basic", "worker", "add-aut", "add-auth"),
    ] {
        let repo = Repo::fixture(fixture);
        let out = repo
            .curate()
            .args(["--role", role, "--change", given, "--dry-run"])
            .run();
        assert!(
            out.stderr.contains(&format!("; did you mean {meant}?")),
            "{fixture}: {}",
            out.all()
        );
        let json = repo
            .curate()
            .args([
                "--role",
                role,
                "--change",
                given,
                "--dry-run",
                "--format",
                "json",
            ])
            .run()
            .json();
        assert_eq!(
            json["workflow"]["similar"],
            serde_json::json!([meant]),
            "{fixture}"
        );
        let far = repo
            .curate()
            .args([
                "--role",
                role,
                "--change",
                "zzzz",
                "--dry-run",
                "--format",
                "json",
            ])
            .run()
            .json();
        assert!(far["workflow"].get("similar").is_none(), "{fixture}: {far}");
    }
}

/// A change folder whose name holds a token is never offered by "did you mean" (the id
/// given with `--change` would have been refused; a suggestion must not print it either).
#[test]
fn a_change_folder_named_by_a_token_is_never_offered() {
    let repo = Repo::fixture("aiws-basic");
    let token = "ghp_R7mK2pQ9xV4nL8wT3yH6jB1cF5dG0sZeAa9u";
    repo.write(&format!("changes/add-auth-{token}/plan/p.md"), "# p\n");
    repo.write("changes/AKIAZDOCIS2JHTLGMXGE/plan/p.md", "# p\n");
    for given in ["add-auth-ghp_", "akiazdocis2jhtlgmxg"] {
        for format in ["human", "json"] {
            let out = repo
                .curate()
                .args(["--role", "worker", "--change", given, "--dry-run"])
                .args(["--format", format])
                .run();
            assert!(!out.all().contains("R7mK2pQ9"), "{}", out.all());
            assert!(!out.all().contains("AKIAZDOCIS2"), "{}", out.all());
        }
    }
}

/// A `context_injection` cap of `.trellis/config.yaml` that is not a whole number: Trellis'
/// hook falls back to its default without a word; curate does the same, and says so.
#[test]
fn a_trellis_cap_that_is_not_a_number_is_a_warning_naming_its_line() {
    let repo = Repo::fixture("trellis");
    let config = repo.read(".trellis/config.yaml");
    repo.write(
        ".trellis/config.yaml",
        &config.replace("max_file_bytes: 4096 ", "max_file_bytes: 4k   "),
    );
    let args = [
        "--role",
        "implement",
        "--change",
        "11-28-login-rate-limit",
        "--dry-run",
    ];
    let implement = || repo.curate().args(args).run();
    let out = implement();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains("warning: .trellis/config.yaml:9: context_injection.max_file_bytes \"4k\" is not a whole number of bytes (0 or more): Trellis' hook uses its default, 32768 bytes, and so does curate"),
        "{}",
        out.stderr
    );
    // `check` (CI's command) says it too, as a warning: Trellis runs on.
    let check = repo.curate().args(["check"]).run();
    assert_eq!(check.code, 0, "{}", check.all());
    assert!(
        check.stderr.contains(".trellis/config.yaml:9: warning: context_injection.max_file_bytes \"4k\" is not a whole number"),
        "{}",
        check.stderr
    );
    // A key of the same name in another mapping above: the line is the cap's own.
    repo.write(
        ".trellis/config.yaml",
        &config
            .replace("max_file_bytes: 4096 ", "max_file_bytes: 4k   ")
            .replace(
                "max_journal_lines: 1500\n",
                "max_journal_lines: 1500\nlimits:\n  max_file_bytes: 10\n",
            ),
    );
    let out = implement();
    assert!(
        out.stderr
            .contains("warning: .trellis/config.yaml:11: context_injection.max_file_bytes"),
        "{}",
        out.stderr
    );
    repo.write(".trellis/config.yaml", &config);
    let out = implement();
    assert!(!out.stderr.contains("config.yaml"), "{}", out.stderr);
    let check = repo.curate().args(["check"]).run();
    assert!(!check.stderr.contains("config.yaml"), "{}", check.stderr);
}

/// A change folder, a changes root or a delta `specs/` reached through a link out of the
/// repository is never listed: what lies outside decides neither which current specs are
/// taken nor whether the change is there.
#[cfg(unix)]
#[test]
fn openspec_folders_behind_a_link_out_are_never_listed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(outside.path().join("specs/notifications")).unwrap();
    std::fs::write(
        outside.path().join("specs/notifications/spec.md"),
        "## ADDED Requirements\n",
    )
    .unwrap();
    let repo = Repo::fixture("openspec");
    let specs = repo.root.join("openspec/changes/add-2fa/specs");
    std::fs::remove_dir_all(&specs).unwrap();
    std::os::unix::fs::symlink(outside.path().join("specs"), &specs).unwrap();
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-2fa", "--stdout"])
        .run();
    assert!(
        !out.stdout.contains("openspec/specs/notifications"),
        "{}",
        out.stdout
    );

    // The whole changes root elsewhere: the archived `add-login` is not found through it.
    let repo = Repo::fixture("openspec");
    let changes = repo.root.join("openspec/changes");
    let moved = outside.path().join("changes");
    std::fs::rename(&changes, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &changes).unwrap();
    let out = repo
        .curate()
        .args(["--role", "reviewer", "--change", "add-login", "--dry-run"])
        .run();
    assert_eq!(out.code, 3, "{}", out.all());
    assert!(!out.all().contains("2026-10-02-add-login"), "{}", out.all());
}

/// `--change add-login` finds the newest dated archive of it: an undated `archive/add-login/`
/// (none of OpenSpec's) and a name whose date is no date (`2026-99-99-`) are not taken.
#[test]
fn openspec_the_newest_archive_is_a_dated_one() {
    let repo = Repo::fixture("openspec");
    let archive = "openspec/changes/archive";
    let proposal = repo.read(&format!("{archive}/2026-10-02-add-login/proposal.md"));
    for folder in ["2026-11-05-add-login", "add-login", "2026-99-99-add-login"] {
        repo.write(&format!("{archive}/{folder}/proposal.md"), &proposal);
    }
    let out = repo
        .curate()
        .args(["--role", "reviewer", "--change", "add-login", "--dry-run"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{archive}/2026-11-05-add-login/analysis/reviewer-context.jsonl"
        )),
        "{}",
        out.stderr
    );
}

/// A Trellis task's `research/` notes (what `trellis-research` wrote) reach the implement
/// and check agents even where the author's lists hold only Trellis' seed row; a note the
/// author listed is listed once, with the author's reason.
#[test]
fn trellis_research_notes_are_in_the_implement_and_check_baselines() {
    let repo = Repo::fixture("trellis");
    let seeded = ".trellis/tasks/12-01-paginate-member-list";
    for role in ["implement", "check"] {
        let report = compile(
            &repo,
            &["--role", role, "--change", "12-01-paginate-member-list"],
        );
        let entries = report["entries"].as_array().unwrap();
        let note = entries
            .iter()
            .find(|e| e["file"] == format!("{seeded}/research/page-size.md"))
            .unwrap_or_else(|| panic!("{role}: {report}"));
        assert_eq!(note["kind"], "research", "{role}");
        let list = repo.read(&format!("{seeded}/{role}.jsonl"));
        assert!(list.contains("research/page-size.md"), "{role}: {list}");
    }
    let task = ".trellis/tasks/11-28-login-rate-limit";
    let report = compile(
        &repo,
        &["--role", "implement", "--change", "11-28-login-rate-limit"],
    );
    let listed: Vec<_> = files(&report)
        .into_iter()
        .filter(|f| f.contains("/research/"))
        .collect();
    assert_eq!(listed, [format!("{task}/research/limiter-options.md")]);
    let list = repo.read(&format!("{task}/implement.jsonl"));
    assert!(
        list.contains("Why fixed windows keyed by e-mail and address"),
        "{list}"
    );
    let report = compile(
        &repo,
        &["--role", "check", "--change", "11-28-login-rate-limit"],
    );
    assert!(
        files(&report).contains(&format!("{task}/research/limiter-options.md")),
        "{report}"
    );
    // The research agent gets none: it writes them.
    let report = compile(
        &repo,
        &[
            "--role",
            "research",
            "--change",
            "11-28-login-rate-limit",
            "--dry-run",
        ],
    );
    assert!(
        !files(&report).iter().any(|f| f.contains("/research/")),
        "{report}"
    );
}

#[test]
fn trellis_a_task_kept_in_another_tasks_folder_is_a_change() {
    let repo = Repo::fixture("trellis");
    let batch = format!("{CURATED}/workstreams/1");
    repo.write(
        &format!("{batch}/prd.md"),
        "# Batch 1\n\nThe limiter's store.\n",
    )
    .write(
        &format!("{batch}/implement.jsonl"),
        "{\"file\": \"src/store/userStore.ts\", \"reason\": \"the store\"}\n",
    );
    let id = "11-28-login-rate-limit/workstreams/1";
    let report = compile(&repo, &["--role", "implement", "--change", id]);
    assert_eq!(report["manifest"], format!("{batch}/implement.jsonl"));
    assert!(files(&report).contains(&"src/store/userStore.ts".to_owned()));
    let written = repo.read(&format!("{batch}/implement.jsonl"));
    // As Trellis' hook names it, by its path; and again: the same bytes.
    let again = compile(
        &repo,
        &[
            "--role",
            "implement",
            "--change",
            &format!(".trellis/tasks/{id}"),
        ],
    );
    assert_eq!(again["manifest"], report["manifest"]);
    assert_eq!(repo.read(&format!("{batch}/implement.jsonl")), written);
    // A batch that is not there is BLOCKED where it was looked for; a way out is no id.
    let missing = repo
        .curate()
        .args([
            "--role",
            "implement",
            "--change",
            "11-28-login-rate-limit/workstreams/9",
        ])
        .run();
    assert_eq!(missing.code, 3, "{}", missing.all());
    assert!(
        missing.all().contains(&format!("{CURATED}/workstreams/9")),
        "{}",
        missing.all()
    );
    let out = repo
        .curate()
        .args(["--role", "implement", "--change", "../outside/x"])
        .run();
    assert_eq!(out.code, 2, "{}", out.all());
}
