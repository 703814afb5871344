//! Selecting from the task's own words: what the text names joins as `referenced`, what it
//! talks about as `related`, each with its reason; nothing secret, nothing outside.

use crate::{Repo, WORKER_LOCK, WORKER_MANIFEST};

/// A repository that follows no workflow: two topics, a secret, a file outside.
fn plain() -> Repo {
    let repo = Repo::empty();
    repo.write("README.md", "# Demo\n\nA demo service.\n")
        .write(
            "docs/auth.md",
            "# Authentication\n\nAccounts lock after repeated failed logins.\nThe lockout window is fifteen minutes.\n",
        )
        .write("docs/billing.md", "# Billing\n\nInvoices are sent monthly.\n")
        .write(
            "src/auth/lockout.ts",
            &(0..100).map(|i| format!("export const L{i} = {i};\n")).collect::<String>(),
        )
        .write("src/billing/invoice.ts", "export function invoice() {}\n")
        .write(".env", "API_TOKEN=x\n");
    repo
}

/// The manifest's entries of `kind`, as (file, reason, sections) JSON text.
fn entries(manifest: &str, kind: &str) -> Vec<serde_json::Value> {
    manifest
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"] == kind)
        .collect()
}

/// A compile of worker on `fix-lockout` with `text` as `--task-text -`, the manifest on stdout.
pub(crate) fn with_text(repo: &Repo, text: &str, extra: &[&str]) -> crate::Output {
    repo.curate()
        .args([
            "--role",
            "worker",
            "--change",
            "fix-lockout",
            "--stdout",
            "--task-text",
            "-",
        ])
        .args(extra)
        .stdin(text.as_bytes())
        .run()
}

#[test]
fn a_plain_repository_gets_what_the_text_names_and_talks_about() {
    let repo = plain();
    let out = with_text(
        &repo,
        "Lock accounts after five failed logins.\nThe check is in `auth/lockout.ts:50`; leave .env and ../outside.md alone.\n",
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let named = entries(&out.stdout, "referenced");
    assert_eq!(named.len(), 1, "{}", out.stdout);
    assert_eq!(named[0]["file"], "src/auth/lockout.ts");
    assert_eq!(named[0]["reason"], "named in --task-text:2");
    assert_eq!(named[0]["priority"], "medium");
    // Around the line it names, not the whole file.
    assert_eq!(named[0]["sections"], serde_json::json!([[10, 90]]));
    let ranked = entries(&out.stdout, "related");
    let files: Vec<&str> = ranked.iter().map(|v| v["file"].as_str().unwrap()).collect();
    assert_eq!(files, ["docs/auth.md"], "{}", out.stdout);
    let reason = ranked[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("matches ")
            && reason.contains("\"failed\"")
            && reason.ends_with("(--task-text)"),
        "{reason}"
    );
    assert!(!out.stdout.contains(".env") && !out.stdout.contains("API_TOKEN"));
    assert!(!out.stdout.contains("outside.md"));
}

#[test]
fn no_task_and_no_text_select_nothing() {
    let repo = plain();
    let off = with_text(&repo, "see src/auth/lockout.ts", &["--no-task"]);
    // Nothing else selects a file there: BLOCKED.
    assert_eq!(off.code, 3, "{}", off.stderr);
    assert!(
        entries(&off.stdout, "referenced").is_empty(),
        "{}",
        off.stdout
    );
    // Without --task-text and with no [select] setting, nothing is read from the task.
    let repo = Repo::fixture("aiws-basic");
    let plain_compile = repo.compile_worker(&["--stdout"]);
    assert!(entries(&plain_compile.stdout, "referenced").is_empty());
    // `[select] task = false` stands against --task-text, as --no-task does.
    let repo = plain();
    repo.write(".curate/config.toml", "[select]\ntask = false\n");
    let off = with_text(&repo, "see src/auth/lockout.ts", &[]);
    assert_eq!(off.code, 3, "{}", off.stderr);
    assert!(
        entries(&off.stdout, "referenced").is_empty(),
        "{}",
        off.stdout
    );
    // A budget in the config is the one --task-text uses.
    repo.write(".curate/config.toml", "[select]\ntask_tokens = 5\n");
    let tiny = with_text(&repo, "see src/auth/lockout.ts", &[]);
    assert!(
        entries(&tiny.stdout, "referenced").is_empty(),
        "{}",
        tiny.stdout
    );
}

#[test]
fn the_changes_own_documents_are_the_text_when_the_config_asks() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(".curate/config.toml", "[select]\ntask = true\n");
    let out = repo.compile_worker(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let manifest = repo.read(WORKER_MANIFEST);
    let named = entries(&manifest, "referenced");
    let files: Vec<&str> = named.iter().map(|v| v["file"].as_str().unwrap()).collect();
    for f in [
        "src/auth/login.ts",
        "src/auth/session.ts",
        "src/api/routes.ts",
    ] {
        assert!(files.contains(&f), "{f} missing from {files:?}");
    }
    // Each says where it was named.
    assert!(named.iter().all(|v| {
        v["reason"]
            .as_str()
            .unwrap()
            .starts_with("named in changes/add-auth/")
    }));
    // Neither the secret the plan's folder sits beside nor the change's own documents.
    assert!(!manifest.contains("config/server.key") && !manifest.contains("\".env\""));
    // The lock records the budget; a second compile is the same bytes, and check agrees.
    let lock: serde_json::Value = serde_json::from_str(&repo.read(WORKER_LOCK)).unwrap();
    assert_eq!(lock["inputs"]["task_tokens"], 8000);
    assert_eq!(repo.compile_worker(&[]).code, 0);
    assert_eq!(repo.read(WORKER_MANIFEST), manifest);
    // At any thread count.
    let one = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth", "--stdout"])
        .env("RAYON_NUM_THREADS", "1")
        .run();
    assert_eq!(one.stdout, manifest);
    let check = repo.curate().args(["check", "--stale"]).run();
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}

#[test]
fn a_task_text_that_holds_a_secret_is_refused_without_its_value() {
    let repo = plain();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let out = with_text(&repo, &format!("use {token} to log in\n"), &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("--task-text: holds a secret"),
        "{}",
        out.stderr
    );
    assert!(!out.all().contains(&token));
}

#[test]
fn a_named_link_that_leaves_the_repository_is_not_read() {
    let repo = plain();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("notes.md"),
        "failed logins lock accounts\n",
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        outside.path().join("notes.md"),
        repo.root.join("docs/notes.md"),
    )
    .unwrap();
    let out = with_text(&repo, "read docs/notes.md about failed logins\n", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("docs/notes.md"), "{}", out.stdout);
}

