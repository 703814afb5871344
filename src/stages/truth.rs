//! Truth files that changed since the change began.
//!
//! aiws records, in `<changes root>/<id>/.ws-change.json`, the sha256 of each truth file when
//! the change began (`base_truth_files`) and after each `aiws change sync`
//! (`synced_truth_files`, which wins when present). A truth file whose content no longer has
//! the recorded hash is exactly what a sub-agent must be told about: it gets a warning note,
//! and the sticky instruction asks for it to be read whole. A malformed record is a note,
//! never an error. Files are read through admission, so a recorded path can never lead out
//! of the repository or into a secret.

use std::path::Path;

use serde_json::Value;

use crate::model::{Note, quoted};
use crate::trust::admit;

/// What the record says, and what changed.
#[derive(Debug, Default)]
pub struct Drift {
    /// Truth files whose content changed since the recorded hash, in record order.
    pub changed: Vec<String>,
    pub notes: Vec<Note>,
}

/// Compares the truth files recorded in `<changes_root>/<change>/.ws-change.json` with the
/// repository as it is now. No record: nothing to say.
#[must_use]
pub fn drift(root: &Path, changes_root: &str, change: &str, max_file_size: u64) -> Drift {
    let record = format!("{changes_root}/{change}/.ws-change.json");
    let mut out = Drift::default();
    let bytes = match admit::read_repo_file(root, &root.join(&record)) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return out,
        Err(e) => {
            out.notes.push(Note::info(format!(
                "{} not used: {}",
                quoted(&record),
                crate::model::one_line(&e.to_string())
            )));
            return out;
        }
    };
    let recorded = match recorded_hashes(&bytes) {
        Ok(recorded) => recorded,
        Err(problem) => {
            out.notes.push(Note::info(format!(
                "{} not used: {problem}",
                quoted(&record)
            )));
            return out;
        }
    };
    for (file, sha) in recorded {
        let Ok(path) = crate::model::paths::RepoPath::new(&file) else {
            out.notes.push(Note::info(format!(
                "{} names {} outside the repository: not compared",
                quoted(&record),
                quoted(&file)
            )));
            continue;
        };
        // Only hashed, never shown: the name, link and file checks, no content scan.
        // A truth file that is gone, a secret or unreadable is not ours to report here:
        // the compile's own notes say what happened to it.
        let Ok(now) = admit::hash(root, &path, max_file_size) else {
            continue;
        };
        if !now.eq_ignore_ascii_case(&sha) {
            out.notes.push(Note::warning(format!(
                "{} changed since the change began ({}): run `aiws change sync`",
                quoted(path.as_str()),
                quoted(&record)
            )));
            out.changed.push(path.to_string());
        }
    }
    out
}

/// The recorded `(path, sha256)` pairs: `synced_truth_files` when present, else
/// `base_truth_files`; each either an object `{path: sha}` or a list of objects with a path
/// (`path` or `file`) and a hash (`sha256` or `sha`).
fn recorded_hashes(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("it is not valid JSON ({e})"))?;
    let list = ["synced_truth_files", "base_truth_files"]
        .iter()
        .find_map(|key| value.get(*key).filter(|v| !v.is_null()))
        .ok_or("it records no truth files")?;
    let sha_ok = |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let pair = |path: Option<&str>, sha: Option<&str>| match (path, sha) {
        (Some(p), Some(s)) if !p.is_empty() && sha_ok(s) => Ok((p.to_owned(), s.to_owned())),
        _ => Err("a truth file entry has no path or no sha256".to_owned()),
    };
    match list {
        Value::Object(map) => map
            .iter()
            .map(|(path, v)| {
                let sha = v
                    .as_str()
                    .or_else(|| v.get("sha256").and_then(Value::as_str));
                pair(Some(path), sha)
            })
            .collect(),
        Value::Array(items) => items
            .iter()
            .map(|item| {
                let get = |keys: &[&str]| keys.iter().find_map(|k| item.get(*k)?.as_str());
                pair(get(&["path", "file"]), get(&["sha256", "sha"]))
            })
            .collect(),
        _ => Err("its truth files are neither an object nor a list".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0000000000000000000000000000000000000000000000000000000000000000";

    #[test]
    fn both_record_shapes_are_read_and_synced_wins() {
        let object = format!(r#"{{"base_truth_files": {{"AI_PROJECT.md": "{A}"}}}}"#);
        assert_eq!(
            recorded_hashes(object.as_bytes()).unwrap(),
            vec![("AI_PROJECT.md".to_owned(), A.to_owned())]
        );
        let list = format!(
            r#"{{"base_truth_files": {{"X.md": "{A}"}}, "synced_truth_files": [{{"path": "R.md", "sha256": "{A}"}}]}}"#
        );
        assert_eq!(
            recorded_hashes(list.as_bytes()).unwrap(),
            vec![("R.md".to_owned(), A.to_owned())]
        );
    }

    #[test]
    fn a_malformed_record_is_a_reason_not_a_panic() {
        assert!(recorded_hashes(b"{").is_err());
        assert!(recorded_hashes(b"{}").is_err());
        assert!(recorded_hashes(br#"{"base_truth_files": [{"path": "a"}]}"#).is_err());
        assert!(recorded_hashes(br#"{"base_truth_files": 3}"#).is_err());
    }
}
