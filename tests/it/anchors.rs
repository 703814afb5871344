//! Heading anchors in the embedded default and in overrides: resolved to the lines of the
//! heading's section when the file is read, so an edit that moves a heading moves the
//! lines; `check --stale` notices; an anchor that matches nothing takes the whole file.

use crate::Repo;

fn entry(report: &serde_json::Value, file: &str) -> serde_json::Value {
    report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == file)
        .unwrap_or_else(|| panic!("{file} not in {report}"))
        .clone()
}

fn compile(repo: &Repo) -> serde_json::Value {
    let out = repo
        .curate()
        .args([
            "--role", "worker", "--change", "add-auth", "--format", "json",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    out.json()
}

#[test]
fn a_moved_heading_moves_the_lines_and_check_stale_sees_it() {
    let repo = Repo::fixture("aiws-basic");
    let e = entry(&compile(&repo), "AI_PROJECT.md");
    assert_eq!(e["sections"], serde_json::json!([[25, 50], [95, 106]]));
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains("\"## Security\" 25-50"),
        "{e}"
    );
    let text = repo.read("AI_PROJECT.md");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[24].starts_with("## Security"));
    assert!(lines[94].starts_with("## Artifacts"));
    // Three lines added at the top: the sections follow their headings.
    repo.write("AI_PROJECT.md", &format!("a\nb\nc\n{text}"));
    let out = repo.curate().args(["check", "--stale"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    let e = entry(&compile(&repo), "AI_PROJECT.md");
    assert_eq!(e["sections"], serde_json::json!([[28, 53], [98, 109]]));
    let out = repo.curate().args(["check", "--stale"]).run();
    assert_eq!(out.code, 0, "{}", out.all());
}

#[test]
fn an_anchor_that_matches_nothing_is_a_warning_and_the_whole_file() {
    let repo = Repo::fixture("aiws-basic");
    let text = repo.read("AI_PROJECT.md");
    repo.write(
        "AI_PROJECT.md",
        &text.replace("## Security and Boundary Rules", "## Safety Rules"),
    );
    let report = compile(&repo);
    let e = entry(&report, "AI_PROJECT.md");
    assert_eq!(e["sections"], serde_json::Value::Null);
    // Its other anchor still resolves, but the entry is the whole file: no reason or lock
    // names that anchor's lines.
    let reason = e["reason"].as_str().unwrap();
    assert!(!reason.contains("95-"), "{reason}");
    let lock = repo.read("changes/add-auth/analysis/worker-context.lock.json");
    let lock: serde_json::Value = serde_json::from_str(&lock).unwrap();
    let locked = lock["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == "AI_PROJECT.md")
        .unwrap();
    assert!(locked.get("anchors").is_none(), "{locked}");
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        warnings.contains(
            &"\"AI_PROJECT.md\": no heading matches the anchor \"## Security|安全与边界\": the whole file is taken"
        ),
        "{warnings:?}"
    );
}

#[test]
fn an_override_may_anchor_its_sections_to_a_heading() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        "changes/add-auth/analysis/worker-context.overrides.jsonl",
        "{\"file\":\"docs/guide.md\",\"sections\":[\"## Working on a change\"],\"priority\":\"high\",\"kind\":\"analysis\"}\n",
    );
    let e = entry(&compile(&repo), "docs/guide.md");
    assert_eq!(e["sections"], serde_json::json!([[18, 23]]), "{e}");
    // Not a heading, not a pair: an error naming the file and line.
    repo.write(
        "changes/add-auth/analysis/worker-context.overrides.jsonl",
        "{\"file\":\"docs/guide.md\",\"sections\":[\"Working\"],\"priority\":\"high\",\"kind\":\"analysis\"}\n",
    );
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("worker-context.overrides.jsonl:1: section \"Working\" is neither"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_symbol_anchor_takes_its_definition_and_follows_it() {
    let repo = Repo::fixture("aiws-basic");
    let overrides = "changes/add-auth/analysis/worker-context.overrides.jsonl";
    repo.write(
        overrides,
        "{\"file\":\"src/auth/login.ts\",\"sections\":[{\"symbol\":\"LoginService.login\"}],\"priority\":\"high\",\"kind\":\"assigned\"}\n",
    );
    let e = entry(&compile(&repo), "src/auth/login.ts");
    // The method's doc comment through its closing brace.
    assert_eq!(e["sections"], serde_json::json!([[36, 66]]), "{e}");
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains("symbol LoginService.login 36-66"),
        "{e}"
    );
    let lock: serde_json::Value =
        serde_json::from_str(&repo.read("changes/add-auth/analysis/worker-context.lock.json"))
            .unwrap();
    let locked = lock["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["file"] == "src/auth/login.ts")
        .unwrap()
        .clone();
    assert_eq!(
        locked["anchors"],
        serde_json::json!([["symbol:LoginService.login", [36, 66]]])
    );
    // Two lines added above the class: the anchor follows the definition, and `check
    // --stale` sees that the manifest no longer matches.
    let text = repo.read("src/auth/login.ts");
    repo.write(
        "src/auth/login.ts",
        &text.replacen(
            "export class LoginService",
            "// a\n// b\nexport class LoginService",
            1,
        ),
    );
    let out = repo.curate().args(["check", "--stale"]).run();
    assert_eq!(out.code, 1, "{}", out.all());
    let e = entry(&compile(&repo), "src/auth/login.ts");
    assert_eq!(e["sections"], serde_json::json!([[38, 68]]), "{e}");

    // A symbol that is not there: a warning and the whole file.
    repo.write(
        overrides,
        "{\"file\":\"src/auth/login.ts\",\"sections\":[{\"symbol\":\"LoginService.logout\"}],\"priority\":\"high\",\"kind\":\"assigned\"}\n",
    );
    let v = compile(&repo);
    assert!(entry(&v, "src/auth/login.ts")["sections"].is_null());
    assert!(
        v["warnings"].as_array().unwrap().iter().any(|w| w
            == "\"src/auth/login.ts\": no definition matches the symbol \"LoginService.logout\": the whole file is taken"),
        "{v}"
    );
    // Not a name: an error naming the line.
    repo.write(
        overrides,
        "{\"file\":\"src/auth/login.ts\",\"sections\":[{\"symbol\":\"a b\"}],\"priority\":\"high\",\"kind\":\"assigned\"}\n",
    );
    let out = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("worker-context.overrides.jsonl:1: symbol \"a b\" is not a name"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_contracts_file_may_name_a_symbol() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        "contracts.json",
        r#"{"roleTypes": [{"id": "worker", "contextFiles": [
            {"glob": "src/auth/login.ts", "sections": [{"symbol": "LoginService"}], "priority": "high", "kind": "assigned"},
            {"glob": "src/auth/session.ts", "sections": [{"symbol": 7}], "priority": "high", "kind": "assigned"}
        ]}]}"#,
    );
    let out = repo
        .curate()
        .args([
            "--contracts",
            "contracts.json",
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 1, "a symbol that is not a string: {}", out.all());
    assert!(out.stderr.contains("contracts.json"), "{}", out.stderr);
    // A symbol that is no name is an error at its place, as in an overrides file.
    repo.write(
        "contracts.json",
        r#"{"roleTypes": [{"id": "worker", "contextFiles": [
            {"glob": "src/auth/login.ts", "sections": [{"symbol": "LoginService."}], "priority": "high", "kind": "assigned"}
        ]}]}"#,
    );
    for args in [
        &["contracts", "validate", "--contracts", "contracts.json"][..],
        &[
            "--contracts",
            "contracts.json",
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--dry-run",
        ],
    ] {
        let out = repo.curate().args(args).run();
        assert_eq!(out.code, 1, "{args:?}: {}", out.all());
        assert!(
            out.all().contains("contracts.json:2:")
                && out.all().contains("symbol \"LoginService.\" is not a name"),
            "{args:?}: {}",
            out.all()
        );
    }
    repo.write(
        "contracts.json",
        r#"{"roleTypes": [{"id": "worker", "contextFiles": [
            {"glob": "src/auth/login.ts", "sections": [{"symbol": "LoginService"}], "priority": "high", "kind": "assigned"}
        ]}]}"#,
    );
    let out = repo
        .curate()
        .args([
            "--contracts",
            "contracts.json",
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--dry-run",
            "--format",
            "json",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let e = entry(&out.json(), "src/auth/login.ts");
    assert_eq!(e["sections"], serde_json::json!([[25, 83]]), "{e}");
}
