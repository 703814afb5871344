//! The core compile: manifests, reports, statuses, determinism.

use crate::{Repo, WORKER_LOCK, WORKER_MANIFEST};

#[test]
fn worker_manifest_on_the_aiws_fixture() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!(
        "worker_manifest",
        crate::versionless(&repo.read(WORKER_MANIFEST))
    );
    insta::assert_snapshot!("worker_report", out.stderr);
    assert!(repo.exists(WORKER_LOCK));
}

#[test]
fn compile_subcommand_is_the_same_as_the_default_command() {
    let repo = Repo::fixture("aiws-basic");
    let a = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth", "--stdout"])
        .run();
    let b = repo
        .curate()
        .args([
            "compile", "--role", "worker", "--change", "add-auth", "--stdout",
        ])
        .run();
    assert_eq!(a.code, 0);
    assert_eq!(a.stdout, b.stdout);
    assert!(!repo.exists(WORKER_MANIFEST), "--stdout writes nothing");
}

#[test]
fn output_is_byte_identical_at_any_thread_count_and_on_rerun() {
    let repo = Repo::fixture("aiws-basic");
    let args = [
        "--role", "worker", "--change", "add-auth", "--owns", "src/**",
    ];
    let one = repo.curate().args(args).args(["-j", "1"]).run();
    assert_eq!(one.code, 0, "{}", one.stderr);
    let first = repo.read(WORKER_MANIFEST);
    let first_lock = repo.read(WORKER_LOCK);
    let two = repo.curate().args(args).args(["-j", "2"]).run();
    assert_eq!(two.code, 0, "{}", two.stderr);
    assert_eq!(first, repo.read(WORKER_MANIFEST));
    assert_eq!(first_lock, repo.read(WORKER_LOCK));
    let eight = repo.curate().args(args).args(["-j", "8"]).run();
    assert_eq!(eight.code, 0);
    assert_eq!(first, repo.read(WORKER_MANIFEST));
}

#[cfg(unix)]
#[test]
fn a_walk_through_many_folders_reports_the_same_at_any_thread_count() {
    // Folders side by side and nested, each with a file, a dangling link and a link out:
    // the walk lists subfolders in parallel, and its picks and exclusions keep one order.
    let repo = Repo::fixture("aiws-basic");
    for a in 0..6 {
        for b in 0..5 {
            let dir = format!("wide/d{a}/e{b}");
            repo.write(&format!("{dir}/f.md"), &format!("{a} {b}\n"));
            std::os::unix::fs::symlink("missing", repo.root.join(&dir).join("gone.md")).unwrap();
            std::os::unix::fs::symlink("/etc/hostname", repo.root.join(&dir).join("out.md"))
                .unwrap();
        }
    }
    let args = [
        "--role",
        "worker",
        "--change",
        "add-auth",
        "--owns",
        "wide/**",
        "--max-files",
        "0",
        "--format",
        "json",
        "--explain",
        "--dry-run",
    ];
    let one = repo.curate().args(args).args(["-j", "1"]).run();
    assert_eq!(one.code, 0, "{}", one.stderr);
    let report: serde_json::Value = serde_json::from_str(&one.stdout).unwrap();
    let excluded = report["excluded"].as_array().unwrap();
    let why = |text: &str| {
        excluded
            .iter()
            .filter(|e| e["reason"].as_str() == Some(text))
            .count()
    };
    assert_eq!(why("a dangling link, never read"), 30, "{}", one.stdout);
    assert_eq!(why("a link out of the repository, never read"), 30);
    for j in ["2", "4", "8"] {
        let other = repo.curate().args(args).args(["-j", j]).run();
        assert_eq!(other.stdout, one.stdout, "-j {j}");
    }
}

#[test]
fn a_walk_through_folders_nested_thousands_deep_does_not_exhaust_a_stack() {
    // A comb: each folder holds an empty one and the next, 1,900 deep (the path stays under
    // PATH_MAX). The walk keeps deep folders on the heap, not on a thread's stack.
    let repo = Repo::fixture("aiws-basic");
    let mut dir = repo.root.join("n");
    for _ in 0..1_900 {
        std::fs::create_dir_all(dir.join("b")).unwrap();
        dir.push("a");
    }
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("leaf.md"), "the leaf\n").unwrap();
    for glob in ["n/**", "**/leaf.md"] {
        let out = repo.compile_worker(&["--owns", glob, "--max-files", "0", "--stdout"]);
        assert_eq!(out.code, 0, "{glob}: {}", out.stderr);
        assert!(out.stdout.contains("/a/leaf.md\""), "{glob}");
    }
}

