//! `curate receipt check`: `guild.handoff_receipt.v1` receipts with one `guild.handoff.v2` block.

use crate::{Output, Repo};

/// Every bad receipt of `fixtures/receipts/`, one rule broken in each.
const BAD: [&str; 9] = [
    "missing-field.md",
    "bad-enum.md",
    "long-summary.md",
    "long-notes.md",
    "escalate-without-reason.md",
    "unknown-key.md",
    "two-blocks.md",
    "no-block.md",
    "malformed-json.md",
];

/// A temporary folder holding a copy of `fixtures/receipts/` as `receipts/`.
fn receipts() -> Repo {
    let repo = Repo::empty();
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/receipts");
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        repo.write(
            &format!("receipts/{name}"),
            &std::fs::read_to_string(e.path()).unwrap(),
        );
    }
    repo
}

fn check(repo: &Repo, format: &str, files: &[&str]) -> Output {
    repo.curate()
        .args(["receipt", "check", "--format", format])
        .args(files.iter().map(|f| format!("receipts/{f}")))
        .run()
}

#[test]
fn valid_receipts_pass() {
    let repo = receipts();
    let out = check(&repo, "human", &["valid.md", "valid-escalate.md"]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(out.stderr, "checked 2 receipts: 2 valid, 0 invalid\n");
    assert!(out.stdout.is_empty());
    let out = check(&repo, "human", &["valid.md"]);
    assert_eq!(out.stderr, "checked 1 receipt: 1 valid, 0 invalid\n");
    let out = repo
        .curate()
        .args(["-q", "receipt", "check", "receipts/valid.md"])
        .run();
    assert_eq!(out.code, 0);
    assert_eq!(out.stderr, "", "-q prints nothing on success");
}

#[test]
fn each_bad_receipt_fails_on_its_own() {
    let repo = receipts();
    for bad in BAD {
        let out = check(&repo, "human", &[bad]);
        assert_eq!(out.code, 1, "{bad}: {}", out.all());
        let errors = out
            .stderr
            .lines()
            .filter(|l| l.contains(": error: "))
            .count();
        assert_eq!(errors, 1, "{bad} breaks exactly one rule:\n{}", out.stderr);
        assert!(
            out.stderr.starts_with(&format!("receipts/{bad}:")),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn every_rule_in_one_report() {
    let repo = receipts();
    let mut files = BAD.to_vec();
    files.push("valid.md");
    files.push("no-marker.md");
    let out = check(&repo, "human", &files);
    assert_eq!(out.code, 1);
    insta::assert_snapshot!("human_report", out.all());
}

#[test]
fn a_missing_marker_is_only_a_warning() {
    let repo = receipts();
    let out = check(&repo, "human", &["no-marker.md"]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.stderr
            .starts_with("receipts/no-marker.md:1: warning: guild.handoff_receipt.v1 not found"),
        "{}",
        out.stderr
    );
}

#[test]
fn one_bad_receipt_among_good_ones_fails_the_run() {
    let repo = receipts();
    let out = check(
        &repo,
        "human",
        &["valid.md", "bad-enum.md", "valid-escalate.md"],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        out.stderr,
        "receipts/bad-enum.md:15:3: error: status: \"finished\" is not one of done, blocked, escalate\n\
         checked 3 receipts: 2 valid, 1 invalid\n"
    );
}

#[test]
fn json_format() {
    let repo = receipts();
    let out = check(
        &repo,
        "json",
        &["valid.md", "escalate-without-reason.md", "no-marker.md"],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    insta::assert_snapshot!("json_report", out.stdout);
    let v = out.json();
    assert_eq!(v[0]["valid"], true);
    assert_eq!(v[1]["valid"], false);
    assert_eq!(v[2]["valid"], true, "a warning does not fail a receipt");

    let out = check(&repo, "json", &["valid.md"]);
    assert_eq!(out.code, 0);
    assert_eq!(
        out.json(),
        serde_json::json!([{"file": "receipts/valid.md", "valid": true, "findings": []}])
    );
}

#[test]
fn github_format() {
    let repo = receipts();
    let out = check(
        &repo,
        "github",
        &[
            "valid.md",
            "long-summary.md",
            "two-blocks.md",
            "no-marker.md",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.all());
    assert_eq!(
        out.stdout,
        "::error file=receipts/long-summary.md,line=16::summary: 601 characters, at most 600\n\
         ::error file=receipts/two-blocks.md,line=32::extra guild.handoff.v2 block (the first is at line 10); a receipt holds exactly one\n\
         ::warning file=receipts/no-marker.md,line=1::guild.handoff_receipt.v1 not found: mark the receipt, e.g. with front matter \"schema: guild.handoff_receipt.v1\"\n"
    );
    let out = check(&repo, "github", &["valid.md"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "");
}

#[test]
fn every_violation_of_one_receipt_is_reported() {
    let repo = Repo::empty();
    repo.write(
        "r.md",
        "# guild.handoff_receipt.v1\n\n```guild.handoff.v2\n{\n  \"schema_version\": \"guild.handoff.v1\",\n  \"task_id\": \"\",\n  \"tier\": \"huge\",\n  \"status\": \"escalate\",\n  \"summary\": \"ok\",\n  \"issues\": \"none\",\n  \"notes\": 3,\n  \"extra\": true\n}\n```\n",
    );
    let out = repo.curate().args(["receipt", "check", "r.md"]).run();
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "r.md:3: error: artifacts: required key missing\n\
         r.md:3: error: escalate_reason: required when status is \"escalate\"\n\
         r.md:5:3: error: schema_version: \"guild.handoff.v1\" is not \"guild.handoff.v2\"\n\
         r.md:6:3: error: task_id: must not be blank\n\
         r.md:7:3: error: tier: \"huge\" is not one of cheap, mid, powerful\n\
         r.md:10:3: error: issues: expected a list of strings, found a string\n\
         r.md:11:3: error: notes: expected a string, found a number\n\
         r.md:12:3: error: unknown key \"extra\"\n\
         checked 1 receipt: 0 valid, 1 invalid\n"
    );
}

#[test]
fn no_file_is_a_usage_error() {
    let repo = Repo::empty();
    let out = repo.curate().args(["receipt", "check"]).run();
    assert_eq!(out.code, 2, "{}", out.all());
}

#[test]
// Regression: receipt check --format github does not escape `%` in messages or `,`/`:` in file names.
fn github_annotations_are_escaped() {
    let repo = Repo::empty();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/receipts/bad-enum.md"
    ))
    .unwrap()
    .replace("\"finished\"", "\"50%0A::error::forged\"");
    repo.write("runs/backend,T-12.md", &text);
    let out = repo
        .curate()
        .args([
            "receipt",
            "check",
            "--format",
            "github",
            "runs/backend,T-12.md",
        ])
        .run();
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        "::error file=runs/backend%2CT-12.md,line=15::status: \"50%250A::error::forged\" is not one of done, blocked, escalate\n"
    );
}

/// A file that cannot be read is that file's finding; the files after it are still checked,
/// and `--format json` is still the list, one item a file.
#[test]
fn an_unreadable_receipt_is_its_finding_and_the_rest_are_checked() {
    let repo = receipts();
    let files = ["valid.md", "no-such.md", "bad-enum.md"];
    let out = check(&repo, "human", &files);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("receipts/no-such.md:1: error: cannot read receipts/no-such.md: "),
        "{}",
        out.stderr
    );
    // A folder is read no more than a missing file, and said the same way.
    std::fs::create_dir(repo.root.join("receipts/folder.md")).unwrap();
    let folder = check(&repo, "human", &["folder.md"]);
    assert!(
        folder.stderr.contains(
            "receipts/folder.md:1: error: cannot read receipts/folder.md: not a regular file (a folder)"
        ),
        "{}",
        folder.stderr
    );
    assert!(
        out.stderr.contains("receipts/bad-enum.md:"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .ends_with("checked 3 receipts: 1 valid, 2 invalid\n"),
        "{}",
        out.stderr
    );
    let json = check(&repo, "json", &files).json();
    let valid: Vec<bool> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["valid"].as_bool().unwrap())
        .collect();
    assert_eq!(valid, [true, false, false], "{json}");
}
