//! Layer 2: the overrides file, `--add`, `--drop`, curation comments.

use crate::{Repo, WORKER_MANIFEST};

const OVERRIDES: &str = "changes/add-auth/analysis/worker-context.overrides.jsonl";

#[test]
fn every_override_form_and_comment_carry_over() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        OVERRIDES,
        concat!(
            "// a plain comment is not carried\n",
            "// curation: trimmed to the login path; evidence is stale\n",
            "{\"file\":\"changes/add-auth/analysis/impact.md\",\"priority\":\"high\",\"sections\":[[1,20]],\"reason\":\"only the call graph matters\"}\n",
            "{\"file\":\"src/auth/login.ts\",\"priority\":\"high\",\"kind\":\"assigned\"}\n",
            "{\"drop\":\"changes/<id>/evidence/*.md\",\"why\":\"stale baseline\"}\n",
            "{\"drop\":\"changes/add-auth/analysis/login-callers.md\"}\n",
        ),
    );
    let out = repo.compile_worker(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let manifest = repo.read(WORKER_MANIFEST);
    insta::assert_snapshot!("overrides_manifest", crate::versionless(&manifest));
    // Re-running gives the same bytes: comments are regenerated, never piled up.
    let again = repo.compile_worker(&[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(manifest, repo.read(WORKER_MANIFEST));
    assert_eq!(
        manifest
            .matches("// curation: trimmed to the login path")
            .count(),
        1
    );
}

#[test]
fn an_updated_entry_keeps_its_position_and_an_added_one_goes_last_in_its_priority() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        OVERRIDES,
        "{\"file\":\"REQUIREMENTS.md\",\"priority\":\"medium\"}\n{\"file\":\"docs/guide.md\",\"priority\":\"medium\",\"kind\":\"truth\"}\n",
    );
    let out = repo.compile_worker(&["--stdout", "--max-files", "0"]);
    let files: Vec<String> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["file"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        files,
        [
            "AI_PROJECT.md",
            "packages/spec/docs/workflow-delegation-contracts.md",
            "packages/spec/docs/workflow-delegation-context-injection.md",
            "changes/add-auth/plan/session-20261120-auth-refactor.md",
            "REQUIREMENTS.md",
            "AI_WORKSPACE.md",
            "changes/add-auth/analysis/impact.md",
            "changes/add-auth/analysis/login-callers.md",
            "docs/guide.md",
            "changes/add-auth/evidence/pre-refactor-test-run.md",
            "changes/add-auth/evidence/verify-before-complete.md",
        ]
    );
}

