//! The related-files index (docs/budgets.md#related-files): a warm run gives the cold run's
//! bytes, a file that changed is read again however it changed, a file that became a secret
//! holder is never related, and a damaged index is ignored.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::{Output, Repo};

/// A time well in the past, for the fixture's files.
pub(crate) fn past(hours: u64) -> SystemTime {
    SystemTime::now() - Duration::from_secs(hours * 3600)
}

pub(crate) fn set_mtime(path: &Path, at: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// The fixture, its files last modified a day ago and changed (ctime) more than the racy
/// second before the first run, so that the index keeps them.
pub(crate) fn aged_fixture() -> Repo {
    let repo = Repo::fixture("aiws-basic");
    for e in walkdir::WalkDir::new(&repo.root) {
        let e = e.unwrap();
        if e.file_type().is_file() {
            set_mtime(e.path(), past(24));
        }
    }
    std::thread::sleep(Duration::from_millis(1100));
    repo
}

/// `--related 3000` owning the login module, every file a candidate, the manifest on stdout.
fn related(repo: &Repo, extra: &[&str]) -> Output {
    let mut args = vec!["--related", "3000", "--max-files", "0", "--stdout"];
    args.extend_from_slice(extra);
    let out = crate::compile::related(repo, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out
}

/// The manifest's line for `file`, if any.
fn line_of<'a>(out: &'a Output, file: &str) -> Option<&'a str> {
    out.stdout
        .lines()
        .find(|l| l.starts_with(&format!("{{\"file\":\"{file}\"")))
}