#[cfg(unix)]
#[test]
fn a_compile_again_with_the_same_inputs_rewrites_nothing() {
    use std::os::unix::fs::MetadataExt as _;
    let repo = Repo::fixture("aiws-basic");
    let inode = |rel: &str| std::fs::metadata(repo.root.join(rel)).unwrap().ino();
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let (manifest, lock) = (inode(WORKER_MANIFEST), inode(WORKER_LOCK));
    let before = repo.snapshot_tree();
    assert_eq!(repo.compile_worker(&[]).code, 0);
    // An atomic write renames a new file over the old one: the same inode is the same file.
    assert_eq!(inode(WORKER_MANIFEST), manifest);
    assert_eq!(inode(WORKER_LOCK), lock);
    assert_eq!(repo.snapshot_tree(), before);
    // Another input writes both again.
    assert_eq!(repo.compile_worker(&["--owns", "src/auth/**"]).code, 0);
    assert_ne!(inode(WORKER_MANIFEST), manifest);
    assert_ne!(inode(WORKER_LOCK), lock);
}

/// A token as a folder's or a file's name, or as the name of a link out, never reaches a
/// manifest, its lock, the report, the JSON result or a rendered prompt: the files are left out
/// with one note that counts them and names the rule, never the path.
#[test]
fn a_path_holding_a_secret_is_never_shown() {
    let token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    let repo = Repo::fixture("aiws-basic");
    repo.write(&format!("src/{token}/notes.md"), "plain notes\n");
    repo.write(&format!("src/keys-{token}.md"), "plain\n");
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/hostname", repo.root.join(format!("src/l-{token}.md")))
        .unwrap();
    let owns = ["--owns", "src/**", "--max-files", "0", "--max-lines", "0"];
    let compiled = repo.compile_worker(&owns);
    assert_eq!(compiled.code, 0, "{}", compiled.stderr);
    let left_out = if cfg!(unix) { 3 } else { 2 };
    assert!(
        compiled.stderr.contains(&format!(
            "left out {left_out} files whose path holds a secret (github-pat); the path is never shown"
        )),
        "{}",
        compiled.stderr
    );
    let manifest = repo.read("changes/add-auth/analysis/worker-context.jsonl");
    assert!(manifest.contains("// curation: left out"), "{manifest}");
    assert!(manifest.contains("\"src/auth/login.ts\""), "{manifest}");
    let lock = repo.read("changes/add-auth/analysis/worker-context.lock.json");
    let json = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth", "--dry-run"])
        .args(["--format", "json", "--explain"])
        .args(owns)
        .run();
    let bundle = repo
        .curate()
        .args(["render", "--role", "worker", "--change", "add-auth"])
        .args(["--template", "bundle"])
        .args(owns)
        .run();
    assert_eq!(bundle.code, 0, "{}", bundle.stderr);
    assert!(bundle.stdout.contains("src/auth/login.ts"));
    // A hand edit that lists such a file: `check` names its line, the render leaves it out.
    let path = "changes/add-auth/analysis/worker-context.jsonl";
    repo.write(
        path,
        &format!(
            "{manifest}{{\"file\":\"src/{token}/notes.md\",\"reason\":\"r\",\"sections\":null,\"priority\":\"high\",\"kind\":\"assigned\"}}\n\
             {{\"file\":\"../{token}/notes.md\",\"reason\":\"r\",\"sections\":null,\"priority\":\"high\",\"kind\":\"assigned\"}}\n"
        ),
    );
    let last = repo.read(path).lines().count();
    let checked = repo.curate().args(["check", path]).run();
    assert_eq!(checked.code, 1, "{}", checked.all());
    for line in [last - 1, last] {
        assert!(
            checked.stderr.contains(&format!(
                "{path}:{line}: error: the entry's path holds a secret (github-pat); remove the line"
            )),
            "{}",
            checked.all()
        );
    }
    let from_manifest = repo
        .curate()
        .args(["render", "--manifest", path, "--role", "worker"])
        .args(["--change", "add-auth", "--template", "bundle"])
        .run();
    assert_eq!(from_manifest.code, 0, "{}", from_manifest.stderr);
    assert!(
        from_manifest
            .stderr
            .contains("left out 2 files whose path holds a secret"),
        "{}",
        from_manifest.stderr
    );
    for (what, text) in [
        ("the compile's output", compiled.all()),
        ("the manifest", manifest),
        ("the lock", lock),
        ("the JSON result", json.all()),
        ("the bundle", bundle.all()),
        ("check's findings", checked.all()),
        ("the render of the edited manifest", from_manifest.all()),
    ] {
        assert!(!text.contains("ghp_"), "the token is in {what}:\n{text}");
    }
}

