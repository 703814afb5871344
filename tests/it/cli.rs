//! The command line as people meet it: help, version, completions, man page, init,
//! contracts, progress, pipes.

use std::process::Stdio;

use crate::Repo;

#[test]
fn help_has_a_summary_grouped_options_and_examples_for_each_user() {
    let repo = Repo::empty();
    let out = repo.curate().args(["--help"]).run();
    assert_eq!(out.code, 0);
    insta::assert_snapshot!("help", out.stdout);
    for needle in [
        "pre-dispatch script",
        "at a shell",
        "editor preview",
        "CI budget check",
        "Budgets:",
        "Overrides:",
    ] {
        assert!(out.stdout.contains(needle), "{needle}");
    }
    for sub in ["render", "preview", "check", "verify", "contracts", "init"] {
        let out = repo.curate().args([sub, "--help"]).run();
        assert_eq!(out.code, 0, "{sub}");
        assert!(
            out.stdout.contains("Usage: curate"),
            "{sub}: {}",
            out.stdout
        );
        if ["render", "preview", "check", "verify"].contains(&sub) {
            assert!(
                out.stdout.contains("Examples:\n  curate "),
                "{sub}: {}",
                out.stdout
            );
        }
    }
}

#[test]
fn version_names_the_default_encoding() {
    let out = Repo::empty().curate().args(["--version"]).run();
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout,
        format!(
            "curate {} (default encoding o200k_base)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[test]
fn completions_and_man_page_are_generated() {
    let repo = Repo::empty();
    for (shell, needle) in [
        ("bash", "_curate()"),
        ("zsh", "#compdef curate"),
        ("fish", "complete -c curate"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = repo.curate().args(["completions", shell]).run();
        assert_eq!(out.code, 0, "{shell}");
        assert!(
            out.stdout.contains(needle),
            "{shell}: {}",
            &out.stdout[..200.min(out.stdout.len())]
        );
        assert!(out.stdout.contains("max-lines"), "{shell}");
    }
    let out = repo.curate().args(["man"]).run();
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.starts_with(".ie \\n(.g .ds Aq"),
        "{}",
        &out.stdout[..100]
    );
    assert!(out.stdout.contains(".TH curate"));
}

#[test]
fn init_writes_the_defaults_and_never_overwrites_without_force() {
    let repo = Repo::empty();
    let out = repo.curate().args(["init", "--templates"]).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let written = repo.read("contracts/workflow-delegation-contracts.json");
    assert!(written.contains("\"roleTypes\""));
    assert!(repo.exists("contracts/workflow-delegation-contracts.schema.json"));
    assert!(repo.exists(".curate/templates/sticky.zh.tera"));
    repo.write(
        "contracts/workflow-delegation-contracts.json",
        "{\"roleTypes\":[]}\n",
    );
    let out = repo.curate().args(["init"]).run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("error: not overwriting contracts/workflow-delegation-contracts.json"),
        "{}",
        out.stderr
    );
    assert_eq!(
        repo.read("contracts/workflow-delegation-contracts.json"),
        "{\"roleTypes\":[]}\n"
    );
    let out = repo.curate().args(["init", "--force"]).run();
    assert_eq!(out.code, 0);
    assert_eq!(
        repo.read("contracts/workflow-delegation-contracts.json"),
        written
    );
    // The written contracts are then the repository's own.
    let out = repo.curate().args(["contracts", "validate"]).run();
    assert_eq!(out.code, 0);
    assert!(
        out.stderr
            .starts_with("contracts/workflow-delegation-contracts.json: valid (5 roles"),
        "{}",
        out.stderr
    );
}

#[test]
fn contracts_show_expands_a_role_for_a_change() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "contracts",
            "show",
            "--role",
            "worker",
            "--change",
            "add-auth",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!("contracts_show", out.stdout);
    let out = repo
        .curate()
        .args(["contracts", "show", "--format", "json"])
        .run();
    let v = out.json();
    assert_eq!(v["roles"].as_array().unwrap().len(), 5);
    assert!(v["roles"][0]["contextFiles"][0]["matches"].is_null());
    let out = repo
        .curate()
        .args(["contracts", "show", "--role", "nobody"])
        .run();
    assert_eq!(out.code, 1);
}

#[test]
fn no_progress_bar_off_a_terminal_or_in_json() {
    let repo = Repo::empty();
    for i in 0..250 {
        repo.write(&format!("docs/f{i}.md"), "a line\n");
    }
    let args = [
        "--role",
        "worker",
        "--change",
        "x",
        "--owns",
        "docs/**",
        "--max-files",
        "0",
        "--dry-run",
    ];
    let out = repo.curate().args(args).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("reading ["), "{}", out.stderr);
    assert!(!out.stderr.contains('\r'));
    let out = repo.curate().args(args).args(["--format", "json"]).run();
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let repo = Repo::fixture("aiws-basic");
    let mut child = repo
        .curate()
        .args(["render", "--role", "worker", "--change", "add-auth", "-q"])
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read nothing: close our end at once, as `| head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

#[test]
fn compile_flags_before_a_subcommand_are_a_usage_error() {
    let out = Repo::empty()
        .curate()
        .args(["--role", "worker", "render", "--change", "x"])
        .run();
    assert_eq!(out.code, 2, "{}", out.stderr);
}