/// The new task of [`workspace_with_history`] compiled for `implement`, 4,000 tokens for its
/// words.
fn implement_new_task(repo: &Repo) -> crate::Output {
    let out = repo
        .curate()
        .args(["--role", "implement", "--change", "12-01-api-throttle"])
        .args(["--stdout", "--task-tokens", "4000"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    out
}

/// A Trellis workspace with two earlier tasks and their authors' lists, and a new task.
fn workspace_with_history() -> Repo {
    let repo = Repo::empty();
    let done = ".trellis/tasks/archive/2026-11";
    repo.write(".trellis/workflow.md", "# Workflow\n")
        .write(".trellis/spec/backend/index.md", "# Backend\n")
        .write(
            ".trellis/spec/backend/rate-limits.md",
            "# Limits\n\nEvery limiter keeps its counters in the store.\n",
        )
        .write(".trellis/spec/frontend/forms.md", "# Forms\n\nValidate on blur.\n")
        .write(
            &format!("{done}/11-02-login-throttle/prd.md"),
            "# Throttle logins\n\nThrottle repeated failed logins per account and per address.\n",
        )
        .write(
            &format!("{done}/11-02-login-throttle/implement.jsonl"),
            "{\"file\": \".trellis/spec/backend/rate-limits.md\", \"reason\": \"limits\"}\n\
             {\"file\": \".trellis/tasks/archive/2026-11/11-02-login-throttle/prd.md\", \"reason\": \"own\"}\n\
             {\"file\": \"src/gone.ts\", \"reason\": \"deleted since\"}\n\
             not json\n",
        )
        .write(
            &format!("{done}/11-05-signup-form/prd.md"),
            "# Signup form\n\nA form with inline validation for the signup page.\n",
        )
        .write(
            &format!("{done}/11-05-signup-form/implement.jsonl"),
            "{\"file\": \".trellis/spec/frontend/forms.md\", \"reason\": \"forms\"}\n",
        )
        .write(
            ".trellis/tasks/12-01-api-throttle/prd.md",
            "# Throttle the API\n\nThrottle repeated failed API calls per account.\n",
        );
    repo
}

#[test]
fn what_similar_tasks_authors_listed_is_offered_with_their_names() {
    let repo = workspace_with_history();
    let out = implement_new_task(&repo);
    let related = entries(&out.stdout, "related");
    let listed: Vec<(&str, &str)> = related
        .iter()
        .filter(|v| v["reason"].as_str().unwrap().starts_with("listed by"))
        .map(|v| (v["file"].as_str().unwrap(), v["reason"].as_str().unwrap()))
        .collect();
    // The throttle task's spec, with the task that listed it; not the form task's, whose
    // text has nothing in common; not the earlier task's own PRD, nor a file gone since.
    assert_eq!(
        listed,
        [(
            ".trellis/spec/backend/rate-limits.md",
            "listed by similar tasks: 11-02-login-throttle"
        )],
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("src/gone.ts"));
    // Off with the rest of the task's words.
    let off = repo
        .curate()
        .args(["--role", "implement", "--change", "12-01-api-throttle"])
        .args(["--stdout", "--no-task"])
        .run();
    assert!(!off.stdout.contains("listed by"), "{}", off.stdout);
}

/// Claude Code's input for a dispatch of its own `general-purpose` agent, naming no change.
fn dispatch(repo: &Repo, prompt: &str) -> crate::Output {
    let input = serde_json::json!({
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Task",
        "cwd": repo.root,
        "tool_input": {
            "subagent_type": "general-purpose",
            "description": "fix lockout",
            "prompt": prompt,
        }
    });
    repo.curate()
        .args(["hook", "claude-code"])
        .stdin(input.to_string().as_bytes())
        .run()
}

/// The dispatch folders of `.curate/state/dispatches/`.
fn dispatches(repo: &Repo) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo.root.join(".curate/state/dispatches"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_dispatch_that_names_no_change_in_a_plain_repository_is_curated_from_its_prompt() {
    let repo = plain();
    repo.write("AGENTS.md", "# Agents\n\nRun the tests before you stop.\n");
    let prompt =
        "Lock accounts after five failed logins: see src/auth/lockout.ts; leave .env alone.";
    let out = dispatch(&repo, prompt);
    assert_eq!(out.code, 0, "{}", out.all());
    let v = out.json();
    let input = &v["hookSpecificOutput"]["updatedInput"];
    assert_eq!(input["subagent_type"], "general-purpose");
    let p = input["prompt"].as_str().unwrap();
    // Claude Code's own agent type is the worker; the instruction file, what the prompt
    // names and what it talks about, each with why; the prompt itself, last.
    assert!(p.starts_with("role: worker\n<!-- curate:begin role=\"worker\" change=\"adhoc-"));
    assert!(
        p.contains("=== AGENTS.md === (the repository's instructions)"),
        "{p}"
    );
    assert!(
        p.contains("=== src/auth/lockout.ts === (named in the prompt:1)"),
        "{p}"
    );
    assert!(p.contains("=== docs/auth.md === (matches "), "{p}");
    assert!(!p.contains("API_TOKEN") && !p.contains("=== .env"));
    assert!(p.contains(&format!("---\n{prompt}\n<!-- curate:end files=")) && p.ends_with(" -->"));
    assert_eq!(p.matches("curate:end").count(), 1);
    // Its manifest and lock are kept in the state folder, which git ignores.
    let names = dispatches(&repo);
    assert_eq!(names.len(), 1);
    let folder = format!(".curate/state/dispatches/{}/analysis", names[0]);
    let manifest = repo.read(&format!("{folder}/worker-context.jsonl"));
    assert!(
        repo.root
            .join(format!("{folder}/worker-context.lock.json"))
            .is_file()
    );
    assert_eq!(repo.read(".curate/state/.gitignore"), "*\n");
    // The same dispatch again: the same bytes, nothing more kept.
    let again = dispatch(&repo, prompt);
    assert_eq!(again.stdout, out.stdout);
    assert_eq!(
        repo.read(&format!("{folder}/worker-context.jsonl")),
        manifest
    );
    assert_eq!(dispatches(&repo).len(), 1);
    // A prompt with a secret in it: nothing injected, the value nowhere, exit 0.
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let secret = dispatch(&repo, &format!("log in with {token} and fix the lockout"));
    assert_eq!((secret.code, secret.stdout.as_str()), (0, ""));
    assert!(!secret.all().contains(&token));
    assert!(!repo.read(".curate/state/hooks.jsonl").contains(&token));
    // Turned off in the config: nothing.
    repo.write(".curate/config.toml", "[hook]\nad_hoc = false\n");
    let off = dispatch(&repo, "fix the lockout after failed logins");
    assert_eq!((off.code, off.stdout.as_str()), (0, ""));
}

#[test]
fn ad_hoc_dispatches_are_bounded_and_stay_in_a_real_folder() {
    let repo = plain();
    // Older dispatches beyond the bound go, oldest first; this one stays.
    for n in 0..70 {
        repo.write(
            &format!(".curate/state/dispatches/adhoc-old{n:03}/analysis/x.jsonl"),
            "",
        );
    }
    let out = dispatch(&repo, "fix the lockout after failed logins");
    assert_eq!(out.code, 0, "{}", out.all());
    let names = dispatches(&repo);
    assert_eq!(names.len(), 64, "{names:?}");
    assert!(names.iter().any(|n| !n.starts_with("adhoc-old")));
    // A dispatches folder that is a link out of the repository: nothing written there.
    let repo = plain();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.root.join(".curate/state")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), repo.root.join(".curate/state/dispatches")).unwrap();
    let out = dispatch(&repo, "fix the lockout after failed logins");
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.all());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    // A repository that follows a workflow: a dispatch with no change is no ad-hoc one.
    let repo = Repo::fixture("aiws-basic");
    let out = dispatch(&repo, "fix the lockout after failed logins");
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert!(!repo.root.join(".curate/state/dispatches").exists());
}