#[test]
fn secrets_binaries_and_links_never_enter() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--max-files",
            "0",
            "--owns",
            "**",
            "--max-lines",
            "0",
            "--stdout",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let manifest = out.stdout;
    let entries: Vec<&str> = manifest.lines().filter(|l| l.starts_with('{')).collect();
    for secret in [
        ".env\"",
        ".env.example",
        "config/server.key",
        "legacy_client.ts",
        "logo.png",
        "passwd-link.md",
        "docs/external",
    ] {
        assert!(
            !entries.iter().any(|e| e.contains(secret)),
            "{secret} entered the manifest:\n{manifest}"
        );
    }
    // Each is excluded with a note naming the rule, never the value.
    assert!(manifest.contains("// curation: excluded \".env\": secret: `.env` file"));
    assert!(manifest.contains("excluded \"src/auth/legacy_client.ts\": secret by content: aws-access-key-id on line 12"), "{manifest}");
    assert!(manifest.contains("excluded \"assets/logo.png\": binary"));
    assert!(manifest.contains("excluded \"docs/passwd-link.md\": a link out of the repository"));
    assert!(manifest.contains("excluded \"docs/external\": a link out of the repository"));
    assert!(!manifest.contains("AKIA"), "a secret value was printed");
    assert!(!out.stderr.contains("AKIA"), "a secret value was printed");
    // Not secrets by name: a tokenizer and a credentials *loader*.
    assert!(entries.iter().any(|e| e.contains("\"src/tokenizer.rs\"")));
    assert!(
        entries
            .iter()
            .any(|e| e.contains("\"src/auth/credentials.ts\""))
    );
    // Ignored files are not glob matches; an in-tree link is followed.
    assert!(!manifest.contains("build/out.js"));
    assert!(!manifest.contains("debug.log"));
    assert!(entries.iter().any(|e| e.contains("\"docs/alias.md\"")));
    // A non-UTF-8 file is counted on its bytes.
    assert!(
        entries
            .iter()
            .any(|e| e.contains("\"docs/latin1-notes.txt\""))
    );
}

#[test]
fn no_ignore_takes_ignored_glob_matches() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--stdout",
            "--no-ignore",
        ])
        .args(["--max-files", "0"])
        .run();
    assert!(out.stdout.contains("scratch-notes.md"), "{}", out.stdout);
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--stdout",
            "--max-files",
            "0",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("// curate: "), "{}", out.stdout);
    assert!(!out.stdout.contains("scratch-notes.md"), "{}", out.stdout);
}

#[test]
fn an_ignored_file_named_literally_is_taken_with_a_note() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--stdout",
            "--owns",
            "debug.log",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("{\"file\":\"debug.log\""),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\"debug.log\" is ignored by the ignore rules but named literally")
    );
}

#[test]
fn a_folder_that_is_ignored_is_not_walked_even_as_a_glob_prefix() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--stdout",
            "--owns",
            "build/*.js",
        ])
        .run();
    assert!(!out.stdout.contains("out.js\","), "{}", out.stdout);
    assert!(out.stdout.contains("glob \"build/*.js\" matched nothing"));
}

#[test]
fn ignore_files_apply_at_every_depth_of_a_walk_and_from_above_its_start() {
    let repo = Repo::fixture("aiws-basic");
    repo.write("deep/.gitignore", "*.tmp\n")
        .write("deep/a/.ignore", "skip-*.md\n!skip-keep.md\n")
        .write("deep/a/b/.gitignore", "/only-here.md\n")
        .write(
            "deep/a/b/c/only-here.md",
            "kept: the rule is anchored one folder up\n",
        )
        .write("deep/a/b/only-here.md", "ignored\n")
        .write("deep/a/b/c/x.tmp", "ignored from two folders up\n")
        .write("deep/a/skip-this.md", "ignored\n")
        .write("deep/a/skip-keep.md", "kept by the negation\n")
        .write("deep/a/b/c/note.md", "kept\n");
    // From the root (`**`) and from below the folders that hold the rules (`deep/a/b/**`).
    for (glob, expect) in [
        (
            "deep/**",
            &[
                "deep/.gitignore",
                "deep/a/.ignore",
                "deep/a/b/.gitignore",
                "deep/a/b/c/note.md",
                "deep/a/b/c/only-here.md",
                "deep/a/skip-keep.md",
            ][..],
        ),
        (
            "deep/a/b/**",
            &[
                "deep/a/b/.gitignore",
                "deep/a/b/c/note.md",
                "deep/a/b/c/only-here.md",
            ][..],
        ),
    ] {
        let out = repo.compile_worker(&["--owns", glob, "--max-files", "0", "--stdout"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let taken: Vec<&str> = out
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix("{\"file\":\""))
            .filter_map(|l| l.split('"').next())
            .filter(|f| f.starts_with("deep/"))
            .collect();
        assert_eq!(taken, expect, "{glob}: {}", out.stdout);
    }
}

#[cfg(unix)]
#[test]
fn an_ignore_file_that_is_a_link_is_not_read_as_git_does_not() {
    let repo = Repo::fixture("aiws-basic");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("rules"), "*.md\n").unwrap();
    repo.write("linked/kept.md", "kept\n");
    std::os::unix::fs::symlink(
        outside.path().join("rules"),
        repo.root.join("linked/.gitignore"),
    )
    .unwrap();
    let out = repo.compile_worker(&["--owns", "linked/**", "--stdout"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("{\"file\":\"linked/kept.md\""),
        "{}",
        out.stdout
    );
}

#[test]
fn json_report_has_the_spec_fields() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
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
        .run();
    assert_eq!(out.code, 0);
    let v = out.json();
    for key in [
        "status",
        "manifest",
        "contracts_source",
        "entries",
        "dropped",
        "indexed",
        "excluded",
        "totals",
        "budget",
        "warnings",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v:#}");
    }
    assert_eq!(v["status"], "READY");
    assert_eq!(v["contracts_source"], "embedded default");
    assert_eq!(v["totals"]["files"], 8);
    // The soft cap names the two lows in the prompt instead of dropping them.
    assert_eq!(v["dropped"].as_array().unwrap().len(), 0);
    assert_eq!(v["indexed"].as_array().unwrap().len(), 2);
    assert_eq!(v["indexed"][0]["rule"], "soft_cap");
    assert!(!repo.exists(WORKER_MANIFEST), "--dry-run writes nothing");
    assert!(
        out.stderr.is_empty(),
        "JSON mode keeps stderr quiet: {}",
        out.stderr
    );
}

