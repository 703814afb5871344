//! `curate check`: committed manifests valid, in budget, and (with `--stale`) current.

use std::sync::OnceLock;

use crate::{Output, Repo, WORKER_LOCK, WORKER_MANIFEST};

/// The worker manifest of change `fix-typo`.
const TYPO_MANIFEST: &str = "changes/fix-typo/analysis/worker-context.jsonl";
/// Its lock.
const TYPO_LOCK: &str = "changes/fix-typo/analysis/worker-context.lock.json";
/// A hand-written manifest in the over-budget fixture.
const BIG_MANIFEST: &str = "changes/big/analysis/worker-context.jsonl";

/// aiws-basic after `curate --role worker --change add-auth`.
///
/// The compile runs once per test binary; each test gets a fresh copy of the fixture with the
/// manifest and lock it wrote (the output is byte-identical on every run).
fn compiled() -> Repo {
    static OUTPUT: OnceLock<(String, String)> = OnceLock::new();
    let (manifest, lock) = OUTPUT.get_or_init(|| {
        let repo = Repo::fixture("aiws-basic");
        compile(&repo, &["--change", "add-auth"]);
        (repo.read(WORKER_MANIFEST), repo.read(WORKER_LOCK))
    });
    let repo = Repo::fixture("aiws-basic");
    repo.write(WORKER_LOCK, lock)
        .write(WORKER_MANIFEST, manifest);
    repo
}

/// [`compiled`] plus `curate --role worker --change fix-typo`.
fn compiled_both() -> Repo {
    static OUTPUT: OnceLock<(String, String)> = OnceLock::new();
    let (manifest, lock) = OUTPUT.get_or_init(|| {
        let repo = Repo::fixture("aiws-basic");
        compile(&repo, &["--change", "fix-typo"]);
        (repo.read(TYPO_MANIFEST), repo.read(TYPO_LOCK))
    });
    let repo = compiled();
    repo.write(TYPO_LOCK, lock).write(TYPO_MANIFEST, manifest);
    repo
}

fn compile(repo: &Repo, args: &[&str]) {
    let out = repo.curate().args(["--role", "worker"]).args(args).run();
    assert_eq!(out.code, 0, "{}", out.all());
}

fn check(repo: &Repo, args: &[&str]) -> Output {
    repo.curate().args(["check"]).args(args).run()
}

/// Appends a line to a file; returns its line number.
fn append(repo: &Repo, rel: &str, line: &str) -> usize {
    let mut text = repo.read(rel);
    text.push_str(line);
    text.push('\n');
    repo.write(rel, &text);
    text.lines().count()
}

/// A full entry line (all five fields, as curate writes them).
fn entry(file: &str, sections: &str, priority: &str) -> String {
    format!(
        r#"{{"file":"{file}","reason":"added by hand","sections":{sections},"priority":"{priority}","kind":"truth"}}"#
    )
}

#[test]
fn a_freshly_compiled_manifest_passes() {
    let repo = Repo::fixture("aiws-basic");
    compile(&repo, &["--change", "add-auth"]);
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.stderr, "checked 1 manifest: 0 errors, 0 warnings\n");
    assert!(out.stdout.is_empty());
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 0, "{}", out.all());
    let out = check(&repo, &["--format", "json"]);
    assert_eq!(out.code, 0);
    assert_eq!(
        out.json(),
        serde_json::json!({"valid": true, "manifests": 1, "findings": []})
    );
    let out = check(&repo, &["--format", "github"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "");
}

#[test]
fn check_writes_nothing() {
    let repo = compiled();
    append(
        &repo,
        WORKER_MANIFEST,
        &entry("docs/missing.md", "null", "high"),
    );
    repo.write("changes/add-auth/plan/new.md", "# new step\n");
    let before = repo.snapshot_tree();
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1);
    assert!(before == repo.snapshot_tree(), "check changed the tree");
}

