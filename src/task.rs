//! The task file (`--task-file`): what a worker is asked to do, whose owned and read-only globs
//! also feed the assigned entries of a compile, and from which the handoff envelope is made.
//!
//! Unknown fields are errors; lists default to `[]`, strings to `""`, the two escalation
//! fields to the usual defaults.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The default `blocked_contact`.
pub const DEFAULT_BLOCKED_CONTACT: &str = "coordinator";
/// The default `scope_change_protocol`.
pub const DEFAULT_SCOPE_CHANGE_PROTOCOL: &str =
    "message the coordinator and wait before touching files outside files_owned";

/// A parsed task file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub task_id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub your_role: String,
    #[serde(default)]
    pub files_owned: Vec<String>,
    #[serde(default)]
    pub files_readonly: Vec<String>,
    #[serde(default)]
    pub dependencies_completed: Vec<String>,
    pub success_criteria: Vec<String>,
    #[serde(default)]
    pub epic_summary: String,
    #[serde(default)]
    pub what_others_did: String,
    #[serde(default)]
    pub what_comes_next: String,
    #[serde(default = "default_blocked_contact")]
    pub blocked_contact: String,
    #[serde(default = "default_scope_change_protocol")]
    pub scope_change_protocol: String,
}

fn default_blocked_contact() -> String {
    DEFAULT_BLOCKED_CONTACT.to_owned()
}

fn default_scope_change_protocol() -> String {
    DEFAULT_SCOPE_CHANGE_PROTOCOL.to_owned()
}

/// Parses a task file's bytes; `path` names it in errors.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Task> {
    let task: Task = serde_json::from_slice(bytes).map_err(|e| Error::Syntax {
        path: path.to_owned(),
        pos: crate::util::jsonpos::json_pos(&e),
        message: format!(
            "invalid task file: {}",
            crate::util::jsonpos::json_message(&e)
        ),
    })?;
    if task.task_id.trim().is_empty() {
        return Err(Error::Invalid {
            path: path.to_owned(),
            message: "task_id must not be empty".to_owned(),
        });
    }
    if task.success_criteria.is_empty() {
        return Err(Error::Invalid {
            path: path.to_owned(),
            message: "success_criteria must hold at least one criterion".to_owned(),
        });
    }
    Ok(task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_in() {
        let t = parse(
            br#"{"task_id":"t1","success_criteria":["tests pass"]}"#,
            Path::new("t.json"),
        )
        .unwrap();
        assert_eq!(t.blocked_contact, "coordinator");
        assert!(t.files_owned.is_empty());
    }

    #[test]
    fn unknown_fields_and_missing_criteria_are_errors() {
        let e = parse(
            br#"{"task_id":"t1","success_criteria":["x"],"colour":"red"}"#,
            Path::new("t.json"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown field `colour`"), "{e}");
        let e = parse(
            br#"{"task_id":"t1","success_criteria":[]}"#,
            Path::new("t.json"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("success_criteria"), "{e}");
        let e = parse(br#"{"task_id":"t1"}"#, Path::new("t.json")).unwrap_err();
        assert!(e.to_string().contains("success_criteria"), "{e}");
    }
}
