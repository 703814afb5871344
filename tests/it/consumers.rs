//! curate's output read exactly as the real consumers read it (their reading rules,
//! measured by running their code): the aiws OpenCode plugin 0.0.96 and 0.0.39, and
//! Trellis. Each test lays out the consumer's workspace, runs `curate init --profile …` and
//! a compile, then reads the manifest from where the consumer looks, the way it parses it,
//! and checks that every entry arrives, in order, within the budget curate reported.

use crate::Repo;

/// One entry as a consumer takes it.
#[derive(Debug, PartialEq)]
struct Read {
    file: String,
    /// `None`: the whole file.
    sections: Option<Vec<[u64; 2]>>,
    priority: String,
}

/// The aiws plugin's reader: lines split on `\n`, trimmed; blank and `#` lines skipped; each
/// other line JSON-parsed, failures skipped silently (that is how `//` lines pass); path =
/// `glob` or `file`; `sections` honoured; missing priority = medium; stable sort by priority.
fn read_like_aiws(text: &str) -> Vec<Read> {
    let mut out: Vec<Read> = text
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            let file = v
                .get("glob")
                .or_else(|| v.get("file"))?
                .as_str()?
                .to_owned();
            let sections = v
                .get("sections")
                .filter(|s| !s.is_null())
                .map(|s| serde_json::from_value(s.clone()).unwrap());
            let priority = v
                .get("priority")
                .and_then(|p| p.as_str())
                .unwrap_or("medium")
                .to_owned();
            Some(Read {
                file,
                sections,
                priority,
            })
        })
        .collect();
    let rank = |p: &str| match p {
        "high" => 0,
        "medium" => 1,
        _ => 2,
    };
    out.sort_by_key(|r| rank(&r.priority));
    out
}

/// Trellis' reader: lines stripped, blank skipped, JSON failures skipped, a non-object line
/// stops the Python reader; `file` (or `path`); `sections`, `priority` ignored: whole files,
/// in file order.
fn read_like_trellis(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(obj) = v.as_object() else {
            break;
        };
        if let Some(f) = obj
            .get("file")
            .or_else(|| obj.get("path"))
            .and_then(|f| f.as_str())
        {
            out.push(f.to_owned());
        }
    }
    out
}

/// Lines of a file as an editor counts them.
fn lines_of(repo: &Repo, file: &str) -> u64 {
    curate::stages::measure::count_lines(&std::fs::read(repo.root.join(file)).unwrap())
}