#[test]
fn with_the_tasks_words_on_a_hook_reads_the_leads_prompt_as_text() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        ".curate/config.toml",
        "[select]\ntask = true\n[roles]\n\"general-purpose\" = \"worker\"\n",
    );
    let prompt = "change: add-auth\nThe CSV lexer in src/tokenizer.rs must not change.";
    let out = dispatch(&repo, prompt);
    assert_eq!(out.code, 0, "{}", out.all());
    let p = out.json()["hookSpecificOutput"]["updatedInput"]["prompt"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        p.contains("=== src/tokenizer.rs === (named in the prompt:2)"),
        "{p}"
    );
    // Recorded in the lock: the same dispatch gives the same bytes, and check agrees.
    assert_eq!(dispatch(&repo, prompt).stdout, out.stdout);
    let check = repo.curate().args(["check", "--stale"]).run();
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    // A prompt that holds a secret is not read as text; the dispatch is still curated.
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let secret = dispatch(&repo, &format!("{prompt}\nuse {token}"));
    assert_eq!(secret.code, 0);
    let p = secret.json()["hookSpecificOutput"]["updatedInput"]["prompt"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!p.contains("(named in the prompt"), "{p}");
    assert_eq!(
        p.matches(&token).count(),
        1,
        "only the lead's own prompt holds it"
    );
    assert!(!repo.read(".curate/state/hooks.jsonl").contains(&token));
}

