//! spec-kit (`.specify/`, `specs/<NNN-feature>/`) in `fixtures/repos/spec-kit`, laid out as
//! `specify init` and its commands lay a project out. Tried by hand on public repositories
//! that follow it (never committed here): hightowerr/notes (three `001-*` features, so `001`
//! is refused as ambiguous, as spec-kit's scripts refuse it) and RphSza/personal_finances
//! (date-numbered features, `20260217-import-finishing`): `--role worker --change <feature>`
//! gave the constitution and that feature's documents only, twice the same bytes.

use crate::{Repo, report as json, report_files as files};

const LOGIN: &str = "specs/001-user-login";

#[test]
fn a_spec_kit_feature_gives_the_constitution_and_its_own_documents() {
    let repo = Repo::fixture("spec-kit");
    let specs_before = repo.snapshot_tree();
    let report = json(&repo, &["--role", "worker", "--change", "001-user-login"]);
    assert_eq!(report["workflow"]["name"], "spec-kit");
    assert_eq!(report["workflow"]["chosen_by"], "detected");
    assert_eq!(
        report["workflow"]["evidence"],
        ".specify/memory/constitution.md"
    );
    assert_eq!(
        report["manifest"],
        format!("{LOGIN}/curate/worker-context.jsonl")
    );
    // spec-kit's implement phase: tasks and plan required, then what exists.
    assert_eq!(
        files(&report),
        [
            ".specify/memory/constitution.md".to_owned(),
            format!("{LOGIN}/tasks.md"),
            format!("{LOGIN}/plan.md"),
            format!("{LOGIN}/spec.md"),
            format!("{LOGIN}/data-model.md"),
            format!("{LOGIN}/contracts/login-api.yaml"),
            format!("{LOGIN}/research.md"),
            format!("{LOGIN}/quickstart.md"),
        ]
    );
    assert_eq!(report["entries"][0]["kind"], "truth");
    // The checklists (low) are named only, by the default soft cap of 5 files.
    assert!(
        report["warnings"][0]
            .as_str()
            .unwrap()
            .contains("1 low entry named only"),
        "{report}"
    );
    // Nothing of the other feature, nothing new in specs/ but the manifest's folder.
    let written: Vec<String> = repo
        .snapshot_tree()
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| !specs_before.iter().any(|(q, _)| q == p))
        .filter(|p| !p.starts_with(".curate/"))
        .collect();
    assert_eq!(
        written,
        [
            format!("{LOGIN}/curate/worker-context.jsonl"),
            format!("{LOGIN}/curate/worker-context.lock.json"),
        ]
    );
    let manifest = repo.read(&format!("{LOGIN}/curate/worker-context.jsonl"));
    assert!(!manifest.contains("002-password-reset"), "{manifest}");
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn a_feature_is_named_by_its_folder_its_number_or_its_branch() {
    let repo = Repo::fixture("spec-kit");
    for id in [
        "002-password-reset",
        "002",
        "002-another-branch-name",
        "specs/002-password-reset/",
        "feat/002-password-reset",
    ] {
        let report = json(&repo, &["--role", "worker", "--change", id, "--dry-run"]);
        assert_eq!(
            report["manifest"], "specs/002-password-reset/curate/worker-context.jsonl",
            "{id}"
        );
        assert_eq!(
            files(&report),
            [
                ".specify/memory/constitution.md",
                "specs/002-password-reset/plan.md",
                "specs/002-password-reset/spec.md",
            ],
            "{id}"
        );
    }
    // Two features with one number: refused, both named (spec-kit refuses them too).
    repo.write("specs/002-export/spec.md", "# Export\n");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "002"])
        .run();
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("002-export, 002-password-reset"),
        "{}",
        out.all()
    );
    // A feature that is not there: BLOCKED, and no folder made in specs/ (which would
    // move spec-kit's next feature number).
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "009-nothing"])
        .run();
    assert_ne!(out.code, 0, "{}", out.all());
    assert!(!repo.exists("specs/009-nothing"));
}

