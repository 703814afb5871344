//! Run it twice: in every workflow, a second compile and a second hook dispatch of the same
//! change exit 0 and give the same manifest bytes as the first. What curate writes never
//! makes the next run ambiguous (on aipper/relay, an aiws 0.0.39 workspace whose changes
//! are under `.aiws/changes/`, the manifest the first compile wrote under `changes/<id>/`
//! made the second one fail: "several workflows … hold the change").

use crate::Repo;

/// One workflow's case: the fixture (prepared by `setup`), the role and change, the
/// sub-agent type a host dispatches it as, and the workflow the report names.
struct Case {
    fixture: &'static str,
    setup: fn(&Repo),
    role: &'static str,
    subagent: &'static str,
    change: &'static str,
    workflow: &'static str,
}

fn nothing(_: &Repo) {}

/// aiws-basic with `.aiws/manifest.json` recording 0.0.39: the first aiws layout.
fn legacy(repo: &Repo) {
    repo.write(
        ".aiws/manifest.json",
        r#"{"manifest_version": 1, "aiws_version": "0.0.39", "tools": ["opencode"]}"#,
    );
}

const CASES: &[Case] = &[
    Case {
        fixture: "aiws-basic",
        setup: nothing,
        role: "worker",
        subagent: "worker",
        change: "add-auth",
        workflow: "curate",
    },
    Case {
        fixture: "aiws-legacy-mismatch",
        setup: nothing,
        role: "worker",
        subagent: "worker",
        change: "fix-login",
        workflow: "aiws",
    },
    // aipper/relay's layout: aiws 0.0.39, changes under `.aiws/changes/`, the manifest
    // written under `changes/<id>/analysis/` where its OpenCode plugin reads it.
    Case {
        fixture: "aiws-relay",
        setup: nothing,
        role: "worker",
        subagent: "worker",
        change: "offline-banner",
        workflow: "aiws",
    },
    Case {
        fixture: "aiws-basic",
        setup: legacy,
        role: "worker",
        subagent: "worker",
        change: "add-auth",
        workflow: "aiws-legacy",
    },
    Case {
        fixture: "trellis",
        setup: nothing,
        role: "implement",
        subagent: "trellis-implement",
        change: "11-28-login-rate-limit",
        workflow: "trellis",
    },
    Case {
        fixture: "openspec",
        setup: nothing,
        role: "worker",
        subagent: "worker",
        change: "add-2fa",
        workflow: "openspec",
    },
    Case {
        fixture: "guild",
        setup: nothing,
        role: "frontend",
        subagent: "frontend",
        change: "T2-frontend",
        workflow: "guild",
    },
    Case {
        fixture: "spec-kit",
        setup: nothing,
        role: "implement",
        subagent: "implement",
        change: "001-user-login",
        workflow: "spec-kit",
    },
    Case {
        fixture: "kiro",
        setup: nothing,
        role: "worker",
        subagent: "worker",
        change: "order-history",
        workflow: "kiro",
    },
    Case {
        fixture: "bmad",
        setup: nothing,
        role: "dev",
        subagent: "dev",
        change: "1.1",
        workflow: "bmad",
    },
];

/// A compile of `case` in `repo`: exit 0, the workflow named; the manifest's path.
fn compile(repo: &Repo, case: &Case, run: usize) -> String {
    let out = repo
        .curate()
        .args(["--role", case.role, "--change", case.change])
        .args(["--format", "json"])
        .run();
    assert_eq!(
        out.code,
        0,
        "{} compile {run}: {}",
        case.workflow,
        out.all()
    );
    let report = out.json();
    assert_eq!(report["workflow"]["name"], case.workflow, "{report}");
    report["manifest"].as_str().unwrap().to_owned()
}