#[test]
fn each_broken_entry_is_an_error_at_its_line() {
    let cases = [
        (
            entry("docs/missing.md", "null", "high"),
            "\"docs/missing.md\" does not exist",
        ),
        (entry(".env", "null", "high"), "\".env\" is a secret (`.env` file)"),
        (
            entry("config/server.key", "null", "high"),
            "\"config/server.key\" is a secret (private key file (`*.key`))",
        ),
        (
            entry("src/auth/legacy_client.ts", "null", "medium"),
            "\"src/auth/legacy_client.ts\" holds a secret (aws-access-key-id on line 12)",
        ),
        (
            entry("assets/logo.png", "null", "medium"),
            "\"assets/logo.png\" is binary",
        ),
        (
            entry("docs/guide.md", "null", "urgent"),
            "unknown priority \"urgent\": use high, medium or low",
        ),
        (
            entry("docs/guide.md", "[[900,950]]", "high"),
            "section [900, 950] of \"docs/guide.md\" runs past its 32 lines",
        ),
        (
            entry("docs/guide.md", "[[1,10],[30,40]]", "high"),
            "section [30, 40] of \"docs/guide.md\" runs past its 32 lines",
        ),
        (
            entry("docs/guide.md", "[[10,5]]", "high"),
            "malformed sections: section [10, 5] ends before it starts",
        ),
        (
            entry("docs/guide.md", "[[0,5]]", "high"),
            "malformed sections: section [0, 5]: lines are numbered from 1",
        ),
        (
            entry("docs/guide.md", "[]", "high"),
            "malformed sections:",
        ),
        (
            entry("../outside.md", "null", "high"),
            "\"../outside.md\" climbs out of the repository with `..`",
        ),
        (
            entry("docs/../../outside.md", "null", "high"),
            "\"docs/../../outside.md\" climbs out of the repository with `..`",
        ),
        (
            entry("/etc/passwd", "null", "high"),
            "\"/etc/passwd\" is an absolute path outside the repository",
        ),
        (
            entry("docs/passwd-link.md", "null", "high"),
            "\"docs/passwd-link.md\" is outside the repository or not a file",
        ),
        (
            r#"{"file":"docs/guide.md","priority":"high"}"#.to_owned(),
            "missing field \"reason\"",
        ),
        (
            r#"{"file":"docs/guide.md","reason":"r","sections":null,"priority":"high","kind":"truth""#
                .to_owned(),
            "invalid JSON",
        ),
    ];
    let repo = compiled();
    let original = repo.read(WORKER_MANIFEST);
    for (line, finding) in cases {
        repo.write(WORKER_MANIFEST, &original);
        let n = append(&repo, WORKER_MANIFEST, &line);
        let out = check(&repo, &[]);
        assert_eq!(out.code, 1, "{line}\n{}", out.all());
        let want = format!("{WORKER_MANIFEST}:{n}: error: ");
        assert!(
            out.stderr
                .lines()
                .any(|l| l.starts_with(&want) && l.contains(finding)),
            "{line}: expected `{want}…{finding}` in\n{}",
            out.stderr
        );
        assert!(!out.stderr.contains("AKIA"), "a secret value was printed");
    }
}

#[test]
fn a_curate_manifest_needs_all_five_fields() {
    let repo = compiled();
    let n = append(
        &repo,
        WORKER_MANIFEST,
        r#"{"file":"docs/guide.md","priority":"low"}"#,
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1);
    for field in ["reason", "sections", "kind"] {
        assert!(
            out.stderr.contains(&format!(
                "{WORKER_MANIFEST}:{n}: error: entry \"docs/guide.md\": missing field \"{field}\""
            )),
            "{field}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_seed_style_manifest_without_a_header_may_omit_kind_and_sections() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        TYPO_MANIFEST,
        "{\"file\":\"docs/guide.md\",\"reason\":\"the guide\",\"priority\":\"high\"}\n",
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
    // No lock beside it: the default caps, with a warning.
    assert!(
        out.stderr.contains(&format!(
            "{TYPO_MANIFEST}:1: warning: no lock beside this manifest: checking against the default caps"
        )),
        "{}",
        out.stderr
    );
}

#[test]
// Regression: check accepts a header-less entry without `reason` or `priority` (required by the seed).
fn a_seed_style_entry_needs_reason_and_priority() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        TYPO_MANIFEST,
        "{\"file\":\"docs/guide.md\",\"priority\":\"high\"}\n",
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "missing reason:\n{}", out.all());
    assert!(out.stderr.contains("reason"), "{}", out.stderr);
    repo.write(
        TYPO_MANIFEST,
        "{\"file\":\"docs/guide.md\",\"reason\":\"the guide\"}\n",
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "missing priority:\n{}", out.all());
    assert!(out.stderr.contains("priority"), "{}", out.stderr);
}

