//! The manifest is an output: hand edits are seen, refused, adopted or overwritten on
//! purpose, never lost.

use crate::{Repo, WORKER_LOCK, WORKER_MANIFEST};

const OVERRIDES: &str = "changes/add-auth/analysis/worker-context.overrides.jsonl";

/// A person's edits: a comment, a changed priority, a removed entry, an added one.
fn hand_edit(repo: &Repo) -> String {
    let text = repo.read(WORKER_MANIFEST);
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.insert(
        1,
        "// curation: the delegator says: read the plan twice".to_owned(),
    );
    lines.retain(|l| !l.contains("\"file\":\"changes/add-auth/analysis/login-callers.md\""));
    for l in &mut lines {
        if l.contains("\"file\":\"AI_WORKSPACE.md\"") {
            *l = l.replace("\"priority\":\"medium\"", "\"priority\":\"high\"");
        }
    }
    lines.push("{\"file\":\"docs/guide.md\",\"reason\":\"house style\",\"sections\":[[1,10]],\"priority\":\"medium\",\"kind\":\"truth\"}".to_owned());
    let edited = lines.join("\n") + "\n";
    repo.write(WORKER_MANIFEST, &edited);
    edited
}

#[test]
fn a_hand_edited_manifest_stops_the_compile_and_is_kept() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let edited = hand_edit(&repo);
    let out = repo.compile_worker(&[]);
    assert_eq!(out.code, 1);
    insta::assert_snapshot!("hand_edit_refusal", out.stderr);
    assert_eq!(
        repo.read(WORKER_MANIFEST),
        edited,
        "the edit is left as it is"
    );
    // Commands that write no manifest never refuse.
    assert_eq!(repo.compile_worker(&["--dry-run"]).code, 0);
    assert_eq!(repo.compile_worker(&["--stdout"]).code, 0);
    assert_eq!(repo.read(WORKER_MANIFEST), edited);
}

#[test]
fn adopt_turns_edits_into_overrides_and_keeps_every_one() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    hand_edit(&repo);
    let out = repo.compile_worker(&["--adopt"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "adopted 4 hand edits into changes/add-auth/analysis/worker-context.overrides.jsonl"
        ),
        "{}",
        out.stderr
    );
    insta::assert_snapshot!("adopted_overrides", repo.read(OVERRIDES));
    let manifest = repo.read(WORKER_MANIFEST);
    assert!(manifest.contains("// curation: the delegator says: read the plan twice"));
    assert!(!manifest.contains("\"file\":\"changes/add-auth/analysis/login-callers.md\""));
    assert!(manifest.contains("{\"file\":\"AI_WORKSPACE.md\",\"reason\":\"project truth: constraints and rules\",\"sections\":null,\"priority\":\"high\""));
    assert!(manifest.contains("{\"file\":\"docs/guide.md\",\"reason\":\"house style\",\"sections\":[[1,10]],\"priority\":\"medium\",\"kind\":\"truth\"}"));
    assert!(curate::stages::manifest::is_intact(&manifest));
    // The next plain compile is quiet and keeps all of it.
    let again = repo.compile_worker(&[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(manifest, repo.read(WORKER_MANIFEST));
}

/// A plain comment is kept as a curation line; a line no overrides line can keep (broken
/// JSON, a key no entry has) stops the adoption with its position, nothing written.
#[test]
fn adopt_keeps_a_plain_comment_and_refuses_what_it_would_lose() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let mut edited = repo.read(WORKER_MANIFEST);
    edited.push_str("// ask before touching the routes\n");
    repo.write(WORKER_MANIFEST, &edited);
    let out = repo.compile_worker(&["--adopt"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("adopted 1 hand edit into"),
        "{}",
        out.stderr
    );
    let manifest = repo.read(WORKER_MANIFEST);
    assert!(
        manifest.contains("\n// curation: ask before touching the routes\n"),
        "{manifest}"
    );
    let overrides = repo.read(OVERRIDES);
    for (line, column, bad) in [
        (12, 41, "{\"file\":\"docs/guide.md\",\"priority\":\"high\""),
        (12, 1, "{\"file\":\"docs/guide.md\",\"why\":\"mine\"}"),
    ] {
        let mut edited: Vec<String> = manifest.lines().map(str::to_owned).collect();
        edited.insert(line - 1, bad.to_owned());
        let edited = edited.join("\n") + "\n";
        repo.write(WORKER_MANIFEST, &edited);
        let out = repo.compile_worker(&["--adopt"]);
        assert_eq!(out.code, 1, "{}", out.stderr);
        let first = out.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with(&format!(
                "error: {WORKER_MANIFEST}:{line}:{column}: cannot adopt this line: "
            )),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("hint: nothing was adopted or written"));
        assert_eq!(
            repo.read(WORKER_MANIFEST),
            edited,
            "the edit is left as it is"
        );
        assert_eq!(repo.read(OVERRIDES), overrides);
    }
}

