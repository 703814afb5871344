//! Kiro specs (`.kiro/specs/<feature>/`, steering `.kiro/steering/*.md`) in
//! `fixtures/repos/kiro`, laid out as Kiro lays a project out. Tried by hand on public
//! repositories that follow it (never committed here): Wcdaren/hacktson-autobots (steering
//! by `fileMatch` with brace globs such as `apps/storefront/**/*.{ts,tsx}`, and steering
//! files with no front matter, which Kiro includes always) and RockyBoyRC/SpaceWeirdos
//! (`manual` steering named as `#ui-design-system-standards`): `--role worker --change
//! <feature>` gave that feature's requirements, design and tasks and the steering files
//! their front matter brings in, twice the same bytes.

use crate::Repo;

const AUTH: &str = ".kiro/specs/user-authentication";

fn entries(repo: &Repo, args: &[&str]) -> (Vec<(String, String)>, serde_json::Value) {
    crate::listed(repo, args, "priority")
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    crate::pairs(list)
}

#[test]
fn a_kiro_spec_gives_its_documents_and_the_always_steering() {
    let repo = Repo::fixture("kiro");
    let (files, report) = entries(
        &repo,
        &["--role", "worker", "--change", "user-authentication"],
    );
    assert_eq!(report["workflow"]["name"], "kiro");
    assert_eq!(report["workflow"]["evidence"], ".kiro/specs/");
    assert_eq!(
        report["manifest"],
        format!("{AUTH}/curate/worker-context.jsonl")
    );
    assert_eq!(
        files,
        pairs(&[
            (&format!("{AUTH}/requirements.md"), "high"),
            (&format!("{AUTH}/design.md"), "high"),
            (&format!("{AUTH}/tasks.md"), "high"),
            // inclusion: always, and tech.md with no front matter (Kiro's default).
            (".kiro/steering/product.md", "high"),
            (".kiro/steering/structure.md", "high"),
            (".kiro/steering/tech.md", "high"),
        ])
    );
    assert_eq!(report["entries"][3]["kind"], "truth");
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn file_match_steering_follows_the_selection() {
    let repo = Repo::fixture("kiro");
    let base = [
        "--role",
        "worker",
        "--change",
        "user-authentication",
        "--dry-run",
    ];
    let steering = |extra: &[&str]| -> Vec<String> {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let (_, report) = entries(&repo, &args);
        report["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["file"].as_str().unwrap().starts_with(".kiro/steering/"))
            .filter(|e| e["priority"] == "medium")
            .map(|e| {
                format!(
                    "{} ({})",
                    e["file"].as_str().unwrap(),
                    e["reason"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(steering(&[]), Vec::<String>::new());
    assert_eq!(
        steering(&["--owns", "src/api/**"]),
        [
            ".kiro/steering/api-standards.md (steering (fileMatch \"src/api/**/*.ts\"): the selection holds src/api/auth.ts)"
        ]
    );
    assert_eq!(
        steering(&["--owns", "src/components/**"]),
        [
            ".kiro/steering/react-components.md (steering (fileMatch \"src/components/**/*.{ts,tsx}\"): the selection holds src/components/LoginForm.tsx)"
        ]
    );
}

#[test]
fn manual_steering_only_when_the_task_names_it() {
    let repo = Repo::fixture("kiro");
    let deployment = |files: &[(String, String)]| {
        files
            .iter()
            .any(|(f, _)| f == ".kiro/steering/deployment.md")
    };
    // order-history's tasks.md says "follow #deployment"; user-authentication names it not.
    let (files, _) = entries(
        &repo,
        &["--role", "worker", "--change", "order-history", "--dry-run"],
    );
    assert!(deployment(&files), "{files:?}");
    assert!(
        !files.iter().any(|(f, _)| f.contains("user-authentication")),
        "{files:?}"
    );
    let (files, _) = entries(
        &repo,
        &[
            "--role",
            "worker",
            "--change",
            "user-authentication",
            "--dry-run",
        ],
    );
    assert!(!deployment(&files), "{files:?}");
    repo.write("task.txt", "Ship the login route; see #deployment.\n");
    let (files, _) = entries(
        &repo,
        &[
            "--role",
            "worker",
            "--change",
            "user-authentication",
            "--dry-run",
            "--task-text",
            "task.txt",
            "--no-task",
        ],
    );
    assert!(deployment(&files), "{files:?}");
}

#[test]
fn a_steering_inclusion_kiro_does_not_know_is_a_warning_at_its_line() {
    let repo = Repo::fixture("kiro");
    repo.write(
        ".kiro/steering/odd.md",
        "---\ntitle: Odd\ninclusion: sometimes\n---\n# Odd\n",
    );
    let (files, report) = entries(
        &repo,
        &[
            "--role",
            "worker",
            "--change",
            "user-authentication",
            "--dry-run",
        ],
    );
    assert!(
        !files.iter().any(|(f, _)| f.ends_with("odd.md")),
        "{files:?}"
    );
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains(".kiro/steering/odd.md:3: inclusion \\\"sometimes\\\" is none of always, fileMatch, manual, auto"),
        "{warnings}"
    );
}

#[test]
fn the_hook_gives_a_kiro_spec_in_kiros_words() {
    let repo = Repo::fixture("kiro");
    let p = crate::dispatched(&repo, "Do task 1.\nchange: user-authentication", "worker");
    assert!(p.contains(&format!("=== {AUTH}/tasks.md ===")), "{p}");
    assert!(p.contains("=== .kiro/steering/product.md ==="), "{p}");
    assert!(!p.contains("order-history"), "{p}");
    assert!(
        p.contains("the project's steering files and the spec's requirements, design and tasks"),
        "{p}"
    );
}
