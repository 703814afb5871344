//! The on-disk caches (token counts, the content scan's verdicts): used, bounded by their
//! own checks, never trusted when damaged.

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
        cache.starts_with("curate-token-cache 2 o200k_base 8 8\n"),
        "{cache}"
    );
    assert_eq!(cache.lines().count(), 1 + 8, "one record per counted entry");
    let warm = repo.curate().args(args).run();
    assert_eq!(cold.json()["totals"], warm.json()["totals"]);
    assert_eq!(manifest, repo.read(WORKER_MANIFEST));
    // A damaged record (of the same width): met by a lookup, the file is not trusted for the
    // rest of the run, and the save rebuilds it.
    let damaged: String = cache
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 1 {
                format!("{} {}\n", &l[..64], "x".repeat(l.len() - 65))
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
        rebuilt.starts_with("curate-token-cache 2 o200k_base 8 8\n"),
        "{rebuilt}"
    );
    assert!(
        !rebuilt.contains(" xxxx"),
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
    assert!(
        !repo.cache_dir().exists(),
        "{:?}",
        std::fs::read_dir(repo.cache_dir()).map(Iterator::count)
    );
}

/// The verdicts files in the cache folder.
fn verdict_files(repo: &Repo) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(repo.cache_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("scan-") && name.ends_with(".txt")
        })
        .collect()
}

/// The content scan's verdicts are kept by the text's sha256, for the texts it passed only:
/// a warm run trusts them (same bytes, same scanner), a file with a secret is scanned and
/// refused every time, and its hash is never written down. A compile of a few files (a
/// hook's) scans them rather than load the verdicts.
#[test]
fn the_scanners_clean_verdicts_are_kept_and_a_secret_is_refused_warm_too() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    assert!(repo.cache_dir().exists());
    assert_eq!(verdict_files(&repo), Vec::<std::path::PathBuf>::new());
    let token = format!("ghp_{}", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d");
    let secret = format!("export const key = \"{token}\";\n");
    repo.write("src/auth/keys.ts", &secret);
    for i in 0..64 {
        repo.write(
            &format!("src/auth/gen/part{i}.ts"),
            &format!("export const part{i} = {i};\n"),
        );
    }
    let args = [
        "--role",
        "worker",
        "--change",
        "add-auth",
        "--owns",
        "src/auth/**",
        "--max-files",
        "0",
        "--format",
        "json",
    ];
    let cold = repo.curate().args(args).run();
    assert_eq!(cold.code, 0, "{}", cold.stderr);
    let manifest = repo.read(WORKER_MANIFEST);
    assert!(
        !manifest
            .lines()
            .any(|l| l.starts_with('{') && l.contains("keys.ts")),
        "{manifest}"
    );
    assert!(
        cold.json()["excluded"]
            .to_string()
            .contains("src/auth/keys.ts"),
        "{}",
        cold.stdout
    );
    let verdicts = verdict_files(&repo);
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    let text = std::fs::read_to_string(&verdicts[0]).unwrap();
    let stem = verdicts[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        text.starts_with(&format!("curate-token-cache 2 {stem} ")),
        "{text}"
    );
    let sha = |rel: &str| {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(repo.read(rel).as_bytes()))
    };
    // Every file the manifest lists was scanned clean; the secret's file was not.
    for line in manifest.lines().filter(|l| l.starts_with('{')) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let file = v["file"].as_str().unwrap();
        assert!(
            text.contains(&format!("{} 0000000000000000 ", sha(file))),
            "{file} has no verdict:\n{text}"
        );
    }
    assert!(!text.contains(&sha("src/auth/keys.ts")), "{text}");
    assert!(!text.contains(&token), "{text}");
    // Warm: the same manifest, the secret refused again.
    let warm = repo.curate().args(args).run();
    assert_eq!(warm.code, 0, "{}", warm.stderr);
    assert_eq!(repo.read(WORKER_MANIFEST), manifest);
    assert_eq!(cold.json()["excluded"], warm.json()["excluded"]);
    // A file given the secret after a clean verdict is a new text: scanned, refused.
    repo.write(
        "src/auth/login.ts",
        &format!("{}{secret}", repo.read("src/auth/login.ts")),
    );
    let edited = repo.curate().args(args).run();
    let excluded = edited.json()["excluded"].to_string();
    assert!(excluded.contains("src/auth/login.ts"), "{excluded}");
}