#[test]
fn blocked_when_nothing_matches() {
    let repo = Repo::fixture("empty-change");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "nothing"])
        .run();
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("BLOCKED"));
    assert!(!repo.exists("changes/nothing/analysis/worker-context.jsonl"));
    insta::assert_snapshot!("blocked_report", out.stderr);
}

/// In a repository the contracts' globs do not fit (no aiws files), the BLOCKED report says
/// how to name the files instead.
#[test]
fn blocked_in_a_repository_the_contracts_do_not_fit_says_how_to_name_the_files() {
    let repo = Repo::empty();
    repo.write("main.go", "package main\n\nfunc main() {}\n");
    repo.write("changes/fix/notes.txt", "what to fix\n");
    let out = repo
        .curate()
        .args(["--role", "reviewer", "--change", "fix"])
        .run();
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "hint: no glob of the reviewer role in the contracts (embedded default) names a \
             file here: name the files (--owns, --reads, --add, a task file's files_owned), \
             or write contracts of your own (`curate init` writes the default, to edit)"
        ),
        "{}",
        out.stderr
    );
    let out = repo
        .curate()
        .args([
            "--role", "reviewer", "--change", "fix", "--reads", "main.go",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("hint:"), "{}", out.stderr);
}

#[test]
fn over_budget_lists_the_largest_entries_and_writes_nothing() {
    let repo = Repo::fixture("over-budget");
    let out = repo
        .curate()
        .args(["--role", "planner", "--change", "big"])
        .run();
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(out.stderr.contains("OVER_BUDGET"));
    assert!(out.stderr.contains("largest high entries:\n     3000 lines  \"AI_PROJECT.md\"\n     2500 lines  \"REQUIREMENTS.md\"\nhint:"));
    assert!(out.stderr.contains("hint: add `sections`"));
    assert!(!repo.exists("changes/big/analysis/planner-context.jsonl"));
    insta::assert_snapshot!("over_budget_report", out.stderr);
}

#[test]
fn over_budget_keeps_an_existing_manifest_as_it_is() {
    let repo = Repo::fixture("over-budget");
    let ok = repo
        .curate()
        .args(["--role", "planner", "--change", "big", "--max-lines", "0"])
        .run();
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let before = repo.read("changes/big/analysis/planner-context.jsonl");
    let out = repo
        .curate()
        .args(["--role", "planner", "--change", "big"])
        .run();
    assert_eq!(out.code, 4);
    assert_eq!(
        before,
        repo.read("changes/big/analysis/planner-context.jsonl")
    );
    assert!(out.stderr.contains("left as they are"), "{}", out.stderr);
}

/// The over-budget fixture without its high entries: five 30-line analyses (medium) and two
/// 20-line evidence notes (low), 190 lines, under a 100-line cap.
const BIG_WORKER: &str = "changes/big/analysis/worker-context.jsonl";

const ONLY_LOWER: [&str; 6] = [
    "--drop",
    "AI_PROJECT.md",
    "--drop",
    "REQUIREMENTS.md",
    "--drop",
    "changes/big/plan/**",
];

