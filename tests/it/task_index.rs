//! The task's words' index (docs/selection.md): a run served from it gives the bytes of a run
//! that reads every file, a file that changed is ranked by its new words, a file that came to
//! hold a secret is neither selected nor served, and a damaged index is ignored. (The index
//! is kept on unix only.)
#![cfg(unix)]

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use crate::related_index::{past, set_mtime};
use crate::{Output, Repo};

/// A repository with no workflow, its files last modified a day ago (so the index keeps
/// them).
pub(crate) fn aged() -> Repo {
    let repo = Repo::empty();
    repo.write("README.md", "# Demo\n\nA demo service.\n")
        .write(
            "docs/auth.md",
            "# Authentication\n\nAccounts lock after repeated failed logins.\nThe lockout window is fifteen minutes.\n",
        )
        .write("docs/billing.md", "# Billing\n\nInvoices are sent monthly.\n")
        .write("docs/deploy.md", "# Deploy\n\nShip the container on Fridays.\n")
        .write("src/auth/session.ts", "export function rotateSession() {}\n")
        .write("src/billing/invoice.ts", "export function invoice() {}\n");
    for f in [
        "README.md",
        "docs/auth.md",
        "docs/billing.md",
        "docs/deploy.md",
        "src/auth/session.ts",
        "src/billing/invoice.ts",
    ] {
        set_mtime(&repo.root.join(f), past(24));
    }
    std::thread::sleep(Duration::from_millis(1100));
    repo
}

pub(crate) const TEXT: &str =
    "Accounts should lock after failed logins; the lockout window is configurable.\n";

fn run(repo: &Repo, extra: &[&str]) -> Output {
    let out = crate::task_words::with_text(repo, TEXT, extra);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out
}

/// The files of the manifest selected as `related`, in order.
pub(crate) fn related(out: &Output) -> Vec<String> {
    out.stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"] == "related")
        .map(|v| v["file"].as_str().unwrap().to_owned())
        .collect()
}

/// The word index files in the cache folder.
fn index_files(repo: &Repo) -> Vec<std::path::PathBuf> {
    let Ok(read) = std::fs::read_dir(repo.cache_dir()) else {
        return Vec::new();
    };
    read.filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("task-words-v"))
        })
        .collect()
}

#[test]
fn a_run_served_from_the_index_gives_the_bytes_of_one_that_reads_every_file() {
    let repo = aged();
    let cold = run(&repo, &[]);
    assert_eq!(related(&cold), ["docs/auth.md"], "{}", cold.stdout);
    let index = index_files(&repo);
    assert_eq!(index.len(), 1, "one index for the repository");
    let written = std::fs::read(&index[0]).unwrap();
    let inode = std::fs::metadata(&index[0]).unwrap().ino();
    let warm = run(&repo, &[]);
    assert_eq!(warm.stdout, cold.stdout);
    // Every file served from it, nothing read: the index is not written again.
    assert_eq!(std::fs::metadata(&index[0]).unwrap().ino(), inode);
    // With no cache at all, and at one thread, the same bytes.
    assert_eq!(run(&repo, &["--no-cache"]).stdout, cold.stdout);
    assert_eq!(run(&repo, &["-j", "1"]).stdout, cold.stdout);
    // A damaged index is ignored, and written anew.
    let mut damaged = written.clone();
    let mid = damaged.len() / 2;
    damaged[mid] ^= 0x5a;
    std::fs::write(&index[0], &damaged).unwrap();
    assert_eq!(run(&repo, &[]).stdout, cold.stdout);
    assert_ne!(std::fs::read(&index[0]).unwrap(), damaged);
}

#[test]
fn a_file_that_changed_is_ranked_by_its_new_words() {
    let repo = aged();
    assert_eq!(related(&run(&repo, &[])), ["docs/auth.md"]);
    // The same size, new words: read again (its stamp moved), not served.
    repo.write(
        "docs/deploy.md",
        "# Lockout\n\nAccounts lock; failed logins.\n",
    );
    let out = run(&repo, &[]);
    assert!(
        related(&out).contains(&"docs/deploy.md".to_owned()),
        "{}",
        out.stdout
    );
    // Aged again, it is kept and served: the same bytes as a run that reads it.
    set_mtime(&repo.root.join("docs/deploy.md"), past(2));
    std::thread::sleep(Duration::from_millis(1100));
    let kept = run(&repo, &[]);
    assert_eq!(kept.stdout, run(&repo, &[]).stdout);
    assert_eq!(kept.stdout, run(&repo, &["--no-cache"]).stdout);
}

