//! A dispatch that names no change, in a repository that follows no workflow: the lead's
//! prompt is the task (docs/selection.md). The baseline is the repository's instruction
//! files; the files the prompt names or talks about join through the task's words, within
//! `[hook] ad_hoc_tokens`; the manifest and lock go to `.curate/state/dispatches/<id>/`
//! (ignored by git, the oldest removed first). `[hook] ad_hoc = false` turns it off.

use super::{CompileOptions, Dispatch, Prepared, Trace, finish, known_roles, normalize_role};
use crate::settings::TextSource;
use crate::settings::Workspace;
use crate::state;

/// The files a repository keeps for whoever works in it, taken when they exist.
const INSTRUCTIONS: &[&str] = &["AGENTS.md", "CLAUDE.md", "CONTRIBUTING.md"];

/// The hosts' own agent types and the roles nearest to them (`[roles]` says otherwise).
const HOST_TYPES: &[(&str, &str)] = &[
    ("explore", "explorer"),
    ("plan", "planner"),
    ("general-purpose", "worker"),
    ("general", "worker"),
];

/// True when a dispatch that names no change is an ad-hoc one here: the repository
/// follows no workflow (none detected, no changes folder), and the config does not turn it
/// off.
#[must_use]
pub fn allowed(ws: &Workspace) -> bool {
    ws.present.is_empty()
        && !ws.root.join(&ws.changes_root).is_dir()
        && ws.config.ad_hoc
        && ws.config.ad_hoc_tokens > 0
}

/// The role nearest to the host's own agent type (`Explore` → explorer).
#[must_use]
pub fn role(ws: &Workspace, d: &Dispatch<'_>) -> Option<String> {
    let agent = normalize_role(d.agent_type?);
    let role = HOST_TYPES.iter().find(|(t, _)| *t == agent)?.1;
    known_roles(ws)?(role).then(|| role.to_owned())
}

/// Compiles the dispatch as the change `adhoc-<12 hex digits of the role and prompt>`
/// under `.curate/state/dispatches/`, and renders its prompt. Not READY (nothing to give):
/// nothing injected, nothing said to the lead.
pub fn prepare(ws: &Workspace, role: &str, d: &Dispatch<'_>, trace: &Trace) -> Option<Prepared> {
    let id = format!(
        "adhoc-{}",
        crate::util::digest::hex12(format!("{role}\n{}", d.prompt).as_bytes())
    );
    trace.note(|t| t.change = Some(id.clone()));
    if let Err(e) = state::make_room_for_dispatch(&ws.root, &id) {
        return trace.skip(&format!("ad-hoc dispatch: {e}"));
    }
    let mut ws = ws.clone();
    state::DISPATCHES.clone_into(&mut ws.changes_root);
    ws.changes_root_given = true;
    ws.changes_warning = None;
    crate::config::DEFAULT_MANIFEST.clone_into(&mut ws.config.manifest);
    let add = INSTRUCTIONS
        .iter()
        .filter(|f| ws.root.join(f).is_file())
        .map(|f| format!("{f}:high:instructions:the repository's instructions"))
        .collect();
    let options = CompileOptions {
        add,
        task_text: Some(TextSource::Prompt(d.prompt.to_owned())),
        task_tokens: ws.config.ad_hoc_tokens,
        ..CompileOptions::defaults(&ws, role, &id)
    };
    match finish(&ws, &options, d, trace, None) {
        Some(Prepared::NotReady { status, .. }) => {
            trace.note(|t| t.status = None);
            trace.skip(&format!(
                "ad-hoc dispatch {id}: {} (nothing the prompt names or talks about)",
                status.name()
            ))
        }
        other => other,
    }
}
