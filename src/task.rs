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

/// Parses a task file's bytes; `path` names it in errors, each at its line and column.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Task> {
    let text = String::from_utf8_lossy(bytes);
    let at = |pointer: &str, message: String| Error::Syntax {
        path: path.to_owned(),
        pos: crate::util::jsonpos::place(&text, pointer),
        message,
    };
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes)
        && !v.is_object()
    {
        return Err(at(
            "",
            "a task file is one JSON object ({\"task_id\": …, \"success_criteria\": […], …})"
                .to_owned(),
        ));
    }
    let task: Task = serde_json::from_slice(bytes).map_err(|e| Error::Syntax {
        path: path.to_owned(),
        pos: crate::util::jsonpos::json_pos(&e),
        message: format!(
            "invalid task file: {}",
            crate::util::jsonpos::json_message(&e)
        ),
    })?;
    if task.task_id.trim().is_empty() {
        return Err(at("/task_id", "task_id must not be empty".to_owned()));
    }
    if task.success_criteria.is_empty() {
        return Err(at(
            "/success_criteria",
            "success_criteria must hold at least one criterion".to_owned(),
        ));
    }
    if let Some(i) = task
        .success_criteria
        .iter()
        .position(|c| c.trim().is_empty())
    {
        return Err(at(
            &format!("/success_criteria/{i}"),
            format!("success_criteria[{i}] is blank: a criterion says what must hold"),
        ));
    }
    // The globs are compiled where they are used (compile, verify): a bad one is said
    // here, where its place in the file is known.
    for (key, globs) in [
        ("files_owned", &task.files_owned),
        ("files_readonly", &task.files_readonly),
    ] {
        for (i, glob) in globs.iter().enumerate() {
            // A path that climbs out or names nothing, at its place (an absolute path into
            // the repository is taken below its root where it is used).
            match crate::model::paths::normalize(glob) {
                Err(crate::model::paths::Escape::Absolute) | Ok(_) => {}
                Err(e) => {
                    return Err(at(
                        &format!("/{key}/{i}"),
                        format!("{key}[{i}]: {glob:?} {}", e.problem()),
                    ));
                }
            }
            if let Err(e) = crate::util::glob::compile(glob) {
                return Err(at(
                    &format!("/{key}/{i}"),
                    format!("{key}[{i}]: invalid glob {glob:?}: {}", e.kind()),
                ));
            }
        }
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

    /// Every mistake of a task file is named at its line and column.
    #[test]
    fn each_mistake_is_named_at_its_place() {
        let said = |text: &str| {
            parse(text.as_bytes(), Path::new("t.json"))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            said("{\"task_id\": \"  \",\n \"success_criteria\": [\"x\"]}"),
            "t.json:1:2: task_id must not be empty"
        );
        assert_eq!(
            said("{\"task_id\": \"t\",\n \"success_criteria\": []}"),
            "t.json:2:2: success_criteria must hold at least one criterion"
        );
        assert_eq!(
            said(
                "{\"task_id\": \"t\", \"success_criteria\": [\"x\"],\n \"files_readonly\": [\"a\", \"src/[a-\"]}"
            ),
            "t.json:2:26: files_readonly[1]: invalid glob \"src/[a-\": unclosed character class; missing ']'"
        );
        assert!(said("[]\n").starts_with("t.json:1:1: a task file is one JSON object"));
        assert_eq!(
            said(
                "{\"task_id\": \"t\", \"success_criteria\": [\"x\"],\n \"files_owned\": [\"../x\"]}"
            ),
            "t.json:2:18: files_owned[0]: \"../x\" climbs out of the repository with `..`"
        );
        assert!(
            said("{\"task_id\": \"t\", \"success_criteria\": [\"x\"],\n \"files_owned\": [\"\"]}")
                .starts_with("t.json:2:18: files_owned[0]: \"\" ")
        );
        assert_eq!(
            said("{\"task_id\": \"t\",\n \"success_criteria\": [\"x\", \" \"]}"),
            "t.json:2:28: success_criteria[1] is blank: a criterion says what must hold"
        );
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