/// Edits no overrides line can keep are refused, nothing written, instead of coming back
/// without a word: a note curate wrote removed or reworded, an entry moved.
#[test]
fn adopt_refuses_a_removed_note_and_a_moved_entry() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(OVERRIDES, "// curation: first note\n");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let manifest = repo.read(WORKER_MANIFEST);
    assert!(manifest.contains("// curation: first note\n"), "{manifest}");
    let removed = manifest.replace("// curation: first note\n", "");
    let reworded = manifest.replace(
        "// curation: first note\n",
        "// curation: first note, revised\n",
    );
    let mut lines: Vec<&str> = manifest.lines().collect();
    let entries: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with('{'))
        .collect();
    lines.swap(entries[0], entries[1]);
    let moved = lines.join("\n") + "\n";
    for (edited, said) in [
        (
            &removed,
            "the note \"first note\" curate wrote is no longer in the manifest",
        ),
        (
            &reworded,
            "the note \"first note\" curate wrote is no longer in the manifest",
        ),
        (&moved, "was moved: the entries' order is curate's"),
    ] {
        repo.write(WORKER_MANIFEST, edited);
        let out = repo.compile_worker(&["--adopt"]);
        assert_eq!(out.code, 1, "{}", out.all());
        assert!(out.stderr.contains(said), "{}", out.stderr);
        assert!(
            out.stderr.contains("hint: nothing was adopted or written"),
            "{}",
            out.stderr
        );
        assert_eq!(
            &repo.read(WORKER_MANIFEST),
            edited,
            "the edit is left as it is"
        );
        assert_eq!(repo.read(OVERRIDES), "// curation: first note\n");
    }
}