#[test]
fn an_over_budget_change_becomes_ready_by_degrading_and_stays_over_budget_without() {
    let repo = Repo::fixture("over-budget");
    let run = |extra: &[&str]| {
        repo.curate()
            .args(["--role", "worker", "--change", "big", "--max-lines", "100"])
            .args(ONLY_LOWER)
            .args(extra)
            .run()
    };
    // The first round's rules: the cap drops every medium and low entry; nothing is left.
    let out = run(&["--no-degrade", "--format", "json"]);
    assert_eq!(out.code, 4, "{}", out.stdout);
    let v = out.json();
    assert_eq!(v["status"], "OVER_BUDGET");
    assert_eq!(v["dropped"].as_array().unwrap().len(), 10, "{v:#}");
    assert!(!repo.exists(BIG_WORKER));

    // The ladder: the lows to their outline, then the mediums, largest first; then the
    // entries that fit whole again rise, in priority order.
    let out = run(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let manifest = repo.read(BIG_WORKER);
    assert!(
        manifest.contains(
            "// curation: hard cap: 190 lines exceed --max-lines 100; 4 entries cut to their outline"
        ),
        "{manifest}"
    );
    assert!(
        manifest.contains("// curation: cut \"changes/big/analysis/a.md\" (medium, 30 lines) to its outline (1 line) by the hard cap"),
        "{manifest}"
    );
    let entries: Vec<serde_json::Value> = manifest
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_file = |f: &str| {
        entries
            .iter()
            .find(|e| e["file"] == f)
            .unwrap_or_else(|| panic!("{f} in {manifest}"))
    };
    // An outline is sections of the original file: the heading on line 1.
    let a = by_file("changes/big/analysis/a.md");
    assert_eq!(a["sections"], serde_json::json!([[1, 1]]));
    assert!(
        a["reason"]
            .as_str()
            .unwrap()
            .ends_with("[outline only: 1 of 30 lines, by the hard cap]"),
        "{a}"
    );
    assert!(
        by_file("changes/big/analysis/e.md")["sections"].is_null(),
        "whole again"
    );
    let lines: u64 = entries
        .iter()
        .map(|e| match e["sections"].as_array() {
            Some(r) => r
                .iter()
                .map(|p| p[1].as_u64().unwrap() - p[0].as_u64().unwrap() + 1)
                .sum(),
            None => 30,
        })
        .sum();
    assert!(lines <= 100, "{lines}");
    // The lock records each cut.
    let lock: serde_json::Value =
        serde_json::from_str(&repo.read("changes/big/analysis/worker-context.lock.json")).unwrap();
    let cut = lock["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == "changes/big/analysis/a.md")
        .unwrap();
    assert_eq!(
        cut["degraded"],
        serde_json::json!({"to": "outline", "from_lines": 30, "rule": "hard_cap"})
    );
    // The same inputs, the same bytes, at any thread count.
    let again = repo
        .curate()
        .args([
            "-j",
            "1",
            "--role",
            "worker",
            "--change",
            "big",
            "--max-lines",
            "100",
            "--stdout",
        ])
        .args(ONLY_LOWER)
        .run();
    assert_eq!(again.stdout, manifest);
}

#[test]
fn the_bundle_ends_with_what_the_ladder_cut() {
    let repo = Repo::fixture("over-budget");
    let out = repo
        .curate()
        .args([
            "render",
            "--template",
            "bundle",
            "--role",
            "worker",
            "--change",
            "big",
            "--max-lines",
            "200",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let tail = &out.stdout[out.stdout.find("Not given").expect("a Not given list")..];
    assert!(
        tail.contains("- changes/big/evidence/e1.md: named only, not read: cut by the soft cap (low, 20 lines)"),
        "{tail}"
    );
    assert!(
        tail.contains(
            "- changes/big/analysis/a.md: outline only: 1 of its 30 lines, cut by the hard cap"
        ),
        "{tail}"
    );
}

#[test]
fn without_degrading_the_hard_cap_drops_medium_and_low_first() {
    let repo = Repo::fixture("over-budget");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "big",
            "--max-lines",
            "200",
            "--no-degrade",
            "--format",
            "json",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stdout);
    let v = out.json();
    for e in v["entries"].as_array().unwrap() {
        assert_eq!(e["priority"], "high", "{e}");
    }
    assert!(
        v["dropped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["rule"] == "hard_cap")
    );
    assert!(v["totals"]["lines"].as_u64().unwrap() <= 200);
}

#[test]
fn caps_of_zero_mean_no_cap() {
    let repo = Repo::fixture("over-budget");
    let out = repo
        .curate()
        .args([
            "--role",
            "integrator",
            "--change",
            "big",
            "--max-lines",
            "0",
            "--max-files",
            "0",
            "--format",
            "json",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0);
    assert!(out.json()["totals"]["lines"].as_u64().unwrap() > 4000);
}

#[test]
fn a_token_cap_applies_like_the_line_cap() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--max-tokens",
            "4000",
            "--no-degrade",
            "--format",
            "json",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0);
    let v = out.json();
    assert!(v["totals"]["tokens"].as_u64().unwrap() <= 4000);
    assert!(
        v["dropped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["rule"] == "token_cap")
    );
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--max-tokens",
            "10",
        ])
        .run();
    assert_eq!(out.code, 4);
}

#[test]
fn dot_aiws_layout_is_found_and_changes_globs_move_under_it() {
    let repo = Repo::fixture("aiws-dotaiws");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let manifest = repo.read(".aiws/changes/add-auth/analysis/worker-context.jsonl");
    assert!(
        manifest.contains("{\"file\":\".aiws/changes/add-auth/plan/plan.md\""),
        "{manifest}"
    );
    assert!(manifest.contains("\".aiws/changes/add-auth/analysis/impact.md\""));
}

#[test]
fn changes_dir_flag_moves_the_changes_root() {
    let repo = Repo::fixture("aiws-dotaiws");
    repo.write("work/cs/add-auth/plan/p.md", "# plan\n");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--changes-dir",
            "work/cs",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        repo.read("work/cs/add-auth/analysis/worker-context.jsonl")
            .contains("\"work/cs/add-auth/plan/p.md\"")
    );
}

#[test]
fn a_repository_contracts_file_is_used_and_named() {
    let repo = Repo::fixture("custom-contracts");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "c1",
            "--format",
            "json",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stdout);
    let v = out.json();
    assert_eq!(
        v["contracts_source"],
        "contracts/workflow-delegation-contracts.json"
    );
    let files: Vec<&str> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap())
        .collect();
    // `**` matches hidden files; matches are sorted within a glob.
    assert_eq!(
        files,
        [
            "docs/.hidden.md",
            "docs/a.md",
            "docs/sub/b.md",
            "changes/c1/notes.md"
        ]
    );
}

