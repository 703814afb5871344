//! Bad input: one clear message, the right exit code, nothing written.

use crate::Repo;

#[test]
fn invalid_ids_and_roles_are_usage_errors() {
    let repo = Repo::fixture("aiws-basic");
    for (role, change) in [
        ("worker", "../etc"),
        ("worker", "a/b"),
        ("-x", "ok"),
        ("wörker", "ok"),
        ("worker", ""),
    ] {
        let out = repo
            .curate()
            .args([format!("--role={role}"), format!("--change={change}")])
            .run();
        assert_eq!(out.code, 2, "{role} {change}: {}", out.stderr);
        assert!(out.stderr.starts_with("error: invalid"), "{}", out.stderr);
    }
    assert!(!repo.exists("changes/add-auth/analysis/worker-context.jsonl"));
}

#[test]
fn unknown_role_lists_the_roles() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args(["--role", "painter", "--change", "add-auth"])
        .run();
    assert_eq!(out.code, 1);
    insta::assert_snapshot!("unknown_role", out.stderr);
}

#[test]
fn schema_errors_name_file_pointer_and_position() {
    let repo = Repo::fixture("bad-contracts");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "x"])
        .run();
    assert_eq!(out.code, 1);
    insta::assert_snapshot!("schema_error", out.stderr);
}

#[test]
fn contract_fixture_errors() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/contracts");
    let repo = Repo::fixture("empty-change");
    let mut all = String::new();
    for name in [
        "malformed",
        "bad-sections",
        "zero-section",
        "extra-key",
        "no-roletypes",
    ] {
        let out = repo
            .curate()
            .args([
                "--role",
                "worker",
                "--change",
                "x",
                "--contracts",
                &format!("{dir}/{name}.json"),
            ])
            .run();
        assert_eq!(out.code, 1, "{name}: {}", out.stderr);
        all.push_str(&format!(
            "## {name}\n{}",
            out.stderr.replace(dir, "[FIXTURES]")
        ));
    }
    insta::assert_snapshot!("contract_fixture_errors", all);
}

#[test]
fn escaping_globs_are_errors() {
    let repo = Repo::fixture("aiws-basic");
    for owns in ["../outside.md", "/etc/passwd", "C:\\x", "src/../../x"] {
        let out = repo
            .curate()
            .args(["--role", "worker", "--change", "add-auth", "--owns", owns])
            .run();
        assert_eq!(out.code, 1, "{owns}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("hint: paths are relative to the repository root"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn stdout_with_json_is_a_usage_error() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role", "worker", "--change", "add-auth", "--stdout", "--format", "json",
        ])
        .run();
    assert_eq!(out.code, 2);
}

#[test]
fn a_missing_task_file_and_an_unknown_task_field() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--task-file",
            "nope.json",
        ])
        .run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("error: cannot read [ROOT]/nope.json\ncaused by: "),
        "{}",
        out.stderr
    );
    repo.write(
        "task.json",
        "{\n  \"task_id\": \"t\",\n  \"success_criteria\": [\"x\"],\n  \"colour\": 1\n}\n",
    );
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--task-file",
            "task.json",
        ])
        .run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.starts_with("error: task.json:4:"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("unknown field `colour`"));
}

#[test]
fn a_missing_dash_c_folder() {
    let repo = Repo::empty();
    let out = repo
        .curate()
        .args(["-C", "no/such/dir", "--role", "worker", "--change", "x"])
        .run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.starts_with("error: cannot read no/such/dir"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_missing_role_flag_is_a_usage_error() {
    let repo = Repo::empty();
    let out = repo.curate().args(["--change", "x"]).run();
    assert_eq!(out.code, 2);
}

#[test]
fn an_escaping_contract_glob_is_located_in_the_contracts_file() {
    let repo = Repo::fixture("empty-change");
    repo.write(
        "contracts/workflow-delegation-contracts.json",
        "{\"roleTypes\": [\n  {\"id\": \"worker\", \"contextFiles\": [\n    {\"glob\": \"README.md\", \"priority\": \"high\", \"kind\": \"truth\"},\n    {\"glob\": \"../secrets/*.md\", \"priority\": \"high\", \"kind\": \"truth\"}\n  ]}\n]}\n",
    );
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "x"])
        .run();
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "error: contracts/workflow-delegation-contracts.json:4:6: /roleTypes/0/contextFiles/1/glob: glob \"../secrets/*.md\" climbs out of the repository with `..`\n"
    );
}

