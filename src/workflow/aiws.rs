//! aiws ≥ 0.0.96: changes under `.aiws/changes/<id>/` (archived ones under
//! `.aiws/changes/archive/<id>/`), the manifest where its OpenCode plugin reads it,
//! `changes/<id>/analysis/<role>-context.jsonl` from the repository root.

use crate::trust::tree::Tree;

use super::{Located, Workflow, direct};

pub struct Aiws;

/// The first aiws version whose plugin reads changes under `.aiws/changes`.
const FIRST: (u64, u64, u64) = (0, 0, 96);

impl Workflow for Aiws {
    fn name(&self) -> &'static str {
        "aiws"
    }

    fn detect(&self, root: &Tree) -> Option<String> {
        let version = recorded_version(root)?;
        if version >= FIRST {
            return Some(format!(".aiws/manifest.json (aiws {})", show(version)));
        }
        // An older version whose workspace keeps its changes where this one does (aipper/
        // relay records 0.0.39 and has `.aiws/changes/`): the layout decides.
        super::is_dir(root, ".aiws/changes").then(|| {
            format!(
                ".aiws/changes/ (.aiws/manifest.json records aiws {})",
                show(version)
            )
        })
    }

    fn locate(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<Located> {
        direct(root, ".aiws/changes", id).or_else(|| direct(root, ".aiws/changes/archive", id))
    }

    fn changes_root(&self) -> Option<&'static str> {
        Some(".aiws/changes")
    }

    fn manifest(&self) -> &'static str {
        "changes/{change}/analysis/{role}-context.jsonl"
    }
}

/// The aiws version `.aiws/manifest.json` records (`version`, `aiws_version` or
/// `aiwsVersion`), as three numbers.
pub fn recorded_version(root: &Tree) -> Option<(u64, u64, u64)> {
    let path = root.join(".aiws/manifest.json");
    let bytes = root.read(&path).ok()??;
    version_in(&serde_json::from_slice(&bytes).ok()?)
}

/// The version a parsed `.aiws/manifest.json` records (see [`recorded_version`]).
fn version_in(value: &serde_json::Value) -> Option<(u64, u64, u64)> {
    let text = ["aiws_version", "aiwsVersion", "version"]
        .iter()
        .find_map(|k| value.get(k).and_then(serde_json::Value::as_str))?;
    let mut parts = text.trim_start_matches('v').split(['.', '-', '+']);
    let mut next = || parts.next().and_then(|p| p.parse::<u64>().ok());
    Some((next()?, next()?, next().unwrap_or(0)))
}

/// What keeps `.aiws/manifest.json`, when there is one, from telling aiws' version: not
/// JSON, or an `aiws_version` whose value is no version (`"aiws_version": 96`). With its
/// position. A manifest without that key is not a problem here (nothing to detect).
#[must_use]
pub fn manifest_problem(root: &Tree) -> Option<(crate::model::Pos, String)> {
    let path = root.join(".aiws/manifest.json");
    let bytes = root.read(&path).ok()??;
    let text = String::from_utf8_lossy(&bytes);
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return Some((
                crate::util::jsonpos::json_pos(&e),
                format!("invalid JSON: {}", crate::util::jsonpos::json_message(&e)),
            ));
        }
    };
    // Only aiws' own names: a bare `version` may be the file format's.
    let key = ["aiws_version", "aiwsVersion"]
        .into_iter()
        .find(|k| value.get(k).is_some())?;
    if version_in(&value).is_some() {
        return None;
    }
    let at = crate::util::jsonpos::place(&text, &format!("/{key}"));
    Some((
        at,
        format!(
            "\"{key}\" is {}, not a version such as \"0.0.96\"",
            value[key]
        ),
    ))
}

/// A version as `a.b.c`.
pub fn show((a, b, c): (u64, u64, u64)) -> String {
    format!("{a}.{b}.{c}")
}