#[test]
fn a_low_entry_beside_more_high_and_medium_entries_than_the_file_cap() {
    let repo = Repo::fixture("over-budget");
    let mut text = String::new();
    for f in ["a", "b", "c", "d", "e"] {
        text.push_str(&format!(
            "{{\"file\":\"changes/big/analysis/{f}.md\",\"reason\":\"r\",\"priority\":\"high\"}}\n"
        ));
    }
    text.push_str(
        "{\"file\":\"changes/big/plan/plan.md\",\"reason\":\"r\",\"priority\":\"high\"}\n",
    );
    text.push_str(
        "{\"file\":\"changes/big/evidence/e1.md\",\"reason\":\"r\",\"priority\":\"low\"}\n",
    );
    repo.write(BIG_MANIFEST, &text);
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{BIG_MANIFEST}:1: error: over budget: 6 high+medium entries exceed the file cap of 5, yet 1 low entry remains (a compile drops them)"
        )),
        "{}",
        out.stderr
    );
    // Without the low entry the same six files are fine.
    let text: String = text.lines().take(6).map(|l| format!("{l}\n")).collect();
    repo.write(BIG_MANIFEST, &text);
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn lines_over_the_hard_cap() {
    let repo = Repo::fixture("over-budget");
    // 3000 + 2500 lines of high entries: no lower entry to drop.
    repo.write(
        BIG_MANIFEST,
        "{\"file\":\"AI_PROJECT.md\",\"reason\":\"r\",\"priority\":\"high\"}\n\
         {\"file\":\"REQUIREMENTS.md\",\"reason\":\"r\",\"priority\":\"high\"}\n",
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{BIG_MANIFEST}:1: error: over budget: 5500 lines exceed the line cap of 4000"
        )),
        "{}",
        out.stderr
    );
    // A medium entry that pushes the total over the cap.
    repo.write(
        BIG_MANIFEST,
        "{\"file\":\"AI_PROJECT.md\",\"reason\":\"r\",\"priority\":\"high\"}\n\
         {\"file\":\"REQUIREMENTS.md\",\"reason\":\"r\",\"priority\":\"medium\"}\n",
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("error: over budget: 5500 lines exceed the line cap of 4000"),
        "{}",
        out.stderr
    );
    // Sections bring it back under the cap.
    repo.write(
        BIG_MANIFEST,
        "{\"file\":\"AI_PROJECT.md\",\"reason\":\"r\",\"sections\":[[1,2000]],\"priority\":\"high\"}\n\
         {\"file\":\"REQUIREMENTS.md\",\"reason\":\"r\",\"sections\":[[1,1000],[2001,2500]],\"priority\":\"medium\"}\n",
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn budgets_are_checked_under_the_caps_recorded_in_the_lock() {
    // Compiled with no file cap: two low entries beside eight high+medium ones.
    let repo = Repo::fixture("aiws-basic");
    compile(&repo, &["--change", "add-auth", "--max-files", "0"]);
    assert_eq!(
        repo.read(WORKER_MANIFEST)
            .lines()
            .filter(|l| l.contains("\"priority\":\"low\""))
            .count(),
        2
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
    // Without the lock the default caps apply, with a warning.
    std::fs::remove_file(repo.root.join(WORKER_LOCK)).unwrap();
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{WORKER_MANIFEST}:1: warning: no lock beside this manifest: checking against the default caps"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("error: over budget: 8 high+medium entries exceed the file cap of 5"),
        "{}",
        out.stderr
    );

    // Compiled with no line cap: 5500+ lines pass while the lock says so.
    let repo = Repo::fixture("over-budget");
    let out = repo
        .curate()
        .args(["--role", "planner", "--change", "big", "--max-lines", "0"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
    std::fs::remove_file(
        repo.root
            .join("changes/big/analysis/planner-context.lock.json"),
    )
    .unwrap();
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains("exceed the line cap of 4000"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_token_cap_recorded_in_the_lock_is_checked() {
    let repo = Repo::fixture("aiws-basic");
    compile(&repo, &["--change", "add-auth", "--max-tokens", "6000"]);
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
    // The files grow past the cap after the compile.
    let mut big = repo.read("AI_WORKSPACE.md");
    big.push_str(&"more words for the token counter to count\n".repeat(200));
    repo.write("AI_WORKSPACE.md", &big);
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains("tokens exceed the token cap of 6000"),
        "{}",
        out.stderr
    );
}

#[test]
// Regression: check counts tokens with --encoding (default o200k_base), not the encoding recorded in the lock.
fn the_token_cap_is_checked_with_the_recorded_encoding() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--encoding",
            "cl100k_base",
            "--format",
            "json",
            "--dry-run",
        ])
        .run();
    let tokens = out.json()["totals"]["tokens"].as_u64().unwrap();
    let o200k = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--format",
            "json",
            "--dry-run",
        ])
        .run()
        .json()["totals"]["tokens"]
        .as_u64()
        .unwrap();
    // The test needs the two encodings to disagree, or checking with the wrong one would pass.
    assert!(o200k > tokens, "o200k_base {o200k} vs cl100k_base {tokens}");
    let tokens = tokens.to_string();
    // A cap the cl100k_base count meets exactly: READY, written.
    compile(
        &repo,
        &[
            "--change",
            "add-auth",
            "--encoding",
            "cl100k_base",
            "--max-tokens",
            &tokens,
        ],
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn a_manifest_with_no_entry() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(TYPO_MANIFEST, "// curation: nothing here\n# nor here\n\n");
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{TYPO_MANIFEST}:1: error: no entry: a manifest needs at least one"
        )),
        "{}",
        out.stderr
    );
    repo.write(TYPO_MANIFEST, "");
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("no entry"), "{}", out.stderr);

    // A compiled manifest whose entries were all removed by hand.
    let repo = compiled();
    let kept: String = repo
        .read(WORKER_MANIFEST)
        .lines()
        .filter(|l| !l.starts_with('{'))
        .map(|l| format!("{l}\n"))
        .collect();
    repo.write(WORKER_MANIFEST, &kept);
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("no entry"), "{}", out.stderr);
}