#[test]
fn a_role_without_context_files_has_an_empty_baseline() {
    let repo = Repo::fixture("custom-contracts");
    let out = repo
        .curate()
        .args(["--role", "scribe", "--change", "c1"])
        .run();
    assert_eq!(out.code, 3, "{}", out.stderr);
    let out = repo
        .curate()
        .args([
            "--role",
            "scribe",
            "--change",
            "c1",
            "--owns",
            "docs/a.md",
            "--stdout",
        ])
        .run();
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("\"kind\":\"assigned\""));
}

#[test]
fn contracts_flag_and_env_take_precedence() {
    let repo = Repo::fixture("custom-contracts");
    let ok = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/contracts/ok-minimal.json"
    );
    repo.write("README.md", "# readme\n");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "c1",
            "--format",
            "json",
            "--dry-run",
        ])
        .env("CURATE_CONTRACTS", ok)
        .run();
    assert_eq!(out.json()["entries"][0]["file"], "README.md");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "c1",
            "--format",
            "json",
            "--dry-run",
            "--contracts",
            "contracts/workflow-delegation-contracts.json",
        ])
        .env("CURATE_CONTRACTS", ok)
        .run();
    assert_eq!(out.json()["entries"][0]["file"], "docs/.hidden.md");
}

#[test]
fn assigned_entries_merge_with_the_baseline_at_the_winning_position() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--stdout",
            "--max-files",
            "0",
        ])
        .args([
            "--owns",
            "src/auth/login.ts",
            "--reads",
            "AI_WORKSPACE.md",
            "--reads",
            "src/api/*.ts",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with('{')).collect();
    // AI_WORKSPACE.md is reached twice (medium both times): one entry, the contract's kind.
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("\"AI_WORKSPACE.md\""))
            .count(),
        1
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("\"AI_WORKSPACE.md\"") && l.contains("\"kind\":\"truth\""))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("{\"file\":\"src/auth/login.ts\"")
                && l.contains("\"priority\":\"high\",\"kind\":\"assigned\""))
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("{\"file\":\"src/api/routes.ts\"")
                && l.contains("\"priority\":\"medium\",\"kind\":\"assigned\""))
    );
}

#[test]
fn files_from_reads_newline_and_nul_lists() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--stdout",
            "--files-from",
            "-",
        ])
        .stdin(b"src/auth/session.ts\0src/tokenizer.rs\0")
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("{\"file\":\"src/auth/session.ts\""));
    assert!(out.stdout.contains("{\"file\":\"src/tokenizer.rs\""));
}

#[test]
fn sections_past_the_end_are_clamped_or_removed_with_notes() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        "contracts/workflow-delegation-contracts.json",
        r#"{"roleTypes":[{"id":"worker","contextFiles":[
            {"glob":"AI_WORKSPACE.md","sections":[[30,60],[500,600]],"priority":"high","kind":"truth"},
            {"glob":"docs/guide.md","sections":[[900,950]],"priority":"high","kind":"truth"}]}]}"#,
    );
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth", "--stdout"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("\"sections\":[[30,37]]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\"AI_WORKSPACE.md\": section [30, 60] clamped to the file's 37 lines")
    );
    assert!(
        out.stdout
            .contains("\"AI_WORKSPACE.md\": section [500, 600] removed")
    );
    // An entry left with no range is dropped, never widened to the whole file.
    assert!(!out.stdout.contains("{\"file\":\"docs/guide.md\""));
    assert!(
        out.stdout
            .contains("excluded \"docs/guide.md\": every section lies past the end")
    );
}

#[test]
fn running_in_a_subfolder_finds_the_git_top_level() {
    let repo = Repo::fixture("aiws-basic");
    std::fs::create_dir_all(repo.root.join(".git")).unwrap();
    let out = repo
        .curate()
        .cwd("src/auth")
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--dry-run",
            "--format",
            "json",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["entries"][0]["file"], "AI_PROJECT.md");
}

#[test]
fn dash_c_runs_as_if_started_there() {
    let repo = Repo::fixture("aiws-basic");
    let other = Repo::empty();
    let out = other
        .curate()
        .args([
            "-C",
            repo.root.to_str().unwrap(),
            "--role",
            "worker",
            "--change",
            "add-auth",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(repo.exists(WORKER_MANIFEST));
}

#[test]
fn the_manifest_is_never_selected_as_its_own_input() {
    let repo = Repo::fixture("aiws-basic");
    repo.write("changes/add-auth/analysis/notes.jsonl", "{}\n");
    repo.curate()
        .args(["--role", "worker", "--change", "add-auth"])
        .run();
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--stdout",
            "--owns",
            "changes/<id>/analysis/*",
        ])
        .run();
    assert!(
        !out.stdout
            .contains("{\"file\":\"changes/add-auth/analysis/worker-context"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("{\"file\":\"changes/add-auth/analysis/notes.jsonl\"")
    );
}

/// `--related` on the aiws fixture, owning the login module.
pub(crate) fn related(repo: &Repo, extra: &[&str]) -> crate::Output {
    repo.curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--owns",
            "src/auth/login.ts",
        ])
        .args(extra)
        .run()
}

