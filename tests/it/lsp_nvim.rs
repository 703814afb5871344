//! A real editor's LSP client drives `curate lsp`: Neovim (Debian's, 0.7 or later) headless
//! runs `tests/editors/nvim.lua` on the fixture. It reads the diagnostics of a broken
//! overrides line at its place (cleared when the line is fixed), runs the preview (equal to
//! `curate preview`'s prompt byte for byte) whose read-only document the server shows,
//! hovers a manifest entry, applies "add to worker's context for add-auth" and sees the next
//! preview and the document change; then types a line in the overrides file, not saved, and
//! sees the document follow (equal, once saved, to `curate preview` byte for byte). Skipped, with one line
//! on stderr, where `nvim` is not installed (`.ci/run` installs it and sets
//! `CURATE_REQUIRE_NVIM`, which turns the skip into a failure).

use std::process::Command;

use serde_json::Value;

use crate::{Repo, WORKER_MANIFEST};

const OVERRIDES: &str = "changes/add-auth/analysis/worker-context.overrides.jsonl";

fn nvim() -> Option<()> {
    let found = Command::new("nvim").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("CURATE_REQUIRE_NVIM").is_none(),
            "CURATE_REQUIRE_NVIM is set but nvim is not found"
        );
        eprintln!("skipped: nvim is not installed (apt-get install neovim)");
    }
    found.then_some(())
}

#[test]
fn neovim_shows_the_diagnostics_runs_the_preview_hovers_and_adds_to_the_context() {
    if nvim().is_none() {
        return;
    }
    let repo = Repo::fixture("aiws-basic");
    assert_eq!(repo.compile_worker(&[]).code, 0);
    repo.write(
        OVERRIDES,
        "// curation: from the editor\n{\"file\": \"src/api/routes.ts\" \"kind\": \"x\"}\n",
    );
    let out = repo.root.with_file_name("nvim-seen.json");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/editors/nvim.lua");
    let run = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .current_dir(&repo.root)
        .env("CURATE_BIN", env!("CARGO_BIN_EXE_curate"))
        .env("CURATE_NVIM_ROOT", &repo.root)
        .env("CURATE_NVIM_OUT", &out)
        .env("CURATE_CACHE_DIR", repo.cache_dir())
        .env("NO_COLOR", "1")
        .env("XDG_STATE_HOME", repo.root.with_file_name("nvim-state"))
        .env("XDG_DATA_HOME", repo.root.with_file_name("nvim-data"))
        .output()
        .unwrap();
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap_or_else(|e| {
        panic!(
            "nvim wrote nothing ({e}): {}",
            String::from_utf8_lossy(&run.stderr)
        )
    }))
    .unwrap();
    assert!(seen.get("error").is_none(), "{seen:#}");

    // The missing comma: line 2, at the `"kind"` it runs into (0-based 1:29, as nvim counts).
    let d = &seen["diagnostics"];
    assert_eq!(d.as_array().unwrap().len(), 1, "{d}");
    assert_eq!(d[0]["lnum"], 1);
    assert_eq!(d[0]["col"], 29);
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid JSON"),
        "{d}"
    );
    assert_eq!(seen["after_fix"], 0, "cleared when fixed");

    assert_eq!(seen["lens"]["command"], "curate.preview");
    let hover = seen["hover"].as_str().unwrap();
    assert!(
        hover.contains("kept · ") && hover.contains(" tokens"),
        "{hover}"
    );

    let before = seen["preview"].as_str().unwrap();
    let after = seen["preview_after_add"].as_str().unwrap();
    assert!(!before.contains("package.json"), "{before}");
    assert!(after.contains("package.json"), "the next preview has it");
    assert!(
        repo.read(OVERRIDES)
            .contains("{\"drop\": \"src/tokenizer.rs\"}"),
        "the fix nvim saved"
    );
    assert_eq!(
        after,
        seen["cli_after_add"].as_str().unwrap(),
        "byte for byte"
    );
    assert!(repo.exists(WORKER_MANIFEST));

    // The preview document: shown, read-only, the prompt, following the add.
    assert_eq!(
        seen["doc"].as_str().unwrap(),
        before,
        "the document at first"
    );
    assert_eq!(seen["doc_readonly"], true, "{seen:#}");
    assert_eq!(seen["doc_modifiable"], false, "{seen:#}");
    assert_eq!(
        seen["doc_after_add"].as_str().unwrap(),
        after,
        "after the add"
    );

    // Typed, not saved: the document followed; saved, `curate preview` prints it.
    assert_eq!(seen["overrides_modified"], true, "not saved while followed");
    let typed = seen["doc_after_typing"].as_str().unwrap();
    assert!(!typed.contains("=== package.json ==="), "{typed}");
    assert!(
        typed.contains("- package.json: dropped by "),
        "the drop typed: {typed}"
    );
    assert!(
        repo.read(OVERRIDES)
            .ends_with("{\"drop\": \"package.json\"}\n")
    );
    let cli = repo
        .curate()
        .args(["preview", "--role", "worker", "--change", "add-auth"])
        .run();
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    assert_eq!(typed, cli.stdout, "byte for byte");
}