#[test]
fn a_file_that_came_to_hold_a_secret_is_neither_selected_nor_served() {
    let repo = aged();
    assert_eq!(related(&run(&repo, &[])), ["docs/auth.md"]);
    let key = "aws_access_key_id = AKIA4Q7ZK2M5XWT3RJ6L\naws_secret_access_key = \"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\"\n";
    let text = format!("{}{key}", repo.read("docs/auth.md"));
    repo.write("docs/auth.md", &text)
        .write("docs/faq.md", "# FAQ\n\nWhy did my account lock?\n");
    set_mtime(&repo.root.join("docs/auth.md"), past(2));
    set_mtime(&repo.root.join("docs/faq.md"), past(2));
    std::thread::sleep(Duration::from_millis(1100));
    for _ in 0..2 {
        let out = run(&repo, &[]);
        assert_eq!(related(&out), ["docs/faq.md"], "{}", out.stdout);
        assert!(!out.all().contains("AKIA4Q7ZK2M5XWT3RJ6L"));
        // Ranked by its path alone, as a run that reads every file ranks it.
        assert_eq!(out.stdout, run(&repo, &["--no-cache"]).stdout);
    }
    // Nothing of the secret is kept.
    for f in index_files(&repo) {
        let bytes = std::fs::read(f).unwrap();
        let has = |w: &[u8]| bytes.windows(w.len()).any(|x| x == w);
        assert!(!has(b"akia4q7zk2m5xwt3rj6l") && !has(b"AKIA4Q7ZK2M5XWT3RJ6L"));
        assert!(!has(b"q8zr3vt1xbn6plm0ws4kd9hf2jc7ye5ua1go8ti3"));
    }
}

#[test]
fn a_code_files_literals_are_kept_with_its_words_and_follow_its_changes() {
    let repo = aged();
    repo.write(
        "web/src/client.ts",
        "export const show = (id: string) => fetch(`/v2/lockouts/${id}`);\n",
    )
    .write(
        "server/handlers.rs",
        "pub fn routes(r: Router) -> Router {\n    r.route(\"/v2/lockouts/:id\", show)\n}\n",
    )
    .write(
        "server/other.rs",
        "pub fn more(r: Router) -> Router {\n    r.route(\"/v2/invoices/:id\", list)\n}\n",
    );
    for f in ["web/src/client.ts", "server/handlers.rs", "server/other.rs"] {
        set_mtime(&repo.root.join(f), past(24));
    }
    std::thread::sleep(Duration::from_millis(1100));
    // The text names the client: the server file that routes the same path is tied to it
    // by that literal alone (no word of the text is in it).
    let text = "Fix the retry in web/src/client.ts when the request fails.\n";
    let run = |extra: &[&str]| {
        let out = crate::task_words::with_text(&repo, text, extra);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out
    };
    let cold = run(&[]);
    assert!(
        related(&cold).contains(&"server/handlers.rs".to_owned()),
        "{}",
        cold.stdout
    );
    assert!(!related(&cold).contains(&"server/other.rs".to_owned()));
    // Served from the index (the literals kept with the words): the same bytes.
    assert_eq!(run(&[]).stdout, cold.stdout);
    assert_eq!(run(&["--no-cache"]).stdout, cold.stdout);
    // The other file comes to route the same path, written in place: tied now, warm as cold.
    repo.write(
        "server/other.rs",
        "pub fn more(r: Router) -> Router {\n    r.route(\"/v2/lockouts/:id/audit\", list)\n}\n",
    );
    set_mtime(&repo.root.join("server/other.rs"), past(2));
    std::thread::sleep(Duration::from_millis(1100));
    let changed = run(&[]);
    assert!(
        related(&changed).contains(&"server/other.rs".to_owned()),
        "{}",
        changed.stdout
    );
    assert_eq!(changed.stdout, run(&["--no-cache"]).stdout);
    assert_eq!(changed.stdout, run(&[]).stdout);
}

#[test]
fn the_names_a_file_may_define_are_kept_and_follow_its_changes() {
    let repo = aged();
    let text = "Call rotateSession() once the password is checked.\n";
    let run = |extra: &[&str]| {
        let out = crate::task_words::with_text(&repo, text, extra);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out
    };
    let files = |out: &Output| -> Vec<String> {
        out.stdout
            .lines()
            .filter(|l| l.contains("defines rotateSession"))
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["file"].to_string())
            .collect()
    };
    let cold = run(&[]);
    assert_eq!(files(&cold), ["\"src/auth/session.ts\""], "{}", cold.stdout);
    // Warm: the index says which files may define the name; the same bytes.
    assert_eq!(run(&[]).stdout, cold.stdout);
    assert_eq!(run(&["--no-cache"]).stdout, cold.stdout);
    // The definition moves to another file, written in place: found there, warm as cold.
    repo.write("src/auth/session.ts", "export const other = 1;\n")
        .write(
            "src/billing/invoice.ts",
            "export function invoice() {}\nexport function rotateSession() {}\n",
        );
    set_mtime(&repo.root.join("src/auth/session.ts"), past(2));
    set_mtime(&repo.root.join("src/billing/invoice.ts"), past(2));
    std::thread::sleep(Duration::from_millis(1100));
    let moved = run(&[]);
    assert_eq!(
        files(&moved),
        ["\"src/billing/invoice.ts\""],
        "{}",
        moved.stdout
    );
    assert_eq!(moved.stdout, run(&["--no-cache"]).stdout);
    assert_eq!(moved.stdout, run(&[]).stdout);
}