#[test]
fn spec_kits_phases_are_roles() {
    let repo = Repo::fixture("spec-kit");
    let report = json(
        &repo,
        &[
            "--role",
            "implement",
            "--change",
            "001-user-login",
            "--dry-run",
        ],
    );
    assert_eq!(
        report["manifest"],
        format!("{LOGIN}/curate/implement-context.jsonl")
    );
    assert_eq!(files(&report)[1], format!("{LOGIN}/tasks.md"));
    // analyze: spec, plan and tasks against the constitution, the checklists before the rest.
    let report = json(
        &repo,
        &[
            "--role",
            "analyze",
            "--change",
            "001-user-login",
            "--dry-run",
        ],
    );
    assert_eq!(
        files(&report)[..5],
        [
            ".specify/memory/constitution.md".to_owned(),
            format!("{LOGIN}/spec.md"),
            format!("{LOGIN}/plan.md"),
            format!("{LOGIN}/tasks.md"),
            format!("{LOGIN}/checklists/requirements.md"),
        ]
    );
    // plan (and /speckit.plan as a host may write it): the planner.
    for role in ["plan", "speckit.plan"] {
        let report = json(
            &repo,
            &["--role", role, "--change", "001-user-login", "--dry-run"],
        );
        assert_eq!(files(&report)[1], format!("{LOGIN}/spec.md"), "{role}");
    }
}

/// A dispatch in Claude Code: role `implement`, `cwd` the repository, the prompt `prompt`.
fn dispatch(repo: &Repo, prompt: &str, env: &[(&str, &str)]) -> String {
    let input = serde_json::json!({
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "cwd": repo.root,
        "tool_input": {"prompt": prompt, "subagent_type": "implement"},
    });
    let mut cmd = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(input.to_string().as_bytes());
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let out = cmd.run();
    assert_eq!(out.code, 0, "{}", out.all());
    let v = out.json();
    v["hookSpecificOutput"]["updatedInput"]["prompt"]
        .as_str()
        .unwrap_or_else(|| panic!("uncurated: {v}"))
        .to_owned()
}

fn git(repo: &Repo, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .arg("-C")
        .arg(&repo.root)
        .args(args)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn the_hook_finds_the_current_feature_as_spec_kit_does() {
    let repo = Repo::fixture("spec-kit");
    git(&repo, &["init", "-q"]);
    git(
        &repo,
        &["symbolic-ref", "HEAD", "refs/heads/002-password-reset"],
    );
    let p = dispatch(&repo, "Do T001.", &[]);
    assert!(
        p.contains("=== specs/002-password-reset/spec.md ==="),
        "{p}"
    );
    assert!(!p.contains("001-user-login"), "{p}");
    // The sticky instruction in spec-kit's words.
    assert!(
        p.contains("the project's constitution and the feature's spec, plan and tasks"),
        "{p}"
    );
    assert!(repo.exists("specs/002-password-reset/curate/implement-context.jsonl"));
    // SPECIFY_FEATURE names it over the branch; a `change:` line over both.
    let p = dispatch(&repo, "Do T005.", &[("SPECIFY_FEATURE", "001-user-login")]);
    assert!(p.contains(&format!("=== {LOGIN}/tasks.md ===")), "{p}");
    let p = dispatch(
        &repo,
        "Do T001.\nchange: 002",
        &[("SPECIFY_FEATURE", "001-user-login")],
    );
    assert!(
        p.contains("=== specs/002-password-reset/plan.md ==="),
        "{p}"
    );
    // .specify/feature.json (what /speckit.specify records) over the branch.
    repo.write(
        ".specify/feature.json",
        "{\"feature_directory\": \"specs/001-user-login\"}\n",
    );
    let p = dispatch(&repo, "Do T005.", &[]);
    assert!(p.contains(&format!("=== {LOGIN}/plan.md ===")), "{p}");
}