/// Go's predeclared types are no reference: a file that defines a method named `string`
/// is not related to one that only uses the type (nor a TypeScript file's `string()`).
#[test]
fn go_predeclared_types_relate_no_file() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        "g/a.go",
        "package g\n\nfunc Owned(x string) (int, error) {\n\treturn len(x), nil\n}\n",
    );
    repo.write(
        "g/b.go",
        "package g\n\ntype T int\n\nfunc (t T) string() string {\n\treturn \"\"\n}\n\nfunc (t T) error() error {\n\treturn nil\n}\n",
    );
    repo.write(
        "web/s.ts",
        "export class S {\n  string(): string {\n    return \"\";\n  }\n}\n",
    );
    repo.write("g/c.go", "package g\n\nfunc Use() {\n\tOwned(\"x\")\n}\n");
    let out = repo
        .curate()
        .args([
            "--role", "worker", "--change", "add-auth", "--owns", "g/a.go",
        ])
        .args([
            "--related",
            "3000",
            "--max-files",
            "0",
            "--stdout",
            "--no-cache",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let related: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains(r#""kind":"related""#))
        .collect();
    assert!(
        related
            .iter()
            .all(|l| !l.contains("g/b.go") && !l.contains("web/s.ts")),
        "{related:#?}"
    );
    // What calls the owned file still is.
    assert!(related.iter().any(|l| l.contains("g/c.go")), "{related:#?}");
}

#[test]
fn related_files_come_from_the_owned_ones_as_low_outlines_within_the_budget() {
    let repo = Repo::fixture("aiws-basic");
    let out = related(
        &repo,
        &["--related", "3000", "--max-files", "0", "--stdout"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let entries: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &serde_json::Value| e["kind"] == "related")
        .collect();
    let files: Vec<&str> = entries
        .iter()
        .map(|e| e["file"].as_str().unwrap())
        .collect();
    // What login.ts calls (session, credentials) and what calls it (its test, the routes).
    let mut sorted = files.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "src/api/routes.ts",
            "src/auth/credentials.ts",
            "src/auth/session.ts",
            "tests/auth/login.test.ts"
        ],
        "{}",
        out.stdout
    );
    for e in &entries {
        assert_eq!(e["priority"], "low");
        assert!(e["sections"].is_array(), "an outline: {e}");
        assert!(
            e["reason"]
                .as_str()
                .unwrap()
                .starts_with("related to the owned files: "),
            "{e}"
        );
    }
    let session = entries
        .iter()
        .find(|e| e["file"] == "src/auth/session.ts")
        .unwrap();
    assert!(
        session["reason"]
            .as_str()
            .unwrap()
            .contains("`SessionStore`"),
        "{session}"
    );
    // The same bytes at any thread count.
    let again = repo
        .curate()
        .args([
            "-j",
            "1",
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--owns",
            "src/auth/login.ts",
        ])
        .args(["--related", "3000", "--max-files", "0", "--stdout"])
        .run();
    assert_eq!(again.stdout, out.stdout);

    // A smaller budget takes fewer outlines, within it.
    let out = related(
        &repo,
        &[
            "--related",
            "200",
            "--max-files",
            "0",
            "--format",
            "json",
            "--dry-run",
        ],
    );
    let v = out.json();
    let tokens: u64 = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "related")
        .map(|e| e["tokens"].as_u64().unwrap())
        .sum();
    let n = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "related")
        .count();
    assert!((1..4).contains(&n), "{v:#}");
    assert!(tokens <= 200, "{tokens}");
}

#[test]
fn a_related_file_is_read_through_admission_so_a_secret_never_is() {
    let repo = Repo::fixture("aiws-basic");
    // legacy_client.ts holds an AWS key; make login.ts call what it defines.
    let login = repo.read("src/auth/login.ts");
    repo.write(
        "src/auth/login.ts",
        &login.replacen(
            "import argon2",
            "import { fetchArchived } from \"./legacy_client\";\nexport const archived = fetchArchived;\nimport argon2",
            1,
        ),
    );
    let out = related(
        &repo,
        &["--related", "3000", "--max-files", "0", "--stdout"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("legacy_client"), "{}", out.stdout);
    assert!(out.stdout.contains("src/auth/session.ts"), "{}", out.stdout);
}

#[test]
fn related_says_when_there_is_nothing_to_rank_from_or_the_soft_cap_hides_it() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--related",
            "3000",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0);
    assert!(
        out.stderr
            .contains("warning: --related: no owned file to rank from"),
        "{}",
        out.stderr
    );
    let out = related(&repo, &["--related", "3000", "--dry-run"]);
    assert!(
        out.stderr
            .contains("warning: --related: the soft cap names every related file only"),
        "{}",
        out.stderr
    );
}

