//! The README's sections in an ad-hoc dispatch (a prompt naming no change, in a repository
//! with no workflow): the sections the prompt's words match join as heading anchors, kept
//! in the lock as an `--add` that `check --stale` replays; nothing of a README that is
//! refused. And the `--add` written as an overrides line that carries them.

use crate::Repo;

/// A README with a title, three sections and a sub-section.
const README: &str = "# Demo\n\nA demo service.\n\n## Install\n\nPull the docker image, or build it.\n\n### From source\n\ncargo build --release\n\n## Usage\n\nStart the server with `demo serve`.\n\n## License\n\nMIT, see the LICENSE file.\n";

/// A repository that follows no workflow: instructions, a README, one topic.
fn plain() -> Repo {
    let repo = Repo::empty();
    repo.write("AGENTS.md", "# Agents\n\nRun the tests before you stop.\n")
        .write("README.md", README)
        .write(
            "docs/auth.md",
            "# Authentication\n\nAccounts lock after repeated failed logins.\n",
        );
    repo
}

/// Claude Code's `general-purpose` dispatch of `prompt`, naming no change.
fn dispatch(repo: &Repo, prompt: &str, threads: &str) -> crate::Output {
    let input = serde_json::json!({
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Task",
        "cwd": repo.root,
        "tool_input": {"subagent_type": "general-purpose", "prompt": prompt},
    });
    repo.curate()
        .args(["hook", "claude-code"])
        .env("RAYON_NUM_THREADS", threads)
        .stdin(input.to_string().as_bytes())
        .run()
}

/// The prompt the sub-agent gets (the hook must rewrite it).
fn injected(out: &crate::Output) -> String {
    assert_eq!(out.code, 0, "{}", out.all());
    out.json()["hookSpecificOutput"]["updatedInput"]["prompt"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", out.all()))
        .to_owned()
}

/// The one dispatch folder's manifest path, relative to the root.
fn manifest_path(repo: &Repo) -> String {
    let dir = repo.root.join(".curate/state/dispatches");
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    format!(
        ".curate/state/dispatches/{}/analysis/worker-context.jsonl",
        names[0]
    )
}

/// The manifest's entry for `file`, if any.
fn entry(manifest: &str, file: &str) -> Option<serde_json::Value> {
    manifest
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["file"] == file)
}

#[test]
fn the_readme_sections_the_prompt_matches_join_an_ad_hoc_dispatch_as_anchors() {
    let repo = plain();
    let prompt = "Make the docker install smaller.";
    let out = dispatch(&repo, prompt, "1");
    let p = injected(&out);
    // The section the prompt talks about, with why; the others are not there.
    assert!(
        p.contains(
            "=== README.md === (README section \"## Install\" matches \"install\", \"docker\")"
        ),
        "{p}"
    );
    assert!(p.contains("Pull the docker image") && p.contains("cargo build --release"));
    assert!(!p.contains("demo serve") && !p.contains("MIT, see"), "{p}");
    assert!(p.contains("=== AGENTS.md === (the repository's instructions)"));
    // In the manifest as line pairs, in the lock with its anchor and the `--add` replayed.
    let path = manifest_path(&repo);
    let manifest = repo.read(&path);
    let e = entry(&manifest, "README.md").unwrap();
    assert_eq!(e["sections"], serde_json::json!([[5, 11]]), "{e}");
    assert_eq!(
        (&e["priority"], &e["kind"]),
        (&"low".into(), &"instructions".into())
    );
    let lock: serde_json::Value =
        serde_json::from_str(&repo.read(&path.replace(".jsonl", ".lock.json"))).unwrap();
    let locked = lock["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["file"] == "README.md")
        .unwrap()
        .clone();
    assert_eq!(
        locked["anchors"],
        serde_json::json!([["## Install", [5, 11]]])
    );
    // Within `[hook] ad_hoc_tokens`: the files the prompt talks about get what it leaves.
    assert_eq!(
        lock["inputs"]["task_tokens"].as_u64().unwrap() + locked["tokens"].as_u64().unwrap(),
        8000,
        "{lock}"
    );
    let add = lock["inputs"]["add"].as_array().unwrap();
    assert!(
        add.iter().any(|a| a
            .as_str()
            .unwrap()
            .contains("\"sections\":[\"## Install\"]")),
        "{add:?}"
    );
    // At another thread count, and from a cold cache: the same bytes.
    std::fs::remove_dir_all(repo.cache_dir()).ok();
    assert_eq!(dispatch(&repo, prompt, "2").stdout, out.stdout);
    assert_eq!(repo.read(&path), manifest);
    // `check --stale` replays it: clean now; stale once the section moves.
    let check = repo.curate().args(["check", "--stale", &path]).run();
    assert_eq!(check.code, 0, "{}", check.all());
    repo.write(
        "README.md",
        &README.replace("A demo service.\n", "A demo service.\n\nFast.\n"),
    );
    let check = repo.curate().args(["check", "--stale", &path]).run();
    assert_eq!(check.code, 1, "{}", check.all());
    assert!(
        check.stderr.contains(
            "stale: a compile with the recorded inputs would now write this manifest differently"
        ),
        "{}",
        check.all()
    );
    // The dispatch again follows the section where it moved.
    let p = injected(&dispatch(&repo, prompt, "2"));
    assert!(p.contains("=== README.md === (README section"), "{p}");
    let e = entry(&repo.read(&path), "README.md").unwrap();
    assert_eq!(e["sections"], serde_json::json!([[7, 13]]), "{e}");
}

#[test]
fn a_changed_section_is_stale() {
    let repo = plain();
    let prompt = "Make the docker install smaller.";
    injected(&dispatch(&repo, prompt, "1"));
    let path = manifest_path(&repo);
    repo.write(
        "README.md",
        &README.replace("Pull the docker image", "Pull the slim docker image"),
    );
    let check = repo.curate().args(["check", "--stale", &path]).run();
    assert_eq!(check.code, 1, "{}", check.all());
    assert!(
        check
            .stderr
            .contains("stale: \"README.md\" changed since curation"),
        "{}",
        check.all()
    );
}

#[test]
fn no_readme_or_no_match_no_readme_entry() {
    let repo = plain();
    // Nothing of the README matches: no entry, the dispatch is curated all the same.
    let p = injected(&dispatch(&repo, "Lock accounts after failed logins.", "1"));
    assert!(!p.contains("=== README.md"), "{p}");
    assert!(p.contains("=== docs/auth.md"), "{p}");
    // No README at all.
    let repo = plain();
    std::fs::remove_file(repo.root.join("README.md")).unwrap();
    let p = injected(&dispatch(&repo, "Make the docker install smaller.", "1"));
    assert!(!p.contains("README"), "{p}");
    // A README in lower case is the README.
    let repo = plain();
    std::fs::rename(repo.root.join("README.md"), repo.root.join("readme.md")).unwrap();
    let p = injected(&dispatch(&repo, "Make the docker install smaller.", "1"));
    assert!(
        p.contains("=== readme.md === (README section \"## Install\""),
        "{p}"
    );
}

#[test]
fn a_readme_that_holds_a_secret_or_leads_out_is_refused() {
    let repo = plain();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    repo.write(
        "README.md",
        &README.replace("cargo build --release", &format!("GITHUB_TOKEN={token}")),
    );
    let out = dispatch(&repo, "Make the docker install smaller.", "1");
    let p = injected(&out);
    assert!(!p.contains("=== README.md") && !p.contains(&token), "{p}");
    assert!(!out.all().contains(&token));
    assert!(!repo.read(&manifest_path(&repo)).contains("README"));
    // A README that is a link out of the repository: not read.
    #[cfg(unix)]
    {
        let repo = plain();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("README.md"), README).unwrap();
        std::fs::remove_file(repo.root.join("README.md")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("README.md"),
            repo.root.join("README.md"),
        )
        .unwrap();
        let p = injected(&dispatch(&repo, "Make the docker install smaller.", "1"));
        assert!(
            !p.contains("=== README.md") && !p.contains("Pull the docker"),
            "{p}"
        );
    }
}

