//! BMAD (v4: `.bmad-core/core-config.yaml`, stories in `devStoryLocation`) in
//! `fixtures/repos/bmad`, laid out as BMAD's installer and agents lay a project out (PRD and
//! architecture sharded). Tried by hand on public repositories that follow it (never
//! committed here): 212817/first-bmad (`1.1-project-setup.story.md`, eight
//! `devLoadAlwaysFiles` across three architecture folders, Dev Notes naming their sources)
//! and 1Jadaru/AmCalc (`1.2.database-schema-and-connection.story.md`; its config uses keys of
//! its own, so BMAD's defaults apply): `--role dev --change <n.m>` gave the story and the
//! files its config and Dev Notes name, nothing of another story, twice the same bytes.

use crate::Repo;

fn files(repo: &Repo, args: &[&str]) -> (Vec<(String, String)>, serde_json::Value) {
    crate::listed(repo, args, "kind")
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    crate::pairs(list)
}

const ALWAYS: [(&str, &str); 3] = [
    ("docs/architecture/coding-standards.md", "truth"),
    ("docs/architecture/tech-stack.md", "truth"),
    ("docs/architecture/source-tree.md", "truth"),
];

#[test]
fn the_developer_gets_the_story_its_always_files_and_its_dev_notes_sources() {
    let repo = Repo::fixture("bmad");
    let (list, report) = files(&repo, &["--role", "dev", "--change", "1.1"]);
    assert_eq!(report["workflow"]["name"], "bmad");
    assert_eq!(
        report["workflow"]["evidence"],
        ".bmad-core/core-config.yaml"
    );
    assert_eq!(
        report["manifest"],
        "docs/stories/curate/1.1.story/dev-context.jsonl"
    );
    let mut want = vec![("docs/stories/1.1.story.md", "plan")];
    want.extend(ALWAYS);
    want.extend([
        ("docs/architecture/data-models.md", "reference"),
        ("docs/architecture/rest-api-spec.md", "reference"),
    ]);
    assert_eq!(list, pairs(&want));
    // The same story by its file, its path, its name.
    for id in ["1.1.story", "1.1.story.md", "docs/stories/1.1.story.md"] {
        let (again, _) = files(&repo, &["--role", "dev", "--change", id, "--dry-run"]);
        assert_eq!(again, list, "{id}");
    }
    // No PRD for the developer (BMAD's dev loads none unless the story says so).
    assert!(
        !list.iter().any(|(f, _)| f.starts_with("docs/prd")),
        "{list:?}"
    );
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn the_scrum_master_gets_the_stories_epic_and_the_architecture() {
    let repo = Repo::fixture("bmad");
    let (list, _) = files(&repo, &["--role", "sm", "--change", "2.1", "--dry-run"]);
    let mut want = vec![
        ("docs/stories/2.1.story.md", "plan"),
        ("docs/prd/epic-2-orders.md", "plan"),
        ("docs/prd/index.md", "plan"),
    ];
    want.extend(ALWAYS);
    want.push(("docs/architecture/index.md", "truth"));
    assert_eq!(list, pairs(&want));
    // Not sharded: the whole PRD and architecture where the config puts them.
    let config = repo.read(".bmad-core/core-config.yaml");
    repo.write(
        ".bmad-core/core-config.yaml",
        &config
            .replace("prdSharded: true", "prdSharded: false")
            .replace("architectureSharded: true", "architectureSharded: false"),
    );
    let (list, _) = files(&repo, &["--role", "sm", "--change", "2.1", "--dry-run"]);
    let mut want = vec![
        ("docs/stories/2.1.story.md", "plan"),
        ("docs/prd.md", "plan"),
    ];
    want.extend(ALWAYS);
    want.push(("docs/architecture.md", "truth"));
    assert_eq!(list, pairs(&want));
}

#[test]
fn stories_live_where_the_config_says_and_a_number_names_one_story() {
    let repo = Repo::fixture("bmad");
    std::fs::rename(repo.root.join("docs/stories"), repo.root.join("stories")).unwrap();
    let config = repo.read(".bmad-core/core-config.yaml");
    repo.write(
        ".bmad-core/core-config.yaml",
        &config.replace(
            "devStoryLocation: docs/stories",
            "devStoryLocation: stories",
        ),
    );
    let (list, report) = files(&repo, &["--role", "qa", "--change", "1.2"]);
    assert_eq!(list[0].0, "stories/1.2.story.md");
    assert_eq!(
        report["manifest"],
        "stories/curate/1.2.story/qa-context.jsonl"
    );
    assert!(
        !list
            .iter()
            .any(|(f, _)| f.contains("1.1") || f.contains("2.1")),
        "{list:?}"
    );
    // `check` finds the manifest there, and an edit by hand in it.
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(out.all().contains("checked 1 manifest"), "{}", out.all());
    let manifest = "stories/curate/1.2.story/qa-context.jsonl";
    let text = repo.read(manifest);
    repo.write(manifest, &format!("{text}{{\"file\":\"x\"}}\n"));
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    // Two stories numbered 1.2: refused, both named.
    repo.write("stories/1.2-sign-in-again.md", "# Story 1.2 again\n");
    let out = repo
        .curate()
        .args(["--role", "dev", "--change", "1.2"])
        .run();
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("1.2-sign-in-again.md, 1.2.story.md"),
        "{}",
        out.all()
    );
    // A story that is not there: BLOCKED, nothing made.
    let out = repo
        .curate()
        .args(["--role", "dev", "--change", "9.9"])
        .run();
    assert_ne!(out.code, 0, "{}", out.all());
    assert!(!repo.exists("stories/curate/9.9"));
}

#[test]
fn a_dev_load_always_file_that_is_not_there_is_a_warning_at_its_line() {
    let repo = Repo::fixture("bmad");
    let config = repo.read(".bmad-core/core-config.yaml");
    repo.write(
        ".bmad-core/core-config.yaml",
        &config.replace(
            "  - docs/architecture/source-tree.md",
            "  - docs/architecture/source-tree.md\n  - docs/architecture/gone.md\n  - ../../etc/passwd",
        ),
    );
    let (list, report) = files(&repo, &["--role", "dev", "--change", "1.1", "--dry-run"]);
    assert!(
        !list
            .iter()
            .any(|(f, _)| f.contains("gone") || f.contains("passwd")),
        "{list:?}"
    );
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains(
            ".bmad-core/core-config.yaml:20: devLoadAlwaysFiles names docs/architecture/gone.md"
        ),
        "{warnings}"
    );
    assert!(
        warnings
            .contains(".bmad-core/core-config.yaml:21: devLoadAlwaysFiles names ../../etc/passwd"),
        "{warnings}"
    );
}

#[test]
fn the_hook_gives_the_developer_its_story_in_bmads_words() {
    let repo = Repo::fixture("bmad");
    let p = crate::dispatched(&repo, "Develop the story.\nchange: 1.1", "dev");
    assert!(p.contains("=== docs/stories/1.1.story.md ==="), "{p}");
    assert!(
        p.contains("=== docs/architecture/coding-standards.md ==="),
        "{p}"
    );
    assert!(!p.contains("2.1.story"), "{p}");
    assert!(
        p.contains("your story (its tasks, acceptance criteria and Dev Notes)"),
        "{p}"
    );
}