/// An absolute path into the repository (an editor's, a shell completion's) is the path
/// below the root for `--owns`, `--add` and the overrides file; one outside it is refused as
/// before.
#[test]
fn an_absolute_path_inside_the_repository_is_its_repository_path() {
    let repo = Repo::fixture("aiws-basic");
    let root = repo.root.canonicalize().unwrap();
    let manifest = |owns: &str| {
        let out = repo.compile_worker(&["--owns", owns, "--stdout"]);
        assert_eq!(out.code, 0, "{owns}: {}", out.stderr);
        out.stdout
    };
    assert_eq!(
        manifest(&format!("{}/src/auth/*.ts", root.display())),
        manifest("src/auth/*.ts")
    );
    let overrides = "changes/add-auth/analysis/worker-context.overrides.jsonl";
    repo.write(
        overrides,
        &format!(
            "{{\"file\": \"{}/src/auth/login.ts\", \"reason\": \"the login\", \"priority\": \"high\", \"kind\": \"code\"}}\n",
            root.display()
        ),
    );
    let with_absolute = manifest("src/auth/session.ts");
    repo.write(
        overrides,
        "{\"file\": \"src/auth/login.ts\", \"reason\": \"the login\", \"priority\": \"high\", \"kind\": \"code\"}\n",
    );
    assert_eq!(with_absolute, manifest("src/auth/session.ts"));
    assert!(with_absolute.contains("\"the login\""), "{with_absolute}");
    let out = repo.compile_worker(&["--owns", "/etc/hostname", "--stdout"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("\"/etc/hostname\" is an absolute path outside the repository"),
        "{}",
        out.stderr
    );
}

/// Over the token cap, the advice lists the high entries in tokens: they are what to cut.
#[test]
fn over_the_token_cap_the_advice_lists_the_high_entries_in_tokens() {
    let repo = Repo::fixture("over-budget");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "big",
            "--max-tokens",
            "1500",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "OVER_BUDGET: the high entries alone hold 1910 tokens, over the cap of 1500\nlargest high entries:\n     1003 tokens  \"REQUIREMENTS.md\"\n      537 tokens  \"changes/big/plan/plan.md\"\n      370 tokens  \"AI_PROJECT.md\"\nhint:"
        ),
        "{}",
        out.stderr
    );
}

/// The report's columns line up as a terminal shows them, whatever the paths' letters
/// (`é` is one column and two bytes, `测` two columns and three bytes).
#[test]
fn the_report_columns_line_up_with_non_ascii_paths() {
    use unicode_width::UnicodeWidthStr;
    let repo = Repo::fixture("aiws-basic");
    repo.write("docs/é.md", "# é\n");
    repo.write("docs/测试.md", "# 测试\n");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth", "--dry-run"])
        .args([
            "--add",
            "docs/é.md:high:code",
            "--add",
            "docs/测试.md:high:code",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let table: Vec<&str> = out
        .stderr
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(table.iter().any(|l| l.contains("测试")), "{}", out.stderr);
    let pri_column: Vec<usize> = table
        .iter()
        .map(|l| {
            let at = [" PRI ", " high ", " medium ", " low "]
                .iter()
                .filter_map(|w| l.find(w))
                .min()
                .unwrap();
            l[..at].width()
        })
        .collect();
    assert!(
        pri_column.windows(2).all(|w| w[0] == w[1]),
        "{pri_column:?}\n{}",
        out.stderr
    );
}

/// An entry the budgets cut is not counted, so its tokens are not shown even when the token
/// cache holds them from an earlier run that kept it: the report is the same whatever the
/// cache holds. With `--max-tokens` every entry is counted, and shown.
#[test]
fn a_cut_entrys_tokens_do_not_depend_on_the_token_cache() {
    let repo = Repo::fixture("aiws-basic");
    let report = |extra: &[&str]| {
        let out = repo.compile_worker(&[&["--dry-run", "--format", "json"], extra].concat());
        assert_eq!(out.code, 0, "{}", out.all());
        out.stdout
    };
    let cold = report(&[]);
    let indexed: serde_json::Value = serde_json::from_str(&cold).unwrap();
    assert_eq!(
        indexed["indexed"][0]["tokens"],
        serde_json::Value::Null,
        "{cold}"
    );
    // A run that keeps (and so counts and caches) the low entries.
    report(&["--max-files", "50"]);
    assert_eq!(report(&[]), cold);
    let human = repo.compile_worker(&["--dry-run"]);
    assert!(
        human.stderr.contains(
            "pre-refactor-test-run.md           low     evidence       24        -  named only"
        ),
        "{}",
        human.stderr
    );
    let counted: serde_json::Value =
        serde_json::from_str(&report(&["--max-tokens", "100000"])).unwrap();
    assert_eq!(counted["indexed"][0]["tokens"], 170);
}
