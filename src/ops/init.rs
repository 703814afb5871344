//! `init`: write the embedded contracts (and the templates) into a repository, a
//! `.curate/config.toml` for a workflow, or a host's wiring (merged, idempotent). Never
//! over a file that exists unless forced. What was written comes back as data: the front-end
//! says it.

use crate::error::{Error, Result};
use crate::hosts::HostKind;
use crate::settings::Workspace;
use crate::stages::contract;

/// Writes the contracts the workflow starts from and their schema (with `templates`, the
/// embedded templates too, under `.curate/templates/`); the paths written, in order.
///
/// # Errors
/// A file that exists without `force` (nothing is written then); a write that fails.
pub fn contracts(ws: &Workspace, templates: bool, force: bool) -> Result<Vec<String>> {
    let mut files: Vec<(String, &str)> = vec![
        (
            contract::REPO_PATHS[0].to_owned(),
            ws.workflow().contracts(),
        ),
        (
            "contracts/workflow-delegation-contracts.schema.json".to_owned(),
            contract::SCHEMA,
        ),
    ];
    if templates {
        for (name, text) in crate::render::TEMPLATES {
            files.push((format!(".curate/templates/{name}"), text));
        }
    }
    let existing: Vec<&str> = files
        .iter()
        .filter(|(p, _)| ws.root.join(p).exists())
        .map(|(p, _)| p.as_str())
        .collect();
    if !existing.is_empty() && !force {
        return Err(Error::Failed(format!(
            "not overwriting {} (use --force to overwrite)",
            existing.join(", ")
        )));
    }
    for (path, text) in &files {
        crate::util::atomic::write_bounded(
            &ws.root.join(path),
            crate::util::atomic::Bound::Inside(&ws.root),
            text.as_bytes(),
        )?;
    }
    Ok(files.into_iter().map(|(p, _)| p).collect())
}

/// Writes `.curate/config.toml` for `profile` (never over one that exists without `force`).
///
/// # Errors
/// The file exists without `force`; the write fails.
pub fn config(ws: &Workspace, profile: crate::config::Wf, force: bool) -> Result<()> {
    let path = ws.root.join(crate::config::PATH);
    if std::fs::symlink_metadata(&path).is_ok() && !force {
        return Err(Error::Failed(format!(
            "not overwriting {} (use --force to overwrite)",
            crate::config::PATH
        )));
    }
    crate::util::atomic::write_bounded(
        &path,
        crate::util::atomic::Bound::Inside(&ws.root),
        crate::config::template(profile, &ws.root).as_bytes(),
    )?;
    Ok(())
}

/// What wiring a host changed, and what its user should know.
pub struct Wiring {
    /// What changed in the host's file (empty: already wired).
    pub changes: Vec<String>,
    /// What changed in Codex's `.codex/config.toml` (`mcp` only).
    pub codex_mcp: Vec<String>,
    /// Another injector of the same dispatches.
    pub conflicts: Vec<String>,
    /// The workflow's own injector, which reads the list curate writes.
    pub injector: Option<String>,
}

/// Writes or merges `host`'s wiring to run this binary (`.mcp.json`: `curate` from the
/// PATH, a committed, shared file).
///
/// # Errors
/// A host file that is not ours without `force`; a write that fails.
pub fn host(ws: &Workspace, host: HostKind, force: bool) -> Result<Wiring> {
    let program = if host == HostKind::Mcp {
        "curate".to_owned()
    } else {
        crate::hosts::this_binary().program
    };
    // A workflow whose injector reads the author's lists: compile a list when it is edited.
    let on_edit = ws.workflow().authored();
    let changes = crate::hosts::install(&ws.root, host, force, &program, on_edit)?;
    // Codex reads MCP servers from its own `.codex/config.toml`.
    let codex_mcp = if host == HostKind::Mcp {
        crate::hosts::codex::install_mcp(&ws.root, force)?
    } else {
        Vec::new()
    };
    Ok(Wiring {
        changes,
        codex_mcp,
        conflicts: crate::hosts::conflicts(&ws.root, host),
        injector: ws.workflow().injector(&ws.root),
    })
}

/// A warning about the binary `host`'s wiring would run (a temporary path), said before the
/// wiring is written (`.mcp.json` names `curate` from the PATH: none).
#[must_use]
pub fn binary_warning(host: HostKind) -> Option<String> {
    (host != HostKind::Mcp)
        .then(|| crate::hosts::this_binary().warning)
        .flatten()
}

/// What a Codex user must still do by hand: trust the project, approve the two hooks (the
/// lines Codex's hooks review would write, for the user's own `config.toml`).
#[must_use]
pub fn codex_still_to_do(root: &std::path::Path) -> String {
    use crate::hosts::codex;
    let source = root.join(codex::HOOKS_PATH);
    let hooks = crate::trust::admit::read_repo_file(root, &source)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .map(|v| codex::hooks(&source, &v, None))
        .unwrap_or_default();
    let config = codex::home().map_or_else(
        || "~/.codex/config.toml".to_owned(),
        |h| h.join("config.toml").display().to_string(),
    );
    let project = serde_json::to_string(&root.display().to_string()).unwrap_or_default();
    let approvals = codex::approval_lines(&hooks)
        .lines()
        .map(|l| format!("       {l}\n"))
        .collect::<String>();
    format!(
        "Codex runs these hooks only once you have, by hand (curate approves nothing itself):\n\
         \x20 1. trusted this project: accept Codex's trust prompt when `codex` starts here (or run `codex exec --trust` once), which adds to {config}:\n\
         \x20      [projects.{project}]\n\
         \x20      trust_level = \"trusted\"\n\
         \x20 2. approved both hooks: in Codex's hooks review, or by adding to {config} (an edit of an entry un-approves it):\n\
         {approvals}\
         \x20 Until then `codex exec` skips them without a word and the sub-agents get no curated context.\n"
    )
}