#[test]
fn an_add_written_as_an_overrides_line_carries_heading_anchors() {
    let repo = plain();
    let add = r###"{"file":"README.md","sections":["## Usage"],"priority":"high","kind":"truth","reason":"how to run it"}"###;
    let args = ["--role", "worker", "--change", "demo", "--max-files", "0"];
    let out = repo.curate().args(args).args(["--add", add]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    let path = "changes/demo/analysis/worker-context.jsonl";
    let e = entry(&repo.read(path), "README.md").unwrap();
    assert_eq!(e["sections"], serde_json::json!([[13, 15]]), "{e}");
    assert_eq!(e["reason"], "how to run it");
    let check = repo.curate().args(["check", "--stale", path]).run();
    assert_eq!(check.code, 0, "{}", check.all());
    repo.write(
        "README.md",
        &README.replace("## Usage\n", "## Usage\n\nQuick start.\n"),
    );
    let check = repo.curate().args(["check", "--stale", path]).run();
    assert_eq!(check.code, 1, "{}", check.all());
    // A malformed one, or a drop, is a usage error naming it.
    for (bad, says) in [
        (
            r#"{"file":"README.md","sections":[true]}"#,
            "sections[0] is not a section",
        ),
        (r#"{"drop":"README.md"}"#, "write a drop as --drop GLOB"),
        (
            r#"{"file":"README.md","colour":"red"}"#,
            "unknown field `colour`",
        ),
    ] {
        let out = repo.curate().args(args).args(["--add", bad]).run();
        assert_eq!(out.code, 2, "{}", out.all());
        assert!(
            out.stderr
                .contains(&format!("error: invalid --add {bad:?}: {says}")),
            "{}",
            out.all()
        );
    }
}

/// Regression: the README's entry was medium, so with the file cap just met by the
/// instructions and the named file it pushed the high and medium entries past it, and the
/// soft cap cut every file the prompt talks about to an index line. It is low: it never does.
#[test]
fn the_readme_never_pushes_what_the_prompt_names_past_the_file_cap() {
    let repo = plain();
    repo.write(".curate/config.toml", "[budget]\nmax_files = 2\n")
        .write("docs/docker.md", "# Docker\n\nThe docker image is slim.\n");
    // Named: docs/auth.md (medium); talked about: docs/docker.md and the README (low).
    let prompt = "Make the docker install lock accounts: see docs/auth.md.";
    let p = injected(&dispatch(&repo, prompt, "1"));
    for file in ["AGENTS.md", "docs/auth.md", "docs/docker.md", "README.md"] {
        assert!(p.contains(&format!("=== {file} === (")), "{file}: {p}");
    }
}
