//! The embedded baseline in a workspace laid out as real aiws projects are
//! (`fixtures/repos/aiws-real`: changes under `.aiws/changes/`, plans under `.aiws/plan/`
//! named by a timestamp and a title, `proposal.md` naming its plan on a `Plan_File:` line,
//! `.ws-change.json` recording the truth files' hashes). No flag is needed.

use crate::Repo;

/// The files a compile selects, in manifest order, with `.aiws/changes/<id>/` as `<c>/`,
/// and the warnings of its report.
fn selected(role: &str, change: &str) -> (Vec<String>, Vec<String>) {
    selected_in(&Repo::fixture("aiws-real"), role, change)
}

fn selected_in(repo: &Repo, role: &str, change: &str) -> (Vec<String>, Vec<String>) {
    let out = repo
        .curate()
        .args([
            "--role",
            role,
            "--change",
            change,
            "--dry-run",
            "--format",
            "json",
        ])
        .run();
    assert_eq!(out.code, 0, "{role} {change}: {}", out.all());
    let json = out.json();
    let prefix = format!(".aiws/changes/{change}/");
    let files = json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap().replace(&prefix, "<c>/"))
        .collect();
    let warnings = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect();
    (files, warnings)
}

const PWA_PLAN: &str = ".aiws/plan/2026-04-13_14-30-00-mobile-pwa-interaction-fix.md";
const CACHE_PLAN: &str = ".aiws/plan/2026-05-02_09-00-00-service-worker-caching.md";
const LOGIN_PLAN: &str = ".aiws/plan/2026-06-01_10-00-00-login-timeout.md";
const STALE: &str = "\"AI_PROJECT.md\" changed since the change began (\".aiws/changes/stale-truth/.ws-change.json\"): run `aiws change sync`";