#[test]
fn add_and_drop_flags_apply_after_the_file() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo.compile_worker(&[
        "--stdout",
        "--add",
        "docs/guide.md:high:truth:the guide: read it first",
        "--drop",
        "AI_WORKSPACE.md",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains(
        "{\"file\":\"docs/guide.md\",\"reason\":\"the guide: read it first\",\"sections\":null,\"priority\":\"high\",\"kind\":\"truth\"}"
    ), "{}", out.stdout);
    assert!(!out.stdout.contains("{\"file\":\"AI_WORKSPACE.md\""));
    // Regression: the note named a --drop as `--add "--drop …"`.
    assert!(
        out.stdout.contains(
            "// curation: dropped \"AI_WORKSPACE.md\" by \"AI_WORKSPACE.md\" (--drop \"AI_WORKSPACE.md\")"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn an_override_never_brings_a_secret_in() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        OVERRIDES,
        "{\"file\":\".env\",\"priority\":\"high\",\"kind\":\"truth\"}\n",
    );
    let out = repo.compile_worker(&["--add", "config/server.key:high:truth", "--stdout"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("{\"file\":\".env\""));
    assert!(!out.stdout.contains("{\"file\":\"config/server.key\""));
    assert!(
        out.stdout
            .contains("// curation: excluded \".env\": secret: `.env` file")
    );
    assert!(
        out.stdout.contains(
            "// curation: excluded \"config/server.key\": secret: private key file (`*.key`)"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn override_errors_name_file_and_line() {
    let repo = Repo::fixture("aiws-basic");
    let cases = [
        (
            "{\"file\":\"nope.md\",\"priority\":\"high\",\"kind\":\"truth\"}\n",
            "does not exist",
        ),
        (
            "\n{\"file\":\"../x.md\",\"priority\":\"high\",\"kind\":\"truth\"}\n",
            "climbs out of the repository",
        ),
        (
            "{\"file\":\"docs/guide.md\",\"priority\":\"urgent\",\"kind\":\"truth\"}\n",
            ":1: unknown priority \"urgent\"",
        ),
        (
            "{\"file\":\"docs/guide.md\",\"priority\":\"high\",\"kind\":\"truth\",\"sections\":[[9,2]]}\n",
            ":1: section [9, 2] ends before it starts",
        ),
        (
            "{\"file\":\"docs/guide.md\"}\n",
            "\"priority\" and \"kind\" are required",
        ),
        (
            "// ok\n{\"file\": \"docs/guide.md\",,}\n",
            "worker-context.overrides.jsonl:2:",
        ),
    ];
    for (text, expected) in cases {
        repo.write(OVERRIDES, text);
        let out = repo.compile_worker(&[]);
        assert_eq!(out.code, 1, "{text}: {}", out.stderr);
        assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
        assert!(
            out.stderr.contains(expected),
            "{text}: expected {expected:?} in {}",
            out.stderr
        );
        assert!(
            !repo.exists(WORKER_MANIFEST),
            "nothing is written on an error"
        );
    }
}

#[test]
fn an_explicit_overrides_file_must_exist() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo.compile_worker(&["--overrides", "mine.jsonl"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("mine.jsonl"), "{}", out.stderr);
    repo.write(
        "mine.jsonl",
        "{\"drop\":\"AI_*.md\",\"why\":\"not needed\"}\n",
    );
    let out = repo.compile_worker(&["--overrides", "mine.jsonl", "--stdout"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("{\"file\":\"AI_PROJECT.md\""));
    assert!(out.stdout.contains("dropped \"AI_PROJECT.md\", \"AI_WORKSPACE.md\" by \"AI_*.md\" (mine.jsonl:1): not needed"), "{}", out.stdout);
}

#[test]
fn explain_lists_every_candidate_with_source_and_fate() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        OVERRIDES,
        "{\"drop\":\"changes/<id>/analysis/login-callers.md\",\"why\":\"covered by impact.md\"}\n",
    );
    let out = repo.compile_worker(&[
        "--explain",
        "--dry-run",
        "--reads",
        "AI_WORKSPACE.md",
        "--add",
        ".env:high:truth",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!("explain_report", out.stderr);
    let json = repo
        .compile_worker(&["--explain", "--dry-run", "--format", "json"])
        .json();
    let candidates = json["candidates"].as_array().expect("candidates in JSON");
    assert!(
        candidates
            .iter()
            .any(|c| c["fate"] == "named only (an index line) by the soft cap")
    );
    assert!(
        candidates
            .iter()
            .any(|c| c["fate"].as_str().unwrap().starts_with("dropped by ")
                && c["fate"].as_str().unwrap().ends_with("overrides.jsonl:1")
                && c["source"] == "contextFiles[11] \"changes/<id>/analysis/*.md\"")
    );
    assert!(
        candidates
            .iter()
            .all(|c| c["tokens"].is_u64() || c["fate"].as_str().unwrap() != "kept")
    );
}

#[test]
fn an_override_naming_a_link_out_of_the_tree_is_never_read() {
    // Regression: overrides only checked that the named path existed, which follows links.
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        OVERRIDES,
        "{\"file\":\"docs/passwd-link.md\",\"priority\":\"high\",\"kind\":\"truth\"}\n",
    );
    let out = repo.compile_worker(&["--stdout"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("{\"file\":\"docs/passwd-link.md\""));
    assert!(
        out.stdout
            .contains("excluded \"docs/passwd-link.md\": a link out of the repository, never read"),
        "{}",
        out.stdout
    );
}

/// A key written twice on one overrides line is an error at its line and column (JSON would
/// keep the last reason and lose the first without a word).
#[test]
fn a_key_written_twice_on_an_overrides_line_is_an_error() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        OVERRIDES,
        "{\"add\": \"src/auth/login.ts\", \"priority\": \"high\", \"kind\": \"code\", \"reason\": \"a\", \"reason\": \"b\"}\n",
    );
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{OVERRIDES}:1:81: the key \"reason\" is written twice"
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn an_overrides_file_outside_the_repository_is_named_whole_in_errors_and_by_name_in_the_manifest() {
    let repo = Repo::fixture("aiws-basic");
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("ov.jsonl");
    let whole = file.display().to_string();

    std::fs::write(
        &file,
        "{\"file\":\"docs/guide.md\",\"priority\":\"urgent\",\"kind\":\"truth\"}\n",
    )
    .unwrap();
    let out = repo.compile_worker(&["--overrides", &whole]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains(&format!("{whole}:1: unknown priority \"urgent\"")),
        "the error names the file a person can open: {}",
        out.stderr
    );

    // And in the errors its lines raise once applied.
    for (line, expected) in [
        (
            r#"{"file":"nope.md","priority":"high","kind":"truth"}"#,
            format!("error: {whole}:1: \"nope.md\" does not exist"),
        ),
        (
            r#"{"file":"docs/guide.md"}"#,
            format!("error: {whole}:1: \"docs/guide.md\" is not an entry yet"),
        ),
        (
            r#"{"drop":"src/[b-","why":"x"}"#,
            format!("error: invalid glob \"src/[b-\" ({whole}:1)"),
        ),
    ] {
        std::fs::write(&file, format!("{line}\n")).unwrap();
        let out = repo.compile_worker(&["--overrides", &whole]);
        assert_eq!(out.code, 1, "{}", out.all());
        assert!(out.stderr.starts_with(&expected), "{line}: {}", out.stderr);
    }

    std::fs::write(&file, "{\"drop\":\"AI_*.md\",\"why\":\"not needed\"}\n").unwrap();
    let out = repo.compile_worker(&["--overrides", &whole]);
    assert_eq!(out.code, 0, "{}", out.all());
    let manifest = repo.read(WORKER_MANIFEST);
    assert!(manifest.contains("(ov.jsonl:1): not needed"), "{manifest}");
    assert!(
        !manifest.contains(&outside.path().display().to_string()),
        "a committed manifest holds no machine's absolute path: {manifest}"
    );
}
