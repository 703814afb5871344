//! `curate init`: says what [`crate::ops::init`] wrote: the embedded contracts (and, with
//! `--templates`, the templates); with `--profile` the config; with `--host` a host's wiring.

use crate::cli::args::{GlobalArgs, InitArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::error::Result;
use crate::hosts::HostKind;
use crate::ops::init;

/// Runs `curate init`.
pub fn run(g: &GlobalArgs, a: &InitArgs) -> Result<ExitCode> {
    let printer = Printer::new(g);
    let ws = resolve::workspace_without_config(g)?;
    if let Some(host) = a.host {
        if let Some(w) = init::binary_warning(host) {
            printer.report(&format!("warning: {w}\n"));
        }
        let wiring = init::host(&ws, host, a.force)?;
        say_wiring(&ws, printer, host, &wiring);
    } else if let Some(profile) = g.profile {
        init::config(&ws, profile, a.force)?;
        printer.report(&format!(
            "wrote {} (profile {})\n",
            crate::config::PATH,
            profile.name()
        ));
    } else {
        for path in init::contracts(&ws, a.templates, a.force)? {
            printer.report(&format!("wrote {path}\n"));
        }
    }
    Ok(ExitCode::Ready)
}

/// `init --host`: what changed, and what the user must still do.
fn say_wiring(
    ws: &crate::settings::Workspace,
    printer: Printer,
    host: HostKind,
    wiring: &init::Wiring,
) {
    for c in &wiring.conflicts {
        printer.report(&format!("warning: {c}\n"));
    }
    if let Some(injector) = &wiring.injector {
        printer.report(&format!(
            "note: {injector} (the {} workflow's own hook) injects the list curate writes: on a dispatch curate writes the list and injects nothing itself, so each dispatch gets its context once{}\n",
            ws.workflow().name(),
            match host {
                HostKind::ClaudeCode => {
                    "; a list the lead edits is compiled right after the edit (PostToolUse), before Trellis' hook reads it"
                }
                HostKind::Opencode => {
                    "; a list the lead edits is compiled right after the edit (the plugin's tool.execute.after), before Trellis' plugin reads it"
                }
                HostKind::Mcp | HostKind::Codex | HostKind::Copilot | HostKind::Gemini => "",
            }
        ));
    }
    if printer.quiet {
        return;
    }
    printer.err(&changed(host.path(), &wiring.changes));
    if host == HostKind::Mcp {
        printer.err(&changed(
            crate::hosts::codex::CONFIG_PATH,
            &wiring.codex_mcp,
        ));
        printer.err(
            "note: Codex cuts a tool's result to its output limit (about 12 KB by default): a bundle reaches a Codex model whole through `curate init --host codex`, not through MCP\n",
        );
        return;
    }
    match host {
        HostKind::Codex => printer.err(&init::codex_still_to_do(&ws.root)),
        HostKind::Gemini => printer.err(
            "Gemini CLI runs a project's hooks in a folder you trust (its trust prompt, or ~/.gemini/trustedFolders.json)\n",
        ),
        HostKind::Copilot => printer.err(
            "Copilot CLI runs a repository's hooks in a folder you trust: accept its trust prompt when `copilot` starts here (`copilot -p` needs --trust-folder or a trusted folder)\n",
        ),
        HostKind::ClaudeCode | HostKind::Opencode | HostKind::Mcp => {}
    }
    printer.err("check the wiring with `curate doctor`\n");
}

/// `updated <path>:` and the changes, or `<path> already wired; nothing changed`.
fn changed(path: &str, changes: &[String]) -> String {
    if changes.is_empty() {
        return format!("{path} already wired; nothing changed\n");
    }
    let mut text = format!("updated {path}:\n");
    for c in changes {
        text.push_str(&format!("  {c}\n"));
    }
    text
}
