//! OpenSpec as its own CLI sees it: the change's files in curate's worker manifest are the
//! context files `openspec instructions apply --change <id> --json` lists (the real CLI,
//! `@fission-ai/openspec` 1.13.2), on the default schema, on a project schema
//! (`openspec/schemas/<name>/schema.yaml`, named by the change's `.openspec.yaml`) and on a
//! change that declares `skip_specs`. Skipped, with a line saying so, where the CLI cannot
//! be had.

use std::collections::BTreeSet;

use crate::Repo;

/// A project schema whose artifacts are none of the default's, with a glob among them.
const SCHEMA: &str = "name: research-first
version: 1
description: Research notes, then a brief, then tasks
artifacts:
  - id: research
    generates: research.md
    description: What was found
    template: research.md
    requires: []
  - id: notes
    generates: \"notes/*.md\"
    description: Loose notes
    template: notes.md
    requires: []
  - id: brief
    generates: brief.md
    description: The brief
    template: brief.md
    requires:
      - research
  - id: tasks
    generates: tasks.md
    description: Tasks
    template: tasks.md
    requires:
      - brief
apply:
  requires: [tasks]
  tracks: tasks.md
";

/// The openspec fixture with change `add-search` on the project schema `research-first`
/// (and a `proposal.md` that schema does not generate) and change `fix-typo` declaring
/// `skip_specs`.
fn repo() -> Repo {
    let repo = Repo::fixture("openspec");
    repo.write("openspec/schemas/research-first/schema.yaml", SCHEMA);
    for t in ["research", "notes", "brief", "tasks"] {
        repo.write(
            &format!("openspec/schemas/research-first/templates/{t}.md"),
            &format!("# {t}\n"),
        );
    }
    let c = "openspec/changes/add-search";
    repo.write(
        &format!("{c}/.openspec.yaml"),
        "schema: research-first\ncreated: 2026-12-01\n",
    );
    repo.write(
        &format!("{c}/research.md"),
        "# Research\n\nTrigram index.\n",
    );
    repo.write(&format!("{c}/notes/a.md"), "# Note a\n");
    repo.write(&format!("{c}/notes/b.md"), "# Note b\n");
    repo.write(&format!("{c}/brief.md"), "# Brief\n\nSearch members.\n");
    repo.write(
        &format!("{c}/tasks.md"),
        "## 1. Search\n\n- [ ] 1.1 Add search\n",
    );
    repo.write(
        &format!("{c}/proposal.md"),
        "# Proposal\n\nNot in the schema.\n",
    );
    let f = "openspec/changes/fix-typo";
    repo.write(
        &format!("{f}/.openspec.yaml"),
        "schema: spec-driven\nskip_specs: true\n",
    );
    repo.write(
        &format!("{f}/proposal.md"),
        "## Why\n\nA typo.\n\n## What Changes\n\n- Fix it.\n",
    );
    repo.write(
        &format!("{f}/tasks.md"),
        "## 1. Fix\n\n- [ ] 1.1 Fix the typo\n",
    );
    repo
}

/// The change's files in curate's worker manifest, repository-relative.
fn curates(repo: &Repo, change: &str) -> BTreeSet<String> {
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", change, "--format", "json"])
        .args(["--max-files", "0"])
        .run();
    assert_eq!(out.code, 0, "{change}: {}", out.all());
    let prefix = format!("openspec/changes/{change}/");
    out.json()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap().to_owned())
        .filter(|f| f.starts_with(&prefix))
        .collect()
}

/// What `openspec instructions apply --json` lists, repository-relative.
fn openspecs(cli: &std::path::Path, repo: &Repo, change: &str) -> BTreeSet<String> {
    let out = std::process::Command::new(cli)
        .args(["instructions", "apply", "--change", change, "--json"])
        .current_dir(&repo.root)
        .env("DO_NOT_TRACK", "1")
        .env("CI", "true")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let root = format!("{}/", repo.root.canonicalize().unwrap().display());
    v["contextFiles"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|files| files.as_array().unwrap().clone())
        .map(|f| f.as_str().unwrap().replace(&root, ""))
        .collect()
}

#[test]
fn the_changes_files_are_what_openspec_instructions_lists() {
    let repo = repo();
    let expected: [(&str, &[&str]); 3] = [
        (
            "add-search",
            &[
                "brief.md",
                "notes/a.md",
                "notes/b.md",
                "research.md",
                "tasks.md",
            ],
        ),
        ("fix-typo", &["proposal.md", "tasks.md"]),
        (
            "add-2fa",
            &["design.md", "proposal.md", "specs/auth/spec.md", "tasks.md"],
        ),
    ];
    for (change, files) in expected {
        let want: BTreeSet<String> = files
            .iter()
            .map(|f| format!("openspec/changes/{change}/{f}"))
            .collect();
        assert_eq!(curates(&repo, change), want, "{change}");
    }
    let Some(cli) = crate::workflows::openspec_cli() else {
        eprintln!("skipped: the OpenSpec CLI could not be installed from the npm registry");
        return;
    };
    for (change, _) in expected {
        assert_eq!(
            curates(&repo, change),
            openspecs(&cli, &repo, change),
            "{change}: curate and `openspec instructions apply`"
        );
    }
}

/// The change's file a project schema does not generate is left out with a note that says
/// why; the other roles get the schema's artifacts too.
#[test]
fn a_file_no_artifact_generates_is_left_out_with_a_note() {
    let repo = repo();
    let out = repo
        .curate()
        .args([
            "--role",
            "reviewer",
            "--change",
            "add-search",
            "--format",
            "json",
        ])
        .args(["--max-files", "0", "--dry-run"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let report = out.json();
    let files: Vec<&str> = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap())
        .collect();
    assert!(
        files.contains(&"openspec/changes/add-search/brief.md"),
        "{files:?}"
    );
    assert!(
        !files.contains(&"openspec/changes/add-search/proposal.md"),
        "{files:?}"
    );
    assert!(
        report.to_string().contains(
            "no artifact of schema research-first generates it (openspec instructions does not list it)"
        ),
        "{report}"
    );
}

/// A linked spec store (`references:` in `openspec/config.yaml`) lives outside the
/// repository, in OpenSpec's own store folders: never read, and said so at its line.
#[test]
fn a_referenced_spec_store_is_named_not_read() {
    let repo = repo();
    repo.write(
        "openspec/config.yaml",
        "schema: spec-driven\nreferences:\n  - platform-specs\n  - id: billing-specs\n    remote: https://example.com/billing.git\n",
    );
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-2fa", "--dry-run"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains(
            "warning: openspec/config.yaml:2: references the spec stores platform-specs, billing-specs: OpenSpec reads them from its own store folders, outside the repository, so no file of them is listed"
        ),
        "{}",
        out.all()
    );
}