#[test]
fn a_hand_edited_manifest_is_only_a_warning() {
    let repo = compiled();
    let text = repo.read(WORKER_MANIFEST).replace(
        "change plan: goals, non-goals, scope, steps, verification",
        "the plan; read the risks first",
    );
    repo.write(WORKER_MANIFEST, &text);
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{WORKER_MANIFEST}:1: warning: edited by hand: the manifest does not match the digest curate wrote"
        )),
        "{}",
        out.stderr
    );
    assert!(
        // One cause, one warning: a hand edit is not also reported as a stale lock.
        out.stderr.ends_with("0 errors, 1 warning\n"),
        "{}",
        out.stderr
    );
    let out = check(&repo, &["--format", "github"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.starts_with(&format!(
            "::warning file={WORKER_MANIFEST},line=1::edited by hand"
        )),
        "{}",
        out.stdout
    );
    // A compile would now write it differently.
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("error: stale:"), "{}", out.stderr);
}

#[test]
fn a_manifest_without_a_lock_is_checked_against_the_default_caps() {
    let repo = compiled();
    std::fs::remove_file(repo.root.join(WORKER_LOCK)).unwrap();
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(
        out.stderr,
        format!(
            "{WORKER_MANIFEST}:1: warning: no lock beside this manifest: checking against the default caps\n\
             checked 1 manifest: 0 errors, 1 warning\n"
        )
    );
}

#[test]
fn stale_content_of_a_selected_file() {
    let repo = compiled();
    // A line inserted above the sections the manifest points at.
    let text = format!("# A new first line\n{}", repo.read("AI_PROJECT.md"));
    repo.write("AI_PROJECT.md", &text);
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "without --stale: {}", out.all());
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    let n = repo
        .read(WORKER_MANIFEST)
        .lines()
        .position(|l| l.starts_with("{\"file\":\"AI_PROJECT.md\""))
        .unwrap()
        + 1;
    assert!(
        out.stderr.contains(&format!(
            "{WORKER_MANIFEST}:{n}: error: stale: \"AI_PROJECT.md\" changed since curation; its sections may point at the wrong lines"
        )),
        "{}",
        out.stderr
    );
    // Only that file.
    assert_eq!(
        out.stderr.matches("changed since curation").count(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn stale_when_a_recompile_would_pick_up_a_new_plan_file() {
    let repo = compiled();
    repo.write("changes/add-auth/plan/new.md", "# Step 2\n\nMore work.\n");
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "without --stale: {}", out.all());
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{WORKER_MANIFEST}:1: error: stale: a compile with the recorded inputs would now write this manifest differently (run `curate --role worker --change add-auth`)"
        )),
        "{}",
        out.stderr
    );
    let out = check(&repo, &["--stale", "--format", "json"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.json()["valid"], false);
}

