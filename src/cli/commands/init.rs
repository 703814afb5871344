//! `curate init`: write the embedded contracts (and, with `--templates`, the templates)
//! into a repository, never over a file that exists unless `--force`; with `--profile` the
//! config; with `--host` a host's wiring (merged, idempotent).

use crate::cli::args::{GlobalArgs, InitArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::error::{Error, Result};
use crate::stages::contract;

/// Runs `curate init`.
pub fn run(g: &GlobalArgs, a: &InitArgs) -> Result<ExitCode> {
    let printer = Printer::new(g);
    let ws = resolve::workspace_without_config(g)?;
    if let Some(host) = a.host {
        return wire_host(&ws, printer, host, a.force);
    }
    if let Some(profile) = g.profile {
        return write_config(&ws, printer, a, profile);
    }
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
    if a.templates {
        for (name, text) in crate::render::TEMPLATES {
            files.push((format!(".curate/templates/{name}"), text));
        }
    }
    let existing: Vec<&str> = files
        .iter()
        .filter(|(p, _)| ws.root.join(p).exists())
        .map(|(p, _)| p.as_str())
        .collect();
    if !existing.is_empty() && !a.force {
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
        printer.report(&format!("wrote {path}\n"));
    }
    Ok(ExitCode::Ready)
}

/// `init --host`: writes or merges the host's wiring; says what changed.
fn wire_host(
    ws: &crate::settings::Workspace,
    printer: Printer,
    host: crate::hosts::HostKind,
    force: bool,
) -> Result<ExitCode> {
    let binary = crate::hosts::this_binary();
    // `.mcp.json` is a committed, shared file: its entry stays `curate` from the PATH.
    let program = if host == crate::hosts::HostKind::Mcp {
        "curate".to_owned()
    } else {
        if let Some(w) = &binary.warning {
            printer.report(&format!("warning: {w}\n"));
        }
        binary.program.clone()
    };
    // A workflow whose injector reads the author's lists: compile a list when it is edited.
    let on_edit = ws.workflow().authored();
    let changes = crate::hosts::install(&ws.root, host, force, &program, on_edit)?;
    // Codex reads MCP servers from its own `.codex/config.toml`.
    let codex_mcp = if host == crate::hosts::HostKind::Mcp {
        crate::hosts::codex::install_mcp(&ws.root, force)?
    } else {
        Vec::new()
    };
    for c in crate::hosts::conflicts(&ws.root, host) {
        printer.report(&format!("warning: {c}\n"));
    }
    if let Some(injector) = ws.workflow().injector(&ws.root) {
        printer.report(&format!(
            "note: {injector} (the {} workflow's own hook) injects the list curate writes: on a dispatch curate writes the list and injects nothing itself, so each dispatch gets its context once{}\n",
            ws.workflow().name(),
            match host {
                crate::hosts::HostKind::ClaudeCode => {
                    "; a list the lead edits is compiled right after the edit (PostToolUse), before Trellis' hook reads it"
                }
                crate::hosts::HostKind::Opencode => {
                    "; a list the lead edits is compiled right after the edit (the plugin's tool.execute.after), before Trellis' plugin reads it"
                }
                crate::hosts::HostKind::Mcp
                | crate::hosts::HostKind::Codex
                | crate::hosts::HostKind::Copilot
                | crate::hosts::HostKind::Gemini => "",
            }
        ));
    }
    if !printer.quiet {
        let path = host.path();
        if changes.is_empty() {
            printer.err(&format!("{path} already wired; nothing changed\n"));
        } else {
            let mut text = format!("updated {path}:\n");
            for c in &changes {
                text.push_str(&format!("  {c}\n"));
            }
            printer.err(&text);
        }
        if host == crate::hosts::HostKind::Mcp {
            let path = crate::hosts::codex::CONFIG_PATH;
            if codex_mcp.is_empty() {
                printer.err(&format!("{path} already wired; nothing changed\n"));
            } else {
                let mut text = format!("updated {path}:\n");
                for c in &codex_mcp {
                    text.push_str(&format!("  {c}\n"));
                }
                printer.err(&text);
            }
            printer.err(
                "note: Codex cuts a tool's result to its output limit (about 12 KB by default): a bundle reaches a Codex model whole through `curate init --host codex`, not through MCP\n",
            );
        } else {
            if host == crate::hosts::HostKind::Codex {
                printer.err(&codex_still_to_do(&ws.root));
            }
            if host == crate::hosts::HostKind::Gemini {
                printer.err(
                    "Gemini CLI runs a project's hooks in a folder you trust (its trust prompt, or ~/.gemini/trustedFolders.json)\n",
                );
            }
            if host == crate::hosts::HostKind::Copilot {
                printer.err(
                    "Copilot CLI runs a repository's hooks in a folder you trust: accept its trust prompt when `copilot` starts here (`copilot -p` needs --trust-folder or a trusted folder)\n",
                );
            }
            printer.err("check the wiring with `curate doctor`\n");
        }
    }
    Ok(ExitCode::Ready)
}

/// What a Codex user must still do by hand: trust the project, approve the two hooks (the
/// lines Codex's hooks review would write, for the user's own `config.toml`).
fn codex_still_to_do(root: &std::path::Path) -> String {
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

/// `init --profile`: writes `.curate/config.toml` (never over one that exists without
/// `--force`).
fn write_config(
    ws: &crate::settings::Workspace,
    printer: Printer,
    a: &InitArgs,
    profile: crate::config::Wf,
) -> Result<ExitCode> {
    let path = ws.root.join(crate::config::PATH);
    if std::fs::symlink_metadata(&path).is_ok() && !a.force {
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
    printer.report(&format!(
        "wrote {} (profile {})\n",
        crate::config::PATH,
        profile.name()
    ));

    Ok(ExitCode::Ready)
}