#[test]
fn explain_shows_how_each_file_of_the_tasks_words_scored() {
    let repo = plain();
    let out = with_text(
        &repo,
        "Lock accounts after five failed logins; see auth/lockout.ts\n",
        &["--dry-run", "--explain"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let all = out.all();
    assert!(
        all.contains("\"src/auth/lockout.ts\" ← the task's words (named): kept"),
        "{all}"
    );
    let ranked = all
        .lines()
        .find(|l| l.contains("\"docs/auth.md\" ← the task's words (BM25 "))
        .unwrap_or_else(|| panic!("{all}"));
    // The best ranked file scores the best score.
    let (_, rest) = ranked.split_once("(BM25 ").unwrap();
    let (score, rest) = rest.split_once(" of the best ").unwrap();
    let (best, _) = rest.split_once(')').unwrap();
    assert_eq!(score, best, "{ranked}");
}

/// A repository with code that defines names, the same names in vendored code, and a
/// spec.
fn with_code_and_spec() -> Repo {
    let repo = Repo::empty();
    repo.write(
        "src/rollout.rs",
        &format!(
            "//! Rollouts.\n{}\npub struct Rollout {{\n    pub stage: u32,\n}}\n\npub fn advance_stage(r: &mut Rollout) {{\n    r.stage += 1;\n}}\n",
            "// filler\n".repeat(60)
        ),
    )
    .write(
        "src/main.rs",
        "mod rollout;\nfn main() {\n    let mut r = rollout::Rollout { stage: 0 };\n    rollout::advance_stage(&mut r);\n}\n",
    )
    .write(
        "vendor/other/src/lib.rs",
        "pub struct Rollout;\npub fn advance_stage() {}\n",
    )
    .write(
        "web/src/api.ts",
        "export class Client {\n  fetchRollouts() {\n    return fetch('/api/rollouts');\n  }\n}\n",
    )
    .write(
        "docs/spec/deploys.md",
        "# Deploys\n\n## 1. Canary windows and pauses\n\nA canary runs for an hour.\n\n### Detail\n\nMore.\n\n## 2. Rollback\n\nRoll back on errors.\n",
    )
    .write("docs/spec/other.md", "# Other\n\n## Release notes format\n\nBullets.\n");
    repo
}

#[test]
fn an_identifier_the_text_names_gives_the_file_that_defines_it_around_the_definition() {
    let repo = with_code_and_spec();
    let out = with_text(
        &repo,
        "Let a paused `Rollout` resume.\nadvance_stage() must skip paused stages; the UI calls fetchRollouts.\n",
        &["--task-tokens", "2000"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let named = entries(&out.stdout, "referenced");
    let got: Vec<(&str, &str)> = named
        .iter()
        .map(|v| (v["file"].as_str().unwrap(), v["reason"].as_str().unwrap()))
        .collect();
    // The project's own definition, not the vendored one's; the file that only uses the
    // names is not named; a method in TypeScript is found as well.
    assert_eq!(
        got,
        [
            (
                "src/rollout.rs",
                "defines Rollout, advance_stage, named in --task-text:1"
            ),
            (
                "web/src/api.ts",
                "defines fetchRollouts, named in --task-text:2"
            ),
        ],
        "{}",
        out.stdout
    );
    // Around the definitions (lines 63 and 67, 40 lines on each side), not the whole file.
    assert_eq!(named[0]["sections"], serde_json::json!([[23, 69]]));
    assert_eq!(named[0]["priority"], "medium");
    // A name defined in more places than a few is left: nothing named from it.
    for i in 0..4 {
        repo.write(&format!("src/dup{i}.rs"), "pub fn shared_helper() {}\n");
    }
    let vague = with_text(&repo, "call shared_helper() twice\n", &[]);
    assert!(
        entries(&vague.stdout, "referenced").is_empty(),
        "{}",
        vague.stdout
    );
    // Same bytes at one thread.
    let one = repo
        .curate()
        .args([
            "--role", "worker", "--change", "fix-lockout", "--stdout", "--task-text", "-",
            "--task-tokens", "2000",
        ])
        .stdin(b"Let a paused `Rollout` resume.\nadvance_stage() must skip paused stages; the UI calls fetchRollouts.\n".as_slice())
        .env("RAYON_NUM_THREADS", "1")
        .run();
    let again = with_text(
        &repo,
        "Let a paused `Rollout` resume.\nadvance_stage() must skip paused stages; the UI calls fetchRollouts.\n",
        &["--task-tokens", "2000"],
    );
    assert_eq!(one.stdout, again.stdout);
}

#[test]
fn vendored_files_rank_below_the_projects_own() {
    let repo = Repo::empty();
    repo.write(
        "vendor/lib/throttle.go",
        "package lib\n// throttle the requests burst window\n",
    )
    .write(
        "daemon/limits.go",
        "package daemon\n// throttle the requests\n",
    );
    for i in 0..10 {
        repo.write(
            &format!("daemon/other{i}.go"),
            "package daemon\n// unrelated\n",
        );
    }
    let out = with_text(&repo, "throttle requests in a burst window\n", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let files: Vec<String> = entries(&out.stdout, "related")
        .iter()
        .map(|v| v["file"].as_str().unwrap().to_owned())
        .collect();
    // Without the count-down the vendored file, which says more of the words, would come
    // first.
    assert_eq!(
        files,
        ["daemon/limits.go", "vendor/lib/throttle.go"],
        "{}",
        out.stdout
    );
}

#[test]
fn the_files_linked_to_a_named_file_follow_it() {
    let repo = with_code_and_spec();
    let out = with_text(
        &repo,
        "The crash at start-up is in src/main.rs.\n",
        &["--task-tokens", "2000"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let named = entries(&out.stdout, "referenced");
    assert_eq!(named.len(), 1, "{}", out.stdout);
    assert_eq!(named[0]["file"], "src/main.rs");
    // What main.rs uses, though the text says none of its words; the vendored copy after.
    let related = entries(&out.stdout, "related");
    let got: Vec<(&str, &str)> = related
        .iter()
        .map(|v| (v["file"].as_str().unwrap(), v["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "src/rollout.rs",
                "linked to the named files: defines `Rollout`, `advance_stage` used by src/main.rs"
            ),
            (
                "vendor/other/src/lib.rs",
                "linked to the named files: defines `Rollout`, `advance_stage` used by src/main.rs"
            )
        ],
        "{}",
        out.stdout
    );
}

#[test]
fn a_front_end_and_its_server_find_each_other_by_their_shared_route() {
    let repo = Repo::empty();
    repo.write(
        "server/src/main.rs",
        "fn routes() -> Router {\n    Router::new().route(\"/api/logs/tail\", get(tail))\n}\n",
    )
    .write(
        "web/src/App.svelte",
        "<script>\n  const r = await fetch(`/api/logs/tail?n=${n}`);\n</script>\n",
    )
    .write(
        "web/src/Other.svelte",
        "<script>\n  const r = await fetch('/api/other');\n</script>\n",
    );
    let out = with_text(&repo, "Tail faster in server/src/main.rs\n", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let related = files_and_reasons(&out.stdout, "related");
    assert_eq!(
        related,
        [(
            "web/src/App.svelte".to_owned(),
            "linked to the named files: shares \"/api/logs/tail\" with server/src/main.rs"
                .to_owned()
        )],
        "{}",
        out.stdout
    );
}

#[test]
fn what_most_of_the_workspaces_tasks_list_comes_first_whatever_the_task_is_about() {
    let repo = workspace_with_history();
    let done = ".trellis/tasks/archive/2026-11";
    // A third task, about deploys; all three list the workflow and the backend index.
    repo.write(
        &format!("{done}/11-09-deploy/prd.md"),
        "# Deploy\n\nShip the container on Fridays.\n",
    )
    .write(
        &format!("{done}/11-09-deploy/implement.jsonl"),
        "{\"file\": \".trellis/workflow.md\"}\n{\"file\": \".trellis/spec/backend/index.md\"}\n",
    );
    for task in ["11-02-login-throttle", "11-05-signup-form"] {
        let list = format!("{done}/{task}/implement.jsonl");
        let text = format!(
            "{}{{\"file\": \".trellis/workflow.md\"}}\n{{\"file\": \".trellis/spec/backend/index.md\"}}\n",
            repo.read(&list)
        );
        repo.write(&list, &text);
    }
    let out = implement_new_task(&repo);
    let related = files_and_reasons(&out.stdout, "related");
    let convention = |f: &str| {
        (
            f.to_owned(),
            "listed by 3 of the workspace's 3 tasks with a list".to_owned(),
        )
    };
    assert!(
        related.contains(&convention(".trellis/workflow.md")),
        "{}",
        out.stdout
    );
    // The backend index is the workflow's own already: once, as it was.
    assert_eq!(
        out.stdout
            .matches("\"file\":\".trellis/spec/backend/index.md\"")
            .count(),
        1
    );
    // The similar task's own file still comes, with its reason.
    assert!(
        related
            .iter()
            .any(|(f, r)| f == ".trellis/spec/backend/rate-limits.md"
                && r == "listed by similar tasks: 11-02-login-throttle")
    );
}

/// The manifest's entries of `kind`: each file with its reason.
fn files_and_reasons(manifest: &str, kind: &str) -> Vec<(String, String)> {
    entries(manifest, kind)
        .iter()
        .map(|v| {
            (
                v["file"].as_str().unwrap().to_owned(),
                v["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_named_file_that_no_longer_fits_whole_comes_as_its_outline() {
    let repo = Repo::empty();
    // Four documents of 131 tokens each; a budget of 450 (150 a file) fits three whole.
    let body: Vec<String> = (0..60).map(|k| format!("w{k}")).collect();
    let body = body.join(" ");
    for name in ["a", "b", "c", "d"] {
        repo.write(
            &format!("docs/{name}.md"),
            &format!("# {name} guide\n\n{body}\n\n## {name} details\n\nmore\n"),
        );
    }
    let out = with_text(
        &repo,
        "Read docs/a.md, docs/b.md, docs/c.md and docs/d.md first.\n",
        &["--task-tokens", "450"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let named = entries(&out.stdout, "referenced");
    let files: Vec<&str> = named.iter().map(|v| v["file"].as_str().unwrap()).collect();
    assert_eq!(
        files,
        ["docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md"],
        "{}",
        out.stdout
    );
    // The first three whole, the last as its outline (its two headings).
    for v in &named[..3] {
        assert!(v["sections"].is_null(), "{v}");
    }
    assert_eq!(
        named[3]["sections"],
        serde_json::json!([[1, 1], [5, 5]]),
        "{}",
        out.stdout
    );
}