#[test]
fn stale_uses_the_recorded_inputs() {
    // Assigned globs, a task file and --add are recorded in the lock: a re-check sees no change.
    let repo = Repo::fixture("aiws-basic");
    let task = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/tasks/auth-worker.json"
    ))
    .unwrap();
    repo.write("tasks/auth.json", &task);
    compile(
        &repo,
        &[
            "--change",
            "add-auth",
            "--task-file",
            "tasks/auth.json",
            "--reads",
            "src/api/*.ts",
            "--add",
            "docs/guide.md:low:doc:how we work",
            "--max-files",
            "0",
        ],
    );
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 0, "{}", out.all());
    // A new file matched by an owned glob of the task makes it stale.
    repo.write("src/auth/mfa.ts", "export const mfa = true;\n");
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    // The command it gives is the recorded inputs': run as told, the manifest keeps the
    // task's files and the addition, and is current again.
    let hint = out
        .stderr
        .split("(run `")
        .nth(1)
        .and_then(|rest| rest.split("`)").next())
        .unwrap_or_else(|| panic!("no command in {}", out.stderr));
    assert_eq!(
        hint,
        "curate --role worker --change add-auth --reads 'src/api/*.ts' --add 'docs/guide.md:low:doc:how we work' --task-file tasks/auth.json --max-files 0"
    );
    let words = shell_words(hint);
    let out = repo.curate().args(&words[1..]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    let manifest = repo.read(WORKER_MANIFEST);
    for file in ["src/auth/mfa.ts", "docs/guide.md"] {
        assert!(manifest.contains(file), "{file} in\n{manifest}");
    }
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 0, "{}", out.all());
}

/// A command line as a POSIX shell splits it: words apart at spaces, `'…'` taken whole.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let (mut word, mut quoted, mut started) = (String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => (quoted, started) = (!quoted, true),
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// An overrides file outside the repository is recorded by its name alone: `check --stale`
/// cannot read it again, says so as a warning, and never reads a file of that name in the
/// repository instead.
#[test]
fn stale_with_an_overrides_file_outside_the_repository_is_a_warning() {
    let repo = Repo::fixture("aiws-basic");
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("o.jsonl");
    std::fs::write(&file, "{\"drop\": \"changes/<id>/evidence/*.md\"}\n").unwrap();
    compile(
        &repo,
        &[
            "--change",
            "add-auth",
            "--overrides",
            file.to_str().unwrap(),
        ],
    );
    let lock: serde_json::Value = serde_json::from_str(&repo.read(WORKER_LOCK)).unwrap();
    assert_eq!(lock["inputs"]["overrides"]["path"], "o.jsonl");
    assert_eq!(lock["inputs"]["overrides"]["outside"], true);
    for _ in 0..2 {
        let out = check(&repo, &["--stale"]);
        assert_eq!(out.code, 0, "{}", out.all());
        assert!(
            out.stderr.contains(&format!(
                "{WORKER_MANIFEST}:1: warning: stale check skipped: the overrides file \"o.jsonl\" was read from outside the repository"
            )),
            "{}",
            out.stderr
        );
        // A file of that name in the repository changes nothing.
        repo.write("o.jsonl", "{\"drop\": \"AI_PROJECT.md\"}\n");
    }
}

/// A task file from outside the repository is recorded by its name alone, marked outside:
/// `check --stale` says it cannot read it again; a lock naming a path that leaves the
/// repository (a lock is a file anyone may edit) is never followed.
#[test]
fn stale_never_reads_a_task_file_outside_the_repository() {
    let repo = Repo::fixture("aiws-basic");
    let outside = tempfile::tempdir().unwrap();
    let task = outside.path().join("task.json");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tasks/auth-worker.json"),
        &task,
    )
    .unwrap();
    compile(
        &repo,
        &[
            "--change",
            "add-auth",
            "--task-file",
            task.to_str().unwrap(),
        ],
    );
    let lock: serde_json::Value = serde_json::from_str(&repo.read(WORKER_LOCK)).unwrap();
    assert_eq!(lock["inputs"]["task_file"]["path"], "task.json", "{lock}");
    assert_eq!(lock["inputs"]["task_file"]["outside"], true, "{lock}");
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr
            .contains("warning: stale check skipped: the task file \"task.json\" was read from outside the repository"),
        "{}",
        out.stderr
    );
    // A lock edited to name a file out of the repository: refused, not read.
    let mut lock = lock;
    lock["inputs"]["task_file"] =
        serde_json::json!({"path": "../../../../etc/os-release", "sha256": "0"});
    repo.write(WORKER_LOCK, &serde_json::to_string_pretty(&lock).unwrap());
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains("climbs out of the repository"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("invalid task file"), "{}", out.stderr);
}