#[test]
fn force_overwrites_the_edit() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let original = repo.read(WORKER_MANIFEST);
    hand_edit(&repo);
    let out = repo.compile_worker(&["--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(original, repo.read(WORKER_MANIFEST));
}

#[test]
fn a_manifest_without_a_header_counts_as_hand_written() {
    let repo = Repo::fixture("aiws-basic");
    repo.write(
        WORKER_MANIFEST,
        "{\"file\":\"docs/guide.md\",\"reason\":\"written by hand\",\"priority\":\"high\",\"kind\":\"truth\"}\n",
    );
    let out = repo.compile_worker(&[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = repo.compile_worker(&["--adopt"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        repo.read(WORKER_MANIFEST)
            .contains("{\"file\":\"docs/guide.md\",\"reason\":\"written by hand\"")
    );
}

#[test]
fn the_lock_records_inputs_and_entries() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(
        repo.compile_worker(&["--owns", "src/auth/login.ts"]).code,
        0
    );
    let lock: serde_json::Value = serde_json::from_str(&repo.read(WORKER_LOCK)).unwrap();
    let manifest = repo.read(WORKER_MANIFEST);
    let header = manifest.lines().next().unwrap();
    let digest = &lock["digest"].as_str().unwrap()[..12];
    assert!(
        header.ends_with(&format!("digest={digest}")),
        "{header} vs {digest}"
    );
    assert_eq!(lock["inputs"]["owns"][0], "src/auth/login.ts");
    assert_eq!(lock["inputs"]["caps"]["max_lines"], 4000);
    assert_eq!(lock["inputs"]["encoding"], "o200k_base");
    let login = lock["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == "src/auth/login.ts")
        .unwrap();
    assert_eq!(login["lines"], 83);
    assert_eq!(login["sha256"].as_str().unwrap().len(), 64);
    assert!(login["tokens"].as_u64().unwrap() > 0);
}

#[test]
fn a_removed_entry_with_glob_characters_in_its_name_stays_removed() {
    // Regression: --adopt escaped the path with backslashes, which the drop glob's path
    // normalisation turned into `/`, so the drop matched nothing and the entry came back.
    let repo = Repo::fixture("aiws-basic");
    repo.write("docs/notes[v2].md", "# notes\n");
    assert_eq!(
        repo.compile_worker(&["--owns", "docs/notes[[]v2[]].md"])
            .code,
        0
    );
    let text = repo.read(WORKER_MANIFEST);
    assert!(text.contains("{\"file\":\"docs/notes[v2].md\""), "{text}");
    let edited: String = text
        .lines()
        .filter(|l| !l.contains("docs/notes[v2].md"))
        .map(|l| format!("{l}\n"))
        .collect();
    repo.write(WORKER_MANIFEST, &edited);
    let out = repo.compile_worker(&["--owns", "docs/notes[[]v2[]].md", "--adopt"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let manifest = repo.read(WORKER_MANIFEST);
    assert!(
        !manifest.contains("{\"file\":\"docs/notes[v2].md\""),
        "{manifest}"
    );
    assert!(
        manifest.contains("dropped \"docs/notes[v2].md\""),
        "{manifest}"
    );
}

/// A secret typed into the manifest by hand is refused by `--adopt` at its line before
/// anything is written: no overrides file is made that holds it.
#[test]
fn adopt_refuses_a_secret_before_writing_the_overrides_file() {
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    let token = format!("ghp_{}", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d");
    let text = repo.read(WORKER_MANIFEST);
    let at = text
        .lines()
        .position(|l| l.contains("\"file\":\"AI_WORKSPACE.md\""))
        .unwrap();
    let edited: String = text
        .lines()
        .map(|l| {
            if l.contains("\"file\":\"AI_WORKSPACE.md\"") {
                l.replace("\"priority\":\"medium\"", "\"priority\":\"high\"")
                    .replace("\"reason\":\"", &format!("\"reason\":\"note {token} "))
            } else {
                l.to_owned()
            }
        })
        .map(|l| l + "\n")
        .collect();
    repo.write(WORKER_MANIFEST, &edited);
    let out = repo.compile_worker(&["--adopt"]);
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr.contains(&format!(
            "{WORKER_MANIFEST}:{}: holds a secret (github-pat)",
            at + 1
        )),
        "{}",
        out.stderr
    );
    assert!(!out.all().contains(&token));
    assert!(!repo.exists(OVERRIDES));
    assert_eq!(repo.read(WORKER_MANIFEST), edited);
}

/// An adopted edit the compile then refuses (an entry for a file not made yet) puts the
/// overrides file back as it was, absent or holding a person's lines: nothing adopted,
/// the edit kept in the manifest, and the next compile does not fail on a line nobody wrote.
#[test]
fn an_adoption_the_compile_refuses_leaves_the_overrides_file_as_it_was() {
    for before in [None, Some("// the delegator's own line\n")] {
        let repo = Repo::fixture("aiws-basic");
        assert_eq!(repo.compile_worker(&[]).code, 0);
        if let Some(text) = before {
            repo.write(OVERRIDES, text);
        }
        let edited = repo.read(WORKER_MANIFEST)
            + "{\"file\":\"docs/nope.md\",\"priority\":\"low\",\"kind\":\"adapter\"}\n";
        repo.write(WORKER_MANIFEST, &edited);
        let out = repo.compile_worker(&["--adopt"]);
        assert_eq!(out.code, 1, "{}", out.all());
        assert!(
            out.stderr.contains("\"docs/nope.md\" does not exist")
                && out.stderr.contains("nothing adopted"),
            "{}",
            out.stderr
        );
        match before {
            None => assert!(!repo.exists(OVERRIDES), "{}", repo.read(OVERRIDES)),
            Some(text) => assert_eq!(repo.read(OVERRIDES), text),
        }
        assert_eq!(repo.read(WORKER_MANIFEST), edited, "the edit is kept");
        assert_eq!(repo.compile_worker(&["--dry-run"]).code, 0);
    }
}

/// `--adopt` with an `--overrides` file outside the repository: refused in plain words
/// (curate writes only inside the repository), the hand edit kept, the file untouched.
#[test]
fn adopt_into_an_overrides_file_outside_the_repository_is_refused_plainly() {
    let repo = Repo::fixture("aiws-basic");
    let first = repo
        .curate()
        .args(["--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(first.code, 0, "{}", first.all());
    let edited = hand_edit(&repo);
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("o.jsonl");
    std::fs::write(&file, "// mine\n").unwrap();
    let out = repo
        .curate()
        .args([
            "--role",
            "worker",
            "--change",
            "add-auth",
            "--adopt",
            "--overrides",
        ])
        .args([file.to_str().unwrap()])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("--adopt writes the overrides file, and")
            && out.stderr.contains("is outside the repository"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("through a link"), "{}", out.stderr);
    assert_eq!(repo.read(WORKER_MANIFEST), edited);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "// mine\n");
}

/// `--files-from -` read once: an adoption compiles again with the list it was given, not
/// with a second read of a standard input that is empty by then.
#[test]
fn adopt_keeps_the_list_read_from_standard_input() {
    let repo = Repo::fixture("aiws-basic");
    let with_list = |extra: &[&str]| {
        repo.curate()
            .args([
                "--role",
                "worker",
                "--change",
                "add-auth",
                "--files-from",
                "-",
            ])
            .args(extra)
            .stdin(b"src/api/routes.ts\n")
            .run()
    };
    let first = with_list(&[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let routes = "{\"file\":\"src/api/routes.ts\"";
    assert!(repo.read(WORKER_MANIFEST).contains(routes));
    hand_edit(&repo);
    let out = with_list(&["--adopt"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("adopted 4 hand edits"),
        "{}",
        out.stderr
    );
    let manifest = repo.read(WORKER_MANIFEST);
    assert!(manifest.contains(routes), "{manifest}");
    assert!(manifest.contains("// curation: the delegator says: read the plan twice"));
}