/// JSON keeps the last of two equal keys without a word: in a hand-written contracts file
/// that loses the first silently, so a key written twice, and a role defined twice, are
/// errors at their place; nothing is written.
#[test]
fn a_key_or_a_role_written_twice_in_the_contracts_is_an_error_at_its_place() {
    let repo = Repo::fixture("empty-change");
    let path = "contracts/workflow-delegation-contracts.json";
    let row = r#"{"glob": "README.md", "priority": "high", "kind": "truth"}"#;
    repo.write(
        path,
        &format!("{{\"roleTypes\": [\n  {{\"id\": \"worker\", \"contextFiles\": [{row}],\n   \"contextFiles\": []}}\n]}}\n"),
    );
    let run = || {
        repo.curate()
            .args(["--role", "worker", "--change", "x"])
            .run()
    };
    let out = run();
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        format!(
            "error: {path}:3:4: the key \"contextFiles\" is written twice in one object; JSON keeps only the last, so the first would be lost without a word: remove one\n"
        )
    );
    repo.write(
        path,
        &format!("{{\"roleTypes\": [\n  {{\"id\": \"worker\", \"contextFiles\": [{row}]}},\n  {{\"id\": \"worker\", \"contextFiles\": [{row}]}}\n]}}\n"),
    );
    let out = run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(&format!(
            "{path}:3:4: /roleTypes/1/id: the role \"worker\" is already defined at /roleTypes/0"
        )),
        "{}",
        out.stderr
    );
    assert!(!repo.exists("changes/x/analysis"));
}

#[test]
fn a_token_in_a_path_is_never_echoed_by_an_error() {
    let repo = Repo::fixture("aiws-basic");
    let token = "ghp_R7mK2pQ9xV4nL8wT3yH6jB1cF5dG0sZeAa9u";
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth", "--dry-run"])
        .args(["--task-file", &format!("../{token}/t.json")])
        .run();
    assert_ne!(out.code, 0, "{}", out.all());
    assert!(!out.all().contains("R7mK2pQ9"), "{}", out.all());
    assert!(
        out.stderr.contains("<secret: github-pat>"),
        "{}",
        out.stderr
    );
    let out = repo
        .curate()
        .args(["check", &format!("../{token}/x.jsonl")])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(!out.all().contains("R7mK2pQ9"), "{}", out.all());
}

/// What names folders, manifests and locks (the changes root, the manifest path, a bound
/// change) is refused when it holds a token, as the ids are: nothing written, never echoed.
#[test]
fn a_token_as_a_changes_root_manifest_path_or_bound_change_is_refused() {
    let repo = Repo::fixture("aiws-basic");
    let token = "ghp_R7mK2pQ9xV4nL8wT3yH6jB1cF5dG0sZeAa9u";
    let before = repo.snapshot_tree();
    let compile = ["--role", "worker", "--change", "add-auth"];
    for (args, env) in [
        (vec!["--changes-dir", token], None),
        (vec![], Some(("CURATE_CHANGES", token.to_owned()))),
        (
            vec![],
            Some((
                "CURATE_MANIFEST",
                format!("{{changes}}/{{change}}/{token}/{{role}}.jsonl"),
            )),
        ),
    ] {
        repo.write(&format!("{token}/add-auth/plan/p.md"), "# p\n");
        let mut cmd = repo.curate();
        cmd = cmd.args(compile).args(&args);
        if let Some((k, v)) = &env {
            cmd = cmd.env(k, v.as_str());
        }
        let out = cmd.run();
        assert_eq!(out.code, 1, "{}", out.all());
        assert!(!out.all().contains("R7mK2pQ9"), "{}", out.all());
        assert!(
            out.stderr.contains("holds a secret (github-pat)"),
            "{}",
            out.stderr
        );
        std::fs::remove_dir_all(repo.root.join(token)).unwrap();
        assert_eq!(
            repo.snapshot_tree(),
            before,
            "{args:?} {env:?} wrote something"
        );
    }
    let out = repo.curate().args(["use", token]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(!out.all().contains("R7mK2pQ9"), "{}", out.all());
    assert_eq!(repo.snapshot_tree(), before);
    // A session id that holds one is hashed for the file's name.
    let out = repo
        .curate()
        .args(["use", "add-auth", "--session", token])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(!out.all().contains("R7mK2pQ9"), "{}", out.all());
    let names: Vec<String> = std::fs::read_dir(repo.root.join(".curate/state"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(names.iter().all(|n| !n.contains("R7mK2pQ9")), "{names:?}");
}

#[test]
fn an_unknown_role_close_to_a_known_one_is_asked_about() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args(["--role", "wrker", "--change", "add-auth", "--dry-run"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        out.stderr,
        "error: unknown role \"wrker\" in embedded default\nhint: did you mean \"worker\"? the roles are: planner, explorer, worker, reviewer, integrator\n"
    );
}