/// Contracts named with `--contracts` are named again by `check --stale` (and in its hint);
/// from outside the repository they cannot be, and the check says so instead of comparing
/// against other contracts.
#[test]
fn stale_replays_the_contracts_named_on_the_command_line() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        "my/c.json",
        r#"{"roleTypes":[{"id":"worker","contextFiles":[{"glob":"AI_PROJECT.md","priority":"high","kind":"truth"}]}]}"#,
    );
    compile(&repo, &["--change", "add-auth", "--contracts", "my/c.json"]);
    let lock: serde_json::Value = serde_json::from_str(&repo.read(WORKER_LOCK)).unwrap();
    assert_eq!(lock["contracts"]["file"], "my/c.json");
    assert_eq!(lock["contracts"]["source"], "my/c.json (--contracts)");
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 0, "{}", out.all());
    // Changed contracts make it stale, and the hint names them.
    repo.write(
        "my/c.json",
        r#"{"roleTypes":[{"id":"worker","contextFiles":[{"glob":"AI_WORKSPACE.md","priority":"high","kind":"truth"}]}]}"#,
    );
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("(run `curate --role worker --change add-auth --contracts my/c.json`)"),
        "{}",
        out.stderr
    );
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("c.json");
    std::fs::write(&file, repo.read("my/c.json")).unwrap();
    compile(
        &repo,
        &[
            "--change",
            "add-auth",
            "--contracts",
            file.to_str().unwrap(),
        ],
    );
    let lock: serde_json::Value = serde_json::from_str(&repo.read(WORKER_LOCK)).unwrap();
    assert_eq!(lock["contracts"]["source"], "c.json (--contracts)");
    assert_eq!(lock["contracts"]["outside"], true);
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains(
            "warning: stale check skipped: the contracts \"c.json (--contracts)\" were read from outside the repository"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn every_problem_is_reported() {
    let repo = compiled_both();
    let a = append(
        &repo,
        WORKER_MANIFEST,
        &entry("docs/missing.md", "null", "high"),
    );
    let b = append(&repo, WORKER_MANIFEST, &entry(".env", "null", "high"));
    let c = append(
        &repo,
        WORKER_MANIFEST,
        &entry("docs/guide.md", "[[10,5]]", "high"),
    );
    let d = append(
        &repo,
        TYPO_MANIFEST,
        &entry("assets/logo.png", "null", "high"),
    );
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    for (file, n) in [
        (WORKER_MANIFEST, a),
        (WORKER_MANIFEST, b),
        (WORKER_MANIFEST, c),
        (TYPO_MANIFEST, d),
    ] {
        assert!(
            out.stderr.contains(&format!("{file}:{n}: error: ")),
            "{file}:{n} in\n{}",
            out.stderr
        );
    }
    assert!(
        out.stderr
            .ends_with("checked 2 manifests: 4 errors, 2 warnings\n"),
        "{}",
        out.stderr
    );
}

/// Two manifests, one of them with several broken entries.
fn broken() -> Repo {
    let repo = compiled_both();
    append(
        &repo,
        WORKER_MANIFEST,
        &entry("docs/missing.md", "null", "high"),
    );
    append(&repo, WORKER_MANIFEST, &entry(".env", "null", "high"));
    append(
        &repo,
        WORKER_MANIFEST,
        &entry("assets/logo.png", "null", "medium"),
    );
    append(
        &repo,
        WORKER_MANIFEST,
        &entry("docs/guide.md", "[[30,40]]", "high"),
    );
    append(
        &repo,
        WORKER_MANIFEST,
        &entry("../outside.md", "null", "high"),
    );
    append(
        &repo,
        WORKER_MANIFEST,
        r#"{"file":"docs/guide.md","priority":"high"}"#,
    );
    repo
}

#[test]
fn human_report() {
    let repo = broken();
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1);
    insta::assert_snapshot!("human_report", out.all());
}