#[test]
fn every_role_gets_the_change_itself_in_order() {
    #[rustfmt::skip]
    let cases: &[(&str, &str, &[&str], &[&str])] = &[
        ("planner", "mobile-pwa-fix", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/design.md", "<c>/tasks.md", PWA_PLAN, "AI_WORKSPACE.md", "<c>/analysis/impact.md"], &[]),
        ("planner", "offline-cache", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/tasks.md", CACHE_PLAN, "AI_WORKSPACE.md", "<c>/STATE.md"], &[]),
        ("planner", "login-timeout", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/tasks.md", LOGIN_PLAN, "AI_WORKSPACE.md"], &[]),
        ("explorer", "mobile-pwa-fix", &["AI_PROJECT.md", "<c>/proposal.md", "<c>/design.md", "<c>/tasks.md", PWA_PLAN, "<c>/analysis/impact.md"], &[]),
        ("explorer", "offline-cache", &["AI_PROJECT.md", "<c>/proposal.md", "<c>/tasks.md", CACHE_PLAN, "<c>/STATE.md"], &[]),
        ("explorer", "login-timeout", &["AI_PROJECT.md", "<c>/proposal.md", "<c>/tasks.md", LOGIN_PLAN], &[]),
        ("worker", "mobile-pwa-fix", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/design.md", "<c>/tasks.md", PWA_PLAN, "AI_WORKSPACE.md", "<c>/analysis/impact.md"], &["soft cap: 8 high+medium files exceed --max-files 5; 1 low entry named only (not read)"]),
        ("worker", "offline-cache", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/tasks.md", CACHE_PLAN, "AI_WORKSPACE.md", "<c>/STATE.md"], &["soft cap: 7 high+medium files exceed --max-files 5; 2 low entries named only (not read)"]),
        ("worker", "login-timeout", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/tasks.md", LOGIN_PLAN, "AI_WORKSPACE.md"], &[]),
        ("reviewer", "mobile-pwa-fix", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/design.md", "<c>/tasks.md", PWA_PLAN, "<c>/patches/0001-remove-mobile-gate.patch", "<c>/analysis/impact.md", "<c>/review/review-1.md", "<c>/evidence/build.md"], &[]),
        ("reviewer", "offline-cache", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/tasks.md", CACHE_PLAN, "<c>/STATE.md", "<c>/evidence/notes.md", "<c>/evidence/test-run.md"], &[]),
        ("integrator", "mobile-pwa-fix", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/design.md", "<c>/tasks.md", PWA_PLAN, "<c>/review/review-1.md", "<c>/evidence/build.md"], &[]),
        ("integrator", "offline-cache", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/tasks.md", CACHE_PLAN, "<c>/STATE.md", "<c>/evidence/notes.md", "<c>/evidence/test-run.md"], &[]),
        ("integrator", "login-timeout", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/tasks.md", LOGIN_PLAN], &[]),
        ("worker", "stale-truth", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/tasks.md", "AI_WORKSPACE.md"], &[STALE]),
        ("reviewer", "stale-truth", &["AI_PROJECT.md", "REQUIREMENTS.md", "<c>/proposal.md", "<c>/tasks.md"], &[STALE]),
    ];
    for (role, change, files, warnings) in cases {
        let (got, got_warnings) = selected(role, change);
        assert_eq!(got, *files, "{role} on {change}");
        // No "missing file" or "matched nothing": the embedded default is silent about
        // documents a repository does not have.
        assert_eq!(got_warnings, *warnings, "{role} on {change}");
    }
}

#[test]
fn the_plan_named_by_proposal_says_where_it_came_from() {
    let repo = Repo::fixture("aiws-real");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "offline-cache", "--stdout"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains(CACHE_PLAN))
        .expect("the plan is an entry");
    assert!(
        line.contains(r#""reason":"the change's plan, named by \".aiws/changes/offline-cache/proposal.md\" (Plan_File: plan/2026-05-02_09-00-00-service-worker-caching.md)""#),
        "{line}"
    );
    assert!(
        line.contains(r#""priority":"high","kind":"plan""#),
        "{line}"
    );
}

#[test]
fn a_plan_file_line_that_leads_out_of_the_repository_falls_back_to_the_id_glob() {
    let repo = Repo::fixture("aiws-real");
    let proposal = ".aiws/changes/login-timeout/proposal.md";
    let text = repo.read(proposal);
    repo.write(
        proposal,
        &format!("> Plan_File: ../../../etc/passwd\n{text}"),
    );
    let (files, warnings) = selected_in(&repo, "worker", "login-timeout");
    assert!(files.contains(&LOGIN_PLAN.to_owned()), "{files:?}");
    assert!(!files.iter().any(|f| f.contains("passwd")), "{files:?}");
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn a_changed_truth_file_is_a_warning_and_the_sticky_asks_to_read_it_whole() {
    let repo = Repo::fixture("aiws-real");
    let out = repo
        .curate()
        .args([
            "render",
            "--role",
            "worker",
            "--change",
            "stale-truth",
            "--template",
            "sticky",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr.contains(&format!("warning: {STALE}")),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("**Changed since the change began**: `AI_PROJECT.md` changed after this change was planned. Read it whole"),
        "{}",
        out.stdout
    );
    // The files whose recorded hashes match are not named.
    assert!(
        !out.stdout.contains("`REQUIREMENTS.md` changed"),
        "{}",
        out.stdout
    );
    // A synced record wins over the base one: synced to today's hash, nothing changed.
    let record = ".aiws/changes/stale-truth/.ws-change.json";
    let now = curate::util::digest::hex(repo.read("AI_PROJECT.md").as_bytes());
    let mut json: serde_json::Value = serde_json::from_str(&repo.read(record)).unwrap();
    json["synced_truth_files"] = serde_json::json!({"AI_PROJECT.md": {"sha256": now}});
    repo.write(record, &json.to_string());
    let (_, warnings) = selected_in(&repo, "worker", "stale-truth");
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn a_malformed_change_record_is_a_note_never_an_error() {
    let repo = Repo::fixture("aiws-real");
    repo.write(".aiws/changes/stale-truth/.ws-change.json", "{ not json");
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "stale-truth", "--stdout"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stdout.contains(r#"// curation: ".aiws/changes/stale-truth/.ws-change.json" not used: it is not valid JSON"#),
        "{}",
        out.stdout
    );
}

#[test]
fn the_changes_root_is_the_one_that_holds_the_change() {
    // Both `changes/` and `.aiws/changes/` exist; only `.aiws/changes/` holds this change.
    let repo = Repo::fixture("aiws-real");
    repo.write("changes/other/proposal.md", "# another change\n");
    let (files, _) = selected_in(&repo, "worker", "login-timeout");
    assert!(files.contains(&"<c>/proposal.md".to_owned()), "{files:?}");

    // Both hold it: an error that names both, and nothing written.
    repo.write("changes/login-timeout/proposal.md", "# the same id twice\n");
    let before = repo.snapshot_tree();
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "login-timeout"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("exists under both changes/ and .aiws/changes/"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.snapshot_tree(), before);
    // --changes-dir settles it.
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "login-timeout",
            "--changes-dir",
            ".aiws/changes",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());

    // Neither holds it: the default root, with a warning.
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "no-such-change",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr
            .contains("warning: the change folder changes/no-such-change does not exist"),
        "{}",
        out.stderr
    );
}
