//! Flags and environment → the library's options: a [`Workspace`] and
//! [`CompileSettings`](crate::settings::CompileSettings).
//!
//! This is the only place that knows both the clap structs and the library's settings;
//! nothing here reads a file itself.

use crate::cli::args::{CompileArgs, GlobalArgs};
use crate::cli::printer::Printer;
use crate::error::{Error, Result};
use crate::model::Caps;
use crate::settings::{
    CompileOptions, ListSource, TextSource, Workspace, WorkspaceOptions, check_change_id,
    check_name,
};

/// The workspace the global options name.
pub fn workspace(g: &GlobalArgs) -> Result<Workspace> {
    workspace_with(g, false)
}

/// The workspace without reading `.curate/config.toml` (for `init`, which writes it).
pub fn workspace_without_config(g: &GlobalArgs) -> Result<Workspace> {
    workspace_with(g, true)
}

fn workspace_with(g: &GlobalArgs, ignore_config: bool) -> Result<Workspace> {
    Workspace::resolve(&WorkspaceOptions {
        progress: Printer::new(g).progress,
        ignore_config,
        ..workspace_options(g)
    })
}

/// The global options that say where the repository is and how to read it, for a
/// front-end that resolves the workspace itself (the hooks, per dispatch; the MCP server,
/// per call). Never a progress bar: their stderr is not a person's terminal.
#[must_use]
pub fn workspace_options(g: &GlobalArgs) -> WorkspaceOptions {
    WorkspaceOptions {
        dir: g.dir.clone(),
        contracts: g.contracts.clone(),
        changes_dir: g.changes_dir.clone(),
        encoding: g.encoding,
        no_cache: g.no_cache,
        progress: false,
        ignore_config: false,
        profile: g.profile,
        run: g.run.clone(),
    }
}

/// The role and change id, present and checked (before anything else is looked at).
pub fn names(a: &CompileArgs) -> Result<(String, String)> {
    let role = a
        .role
        .clone()
        .ok_or_else(|| Error::Usage("--role is required".to_owned()))?;
    let change = a
        .change
        .clone()
        .ok_or_else(|| Error::Usage("--change is required".to_owned()))?;
    check_name("role", &role)?;
    check_change_id(&change)?;
    Ok((role, change))
}

/// The workspace of the change the compile flags name, and the compile's options there
/// (the change as the workflow found it: an archived task's folder name).
pub fn change_workspace(g: &GlobalArgs, a: &CompileArgs) -> Result<(Workspace, CompileOptions)> {
    let (_, change) = names(a)?;
    let (ws, change) = workspace(g)?.for_change(&change)?;
    let options = compile_options(&ws, a, &change)?;
    Ok((ws, options))
}

/// The compile options of the command line.
pub fn compile_options(ws: &Workspace, a: &CompileArgs, change: &str) -> Result<CompileOptions> {
    let (role, _) = names(a)?;
    let d = CompileOptions::defaults(ws, &role, change);
    Ok(CompileOptions {
        owns: a.owns.clone(),
        reads: a.reads.clone(),
        files_from: a.files_from.as_ref().map(|p| {
            if p.as_os_str() == "-" {
                ListSource::Stdin
            } else {
                ListSource::File(p.clone())
            }
        }),
        task_file: a.task_file.clone(),
        overrides: a.overrides.clone(),
        add: a.add.clone(),
        drop: a.drop.clone(),
        caps: Caps {
            degrade: d.caps.degrade && !a.no_degrade,
            ..d.caps.overridden(a.max_files, a.max_lines, a.max_tokens)
        },
        max_file_size: a.max_file_size,
        no_ignore: a.no_ignore,
        explain: a.explain,
        related: a.related.unwrap_or(d.related),
        task_text: a.task_text.as_ref().map(|p| {
            if p.as_os_str() == "-" {
                TextSource::Stdin
            } else {
                TextSource::File(p.clone())
            }
        }),
        // `--task-text` asks for the selection where nothing set it: the default budget. A
        // `[select] task = false` (or `task_tokens = 0`) stands.
        task_tokens: match (a.no_task, a.task_tokens) {
            (true, _) => 0,
            (false, Some(n)) => n,
            (false, None)
                if a.task_text.is_some()
                    && ws.config.origins.get("select.task_tokens")
                        == Some(&crate::config::Origin::Default) =>
            {
                crate::config::DEFAULT_TASK_TOKENS
            }
            (false, None) => d.task_tokens,
        },
        ..d
    })
}
