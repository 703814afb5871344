//! What a compile returns: each kept entry ([`Kept`]), each file left out ([`Dropped`]),
//! the trace `--explain` shows ([`Trace`]), the files withheld as secrets ([`Withheld`]),
//! and the whole result ([`Compiled`]) with the workflow it ran under ([`Workflowed`]).

use super::{
    Caps, Degraded, Entry, Exclusion, FileRef, Held, Lock, Note, Overrun, Priority, Role,
    Serialize, Status, Workspace, missing_change_blocks,
};

/// A kept entry with its measurements.
#[derive(Debug, Clone, Serialize)]
pub struct Kept {
    #[serde(flatten)]
    pub entry: Entry,
    pub lines: u64,
    pub tokens: u64,
    /// Bytes as the consumer counts them, when it counts bytes (Trellis).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The heading anchors of its sections, with the lines each resolved to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<(String, crate::model::Range)>,
    /// Cut down the budget ladder (to its outline), when a cap did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degraded: Option<Degraded>,
    /// The consumer's per-file cap, when it cuts this file there (Trellis' hook inlines
    /// its first `cut_at` bytes; `lines` and `tokens` are of those).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_at: Option<u64>,
    #[serde(skip)]
    pub sha256: String,
}

/// An entry a budget rule or a drop removed.
#[derive(Debug, Clone, Serialize)]
pub struct Dropped {
    pub file: String,
    pub priority: Priority,
    pub kind: String,
    pub lines: Option<u64>,
    pub tokens: Option<u64>,
    /// `soft_cap`, `hard_cap`, `token_cap` or `override`.
    pub rule: String,
    pub by: String,
}

/// One candidate with its source and fate, for `--explain`.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub file: String,
    pub source: String,
    pub priority: Option<Priority>,
    pub kind: Option<String>,
    pub lines: Option<u64>,
    pub tokens: Option<u64>,
    pub fate: String,
}

/// The result of a compile.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub status: Status,
    pub role: Role,
    pub change: String,
    pub contracts_source: String,
    pub manifest_path: String,
    pub kept: Vec<Kept>,
    pub dropped: Vec<Dropped>,
    /// Entries a cap cut to an index line: named in the prompt, not read.
    pub indexed: Vec<Dropped>,
    pub excluded: Vec<Exclusion>,
    /// Every curation line of the manifest, overrides' first.
    pub curation: Vec<String>,
    /// This run's notes with their levels (those in the manifest are in `curation`).
    pub notes: Vec<Note>,
    pub caps: Caps,
    pub overrun: Option<Overrun>,
    pub candidates: Vec<Trace>,
    /// The manifest text (when READY).
    pub manifest: Option<String>,
    pub lock: Option<Lock>,
    /// The overrides file, when it existed.
    pub overrides_file: Option<FileRef>,
    /// Truth files that changed since the change began (see [`crate::stages::truth`]).
    pub changed_truth: Vec<String>,
    /// The role's name as the caller gave it (a `[roles]` alias, or the contract role).
    pub role_name: String,
    /// The workflow, and how it was chosen (`detected: .trellis/tasks/`, `profile`, …).
    pub workflow: Workflowed,
    /// The bytes admitted, for the render (empty for a manifest read back).
    pub held: std::sync::Arc<Held>,
}

/// Another workflow's folder that holds the change.
#[derive(Debug, Clone, Serialize)]
pub struct Elsewhere {
    pub folder: String,
    pub workflow: &'static str,
}

/// The workflow a compile ran under, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct Workflowed {
    pub name: &'static str,
    /// `flag`, `env`, `file`, `detected` or `default`.
    pub chosen_by: String,
    /// What gave it away, when detected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// The folders the change was looked for in.
    pub looked: Vec<String>,
    /// Other workflows' folders that hold the change.
    pub elsewhere: Vec<Elsewhere>,
    /// The workflow's changes whose ids look like the one not found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub similar: Vec<String>,
    /// The change's folder is not where it was looked for (BLOCKED in a workflow whose own
    /// tools make changes; a warning in the plain layout).
    pub change_missing: bool,
    /// The change is missing in a workflow whose own tools make changes: that BLOCKED it.
    #[serde(skip)]
    pub missing_blocks: bool,
}

impl Workflowed {
    /// The workflow of `ws`.
    #[must_use]
    pub fn of(ws: &Workspace) -> Workflowed {
        let w = ws.workflow();
        let chosen_by = ws
            .config
            .origins
            .get("profile")
            .map_or_else(|| "default".to_owned(), ToString::to_string);
        Workflowed {
            name: w.name(),
            evidence: ws
                .present
                .iter()
                .find(|(p, _)| p.name() == w.name())
                .map(|(_, e)| e.clone()),
            chosen_by,
            looked: ws.looked.clone(),
            elsewhere: ws
                .elsewhere
                .iter()
                .map(|(w, p)| Elsewhere {
                    folder: p.clone(),
                    workflow: w.name(),
                })
                .collect(),
            similar: ws.similar.clone(),
            change_missing: ws.changes_warning.is_some(),
            missing_blocks: missing_change_blocks(ws),
        }
    }

    /// `trellis (detected: .trellis/tasks/)`.
    #[must_use]
    pub fn describe(&self) -> String {
        match &self.evidence {
            Some(e) if self.chosen_by == "detected" => format!("{} (detected: {e})", self.name),
            _ if self.chosen_by == "default" => self.name.to_owned(),
            _ => format!("{} ({})", self.name, self.chosen_by),
        }
    }
}

impl Compiled {
    /// Totals of the kept entries: files, lines, tokens.
    #[must_use]
    pub fn totals(&self) -> (usize, u64, u64) {
        (
            self.kept.len(),
            self.kept.iter().map(|k| k.lines).sum(),
            self.kept.iter().map(|k| k.tokens).sum(),
        )
    }

    /// Warning-level notes.
    pub fn warnings(&self) -> impl Iterator<Item = &Note> {
        self.notes.iter().filter(|n| n.is_warning())
    }
}

/// The files left out because their path holds a secret: counted by rule, never named (not
/// in a note, the manifest, the lock, the report or the prompt's list of what was not given).
#[derive(Default)]
pub(crate) struct Withheld(std::collections::BTreeMap<&'static str, usize>);

impl Withheld {
    /// False (and counted) when `path` holds a secret.
    pub(crate) fn keeps(
        &mut self,
        rules: &crate::trust::secrets::ContentRules,
        path: &str,
    ) -> bool {
        self.counts(rules.scan_path(path))
    }

    /// False (and counted) when a path's scan found `rule`.
    pub(super) fn counts(&mut self, rule: Option<&'static str>) -> bool {
        match rule {
            Some(rule) => {
                *self.0.entry(rule).or_default() += 1;
                false
            }
            None => true,
        }
    }

    /// One warning a rule.
    pub(crate) fn notes(&self) -> Vec<Note> {
        self.0
            .iter()
            .map(|(rule, n)| {
                let files = if *n == 1 { "file" } else { "files" };
                Note::warning(format!(
                    "left out {n} {files} whose path holds a secret ({rule}); the path is never shown"
                ))
            })
            .collect()
    }
}
