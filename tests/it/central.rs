//! Central files (docs/budgets.md#related-files): an owned file that gives `--related` no
//! edge (a Svelte page: nothing here parses Svelte) gets the repository's central files near
//! it, each saying how many files use it, rather than nothing; never a vendored one; the
//! same bytes at any thread count, cold, warm and without the cache.

use crate::Repo;

/// A Svelte front end over a TypeScript client, a Rust server, and a vendored helper that
/// more files use than any of the project's own.
fn svelte_and_rust() -> Repo {
    let repo = Repo::empty();
    std::fs::create_dir(repo.root.join(".git")).unwrap();
    repo.write(
        "web/src/App.svelte",
        "<script>\n  import { fetchRuns } from './lib/api';\n  let runs = fetchRuns();\n</script>\n<h1>Runs</h1>\n",
    )
    .write(
        "web/src/lib/api.ts",
        "import { vendoredHelper } from '../../../vendor/kit/helper';\n\nexport function fetchRuns(): string[] {\n  return [vendoredHelper()];\n}\n\nexport function apiBase(): string {\n  return '/api';\n}\n",
    )
    .write(
        "web/src/lib/store.ts",
        "import { fetchRuns, apiBase } from './api';\nimport { vendoredHelper } from '../../../vendor/kit/helper';\n\nexport function loadStore(): string[] {\n  vendoredHelper();\n  return fetchRuns().concat([apiBase()]);\n}\n",
    )
    .write(
        "web/src/main.ts",
        "import { apiBase } from './lib/api';\nimport { loadStore } from './lib/store';\nimport { vendoredHelper } from '../../vendor/kit/helper';\n\nexport function start(): void {\n  vendoredHelper();\n  loadStore();\n  console.log(apiBase());\n}\n",
    )
    .write(
        "server/src/db.rs",
        "pub struct RunRow {\n    pub id: u64,\n}\n\npub fn open_database() -> Vec<RunRow> {\n    Vec::new()\n}\n",
    )
    .write(
        "server/src/main.rs",
        "mod db;\nuse db::{open_database, RunRow};\n\nfn main() {\n    let rows: Vec<RunRow> = open_database();\n    println!(\"{}\", rows.len());\n}\n",
    )
    .write(
        "vendor/kit/helper.ts",
        "export function vendoredHelper(): string {\n  return 'x';\n}\n",
    );
    repo
}

/// `--related 4000` owning the Svelte page; the manifest's related lines (file, reason).
fn related(repo: &Repo, extra: &[&str]) -> (String, Vec<(String, String)>) {
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "q",
            "--owns",
            "web/src/App.svelte",
            "--related",
            "4000",
            "--max-files",
            "0",
            "--stdout",
        ])
        .args(extra)
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let related = out
        .stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["kind"] == "related")
        .map(|e| {
            (
                e["file"].as_str().unwrap().to_owned(),
                e["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    (out.stdout, related)
}

#[test]
fn an_owned_file_with_no_edge_gets_the_central_files_near_it_and_says_why() {
    let repo = svelte_and_rust();
    let (manifest, related) = related(&repo, &["--no-cache"]);
    // The curation line says how many of them are central.
    assert!(
        manifest.contains("3 files related to the owned ones (3 of them central)"),
        "{manifest}"
    );
    let shown: Vec<(&str, &str)> = related
        .iter()
        .map(|(f, r)| (f.as_str(), r.as_str()))
        .collect();
    // The most used first, the nearest of those used alike; the vendored helper, which
    // three files use, is never central.
    assert_eq!(
        shown,
        [
            (
                "web/src/lib/api.ts",
                "central: referenced by 2 files (outline)"
            ),
            (
                "web/src/lib/store.ts",
                "central: referenced by 1 file (outline)"
            ),
            (
                "server/src/db.rs",
                "central: referenced by 1 file (outline)"
            ),
        ]
    );
}

#[test]
fn central_files_are_the_same_bytes_at_any_thread_count_cold_warm_and_uncached() {
    let repo = svelte_and_rust();
    let (cold, files) = related(&repo, &["--no-cache", "-j", "1"]);
    assert!(!files.is_empty(), "{cold}");
    for extra in [
        &["--no-cache", "-j", "2"][..],
        &["-j", "2"],
        &["-j", "1"],
        &["-j", "2"],
    ] {
        assert_eq!(related(&repo, extra).0, cold, "{extra:?}");
    }
}