#[test]
fn json_report() {
    let repo = broken();
    let out = check(&repo, &["--format", "json"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    insta::assert_snapshot!("json_report", out.stdout);
}

#[test]
fn github_annotations() {
    let repo = broken();
    let out = check(&repo, &["--format", "github"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    for line in out.stdout.lines() {
        assert!(
            line.starts_with(&format!("::error file={WORKER_MANIFEST},line="))
                || line.starts_with(&format!("::warning file={WORKER_MANIFEST},line=")),
            "{line}"
        );
    }
    insta::assert_snapshot!("github_report", out.stdout);
}

#[test]
fn check_given_paths() {
    let repo = compiled_both();
    append(
        &repo,
        TYPO_MANIFEST,
        &entry("docs/missing.md", "null", "high"),
    );
    // Only the named manifest.
    let out = check(&repo, &[WORKER_MANIFEST]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.stderr, "checked 1 manifest: 0 errors, 0 warnings\n");
    // Every manifest under the changes root by default.
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("checked 2 manifests"), "{}", out.stderr);
    assert!(out.stderr.contains(TYPO_MANIFEST), "{}", out.stderr);
    let out = check(&repo, &[TYPO_MANIFEST, WORKER_MANIFEST]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("checked 2 manifests"), "{}", out.stderr);
    // A manifest that does not exist.
    let out = check(&repo, &["changes/add-auth/analysis/nobody-context.jsonl"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .starts_with("changes/add-auth/analysis/nobody-context.jsonl:1: error: cannot read"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_path_is_relative_to_the_folder_curate_runs_in() {
    let repo = compiled();
    std::fs::create_dir_all(repo.root.join(".git")).unwrap();
    let out = repo
        .curate()
        .cwd("changes/add-auth")
        .args([
            "check",
            "analysis/worker-context.jsonl",
            "--format",
            "github",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    append(
        &repo,
        WORKER_MANIFEST,
        &entry("docs/missing.md", "null", "high"),
    );
    let out = repo
        .curate()
        .cwd("changes/add-auth")
        .args([
            "check",
            "analysis/worker-context.jsonl",
            "--format",
            "github",
        ])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    // Annotations name the file from the repository root, as GitHub wants.
    assert!(
        out.stdout.contains(&format!(
            "::error file={WORKER_MANIFEST},line=13::\"docs/missing.md\" does not exist"
        )),
        "{}",
        out.stdout
    );
    // And -C works like git -C.
    let other = Repo::empty();
    let out = other
        .curate()
        .args(["-C", repo.root.to_str().unwrap(), "check", WORKER_MANIFEST])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
}

#[test]
fn overrides_files_and_locks_are_not_manifests() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        "changes/add-auth/analysis/worker-context.overrides.jsonl",
        "{\"drop\":\"AI_WORKSPACE.md\",\"why\":\"noise\"}\n",
    );
    compile(&repo, &["--change", "add-auth"]);
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.stderr, "checked 1 manifest: 0 errors, 0 warnings\n");
}

#[test]
fn no_manifest_at_all_is_fine() {
    let repo = Repo::fixture("empty-change");
    let out = check(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.stderr, "checked 0 manifests: 0 errors, 0 warnings\n");
}

#[test]
fn a_broken_contracts_file_is_reported() {
    let repo = Repo::fixture("bad-contracts");
    let out = check(&repo, &[]);
    assert_eq!(out.code, 1, "{}", out.all());
    let first = out.stderr.lines().next().unwrap();
    assert!(
        first.starts_with("contracts/workflow-delegation-contracts.json:")
            && first.contains("error:")
            && first.contains("/roleTypes/0/contextFiles/1/priority")
            && first.contains(":15: error: column 11:"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .ends_with("checked 0 manifests: 1 error, 0 warnings\n"),
        "{}",
        out.stderr
    );
    // Beside the manifests' own problems.
    repo.write(
        "changes/c1/analysis/worker-context.jsonl",
        "{\"file\":\"docs/missing.md\",\"reason\":\"r\",\"priority\":\"high\"}\n",
    );
    let out = check(&repo, &["--format", "json"]);
    assert_eq!(out.code, 1);
    let v = out.json();
    let files: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "contracts/workflow-delegation-contracts.json",
            "changes/c1/analysis/worker-context.jsonl"
        ]
    );
    // A malformed contracts file named with --contracts.
    let repo = compiled();
    let out = check(
        &repo,
        &[
            "--contracts",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/fixtures/contracts/malformed.json"
            ),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("malformed.json"), "{}", out.stderr);
}

#[test]
// Regression: check annotates a contracts-file error at line 1, not at the line of the error (15).
fn a_contracts_error_is_annotated_at_its_line() {
    let repo = Repo::fixture("bad-contracts");
    let out = check(&repo, &["--format", "github"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .starts_with("::error file=contracts/workflow-delegation-contracts.json,line=15::"),
        "{}",
        out.stdout
    );
}

#[test]
// Regression: check -q (\"print only errors\") still prints warnings.
fn quiet_prints_only_errors() {
    let repo = compiled();
    std::fs::remove_file(repo.root.join(WORKER_LOCK)).unwrap();
    let out = repo.curate().args(["-q", "check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.stderr, "", "a warning printed under -q");
}

#[test]
// Regression: check says nothing about a manifest whose `// curate:` header was damaged or removed, which compile refuses as hand-edited.
fn a_damaged_or_removed_header_is_a_hand_edit() {
    let repo = compiled();
    let text = repo.read(WORKER_MANIFEST);
    let (header, body) = text.split_once('\n').unwrap();
    let digest_at = header.find("digest=").unwrap();
    // The compile refuses to overwrite either form (§2.1); check must at least warn.
    for edited in [
        format!("{}digest=by-hand\n{body}", &header[..digest_at]),
        body.to_owned(),
    ] {
        repo.write(WORKER_MANIFEST, &edited);
        let refused = repo
            .curate()
            .args(["--role", "worker", "--change", "add-auth"])
            .run();
        assert_eq!(refused.code, 1, "{}", refused.all());
        assert!(
            refused.stderr.contains("was edited by hand"),
            "{}",
            refused.stderr
        );
        let out = check(&repo, &[]);
        assert_eq!(out.code, 0, "{}", out.all());
        assert!(
            out.stderr.contains("warning: edited by hand"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn the_dot_aiws_layout_is_checked_too() {
    let repo = Repo::fixture("aiws-dotaiws");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.stderr, "checked 1 manifest: 0 errors, 0 warnings\n");
    repo.write(".aiws/changes/add-auth/plan/step-2.md", "# step 2\n");
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.starts_with(
            ".aiws/changes/add-auth/analysis/worker-context.jsonl:1: error: stale: a compile with the recorded inputs would now write this manifest differently"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn stale_when_an_overrides_file_appears() {
    let repo = compiled();
    repo.write(
        "changes/add-auth/analysis/worker-context.overrides.jsonl",
        "{\"drop\":\"AI_WORKSPACE.md\",\"why\":\"noise\"}\n",
    );
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("would now write this manifest differently"),
        "{}",
        out.stderr
    );
}

#[test]
// Regression: check --stale fails with `cannot read …overrides.jsonl` when the default overrides file was removed; a compile would simply write a different manifest.
fn stale_when_the_default_overrides_file_is_removed() {
    let repo = Repo::fixture("aiws-basic");
    let overrides = "changes/add-auth/analysis/worker-context.overrides.jsonl";
    repo.write(
        overrides,
        "{\"drop\":\"AI_WORKSPACE.md\",\"why\":\"noise\"}\n",
    );
    compile(&repo, &["--change", "add-auth"]);
    std::fs::remove_file(repo.root.join(overrides)).unwrap();
    // The compile itself is fine without it.
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth", "--dry-run"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("would now write this manifest differently"),
        "{}",
        out.stderr
    );
}

#[test]
fn stale_says_the_task_text_and_its_budget_were_given() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        "task.txt",
        "Lock accounts after failed logins in src/auth/login.ts\n",
    );
    compile(
        &repo,
        &[
            "--change",
            "add-auth",
            "--task-text",
            "task.txt",
            "--task-tokens",
            "3000",
        ],
    );
    assert_eq!(check(&repo, &["--stale"]).code, 0);
    // A new document that talks about what the text says: a compile would select it now,
    // and the command says the text (kept in the lock) and its budget were given.
    repo.write(
        "docs/lockout.md",
        "# Lockout\n\nAccounts lock after failed logins.\n",
    );
    let out = check(&repo, &["--stale"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(
            "(run `curate --role worker --change add-auth --task-text FILE --task-tokens 3000`)"
        ),
        "{}",
        out.stderr
    );
}