/// Compiles and returns the JSON report.
fn compile(repo: &Repo, role: &str, change: &str) -> serde_json::Value {
    let out = repo
        .curate()
        .args(["--role", role, "--change", change, "--format", "json"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    out.json()
}

fn init(repo: &Repo, profile: &str) {
    let out = repo.curate().args(["init", "--profile", profile]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(repo.exists(".curate/config.toml"));
}

/// Every entry of the report arrives, in order, with its sections, and the lines the
/// consumer inlines are the lines curate budgeted.
fn assert_aiws_reads_all(repo: &Repo, manifest: &str, report: &serde_json::Value) {
    let read = read_like_aiws(&repo.read(manifest));
    let entries = report["entries"].as_array().unwrap();
    assert_eq!(read.len(), entries.len(), "{read:?}");
    let mut lines = 0;
    for (r, e) in read.iter().zip(entries) {
        assert_eq!(r.file, e["file"].as_str().unwrap());
        assert_eq!(r.priority, e["priority"].as_str().unwrap());
        lines += match &r.sections {
            None => lines_of(repo, &r.file),
            Some(ranges) => {
                let total = lines_of(repo, &r.file);
                ranges.iter().map(|[s, e]| e.min(&total) - s + 1).sum()
            }
        };
    }
    assert_eq!(lines, report["totals"]["lines"].as_u64().unwrap());
    assert!(lines <= 4000);
}

#[test]
fn aiws_0_0_96_reads_changes_id_analysis_from_the_root() {
    // Changes live under .aiws/changes; the plugin reads changes/<id>/analysis/.
    let repo = Repo::fixture("aiws-real");
    init(&repo, "aiws");
    let report = compile(&repo, "worker", "mobile-pwa-fix");
    let manifest = "changes/mobile-pwa-fix/analysis/worker-context.jsonl";
    assert_eq!(report["manifest"], manifest);
    assert!(repo.exists(manifest));
    assert!(repo.exists("changes/mobile-pwa-fix/analysis/worker-context.lock.json"));
    assert_aiws_reads_all(&repo, manifest, &report);
    // The change's own documents are among them.
    assert!(
        repo.read(manifest)
            .contains(".aiws/changes/mobile-pwa-fix/proposal.md")
    );
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(out.stderr.contains("checked 1 manifest"), "{}", out.stderr);
}

#[test]
fn aiws_0_0_39_reads_everything_under_changes() {
    let repo = Repo::fixture("aiws-basic");
    init(&repo, "aiws-legacy");
    let report = compile(&repo, "worker", "add-auth");
    let manifest = "changes/add-auth/analysis/worker-context.jsonl";
    assert_eq!(report["manifest"], manifest);
    assert_aiws_reads_all(&repo, manifest, &report);
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn trellis_inlines_whole_files_and_curate_budgets_whole_files() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        ".trellis/tasks/add-auth/prd.md",
        "# Add auth\n\nRequirements.\n",
    );
    repo.write(".trellis/spec/backend/index.md", "# Backend\n\nRules.\n");
    repo.write(".trellis/spec/guides/index.md", "# Guides\n");
    init(&repo, "trellis");
    for (role, contract) in [("implement", "worker"), ("check", "reviewer")] {
        let report = compile(&repo, role, "add-auth");
        let manifest = format!(".trellis/tasks/add-auth/{role}.jsonl");
        assert_eq!(report["manifest"], manifest.as_str());
        let text = repo.read(&manifest);
        // No sections are written: Trellis would ignore them.
        assert!(!text.contains("\"sections\":[["), "{text}");
        let read = read_like_trellis(&text);
        let entries: Vec<&str> = report["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["file"].as_str().unwrap())
            .collect();
        assert_eq!(read, entries, "{role}");
        let inlined: u64 = read.iter().map(|f| lines_of(&repo, f)).sum();
        assert_eq!(
            inlined,
            report["totals"]["lines"].as_u64().unwrap(),
            "{role}"
        );
        // The prompt names the role as the caller gave it, and the contract role decided.
        let out = repo
            .curate()
            .args(["render", "--role", role, "--change", "add-auth", "-q"])
            .run();
        assert_eq!(out.code, 0, "{}", out.all());
        assert!(out.stdout.starts_with(&format!(
            "role: {role}\n<!-- curate:begin role=\"{role}\" change=\"add-auth\" -->\n"
        )));
        assert!(out.stdout.trim_end().ends_with("-->"));
        // The report names the alias and the contract role it stands for.
        let out = repo
            .curate()
            .args(["--role", role, "--change", "add-auth", "--dry-run"])
            .run();
        assert!(
            out.stderr.starts_with(&format!(
                "curate: role {role} (contract role {contract}) · change add-auth"
            )),
            "{}",
            out.stderr
        );
    }
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(out.stderr.contains("checked 2 manifests"), "{}", out.stderr);
    // A manifest gone from where the template puts it (its lock is still there) fails.
    std::fs::remove_file(repo.root.join(".trellis/tasks/add-auth/check.jsonl")).unwrap();
    let out = repo.curate().args(["check"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(".trellis/tasks/add-auth/check.jsonl:1: error: cannot read: the manifest does not exist where the manifest template puts it"),
        "{}",
        out.stderr
    );
}

#[test]
fn config_precedence_is_flag_then_env_then_file_then_profile() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        ".curate/config.toml",
        "profile = \"aiws-legacy\"\nsections = false\n[budget]\nmax_lines = 3000\n",
    );
    let show = |env: &[(&str, &str)]| {
        let mut cmd = repo.curate().args(["config", "show", "--format", "json"]);
        for (k, v) in env {
            cmd = cmd.env(k, v);
        }
        let out = cmd.run();
        assert_eq!(out.code, 0, "{}", out.all());
        out.json()["settings"].as_array().unwrap().clone()
    };
    let get = |rows: &[serde_json::Value], key: &str| {
        let row = rows.iter().find(|r| r["key"] == key).unwrap();
        (
            row["value"].as_str().unwrap().to_owned(),
            row["source"].as_str().unwrap().to_owned(),
        )
    };
    let rows = show(&[]);
    assert_eq!(
        get(&rows, "budget.max_lines"),
        ("3000".into(), "file".into())
    );
    assert_eq!(get(&rows, "changes"), ("changes".into(), "profile".into()));
    assert_eq!(get(&rows, "sections"), ("false".into(), "file".into()));
    assert_eq!(
        get(&rows, "budget.max_files"),
        ("5".into(), "default".into())
    );
    let rows = show(&[("CURATE_MAX_LINES", "2000")]);
    assert_eq!(
        get(&rows, "budget.max_lines"),
        ("2000".into(), "env".into())
    );
    // A flag beats them all, in a compile.
    let out = repo
        .curate()
        .env("CURATE_MAX_LINES", "2000")
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--max-lines",
            "1234",
            "--format",
            "json",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.json()["budget"]["max_lines"], 1234, "{}", out.stdout);
    // Bad values are errors naming the key and the line, or the variable.
    repo.write(
        ".curate/config.toml",
        "profile = \"aiws\"\n[budget]\nmax_filez = 3\n",
    );
    let out = repo.curate().args(["config", "show"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(".curate/config.toml:3:1:") && out.stderr.contains("max_filez"),
        "{}",
        out.stderr
    );
    // A contracts file the config names that is not there: the config's line, not a bare
    // "does not exist".
    repo.write(".curate/config.toml", "\ncontracts = \"nope.json\"\n");
    let out = repo.compile_worker(&["--dry-run"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains(".curate/config.toml:2:13: contracts = \"nope.json\": no such file"),
        "{}",
        out.stderr
    );
    // A folder, or a link out of the repository, named as the contracts: the config's line.
    std::fs::create_dir_all(repo.root.join("cdir")).unwrap();
    repo.write(".curate/config.toml", "contracts = \"cdir\"\n");
    let out = repo.compile_worker(&["--dry-run"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains(".curate/config.toml:1:13: contracts = \"cdir\": a folder, not a file"),
        "{}",
        out.stderr
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc/hostname", repo.root.join("out.json")).unwrap();
        repo.write(".curate/config.toml", "contracts = \"out.json\"\n");
        let out = repo.compile_worker(&["--dry-run"]);
        assert_eq!(out.code, 1, "{}", out.all());
        assert!(
            out.stderr
                .contains(".curate/config.toml:1:13: contracts = \"out.json\": ")
                && out.stderr.contains("leads out of the repository"),
            "{}",
            out.stderr
        );
    }
    repo.write(".curate/config.toml", "profile = \"aiws\"\n");
    let out = repo
        .curate()
        .env("CURATE_MAX_FILES", "many")
        .args(["config", "show"])
        .run();
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(out.stderr.contains("CURATE_MAX_FILES"), "{}", out.stderr);
    // A changes root out of the repository, from the environment: a usage error naming it.
    for outside in ["/etc", "../elsewhere"] {
        let out = repo
            .curate()
            .env("CURATE_CHANGES", outside)
            .args(["config", "show"])
            .run();
        assert_eq!(out.code, 2, "{}", out.all());
        assert!(
            out.stderr.contains(&format!(
                "CURATE_CHANGES={outside:?} is not a folder inside"
            )),
            "{}",
            out.stderr
        );
    }
    // init never overwrites without --force.
    let out = repo.curate().args(["init", "--profile", "trellis"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(repo.read(".curate/config.toml").contains("\"aiws\""));
    let out = repo
        .curate()
        .args(["init", "--profile", "trellis", "--force"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        repo.read(".curate/config.toml")
            .contains("profile = \"trellis\"")
    );
}

/// A `[roles]` alias to a role the contracts do not have: an error at the alias's place in
/// the config file, in `config show` and in a compile under the alias (the contracts' own
/// "unknown role" named neither the file nor the alias); an alias that is fine passes.
#[test]
fn a_roles_alias_to_a_role_the_contracts_lack_is_an_error_at_its_place() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(".curate/config.toml", "[roles]\nimplement = \"wroker\"\n");
    let said = ".curate/config.toml:2:13: roles.implement = \"wroker\": embedded default has no such role (did you mean \"worker\"?";
    for args in [
        &["config", "show"][..],
        &["--role", "implement", "--change", "add-auth", "--dry-run"],
    ] {
        let out = repo.curate().args(args).run();
        assert_eq!(out.code, 1, "{args:?}: {}", out.all());
        assert!(out.stderr.contains(said), "{args:?}: {}", out.stderr);
    }
    repo.write(".curate/config.toml", "[roles]\nimplement = \"worker\"\n");
    let out = repo
        .curate()
        .args(["--role", "implement", "--change", "add-auth", "--dry-run"])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
}
