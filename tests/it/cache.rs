//! The on-disk caches (token counts, the content scan's verdicts): used, bounded by their
//! own checks, never trusted when damaged.

use crate::{Repo, WORKER_LOCK, WORKER_MANIFEST};

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

/// Sets the modification time of `rel` back to `then` (its change time moves to now: what a
/// tool that restores times after an edit does).
fn set_modified(repo: &Repo, rel: &str, then: std::time::SystemTime) {
    let f = std::fs::File::options()
        .write(true)
        .open(repo.root.join(rel))
        .unwrap();
    f.set_modified(then).unwrap();
}

/// A compile of many files keeps each file's stamp with its hash and lines (`known-v1-*.bin`)
/// and, warm, does not read a file whose stamp is unchanged: the same manifest and the same
/// bundle as a cold run. A file rewritten with the same size and its modification time set
/// back is read again (its change time moved): its new hash is in the manifest, and a
/// secret planted that way is refused, never rendered.
#[cfg(target_os = "linux")]
#[test]
fn a_file_known_by_its_stamp_is_read_again_once_it_changes_whatever_its_times_say() {
    let repo = Repo::fixture("aiws-basic");
    for i in 0..70 {
        repo.write(
            &format!("src/auth/gen/part{i:02}.ts"),
            &format!("export const part{i:02} = \"{}\";\n", "x".repeat(40)),
        );
    }
    // A stamp younger than a second is never trusted: let the files age.
    std::thread::sleep(std::time::Duration::from_millis(1100));
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
    let bundle = |out: &str| {
        let rendered = repo
            .curate()
            .args(["render", "--template", "bundle", "-q", "-o", out])
            .args(&args[..8])
            .run();
        assert_eq!(rendered.code, 0, "{}", rendered.stderr);
        repo.read(out)
    };
    let cold = repo.curate().args(args).run();
    assert_eq!(cold.code, 0, "{}", cold.stderr);
    let manifest = repo.read(WORKER_MANIFEST);
    let known: Vec<_> = std::fs::read_dir(repo.cache_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("known-v1-"))
        .collect();
    assert_eq!(known.len(), 1, "{known:?}");
    let cold_bundle = bundle("cold.md");
    // Warm: the same bytes.
    let warm = repo.curate().args(args).run();
    assert_eq!(warm.code, 0, "{}", warm.stderr);
    assert_eq!(repo.read(WORKER_MANIFEST), manifest);
    assert_eq!(bundle("warm.md"), cold_bundle);
    // The same size, other bytes, the old modification time.
    let then = std::fs::metadata(repo.root.join("src/auth/gen/part07.ts"))
        .unwrap()
        .modified()
        .unwrap();
    let edited = format!("export const part07 = \"{}\";\n", "y".repeat(40));
    repo.write("src/auth/gen/part07.ts", &edited);
    set_modified(&repo, "src/auth/gen/part07.ts", then);
    let again = repo.curate().args(args).run();
    assert_eq!(again.code, 0, "{}", again.stderr);
    let sha = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(edited.as_bytes()))
    };
    let lock: serde_json::Value = serde_json::from_str(&repo.read(WORKER_LOCK)).unwrap();
    let entry = lock["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == "src/auth/gen/part07.ts")
        .unwrap();
    assert_eq!(entry["sha256"], sha.as_str(), "{entry}");
    assert!(bundle("edited.md").contains(&"y".repeat(40)));
    // A secret of the same size, the old time again: refused.
    let token = format!("ghp_{}", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d");
    let secret = format!("export const part08 = \"{token}\";\n");
    let then = std::fs::metadata(repo.root.join("src/auth/gen/part08.ts"))
        .unwrap()
        .modified()
        .unwrap();
    repo.write("src/auth/gen/part08.ts", &secret);
    set_modified(&repo, "src/auth/gen/part08.ts", then);
    let refused = repo.curate().args(args).run();
    assert_eq!(refused.code, 0, "{}", refused.stderr);
    assert!(
        refused.json()["excluded"]
            .to_string()
            .contains("src/auth/gen/part08.ts"),
        "{}",
        refused.stdout
    );
    assert!(!bundle("refused.md").contains(&token));
}
