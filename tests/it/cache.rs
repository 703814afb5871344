//! The on-disk token cache: used, bounded by its own checks, never trusted when damaged.

use crate::{Repo, WORKER_MANIFEST};

fn cache_file(repo: &Repo) -> std::path::PathBuf {
    repo.cache_dir().join("tokens-o200k_base.txt")
}

#[test]
fn a_warm_run_gives_the_same_bytes_and_a_damaged_cache_is_ignored() {
    let repo = Repo::fixture("aiws-basic");
    let args = [
        "--role", "worker", "--change", "add-auth", "--format", "json",
    ];
    let cold = repo.curate().args(args).run();
    assert_eq!(cold.code, 0, "{}", cold.stderr);
    let manifest = repo.read(WORKER_MANIFEST);
    let cache = std::fs::read_to_string(cache_file(&repo)).expect("a cache file");
    assert!(
        cache.starts_with("curate-token-cache 1 o200k_base\n"),
        "{cache}"
    );
    assert_eq!(cache.lines().count(), 1 + 8, "one record per counted entry");
    let warm = repo.curate().args(args).run();
    assert_eq!(cold.json()["totals"], warm.json()["totals"]);
    assert_eq!(manifest, repo.read(WORKER_MANIFEST));
    // A damaged record: the whole file is not trusted, and the next save rebuilds it.
    let damaged: String = cache
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 1 {
                format!("{} oops\n", &l[..64])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(cache_file(&repo), damaged).unwrap();
    let again = repo.curate().args(args).run();
    assert_eq!(cold.json()["totals"], again.json()["totals"]);
    let rebuilt = std::fs::read_to_string(cache_file(&repo)).unwrap();
    assert!(
        rebuilt.starts_with("curate-token-cache 1 o200k_base\n"),
        "{rebuilt}"
    );
    assert!(
        !rebuilt.contains("oops"),
        "the damaged record survived:\n{rebuilt}"
    );
    assert_eq!(rebuilt.lines().count(), 1 + 8, "{rebuilt}");
}

#[test]
fn no_cache_reads_and_writes_nothing() {
    let repo = Repo::fixture("aiws-basic");
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--no-cache",
            "--dry-run",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!cache_file(&repo).exists());
}
