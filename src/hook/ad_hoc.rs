//! A dispatch that names no change, in a repository that follows no workflow: the lead's
//! prompt is the task (docs/selection.md). The baseline is the repository's instruction
//! files and the README's sections the prompt matches; the files the prompt names or talks
//! about join through the task's words, within what is left of `[hook] ad_hoc_tokens`; the manifest and lock go to `.curate/state/dispatches/<id>/`
//! (ignored by git, the oldest removed first). `[hook] ad_hoc = false` turns it off.

use super::{CompileOptions, Dispatch, Prepared, Trace, finish, known_roles, normalize_role};
use crate::settings::TextSource;
use crate::settings::Workspace;
use crate::stages::readme;
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
    let mut add: Vec<String> = INSTRUCTIONS
        .iter()
        .filter(|f| ws.root.join(f).is_file())
        .map(|f| format!("{f}:high:instructions:the repository's instructions"))
        .collect();
    let (readme, taken) = readme_sections(&ws, d.prompt).unzip();
    add.extend(readme);
    let options = CompileOptions {
        add,
        task_text: Some(TextSource::Prompt(d.prompt.to_owned())),
        task_tokens: ws
            .config
            .ad_hoc_tokens
            .saturating_sub(taken.unwrap_or_default()),
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

/// The README's sections the prompt matches ([`readme`]), as the `--add` that takes them (an
/// overrides line whose sections are heading anchors: what the lock records and `check
/// --stale` replays), with their tokens; `None` when there is no README, it is refused, the
/// prompt holds a secret, or no section matches. They take at most a quarter of `[hook]
/// ad_hoc_tokens`. Priority low: a section chosen by its words is the first to go when the
/// caps bite, and never pushes the files the prompt names past the soft file cap.
fn readme_sections(ws: &Workspace, prompt: &str) -> Option<(String, u64)> {
    let rules = crate::trust::admit::rules().ok()?;
    if rules.scan(prompt.as_bytes()).is_some() {
        return None;
    }
    let name = readme::find(&ws.root)?;
    let max_file_size = crate::stages::measure::DEFAULT_MAX_FILE_SIZE;
    // A README admission refuses gives nothing, as it would give a compile that adds it.
    let text = readme::read(&ws.root, &name, max_file_size, rules).ok()?;
    // Counted through the token cache the compile reads next: warm, no vocabulary is loaded.
    let cache = crate::compile::token_cache(ws);
    let fast = crate::stages::tokens::Fast(ws.encoding);
    let counter = crate::stages::tokens::Cached::new(&cache, &fast);
    let taken = readme::matched(&text, prompt, ws.config.ad_hoc_tokens / 4, &counter);
    let _ = cache.save();
    if taken.is_empty() {
        return None;
    }
    let add = serde_json::json!({
        "file": name,
        "sections": taken.iter().map(|m| m.anchor.as_str()).collect::<Vec<_>>(),
        "priority": "low",
        "kind": "instructions",
        "reason": readme::reason(&taken),
    })
    .to_string();
    // Curate copies an `--add` into the manifest and refuses one that looks like a secret.
    if rules.scan_path(&add).is_some() {
        return None;
    }
    Some((add, taken.iter().map(|m| m.tokens).sum()))
}
