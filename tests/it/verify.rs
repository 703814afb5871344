//! `curate verify`: touched files against owned and read-only globs, from the command line, a
//! list file, stdin, a task file or `git diff`.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::{Output, Repo};

/// A task file from `fixtures/tasks/`, by absolute path.
fn task(name: &str) -> String {
    format!("{}/fixtures/tasks/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn verify<I, S>(repo: &Repo, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    repo.curate()
        .args(["verify", "--change", "add-auth"])
        .args(args)
        .run()
}

/// The violations of a JSON verdict as `(file, rule)` pairs.
fn violations(out: &Output) -> Vec<(String, String)> {
    let v = out.json();
    v["violations"]
        .as_array()
        .unwrap_or_else(|| panic!("no violations list in {v:#}"))
        .iter()
        .map(|x| {
            (
                x["file"].as_str().unwrap().to_owned(),
                x["rule"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(f, r)| ((*f).to_owned(), (*r).to_owned()))
        .collect()
}

#[test]
fn json_verdict_has_exactly_valid_and_violations() {
    let repo = Repo::empty();
    let out = verify(
        &repo,
        [
            "--owns",
            "src/auth/**",
            "--reads",
            "src/auth/credentials.ts",
            "--format",
            "json",
            "--touched",
            "src/auth/login.ts",
            "src/auth/credentials.ts",
            "docs/guide.md",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        out.json(),
        json!({
            "valid": false,
            "violations": [
                {"file": "docs/guide.md", "rule": "outside_owned", "type": "scope_creep"},
                {"file": "src/auth/credentials.ts", "rule": "read_only", "type": "readonly_touched"},
            ]
        })
    );
    assert!(
        out.stderr.is_empty(),
        "JSON mode keeps stderr quiet: {}",
        out.stderr
    );

    let ok = verify(
        &repo,
        [
            "--owns",
            "src/auth/**",
            "--format",
            "json",
            "--touched",
            "src/auth/login.ts",
        ],
    );
    assert_eq!(ok.code, 0, "{}", ok.all());
    assert_eq!(ok.json(), json!({"valid": true, "violations": []}));
}

#[test]
fn human_report_lists_each_violation() {
    let repo = Repo::empty();
    let out = verify(
        &repo,
        [
            "--owns",
            "src/auth/**",
            "--reads",
            "src/auth/credentials.ts",
            "--touched",
            "src/auth/login.ts",
            "src/auth/credentials.ts",
            "docs/guide.md",
        ],
    );
    assert_eq!(out.code, 1);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    insta::assert_snapshot!("human_violations", out.all());

    let ok = verify(
        &repo,
        [
            "--owns",
            "src/auth/**",
            "--touched",
            "src/auth/login.ts",
            "src/auth/session.ts",
        ],
    );
    assert_eq!(ok.code, 0);
    assert_eq!(
        ok.stderr,
        "2 touched files checked: all inside the write scope\n"
    );
}

#[test]
fn an_empty_touched_list_is_valid() {
    let repo = Repo::empty();
    repo.write("empty.txt", "");
    repo.write("blank.txt", "\n\r\n\n");
    for source in [
        vec!["--touched-from", "empty.txt"],
        vec!["--touched-from", "blank.txt"],
        vec!["--touched-from", "-"],
        // The null device is the empty list (every other device is still refused).
        vec!["--touched-from", "/dev/null"],
    ] {
        let out = repo
            .curate()
            .args(["verify", "--change", "add-auth", "--owns", "src/**"])
            .args(source.iter())
            .args(["--format", "json"])
            .stdin(b"")
            .run();
        assert_eq!(out.code, 0, "{source:?}: {}", out.all());
        assert_eq!(out.json(), json!({"valid": true, "violations": []}));
    }
    let out = repo
        .curate()
        .args(["verify", "--change", "add-auth", "--owns", "src/**"])
        .args(["--touched-from", "/dev/zero"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    // Even with no owned glob at all (a read-only task).
    let out = verify(
        &repo,
        ["--task-file", &task("no-owned.json"), "--touched-from", "-"],
    );
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains("0 touched files checked"),
        "{}",
        out.stderr
    );
}

#[test]
fn double_star_covers_dot_files() {
    let repo = Repo::empty();
    let out = verify(
        &repo,
        [
            "--owns",
            "src/**",
            "--format",
            "json",
            "--touched",
            "src/.env",
            "src/.config/settings.json",
            "src/auth/.secret-notes",
            ".env",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    // Only the file outside src/ breaks the rule.
    assert_eq!(violations(&out), pairs(&[(".env", "outside_owned")]));

    let out = verify(
        &repo,
        ["--owns", "src/**", "--touched", "src/.env", "src/.x/.y"],
    );
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn read_only_wins_over_owned() {
    let repo = Repo::empty();
    let out = verify(
        &repo,
        [
            "--owns",
            "src/**",
            "--owns",
            "src/generated/schema.ts",
            "--reads",
            "src/generated/**",
            "--reads",
            "src/.env",
            "--format",
            "json",
            "--touched",
            "src/generated/schema.ts",
            "src/.env",
            "src/app.ts",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        violations(&out),
        pairs(&[
            ("src/.env", "read_only"),
            ("src/generated/schema.ts", "read_only")
        ])
    );
}

#[test]
fn paths_are_normalised_before_matching() {
    let repo = Repo::empty();
    let out = verify(
        &repo,
        [
            "--owns",
            "src/auth/**",
            "--owns",
            "docs//guide.md",
            "--format",
            "json",
            "--touched",
            "./src/auth/login.ts",
            "src\\auth\\session.ts",
            "src//auth///credentials.ts",
            "./docs/guide.md",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.all());

    // Violations name the normalised path, once for every spelling of it.
    let out = verify(
        &repo,
        [
            "--owns",
            "docs/**",
            "--format",
            "json",
            "--touched",
            "./src/a.ts",
            "src\\a.ts",
            "src//a.ts",
            "src/./b.ts",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        violations(&out),
        pairs(&[("src/a.ts", "outside_owned"), ("src/b.ts", "outside_owned")])
    );
}

#[test]
fn a_touched_path_that_escapes_the_repository_is_an_error() {
    let repo = Repo::empty();
    for bad in ["../outside.txt", "/etc/passwd", "src/../../x"] {
        let out = verify(&repo, ["--owns", "**", "--touched", "src/ok.ts", bad]);
        assert_eq!(out.code, 1, "{bad}: {}", out.all());
        assert!(
            out.stderr.starts_with("error: ") && out.stderr.contains(bad),
            "{bad}: {}",
            out.stderr
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn id_placeholder_becomes_the_change() {
    let repo = Repo::empty();
    let out = verify(
        &repo,
        [
            "--owns",
            "changes/<id>/**",
            "--reads",
            "changes/<id>/plan/*.md",
            "--format",
            "json",
            "--touched",
            "changes/add-auth/evidence/run.md",
            "changes/add-auth/plan/plan.md",
            "changes/fix-typo/evidence/run.md",
            "changes/<id>/evidence/run.md",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        violations(&out),
        pairs(&[
            ("changes/<id>/evidence/run.md", "outside_owned"),
            ("changes/add-auth/plan/plan.md", "read_only"),
            ("changes/fix-typo/evidence/run.md", "outside_owned"),
        ])
    );
}

#[test]
fn touched_from_a_file_newline_separated() {
    let repo = Repo::empty();
    repo.write(
        "lists/touched.txt",
        "src/auth/login.ts\r\ndocs/guide.md\n\n./src/auth/session.ts\n",
    );
    let out = verify(
        &repo,
        [
            "--owns",
            "src/**",
            "--touched-from",
            "lists/touched.txt",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        violations(&out),
        pairs(&[("docs/guide.md", "outside_owned")])
    );

    // Relative to the folder curate runs in.
    let out = repo
        .curate()
        .cwd("lists")
        .args([
            "verify",
            "--change",
            "add-auth",
            "--owns",
            "**",
            "--touched-from",
            "touched.txt",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains("3 touched files checked"),
        "{}",
        out.stderr
    );

    let out = verify(
        &repo,
        ["--owns", "**", "--touched-from", "no-such-list.txt"],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("no-such-list.txt"), "{}", out.stderr);
}

#[test]
fn touched_from_stdin_newline_or_nul_separated() {
    let repo = Repo::empty();
    let run = |input: &[u8]| {
        repo.curate()
            .args([
                "verify",
                "--change",
                "add-auth",
                "--owns",
                "src/**",
                "--touched-from",
                "-",
                "--format",
                "json",
            ])
            .stdin(input)
            .run()
    };
    let out = run(b"src/a.ts\ndocs/b.md\n");
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(violations(&out), pairs(&[("docs/b.md", "outside_owned")]));

    // NUL-separated (as `git diff -z` prints): a newline is part of a name there.
    let out = run(b"src/a.ts\0docs/with\nnewline.md\0src/c.ts\0");
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        violations(&out),
        pairs(&[("docs/with\nnewline.md", "outside_owned")])
    );

    let out = run(b"src/a.ts\0src/.env\0");
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn task_file_gives_the_owned_and_read_only_globs() {
    let repo = Repo::empty();
    let out = verify(
        &repo,
        [
            "--task-file",
            &task("auth-worker.json"),
            "--format",
            "json",
            "--touched",
            "src/auth/login.ts",
            "src/auth/credentials.ts",
            "changes/add-auth/evidence/tests.md",
            "changes/add-auth/plan/session.md",
            "changes/fix-typo/evidence/tests.md",
            "src/api/routes.ts",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        violations(&out),
        pairs(&[
            ("changes/add-auth/plan/session.md", "read_only"),
            ("changes/fix-typo/evidence/tests.md", "outside_owned"),
            ("src/api/routes.ts", "outside_owned"),
            ("src/auth/credentials.ts", "read_only"),
        ])
    );

    let ok = verify(
        &repo,
        [
            "--task-file",
            &task("auth-worker.json"),
            "--touched",
            "src/auth/login.ts",
            "src/auth/.env.test",
            "changes/add-auth/evidence/tests.md",
        ],
    );
    assert_eq!(ok.code, 0, "{}", ok.all());

    // A read-only task: every touched file breaks a rule.
    let out = verify(
        &repo,
        [
            "--task-file",
            &task("no-owned.json"),
            "--format",
            "json",
            "--touched",
            "src/a.ts",
            "README.md",
        ],
    );
    assert_eq!(out.code, 1);
    assert_eq!(
        violations(&out),
        pairs(&[("README.md", "outside_owned"), ("src/a.ts", "read_only")])
    );
}

#[test]
fn task_file_path_is_relative_to_the_working_folder() {
    let repo = Repo::empty();
    let text = std::fs::read_to_string(task("auth-worker.json")).unwrap();
    repo.write("tasks/t.json", &text);
    let out = repo
        .curate()
        .cwd("tasks")
        .args([
            "verify",
            "--change",
            "add-auth",
            "--task-file",
            "t.json",
            "--touched",
            "src/auth/login.ts",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn a_bad_task_file_is_an_error_naming_it() {
    let repo = Repo::empty();
    let out = verify(
        &repo,
        [
            "--task-file",
            &task("unknown-field.json"),
            "--touched",
            "src/a.ts",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
    assert!(out.stderr.contains("unknown-field.json"), "{}", out.stderr);
    assert!(out.stderr.contains("colour"), "{}", out.stderr);
}

#[test]
fn usage_errors_exit_2() {
    let repo = Repo::empty();
    // A task file and --owns are two scopes: pick one.
    let out = verify(
        &repo,
        [
            "--task-file",
            &task("auth-worker.json"),
            "--owns",
            "src/**",
            "--touched",
            "a",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.all());
    // No scope at all.
    let out = verify(&repo, ["--touched", "a"]);
    assert_eq!(out.code, 2, "{}", out.all());
    // Two touched sources.
    let out = verify(
        &repo,
        ["--owns", "**", "--touched", "a", "--touched-from", "-"],
    );
    assert_eq!(out.code, 2, "{}", out.all());
    // An invalid change id is a usage error too.
    let out = repo
        .curate()
        .args([
            "verify",
            "--change",
            "../x",
            "--owns",
            "**",
            "--touched",
            "a",
        ])
        .run();
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(out.stderr.contains("invalid change id"), "{}", out.stderr);
}

#[test]
fn an_invalid_glob_is_an_error_naming_it() {
    let repo = Repo::empty();
    let out = verify(&repo, ["--owns", "src/[a", "--touched", "src/a"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("src/[a"), "{}", out.stderr);
    let out = verify(&repo, ["--owns", "../**", "--touched", "src/a"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.contains("../**"), "{}", out.stderr);
}

#[test]
// Regression: verify without --touched/--touched-from/--git-diff silently passes (exit 0).
fn a_touched_source_is_required() {
    let repo = Repo::empty();
    let out = verify(&repo, ["--owns", "src/**"]);
    assert_eq!(out.code, 2, "{}", out.all());
}

/// Runs git in `dir`, isolated from the user's and system config.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=t",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A git repository with one commit, then one change of every kind.
fn git_repo() -> Repo {
    let repo = Repo::empty();
    let body = "a line of text that git can follow across a rename\n".repeat(20);
    repo.write(".gitignore", "*.log\nbuild/\n")
        .write("src/modified.ts", "one\n")
        .write("src/deleted.ts", "bye\n")
        .write("src/old-name.ts", &body)
        .write("src/unchanged.ts", "same\n")
        .write("docs/guide.md", "# guide\n");
    git(&repo.root, &["init", "-q"]);
    git(&repo.root, &["add", "-A"]);
    git(&repo.root, &["commit", "-q", "-m", "init"]);

    repo.write("src/modified.ts", "two\n")
        .write("src/added.ts", "staged\n")
        .write("src/untracked.ts", "new\n")
        .write("src/.env", "TOKEN=fake\n")
        .write("src/debug.log", "ignored\n")
        .write("build/out.js", "ignored folder\n")
        .write("docs/new-page.md", "untracked outside src\n");
    git(&repo.root, &["add", "src/added.ts"]);
    std::fs::remove_file(repo.root.join("src/deleted.ts")).unwrap();
    git(&repo.root, &["mv", "src/old-name.ts", "src/new-name.ts"]);
    repo
}

#[test]
fn git_diff_takes_every_kind_of_change_but_not_ignored_files() {
    let repo = git_repo();
    // Nothing owned: every touched file is a violation, so the list is the touched list.
    let out = repo
        .curate()
        .args([
            "verify",
            "--change",
            "add-auth",
            "--owns",
            "nothing/**",
            "--git-diff",
            "HEAD",
            "--format",
            "json",
        ])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    let files: Vec<String> = violations(&out).into_iter().map(|(f, _)| f).collect();
    assert_eq!(
        files,
        [
            "docs/new-page.md",
            "src/.env",
            "src/added.ts",
            "src/deleted.ts",
            "src/modified.ts",
            "src/new-name.ts",
            "src/old-name.ts",
            "src/untracked.ts",
        ]
    );
    assert!(!out.stdout.contains("debug.log"), "{}", out.stdout);
    assert!(!out.stdout.contains("build/"), "{}", out.stdout);
    assert!(!out.stdout.contains("unchanged"), "{}", out.stdout);
}

#[test]
fn git_diff_checks_the_changes_against_the_scope() {
    let repo = git_repo();
    let run = |args: &[&str]| {
        repo.curate()
            .args(["verify", "--change", "add-auth", "--git-diff", "HEAD"])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .run()
    };
    let out = run(&["--owns", "src/**", "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        violations(&out),
        pairs(&[("docs/new-page.md", "outside_owned")])
    );

    let out = run(&["--owns", "src/**", "--owns", "docs/**"]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr
            .contains("8 touched files checked: all inside the write scope"),
        "{}",
        out.stderr
    );

    // The old name of a rename counts as touched.
    let out = run(&[
        "--owns",
        "**",
        "--reads",
        "src/old-name.ts",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 1);
    assert_eq!(violations(&out), pairs(&[("src/old-name.ts", "read_only")]));
}

#[test]
fn git_diff_from_a_subfolder_uses_repository_paths() {
    let repo = git_repo();
    let out = repo
        .curate()
        .cwd("src")
        .args([
            "verify",
            "--change",
            "add-auth",
            "--owns",
            "src/**",
            "--git-diff",
            "HEAD",
            "--format",
            "json",
        ])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        violations(&out),
        pairs(&[("docs/new-page.md", "outside_owned")])
    );
}

#[test]
fn git_diff_with_a_clean_tree_is_valid() {
    let repo = Repo::empty();
    repo.write("src/a.ts", "a\n");
    git(&repo.root, &["init", "-q"]);
    git(&repo.root, &["add", "-A"]);
    git(&repo.root, &["commit", "-q", "-m", "init"]);
    let out = repo
        .curate()
        .args([
            "verify",
            "--change",
            "add-auth",
            "--owns",
            "docs/**",
            "--git-diff",
            "HEAD",
            "--format",
            "json",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.json(), json!({"valid": true, "violations": []}));
}

#[test]
fn git_diff_failures_are_errors() {
    let repo = git_repo();
    let out = repo
        .curate()
        .args([
            "verify",
            "--change",
            "add-auth",
            "--owns",
            "**",
            "--git-diff",
            "no-such-rev",
        ])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
    assert!(out.stderr.contains("no-such-rev"), "{}", out.stderr);

    // Outside any git repository.
    let plain = Repo::empty();
    let out = plain
        .curate()
        .args([
            "verify",
            "--change",
            "add-auth",
            "--owns",
            "**",
            "--git-diff",
            "HEAD",
        ])
        .env(
            "GIT_CEILING_DIRECTORIES",
            plain.root.parent().unwrap().to_str().unwrap(),
        )
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains("not a git repository"),
        "{}",
        out.stderr
    );

    // An option-like revision is refused, not passed on to git.
    let out = repo
        .curate()
        .args([
            "verify",
            "--change",
            "add-auth",
            "--owns",
            "**",
            "--git-diff=--output=pwned",
        ])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(!repo.exists("pwned"));
}

/// `--run-criteria` without a task file has no criteria to run: a usage error, not a pass.
#[test]
fn run_criteria_without_a_task_file_is_a_usage_error() {
    let repo = Repo::empty();
    let out = verify(
        &repo,
        ["--owns", "src/**", "--touched", "src/a", "--run-criteria"],
    );
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(out.stderr.contains("give --task-file"), "{}", out.stderr);
}

/// `--stdout` prints a compile's manifest: with `render` or `preview` (which print the
/// prompt) it is a usage error, not silently ignored.
#[test]
fn stdout_with_render_or_preview_is_a_usage_error() {
    let repo = Repo::fixture("aiws-basic");
    for args in [
        &[
            "preview", "--role", "worker", "--change", "add-auth", "--stdout", "--format", "json",
        ][..],
        &[
            "render", "--role", "worker", "--change", "add-auth", "--stdout",
        ],
    ] {
        let out = repo.curate().args(args).run();
        assert_eq!(out.code, 2, "{args:?}: {}", out.all());
        assert!(
            out.stderr.contains("--stdout prints a compile's manifest"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn run_criteria_runs_the_checkable_success_criteria_with_a_timeout() {
    let repo = Repo::empty();
    repo.write(
        "task.json",
        r#"{"task_id": "t1", "files_owned": ["src/**"], "success_criteria": [
            "Tests pass: `test -f src/a.rs && echo tests ok`",
            "Lint passes: echo 'lint: 2 problems' >&2; exit 2",
            "Type check passes: sleep 20",
            "The login works for a user with 2FA"
        ]}"#,
    );
    repo.write("src/a.rs", "fn main() {}\n");
    let task = [
        "--task-file",
        "task.json",
        "--touched",
        "src/a.rs",
        "--format",
        "json",
    ];
    let out = verify(
        &repo,
        task.iter()
            .chain(&["--run-criteria", "--criteria-timeout", "1"]),
    );
    assert_eq!(out.code, 1, "{}", out.all());
    let v = out.json();
    let criteria = v["criteria"].as_array().unwrap();
    assert_eq!(criteria.len(), 3, "{v:#}");
    assert_eq!(criteria[0]["passed"], true);
    assert_eq!(criteria[0]["output_tail"], "tests ok\n");
    assert_eq!(criteria[1]["exit_code"], 2);
    assert_eq!(criteria[1]["output_tail"], "lint: 2 problems\n");
    assert_eq!(criteria[2]["timed_out"], true);
    let types: Vec<&str> = v["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["criterion_failed", "criterion_failed"]);
    // Without the flag nothing runs.
    let out = verify(&repo, task);
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(out.json().get("criteria").is_none());
}

/// A token written into a criterion (its command) is never printed: the criterion's text and
/// command show `<secret: rule>` in its place, in the report and the JSON, passed or failed.
#[test]
fn a_secret_in_a_criterion_is_not_printed() {
    let repo = Repo::empty();
    let token = format!("ghp_{}", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d");
    repo.write(
        "task.json",
        &format!(
            r#"{{"task_id": "t1", "files_owned": ["src/**"], "success_criteria": [
            "Lint passes: echo {token}; exit 3",
            "Tests pass: `true {token}`"
        ]}}"#
        ),
    );
    repo.write("src/a.rs", "fn main() {}\n");
    let args = [
        "--task-file",
        "task.json",
        "--touched",
        "src/a.rs",
        "--run-criteria",
    ];
    let human = verify(&repo, args);
    let json = verify(&repo, args.iter().chain(&["--format", "json"]));
    for out in [&human, &json] {
        assert_eq!(out.code, 1, "{}", out.all());
        assert!(!out.all().contains(&token), "{}", out.all());
    }
    assert!(
        human
            .stderr
            .contains("criterion failed: Lint passes: echo <secret: github-pat>; exit 3"),
        "{}",
        human.all()
    );
    let v = json.json();
    assert_eq!(v["criteria"][1]["command"], "true <secret: github-pat>");
    assert_eq!(v["criteria"][1]["passed"], true);
}