/// The files of the cache folder whose names start with `prefix`, sorted.
fn cache_files(repo: &Repo, prefix: &str) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(repo.cache_dir())
        .map(|r| {
            r.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

fn index_files(repo: &Repo) -> Vec<std::path::PathBuf> {
    cache_files(repo, "related-v")
}

#[test]
fn a_warm_run_gives_the_cold_runs_bytes_at_any_thread_count() {
    let repo = aged_fixture();
    let cold = related(&repo, &["--no-cache"]);
    assert!(index_files(&repo).is_empty(), "--no-cache writes no index");
    assert!(
        line_of(&cold, "src/auth/session.ts").is_some(),
        "{}",
        cold.stdout
    );
    let building = related(&repo, &["-j", "2"]);
    let index = index_files(&repo);
    assert_eq!(index.len(), 1, "one index for the repository");
    let written = std::fs::read(&index[0]).unwrap();
    for jobs in ["1", "2", "4"] {
        let warm = related(&repo, &["-j", jobs]);
        assert_eq!(warm.stdout, cold.stdout, "-j {jobs}");
    }
    assert_eq!(building.stdout, cold.stdout);
    // Nothing changed: the index is not written again.
    assert_eq!(std::fs::read(&index[0]).unwrap(), written);
    assert_eq!(
        related(&repo, &["-j", "1", "--no-cache"]).stdout,
        cold.stdout
    );
}

#[test]
fn a_changed_file_is_read_again_however_it_changed() {
    let repo = aged_fixture();
    let before = related(&repo, &[]);
    assert_eq!(related(&repo, &[]).stdout, before.stdout, "from the index");

    // Same size, a new modification time: routes.ts no longer calls `login`.
    let routes = repo.root.join("src/api/routes.ts");
    let text = repo
        .read("src/api/routes.ts")
        .replace("LoginService", "XoginService")
        .replace("login", "xogin");
    std::fs::write(&routes, &text).unwrap();
    set_mtime(&routes, past(12));
    // A new size, the same modification time: session.ts's outline moves a line down.
    let session = repo.root.join("src/auth/session.ts");
    let kept = mtime(&session);
    let text = format!("// moved\n{}", repo.read("src/auth/session.ts"));
    std::fs::write(&session, text).unwrap();
    set_mtime(&session, kept);
    // Replaced by another file of the same size and modification time: credentials.ts's
    // lines move a line down too.
    let credentials = repo.root.join("src/auth/credentials.ts");
    let kept = mtime(&credentials);
    let old = repo.read("src/auth/credentials.ts");
    let text = format!("\n{}", &old[..old.len() - 1]);
    let swap = repo.root.join("src/auth/credentials.ts.new");
    std::fs::write(&swap, &text).unwrap();
    set_mtime(&swap, kept);
    std::fs::rename(&swap, &credentials).unwrap();

    let after = related(&repo, &[]);
    let cold = related(&repo, &["--no-cache"]);
    assert_eq!(after.stdout, cold.stdout);
    // Each change shows: routes.ts's reason no longer says it uses `login`, the others'
    // outlines moved.
    for file in [
        "src/api/routes.ts",
        "src/auth/session.ts",
        "src/auth/credentials.ts",
    ] {
        let (was, is) = (line_of(&before, file), line_of(&after, file));
        assert!(was.is_some() && is.is_some(), "{file}: {}", after.stdout);
        assert_ne!(was, is, "{file}");
    }
    assert!(
        !line_of(&after, "src/api/routes.ts")
            .unwrap()
            .contains("`login`")
    );
    // And the next run, from the index written anew, says the same.
    assert_eq!(related(&repo, &[]).stdout, cold.stdout);
}

#[test]
fn a_file_that_becomes_a_secret_holder_is_never_related() {
    let repo = aged_fixture();
    let before = related(&repo, &[]);
    assert!(
        line_of(&before, "tests/auth/login.test.ts").is_some(),
        "{}",
        before.stdout
    );
    assert_eq!(related(&repo, &[]).stdout, before.stdout, "from the index");

    // The same size and modification time, a key on its first line.
    let test = repo.root.join("tests/auth/login.test.ts");
    let kept = mtime(&test);
    let old = repo.read("tests/auth/login.test.ts");
    let key = "const k = 'aws_access_key_id = AKIA4Q7ZK2M5XWT3RJ6L; aws_secret_access_key = \"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\"';\n";
    let text = format!("{key}{}", &old[..old.len() - key.len()]);
    assert_eq!(text.len(), old.len());
    std::fs::write(&test, &text).unwrap();
    set_mtime(&test, kept);

    for extra in [&[][..], &["-j", "1"], &["--no-cache"]] {
        let out = related(&repo, extra);
        assert!(
            line_of(&out, "tests/auth/login.test.ts").is_none(),
            "{extra:?}: {}",
            out.stdout
        );
        assert!(!out.stdout.contains("AKIA4Q7ZK2M5XWT3RJ6L"));
        assert!(
            line_of(&out, "src/auth/session.ts").is_some(),
            "{}",
            out.stdout
        );
    }
    // Nor does the index hold its words.
    for file in index_files(&repo) {
        let bytes = std::fs::read(file).unwrap();
        assert!(
            !bytes
                .windows(20)
                .any(|w| w == b"AKIA4Q7ZK2M5XWT3RJ6L" || w == b"q8Zr3Vt1XbN6pLm0Ws4K"),
            "the index holds the key"
        );
    }
}

/// A file whose path holds a token is never read by the search: not ranked, not counted in
/// the budget or the note, and neither its path nor its folder's name is kept in the cache
/// (the index and the listings), cold or warm.
#[test]
fn a_path_that_holds_a_token_is_never_related_nor_kept_in_the_cache() {
    let repo = aged_fixture();
    let clean = related(&repo, &[]);
    let token = format!("ghp_{}", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d");
    let file = format!("src/{token}/pathy.ts");
    repo.write(
        &file,
        "import { LoginService } from \"../auth/login\";\nexport function pathy(s: LoginService) { return s; }\n",
    );
    set_mtime(&repo.root.join(&file), past(24));
    std::thread::sleep(Duration::from_millis(1100));
    for run in ["cold", "warm"] {
        let out = related(&repo, &[]);
        assert_eq!(out.stdout, clean.stdout, "{run}");
        assert!(!out.all().contains(&token), "{run}");
        let cached = cache_files(&repo, "");
        assert!(
            cached
                .iter()
                .any(|f| f.to_string_lossy().contains("related-v"))
        );
        assert!(
            cached
                .iter()
                .any(|f| f.to_string_lossy().contains("listing-v"))
        );
        for f in cached {
            let bytes = std::fs::read(&f).unwrap();
            assert!(
                !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
                "{run}: {} holds the token",
                f.display()
            );
        }
    }
}

#[test]
fn a_damaged_index_is_ignored_and_written_anew() {
    let repo = aged_fixture();
    let cold = related(&repo, &["--no-cache"]);
    related(&repo, &[]);
    let index = index_files(&repo).pop().unwrap();
    each_damage_is_ignored_and_written_anew(&repo, &index, &cold);
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(repo.cache_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains(".tmp-")), "{names:?}");
}

fn listing_files(repo: &Repo) -> Vec<std::path::PathBuf> {
    cache_files(repo, "listing-v")
}

#[cfg(unix)]
#[test]
fn a_folder_that_changed_after_a_warm_run_is_listed_again_however_it_changed() {
    let repo = aged_fixture();
    let before = related(&repo, &[]);
    assert_eq!(
        listing_files(&repo).len(),
        1,
        "the folders' listings are kept"
    );
    assert!(related(&repo, &["--no-cache"]).stdout == before.stdout);
    assert!(line_of(&before, "src/api/routes.ts").is_some());

    // A file added to a folder kept, a folder added, a folder replaced by a link out of the
    // repository whose target holds a file that calls the owned module.
    let calls = "import { LoginService } from \"../auth/login\";\n\
                 export function signIn(s: LoginService) { return s.login(\"a\", \"b\"); }\n";
    std::fs::write(repo.root.join("src/auth/extra.ts"), calls).unwrap();
    std::fs::create_dir(repo.root.join("src/admin")).unwrap();
    std::fs::write(repo.root.join("src/admin/panel.ts"), calls).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("stolen.ts"), calls).unwrap();
    std::fs::remove_file(repo.root.join("src/api/routes.ts")).unwrap();
    std::fs::remove_dir(repo.root.join("src/api")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.root.join("src/api")).unwrap();

    for jobs in ["1", "2"] {
        let after = related(&repo, &["-j", jobs]);
        assert_eq!(
            after.stdout,
            related(&repo, &["--no-cache", "-j", jobs]).stdout
        );
        assert!(
            line_of(&after, "src/auth/extra.ts").is_some(),
            "{}",
            after.stdout
        );
        assert!(
            line_of(&after, "src/admin/panel.ts").is_some(),
            "{}",
            after.stdout
        );
        assert!(
            line_of(&after, "src/api/routes.ts").is_none(),
            "{}",
            after.stdout
        );
        assert!(!after.stdout.contains("stolen"), "{}", after.stdout);
    }
}

#[test]
fn a_damaged_listing_is_ignored_and_written_anew() {
    let repo = aged_fixture();
    let cold = related(&repo, &["--no-cache"]);
    assert!(
        listing_files(&repo).is_empty(),
        "--no-cache keeps no listing"
    );
    related(&repo, &[]);
    let Some(listing) = listing_files(&repo).pop() else {
        panic!("no listing kept");
    };
    each_damage_is_ignored_and_written_anew(&repo, &listing, &cold);
}

/// The cache file `file`, damaged each way in turn (not one, cut in half, a byte flipped,
/// empty): the next run gives `cold`'s bytes and writes the file anew.
fn each_damage_is_ignored_and_written_anew(repo: &Repo, file: &Path, cold: &Output) {
    let good = std::fs::read(file).unwrap();
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x20;
    for damaged in [
        b"not a cache file".to_vec(),
        good[..good.len() / 2].to_vec(),
        flipped,
        Vec::new(),
    ] {
        std::fs::write(file, &damaged).unwrap();
        assert_eq!(related(repo, &[]).stdout, cold.stdout);
        assert_eq!(std::fs::read(file).unwrap(), good, "written anew");
    }
}