/// A Claude Code dispatch of `case` in `repo`: the prompt the hook gives the sub-agent.
fn dispatch(repo: &Repo, case: &Case, run: usize) -> String {
    let input = serde_json::json!({
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "cwd": repo.root,
        "tool_input": {
            "prompt": format!("Go.\nchange: {}", case.change),
            "subagent_type": case.subagent,
        },
    });
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(input.to_string().as_bytes())
        .run();
    assert_eq!(out.code, 0, "{} hook {run}: {}", case.workflow, out.all());
    let v = out.json();
    v["hookSpecificOutput"]["updatedInput"]["prompt"]
        .as_str()
        .unwrap_or_else(|| panic!("{} hook {run}: uncurated: {v}", case.workflow))
        .to_owned()
}

fn run_twice(case: &Case) {
    let repo = Repo::fixture(case.fixture);
    (case.setup)(&repo);
    let manifest = compile(&repo, case, 1);
    let first = repo.read(&manifest);
    assert_eq!(compile(&repo, case, 2), manifest, "{}", case.workflow);
    assert_eq!(
        repo.read(&manifest),
        first,
        "{}: second compile",
        case.workflow
    );
    let prompt = dispatch(&repo, case, 1);
    assert!(prompt.contains("<!-- curate:begin"), "{prompt}");
    let after_hook = repo.read(&manifest);
    assert_eq!(
        dispatch(&repo, case, 2),
        prompt,
        "{}: second dispatch",
        case.workflow
    );
    assert_eq!(
        repo.read(&manifest),
        after_hook,
        "{}: second dispatch's manifest",
        case.workflow
    );
    // And a third compile after the dispatches still finds the change once.
    assert_eq!(compile(&repo, case, 3), manifest, "{}", case.workflow);
}

#[test]
fn a_second_compile_and_dispatch_of_every_workflow_give_the_same_bytes() {
    for case in CASES {
        run_twice(case);
    }
}

/// aipper/relay's case itself: after the first compile `changes/<id>/` holds only curate's
/// manifest and lock, which is no aiws 0.0.39 change (`aiws-legacy`), so the second compile
/// is not refused as ambiguous; a real change under `changes/` still is one.
#[test]
fn curates_own_output_under_changes_is_no_second_workflow() {
    let repo = Repo::fixture("aiws-relay");
    let case = &CASES[2];
    compile(&repo, case, 1);
    assert!(repo.exists("changes/offline-banner/analysis/worker-context.jsonl"));
    assert!(!repo.exists("changes/offline-banner/proposal.md"));
    let out = repo
        .curate()
        .args(["config", "show", "--format", "json"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(!out.stdout.contains("aiws-legacy"), "{}", out.stdout);
    compile(&repo, case, 2);
    // A change of the same id someone writes under `changes/`: now both layouts hold it.
    repo.write("changes/offline-banner/proposal.md", "# offline-banner\n");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "offline-banner"])
        .run();
    assert_ne!(out.code, 0, "{}", out.all());
    assert!(
        out.all().contains("2 of them hold the change"),
        "{}",
        out.all()
    );
}

/// The plain layout with a manifest template that writes under `changes/` while the change
/// is under `.aiws/changes/`: the second compile found the change "under both" and stopped.
#[test]
fn a_manifest_written_under_the_other_changes_root_is_no_second_change() {
    let repo = Repo::fixture("aiws-dotaiws");
    repo.write(
        ".curate/config.toml",
        "manifest = \"changes/{change}/analysis/{role}-context.jsonl\"\n",
    );
    let case = Case {
        fixture: "aiws-dotaiws",
        setup: nothing,
        role: "worker",
        subagent: "worker",
        change: "add-auth",
        workflow: "curate",
    };
    let manifest = compile(&repo, &case, 1);
    assert_eq!(manifest, "changes/add-auth/analysis/worker-context.jsonl");
    let first = repo.read(&manifest);
    assert_eq!(compile(&repo, &case, 2), manifest);
    assert_eq!(repo.read(&manifest), first);
}
